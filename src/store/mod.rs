//! Reading and writing blackboards on disk (SPEC §6). This module is the only code that writes
//! a blackboard; every write goes through [`update`].
//!
//! A write:
//! 1. opens the sidecar `<target>.lock` without following symlinks (creating it, with the
//!    blackboard's group and mode, unless the write needs a blackboard and there is none) and
//!    takes an exclusive `flock`, waiting up to the timeout;
//! 2. checks the locked file is still the one at that path (it may have been deleted and
//!    recreated by someone) and retries if not;
//! 3. records the owner in `<target>.lock.owner.json`, atomically;
//! 4. re-reads the blackboard, keeping it open, and checks the caller's expectation (hash, or
//!    absence), that it has one link, and that the caller may write it;
//! 5. lets the caller build the new content, and validates it;
//! 6. writes a temporary file beside the target with the original owner, group, extended
//!    attributes and mode (as far as the writer may set them), fsyncs it, checks the lock file
//!    and the blackboard are still the ones locked and read, renames it over the target (or
//!    links it into place when creating, so nothing is clobbered), and fsyncs the directory;
//! 7. returns what happened, computed under the lock.
//!
//! Reads take no lock: a rename is atomic, so a reader sees the old file or the new one. Every
//! read refuses a file over [`MAX_BOARD_BYTES`] before reading it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::model::{FieldError, Parsed};
use crate::validate::{self, MAX_BOARD_BYTES};

/// The lock wait used when the caller gives none (SPEC §6).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(feature = "fault-injection")]
pub mod fault;

/// Apply the test-only fault configured for a step (nothing at all without the
/// `fault-injection` feature).
macro_rules! fault {
    ($point:expr, $path:expr, $op:expr) => {{
        #[cfg(feature = "fault-injection")]
        fault::hit($point).map_err(|e| Error::io($path, $op, e))?;
    }};
}

mod durable;
mod file;
mod local;
mod lock;

pub(crate) use file::kind_of;
pub use file::{Loaded, load, load_frontmatter, read, read_head, resolve};
pub use local::update;
pub use lock::{Lock, lock, lock_path, owner_path};

/// Lower-case hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

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
    pub timeout: Duration,
    pub agent: Option<String>,
    pub operation: String,
    /// Tokens and cost the writer reports, for the write's journal record.
    pub usage: crate::journal::Usage,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            timeout: DEFAULT_TIMEOUT,
            agent: None,
            operation: "write".to_string(),
            usage: crate::journal::Usage::default(),
        }
    }
}

/// The blackboard as found under the lock.
#[derive(Debug, Clone)]
pub struct Current {
    pub bytes: Vec<u8>,
}

/// The new content a write's builder returns: the bytes, and the frontmatter already parsed and
/// checked when the builder knows the body is valid by construction (a semantic write appends
/// only checked entries to a body that was valid). Without it the store validates the whole file.
#[derive(Debug, Clone)]
pub struct Built {
    pub bytes: Vec<u8>,
    pub parsed: Option<Parsed>,
}

impl From<Vec<u8>> for Built {
    fn from(bytes: Vec<u8>) -> Built {
        Built {
            bytes,
            parsed: None,
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
    let error = FieldError {
        field: "file".to_string(),
        line: None,
        message: validate::too_large_message(size),
    };
    Error::invalid(path, vec![error], new_content)
}

/// Append the write's journal record ([`crate::journal::seal`]) to checked new content; the
/// frontmatter is not touched, so its check stands, but the size is checked again.
pub(super) fn seal(
    path: &Path,
    bytes: Vec<u8>,
    opts: &WriteOptions,
    lock: &Lock,
    old: Option<&crate::model::Frontmatter>,
    old_sha256: Option<&str>,
    parsed: &Parsed,
) -> Result<crate::journal::Sealed> {
    let intent = crate::journal::Intent {
        agent: opts.agent.clone(),
        command: opts.operation.clone(),
        usage: opts.usage.clone(),
    };
    let facts = crate::journal::Facts {
        intent: &intent,
        old,
        old_sha256,
        new: &parsed.fm,
        wait_us: lock.waited.as_micros().try_into().unwrap_or(u64::MAX),
        now: crate::model::Timestamp::now(),
    };
    let sealed = crate::journal::seal(bytes, &facts).map_err(|m| {
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
    Ok(sealed)
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
