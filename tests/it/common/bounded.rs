//! Commands run against a time limit: each in a session of its own, timed on the monotonic
//! clock from just before it starts to its exit, with what of the processes it started is
//! still alive a second after it exits. A command given a limit claims to end within it; the
//! tests hold it to that limit plus [`SLACK`], and to leaving nothing running.

use super::Out;
use std::fs;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// What a command may take past the limit it was given: start-up, the last read, the exit, on a
/// busy machine.
pub const SLACK: Duration = Duration::from_secs(2);

/// The processes of session `sid` that are still alive (zombies are not: they have exited and
/// only wait to be reaped), each as `PID STATE COMMAND LINE`.
pub fn alive_in_session(sid: u32) -> Vec<String> {
    let mut alive = vec![];
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `PID (COMM) STATE PPID PGRP SESSION …`: the command may hold spaces and brackets.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let (Some(state), Some(session)) = (f.first(), f.get(3)) else {
            continue;
        };
        if session.parse::<u32>().ok() == Some(sid) && !matches!(*state, "Z" | "X") {
            let cmdline = fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            alive.push(format!("{name} {state} {cmdline}"));
        }
    }
    alive
}

/// The variable [`run_timed`] marks each command's environment with, which every process it
/// starts inherits (git, a remote helper, `ssh`, even in a session of their own).
pub const MARK: &str = "PAIR_TEST_RUN";

/// A value of [`MARK`] no other run has.
pub fn new_mark() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// The processes still alive (zombies are not) whose environment holds `MARK=mark`, each as
/// `PID STATE COMMAND LINE`.
pub fn alive_marked(mark: &str) -> Vec<String> {
    let wanted = format!("{MARK}={mark}");
    let mut alive = vec![];
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(env) = fs::read(e.path().join("environ")) else {
            continue;
        };
        if !env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()) {
            continue;
        }
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .unwrap_or("?");
        if !matches!(state, "Z" | "X") {
            let cmdline = fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            alive.push(format!("{name} {state} {cmdline}"));
        }
    }
    alive
}

/// A `pair` run against a deadline: how it ended, timed on the monotonic clock from just before
/// it was started to its exit, and what of the processes it started was still alive a second
/// after it exited.
pub struct Timed {
    pub out: Out,
    pub left: Vec<String>,
}

/// Run commands at once, each in a session of its own and with a [`MARK`] of its own in its
/// environment (so that everything it starts, and everything those start, is found by its
/// session or, when it was put in a session of its own, by its mark), each killed after a
/// minute; a second after each exits, the processes of its session or with its mark still
/// alive.
pub fn run_timed(commands: Vec<(String, Command)>) -> Vec<Timed> {
    use std::os::unix::process::CommandExt;
    struct Running {
        desc: String,
        child: Option<Child>,
        started: Instant,
        sid: u32,
        mark: String,
        ended: Option<(Instant, Out)>,
        left: Option<Vec<String>>,
    }
    let mut running: Vec<Running> = commands
        .into_iter()
        .map(|(desc, mut c)| {
            let mark = new_mark();
            c.env(MARK, &mark);
            c.stdout(Stdio::piped()).stderr(Stdio::piped());
            // SAFETY: setsid is async-signal-safe and touches no memory of the parent's.
            unsafe {
                c.pre_exec(|| {
                    if libc::setsid() < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let started = Instant::now();
            let child = c.spawn().unwrap();
            Running {
                desc,
                sid: child.id(),
                mark,
                child: Some(child),
                started,
                ended: None,
                left: None,
            }
        })
        .collect();
    while running.iter().any(|r| r.left.is_none()) {
        for r in running.iter_mut() {
            if let Some(child) = r.child.as_mut() {
                let finished = child.try_wait().unwrap().is_some();
                let now = Instant::now();
                if finished || now - r.started > Duration::from_secs(60) {
                    let mut child = r.child.take().unwrap();
                    if !finished {
                        let _ = child.kill();
                    }
                    let out = child.wait_with_output().unwrap();
                    r.ended = Some((
                        now,
                        Out {
                            desc: r.desc.clone(),
                            code: out.status.code(),
                            signal: std::os::unix::process::ExitStatusExt::signal(&out.status),
                            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                            stdout_bytes: out.stdout,
                            elapsed: now - r.started,
                        },
                    ));
                }
            }
            if let Some((at, _)) = &r.ended
                && r.left.is_none()
                && at.elapsed() >= Duration::from_secs(1)
            {
                let mut left = alive_in_session(r.sid);
                for p in alive_marked(&r.mark) {
                    if !left.contains(&p) {
                        left.push(p);
                    }
                }
                r.left = Some(left);
            }
        }
        sleep(Duration::from_millis(2));
    }
    running
        .into_iter()
        .map(|r| Timed {
            out: r.ended.unwrap().1,
            left: r.left.unwrap(),
        })
        .collect()
}

impl Timed {
    /// It ended within `limit` and [`SLACK`], and left nothing running.
    #[track_caller]
    pub fn within(&self, limit: Duration) -> &Out {
        assert!(
            self.out.elapsed <= limit + SLACK,
            "took {:?}, more than its limit {limit:?} and {SLACK:?}\n{}",
            self.out.elapsed,
            self.out.report()
        );
        assert!(
            self.left.is_empty(),
            "still running a second after pair exited: {:?}\n{}",
            self.left,
            self.out.report()
        );
        &self.out
    }
}

/// `pair ARGS` (without an inherited `PAIR_AGENT` or `PAIR_FAULT`), in the current directory.
pub fn pair_command<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Command {
    let mut c = Command::new(super::pair_bin());
    c.args(args)
        .env_remove("PAIR_AGENT")
        .env_remove("PAIR_FAULT")
        .stdin(Stdio::null());
    c
}

/// Run one command against its limit: it must end within `limit` and [`SLACK`], leaving no
/// process it started alive.
#[track_caller]
pub fn within(c: Command, limit: Duration) -> Out {
    let desc = format!("{c:?}");
    let ran = run_timed(vec![(desc, c)]);
    ran[0].within(limit).clone()
}

/// `pair ARGS` against its limit ([`within`]).
#[track_caller]
pub fn pair_within<S: AsRef<std::ffi::OsStr>>(args: &[S], limit: Duration) -> Out {
    within(pair_command(args), limit)
}
