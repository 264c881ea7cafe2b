//! Slow and hostile remotes, through the binary: authentication that hangs (an ssh that
//! connects and then never hears back), a server that answers a byte a second, one that drops
//! the connection mid-pack (both a real `git daemon` behind a proxy), and a board too large to
//! download. Every command ends within its deadline and 2 s with its documented exit code,
//! leaves no process it started behind, and leaves the cache's refs as they were.

use crate::common::bounded::{MARK, SLACK, Timed, alive_in_session, alive_marked, new_mark};
use crate::common::daemon::{Daemon, daemon_installed};
use crate::common::prereq::{GIT_DAEMON, require};
use crate::common::proxy::{Mode, Proxy, gigabyte_of_zeros};
use crate::common::{Out, git};
use crate::gitstore::{Machine, REF, Remote, init};
use serde_json::{Value as Json, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The refs of every repository in a machine's cache directory, each as `REPO REF OID`, and
/// the files of its pack directory, each as `REPO pack NAME`.
fn cache_refs(m: &Machine) -> Vec<String> {
    let mut refs = vec![];
    for e in std::fs::read_dir(&m.cache).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "git") {
            continue;
        }
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(&p)
            .args(["for-each-ref", "--format=%(refname) %(objectname)"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        refs.extend(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| format!("{name} {l}")),
        );
        // And no pack, whole or half-written, that was not there.
        if let Ok(packs) = std::fs::read_dir(p.join("objects").join("pack")) {
            for f in packs.flatten() {
                refs.push(format!("{name} pack {}", f.file_name().to_string_lossy()));
            }
        }
    }
    refs.sort();
    refs
}

/// A board and its project, both in their state before the slow remote: alice registered, the
/// doer's plan approved, so that neither has a step to take and both wait.
fn waiting_board(m: &Machine, b: &str) {
    init(m, b, "alice");
    m.pair(&["register", b, "--agent", "alice"]).code(0);
    m.pair(&[
        "advance",
        b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
}

/// Someone else writes to the board over `file://`: the machine's cache is one write behind, so
/// its next read fetches.
fn moved_on(remote: &Remote) {
    let other = Machine::new(remote);
    other
        .pair(&[
            "note",
            &remote.board(REF),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "moved on",
        ])
        .code(0);
}

/// What `pair mcp` answered a waiting `poll` with, how long after the call, and the processes
/// it started still alive a second after it exited.
struct McpPoll {
    answer: Json,
    took: Duration,
    left: Vec<String>,
}

/// `pair mcp BOARD --agent alice`, in a session of its own and marked ([`MARK`]), asked for a
/// waiting poll of `timeout` seconds once initialised; its input is closed after the answer.
fn mcp_poll(m: &Machine, b: &str, timeout: u64, env: &[(&str, &str)]) -> McpPoll {
    use std::os::unix::process::CommandExt;
    let mark = new_mark();
    let mut c = m.command(&["mcp", b, "--agent", "alice"]);
    for (k, v) in env {
        c.env(k, v);
    }
    c.env(MARK, &mark)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent's.
    unsafe {
        c.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    let sid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |v: Json| {
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let answer = |id: u64| -> Json {
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            let line = rx
                .recv_timeout(end.saturating_duration_since(Instant::now()))
                .expect("no answer from pair mcp");
            let v: Json = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    );
    assert!(answer(0)["result"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let asked = Instant::now();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "poll", "arguments": {"wait": true, "timeout": timeout}}}),
    );
    let got = answer(1);
    let took = asked.elapsed();
    drop(stdin);
    let end = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < end,
            "pair mcp did not exit when its input closed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_secs(1));
    let mut left = alive_in_session(sid);
    left.extend(alive_marked(&mark));
    McpPoll {
        answer: got,
        took,
        left,
    }
}

impl McpPoll {
    /// It answered within `limit` and [`SLACK`], with a tool error of exit `code` saying
    /// `words`, and left nothing running.
    #[track_caller]
    fn refused(&self, limit: Duration, code: i64, words: &[&str]) {
        let shown = format!("{:#}", self.answer);
        assert!(
            self.took <= limit + SLACK,
            "pair mcp's poll took {:?}, more than {limit:?} and {SLACK:?}\n{shown}",
            self.took
        );
        assert!(self.left.is_empty(), "still running: {:?}", self.left);
        let result = &self.answer["result"];
        assert_eq!(result["isError"], true, "{shown}");
        let text = result["content"][0]["text"].as_str().unwrap();
        let envelope: Json = serde_json::from_str(text).unwrap();
        assert_eq!(envelope["error"]["code"], code, "{shown}");
        for w in words {
            assert!(text.contains(w), "{w:?} not in {shown}");
        }
    }
}

/// The five commands a slow remote is tried with, at once: a waiting poll (`--timeout 5`), a
/// note (`--timeout 3`), `status` (`PAIR_GIT_TIMEOUT=3`), a waiting `next` on the project
/// (`--timeout 5`), and `pair mcp`'s waiting poll (5 s).
struct Tried {
    poll: Timed,
    note: Timed,
    status: Timed,
    next: Timed,
    mcp: McpPoll,
}

fn try_five(m: &Machine, b: &str, project: &str, env: &[(&str, &str)]) -> Tried {
    let cmd = |args: &[&str]| {
        let mut c = m.command(args);
        for (k, v) in env {
            c.env(k, v);
        }
        (format!("pair {}", args.join(" ")), c)
    };
    let mut status = cmd(&["status", b]);
    status.1.env("PAIR_GIT_TIMEOUT", "3");
    let commands = vec![
        cmd(&["poll", b, "--agent", "alice", "--wait", "--timeout", "5"]),
        cmd(&[
            "note",
            b,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "through a slow remote",
            "--timeout",
            "3",
        ]),
        status,
        cmd(&[
            "next",
            project,
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "5",
        ]),
    ];
    let mcp = std::thread::scope(|s| {
        let mcp = s.spawn(|| mcp_poll(m, b, 5, env));
        let ran = crate::common::bounded::run_timed(commands);
        (ran, mcp.join().unwrap())
    });
    let (ran, mcp) = mcp;
    let mut ran = ran.into_iter();
    Tried {
        poll: ran.next().unwrap(),
        note: ran.next().unwrap(),
        status: ran.next().unwrap(),
        next: ran.next().unwrap(),
        mcp,
    }
}

/// A real `git daemon` serving the remote, a proxy in front of it, and a machine whose cache
/// saw the board through the proxy and is one write behind it.
struct Served {
    remote: Remote,
    _daemon: Daemon,
    proxy: Proxy,
    m: Machine,
    board: String,
    project: String,
}

fn served() -> Served {
    let remote = Remote::new();
    let daemon = Daemon::start(remote.dir.path(), None);
    let proxy = Proxy::start(daemon.port);
    let base = format!("git+git://127.0.0.1:{}/remote.git", proxy.port);
    let board = format!("{base}#{REF}:task.md");
    let project = format!("{base}#refs/pair/:task.md");
    let m = Machine::new(&remote);
    waiting_board(&m, &board);
    m.pair(&["status", &board]).code(0);
    moved_on(&remote);
    Served {
        remote,
        _daemon: daemon,
        proxy,
        m,
        board,
        project,
    }
}

#[test]
fn a_server_that_answers_a_byte_a_second_is_given_up_at_each_deadline() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let s = served();
    let tip = s.remote.tip(REF);
    let before = cache_refs(&s.m);
    s.proxy.set(Mode::Trickle(Duration::from_secs(1)));
    let t = try_five(&s.m, &s.board, &s.project, &[]);
    check_unanswered(&t);
    assert_eq!(cache_refs(&s.m), before, "the cache's refs changed");
    assert_eq!(s.remote.tip(REF), tip, "something was written");
    assert!(
        s.proxy.accepted() >= 5,
        "{} connections",
        s.proxy.accepted()
    );
}

/// What a remote that never answers in time does to each command: exit 1 for all but
/// `status`, which shows the cache (exit 0, OFFLINE).
fn check_unanswered(t: &Tried) {
    let secs = Duration::from_secs;
    t.poll
        .within(secs(5))
        .code(1)
        .mentions(&["cannot reach the remote", "stopped"]);
    assert!(t.poll.out.elapsed <= secs(6), "{}", t.poll.out.report());
    t.note
        .within(secs(3))
        .code(1)
        .mentions(&["cannot reach the remote", "stopped"]);
    t.status
        .within(secs(3))
        .code(0)
        .mentions(&["OFFLINE", "was stopped"]);
    t.next
        .within(secs(5))
        .code(1)
        .mentions(&["cannot reach the remote"]);
    t.mcp.refused(secs(5), 1, &["cannot reach the remote"]);
}

#[test]
fn a_server_that_drops_the_connection_mid_pack_fails_each_command_in_time() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let s = served();
    let tip = s.remote.tip(REF);
    let before = cache_refs(&s.m);
    s.proxy.set(Mode::CutInPack(64));
    let t = try_five(&s.m, &s.board, &s.project, &[]);
    // The remote answers, and the fetch breaks: every command but `status` (which shows the
    // cache) fails at once with exit 1, quoting git; nothing is fetched, nothing written.
    let secs = Duration::from_secs;
    for (o, limit) in [(&t.poll, 5), (&t.note, 3), (&t.next, 5)] {
        o.within(secs(limit))
            .code(1)
            .mentions(&["cannot fetch", "git said"]);
    }
    t.status
        .within(secs(3))
        .code(0)
        .mentions(&["OFFLINE", "cannot fetch"]);
    assert!(t.poll.out.elapsed <= secs(6), "{}", t.poll.out.report());
    t.mcp.refused(secs(5), 1, &["cannot fetch", "git said"]);
    assert_eq!(cache_refs(&s.m), before, "the cache's refs changed");
    assert_eq!(s.remote.tip(REF), tip, "something was written");
}

/// A stand-in for `ssh` (`GIT_SSH_COMMAND`): it runs the git program asked for on the remote's
/// repository, as `ssh` to the same machine would, until `hang` exists; then it connects to
/// `port` (a listener that never answers, as a server stuck before authentication) and waits
/// for an answer that never comes, with a child of its own waiting too.
fn ssh_stand_in(dir: &Path, hang: &Path, port: u16) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("ssh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\n\
             # ssh HOST COMMAND\n\
             if [ -e '{hang}' ]; then\n\
             \x20   exec 3<>/dev/tcp/127.0.0.1/{port}\n\
             \x20   sleep 600 &\n\
             \x20   exec cat <&3\n\
             fi\n\
             eval \"exec git ${{2#git-}}\"\n",
            hang = hang.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn authentication_that_hangs_is_given_up_at_each_deadline() {
    let remote = Remote::new();
    let tools = tempfile::tempdir().unwrap();
    // Bound and listening, never accepting: the kernel completes each connection, and nothing
    // ever answers on it.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hang = tools.path().join("hang");
    let ssh = ssh_stand_in(tools.path(), &hang, silent.local_addr().unwrap().port());
    let base = format!("git+ssh://stuck.invalid{}", remote.bare().display());
    let b = format!("{base}#{REF}:task.md");
    let project = format!("{base}#refs/pair/:task.md");
    let env = [
        ("GIT_SSH_COMMAND", ssh.to_str().unwrap()),
        ("GIT_SSH_VARIANT", "simple"),
    ];
    let m = Machine::new(&remote);
    let with_ssh = |args: &[&str]| {
        let mut c = m.command(args);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    with_ssh(&["init", &b, "--doer", "doer", "--reviewers", "alice"]);
    with_ssh(&["register", &b, "--agent", "alice"]);
    with_ssh(&[
        "advance",
        &b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ]);
    moved_on(&remote);
    let tip = remote.tip(REF);
    let before = cache_refs(&m);
    std::fs::write(&hang, b"").unwrap();
    let t = try_five(&m, &b, &project, &env);
    check_unanswered(&t);
    assert_eq!(cache_refs(&m), before, "the cache's refs changed");
    assert_eq!(remote.tip(REF), tip, "something was written");
}

/// `git config` in a bare repository.
fn config(bare: &Path, key: &str, value: &str) {
    git(bare, &["config", key, value]);
}

/// The board at the ref's tip replaced, outside pair, by 1 GiB of zero bytes; the blob's id.
fn gigabyte_board(remote: &Remote) -> String {
    let bare = remote.bare();
    let blob = gigabyte_of_zeros(&bare);
    let plumb = |args: &[&str], input: &str| -> String {
        let mut c = Command::new("git");
        c.arg("--git-dir").arg(&bare).args(args);
        c.env("GIT_AUTHOR_NAME", "someone")
            .env("GIT_AUTHOR_EMAIL", "someone@example.invalid")
            .env("GIT_COMMITTER_NAME", "someone")
            .env("GIT_COMMITTER_EMAIL", "someone@example.invalid");
        c.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let tree = plumb(&["mktree"], &format!("100644 blob {blob}\ttask.md\n"));
    let tip = remote.tip(REF).unwrap();
    let commit = plumb(&["commit-tree", &tree, "-p", &tip, "-m", "1 GiB"], "");
    plumb(&["update-ref", REF, &commit], "");
    blob
}

/// The bytes a directory's files take on disk.
fn disk_usage(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                dirs.push(e.path());
            } else {
                total += m.blocks() * 512;
            }
        }
    }
    total
}

/// Whether a machine's cache holds the object `id`, asked so that git could fetch nothing.
fn cached(m: &Machine, id: &str) -> bool {
    std::fs::read_dir(&m.cache).unwrap().flatten().any(|e| {
        e.path().extension().is_some_and(|x| x == "git")
            && Command::new("git")
                .arg("--git-dir")
                .arg(e.path())
                .args(["cat-file", "-e", id])
                .env("GIT_NO_LAZY_FETCH", "1")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .stderr(Stdio::null())
                .status()
                .unwrap()
                .success()
    })
}

#[test]
fn a_board_of_a_gigabyte_on_a_filtering_server_is_refused_without_being_downloaded() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    config(&remote.bare(), "uploadpack.allowFilter", "true");
    let daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    let blob = gigabyte_board(&remote);
    let tip = remote.tip(REF);
    let before = Instant::now();
    for cmd in [
        vec!["poll", b.as_str(), "--agent", "alice"],
        vec!["status", b.as_str()],
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
        let out: Out = m.pair(&cmd);
        out.code(5)
            .mentions(&["over the 64 MiB limit", "67108864 bytes", "not downloaded"]);
        assert!(
            out.elapsed < Duration::from_secs(5),
            "{:?}\n{}",
            out.elapsed,
            out.report()
        );
    }
    let took = before.elapsed();
    let stored = disk_usage(&m.cache);
    eprintln!(
        "a 1 GiB board on a filtering server: three commands refused it in {:.2} s; the \
         cache takes {stored} bytes on disk",
        took.as_secs_f64()
    );
    assert!(stored < 64 * 1024 * 1024, "the cache takes {stored} bytes");
    assert!(!cached(&m, &blob), "the 1 GiB blob was downloaded");
    assert_eq!(remote.tip(REF), tip, "something was written");
}

#[test]
fn a_board_of_a_gigabyte_on_a_server_that_does_not_filter_is_bounded_by_the_deadline() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = Remote::new();
    let daemon = Daemon::start(remote.dir.path(), None);
    let b = daemon.board(REF);
    let m = Machine::new(&remote);
    init(&m, &b, "alice");
    gigabyte_board(&remote);
    let mut status = m.command(&["status", &b]);
    status.env("PAIR_GIT_TIMEOUT", "2");
    let ran = crate::common::bounded::run_timed(vec![
        (
            "pair poll --timeout 2".to_string(),
            m.command(&["poll", &b, "--agent", "alice", "--wait", "--timeout", "2"]),
        ),
        ("pair status (PAIR_GIT_TIMEOUT=2)".to_string(), status),
    ]);
    for r in &ran {
        r.within(Duration::from_secs(2));
    }
    // The wait's look was stopped mid-download; it then has no time to ask again.
    ran[0]
        .out
        .code(1)
        .mentions(&["cannot reach the remote", "stopped"]);
    // `status` shows the board it had, saying why it has no newer one.
    ran[1].out.code(0).mentions(&[
        "OFFLINE",
        "was stopped",
        "does not filter",
        "only the time limit bounds the download",
    ]);
}
