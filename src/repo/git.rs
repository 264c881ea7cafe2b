//! Talking to git: the one place `pair` runs it, with its output form pinned.
//!
//! A pinned diff must hash the same for the doer who submits it and the reviewer who judges it,
//! whatever either has in its git configuration. So every call runs `git` with the settings that
//! change a diff's bytes overridden on the command line (`-c` wins over every configuration
//! file), the diff options spelled out, a fixed locale, no pager, and none of the `GIT_*`
//! variables a caller may have inherited (a hook's `GIT_DIR` would point git at another
//! repository). This module offers the diffs ([`staged_diff`], [`unstaged_diff`]),
//! [`worktree_top`] and [`staged_file`]; [`crate::repo`] asks the repository
//! its other questions (trees, commits, branches, worktrees) through the same [`command`] and
//! [`run`].

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Configuration that changes what a diff looks like, overridden for every call.
pub(crate) const CONFIG: &[&str] = &[
    "color.ui=never",
    "color.diff=never",
    "diff.external=",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.renames=false",
    "diff.suppressBlankEmpty=false",
    "diff.algorithm=myers",
    "diff.indentHeuristic=true",
    "diff.interHunkContext=0",
    "diff.context=3",
    "diff.ignoreSubmodules=none",
    "diff.submodule=short",
    "core.abbrev=40",
    "core.quotePath=true",
    "core.attributesFile=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
];

/// The diff options, spelled out (each also overrides a configuration key or a default a later
/// git could change): no external driver or text conversion, no colour, full blob ids, binary
/// changes as full binary patches (so a changed binary file changes the hash), no rename
/// detection, `a/` and `b/` prefixes, three lines of context, the default algorithm, paths from
/// the top of the worktree, the default file order.
pub(crate) const DIFF_OPTIONS: &[&str] = &[
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--full-index",
    "--binary",
    "--no-renames",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--unified=3",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--submodule=short",
    "--ignore-submodules=none",
    "-O/dev/null",
];

/// `git -C DIR` with the pinned configuration and a clean environment.
pub(crate) fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    // Whatever git-specific environment the caller has is not ours to follow.
    let inherited: Vec<OsString> = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| k.to_string_lossy().starts_with("GIT_"))
        .collect();
    for k in inherited {
        cmd.env_remove(k);
    }
    cmd.env("LC_ALL", "C")
        .env("LANG", "C")
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .stdin(Stdio::null());
    cmd.arg("--no-pager").arg("-C").arg(dir);
    for c in CONFIG {
        cmd.arg("-c").arg(c);
    }
    cmd
}

/// Run git as the user would at a prompt in `dir` (`git -C DIR ARGS`): the user's environment
/// and configuration apply, no standard input, stderr dropped. For questions whose answer must
/// follow the user's own settings, such as their ignore rules.
pub fn as_user(dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
}

/// Run git in `dir` with no inherited `GIT_*` variable and the given `-c` settings first, no
/// standard input; its whole output, whatever the exit status (the caller reports it).
pub fn isolated(
    dir: &Path,
    config: &[&str],
    args: &[&str],
) -> std::io::Result<std::process::Output> {
    let mut cmd = Command::new("git");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(k);
        }
    }
    cmd.arg("-C").arg(dir);
    for c in config {
        cmd.arg("-c").arg(c);
    }
    cmd.args(args).stdin(Stdio::null()).output()
}

/// The top of the git work tree `dir` is in (`git rev-parse --show-toplevel`, as the user
/// runs it); `Ok(None)` when `dir` is in none.
pub fn toplevel(dir: &Path) -> std::io::Result<Option<PathBuf>> {
    let out = as_user(dir, &["rev-parse", "--show-toplevel"])?;
    Ok(out.status.success().then(|| {
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim_end_matches(['\n', '\r']))
    }))
}

/// How a git run ended: whether it succeeded, what it printed, and whether it was stopped at
/// its deadline.
pub(crate) struct Finished {
    pub ok: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
    /// How long git had run when it was stopped at the deadline (with every process it
    /// started); `None` when it ended by itself.
    pub stopped: Option<Duration>,
    /// Whether the watch of [`run_watched`] stopped git: it had printed what was needed, or
    /// announced more than the caller would read.
    pub cut: bool,
}

/// What [`run_watched`] calls with all that git has printed on stdout so far, each time more
/// arrives: `false` stops git (and everything it started) at once.
pub(crate) type Watch = Box<dyn FnMut(&[u8]) -> bool + Send>;

/// Make the signals that end a command (SIGINT, SIGTERM, SIGHUP) end the running git too (it
/// runs in a process group of its own, out of reach of the terminal's signals), where they
/// still have their default action ([`crate::sys::on_end_signals`]).
fn end_git_on_signals() {
    crate::sys::on_end_signals();
}

/// How long a git killed at its deadline, and the processes it started, are given to die and be
/// reaped: SIGKILL takes milliseconds; this only bounds a process stuck in the kernel.
const REAP_GRACE: Duration = Duration::from_millis(150);

/// Make `pair` the reaper of the processes git starts (Linux): a remote helper or `ssh` whose
/// git was killed is handed to `pair` rather than to init, so that [`reap_group`] can wait
/// until it is gone. Once per process.
fn adopt_orphans() {
    static ADOPTING: std::sync::Once = std::sync::Once::new();
    ADOPTING.call_once(crate::sys::become_subreaper);
}

/// Wait, until `until` at the latest, for every process of git's killed group that is a child
/// of `pair` (git's own children, handed to `pair` by [`adopt_orphans`] when git died), and
/// reap them: when it returns in time, no process of the group is left. Git itself is reaped
/// by the thread that waits for it, before this is called.
fn reap_group(group: u32, until: Instant) {
    loop {
        match crate::sys::reap_group_member(group) {
            crate::sys::Reaped::One => continue,
            crate::sys::Reaped::None => return,
            crate::sys::Reaped::Running if Instant::now() >= until => return,
            crate::sys::Reaped::Running => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// What a git run sends back to [`run_piped`] from the threads that wait for it.
enum Part {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    Exit(std::io::Result<std::process::ExitStatus>),
}

/// Run a prepared git command with piped output, feeding it `input` on a thread of its own
/// (a large input would fill the pipe while git fills stdout), until it ends or `deadline`
/// passes: then git and every process it started (a remote helper, `ssh`) are killed, which
/// the process group they run in makes possible, and the run is reported stopped, with a line
/// saying so first on its stderr. A deadline already past stops it before it starts (it is
/// reported stopped after no time at all).
/// `cannot_start` words the error when the process cannot be run.
pub(crate) fn run_piped(
    cmd: Command,
    input: Option<&[u8]>,
    deadline: Instant,
    cannot_start: impl Fn(std::io::Error) -> Error,
) -> Result<Finished> {
    run_watched(cmd, input, deadline, cannot_start, None)
}

/// [`run_piped`], with `watch` shown git's stdout as it arrives: when it answers `false`, git
/// is stopped there (killed with its process group, before it prints another byte the caller
/// would hold), and the run is reported `cut` with what it had printed. This reads a
/// `cat-file --batch` answer header first, and stops at a header that announces an object too
/// large to read.
pub(crate) fn run_watched(
    mut cmd: Command,
    input: Option<&[u8]>,
    deadline: Instant,
    cannot_start: impl Fn(std::io::Error) -> Error,
    watch: Option<Watch>,
) -> Result<Finished> {
    let started = Instant::now();
    let stopped = |stdout: Vec<u8>, stderr: Vec<u8>| {
        let ran = started.elapsed();
        Finished {
            ok: false,
            stdout,
            stderr: format!(
                "pair stopped git after {:.1} s: it had not finished within its time limit\n{}",
                ran.as_secs_f64(),
                String::from_utf8_lossy(&stderr)
            ),
            stopped: Some(ran),
            cut: false,
        }
    };
    if started >= deadline {
        // Not started: it ran for no time at all.
        return Ok(Finished {
            ok: false,
            stdout: vec![],
            stderr: "pair did not start git: its time limit had passed\n".into(),
            stopped: Some(Duration::ZERO),
            cut: false,
        });
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    // A session of its own: a group, so that everything git starts can be killed with it, and
    // no terminal, so that nothing it starts can wait at a prompt.
    crate::sys::new_session(&mut cmd);
    // And git dies with `pair`, even when `pair` is killed with SIGKILL (which no handler
    // sees): a push must not go on, or land, after the command that started it is gone.
    #[cfg(target_os = "linux")]
    crate::sys::die_with_parent(&mut cmd);
    end_git_on_signals();
    adopt_orphans();
    let mut child = cmd.spawn().map_err(&cannot_start)?;
    let group = child.id();
    crate::sys::set_end_group(group as libc::pid_t);
    let (tx, rx) = mpsc::channel();
    if let Some(bytes) = input {
        let mut stdin = child.stdin.take();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(&bytes);
            }
        });
    }
    let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let read = |pipe: Option<Box<dyn Read + Send>>,
                part: fn(Vec<u8>) -> Part,
                mut watch: Option<Watch>| {
        let tx = tx.clone();
        let cut = cut.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                match watch.as_mut() {
                    None => {
                        let _ = p.read_to_end(&mut buf);
                    }
                    Some(w) => {
                        let mut chunk = vec![0u8; 64 * 1024];
                        loop {
                            match p.read(&mut chunk) {
                                Ok(0) => break,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                                    continue;
                                }
                                Err(_) => break,
                            }
                            if !w(&buf) {
                                cut.store(true, Ordering::SeqCst);
                                // The watch stops a git that still has more to print than a
                                // pipe holds, so it is still running, blocked on this pipe,
                                // and not yet reaped: the group is still its.
                                crate::sys::kill_group(group);
                                break;
                            }
                        }
                    }
                }
            }
            let _ = tx.send(part(buf));
        });
    };
    read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        Part::Stdout,
        watch,
    );
    read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        Part::Stderr,
        None,
    );
    std::thread::spawn(move || {
        let _ = tx.send(Part::Exit(child.wait()));
    });
    let (mut stdout, mut stderr, mut exit) = (None, None, None);
    while stdout.is_none() || stderr.is_none() || exit.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Part::Stdout(b)) => stdout = Some(b),
            Ok(Part::Stderr(b)) => stderr = Some(b),
            Ok(Part::Exit(status)) => exit = Some(status),
            Err(_) => {
                // Git is not yet reaped (or its group still holds the pipes), so the group id
                // is still its.
                crate::sys::kill_group(group);
                // Reap git, and then every other process of its group, so that nothing is left
                // behind; keep what git printed.
                let grace = Instant::now() + REAP_GRACE;
                while exit.is_none() {
                    match rx.recv_timeout(grace.saturating_duration_since(Instant::now())) {
                        Ok(Part::Stdout(b)) => stdout = Some(b),
                        Ok(Part::Stderr(b)) => stderr = Some(b),
                        Ok(Part::Exit(status)) => exit = Some(status),
                        Err(_) => break,
                    }
                }
                // Only once git itself was reaped by its thread: its id then names nothing but
                // the group, and that thread's wait cannot take another process's.
                if exit.is_some() {
                    reap_group(group, grace);
                }
                // The pipes close as the last process holding them dies.
                while stdout.is_none() || stderr.is_none() {
                    match rx.recv_timeout(grace.saturating_duration_since(Instant::now())) {
                        Ok(Part::Stdout(b)) => stdout = Some(b),
                        Ok(Part::Stderr(b)) => stderr = Some(b),
                        Ok(Part::Exit(_)) => {}
                        Err(_) => break,
                    }
                }
                crate::sys::set_end_group(0);
                return Ok(stopped(
                    stdout.unwrap_or_default(),
                    stderr.unwrap_or_default(),
                ));
            }
        }
    }
    crate::sys::set_end_group(0);
    // Git ended and was reaped. What it started and did not wait for (an `ssh` that git, dying
    // on an error such as a refused key, left ending) was handed to `pair`: reap it too, so
    // that nothing of the run is left, not even an entry in the process table, when it returns.
    if exit.is_some() {
        reap_group(group, Instant::now() + REAP_GRACE);
    }
    let status = exit.unwrap_or_else(|| Err(std::io::Error::other("git was not waited for")));
    let status = status.map_err(&cannot_start)?;
    Ok(Finished {
        ok: status.success(),
        stdout: stdout.unwrap_or_default(),
        stderr: String::from_utf8_lossy(&stderr.unwrap_or_default()).into_owned(),
        stopped: None,
        cut: cut.load(Ordering::SeqCst),
    })
}

/// Run git; its stdout, or a clear error.
pub(crate) fn run(dir: &Path, args: &[&str], what: &str) -> Result<Vec<u8>> {
    output(command(dir).args(args), dir, args, what)
}

/// Run a prepared git command; its stdout, or a clear error naming what could not be done.
pub(crate) fn output(cmd: &mut Command, dir: &Path, args: &[&str], what: &str) -> Result<Vec<u8>> {
    let out = cmd.output().map_err(|e| Error::Git {
        message: match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "cannot {what}: `git` was not found on PATH; pair runs git to pin and check code \
                 diffs (install git, or put it on PATH)"
            ),
            _ => format!("cannot {what}: running git failed: {e}"),
        },
    })?;
    if out.status.success() {
        return Ok(out.stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    Err(Error::Git {
        message: format!(
            "cannot {what}: `git {}` failed in {}{}",
            args.first().copied().unwrap_or_default(),
            dir.display(),
            if first.is_empty() {
                String::new()
            } else {
                format!(": {}", first.trim())
            }
        ),
    })
}

fn not_a_worktree(path: &Path, why: &str) -> Error {
    Error::Usage(format!(
        "{} is not a git worktree: {why}. Give the top directory of the worktree the code is \
         written in (`git worktree add PATH`; `pair worktree-path BOARD` prints the default)",
        path.display()
    ))
}

/// A directory that exists.
fn directory(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(not_a_worktree(path, "it is not a directory")),
        Err(_) => Err(not_a_worktree(path, "it does not exist")),
    }
}

/// The cheap check before reading a recorded worktree's diff: the top of a worktree holds its
/// `.git` (a directory, or a file for a linked worktree), so git reads that repository and not
/// one around it. (`advance --worktree` checked the path fully when it was recorded.)
pub(crate) fn recorded(path: &Path) -> Result<()> {
    directory(path)?;
    if std::fs::symlink_metadata(path.join(".git")).is_err() {
        return Err(not_a_worktree(path, "it has no `.git`"));
    }
    Ok(())
}

/// The top of the git worktree `path` is, refusing (exit 4) a path that is not one: missing,
/// not a directory, not in a git worktree, or only a directory inside one.
pub fn worktree_top(path: &Path) -> Result<PathBuf> {
    let not = |why: String| not_a_worktree(path, &why);
    directory(path)?;
    let out = command(path)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .map_err(|e| Error::Git {
            message: match e.kind() {
                std::io::ErrorKind::NotFound => "`git` was not found on PATH; pair runs git to \
                     check worktrees and pin code diffs (install git, or put it on PATH)"
                    .to_string(),
                _ => format!("running git failed: {e}"),
            },
        })?;
    if !out.status.success() {
        return Err(not("git does not know it as a work tree".into()));
    }
    let top = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim_end_matches(['\n', '\r']));
    let same = match (std::fs::canonicalize(path), std::fs::canonicalize(&top)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same {
        return Err(not(format!(
            "it is inside the worktree {}, not its top",
            top.display()
        )));
    }
    Ok(top)
}

/// Whether `s` can be passed to git as a commit id (and never as an option).
pub(crate) fn commit_id(s: &str) -> bool {
    (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The staged diff of a worktree in canonical form: the index against `base` (a commit id), or
/// against `HEAD` when no base is recorded (`git diff --cached`).
pub fn staged_diff(worktree: &Path, base: Option<&str>) -> Result<Vec<u8>> {
    recorded(worktree)?;
    let mut args = vec!["diff", "--cached"];
    args.extend_from_slice(DIFF_OPTIONS);
    if let Some(b) = base {
        if !commit_id(b) {
            return Err(Error::Git {
                message: format!(
                    "base_sha {b:?} on the blackboard is not a commit id (4-64 hex digits); \
                     the staged diff is taken against it"
                ),
            });
        }
        args.push(b);
    }
    args.push("--");
    run(worktree, &args, "read the staged diff").map(canonical)
}

/// The unstaged diff of a worktree (the working tree against the index) in canonical form.
pub fn unstaged_diff(worktree: &Path) -> Result<Vec<u8>> {
    recorded(worktree)?;
    let mut args = vec!["diff"];
    args.extend_from_slice(DIFF_OPTIONS);
    args.push("--");
    run(worktree, &args, "read the unstaged diff").map(canonical)
}

/// The diff between two commits (or trees) of the repository at `dir`, in canonical form: the
/// pinned bytes of a published artifact.
pub fn tree_diff(dir: &Path, from: &str, to: &str) -> Result<Vec<u8>> {
    for id in [from, to] {
        if !commit_id(id) {
            return Err(Error::Git {
                message: format!(
                    "{id:?} is not a commit id; a published diff is taken between two"
                ),
            });
        }
    }
    let mut args = vec!["diff"];
    args.extend_from_slice(DIFF_OPTIONS);
    args.extend_from_slice(&[from, to, "--"]);
    run(dir, &args, "read the published diff").map(canonical)
}

/// The staged content of a file of the worktree (`git cat-file blob :PATH`): the new side of
/// the staged diff, for an objection anchored at a line of it.
pub fn staged_file(worktree: &Path, path: &str) -> Result<Vec<u8>> {
    recorded(worktree)?;
    if path.starts_with('-') || path.contains(['\n', '\0']) {
        return Err(Error::Git {
            message: format!("{path:?} cannot be read from the index"),
        });
    }
    let spec = format!(":{path}");
    run(
        worktree,
        &["cat-file", "blob", &spec],
        "read the staged file",
    )
}

/// Drop the function context git writes after a hunk header (`@@ -1,3 +1,3 @@ fn main`): it
/// comes from `diff.<driver>.xfuncname`, which is configuration, not content. Nothing else in
/// a patch starts with `@@ -` (hunk lines start with a space, `+`, `-` or `\`).
fn canonical(raw: Vec<u8>) -> Vec<u8> {
    if !raw.windows(4).any(|w| w == b"@@ -") {
        return raw;
    }
    let mut out = Vec::with_capacity(raw.len());
    for line in raw.split_inclusive(|b| *b == b'\n') {
        if line.starts_with(b"@@ -")
            && let Some(end) = line[2..].windows(2).position(|w| w == b"@@")
        {
            out.extend_from_slice(&line[..end + 4]);
            out.push(b'\n');
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_headers_lose_their_function_context_and_nothing_else_changes() {
        let raw = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@ fn main() {\n-a\n+b\n \
                    @@ -not a header\n@@ -5 +5 @@\n-c\n+d\n"
            .to_vec();
        let out = canonical(raw);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n @@ -not a header\n\
             @@ -5 +5 @@\n-c\n+d\n"
        );
    }

    #[test]
    fn only_commit_ids_are_passed_as_a_base() {
        assert!(commit_id("1a2b3c4d"));
        assert!(!commit_id("--output=/tmp/x"));
        assert!(!commit_id("abc"));
        assert!(!commit_id("HEAD"));
    }
}
