//! `pair watch`: check boards for stalls, missing reviewers, SLA breaches and dead writers
//! ([`crate::watch`]), report each as a line (text or JSON) and through the hooks, once or every
//! `--interval` until SIGINT or SIGTERM.

use std::io::Write as _;
use std::os::fd::AsFd as _;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};

use super::{Outcome, seconds_flag, shown};
use crate::board::frontmatter::Timestamp;
use crate::board::journal;
use crate::cli::WatchArgs;
use crate::error::{Error, Result, exit};
use crate::render::output;
use crate::render::report::SCHEMA;
use crate::store;
use crate::store::Session;
use crate::watch::{self, Finding, State};
use crate::watch::{presence, side};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn install_signals() {
    // The handler only stores to an atomic, which is async-signal-safe.
    crate::sys::on_signal(libc::SIGINT, on_signal, true);
    crate::sys::on_signal(libc::SIGTERM, on_signal, true);
}

/// The boards named: files as given, directories as `validate DIR` finds them.
fn boards(args: &[PathBuf], s: &Session) -> Result<(Vec<PathBuf>, Vec<String>)> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for a in args {
        // A git board is read through the store like any other; it is never a directory.
        if crate::store::location::is_git(a) {
            out.push(a.clone());
            continue;
        }
        match std::fs::metadata(a) {
            Ok(m) if m.is_dir() => {
                let (found, errs) = super::validate::boards_in(a, s);
                out.extend(found);
                warnings.extend(errs);
            }
            Ok(_) => out.push(a.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Missing { path: a.clone() });
            }
            Err(e) => return Err(Error::io(a, "read", e)),
        }
    }
    Ok((out, warnings))
}

/// The watchdog's memory of a board, in its side directory.
const STATE: &str = "watch.json";

/// The lock on that memory.
const STATE_LOCK: &str = "watch.lock";

/// The most of the memory that is read.
const STATE_LIMIT: u64 = 1 << 20;

/// Hold the lock on a board's watchdog state, so that watchers checking the board at the same
/// moment read and write the nudge memory one after another (each finding is reported once).
/// `None` where the lock cannot be taken (a read-only directory: the state cannot be kept
/// there either, which is warned about; something not a regular file in its place) or is held
/// longer than 5 s (the check goes on).
fn lock_state(side: &side::Dir) -> Option<std::fs::File> {
    let file = side.lock_file(STATE_LOCK).ok()?;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return None,
        }
    }
}

/// The watchdog's memory of a board; a missing one is empty, and one that cannot be read is
/// said (its nudges may repeat once) and starts afresh.
fn load_state(side: &side::Dir, name: &str) -> State {
    let problem = match side.read(STATE, STATE_LIMIT) {
        Ok(b) => match serde_json::from_slice(&b) {
            Ok(state) => return state,
            Err(e) => e.to_string(),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return State::default(),
        Err(e) => e.to_string(),
    };
    warn(&format!(
        "watch: {name}: the watchdog's state in {} cannot be read ({problem}); it starts \
         afresh, so a nudge already given may be given again",
        side.path().join(STATE).display()
    ));
    State::default()
}

/// One reported finding as its JSON line.
fn event_json(board: &str, f: &Finding, nudge: u32, now: Timestamp) -> Json {
    json!({
        "schema": SCHEMA,
        "event": f.kind.as_str(),
        "board": board,
        "agent": f.agent,
        "phase": f.phase,
        "since": f.since,
        "seconds": f.seconds,
        "limit": f.limit,
        "over": f.seconds - f.limit as i64,
        "sla": f.sla,
        "turn": f.turn,
        "nudge": nudge,
        "level": if nudge == 1 { "nudge" } else { "escalate" },
        "reason": f.reason,
        "at": now,
    })
}

/// One reported finding as its line of text: one line whatever the board's name (a newline in
/// it is escaped, so a file name cannot forge an event).
fn event_text(board: &str, f: &Finding, nudge: u32, now: Timestamp) -> String {
    format!(
        "{now} {}: {}{} ({}): {}\n",
        crate::text::escape(board),
        f.kind.as_str(),
        f.agent
            .as_deref()
            .map(|a| format!(" {a}"))
            .unwrap_or_default(),
        if nudge == 1 { "nudge" } else { "escalate" },
        crate::text::escape(&f.reason)
    )
}

/// Run a hook: `sh -c CMD` in its own process group, with the event in `PAIR_*` variables, its
/// output sent to stderr, killed past the time limit. Returns a problem to report, if any.
fn run_hook(
    cmd: &str,
    board: &str,
    f: &Finding,
    nudge: u32,
    event: &Json,
    limit: Duration,
) -> Option<String> {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(cmd)
        .env("PAIR_BOARD", board)
        .env("PAIR_AGENT", f.agent.as_deref().unwrap_or(""))
        .env("PAIR_PHASE", f.phase.as_str())
        .env("PAIR_KIND", f.kind.as_str())
        .env("PAIR_REASON", &f.reason)
        .env("PAIR_NUDGE", nudge.to_string())
        .env("PAIR_SINCE", f.since.to_string())
        .env("PAIR_SECONDS", f.seconds.to_string())
        .env("PAIR_LIMIT", f.limit.to_string())
        .env("PAIR_SLA", f.sla.map(|s| s.as_str()).unwrap_or(""))
        .env("PAIR_TURN", f.turn.join(","))
        .env("PAIR_EVENT", event.to_string())
        .stdin(Stdio::null())
        // The hook's output goes to stderr, so stdout stays the events (JSON lines with --json).
        .stdout(
            std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .map_or_else(|_| Stdio::null(), Stdio::from),
        )
        .process_group(0);
    let mut child = match c.spawn() {
        Ok(ch) => ch,
        Err(e) => return Some(format!("the hook could not be started: {e}")),
    };
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return None,
            Ok(Some(status)) => {
                return Some(match status.code() {
                    Some(code) => format!("the hook exited {code}"),
                    None => "the hook was ended by a signal".into(),
                });
            }
            Ok(None) if STOP.load(Ordering::SeqCst) => {
                crate::sys::kill_group(child.id());
                let _ = child.wait();
                return Some("the hook was killed: the watchdog was asked to stop".into());
            }
            Ok(None) if Instant::now() >= deadline => {
                crate::sys::kill_group(child.id());
                let _ = child.wait();
                return Some(format!(
                    "the hook ran longer than {:.0} s and was killed",
                    limit.as_secs_f64()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Some(format!("the hook could not be waited for: {e}")),
        }
    }
}

fn print(line: &str, json: bool) {
    if json {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    } else {
        output::print_stdout(line);
    }
}

fn warn(message: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "pair: warning: {}",
        crate::text::escape(message)
    );
}

/// Check every board once; returns how many findings were reported.
fn check(
    a: &WatchArgs,
    boards: &[PathBuf],
    json: bool,
    hook_limit: Duration,
    s: &Session,
) -> usize {
    let host = journal::host();
    let mut reported = 0;
    for board in boards {
        // Asked to stop: no other board is checked (its memory is left as it was).
        if STOP.load(Ordering::SeqCst) {
            break;
        }
        let name = shown(board);
        let loaded =
            match store::snapshot(board, store::Depth::Whole, s).and_then(|snap| snap.load()) {
                Ok(l) => l,
                Err(e) => {
                    warn(&format!("watch: {name}: {e}"));
                    continue;
                }
            };
        let fm = &loaded.valid.parsed.fm;
        let records = match journal::records(&loaded.valid.doc) {
            Ok(r) => r,
            Err(e) => {
                warn(&format!(
                    "watch: {name}: the journal cannot be read: {}",
                    e.message
                ));
                Vec::new()
            }
        };
        let now = Timestamp::now_ms();
        let presence = presence::read_all(board).unwrap_or_else(|e| {
            warn(&format!(
                "watch: {name}: presence records are not read: {e}"
            ));
            Vec::new()
        });
        let found = watch::findings(fm, &records, &presence, &host, now, &watch::pid_alive);
        // The memory is kept only in a side directory that may be trusted ([`side`]): one that
        // may not is said, and every finding is reported as new.
        let side = match side::open(board, true) {
            Ok(side) => Some(side),
            Err(e) => {
                warn(&format!(
                    "watch: {name}: the watchdog's state cannot be kept: {e}; nudges will repeat"
                ));
                None
            }
        };
        let held = side.as_ref().and_then(lock_state);
        let mut state = side
            .as_ref()
            .map_or_else(State::default, |side| load_state(side, &name));
        let before = state.clone();
        let report = watch::settle(&mut state, fm, &records, found, now);
        if let Some(side) = &side
            && state != before
            && let Ok(bytes) = serde_json::to_vec(&state)
            && let Err(e) = side.replace(STATE, &bytes)
        {
            warn(&format!(
                "watch: {name}: cannot keep the watchdog's state in {} ({e}); nudges will repeat",
                side.path().join(STATE).display()
            ));
        }
        drop(held);
        for (f, nudge) in report {
            reported += 1;
            let event = event_json(&name, &f, nudge, now);
            if json {
                print(&format!("{event}\n"), true);
            } else {
                print(&event_text(&name, &f, nudge, now), false);
            }
            let hook = if f.kind.is_breach() {
                &a.on_breach
            } else {
                &a.on_stall
            };
            if hook.is_some() && STOP.load(Ordering::SeqCst) {
                warn(&format!(
                    "watch: {name}: {} of {}: the hook was not run: the watchdog was asked to \
                     stop",
                    f.kind.as_str(),
                    f.agent.as_deref().unwrap_or(f.phase.as_str())
                ));
            } else if let Some(cmd) = hook
                && let Some(problem) = run_hook(cmd, &name, &f, nudge, &event, hook_limit)
            {
                warn(&format!(
                    "watch: {name}: {} of {}: {problem}",
                    f.kind.as_str(),
                    f.agent.as_deref().unwrap_or(f.phase.as_str())
                ));
            }
        }
    }
    reported
}

pub fn run(a: WatchArgs, json: bool, s: &Session) -> Result<Outcome> {
    let interval = seconds_flag("--interval", a.interval)?.max(Duration::from_millis(100));
    let hook_limit = seconds_flag("--hook-timeout", a.hook_timeout)?;
    let (mut list, warnings) = boards(&a.board, s)?;
    for w in &warnings {
        warn(&format!("watch: {w}"));
    }
    if !a.once {
        install_signals();
    }
    let mut checks = 0;
    let mut reported = 0;
    let ended = loop {
        if checks > 0 {
            // A directory's blackboards are found again at each check: a board created after
            // the watchdog started is watched too (what could not be read was said once).
            match boards(&a.board, s) {
                Ok((found, _)) => list = found,
                Err(e) => warn(&format!("watch: {e}")),
            }
        }
        reported += check(&a, &list, json, hook_limit, s);
        checks += 1;
        if a.once {
            break "once";
        }
        let next = Instant::now() + interval;
        while Instant::now() < next && !STOP.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(100).min(next - Instant::now()));
        }
        if STOP.load(Ordering::SeqCst) {
            break "signal";
        }
    };
    let j = json!({
        "schema": SCHEMA,
        "watched": list.len(),
        "checks": checks,
        "reported": reported,
        "ended": ended,
    });
    let text = if a.once && reported == 0 {
        format!("nothing to report on {} blackboard(s)\n", list.len())
    } else {
        String::new()
    };
    let mut out = Outcome::ok(j, text);
    if a.once && reported > 0 {
        out.code = exit::REPORTED;
    }
    Ok(out)
}
