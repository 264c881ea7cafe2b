//! Attempts to make `pair` record a falsehood or leave a broken board, each driven through the
//! real binary on real repositories; every test names the rule the attempt ran into.

use std::fs;

use crate::common::*;
use crate::lifecycle::Lc;

/// A raw write of `content` over the lifecycle board, as `who`.
fn raw_write(lc: &Lc, content: String, who: &str) -> Out {
    let b = Board::new(b"");
    let file = b.aux_file("new.md", content);
    let sha = sha256_hex(fs::read(&lc.board).unwrap());
    pair([
        "write",
        lc.board.as_str(),
        "--content-file",
        file.to_str().unwrap(),
        "--expect-sha256",
        &sha,
        "--as",
        who,
    ])
}

#[test]
fn a_raw_write_cannot_record_a_check_run_that_pair_check_did_not_run() {
    let lc = Lc::approved(&["--require-check", "tests=false"]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    let forged = format!(
        "check_runs:\n  tests:\n    command: [\"sh\", \"-c\", \"false\"]\n    exit_code: 0\n    \
         tree: \"{}\"\n    duration_ms: 2\n    agent: doer\n    at: \"2026-01-01T00:00:00Z\"\n\
         agents:\n",
        lc.code_tree()
    );
    let content = lc.text().replacen("agents:\n", &forged, 1);
    let before = fs::read(&lc.board).unwrap();
    raw_write(&lc, content, "doer")
        .code(6)
        .mentions(&["check_runs", "pair check"]);
    assert_eq!(before, fs::read(&lc.board).unwrap());
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6)
        .mentions(&["tests"]);
}

#[test]
fn approving_over_ones_own_challenged_objection_is_refused_until_it_is_ruled() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    let obj = [
        "object",
        "--severity",
        "blocking",
        "--anchor",
        "lib.txt:2",
        "--title",
        "two is wrong",
        "--evidence",
        "it says two",
        "--fix",
        "say three",
    ];
    lc.ok("alice", &obj);
    lc.ok(
        "alice",
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
    );
    lc.write("lib.txt", "one\ntwo\nthree\n");
    lc.ok("doer", &["challenge", "BLK-1", "--grounds", "two is right"]);
    lc.ok("doer", &["submit", "followup", "--note", "more"]);
    // An approval would end the gate with the dispute undecided; upheld afterwards, the
    // objection would stand open over an approved gate.
    lc.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
        6,
    )
    .mentions(&["BLK-1", "challenged", "pair rule"]);
    lc.ok(
        "alice",
        &["rule", "BLK-1", "overrule", "--reason", "two is right"],
    );
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    assert_eq!(lc.phase(), "READY_TO_COMMIT");
}

#[test]
fn worktree_create_with_path_and_branch_given_needs_no_name_from_the_board() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap().join("re po ü");
    fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    fs::write(root.join("lib.txt"), "one\n").unwrap();
    git(&root, &["add", "lib.txt"]);
    git(&root, &["commit", "-q", "-m", "base"]);
    // A board name that gives no safe default worktree stem.
    let board = root.join("ta sk é.md").to_str().unwrap().to_string();
    let b = board.as_str();
    pair(["init", b, "--reviewers", "alice"]).code(0);
    pair(["register", b, "--agent", "alice"]).code(0);
    pair([
        "advance",
        b,
        "PLANNING",
        "--user-approved",
        "--agent",
        "doer",
    ])
    .code(0);
    pair([
        "submit",
        b,
        "plan",
        "--note",
        "p",
        "--user-approved",
        "--agent",
        "doer",
    ])
    .code(0);
    pair([
        "verdict",
        b,
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "ok",
        "--agent",
        "alice",
    ])
    .code(0);
    // Without --path the default is needed, and the refusal says what to pass.
    pair([
        "worktree",
        "create",
        b,
        "--user-approved",
        "--agent",
        "doer",
    ])
    .code(6)
    .mentions(&["--path"]);
    let wt = root.join(".worktrees").join("w t ü");
    let wt_s = wt.to_str().unwrap();
    pair([
        "worktree",
        "create",
        b,
        "--user-approved",
        "--agent",
        "doer",
        "--path",
        wt_s,
        "--branch",
        "topic",
    ])
    .code(0);
    pair(["validate", b]).code(0);
    assert_eq!(
        git(&wt, &["symbolic-ref", "--short", "HEAD"]).trim(),
        "topic"
    );
    assert!(
        fs::read_to_string(&board)
            .unwrap()
            .contains("topic_branch: topic")
    );
}

#[test]
fn a_check_that_ran_with_untracked_files_present_does_not_count_for_the_approved_tree() {
    let lc = Lc::approved(&["--require-check", "tests=test -e ok.flag"]);
    // The approved content fails the check; a file that is neither staged nor committed
    // makes it pass.
    lc.write("ok.flag", "");
    lc.ok("doer", &["check", "--name", "tests"]);
    fs::remove_file(lc.wt().join("ok.flag")).unwrap();
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6)
        .mentions(&["required-checks-passed", "tests"]);
}

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
fn status_of_a_gate_deferred_to_blocked_names_who_deferred_it_and_why() {
    let b = Board::absent();
    let p = b.p();
    pair(["init", p, "--reviewers", "alice", "--max-rounds", "1"]).code(0);
    pair(["register", p, "--agent", "alice"]).code(0);
    pair([
        "advance",
        p,
        "PLANNING",
        "--user-approved",
        "--agent",
        "doer",
    ])
    .code(0);
    pair([
        "submit",
        p,
        "plan",
        "--note",
        "p",
        "--user-approved",
        "--agent",
        "doer",
    ])
    .code(0);
    pair([
        "object",
        p,
        "--agent",
        "alice",
        "--severity",
        "blocking",
        "--anchor",
        "## Plan Revisions",
        "--title",
        "t",
        "--evidence",
        "e",
        "--fix",
        "f",
    ])
    .code(0);
    pair([
        "verdict",
        p,
        "CHANGES_REQUESTED",
        "--revision",
        "1",
        "--note",
        "no",
        "--agent",
        "alice",
        "--objections",
        "BLK-1",
    ])
    .code(0);
    pair([
        "decide",
        p,
        "defer",
        "--reason",
        "needs the vendor",
        "--escalation",
        "parking-lot",
        "--agent",
        "alice",
    ])
    .code(0);
    let status = pair(["status", p, "--json"]).json();
    assert_eq!(status["phase"], "BLOCKED");
    assert_eq!(status["blocked"]["from"], "AWAITING_DECISION", "{status}");
    assert_eq!(status["blocked"]["by"], "alice", "{status}");
    assert!(
        status["blocked"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("needs the vendor")),
        "{status}"
    );
    pair(["status", p])
        .code(0)
        .mentions(&["by alice", "needs the vendor"]);
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
