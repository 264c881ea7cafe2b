//! Typed errors with the stable exit codes of SPEC §7.1.
//!
//! Every variant carries what the caller needs to act: the path, the field and line, what was
//! expected and found, or the command to run instead. The binary maps them to exit codes and to
//! the JSON error envelope; nothing else decides an exit code.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::FieldError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system error on a path.
    #[error("{}: cannot {op}: {source}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: io::Error,
    },

    /// Something that is not a regular file stands where a blackboard should be.
    #[error("{}: is {kind}, not a regular file; a blackboard must be a regular Markdown file", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },

    /// A lock or owner file is a symlink or otherwise unsafe to open.
    #[error("{}: {why}", path.display())]
    UnsafePath { path: PathBuf, why: String },

    /// The lock was not acquired within the timeout.
    #[error("{}: lock not acquired within {:.1} s{}; retry later", lock.display(), timeout.as_secs_f64(), holder.as_ref().map(|h| format!(" (held by {h})")).unwrap_or_default())]
    LockTimeout {
        lock: PathBuf,
        timeout: Duration,
        holder: Option<String>,
    },

    /// Compare-and-swap failed: the file changed since the caller read it.
    #[error("{}: stale: expected SHA-256 {expected} but the file is now {found}; re-read it and redo the change", path.display())]
    Stale {
        path: PathBuf,
        expected: String,
        found: String,
    },

    /// A counter named by the caller moved on.
    #[error("{message}")]
    StaleCounter { message: String },

    /// The call itself is wrong.
    #[error("{0}")]
    Usage(String),

    /// The blackboard (or the new content) breaks the format or an invariant. For a blackboard
    /// on disk, the message ends with the command that repairs it, with its current SHA-256.
    #[error("{}: {}:\n{}{}", path.display(), if *new_content { "the new content is not a valid blackboard; nothing was written" } else { "invalid blackboard" }, render_field_errors(errors), if *new_content { String::new() } else { repair_hint(path) })]
    Invalid {
        path: PathBuf,
        errors: Vec<FieldError>,
        /// The errors are in content about to be written (the file is untouched).
        new_content: bool,
    },

    /// A transition, gate, role or ownership rule refuses the operation.
    #[error("{message}")]
    Protocol { message: String },

    /// The blackboard does not exist.
    #[error("{}: no such blackboard; create it with `pair init {}`", path.display(), path.display())]
    Missing { path: PathBuf },

    /// Creation found the file already there.
    #[error("{}: already exists; refusing to overwrite it (read it with `pair status {}`)", path.display(), path.display())]
    Exists { path: PathBuf },
}

fn render_field_errors(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {}", crate::output::field_error(e)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last lines of an invalid-blackboard message: how to repair the file by hand, naming its
/// current SHA-256 when it can be read.
fn repair_hint(path: &Path) -> String {
    let sha = crate::output::current_sha256(path);
    format!(
        "\nto repair it by hand, write a fixed copy and replace the file with it:\n  {}",
        crate::output::escape(&crate::output::repair_command(path, sha.as_deref()))
    )
}

impl Error {
    /// The exit code of SPEC §7.1.
    pub fn code(&self) -> i32 {
        match self {
            Error::Io { .. } | Error::NotAFile { .. } | Error::UnsafePath { .. } => 1,
            Error::LockTimeout { .. } => 2,
            Error::Stale { .. } | Error::StaleCounter { .. } => 3,
            Error::Usage(_) => 4,
            Error::Invalid { .. } => 5,
            Error::Protocol { .. } => 6,
            Error::Missing { .. } | Error::Exists { .. } => 7,
        }
    }

    /// A stable machine-readable name for the JSON envelope.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Io { .. } => "io",
            Error::NotAFile { .. } => "not_a_file",
            Error::UnsafePath { .. } => "unsafe_path",
            Error::LockTimeout { .. } => "lock_timeout",
            Error::Stale { .. } => "stale",
            Error::StaleCounter { .. } => "stale_counter",
            Error::Usage(_) => "usage",
            Error::Invalid { .. } => "invalid",
            Error::Protocol { .. } => "protocol",
            Error::Missing { .. } => "missing",
            Error::Exists { .. } => "exists",
        }
    }

    pub fn io(path: &Path, op: &'static str, source: io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    }

    pub fn protocol(message: impl Into<String>) -> Error {
        Error::Protocol {
            message: message.into(),
        }
    }
}
