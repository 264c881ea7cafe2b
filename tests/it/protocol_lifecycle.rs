//! Full lifecycles of the protocol engine, driven through the real binary (SPEC §3, §4, §8).

use crate::common::*;
use crate::proto::*;

const PLAN: &str = "Plan Revisions";
const PLAN_REVIEWS: &str = "Plan Reviews";
const RCA: &str = "Root Cause Analysis";
const RED: &str = "Red Tests";
const CODE: &str = "Code Review Rounds";
const DECISIONS: &str = "Decisions";

/// Asserts the headings of `section` match, in order, the expected lists of words.
#[track_caller]
fn assert_headings_in_order(p: &Proto, section: &str, expected: &[&[&str]]) {
    let text = p.text();
    let hs = entry_headings(&text, section);
    assert_eq!(
        hs.len(),
        expected.len(),
        "`## {section}` must hold exactly {} entries, got {hs:#?}\n--- file ---\n{text}",
        expected.len()
    );
    for (i, (h, words)) in hs.iter().zip(expected).enumerate() {
        for w in *words {
            let ok = if let Ok(n) = w.parse::<u64>() {
                names_number(h, n)
            } else {
                norm(h).contains(&norm(w))
            };
            assert!(
                ok,
                "entry {} of `## {section}` must mention {w:?} (chronological order): {h:?}\nall: {hs:#?}",
                i + 1
            );
        }
    }
}

#[track_caller]
fn assert_next(v: &serde_json::Value, actor: &str, handoff: &[&str], action_words: &[&str]) {
    assert_eq!(v["next"]["actor"], actor, "next.actor\n{v:#}");
    assert_eq!(
        strs(&v["next"]["handoff_to"]),
        sv(handoff),
        "next.handoff_to\n{v:#}"
    );
    let action = v["next"]["action"].as_str().unwrap_or_default();
    for w in action_words {
        assert!(
            action.contains(w),
            "next.action must mention {w:?}: {action:?}\n{v:#}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// (a) feature, two reviewers, one plan CHANGES_REQUESTED round

#[test]
fn feature_with_two_reviewers_goes_from_draft_to_cleaned_up() {
    let p = Proto::init(&["--goal", "Add CSV export", "--reviewers", "alice,bob"]);
    p.assert_state("DRAFT", [0, 0, 0, 0]);

    // unregistered reviewers are told to register
    let v = p.poll_expect("alice", 0);
    assert!(
        v["next"]["action"]
            .as_str()
            .unwrap_or_default()
            .contains("pair register"),
        "an unregistered reviewer must be told to run `pair register`: {v:#}"
    );
    p.ok("alice", &["register"]);
    p.ok("bob", &["register"]);
    let s = p.status();
    assert_eq!(s["agents"]["alice"]["role"], "reviewer", "{s:#}");
    assert_eq!(s["agents"]["bob"]["role"], "reviewer", "{s:#}");
    assert_eq!(
        strs(&s["required_reviewers"]),
        sv(&["alice", "bob"]),
        "{s:#}"
    );
    p.assert_state("DRAFT", [0, 0, 0, 0]);

    // DRAFT: the next step is a human gate → user, handed to the doer
    let v = p.poll_expect("doer", 0);
    assert_next(&v, "user", &["doer"], &["pair advance", "--user-approved"]);
    p.poll_expect("alice", 10);

    let before = p.text();
    p.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    p.assert_state("PLANNING", [0, 0, 0, 0]);
    let added = section_added(&before, &p.text(), DECISIONS);
    assert!(
        added.contains("### ") && norm(&added).contains("user"),
        "the human gate must be recorded in Decisions: {added:?}\n{}",
        p.text()
    );

    // PLANNING: submitting the plan is a human gate
    let v = p.poll_expect("doer", 0);
    assert_eq!(v["next"]["actor"], "user", "{v:#}");
    assert!(
        v["next"]["action"]
            .as_str()
            .unwrap_or_default()
            .contains("pair submit"),
        "{v:#}"
    );
    p.poll_expect("bob", 10);

    p.ok_entry(
        "doer",
        &[
            "submit",
            "plan",
            "--note",
            "Plan v1: add an exporter",
            "--user-approved",
        ],
        PLAN,
        Some(1),
        None,
    );
    p.assert_state("PLANNING_SUBMITTED", [0, 1, 0, 0]);

    let v = p.poll_expect("alice", 0);
    assert_next(&v, "reviewer", &["alice", "bob"], &["pair verdict"]);
    assert_eq!(v["review"]["target"], "plan", "{v:#}");
    assert_eq!(v["review"]["counter"], 1, "{v:#}");
    assert_eq!(
        strs(&v["review"]["pending"]),
        sv(&["alice", "bob"]),
        "{v:#}"
    );
    assert_eq!(v["review"]["complete"], false, "{v:#}");
    p.poll_expect("bob", 0);
    p.poll_expect("doer", 10);

    p.ok("alice", &["claim"]);
    p.assert_state("REVIEWING_PLAN", [0, 1, 0, 0]);
    assert_eq!(p.status()["agents"]["alice"]["status"], "REVIEWING");
    p.ok("bob", &["claim"]);
    p.assert_phase("REVIEWING_PLAN");

    p.ok_entry(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "Escape commas",
        ],
        PLAN_REVIEWS,
        Some(1),
        Some("CHANGES_REQUESTED"),
    );
    p.assert_state("REVIEWING_PLAN", [0, 1, 0, 0]);
    let v = p.poll_expect("bob", 0);
    assert_eq!(strs(&v["review"]["pending"]), sv(&["bob"]), "{v:#}");
    assert_eq!(
        strs(&v["review"]["reviewers"]["changes_requested"]),
        sv(&["alice"]),
        "{v:#}"
    );
    assert_next(&v, "reviewer", &["bob"], &["pair verdict"]);
    p.poll_expect("alice", 10);

    p.ok_entry(
        "bob",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "Looks fine",
        ],
        PLAN_REVIEWS,
        Some(1),
        Some("APPROVED"),
    );
    p.assert_state("PLAN_CHANGES_REQUESTED", [0, 1, 0, 0]);
    let v = p.poll_expect("doer", 0);
    assert_eq!(strs(&v["next"]["handoff_to"]), sv(&["doer"]), "{v:#}");
    p.poll_expect("alice", 10);
    p.poll_expect("bob", 10);

    p.ok_entry(
        "doer",
        &[
            "submit",
            "plan",
            "--note",
            "Plan v2: quote fields",
            "--user-approved",
        ],
        PLAN,
        Some(2),
        None,
    );
    p.assert_state("PLANNING_SUBMITTED", [0, 2, 0, 0]);
    let v = p.poll_expect("alice", 0);
    assert_eq!(v["review"]["counter"], 2, "{v:#}");
    assert_eq!(
        strs(&v["review"]["pending"]),
        sv(&["alice", "bob"]),
        "old verdicts are stale, not current: {v:#}"
    );
    assert_eq!(strs(&v["review"]["stale"]), sv(&["alice", "bob"]), "{v:#}");
    assert_eq!(v["review"]["approved"], false, "{v:#}");

    p.ok_entry(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "2",
            "--note",
            "Good now",
        ],
        PLAN_REVIEWS,
        Some(2),
        Some("APPROVED"),
    );
    p.assert_phase("PLANNING_SUBMITTED");
    p.ok_entry(
        "bob",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "2",
            "--note",
            "Ship it",
        ],
        PLAN_REVIEWS,
        Some(2),
        Some("APPROVED"),
    );
    p.assert_state("PLAN_APPROVED", [0, 2, 0, 0]);
    let s = p.status();
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["reviewed"], 2,
        "{s:#}"
    );
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["verdict"], "APPROVED",
        "{s:#}"
    );
    assert_eq!(
        s["agents"]["bob"]["reviews"]["plan"]["verdict"], "APPROVED",
        "{s:#}"
    );
    let v = p.poll_expect("doer", 0);
    assert_eq!(strs(&v["next"]["handoff_to"]), sv(&["doer"]), "{v:#}");
    p.poll_expect("alice", 10);

    p.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    p.assert_state("CODING", [0, 2, 0, 0]);
    assert_eq!(
        p.top("worktree").as_deref(),
        Some(p.wt.as_str()),
        "worktree recorded\n{}",
        p.text()
    );
    let v = p.poll_expect("doer", 0);
    assert_next(&v, "doer", &["doer"], &["pair submit"]);

    p.ok_entry(
        "doer",
        &["submit", "code", "--note", "Exporter implemented"],
        CODE,
        Some(1),
        None,
    );
    p.assert_state("CODE_SUBMITTED", [0, 2, 0, 1]);
    let v = p.poll_expect("bob", 0);
    assert_eq!(v["review"]["target"], "code", "{v:#}");
    assert_eq!(v["review"]["diff_scope"], "staged", "{v:#}");
    p.ok("bob", &["claim"]);
    p.assert_phase("REVIEWING_CODE");
    p.ok_entry(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        CODE,
        Some(1),
        Some("APPROVED"),
    );
    p.ok_entry(
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        CODE,
        Some(1),
        Some("APPROVED"),
    );
    p.assert_state("READY_TO_COMMIT", [0, 2, 0, 1]);
    let v = p.poll_expect("doer", 0);
    assert_next(&v, "user", &["doer"], &["pair advance", "--user-approved"]);

    p.ok_entry(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--commit-sha",
            SHA_A,
            "--user-approved",
        ],
        DECISIONS,
        None,
        None,
    );
    p.assert_state("COMMITTED", [0, 2, 0, 1]);
    assert_eq!(p.top("commit_sha").as_deref(), Some(SHA_A), "{}", p.text());
    for who in ["doer", "alice", "bob"] {
        let v = p.poll_expect(who, 11);
        assert_eq!(v["terminal"], true, "{v:#}");
        assert_eq!(v["next"]["actor"], "none", "{v:#}");
    }
    p.ok_entry(
        "doer",
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "main",
            "--user-approved",
        ],
        DECISIONS,
        None,
        None,
    );
    p.assert_phase("MERGED");
    assert_eq!(
        p.top("merged_into").as_deref(),
        Some("main"),
        "{}",
        p.text()
    );
    p.ok_entry("doer", &["advance", "CLEANED_UP"], DECISIONS, None, None);
    p.assert_state("CLEANED_UP", [0, 2, 0, 1]);
    assert_eq!(
        p.top("worktree").as_deref(),
        Some(p.wt.as_str()),
        "worktree stays recorded after cleanup\n{}",
        p.text()
    );
    p.poll_expect("doer", 11);

    // the record, chronological inside each section
    assert_headings_in_order(&p, PLAN, &[&["doer", "1"], &["doer", "2"]]);
    assert_headings_in_order(
        &p,
        PLAN_REVIEWS,
        &[
            &["alice", "changes requested", "1"],
            &["bob", "approved", "1"],
            &["alice", "approved", "2"],
            &["bob", "approved", "2"],
        ],
    );
    assert_headings_in_order(
        &p,
        CODE,
        &[&["doer", "1"], &["alice", "approved"], &["bob", "approved"]],
    );
    let d = entry_headings(&p.text(), DECISIONS);
    assert!(
        d.len() >= 5,
        "Decisions must hold the gates and commit/merge/cleanup: {d:#?}"
    );
    let ts: Vec<String> = [PLAN, PLAN_REVIEWS, CODE, DECISIONS]
        .iter()
        .flat_map(|s| entry_headings(&p.text(), s))
        .collect();
    assert!(
        ts.iter().all(|h| has_utc_time(h)),
        "every entry heading carries the UTC time: {ts:#?}"
    );
    let dtext = sect(&p.text(), DECISIONS).unwrap();
    let commit = dtext
        .find(SHA_A)
        .or_else(|| dtext.to_lowercase().find("commit"));
    let merge = dtext.to_lowercase().find("merge");
    assert!(
        commit.is_some() && merge.is_some() && commit < merge,
        "Decisions records the commit before the merge:\n{dtext}"
    );
}

// ---------------------------------------------------------------------------------------------
// (b) debugging: RCA and red-test gates

#[test]
fn debugging_task_passes_the_rca_and_red_test_gates_in_order() {
    let p = Proto::init(&[
        "--goal",
        "Fix flaky upload",
        "--work-type",
        "debugging",
        "--reviewers",
        "alice",
    ]);
    assert_eq!(p.top("rca_required").as_deref(), Some("true"));
    assert_eq!(p.top("red_test_required").as_deref(), Some("true"));
    p.ok("alice", &["register"]);

    // RCA required: planning straight from DRAFT is refused, even with the user's approval
    let out = p.refused("doer", &["advance", "PLANNING", "--user-approved"], 6);
    out.mentions_any(&["rca", "root cause", "analysis"]);

    p.ok("doer", &["advance", "ANALYZING", "--user-approved"]);
    p.assert_state("ANALYZING", [0, 0, 0, 0]);
    // plan cannot be submitted before the analysis is approved
    p.refused(
        "doer",
        &["submit", "plan", "--note", "too early", "--user-approved"],
        6,
    );

    p.ok_entry(
        "doer",
        &[
            "submit",
            "analysis",
            "--note",
            "Race between writer and uploader",
            "--user-approved",
        ],
        RCA,
        Some(1),
        None,
    );
    p.assert_state("ANALYSIS_SUBMITTED", [1, 0, 0, 0]);
    let v = p.poll_expect("alice", 0);
    assert_eq!(v["review"]["target"], "analysis", "{v:#}");
    p.ok("alice", &["claim"]);
    p.assert_phase("REVIEWING_ANALYSIS");
    p.ok_entry(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "Convincing",
        ],
        RCA,
        Some(1),
        Some("APPROVED"),
    );
    p.assert_state("ANALYSIS_APPROVED", [1, 0, 0, 0]);

    p.ok("doer", &["advance", "PLANNING"]);
    p.assert_phase("PLANNING");
    p.ok_entry(
        "doer",
        &[
            "submit",
            "plan",
            "--note",
            "Lock the upload",
            "--user-approved",
        ],
        PLAN,
        Some(1),
        None,
    );
    p.ok_entry(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        PLAN_REVIEWS,
        Some(1),
        Some("APPROVED"),
    );
    p.assert_state("PLAN_APPROVED", [1, 1, 0, 0]);

    // red test required: coding straight from PLAN_APPROVED is refused
    let out = p.refused(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
        6,
    );
    out.mentions_any(&["red test", "red_test", "red-test"]);

    p.ok("doer", &["advance", "RED_TESTING"]);
    p.assert_phase("RED_TESTING");
    let v = p.poll_expect("doer", 0);
    assert_next(&v, "doer", &["doer"], &["pair submit"]);
    // no human gate on red tests
    p.ok_entry(
        "doer",
        &["submit", "red-test", "--note", "test_upload_race fails"],
        RED,
        Some(1),
        None,
    );
    p.assert_state("RED_TEST_SUBMITTED", [1, 1, 1, 0]);
    p.ok("alice", &["claim"]);
    p.assert_phase("REVIEWING_RED_TEST");
    p.ok_entry(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "Not deterministic",
        ],
        RED,
        Some(1),
        Some("CHANGES_REQUESTED"),
    );
    p.assert_state("RED_TEST_CHANGES_REQUESTED", [1, 1, 1, 0]);
    p.ok("doer", &["advance", "RED_TESTING"]);
    p.assert_phase("RED_TESTING");
    p.ok_entry(
        "doer",
        &["submit", "red-test", "--note", "Deterministic now"],
        RED,
        Some(2),
        None,
    );
    p.assert_state("RED_TEST_SUBMITTED", [1, 1, 2, 0]);
    p.ok_entry(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "2",
            "--note",
            "Fails for the right reason",
        ],
        RED,
        Some(2),
        Some("APPROVED"),
    );
    p.assert_state("RED_TEST_APPROVED", [1, 1, 2, 0]);

    // RED_TEST_APPROVED → CODING has no human gate
    p.ok("doer", &["advance", "CODING", "--worktree", "{wt}"]);
    p.assert_state("CODING", [1, 1, 2, 0]);
    p.ok_entry(
        "doer",
        &["submit", "code", "--note", "Fixed"],
        CODE,
        Some(1),
        None,
    );
    p.ok_entry(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "Green"],
        CODE,
        Some(1),
        Some("APPROVED"),
    );
    p.assert_state("READY_TO_COMMIT", [1, 1, 2, 1]);

    assert_headings_in_order(&p, RCA, &[&["doer", "1"], &["alice", "approved", "1"]]);
    assert_headings_in_order(
        &p,
        RED,
        &[
            &["doer", "1"],
            &["alice", "changes requested", "1"],
            &["doer", "2"],
            &["alice", "approved", "2"],
        ],
    );
}

#[test]
fn waivers_take_the_rca_and_red_test_gates_and_are_recorded_with_the_reason() {
    let p = Proto::init(&["--work-type", "debugging", "--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    let before = p.text();
    p.ok(
        "doer",
        &[
            "advance",
            "PLANNING",
            "--user-approved",
            "--waive",
            "user-says-cause-is-known",
        ],
    );
    p.assert_phase("PLANNING");
    let added = section_added(&before, &p.text(), DECISIONS);
    assert!(
        added.contains("user-says-cause-is-known") && norm(&added).contains("waive"),
        "a waiver is recorded in Decisions with its reason: {added:?}\n{}",
        p.text()
    );
    assert!(
        ["rca", "root cause", "analysis"]
            .iter()
            .any(|w| norm(&added).contains(w)),
        "the waiver names the waived predicate (RCA): {added:?}"
    );

    // plan round (the analysis predicate was waived for this task by the user)
    let out = p.run(
        "doer",
        &["submit", "plan", "--note", "p1", "--user-approved"],
    );
    if out.code != Some(0) {
        // the implementation may require the waiver to be repeated at the plan submission
        p.ok(
            "doer",
            &[
                "submit",
                "plan",
                "--note",
                "p1",
                "--user-approved",
                "--waive",
                "user-says-cause-is-known",
            ],
        );
    }
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");

    let before = p.text();
    p.ok(
        "doer",
        &[
            "advance",
            "CODING",
            "--worktree",
            "{wt}",
            "--user-approved",
            "--waive",
            "no-harness-for-this",
        ],
    );
    p.assert_phase("CODING");
    let added = section_added(&before, &p.text(), DECISIONS);
    assert!(
        added.contains("no-harness-for-this") && norm(&added).contains("red test"),
        "the red-test waiver is recorded with the predicate and the reason: {added:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// (c) yolo

#[test]
fn yolo_board_needs_no_user_approval_at_any_gate() {
    let p = Proto::init(&["--yolo", "--reviewers", "alice"]);
    assert_eq!(p.top("yolo").as_deref(), Some("true"));
    p.ok("alice", &["register"]);
    let v = p.poll_expect("doer", 0);
    assert_next(&v, "doer", &["doer"], &["pair advance"]);
    p.ok("doer", &["advance", "PLANNING"]);
    let v = p.poll_expect("doer", 0);
    assert_eq!(v["next"]["actor"], "doer", "yolo: no user gate: {v:#}");
    p.ok_entry(
        "doer",
        &["submit", "plan", "--note", "p"],
        PLAN,
        Some(1),
        None,
    );
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
    p.ok("doer", &["advance", "CODING", "--worktree", "{wt}"]);
    p.ok("doer", &["submit", "code", "--note", "c"]);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("READY_TO_COMMIT");
    let v = p.poll_expect("doer", 0);
    assert_eq!(v["next"]["actor"], "doer", "yolo: no user gate: {v:#}");
    p.ok("doer", &["advance", "COMMITTED", "--commit-sha", SHA_A]);
    p.ok("doer", &["advance", "MERGED", "--merged-into", "main"]);
    p.ok("doer", &["advance", "CLEANED_UP"]);
    p.assert_state("CLEANED_UP", [0, 1, 0, 1]);
}

#[test]
fn yolo_debugging_board_analyses_without_user_approval() {
    let p = Proto::init(&["--yolo", "--work-type", "debugging", "--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    p.ok("doer", &["advance", "ANALYZING"]);
    p.ok("doer", &["submit", "analysis", "--note", "a"]);
    p.assert_state("ANALYSIS_SUBMITTED", [1, 0, 0, 0]);
}

// ---------------------------------------------------------------------------------------------
// (d) no review

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

// ---------------------------------------------------------------------------------------------
// (e) block / unblock, (f) stop

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

// ---------------------------------------------------------------------------------------------
// (g) follow-up review rounds

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

// ---------------------------------------------------------------------------------------------
// inputs: notes from files and stdin, PAIR_AGENT, --json, --expect-sha256

#[test]
fn notes_come_from_text_files_and_stdin_into_the_entry() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    p.ok_entry_stdin(
        "doer",
        &["submit", "plan", "--note-file", "-", "--user-approved"],
        "Plan from stdin\n- step one\n",
        PLAN,
        Some(1),
    );
    assert!(
        sect(&p.text(), PLAN).unwrap().contains("- step one"),
        "{}",
        p.text()
    );
    let f = p.b.aux_file("review.md", "Review from a file\nline two\n");
    p.ok_entry(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note-file",
            f.to_str().unwrap(),
        ],
        PLAN_REVIEWS,
        Some(1),
        Some("CHANGES_REQUESTED"),
    );
    let reviews = sect(&p.text(), PLAN_REVIEWS).unwrap();
    assert!(
        reviews.contains("Review from a file") && reviews.contains("line two"),
        "{reviews}"
    );
}

#[test]
fn agent_defaults_to_pair_agent_env() {
    let p = Proto::init(&["--reviewers", "alice"]);
    let out = pair_env(["register", p.p()], &[("PAIR_AGENT", "alice")]);
    out.code(0);
    assert_eq!(p.status()["agents"]["alice"]["role"], "reviewer");
    let out = pair_env(
        ["advance", p.p(), "PLANNING", "--user-approved"],
        &[("PAIR_AGENT", "doer")],
    );
    out.code(0);
    p.assert_phase("PLANNING");
}

#[test]
fn semantic_commands_print_schema_1_json_and_honour_a_matching_expect_sha256() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    let h = p.b.sha();
    let out = p.ok(
        "doer",
        &[
            "advance",
            "PLANNING",
            "--user-approved",
            "--expect-sha256",
            &h,
            "--json",
        ],
    );
    let v = out.json();
    assert_eq!(v["schema"], 1, "{}", out.report());
    assert_eq!(
        v["phase"],
        "PLANNING",
        "the result reports the new phase: {}",
        out.report()
    );
    let text = out.stdout.clone();
    assert!(
        text.contains(&p.b.sha()),
        "the result reports the new SHA-256: {}",
        out.report()
    );
}

#[test]
fn worktree_path_is_repo_root_dot_worktrees_stem() {
    let p = Proto::init(&[]);
    let root = tempfile::tempdir().unwrap();
    let root_s = root.path().to_str().unwrap();
    let out = pair(["worktree-path", p.p(), "--repo-root", root_s]);
    out.code(0);
    let expected = format!("{root_s}/.worktrees/board");
    assert_eq!(out.stdout.trim(), expected, "{}", out.report());
    let out = pair(["worktree-path", p.p(), "--repo-root", root_s, "--json"]);
    out.code(0);
    let v = out.json();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["path"], expected.as_str(), "{}", out.report());
}

#[test]
fn worktree_path_strips_exactly_one_md() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("task.md.md");
    pair(["init", board.to_str().unwrap()]).code(0);
    let root = tempfile::tempdir().unwrap();
    let root_s = root.path().to_str().unwrap();
    let out = pair([
        "worktree-path",
        board.to_str().unwrap(),
        "--repo-root",
        root_s,
    ]);
    out.code(0);
    assert_eq!(
        out.stdout.trim(),
        format!("{root_s}/.worktrees/task.md"),
        "{}",
        out.report()
    );
}

// ---------------------------------------------------------------------------------------------
// §8: next.action is a runnable command

/// The first backticked `pair ...` command in an action, with its placeholders filled in.
fn command_in(action: &str, me: &str, p: &Proto, note: &str) -> Option<Vec<String>> {
    let start = action.find("`pair ")? + 1;
    let end = action[start..].find('`')? + start;
    let cmd = &action[start..end];
    let mut out = Vec::new();
    for w in cmd.split_whitespace().skip(1) {
        let w = match w {
            "FILE" => note.to_string(),
            "ABSOLUTE_PATH" | "ABS_PATH" | "PATH" | "WORKTREE" => p.wt.clone(),
            "SHA" | "COMMIT_SHA" => SHA_A.to_string(),
            "BRANCH" => "main".to_string(),
            "YOUR_ID" | "ID" | "AGENT" => me.to_string(),
            "TEXT" | "REASON" => "following-the-action".to_string(),
            "APPROVED|CHANGES_REQUESTED|COMMENT" | "VERDICT" => "APPROVED".to_string(),
            other => other.to_string(),
        };
        out.push(w);
    }
    Some(out)
}

#[test]
fn following_next_action_literally_drives_a_board_to_committed() {
    let p = Proto::init(&["--reviewers", "alice,bob", "--red-test"]);
    let note = p.b.aux_file("note.md", "Following the action\n");
    let note = note.to_str().unwrap().to_string();
    let mut trail = Vec::new();
    for _ in 0..40 {
        let phase = p.phase();
        if phase == "COMMITTED" {
            break;
        }
        let mut acted = false;
        for who in ["doer", "alice", "bob"] {
            let (o, v) = p.poll(who);
            if o.code != Some(0) {
                continue;
            }
            let action = v["next"]["action"].as_str().unwrap_or_default().to_string();
            let words = command_in(&action, who, &p, &note).unwrap_or_else(|| {
                panic!("next.action must name a `pair` command: {action:?}\n{v:#}")
            });
            trail.push(format!("[{phase}] {who}: pair {}", words.join(" ")));
            let out = pair(&words);
            assert_eq!(
                out.code,
                Some(0),
                "the command named by next.action for {who} must work as given\naction: {action}\ntrail:\n{}\n{}",
                trail.join("\n"),
                out.report()
            );
            p.assert_valid();
            acted = true;
            break;
        }
        assert!(acted, "nobody has a move in {phase}\n{}", trail.join("\n"));
    }
    p.assert_phase("COMMITTED");
}

#[test]
fn poll_action_for_a_pending_reviewer_names_its_own_agent_id() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let v = p.poll_expect("alice", 0);
    let action = v["next"]["action"].as_str().unwrap_or_default();
    assert!(
        action.contains("pair verdict") && action.contains("--agent alice"),
        "SPEC §8: the action names the exact command for the polling agent (alice): {action:?}"
    );
}

#[test]
fn poll_reports_required_reviewers_without_an_entry_as_missing() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let v = p.poll_expect("alice", 0);
    assert_eq!(strs(&v["review"]["missing"]), sv(&["bob"]), "{v:#}");
    assert_eq!(strs(&v["registered_reviewers"]), sv(&["alice"]), "{v:#}");
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    // bob has not voted: the round stays open
    p.assert_phase("PLANNING_SUBMITTED");
    let v = p.poll_expect("bob", 0);
    assert!(
        v["next"]["action"]
            .as_str()
            .unwrap_or_default()
            .contains("pair register"),
        "{v:#}"
    );
    p.ok("bob", &["register"]);
    let v = p.poll_expect("bob", 0);
    assert_eq!(strs(&v["review"]["pending"]), sv(&["bob"]), "{v:#}");
    assert_eq!(strs(&v["review"]["missing"]), Vec::<String>::new(), "{v:#}");
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn poll_in_a_reviewable_phase_with_no_required_reviewers_hands_to_the_doer() {
    let p = Proto::init(&[]);
    let text = set_top(
        &set_top(&p.text(), "phase", "PLANNING_SUBMITTED"),
        "plan_revision",
        "1",
    );
    let text = agreeing(&set_top(&text, "no_review", "true"));
    let h = p.b.sha();
    p.b.write_expect(&text, &h, &["--repair", "--reason", "setup"])
        .code(0);
    p.assert_phase("PLANNING_SUBMITTED");
    let v = p.poll_expect("doer", 0);
    assert_eq!(v["next"]["actor"], "doer", "{v:#}");
    assert_eq!(strs(&v["next"]["handoff_to"]), sv(&["doer"]), "{v:#}");
}

#[test]
fn red_test_approved_hands_to_the_doer_without_a_user_gate() {
    let p = Proto::init(&["--reviewers", "alice", "--red-test"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
        "DOER advance RED_TESTING",
        "DOER submit red-test --note r",
        "alice verdict APPROVED --revision 1 --note ok",
    ]);
    p.assert_phase("RED_TEST_APPROVED");
    let v = p.poll_expect("doer", 0);
    assert_next(&v, "doer", &["doer"], &["pair advance", "CODING"]);
}

// ---------------------------------------------------------------------------------------------
// gates are recorded; bytes and line endings are preserved

#[test]
fn every_passed_human_gate_is_recorded_in_decisions() {
    let p = Proto::init(&["--reviewers", "alice", "--rca"]);
    p.ok("alice", &["register"]);
    let gated: &[&[&str]] = &[
        &["advance", "ANALYZING", "--user-approved"],
        &["submit", "analysis", "--note", "a", "--user-approved"],
    ];
    for cmd in gated {
        let before = p.text();
        p.ok("doer", cmd);
        let added = section_added(&before, &p.text(), DECISIONS);
        assert!(
            added.contains("### ") && norm(&added).contains("user"),
            "gate of `{}` recorded in Decisions: {added:?}\n{}",
            cmd.join(" "),
            p.text()
        );
    }
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok("doer", &["advance", "PLANNING"]);
    let gated: &[&[&str]] = &[&["submit", "plan", "--note", "p", "--user-approved"]];
    for cmd in gated {
        let before = p.text();
        p.ok("doer", cmd);
        let added = section_added(&before, &p.text(), DECISIONS);
        assert!(
            added.contains("### ") && norm(&added).contains("user"),
            "gate of `{}` recorded: {added:?}",
            cmd.join(" ")
        );
    }
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    let before = p.text();
    p.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    let added = section_added(&before, &p.text(), DECISIONS);
    assert!(
        norm(&added).contains("user") && added.contains("CODING"),
        "the CODING gate is recorded and named: {added:?}"
    );
}

#[test]
fn semantic_writes_keep_crlf_line_endings_and_the_bom() {
    let p = Proto::init(&["--reviewers", "alice"]);
    let crlf = with_bom(&to_crlf(&p.text()));
    std::fs::write(&p.b.path, &crlf).unwrap();
    p.assert_valid();
    p.ok("alice", &["register"]);
    p.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    p.ok(
        "doer",
        &[
            "submit",
            "plan",
            "--note",
            "line one\nline two",
            "--user-approved",
        ],
    );
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok("alice", &["note", "--section", "Evidence", "--note", "e"]);
    p.assert_phase("PLAN_APPROVED");
    let bytes = p.b.read();
    assert!(bytes.starts_with(&[0xEF, 0xBB, 0xBF]), "the BOM is kept");
    let s = String::from_utf8(bytes[3..].to_vec()).unwrap();
    let bare_lf = s.replace("\r\n", "").matches('\n').count();
    assert_eq!(bare_lf, 0, "every line ending stays CRLF:\n{s:?}");
    assert!(s.contains("line two"), "{s}");
}

#[test]
fn a_note_append_preserves_every_other_byte_of_the_body() {
    let p = Proto::init(&["--reviewers", "alice"]);
    // odd but valid body bytes: trailing spaces, tabs, a fence holding a heading-like line,
    // and no newline at the very end
    let text = p.text();
    let odd = text.replacen(
        "## Evidence\n",
        "## Evidence\n\nsome  trailing spaces   \n\tTabbed line\n```text\n## not a section\n```\n",
        1,
    );
    let odd = odd.trim_end_matches('\n').to_string() + "\nlast line without newline";
    let h = p.b.sha();
    p.b.write_expect(&odd, &h, &["--repair", "--reason", "setup"])
        .code(0);
    p.ok("alice", &["register"]);
    let before = p.text();
    p.ok_entry(
        "alice",
        &["note", "--section", "Evidence", "--note", "appended"],
        "Evidence",
        None,
        None,
    );
    let after = p.text();
    // (the journal, at the end, gains the write's record; the rest is compared)
    let unj = |t: &str| String::from_utf8(unjournaled(t.as_bytes())).unwrap();
    let (before_c, after_c) = (unj(&before), unj(&after));
    let (ob, nb) = (body_of(&before_c).as_bytes(), body_of(&after_c).as_bytes());
    let prefix = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    let suffix = ob
        .iter()
        .rev()
        .zip(nb.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        prefix + suffix >= ob.len() && nb.len() > ob.len(),
        "the note must be one insertion; every other body byte preserved exactly\n--- before ---\n{before}\n--- after ---\n{after}"
    );
    let ev = sect(&after, "Evidence").unwrap();
    assert!(
        ev.contains("\tTabbed line") && ev.contains("some  trailing spaces   \n"),
        "{ev:?}"
    );
    assert!(
        after.ends_with("last line without newline") || after.contains("last line without newline"),
        "{after}"
    );
}
