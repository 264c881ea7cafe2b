//! Presence: an agent seen alive without writing the board. `poll` (and each wake of
//! `poll --wait`) refreshes a small record per agent in a hidden directory beside the board,
//! which `pair watch` reads; the board's bytes, its lock and its journal are never touched.
//!
//! ```text
//! <dir>/.<board file name>.pair/presence/<agent>.json
//! {"agent":"alice","at":"2026-01-31T12:00:00Z","pid":4242,"ppid":4100,"host":"box","waiting":true}
//! ```
//!
//! The write is best effort: a small temporary file renamed over the old one (atomic), and any
//! failure (a read-only directory, a full disk, a side directory that may not be used: see
//! [`super::side`]) is ignored, so `poll` never fails because of it.
//! A plain `poll` leaves a record younger than [`REFRESH_SECONDS`] as it is, so polling in a
//! tight loop costs a `stat`, not a write.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::board::frontmatter::{Timestamp, is_agent_id};

/// One agent's latest sign of life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presence {
    pub agent: String,
    /// When it polled (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub at: String,
    /// The polling process, and its parent (the agent's shell or session).
    pub pid: u32,
    pub ppid: u32,
    pub host: String,
    /// It is waiting (`poll --wait` under way) rather than checking once: false once the wait
    /// ends, by itself or by a signal that ends it (SIGINT, SIGTERM, SIGHUP).
    pub waiting: bool,
}

impl Presence {
    pub fn time(&self) -> Option<Timestamp> {
        Timestamp::parse(&self.at)
    }
}

/// The hidden directory beside a board where `pair` keeps what is not the board's: presence
/// records and the watchdog's state. A symlinked board keeps it beside its target, where its
/// lock is ([`crate::store::resolve`]), so every path to one board finds the same records. A git
/// board has no directory of its own here: its side directory is in the local cache (`side/`
/// and a hash of its address), so it is seen by the agents and watchdogs that share this
/// machine's cache and never written to the remote.
pub fn side_dir(board: &Path) -> PathBuf {
    if let Ok(Some(g)) = crate::store::location::Location::git(board) {
        let root = crate::store::gitref::remote::cache_root()
            .unwrap_or_else(|_| std::env::temp_dir().join("pair"));
        let key = &crate::text::sha256_hex(g.address().as_bytes())[..24];
        return root.join("side").join(key);
    }
    let board = crate::store::resolve(board).unwrap_or_else(|_| board.to_path_buf());
    let name = board
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "blackboard".into());
    board.with_file_name(format!(".{name}.pair"))
}

/// The directory of presence records in the side directory.
const PRESENCE: &str = "presence";

/// The most of a presence record that is read (`pair` writes about a hundred bytes).
const RECORD_LIMIT: u64 = 4096;

/// How fresh a record must be for a plain `poll` to leave it as it is (a stat instead of a
/// write); each wake of `poll --wait` always refreshes it.
pub const REFRESH_SECONDS: u64 = 15;

/// Refresh `agent`'s presence beside `board` (best effort: errors are ignored). A plain poll
/// (`waiting` false) leaves a record younger than [`REFRESH_SECONDS`] alone.
pub fn record(board: &Path, agent: &str, waiting: bool) {
    if !is_agent_id(agent) {
        return;
    }
    let Some(dir) = presence_dir(board) else {
        return;
    };
    let name = format!("{agent}.json");
    if !waiting
        && dir
            .age(&name)
            .is_some_and(|age| age.as_secs() < REFRESH_SECONDS)
    {
        return;
    }
    if let Ok(line) = line(agent, waiting) {
        let _ = dir.replace(&name, &line);
    }
}

/// Refresh `agent`'s record to say it no longer waits (best effort), whatever its age: a wait
/// that ended says so.
pub fn done_waiting(board: &Path, agent: &str) {
    if !is_agent_id(agent) {
        return;
    }
    if let Some(dir) = presence_dir(board)
        && let Ok(line) = line(agent, false)
    {
        let _ = dir.replace(&format!("{agent}.json"), &line);
    }
}

/// The directory of presence records beside `board`, made if missing: never through a
/// symlink, into a directory another user planted, or onto a FIFO ([`super::side`]); `None`
/// where it cannot be used (a record that cannot be kept is not kept).
fn presence_dir(board: &Path) -> Option<super::side::Dir> {
    super::side::open(board, true)
        .and_then(|side| side.dir(PRESENCE, true))
        .ok()
}

/// This process's record for `agent`, now, as one JSON line.
fn line(agent: &str, waiting: bool) -> serde_json::Result<Vec<u8>> {
    let p = Presence {
        agent: agent.to_string(),
        at: Timestamp::now().to_string(),
        pid: std::process::id(),
        ppid: std::os::unix::process::parent_id(),
        host: crate::board::journal::host(),
        waiting,
    };
    let mut line = serde_json::to_vec(&p)?;
    line.push(b'\n');
    Ok(line)
}

/// `agent`'s record as it should read once it no longer waits: now, and `waiting` false. Left
/// behind by a signal that ends the waiting process (Ctrl-C, `kill`), prepared before the wait
/// (nothing is made in a signal handler); best effort, as every presence write is.
pub fn clear_on_end(board: &Path, agent: &str) {
    if !is_agent_id(agent) {
        return;
    }
    let Some(dir) = presence_dir(board) else {
        return;
    };
    let (Ok(fd), Ok(line)) = (dir.keep(), line(agent, false)) else {
        return;
    };
    let (Ok(tmp), Ok(name)) = (
        std::ffi::CString::new(format!(".tmp-end-{}", std::process::id())),
        std::ffi::CString::new(format!("{agent}.json")),
    ) else {
        return;
    };
    crate::sys::write_on_end(fd, &tmp, &name, line);
}

/// Every presence record beside `board` that can be read (others are skipped); none when
/// there is no side directory. An error when the side directory or its `presence` may not be
/// used (a symlink, another user's, not a directory): its records are not believed.
pub fn read_all(board: &Path) -> std::io::Result<Vec<Presence>> {
    let dir = match super::side::open(board, false).and_then(|side| side.dir(PRESENCE, false)) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out: Vec<Presence> = dir
        .names()?
        .into_iter()
        .filter(|name| name.ends_with(".json"))
        .filter_map(|name| dir.read(&name, RECORD_LIMIT).ok())
        .filter_map(|b| serde_json::from_slice::<Presence>(&b).ok())
        .filter(|p| is_agent_id(&p.agent) && p.time().is_some())
        .collect();
    out.sort_by(|a, b| a.agent.cmp(&b.agent));
    Ok(out)
}
