//! The write to a blackboard file: lock, re-read, check the expectation, build, seal, replace.

use std::ffi::CString;
use std::fs::{self, File};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::durable::{Like, fsync_dir, parent_dir, write_temp};
use super::file::{open_board_meta, read_bounded};
use super::lock::{lock_like, remove_orphans, write_owner};
use super::*;
use crate::error::{Error, Result};
use crate::text::sha256_hex;

/// The blackboard as read under the lock, kept open until the write is over: while it is open
/// its inode cannot be freed, so a file saved over it meanwhile (an editor, `sed -i`) cannot be
/// given the same inode number and pass for it.
pub(super) struct Held {
    file: File,
    /// Taken before the content was read.
    meta: fs::Metadata,
}

use super::snapshot::Stamp;

/// Read the blackboard under the lock. `None` when it does not exist; otherwise the content and
/// the open file.
pub(super) fn read_locked(target: &Path) -> Result<Option<(Current, Held)>> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(target, "stat the blackboard", e)),
        Ok(_) => {}
    }
    let (mut file, meta) = match open_board_meta(target) {
        Ok(f) => f,
        Err(Error::Missing { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    one_link(target, &meta)?;
    let bytes = read_bounded(target, &mut file, meta.len())?;
    Ok(Some((Current::new(bytes, Vec::new()), Held { file, meta })))
}

/// A write replaces the file by a rename: the other names of a hard-linked blackboard would
/// keep the old content, and the copies would drift apart without a word.
fn one_link(target: &Path, meta: &fs::Metadata) -> Result<()> {
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
    Ok(())
}

/// Refuse to replace a blackboard that its writer could not write in place. A rename needs
/// write access to the directory only, so without this check anyone who may create files
/// beside the board could replace it — and take it over. Access is checked with the caller's
/// real ids (`access(2)`, which honours ACLs); root, whom `access` never refuses, is held to the
/// file's write bits.
pub(super) fn check_writable(target: &Path, meta: &fs::Metadata) -> Result<()> {
    let access_ok = |c: &CString| {
        crate::sys::access_writable(c).map_or_else(
            |e| !matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)),
            |()| true,
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

/// Perform one locked, checked, durable write to a blackboard file (see [`super::update`]).
///
/// `first` is the board as the command read it before the lock, with the file it read: when
/// the file under the lock is still that one, unchanged (its [`Stamp`]), the write builds on
/// those bytes; otherwise it reads the board again.
pub(super) fn update<F, B>(
    path: &Path,
    expect: Expect,
    opts: &WriteOptions,
    first: Option<(Current, File, fs::Metadata)>,
    build: F,
) -> Result<Written>
where
    F: FnMut(Option<&Current>) -> Result<B>,
    B: Into<Built>,
{
    let (target, lock) = acquire(path, &expect, opts)?;
    let found = match first {
        Some((current, file, meta)) if Stamp::at(&target) == Some(Stamp::of(&meta)) => {
            one_link(&target, &meta)?;
            Some((current, Held { file, meta }))
        }
        _ => read_locked(&target)?,
    };
    let (current, held) = match found {
        Some((c, h)) => (Some(c), Some(h)),
        None => (None, None),
    };
    check_presence(path, &expect, current.is_some())?;
    if let Some(h) = &held {
        check_writable(&target, &h.meta)?;
    }
    let exists = current.is_some();
    let composed = compose(path, &expect, current, opts, lock.waited, build)?;
    let mut warnings = replace(
        path,
        &target,
        &lock,
        held,
        &composed.bytes,
        exists,
        composed.old_sha256.as_deref(),
    )?;
    warnings.extend(composed.warnings);
    Ok(Written {
        target,
        old_sha256: composed.old_sha256,
        new_sha256: composed.sha256,
        created: matches!(expect, Expect::Absent),
        parsed: composed.parsed,
        warnings,
    })
}

/// Create a blackboard file holding exactly `bytes`, under the lock, never clobbering.
pub(super) fn create_copy(path: &Path, bytes: &[u8], opts: &WriteOptions) -> Result<()> {
    let (target, lock) = acquire(path, &Expect::Absent, opts)?;
    if read_locked(&target)?.is_some() {
        return Err(Error::Exists {
            path: path.to_path_buf(),
        });
    }
    replace(path, &target, &lock, None, bytes, false, None).map(|_| ())
}

/// Resolve the board, refuse a directory or a missing board (leaving nothing behind), take the
/// lock, clear orphans and record the owner.
pub(super) fn acquire(
    path: &Path,
    expect: &Expect,
    opts: &WriteOptions,
) -> Result<(PathBuf, Lock)> {
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
    // Orphans first, when a writer before may have left any: killed (its mark is still on the
    // lock file), before the machine last booted, or unknown (a new or unmarkable lock file).
    if lock.after_crash {
        remove_orphans(&target);
    }
    lock.mark_busy();
    if !matches!(expect, Expect::Absent) && missing(&target) {
        return Err(Error::Missing {
            path: path.to_path_buf(),
        });
    }
    write_owner(&target, opts, board_meta.as_ref())?;
    fault!("locked", &target, "read the blackboard");
    Ok((target, lock))
}

/// Write the new content beside the board, check that nothing moved behind the lock, rename it
/// into place and sync the directory. Returns the warnings of the steps after the rename.
pub(super) fn replace(
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
        file: &h.file,
    });
    let tmp = write_temp(target, new_bytes, like.as_ref())?;
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
        let found = super::file::read(target)
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
            crate::text::escape(&target.display().to_string())
        ));
    }
    let dir = parent_dir(target);
    if let Err(e) = fsync_dir(&dir) {
        warnings.push(format!(
            "{}: the write landed but fsync of the directory failed ({e}); it may not survive a \
             power loss",
            crate::text::escape(&dir.display().to_string())
        ));
    }
    #[cfg(feature = "fault-injection")]
    if let Err(e) = fault::hit("dir-synced") {
        warnings.push(format!(
            "{}: injected fault after the directory fsync ({e})",
            crate::text::escape(&target.display().to_string())
        ));
    }
    Ok(warnings)
}
