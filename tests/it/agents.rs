//! Who is on the board: `register`, `unregister`, required reviewers joining an open round or the
//! next one, and optional reviewers.

use crate::common::env::Env;
use crate::common::flow::plan_approved;
use crate::common::phases::board_in;
use crate::common::*;
use crate::proto::*;

#[test]
fn unregister_is_refused_for_a_required_reviewer_one_with_verdicts_the_doer_and_others() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    // Required: only the user changes that.
    let out = pair(["unregister", b.p(), "--agent", "alice"]);
    out.code(6);
    assert!(out.stderr.contains("required reviewer"), "{}", out.report());
    // The doer is never removed.
    pair(["unregister", b.p(), "--agent", "doer"]).code(6);
    // Someone else's entry, through a raw write: the law refuses it too.
    pair(["register", b.p(), "--agent", "bob"]).code(0);
    let without_bob = {
        let text = b.read_string();
        let start = text.find("  bob:\n").unwrap();
        let end = text[start..]
            .find("\n---\n")
            .map(|e| start + e + 1)
            .unwrap();
        format!("{}{}", &text[..start], &text[end..])
    };
    let out = b.write_expect(&without_bob, &b.sha(), &["--as", "alice"]);
    out.code(6);
    assert!(
        out.stderr.contains("only bob may withdraw"),
        "{}",
        out.report()
    );
    // bob itself may, by a raw write as well as by the command.
    b.write_expect(&without_bob, &b.sha(), &["--as", "bob"])
        .code(0);
    pair(["validate", b.p()]).code(0);
    // With a verdict on the record, a registration stays.
    let mut text = set_top(
        &String::from_utf8(b.content()).unwrap(),
        "phase",
        "PLANNING_SUBMITTED",
    );
    text = set_top(&text, "plan_revision", "1");
    text = insert_before_closing(
        &text,
        &agent_block(
            "carol",
            "reviewer",
            "COMMENT",
            &[("reviewed_plan_revision", "1"), ("plan_verdict", "COMMENT")],
        ),
    );
    let c = Board::new(unsealed(&agreeing(
        &text.replace("status: COMMENT", "status: WAITING"),
    )));
    pair(["validate", c.p()]).code(0);
    let out = pair(["unregister", c.p(), "--agent", "carol"]);
    out.code(6);
    assert!(out.stderr.contains("verdicts"), "{}", out.report());
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
fn the_doer_cannot_register_as_a_reviewer() {
    let p = board_in("DRAFT", &["--reviewers", "alice,bob"]);
    p.refused("doer", &["register"], 6);
    p.refused("doer", &["register", "--required"], 6);
}

#[test]
fn a_reviewer_added_after_an_approved_analysis_joins_from_the_next_round() {
    let e = Env::new();
    e.ok(
        0,
        &[
            "init",
            "ra.md",
            "--goal",
            "g",
            "--rca",
            "--yolo",
            "--reviewers",
            "alice",
        ],
    );
    e.ok(0, &["register", "ra.md", "--agent", "alice"]);
    e.ok(0, &["advance", "ra.md", "--agent", "doer", "ANALYZING"]);
    e.ok(
        0,
        &[
            "submit", "ra.md", "--agent", "doer", "analysis", "--note", "a",
        ],
    );
    e.ok(
        0,
        &[
            "verdict",
            "ra.md",
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
    );
    e.ok(0, &["advance", "ra.md", "--agent", "doer", "PLANNING"]);
    e.ok(0, &["register", "ra.md", "--agent", "bob", "--required"]);
    e.ok(
        0,
        &["submit", "ra.md", "--agent", "doer", "plan", "--note", "p"],
    );
    let r = e.ok(0, &["poll", "ra.md", "--agent", "bob", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["review"]["pending"], serde_json::json!(["alice", "bob"]));
}

#[test]
fn a_reviewer_required_after_a_no_review_approval_can_be_recorded() {
    let e = Env::new();
    e.ok(0, &["init", "nr.md", "--goal", "g", "--yolo"]);
    e.ok(0, &["advance", "nr.md", "--agent", "doer", "PLANNING"]);
    e.ok(
        0,
        &[
            "submit",
            "nr.md",
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--no-review",
        ],
    );
    assert!(e.read("nr.md").contains("phase: PLAN_APPROVED"));
    e.ok(0, &["register", "nr.md", "--agent", "dave", "--required"]);
    e.ok(0, &["validate", "nr.md"]);
}

#[test]
fn an_optional_reviewer_registering_in_a_no_review_workflow_is_not_made_required() {
    let e = Env::new();
    e.ok(0, &["init", "nr.md", "--goal", "g", "--yolo"]);
    e.ok(0, &["advance", "nr.md", "--agent", "doer", "PLANNING"]);
    e.ok(
        0,
        &[
            "submit",
            "nr.md",
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--no-review",
        ],
    );
    e.ok(0, &["register", "nr.md", "--agent", "carol"]);
    // The worktree is a git worktree with a staged change (what the code submission pins).
    let wt = e.path("wt");
    crate::common::git_worktree(&wt);
    e.ok(
        0,
        &[
            "advance",
            "nr.md",
            "--agent",
            "doer",
            "CODING",
            "--worktree",
            wt.to_str().unwrap(),
        ],
    );
    e.ok(
        0,
        &["submit", "nr.md", "--agent", "doer", "code", "--note", "c"],
    );
    let text = e.read("nr.md");
    assert!(text.contains("required_reviewers: []"), "{text}");
    assert!(text.contains("phase: READY_TO_COMMIT"), "{text}");
}
