//! Files and processes around a board: a directory on the real disk, FIFOs, temporary files left
//! by writes, and `pair` run with a capped address space.

use crate::common::*;
use std::ffi::CString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

pub const QUICK: Duration = Duration::from_secs(20);

/// A temporary directory on the real disk (`/var/tmp`), where inode numbers are reused and user
/// extended attributes work, readable and searchable by every user.
pub fn disk_dir() -> tempfile::TempDir {
    let base = Path::new("/var/tmp");
    let dir = if base.is_dir() {
        tempfile::tempdir_in(base).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

pub fn note_args(board: &str, text: &str) -> Vec<String> {
    [
        "note",
        board,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        text,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

pub fn temp_files(dir: &Path) -> Vec<String> {
    dir_entries(dir)
        .into_iter()
        .filter(|e| e.contains(".pair-tmp-"))
        .collect()
}

/// Wait until `dir` holds an entry whose name starts with `prefix`: a writer paused by a fault
/// (`PAIR_FAULT=POINT:wait=PATH`) has reached its point once its temporary file is there.
/// Fails the test, saying `what`, when it is not there within 20 s.
#[track_caller]
pub fn await_entry(dir: &Path, prefix: &str, what: &str) {
    let start = Instant::now();
    while !dir_entries(dir).iter().any(|n| n.starts_with(prefix)) {
        assert!(start.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `pair ARGS` with its address space capped (so that reading a huge input fails fast instead
/// of taking the machine's memory) and stdin from a file (or empty). Killed after `timeout`.
pub fn pair_capped(args: &[&str], stdin: Option<&Path>, timeout: Duration) -> Out {
    pair_capped_at(args, stdin, timeout, 2 << 30)
}

/// [`pair_capped`] with the address space capped at `cap` bytes.
pub fn pair_capped_at(args: &[&str], stdin: Option<&Path>, timeout: Duration, cap: u64) -> Out {
    let mut cmd = StdCommand::new(pair_bin());
    cmd.args(args)
        .env_remove("PAIR_AGENT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(fs::File::open(p).unwrap()),
        None => cmd.stdin(Stdio::null()),
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: cap,
                rlim_max: cap,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    let desc = format!("(memory capped at {cap} bytes) pair {}", args.join(" "));
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut pipes = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let _ = std::io::Read::read_to_end(&mut pipes.0, &mut o);
        let _ = std::io::Read::read_to_end(&mut pipes.1, &mut e);
        (o, e)
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (stdout, stderr) = reader.join().unwrap();
    use std::os::unix::process::ExitStatusExt;
    let out = Out {
        desc,
        code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        stdout_bytes: stdout,
        elapsed: start.elapsed(),
    };
    assert!(
        out.code != Some(101) && !out.stderr.contains("panicked at"),
        "`pair` panicked\n{}",
        out.report()
    );
    out
}

pub fn mkfifo(path: &Path) {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a plain syscall on a C string we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

pub fn note(board: &str) -> Vec<String> {
    [
        "note",
        board,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "hello",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// MINIMAL with a line appended (bodies are append-only, so edits append).
pub fn changed(tag: &str) -> String {
    format!("{MINIMAL}\n({tag})\n")
}
