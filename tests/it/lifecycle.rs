//! The verified git lifecycle, on real repositories in temporary directories: `pair worktree
//! create` makes and records the worktree, every code round pins its tree, `advance COMMITTED`
//! holds the commit to the approved tree (and to the required checks' runs on it), `MERGED` to
//! the branch that contains it and `CLEANED_UP` to a removed worktree and branch. A waiver is
//! recorded; a board without a repository moves as before.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

/// A repository with one commit and a blackboard in it, driven to PLAN_APPROVED with one
/// required reviewer (alice).
pub(crate) struct Lc {
    _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) board: String,
}

impl Lc {
    pub(crate) fn new(init: &[&str]) -> Lc {
        let lc = Lc::bare(init);
        lc.ok("alice", &["register"]);
        lc.ok("doer", &["advance", "PLANNING", "--user-approved"]);
        lc.ok(
            "doer",
            &["submit", "plan", "--note", "the plan", "--user-approved"],
        );
        lc.ok(
            "alice",
            &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        );
        lc
    }

    /// The repository and the blackboard, in DRAFT.
    pub(crate) fn bare(init: &[&str]) -> Lc {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap().join("repo");
        fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        fs::write(root.join("lib.txt"), "one\n").unwrap();
        fs::write(
            root.join(".gitignore"),
            "*.md.lock\n*.md.lock.owner.json\n.worktrees/\ntask.md\n",
        )
        .unwrap();
        git(&root, &["add", "lib.txt", ".gitignore"]);
        git(&root, &["commit", "-q", "-m", "base"]);
        let board = root.join("task.md").to_str().unwrap().to_string();
        let mut args = vec!["init", board.as_str(), "--reviewers", "alice"];
        args.extend_from_slice(init);
        pair(&args).code(0);
        Lc {
            _dir: dir,
            root,
            board,
        }
    }

    pub(crate) fn wt(&self) -> PathBuf {
        self.root.join(".worktrees").join("task")
    }

    pub(crate) fn run(&self, actor: &str, words: &[&str]) -> Out {
        let mut v = vec![words[0].to_string(), self.board.clone()];
        if words[0] == "worktree" {
            v = vec!["worktree".into(), words[1].into(), self.board.clone()];
        }
        v.push("--agent".into());
        v.push(actor.into());
        let skip = if words[0] == "worktree" { 2 } else { 1 };
        v.extend(words[skip..].iter().map(|w| w.to_string()));
        pair(v)
    }

    #[track_caller]
    pub(crate) fn ok(&self, actor: &str, words: &[&str]) -> Out {
        let out = self.run(actor, words);
        out.code(0);
        pair(["validate", self.board.as_str()]).code(0);
        out
    }

    #[track_caller]
    pub(crate) fn refused(&self, actor: &str, words: &[&str], code: i32) -> Out {
        let before = fs::read(&self.board).unwrap();
        let out = self.run(actor, words);
        out.code(code);
        assert_eq!(
            before,
            fs::read(&self.board).unwrap(),
            "a refusal leaves the blackboard untouched\n{}",
            out.report()
        );
        out
    }

    pub(crate) fn text(&self) -> String {
        fs::read_to_string(&self.board).unwrap()
    }

    pub(crate) fn status(&self) -> Value {
        pair(["status", self.board.as_str(), "--json"]).json()
    }

    pub(crate) fn phase(&self) -> String {
        self.status()["phase"].as_str().unwrap().to_string()
    }

    pub(crate) fn field(&self, name: &str) -> Value {
        self.status()["frontmatter"][name].clone()
    }

    pub(crate) fn write(&self, file: &str, content: &str) {
        fs::write(self.wt().join(file), content).unwrap();
    }

    pub(crate) fn g(&self, args: &[&str]) -> String {
        git(&self.wt(), args)
    }

    /// Worktree made, code staged and approved in one round: READY_TO_COMMIT.
    pub(crate) fn approved(init: &[&str]) -> Lc {
        let lc = Lc::new(init);
        lc.ok("doer", &["worktree", "create", "--user-approved"]);
        lc.write("lib.txt", "one\ntwo\n");
        lc.g(&["add", "lib.txt"]);
        lc.ok("doer", &["submit", "code", "--note", "staged"]);
        lc.ok(
            "alice",
            &["verdict", "APPROVED", "--revision", "1", "--note", "lgtm"],
        );
        assert_eq!(lc.phase(), "READY_TO_COMMIT");
        lc
    }

    pub(crate) fn code_tree(&self) -> String {
        self.status()["frontmatter"]["pins"]["code"]["tree"]
            .as_str()
            .unwrap_or_else(|| panic!("the code round pins a tree\n{}", self.text()))
            .to_string()
    }
}

fn tree_of(dir: &Path, rev: &str) -> String {
    git(dir, &["rev-parse", &format!("{rev}^{{tree}}")])
        .trim()
        .to_string()
}

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
fn a_waiver_overrides_a_failed_check_and_is_recorded_in_decisions() {
    let lc = Lc::approved(&[]);
    lc.write("lib.txt", "one\ntwo\nextra\n");
    lc.g(&["commit", "-q", "-am", "fix plus extra"]);
    lc.ok(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--user-approved",
            "--waive",
            "the user accepts the extra line",
        ],
    );
    let decisions = section_text(&lc.text(), "Decisions").unwrap();
    assert!(decisions.contains("Lifecycle check waived"), "{decisions}");
    assert!(decisions.contains("commit-tree-approved"), "{decisions}");
    assert!(
        decisions.contains("the user accepts the extra line"),
        "{decisions}"
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
fn advance_worktree_must_be_a_worktree_of_the_recorded_repository() {
    let lc = Lc::new(&["--red-test"]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    assert_eq!(lc.phase(), "RED_TESTING");
    lc.ok(
        "doer",
        &["submit", "red-test", "--note", "fails as expected"],
    );
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    let other = tempfile::tempdir().unwrap();
    let other_wt = fs::canonicalize(other.path()).unwrap().join("wt");
    git_worktree(&other_wt);
    lc.refused(
        "doer",
        &[
            "advance",
            "CODING",
            "--worktree",
            other_wt.to_str().unwrap(),
        ],
        4,
    )
    .mentions(&["another repository", "repo_root"]);
    let own = lc.wt();
    lc.ok(
        "doer",
        &["advance", "CODING", "--worktree", own.to_str().unwrap()],
    );
    assert_eq!(lc.phase(), "CODING");
}

#[test]
fn a_failing_required_check_blocks_the_commit_and_a_pass_on_another_tree_does_not_count() {
    let lc = Lc::new(&["--require-check", "tests=grep -q three lib.txt"]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    // The required check fails on round 1's content.
    let out = lc.ok("doer", &["check", "--name", "tests", "--json"]);
    let j = out.json();
    assert_eq!(j["check"]["passed"], false);
    assert_eq!(j["check"]["exit_code"], 1);
    assert_eq!(j["check"]["tree"], lc.code_tree().as_str());
    // A required check runs its recorded command only.
    lc.refused("doer", &["check", "--name", "tests", "--", "true"], 4)
        .mentions(&["required check", "grep -q three lib.txt"]);
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6)
        .mentions(&["required-checks-passed", "tests", "failed"]);

    // A pass on a different tree does not count.
    lc.write("lib.txt", "one\ntwo\nthree\n");
    let out = lc.ok("doer", &["check", "--name", "tests", "--json"]);
    assert_eq!(out.json()["check"]["passed"], true);
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6)
        .mentions(&["required-checks-passed", "not on the approved tree"]);

    // Back to the approved content: a pass there counts.
    lc.write("lib.txt", "one\ntwo\n");
    lc.ok("alice", &["check", "--reproduce", "tests"]);
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6);
    let status = lc.status();
    assert_eq!(status["frontmatter"]["check_runs"]["tests"]["exit_code"], 1);
}

#[test]
fn reproduce_reruns_the_recorded_command_and_records_both_runs_compared() {
    let lc = Lc::new(&["--require-check", "tests=grep -q two lib.txt"]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    lc.ok("doer", &["check", "--name", "tests"]);
    let out = lc.ok("alice", &["check", "--reproduce", "tests", "--json"]);
    let j = out.json();
    assert_eq!(j["check"]["reproduce"], true);
    assert_eq!(j["check"]["comparison"]["reproduced"], true);
    assert_eq!(j["check"]["comparison"]["previous"]["agent"], "doer");
    let validation = section_text(&lc.text(), "Validation").unwrap();
    assert_eq!(
        validation.matches("### Check tests — passed").count(),
        2,
        "{validation}"
    );
    assert!(validation.contains("Reproduces the previous run of tests by doer"));
    assert!(validation.contains("Same tree, same result: reproduced"));
    pair(["status", lc.board.as_str()]).code(0).mentions(&[
        "checks",
        "tests: passed on",
        "the code round's tree",
        "[required]",
    ]);
    // A reproduction needs a check to reproduce.
    lc.refused("alice", &["check", "--reproduce", "lint"], 6)
        .mentions(&["nothing to reproduce"]);

    // The approved tree with a passing run: the commit goes through.
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
    assert!(
        lc.text()
            .contains("required check tests passed on the approved tree")
    );
}

#[test]
fn the_tree_pin_is_the_same_whatever_the_git_configuration() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.write("lib.txt", "one\ntwo\nthree\n");
    let tree = |lc: &Lc| -> String {
        let out = lc.ok("doer", &["check", "--name", "noop", "--json", "--", "true"]);
        out.json()["check"]["tree"].as_str().unwrap().to_string()
    };
    let plain = tree(&lc);
    for (k, v) in [
        ("color.ui", "always"),
        ("diff.external", "false"),
        ("diff.noprefix", "true"),
        ("core.abbrev", "7"),
        ("diff.renames", "copies"),
    ] {
        git(&lc.root, &["config", k, v]);
    }
    assert_eq!(
        tree(&lc),
        plain,
        "the tree of index plus worktree ignores the configuration"
    );
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    let expected = lc.g(&["write-tree"]).trim().to_string();
    assert_eq!(lc.code_tree(), expected);
    assert_eq!(
        lc.g(&["diff", "--name-only"]).trim(),
        "lib.txt",
        "the unstaged change is still unstaged"
    );
}

#[test]
fn the_verdict_is_stale_when_the_index_changes_under_an_unchanged_unstaged_diff() {
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
            "x",
        ],
    );
    lc.write("lib.txt", "one\ntwo\nthree\n");
    lc.ok("doer", &["submit", "followup", "--note", "f"]);
    // Stage a new file and leave it in the worktree as staged: the unstaged diff is the same,
    // the content under review is not.
    lc.write("other.txt", "sneaky\n");
    lc.g(&["add", "other.txt"]);
    lc.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
        3,
    )
    .mentions(&["tree", "changed"]);
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
fn worktree_create_refuses_outside_plan_approved_and_leaves_nothing_behind() {
    let lc = Lc::bare(&[]);
    lc.refused("doer", &["worktree", "create", "--user-approved"], 6)
        .mentions(&["PLAN_APPROVED"]);
    assert!(!lc.wt().exists());
    assert!(
        git(&lc.root, &["branch", "--list", "pair/task"])
            .trim()
            .is_empty()
    );
    let lc = Lc::new(&[]);
    lc.refused("alice", &["worktree", "create", "--user-approved"], 6);
    git(&lc.root, &["branch", "pair/task"]);
    lc.refused("doer", &["worktree", "create", "--user-approved"], 6)
        .mentions(&["already exists", "--branch"]);
    lc.ok(
        "doer",
        &[
            "worktree",
            "create",
            "--user-approved",
            "--branch",
            "fix/other",
        ],
    );
    assert_eq!(lc.field("topic_branch"), "fix/other");
}

#[test]
fn next_names_worktree_create_even_after_a_red_test_written_without_a_worktree() {
    let lc = Lc::new(&["--red-test"]);
    let poll = |lc: &Lc| -> Vec<String> {
        let v = pair(["poll", lc.board.as_str(), "--agent", "doer", "--json"]).json();
        v["next"]["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    };
    assert!(poll(&lc).contains(&"RED_TESTING".to_string()));
    lc.ok("doer", &["advance", "RED_TESTING"]);
    lc.ok("doer", &["submit", "red-test", "--note", "fails"]);
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    assert_eq!(
        poll(&lc),
        [
            "pair",
            "worktree",
            "create",
            lc.board.as_str(),
            "--agent",
            "doer",
            "--user-approved"
        ]
    );
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    assert_eq!(lc.phase(), "CODING");
    assert!(lc.text().contains("The user approved creating it"));
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    // The commit is the worktree's HEAD: next.command needs no SHA.
    let argv = poll(&lc);
    assert!(argv.contains(&"COMMITTED".to_string()), "{argv:?}");
    assert!(!argv.contains(&"--commit-sha".to_string()), "{argv:?}");
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
fn worktree_create_undoes_the_worktree_and_branch_when_the_write_is_refused() {
    let lc = Lc::new(&[]);
    // Another process holds the blackboard's lock: the move is judged allowed on the bytes
    // read, git makes the worktree, then the locked write times out (exit 2).
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(format!("{}.lock", lc.board))
        .unwrap();
    lock.lock().unwrap();
    lc.refused(
        "doer",
        &["worktree", "create", "--user-approved", "--timeout", "0.2"],
        2,
    );
    drop(lock);
    assert!(!lc.wt().exists(), "the worktree that was made is removed");
    assert!(
        git(&lc.root, &["branch", "--list", "pair/task"])
            .trim()
            .is_empty(),
        "the branch that was made is deleted"
    );
    assert_eq!(
        git(&lc.root, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    // Nothing is left in the way: the next attempt succeeds.
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    assert_eq!(lc.phase(), "CODING");
}

#[test]
fn any_output_is_recorded_safely_and_a_failing_command_is_a_recorded_failure() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    let out = lc.ok(
        "alice",
        &[
            "check",
            "--name",
            "hostile",
            "--json",
            "--",
            "sh",
            "-c",
            "printf '<<<<<<< HEAD\\n## not a heading\\n=======\\n```\\n\\033[2J'; echo err >&2; exit 3",
            "line\nbreak",
        ],
    );
    let j = out.json();
    assert_eq!(j["check"]["exit_code"], 3);
    assert_eq!(j["check"]["passed"], false);
    assert!(j["check"]["output_tail"].as_str().unwrap().contains("err"));
    let validation = section_text(&lc.text(), "Validation").unwrap();
    assert!(
        validation.contains("### Check hostile — failed (exit 3)"),
        "{validation}"
    );
    assert_eq!(
        lc.status()["frontmatter"]["check_runs"]["hostile"]["agent"],
        "alice"
    );
    // A program that cannot be started records nothing.
    lc.refused("doer", &["check", "--", "/no/such/program"], 4)
        .mentions(&["cannot run"]);
    // Someone not on the blackboard may not record a run.
    lc.refused("mallory", &["check", "--", "true"], 6);
}

#[test]
fn a_check_past_its_time_limit_is_killed_with_everything_it_started_and_recorded_as_failed() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    // A background child keeps the output pipe open: killing the first process alone would
    // leave `pair check` waiting for it.
    let started = std::time::Instant::now();
    let out = lc.ok(
        "doer",
        &[
            "check",
            "--name",
            "hang",
            "--time-limit",
            "1",
            "--json",
            "--",
            "sh",
            "-c",
            "echo started; sleep 120 & sleep 120",
        ],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the time limit did not stop the check"
    );
    let j = out.json();
    assert_eq!(j["check"]["timed_out"], true);
    assert_eq!(j["check"]["passed"], false);
    assert_eq!(j["check"]["exit_code"], serde_json::Value::Null);
    assert!(
        j["check"]["output_tail"]
            .as_str()
            .unwrap()
            .contains("started")
    );
    let validation = section_text(&lc.text(), "Validation").unwrap();
    assert!(
        validation.contains("Stopped by the time limit of 1 s"),
        "{validation}"
    );
    pair(["validate", lc.board.as_str()]).code(0);
}

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
