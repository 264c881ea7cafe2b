//! `pair worktree create` and the worktree path: where a worktree goes, what `advance --worktree`
//! accepts, and symlinks or relative paths that would lead outside the repository.

use crate::common::phases::board_in;
use crate::common::repo::{Lc, wt};
use crate::common::*;
use crate::proto::*;
use std::fs;
use std::path::Path;
use std::process::Command;

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

// ------------------------------------------------------------------------------------------
// worktree-path

struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("git")
            .args(["init", "-q"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init failed");
        fs::write(dir.path().join("task.md"), MINIMAL).unwrap();
        Repo { dir }
    }
    fn root(&self) -> &Path {
        self.dir.path()
    }
    fn board(&self) -> String {
        self.root().join("task.md").to_str().unwrap().to_string()
    }
}

#[test]
fn worktree_path_refuses_dot_dot_and_relative_repo_roots() {
    let r = Repo::new();
    let root = r.root().to_str().unwrap();
    for bad in [
        format!(
            "{root}/../{}",
            r.root().file_name().unwrap().to_string_lossy()
        ),
        format!("{root}/.."),
        "relative/root".to_string(),
        ".".to_string(),
    ] {
        pair(["worktree-path", &r.board(), "--repo-root", &bad])
            .code(4)
            .mentions_any(&["..", "absolute"]);
    }
}

#[test]
fn worktree_path_refuses_unsafe_stems() {
    let r = Repo::new();
    for name in [
        "..md",
        ".hidden.md",
        "-rf.md",
        "a b.md",
        "x;y.md",
        ".md",
        "..",
        "é.md",
    ] {
        let board = r.root().join(name);
        let out = pair([
            "worktree-path",
            board.to_str().unwrap(),
            "--repo-root",
            r.root().to_str().unwrap(),
        ]);
        out.code(6).mentions(&["unsafe"]);
    }
}

#[test]
fn worktree_path_refuses_a_symlinked_worktrees_dir_that_leads_outside() {
    let r = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), r.root().join(".worktrees")).unwrap();
    let board = r.board();
    for extra in [&[][..], &["--repo-root", r.root().to_str().unwrap()][..]] {
        let mut args = vec!["worktree-path", &board[..]];
        args.extend_from_slice(extra);
        pair(&args).code(6).mentions(&["outside"]);
    }
    assert!(
        dir_entries(outside.path()).is_empty(),
        "nothing created outside"
    );
}

#[test]
fn worktree_path_refuses_a_dangling_symlinked_worktrees_dir() {
    // .worktrees -> a directory that does not exist (yet): `git worktree add` would create the
    // worktree wherever the link points once someone creates it
    let r = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    let gone = outside.path().join("not-yet");
    std::os::unix::fs::symlink(&gone, r.root().join(".worktrees")).unwrap();
    pair(["worktree-path", &r.board()])
        .code(6)
        .mentions(&[".worktrees"]);
    assert!(!gone.exists());
}

#[test]
fn worktree_path_refuses_a_symlinked_worktree_that_leads_outside() {
    let r = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir(r.root().join(".worktrees")).unwrap();
    std::os::unix::fs::symlink(outside.path(), r.root().join(".worktrees/task")).unwrap();
    pair(["worktree-path", &r.board()])
        .code(6)
        .mentions(&["outside"]);
    // and a dangling one is not a worktree either
    let r2 = Repo::new();
    fs::create_dir(r2.root().join(".worktrees")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/elsewhere", r2.root().join(".worktrees/task"))
        .unwrap();
    pair(["worktree-path", &r2.board()]).code(6);
}

#[test]
fn worktree_path_inside_the_repo_is_accepted() {
    let r = Repo::new();
    let out = pair(["worktree-path", &r.board(), "--json"]);
    out.code(0);
    let real = fs::canonicalize(r.root()).unwrap();
    let path = out.json()["path"].as_str().unwrap().to_string();
    assert!(
        path.ends_with("/.worktrees/task"),
        "{path} under {}",
        real.display()
    );
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
    // The refusal's hint is the same command with the branch to choose: as argv in JSON (and,
    // through the MCP server, as the call of `worktree-create`).
    let e = lc
        .refused(
            "doer",
            &["worktree", "create", "--user-approved", "--json"],
            6,
        )
        .json_error(6);
    let argv: Vec<String> = serde_json::from_value(e["hint"]["argv"].clone()).unwrap();
    assert_eq!(&argv[..3], ["pair", "worktree", "create"], "{e:#}");
    assert!(
        argv.windows(2).any(|w| w == ["--branch", "BRANCH"])
            && argv.contains(&"--user-approved".to_string()),
        "{e:#}"
    );
    let tools = pair::cli::mcp::tools();
    let call = pair::cli::mcp::call_of(&tools, &argv).expect("a call");
    assert_eq!(call["name"], "worktree-create", "{call}");
    assert_eq!(call["arguments"]["branch"], "BRANCH", "{call}");
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
    // In a git repository the step out of PLAN_APPROVED is `worktree create`, even with a red
    // test required; `advance RED_TESTING` (no worktree) stays allowed.
    assert_eq!(poll(&lc)[1], "worktree");
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
fn advance_checks_that_the_worktree_is_a_git_worktree() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
    ]);
    let plain = p.b.aux.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    let sub = wt(&p).join("sub");
    fs::create_dir_all(&sub).unwrap();
    for (path, why) in [
        ("/does/not/exist".to_string(), "does not exist"),
        (plain.display().to_string(), "not a git worktree"),
        (sub.display().to_string(), "not its top"),
    ] {
        p.refused(
            "doer",
            &["advance", "CODING", "--worktree", &path, "--user-approved"],
            4,
        )
        .mentions(&["not a git worktree", why]);
    }
    p.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
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

#[test]
fn relative_worktree_is_a_usage_error() {
    let p = board_in("PLAN_APPROVED", &["--reviewers", "alice,bob"]);
    p.refused(
        "doer",
        &["advance", "CODING", "--worktree", "wt", "--user-approved"],
        4,
    )
    .mentions_any(&["absolute", "worktree"]);
    let p = board_in("RED_TEST_APPROVED", &["--reviewers", "alice,bob"]);
    p.refused("doer", &["advance", "CODING", "--worktree", "../wt"], 4);
}

#[test]
fn worktree_create_refuses_a_branch_given_as_a_ref_and_a_path_inside_dot_git() {
    let lc = crate::common::repo::Lc::new(&[]);
    for (args, words) in [
        (
            vec![
                "worktree",
                "create",
                "--user-approved",
                "--branch",
                "refs/heads/x",
            ],
            vec!["--branch x", "not its ref"],
        ),
        (
            vec![
                "worktree",
                "create",
                "--user-approved",
                "--path",
                ".git/wt",
                "--branch",
                "y",
            ],
            vec![".git", "leave --path out"],
        ),
    ] {
        lc.refused("doer", &args, 4).mentions(&words);
    }
    // Nothing was made: no branch, no worktree, the phase unchanged.
    let branches = git(&lc.root, &["branch", "--list", "refs/heads/x", "x", "y"]);
    assert!(branches.trim().is_empty(), "{branches}");
    assert!(!lc.root.join(".git/wt").exists());
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
}

#[test]
fn worktree_create_keeps_dot_worktrees_out_of_the_checkouts_status_and_names_what_it_lacks() {
    // The repository does not ignore .worktrees/; it ignores a generated version file and a
    // build directory, which its tests would need.
    let lc = Lc::new_ignoring(
        "*.md.lock\n*.md.lock.owner.json\ntask.md\nversion.txt\nbuild/\n",
        &[],
    );
    fs::write(lc.root.join("version.txt"), "1.2.3\n").unwrap();
    fs::create_dir_all(lc.root.join("build")).unwrap();
    fs::write(lc.root.join("build/out.o"), "x").unwrap();
    let status = |dir: &Path| git(dir, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status(&lc.root), "");
    let out = lc.ok("doer", &["worktree", "create", "--user-approved", "--json"]);
    let j = out.json();
    // The main checkout lists nothing new: .worktrees/ is in the repository's info/exclude.
    assert_eq!(status(&lc.root), "", "{}", out.report());
    let common = git(
        &lc.root,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    let exclude = Path::new(common.trim()).join("info/exclude");
    assert!(
        fs::read_to_string(&exclude)
            .unwrap()
            .lines()
            .any(|l| l == "/.worktrees/")
    );
    assert_eq!(
        j["worktree"]["excluded"],
        exclude.canonicalize().unwrap().to_str().unwrap()
    );
    // What the checkout has and the new worktree lacks, and how to copy it; not pair's files.
    assert!(!lc.wt().join("version.txt").exists());
    let ignored = &j["worktree"]["ignored_not_copied"];
    assert_eq!(ignored["count"], 2, "{ignored}");
    assert_eq!(
        ignored["paths"],
        serde_json::json!(["build/", "version.txt"])
    );
    // In the text: a second repository, with one ignored file, and a command that copies it.
    let other = Lc::new_ignoring(
        "*.md.lock\n*.md.lock.owner.json\ntask.md\nversion.txt\n",
        &[],
    );
    fs::write(other.root.join("version.txt"), "1.2.3\n").unwrap();
    let out = other.ok("doer", &["worktree", "create", "--user-approved"]);
    out.mentions(&[
        "added /.worktrees/ to",
        "not in the new worktree: 1 file or directory that",
        "version.txt",
        "a generated file its tests need may be among them",
    ]);
    let cp = format!(
        "`cp -a {} {}`",
        other.root.join("version.txt").display(),
        other.wt().display()
    );
    assert!(out.stdout.contains(&cp), "{cp}\n{}", out.report());
    // The copy it proposes makes the worktree whole.
    let status = Command::new("cp")
        .args([other.root.join("version.txt"), other.wt()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(other.wt().join("version.txt").exists());
    // A repository that ignores .worktrees/ already is left as it is.
    let ignoring = Lc::new(&[]);
    let j = ignoring
        .ok("doer", &["worktree", "create", "--user-approved", "--json"])
        .json();
    assert_eq!(j["worktree"]["excluded"], serde_json::Value::Null);
    assert_eq!(j["worktree"]["ignored_not_copied"]["count"], 0);
}

#[test]
fn cleaning_up_the_last_worktree_removes_the_empty_dot_worktrees() {
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
    git(&lc.root, &["worktree", "remove", lc.wt().to_str().unwrap()]);
    git(&lc.root, &["branch", "-d", "-q", "pair/task"]);
    // `git worktree remove` leaves the directory that held the worktree.
    assert!(lc.root.join(".worktrees").is_dir());
    let out = lc.ok("doer", &["advance", "CLEANED_UP", "--json"]);
    assert!(!lc.root.join(".worktrees").exists(), "{}", out.report());
    assert_eq!(
        out.json()["removed_dir"],
        lc.root.join(".worktrees").to_str().unwrap()
    );

    // A .worktrees/ with anything else in it stays.
    let lc = Lc::approved(&[]);
    fs::create_dir_all(lc.root.join(".worktrees/other")).unwrap();
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
    git(&lc.root, &["worktree", "remove", lc.wt().to_str().unwrap()]);
    let out = lc.ok("doer", &["advance", "CLEANED_UP", "--keep-branch"]);
    assert!(lc.root.join(".worktrees/other").is_dir());
    assert!(
        !out.stdout.contains("removed the empty"),
        "{}",
        out.report()
    );
}

#[test]
fn the_skill_names_repo_root_where_the_worktree_step_is_and_it_works_for_a_board_outside() {
    // The skill's worktree step says what to add when the board is outside the repository.
    let skill = pair::commands::skill::SKILL;
    let step = skill
        .lines()
        .find(|l| l.starts_with("| `PLAN_APPROVED` |"))
        .expect("the PLAN_APPROVED step");
    assert!(step.contains("pair worktree create task.md"), "{step}");
    assert!(
        step.contains(
            "add `--repo-root /abs/path/to/repo` when the blackboard is outside the repository"
        ),
        "{step}"
    );
    let prose = &skill[skill
        .find("`worktree create` runs `git worktree add`")
        .unwrap()..];
    let prose = &prose[..prose.find("\n\n").unwrap()];
    assert!(prose.contains("`--repo-root /abs/path/to/repo`"), "{prose}");
    // A board kept outside the repository, driven to PLAN_APPROVED.
    let lc = Lc::new(&[]);
    let outside = tempfile::tempdir().unwrap();
    let board = outside.path().join("task.md");
    fs::copy(&lc.board, &board).unwrap();
    let b = board.to_str().unwrap();
    // Without --repo-root: refused (exit 4), saying to pass it; nothing made.
    pair([
        "worktree",
        "create",
        b,
        "--agent",
        "doer",
        "--user-approved",
    ])
    .code(4)
    .mentions(&["not inside a git repository", "--repo-root"]);
    // As the skill says: the step runs.
    let root = lc.root.to_str().unwrap();
    pair([
        "worktree",
        "create",
        b,
        "--agent",
        "doer",
        "--user-approved",
        "--repo-root",
        root,
    ])
    .code(0);
    assert!(lc.root.join(".worktrees/task/lib.txt").exists());
}

/// Stderr names `escaped` (the path with its newline shown as `\n`), and no line of it starts
/// with what followed the newline.
#[track_caller]
fn names_escaped(out: &Out, escaped: &str, after_newline: &str) {
    assert!(out.stderr.contains(escaped), "{}", out.report());
    assert!(
        !out.stderr.lines().any(|l| l.starts_with(after_newline)),
        "a raw newline in a path was printed\n{}",
        out.report()
    );
}

#[test]
fn paths_with_a_newline_are_escaped_in_worktree_messages() {
    let lc = crate::common::repo::Lc::new(&[]);
    // A path that exists already.
    let odd = lc.root.join("odd\nforged: line");
    fs::create_dir_all(&odd).unwrap();
    let out = lc.refused(
        "doer",
        &[
            "worktree",
            "create",
            "--user-approved",
            "--path",
            odd.to_str().unwrap(),
            "--branch",
            "z",
        ],
        6,
    );
    names_escaped(&out, "odd\\nforged: line", "forged: line");
    // One inside `.git`.
    let in_git = lc.root.join(".git").join("wt\nforged: line");
    let out = lc.refused(
        "doer",
        &[
            "worktree",
            "create",
            "--user-approved",
            "--path",
            in_git.to_str().unwrap(),
            "--branch",
            "z",
        ],
        4,
    );
    names_escaped(&out, "wt\\nforged: line", "forged: line");
    // A relative repository root.
    let out = pair([
        "worktree-path",
        &lc.board,
        "--repo-root",
        "rel\nforged: line",
    ]);
    out.code(4);
    names_escaped(&out, "rel\\nforged: line", "forged: line");
}

#[test]
fn a_worktree_of_another_repository_is_named_escaped() {
    let lc = crate::common::repo::Lc::new(&["--red-test"]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.ok(
        "doer",
        &["submit", "red-test", "--note", "fails as expected"],
    );
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    // The other repository's own directory has a newline in its name; its worktree does not.
    let other = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(other.path()).unwrap();
    let main = base.join("w\nforged: line");
    git_worktree(&main);
    let other_wt = base.join("clean");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "t",
            other_wt.to_str().unwrap(),
        ],
    );
    let out = lc.refused(
        "doer",
        &[
            "advance",
            "CODING",
            "--worktree",
            other_wt.to_str().unwrap(),
        ],
        4,
    );
    out.mentions(&["another repository"]);
    names_escaped(&out, "w\\nforged: line", "forged: line");
}
