//! Regression tests for the seed protocol's known dead ends (SPEC §3–§5 fix them).

use crate::common::*;
use crate::proto::*;

/// A board in PLAN_APPROVED with the given required reviewers (all registered, all approving).
fn plan_approved(reviewers: &[&str], extra_init: &[&str]) -> Proto {
    let list = reviewers.join(",");
    let mut init = vec!["--reviewers", list.as_str()];
    init.extend_from_slice(extra_init);
    let p = Proto::init(&init);
    for r in reviewers {
        p.ok(r, &["register"]);
    }
    p.ok(&p.doer.clone(), &["advance", "PLANNING", "--user-approved"]);
    p.ok(
        &p.doer.clone(),
        &["submit", "plan", "--note", "p1", "--user-approved"],
    );
    for r in reviewers {
        p.ok(
            r,
            &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        );
    }
    p.assert_phase("PLAN_APPROVED");
    p
}

#[test]
fn a_reviewer_registering_after_plan_approval_does_not_block_coding() {
    let p = plan_approved(&["alice"], &[]);
    p.ok("dave", &["register"]);
    p.assert_phase("PLAN_APPROVED");
    p.poll_expect("doer", 0);
    p.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    p.assert_phase("CODING");
}

#[test]
fn a_required_reviewer_added_after_plan_approval_joins_from_the_next_round() {
    let p = plan_approved(&["alice"], &[]);
    p.ok("dave", &["register", "--required"]);
    let s = p.status();
    assert_eq!(
        strs(&s["required_reviewers"]),
        sv(&["alice", "dave"]),
        "{s:#}"
    );
    // the plan round stays approved and valid; coding is not blocked
    p.assert_phase("PLAN_APPROVED");
    p.assert_valid();
    let v = p.poll_expect("doer", 0);
    assert_eq!(strs(&v["next"]["handoff_to"]), sv(&["doer"]), "{v:#}");
    p.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    // ... and dave is required in the code round
    p.ok("doer", &["submit", "code", "--note", "c"]);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("CODE_SUBMITTED");
    let v = p.poll_expect("dave", 0);
    assert_eq!(strs(&v["review"]["pending"]), sv(&["dave"]), "{v:#}");
    p.ok(
        "dave",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("READY_TO_COMMIT");
}

#[test]
fn a_required_reviewer_added_while_a_round_is_open_joins_that_round() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    p.ok("dave", &["register", "--required"]);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLANNING_SUBMITTED");
    let v = p.poll_expect("dave", 0);
    assert_eq!(strs(&v["review"]["pending"]), sv(&["dave"]), "{v:#}");
    p.ok(
        "dave",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn registering_again_is_harmless() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    let out = p.run("alice", &["register"]);
    out.code(0);
    p.assert_valid();
    let s = p.status();
    assert_eq!(s["agents"]["alice"]["role"], "reviewer", "{s:#}");
    assert_eq!(
        strs(&s["required_reviewers"]),
        sv(&["alice"]),
        "no duplicate: {s:#}"
    );
    assert_eq!(p.text().matches("\n  alice:\n").count(), 1, "{}", p.text());
}

#[test]
fn a_comment_only_round_moves_to_changes_requested() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    p.ok(
        "alice",
        &["verdict", "COMMENT", "--revision", "1", "--note", "nit"],
    );
    let v = p.poll_expect("bob", 0);
    assert_eq!(v["review"]["complete"], false, "{v:#}");
    assert_eq!(
        strs(&v["review"]["reviewers"]["comment"]),
        sv(&["alice"]),
        "{v:#}"
    );
    p.ok_entry(
        "bob",
        &[
            "verdict",
            "COMMENT",
            "--revision",
            "1",
            "--note",
            "another nit",
        ],
        "Plan Reviews",
        Some(1),
        Some("COMMENT"),
    );
    p.assert_phase("PLAN_CHANGES_REQUESTED");
    let v = p.poll_expect("doer", 0);
    if !v["review"].is_null() {
        assert_eq!(v["review"]["comment_only"], true, "{v:#}");
        assert_eq!(v["review"]["approved"], false, "{v:#}");
    }
    let s = p.status();
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["verdict"], "COMMENT",
        "{s:#}"
    );
    assert_eq!(
        s["agents"]["bob"]["reviews"]["plan"]["verdict"], "COMMENT",
        "{s:#}"
    );
}

#[test]
fn a_comment_never_approves_even_beside_approvals() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
    ]);
    // bob's COMMENT completes the round: not approved
    p.ok(
        "bob",
        &["verdict", "COMMENT", "--revision", "1", "--note", "fyi"],
    );
    p.assert_phase("PLAN_CHANGES_REQUESTED");
    // single-reviewer code round with a COMMENT
    let q = plan_approved(&["alice"], &[]);
    q.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    q.ok("doer", &["submit", "code", "--note", "c"]);
    q.ok(
        "alice",
        &["verdict", "COMMENT", "--revision", "1", "--note", "hmm"],
    );
    q.assert_phase("CODE_CHANGES_REQUESTED");
}

#[test]
fn a_reviewer_may_replace_its_verdict_while_the_round_is_open() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    p.ok(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "wait",
        ],
    );
    p.ok(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "fine after all",
        ],
    );
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn an_optional_red_test_reaches_coding() {
    let p = plan_approved(&["alice"], &[]);
    assert_eq!(p.top("red_test_required").as_deref(), Some("false"));
    p.ok("doer", &["advance", "RED_TESTING"]);
    p.ok_entry(
        "doer",
        &["submit", "red-test", "--note", "r1"],
        "Red Tests",
        Some(1),
        None,
    );
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_state("RED_TEST_APPROVED", [0, 1, 1, 0]);
    let v = p.poll_expect("doer", 0);
    assert_eq!(strs(&v["next"]["handoff_to"]), sv(&["doer"]), "{v:#}");
    p.ok("doer", &["advance", "CODING", "--worktree", "{wt}"]);
    p.assert_state("CODING", [0, 1, 1, 0]);
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
fn a_verdict_for_an_old_revision_is_refused_and_not_counted() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p1 --user-approved",
        "alice verdict CHANGES_REQUESTED --revision 1 --note no",
        "bob verdict CHANGES_REQUESTED --revision 1 --note no",
        "DOER submit plan --note p2 --user-approved",
    ]);
    p.assert_state("PLANNING_SUBMITTED", [0, 2, 0, 0]);
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "stale"],
        3,
    );
    let s = p.status();
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["reviewed"], 1,
        "{s:#}"
    );
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["verdict"], "CHANGES_REQUESTED",
        "{s:#}"
    );
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    // alice's refused verdict did not count: the round is still open
    p.assert_phase("PLANNING_SUBMITTED");
    let v = p.poll_expect("alice", 0);
    assert_eq!(strs(&v["review"]["pending"]), sv(&["alice"]), "{v:#}");
    assert_eq!(strs(&v["review"]["stale"]), sv(&["alice"]), "{v:#}");
    assert_eq!(v["review"]["complete"], false, "{v:#}");
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn a_string_counter_is_rejected_as_invalid_not_treated_as_stale() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let text = p.text();
    assert!(text.contains("plan_revision: 1"), "{text}");
    let bad = set_top(&text, "plan_revision", "'1'");
    let before = p.b.read();
    // raw write (plain, as the doer, and as a repair): invalid → 5, file unchanged
    let h = p.b.sha();
    p.b.write_expect(&bad, &h, &[])
        .code(5)
        .mentions(&["plan_revision"]);
    p.b.assert_untouched(&before);
    p.b.write_expect(&bad, &h, &["--as", "doer"]).code(5);
    p.b.assert_untouched(&before);
    p.b.write_expect(&bad, &h, &["--repair", "--reason", "x"])
        .code(5);
    p.b.assert_untouched(&before);
    // a file edited by hand that way is reported invalid, and commands refuse it with 5
    std::fs::write(&p.b.path, &bad).unwrap();
    pair(["validate", p.p()])
        .code(5)
        .mentions(&["plan_revision"]);
    let bad_bytes = p.b.read();
    let out = p.run(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    out.code(5);
    p.b.assert_untouched(&bad_bytes);
}

#[test]
fn a_note_with_a_plan_reviews_heading_in_goal_is_refused_so_reviews_still_land_in_plan_reviews() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    let before = p.b.read();
    let out = p.run(
        "doer",
        &[
            "note",
            "--section",
            "Goal",
            "--note",
            "Context\n## Plan Reviews\nthis would capture reviews",
        ],
    );
    assert!(
        matches!(out.code, Some(c) if c != 0),
        "must be refused\n{}",
        out.report()
    );
    p.b.assert_untouched(&before);
    let out = p.run_stdin(
        "doer",
        &["note", "--section", "Goal", "--note-file", "-"],
        "Context\n## Plan Reviews\n",
    );
    assert!(
        matches!(out.code, Some(c) if c != 0),
        "must be refused\n{}",
        out.report()
    );
    p.b.assert_untouched(&before);

    p.ok(
        "doer",
        &["submit", "plan", "--note", "p1", "--user-approved"],
    );
    p.ok_entry(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        "Plan Reviews",
        Some(1),
        Some("APPROVED"),
    );
    let t = p.text();
    assert_eq!(
        section_names(&t)
            .iter()
            .filter(|s| *s == "Plan Reviews")
            .count(),
        1,
        "{t}"
    );
    assert!(
        entry_headings(&t, "Goal").is_empty(),
        "no review landed in Goal:\n{t}"
    );
    assert_eq!(entry_headings(&t, "Plan Reviews").len(), 1, "{t}");
}

#[test]
fn a_note_lands_at_the_end_of_its_section_and_creates_a_missing_one_in_template_order() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    p.ok_entry(
        "alice",
        &["note", "--section", "Evidence", "--note", "first"],
        "Evidence",
        None,
        None,
    );
    p.ok_entry(
        "doer",
        &["note", "--section", "Evidence", "--note", "second"],
        "Evidence",
        None,
        None,
    );
    let e = sect(&p.text(), "Evidence").unwrap();
    assert!(e.find("first").unwrap() < e.find("second").unwrap(), "{e}");
    // Root Cause Analysis is not in a feature board's template: it is created in place
    assert!(!section_names(&p.text()).contains(&"Root Cause Analysis".to_string()));
    p.ok_entry(
        "doer",
        &[
            "note",
            "--section",
            "Root Cause Analysis",
            "--note",
            "aside",
        ],
        "Root Cause Analysis",
        None,
        None,
    );
    let names = section_names(&p.text());
    let rca = names
        .iter()
        .position(|n| n == "Root Cause Analysis")
        .unwrap();
    let plan = names.iter().position(|n| n == "Plan Revisions").unwrap();
    let ev = names.iter().position(|n| n == "Evidence").unwrap();
    assert!(
        ev < rca && rca < plan,
        "created at its template position: {names:?}"
    );
}

#[test]
fn a_doer_named_anything_works_end_to_end() {
    let p = Proto::init(&["--doer", "builder", "--reviewers", "alice"]);
    assert_eq!(p.doer, "builder");
    p.refused("builder", &["register"], 6);
    p.ok("alice", &["register"]);
    let v = p.poll_expect("builder", 0);
    assert_eq!(v["agent"]["role"], "doer", "{v:#}");
    assert_eq!(strs(&v["next"]["handoff_to"]), sv(&["builder"]), "{v:#}");
    let action = v["next"]["action"].as_str().unwrap_or_default();
    assert!(
        action.contains("--agent builder"),
        "the action names the real doer id: {action:?}"
    );
    // `doer` is just an unknown id here: told to register, cannot act as the doer
    let v = p.poll_expect("doer", 0);
    assert!(
        v["next"]["action"]
            .as_str()
            .unwrap_or_default()
            .contains("pair register"),
        "{v:#}"
    );
    p.refused("doer", &["advance", "PLANNING", "--user-approved"], 6);

    p.ok("builder", &["advance", "PLANNING", "--user-approved"]);
    p.ok_entry(
        "builder",
        &["submit", "plan", "--note", "p1", "--user-approved"],
        "Plan Revisions",
        Some(1),
        None,
    );
    let v = p.poll_expect("builder", 10);
    assert_eq!(strs(&v["next"]["handoff_to"]), sv(&["alice"]), "{v:#}");
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok(
        "builder",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    p.ok("builder", &["submit", "code", "--note", "c"]);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    let v = p.poll_expect("builder", 0);
    assert!(
        v["next"]["action"]
            .as_str()
            .unwrap_or_default()
            .contains("--agent builder"),
        "{v:#}"
    );
    p.ok(
        "builder",
        &[
            "advance",
            "COMMITTED",
            "--commit-sha",
            SHA_A,
            "--user-approved",
        ],
    );
    p.ok(
        "builder",
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "main",
            "--user-approved",
        ],
    );
    p.ok("builder", &["advance", "CLEANED_UP"]);
    p.assert_phase("CLEANED_UP");
}

#[test]
fn refusal_hints_name_the_real_doer_id() {
    let p = Proto::init(&["--doer", "builder", "--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    p.ok("alice", &["block", "--reason", "q"]);
    let out = p.refused("alice", &["advance", "PLANNING", "--user-approved"], 6);
    let all = out.all();
    assert!(
        !all.contains("--agent DOER"),
        "a hint naming a command must use the doer's id (builder), not a placeholder:\n{}",
        out.report()
    );
}

#[test]
fn a_refused_operation_never_leaves_a_partial_write() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p1 --user-approved",
    ]);
    let h = p.b.sha();
    let bytes = p.b.read();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "alice",
            vec!["verdict", "APPROVED", "--revision", "7", "--note", "stale"],
        ),
        (
            "carol",
            vec![
                "verdict",
                "APPROVED",
                "--revision",
                "1",
                "--note",
                "not required",
            ],
        ),
        (
            "doer",
            vec!["submit", "plan", "--note", "withdraw", "--user-approved"],
        ),
        (
            "alice",
            vec!["note", "--section", "Goal", "--note", "x\n## Decisions\ny"],
        ),
        (
            "alice",
            vec!["note", "--section", "Goal", "--note", "```\nunclosed"],
        ),
        ("alice", vec!["advance", "PLANNING", "--user-approved"]),
        ("doer", vec!["unblock", "--reason", "r"]),
        (
            "alice",
            vec![
                "verdict",
                "APPROVED",
                "--revision",
                "1",
                "--note",
                "n",
                "--expect-sha256",
                "abc",
            ],
        ),
    ];
    for (actor, words) in &cases {
        let out = p.run(actor, words);
        assert!(
            matches!(out.code, Some(c) if c != 0),
            "must be refused\n{}",
            out.report()
        );
        assert_eq!(
            p.b.sha(),
            h,
            "a refused operation changed the file\n{}",
            out.report()
        );
        p.b.assert_untouched(&bytes);
        p.b.assert_clean_dir(&[]);
    }
    // an invalid raw write as well
    let bad = set_top(&p.text(), "phase", "NOT_A_PHASE");
    p.b.write_expect(&bad, &h, &[]).code(5);
    assert_eq!(p.b.sha(), h);
    p.b.assert_clean_dir(&[]);
    p.assert_valid();
}

#[test]
fn concurrent_verdicts_from_two_reviewers_are_both_counted() {
    for _ in 0..4 {
        let p = Proto::init(&["--reviewers", "alice,bob"]);
        p.steps(&[
            "alice register",
            "bob register",
            "DOER advance PLANNING --user-approved",
            "DOER submit plan --note p --user-approved",
        ]);
        let board = p.p().to_string();
        let hs: Vec<_> = ["alice", "bob"]
            .into_iter()
            .map(|who| {
                let board = board.clone();
                std::thread::spawn(move || {
                    pair([
                        "verdict",
                        &board,
                        "--agent",
                        who,
                        "APPROVED",
                        "--revision",
                        "1",
                        "--note",
                        who,
                    ])
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap().code(0);
        }
        p.assert_valid();
        p.assert_phase("PLAN_APPROVED");
        let s = p.status();
        assert_eq!(
            s["agents"]["alice"]["reviews"]["plan"]["verdict"], "APPROVED",
            "{s:#}"
        );
        assert_eq!(
            s["agents"]["bob"]["reviews"]["plan"]["verdict"], "APPROVED",
            "{s:#}"
        );
        assert_eq!(
            entry_headings(&p.text(), "Plan Reviews").len(),
            2,
            "{}",
            p.text()
        );
    }
}

#[test]
fn a_raw_write_as_a_reviewer_may_carry_the_automatic_transition_its_verdict_completes() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let text = p.text();
    // The plan's submission pinned it; a verdict on it records the pinned hash.
    let pinned = p.status()["review"]["artifact"]["sha256"]
        .as_str()
        .expect("the plan is pinned")
        .to_string();
    let at = text.find("\n  alice:\n").unwrap();
    let (head, tail) = text.split_at(at);
    let unsigned = tail
        .replacen(
            "reviewed_plan_revision: null",
            "reviewed_plan_revision: 1",
            1,
        )
        .replacen("plan_verdict: null", "plan_verdict: APPROVED", 1);
    let tail = unsigned.replacen(
        "plan_verdict: APPROVED\n",
        &format!("plan_verdict: APPROVED\n    reviewed_plan_sha256: \"{pinned}\"\n"),
        1,
    );
    let h = p.b.sha();
    // Without the hash of what it judged, the verdict is refused.
    let bare = set_top(&format!("{head}{unsigned}"), "phase", "PLAN_APPROVED");
    p.b.write_expect(&bare, &h, &["--as", "alice"])
        .code(6)
        .mentions(&["reviewed_plan_sha256", "pinned"]);
    let approved = agreeing(&set_top(&format!("{head}{tail}"), "phase", "PLAN_APPROVED"));
    p.b.write_expect(&approved, &h, &["--as", "alice"]).code(0);
    p.assert_phase("PLAN_APPROVED");
    p.assert_valid();

    // the same transition without the verdict that completes the round is refused
    let q = Proto::init(&["--reviewers", "alice"]);
    q.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let before = q.b.read();
    let jump = set_top(&q.text(), "phase", "PLAN_APPROVED");
    let h = q.b.sha();
    q.b.write_expect(&jump, &h, &["--as", "alice"])
        .code_in(&[5, 6]);
    q.b.assert_untouched(&before);
}
