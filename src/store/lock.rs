//! The sidecar lock of a blackboard file: `<target>.lock`, taken with `flock`, and the owner
//! record `<target>.lock.owner.json` that names the holder in a timeout message.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};

use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::durable::{current_umask, parent_dir, temp_prefix};
use super::*;
use crate::error::{Error, Result};

/// The sidecar lock path of a (resolved) blackboard path.
pub fn lock_path(target: &Path) -> PathBuf {
    suffixed(target, ".lock")
}

/// The sidecar owner-diagnostics path of a (resolved) blackboard path.
pub fn owner_path(target: &Path) -> PathBuf {
    suffixed(target, ".lock.owner.json")
}

pub(super) fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// The exclusive lock on a blackboard, held until dropped.
pub struct Lock {
    _file: File,
    pub path: PathBuf,
    /// Device and inode of the locked file.
    identity: (u64, u64),
    /// How long taking the lock took.
    pub waited: Duration,
    /// Whether a writer before this one may have left temporary files behind (see
    /// [`Lock::mark_busy`]).
    pub(super) after_crash: bool,
    /// Whether this holder marked the lock file busy, to be cleared when it is done.
    marked: std::cell::Cell<bool>,
}

impl Lock {
    /// Whether the locked file is still the one at the lock path. If someone deleted (or
    /// replaced) it, a newcomer can lock the new file while we hold the old one.
    pub fn still_held(&self) -> bool {
        lstat_identity(&self.path) == Some(self.identity)
    }

    /// Mark the lock file busy (one byte written into it) before this holder makes a temporary
    /// file beside the blackboard; [`Lock::mark_done`] empties it again once the write is over,
    /// landed or refused. A writer killed in between leaves the mark, so the next holder knows
    /// it must look for orphaned temporary files ([`Lock::after_crash`]) and every other write
    /// need not list the directory. Not synced: a power loss since the last write is told by the
    /// lock file's modification time, older than the machine's boot.
    pub(super) fn mark_busy(&self) {
        use std::os::unix::fs::FileExt;
        self.marked.set(self._file.write_at(b"w", 0).is_ok());
    }

    /// Empty the lock file this holder marked busy.
    pub(super) fn mark_done(&self) {
        if self.marked.replace(false) {
            let _ = self._file.set_len(0);
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // A write that ended in an error has removed its temporary file (or made none).
        self.mark_done();
    }
}

/// Whether `meta` (the lock file's) was last modified before this machine booted: writes made
/// before a power loss may have left temporary files that no mark recorded.
fn before_boot(meta: &fs::Metadata) -> bool {
    let clock = crate::sys::clock_seconds;
    match (clock(libc::CLOCK_REALTIME), clock(libc::CLOCK_BOOTTIME)) {
        // A minute of slack for the clock's own steps.
        (Some(now), Some(up)) => meta.mtime() < now - up + 60,
        _ => true,
    }
}

pub(super) fn lstat_identity(path: &Path) -> Option<(u64, u64)> {
    fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_file())
        .map(|m| (m.dev(), m.ino()))
}

/// The host name (`uname`, one system call, no file to open).
pub(super) fn this_host() -> String {
    let Ok(name) = crate::sys::hostname() else {
        return String::new();
    };
    String::from_utf8_lossy(&name).trim().to_string()
}

/// Whether a process with this pid exists on this machine. `EPERM` means it exists but
/// belongs to another user.
pub(super) fn pid_alive(pid: i64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // Signal 0 sends nothing; it only checks that the process exists.
    match crate::sys::kill(pid, 0) {
        Ok(()) => true,
        Err(e) => e.raw_os_error() == Some(libc::EPERM),
    }
}

/// The most of the owner file a waiter reads (`pair` writes a few hundred bytes).
pub(super) const OWNER_READ_LIMIT: u64 = 64 * 1024;

/// Describe the lock holder recorded in the owner file, for a lock-timeout message.
///
/// Whatever stands at the owner path, a waiter never blocks on it, follows it or reads it
/// whole: it is opened without following a symlink and without blocking, checked to be a
/// regular file on the opened descriptor, and read only up to a bound.
pub(super) fn read_owner(target: &Path) -> Option<String> {
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
    let read = file.take(OWNER_READ_LIMIT).read_to_string(&mut text);
    // Not a record `pair` wrote whole (it replaces the record by a rename): a hand edit, or
    // another program's. The lock is held all the same, by someone this cannot name.
    let Some(v) = read
        .ok()
        .and_then(|_| serde_json::from_str::<serde_json::Value>(&text).ok())
        .filter(serde_json::Value::is_object)
    else {
        return Some(
            "an unknown process (the owner record cannot be read as one; the holder is unknown)"
                .to_string(),
        );
    };
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
pub(super) fn lock_open_error(path: &Path, e: io::Error) -> Error {
    let unsafe_path = |what: &str| Error::UnsafePath {
        path: path.to_path_buf(),
        why: format!("the lock file is {what}. Remove it (pair recreates the lock file)"),
    };
    match e.raw_os_error() {
        Some(libc::ELOOP) => unsafe_path("a symlink; refusing to follow it"),
        Some(libc::EISDIR) => unsafe_path("a directory"),
        _ => Error::io(path, "open the lock file", e),
    }
}

/// Open the lock file, creating it if missing, never following a symlink or blocking.
///
/// A lock file made by another user (root, say, with its umask) must not lock the board's own
/// users out: `flock` works on a read-only descriptor too, so when read-write access is denied
/// the file is opened read-only. A new lock file gets the board's group and read/write bits
/// (`like`), so that everyone who may write the board may lock it.
///
/// Also says whether the file was opened read-write and already existed: a lock file just made,
/// or one this user cannot mark, tells nothing of the writers before ([`Lock::mark_busy`]).
pub(super) fn open_lock_file(path: &Path, like: Option<&fs::Metadata>) -> Result<(File, bool)> {
    let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    for _ in 0..100 {
        match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(path)
        {
            Ok(f) => return Ok((f, true)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
                return OpenOptions::new()
                    .read(true)
                    .custom_flags(flags)
                    .open(path)
                    .map(|f| (f, false))
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
                return Ok((f, false));
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
pub(super) fn chown_like(file: &File, meta: &fs::Metadata) {
    if std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid())).is_err() {
        let _ = std::os::unix::fs::fchown(file, None, Some(meta.gid()));
    }
}

/// Give a sidecar file (lock, owner record) the board's owner, group and read/write bits.
pub(super) fn share_like(file: &File, meta: &fs::Metadata) {
    chown_like(file, meta);
    let _ = file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o666));
}

/// Take the exclusive lock of a resolved blackboard path.
pub fn lock(target: &Path, timeout: Duration) -> Result<Lock> {
    lock_like(target, timeout, None)
}

/// [`lock`]; a lock file it creates takes the group and mode of `like` (the blackboard).
pub(super) fn lock_like(
    target: &Path,
    timeout: Duration,
    like: Option<&fs::Metadata>,
) -> Result<Lock> {
    let path = lock_path(target);
    let started = Instant::now();
    let deadline = started + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        let (file, markable) = open_lock_file(&path, like)?;
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
            // The size and time are read again now that the lock is ours: the holder before
            // may have marked or cleared the file meanwhile.
            let after_crash = !markable
                || file
                    .metadata()
                    .map_or(true, |m| m.len() > 0 || before_boot(&m));
            return Ok(Lock {
                _file: file,
                path,
                identity,
                waited: started.elapsed(),
                after_crash,
                marked: std::cell::Cell::new(false),
            });
        }
    }
}

/// Record who holds the lock, atomically, never following a symlink at the owner path: the
/// record is written to a temporary file beside it (`.BOARD.lock.owner.json.pair-tmp-*`) and
/// renamed over it, so a waiter finds the whole record of a holder (the previous one or this
/// one), never a mix, whenever this writer is stopped or killed. It is not fsynced: it only
/// names the holder in a timeout message. For the same reason failing to write it (another
/// user's record in a sticky directory, say) does not stop the write; something other than a
/// regular file in its place does. A temporary file left by a writer killed mid-record is an
/// orphan like the board's ([`remove_orphans`]): the lock file is marked busy before it is made.
pub(super) fn write_owner(
    target: &Path,
    opts: &WriteOptions,
    like: Option<&fs::Metadata>,
) -> Result<()> {
    let path = owner_path(target);
    let refuse = |path: PathBuf, kind: &str| Error::UnsafePath {
        path,
        why: format!(
            "the lock owner file is {kind}; refusing to touch it. Remove it (pair recreates it)"
        ),
    };
    if let Ok(meta) = fs::symlink_metadata(&path)
        && !meta.file_type().is_file()
    {
        return Err(refuse(path, kind_of(&meta.file_type())));
    }
    let record = serde_json::json!({
        "pid": std::process::id(),
        "hostname": this_host(),
        "agent": opts.agent,
        "operation": opts.operation,
        "acquired_at": crate::board::frontmatter::Timestamp::now().to_string(),
    });
    let mut text = serde_json::to_string_pretty(&record).unwrap_or_default();
    text.push('\n');
    match replace_owner(&path, text.as_bytes(), like) {
        Ok(()) => Ok(()),
        // Swapped for a directory since the look above (a rename replaces a symlink or a FIFO
        // itself, never what it points to).
        Err(e) if matches!(e.raw_os_error(), Some(libc::EISDIR | libc::ENOTDIR)) => {
            Err(refuse(path, "not a regular file"))
        }
        Err(_) => Ok(()),
    }
}

/// Write `text` to a temporary file beside the owner record and rename it over the record. The
/// new file takes the board's owner, group and read/write bits (`like`), or a new file's mode.
fn replace_owner(path: &Path, text: &[u8], like: Option<&fs::Metadata>) -> io::Result<()> {
    use std::io::Write;
    let mut tmp = tempfile::Builder::new()
        .prefix(&temp_prefix(path))
        .tempfile_in(parent_dir(path))?;
    let mode = match like {
        Some(meta) => {
            chown_like(tmp.as_file(), meta);
            meta.mode() & 0o666
        }
        None => 0o666 & !current_umask(),
    };
    #[cfg(feature = "fault-injection")]
    {
        let half = text.len() / 2;
        tmp.write_all(&text[..half])?;
        fault::hit("owner-write")?;
        tmp.write_all(&text[half..])?;
        fault::hit("owner-written")?;
    }
    #[cfg(not(feature = "fault-injection"))]
    tmp.write_all(text)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))?;
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

/// Remove temporary files that a writer killed mid-write left beside the blackboard. Only called
/// under the lock, when no live writer of this blackboard can own one.
pub(super) fn remove_orphans(target: &Path) {
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
