//! The system calls the standard library does not offer, each a small safe function with the
//! reason its `unsafe` block is sound (`SAFETY:`). This is the only module with `unsafe`: the
//! crate denies it everywhere else, and `tests/it/layers.rs` checks that no other file has it.
//!
//! Each function does what its call does and no more; what to make of an error, and when to
//! call it, is the caller's. Those that a signal handler or a child between `fork` and `exec`
//! may call say so: they make only async-signal-safe calls and allocate nothing.

// Every `unsafe` block says why it is sound, or clippy fails the build.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::{CStr, OsString};
use std::io;
use std::os::fd::{AsRawFd as _, BorrowedFd, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt as _;
use std::process::Command;

/// `Ok` for a call's non-negative result, else the error it left in `errno`.
fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

// ---------------------------------------------------------------------------------------------
// who and where this process is

/// The real user id of this process.
pub fn uid() -> u32 {
    // SAFETY: getuid takes nothing and cannot fail.
    unsafe { libc::getuid() }
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() }
}

/// The effective group id of this process.
pub fn egid() -> u32 {
    // SAFETY: getegid takes nothing and cannot fail.
    unsafe { libc::getegid() }
}

/// This machine's name (`uname`'s node name: one system call, no file to open), as its bytes.
pub fn hostname() -> io::Result<Vec<u8>> {
    // SAFETY: `utsname` is plain data (arrays of C chars), for which all zeroes is a value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname fills in the struct we own and pass by a valid pointer.
    cvt(unsafe { libc::uname(&mut u) })?;
    // SAFETY: uname NUL-terminates each field within its array (and the zeroed struct ends in
    // zeroes whatever it wrote).
    let name = unsafe { CStr::from_ptr(u.nodename.as_ptr()) };
    Ok(name.to_bytes().to_vec())
}

/// The whole seconds of a clock (`CLOCK_REALTIME`, `CLOCK_BOOTTIME`, …); `None` when the system
/// has no such clock.
pub fn clock_seconds(clock: libc::clockid_t) -> Option<i64> {
    // SAFETY: `timespec` is plain data, for which all zeroes is a value.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: clock_gettime fills in the struct we own and pass by a valid pointer.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0).then_some(ts.tv_sec)
}

// ---------------------------------------------------------------------------------------------
// files

/// Whether the caller's real user and group may write `path` (`access(2)` with `W_OK`, which
/// honours ACLs; root it never refuses). `Ok` when it may; the error says why not, or that it
/// could not be told.
pub fn access_writable(path: &CStr) -> io::Result<()> {
    // SAFETY: a NUL-terminated path we borrow for the call; access reads nothing else.
    cvt(unsafe { libc::access(path.as_ptr(), libc::W_OK) }).map(drop)
}

/// `openat(2)`: open `name` relative to the directory `dir` with `flags` (and `mode` for a file
/// it creates); the new descriptor is the caller's. One attempt: an interrupted call is an
/// error of kind `Interrupted`, for the caller to try again.
pub fn open_at(
    dir: BorrowedFd<'_>,
    name: &CStr,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    // SAFETY: a valid descriptor and a NUL-terminated name, both borrowed for the call.
    let fd = cvt(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) })?;
    // SAFETY: `fd` was just opened by the call above and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `mkdirat(2)`: make the directory `name` in `dir`, with `mode` (less the umask).
pub fn mkdir_at(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: a valid descriptor and a NUL-terminated name, both borrowed for the call.
    cvt(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) }).map(drop)
}

/// `unlinkat(2)`: remove the file `name` from `dir`.
pub fn unlink_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: a valid descriptor and a NUL-terminated name, both borrowed for the call.
    cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) }).map(drop)
}

/// `renameat(2)`: rename `from` in `from_dir` to `to` in `to_dir`, replacing what is there.
pub fn rename_at(
    from_dir: BorrowedFd<'_>,
    from: &CStr,
    to_dir: BorrowedFd<'_>,
    to: &CStr,
) -> io::Result<()> {
    // SAFETY: valid descriptors and NUL-terminated names, all borrowed for the call.
    cvt(unsafe {
        libc::renameat(
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
        )
    })
    .map(drop)
}

/// `fstatat(2)`: the status of `name` in `dir`; with `libc::AT_SYMLINK_NOFOLLOW` in `flags`, of
/// a symlink itself.
pub fn stat_at(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int) -> io::Result<libc::stat> {
    // SAFETY: `stat` is plain data, for which all zeroes is a value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, a NUL-terminated name and a `stat` we own, for the call.
    cvt(unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, flags) })?;
    Ok(st)
}

/// The names in the directory `dir` (`.` and `..` among them), read from its start through a
/// descriptor of its own (`dir`'s position is not moved).
pub fn dir_names(dir: BorrowedFd<'_>) -> io::Result<Vec<OsString>> {
    // `fdopendir` takes the descriptor over (closedir closes it): give it its own copy.
    let raw = std::os::fd::IntoRawFd::into_raw_fd(dir.try_clone_to_owned()?);
    // SAFETY: `raw` is a directory descriptor owned by nothing else; it passes to the stream.
    let d = unsafe { libc::fdopendir(raw) };
    if d.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: `fdopendir` failed, so `raw` is still ours to close, once.
        unsafe { libc::close(raw) };
        return Err(e);
    }
    // From its start, whoever read it before (a copy shares its position).
    // SAFETY: a valid directory stream.
    unsafe { libc::rewinddir(d) };
    let mut out = Vec::new();
    loop {
        // SAFETY: a valid directory stream, used by this thread alone.
        let entry = unsafe { libc::readdir(d) };
        if entry.is_null() {
            break;
        }
        // SAFETY: a non-null entry stays valid until the next readdir or closedir on the
        // stream, and its `d_name` is NUL-terminated within it; it is copied out at once.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        out.push(OsString::from_vec(name.to_bytes().to_vec()));
    }
    // SAFETY: a valid directory stream, closed once (with its descriptor), not used again.
    unsafe { libc::closedir(d) };
    Ok(out)
}

/// Call `call` to read a variable-length extended-attribute value or list: first to learn its
/// size, then into a buffer of that size (again if it grew meanwhile). `None` when there is no
/// such attribute.
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

/// The names of the extended attributes of the open file `fd`, each NUL-terminated
/// (`flistxattr(2)`).
pub fn list_xattrs(fd: BorrowedFd<'_>) -> io::Result<Option<Vec<u8>>> {
    // SAFETY: `xattr_buf` passes a null pointer with length 0 (the call only measures) or a
    // buffer it owns with its true length, which the call writes within.
    xattr_buf(|buf, len| unsafe { libc::flistxattr(fd.as_raw_fd(), buf.cast(), len) })
}

/// The value of the extended attribute `name` of the open file `fd` (`fgetxattr(2)`); `None`
/// when it has none of that name.
pub fn get_xattr(fd: BorrowedFd<'_>, name: &CStr) -> io::Result<Option<Vec<u8>>> {
    // SAFETY: as in `list_xattrs`; `name` is NUL-terminated and borrowed for the call.
    xattr_buf(|buf, len| unsafe { libc::fgetxattr(fd.as_raw_fd(), name.as_ptr(), buf, len) })
}

/// Set the extended attribute `name` of the open file `fd` to `value` (`fsetxattr(2)`).
pub fn set_xattr(fd: BorrowedFd<'_>, name: &CStr, value: &[u8]) -> io::Result<()> {
    // SAFETY: a NUL-terminated name and a value of the length given, both borrowed for the call.
    cvt(unsafe {
        libc::fsetxattr(
            fd.as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    })
    .map(drop)
}

/// Remove the extended attribute `name` of the open file `fd` (`fremovexattr(2)`).
pub fn remove_xattr(fd: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: a NUL-terminated name borrowed for the call.
    cvt(unsafe { libc::fremovexattr(fd.as_raw_fd(), name.as_ptr()) }).map(drop)
}

/// Make the descriptor `from` this process's standard input (`0`), output (`1`) or error (`2`)
/// (`dup2(2)`; what stood there is closed). Any other target is refused: a descriptor another
/// part of the process owns is not to be closed under it.
pub fn redirect_std(from: BorrowedFd<'_>, onto: RawFd) -> io::Result<()> {
    if !(0..=2).contains(&onto) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {onto} is not a standard stream"),
        ));
    }
    // SAFETY: a valid descriptor onto one of the process's standard streams, which std's
    // handles use by number and never close.
    cvt(unsafe { libc::dup2(from.as_raw_fd(), onto) }).map(drop)
}

// ---------------------------------------------------------------------------------------------
// processes and signals

/// `kill(2)`: send `sig` to `pid` (a process; a negative pid is a process group, `0` the
/// caller's own group, `-1` every process it may signal: the caller chooses). Signal 0 sends
/// nothing and only asks whether the process exists (`EPERM`: it does, as someone else's).
/// Async-signal-safe.
pub fn kill(pid: libc::pid_t, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: kill takes plain integers and touches no memory of ours.
    cvt(unsafe { libc::kill(pid, sig) }).map(drop)
}

/// Kill (`SIGKILL`) the process group `leader` leads, with every process in it: a child started
/// in a group of its own (`process_group(0)`) and all it started. A pid that cannot lead a
/// group of the caller's children (0, 1, or out of range) signals nothing. Async-signal-safe.
pub fn kill_group(leader: u32) {
    if let Ok(pid) = libc::pid_t::try_from(leader)
        && pid > 1
    {
        let _ = kill(-pid, libc::SIGKILL);
    }
}

/// Make this process the reaper of its orphaned descendants (Linux): a process whose parent
/// dies is handed to this one rather than to init, so that it can be waited for. Nothing
/// elsewhere.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer and changes only which process
    // orphaned descendants are handed to.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
}

/// What waiting, without blocking, for a child in a process group found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaped {
    /// A child of the group ended and was reaped.
    One,
    /// Children of the group live on.
    Running,
    /// No process of the group is a child of this one (any more).
    None,
}

/// Reap one ended child of the process group `leader` leads, without blocking. A pid that
/// cannot lead a group of the caller's children (0, 1, or out of range) has none.
pub fn reap_group_member(leader: u32) -> Reaped {
    let Ok(pid) = libc::pid_t::try_from(leader) else {
        return Reaped::None;
    };
    if pid <= 1 {
        return Reaped::None;
    }
    loop {
        let mut status = 0;
        // SAFETY: waitpid on a process group this process started, without blocking, into a
        // status integer of ours; it reaps only the group's members.
        let r = unsafe { libc::waitpid(-pid, &mut status, libc::WNOHANG) };
        match r {
            r if r > 0 => return Reaped::One,
            0 => return Reaped::Running,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return Reaped::None,
        }
    }
}

/// Give the signal `sig` its default action back and raise it: the process ends as that signal
/// ends it (after a handler that cleaned up). Async-signal-safe.
pub fn raise_default(sig: libc::c_int) {
    // SAFETY: signal and raise take plain integers (SIG_DFL is no function of ours) and are
    // async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// The `sigaction` that runs `handler` on a signal, with no signal blocked beyond the one
/// handled and `flags`.
fn action(handler: extern "C" fn(libc::c_int), flags: libc::c_int) -> libc::sigaction {
    // SAFETY: `sigaction` is plain data (integers, a mask, a handler address), for which all
    // zeroes is a value (SIG_DFL, an empty mask, no flags).
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = handler as libc::sighandler_t;
    sa.sa_flags = flags;
    // SAFETY: a mask we own.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    sa
}

/// Run `handler` on the signal `sig` from now on. With `restart`, a system call the signal
/// interrupts is resumed (`SA_RESTART`, as `signal(3)` sets); without, it fails with `EINTR`.
/// `handler` must make only async-signal-safe calls (storing into an atomic is one).
pub fn on_signal(sig: libc::c_int, handler: extern "C" fn(libc::c_int), restart: bool) {
    let sa = action(handler, if restart { libc::SA_RESTART } else { 0 });
    // SAFETY: a fully initialised action; the handler is an `extern "C" fn` that lives as long
    // as the program, and its caller keeps to async-signal-safe calls in it.
    unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) };
}

/// Run `handler` on the signal `sig` (as [`on_signal`], without `SA_RESTART`), only if it still
/// has its default action: a handler set before, or an ignored signal, is kept. Whether
/// `handler` was set.
pub fn on_signal_if_default(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) -> bool {
    // SAFETY: `sigaction` is plain data, for which all zeroes is a value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into the struct we own.
    if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0
        || old.sa_sigaction != libc::SIG_DFL
    {
        return false;
    }
    let sa = action(handler, 0);
    // SAFETY: as in `on_signal`.
    unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) == 0 }
}

// ---------------------------------------------------------------------------------------------
// what a signal that ends the process does first

/// The process group of the child the process is waiting for (0 while none), killed by a
/// signal that ends the process.
static END_GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// A file to leave behind when a signal ends the process: `bytes` written to `tmp` in the
/// directory `dir` and renamed over `name` there. Set once.
struct EndWrite {
    dir: OwnedFd,
    tmp: std::ffi::CString,
    name: std::ffi::CString,
    bytes: Vec<u8>,
}

static END_WRITE: std::sync::OnceLock<EndWrite> = std::sync::OnceLock::new();

/// The handler of the signals that end the process (SIGINT, SIGTERM, SIGHUP): the file of
/// [`write_on_end`] is written, the group of [`set_end_group`] killed, then the process ends as
/// the signal ends it. Only async-signal-safe calls (an atomic load, `openat`, `write`,
/// `close`, `renameat`, `kill`), nothing allocated.
extern "C" fn on_end(sig: libc::c_int) {
    if let Some(w) = END_WRITE.get() {
        let flags = libc::O_WRONLY
            | libc::O_CREAT
            | libc::O_TRUNC
            | libc::O_NOFOLLOW
            | libc::O_NONBLOCK
            | libc::O_CLOEXEC;
        // SAFETY: a directory descriptor kept open by the static, a NUL-terminated name it
        // owns; openat is async-signal-safe.
        let fd = unsafe { libc::openat(w.dir.as_raw_fd(), w.tmp.as_ptr(), flags, 0o600) };
        if fd >= 0 {
            let mut done = 0usize;
            while done < w.bytes.len() {
                // SAFETY: the pointer and length stay within the static's bytes; write is
                // async-signal-safe.
                let n = unsafe {
                    libc::write(fd, w.bytes[done..].as_ptr().cast(), w.bytes.len() - done)
                };
                if n <= 0 {
                    break;
                }
                done += n as usize;
            }
            // SAFETY: a descriptor this handler opened; close and renameat are
            // async-signal-safe, with names the static owns.
            unsafe {
                libc::close(fd);
                if done == w.bytes.len() {
                    libc::renameat(
                        w.dir.as_raw_fd(),
                        w.tmp.as_ptr(),
                        w.dir.as_raw_fd(),
                        w.name.as_ptr(),
                    );
                } else {
                    libc::unlinkat(w.dir.as_raw_fd(), w.tmp.as_ptr(), 0);
                }
            }
        }
    }
    let group = END_GROUP.load(std::sync::atomic::Ordering::SeqCst);
    if group > 0 {
        kill_group(group as u32);
    }
    raise_default(sig);
}

/// Let the signals that end the process (SIGINT, SIGTERM, SIGHUP) run [`on_end`] first, where
/// they still have their default action (a command that handles them itself keeps its
/// handler; one that ignores them keeps ignoring them). Once per process.
pub fn on_end_signals() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            on_signal_if_default(sig, on_end);
        }
    });
}

/// The process group a signal that ends the process kills first (0: none).
pub fn set_end_group(group: libc::pid_t) {
    END_GROUP.store(group, std::sync::atomic::Ordering::SeqCst);
}

/// Leave `bytes` as the file `name` of the directory `dir` (through the temporary name `tmp`)
/// if a signal ends the process; set once per process (false when it was set before).
pub fn write_on_end(dir: OwnedFd, tmp: &CStr, name: &CStr, bytes: Vec<u8>) -> bool {
    let set = END_WRITE
        .set(EndWrite {
            dir,
            tmp: tmp.to_owned(),
            name: name.to_owned(),
            bytes,
        })
        .is_ok();
    on_end_signals();
    set
}

/// Start the child `cmd` starts in a session of its own (`setsid`): the leader of a new process
/// group, as `process_group(0)` makes it, and with no controlling terminal, so that nothing it
/// runs (ssh asking to trust a host key or for a password, a credential helper) can open
/// `/dev/tty` and wait there for an answer nobody gives: it fails at once instead.
pub fn new_session(cmd: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the closure runs in the child between fork and exec, where only async-signal-safe
    // calls are allowed: setsid is, and it allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Make the child `cmd` starts die (`SIGKILL`) when this process does, even of a `SIGKILL` no
/// handler sees (`PR_SET_PDEATHSIG`); a child whose parent is gone before that is set exits at
/// once with status 1.
#[cfg(target_os = "linux")]
pub fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    let parent = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec, where only async-signal-safe
    // calls are allowed: prctl, getppid and _exit are, and it allocates nothing and touches no
    // memory but its own copy of `parent`.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The parent may have died before the line above: then nobody would be told.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Start a child that holds a copy of every descriptor this process has open now (all but the
/// standard streams, which it closes at once) until this process has exited, then exits itself:
/// whatever closing the last copy of a descriptor costs the kernel, the child pays it, after
/// this process is gone, where nobody waits. Nothing happens when the child cannot be made.
#[cfg(target_os = "linux")]
pub fn fork_teardown_child() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills in the two descriptors of the array we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    // SAFETY: fork copies the process; the child below makes only async-signal-safe system
    // calls (close, read, _exit), allocates nothing and never returns, as a child of a process
    // with threads must.
    match unsafe { libc::fork() } {
        // SAFETY: in the child: closing descriptors it holds copies of, reading one byte into a
        // local, and `_exit`, which ends it without running anything of the parent's.
        0 => unsafe {
            libc::close(fds[1]);
            for fd in 0..3 {
                libc::close(fd);
            }
            let mut b = 0u8;
            // EOF once the parent (the only other holder of the write end) is gone.
            while libc::read(fds[0], (&mut b as *mut u8).cast(), 1) < 0
                && *libc::__errno_location() == libc::EINTR
            {}
            libc::_exit(0);
        },
        pid => {
            // SAFETY: closing our own read end, once; the write end stays open until exit.
            unsafe { libc::close(fds[0]) };
            if pid < 0 {
                // SAFETY: no child took the write end: ours to close, once.
                unsafe { libc::close(fds[1]) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd as _;

    #[test]
    fn a_directory_is_listed_through_its_descriptor_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "").unwrap();
        let fd: OwnedFd = std::fs::File::open(dir.path()).unwrap().into();
        for _ in 0..2 {
            let mut names = dir_names(fd.as_fd()).unwrap();
            names.sort();
            assert_eq!(names, [".", "..", "a"]);
        }
        let st = stat_at(fd.as_fd(), c"a", libc::AT_SYMLINK_NOFOLLOW).unwrap();
        assert_eq!(st.st_mode & libc::S_IFMT, libc::S_IFREG);
        let e = stat_at(fd.as_fd(), c"b", 0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn only_a_standard_stream_may_be_replaced() {
        let null = std::fs::File::open("/dev/null").unwrap();
        let e = redirect_std(null.as_fd(), 3).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn this_process_exists_and_has_a_name() {
        assert!(kill(std::process::id() as libc::pid_t, 0).is_ok());
        assert!(!hostname().unwrap().contains(&0));
        assert!(clock_seconds(libc::CLOCK_REALTIME).is_some_and(|s| s > 0));
    }
}
