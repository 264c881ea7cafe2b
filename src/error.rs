//! Typed errors with the stable exit codes of SPEC §7.1.
//!
//! Every variant carries what the caller needs to act: the path, the field and line, what was
//! expected and found, or the command to run instead. The binary maps them to exit codes and to
//! the JSON error envelope; nothing else decides an exit code.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A problem with one field: its dotted path, the file line where known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub line: Option<u32>,
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: `{}`: {}", self.field, self.message),
            None => write!(f, "`{}`: {}", self.field, self.message),
        }
    }
}

impl FieldError {
    /// The error for a human: `line N: `field`: message`, with the field and message escaped.
    pub fn escaped(&self) -> String {
        use crate::text::escape;
        match self.line {
            Some(l) => format!(
                "line {l}: `{}`: {}",
                escape(&self.field),
                escape(&self.message)
            ),
            None => format!("`{}`: {}", escape(&self.field), escape(&self.message)),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system error on a path.
    #[error(
        "{}: cannot {op}: {source}{}",
        shown(path),
        io_advice(path, op, source)
    )]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: io::Error,
    },

    /// Something that is not a regular file stands where a blackboard should be.
    #[error(
        "{}: is {kind}, not a regular file; a blackboard must be a regular Markdown file",
        shown(path)
    )]
    NotAFile { path: PathBuf, kind: &'static str },

    /// A lock or owner file is a symlink or otherwise unsafe to open.
    #[error("{}: {why}", shown(path))]
    UnsafePath { path: PathBuf, why: String },

    /// The lock was not acquired within the timeout.
    #[error("{}: lock not acquired within {:.1} s{}; retry later", shown(lock), timeout.as_secs_f64(), holder.as_ref().map(|h| format!(" (held by {h})")).unwrap_or_default())]
    LockTimeout {
        lock: PathBuf,
        timeout: Duration,
        holder: Option<String>,
    },

    /// Compare-and-swap failed: the file changed since the caller read it.
    #[error(
        "{}: stale: expected SHA-256 {expected} but the file is now {found}; re-read it and redo the change",
        shown(path)
    )]
    Stale {
        path: PathBuf,
        expected: String,
        found: String,
    },

    /// A counter named by the caller moved on.
    #[error("{message}")]
    StaleCounter { message: String },

    /// The artifact under review is not the one its submission pinned (it changed after the
    /// submission), or not the one the reviewer says it read.
    #[error("{message}")]
    StaleArtifact {
        message: String,
        /// What to run instead: the command again, or the read of the pinned artifact.
        hint: Option<Hint>,
        /// The hint as the argument vector after `pair`, once rendered (as for `Protocol`).
        suggestion: Option<Vec<String>>,
    },

    /// The artifact under review cannot be read on this machine (its worktree or files are on
    /// another, or its published commit cannot be fetched). Not stale: retrying changes nothing.
    #[error("{message}")]
    ArtifactUnavailable { message: String },

    /// The published artifact is not what was pinned: its ref names another commit, or the
    /// commit does not hold what the pin covers.
    #[error("{message}")]
    ArtifactMismatch { message: String },

    /// A check's command could not run here: it could not start, or it ended with 126 or 127
    /// (the shell's "cannot execute" and "not found"). Not a result of the code: nothing is
    /// recorded.
    #[error("{message}")]
    CannotRun { message: String },

    /// A board that asks for independent review refuses a verdict from the session that wrote
    /// the artifact under review, or from a writer that named no session
    /// ([`crate::law::independence`]). The message says what to do: review from a fresh
    /// session.
    #[error("{message}")]
    NotIndependent { message: String },

    /// `git` could not be run, or failed on a worktree it was pointed at.
    #[error("{message}")]
    Git { message: String },

    /// The call itself is wrong.
    #[error("{0}")]
    Usage(String),

    /// The blackboard (or the new content) breaks the format or an invariant. For a blackboard
    /// on disk, the edge that shows it adds the command that repairs it, with its current
    /// SHA-256 ([`crate::render::output::message`]).
    #[error("{}: {}:\n{}", shown(path), if *new_content { "the new content is not a valid blackboard; nothing was written" } else { "invalid blackboard" }, render_field_errors(errors))]
    Invalid {
        path: PathBuf,
        errors: Vec<FieldError>,
        /// The errors are in content about to be written (the file is untouched).
        new_content: bool,
    },

    /// A transition, gate, role or ownership rule refuses the operation.
    #[error("{message}")]
    Protocol {
        message: String,
        /// What to run instead, when there is a step the caller can take.
        hint: Option<Hint>,
        /// The hint as the argument vector after `pair`, once the command-line layer has
        /// rendered it against the command that was run.
        suggestion: Option<Vec<String>>,
    },

    /// A command that records a text was given none: `flag` is its flag without the dashes
    /// (`note`, `title`); `{flag}-file` is its file twin.
    #[error("give the {what} with --{flag} TEXT or --{flag}-file FILE (`-` for stdin)")]
    NoText {
        what: &'static str,
        flag: &'static str,
    },

    /// The blackboard does not exist. Only the doer creates one, and before `init` nobody is
    /// named the doer, so the message says who creates it rather than telling the caller to.
    #[error(
        "{}: no such blackboard (the doer creates it with `pair init {}`; anyone else waits for it with `pair poll {} --agent ID --wait`)",
        shown(path),
        word(path),
        word(path)
    )]
    Missing { path: PathBuf },

    /// Creation found the file already there.
    #[error(
        "{}: already exists; refusing to overwrite it (read it with `pair status {}`)",
        shown(path),
        word(path)
    )]
    Exists { path: PathBuf },

    /// The board (or the new content) is of a format newer than this `pair` knows: upgrade.
    #[error("{}: {} format {found}, but this pair knows formats up to {known}; upgrade pair to write it (nothing was written{})", shown(path), if *new_content { "the new content is" } else { "this board is" }, if *new_content { "" } else { "; reads go on, with a warning" })]
    Format {
        path: PathBuf,
        /// The board's format.
        found: u32,
        /// The newest format this `pair` knows.
        known: u32,
        /// The format refused is the new content's (the board on disk was not newer).
        new_content: bool,
    },
}

/// What to do about an operating-system error, where there is something to do: a permission
/// denied or a read-only file system says whose access a write or a read needs.
fn io_advice(path: &Path, op: &str, source: &io::Error) -> String {
    let read_only_fs = source.kind() == io::ErrorKind::ReadOnlyFilesystem;
    if source.kind() != io::ErrorKind::PermissionDenied && !read_only_fs {
        return String::new();
    }
    let reading = op.starts_with("read") || op == "open the blackboard" || op.starts_with("stat");
    if reading {
        return " (reading a board needs read access to the file and search access to its \
                 directories: ask the board's owner for it, e.g. a group that may read it)"
            .to_string();
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if read_only_fs {
        return format!(
            " ({} is on a read-only file system: a write replaces the board and keeps its lock \
             file beside it, so the board must live where it can be written; reads still work)",
            shown(dir)
        );
    }
    format!(
        " (a write keeps a lock file and a temporary file beside the board, so it needs write \
         access to the directory {}, not only to the board: run pair as a user who may write \
         there, or ask the directory's owner to let your group write it, e.g. `chmod g+w {}`; \
         reads such as `pair status` need read access only)",
        shown(dir),
        word(dir)
    )
}

/// A path in a message: one line, every control character escaped.
fn shown(path: &Path) -> String {
    crate::text::escape(&path.display().to_string()).into_owned()
}

/// A path as a word of a command in a message, quoted for a shell on one line.
fn word(path: &Path) -> String {
    crate::text::shell_word(&path.display().to_string())
}

fn render_field_errors(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {}", e.escaped()))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Error {
    /// The exit code of SPEC §7.1.
    pub fn code(&self) -> i32 {
        match self {
            Error::Io { .. }
            | Error::NotAFile { .. }
            | Error::UnsafePath { .. }
            | Error::Git { .. } => exit::IO,
            Error::LockTimeout { .. } => exit::LOCK_TIMEOUT,
            Error::Stale { .. } | Error::StaleCounter { .. } | Error::StaleArtifact { .. } => {
                exit::STALE
            }
            Error::Usage(_) | Error::NoText { .. } => exit::USAGE,
            Error::Invalid { .. } => exit::INVALID,
            Error::Protocol { .. } | Error::NotIndependent { .. } => exit::PROTOCOL,
            Error::Missing { .. } | Error::Exists { .. } => exit::MISSING,
            Error::Format { .. } => exit::FORMAT,
            Error::ArtifactUnavailable { .. } | Error::ArtifactMismatch { .. } => exit::ARTIFACT,
            Error::CannotRun { .. } => exit::CANNOT_RUN,
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
            Error::StaleArtifact { .. } => "stale_artifact",
            Error::Git { .. } => "git",
            Error::Usage(_) | Error::NoText { .. } => "usage",
            Error::Invalid { .. } => "invalid",
            Error::Protocol { .. } => "protocol",
            Error::Missing { .. } => "missing",
            Error::Exists { .. } => "exists",
            Error::Format { .. } => "format",
            Error::ArtifactUnavailable { .. } => "artifact_unavailable",
            Error::ArtifactMismatch { .. } => "artifact_mismatch",
            Error::CannotRun { .. } => "cannot_run",
            Error::NotIndependent { .. } => "not_independent",
        }
    }

    pub fn io(path: &Path, op: &'static str, source: io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    }

    /// The blackboard at `path` (or, with `new_content`, the content about to be written to it)
    /// breaks these rules.
    pub fn invalid(path: &Path, errors: Vec<FieldError>, new_content: bool) -> Error {
        Error::Invalid {
            path: path.to_path_buf(),
            errors,
            new_content,
        }
    }

    pub fn protocol(message: impl Into<String>) -> Error {
        Error::Protocol {
            message: message.into(),
            hint: None,
            suggestion: None,
        }
    }

    /// A protocol refusal with the step that would be accepted.
    pub fn refused(message: impl Into<String>, hint: Hint) -> Error {
        Error::Protocol {
            message: message.into(),
            hint: Some(hint),
            suggestion: None,
        }
    }

    /// The artifact under review is not what the board pins (or what a command read of it
    /// moved while it ran); `hint`: what to run instead, if anything.
    pub fn stale_artifact(message: impl Into<String>, hint: Option<Hint>) -> Error {
        Error::StaleArtifact {
            message: message.into(),
            hint,
            suggestion: None,
        }
    }

    /// The structured hint, if the error carries one.
    pub fn hint(&self) -> Option<&Hint> {
        match self {
            Error::Protocol { hint, .. } | Error::StaleArtifact { hint, .. } => hint.as_ref(),
            _ => None,
        }
    }

    /// Render the hint against the command that failed (`argv` after `pair`) and its board.
    pub fn suggest(mut self, argv: &[String], board: Option<&str>) -> Error {
        if let Error::Protocol {
            hint: Some(h),
            suggestion,
            ..
        }
        | Error::StaleArtifact {
            hint: Some(h),
            suggestion,
            ..
        } = &mut self
        {
            *suggestion = Some(h.argv(argv, board));
        }
        self
    }

    /// The suggested command (argument vector after `pair`), once rendered.
    pub fn suggestion(&self) -> Option<&[String]> {
        match self {
            Error::Protocol { suggestion, .. } | Error::StaleArtifact { suggestion, .. } => {
                suggestion.as_deref()
            }
            _ => None,
        }
    }
}

/// A flag of a suggested command line: `--user-approved`, `--waive REASON`, …
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    pub name: &'static str,
    /// The value, or a placeholder in capitals (`REASON`) the caller must fill in.
    pub value: Option<String>,
}

impl Flag {
    pub fn bare(name: &'static str) -> Flag {
        Flag { name, value: None }
    }
    pub fn with(name: &'static str, value: impl Into<String>) -> Flag {
        Flag {
            name,
            value: Some(value.into()),
        }
    }
}

/// What the caller can run instead, as data. The library never spells a command line: the
/// binary renders a hint against the arguments it was given, so renaming a flag is one change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// The same command again with these flags added (replacing any given with other values).
    Rerun { add: Vec<Flag> },
    /// Another `pair` subcommand, on the same blackboard, with these arguments after the path.
    Run {
        command: &'static str,
        args: Vec<String>,
    },
}

impl Hint {
    /// The argument vector (after `pair`) the hint suggests: `argv` is the command that failed
    /// (after `pair`), `board` the blackboard path as the user wrote it.
    pub fn argv(&self, argv: &[String], board: Option<&str>) -> Vec<String> {
        match self {
            Hint::Rerun { add } => {
                let mut out = Vec::with_capacity(argv.len() + add.len() * 2);
                let mut skip_value = false;
                for a in argv {
                    if skip_value {
                        skip_value = false;
                        continue;
                    }
                    let (name, inline) = a.split_once('=').unwrap_or((a, ""));
                    match add.iter().find(|f| f.name == name) {
                        Some(f) => {
                            skip_value = f.value.is_some() && inline.is_empty() && !a.contains('=')
                        }
                        None => out.push(a.clone()),
                    }
                }
                for f in add {
                    out.push(f.name.to_string());
                    if let Some(v) = &f.value {
                        out.push(v.clone());
                    }
                }
                out
            }
            Hint::Run { command, args } => {
                let mut out = vec![command.to_string()];
                out.extend(board.map(str::to_string));
                out.extend(args.iter().cloned());
                out
            }
        }
    }
}

/// The exit codes of SPEC §7.1, decided here and nowhere else.
pub mod exit {
    /// Done; for `poll`, it is your turn.
    pub const OK: i32 = 0;
    /// I/O or unexpected error.
    pub const IO: i32 = 1;
    /// The lock was not acquired within the timeout.
    pub const LOCK_TIMEOUT: i32 = 2;
    /// The file, or the counter named, changed since the caller read it.
    pub const STALE: i32 = 3;
    /// The call itself is wrong.
    pub const USAGE: i32 = 4;
    /// The blackboard (or the new content) is invalid; also `validate`'s report of one.
    pub const INVALID: i32 = 5;
    /// A transition, gate, role or ownership rule refused the change.
    pub const PROTOCOL: i32 = 6;
    /// The blackboard is missing, or already exists on create.
    pub const MISSING: i32 = 7;
    /// `poll`: not your turn.
    pub const NOT_YOUR_TURN: i32 = 10;
    /// `poll`: the phase is terminal.
    pub const TERMINAL: i32 = 11;
    /// `poll`: the work is BLOCKED until the doer unblocks it (`--wait --through-blocked`
    /// sleeps through it).
    pub const BLOCKED: i32 = 12;
    /// `watch --once`: something was reported (a stall, a missing reviewer, a breach, a dead
    /// writer).
    pub const REPORTED: i32 = 13;
    /// The board is of a newer format than this `pair` knows: a write is refused (upgrade pair).
    pub const FORMAT: i32 = 14;
    /// The artifact under review cannot be read here as it was pinned: unavailable on this
    /// machine, or its published copy is not what was pinned. Not stale: do not retry as is.
    pub const ARTIFACT: i32 = 15;
    /// `check`: the command could not run here (it could not start, or exited 126 or 127): no
    /// result of the code, nothing recorded.
    pub const CANNOT_RUN: i32 = 16;
}
