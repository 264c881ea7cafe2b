//! Whole tasks from `init` to the end through the real binary: a feature with two reviewers, a
//! debugging task through the RCA and red-test gates, a doer named anything, and the verified git
//! lifecycle on a real worktree (commit, merge and clean-up held to what was approved); a board
//! without a repository moves as before.

use crate::common::flow::{
    CODE, DECISIONS, PLAN, PLAN_REVIEWS, RCA, assert_headings_in_order, assert_next,
};
use crate::common::repo::{Lc, tree_of};
use crate::common::*;
use crate::proto::*;
use std::fs;

#[test]
fn the_full_debugging_lifecycle_with_a_real_worktree_verifies_every_step() {
    let lc = Lc::bare(&["--work-type", "debugging"]);
    lc.ok("alice", &["register"]);
    lc.ok("doer", &["advance", "ANALYZING", "--user-approved"]);
    lc.ok(
        "doer",
        &[
            "submit",
            "analysis",
            "--note",
            "root cause",
            "--user-approved",
        ],
    );
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    lc.ok("doer", &["advance", "PLANNING"]);
    lc.ok(
        "doer",
        &["submit", "plan", "--note", "plan", "--user-approved"],
    );
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );

    // The worktree and the move to RED_TESTING in one write, behind the human gate.
    lc.refused("doer", &["worktree", "create"], 6)
        .mentions(&["human gate", "--user-approved"]);
    assert!(!lc.wt().exists(), "a refusal makes no worktree");
    let out = lc.ok("doer", &["worktree", "create", "--user-approved", "--json"]);
    let j = out.json();
    assert_eq!(j["phase"], "RED_TESTING");
    let base = git(&lc.root, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(j["worktree"]["base_sha"], base.as_str());
    assert_eq!(lc.field("repo_root"), lc.root.to_str().unwrap());
    assert_eq!(lc.field("base_branch"), "main");
    assert_eq!(lc.field("base_sha"), base.as_str());
    assert_eq!(lc.field("topic_branch"), "pair/task");
    assert_eq!(lc.field("worktree"), lc.wt().to_str().unwrap());
    assert_eq!(
        lc.g(&["symbolic-ref", "--short", "HEAD"]).trim(),
        "pair/task"
    );
    assert!(lc.text().contains("The user approved creating it"));

    // The red test is written in the worktree.
    lc.write("test_lib.txt", "expect two\n");
    let test_file = lc.wt().join("test_lib.txt");
    lc.ok(
        "doer",
        &[
            "submit",
            "red-test",
            "--note",
            "fails",
            "--files",
            test_file.to_str().unwrap(),
        ],
    );
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "red"],
    );
    lc.ok("doer", &["advance", "CODING"]);

    // Staged review, a change request, an unstaged follow-up, approval.
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt", "test_lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged fix"]);
    let staged_tree = lc.code_tree();
    assert_eq!(staged_tree, lc.g(&["write-tree"]).trim());
    lc.ok(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "more",
        ],
    );
    lc.write("lib.txt", "one\ntwo\nthree\n");
    lc.ok("doer", &["submit", "followup", "--note", "three"]);
    let followup_tree = lc.code_tree();
    assert_ne!(followup_tree, staged_tree);
    assert_eq!(
        lc.g(&["diff", "--cached", "--name-only"]).trim(),
        "lib.txt\ntest_lib.txt",
        "the user's index is untouched by the tree pin"
    );
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "lgtm"],
    );
    assert_eq!(lc.phase(), "READY_TO_COMMIT");

    // Commit exactly what was approved; the commit SHA defaults to the worktree's HEAD.
    lc.g(&["add", "lib.txt"]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    let head = lc.g(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(tree_of(&lc.wt(), "HEAD"), followup_tree);
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
    assert_eq!(lc.field("commit_sha"), head.as_str());
    let text = lc.text();
    assert!(
        text.contains("is the approved tree of code round 2"),
        "{text}"
    );

    // Merge into the base branch, remove the worktree and the branch.
    git(&lc.root, &["merge", "-q", "--ff-only", "pair/task"]);
    lc.ok(
        "doer",
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "main",
            "--user-approved",
        ],
    );
    git(&lc.root, &["worktree", "remove", lc.wt().to_str().unwrap()]);
    git(&lc.root, &["branch", "-d", "pair/task"]);
    lc.ok("doer", &["advance", "CLEANED_UP"]);
    assert_eq!(lc.field("worktree_removed"), true);
    let text = lc.text();
    for want in [
        "branch main contains commit",
        "is removed",
        "topic branch pair/task is deleted",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
}

#[test]
fn a_board_without_a_repository_is_not_verified_validate_says_so_and_check_has_nowhere_to_run() {
    let lc = Lc::new(&[]);
    let v = pair(["validate", lc.board.as_str(), "--json"]).json();
    let text = v.to_string();
    assert!(text.contains("commit-tree-approved"), "{v:#}");
    let out = pair(["validate", lc.board.as_str()]);
    out.code(0).mentions(&["lifecycle", "not verified"]);
    lc.ok("doer", &["stop", "--reason", "plan only"]);
    lc.refused("doer", &["check", "--", "true"], 6);
}

#[test]
fn a_worktree_named_by_advance_alone_moves_through_commit_merge_and_cleanup_as_before() {
    let lc = Lc::new(&[]);
    let other = tempfile::tempdir().unwrap();
    let wt = fs::canonicalize(other.path()).unwrap().join("wt");
    git_worktree(&wt);
    lc.ok(
        "doer",
        &[
            "advance",
            "CODING",
            "--worktree",
            wt.to_str().unwrap(),
            "--user-approved",
        ],
    );
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    assert!(
        !lc.code_tree().is_empty(),
        "the tree is pinned all the same"
    );
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    // No repository recorded: the commit, merge and cleanup are recorded unchecked.
    lc.ok(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--commit-sha",
            "0123456789abcdef0123456789abcdef01234567",
            "--user-approved",
        ],
    );
    lc.ok(
        "doer",
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "main",
            "--user-approved",
        ],
    );
    lc.ok("doer", &["advance", "CLEANED_UP"]);
    assert!(!lc.text().contains("Verified:"));
    pair(["validate", lc.board.as_str()])
        .code(0)
        .mentions(&["not verified"]);
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

const RED: &str = "Red Tests";

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
