//! A blackboard in a git ref (`git+<url>#<ref>:<path>`): every "machine" is its own clone
//! directory with its own cache (`PAIR_CACHE_DIR`), and they meet only at a bare repository,
//! over `file://` or through `git daemon` on 127.0.0.1.

use crate::common::bounded::{MARK, Timed, alive_marked, new_mark, run_timed};
use crate::common::prereq::{GIT_DAEMON, require};
use crate::common::{Out, git, git_worktree, pair_bin};
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The shared remote: a bare repository in a temporary directory.
pub(crate) struct Remote {
    pub(crate) dir: TempDir,
}

impl Remote {
    pub(crate) fn new() -> Remote {
        let dir = tempfile::tempdir().unwrap();
        git_in(dir.path(), &["init", "-q", "--bare", "remote.git"]);
        Remote { dir }
    }

    pub(crate) fn bare(&self) -> PathBuf {
        self.dir.path().join("remote.git")
    }

    fn url(&self) -> String {
        format!("file://{}", self.bare().display())
    }

    /// The address of a board in `refname` over `file://`.
    pub(crate) fn board(&self, refname: &str) -> String {
        format!("git+{}#{refname}:task.md", self.url())
    }

    /// Where the ref points on the remote (read without `pair`).
    pub(crate) fn tip(&self, refname: &str) -> Option<String> {
        let out = Command::new("git")
            .args(["--git-dir", self.bare().to_str().unwrap()])
            .args(["rev-parse", "--verify", "--quiet", refname])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The board's bytes at the ref's tip (read without `pair`).
    fn content(&self, refname: &str) -> Vec<u8> {
        let spec = format!("{refname}:task.md");
        let out = Command::new("git")
            .args(["--git-dir", self.bare().to_str().unwrap()])
            .args(["cat-file", "blob", &spec])
            .output()
            .unwrap();
        assert!(out.status.success(), "no board at {spec}");
        out.stdout
    }

    fn text(&self, refname: &str) -> String {
        String::from_utf8(self.content(refname)).unwrap()
    }

    fn commits(&self, refname: &str) -> usize {
        let out = Command::new("git")
            .args(["--git-dir", self.bare().to_str().unwrap()])
            .args(["rev-list", "--count", refname])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }
}

fn git_in(dir: &Path, args: &[&str]) {
    git(dir, args);
}

/// One machine: its own clone of the remote as its working directory, and its own cache.
pub(crate) struct Machine {
    clone: TempDir,
    pub(crate) cache: PathBuf,
    _own_cache: Option<TempDir>,
}

impl Machine {
    pub(crate) fn new(remote: &Remote) -> Machine {
        let clone = tempfile::tempdir().unwrap();
        let out = Command::new("git")
            .args(["clone", "-q", &remote.url(), "."])
            .current_dir(clone.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let cache = tempfile::tempdir().unwrap();
        Machine {
            clone,
            cache: cache.path().to_path_buf(),
            _own_cache: Some(cache),
        }
    }

    /// Another clone on the same machine: it shares this one's cache.
    fn sibling(&self, remote: &Remote) -> Machine {
        let m = Machine::new(remote);
        Machine {
            clone: m.clone,
            cache: self.cache.clone(),
            _own_cache: None,
        }
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(pair_bin());
        c.args(args)
            .current_dir(self.clone.path())
            .env("PAIR_CACHE_DIR", &self.cache)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("PAIR_AGENT")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        c
    }

    #[track_caller]
    pub(crate) fn pair(&self, args: &[&str]) -> Out {
        let mut c = self.command(args);
        run_bounded(&mut c, args)
    }

    /// `pair note BOARD --agent AGENT --section Evidence --note TEXT`.
    #[track_caller]
    fn note(&self, b: &str, agent: &str, text: &str) -> Out {
        self.pair(&[
            "note",
            b,
            "--agent",
            agent,
            "--section",
            "Evidence",
            "--note",
            text,
        ])
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// Run a command, killed after a minute so a hang fails the test instead of stalling it.
#[track_caller]
fn run_bounded(c: &mut Command, args: &[&str]) -> Out {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let child = c.spawn().unwrap();
    let out = finish(child, Duration::from_secs(60));
    let o = Out {
        desc: format!("pair {}", args.join(" ")),
        code: out.status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(&out.status),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        stdout_bytes: out.stdout,
        elapsed: start.elapsed(),
    };
    assert!(
        !o.stderr.contains("panicked at") && o.code != Some(101),
        "`pair` panicked\n{}",
        o.report()
    );
    o
}

/// Run a command against the limit it claims (its `--timeout`): it must end within it and
/// [`crate::common::bounded::SLACK`], leaving no process it started alive.
#[track_caller]
fn pair_within(m: &Machine, args: &[&str], limit: Duration) -> Out {
    let ran = run_timed(vec![(format!("pair {}", args.join(" ")), m.command(args))]);
    ran[0].within(limit).clone()
}

/// Wait until no process carrying `mark` ([`MARK`]) is alive, for `limit` at most: whether none
/// is.
fn all_gone(mark: &str, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    loop {
        let alive = alive_marked(mark);
        if alive.is_empty() {
            return true;
        }
        if Instant::now() >= end {
            eprintln!("still alive: {alive:?}");
            return false;
        }
        sleep(Duration::from_millis(20));
    }
}

/// The board as a machine reads it (through its own cache), copied to a file byte for byte.
fn fetch_board(m: &Machine, b: &str) -> Vec<u8> {
    let copy = m.clone.path().join("read.md");
    let _ = fs::remove_file(&copy);
    m.pair(&["migrate", b, copy.to_str().unwrap()]).code(0);
    fs::read(&copy).unwrap()
}

/// Wait for a child, killing it after `limit`.
fn finish(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            return child.wait_with_output().unwrap();
        }
        sleep(Duration::from_millis(10));
    }
}

fn json(out: &Out) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", out.report()))
}

pub(crate) const REF: &str = "refs/pair/task";

pub(crate) fn init(m: &Machine, board: &str, reviewers: &str) {
    m.pair(&[
        "init",
        board,
        "--doer",
        "doer",
        "--reviewers",
        reviewers,
        "--goal",
        "CSV export",
    ])
    .code(0);
}

#[test]
fn two_reviewers_in_their_own_clones_hand_off_through_poll_wait_on_the_remote() {
    let remote = Remote::new();
    let b = remote.board(REF);
    lifecycle(&remote, &b);
}

#[test]
fn through_git_daemon_two_reviewers_hand_off_through_poll_wait() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let daemon = Daemon::start(remote.dir.path(), None);
    lifecycle(&remote, &daemon.board(REF));
}

/// The doer and two reviewers, each in its own clone with its own cache, from `init` to
/// `READY_TO_COMMIT`, every handoff through `poll --wait` on the remote.
fn lifecycle(remote: &Remote, b: &str) {
    let b = b.to_string();
    let (doer, alice, bob) = (
        Machine::new(remote),
        Machine::new(remote),
        Machine::new(remote),
    );
    init(&doer, &b, "alice,bob");
    alice.pair(&["register", &b, "--agent", "alice"]).code(0);
    bob.pair(&["register", &b, "--agent", "bob"]).code(0);
    doer.pair(&[
        "advance",
        &b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);

    // Both reviewers wait on the remote before the plan exists; the doer's push wakes them.
    let wait = |m: &Machine, agent: &str| {
        m.spawn(&[
            "poll",
            &b,
            "--agent",
            agent,
            "--wait",
            "--interval",
            "0.2",
            "--timeout",
            "60",
            "--json",
        ])
    };
    let (wa, wb) = (wait(&alice, "alice"), wait(&bob, "bob"));
    sleep(Duration::from_millis(300));
    doer.pair(&[
        "submit",
        &b,
        "--agent",
        "doer",
        "plan",
        "--note",
        "Plan v1: add an exporter",
        "--user-approved",
    ])
    .code(0);
    for (who, child) in [("alice", wa), ("bob", wb)] {
        let out = finish(child, Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(0), "{who}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["phase"], "PLANNING_SUBMITTED", "{who}: {v:#}");
        assert_eq!(v["your_turn"], true, "{who}: {v:#}");
        assert!(v["remote"]["tip"].is_string(), "{who}: {v:#}");
    }

    let wd = wait(&doer, "doer");
    approve_round_1(&[(&alice, "alice"), (&bob, "bob")], &b);
    let out = finish(wd, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "doer: {out:?}");

    // Code: the worktree is on the doer's machine; the reviewers read the pinned diff.
    let wt = doer.clone.path().join("wt");
    git_worktree(&wt);
    let wt = wt.to_str().unwrap();
    doer.pair(&[
        "advance",
        &b,
        "--agent",
        "doer",
        "CODING",
        "--worktree",
        wt,
        "--user-approved",
    ])
    .code(0);
    let (wa, wb) = (wait(&alice, "alice"), wait(&bob, "bob"));
    doer.pair(&[
        "submit",
        &b,
        "--agent",
        "doer",
        "code",
        "--note",
        "Exporter done",
    ])
    .code(0);
    for child in [wa, wb] {
        assert_eq!(
            finish(child, Duration::from_secs(60)).status.code(),
            Some(0)
        );
    }
    approve_round_1(&[(&alice, "alice"), (&bob, "bob")], &b);
    let v = json(&doer.pair(&["poll", &b, "--agent", "doer", "--json"]));
    assert_eq!(v["phase"], "READY_TO_COMMIT", "{v:#}");
    assert_eq!(v["your_turn"], true, "{v:#}");
    // To the end: the commit, the merge and the cleanup (a plan-only board records no
    // repository, so they move as the table says); the reviewers' poll then says stop.
    let sha = "0123456789abcdef0123456789abcdef01234567";
    for step in [
        &["COMMITTED", "--commit-sha", sha, "--user-approved"][..],
        &["MERGED", "--merged-into", "main", "--user-approved"][..],
        &["CLEANED_UP"][..],
    ] {
        let mut args = vec!["advance", &b, "--agent", "doer"];
        args.extend_from_slice(step);
        doer.pair(&args).code(0);
    }
    let v = json(&alice.pair(&["poll", &b, "--agent", "alice", "--json"]));
    assert_eq!(v["phase"], "CLEANED_UP", "{v:#}");
    assert_eq!(v["terminal"], true, "{v:#}");

    // The ref's history is the board's: one commit per write, by the writer, named by the
    // command; and the board's journal (read by `pair log`) agrees.
    let writes = 18;
    assert_eq!(remote.commits(REF), writes);
    let authors = Command::new("git")
        .args(["--git-dir", remote.bare().to_str().unwrap()])
        .args(["log", "--format=%an <%ae>|%s", REF])
        .output()
        .unwrap();
    let authors = String::from_utf8_lossy(&authors.stdout).into_owned();
    assert!(
        authors.contains("alice <alice@pair.invalid>|pair verdict"),
        "{authors}"
    );
    assert!(
        authors.contains("doer <doer@pair.invalid>|pair init"),
        "{authors}"
    );
    let log = json(&bob.pair(&["log", &b, "--json"]));
    assert_eq!(
        log["records"].as_array().map(Vec::len),
        Some(writes),
        "{log:#}"
    );
    bob.pair(&["validate", &b]).code(0);
}

/// Each reviewer, from its own machine, claims the review and approves revision 1.
fn approve_round_1(reviewers: &[(&Machine, &str)], b: &str) {
    for (m, agent) in reviewers {
        m.pair(&["claim", b, "--agent", agent]).code(0);
        m.pair(&[
            "verdict",
            b,
            "--agent",
            agent,
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ])
        .code(0);
    }
}

/// A note and a compare-and-swap append, run by one process in its own clone.
fn writer(m: &Machine, b: &str, w: usize, notes: usize, cas: usize) -> (Vec<String>, Vec<String>) {
    let mut acked = Vec::new();
    let mut refused = Vec::new();
    for i in 0..notes {
        let text = format!("note w{w} n{i} done");
        let out = m.pair(&[
            "note",
            b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            &text,
        ]);
        match out.code {
            Some(0) => acked.push(text),
            Some(2) => refused.push(text),
            _ => panic!("{}", out.report()),
        }
    }
    let content = m.clone.path().join("cas.md");
    let mut i = 0;
    while i < cas {
        // Read the board as this machine sees it (its own cache, through `pair`).
        let old = fetch_board(m, b);
        let line = format!("- cas w{w} n{i}\n");
        let mut new = old.clone();
        new.extend_from_slice(line.as_bytes());
        fs::write(&content, &new).unwrap();
        let sha = crate::common::sha256_hex(&old);
        let out = m.pair(&[
            "write",
            b,
            "--content-file",
            content.to_str().unwrap(),
            "--expect-sha256",
            &sha,
            "--operation",
            "cas-append",
        ]);
        match out.code {
            Some(0) => {
                acked.push(line.trim().to_string());
                i += 1;
            }
            // Someone wrote between the read and the push: read again.
            Some(3) => {}
            Some(2) => {
                refused.push(line.trim().to_string());
                i += 1;
            }
            _ => panic!("{}", out.report()),
        }
    }
    (acked, refused)
}

/// Run one `writer` per machine at once, each with its (notes, cas) share; what each had
/// acknowledged and refused.
fn race(
    machines: &[Machine],
    b: &str,
    share: impl Fn(usize) -> (usize, usize) + Sync,
) -> Vec<(Vec<String>, Vec<String>)> {
    std::thread::scope(|s| {
        let handles: Vec<_> = machines
            .iter()
            .enumerate()
            .map(|(w, m)| {
                let share = &share;
                s.spawn(move || {
                    let (notes, cas) = share(w);
                    writer(m, b, w, notes, cas)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Every acknowledged write is on the board exactly once, one commit each after the creation.
#[track_caller]
fn each_acknowledged_write_once(remote: &Remote, results: &[(Vec<String>, Vec<String>)]) {
    let text = remote.text(REF);
    let acked: Vec<&String> = results.iter().flat_map(|(a, _)| a).collect();
    for line in &acked {
        assert_eq!(text.matches(line.as_str()).count(), 1, "{line}");
    }
    assert_eq!(remote.commits(REF), 1 + acked.len());
}

#[test]
fn eight_processes_in_separate_clones_lose_and_duplicate_no_acknowledged_write() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let machines: Vec<Machine> = (0..8).map(|_| Machine::new(&remote)).collect();
    init(&machines[0], &b, "alice");
    let results = race(&machines, &b, |w| if w % 2 == 0 { (4, 0) } else { (1, 2) });
    let text = remote.text(REF);
    let mut acked = 0;
    for (ok, refused) in &results {
        for line in ok {
            assert_eq!(
                text.matches(line.as_str()).count(),
                1,
                "acknowledged write {line:?} must be on the board exactly once"
            );
            acked += 1;
        }
        for line in refused {
            assert_eq!(
                text.matches(line.as_str()).count(),
                0,
                "a write refused as contended must not be on the board: {line:?}"
            );
        }
    }
    let refused: usize = results.iter().map(|(_, r)| r.len()).sum();
    assert_eq!(acked + refused, 4 * 4 + 4 * 3, "{results:?}");
    assert!(
        refused * 4 <= 4 * 4 + 4 * 3,
        "the bounded retries gave up too often: {results:?}"
    );
    // One commit per acknowledged write, after the creation.
    assert_eq!(remote.commits(REF), 1 + acked);
    machines[3].pair(&["validate", &b]).code(0);
}

#[test]
fn writers_sharing_one_cache_on_one_machine_lose_nothing() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let first = Machine::new(&remote);
    let mut machines = vec![];
    for _ in 0..3 {
        machines.push(first.sibling(&remote));
    }
    machines.push(first);
    init(&machines[0], &b, "alice");
    let results = race(&machines, &b, |_| (3, 1));
    each_acknowledged_write_once(&remote, &results);
}

#[test]
fn writers_killed_mid_push_leave_the_ref_at_a_valid_board() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let machines: Vec<Machine> = (0..4).map(|_| Machine::new(&remote)).collect();
    init(&machines[0], &b, "alice");
    for round in 0..3u64 {
        let children: Vec<Child> = machines
            .iter()
            .enumerate()
            .map(|(w, m)| {
                let text = format!("killed r{round} w{w}");
                m.spawn(&[
                    "note",
                    &b,
                    "--agent",
                    "doer",
                    "--section",
                    "Evidence",
                    "--note",
                    &text,
                ])
            })
            .collect();
        // Somewhere inside the read, commit and push of each.
        sleep(Duration::from_millis(30 + 40 * round));
        for mut c in children {
            // SAFETY: a plain signal to our own child.
            unsafe {
                libc::kill(c.id() as i32, libc::SIGKILL);
            }
            let _ = c.wait();
        }
        // The ref points at a commit whose board is valid, and the next write works on it. (A
        // killed writer's git dies with it; a push its git had already handed to the remote may
        // still land, but only on the tip it leased: the ref only ever moves forward.)
        let tip = remote.tip(REF).expect("the ref exists");
        let fresh = Machine::new(&remote);
        fresh.pair(&["validate", &b]).code(0);
        let v = json(&fresh.pair(&["status", &b, "--json"]));
        let seen = v["remote"]["tip"]
            .as_str()
            .unwrap_or_else(|| panic!("{v:#}"));
        let forward = Command::new("git")
            .args(["--git-dir", remote.bare().to_str().unwrap()])
            .args(["merge-base", "--is-ancestor", &tip, seen])
            .status()
            .unwrap();
        assert!(
            forward.success(),
            "status read {seen}, not {tip} or a later tip: {v:#}"
        );
        let after = format!("after r{round}");
        fresh
            .pair(&[
                "note",
                &b,
                "--agent",
                "doer",
                "--section",
                "Evidence",
                "--note",
                &after,
            ])
            .code(0);
        assert!(remote.text(REF).contains(&after));
    }
    // Every commit on the ref holds a valid board, each the child of the one before.
    let list = Command::new("git")
        .args(["--git-dir", remote.bare().to_str().unwrap()])
        .args(["rev-list", "--parents", REF])
        .output()
        .unwrap();
    let checker = Machine::new(&remote);
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        assert!(line.split(' ').count() <= 2, "one parent each: {line}");
        let commit = line.split(' ').next().unwrap();
        let blob = Command::new("git")
            .args(["--git-dir", remote.bare().to_str().unwrap()])
            .args(["cat-file", "blob", &format!("{commit}:task.md")])
            .output()
            .unwrap();
        let file = checker.clone.path().join("at-commit.md");
        fs::write(&file, &blob.stdout).unwrap();
        checker.pair(&["validate", file.to_str().unwrap()]).code(0);
    }
    let fsck = Command::new("git")
        .args([
            "--git-dir",
            remote.bare().to_str().unwrap(),
            "fsck",
            "--no-dangling",
        ])
        .output()
        .unwrap();
    assert!(fsck.status.success(), "{fsck:?}");
}

#[test]
fn a_push_refused_by_a_hook_is_a_clear_error_and_nothing_is_written() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    let before = remote.tip(REF);
    let hook = remote.bare().join("hooks").join("pre-receive");
    fs::write(
        &hook,
        "#!/bin/sh\necho 'policy: boards are frozen this week' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    let out = m.note(&b, "doer", "refused");
    // What the hook printed is the remote's, not repeated (it may hold a secret); git's own line
    // says a hook refused the push.
    out.code(1).mentions(&[
        "pre-receive hook declined",
        "1 line the remote printed not repeated",
        "nothing was written",
    ]);
    assert!(!out.all().contains("boards are frozen"), "{}", out.report());
    assert_eq!(remote.tip(REF), before);
    // Once the hook is gone the same write goes through.
    fs::remove_file(&hook).unwrap();
    m.note(&b, "doer", "accepted").code(0);
    assert!(!remote.text(REF).contains("refused"));
    assert!(remote.text(REF).contains("accepted"));
}

#[test]
fn a_ref_rewritten_by_force_outside_pair_is_detected_and_read_again() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    for i in 0..2 {
        let note = format!("kept {i}");
        m.note(&b, "doer", &note).code(0);
    }
    let seen = remote.tip(REF).unwrap();
    m.pair(&["poll", &b, "--agent", "doer"]).code_in(&[0, 10]);
    // Someone resets the ref two commits back, by force, without pair.
    git_in(&remote.bare(), &["update-ref", REF, &format!("{REF}~2")]);
    let rewritten = remote.tip(REF).unwrap();
    let out = m.pair(&["poll", &b, "--agent", "doer", "--json"]);
    let v = json(&out);
    assert_eq!(v["remote"]["rewritten_from"], seen.as_str(), "{v:#}");
    assert_eq!(v["remote"]["tip"], rewritten.as_str(), "{v:#}");
    // Without --json it is said on stderr; the board read is the one at the new tip.
    git_in(&remote.bare(), &["update-ref", REF, &seen]);
    m.pair(&["poll", &b, "--agent", "doer"]);
    git_in(&remote.bare(), &["update-ref", REF, &rewritten]);
    let out = m.pair(&["status", &b]);
    out.mentions(&["rewritten outside pair", "does not descend"]);
    assert_eq!(fetch_board(&m, &b), remote.content(REF));
}

#[test]
fn a_write_that_keeps_losing_the_race_gives_up_with_exit_2_and_writes_nothing() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let bare = remote.bare();
    let git_bare = |args: &[&str]| {
        let out = Command::new("git")
            .args(["--git-dir", bare.to_str().unwrap()])
            .args(args)
            .env("GIT_AUTHOR_NAME", "mover")
            .env("GIT_AUTHOR_EMAIL", "mover@example.invalid")
            .env("GIT_COMMITTER_NAME", "mover")
            .env("GIT_COMMITTER_EMAIL", "mover@example.invalid")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let out = std::thread::scope(|s| {
        // Someone outside pair keeps moving the ref (same board, new commits) faster than a
        // write can read, commit and push.
        s.spawn(|| {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let tip = git_bare(&["rev-parse", REF]);
                let tree = format!("{tip}^{{tree}}");
                let msg = format!("move {n}");
                let new = git_bare(&["commit-tree", &tree, "-p", &tip, "-m", &msg]);
                git_bare(&["update-ref", REF, &new, &tip]);
                n += 1;
            }
        });
        let out = pair_within(
            &m,
            &[
                "note",
                &b,
                "--agent",
                "doer",
                "--section",
                "Evidence",
                "--note",
                "never lands",
                "--timeout",
                "1",
            ],
            Duration::from_secs(1),
        );
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        out
    });
    out.code(2).mentions(&["moved under each of", "pushes"]);
    assert!(!remote.text(REF).contains("never lands"));
    assert!(out.stderr.contains("retry later"), "{}", out.report());
}

#[test]
fn init_is_refused_on_an_existing_ref() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    let before = remote.content(REF);
    let other = Machine::new(&remote);
    other
        .pair(&["init", &b, "--doer", "doer", "--reviewers", "bob"])
        .code(7)
        .mentions(&["already exists"]);
    // Another file in the same ref is refused too: creation makes the ref.
    let elsewhere = format!("git+{}#{REF}:other.md", remote.url());
    other
        .pair(&["init", &elsewhere, "--doer", "doer", "--reviewers", "bob"])
        .code(7);
    assert_eq!(remote.content(REF), before);
    assert_eq!(remote.commits(REF), 1);
}

#[test]
fn migrate_copies_a_board_to_a_ref_and_back_byte_for_byte_and_never_clobbers() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let local = m.clone.path().join("task.md");
    let l = local.to_str().unwrap();
    m.pair(&["init", l, "--doer", "doer", "--reviewers", "alice"])
        .code(0);
    m.pair(&[
        "note",
        l,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "local note",
    ])
    .code(0);
    let original = fs::read(&local).unwrap();
    let b = remote.board(REF);
    m.pair(&["migrate", l, &b]).code(0);
    assert_eq!(
        remote.content(REF),
        original,
        "the ref holds the same bytes"
    );
    // The copy is a working board: another machine writes to it.
    let other = Machine::new(&remote);
    other
        .pair(&[
            "note",
            &b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "remote note",
        ])
        .code(0);
    let at_tip = remote.content(REF);
    let back = other.clone.path().join("back.md");
    other.pair(&["migrate", &b, back.to_str().unwrap()]).code(0);
    assert_eq!(
        fs::read(&back).unwrap(),
        at_tip,
        "the file holds the same bytes"
    );
    other.pair(&["validate", back.to_str().unwrap()]).code(0);
    // Neither direction overwrites.
    m.pair(&["migrate", l, &b]).code(7);
    assert_eq!(remote.content(REF), at_tip);
    other.pair(&["migrate", &b, back.to_str().unwrap()]).code(7);
    assert_eq!(fs::read(&back).unwrap(), at_tip);
}

#[test]
fn a_bad_git_address_is_refused_with_exit_4_naming_the_wrong_part() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let url = remote.url();
    for (address, part) in [
        (format!("git+{url}"), "#<ref>"),
        (format!("git+{url}#main"), "not a full ref name"),
        (format!("git+{url}#refs/pair/a..b"), "`..`"),
        (
            format!("git+{url}#refs/pair/t:../up.md"),
            "path in the tree",
        ),
        ("git+#refs/pair/t".to_string(), "URL is empty"),
    ] {
        for cmd in [
            vec!["poll", address.as_str(), "--agent", "doer"],
            vec!["status", address.as_str()],
            vec!["init", address.as_str(), "--doer", "doer"],
            vec![
                "note",
                address.as_str(),
                "--agent",
                "doer",
                "--section",
                "Evidence",
                "--note",
                "x",
            ],
        ] {
            m.pair(&cmd).code(4).mentions(&[part, "git+<remote-url>"]);
        }
    }
    assert_eq!(remote.tip(REF), None, "nothing was created");
}

#[test]
fn a_raw_write_with_a_stale_expect_sha256_exits_3_and_a_current_one_is_written() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let (m, other) = (Machine::new(&remote), Machine::new(&remote));
    init(&m, &b, "alice");
    let read = remote.content(REF);
    let sha = crate::common::sha256_hex(&read);
    // Another machine writes after this one read.
    other
        .pair(&[
            "note",
            &b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "moved",
        ])
        .code(0);
    let moved = remote.content(REF);
    let mut new = read.clone();
    new.extend_from_slice(b"- appended\n");
    let file = m.clone.path().join("new.md");
    fs::write(&file, &new).unwrap();
    let f = file.to_str().unwrap();
    m.pair(&["write", &b, "--content-file", f, "--expect-sha256", &sha])
        .code(3)
        .mentions(&["stale", &crate::common::sha256_hex(&moved)]);
    assert_eq!(remote.content(REF), moved);
    let mut new = moved.clone();
    new.extend_from_slice(b"- appended\n");
    fs::write(&file, &new).unwrap();
    let sha = crate::common::sha256_hex(&moved);
    m.pair(&["write", &b, "--content-file", f, "--expect-sha256", &sha])
        .code(0);
    assert!(remote.text(REF).contains("- appended\n"));
}

#[test]
fn status_reads_the_cache_when_the_remote_is_unreachable_and_says_how_old_it_is() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    m.pair(&["status", &b]).code(0);
    let moved = remote.dir.path().join("moved.git");
    fs::rename(remote.bare(), &moved).unwrap();
    let v = json(&m.pair(&["status", &b, "--json"]));
    assert_eq!(v["remote"]["offline"], true, "{v:#}");
    assert!(v["remote"]["cache_age_s"].is_u64(), "{v:#}");
    assert_eq!(v["phase"], "DRAFT");
    m.pair(&["status", &b])
        .code(0)
        .mentions(&["OFFLINE", "s ago"]);
    // A write needs the remote: a clear error, exit 1.
    m.note(&b, "doer", "x")
        .code(1)
        .mentions(&["cannot reach the remote"]);
    fs::rename(&moved, remote.bare()).unwrap();
}

#[test]
fn log_follow_on_a_git_board_prints_the_new_records_from_another_clone() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let (doer, watcher) = (Machine::new(&remote), Machine::new(&remote));
    init(&doer, &b, "alice");
    let follow = watcher.spawn(&["log", &b, "--follow", "--timeout", "30", "--json"]);
    sleep(Duration::from_millis(500));
    doer.note(&b, "doer", "seen remotely").code(0);
    doer.pair(&["stop", &b, "--agent", "doer", "--reason", "done"])
        .code(0);
    let out = finish(follow, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let commands: Vec<&str> = lines.iter().filter_map(|l| l["command"].as_str()).collect();
    assert_eq!(commands, ["init", "note", "stop"], "{text}");
    assert_eq!(lines.last().unwrap()["ended"], "terminal", "{text}");
}

#[test]
fn without_git_on_path_a_git_board_is_a_clear_error_and_a_file_board_still_works() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let b = remote.board(REF);
    let empty = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut c = m.command(args);
        c.env("PATH", empty.path());
        run_bounded(&mut c, args)
    };
    run(&["init", &b, "--doer", "doer"])
        .code(1)
        .mentions(&["`git` was not found on PATH", "git board"]);
    run(&["poll", &b, "--agent", "doer"])
        .code(1)
        .mentions(&["`git` was not found on PATH"]);
    let local = m.clone.path().join("t.md");
    run(&["init", local.to_str().unwrap(), "--doer", "doer"]).code(0);
    assert_eq!(remote.tip(REF), None);
}

// ---------------------------------------------------------------------------------------------
// git daemon

use crate::common::daemon::{Daemon, daemon_installed};

#[test]
fn through_git_daemon_a_stopped_remote_is_exit_1_nothing_lost_and_writes_resume() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let mut daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let (doer, alice) = (Machine::new(&remote), Machine::new(&remote));
    init(&doer, &b, "alice");
    alice.pair(&["register", &b, "--agent", "alice"]).code(0);
    doer.note(&b, "doer", "before the outage").code(0);
    let before = remote.content(REF);

    daemon.stop();
    let out = doer.note(&b, "doer", "during the outage");
    out.code(1)
        .mentions(&["cannot reach the remote", "127.0.0.1"]);
    alice
        .pair(&["poll", &b, "--agent", "alice"])
        .code(1)
        .mentions(&["cannot reach the remote"]);
    assert_eq!(remote.content(REF), before, "nothing was written");

    let port = daemon.port;
    let base = daemon.base.clone();
    let _daemon = Daemon::start(&base, Some(port));
    doer.note(&b, "doer", "after the outage").code(0);
    let text = remote.text(REF);
    assert!(text.contains("before the outage") && text.contains("after the outage"));
    assert!(!text.contains("during the outage"));
    let v = json(&alice.pair(&["status", &b, "--json"]));
    assert_eq!(v["remote"]["offline"], false, "{v:#}");
    alice.pair(&["validate", &b]).code(0);
}

#[test]
fn through_git_daemon_a_waiting_poll_outlives_an_outage_and_wakes_on_the_next_write() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let mut daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let (doer, alice) = (Machine::new(&remote), Machine::new(&remote));
    init(&doer, &b, "alice");
    alice.pair(&["register", &b, "--agent", "alice"]).code(0);
    doer.pair(&[
        "advance",
        &b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    let waiting = alice.spawn(&[
        "poll",
        &b,
        "--agent",
        "alice",
        "--wait",
        "--interval",
        "0.2",
        "--timeout",
        "60",
    ]);
    sleep(Duration::from_millis(500));
    daemon.stop();
    sleep(Duration::from_millis(600));
    let (port, base) = (daemon.port, daemon.base.clone());
    let _daemon = Daemon::start(&base, Some(port));
    doer.pair(&[
        "submit",
        &b,
        "--agent",
        "doer",
        "plan",
        "--note",
        "Plan v1",
        "--user-approved",
    ])
    .code(0);
    let out = finish(waiting, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("still waiting"), "{stderr}");
    // A remote that never answered is an error at once, not a wait.
    let nowhere = format!("git+git://127.0.0.1:1/remote.git#{REF}");
    pair_within(
        &alice,
        &[
            "poll",
            &nowhere,
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "60",
        ],
        Duration::ZERO,
    )
    .code(1)
    .mentions(&["cannot reach the remote"]);
}

#[test]
fn through_git_daemon_concurrent_writers_in_separate_clones_lose_nothing() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let machines: Vec<Machine> = (0..4).map(|_| Machine::new(&remote)).collect();
    init(&machines[0], &b, "alice");
    let results = race(&machines, &b, |_| (3, 0));
    each_acknowledged_write_once(&remote, &results);
}

#[test]
fn presence_and_the_watchdog_state_of_a_git_board_live_in_the_cache_not_under_the_working_directory()
 {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    let before = remote.content(REF);
    m.pair(&["poll", &b, "--agent", "alice"]).code(0);
    m.pair(&["watch", &b, "--once"]).code(0);
    let stray: Vec<String> = std::fs::read_dir(m.clone.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("git+") || n.ends_with(".pair"))
        .collect();
    assert!(
        stray.is_empty(),
        "left under the working directory: {stray:?}"
    );
    let side = m.cache.join("side");
    let boards: Vec<PathBuf> = std::fs::read_dir(&side)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(boards.len(), 1, "{boards:?}");
    assert!(boards[0].join("presence").join("alice.json").is_file());
    // Neither reading nor watching writes the board.
    assert_eq!(remote.content(REF), before);
    assert_eq!(remote.commits(REF), 1);
    // The watchdog's own writes go to the remote like every other write.
    m.pair(&[
        "away",
        &b,
        "--agent",
        "doer",
        "--until",
        "1h",
        "--reason",
        "long build",
    ])
    .code(0);
    m.pair(&[
        "extend",
        &b,
        "--agent",
        "doer",
        "--sla",
        "review=4h",
        "--reason",
        "holiday",
        "--user-approved",
    ])
    .code(0);
    assert_eq!(remote.commits(REF), 3);
    let text = remote.text(REF);
    assert!(
        text.contains("cmd=away") && text.contains("review: 4h"),
        "{text}"
    );
}

#[test]
fn a_password_in_the_remote_url_is_refused_and_never_printed_back() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let secret = "s3cretPW";
    let b = format!(
        "git+file://bob:{secret}@{}#{REF}:task.md",
        remote.bare().display()
    );
    for cmd in [
        vec!["init", b.as_str(), "--doer", "doer", "--reviewers", "alice"],
        vec!["status", b.as_str()],
        vec!["status", b.as_str(), "--json"],
        vec!["poll", b.as_str(), "--agent", "alice"],
    ] {
        let out = m.pair(&cmd);
        out.code(4).mentions(&["holds a password", "bob:***@"]);
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "{}",
            out.report()
        );
    }
    assert_eq!(remote.tip(REF), None, "nothing was created");
    let cached = Command::new("grep")
        .args(["-r", "-l", secret])
        .arg(&m.cache)
        .output()
        .unwrap();
    assert!(
        cached.stdout.is_empty(),
        "the secret was stored: {cached:?}"
    );
}

#[test]
fn the_users_git_configuration_and_hooks_do_not_change_a_git_board() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    // A hook directory whose hooks refuse everything in pair's cache (and nothing in the
    // remote, which is the user's own repository and runs them too over file://).
    let hooks = m.clone.path().join("user-hooks");
    fs::create_dir(&hooks).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$PWD\" in {}*) echo 'user hook refuses' >&2; exit 1;; esac\nexit 0\n",
        m.cache.display()
    );
    use std::os::unix::fs::PermissionsExt;
    for name in ["reference-transaction", "pre-push", "post-index-change"] {
        let hook = hooks.join(name);
        fs::write(&hook, &script).unwrap();
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let config = m.clone.path().join("user-gitconfig");
    fs::write(
        &config,
        format!(
            "[core]\n\thooksPath = {}\n[commit]\n\tgpgSign = true\n[user]\n\tuseConfigOnly = true\n\
             [push]\n\tdefault = nothing\n[fetch]\n\tprune = true\n[color]\n\tui = always\n",
            hooks.display()
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut c = m.command(args);
        c.env("GIT_CONFIG_GLOBAL", &config);
        run_bounded(&mut c, args)
    };
    run(&["init", &b, "--doer", "doer", "--reviewers", "alice"]).code(0);
    run(&["register", &b, "--agent", "alice"]).code(0);
    run(&[
        "note",
        &b,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "configured",
    ])
    .code(0);
    let v = json(&run(&["status", &b, "--json"]));
    assert_eq!(v["phase"], "DRAFT", "{v:#}");
    assert!(remote.text(REF).contains("configured"));
    assert_eq!(remote.commits(REF), 3);
}

/// Every file of the cache's object store.
fn cache_objects(cache: &Path) -> Vec<PathBuf> {
    let mut found = vec![];
    let mut dirs = vec![cache.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p
                .parent()
                .and_then(|q| q.parent())
                .is_some_and(|q| q.ends_with("objects"))
            {
                found.push(p);
            }
        }
    }
    found
}

#[test]
fn a_damaged_cache_is_not_moved_from_under_a_process_using_it() {
    use std::os::unix::fs::PermissionsExt;
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    let before = remote.text(REF);
    let all = cache_objects(&m.cache);
    assert!(!all.is_empty());
    for o in all {
        fs::set_permissions(&o, fs::Permissions::from_mode(0o644)).unwrap();
        fs::write(&o, b"garbage").unwrap();
    }
    // Another process uses the cache: it holds the cache's lock shared, as `pair` does.
    let locks: Vec<fs::File> = fs::read_dir(&m.cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "lock"))
        .map(|p| fs::File::open(p).unwrap())
        .collect();
    assert!(!locks.is_empty(), "no lock file beside the cache");
    for l in &locks {
        l.lock_shared().unwrap();
    }
    let cache_dirs = || -> Vec<PathBuf> {
        fs::read_dir(&m.cache)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "git"))
            .collect()
    };
    let kept = cache_dirs();
    m.note(&b, "doer", "while in use").code(1);
    assert_eq!(cache_dirs(), kept, "the cache was moved while in use");
    assert_eq!(remote.text(REF), before, "a failed write changed the board");
    drop(locks);
    m.note(&b, "doer", "once alone").code(0);
    let text = remote.text(REF);
    assert_eq!(text.matches("once alone").count(), 1);
    assert!(!text.contains("while in use"));
}

#[test]
fn a_damaged_cache_is_rebuilt_from_the_remote_not_an_error_forever() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    let objects = || cache_objects(&m.cache);
    let garble = || {
        use std::os::unix::fs::PermissionsExt;
        let all = objects();
        assert!(!all.is_empty());
        for o in all {
            fs::set_permissions(&o, fs::Permissions::from_mode(0o644)).unwrap();
            fs::write(&o, b"garbage").unwrap();
        }
    };
    let note = |text: &str| {
        m.note(&b, "doer", text).code(0);
    };
    garble();
    m.pair(&["status", &b]).code(0).mentions(&["DRAFT"]);
    note("after a read");
    garble();
    note("at once");
    for o in objects() {
        fs::remove_file(o).unwrap();
    }
    note("objects gone");
    // Only the board's blobs gone: the commit and tree are there, the board is not missing.
    for o in objects() {
        let name = format!(
            "{}{}",
            o.parent().unwrap().file_name().unwrap().to_string_lossy(),
            o.file_name().unwrap().to_string_lossy()
        );
        let kind = Command::new("git")
            .arg("--git-dir")
            .arg(o.parent().unwrap().parent().unwrap().parent().unwrap())
            .args(["cat-file", "-t", &name])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&kind.stdout).trim() == "blob" {
            fs::remove_file(o).unwrap();
        }
    }
    m.pair(&["status", &b]).code(0).mentions(&["DRAFT"]);
    note("blobs gone");
    let text = remote.text(REF);
    for n in ["after a read", "at once", "objects gone", "blobs gone"] {
        assert_eq!(text.matches(n).count(), 1, "{n}");
    }
    assert_eq!(remote.commits(REF), 5);
}

#[test]
fn processes_creating_one_cache_at_once_all_succeed() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    for round in 0..4 {
        let cache = m.clone.path().join(format!("fresh-cache-{round}"));
        let children: Vec<Child> = (0..6)
            .map(|_| {
                m.command(&["status", &b, "--json"])
                    .env("PAIR_CACHE_DIR", &cache)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = finish(child, Duration::from_secs(60));
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn a_commit_another_process_is_still_fetching_into_the_cache_is_fetched_not_read() {
    // Another process sharing the cache fetches the remote's new tip: git writes the fetched
    // objects one by one (a small fetch unpacks them as loose objects, the commit first) and
    // moves the cache's ref only once they are all in place. Caught midway: the commit and its
    // tree are in the cache, the board's blob not yet, the ref not moved, and that process
    // holds the cache's lock, so the cache is not rebuilt from under it.
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    Machine::new(&remote)
        .note(&b, "doer", "the new tip")
        .code(0);
    let tip = remote.tip(REF).unwrap();
    let cache = fs::read_dir(&m.cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "git"))
        .expect("the machine's cache");
    let copy = |kind: &str, oid: &str| {
        let object = Command::new("git")
            .arg("--git-dir")
            .arg(remote.bare())
            .args(["cat-file", kind, oid])
            .output()
            .unwrap();
        assert!(object.status.success(), "{object:?}");
        let mut w = Command::new("git")
            .arg("--git-dir")
            .arg(&cache)
            .args(["hash-object", "-t", kind, "-w", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        w.stdin.take().unwrap().write_all(&object.stdout).unwrap();
        let out = w.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), oid);
    };
    let tree = String::from_utf8(
        Command::new("git")
            .arg("--git-dir")
            .arg(remote.bare())
            .args(["rev-parse", &format!("{tip}^{{tree}}")])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    copy("commit", &tip);
    copy("tree", tree.trim());
    let lock = fs::read_dir(&m.cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "lock"))
        .map(|p| fs::File::open(p).unwrap())
        .expect("the cache's lock file");
    lock.lock_shared().unwrap();
    let v = json(m.pair(&["status", &b, "--json"]).code(0));
    assert_eq!(v["remote"]["tip"], tip.as_str(), "{v:#}");
    assert_eq!(v["remote"]["fetched"], true, "{v:#}");
    m.pair(&["show", &b, "Evidence"])
        .code(0)
        .mentions(&["the new tip"]);
    drop(lock);
}

#[test]
fn a_push_that_landed_though_git_reported_it_failed_is_not_applied_again() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    let armed = landing_hook(&remote, 0);
    m.note(&b, "doer", "exactly once").code(0);
    assert!(!armed.exists(), "the hook did not run");
    assert_eq!(remote.text(REF).matches("exactly once").count(), 1);
    // init, the note, the other writer's commit.
    assert_eq!(remote.commits(REF), 3);
}

/// Arm a hook on the remote: the next push is taken, another writer builds on it at once, and
/// the connection breaks before the pusher hears that its push was accepted, `pause` seconds
/// later. The file that arms it (removed when it fires).
fn landing_hook(remote: &Remote, pause: u32) -> PathBuf {
    let armed = remote.dir.path().join("armed");
    let hook = remote.bare().join("hooks").join("reference-transaction");
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\n[ \"$1\" = committed ] || exit 0\n[ -e '{armed}' ] || exit 0\n\
             rm -f '{armed}'\nread old new ref\n\
             export GIT_AUTHOR_NAME=o GIT_AUTHOR_EMAIL=o@o GIT_COMMITTER_NAME=o GIT_COMMITTER_EMAIL=o@o\n\
             c=$(git commit-tree \"$new^{{tree}}\" -p \"$new\" -m other)\n\
             git update-ref \"$ref\" \"$c\" \"$new\"\nsleep {pause}\nkill -9 $PPID\n",
            armed = armed.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(&armed, b"").unwrap();
    armed
}

#[test]
fn a_write_out_of_retries_whose_last_push_landed_reports_it_written_not_busy() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    // Another machine writes first, so this one's first push (on its cached tip) is refused
    // and its next is the one that lands unheard, two seconds into its --timeout of 4: no time
    // is left for another attempt as long, so the write gives up, and looks once more.
    let other = Machine::new(&remote);
    let note = |m: &Machine, text: &str, timeout: &str| {
        m.pair(&[
            "note",
            &b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            text,
            "--timeout",
            timeout,
        ])
    };
    note(&other, "first", "10").code(0);
    let armed = landing_hook(&remote, 2);
    pair_within(
        &m,
        &[
            "note",
            &b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "landed unheard",
            "--timeout",
            "4",
        ],
        Duration::from_secs(4),
    )
    .code(0);
    assert!(!armed.exists(), "the hook did not run");
    assert_eq!(remote.text(REF).matches("landed unheard").count(), 1);
    // init, the other note, this note, the hook's commit.
    assert_eq!(remote.commits(REF), 4);
}

#[test]
fn validate_of_a_git_board_that_is_not_there_exits_7_like_a_missing_file() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    m.pair(&["validate", &remote.board(REF)])
        .code(7)
        .mentions(&["no such blackboard"]);
    let b = remote.board(REF);
    init(&m, &b, "alice");
    m.pair(&["validate", &b]).code(0);
    let elsewhere = format!("git+{}#{REF}:other.md", remote.url());
    m.pair(&["validate", &elsewhere]).code(7);
}

/// A board at CODE_SUBMITTED whose code round 1 the doer published; the doer's worktree is in
/// its own clone. The artifact ref, as the remote lists it.
fn code_submitted(remote: &Remote, doer: &Machine, alice: &Machine, b: &str) -> String {
    init(doer, b, "alice");
    alice.pair(&["register", b, "--agent", "alice"]).code(0);
    for step in [
        &[
            "advance",
            b,
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ][..],
        &[
            "submit",
            b,
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--user-approved",
        ][..],
    ] {
        doer.pair(step).code(0);
    }
    alice
        .pair(&[
            "verdict",
            b,
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ])
        .code(0);
    let wt = doer.clone.path().join("wt");
    git_worktree(&wt);
    let wt = wt.to_str().unwrap();
    doer.pair(&[
        "advance",
        b,
        "--agent",
        "doer",
        "CODING",
        "--worktree",
        wt,
        "--user-approved",
    ])
    .code(0);
    doer.pair(&["submit", b, "--agent", "doer", "code", "--note", "done"])
        .code(0);
    artifact_refs(remote)
        .pop()
        .expect("the code round was published")
}

/// The refs under `refs/pair-artifacts/` on the remote.
fn artifact_refs(remote: &Remote) -> Vec<String> {
    let out = Command::new("git")
        .args(["--git-dir", remote.bare().to_str().unwrap()])
        .args([
            "for-each-ref",
            "--format=%(refname)",
            "refs/pair-artifacts/",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_published_artifact_replaced_on_the_remote_is_refused_by_diff_and_verdict() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let (doer, alice) = (Machine::new(&remote), Machine::new(&remote));
    let art = code_submitted(&remote, &doer, &alice, &b);
    let pin = json(&alice.pair(&["poll", &b, "--agent", "alice", "--json"]))["review"]["artifact"]
        .clone();
    assert_eq!(pin["ref"], art.as_str(), "{pin:#}");
    // Someone moves the artifact's ref to another commit (the board's own tip will do).
    let bare = remote.bare();
    git(&bare, &["update-ref", &art, REF]);
    // A reviewer on a machine that never fetched it is refused, whatever it runs.
    let carol = Machine::new(&remote);
    let d = carol.pair(&["diff", &b, "--json"]);
    let e = d.json_error(15);
    assert_eq!(e["kind"], "artifact_mismatch", "{}", d.report());
    d.mentions(&["changed after the submission", &art]);
    let before = remote.tip(REF);
    alice.pair(&["claim", &b, "--agent", "alice"]).code(0);
    let before_verdict = remote.tip(REF);
    let fresh = Machine::new(&remote);
    fresh
        .pair(&[
            "verdict",
            &b,
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            pin["sha256"].as_str().unwrap(),
            "--note",
            "ok",
        ])
        .code(15)
        .mentions(&["Nothing was recorded"]);
    assert_eq!(remote.tip(REF), before_verdict, "nothing was written");
    assert_ne!(before, None);
}

#[test]
fn a_submission_whose_push_fails_leaves_neither_the_board_write_nor_the_artifact() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let (doer, alice) = (Machine::new(&remote), Machine::new(&remote));
    let first = code_submitted(&remote, &doer, &alice, &b);
    // The remote refuses any new artifact ref (an `update` hook judges each ref on its own):
    // the atomic push takes the board's ref down with it.
    let hook = remote.bare().join("hooks").join("update");
    fs::write(
        &hook,
        "#!/bin/sh\ncase \"$1\" in refs/pair-artifacts/*) echo 'no artifacts today' >&2; exit 1;; esac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    let before = remote.tip(REF);
    let wt = doer.clone.path().join("wt");
    fs::write(wt.join("lib.txt"), "one\ntwo\nfour\n").unwrap();
    git(&wt, &["add", "lib.txt"]);
    doer.pair(&["submit", &b, "--agent", "doer", "code", "--note", "again"])
        .code(1)
        .mentions(&["hook declined", "the remote printed not repeated"]);
    assert_eq!(remote.tip(REF), before, "the board's write did not land");
    assert_eq!(
        artifact_refs(&remote),
        vec![first.clone()],
        "nor the artifact"
    );
    // Without the hook the same submission (a resubmission of the changed code) lands, both at
    // once.
    fs::remove_file(&hook).unwrap();
    doer.pair(&["submit", &b, "--agent", "doer", "code", "--note", "again"])
        .code(0);
    assert_eq!(artifact_refs(&remote).len(), 2);
    assert!(remote.text(REF).contains("again"));
}

#[test]
fn a_token_or_a_query_in_a_git_address_is_refused_and_never_printed_or_stored() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let secret = "T0KEN5ecret";
    // Nothing listens on port 1: with the address accepted, the token would be in the error.
    for b in [
        format!("git+https://{secret}@127.0.0.1:1/r.git#{REF}:task.md"),
        format!("git+http://{secret}:x-oauth-basic@127.0.0.1:1/r.git#{REF}"),
        format!("git+https://127.0.0.1:1/r.git?access_token={secret}#{REF}"),
        format!(
            "git+file://{}?access_token={secret}#{REF}:task.md",
            remote.bare().display()
        ),
    ] {
        for cmd in [
            vec!["init", b.as_str(), "--doer", "doer", "--reviewers", "alice"],
            vec!["status", b.as_str()],
            vec!["status", b.as_str(), "--json"],
            vec!["poll", b.as_str(), "--agent", "alice"],
            vec![
                "note",
                b.as_str(),
                "--agent",
                "doer",
                "--section",
                "Evidence",
                "--note",
                "x",
            ],
        ] {
            let out = m.pair(&cmd);
            out.code(4).mentions(&["credential helper", "***"]);
            assert!(
                !out.stdout.contains(secret) && !out.stderr.contains(secret),
                "{}",
                out.report()
            );
        }
    }
    assert_eq!(remote.tip(REF), None, "nothing was created");
    let cached = Command::new("grep")
        .args(["-r", "-l", secret])
        .arg(&m.cache)
        .output()
        .unwrap();
    assert!(
        cached.stdout.is_empty(),
        "the secret was stored: {cached:?}"
    );
    // A user name alone names an ssh account: the address is taken, and shown as written.
    let account = format!("git+ssh://git@127.0.0.1:1/r.git#{REF}");
    let mut c = m.command(&["status", &account]);
    c.env("GIT_SSH_COMMAND", "false");
    run_bounded(&mut c, &["status", &account])
        .code(1)
        .mentions(&["cannot reach the remote ssh://git@127.0.0.1:1/r.git"]);
    // What is recorded (the commit message; Decisions after a gate) is the command as written.
    let b = remote.board(REF);
    init(&m, &b, "alice");
    m.pair(&[
        "advance",
        &b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    let message = Command::new("git")
        .args(["--git-dir", remote.bare().to_str().unwrap()])
        .args(["log", "-1", "--format=%B", REF])
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&message.stdout).into_owned();
    assert!(
        message.starts_with("pair advance '") && message.contains(&b),
        "{message}"
    );
    let text = remote.text(REF);
    let decisions = &text[text.find("## Decisions").unwrap()..];
    assert!(decisions.contains(&b), "{decisions}");
}

#[test]
fn a_git_board_over_the_size_limit_is_refused_before_it_is_read() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    // Someone commits to the ref, outside pair, a board one byte over the 64 MiB limit: a
    // valid frontmatter, then blank lines (a few kilobytes once packed).
    let mut big = remote.content(REF);
    big.resize(64 * 1024 * 1024 + 1, b'\n');
    let bare = remote.bare();
    let plumb = |args: &[&str], input: Option<&[u8]>| -> String {
        let mut c = Command::new("git");
        c.arg("--git-dir").arg(&bare).args(args);
        c.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        if let Some(bytes) = input {
            use std::io::Write;
            stdin.write_all(bytes).unwrap();
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let blob = plumb(&["hash-object", "-w", "--stdin"], Some(&big));
    drop(big);
    let tree = plumb(
        &["mktree"],
        Some(format!("100644 blob {blob}\ttask.md\n").as_bytes()),
    );
    let tip = remote.tip(REF).unwrap();
    let commit = plumb(&["commit-tree", &tree, "-p", &tip, "-m", "big"], None);
    plumb(&["update-ref", REF, &commit], None);
    for cmd in [
        vec!["poll", b.as_str(), "--agent", "alice"],
        vec!["status", b.as_str()],
        vec!["validate", b.as_str()],
        vec![
            "note",
            b.as_str(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
            "--timeout",
            "600",
        ],
    ] {
        // Fetching the blob (its size is asked of the fetched object) takes a few seconds of
        // CPU; on a loaded machine that is more than the default limit, which is not what
        // this test is about.
        let mut c = m.command(&cmd);
        c.env("PAIR_GIT_TIMEOUT", "600");
        run_bounded(&mut c, &cmd)
            .code(5)
            .mentions(&["over the 64 MiB limit", "67108865 bytes"]);
    }
    assert_eq!(remote.tip(REF).as_deref(), Some(commit.as_str()));
}

/// A remote that never answers: a listener on 127.0.0.1 that accepts every connection and
/// then neither reads nor writes. It keeps what it accepted, to check each is closed in the
/// end by the other side (nothing `pair` started is still connected).
struct Stalled {
    port: u16,
    accepted: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Stalled {
    fn start(port: Option<u16>) -> Stalled {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0))).unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let accepted = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (keep, done) = (accepted.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                match listener.accept() {
                    Ok((s, _)) => keep.lock().unwrap().push(s),
                    Err(_) => sleep(Duration::from_millis(10)),
                }
            }
        });
        Stalled {
            port,
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    fn board(&self, scheme: &str) -> String {
        format!(
            "git+{scheme}://127.0.0.1:{}/remote.git#{REF}:task.md",
            self.port
        )
    }

    fn accepted(&self) -> usize {
        self.accepted.lock().unwrap().len()
    }

    /// Whether every connection accepted was closed by the other side within `limit`.
    fn all_closed(&self, limit: Duration) -> bool {
        use std::io::Read;
        let end = Instant::now() + limit;
        let mut conns = self.accepted.lock().unwrap();
        conns.iter_mut().all(|s| {
            let mut buf = [0u8; 4096];
            loop {
                let left = end.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return false;
                }
                s.set_read_timeout(Some(left)).unwrap();
                match s.read(&mut buf) {
                    Ok(0) => return true,
                    Ok(_) => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                    Err(_) => return false,
                }
            }
        })
    }
}

impl Drop for Stalled {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_stalled_remote_is_given_up_at_the_timeout_and_no_git_is_left_running() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let stall = Stalled::start(None);
    let (over_git, over_http) = (stall.board("git"), stall.board("http"));
    let fd = format!("git+fd::7#{REF}");
    let words = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<String>>();
    let note = |b: &str| {
        words(&[
            "note",
            b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "stalled",
            "--timeout",
            "3",
        ])
    };
    // (command, its limit: its --timeout or the 10 s default)
    let cases = [
        (note(&over_http), 3),
        (note(&over_git), 3),
        (
            words(&[
                "poll",
                &over_git,
                "--agent",
                "alice",
                "--wait",
                "--timeout",
                "5",
            ]),
            5,
        ),
        (words(&["poll", &over_http, "--agent", "alice"]), 10),
        (words(&["status", &over_git]), 10),
        (words(&["status", &fd]), 10),
        (
            words(&["init", &over_http, "--doer", "doer", "--timeout", "3"]),
            3,
        ),
    ];
    let ran = run_timed(
        cases
            .iter()
            .map(|(c, _)| {
                let args: Vec<&str> = c.iter().map(String::as_str).collect();
                (format!("pair {}", c.join(" ")), m.command(&args))
            })
            .collect(),
    );
    for (t, (_, limit)) in ran.iter().zip(&cases) {
        // Within its limit and 2 s, with nothing it started left running.
        t.within(Duration::from_secs(*limit))
            .code(1)
            .mentions(&["cannot reach the remote", "was stopped"]);
    }
    assert!(stall.accepted() >= 6, "{} connections", stall.accepted());
    assert!(
        stall.all_closed(Duration::from_secs(10)),
        "a process pair started is still connected to the stalled remote"
    );
}

#[test]
fn a_command_ended_by_a_signal_ends_the_git_it_was_waiting_for() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let stall = Stalled::start(None);
    let b = stall.board("http");
    let mark = new_mark();
    let child = m
        .command(&["status", &b])
        .env(MARK, &mark)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while stall.accepted() == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "git never connected"
        );
        sleep(Duration::from_millis(10));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = finish(child, Duration::from_secs(30));
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(libc::SIGTERM),
        "{out:?}"
    );
    assert!(
        stall.all_closed(Duration::from_secs(10)),
        "git (or its remote helper) outlived pair"
    );
    assert!(
        all_gone(&mark, Duration::from_secs(5)),
        "a process pair started outlived it"
    );
}

#[test]
fn through_git_daemon_a_remote_that_stalls_leaves_status_on_the_cache_and_writes_nothing() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let mut daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let (doer, alice) = (Machine::new(&remote), Machine::new(&remote));
    init(&doer, &b, "alice");
    doer.pair(&["status", &b]).code(0);
    let (port, base) = (daemon.port, daemon.base.clone());
    daemon.stop();
    let stall = Stalled::start(Some(port));

    // Each within its limit (the 10 s default, or its --timeout) and 2 s, leaving nothing
    // running.
    let timed = |m: &Machine, args: &[&str], limit: u64| {
        let ran = run_timed(vec![(format!("pair {}", args.join(" ")), m.command(args))]);
        ran[0].within(Duration::from_secs(limit)).clone()
    };
    let statuses = run_timed(vec![
        ("pair status".to_string(), doer.command(&["status", &b])),
        (
            "pair status --json".to_string(),
            doer.command(&["status", &b, "--json"]),
        ),
    ]);
    statuses[0]
        .within(Duration::from_secs(10))
        .code(0)
        .mentions(&["OFFLINE", "s ago", "cannot be reached", "was stopped"]);
    let v = json(statuses[1].within(Duration::from_secs(10)));
    assert_eq!(v["remote"]["offline"], true, "{v:#}");
    assert_eq!(v["phase"], "DRAFT");
    // A write gives up at its --timeout (the cached tip is pushed to, and the push stopped).
    let out = timed(
        &doer,
        &[
            "note",
            &b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "during the stall",
            "--timeout",
            "3",
        ],
        3,
    );
    out.code(1)
        .mentions(&["cannot reach the remote", "stopped"]);
    // A waiting reviewer whose remote never answered it: an error when the wait gives up.
    let out = timed(
        &alice,
        &["poll", &b, "--agent", "alice", "--wait", "--timeout", "4"],
        4,
    );
    out.code(1).mentions(&["cannot reach the remote"]);
    assert!(stall.all_closed(Duration::from_secs(10)));
    drop(stall);

    let _daemon = Daemon::start(&base, Some(port));
    doer.note(&b, "doer", "after the stall").code(0);
    let text = remote.text(REF);
    assert!(!text.contains("during the stall"), "{text}");
    assert!(text.contains("after the stall"));
    assert_eq!(remote.commits(REF), 2);
    alice.pair(&["validate", &b]).code(0);
    doer.pair(&["validate", &b]).code(0);
}

#[test]
fn a_writer_killed_with_sigkill_takes_its_git_with_it() {
    // No handler sees SIGKILL: git is told by the kernel that its parent died, and dies too, so
    // no push goes on for a command that is gone (here: one stalled on a remote that never
    // answers, with a minute's timeout it would otherwise keep).
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let stall = Stalled::start(None);
    let b = stall.board("git");
    let mark = new_mark();
    let mut child = m
        .command(&[
            "note",
            &b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
            "--timeout",
            "60",
        ])
        .env(MARK, &mark)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while stall.accepted() == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "git never connected"
        );
        sleep(Duration::from_millis(10));
    }
    // The mark finds what pair started, though git runs in a session of its own.
    let running = alive_marked(&mark);
    assert!(
        running.iter().any(|p| p.contains(" git ")),
        "no git found by its mark: {running:?}"
    );
    child.kill().unwrap();
    let _ = child.wait();
    assert!(
        stall.all_closed(Duration::from_secs(20)),
        "git outlived the pair killed with SIGKILL"
    );
    assert!(
        all_gone(&mark, Duration::from_secs(5)),
        "a process pair started outlived it"
    );
}

impl Timed {
    /// It ended with `code` within `limit` (the deadline it was given and the second it may take
    /// past it), and left nothing running.
    #[track_caller]
    fn ended_by(&self, code: i32, limit: Duration) -> &Timed {
        self.out.code(code).mentions(&["cannot reach the remote"]);
        assert!(
            self.out.elapsed <= limit,
            "took {:?}, more than {limit:?}\n{}",
            self.out.elapsed,
            self.out.report()
        );
        assert!(
            self.left.is_empty(),
            "still running a second after pair exited: {:?}\n{}",
            self.left,
            self.out.report()
        );
        self
    }
}

/// How many times the deadline of `poll --wait` is measured: `PAIR_DEADLINE_RUNS`, else 2.
fn deadline_runs() -> usize {
    std::env::var("PAIR_DEADLINE_RUNS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(2)
}

#[test]
fn a_waiting_poll_on_a_remote_that_never_answers_ends_at_its_timeout_leaving_nothing_running() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let stall = Stalled::start(None);
    let b = stall.board("git");
    let args = ["poll", &b, "--agent", "alice", "--wait", "--timeout", "5"];
    let runs = deadline_runs();
    let mut took = vec![];
    for _ in 0..runs {
        let ran = run_timed(vec![(format!("pair {}", args.join(" ")), m.command(&args))]);
        // Exit 1, as when the remote is down: it never answered, so there is nothing to wait on.
        ran[0].ended_by(1, Duration::from_secs(6));
        took.push(ran[0].out.elapsed.as_secs_f64());
    }
    took.sort_by(f64::total_cmp);
    eprintln!(
        "poll --wait --timeout 5 on a remote that never answers, {runs} runs: min {:.2} s, \
         median {:.2} s, max {:.2} s",
        took[0],
        took[took.len() / 2],
        took[took.len() - 1]
    );
    assert!(stall.accepted() >= runs, "{} connections", stall.accepted());
    assert!(
        stall.all_closed(Duration::from_secs(1)),
        "a process pair started is still connected to the remote"
    );
}

#[test]
fn a_write_a_read_and_a_project_wait_on_a_remote_that_never_answers_end_at_their_deadline() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let stall = Stalled::start(None);
    let note = |b: &str| {
        let args = [
            "note",
            b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "stalled",
            "--timeout",
            "3",
        ];
        (format!("pair {}", args.join(" ")), m.command(&args))
    };
    let (over_git, over_http) = (stall.board("git"), stall.board("http"));
    let project = format!(
        "git+git://127.0.0.1:{}/remote.git#refs/pair/:task.md",
        stall.port
    );
    let status = ["status", &over_git];
    let mut status_cmd = m.command(&status);
    // A command with no --timeout is given $PAIR_GIT_TIMEOUT (10 s without it).
    status_cmd.env("PAIR_GIT_TIMEOUT", "3");
    let next = [
        "next",
        &project,
        "--agent",
        "alice",
        "--wait",
        "--timeout",
        "5",
    ];
    let commands = vec![
        note(&over_git),
        note(&over_http),
        ("pair status (PAIR_GIT_TIMEOUT=3)".to_string(), status_cmd),
        (format!("pair {}", next.join(" ")), m.command(&next)),
    ];
    let ran = run_timed(commands);
    let (note_git, note_http, status, next) = (&ran[0], &ran[1], &ran[2], &ran[3]);
    // A write reports nothing written, a read of a board never cached has nothing to show, a
    // project that was never listed has nothing to wait on: exit 1, as when the remote is down.
    note_git.ended_by(1, Duration::from_secs(4));
    note_http.ended_by(1, Duration::from_secs(4));
    status.ended_by(1, Duration::from_secs(4));
    next.ended_by(1, Duration::from_secs(6));
    assert!(
        stall.all_closed(Duration::from_secs(1)),
        "a process pair started is still connected to the remote"
    );
}

#[test]
fn through_git_daemon_waits_whose_remote_stops_answering_midway_end_at_their_timeout() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let mut daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let project = format!(
        "git+git://127.0.0.1:{}/remote.git#refs/pair/:task.md",
        daemon.port
    );
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    m.pair(&["register", &b, "--agent", "alice"]).code(0);
    m.pair(&[
        "advance",
        &b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    // Neither has a step to take: both wait, asking the remote every 0.2 s.
    let poll = [
        "poll",
        &b,
        "--agent",
        "alice",
        "--wait",
        "--timeout",
        "5",
        "--interval",
        "0.2",
    ];
    let next = [
        "next",
        &project,
        "--agent",
        "zed",
        "--wait",
        "--timeout",
        "5",
        "--interval",
        "0.2",
    ];
    // The remote answers their first looks, then accepts connections and never answers.
    let stopper = std::thread::spawn(move || {
        sleep(Duration::from_millis(1500));
        daemon.stop();
        let stall = Stalled::start(Some(daemon.port));
        (daemon, stall)
    });
    let ran = run_timed(vec![
        (format!("pair {}", poll.join(" ")), m.command(&poll)),
        (format!("pair {}", next.join(" ")), m.command(&next)),
    ]);
    // The remote that answered before is waited for; it has not answered again when the time
    // is up: exit 1, as when it is down.
    for r in &ran {
        r.ended_by(1, Duration::from_secs(6));
    }
    let (_daemon, stall) = stopper.join().unwrap();
    assert!(stall.accepted() >= 2, "{} connections", stall.accepted());
    assert!(
        stall.all_closed(Duration::from_secs(1)),
        "a process pair started is still connected to the remote"
    );
}

/// Change the board with plain git, as someone with push access who does not use `pair`: the
/// ref checked out in the machine's clone, the board edited, committed and pushed (never
/// forced). The new tip.
fn push_by_hand(
    remote: &Remote,
    m: &Machine,
    edit: impl Fn(&str) -> String,
    message: &str,
) -> String {
    let dir = m.clone.path();
    git_in(
        dir,
        &[
            "fetch",
            "-q",
            &remote.url(),
            &format!("+{REF}:refs/hand/task"),
        ],
    );
    git_in(dir, &["checkout", "-q", "--detach", "refs/hand/task"]);
    let path = dir.join("task.md");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, edit(&text)).unwrap();
    git_in(dir, &["commit", "-q", "-am", message]);
    git_in(dir, &["push", "-q", &remote.url(), &format!("HEAD:{REF}")]);
    remote.tip(REF).unwrap()
}

/// The board less its last journal record, its seal set to match: a truncation a file board
/// cannot tell (`seal`), pushed as one commit.
fn truncated(text: &str) -> String {
    let last = crate::common::journal_lines(text.as_bytes()).pop().unwrap();
    crate::common::reseal(&text.replacen(&format!("{last}\n"), "", 1))
}

#[test]
fn a_journal_truncated_by_a_plain_git_push_is_refused_until_a_recorded_repair() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    for i in 0..3 {
        m.note(&b, "doer", &format!("note {i}")).code(0);
    }
    m.pair(&["validate", &b]).code(0);
    // The last record dropped and the seal set to match: the file alone tells nothing...
    let tip = push_by_hand(&remote, &m, truncated, "tidy the journal");
    let copy = m.clone.path().join("copy.md");
    fs::write(&copy, remote.content(REF)).unwrap();
    m.pair(&["validate", copy.to_str().unwrap()]).code(0);
    // ...the ref's history does: validate and every write say so, naming the commits.
    let out = m.pair(&["validate", &b]);
    out.code(5).mentions(&[
        "history shows journal records lost",
        &tip,
        "1 of the 4 records",
    ]);
    let out = m.note(&b, "doer", "on a truncated journal");
    out.code(5)
        .mentions(&["history shows journal records lost", "--repair"]);
    let out = m.pair(&["register", &b, "--agent", "alice"]);
    out.code(5);
    assert_eq!(remote.tip(REF).unwrap(), tip, "nothing was written");
    // A repair is recorded, and the board is valid again.
    let bytes = remote.content(REF);
    let fixed = m.clone.path().join("fixed.md");
    fs::write(&fixed, &bytes).unwrap();
    let sha = crate::common::sha256_hex(&bytes);
    m.pair(&[
        "write",
        &b,
        "--content-file",
        fixed.to_str().unwrap(),
        "--expect-sha256",
        &sha,
        "--repair",
        "--reason",
        "the last record was lost by a push",
    ])
    .code(0);
    let text = remote.text(REF);
    assert!(
        text.contains("history shows journal records lost"),
        "{text}"
    );
    let out = m.pair(&["validate", &b]);
    out.code(0);
    m.note(&b, "doer", "after the repair").code(0);
    m.pair(&["validate", &b]).code(0);
}

#[test]
fn validate_walks_the_refs_history_past_later_commits_to_a_truncation() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    for i in 0..2 {
        m.note(&b, "doer", &format!("note {i}")).code(0);
    }
    let cut = push_by_hand(&remote, &m, truncated, "tidy the journal");
    // A later commit that changes nothing of the journal: the tip keeps its parent's journal.
    push_by_hand(
        &remote,
        &m,
        |t| {
            t.replace(
                "## Journal",
                "## Notes\n\nSaved in an editor.\n\n## Journal",
            )
        },
        "an editor's save",
    );
    let out = m.pair(&["validate", &b, "--json"]);
    out.code(5);
    let errors = json(&out)["files"][0]["errors"].to_string();
    assert!(
        errors.contains("history shows journal records lost") && errors.contains(&cut),
        "{errors}"
    );
}

/// `poll --after SEQ` on a git board: the positions are the journal's on the ref, the same from
/// every clone, and an agent passing back the position it got sees each record once.
#[test]
fn journal_positions_on_a_git_board_are_the_same_from_every_clone() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let (doer, alice) = (Machine::new(&remote), Machine::new(&remote));
    init(&doer, &b, "alice");
    let read = |m: &Machine, after: u64| -> (Vec<(u64, String)>, u64) {
        let out = m.pair(&[
            "poll",
            &b,
            "--agent",
            "alice",
            "--after",
            &after.to_string(),
            "--json",
        ]);
        out.code_in(&[0, 10]);
        let v = json(&out);
        let records = v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["seq"].as_u64().unwrap(),
                    r["command"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (records, v["position"].as_u64().unwrap())
    };
    let (mut seen, position) = read(&alice, 0);
    doer.note(&b, "doer", "one").code(0);
    alice.pair(&["register", &b, "--agent", "alice"]).code(0);
    doer.note(&b, "doer", "two").code(0);
    let (more, position) = read(&alice, position);
    seen.extend(more);
    assert!(read(&alice, position).0.is_empty());
    // The doer's clone reads the same positions.
    assert_eq!(read(&doer, 0).0, seen);
    let journal = crate::common::journal_lines(&fetch_board(&doer, &b));
    assert_eq!(seen.len(), journal.len());
    for ((seq, cmd), (i, line)) in seen.iter().zip(journal.iter().enumerate()) {
        assert_eq!(*seq, i as u64 + 1);
        assert!(line.contains(&format!(" cmd={cmd} ")), "{cmd}: {line}");
    }
    assert_eq!(position, journal.len() as u64);
}

/// A directory holding a `git` that logs each of its runs (its arguments, one line to `log`)
/// and hands over to the real one: first on PATH, it sees every git `pair` starts (the git
/// those start in turn run from git's own exec path).
fn logging_git(dir: &Path, log: &Path) -> PathBuf {
    wrapped_git(
        dir,
        &format!("printf '%s\\n' \"$*\" >> '{}'", log.display()),
    )
}

/// A directory holding a `git` that runs the shell lines `first`, then hands over to the real
/// one (the first `git` on PATH).
fn wrapped_git(dir: &Path, first: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH");
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let script = bin.join("git");
    fs::write(
        &script,
        format!("#!/bin/sh\n{first}\nexec '{}' \"$@\"\n", real.display()),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `pair` run on a machine with [`logging_git`] first on its PATH, and the git runs it logged.
pub(crate) struct Logged<'a> {
    m: &'a Machine,
    path: std::ffi::OsString,
    log: PathBuf,
    _tools: tempfile::TempDir,
}

impl<'a> Logged<'a> {
    pub(crate) fn new(m: &'a Machine) -> Logged<'a> {
        let tools = tempfile::tempdir().unwrap();
        let log = tools.path().join("git.log");
        let bin = logging_git(tools.path(), &log);
        let path = std::env::join_paths(
            std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        Logged {
            m,
            path,
            log,
            _tools: tools,
        }
    }

    pub(crate) fn run(&self, args: &[&str]) -> Out {
        let mut c = self.m.command(args);
        c.env("PATH", &self.path);
        run_bounded(&mut c, args)
    }

    fn note(&self, b: &str, text: &str) -> Out {
        let args = crate::common::files::note_args(b, text);
        self.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// The git runs logged since the last call, but the check of a git not seen before (this
    /// logging one), which is not the command's.
    pub(crate) fn runs(&self) -> Vec<String> {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let _ = fs::remove_file(&self.log);
        text.lines()
            .filter(|l| !l.ends_with(" --version"))
            .map(str::to_string)
            .collect()
    }
}

#[test]
fn a_note_with_a_current_cache_starts_three_git_processes_and_a_quiet_poll_two() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let b = remote.board(REF);
    let logged = Logged::new(&m);
    let run = |args: &[&str]| logged.run(args);
    let runs = || logged.runs();
    run(&["init", &b, "--doer", "doer", "--reviewers", "alice"]).code(0);
    logged.note(&b, "first").code(0);
    runs();
    // The cache is current (its last write): read the board and its previous version, make
    // the commit, push it with the lease (which moves the cache's ref too).
    let before = remote.commits(REF);
    logged.note(&b, "second").code(0);
    let ran = runs();
    assert_eq!(remote.commits(REF), before + 1);
    assert!(remote.text(REF).contains("second"));
    assert_eq!(ran.len(), 3, "{ran:#?}");
    for (line, what) in ran
        .iter()
        .zip([" cat-file --batch", " fast-import ", " push "])
    {
        assert!(line.contains(what), "{what:?} expected in {line:?}");
    }
    assert!(
        ran[2].contains(&format!("--force-with-lease={REF}:")),
        "{}",
        ran[2]
    );
    // A poll that finds the ref where the cache has it: ask the remote, read the board.
    run(&["poll", &b, "--agent", "alice"]);
    let ran = runs();
    assert_eq!(ran.len(), 2, "{ran:#?}");
    assert!(ran[0].contains(" ls-remote "), "{}", ran[0]);
    assert!(ran[1].contains(" cat-file --batch"), "{}", ran[1]);
    // And the next note builds on the cache's ref as the push left it: no fetch.
    logged.note(&b, "third").code(0);
    assert_eq!(runs().len(), 3);
    assert!(remote.text(REF).contains("third"));
}

#[test]
fn a_note_with_a_cache_behind_is_refused_by_its_lease_once_then_lands_once() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let other = Machine::new(&remote);
    let b = remote.board(REF);
    let logged = Logged::new(&m);
    m.pair(&["init", &b, "--doer", "doer", "--reviewers", "alice"])
        .code(0);
    other.note(&b, "doer", "from elsewhere").code(0);
    let before = remote.commits(REF);
    logged.note(&b, "behind").code(0);
    let ran = logged.runs();
    assert_eq!(remote.commits(REF), before + 1);
    let text = remote.text(REF);
    assert!(
        text.contains("from elsewhere") && text.contains("behind"),
        "{text}"
    );
    // The first push, on the cache's tip, is refused by its lease before anything is sent:
    // the write reads the remote's tip and applies itself again, with no look for a landing.
    let pushes = ran.iter().filter(|l| l.contains(" push ")).count();
    assert_eq!(pushes, 2, "{ran:#?}");
    assert_eq!(ran.len(), 9, "{ran:#?}");
}

/// Whether a board is a review-only board is told by its frontmatter alone: a note whose line
/// starts with `review:` in the body of an ordinary git board leaves poll and show working.
#[test]
fn a_body_line_starting_with_review_does_not_make_a_git_board_review_only() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    m.note(&b, "doer", "summary\nreview: looks fine").code(0);
    assert!(remote.text(REF).contains("\nreview: looks fine"));
    m.pair(&["poll", &b, "--agent", "doer"]).code(0);
    m.pair(&["show", &b, "--agent", "alice"]).code(0);
}

/// A directory holding a `git` whose `ls-remote` answers after `delay` (and then as the real
/// one does); every other git runs at once.
fn slow_asking_git(dir: &Path, delay: Duration) -> PathBuf {
    wrapped_git(
        dir,
        &format!(
            "for a in \"$@\"; do [ \"$a\" = ls-remote ] && sleep {}; done",
            delay.as_secs_f64()
        ),
    )
}

#[test]
fn a_wait_on_a_remote_that_answers_slowly_ends_at_its_timeout_with_its_last_answer() {
    // Each ask of the remote takes 0.4 s: a wait must not start an ask it has no time left to
    // hear answered, and report a working remote as failing at its deadline.
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let b = remote.board(REF);
    init(&m, &b, "alice");
    m.pair(&["register", &b, "--agent", "alice"]).code(0);
    let project = format!("{}#refs/pair/:task.md", b.split('#').next().unwrap());
    let tools = tempfile::tempdir().unwrap();
    let bin = slow_asking_git(tools.path(), Duration::from_millis(400));
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    for round in 0..2 {
        let poll = [
            "poll",
            &b,
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "3",
            "--interval",
            "0.3",
        ];
        let next = [
            "next",
            &project,
            "--agent",
            "zed",
            "--wait",
            "--timeout",
            "3",
            "--interval",
            "0.3",
        ];
        let mut commands = Vec::new();
        for args in [&poll[..], &next[..]] {
            let mut c = m.command(args);
            c.env("PATH", &path);
            commands.push((format!("pair {} (round {round})", args.join(" ")), c));
        }
        let ran = run_timed(commands);
        for r in &ran {
            // Not alice's turn, nothing for zed: both time out (exit 10) within their limit
            // plus 2 s, with nothing left running.
            r.out.code(10);
            assert!(
                r.out.elapsed <= Duration::from_secs(5),
                "took {:?}\n{}",
                r.out.elapsed,
                r.out.report()
            );
            assert!(
                !r.out.stderr.contains("cannot"),
                "no failure reported: {}",
                r.out.report()
            );
            assert!(r.left.is_empty(), "still running: {:?}", r.left);
        }
    }
}

/// A merge commit pushed with a plain, non-forced `git push` to the board's ref: its first
/// parent the commit before the last write, its second parent the tip, its tree the board
/// before that write. Git takes it as a fast-forward (the old tip is its ancestor), and the
/// board it holds has lost the newest record. The new tip.
fn push_merge_by_hand(remote: &Remote, m: &Machine, push_url: &str) -> (String, String) {
    let dir = m.clone.path();
    git_in(
        dir,
        &[
            "fetch",
            "-q",
            &remote.url(),
            &format!("+{REF}:refs/hand/task"),
        ],
    );
    let tip = git(dir, &["rev-parse", "refs/hand/task"])
        .trim()
        .to_string();
    let before = git(dir, &["rev-parse", "refs/hand/task~1"])
        .trim()
        .to_string();
    let merge = git(
        dir,
        &[
            "commit-tree",
            &format!("{before}^{{tree}}"),
            "-p",
            &before,
            "-p",
            &tip,
            "-m",
            "Merge the review branch",
        ],
    )
    .trim()
    .to_string();
    // Not forced: git sees a fast-forward.
    git_in(dir, &["push", "-q", push_url, &format!("{merge}:{REF}")]);
    assert_eq!(remote.tip(REF).unwrap(), merge);
    (tip, merge)
}

/// Every history check follows first parents and refuses the merge commit: `validate` (from
/// the cache that saw the old tip and from a new one) names it with the repair command, every
/// write is refused until a recorded repair, and the cache that saw the old tip reports the
/// rewrite on every read until then.
fn a_merge_is_refused_until_a_recorded_repair(remote: &Remote, b: &str, push_url: &str) {
    let m = Machine::new(remote);
    let other = Machine::new(remote);
    init(&m, b, "alice");
    m.note(b, "doer", "the plan in words").code(0);
    m.pair(&[
        "advance",
        b,
        "PLANNING",
        "--agent",
        "doer",
        "--user-approved",
    ])
    .code(0);
    m.pair(&["poll", b, "--agent", "doer"]).code_in(&[0, 10]);
    let records = crate::common::journal_lines(&remote.content(REF)).len();
    let (seen, merge) = push_merge_by_hand(remote, &m, push_url);
    // The board at the merge is the one before the advance: a record fewer, the phase back.
    assert_eq!(
        crate::common::journal_lines(&remote.content(REF)).len(),
        records - 1
    );
    for who in [&m, &other] {
        let out = who.pair(&["validate", b]);
        out.code(5)
            .mentions(&["merge commit", &merge, "--repair", "--expect-sha256"]);
        let out = who.note(b, "doer", "on a merged ref");
        out.code(5).mentions(&["merge commit", &merge, "--repair"]);
        let out = who.pair(&["register", b, "--agent", "alice"]);
        out.code(5).mentions(&["merge commit"]);
    }
    assert_eq!(remote.tip(REF).unwrap(), merge, "nothing was written");
    // The cache that saw the tip before the merge reports it on every read, not the first only.
    for _ in 0..3 {
        let v = json(&m.pair(&["poll", b, "--agent", "doer", "--json"]));
        assert_eq!(v["remote"]["rewritten_from"], seen.as_str(), "{v:#}");
    }
    m.pair(&["status", b]).mentions(&["rewritten outside pair"]);
    // A repair is recorded on top of the merge; then the board is valid and writable again, and
    // the rewrite is no longer reported.
    let bytes = remote.content(REF);
    let fixed = other.clone.path().join("fixed.md");
    fs::write(&fixed, &bytes).unwrap();
    let sha = crate::common::sha256_hex(&bytes);
    other
        .pair(&[
            "write",
            b,
            "--content-file",
            fixed.to_str().unwrap(),
            "--expect-sha256",
            &sha,
            "--repair",
            "--reason",
            "a merge pushed by hand took the advance away",
        ])
        .code(0);
    for who in [&m, &other] {
        who.pair(&["validate", b]).code(0);
    }
    let v = json(&m.pair(&["poll", b, "--agent", "doer", "--json"]));
    assert!(v["remote"]["rewritten_from"].is_null(), "{v:#}");
    m.note(b, "doer", "after the repair").code(0);
    m.pair(&["validate", b]).code(0);
}

#[test]
fn a_merge_commit_pushed_without_force_is_refused_until_a_recorded_repair() {
    let remote = Remote::new();
    let b = remote.board(REF);
    a_merge_is_refused_until_a_recorded_repair(&remote, &b, &remote.url());
}

#[test]
fn through_git_daemon_a_merge_commit_pushed_without_force_is_refused_until_a_recorded_repair() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let url = format!("git://127.0.0.1:{}/remote.git", daemon.port);
    a_merge_is_refused_until_a_recorded_repair(&remote, &b, &url);
}

/// A merge under a later plain commit: the write looks at the tip only, `validate` walks the
/// first parents back and finds it.
#[test]
fn validate_finds_a_merge_commit_under_a_later_commit() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    m.note(&b, "doer", "one").code(0);
    m.note(&b, "doer", "two").code(0);
    let (_, merge) = push_merge_by_hand(&remote, &m, &remote.url());
    push_by_hand(
        &remote,
        &m,
        |t| t.replace("## Journal", "## Notes\n\nSaved.\n\n## Journal"),
        "an editor's save",
    );
    let fresh = Machine::new(&remote);
    fresh
        .pair(&["validate", &b])
        .code(5)
        .mentions(&["merge commit", &merge, "--repair"]);
}

/// After a force push, every read from the cache that saw the old tip reports the rewrite (an
/// agent's `poll --json` does not consume the only signal) until a repair is recorded, from any
/// cache.
#[test]
fn a_rewrite_stays_reported_from_a_cache_until_a_recorded_repair() {
    let remote = Remote::new();
    let b = remote.board(REF);
    let m = Machine::new(&remote);
    let other = Machine::new(&remote);
    init(&m, &b, "alice");
    for i in 0..2 {
        m.note(&b, "doer", &format!("kept {i}")).code(0);
    }
    let seen = remote.tip(REF).unwrap();
    git_in(&remote.bare(), &["update-ref", REF, &format!("{REF}~2")]);
    for _ in 0..3 {
        let v = json(&m.pair(&["poll", &b, "--agent", "doer", "--json"]));
        assert_eq!(v["remote"]["rewritten_from"], seen.as_str(), "{v:#}");
    }
    m.pair(&["status", &b])
        .mentions(&["rewritten outside pair", "--repair"]);
    // A write goes on (a rewrite is reported, not refused) and says so too.
    let out = m.pair(&[
        "note",
        &b,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "still",
        "--json",
    ]);
    out.code(0);
    assert_eq!(json(&out)["remote"]["rewritten_from"], seen.as_str());
    let v = json(&m.pair(&["poll", &b, "--agent", "doer", "--json"]));
    assert_eq!(v["remote"]["rewritten_from"], seen.as_str(), "{v:#}");
    // Another cache never saw the old tip: nothing to report there.
    let v = json(&other.pair(&["poll", &b, "--agent", "doer", "--json"]));
    assert!(v["remote"]["rewritten_from"].is_null(), "{v:#}");
    // A repair recorded from that other cache accepts the rewrite for this one too.
    let bytes = remote.content(REF);
    let fixed = other.clone.path().join("fixed.md");
    fs::write(&fixed, &bytes).unwrap();
    other
        .pair(&[
            "write",
            &b,
            "--content-file",
            fixed.to_str().unwrap(),
            "--expect-sha256",
            &crate::common::sha256_hex(&bytes),
            "--repair",
            "--reason",
            "the ref was reset on purpose",
        ])
        .code(0);
    let v = json(&m.pair(&["poll", &b, "--agent", "doer", "--json"]));
    assert!(v["remote"]["rewritten_from"].is_null(), "{v:#}");
    m.pair(&["status", &b]).code(0);
}

#[test]
fn git_configuration_given_through_the_environment_reaches_the_remote_git() {
    let remote = Remote::new();
    let m = Machine::new(&remote);
    // The board is named by an address only a URL rewrite given as GIT_CONFIG_COUNT/KEY/VALUE
    // leads to the remote.
    let alias = "file:///nonexistent/alias.git";
    let b = format!("git+{alias}#{REF}:task.md");
    let args = [
        "init",
        b.as_str(),
        "--doer",
        "doer",
        "--reviewers",
        "alice",
        "--goal",
        "CSV export",
    ];
    let rewrite = format!("url.{}.insteadOf", remote.url());
    let mut c = m.command(&args);
    c.env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", &rewrite)
        .env("GIT_CONFIG_VALUE_0", alias);
    run_bounded(&mut c, &args).code(0);
    assert!(remote.text(REF).contains("CSV export"));
    let note = [
        "note",
        b.as_str(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "via the rewrite",
    ];
    let mut c = m.command(&note);
    c.env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", &rewrite)
        .env("GIT_CONFIG_VALUE_0", alias);
    run_bounded(&mut c, &note).code(0);
    assert!(remote.text(REF).contains("via the rewrite"));
    // Without it, a write cannot reach the remote (exit 1).
    let mut c = m.command(&note);
    run_bounded(&mut c, &note).code(1);
    // A count whose keys are missing passes nothing, as git itself would refuse it.
    let mut c = m.command(&note);
    c.env("GIT_CONFIG_COUNT", "2")
        .env("GIT_CONFIG_KEY_0", &rewrite)
        .env("GIT_CONFIG_VALUE_0", alias);
    run_bounded(&mut c, &note).code(1);
    assert_eq!(remote.commits(REF), 2);
}

#[test]
fn a_remote_git_that_would_prompt_has_no_terminal_to_wait_on() {
    if !require(
        &crate::common::prereq::SCRIPT,
        crate::common::prereq::on_path("script"),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // An ssh stand-in that asks on the terminal, as ssh does for a host key or a password.
    let ssh = dir.path().join("ssh-prompt");
    let said = dir.path().join("said");
    std::fs::write(
        &ssh,
        format!(
            "#!/bin/sh\nif (true </dev/tty) 2>/dev/null; then echo tty > {s}; \
             read answer </dev/tty; else echo no-tty > {s}; fi\n\
             echo 'Permission denied (publickey).' >&2\nexit 255\n",
            s = said.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&ssh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let b = "git+ssh://git@example.invalid/repo.git#refs/pair/task:task.md";
    let line = format!(
        "{} note '{b}' --agent doer --section Evidence --note n --timeout 30",
        crate::common::pair_bin().display()
    );
    // Run under a terminal of its own (script), as an agent's shell would be.
    let mut c = Command::new("script");
    c.args(["-qec", &line, "/dev/null"])
        .env("GIT_SSH_COMMAND", &ssh)
        .env("PAIR_CACHE_DIR", dir.path().join("cache"))
        .stdin(Stdio::null());
    let out = crate::common::bounded::within(c, Duration::from_secs(30));
    assert_eq!(
        std::fs::read_to_string(&said).unwrap().trim(),
        "no-tty",
        "{}",
        out.report()
    );
    assert!(out.stdout.contains("Permission denied"), "{}", out.report());
}

/// The text of the first file's lifecycle in `validate --json` of `b` from `m`, exit 0 expected.
fn lifecycle_of(m: &Machine, b: &str) -> serde_json::Value {
    let out = m.pair(&["validate", b, "--json"]);
    out.code(0);
    let v = json(&out);
    assert_eq!(v["valid"], true, "{v:#}");
    v["files"][0].clone()
}

/// `(name, ok)` of each check `validate` ran.
fn ran(file: &serde_json::Value) -> Vec<(String, bool)> {
    file["lifecycle"]["checked"]
        .as_array()
        .unwrap_or_else(|| panic!("{file:#}"))
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c["ok"] == true))
        .collect()
}

fn pairs(list: &[(&str, bool)]) -> Vec<(String, bool)> {
    list.iter().map(|(n, ok)| (n.to_string(), *ok)).collect()
}

/// A board on `b` taken to COMMITTED through a worktree of the doer's clone (whose `main` is on
/// the remote): the commit's id and the base's.
fn committed(remote: &Remote, doer: &Machine, alice: &Machine, b: &str) -> (String, String) {
    let clone = doer.clone.path();
    git(clone, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    fs::write(clone.join("lib.txt"), "one\n").unwrap();
    git(clone, &["add", "lib.txt"]);
    git(clone, &["commit", "-q", "-m", "base"]);
    git(clone, &["push", "-q", "origin", "main"]);
    let base = git(clone, &["rev-parse", "HEAD"]).trim().to_string();
    init(doer, b, "alice");
    alice.pair(&["register", b, "--agent", "alice"]).code(0);
    doer.pair(&[
        "advance",
        b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    doer.pair(&[
        "submit",
        b,
        "--agent",
        "doer",
        "plan",
        "--note",
        "p",
        "--user-approved",
    ])
    .code(0);
    approve_round_1(&[(alice, "alice")], b);
    doer.pair(&[
        "worktree",
        "create",
        b,
        "--agent",
        "doer",
        "--user-approved",
    ])
    .code(0);
    let poll = json(&doer.pair(&["poll", b, "--agent", "doer", "--json"]));
    let wt = PathBuf::from(poll["worktree"].as_str().unwrap());
    fs::write(wt.join("lib.txt"), "one\ntwo\n").unwrap();
    git(&wt, &["add", "lib.txt"]);
    doer.pair(&["submit", b, "--agent", "doer", "code", "--note", "two"])
        .code(0);
    let pin = json(&alice.pair(&["poll", b, "--agent", "alice", "--json"]))["review"]["artifact"]
        ["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    alice
        .pair(&[
            "verdict",
            b,
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            &pin,
            "--note",
            "ok",
        ])
        .code(0);
    git(&wt, &["commit", "-q", "-m", "two"]);
    let sha = git(&wt, &["rev-parse", "HEAD"]).trim().to_string();
    let before = artifact_refs(remote);
    // A remote that refuses the commit's ref refuses the board's write with it: one atomic push.
    let hook = remote.bare().join("hooks").join("update");
    fs::write(
        &hook,
        "#!/bin/sh\ncase \"$1\" in refs/pair-artifacts/*/committed-*) echo 'not today' >&2; exit 1;; esac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    let tip = remote.tip(REF);
    doer.pair(&[
        "advance",
        b,
        "--agent",
        "doer",
        "COMMITTED",
        "--user-approved",
    ])
    .code(1)
    .mentions(&["hook declined"]);
    assert_eq!(remote.tip(REF), tip, "the board's write did not land");
    assert_eq!(artifact_refs(remote), before, "nor the commit's ref");
    fs::remove_file(&hook).unwrap();
    doer.pair(&[
        "advance",
        b,
        "--agent",
        "doer",
        "COMMITTED",
        "--user-approved",
    ])
    .code(0);
    // The commit travelled with the write: one more artifact ref, named after it, holding it.
    let after = artifact_refs(remote);
    let new: Vec<&String> = after.iter().filter(|r| !before.contains(r)).collect();
    assert_eq!(new.len(), 1, "{after:?}");
    assert!(
        new[0].ends_with(&format!("/committed-{}", &sha[..12])),
        "{new:?}"
    );
    assert_eq!(remote.tip(new[0]).as_deref(), Some(sha.as_str()));
    (sha, base)
}

#[test]
fn through_git_daemon_the_committed_commit_and_the_merge_are_checked_from_any_clone() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let (doer, alice) = (Machine::new(&remote), Machine::new(&remote));
    let (sha, base) = committed(&remote, &doer, &alice, &b);
    // A clone that never saw the doer's repository checks the commit and its tree on the remote.
    let carol = Machine::new(&remote);
    let f = lifecycle_of(&carol, &b);
    assert_eq!(
        ran(&f),
        pairs(&[("commit-exists", true), ("commit-is-approved-tree", true)]),
        "{f:#}"
    );
    assert_eq!(f["lifecycle"]["checked_here"], true, "{f:#}");
    assert_eq!(f["lifecycle"]["merged"], serde_json::Value::Null, "{f:#}");

    // Merged with a merge commit and pushed: the remote's main contains the commit.
    let clone = doer.clone.path();
    git(clone, &["merge", "-q", "--no-ff", "-m", "merge", &sha]);
    git(clone, &["push", "-q", "origin", "main"]);
    doer.pair(&[
        "advance",
        &b,
        "--agent",
        "doer",
        "MERGED",
        "--merged-into",
        "main",
        "--user-approved",
    ])
    .code(0);
    let f = lifecycle_of(&carol, &b);
    assert_eq!(
        ran(&f),
        pairs(&[
            ("commit-exists", true),
            ("commit-is-approved-tree", true),
            ("merged", true)
        ]),
        "{f:#}"
    );
    assert_eq!(f["lifecycle"]["merged"], true, "{f:#}");
    assert_eq!(f["warnings"], serde_json::json!([]), "{f:#}");

    // main force-pushed back to the base: the record no longer holds, and validate says so
    // (a warning: the board itself is valid, exit 0).
    git(
        clone,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{base}:refs/heads/main"),
        ],
    );
    let f = lifecycle_of(&carol, &b);
    assert_eq!(f["lifecycle"]["merged"], false, "{f:#}");
    assert_eq!(ran(&f)[2], ("merged".to_string(), false), "{f:#}");
    let detail = f["lifecycle"]["checked"][2]["detail"].as_str().unwrap();
    assert!(detail.contains("does not contain the commit"), "{f:#}");
    assert!(detail.contains(&base), "names the branch's tip: {f:#}");
    assert_eq!(f["warnings"][0]["field"], "lifecycle", "{f:#}");
    assert!(
        f["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("merged failed"),
        "{f:#}"
    );
    carol.pair(&["validate", &b]).code(0).mentions(&[
        "merged FAILED",
        "the recorded step no longer holds: merged failed",
    ]);

    // The branch gone from the remote: recorded, not checked here.
    git(&remote.bare(), &["update-ref", "-d", "refs/heads/main"]);
    let f = lifecycle_of(&carol, &b);
    assert_eq!(f["lifecycle"]["merged"], serde_json::Value::Null, "{f:#}");
    assert_eq!(
        ran(&f),
        pairs(&[("commit-exists", true), ("commit-is-approved-tree", true)]),
        "{f:#}"
    );
    assert_eq!(f["lifecycle"]["not_checked"][0]["name"], "merged", "{f:#}");
    assert!(
        f["lifecycle"]["not_checked"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("has no branch main"),
        "{f:#}"
    );
    carol
        .pair(&["validate", &b])
        .code(0)
        .mentions(&["recorded, not checked here: merged (merged into main"]);

    // The committed ref moved to another commit: a clone that fetches it refuses it.
    let art = artifact_refs(&remote)
        .into_iter()
        .find(|r| r.contains("/committed-"))
        .unwrap();
    git(&remote.bare(), &["update-ref", &art, &base]);
    let dave = Machine::new(&remote);
    let f = lifecycle_of(&dave, &b);
    assert_eq!(ran(&f), pairs(&[("commit-exists", false)]), "{f:#}");
    assert!(
        f["lifecycle"]["checked"][0]["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("pinned commit {sha}")),
        "{f:#}"
    );

    // No committed ref at all (a board committed by an older pair): recorded, not checked.
    git(&remote.bare(), &["update-ref", "-d", &art]);
    let erin = Machine::new(&remote);
    let f = lifecycle_of(&erin, &b);
    assert_eq!(ran(&f), pairs(&[]), "{f:#}");
    assert_eq!(f["lifecycle"]["checked_here"], false, "{f:#}");
    let names: Vec<&str> = f["lifecycle"]["not_checked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["commit-exists", "commit-is-approved-tree", "merged"],
        "{f:#}"
    );
    erin.pair(&["validate", &b])
        .code(0)
        .mentions(&["recorded, not checked here: commit-exists ("]);
}
