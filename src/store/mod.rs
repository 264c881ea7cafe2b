//! Reading and writing blackboards (SPEC §6). This module is the only code that writes a
//! blackboard; every write goes through [`update`]. A blackboard is a file (the default) or a
//! file in a git ref ([`crate::store::location`], [`crate::store::gitref`]): the two differ only in how the
//! current bytes are read and how the new ones are stored; checking the expectation, building,
//! validating and sealing the journal record are [`compose`], shared by both.
//!
//! A write to a file:
//! 1. opens the sidecar `<target>.lock` without following symlinks (creating it, with the
//!    blackboard's group and mode, unless the write needs a blackboard and there is none) and
//!    takes an exclusive `flock`, waiting up to the timeout;
//! 2. checks the locked file is still the one at that path (it may have been deleted and
//!    recreated by someone) and retries if not;
//! 3. records the owner in `<target>.lock.owner.json`, atomically;
//! 4. takes the blackboard the command read before the lock ([`Snapshot`], kept open) when the
//!    file at the path is still that one, unchanged, or else reads it again, keeping it open;
//!    and checks the caller's expectation (hash, or absence), that it has one link, and that
//!    the caller may write it;
//! 5. lets the caller build the new content, and validates it;
//! 6. writes a temporary file beside the target with the original owner, group, extended
//!    attributes and mode (as far as the writer may set them), fsyncs it, checks the lock file
//!    and the blackboard are still the ones locked and read, renames it over the target (or
//!    links it into place when creating, so nothing is clobbered), and fsyncs the directory;
//! 7. returns what happened, computed under the lock.
//!
//! Reads take no lock: a rename is atomic, so a reader sees the old file or the new one. Every
//! read refuses a file over [`MAX_BOARD_BYTES`] before reading it. A command reads a board once,
//! as a [`Snapshot`], and derives everything it answers from it; a write starts from it
//! ([`update_on`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::board::frontmatter::Parsed;
use crate::error::FieldError;
use crate::error::{Error, Result};
use crate::law::validate::{self, MAX_BOARD_BYTES, Valid};
use crate::store::location::Location;

/// The lock wait used when the caller gives none (SPEC §6).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

pub mod clock;
pub mod depend;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod gitref;
pub mod location;
pub mod transcript;
pub mod wait;

/// Apply the test-only fault configured for a step (nothing at all without the
/// `fault-injection` feature).
macro_rules! fault {
    ($point:expr, $path:expr, $op:expr) => {{
        #[cfg(feature = "fault-injection")]
        $crate::store::fault::hit($point).map_err(|e| Error::io($path, $op, e))?;
    }};
}

mod durable;
mod file;
mod history;
mod local;
mod lock;
mod snapshot;

pub(crate) use file::kind_of;
pub use file::{Loaded, resolve};
pub use history::{History, history};
pub use lock::{Lock, lock, lock_path, owner_path};
pub use snapshot::{Depth, Snapshot, Version, peek, snapshot};

/// What the writer expects to find under the lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// The file exists with exactly this SHA-256 (compare-and-swap).
    Sha256(String),
    /// The file does not exist (creation never clobbers).
    Absent,
    /// The file exists; whatever it holds (semantic commands re-check it themselves).
    Present,
}

/// Who is writing and why, recorded in the owner file while the lock is held.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// What the write is, in words: the command line as recorded (notes shortened). A git
    /// board's commit carries it as its message.
    pub description: String,
    pub timeout: Duration,
    pub agent: Option<String>,
    pub operation: String,
    /// Tokens and cost the writer reports, for the write's journal record.
    pub usage: crate::board::journal::Usage,
    /// Commits to publish with the write: on a git board they are pushed in the same atomic
    /// push as the board, so both land or neither does. Only a git board publishes.
    pub publish: Vec<Publish>,
    /// A human repair (`pair write --repair`): the one write that may start from a board whose
    /// history lost journal records ([`Current::history`]).
    pub repair: bool,
    /// The writer's session and model for the write's journal record. [`update`] takes them
    /// from the command's [`Session`] ([`Session::with_origin`]), where the edge put what the
    /// command line (or the MCP server's start) gave.
    pub origin: crate::board::journal::Origin,
    /// The writer's transcript, whose usage since the writer's previous write the record counts
    /// ([`transcript`]); taken from the command's [`Session`] like the origin.
    pub transcript: Option<PathBuf>,
    /// The writer's signing key and trust root, for a signed board ([`crate::signature`]);
    /// taken from the command's [`Session`] like the origin.
    pub keys: crate::signature::Keys,
}

/// A commit a write publishes on the board's remote (a submitted artifact).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publish {
    /// The ref it is pushed to (under `refs/pair-artifacts/`, named after the commit).
    pub refname: String,
    pub commit: String,
    /// The object directory of the repository that holds the commit.
    pub objects: PathBuf,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            description: "pair write".to_string(),
            timeout: DEFAULT_TIMEOUT,
            agent: None,
            operation: "write".to_string(),
            usage: crate::board::journal::Usage::default(),
            publish: Vec::new(),
            repair: false,
            origin: crate::board::journal::Origin::default(),
            transcript: None,
            keys: crate::signature::Keys::default(),
        }
    }
}

/// The blackboard as found under the lock.
#[derive(Debug, Clone, Default)]
pub struct Current {
    pub bytes: Vec<u8>,
    /// What the store knows of the board's history that its bytes do not show: on a git board,
    /// a tip that is a merge commit, or journal records the ref's previous commit held that the
    /// board at the tip lost ([`crate::store::gitref`]). Every write but a repair refuses such a
    /// board.
    pub history: Vec<FieldError>,
    /// The bytes' hashes, computed once by whoever asks first (the write's hash thread, or its
    /// builder checking the board it found).
    hashed: std::sync::OnceLock<Hashed>,
}

/// What one pass of SHA-256 over a board found tells.
#[derive(Debug, Clone)]
struct Hashed {
    sha256: String,
    as_recorded: bool,
}

impl Current {
    /// The board found: its bytes, and what the store knows of its history beside them.
    pub fn new(bytes: Vec<u8>, history: Vec<FieldError>) -> Current {
        Current {
            bytes,
            history,
            hashed: std::sync::OnceLock::new(),
        }
    }

    /// The SHA-256 of the bytes found (hex).
    pub fn sha256(&self) -> &str {
        &self.hashed().sha256
    }

    /// Whether the bytes are exactly what the last recorded write left: the hash of everything
    /// before the journal's last record is that record's `after`. The records before the last
    /// of such a board were checked by the writes that added them, so a write need not parse
    /// them again ([`crate::law::validate::check_found_as`]).
    pub fn as_recorded(&self) -> bool {
        self.hashed().as_recorded
    }

    fn hashed(&self) -> &Hashed {
        self.hashed.get_or_init(|| {
            use sha2::{Digest, Sha256};
            let bytes = &self.bytes[..];
            let mut hasher = Sha256::new();
            let mut as_recorded = false;
            // One pass: the hash of everything before the last line is a snapshot of the
            // hasher on its way to the whole file's.
            if let Some(start) = crate::board::journal::last_line_start(bytes) {
                hasher.update(&bytes[..start]);
                let prefix = crate::text::hex(&hasher.clone().finalize());
                as_recorded = crate::board::journal::records_after(&bytes[start..], &prefix);
                hasher.update(&bytes[start..]);
            } else {
                hasher.update(bytes);
            }
            Hashed {
                sha256: crate::text::hex(&hasher.finalize()),
                as_recorded,
            }
        })
    }
}

/// The new content a write's builder returns: the bytes, and the frontmatter already parsed and
/// checked when the builder knows the body is valid by construction (a semantic write appends
/// only checked entries to a body that was valid). Without it the store validates the whole file,
/// and, once the write's journal record is sealed in, checks it as `validate` would.
#[derive(Debug, Clone)]
pub struct Built {
    pub bytes: Vec<u8>,
    pub parsed: Option<Parsed>,
    /// The frontmatter of the board found, when the builder parsed it already: the journal
    /// record names the phase and counters before the write, and the frontmatter is then not
    /// parsed a second time for them.
    pub old: Option<crate::board::frontmatter::Frontmatter>,
}

impl From<Vec<u8>> for Built {
    fn from(bytes: Vec<u8>) -> Built {
        Built {
            bytes,
            parsed: None,
            old: None,
        }
    }
}

/// What a successful write did.
#[derive(Debug, Clone)]
pub struct Written {
    /// The path written (the symlink's target for a symlinked blackboard).
    pub target: PathBuf,
    pub old_sha256: Option<String>,
    pub new_sha256: String,
    pub created: bool,
    /// The new frontmatter, validated.
    pub parsed: Parsed,
    /// Problems after the rename that do not undo it (e.g. the directory fsync failed).
    pub warnings: Vec<String>,
}

/// The refusal of a blackboard, or of content about to be written, over [`MAX_BOARD_BYTES`].
pub(super) fn too_large_content(path: &Path, size: u64, new_content: bool) -> Error {
    too_large_because(path, validate::too_large_message(size), new_content)
}

/// The refusal of a board over [`validate::MAX_BOARD_BYTES`] that the remote left out of a
/// fetch, its size unknown (exit 5).
pub(super) fn too_large_unfetched(path: &Path) -> Error {
    too_large_because(path, validate::too_large_unfetched_message(), false)
}

fn too_large_because(path: &Path, message: String, new_content: bool) -> Error {
    let error = FieldError {
        field: "file".to_string(),
        line: None,
        message,
    };
    Error::invalid(path, vec![error], new_content)
}

/// Append the write's journal record ([`crate::board::journal::seal`]) to checked new content; the
/// frontmatter is not touched, so its check stands, but the size is checked again.
pub(super) fn seal(
    path: &Path,
    bytes: Vec<u8>,
    opts: &WriteOptions,
    wait: Duration,
    old: Option<&crate::board::frontmatter::Frontmatter>,
    old_sha256: Option<&str>,
    parsed: &Parsed,
) -> Result<(crate::board::journal::Sealed, Vec<String>)> {
    let mut warnings = Vec::new();
    let mut intent = crate::board::journal::Intent {
        agent: opts.agent.clone(),
        command: opts.operation.clone(),
        usage: opts.usage.clone(),
        repair: opts.repair,
        origin: opts.origin.clone(),
        transcript: None,
    };
    // The writer's transcript: the usage since its previous write on this board, unless it
    // gave --tokens itself (which wins; the position is recorded all the same, so the next
    // write does not count that stretch again).
    if let (Some(file), Some(agent)) = (&opts.transcript, &opts.agent)
        && crate::board::frontmatter::is_agent_id(agent)
    {
        let previous = crate::board::transcript::previous(&bytes, agent);
        let measured = transcript::measure(file, previous.as_ref());
        if intent.usage.tokens.is_none() {
            intent.usage.tokens = measured.tokens;
        }
        intent.transcript = measured.position;
        warnings.extend(measured.warnings);
    }
    // A signed board's record carries its writer's signature, which the writer's own trust
    // root must vouch for: a key it does not know is refused before anything is written.
    let signing = if crate::board::format::of(&parsed.fm) >= crate::board::journal::SIGNED_FROM {
        Some(crate::signature::signer_for(
            path,
            &opts.keys,
            opts.agent.as_deref(),
        )?)
    } else {
        None
    };
    let refused = std::cell::RefCell::new(None);
    let sign = |message: &[u8]| -> std::result::Result<String, String> {
        let (key, trust) = signing.as_ref().ok_or("no signing key")?;
        let writer = opts.agent.as_deref().unwrap_or_default();
        let sig = crate::signature::sign(key, message).inspect_err(|m| {
            *refused.borrow_mut() = Some(Error::protocol(m.clone()));
        })?;
        match crate::signature::verify(trust, writer, message, &sig) {
            Ok(true) => Ok(sig),
            Ok(false) => {
                let m = format!(
                    "the key {} is not {writer}'s as {} ({}) has it: a signed board takes a \
                     record by {writer} only with a key that file vouches for as {writer}, and \
                     nothing was written. Sign with {writer}'s own key, or have the trust root's \
                     owner add it",
                    key.display(),
                    trust.file.display(),
                    trust.source
                );
                *refused.borrow_mut() = Some(Error::protocol(m.clone()));
                Err(m)
            }
            Err(e) => {
                let m = e.to_string();
                *refused.borrow_mut() = Some(e);
                Err(m)
            }
        }
    };
    let facts = crate::board::journal::Facts {
        sign: signing.as_ref().map(|_| &sign as _),
        intent: &intent,
        old,
        old_sha256,
        new: &parsed.fm,
        turn: crate::law::protocol::turn(&parsed.fm),
        wait_us: wait.as_micros().try_into().unwrap_or(u64::MAX),
        now: crate::board::frontmatter::Timestamp::now_ms(),
    };
    let sealed = crate::board::journal::seal(bytes, &facts);
    if let Some(e) = refused.into_inner() {
        return Err(e);
    }
    let sealed = sealed.map_err(|m| {
        Error::invalid(
            path,
            vec![FieldError {
                field: "file".into(),
                line: None,
                message: m,
            }],
            true,
        )
    })?;
    if sealed.bytes.len() as u64 > MAX_BOARD_BYTES {
        return Err(too_large_content(path, sealed.bytes.len() as u64, true));
    }
    Ok((sealed, warnings))
}

/// The new content's size and, unless its builder checked it, its validity.
pub(super) fn check_new(path: &Path, bytes: &[u8], parsed: Option<Parsed>) -> Result<Parsed> {
    // No write makes a board larger than any reader accepts, however the new content was
    // checked.
    if bytes.len() as u64 > MAX_BOARD_BYTES {
        return Err(too_large_content(path, bytes.len() as u64, true));
    }
    match parsed {
        Some(p) => Ok(p),
        None => validate::check_bytes(bytes)
            .map(|v| v.parsed)
            .map_err(|r| Error::invalid(path, r.errors, true)),
    }
}

/// Refuse a write whose expectation of the board's existence is not met.
pub(super) fn check_presence(path: &Path, expect: &Expect, exists: bool) -> Result<()> {
    match (expect, exists) {
        (Expect::Absent, true) => Err(Error::Exists {
            path: path.to_path_buf(),
        }),
        (Expect::Sha256(_) | Expect::Present, false) => Err(Error::Missing {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// The size from which a write hashes the old content on a second thread while it builds the
/// new one: below it, starting the thread costs more than the hash.
const HASH_THREAD_FROM: usize = 256 * 1024;

/// The new content of a write, checked and sealed, ready to be stored.
pub(crate) struct Composed {
    pub old_sha256: Option<String>,
    pub bytes: Vec<u8>,
    pub sha256: String,
    pub parsed: Parsed,
    /// What the writer is told beside the write (a transcript that could not be read).
    pub warnings: Vec<String>,
}

/// The part of a write that does not depend on where the board is kept: check the
/// expectation against the current content, let the caller build the new content, check it,
/// and seal the write's journal record into it. `wait` is how long the write waited for its
/// turn (the lock, or the retries of a moved git ref), for the record.
///
/// The old content's SHA-256 is computed on a second thread while the main one parses and
/// builds. The new content is hashed once, by the journal's seal, which needs the hash of
/// everything before the write's record for the record itself and finishes the same hasher
/// with the record for the file's SHA-256.
pub(crate) fn compose<F, B>(
    path: &Path,
    expect: &Expect,
    current: Option<Current>,
    opts: &WriteOptions,
    wait: Duration,
    build: F,
) -> Result<Composed>
where
    F: FnOnce(Option<&Current>) -> Result<B>,
    B: Into<Built>,
{
    check_presence(path, expect, current.is_some())?;
    crate::board::format::check_board(path, current.as_ref().map(|c| &c.bytes[..]))?;
    if let Some(c) = &current {
        crate::signature::check_since(
            path,
            &c.bytes,
            &opts.keys,
            opts.agent.as_deref(),
            opts.repair,
        )?;
    }
    if let Some(c) = &current
        && !c.history.is_empty()
        && !opts.repair
    {
        return Err(Error::invalid(path, c.history.clone(), false));
    }
    let (old_sha256, built) = std::thread::scope(|s| -> Result<(Option<String>, Built)> {
        // A small board is hashed in less time than a thread takes to start. The builder may
        // ask for the hash too (whether the board is as its last record left it): whoever asks
        // first computes it, the other waits for it.
        let current = current.as_ref();
        let mut old_hash = current
            .filter(|c| c.bytes.len() >= HASH_THREAD_FROM)
            .map(|c| s.spawn(|| c.sha256().len()));
        let mut join = || {
            if let Some(h) = old_hash.take() {
                let _ = h.join();
            }
            current.map(|c| c.sha256().to_string())
        };
        // A compare-and-swap needs the hash before anything is built; otherwise it is computed
        // while the new content is built.
        let mut old_sha256 = None;
        if let Expect::Sha256(want) = expect {
            let found = join().unwrap_or_default();
            if !want.eq_ignore_ascii_case(&found) {
                return Err(Error::Stale {
                    path: path.to_path_buf(),
                    expected: want.to_lowercase(),
                    found,
                });
            }
            old_sha256 = Some(found);
        }
        let built = build(current)?.into();
        if old_sha256.is_none() {
            old_sha256 = join();
        }
        Ok((old_sha256, built))
    })?;
    let Built {
        bytes: new_bytes,
        parsed,
        old,
    } = built;
    // The phase and counters before the write, for its journal record: as the builder parsed
    // them, or parsed here.
    let old_fm = old.or_else(|| {
        current
            .as_ref()
            .and_then(|c| validate::check_frontmatter_bytes(&c.bytes).ok())
            .map(|v| v.parsed.fm)
    });
    let old_format = current
        .as_ref()
        .and_then(|c| crate::board::format::declared(&c.bytes));
    // Keep only the old hash from here on: holding the old bytes through validation and the
    // write would put a third copy of a large blackboard in memory.
    drop(current);
    let checked = parsed.is_some();
    let parsed = check_new(path, &new_bytes, parsed)?;
    crate::board::format::check_new(path, &parsed.fm)?;
    crate::board::format::check_kept_signed(old_format, &parsed.fm)?;
    let mut parsed = parsed;
    let (sealed, warnings) = seal(
        path,
        new_bytes,
        opts,
        wait,
        old_fm.as_ref(),
        old_sha256.as_deref(),
        &parsed,
    )?;
    if sealed.seal.is_some() {
        parsed.fm.journal = sealed.seal.clone();
    }
    // Content its builder did not check (a repair, which may rewrite anything) must leave a
    // board that `validate` accepts whole: its body and frontmatter agreeing, its journal
    // chained, as sealed.
    if !checked {
        validate::check_board(&sealed.bytes).map_err(|r| Error::invalid(path, r.errors, true))?;
    }
    Ok(Composed {
        old_sha256,
        bytes: sealed.bytes,
        sha256: sealed.sha256,
        parsed,
        warnings,
    })
}

/// What one command met in the store, for the edge to report when the command ends: the
/// remote of a git board it read or wrote, and the newest board format it read. Made by the
/// caller, one per command, passed to every read and write; nothing in the store keeps it.
#[derive(Debug, Default)]
pub struct Session {
    /// Reads of a git board may fall back to the local cache when the remote cannot be reached
    /// (`status`: a person looking at a board offline).
    pub offline_reads: bool,
    /// The command's deadline for its remotes, and how long one exchange with a git board's
    /// remote may take within it (a read, or a write with its retries): as the edge set it for
    /// the command running on this thread ([`clock`]).
    clock: clock::Clock,
    remote: std::cell::RefCell<Option<gitref::Observed>>,
    newer_format: std::cell::Cell<u32>,
    /// The last git board read: its address, the commit it was read at and its bytes, so that
    /// a waiting `poll` whose remote has not moved asks only for the tip.
    last_read: std::cell::RefCell<Option<(String, String, Vec<u8>)>>,
    /// What may end a wait early and hears when it sleeps: set when a server runs the command
    /// (see [`Session::with_interrupt`]).
    interrupt: Option<wait::Interrupt>,
    /// The writer's session and model, recorded with every write the command makes.
    origin: crate::board::journal::Origin,
    /// The writer's transcript, read by every write the command makes.
    transcript: Option<PathBuf>,
    /// The writer's signing key and trust root, for every write and check of a signed board.
    keys: crate::signature::Keys,
}

impl Session {
    /// A session for one command; `offline_reads` as for [`Session::offline_reads`].
    pub fn new(offline_reads: bool) -> Session {
        Session {
            offline_reads,
            ..Session::default()
        }
    }

    /// Let `interrupt` end this command's waits and hear when they sleep. A command run so is
    /// run by a process that outlives it (the MCP server): what it leaves behind is its own to
    /// clean up, not the process exit's.
    pub fn with_interrupt(mut self, interrupt: wait::Interrupt) -> Session {
        self.interrupt = Some(interrupt);
        self
    }

    /// Record `origin` (the writer's session and model) with every write of this command.
    pub fn with_origin(mut self, origin: crate::board::journal::Origin) -> Session {
        self.origin = origin;
        self
    }

    /// Read `transcript` (the writer's own log of what it spent) with every write of this
    /// command.
    pub fn with_transcript(mut self, transcript: Option<PathBuf>) -> Session {
        self.transcript = transcript;
        self
    }

    /// Sign with, and check signed boards against, `keys` ([`crate::signature`]).
    pub fn with_keys(mut self, keys: crate::signature::Keys) -> Session {
        self.keys = keys;
        self
    }

    /// The signing key and trust root, as the edge gave them.
    pub fn keys(&self) -> &crate::signature::Keys {
        &self.keys
    }

    /// The writer's transcript, as the edge gave it.
    pub fn transcript(&self) -> Option<&Path> {
        self.transcript.as_deref()
    }

    /// The writer's session and model, as the edge gave them.
    pub fn origin(&self) -> &crate::board::journal::Origin {
        &self.origin
    }

    /// The interrupt of this command's waits, when a server runs it.
    pub fn interrupt(&self) -> Option<&wait::Interrupt> {
        self.interrupt.as_ref()
    }

    /// When the command must be done with its remotes, when it has such a deadline (a wait
    /// ends then too).
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.clock.deadline()
    }

    /// The deadline of an exchange with a git board's remote starting now: the limit of one
    /// exchange (a write's `--timeout`, `$PAIR_GIT_TIMEOUT`, 10 s), never later than the
    /// command's deadline; no git call of the exchange runs past it.
    pub fn remote_until(&self) -> gitref::remote::Until {
        self.clock.until()
    }

    /// What the last exchange with a git board's remote found, if there was one.
    pub fn remote(&self) -> Option<gitref::Observed> {
        self.remote.borrow().clone()
    }

    /// The bytes last read of the board `address` at `tip`, if that is what was last read.
    pub(crate) fn read_at(&self, address: &str, tip: &str) -> Option<Vec<u8>> {
        match &*self.last_read.borrow() {
            Some((a, t, bytes)) if a == address && t == tip => Some(bytes.clone()),
            _ => None,
        }
    }

    pub(crate) fn remember_read(&self, address: &str, tip: &str, bytes: &[u8]) {
        *self.last_read.borrow_mut() = Some((address.into(), tip.into(), bytes.to_vec()));
    }

    pub(crate) fn observe(&self, mut o: gitref::Observed) {
        let mut seen = self.remote.borrow_mut();
        // A command that reads the board twice (to learn what kind of board it is, then to
        // work on it) reports what its first read found: a rewrite or a fetch is seen once,
        // by the read that met it, and the second read of the same tip finds nothing new.
        if let Some(before) = seen.as_ref()
            && before.tip == o.tip
        {
            o.fetched |= before.fetched;
            if o.rewritten_from.is_none() {
                o.rewritten_from = before.rewritten_from.clone();
            }
        }
        *seen = Some(o);
    }

    /// The newest format among the boards read, when it is newer than this `pair` knows.
    pub fn newer_format(&self) -> Option<u32> {
        Some(self.newer_format.get()).filter(|f| *f > 0)
    }

    /// Note the format a board read declares.
    fn read(&self, bytes: &[u8]) {
        self.saw_format(crate::board::format::declared(bytes));
    }

    fn saw_format(&self, format: Option<u32>) {
        if let Some(found) = format.filter(|f| *f > crate::board::format::CURRENT) {
            self.newer_format.set(self.newer_format.get().max(found));
        }
    }
}

/// Read a whole blackboard, from a file or a git board: the bytes of one [`snapshot`].
pub fn read(path: &Path, s: &Session) -> Result<Vec<u8>> {
    Ok(snapshot(path, Depth::Whole, s)?.into_bytes())
}

/// Read a blackboard as far as the end of its frontmatter (the whole board, for a git board),
/// without refusing a file over the size limit: a search for blackboards still finds one that
/// is too large, and reports it.
pub fn read_head(path: &Path, s: &Session) -> Result<Vec<u8>> {
    let bytes = match Location::of(path)? {
        Location::Local(_) => file::read_head(path)?,
        Location::Git(_) => snapshot(path, Depth::Head, s)?.into_bytes(),
    };
    s.read(&bytes);
    Ok(bytes)
}

/// The head of a blackboard file up to its closing `---`, as [`read_head`] reads it, without
/// noting its format in a session (which parses the frontmatter): for a walk that only asks
/// whether a file is a blackboard, ahead of the load that notes it.
pub fn peek_head(path: &Path) -> Result<Vec<u8>> {
    file::read_head(path)
}

/// Read and validate a whole blackboard (one [`snapshot`]).
pub fn load(path: &Path, s: &Session) -> Result<Loaded> {
    snapshot(path, Depth::Whole, s)?.load()
}

/// Read and validate only the frontmatter (one [`snapshot`] of the head).
pub fn load_frontmatter(path: &Path, s: &Session) -> Result<Valid> {
    snapshot(path, Depth::Head, s)?.frontmatter()
}

/// What `validate` checks of a board beyond its bytes: on a git board, its journal against the
/// ref's history ([`gitref::history`]), at the tip the last read in `s` found; nothing on a
/// file. (Errors, warnings.)
pub fn journal_history(path: &Path, s: &Session) -> Result<(Vec<FieldError>, Vec<FieldError>)> {
    match Location::of(path)? {
        Location::Local(_) => Ok((vec![], vec![])),
        Location::Git(g) => gitref::history(&g, s),
    }
}

/// Perform one checked write. `build` gets the current content (`None` when creating) and
/// returns the complete new file; it may refuse with any error, which leaves the board
/// untouched. A file is written under its lock by a durable replace; a git board by a commit
/// pushed with a lease on the tip read, where `build` runs again when the ref moved.
pub fn update<F, B>(
    path: &Path,
    expect: Expect,
    opts: &WriteOptions,
    s: &Session,
    build: F,
) -> Result<Written>
where
    F: FnMut(Option<&Current>) -> Result<B>,
    B: Into<Built>,
{
    let opts = &with_session(opts, s);
    match Location::of(path)? {
        Location::Local(_) if !opts.publish.is_empty() => Err(only_git_publishes(path)),
        Location::Local(_) => local::update(path, expect, opts, None, build),
        Location::Git(g) => crate::store::gitref::update(&g, path, expect, opts, s, None, build),
    }
}

/// [`update`] of the board a command read as `snap`: the write's first attempt builds on the
/// snapshot's bytes without reading the board again, when it is still the board found under
/// the lock (a file with the same identity, size and times) or at the leased tip (a git board);
/// when the board moved, the write reads it again and `build` runs on what it finds.
pub fn update_on<F, B>(
    snap: Snapshot,
    expect: Expect,
    opts: &WriteOptions,
    s: &Session,
    build: F,
) -> Result<Written>
where
    F: FnMut(Option<&Current>) -> Result<B>,
    B: Into<Built>,
{
    let opts = &with_session(opts, s);
    if !snap.is_whole() {
        return update(snap.path(), expect, opts, s, build);
    }
    let (path, current, at) = snap.into_parts();
    match (at, Location::of(&path)?) {
        (_, Location::Local(_)) if !opts.publish.is_empty() => Err(only_git_publishes(&path)),
        (snapshot::At::File { file, meta }, _) => {
            local::update(&path, expect, opts, Some((current, file, meta)), build)
        }
        (snapshot::At::Git { cache, tip, fresh }, Location::Git(g)) => {
            let first = gitref::Read {
                cache,
                tip,
                current,
                fresh,
            };
            gitref::update(&g, &path, expect, opts, s, Some(first), build)
        }
        (snapshot::At::Absent, _) | (snapshot::At::Git { .. }, Location::Local(_)) => {
            local::update(&path, expect, opts, None, build)
        }
    }
}

/// A write that finds no board where a lock file is: the lock taken all the same (removing what
/// a writer killed while creating the board left), and the board reported missing.
pub(super) fn missing_under_lock(path: &Path) -> Error {
    let missing = || Error::Missing {
        path: path.to_path_buf(),
    };
    let opts = WriteOptions::default();
    match local::update(path, Expect::Present, &opts, None, |_| {
        Err::<Built, _>(missing())
    }) {
        Err(e) => e,
        Ok(_) => missing(),
    }
}

fn only_git_publishes(path: &Path) -> Error {
    Error::Usage(format!(
        "{}: only a board kept in a git ref publishes its artifacts",
        path.display()
    ))
}

/// The write's options with the writer's session, model and transcript from the command (the
/// options may name their own).
fn with_session(opts: &WriteOptions, s: &Session) -> WriteOptions {
    let mut o = opts.clone();
    if o.origin == Default::default() {
        o.origin = s.origin().clone();
    }
    if o.transcript.is_none() {
        o.transcript = s.transcript.clone();
    }
    if o.keys == Default::default() {
        o.keys = s.keys.clone();
    }
    o
}

/// Create a blackboard holding exactly `bytes` (a copy: no journal record is added), refusing
/// to clobber an existing file or ref. The bytes must be a valid blackboard.
pub fn create_copy(path: &Path, bytes: &[u8], opts: &WriteOptions, s: &Session) -> Result<()> {
    // A copy of a board `validate` rejects would be one too.
    let valid = validate::check_board(bytes).map_err(|r| Error::invalid(path, r.errors, true))?;
    crate::board::format::check_new(path, &valid.parsed.fm)?;
    match Location::of(path)? {
        Location::Local(_) => local::create_copy(path, bytes, opts),
        Location::Git(g) => crate::store::gitref::create_copy(&g, path, bytes, opts, s),
    }
}
