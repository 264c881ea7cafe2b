//! A cursor across a project: `poll PROJECT --agent ID --after CURSOR` returns the journal
//! records written on any board of the project since the cursor, and the cursor to pass next
//! time (`0` the first time). An agent that keeps it sees every record of every board exactly
//! once, across restarts; a board added later is read from its first record, a board removed
//! is dropped; `--wait` wakes on a record on any board. The same on a git remote's namespace.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::daemon::{Daemon, daemon_installed};
use crate::common::prereq::{GIT_DAEMON, require};
use crate::common::{git, journal_lines, pair, pair_bin};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// One record as an agent sees it: (board name, seq, command, by).
type Rec = (String, u64, String, String);

fn records(v: &Value) -> Vec<Rec> {
    v["records"]
        .as_array()
        .unwrap_or_else(|| panic!("records: {v:#}"))
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["seq"].as_u64().unwrap(),
                r["command"].as_str().unwrap().to_string(),
                r["by"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

/// One `poll PROJECT --after CURSOR` by a fresh process: the records and the new cursor.
fn catch_up(project: &str, agent: &str, cursor: &str) -> (Vec<Rec>, String) {
    let out = pair([
        "poll", project, "--agent", agent, "--after", cursor, "--json",
    ]);
    out.code_in(&[0, 10]);
    let v = out.json();
    (records(&v), v["cursor"].as_str().unwrap().to_string())
}

/// What every board's journal holds, by name: (seq, cmd, by) in order.
fn journals(boards: &[(&str, &Path)]) -> BTreeMap<String, Vec<String>> {
    boards
        .iter()
        .map(|(n, p)| (n.to_string(), journal_lines(&std::fs::read(p).unwrap())))
        .collect()
}

fn run(args: &[&str]) {
    pair(args).code(0);
}

#[test]
fn a_project_cursor_gives_every_record_of_every_board_exactly_once_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("team")).unwrap();
    let a = dir.path().join("a.md");
    let b = dir.path().join("team/b.md");
    let c = dir.path().join("c.md");
    let project = s(dir.path());
    run(&["init", s(&a), "--goal", "A", "--reviewers", "alice"]);
    run(&["init", s(&b), "--goal", "B", "--doer", "bob"]);
    // The agent keeps its cursor in a file, as across a restart or a compaction.
    let kept = dir.path().join("cursor.txt");
    std::fs::write(&kept, "0").unwrap();
    let mut seen: Vec<Rec> = Vec::new();
    let mut step = || {
        let cursor = std::fs::read_to_string(&kept).unwrap();
        let (got, next) = catch_up(project, "alice", &cursor);
        seen.extend(got.clone());
        std::fs::write(&kept, &next).unwrap();
        (cursor, got, next)
    };
    let (_, first, _) = step();
    assert_eq!(first.len(), 2, "both inits: {first:?}");
    run(&["register", s(&a), "--agent", "alice"]);
    run(&[
        "advance",
        s(&b),
        "--agent",
        "bob",
        "PLANNING",
        "--user-approved",
    ]);
    run(&[
        "note",
        s(&b),
        "--agent",
        "bob",
        "--section",
        "Evidence",
        "--note",
        "x",
    ]);
    let (old, got, _) = step();
    assert_eq!(got.len(), 3, "{got:?}");
    // Nothing new: nothing, and the same cursor.
    let (same, none, again) = step();
    assert!(none.is_empty(), "{none:?}");
    assert_eq!(same, again);
    // A restart with an old cursor sees the same again.
    let (replay, _) = catch_up(project, "alice", &old);
    assert_eq!(replay, got);
    // A board added later is read from its first record.
    run(&["init", s(&c), "--goal", "C", "--doer", "carol"]);
    run(&[
        "advance",
        s(&a),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ]);
    let (_, got, _) = step();
    let names: Vec<&str> = got.iter().map(|r| r.0.as_str()).collect();
    assert!(names.contains(&"c") && names.contains(&"a"), "{got:?}");
    let all = journals(&[("a", &a), ("team/b", &b), ("c", &c)]);
    for (name, lines) in &all {
        let mine: Vec<&Rec> = seen.iter().filter(|r| &r.0 == name).collect();
        let seqs: Vec<u64> = mine.iter().map(|r| r.1).collect();
        assert_eq!(
            seqs,
            (1..=lines.len() as u64).collect::<Vec<_>>(),
            "{name}: every position once, in order: {seen:?}"
        );
        for (r, line) in mine.iter().zip(lines) {
            assert!(
                line.contains(&format!(" by={} cmd={} ", r.3, r.2)),
                "{r:?} is not {line}"
            );
        }
    }
    // A board removed is dropped from the cursor; the others keep their positions.
    let before = std::fs::read_to_string(&kept).unwrap();
    std::fs::remove_file(&b).unwrap();
    let (got, after) = catch_up(project, "alice", &before);
    assert!(got.is_empty(), "{got:?}");
    assert!(after.len() < before.len(), "{before} -> {after}");
    run(&[
        "note",
        s(&c),
        "--agent",
        "carol",
        "--section",
        "Evidence",
        "--note",
        "y",
    ]);
    let (got, _) = catch_up(project, "alice", &after);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0.as_str(), got[0].2.as_str()), ("c", "note"));
}

#[test]
fn a_project_poll_answers_the_agents_next_step_and_waits_from_the_new_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.md");
    let project = s(dir.path());
    run(&["init", s(&a), "--goal", "A", "--reviewers", "alice"]);
    // Alice's step: she registers.
    let v = pair([
        "poll", project, "--agent", "alice", "--after", "0", "--json",
    ])
    .code(0)
    .json();
    assert_eq!(v["step"]["name"], "a", "{v:#}");
    assert_eq!(v["next"]["command"][1], "register", "{v:#}");
    run(&["register", s(&a), "--agent", "alice"]);
    // Nothing for her: the command waits from the cursor returned.
    let v = pair([
        "poll", project, "--agent", "alice", "--after", "0", "--json",
    ])
    .code(10)
    .json();
    let cursor = v["cursor"].as_str().unwrap();
    let command: Vec<&str> = v["next"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(&command[1..3], ["poll", project], "{v:#}");
    assert!(
        command.windows(2).any(|w| w == ["--after", cursor]) && command.contains(&"--wait"),
        "{command:?}"
    );
    // Without a cursor, or with another board's position, or with a damaged token: refused.
    pair(["poll", project, "--agent", "alice"])
        .code(4)
        .mentions(&["--after", "pair next"]);
    pair(["poll", project, "--agent", "alice", "--after", "3"]).code(4);
    pair([
        "poll",
        project,
        "--agent",
        "alice",
        "--after",
        &cursor[..cursor.len() - 1],
    ])
    .code(4);
    // A project cursor on one board is refused too.
    pair(["poll", s(&a), "--agent", "alice", "--after", cursor])
        .code(4)
        .mentions(&["whole number"]);
}

#[test]
fn a_waiting_project_poll_wakes_on_a_note_on_another_board() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.md");
    let b = dir.path().join("deep/b.md");
    std::fs::create_dir_all(b.parent().unwrap()).unwrap();
    run(&["init", s(&a), "--goal", "A", "--reviewers", "alice"]);
    run(&["register", s(&a), "--agent", "alice"]);
    run(&["init", s(&b), "--goal", "B", "--doer", "bob"]);
    let (_, cursor) = catch_up(s(dir.path()), "alice", "0");
    let child = Command::new(pair_bin())
        .args(["poll", s(dir.path()), "--agent", "alice", "--wait"])
        .args(["--timeout", "120", "--after", &cursor, "--json"])
        .env_remove("PAIR_AGENT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The wait is set before it reads: a note written now wakes it, or is read at once.
    run(&[
        "note",
        s(&b),
        "--agent",
        "bob",
        "--section",
        "Evidence",
        "--note",
        "for-alice",
    ]);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = records(&v);
    assert_eq!(got.len(), 1, "{v:#}");
    assert_eq!((got[0].0.as_str(), got[0].2.as_str()), ("deep/b", "note"));
    assert_eq!(
        got[0].1,
        journal_lines(&std::fs::read(&b).unwrap()).len() as u64
    );
    assert!(
        v["waited_ms"].as_u64().unwrap() < 120_000,
        "woken by the note, not the timeout: {v:#}"
    );
    // The cursor it returned has nothing more.
    let (none, _) = catch_up(s(dir.path()), "alice", v["cursor"].as_str().unwrap());
    assert!(none.is_empty(), "{none:?}");
}

#[test]
fn through_git_daemon_a_project_cursor_reads_the_same_from_two_clones() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "remote.git"]);
    let daemon = Daemon::start(remote.path(), None);
    let project = format!(
        "git+git://127.0.0.1:{}/remote.git#refs/pair/:task.md",
        daemon.port
    );
    let home = tempfile::tempdir().unwrap();
    let pair_as = |clone: &str, args: &[&str]| -> std::process::Output {
        Command::new(pair_bin())
            .args(args)
            .current_dir(home.path())
            .env("PAIR_CACHE_DIR", home.path().join(format!("cache-{clone}")))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("PAIR_AGENT")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let ok = |clone: &str, args: &[&str]| {
        let out = pair_as(clone, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let poll = |clone: &str, cursor: &str| -> (Vec<Rec>, String) {
        let out = pair_as(
            clone,
            &[
                "poll", &project, "--agent", "alice", "--after", cursor, "--json",
            ],
        );
        assert!(matches!(out.status.code(), Some(0 | 10)), "{out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (records(&v), v["cursor"].as_str().unwrap().to_string())
    };
    let one = daemon.board("refs/pair/one");
    let two = daemon.board("refs/pair/two");
    ok(
        "doer",
        &["init", &one, "--goal", "One", "--reviewers", "alice"],
    );
    ok("doer", &["init", &two, "--goal", "Two", "--doer", "bob"]);
    ok("alice", &["register", &one, "--agent", "alice"]);
    let (first, cursor) = poll("alice", "0");
    assert_eq!(first.len(), 3, "{first:?}");
    // The other clone reads the same from the same cursor.
    let (first_b, cursor_b) = poll("doer", "0");
    assert_eq!(first_b, first);
    assert_eq!(cursor_b, cursor);
    // A waiting poll on one clone wakes on a note written from the other.
    let child = Command::new(pair_bin())
        .args([
            "poll",
            &project,
            "--agent",
            "alice",
            "--wait",
            "--interval",
            "0.2",
        ])
        .args(["--timeout", "120", "--after", &cursor, "--json"])
        .current_dir(home.path())
        .env("PAIR_CACHE_DIR", home.path().join("cache-alice"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("PAIR_AGENT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    ok(
        "doer",
        &[
            "note",
            &two,
            "--agent",
            "bob",
            "--section",
            "Evidence",
            "--note",
            "n",
        ],
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = records(&v);
    assert_eq!(got.len(), 1, "{v:#}");
    assert_eq!(
        (got[0].0.as_str(), got[0].1, got[0].2.as_str()),
        ("two", 2, "note")
    );
    // Caught up: nothing more; a board added later is read from its start.
    let (none, cursor) = poll("alice", v["cursor"].as_str().unwrap());
    assert!(none.is_empty(), "{none:?}");
    ok(
        "doer",
        &["init", &daemon.board("refs/pair/three"), "--goal", "Three"],
    );
    let (got, _) = poll("alice", &cursor);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        (got[0].0.as_str(), got[0].1, got[0].2.as_str()),
        ("three", 1, "init")
    );
}
