//! `pair submit`: rounds and revisions, the snapshot of required reviewers, `--no-review`,
//! follow-ups, and a resubmission during review refused as a withdrawal.

use crate::common::env::{Env, write_as};
use crate::common::flow::{CODE, DECISIONS, PLAN, assert_headings_in_order, assert_next};
use crate::common::phases::board_in;
use crate::common::repo::Lc;
use crate::proto::*;

#[test]
fn submitting_code_over_an_unmerged_index_names_the_conflicted_paths() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "mine\n");
    lc.g(&["add", "lib.txt"]);
    lc.g(&["commit", "-q", "-m", "mine"]);
    lc.g(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    lc.write("lib.txt", "theirs\n");
    lc.g(&["add", "lib.txt"]);
    lc.g(&["commit", "-q", "-m", "theirs"]);
    lc.g(&["checkout", "-q", "-"]);
    let merge = std::process::Command::new("git")
        .current_dir(lc.wt())
        .args(["merge", "-q", "side"])
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge must conflict");
    let before = lc.text();
    lc.refused("doer", &["submit", "code", "--note", "staged"], 6)
        .mentions(&["unmerged paths", "lib.txt", "git add"]);
    assert_eq!(
        lc.text(),
        before,
        "a refused submission leaves the board as it was"
    );
}

#[test]
fn no_review_run_completes_each_round_in_the_submitting_write() {
    let p = Proto::init(&["--goal", "Typo fix"]);
    p.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    // nobody registered, nobody required: refused without --no-review
    let out = p.refused(
        "doer",
        &["submit", "plan", "--note", "p", "--user-approved"],
        6,
    );
    out.mentions_any(&["review"]);

    let before = p.text();
    p.ok_entry(
        "doer",
        &[
            "submit",
            "plan",
            "--note",
            "p",
            "--user-approved",
            "--no-review",
        ],
        PLAN,
        Some(1),
        None,
    );
    p.assert_state("PLAN_APPROVED", [0, 1, 0, 0]);
    assert_eq!(p.top("no_review").as_deref(), Some("true"), "{}", p.text());
    let added = section_added(&before, &p.text(), DECISIONS);
    assert!(
        norm(&added).contains("review"),
        "no-review is recorded in Decisions: {added:?}\n{}",
        p.text()
    );

    p.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    let out = p.run("doer", &["submit", "code", "--note", "c"]);
    if out.code != Some(0) {
        p.ok("doer", &["submit", "code", "--note", "c", "--no-review"]);
    }
    p.assert_state("READY_TO_COMMIT", [0, 1, 0, 1]);
    p.ok(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--commit-sha",
            SHA_A,
            "--user-approved",
        ],
    );
    p.assert_phase("COMMITTED");
}

#[test]
fn first_submission_snapshots_registered_reviewers_as_required() {
    let p = Proto::init(&[]);
    p.ok("carol", &["register"]);
    let s = p.status();
    assert_eq!(
        strs(&s["required_reviewers"]),
        Vec::<String>::new(),
        "registering alone does not make carol required: {s:#}"
    );
    p.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    p.ok(
        "doer",
        &["submit", "plan", "--note", "p", "--user-approved"],
    );
    p.assert_phase("PLANNING_SUBMITTED");
    let s = p.status();
    assert_eq!(strs(&s["required_reviewers"]), sv(&["carol"]), "{s:#}");
    p.ok(
        "carol",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn followup_rounds_review_the_unstaged_diff_until_approved() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
        "bob verdict APPROVED --revision 1 --note ok",
        "DOER advance CODING --worktree {wt} --user-approved",
        "DOER submit code --note c1",
        "alice verdict APPROVED --revision 1 --note ok",
        "bob verdict APPROVED --revision 1 --note ok",
    ]);
    p.assert_state("READY_TO_COMMIT", [0, 1, 0, 1]);

    // READY_TO_COMMIT → FOLLOWUP_REVIEW
    p.ok_entry(
        "doer",
        &["submit", "followup", "--note", "Addressed a nit"],
        CODE,
        Some(2),
        None,
    );
    p.assert_state("FOLLOWUP_REVIEW", [0, 1, 0, 2]);
    let v = p.poll_expect("alice", 0);
    assert_eq!(v["review"]["target"], "code", "{v:#}");
    assert_eq!(v["review"]["counter"], 2, "{v:#}");
    assert_eq!(v["review"]["diff_scope"], "unstaged", "{v:#}");
    assert_next(&v, "reviewer", &["alice", "bob"], &["pair verdict"]);
    p.poll_expect("doer", 10);

    // claim in FOLLOWUP_REVIEW only sets the status
    p.ok("alice", &["claim"]);
    p.assert_phase("FOLLOWUP_REVIEW");
    assert_eq!(p.status()["agents"]["alice"]["status"], "REVIEWING");

    p.ok_entry(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "2",
            "--note",
            "Missing test",
        ],
        CODE,
        Some(2),
        Some("CHANGES_REQUESTED"),
    );
    p.ok_entry(
        "bob",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
        CODE,
        Some(2),
        Some("APPROVED"),
    );
    p.assert_state("CODE_CHANGES_REQUESTED", [0, 1, 0, 2]);
    let v = p.poll_expect("doer", 0);
    assert_next(&v, "doer", &["doer"], &["pair submit"]);

    // CODE_CHANGES_REQUESTED → FOLLOWUP_REVIEW
    p.ok_entry(
        "doer",
        &["submit", "followup", "--note", "Added the test"],
        CODE,
        Some(3),
        None,
    );
    p.assert_state("FOLLOWUP_REVIEW", [0, 1, 0, 3]);
    let v = p.poll_expect("bob", 0);
    assert_eq!(v["review"]["diff_scope"], "unstaged", "{v:#}");
    assert_eq!(strs(&v["review"]["stale"]), sv(&["alice", "bob"]), "{v:#}");
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "3", "--note", "ok"],
    );
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "3", "--note", "ok"],
    );
    p.assert_state("READY_TO_COMMIT", [0, 1, 0, 3]);

    assert_headings_in_order(
        &p,
        CODE,
        &[
            &["doer", "1"],
            &["alice", "approved", "1"],
            &["bob", "approved", "1"],
            &["doer", "2"],
            &["alice", "changes requested", "2"],
            &["bob", "approved", "2"],
            &["doer", "3"],
            &["alice", "approved", "3"],
            &["bob", "approved", "3"],
        ],
    );
}

#[test]
fn submission_with_nobody_to_review_is_refused_without_no_review() {
    let p = Proto::init(&[]);
    p.ok("doer", &["advance", "ANALYZING", "--user-approved"]);
    p.refused(
        "doer",
        &["submit", "analysis", "--note", "n", "--user-approved"],
        6,
    )
    .mentions_any(&["review"]);
    let p = Proto::init(&[]);
    p.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    p.refused(
        "doer",
        &["submit", "plan", "--note", "n", "--user-approved"],
        6,
    )
    .mentions_any(&["review"]);
}

#[test]
fn submit_while_in_a_reviewable_phase_is_refused_as_a_withdrawal() {
    for (phase, kind) in [
        ("ANALYSIS_SUBMITTED", "analysis"),
        ("REVIEWING_PLAN", "plan"),
        ("RED_TEST_SUBMITTED", "red-test"),
        ("REVIEWING_CODE", "code"),
        ("FOLLOWUP_REVIEW", "followup"),
    ] {
        let p = board_in(phase, &["--reviewers", "alice,bob"]);
        p.refused(
            "doer",
            &["submit", kind, "--note", "withdraw", "--user-approved"],
            6,
        );
    }
}

#[test]
fn the_doer_cannot_switch_to_no_review_while_reviewers_are_registered() {
    let e = Env::new();
    e.ok(0, &["init", "s.md", "--goal", "g"]);
    e.ok(0, &["register", "s.md", "--agent", "alice"]);
    e.ok(
        0,
        &[
            "advance",
            "s.md",
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ],
    );
    let text = e.read("s.md");
    let forged = text
        .replacen("phase: PLANNING\n", "phase: PLANNING_SUBMITTED\n", 1)
        .replacen("plan_revision: 0", "plan_revision: 1", 1)
        .replacen("no_review: false", "no_review: true", 1);
    let r = e.write("s.md", &forged, &["--as", "doer", "--user-approved"]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert!(r.stderr.contains("no_review"), "{}", r.stderr);
    // Skipping the snapshot of registered reviewers is refused too.
    let forged = text
        .replacen("phase: PLANNING\n", "phase: PLANNING_SUBMITTED\n", 1)
        .replacen("plan_revision: 0", "plan_revision: 1", 1)
        .replacen("required_reviewers: []", "required_reviewers: [zed]", 1);
    let r = e.write("s.md", &forged, &["--as", "doer", "--user-approved"]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert!(r.stderr.contains("required_reviewers"), "{}", r.stderr);
    assert_eq!(e.read("s.md"), text);
}

#[test]
fn the_doer_cannot_fill_required_reviewers_outside_the_first_submission() {
    let e = Env::new();
    e.ok(0, &["init", "c.md"]);
    e.ok(0, &["register", "c.md", "--agent", "alice"]);
    e.ok(0, &["register", "c.md", "--agent", "bob"]);
    let text = e.read("c.md");
    for list in ["[bob]", "[ghost]"] {
        let forged = text.replacen(
            "required_reviewers: []",
            &format!("required_reviewers: {list}"),
            1,
        );
        let r = write_as(&e, "c.md", &forged, Some("doer"), &[]);
        assert_eq!(r.code, 6, "{list}: {}", r.stderr);
        assert_eq!(e.read("c.md"), text);
    }
}

#[test]
fn a_claim_says_what_became_of_the_phase_and_the_status_the_same_way_every_time() {
    let p = Proto::init(&["--reviewers", "alice", "--yolo"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING",
        "DOER submit plan --note p",
        "alice verdict APPROVED --revision 1 --note ok",
        "DOER advance CODING --worktree {wt}",
        "DOER submit code --note c1",
    ]);
    let said = |out: crate::common::Out| out.json()["summary"].as_str().unwrap().to_string();
    assert_eq!(
        said(p.ok("alice", &["claim", "--json"])),
        "alice claimed code round 1: phase CODE_SUBMITTED → REVIEWING_CODE; status REVIEWING"
    );
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok("doer", &["submit", "followup", "--note", "a nit"]);
    p.assert_phase("FOLLOWUP_REVIEW");
    // In FOLLOWUP_REVIEW a claim moves no phase; it says so, and the same way each time.
    assert_eq!(
        said(p.ok("alice", &["claim", "--json"])),
        "alice claimed code round 2: phase stays FOLLOWUP_REVIEW (a claim moves only a \
         *_SUBMITTED phase); status APPROVED → REVIEWING"
    );
    for _ in 0..2 {
        assert_eq!(
            said(p.ok("alice", &["claim", "--json"])),
            "alice claimed code round 2 again: nothing changed (phase stays FOLLOWUP_REVIEW: a \
             claim moves only a *_SUBMITTED phase; status already REVIEWING)"
        );
    }
}
