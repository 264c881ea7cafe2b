//! `pair advance` and the human gates: the user's approval, waivers, `yolo`, the RCA and red-test
//! gates and the `Decisions` record of each passed gate; and the verified git steps, where
//! `COMMITTED` is held to the approved tree and `MERGED` to a branch that contains it.

use crate::common::env::{Env, write_as};
use crate::common::flow::{DECISIONS, PLAN, assert_next, plan_approved, planning, submit_plan};
use crate::common::phases::board_in;
use crate::common::repo::{Lc, tree_of};
use crate::common::*;
use crate::proto::{Proto, *};
use std::fs;

#[test]
fn merged_into_the_topic_branch_itself_is_refused() {
    let lc = Lc::approved(&[]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
    lc.refused(
        "doer",
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "pair/task",
            "--user-approved",
        ],
        6,
    )
    .mentions(&["merged-branch-contains-commit", "topic branch", "pair/task"]);
    lc.g(&["checkout", "-q", "--detach"]);
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
}

#[test]
fn after_an_approved_follow_up_the_commit_step_includes_the_unstaged_follow_up() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    lc.ok(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "no",
        ],
    );
    lc.write("lib.txt", "one\ntwo\nthree\n");
    lc.ok("doer", &["submit", "followup", "--note", "more"]);
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    let poll = pair(["poll", lc.board.as_str(), "--agent", "doer", "--json"]).json();
    let action = poll["next"]["action"].as_str().unwrap().to_string();
    let wt = lc.wt();
    let add = format!("git -C {} add -u", wt.display());
    assert!(action.contains(&add), "{action}");
    // Doing what it says commits the approved tree.
    lc.g(&["add", "-u"]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
}

#[test]
fn a_gate_record_names_the_command_that_ran() {
    let p = planning();
    submit_plan(&p);
    let decisions = section_text(&p.text(), "Decisions").unwrap();
    let file = p.b.aux.path().join("plan.md");
    let ran = format!("--note-file {} --user-approved", file.to_str().unwrap());
    assert!(decisions.contains(&ran), "{decisions}");
    assert!(!decisions.contains("--note-file FILE"), "{decisions}");
    // A short inline note is copied as it was given.
    let q = planning();
    q.ok(
        &q.doer.clone(),
        &[
            "submit",
            "plan",
            "--note",
            "Retry three times",
            "--user-approved",
        ],
    );
    let decisions = section_text(&q.text(), "Decisions").unwrap();
    assert!(
        decisions.contains("--agent doer plan --note 'Retry three times' --user-approved"),
        "{decisions}"
    );
}

#[test]
fn a_commit_with_one_unreviewed_line_is_refused_naming_the_file_and_the_exact_content_passes() {
    let lc = Lc::approved(&[]);
    lc.write("lib.txt", "one\ntwo\nunreviewed\n");
    lc.g(&["commit", "-q", "-am", "fix plus one"]);
    let out = lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6);
    out.mentions(&["commit-tree-approved", "lib.txt", "approved tree"]);
    let err = lc
        .run(
            "doer",
            &["advance", "COMMITTED", "--user-approved", "--json"],
        )
        .json_error(6);
    assert!(
        err["message"].as_str().unwrap().contains("M lib.txt"),
        "{err}"
    );

    lc.g(&["reset", "-q", "--soft", "HEAD~1"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["commit", "-q", "-am", "exactly the fix"]);
    let sha = lc.g(&["rev-parse", "HEAD"]).trim().to_string();
    lc.ok(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--commit-sha",
            &sha,
            "--user-approved",
        ],
    );
    assert_eq!(lc.phase(), "COMMITTED");
}

#[test]
fn a_commit_sha_that_is_missing_off_the_branch_or_not_from_base_is_refused() {
    let lc = Lc::approved(&[]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    // No such commit.
    lc.refused(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--commit-sha",
            "0123456789abcdef0123456789abcdef01234567",
            "--user-approved",
        ],
        6,
    )
    .mentions(&["commit-exists", "does not exist"]);
    // The same content committed on another branch: not on the topic branch.
    git(&lc.root, &["checkout", "-q", "-b", "elsewhere"]);
    fs::write(lc.root.join("lib.txt"), "one\ntwo\n").unwrap();
    git(&lc.root, &["commit", "-q", "-am", "same content elsewhere"]);
    let elsewhere = git(&lc.root, &["rev-parse", "HEAD"]).trim().to_string();
    git(&lc.root, &["checkout", "-q", "main"]);
    lc.refused(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--commit-sha",
            &elsewhere,
            "--user-approved",
        ],
        6,
    )
    .mentions(&["commit-on-topic-branch", "pair/task"]);
    // The approved tree, but on a history that does not start at base_sha.
    let orphan_tree = tree_of(&lc.wt(), "HEAD");
    let orphan = git(&lc.root, &["commit-tree", &orphan_tree, "-m", "rootless"])
        .trim()
        .to_string();
    git(&lc.root, &["branch", "-f", "pair/task-2", &orphan]);
    lc.refused(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--commit-sha",
            &orphan,
            "--user-approved",
        ],
        6,
    )
    .mentions(&["commit-descends-from-base", "base_sha"]);
}

#[test]
fn merged_into_a_branch_without_the_commit_and_cleanup_with_the_worktree_present_are_refused() {
    let lc = Lc::approved(&[]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
    lc.refused(
        "doer",
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "mian",
            "--user-approved",
        ],
        6,
    )
    .mentions(&["no branch", "mian"]);
    lc.refused(
        "doer",
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "main",
            "--user-approved",
        ],
        6,
    )
    .mentions(&["does not contain", "main"]);
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
    lc.refused("doer", &["advance", "CLEANED_UP"], 6)
        .mentions(&["worktree-removed", "still there", "topic-branch-deleted"]);
    git(&lc.root, &["worktree", "remove", lc.wt().to_str().unwrap()]);
    lc.refused("doer", &["advance", "CLEANED_UP"], 6)
        .mentions(&["topic-branch-deleted", "--keep-branch"]);
    lc.ok("doer", &["advance", "CLEANED_UP", "--keep-branch"]);
    assert!(
        lc.text().contains("is kept (--keep-branch)"),
        "{}",
        lc.text()
    );
}

/// A check run in the worktree may leave a file no commit holds (the `Cargo.lock` of a first
/// `cargo test`); `git worktree remove` then refuses the worktree, and so the cleanup's refusal
/// names the files and the `--force` that removes it.
#[test]
fn a_cleanup_refused_over_files_no_commit_holds_names_them_and_how_to_remove_the_worktree() {
    let lc = Lc::approved(&[]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
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
    fs::write(lc.wt().join("Cargo.lock"), "# written by a test run\n").unwrap();
    let wt = lc.wt().to_str().unwrap().to_string();
    let remove = std::process::Command::new("git")
        .args(["-C", lc.root.to_str().unwrap(), "worktree", "remove", &wt])
        .output()
        .unwrap();
    assert!(
        !remove.status.success(),
        "git removed a worktree holding an untracked file"
    );
    lc.refused("doer", &["advance", "CLEANED_UP"], 6)
        .mentions(&[
            "worktree-removed",
            "Cargo.lock",
            &format!("git worktree remove --force {wt}"),
        ]);
    // Without such files the refusal says what it said before.
    fs::remove_file(lc.wt().join("Cargo.lock")).unwrap();
    let out = lc.refused("doer", &["advance", "CLEANED_UP"], 6);
    out.mentions(&["still there", &format!("git worktree remove {wt}")]);
    assert!(!out.all().contains("--force"), "{}", out.report());
    git(&lc.root, &["worktree", "remove", &wt]);
    git(&lc.root, &["branch", "-d", "pair/task"]);
    lc.ok("doer", &["advance", "CLEANED_UP"]);
}

#[test]
fn a_merge_that_brings_topic_commits_made_after_the_verified_one_is_refused() {
    let lc = Lc::approved(&[]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    let verified = lc.g(&["rev-parse", "HEAD"]).trim().to_string();
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
    // After the verification the topic branch gains a commit nobody reviewed.
    lc.write("lib.txt", "one\ntwo\nunreviewed\n");
    lc.g(&["commit", "-q", "-am", "later"]);
    let later = lc.g(&["rev-parse", "HEAD"]).trim().to_string();
    git(&lc.root, &["merge", "-q", "--ff-only", "pair/task"]);
    let merge = [
        "advance",
        "MERGED",
        "--merged-into",
        "main",
        "--user-approved",
    ];
    lc.refused("doer", &merge, 6).mentions(&[
        "merge-brings-no-unreviewed-commit",
        &later[..12],
        &format!("git merge {verified}"),
    ]);
    assert_eq!(lc.phase(), "COMMITTED");
    // Merging the verified commit itself passes, though the topic branch is ahead of it.
    git(&lc.root, &["reset", "-q", "--hard", "HEAD~1"]);
    git(
        &lc.root,
        &["merge", "-q", "--no-ff", "-m", "merge", &verified],
    );
    lc.ok("doer", &merge);
    assert!(
        lc.text().contains("holds no commit of pair/task after"),
        "{}",
        lc.text()
    );
}

#[test]
fn a_raw_write_cannot_take_a_verified_step() {
    let lc = Lc::approved(&[]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    let content = lc
        .text()
        .replacen("phase: READY_TO_COMMIT", "phase: COMMITTED", 1);
    let b = Board::new(b"");
    let file = b.aux_file("new.md", content);
    let sha = sha256_hex(fs::read(&lc.board).unwrap());
    let before = fs::read(&lc.board).unwrap();
    pair([
        "write",
        lc.board.as_str(),
        "--content-file",
        file.to_str().unwrap(),
        "--expect-sha256",
        &sha,
        "--operation",
        "commit",
        "--as",
        "doer",
        "--user-approved",
    ])
    .code(6)
    .mentions(&["raw write", "pair advance"]);
    assert_eq!(before, fs::read(&lc.board).unwrap());
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

    // A waiver takes one transition: the plan's submission needs the RCA gate again, so it is
    // refused without its own waiver (exit 6, the board untouched, the call to make named)…
    p.refused(
        "doer",
        &["submit", "plan", "--note", "p1", "--user-approved"],
        6,
    )
    .mentions(&["root cause analysis", "--waive REASON"]);
    // …and taken with it, recorded again.
    let before = p.text();
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
    let added = section_added(&before, &p.text(), DECISIONS);
    assert!(
        added.contains("user-says-cause-is-known"),
        "the plan's waiver is recorded with its reason: {added:?}"
    );
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
fn rca_required_refuses_draft_to_planning_even_with_user_approval() {
    let p = board_in("DRAFT", &["--rca", "--reviewers", "alice,bob"]);
    p.refused("doer", &["advance", "PLANNING", "--user-approved"], 6)
        .mentions_any(&["rca", "root cause", "analysis"]);
}

#[test]
fn rca_required_refuses_a_plan_submission_before_the_analysis_is_approved() {
    // reach ANALYSIS_CHANGES_REQUESTED → ANALYZING; the plan cannot be submitted from there
    let p = board_in(
        "ANALYSIS_CHANGES_REQUESTED",
        &["--rca", "--reviewers", "alice,bob"],
    );
    p.refused(
        "doer",
        &["submit", "plan", "--note", "n", "--user-approved"],
        6,
    );
    p.ok("doer", &["advance", "ANALYZING"]);
    p.refused(
        "doer",
        &["submit", "plan", "--note", "n", "--user-approved"],
        6,
    );
}

#[test]
fn red_test_required_refuses_plan_approved_to_coding_without_a_waiver() {
    let p = board_in("PLAN_APPROVED", &["--red-test", "--reviewers", "alice,bob"]);
    p.refused(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
        6,
    )
    .mentions_any(&["red test", "red_test", "red-test"]);
}

#[test]
fn each_human_gate_without_user_approved_is_refused_and_named() {
    let cases: &[(&str, &[&str])] = &[
        ("DRAFT", &["advance", "ANALYZING"]),
        ("DRAFT", &["advance", "PLANNING"]),
        ("ANALYZING", &["submit", "analysis", "--note", "n"]),
        ("PLANNING", &["submit", "plan", "--note", "n"]),
        (
            "PLAN_APPROVED",
            &["advance", "CODING", "--worktree", "{wt}"],
        ),
        (
            "READY_TO_COMMIT",
            &["advance", "COMMITTED", "--commit-sha", SHA_A],
        ),
        ("COMMITTED", &["advance", "MERGED", "--merged-into", "main"]),
    ];
    for (phase, cmd) in cases {
        let p = board_in(phase, &["--reviewers", "alice,bob"]);
        p.refused("doer", cmd, 6)
            .mentions_any(&["--user-approved", "human gate", "user approv"]);
    }
}

#[test]
fn a_gate_passed_by_a_raw_write_is_recorded_in_decisions() {
    let e = Env::new();
    e.ok(0, &["init", "g.md"]);
    let text = e.read("g.md");
    let forged = text.replacen("phase: DRAFT", "phase: PLANNING", 1);
    let r = write_as(&e, "g.md", &forged, Some("doer"), &[]);
    assert_eq!(r.code, 6, "a gate needs --user-approved: {}", r.stderr);
    let r = write_as(&e, "g.md", &forged, Some("doer"), &["--user-approved"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = e.read("g.md");
    assert!(
        after.contains("Gate approved — DRAFT → PLANNING"),
        "{after}"
    );
}

#[test]
fn a_committed_boards_text_names_the_optional_merge_and_no_json_key() {
    let lc = Lc::approved(&[]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
    let out = lc.run("doer", &["poll"]);
    out.code(11);
    assert!(
        out.stdout.contains("optional    ") && out.stdout.contains("the optional step"),
        "{}",
        out.report()
    );
    assert!(!out.stdout.contains("next."), "{}", out.report());
}
