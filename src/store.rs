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

use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::model::{FieldError, Parsed};
use crate::validate::{self, MAX_BOARD_BYTES, Valid};
use crate::yaml::MAX_FRONTMATTER_BYTES;

/// The lock wait used when the caller gives none (SPEC §6).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Test-only fault injection (cargo feature `fault-injection`; never in a normal build).
///
/// `PAIR_FAULT=POINT[:ACTION][,POINT[:ACTION]...]` makes the write fail, crash or pause at a
/// step of [`update`], so the tests can check the documented outcome of a failure at each step:
///
/// | point | where |
/// |---|---|
/// | `locked` | the lock is held, the blackboard not yet read |
/// | `temp-write` | half of the new content is in the temporary file |
/// | `temp-fsync` | the temporary file is written, not yet fsynced |
/// | `before-rename` | the temporary file is written and fsynced, not yet renamed |
/// | `after-rename` | the rename happened, the directory is not yet fsynced |
/// | `dir-fsync` | the directory fsync itself |
///
/// Actions: `eio` (the default) or `enospc` fail the step with that OS error; `kill` sends the
/// process SIGKILL (a crash); `sleep=MS` pauses. `PAIR_TRACE_LOCK_WAIT=1` prints how long the
/// lock took to acquire (`pair: trace: lock-wait-us N`) on stderr.
#[cfg(feature = "fault-injection")]
pub mod fault {
    use std::io;
    use std::time::Duration;

    /// Apply the fault configured for `point`, if any.
    pub fn hit(point: &str) -> io::Result<()> {
        let Ok(spec) = std::env::var("PAIR_FAULT") else {
            return Ok(());
        };
        for item in spec.split(',') {
            let (p, action) = item.split_once(':').unwrap_or((item, "eio"));
            if p.trim() != point {
                continue;
            }
            match action.trim() {
                "kill" => {
                    // SAFETY: plain syscalls on our own pid.
                    unsafe {
                        libc::kill(libc::getpid(), libc::SIGKILL);
                    }
                    loop {
                        std::thread::sleep(Duration::from_secs(1));
                    }
                }
                "enospc" => return Err(io::Error::from_raw_os_error(libc::ENOSPC)),
                a => {
                    if let Some(ms) = a.strip_prefix("sleep=").and_then(|m| m.parse().ok()) {
                        std::thread::sleep(Duration::from_millis(ms));
                    } else {
                        return Err(io::Error::from_raw_os_error(libc::EIO));
                    }
                }
            }
        }
        Ok(())
    }

    pub fn trace_lock_wait(waited: Duration) {
        if std::env::var_os("PAIR_TRACE_LOCK_WAIT").is_some() {
            eprintln!("pair: trace: lock-wait-us {}", waited.as_micros());
        }
    }
}

/// Apply the test-only fault configured for a step (nothing at all without the
/// `fault-injection` feature).
macro_rules! fault {
    ($point:expr, $path:expr, $op:expr) => {{
        #[cfg(feature = "fault-injection")]
        fault::hit($point).map_err(|e| Error::io($path, $op, e))?;
    }};
}

/// Lower-case hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The sidecar lock path of a (resolved) blackboard path.
pub fn lock_path(target: &Path) -> PathBuf {
    suffixed(target, ".lock")
}

/// The sidecar owner-diagnostics path of a (resolved) blackboard path.
pub fn owner_path(target: &Path) -> PathBuf {
    suffixed(target, ".lock.owner.json")
}

fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn file_name(target: &Path) -> String {
    target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "blackboard".to_string())
}

fn temp_prefix(target: &Path) -> String {
    format!(".{}.pair-tmp-", file_name(target))
}

fn parent_dir(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Resolve the path a blackboard is really stored at: a symlinked blackboard is written at its
/// target (the link survives) and locked by the target's path.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match fs::canonicalize(path) {
            Ok(target) => Ok(target),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::UnsafePath {
                path: path.to_path_buf(),
                why: "is a symlink whose target does not exist; point it at a blackboard or \
                      remove it"
                    .to_string(),
            }),
            Err(e) => Err(Error::io(path, "resolve the symlink", e)),
        },
        _ => Ok(path.to_path_buf()),
    }
}

/// What a non-regular file is, in words, for refusals.
pub(crate) fn kind_of(ft: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else if ft.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

/// Open a blackboard for reading without ever blocking (a FIFO opened for reading would wait
/// for a writer) and refuse anything that is not a regular file.
fn open_regular(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound
                if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
            {
                Error::UnsafePath {
                    path: path.to_path_buf(),
                    why: "is a symlink whose target does not exist; point it at a blackboard \
                          or remove it"
                        .to_string(),
                }
            }
            io::ErrorKind::NotFound => Error::Missing {
                path: path.to_path_buf(),
            },
            // A socket cannot be opened at all (ENXIO): name what it is, not the errno.
            _ => match fs::metadata(path) {
                Ok(meta) if !meta.file_type().is_file() => Error::NotAFile {
                    path: path.to_path_buf(),
                    kind: kind_of(&meta.file_type()),
                },
                _ => Error::io(path, "open the blackboard", e),
            },
        })?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "stat the blackboard", e))?;
    if !meta.file_type().is_file() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
            kind: kind_of(&meta.file_type()),
        });
    }
    Ok(file)
}

/// [`open_regular`], refusing a file over [`MAX_BOARD_BYTES`]. Checked from the size before a
/// byte is read: reading a huge (or sparse) file whole would exhaust memory long before
/// validation could refuse it.
fn open_board(path: &Path) -> Result<File> {
    let file = open_regular(path)?;
    let size = file
        .metadata()
        .map_err(|e| Error::io(path, "stat the blackboard", e))?
        .len();
    if size > MAX_BOARD_BYTES {
        return Err(too_large(path, size));
    }
    Ok(file)
}

/// The refusal of a blackboard over [`MAX_BOARD_BYTES`].
fn too_large(path: &Path, size: u64) -> Error {
    too_large_content(path, size, false)
}

/// The refusal of a blackboard, or of content about to be written, over [`MAX_BOARD_BYTES`].
fn too_large_content(path: &Path, size: u64, new_content: bool) -> Error {
    let error = FieldError {
        field: "file".to_string(),
        line: None,
        message: validate::too_large_message(size),
    };
    Error::invalid(path, vec![error], new_content)
}

/// Read the rest of an opened blackboard, refusing it if it grew past the limit since it was
/// opened.
fn read_bounded(path: &Path, file: &mut File, size_hint: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(size_hint.min(MAX_BOARD_BYTES) as usize);
    file.take(MAX_BOARD_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, "read the blackboard", e))?;
    if buf.len() as u64 > MAX_BOARD_BYTES {
        return Err(too_large(path, buf.len() as u64));
    }
    Ok(buf)
}

/// Read a whole blackboard.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    let mut file = open_board(path)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    read_bounded(path, &mut file, size)
}

/// Read a blackboard only as far as the end of its frontmatter, so the cost does not grow with
/// the body. Returns the bytes read; they end at a line boundary (or at end of file). The size
/// of the whole file is not checked (this read is bounded anyway), so that a search for
/// blackboards still finds one that is too large, and reports it.
pub fn read_head(path: &Path) -> Result<Vec<u8>> {
    read_head_cut(open_regular(path)?, path).map(|(bytes, _)| bytes)
}

/// [`read_head`] of an opened file, also saying whether the read stopped at its limit before
/// the frontmatter was closed (the frontmatter is then over [`MAX_FRONTMATTER_BYTES`], or not
/// closed at all).
fn read_head_cut(mut file: File, path: &Path) -> Result<(Vec<u8>, bool)> {
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = vec![0u8; 16 * 1024];
    let limit = HEAD_LIMIT;
    let mut scanned_lines = 0usize;
    let mut line_start = 0usize;
    loop {
        let n = file
            .read(&mut chunk)
            .map_err(|e| Error::io(path, "read the blackboard", e))?;
        if n == 0 {
            return Ok((buf, false));
        }
        let old_len = buf.len();
        buf.extend_from_slice(&chunk[..n]);
        // Walk the new complete lines; stop after the closing delimiter line.
        let mut i = old_len;
        while let Some(off) = buf[i..].iter().position(|b| *b == b'\n') {
            let end = i + off + 1;
            let line = &buf[line_start..end];
            let is_first = scanned_lines == 0;
            let text = line
                .strip_prefix(crate::document::BOM.as_bytes())
                .unwrap_or(line);
            let delimiter = crate::document::is_delimiter_line(text);
            scanned_lines += 1;
            line_start = end;
            i = end;
            if delimiter && !is_first {
                buf.truncate(end);
                return Ok((buf, false));
            }
            if is_first && !delimiter {
                // Not a blackboard; the parser will say so.
                buf.truncate(end);
                return Ok((buf, false));
            }
        }
        if buf.len() > limit {
            return Ok((buf, true));
        }
    }
}

/// How far `poll` reads looking for the end of the frontmatter: the largest frontmatter
/// accepted, plus room for the delimiters and a few lines.
const HEAD_LIMIT: usize = MAX_FRONTMATTER_BYTES + 64 * 1024;

/// A blackboard read and validated in full.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub sha256: String,
    pub valid: Valid,
}

/// Read and validate a whole blackboard.
pub fn load(path: &Path) -> Result<Loaded> {
    let bytes = read(path)?;
    let valid = validate::check_bytes(&bytes).map_err(|r| Error::invalid(path, r.errors, false))?;
    Ok(Loaded {
        path: path.to_path_buf(),
        sha256: sha256_hex(&bytes),
        bytes,
        valid,
    })
}

/// Read and validate only the frontmatter.
pub fn load_frontmatter(path: &Path) -> Result<Valid> {
    let (bytes, cut) = read_head_cut(open_board(path)?, path)?;
    validate::check_frontmatter_bytes(&bytes).map_err(|mut r| {
        // The read stopped at its limit with no closing delimiter in sight (the only error the
        // splitter can then find): "not closed" may only mean "closed further on", so say what
        // is certain, in the words `validate` uses for a frontmatter over the limit.
        if cut {
            r.errors = vec![FieldError {
                field: "frontmatter".to_string(),
                line: None,
                message: format!(
                    "no closing `---` within the first {HEAD_LIMIT} bytes: the frontmatter is \
                     over the 1 MiB limit ({MAX_FRONTMATTER_BYTES} bytes), or not closed at all"
                ),
            }];
        }
        Error::invalid(path, r.errors, false)
    })
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

/// The exclusive lock on a blackboard, held until dropped.
pub struct Lock {
    _file: File,
    pub path: PathBuf,
    /// Device and inode of the locked file.
    identity: (u64, u64),
    /// How long taking the lock took.
    pub waited: Duration,
}

impl Lock {
    /// Whether the locked file is still the one at the lock path. If someone deleted (or
    /// replaced) it, a newcomer can lock the new file while we hold the old one.
    pub fn still_held(&self) -> bool {
        lstat_identity(&self.path) == Some(self.identity)
    }
}

fn lstat_identity(path: &Path) -> Option<(u64, u64)> {
    fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_file())
        .map(|m| (m.dev(), m.ino()))
}

fn this_host() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// Whether a process with this pid exists on this machine. `EPERM` means it exists but
/// belongs to another user.
fn pid_alive(pid: i64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The most of the owner file a waiter reads (`pair` writes a few hundred bytes).
const OWNER_READ_LIMIT: u64 = 64 * 1024;

/// Describe the lock holder recorded in the owner file, for a lock-timeout message.
///
/// Whatever stands at the owner path, a waiter never blocks on it, follows it or reads it
/// whole: it is opened without following a symlink and without blocking, checked to be a
/// regular file on the opened descriptor, and read only up to a bound.
fn read_owner(target: &Path) -> Option<String> {
    let path = owner_path(target);
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path)
        .ok()?;
    if !file.metadata().ok()?.file_type().is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(OWNER_READ_LIMIT).read_to_string(&mut text).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let pid = v.get("pid").and_then(|p| p.as_i64());
    let host = v.get("hostname").and_then(|h| h.as_str()).unwrap_or("?");
    let record = format!(
        "pid {} on {host}, agent {}, operation {}, since {}",
        pid.map(|p| p.to_string())
            .unwrap_or_else(|| "?".to_string()),
        v.get("agent").and_then(|h| h.as_str()).unwrap_or("-"),
        v.get("operation").and_then(|h| h.as_str()).unwrap_or("?"),
        v.get("acquired_at").and_then(|h| h.as_str()).unwrap_or("?"),
    );
    // The owner file is replaced by each writer, never removed: it can name a writer long gone
    // while the lock is held by something that did not record itself (a program that is not
    // `pair`, or a writer killed before it recorded itself).
    if let Some(pid) = pid
        && host == this_host()
        && !pid_alive(pid)
    {
        return Some(format!(
            "an unknown process; the owner file still names {record}, which is no longer running"
        ));
    }
    Some(record)
}

/// The error of opening the lock file.
fn lock_open_error(path: &Path, e: io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        Error::UnsafePath {
            path: path.to_path_buf(),
            why: "the lock file is a symlink; refusing to follow it. Remove the symlink (pair \
                  recreates the lock file)"
                .to_string(),
        }
    } else {
        Error::io(path, "open the lock file", e)
    }
}

/// Open the lock file, creating it if missing, never following a symlink or blocking.
///
/// A lock file made by another user (root, say, with its umask) must not lock the board's own
/// users out: `flock` works on a read-only descriptor too, so when read-write access is denied
/// the file is opened read-only. A new lock file gets the board's group and read/write bits
/// (`like`), so that everyone who may write the board may lock it.
fn open_lock_file(path: &Path, like: Option<&fs::Metadata>) -> Result<File> {
    let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    for _ in 0..100 {
        match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(path)
        {
            Ok(f) => return Ok(f),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
                return OpenOptions::new()
                    .read(true)
                    .custom_flags(flags)
                    .open(path)
                    .map_err(|_| lock_open_error(path, e));
            }
            Err(e) => return Err(lock_open_error(path, e)),
        }
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(flags)
            .open(path)
        {
            Ok(f) => {
                if let Some(meta) = like {
                    share_like(&f, meta);
                }
                return Ok(f);
            }
            // Someone else created it meanwhile: open theirs.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(lock_open_error(path, e)),
        }
    }
    Err(lock_open_error(
        path,
        io::Error::other("it keeps being created and removed"),
    ))
}

/// Give a file the board's owner where the writer may set it (root), else at least its group
/// where the writer belongs to it. `fchown` changes both or neither, so the group is tried
/// alone when both fail.
fn chown_like(file: &File, meta: &fs::Metadata) {
    if std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid())).is_err() {
        let _ = std::os::unix::fs::fchown(file, None, Some(meta.gid()));
    }
}

/// Give a sidecar file (lock, owner record) the board's owner, group and read/write bits.
fn share_like(file: &File, meta: &fs::Metadata) {
    chown_like(file, meta);
    let _ = file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o666));
}

/// Take the exclusive lock of a resolved blackboard path.
pub fn lock(target: &Path, timeout: Duration) -> Result<Lock> {
    lock_like(target, timeout, None)
}

/// [`lock`]; a lock file it creates takes the group and mode of `like` (the blackboard).
fn lock_like(target: &Path, timeout: Duration, like: Option<&fs::Metadata>) -> Result<Lock> {
    let path = lock_path(target);
    let started = Instant::now();
    let deadline = started + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        let file = open_lock_file(&path, like)?;
        let meta = file
            .metadata()
            .map_err(|e| Error::io(&path, "stat the lock file", e))?;
        if !meta.file_type().is_file() {
            return Err(Error::UnsafePath {
                path: path.clone(),
                why: format!(
                    "the lock file is {}, not a regular file; remove it",
                    kind_of(&meta.file_type())
                ),
            });
        }
        let locked = loop {
            match file.try_lock() {
                Ok(()) => break true,
                Err(fs::TryLockError::WouldBlock) => {
                    let now = Instant::now();
                    if now >= deadline {
                        break false;
                    }
                    std::thread::sleep(pause.min(deadline - now));
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(fs::TryLockError::Error(e)) => {
                    return Err(Error::io(&path, "lock the lock file", e));
                }
            }
        };
        if !locked {
            return Err(Error::LockTimeout {
                lock: path.clone(),
                timeout,
                holder: read_owner(target),
            });
        }
        // Someone may have deleted (and recreated) the lock file while we waited: then our lock
        // guards nothing. Retry on the file now at the path.
        let identity = (meta.dev(), meta.ino());
        if lstat_identity(&path) == Some(identity) {
            #[cfg(feature = "fault-injection")]
            fault::trace_lock_wait(started.elapsed());
            return Ok(Lock {
                _file: file,
                path,
                identity,
                waited: started.elapsed(),
            });
        }
    }
}

/// The file a new one takes its permissions from.
struct Like<'a> {
    meta: &'a fs::Metadata,
    /// For the blackboard itself, the open file read under the lock: its extended attributes
    /// (the POSIX ACL among them) are copied and its set-id and sticky bits kept. Without it
    /// (a sidecar file), only the owner, the group and the read/write bits are taken.
    file: Option<&'a File>,
}

/// The extended attribute that holds a file's POSIX access ACL.
const ACL_ACCESS: &[u8] = b"system.posix_acl_access";

/// Call a size-query-then-fill xattr function (`flistxattr`, `fgetxattr`), retrying when the
/// value grew in between. `Ok(None)` for `ENODATA` (no such attribute).
fn xattr_buf(
    mut call: impl FnMut(*mut libc::c_void, usize) -> isize,
) -> io::Result<Option<Vec<u8>>> {
    loop {
        let size = call(std::ptr::null_mut(), 0);
        if size < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENODATA) => Ok(None),
                _ => Err(e),
            };
        }
        let mut buf = vec![0u8; size as usize];
        if buf.is_empty() {
            return Ok(Some(buf));
        }
        let n = call(buf.as_mut_ptr().cast(), buf.len());
        if n < 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ERANGE) => continue,
                Some(libc::ENODATA) => return Ok(None),
                _ => return Err(e),
            }
        }
        buf.truncate(n as usize);
        return Ok(Some(buf));
    }
}

/// Copy every extended attribute of `src` to `dst`: user attributes, the POSIX ACL
/// (`system.posix_acl_access`) and whatever else the writer may set. `security.*` and
/// `trusted.*` attributes need privileges the writer may lack; those it cannot set are left to
/// what the new file got at creation. Any other failure is an error.
fn copy_xattrs(src: &File, dst: &File) -> io::Result<()> {
    let (sfd, dfd) = (src.as_raw_fd(), dst.as_raw_fd());
    // SAFETY: the buffer pointer and length come from `xattr_buf`, which owns the buffer.
    let list = xattr_buf(|buf, len| unsafe { libc::flistxattr(sfd, buf.cast(), len) });
    let list = match list {
        Ok(l) => l.unwrap_or_default(),
        // No extended attributes on this filesystem: nothing to keep.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTSUP | libc::ENOSYS)) => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut has_acl = false;
    for name in list.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        has_acl |= name == ACL_ACCESS;
        let Ok(cname) = CString::new(name) else {
            continue;
        };
        // SAFETY: as above; `cname` is a NUL-terminated string we own.
        let value =
            xattr_buf(|buf, len| unsafe { libc::fgetxattr(sfd, cname.as_ptr(), buf, len) })?;
        let Some(value) = value else {
            continue;
        };
        // SAFETY: a plain syscall on buffers we own.
        let rc =
            unsafe { libc::fsetxattr(dfd, cname.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if name.starts_with(b"security.") || name.starts_with(b"trusted.") {
                continue;
            }
            return Err(io::Error::new(
                e.kind(),
                format!("{}: {e}", String::from_utf8_lossy(name)),
            ));
        }
    }
    if !has_acl {
        // An ACL the new file inherited from the directory's default ACL is not the board's.
        // SAFETY: a plain syscall on a C string literal.
        unsafe { libc::fremovexattr(dfd, c"system.posix_acl_access".as_ptr()) };
    }
    Ok(())
}

/// Give a new file the owner and group of `like` as far as the writer may set them, and its
/// extended attributes; return the mode to set once the content is written. The mode comes last
/// because `chown`, and a write by an unprivileged user, clear the set-user-id bit (and the
/// set-group-id bit of a group-executable file). Each set-id bit is kept only while the file
/// keeps the owner or the group it refers to.
fn take_like(file: &File, target: &Path, tpath: &Path, like: &Like<'_>) -> Result<u32> {
    let meta = like.meta;
    chown_like(file, meta);
    let mut mode = meta.mode() & 0o7777;
    match like.file {
        Some(src) => copy_xattrs(src, file)
            .map_err(|e| Error::io(target, "keep the extended attributes (ACL, labels) of", e))?,
        None => mode &= 0o666,
    }
    let now = file.metadata().map_err(|e| Error::io(tpath, "stat", e))?;
    if now.uid() != meta.uid() {
        mode &= !0o4000;
    }
    if now.gid() != meta.gid() {
        mode &= !0o2000;
    }
    Ok(mode)
}

/// Create a temporary file beside `target` with the owner, group and extended attributes of
/// `like`, write `bytes`, give it the mode of `like` (a new file's when there is none), and
/// fsync it. `board`: this is the blackboard's temporary file, where the test-only faults apply.
fn write_temp(
    target: &Path,
    bytes: &[u8],
    like: Option<&Like<'_>>,
    board: bool,
) -> Result<tempfile::NamedTempFile> {
    let dir = parent_dir(target);
    let mut tmp = tempfile::Builder::new()
        .prefix(&temp_prefix(target))
        .tempfile_in(&dir)
        .map_err(|e| Error::io(&dir, "create a temporary file in", e))?;
    let tpath = tmp.path().to_path_buf();
    let mode = match like {
        Some(like) => take_like(tmp.as_file(), target, &tpath, like)?,
        None => 0o666 & !current_umask(),
    };
    let set_mode = |tmp: &tempfile::NamedTempFile| {
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io(&tpath, "set permissions of", e))
    };
    #[cfg(feature = "fault-injection")]
    if board {
        let half = bytes.len() / 2;
        tmp.write_all(&bytes[..half])
            .map_err(|e| Error::io(&tpath, "write", e))?;
        fault!("temp-write", &tpath, "write");
        tmp.write_all(&bytes[half..])
            .map_err(|e| Error::io(&tpath, "write", e))?;
        set_mode(&tmp)?;
        fault!("temp-fsync", &tpath, "fsync");
        tmp.as_file()
            .sync_all()
            .map_err(|e| Error::io(&tpath, "fsync", e))?;
        return Ok(tmp);
    }
    tmp.write_all(bytes)
        .map_err(|e| Error::io(&tpath, "write", e))?;
    set_mode(&tmp)?;
    // The owner file only names the lock holder for a timeout message: it needs an atomic
    // rename, not durability, and an fsync under the lock would double every write's cost.
    if board {
        tmp.as_file()
            .sync_all()
            .map_err(|e| Error::io(&tpath, "fsync", e))?;
    }
    Ok(tmp)
}

fn fsync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(feature = "fault-injection")]
    fault::hit("dir-fsync")?;
    File::open(dir)?.sync_all()
}

/// Record who holds the lock, atomically, never following a symlink at the owner path. The
/// record only names the holder in a timeout message, so failing to write it (another user's
/// record in a sticky directory, say) does not stop the write; something other than a regular
/// file in its place does.
fn write_owner(target: &Path, opts: &WriteOptions, like: Option<&fs::Metadata>) -> Result<()> {
    let path = owner_path(target);
    if let Ok(meta) = fs::symlink_metadata(&path)
        && !meta.file_type().is_file()
    {
        return Err(Error::UnsafePath {
            path,
            why: format!(
                "the lock owner file is {}; refusing to touch it. Remove it (pair recreates it)",
                kind_of(&meta.file_type())
            ),
        });
    }
    let record = serde_json::json!({
        "pid": std::process::id(),
        "hostname": this_host(),
        "agent": opts.agent,
        "operation": opts.operation,
        "acquired_at": crate::model::Timestamp::now().to_string(),
    });
    let mut text = serde_json::to_string_pretty(&record).unwrap_or_default();
    text.push('\n');
    let like = like.map(|meta| Like { meta, file: None });
    if let Ok(tmp) = write_temp(&path, text.as_bytes(), like.as_ref(), false) {
        let _ = tmp.persist(&path);
    }
    Ok(())
}

/// Remove temporary files that a writer killed mid-write left beside the blackboard. Only called
/// under the lock, when no live writer of this blackboard can own one.
fn remove_orphans(target: &Path) {
    let dir = parent_dir(target);
    let prefix = temp_prefix(target);
    let owner_prefix = temp_prefix(&owner_path(target));
    let Ok(entries) = fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if (name.starts_with(&prefix) || name.starts_with(&owner_prefix))
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The blackboard as read under the lock, kept open until the write is over: while it is open
/// its inode cannot be freed, so a file saved over it meanwhile (an editor, `sed -i`) cannot be
/// given the same inode number and pass for it.
struct Held {
    file: File,
    /// Taken before the content was read.
    meta: fs::Metadata,
}

/// One version of one file: which file it is (device, inode) and its size and last
/// modification and change times, to the nanosecond. An edit in place changes the times; a
/// file saved over the board is another inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// The stamp of what is at `path` now (not following a symlink).
    fn at(path: &Path) -> Option<Stamp> {
        fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.file_type().is_file())
            .map(|m| Stamp::of(&m))
    }
}

/// Read the blackboard under the lock. `None` when it does not exist; otherwise the content and
/// the open file.
fn read_locked(target: &Path) -> Result<Option<(Current, Held)>> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(target, "stat the blackboard", e)),
        Ok(_) => {}
    }
    let mut file = match open_board(target) {
        Ok(f) => f,
        Err(Error::Missing { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file
        .metadata()
        .map_err(|e| Error::io(target, "stat the blackboard", e))?;
    // A write replaces the file by a rename: the other names of a hard-linked blackboard would
    // keep the old content, and the copies would drift apart without a word.
    if meta.nlink() > 1 {
        return Err(Error::UnsafePath {
            path: target.to_path_buf(),
            why: format!(
                "has {} hard links; a write replaces the file, so the other names would keep \
                 the old content and drift apart. Keep one name (make the others symlinks to \
                 it) and retry; nothing was written",
                meta.nlink()
            ),
        });
    }
    let bytes = read_bounded(target, &mut file, meta.len())?;
    Ok(Some((Current { bytes }, Held { file, meta })))
}

/// Refuse to replace a blackboard that its writer could not write in place. A rename needs
/// write access to the directory only, so without this check anyone who may create files
/// beside the board could replace it — and take it over. Access is checked with the caller's
/// real ids (`access(2)`, which honours ACLs); root, whom `access` never refuses, is held to the
/// file's write bits.
fn check_writable(target: &Path, meta: &fs::Metadata) -> Result<()> {
    let access_ok = |c: &CString| {
        // SAFETY: a plain syscall on a C string we own.
        let rc = unsafe { libc::access(c.as_ptr(), libc::W_OK) };
        rc == 0
            || !matches!(
                io::Error::last_os_error().raw_os_error(),
                Some(libc::EACCES | libc::EPERM)
            )
    };
    let may_write = meta.mode() & 0o222 != 0
        && CString::new(target.as_os_str().as_bytes())
            .as_ref()
            .map_or(true, access_ok);
    if may_write {
        return Ok(());
    }
    Err(Error::io(
        target,
        "replace the blackboard (it is read-only for this user; `chmod u+w` it, or give this \
         user write access, to allow writes)",
        io::Error::from(io::ErrorKind::PermissionDenied),
    ))
}

/// Perform one locked, checked, durable write. `build` gets the current content (`None` when
/// creating) and returns the complete new file; it may refuse with any error, which leaves the
/// file untouched.
///
/// The old content's SHA-256 is computed on a second thread while the main one parses and
/// builds. The new content is hashed once, by the journal's seal, which needs the hash of
/// everything before the write's record for the record itself and finishes the same hasher
/// with the record for the file's SHA-256.
pub fn update<F, B>(path: &Path, expect: Expect, opts: &WriteOptions, build: F) -> Result<Written>
where
    F: FnOnce(Option<&Current>) -> Result<B>,
    B: Into<Built>,
{
    let (target, lock) = acquire(path, &expect, opts)?;
    let (current, held) = match read_locked(&target)? {
        Some((c, h)) => (Some(c), Some(h)),
        None => (None, None),
    };
    match (&expect, &current) {
        (Expect::Absent, Some(_)) => {
            return Err(Error::Exists {
                path: path.to_path_buf(),
            });
        }
        (Expect::Sha256(_) | Expect::Present, None) => {
            return Err(Error::Missing {
                path: path.to_path_buf(),
            });
        }
        _ => {}
    }
    if let Some(h) = &held {
        check_writable(&target, &h.meta)?;
    }
    let (old_sha256, built) = std::thread::scope(|s| -> Result<(Option<String>, Built)> {
        let mut old_hash = current.as_ref().map(|c| s.spawn(|| sha256_hex(&c.bytes)));
        let mut join = || {
            old_hash.take().map(|h| {
                h.join().unwrap_or_else(|_| {
                    current
                        .as_ref()
                        .map_or_else(String::new, |c| sha256_hex(&c.bytes))
                })
            })
        };
        // A compare-and-swap needs the hash before anything is built; otherwise it is computed
        // while the new content is built.
        let mut old_sha256 = None;
        if let Expect::Sha256(want) = &expect {
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
        let built = build(current.as_ref())?.into();
        if old_sha256.is_none() {
            old_sha256 = join();
        }
        Ok((old_sha256, built))
    })?;
    // The phase and counters before the write, for its journal record.
    let old_fm = current
        .as_ref()
        .and_then(|c| validate::check_frontmatter_bytes(&c.bytes).ok())
        .map(|v| v.parsed.fm);
    // Keep only the old hash from here on: holding the old bytes through validation and the
    // write would put a third copy of a large blackboard in memory.
    let exists = current.is_some();
    drop(current);
    let Built {
        bytes: new_bytes,
        parsed,
    } = built;
    let parsed = check_new(path, &new_bytes, parsed)?;
    let sealed = seal(
        path,
        new_bytes,
        opts,
        &lock,
        old_fm.as_ref(),
        old_sha256.as_deref(),
        &parsed,
    )?;
    // The journal's seal hashed the new content as it added the record.
    let (new_bytes, new_sha256) = (sealed.bytes, sealed.sha256);
    let warnings = replace(
        path,
        &target,
        &lock,
        held,
        &new_bytes,
        exists,
        old_sha256.as_deref(),
    )?;
    Ok(Written {
        target,
        old_sha256,
        new_sha256,
        created: matches!(expect, Expect::Absent),
        parsed,
        warnings,
    })
}

/// Resolve the board, refuse a directory or a missing board (leaving nothing behind), take the
/// lock, clear orphans and record the owner.
fn acquire(path: &Path, expect: &Expect, opts: &WriteOptions) -> Result<(PathBuf, Lock)> {
    let target = resolve(path)?;
    // A directory is never a blackboard: refuse before a lock file is made beside it.
    if path.as_os_str().to_string_lossy().ends_with('/')
        || fs::metadata(&target).is_ok_and(|m| m.is_dir())
    {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
            kind: "a directory",
        });
    }
    let missing =
        |p: &Path| fs::symlink_metadata(p).is_err_and(|e| e.kind() == io::ErrorKind::NotFound);
    // A write that needs the board and finds none leaves nothing behind. Where a lock file
    // exists, it goes on under the lock all the same: a killed creation may have left a
    // temporary file, which the lock makes safe to remove.
    let lstat = fs::symlink_metadata(&target);
    if !matches!(expect, Expect::Absent) && missing(&target) && missing(&lock_path(&target)) {
        return Err(Error::Missing {
            path: path.to_path_buf(),
        });
    }
    // New sidecar files take the board's owner, group and mode.
    let board_meta = lstat.ok().filter(|m| m.file_type().is_file());
    let lock = lock_like(&target, opts.timeout, board_meta.as_ref())?;
    // Orphans first: a writer killed while recording itself as owner leaves at most one behind.
    remove_orphans(&target);
    if !matches!(expect, Expect::Absent) && missing(&target) {
        return Err(Error::Missing {
            path: path.to_path_buf(),
        });
    }
    write_owner(&target, opts, board_meta.as_ref())?;
    fault!("locked", &target, "read the blackboard");
    Ok((target, lock))
}

/// Append the write's journal record ([`crate::journal::seal`]) to checked new content; the
/// frontmatter is not touched, so its check stands, but the size is checked again.
fn seal(
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
fn check_new(path: &Path, bytes: &[u8], parsed: Option<Parsed>) -> Result<Parsed> {
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

/// Write the new content beside the board, check that nothing moved behind the lock, rename it
/// into place and sync the directory. Returns the warnings of the steps after the rename.
fn replace(
    path: &Path,
    target: &Path,
    lock: &Lock,
    held: Option<Held>,
    new_bytes: &[u8],
    exists: bool,
    old_sha256: Option<&str>,
) -> Result<Vec<String>> {
    let like = held.as_ref().map(|h| Like {
        meta: &h.meta,
        file: Some(&h.file),
    });
    let tmp = write_temp(target, new_bytes, like.as_ref(), true)?;
    fault!("before-rename", target, "rename the new content over");
    // The last moment to back out. Our lock only excludes other writers while the lock file we
    // hold is still the one at its path, and the file we read is still the blackboard: if
    // someone deleted the lock file, a newcomer may have taken a lock on a fresh one and
    // replaced the blackboard meanwhile. Renaming now would silently undo its write.
    if !lock.still_held() {
        return Err(Error::UnsafePath {
            path: lock.path.clone(),
            why: "the lock file was deleted or replaced while this write held it, so another \
                  writer may be running; nothing was written. Do not delete lock files; \
                  re-read the blackboard and retry"
                .to_string(),
        });
    }
    // A program that ignores the lock (an editor, `sed -i`) may have saved over the board or
    // edited it in place since it was read.
    if let Some(h) = &held
        && Stamp::at(target) != Some(Stamp::of(&h.meta))
    {
        let found = read(target)
            .map(|b| sha256_hex(&b))
            .unwrap_or_else(|_| "unreadable or missing".to_string());
        return Err(Error::Stale {
            path: path.to_path_buf(),
            expected: old_sha256.unwrap_or_default().to_string(),
            found,
        });
    }
    if exists {
        tmp.persist(target)
            .map_err(|e| Error::io(target, "rename the new content over", e.error))?;
    } else {
        tmp.persist_noclobber(target).map_err(|e| {
            if e.error.kind() == io::ErrorKind::AlreadyExists {
                Error::Exists {
                    path: path.to_path_buf(),
                }
            } else {
                Error::io(target, "create", e.error)
            }
        })?;
    }
    // The old file may be closed (and its inode freed) only now that it is replaced.
    drop(held);
    // The rename happened: from here on the write has succeeded.
    let mut warnings = Vec::new();
    #[cfg(feature = "fault-injection")]
    if let Err(e) = fault::hit("after-rename") {
        warnings.push(format!(
            "{}: injected fault after the rename ({e})",
            target.display()
        ));
    }
    let dir = parent_dir(target);
    if let Err(e) = fsync_dir(&dir) {
        warnings.push(format!(
            "{}: the write landed but fsync of the directory failed ({e}); it may not survive a \
             power loss",
            dir.display()
        ));
    }
    Ok(warnings)
}

fn current_umask() -> u32 {
    // /proc/self/status carries the umask without changing it (libc::umask would set it).
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file with `user.label` on the real disk, or `None` where user attributes are missing.
    fn labelled() -> Option<(tempfile::TempDir, File)> {
        let dir = tempfile::tempdir_in("/var/tmp")
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        let path = dir.path().join("src.md");
        fs::write(&path, "x").unwrap();
        let file = File::open(&path).unwrap();
        // SAFETY: plain syscall on buffers we own.
        let rc = unsafe {
            libc::fsetxattr(
                file.as_raw_fd(),
                c"user.label".as_ptr(),
                b"blue".as_ptr().cast(),
                4,
                0,
            )
        };
        if rc != 0 {
            eprintln!(
                "skipped: no user extended attributes here: {}",
                io::Error::last_os_error()
            );
            return None;
        }
        Some((dir, file))
    }

    #[test]
    fn an_attribute_that_cannot_be_copied_is_an_error_not_a_silent_loss() {
        // A process test cannot make this fail: the new file is made beside the board, on the
        // same filesystem. /proc takes no extended attributes.
        let Some((_dir, src)) = labelled() else {
            return;
        };
        let dst = File::open("/proc/self/status").unwrap();
        let err = copy_xattrs(&src, &dst).unwrap_err();
        assert!(err.to_string().contains("user.label"), "{err}");
    }

    #[test]
    fn attributes_are_copied_between_files() {
        let Some((dir, src)) = labelled() else {
            return;
        };
        let dst_path = dir.path().join("dst.md");
        fs::write(&dst_path, "y").unwrap();
        let dst = File::open(&dst_path).unwrap();
        copy_xattrs(&src, &dst).unwrap();
        let fd = dst.as_raw_fd();
        // SAFETY: as in copy_xattrs.
        let value =
            xattr_buf(|buf, len| unsafe { libc::fgetxattr(fd, c"user.label".as_ptr(), buf, len) })
                .unwrap();
        assert_eq!(value.as_deref(), Some(&b"blue"[..]));
    }
}
