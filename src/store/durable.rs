//! The durable replace of a file: a temporary file beside it with its owner, group, mode and
//! extended attributes, fsynced, renamed over it, and the directory fsynced.

use std::ffi::CString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::lock::chown_like;
use crate::error::{Error, Result};

pub(super) fn file_name(target: &Path) -> String {
    target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "blackboard".to_string())
}

pub(super) fn temp_prefix(target: &Path) -> String {
    format!(".{}.pair-tmp-", file_name(target))
}

pub(super) fn parent_dir(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The blackboard a new version takes its permissions from: its metadata, and the open file read
/// under the lock, whose extended attributes (the POSIX ACL among them) are copied and whose
/// set-id and sticky bits are kept.
pub(super) struct Like<'a> {
    pub(super) meta: &'a fs::Metadata,
    pub(super) file: &'a File,
}

/// The extended attribute that holds a file's POSIX access ACL.
pub(super) const ACL_ACCESS: &[u8] = b"system.posix_acl_access";

/// Copy every extended attribute of `src` to `dst`: user attributes, the POSIX ACL
/// (`system.posix_acl_access`) and whatever else the writer may set. `security.*` and
/// `trusted.*` attributes need privileges the writer may lack; those it cannot set are left to
/// what the new file got at creation. Any other failure is an error.
pub(super) fn copy_xattrs(src: &File, dst: &File) -> io::Result<()> {
    let (sfd, dfd) = (src.as_fd(), dst.as_fd());
    let list = crate::sys::list_xattrs(sfd);
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
        let value = crate::sys::get_xattr(sfd, &cname)?;
        let Some(value) = value else {
            continue;
        };
        if let Err(e) = crate::sys::set_xattr(dfd, &cname, &value) {
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
        let _ = crate::sys::remove_xattr(dfd, c"system.posix_acl_access");
    }
    Ok(())
}

/// Give a new file the owner and group of `like` as far as the writer may set them, and its
/// extended attributes; return the mode to set once the content is written. The mode comes last
/// because `chown`, and a write by an unprivileged user, clear the set-user-id bit (and the
/// set-group-id bit of a group-executable file). Each set-id bit is kept only while the file
/// keeps the owner or the group it refers to.
pub(super) fn take_like(file: &File, target: &Path, tpath: &Path, like: &Like<'_>) -> Result<u32> {
    let meta = like.meta;
    chown_like(file, meta);
    let mut mode = meta.mode() & 0o7777;
    copy_xattrs(like.file, file)
        .map_err(|e| Error::io(target, "keep the extended attributes (ACL, labels) of", e))?;
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
/// fsync it. The test-only faults of the blackboard's temporary file apply here.
pub(super) fn write_temp(
    target: &Path,
    bytes: &[u8],
    like: Option<&Like<'_>>,
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
    #[cfg(feature = "fault-injection")]
    {
        let half = bytes.len() / 2;
        tmp.write_all(&bytes[..half])
            .map_err(|e| Error::io(&tpath, "write", e))?;
        fault!("temp-write", &tpath, "write");
        tmp.write_all(&bytes[half..])
            .map_err(|e| Error::io(&tpath, "write", e))?;
    }
    #[cfg(not(feature = "fault-injection"))]
    tmp.write_all(bytes)
        .map_err(|e| Error::io(&tpath, "write", e))?;
    tmp.flush().map_err(|e| Error::io(&tpath, "write", e))?;
    fault!("temp-written", &tpath, "set permissions of");
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(&tpath, "set permissions of", e))?;
    fault!("temp-fsync", &tpath, "fsync");
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io(&tpath, "fsync", e))?;
    Ok(tmp)
}

pub(super) fn fsync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(feature = "fault-injection")]
    super::fault::hit("dir-fsync")?;
    File::open(dir)?.sync_all()
}

pub(super) fn current_umask() -> u32 {
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
        if let Err(e) = crate::sys::set_xattr(file.as_fd(), c"user.label", b"blue") {
            eprintln!("skipped: no user extended attributes here: {e}");
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
        let value = crate::sys::get_xattr(dst.as_fd(), c"user.label").unwrap();
        assert_eq!(value.as_deref(), Some(&b"blue"[..]));
    }
}
