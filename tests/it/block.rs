//! `block`, `unblock` and `stop`: a BLOCKED board's way out, its exit code and who blocked it, and
//! a STOPPED board that refuses every later write.

use crate::common::env::{Env, planning_submitted_with_alice_approved};
use crate::common::flow::{DECISIONS, plan_approved};
use crate::common::*;
use crate::proto::*;
use serde_json::Value;

#[test]
fn blocked_has_exit_12_shows_who_and_why_and_through_blocked_waits_for_the_unblock() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    pair([
        "block",
        b.p(),
        "--agent",
        "alice",
        "--reason",
        "The staging database is down",
    ])
    .code(0);
    // Everyone polling gets 12, not the 11 of finished work.
    for agent in ["doer", "alice", "stranger"] {
        let out = pair(["poll", b.p(), "--agent", agent, "--json"]);
        out.code(12);
        let v = out.json();
        assert_eq!(v["blocked_from"], "DRAFT", "{v:#}");
        let action = v["next"]["action"].as_str().unwrap();
        assert!(action.contains("pair status"), "{action}");
        // Nobody's turn: the exit code, your_turn and next say the same.
        assert_eq!(v["your_turn"], false, "{v:#}");
        assert_eq!(v["next"]["actor"], "none", "{v:#}");
        if agent == "doer" {
            // The doer's unblock waits for the user's word: optional, never the next command.
            assert_eq!(v["next"]["command"], Value::Null, "{v:#}");
            assert_eq!(v["next"]["optional"]["command"][1], "unblock", "{v:#}");
        } else {
            let command = v["next"]["command"].as_array().unwrap();
            let words: Vec<&str> = command.iter().map(|w| w.as_str().unwrap()).collect();
            assert_eq!(words[1], "poll", "{v:#}");
            assert!(words.contains(&"--through-blocked"), "{v:#}");
            assert_eq!(v["next"]["optional"], Value::Null, "{v:#}");
        }
    }
    let text = pair(["poll", b.p(), "--agent", "alice"]);
    text.code(12);
    assert!(
        text.stdout.contains("blocked     from DRAFT"),
        "{}",
        text.report()
    );
    // status names the blocker, the reason and blocked_from.
    let s = pair(["status", b.p(), "--json"]).json();
    assert_eq!(s["blocked"]["by"], "alice", "{s:#}");
    assert_eq!(s["blocked"]["from"], "DRAFT", "{s:#}");
    assert_eq!(s["blocked"]["reason"], "The staging database is down");
    assert!(s["blocked"]["at"].as_str().is_some());
    let human = pair(["status", b.p()]);
    assert!(
        human.stdout.contains("blocked     from DRAFT by alice at "),
        "{}",
        human.report()
    );
    assert!(human.stdout.contains("The staging database is down"));
    // Without --through-blocked, --wait returns at once with 12.
    let quick = pair([
        "poll",
        b.p(),
        "--agent",
        "alice",
        "--wait",
        "--timeout",
        "5",
    ]);
    quick.code(12);
    assert!(quick.elapsed < std::time::Duration::from_secs(4));
    // With it, the wait sleeps through the block: still blocked when the timeout runs out (12),
    // and woken by the unblock, on to the next turn (here: alice's, once the plan is submitted).
    pair([
        "poll",
        b.p(),
        "--agent",
        "alice",
        "--wait",
        "--through-blocked",
        "--timeout",
        "0.3",
    ])
    .code(12);
    let path = b.p().to_string();
    let waiter = std::thread::spawn(move || {
        pair([
            "poll",
            &path,
            "--agent",
            "alice",
            "--wait",
            "--through-blocked",
            "--timeout",
            "20",
            "--json",
        ])
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    pair([
        "unblock",
        b.p(),
        "--agent",
        "doer",
        "--reason",
        "It is back",
    ])
    .code(0);
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    pair([
        "submit",
        b.p(),
        "--agent",
        "doer",
        "plan",
        "--note",
        "p",
        "--user-approved",
    ])
    .code(0);
    let woke = waiter.join().unwrap();
    woke.code(0);
    assert_eq!(woke.json()["phase"], "PLANNING_SUBMITTED");
    assert_eq!(
        pair(["status", b.p(), "--json"]).json()["blocked"],
        Value::Null
    );
}

#[test]
fn blocked_has_a_way_out_by_unblock() {
    let p = plan_approved(&["alice"], &[]);
    p.ok("alice", &["block", "--reason", "question"]);
    p.assert_phase("BLOCKED");
    // BLOCKED has its own exit code (12), apart from the 11 of finished work.
    p.poll_expect("doer", 12);
    p.ok("doer", &["unblock", "--reason", "answered"]);
    p.assert_phase("PLAN_APPROVED");
    p.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
}

#[test]
fn blocked_has_a_way_out_by_stop() {
    let p = plan_approved(&["alice"], &[]);
    p.ok("doer", &["block", "--reason", "question"]);
    p.ok_entry(
        "alice",
        &["stop", "--reason", "user-cancelled"],
        "Decisions",
        None,
        None,
    );
    p.assert_phase("STOPPED");
    p.refused("doer", &["unblock", "--reason", "too-late"], 6);
}

/// A refusal on a terminal board names a way on only where there is one: on a BLOCKED board,
/// `unblock` to the doer and the wait through it to anyone else; on a STOPPED one, neither.
#[test]
fn a_refusal_on_a_terminal_board_names_the_way_on_only_where_there_is_one() {
    let p = plan_approved(&["alice"], &[]);
    p.ok("alice", &["block", "--reason", "question"]);
    let claim = ["claim"];
    let advance = ["advance", "CODING", "--worktree", "{wt}", "--user-approved"];
    let doer = p.refused("doer", &advance, 6);
    doer.mentions(&["BLOCKED (terminal)", "the doer can resume with `unblock`"]);
    let alice = p.refused("alice", &claim, 6);
    alice.mentions(&[
        "BLOCKED (terminal)",
        "until the doer resumes the work with `unblock`",
        "poll --through-blocked",
    ]);
    p.ok("doer", &["stop", "--reason", "user-cancelled"]);
    p.assert_phase("STOPPED");
    for out in [
        p.refused("doer", &advance, 6),
        p.refused("alice", &claim, 6),
    ] {
        out.mentions(&["STOPPED (terminal)"]);
        assert!(!out.stderr.contains("unblock"), "{}", out.stderr);
    }
}

#[test]
fn stop_and_register_on_a_terminal_blackboard_are_refused_cleanly() {
    let p = plan_approved(&["alice"], &[]);
    p.steps(&[
        "DOER advance CODING --worktree {wt} --user-approved",
        "DOER submit code --note c",
        "alice verdict APPROVED --revision 1 --note ok",
        "DOER advance COMMITTED --commit-sha 0123456789abcdef0123456789abcdef01234567 --user-approved",
    ]);
    p.assert_phase("COMMITTED");
    let before = p.b.read();
    p.refused("alice", &["stop", "--reason", "r"], 6)
        .mentions_any(&["COMMITTED", "terminal"]);
    p.refused("doer", &["stop", "--reason", "r"], 6);
    p.refused("eve", &["register"], 6);
    p.refused("alice", &["register"], 6);
    p.b.assert_untouched(&before);
    p.assert_valid();
    p.b.assert_clean_dir(&[]);
    // and the legitimate terminal moves still work
    p.ok(
        "doer",
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "main",
            "--user-approved",
        ],
    );
    p.ok("doer", &["advance", "CLEANED_UP"]);
    p.refused("doer", &["stop", "--reason", "r"], 6);
    p.refused("eve", &["register", "--required"], 6);
    p.assert_valid();
}

#[test]
fn block_then_unblock_returns_to_the_phase_it_left() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
        "alice claim",
    ]);
    p.assert_phase("REVIEWING_PLAN");

    p.ok_entry(
        "alice",
        &["block", "--reason", "Waiting-for-API-keys"],
        DECISIONS,
        None,
        None,
    );
    p.assert_state("BLOCKED", [0, 1, 0, 0]);
    assert_eq!(
        p.top("blocked_from").as_deref(),
        Some("REVIEWING_PLAN"),
        "{}",
        p.text()
    );
    assert!(
        sect(&p.text(), DECISIONS)
            .unwrap()
            .contains("Waiting-for-API-keys")
    );
    // BLOCKED has its own exit code (12), apart from the 11 of finished work.
    for who in ["doer", "alice", "bob"] {
        let v = p.poll_expect(who, 12);
        assert_eq!(v["next"]["actor"], "none", "{v:#}");
    }
    // a note is still allowed while blocked
    p.ok_entry(
        "bob",
        &["note", "--section", "Evidence", "--note", "keys requested"],
        "Evidence",
        None,
        None,
    );
    // only the doer unblocks
    p.refused("alice", &["unblock", "--reason", "x"], 6);
    p.ok_entry(
        "doer",
        &["unblock", "--reason", "Keys-arrived"],
        DECISIONS,
        None,
        None,
    );
    p.assert_state("REVIEWING_PLAN", [0, 1, 0, 0]);
    let bf = p.top("blocked_from");
    assert!(
        bf.is_none() || bf.as_deref() == Some("null") || bf.as_deref() == Some("~"),
        "blocked_from cleared after unblock: {bf:?}"
    );

    // the round resumes where it was
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
    let d = entry_headings(&p.text(), DECISIONS);
    assert!(d.len() >= 2, "{d:#?}");
    let (blk, unblk) = (&d[d.len() - 2], &d[d.len() - 1]);
    assert!(
        blk.contains("alice") && norm(blk).contains("block"),
        "block entry by alice: {d:#?}"
    );
    assert!(
        unblk.contains("doer") && norm(unblk).contains("unblock"),
        "unblock entry by doer last: {d:#?}"
    );
}

#[test]
fn block_from_a_work_phase_by_the_doer_and_unblock_return_there() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    p.ok("doer", &["block", "--reason", "need-input"]);
    assert_eq!(p.top("blocked_from").as_deref(), Some("PLANNING"));
    p.ok("doer", &["unblock", "--reason", "got-input"]);
    p.assert_phase("PLANNING");
}

#[test]
fn stop_ends_the_task_and_every_later_write_is_refused() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
        "bob verdict APPROVED --revision 1 --note ok",
        "DOER advance CODING --worktree {wt} --user-approved",
    ]);
    p.assert_phase("CODING");
    p.ok_entry(
        "bob",
        &["stop", "--reason", "User-cancelled"],
        DECISIONS,
        None,
        None,
    );
    p.assert_state("STOPPED", [0, 1, 0, 0]);
    for who in ["doer", "alice", "bob"] {
        let v = p.poll_expect(who, 11);
        assert_eq!(v["terminal"], true, "{v:#}");
    }
    p.refused("doer", &["submit", "code", "--note", "c"], 6);
    p.refused(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
        6,
    );
    p.refused("doer", &["unblock", "--reason", "r"], 6);
    p.refused("doer", &["stop", "--reason", "again"], 6);
    p.refused("alice", &["block", "--reason", "r"], 6);
    p.refused(
        "alice",
        &["note", "--section", "Evidence", "--note", "n"],
        6,
    );
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
        6,
    );
    p.refused("carol", &["register"], 6);
    p.assert_valid();
}

#[test]
fn a_raw_verdict_written_while_blocked_is_refused_so_unblock_still_works() {
    let e = Env::new();
    planning_submitted_with_alice_approved(&e);
    e.ok(
        0,
        &["block", "w.md", "--agent", "bob", "--reason", "need info"],
    );
    let blocked = e.read("w.md");
    let forged = blocked.replacen(
        "  bob:\n    role: reviewer\n    status: BLOCKED\n",
        "  bob:\n    role: reviewer\n    status: APPROVED\n",
        1,
    );
    let forged = forged.replacen(
        "reviewed_plan_revision: null\n    plan_verdict: null\n    reviewed_red_test_round: null\n    red_test_verdict: null\n    reviewed_code_round: null\n    code_verdict: null\n---",
        "reviewed_plan_revision: 1\n    plan_verdict: APPROVED\n    reviewed_red_test_round: null\n    red_test_verdict: null\n    reviewed_code_round: null\n    code_verdict: null\n---",
        1,
    );
    assert_ne!(forged, blocked, "the test must forge something");
    let r = e.write("w.md", &forged, &["--as", "bob"]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(e.read("w.md"), blocked);
    e.ok(
        0,
        &["unblock", "w.md", "--agent", "doer", "--reason", "resume"],
    );
}

#[test]
fn blocked_is_nobodys_turn_until_the_doer_runs_the_optional_unblock_and_then_nobody_is_blocked() {
    let p = plan_approved(&["alice"], &[]);
    p.ok(
        "alice",
        &["block", "--reason", "The staging database is down"],
    );
    let doer = p.poll_expect("doer", 12);
    assert_eq!(doer["your_turn"], false, "{doer:#}");
    assert_eq!(doer["next"]["actor"], "none", "{doer:#}");
    assert_eq!(doer["next"]["command"], Value::Null, "{doer:#}");
    // status says the board is resumable, not over.
    let text = pair(["status", p.p()]);
    text.code(0);
    assert!(!text.stdout.contains("(terminal)"), "{}", text.report());
    text.mentions(&["BLOCKED (nobody's turn until the doer runs `pair unblock`"]);
    // The optional step runs as given once REASON is filled in.
    let optional = &doer["next"]["optional"];
    let argv: Vec<String> = optional["command"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|w| match w.as_str().unwrap() {
            "REASON" => "The user says it is back".to_string(),
            w => {
                assert!(optional["placeholders"].get(w).is_none(), "{w} unfilled");
                w.to_string()
            }
        })
        .collect();
    pair(&argv).code(0);
    p.assert_phase("PLAN_APPROVED");
    // The block is over for everyone: the reviewer who blocked is no longer BLOCKED.
    let s = p.status();
    assert_eq!(s["agents"]["alice"]["status"], "IDLE", "{s:#}");
    let text = pair(["status", p.p()]);
    let row = text
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("alice"))
        .unwrap_or_else(|| panic!("no row for alice:\n{}", text.report()));
    assert!(!row.contains("BLOCKED"), "{row}");
    // A raw write may make that same change as the doer's unblock, and no other.
    p.ok("alice", &["block", "--reason", "Down again"]);
    let old = p.b.read();
    pair(["unblock", p.p(), "--agent", "doer", "--reason", "Back"]).code(0);
    let new = without_last_record(&p.b.read());
    let sha = sha256_hex(&old);
    // The doer's raw write of `content` onto a copy of the board as it was before the unblock.
    let write_as_doer = |content: &[u8]| {
        let copy = Board::new(&old);
        let content = copy.aux_file("new.md", content);
        pair([
            "write",
            copy.p(),
            "--content-file",
            content.to_str().unwrap(),
            "--expect-sha256",
            &sha,
            "--as",
            "doer",
        ])
    };
    write_as_doer(&new).code(0);
    let forged = String::from_utf8(new)
        .unwrap()
        .replacen("status: IDLE", "status: APPROVED", 1);
    write_as_doer(forged.as_bytes())
        .code(6)
        .mentions(&["agents.alice"]);
}

#[test]
fn through_blocked_is_a_way_of_waiting_and_needs_no_wait_flag() {
    let p = plan_approved(&["alice"], &[]);
    p.ok("alice", &["block", "--reason", "Down"]);
    // Accepted without --wait: it waits, still blocked when the timeout runs out (within it
    // and 2 s).
    let limit = std::time::Duration::from_millis(300);
    let out = crate::common::bounded::pair_within(
        &[
            "poll",
            p.p(),
            "--agent",
            "alice",
            "--through-blocked",
            "--timeout",
            "0.3",
            "--json",
        ],
        limit,
    );
    out.code(12);
    assert!(
        out.json()["waited_ms"].as_u64().is_some(),
        "{}",
        out.report()
    );
    pair(["unblock", p.p(), "--agent", "doer", "--reason", "Back"]).code(0);
    // On a board that is not blocked it is a plain wait (not alice's turn: exit 10 at the end).
    crate::common::bounded::pair_within(
        &[
            "poll",
            p.p(),
            "--agent",
            "alice",
            "--through-blocked",
            "--timeout",
            "0.3",
        ],
        limit,
    )
    .code(10);
}
