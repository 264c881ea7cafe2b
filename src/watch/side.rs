//! The side directory of a board (`.<board file name>.pair`, beside it), where `poll` keeps
//! presence records and `watch` its lock and nudge memory, held to the rules the lock files
//! follow ([`crate::store::lock`]), since it may stand in a directory other users can write
//! (a sticky `/tmp`, a team directory):
//!
//! * **no following**: every directory and file in it is opened relative to its parent's open
//!   descriptor with `O_NOFOLLOW`, so a symlink planted at any step (the side directory,
//!   `presence`, a record, the lock, the memory) is refused, never followed, and a file is
//!   created with `O_EXCL` and renamed into place within the same directory;
//! * **no blocking**: files are opened with `O_NONBLOCK` and must be regular files on the
//!   opened descriptor, so a FIFO or a device is refused without waiting or reading;
//! * **owner and mode checked**: a directory is used only if nobody could have made or filled
//!   it who could not write the board itself ([`trusted`]);
//! * **bounded reads**: every file is read up to a limit.
//!
//! A directory it creates takes the board's owner (when root makes it), group and the bits
//! the board gives each class (read and search where the board is readable, write where it is
//! writable and the group is the board's), and a file the board's group and read/write bits,
//! so everyone who may write the board may keep presence beside it.

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Whose a side directory may be, and which bits new files get: the board's owner, group and
/// mode (for a git board, whose side directory is in the caller's own cache: the caller's).
#[derive(Debug, Clone, Copy)]
struct Like {
    uid: u32,
    gid: u32,
    mode: u32,
}

/// An open directory beside a board (the side directory or one in it).
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
    like: Like,
}

fn c_name(name: &str) -> io::Result<CString> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a file name"),
        ));
    }
    CString::new(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// `openat(2)` relative to `dir`, never following a symlink and never blocking.
fn open_at(dir: &OwnedFd, name: &CStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let flags = flags | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    loop {
        match crate::sys::open_at(dir.as_fd(), name, flags, mode) {
            Ok(fd) => return Ok(fd),
            Err(e) if e.kind() != io::ErrorKind::Interrupted => return Err(e),
            Err(_) => {}
        }
    }
}

fn fstat(fd: &OwnedFd) -> io::Result<std::fs::Metadata> {
    File::from(fd.try_clone()?).metadata()
}

/// What a symlink in a directory's or a file's place is told as.
fn refused(path: &Path, e: io::Error, what: &str) -> io::Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symlink; refusing to follow it: remove it (pair makes the {what} again)",
                crate::text::escape(&path.display().to_string())
            ),
        )
    } else {
        e
    }
}

fn not_a(path: &Path, meta: &std::fs::Metadata, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {}, not a {what}; refusing to use it: remove it",
            crate::text::escape(&path.display().to_string()),
            crate::store::kind_of(&meta.file_type())
        ),
    )
}

/// Whether a directory beside a board may be believed and written: nobody could have made it
/// or put anything in it who could not write the board itself. It is the caller's, root's or
/// the board owner's, or it has the board's group and the board is group-writable; its group
/// may write it only when that group is the board's; others only when others may write the
/// board. The reason it may not, in words.
fn trusted(meta: &std::fs::Metadata, like: &Like) -> Result<(), String> {
    let (uid, gid, mode) = (meta.uid(), meta.gid(), meta.mode());
    let group_may_write_board = gid == like.gid && like.mode & 0o020 != 0;
    let anyone_may_write_board = like.mode & 0o002 != 0;
    let owner_ok = uid == crate::sys::euid()
        || uid == 0
        || uid == like.uid
        || group_may_write_board
        || anyone_may_write_board;
    if !owner_ok {
        return Err(format!(
            "it is owned by uid {uid}, who may not write the blackboard"
        ));
    }
    if mode & 0o002 != 0 && !anyone_may_write_board {
        return Err("anyone may write it, though not the blackboard".into());
    }
    if mode & 0o020 != 0 && gid != like.gid && !anyone_may_write_board {
        return Err(format!(
            "its group (gid {gid}) may write it, though that is not the blackboard's group"
        ));
    }
    Ok(())
}

/// The mode a new directory beside the board gets: read and search for each class that may
/// read the board, write for each that may write it (the group's only with the board's group).
fn dir_mode(like: &Like, group_is_boards: bool) -> u32 {
    let mut mode = 0o700;
    for (read, write, bits) in [(0o040, 0o020, 0o050), (0o004, 0o002, 0o005)] {
        if like.mode & (read | write) != 0 {
            mode |= bits;
        }
    }
    if like.mode & 0o020 != 0 && group_is_boards {
        mode |= 0o020;
    }
    if like.mode & 0o002 != 0 {
        mode |= 0o002;
    }
    mode
}

/// Give something made beside the board the board's owner where the caller may (root), else
/// its group where the caller may; whether it has the board's group now.
fn chown_like(fd: &OwnedFd, like: &Like) -> bool {
    if std::os::unix::fs::fchown(fd.as_fd(), Some(like.uid), Some(like.gid)).is_err() {
        let _ = std::os::unix::fs::fchown(fd.as_fd(), None, Some(like.gid));
    }
    fstat(fd).is_ok_and(|m| m.gid() == like.gid)
}

/// Set the mode of what `fd` opened (`fchmod`; a failure leaves it as made), and give `fd` back.
fn set_mode(fd: OwnedFd, mode: u32) -> OwnedFd {
    let file = File::from(fd);
    let _ = file.set_permissions(std::fs::Permissions::from_mode(mode));
    file.into()
}

/// Open the directory `name` in `parent` (`path` is its path, for messages), creating it when
/// `create`; refused unless it is a directory that may be trusted.
fn open_dir(
    parent: &OwnedFd,
    path: PathBuf,
    name: &str,
    like: Like,
    create: bool,
) -> io::Result<Dir> {
    let c = c_name(name)?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY;
    let fd = match open_at(parent, &c, flags, 0) {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
            match crate::sys::mkdir_at(parent.as_fd(), &c, 0o700) {
                Ok(()) => {
                    let fd = open_at(parent, &c, flags, 0)
                        .map_err(|e| refused(&path, e, "directory"))?;
                    let group_is_boards = chown_like(&fd, &like);
                    set_mode(fd, dir_mode(&like, group_is_boards))
                }
                // Made by someone else meanwhile: open theirs (and check it).
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    open_at(parent, &c, flags, 0).map_err(|e| refused(&path, e, "directory"))?
                }
                Err(e) => return Err(e),
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            let meta = std::fs::symlink_metadata(&path)?;
            return Err(not_a(&path, &meta, "directory"));
        }
        Err(e) => return Err(refused(&path, e, "directory")),
    };
    let meta = fstat(&fd)?;
    if !meta.is_dir() {
        return Err(not_a(&path, &meta, "directory"));
    }
    if let Err(why) = trusted(&meta, &like) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not to be trusted: {why}; pair neither reads nor writes it: remove it \
                 (pair makes it again)",
                crate::text::escape(&path.display().to_string())
            ),
        ));
    }
    Ok(Dir { fd, path, like })
}

/// Where the side directory of `board` is ([`super::presence::side_dir`]), and the owner, group
/// and mode it is held to: the board's, or for a git board (whose side directory is in the
/// caller's own cache) the caller's.
fn place(board: &Path) -> io::Result<(PathBuf, Like)> {
    let path = super::presence::side_dir(board);
    let like = match crate::store::location::Location::git(board) {
        Ok(Some(_)) => Like {
            uid: crate::sys::euid(),
            gid: crate::sys::egid(),
            mode: 0o600,
        },
        _ => {
            let target = crate::store::resolve(board).unwrap_or_else(|_| board.to_path_buf());
            let meta = std::fs::metadata(target)?;
            Like {
                uid: meta.uid(),
                gid: meta.gid(),
                mode: meta.mode() & 0o777,
            }
        }
    };
    Ok((path, like))
}

/// Open the side directory of `board`, creating it when `create`. Its parent (the board's
/// directory, or for a git board the cache's `side/`, made if missing) is the caller's choice
/// and opened as it is named; from there on nothing is followed.
pub fn open(board: &Path, create: bool) -> io::Result<Dir> {
    let (path, like) = place(board)?;
    let parent = path.parent().unwrap_or(Path::new("."));
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let is_git = matches!(crate::store::location::Location::git(board), Ok(Some(_)));
    if is_git && create {
        std::fs::create_dir_all(parent)?;
    }
    let name = path
        .file_name()
        .and_then(OsStr::to_str)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no side directory name"))?
        .to_string();
    let parent: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(parent)?
        .into();
    open_dir(&parent, path, &name, like, create)
}

impl Dir {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory `name` in this one, created when `create`, held to the same rules.
    pub fn dir(&self, name: &str, create: bool) -> io::Result<Dir> {
        open_dir(&self.fd, self.path.join(name), name, self.like, create)
    }

    /// The bytes of the regular file `name`, at most `limit`: a symlink, a FIFO, a device or a
    /// larger file is an error, never followed, waited on or read whole.
    pub fn read(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
        let path = self.path.join(name);
        let fd = open_at(&self.fd, &c_name(name)?, libc::O_RDONLY, 0)
            .map_err(|e| refused(&path, e, "file"))?;
        let file = File::from(fd);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(not_a(&path, &meta, "regular file"));
        }
        let mut out = Vec::new();
        file.take(limit + 1).read_to_end(&mut out)?;
        if out.len() as u64 > limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than {limit} bytes"),
            ));
        }
        Ok(out)
    }

    /// A descriptor of this directory of its own, kept for a write at the process's end.
    pub fn keep(&self) -> io::Result<OwnedFd> {
        self.fd.try_clone()
    }

    /// Replace the file `name` with `bytes`: a new file made beside it (never over anything
    /// that is there) and renamed over it, within this directory.
    pub fn replace(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let target = c_name(name)?;
        let mut attempts = 0;
        let (tmp, fd) = loop {
            let nanos = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let tmp = c_name(&format!(".tmp-{}-{attempts}-{nanos:x}", std::process::id()))?;
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
            match open_at(&self.fd, &tmp, flags, 0o600) {
                Ok(fd) => break (tmp, fd),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => {
                    attempts += 1;
                }
                Err(e) => return Err(e),
            }
        };
        let unlink = || {
            let _ = crate::sys::unlink_at(self.fd.as_fd(), &tmp);
        };
        chown_like(&fd, &self.like);
        let fd = set_mode(fd, (self.like.mode & 0o666) | 0o600);
        let mut file = File::from(fd);
        if let Err(e) = file.write_all(bytes) {
            unlink();
            return Err(e);
        }
        let renamed = crate::sys::rename_at(self.fd.as_fd(), &tmp, self.fd.as_fd(), &target);
        if let Err(e) = renamed {
            unlink();
            return Err(e);
        }
        Ok(())
    }

    /// How long ago the file `name` was modified (its own time: a symlink is not followed).
    pub fn age(&self, name: &str) -> Option<Duration> {
        let c = c_name(name).ok()?;
        let st = crate::sys::stat_at(self.fd.as_fd(), &c, libc::AT_SYMLINK_NOFOLLOW).ok()?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return None;
        }
        let modified = SystemTime::UNIX_EPOCH
            + Duration::new(
                u64::try_from(st.st_mtime).ok()?,
                u32::try_from(st.st_mtime_nsec).unwrap_or(0),
            );
        modified.elapsed().ok()
    }

    /// The names in this directory (`.` and `..` left out).
    pub fn names(&self) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for name in crate::sys::dir_names(self.fd.as_fd())? {
            let name = name.to_string_lossy().into_owned();
            if name != "." && name != ".." {
                out.push(name);
            }
        }
        Ok(out)
    }

    /// Open (creating it when missing) the lock file `name`, read-only (`flock` needs no more),
    /// never following a symlink or blocking; it must be a regular file.
    pub fn lock_file(&self, name: &str) -> io::Result<File> {
        let path = self.path.join(name);
        let c = c_name(name)?;
        let fd = match open_at(
            &self.fd,
            &c,
            libc::O_RDONLY | libc::O_CREAT | libc::O_EXCL,
            0o600,
        ) {
            Ok(fd) => {
                chown_like(&fd, &self.like);
                set_mode(fd, (self.like.mode & 0o666) | 0o600)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                open_at(&self.fd, &c, libc::O_RDONLY, 0).map_err(|e| refused(&path, e, "file"))?
            }
            Err(e) => return Err(refused(&path, e, "file")),
        };
        let file = File::from(fd);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(not_a(&path, &meta, "regular file"));
        }
        Ok(file)
    }
}
