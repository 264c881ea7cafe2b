//! One read per command: every answer comes from one snapshot of the board, and every write
//! edits the snapshot it read. Counted from outside the binary: the read-only opens of the
//! board's own path (`strace`), and on a git board the `ls-remote` and `cat-file` runs of a
//! logging `git` first on PATH.

use std::process::Command;

use crate::common::prereq;
use crate::common::*;
use crate::proto::*;

fn strace_runs() -> bool {
    Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `pair ARGS` under `strace`: its outcome, and how many times it opened `board` (its exact
/// path) for reading. The lock file, its owner record, temporary files and the presence
/// directory have other names.
fn traced(board: &str, args: &[String]) -> (Out, usize) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace");
    let mut c = assert_cmd::Command::new("strace");
    c.timeout(std::time::Duration::from_secs(120));
    c.args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(&log)
        .arg(pair_bin())
        .args(args)
        .env_remove("PAIR_AGENT")
        .env_remove("PAIR_SESSION")
        .env_remove("PAIR_MODEL");
    let out = run(&mut c, format!("strace pair {}", args.join(" ")));
    let trace = std::fs::read_to_string(&log).unwrap_or_default();
    let quoted = format!("\"{board}\"");
    let reads = trace
        .lines()
        .filter(|l| l.contains(&quoted) && l.contains("O_RDONLY"))
        .count();
    (out, reads)
}

/// Runs `pair WORD BOARD --agent ACTOR REST…` under strace: it must succeed (or exit with one
/// of the poll's codes) having opened the board for reading exactly once.
#[track_caller]
fn once(p: &Proto, actor: &str, words: &[&str], codes: &[i32]) -> serde_json::Value {
    let args = p.args(actor, words);
    let (out, reads) = traced(p.p(), &args);
    out.code_in(codes);
    assert_eq!(
        reads,
        1,
        "`pair {}` opened the board {reads} times\n{}",
        args.join(" "),
        out.report()
    );
    if args.iter().any(|a| a == "--json") {
        out.json()
    } else {
        serde_json::Value::Null
    }
}

#[test]
fn every_command_of_an_agents_loop_reads_a_file_board_once() {
    if !prereq::require(&prereq::STRACE, strace_runs()) {
        return;
    }
    // Writes that start a phase: advance, submit.
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.ok("alice", &["register"]);
    p.ok("bob", &["register"]);
    once(
        &p,
        "doer",
        &["advance", "PLANNING", "--user-approved"],
        &[0],
    );
    once(
        &p,
        "doer",
        &["submit", "plan", "--note", "p1", "--user-approved"],
        &[0],
    );
    // The reads of a plan review.
    let poll = once(&p, "alice", &["poll", "--json"], &[0]);
    assert_eq!(poll["phase"], "PLANNING_SUBMITTED");
    let after = once(&p, "alice", &["poll", "--after", "0", "--json"], &[0]);
    let records = after["records"].as_array().unwrap();
    assert_eq!(
        records.last().unwrap()["to"],
        after["phase"],
        "the last record is the phase answered: {after}"
    );
    assert_eq!(
        after["version"]["records"].as_u64(),
        Some(records.len() as u64),
        "{after}"
    );
    once(&p, "", &["status", "--json"], &[0]);
    once(&p, "alice", &["show", "--json"], &[0]);
    once(&p, "alice", &["brief", "--for", "reviewer", "--json"], &[0]);
    once(&p, "alice", &["diff", "--json"], &[0]);
    once(&p, "", &["objections", "--json"], &[0]);
    // The writes of a review with objections.
    once(&p, "alice", &["claim"], &[0]);
    once(
        &p,
        "bob",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "## Goal",
            "--title",
            "the goal is vague",
            "--evidence",
            "it says nothing",
            "--fix",
            "say what",
        ],
        &[0],
    );
    once(
        &p,
        "bob",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "no",
            "--objections",
            "BLK-1",
        ],
        &[0],
    );
    once(
        &p,
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        &[0],
    );
    p.assert_phase("PLAN_CHANGES_REQUESTED");
    once(
        &p,
        "doer",
        &[
            "note",
            "--section",
            "Implementation Notes",
            "--note",
            "on it",
        ],
        &[0],
    );
    once(
        &p,
        "doer",
        &["resolve", "BLK-1", "--resolution", "the goal says what"],
        &[0],
    );
    once(
        &p,
        "doer",
        &["submit", "plan", "--note", "p2", "--user-approved"],
        &[0],
    );
    once(&p, "bob", &["accept", "BLK-1"], &[0]);
    // A poll that waits and wakes at once (its turn) answers from the read it woke on.
    once(
        &p,
        "bob",
        &["poll", "--wait", "--timeout", "5", "--json"],
        &[0, 10],
    );
}

/// Lines of the git log of a command that ran `what` (`ls-remote`, `cat-file`, …) on the
/// remote (`ls-remote`, `push`) or the cache (`cat-file`, `fast-import`).
fn count(ran: &[String], what: &str) -> usize {
    ran.iter().filter(|l| l.contains(what)).count()
}

#[test]
fn every_command_of_an_agents_loop_reads_a_git_board_once() {
    use crate::gitstore::{Logged, Machine, REF, Remote};
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let b = remote.board(REF);
    let logged = Logged::new(&m);
    let run = |args: &[&str]| {
        let out = logged.run(args);
        let ran = logged.runs();
        (out, ran)
    };
    // Reads: one `ls-remote`, at most one `cat-file`, nothing else.
    let read = |args: &[&str]| {
        let (out, ran) = run(args);
        out.code_in(&[0, 10]);
        assert_eq!(count(&ran, " ls-remote "), 1, "{args:?}: {ran:#?}");
        assert!(count(&ran, " cat-file ") <= 1, "{args:?}: {ran:#?}");
        assert!(
            ran.iter()
                .all(|l| l.contains(" ls-remote ") || l.contains(" cat-file ")),
            "{args:?}: {ran:#?}"
        );
        out
    };
    // Writes: one read of the board (a `cat-file`, and an `ls-remote` when the command
    // derives something from the board first), one commit, one push.
    let write = |args: &[&str]| {
        let (out, ran) = run(args);
        out.code(0);
        assert!(count(&ran, " ls-remote ") <= 1, "{args:?}: {ran:#?}");
        assert_eq!(count(&ran, " cat-file "), 1, "{args:?}: {ran:#?}");
        assert_eq!(count(&ran, " fast-import "), 1, "{args:?}: {ran:#?}");
        assert_eq!(count(&ran, " push "), 1, "{args:?}: {ran:#?}");
        out
    };
    run(&["init", &b, "--doer", "doer", "--reviewers", "alice,bob"])
        .0
        .code(0);
    for r in ["alice", "bob"] {
        write(&["register", &b, "--agent", r]);
    }
    write(&[
        "advance",
        &b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ]);
    write(&[
        "submit",
        &b,
        "--agent",
        "doer",
        "plan",
        "--note",
        "p1",
        "--user-approved",
    ]);
    let poll = read(&["poll", &b, "--agent", "alice", "--json"]).json();
    assert_eq!(poll["phase"], "PLANNING_SUBMITTED");
    let after = read(&["poll", &b, "--agent", "alice", "--after", "0", "--json"]).json();
    assert_eq!(
        after["records"].as_array().unwrap().last().unwrap()["to"],
        after["phase"]
    );
    assert_eq!(
        after["version"]["commit"], after["remote"]["tip"],
        "the answer names the commit it was read at: {after}"
    );
    read(&["status", &b, "--json"]);
    read(&["show", &b, "--agent", "alice", "--json"]);
    read(&[
        "brief", &b, "--for", "reviewer", "--agent", "alice", "--json",
    ]);
    read(&["diff", &b, "--json"]);
    read(&["objections", &b, "--json"]);
    write(&["claim", &b, "--agent", "alice"]);
    write(&[
        "object",
        &b,
        "--agent",
        "bob",
        "--severity",
        "blocking",
        "--anchor",
        "## Goal",
        "--title",
        "vague",
        "--evidence",
        "e",
        "--fix",
        "f",
    ]);
    write(&[
        "verdict",
        &b,
        "--agent",
        "bob",
        "CHANGES_REQUESTED",
        "--revision",
        "1",
        "--note",
        "no",
        "--objections",
        "BLK-1",
    ]);
    write(&[
        "verdict",
        &b,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "ok",
    ]);
    write(&[
        "note",
        &b,
        "--agent",
        "doer",
        "--section",
        "Implementation Notes",
        "--note",
        "on it",
    ]);
    write(&[
        "resolve",
        &b,
        "--agent",
        "doer",
        "BLK-1",
        "--resolution",
        "done",
    ]);
    write(&[
        "submit",
        &b,
        "--agent",
        "doer",
        "plan",
        "--note",
        "p2",
        "--user-approved",
    ]);
    write(&["accept", &b, "--agent", "bob", "BLK-1"]);
}

/// A write's arguments are checked before its board is read: a usage error is one (exit 4)
/// whether the board is missing or its remote cannot be reached.
#[test]
fn a_writes_bad_arguments_are_refused_before_its_board_is_read() {
    let b = Board::absent();
    let remote = "git+file:///nonexistent/pair-remote.git#refs/pair/x:board.md";
    for board in [b.p(), remote] {
        pair([
            "note",
            board,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
            "--expect-sha256",
            "zz",
        ])
        .code(4)
        .mentions(&["--expect-sha256"]);
        pair(["register", board, "--agent", "r1", "--cost", "1.1234567"]).code(4);
        pair([
            "verdict",
            board,
            "--agent",
            "r1",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
            "--timeout",
            "-1",
        ])
        .code(4);
    }
    assert!(!b.path.exists());
}

/// A write that derives something from its board before the edit (a handoff's brief, the
/// review a correction names) still takes the lock on a missing board when a lock file is
/// there, removing what a killed creation left, then reports the board missing.
#[test]
fn a_deriving_write_on_a_missing_board_cleans_up_under_the_lock() {
    for words in [
        vec!["handoff", "--to", "ben"],
        vec!["correct", "--note", "x"],
    ] {
        let b = Board::absent();
        std::fs::write(b.dir.path().join("board.md.lock"), "1").unwrap();
        let orphan = b.dir.path().join(".board.md.pair-tmp-abc123");
        std::fs::write(&orphan, "junk").unwrap();
        let mut args = vec![words[0], b.p(), "--agent", "doer"];
        args.extend_from_slice(&words[1..]);
        pair(&args).code(7);
        assert!(!orphan.exists(), "{words:?} left {}", orphan.display());
        assert!(!b.path.exists());
    }
}

/// A poll that waits for a board that is not there yet answers from the board that appears: a
/// review-only board made meanwhile is answered as one, its role's turn included.
#[test]
fn a_wait_begun_before_a_review_only_board_exists_answers_as_one() {
    let b = Board::absent();
    let target = b.aux_file("t.txt", "one\ntwo\n");
    let mut c = pair_cmd();
    c.args([
        "poll",
        b.p(),
        "--agent",
        "enthusiast",
        "--wait",
        "--timeout",
        "20",
        "--json",
    ]);
    let waiting = std::thread::spawn(move || run(&mut c, "poll --wait".into()));
    std::thread::sleep(std::time::Duration::from_millis(500));
    pair(["init", b.p(), "--review", target.to_str().unwrap()]).code(0);
    let out = waiting.join().unwrap();
    out.code(0);
    let v = out.json();
    assert_eq!(v["role"], "enthusiast", "{v}");
    assert_eq!(v["your_turn"], true, "{v}");
    assert!(v["review"]["stage"].is_string(), "{v}");
    assert_eq!(v["version"]["records"], 1, "{v}");
}
