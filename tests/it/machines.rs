//! Review across machines, for real: the doer and the reviewer are two Unix users whose homes the
//! other cannot read (mode 0700), each with its own clone and cache, sharing nothing but a bare
//! remote served by `git daemon` on 127.0.0.1, by a real `sshd` (each user with a key of its own,
//! one through an ssh agent), by a real web server running `git http-backend` behind basic
//! authentication (each user with a credential helper of its own), and once over `file://`.
//! Every reviewer command works from the reviewer's own clone on what the doer's submissions
//! published. The same servers refuse a wrong key and a revoked token: `pair` says what to
//! configure, writes nothing and waits on no prompt.

use crate::common::accounts::{Users, account_tool};
use crate::common::daemon::{Daemon, daemon_installed};
use crate::common::httpd::{Httpd, httpd_installed};
use crate::common::prereq::{GIT_DAEMON, LIGHTTPD, SCRIPT, SSH, on_path, require};
use crate::common::sshd::{GIT_SHELL, Sshd, ssh_installed};
use crate::common::*;
use serde_json::Value;
use std::cell::RefCell;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One agent: a Unix user with a private home holding its clone, its cache and its git
/// configuration.
struct Agent<'a> {
    users: &'a Users,
    short: &'static str,
    id: &'static str,
    home: PathBuf,
    /// Variables set for every command of this user besides the fixed ones (`SSH_AUTH_SOCK`).
    env: Vec<(&'static str, PathBuf)>,
    /// Everything `pair` printed for this user (stdout and stderr), for the leak checks.
    printed: RefCell<String>,
}

impl Agent<'_> {
    fn user(&self) -> &str {
        self.users.name(self.short)
    }

    fn clone_dir(&self) -> PathBuf {
        self.home.join("clone")
    }

    /// A command run as this user, in `dir`, with its own home, cache and git configuration.
    fn command(&self, program: &Path, dir: &Path) -> assert_cmd::Command {
        let mut c = assert_cmd::Command::from_std(self.std_command(program, dir));
        c.timeout(Duration::from_secs(120));
        c
    }

    /// [`Agent::command`], to be spawned.
    fn std_command(&self, program: &Path, dir: &Path) -> std::process::Command {
        let mut c = std::process::Command::new("/usr/bin/setpriv");
        c.arg(format!("--reuid={}", self.user()))
            .arg(format!("--regid={}", self.user()))
            .arg("--init-groups")
            .arg(program)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("PAIR_CACHE_DIR", self.home.join("cache"))
            .env("GIT_CONFIG_GLOBAL", self.home.join("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TMPDIR", self.home.join("tmp"));
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    #[track_caller]
    fn pair_in(&self, dir: &Path, args: &[&str]) -> Out {
        let mut c = self.command(&pair_bin(), dir);
        c.args(args);
        let out = run(&mut c, format!("(as {}) pair {}", self.id, args.join(" ")));
        let mut printed = self.printed.borrow_mut();
        printed.push_str(&out.stdout);
        printed.push_str(&out.stderr);
        out
    }

    #[track_caller]
    fn pair(&self, args: &[&str]) -> Out {
        self.pair_in(&self.clone_dir(), args)
    }

    #[track_caller]
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let mut c = self.command(Path::new("git"), dir);
        c.args(args);
        let out = run(&mut c, format!("(as {}) git {}", self.id, args.join(" ")));
        assert_eq!(out.code, Some(0), "{}", out.report());
        out.stdout
    }

    #[track_caller]
    fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        let out = self.pair(&args);
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", out.report()))
    }
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A private home for `short`: mode 0700, owned by the user, with a git configuration that names
/// them and trusts the shared remote.
fn home(users: &Users, short: &str, root: &Path) -> PathBuf {
    let home = root.join(short);
    fs::create_dir_all(home.join("tmp")).unwrap();
    fs::write(
        home.join("gitconfig"),
        format!(
            "[user]\n\tname = {short}\n\temail = {short}@example.invalid\n[safe]\n\tdirectory = \
             *\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
        ),
    )
    .unwrap();
    let (uid, gid) = (users.uid(short), users.own_gid(short));
    for entry in walk(&home) {
        std::os::unix::fs::lchown(&entry, Some(uid), Some(gid)).unwrap();
    }
    chmod(&home, 0o700);
    home
}

/// The doer and the reviewer, each with its private home under `root`.
fn agents<'a>(users: &'a Users, root: &Path) -> (Agent<'a>, Agent<'a>) {
    let agent = |short: &'static str| Agent {
        users,
        short,
        id: short,
        home: home(users, short, root),
        env: Vec::new(),
        printed: RefCell::new(String::new()),
    };
    (agent("doer"), agent("rev"))
}

/// A board at `b` that the doer made and the reviewer joined, each working from its own home:
/// the state an authentication test starts from.
fn started(doer: &Agent, rev: &Agent, b: &str) {
    doer.pair_in(
        &doer.home,
        &[
            "init",
            b,
            "--doer",
            "doer",
            "--reviewers",
            "rev",
            "--goal",
            "g",
        ],
    )
    .code(0);
    rev.pair_in(&rev.home, &["register", b, "--agent", "rev"])
        .code(0);
    doer.pair_in(&doer.home, &["poll", b, "--agent", "doer"])
        .code(0);
}

/// A board at `b` made by the doer with `settings`, joined by the reviewer, its plan approved
/// (both working from their clones).
fn plan_approved(doer: &Agent, rev: &Agent, b: &str, settings: &[&str], plan: &str) {
    let mut init = vec!["init", b, "--doer", "doer", "--reviewers", "rev"];
    init.extend_from_slice(settings);
    doer.pair(&init).code(0);
    rev.pair(&["register", b, "--agent", "rev"]).code(0);
    doer.pair(&[
        "advance",
        b,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    doer.pair(&[
        "submit",
        b,
        "--agent",
        "doer",
        "plan",
        "--note",
        plan,
        "--user-approved",
    ])
    .code(0);
    rev.pair(&[
        "verdict",
        b,
        "--agent",
        "rev",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "ok",
    ])
    .code(0);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    if dir.is_dir() {
        for e in fs::read_dir(dir).unwrap() {
            out.extend(walk(&e.unwrap().path()));
        }
    }
    out
}

/// The shared remote: a bare repository with the project on `main` (a tiny shell library with a
/// bug and its test runner), readable and writable by every user (for `file://`).
fn remote(root: &Path) -> PathBuf {
    let srv = root.join("srv");
    fs::create_dir_all(&srv).unwrap();
    git(
        &srv,
        &["init", "-q", "--bare", "--shared=0777", "remote.git"],
    );
    let seed = root.join("seed");
    fs::create_dir_all(&seed).unwrap();
    git(&seed, &["init", "-q", "-b", "main"]);
    fs::write(
        seed.join("lib.sh"),
        "# the larger of two numbers\nmax() {\n  if [ \"$1\" -gt \"$2\" ]; then echo \"$2\"; else echo \"$1\"; fi\n}\n",
    )
    .unwrap();
    fs::create_dir_all(seed.join("tests")).unwrap();
    fs::write(
        seed.join("run-tests.sh"),
        "#!/bin/sh\nset -e\n. ./lib.sh\nfor t in tests/*.sh; do . \"$t\"; done\necho \"all tests passed\"\n",
    )
    .unwrap();
    fs::write(seed.join("tests/basic.sh"), "[ \"$(max 1 1)\" = 1 ]\n").unwrap();
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "max"]);
    let url = format!("file://{}", srv.join("remote.git").display());
    git(&seed, &["push", "-q", &url, "main"]);
    for e in walk(&srv) {
        chmod(&e, if e.is_dir() { 0o777 } else { 0o666 });
    }
    srv
}

fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("a string: {v:#}"))
        .to_string()
}

/// The whole lifecycle with the doer and the reviewer as two users, through `url`.
fn two_users(doer: &Agent, rev: &Agent, url: &str) {
    for a in [doer, rev] {
        a.git(&a.home, &["clone", "-q", url, "clone"]);
    }
    // The reviewer cannot read anything of the doer's.
    let peek = rev.pair_in(&rev.home, &["validate", doer.clone_dir().to_str().unwrap()]);
    assert_ne!(peek.code, Some(0), "{}", peek.report());
    let b = format!("git+{url}#refs/pair/max:board.md");
    let b = b.as_str();

    plan_approved(
        doer,
        rev,
        b,
        &[
            "--red-test",
            "--max-rounds",
            "3",
            "--goal",
            "max returns the larger number",
        ],
        "Swap the branches of max; a red test first.",
    );
    doer.pair(&["advance", b, "--agent", "doer", "RED_TESTING"])
        .code(0);

    // A red test pinned with --files, in the doer's clone.
    let test = doer.clone_dir().join("tests/larger.sh");
    let mut c = doer.command(Path::new("/bin/sh"), &doer.clone_dir());
    c.args(["-c", "printf '[ \"$(max 2 7)\" = 7 ]\\n' > tests/larger.sh"]);
    run(&mut c, "write the red test".into()).code(0);
    doer.pair(&[
        "submit",
        b,
        "--agent",
        "doer",
        "red-test",
        "--note",
        "max 2 7 must be 7; it fails today",
        "--files",
        test.to_str().unwrap(),
    ])
    .code(0);
    // The reviewer reads it from its own clone: the change against the base, and the pin.
    let d = rev.json(&["diff", b]);
    assert_eq!(d["kind"], "files", "{d:#}");
    assert_eq!(d["shown"], "change", "{d:#}");
    let content = s(&d["content"]);
    assert!(
        content.starts_with("diff --git a/tests/larger.sh b/tests/larger.sh\nnew file mode"),
        "{d:#}"
    );
    assert!(content.ends_with("+[ \"$(max 2 7)\" = 7 ]\n"), "{d:#}");
    assert_eq!(d["stat"]["files"][0]["path"], "tests/larger.sh", "{d:#}");
    assert_eq!(d["stat"]["insertions"], 1, "{d:#}");
    let pinned = s(&d["sha256"]);
    let exact = rev.pair(&["diff", b, "--pinned"]);
    exact.code(0);
    assert_eq!(
        sha256_hex(&exact.stdout_bytes),
        pinned,
        "--pinned prints the pinned bytes"
    );
    rev.pair(&["diff", b, "--whole"])
        .code(0)
        .mentions(&["==> tests/larger.sh <==\n[ \"$(max 2 7)\" = 7 ]\n"]);
    let poll = rev.json(&["poll", b, "--agent", "rev"]);
    assert_eq!(s(&poll["review"]["artifact"]["sha256"]), pinned, "{poll:#}");
    rev.pair(&[
        "verdict",
        b,
        "--agent",
        "rev",
        "APPROVED",
        "--revision",
        "1",
        "--artifact-sha256",
        &pinned,
        "--note",
        "the test fails as it should",
    ])
    .code(0);

    // The worktree, made from inside the doer's clone with every default, as `next` says.
    let next = doer.json(&["poll", b, "--agent", "doer"])["next"]["command"].clone();
    let next: Vec<String> = next
        .as_array()
        .unwrap_or_else(|| panic!("a next command: {next:#}"))
        .iter()
        .map(s)
        .collect();
    assert_eq!(
        next,
        [
            "pair",
            "worktree",
            "create",
            b,
            "--agent",
            "doer",
            "--user-approved"
        ],
        "the doer's next step on a git board, from its clone"
    );
    let next: Vec<&str> = next[1..].iter().map(String::as_str).collect();
    doer.pair(&next).code(0);
    let wt = s(&doer.json(&["poll", b, "--agent", "doer"])["worktree"]);
    let wt = PathBuf::from(wt);
    assert!(wt.starts_with(doer.clone_dir()), "{}", wt.display());
    // Code round 1: the red test and half a fix (the branches swapped, the comment forgotten).
    let mut c = doer.command(Path::new("/bin/sh"), &wt);
    c.args([
        "-c",
        "cp ../../tests/larger.sh tests/ && sed -i 's/echo \"$2\"; else echo \"$1\"/echo \"$1\"; else echo \"$2\"/; s/larger/smaller/' lib.sh && git add -A",
    ]);
    run(&mut c, "fix".into()).code(0);
    doer.pair(&[
        "submit",
        b,
        "--agent",
        "doer",
        "code",
        "--note",
        "swapped the branches",
    ])
    .code(0);

    // The reviewer: the diff, a reproduced check, an objection anchored in the code.
    let d = rev.json(&["diff", b]);
    let diff = s(&d["content"]);
    assert!(
        diff.contains("+  if [ \"$1\" -gt \"$2\" ]; then echo \"$1\""),
        "{diff}"
    );
    assert_eq!(sha256_hex(diff.as_bytes()), s(&d["sha256"]));
    let cmd: Vec<String> = rev.json(&["poll", b, "--agent", "rev"])["review"]["diff_command"]
        .as_array()
        .unwrap()
        .iter()
        .map(s)
        .collect();
    let mut c = rev.command(Path::new(&cmd[0]), &rev.clone_dir());
    c.args(&cmd[1..]);
    let with_git = run(&mut c, "the advertised diff command".into());
    with_git.code(0);
    assert_eq!(
        sha256_hex(&with_git.stdout_bytes),
        s(&d["sha256"]),
        "git alone gives the pin"
    );
    let check = rev.json(&[
        "check",
        b,
        "--agent",
        "rev",
        "--name",
        "tests",
        "--",
        "sh",
        "run-tests.sh",
    ]);
    assert_eq!(check["check"]["passed"], true, "{check:#}");
    assert!(
        s(&check["check"]["output_tail"]).contains("all tests passed"),
        "{check:#}"
    );
    let o = rev.json(&[
        "object",
        b,
        "--agent",
        "rev",
        "--severity",
        "blocking",
        "--anchor",
        "lib.sh:1",
        "--title",
        "the comment says larger",
        "--evidence",
        "the fix renamed it to smaller",
        "--fix",
        "keep `the larger of two numbers`",
    ]);
    assert_eq!(o["operation"], "object", "{o:#}");
    rev.pair(&[
        "object",
        b,
        "--agent",
        "rev",
        "--severity",
        "advisory",
        "--anchor",
        "lib.sh:99",
        "--title",
        "x",
        "--evidence",
        "x",
        "--fix",
        "x",
    ])
    .code(4)
    .mentions(&["published commit"]);
    let sha = s(&d["sha256"]);
    rev.pair(&[
        "verdict",
        b,
        "--agent",
        "rev",
        "CHANGES_REQUESTED",
        "--revision",
        "1",
        "--artifact-sha256",
        &sha,
        "--objections",
        "BLK-1",
        "--note",
        "see BLK-1",
    ])
    .code(0);

    // A follow-up: the comment restored, unstaged, over the staged round.
    let mut c = doer.command(Path::new("/bin/sh"), &wt);
    c.args(["-c", "sed -i 's/smaller/larger/' lib.sh"]);
    run(&mut c, "follow-up".into()).code(0);
    doer.pair(&[
        "resolve",
        b,
        "BLK-1",
        "--agent",
        "doer",
        "--resolution",
        "the comment says larger again",
    ])
    .code(0);
    doer.pair(&[
        "submit",
        b,
        "--agent",
        "doer",
        "followup",
        "--note",
        "fixes BLK-1",
    ])
    .code(0);
    let d = rev.json(&["diff", b]);
    assert_eq!(d["kind"], "unstaged", "{d:#}");
    assert!(
        s(&d["content"]).contains("+# the larger of two numbers"),
        "{d:#}"
    );
    let again = rev.json(&[
        "check",
        b,
        "--agent",
        "rev",
        "--reproduce",
        "tests",
        "--yes",
    ]);
    assert_eq!(again["check"]["passed"], true, "{again:#}");
    rev.pair(&["accept", b, "BLK-1", "--agent", "rev"]).code(0);
    rev.pair(&[
        "verdict",
        b,
        "--agent",
        "rev",
        "APPROVED",
        "--revision",
        "2",
        "--artifact-sha256",
        &s(&d["sha256"]),
        "--note",
        "good",
    ])
    .code(0);

    // The doer commits what was approved, merges and cleans up.
    doer.git(&wt, &["add", "-A"]);
    doer.git(
        &wt,
        &["commit", "-q", "-m", "max returns the larger number"],
    );
    doer.pair(&[
        "advance",
        b,
        "--agent",
        "doer",
        "COMMITTED",
        "--user-approved",
    ])
    .code(0);
    // The reviewer waits, from its own clone, for the end of the lifecycle the doer records.
    let mut c = rev.std_command(&pair_bin(), &rev.clone_dir());
    c.args([
        "poll",
        b,
        "--agent",
        "rev",
        "--wait",
        "--until",
        "CLEANED_UP",
        "--json",
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let waiter = c.spawn().unwrap();
    // Committed, the commit is on the remote: the reviewer's clone checks it, and no merge is
    // recorded yet.
    let theirs = rev.json(&["validate", b]);
    let l = &theirs["files"][0]["lifecycle"];
    assert_eq!(l["checked_here"], true, "{theirs:#}");
    assert_eq!(l["merged"], Value::Null, "{theirs:#}");
    let names: Vec<(String, bool)> = l["checked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (s(&c["name"]), c["ok"] == true))
        .collect();
    assert_eq!(
        names,
        [
            ("commit-exists".to_string(), true),
            ("commit-is-approved-tree".to_string(), true)
        ],
        "{theirs:#}"
    );
    let clone = doer.clone_dir();
    // The red test was written in the main checkout; the merge brings it from the topic branch.
    fs::remove_file(&test).unwrap();
    doer.git(&clone, &["merge", "-q", "--ff-only", "pair/max-board"]);
    doer.git(&clone, &["push", "-q", "origin", "main"]);
    doer.pair(&[
        "advance",
        b,
        "--agent",
        "doer",
        "MERGED",
        "--merged-into",
        "main",
        "--user-approved",
    ])
    .code(0);
    doer.git(&clone, &["worktree", "remove", wt.to_str().unwrap()]);
    doer.git(&clone, &["branch", "-q", "-d", "pair/max-board"]);
    doer.pair(&["advance", b, "--agent", "doer", "CLEANED_UP"])
        .code(0);
    // The reviewer's wait went on through COMMITTED and MERGED and ended at CLEANED_UP.
    let out = waiter.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(11), "{v:#}");
    assert_eq!(v["phase"], "CLEANED_UP", "{v:#}");
    assert_eq!(v["until"]["reached"], true, "{v:#}");

    // `validate` says "checked" only where it checked: the doer's clone has the repository and
    // the worktree was there; from the reviewer's clone the commit, its tree and the merge are
    // checked on the remote, the worktree's removal is recorded, not checked.
    let mine = doer.json(&["validate", b]);
    let l = &mine["files"][0]["lifecycle"];
    assert_eq!(l["checked_here"], true, "{mine:#}");
    let names: Vec<String> = l["checked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| s(&c["name"]))
        .collect();
    assert_eq!(
        names,
        [
            "commit-exists",
            "commit-is-approved-tree",
            "merged",
            "worktree-removed"
        ],
        "{mine:#}"
    );
    assert!(
        l["checked"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["ok"] == true),
        "{mine:#}"
    );
    assert_eq!(l["merged"], true, "{mine:#}");
    let theirs = rev.json(&["validate", b]);
    assert_eq!(theirs["valid"], true, "{theirs:#}");
    let l = &theirs["files"][0]["lifecycle"];
    assert_eq!(l["checked_here"], true, "{theirs:#}");
    assert_eq!(l["merged"], true, "{theirs:#}");
    let checked: Vec<(String, bool)> = l["checked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (s(&c["name"]), c["ok"] == true))
        .collect();
    assert_eq!(
        checked,
        [
            ("commit-exists".to_string(), true),
            ("commit-is-approved-tree".to_string(), true),
            ("merged".to_string(), true)
        ],
        "{theirs:#}"
    );
    assert!(
        s(&l["checked"][2]["detail"]).starts_with("main on "),
        "{theirs:#}"
    );
    assert_eq!(
        l["not_checked"][0]["name"], "worktree-removed",
        "{theirs:#}"
    );
    assert_eq!(
        theirs["files"][0]["warnings"],
        serde_json::json!([]),
        "{theirs:#}"
    );
    rev.pair(&["validate", b]).code(0).mentions(&[
        "checked here: commit-exists ok, commit-is-approved-tree ok, merged ok",
        "recorded, not checked here: worktree-removed",
    ]);
    // Nothing the reviewer ran wrote into the doer's tree: no temporary checkout is left.
    assert!(
        fs::read_dir(rev.home.join("tmp")).unwrap().next().is_none(),
        "temporary checkouts are removed"
    );
}

#[test]
fn a_doer_and_a_reviewer_who_cannot_read_each_others_files_finish_a_review_through_git_daemon() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let Some(users) = Users::new(&["doer", "rev"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let srv = remote(root.path());
    let daemon = Daemon::start(&srv, None);
    let url = format!("git://127.0.0.1:{}/remote.git", daemon.port);
    let (doer, rev) = agents(&users, root.path());
    two_users(&doer, &rev, &url);
}

#[test]
fn a_doer_and_a_reviewer_who_cannot_read_each_others_files_finish_a_review_over_file_urls() {
    let Some(users) = Users::new(&["doer", "rev"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let srv = remote(root.path());
    let url = format!("file://{}", srv.join("remote.git").display());
    let (doer, rev) = agents(&users, root.path());
    two_users(&doer, &rev, &url);
}

/// A check that needs a file git ignores: the doer declares it and the setup that makes it;
/// the other user's reproduction, from its own clone, runs nothing until confirmed, then runs
/// the setup in its temporary checkout of the published commit and reproduces the pass.
#[test]
fn a_check_whose_setup_makes_an_ignored_file_reproduces_on_the_other_users_side() {
    let Some(users) = Users::new(&["doer", "rev"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let srv = remote(root.path());
    let url = format!("file://{}", srv.join("remote.git").display());
    let (doer, rev) = agents(&users, root.path());
    for a in [&doer, &rev] {
        a.git(&a.home, &["clone", "-q", &url, "clone"]);
    }
    let b = format!("git+{url}#refs/pair/gen:board.md");
    let b = b.as_str();
    plan_approved(&doer, &rev, b, &["--goal", "g"], "p");
    doer.pair(&[
        "worktree",
        "create",
        b,
        "--agent",
        "doer",
        "--user-approved",
    ])
    .code(0);
    let wt = PathBuf::from(s(&doer.json(&["poll", b, "--agent", "doer"])["worktree"]));
    // A test that reads a generated file git ignores; the file made by hand in the worktree.
    let mut c = doer.command(Path::new("/bin/sh"), &wt);
    c.args([
        "-c",
        "echo gen/ > .gitignore && printf '[ \"$(cat gen/limit)\" = 7 ]\\n' > tests/gen.sh \
         && mkdir gen && echo 7 > gen/limit && git add -A",
    ]);
    run(&mut c, "the generated file".into()).code(0);
    doer.pair(&["submit", b, "--agent", "doer", "code", "--note", "c"])
        .code(0);
    let setup = "mkdir -p gen && echo 7 > gen/limit";
    let check = doer.json(&[
        "check",
        b,
        "--agent",
        "doer",
        "--name",
        "tests",
        "--needs",
        "gen/limit",
        "--setup",
        setup,
        "--",
        "sh",
        "run-tests.sh",
    ]);
    assert_eq!(check["check"]["passed"], true, "{check:#}");
    // The reviewer's clone has no gen/limit, nor can it read the doer's: unconfirmed, nothing runs.
    let out = rev.pair(&["check", b, "--agent", "rev", "--reproduce", "tests"]);
    out.code(6).mentions(&[setup, "sh run-tests.sh", "--yes"]);
    let again = rev.json(&[
        "check",
        b,
        "--agent",
        "rev",
        "--reproduce",
        "tests",
        "--yes",
    ]);
    assert_eq!(again["check"]["passed"], true, "{again:#}");
    assert_eq!(
        again["check"]["comparison"]["reproduced"], true,
        "{again:#}"
    );
    assert_eq!(
        again["check"]["needs"]["files"][0], "gen/limit",
        "{again:#}"
    );
    assert!(
        s(&again["check"]["output_tail"]).contains("all tests passed"),
        "{again:#}"
    );
    assert!(
        !rev.clone_dir().join("gen").exists(),
        "the setup ran in the temporary checkout, not in the reviewer's clone"
    );
}

#[test]
fn an_unpublished_artifact_another_user_cannot_read_is_exit_15_not_stale() {
    let Some(users) = Users::new(&["doer", "rev"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let (doer, rev) = agents(&users, root.path());
    // A file board in a directory both may write; the doer's worktree in its private home.
    let shared = root.path().join("shared");
    fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o777);
    let board = shared.join("task.md");
    let b = board.to_str().unwrap();
    doer.pair_in(
        &shared,
        &[
            "init",
            b,
            "--doer",
            "doer",
            "--reviewers",
            "rev",
            "--goal",
            "g",
        ],
    )
    .code(0);
    chmod(&board, 0o666);
    rev.pair_in(&shared, &["register", b, "--agent", "rev"])
        .code(0);
    doer.pair_in(
        &shared,
        &[
            "advance",
            b,
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ],
    )
    .code(0);
    doer.pair_in(
        &shared,
        &[
            "submit",
            b,
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--user-approved",
        ],
    )
    .code(0);
    rev.pair_in(
        &shared,
        &[
            "verdict",
            b,
            "--agent",
            "rev",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
    )
    .code(0);
    let wt = doer.home.join("wt");
    let mut c = doer.command(Path::new("/bin/sh"), &doer.home);
    c.args([
        "-c",
        "mkdir wt && cd wt && git init -q && echo one > a.txt && git add a.txt && git commit -qm base && echo two >> a.txt && git add a.txt",
    ]);
    run(&mut c, "make the worktree".into()).code(0);
    let w = wt.to_str().unwrap();
    doer.pair_in(
        &shared,
        &[
            "advance",
            b,
            "--agent",
            "doer",
            "CODING",
            "--worktree",
            w,
            "--user-approved",
        ],
    )
    .code(0);
    doer.pair_in(
        &shared,
        &["submit", b, "--agent", "doer", "code", "--note", "c"],
    )
    .code(0);
    let poll = doer.pair_in(&shared, &["poll", b, "--agent", "doer", "--json"]);
    let poll: Value = serde_json::from_str(&poll.stdout).unwrap();
    let sha = s(&poll["review"]["artifact"]["sha256"]);
    let before = fs::read(&board).unwrap();
    for args in [
        vec!["diff", b, "--json"],
        vec![
            "verdict",
            b,
            "--agent",
            "rev",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            &sha,
            "--note",
            "ok",
            "--json",
        ],
    ] {
        let out = rev.pair_in(&shared, &args);
        let e = out.json_error(15);
        assert_eq!(e["kind"], "artifact_unavailable", "{}", out.report());
        out.mentions(&["cannot be read here", "not published", "git ref"]);
    }
    assert_eq!(fs::read(&board).unwrap(), before, "nothing was written");
}

// ---- ssh and smart HTTP: real servers, real credentials ----

/// A process the test started (an ssh agent), killed when dropped.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn usermod(users: &Users, short: &str, args: &[&str]) {
    let mut args = args.to_vec();
    args.push(users.name(short));
    assert!(account_tool("usermod", &args), "usermod {args:?}");
}

/// Writes `text` at `rel` in `a`'s home, owned by `a`, with `mode`.
fn put(users: &Users, a: &Agent, rel: &str, text: &str, mode: u32) -> PathBuf {
    let p = a.home.join(rel);
    fs::write(&p, text).unwrap();
    chmod(&p, mode);
    std::os::unix::fs::lchown(&p, Some(users.uid(a.short)), Some(users.own_gid(a.short))).unwrap();
    p
}

fn add_gitconfig(a: &Agent, text: &str) {
    let p = a.home.join("gitconfig");
    let mut s = fs::read_to_string(&p).unwrap();
    s.push_str(text);
    fs::write(&p, s).unwrap();
}

/// A run of `/bin/sh -c script` as `a`, in its home, with `args` as `$1…`.
fn sh(a: &Agent, script: &str, args: &[&str]) -> Out {
    let mut c = a.command(Path::new("/bin/sh"), &a.home);
    c.arg("-c").arg(script).arg("sh").args(args);
    run(&mut c, format!("(as {}) sh -c {script}", a.id))
}

/// sshd for the server account `git` of `users`, whose login shell is `git-shell` and whose
/// home's git configuration trusts the repositories (which root made).
fn ssh_server(users: &Users, root: &Path) -> Sshd {
    let home = root.join("git-home");
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join(".gitconfig"), "[safe]\n\tdirectory = *\n").unwrap();
    chmod(&home, 0o755);
    // `*`: no password, and not a locked account (sshd without PAM refuses those).
    usermod(
        users,
        "git",
        &["-s", GIT_SHELL, "-p", "*", "-d", home.to_str().unwrap()],
    );
    Sshd::start(&root.join("sshd"), users.name("git"))
}

/// Gives `a` its own key pair (made by `ssh-keygen` as `a`, accepted by `sshd`) and the server's
/// host key in its `~/.ssh/known_hosts`; the account's home becomes `a`'s, where ssh looks. With
/// `through_agent` the key is then only in an ssh agent of `a`'s (the file removed), reached
/// through `SSH_AUTH_SOCK`. The private key's text, for the leak checks, and the agent.
fn ssh_client(
    users: &Users,
    a: &mut Agent,
    sshd: &Sshd,
    through_agent: bool,
) -> (String, Option<Reaped>) {
    usermod(users, a.short, &["-d", a.home.to_str().unwrap()]);
    sh(
        a,
        "mkdir -m 700 .ssh && ssh-keygen -q -t ed25519 -N '' -C \"$1\" -f .ssh/id_ed25519 && \
         printf '%s' \"$2\" > .ssh/known_hosts",
        &[a.id, &sshd.known_hosts_line()],
    )
    .code(0);
    let key = a.home.join(".ssh/id_ed25519");
    let private = fs::read_to_string(&key).unwrap();
    sshd.authorize(&fs::read_to_string(a.home.join(".ssh/id_ed25519.pub")).unwrap());
    if !through_agent {
        return (private, None);
    }
    let sock = a.home.join("agent.sock");
    let agent = std::process::Command::new("/usr/bin/setpriv")
        .arg(format!("--reuid={}", a.user()))
        .arg(format!("--regid={}", a.user()))
        .arg("--init-groups")
        .args(["ssh-agent", "-D", "-a"])
        .arg(&sock)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let agent = Reaped(agent);
    let start = std::time::Instant::now();
    while !sock.exists() {
        assert!(start.elapsed() < Duration::from_secs(10), "ssh-agent");
        std::thread::sleep(Duration::from_millis(20));
    }
    a.env.push(("SSH_AUTH_SOCK", sock));
    sh(
        a,
        "ssh-add -q .ssh/id_ed25519 && rm .ssh/id_ed25519 .ssh/id_ed25519.pub",
        &[],
    )
    .code(0);
    (private, Some(agent))
}

/// The `ssh://` address of the shared remote on `sshd`.
fn ssh_url(users: &Users, sshd: &Sshd, srv: &Path) -> String {
    format!(
        "ssh://{}@127.0.0.1:{}{}",
        users.name("git"),
        sshd.port,
        srv.join("remote.git").display()
    )
}

/// Gives `a` its credential for the web server: in git's credential store (a file of its own)
/// with `store`, else through a small helper script that prints the token kept in a file.
fn http_client(users: &Users, a: &Agent, httpd: &Httpd, token: &str, store: bool) {
    if store {
        let file = put(
            users,
            a,
            "git-credentials",
            &format!("http://{}:{token}@127.0.0.1:{}\n", a.id, httpd.port),
            0o600,
        );
        add_gitconfig(
            a,
            &format!("[credential]\n\thelper = store --file={}\n", file.display()),
        );
    } else {
        let kept = put(users, a, "token", &format!("{token}\n"), 0o600);
        let helper = put(
            users,
            a,
            "token-helper",
            &format!(
                "#!/bin/sh\n# git's credential helper protocol: answer `get` with the token\n\
                 test \"$1\" = get || exit 0\necho username={}\necho \"password=$(cat {})\"\n",
                a.id,
                kept.display()
            ),
            0o700,
        );
        add_gitconfig(
            a,
            &format!("[credential]\n\thelper = {}\n", helper.display()),
        );
    }
}

/// A token no test shares.
fn token(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{what}-{}-{nanos:09}", std::process::id())
}

/// Hooks on the shared remote that print `echoed` to the pusher (`remote:` lines): after every
/// push, and when refusing a push to `refs/pair/frozen`.
fn echoing_hooks(srv: &Path, echoed: &str) {
    let hooks = srv.join("remote.git/hooks");
    fs::create_dir_all(&hooks).unwrap();
    for (name, body) in [
        ("post-receive", format!("echo \"deploy token: {echoed}\"\n")),
        (
            "pre-receive",
            format!(
                "while read old new ref; do\n  if [ \"$ref\" = refs/pair/frozen ]; then\n    \
                 echo \"frozen; ask with token {echoed}\" >&2\n    exit 1\n  fi\ndone\n"
            ),
        ),
    ] {
        let p = hooks.join(name);
        fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
        chmod(&p, 0o755);
    }
}

/// Git run as root on a repository of another user's (`--git-dir`), trusting it.
fn git_as_root(git_dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "safe.directory=*", "--git-dir"])
        .arg(git_dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}",
        git_dir.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every git repository under `dir`: a directory with `HEAD` and `objects`.
fn git_dirs(dir: &Path) -> Vec<PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|d| d.join("HEAD").is_file() && d.join("objects").is_dir())
        .collect()
}

/// What the repository at `git_dir` holds, readable: its refs, and every object's content
/// (boards, trees, commits and their messages), uncompressed.
fn repo_text(git_dir: &Path) -> String {
    git_as_root(git_dir, &["for-each-ref"])
        + &git_as_root(
            git_dir,
            &["cat-file", "--batch-all-objects", "--batch", "--unordered"],
        )
}

/// Everything `pair` wrote or printed for `agents` over the remote in `srv`: every ref and
/// object of the remote, of every cache (and every file there, read as it is) and of the
/// clones (where submissions made their commits), and all the commands' output.
fn everything_pair_wrote(agents: &[&Agent], srv: &Path) -> String {
    let mut all = repo_text(&srv.join("remote.git"));
    for a in agents {
        all.push_str(&a.printed.borrow());
        for d in git_dirs(&a.home.join("cache"))
            .into_iter()
            .chain(git_dirs(&a.clone_dir()))
        {
            all.push_str(&repo_text(&d));
        }
        for f in walk(&a.home.join("cache")) {
            if f.is_file() {
                all.push_str(&String::from_utf8_lossy(&fs::read(&f).unwrap()));
            }
        }
    }
    all
}

/// None of `secrets` is in what `pair` wrote or printed.
#[track_caller]
fn nothing_leaks(agents: &[&Agent], srv: &Path, secrets: &[&str]) {
    let all = everything_pair_wrote(agents, srv);
    assert!(
        all.len() > 10_000,
        "the haystack holds the boards and outputs"
    );
    assert!(
        all.contains("max returns the larger number"),
        "the boards are read"
    );
    for secret in secrets {
        assert!(!secret.is_empty());
        assert!(
            !all.contains(secret),
            "`{secret}` leaked into what pair wrote"
        );
    }
}

/// The lines of a private key's body (its base64), each a secret.
fn key_lines(private: &str) -> Vec<&str> {
    private
        .lines()
        .filter(|l| !l.starts_with("-----") && l.len() >= 16)
        .collect()
}

#[test]
fn a_doer_and_a_reviewer_who_cannot_read_each_others_files_finish_a_review_over_ssh_keys_and_no_key_leaks()
 {
    if !require(&SSH, ssh_installed()) {
        return;
    }
    let Some(users) = Users::new(&["doer", "rev", "git"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let srv = remote(root.path());
    let sshd = ssh_server(&users, root.path());
    let (mut doer, mut rev) = agents(&users, root.path());
    let (doer_key, _) = ssh_client(&users, &mut doer, &sshd, false);
    let (rev_key, _agent) = ssh_client(&users, &mut rev, &sshd, true);
    two_users(&doer, &rev, &ssh_url(&users, &sshd, &srv));
    let secrets: Vec<&str> = key_lines(&doer_key)
        .into_iter()
        .chain(key_lines(&rev_key))
        .collect();
    assert!(secrets.len() >= 6, "{doer_key}");
    nothing_leaks(&[&doer, &rev], &srv, &secrets);
    // Both keys were used, each by its user.
    let log = sshd.log();
    assert!(log.matches("Accepted publickey").count() >= 2, "{log}");
}

#[test]
fn a_doer_and_a_reviewer_who_cannot_read_each_others_files_finish_a_review_over_smart_http_and_no_token_leaks()
 {
    if !require(&LIGHTTPD, httpd_installed()) {
        return;
    }
    let Some(users) = Users::new(&["doer", "rev"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let srv = remote(root.path());
    let (doer_token, rev_token, echoed) = (token("doer"), token("rev"), token("echoed"));
    echoing_hooks(&srv, &echoed);
    let httpd = Httpd::start(
        &root.path().join("httpd"),
        &srv,
        &[("doer", &doer_token), ("rev", &rev_token)],
    );
    let (doer, rev) = agents(&users, root.path());
    http_client(&users, &doer, &httpd, &doer_token, true);
    http_client(&users, &rev, &httpd, &rev_token, false);
    let url = httpd.url("remote.git");
    two_users(&doer, &rev, &url);
    // A push the remote's hook refuses, printing its token: the refusal is said, the hook's
    // lines are not repeated, nothing is written.
    let frozen = format!("git+{url}#refs/pair/frozen:board.md");
    doer.pair_in(
        &doer.home,
        &[
            "init",
            &frozen,
            "--doer",
            "doer",
            "--reviewers",
            "rev",
            "--goal",
            "g",
        ],
    )
    .code(1)
    .mentions(&[
        "did not accept the write",
        "nothing was written",
        "pre-receive hook declined",
        "1 line the remote printed not repeated",
    ]);
    assert!(
        !git_as_root(&srv.join("remote.git"), &["for-each-ref"]).contains("refs/pair/frozen"),
        "nothing was written"
    );
    // The hook did print its token on every push: it reached git, and stopped there.
    let mut c = doer.command(Path::new("git"), &doer.clone_dir());
    c.args(["push", "origin", "HEAD:refs/heads/probe"]);
    run(&mut c, "a push with git".into())
        .code(0)
        .mentions(&[&format!("remote: deploy token: {echoed}")]);
    nothing_leaks(&[&doer, &rev], &srv, &[&doer_token, &rev_token, &echoed]);
}

/// The processes of `a`'s user now (their pid, state and command line), but for `except`.
fn processes_of(users: &Users, a: &Agent, except: Option<u32>) -> Vec<String> {
    let out = std::process::Command::new("ps")
        .args(["-o", "pid=,stat=,args=", "-u"])
        .arg(users.uid(a.short).to_string())
        .output()
        .unwrap();
    let except = except.map(|p| p.to_string());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && l.split_whitespace().next() != except.as_deref())
        .map(String::from)
        .collect()
}

/// [`processes_of`] but for those that ended and wait to be reaped by whoever adopted them.
fn running_of(users: &Users, a: &Agent, except: Option<u32>) -> Vec<String> {
    processes_of(users, a, except)
        .into_iter()
        .filter(|l| !l.split_whitespace().nth(1).unwrap_or("").starts_with('Z'))
        .collect()
}

/// What `a`'s cache holds: every ref and every object they reach, in each of its repositories.
/// (A write makes its commit in the cache before it pushes it: one the remote refused is left
/// there unreferenced, as after any refused write, and changes nothing the cache holds.)
fn cache_state(a: &Agent) -> String {
    git_dirs(&a.home.join("cache"))
        .iter()
        .map(|d| {
            git_as_root(d, &["for-each-ref"]) + &git_as_root(d, &["rev-list", "--objects", "--all"])
        })
        .collect()
}

/// `a` reads and writes the board `b`, whose remote refuses `a`'s credentials: both exit 1
/// quickly (no prompt waited on: the time limit is 10 s and the failure comes long before) with
/// `words` (what to configure) in the message, and leave the board on the remote, the cache
/// and the processes of `a`'s user as they were (but for `agent`, its ssh agent).
#[track_caller]
fn refused(users: &Users, a: &Agent, b: &str, srv: &Path, agent: Option<u32>, words: &[&str]) {
    let remote_refs = || git_as_root(&srv.join("remote.git"), &["for-each-ref"]);
    let (refs, cache) = (remote_refs(), cache_state(a));
    for args in [
        vec!["poll", b, "--agent", a.id],
        vec![
            "note",
            b,
            "--agent",
            a.id,
            "--section",
            "Evidence",
            "--note",
            "n",
        ],
        vec!["poll", b, "--agent", a.id, "--json"],
    ] {
        let out = a.pair_in(&a.home, &args);
        if args.contains(&"--json") {
            let e = out.json_error(1);
            assert_eq!(e["kind"], "git", "{}", out.report());
        }
        out.code(1).mentions(words).mentions(&["never prompts"]);
        if args[0] == "note" {
            out.mentions(&["refused the push; nothing was written"]);
        }
        assert!(
            out.elapsed < Duration::from_secs(10 + 2),
            "bounded: {}",
            out.report()
        );
        assert_eq!(
            processes_of(users, a, agent),
            Vec::<String>::new(),
            "nothing left running"
        );
    }
    assert_eq!(remote_refs(), refs, "nothing was written to the remote");
    assert_eq!(cache_state(a), cache, "nothing was written to the cache");
}

#[test]
fn a_key_the_ssh_server_does_not_accept_is_exit_1_naming_the_key_to_configure_with_nothing_written()
{
    if !require(&SSH, ssh_installed()) {
        return;
    }
    let Some(users) = Users::new(&["doer", "rev", "git"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let srv = remote(root.path());
    let sshd = ssh_server(&users, root.path());
    let (mut doer, mut rev) = agents(&users, root.path());
    ssh_client(&users, &mut doer, &sshd, false);
    let (_, agent) = ssh_client(&users, &mut rev, &sshd, true);
    let agent_pid = agent.as_ref().map(|a| a.0.id());
    let b = format!(
        "git+{}#refs/pair/auth:board.md",
        ssh_url(&users, &sshd, &srv)
    );
    let b = b.as_str();
    started(&doer, &rev, b);
    // The doer's key is replaced by one the server never accepted, with a passphrase no one
    // gives: ssh may not ask for it.
    sh(
        &doer,
        "rm .ssh/id_ed25519 .ssh/id_ed25519.pub && \
         ssh-keygen -q -t ed25519 -N 'not given' -f .ssh/id_ed25519",
        &[],
    )
    .code(0);
    let key_words = [
        "authentication failed",
        "accepted none of this machine's keys",
        "ssh agent",
        "Permission denied (publickey)",
    ];
    refused(&users, &doer, b, &srv, None, &key_words);
    // The server now accepts that key, but its passphrase is in no agent. Under a terminal of its
    // own (`script`), as in an agent's shell, with a keyboard that never types, ssh would ask
    // for the passphrase there and wait: it is not asked, and gives up at once.
    if require(&SCRIPT, on_path("script")) {
        sshd.authorize(&fs::read_to_string(doer.home.join(".ssh/id_ed25519.pub")).unwrap());
        let line = format!("{} poll '{b}' --agent doer", pair_bin().display());
        let mut c = doer.std_command(Path::new("script"), &doer.home);
        c.args(["-qec", &line, "/dev/null"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let start = std::time::Instant::now();
        let mut child = c.spawn().unwrap();
        let keyboard = child.stdin.take();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("pair waited on a prompt in a terminal");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let elapsed = start.elapsed();
        drop(keyboard);
        let out = child.wait_with_output().unwrap();
        let shown = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(status.code(), Some(1), "{shown}");
        assert!(
            shown.contains("Permission denied (publickey)") && !shown.contains("stopped"),
            "ssh gave up by itself, not at the time limit: {shown}"
        );
        assert!(!shown.contains("Enter passphrase"), "{shown}");
        assert!(
            elapsed < Duration::from_secs(10 + 2),
            "{elapsed:?}: {shown}"
        );
        assert_eq!(processes_of(&users, &doer, None), Vec::<String>::new());
        // git alone, in the same terminal, does ask (and would wait).
        let mut c = doer.std_command(Path::new("script"), &doer.home);
        let line = format!("git ls-remote {}", ssh_url(&users, &sshd, &srv));
        c.args(["-qec", &line, "/dev/null"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = c.spawn().unwrap();
        let keyboard = child.stdin.take();
        let mut terminal = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::Read;
            let (mut buf, mut all) = ([0u8; 4096], Vec::new());
            while let Ok(n) = terminal.read(&mut buf) {
                if n == 0 {
                    break;
                }
                all.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&all).contains("Enter passphrase") {
                    let _ = tx.send(());
                }
            }
        });
        let asked = rx.recv_timeout(Duration::from_secs(30)).is_ok();
        let _ = child.kill();
        let _ = child.wait();
        drop(keyboard);
        assert!(asked, "git alone asks for the passphrase in the terminal");
    }
    // The server no longer accepts the key the reviewer's agent holds.
    sshd.revoke_all();
    refused(&users, &rev, b, &srv, agent_pid, &key_words);
    // A host key this machine does not know: the message says to add it to known_hosts.
    fs::write(rev.home.join(".ssh/known_hosts"), "").unwrap();
    let out = rev.pair_in(&rev.home, &["poll", b, "--agent", "rev"]);
    out.code(1).mentions(&[
        "Host key verification failed",
        "known_hosts",
        "never prompts",
    ]);
}

#[test]
fn a_revoked_http_token_is_exit_1_naming_the_credential_helper_with_nothing_written() {
    if !require(&LIGHTTPD, httpd_installed()) {
        return;
    }
    let Some(users) = Users::new(&["doer", "rev"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let srv = remote(root.path());
    let (doer_token, rev_token) = (token("doer"), token("rev"));
    let httpd = Httpd::start(
        &root.path().join("httpd"),
        &srv,
        &[("doer", &doer_token), ("rev", &rev_token)],
    );
    let (doer, rev) = agents(&users, root.path());
    http_client(&users, &doer, &httpd, &doer_token, true);
    http_client(&users, &rev, &httpd, &rev_token, false);
    let b = format!("git+{}#refs/pair/auth:board.md", httpd.url("remote.git"));
    let b = b.as_str();
    started(&doer, &rev, b);
    // The reviewer's token is revoked on the server; the doer's helper gives a wrong one.
    httpd.set_users(&[("doer", &doer_token)]);
    let http_words = [
        "authentication failed",
        "credential helper",
        "git help credentials",
    ];
    refused(&users, &rev, b, &srv, None, &http_words);
    put(
        &users,
        &doer,
        "git-credentials",
        &format!("http://doer:wrong@127.0.0.1:{}\n", httpd.port),
        0o600,
    );
    refused(&users, &doer, b, &srv, None, &http_words);
    // With no credential configured at all, git would prompt for one: it may not.
    fs::write(doer.home.join("git-credentials"), "").unwrap();
    let out = doer.pair_in(&doer.home, &["poll", b, "--agent", "doer"]);
    out.code(1).mentions(&[
        "could not read Username",
        "credential helper",
        "never prompts",
    ]);
    assert!(out.elapsed < Duration::from_secs(12), "{}", out.report());
}

/// A write within 10 s of the wait's start wakes the other user's `poll --wait` (default
/// settings: the adaptive schedule, no `--interval`) within the claimed 1.5 s (median), over ssh
/// and over smart HTTP, and over `git daemon` beside them: the time from the doer's write returning to the reviewer's wait exiting.
/// Each round the reviewer waits for any new record after its position (`--after`), in its own
/// cache, and the doer's `note` comes after a delay of 0.5-9.5 s. `PAIR_HANDOFFS=N` runs N
/// rounds over each (3 by default); the figures are printed (`--nocapture`).
#[test]
fn a_write_over_ssh_or_smart_http_wakes_the_other_users_wait_within_the_claimed_bound() {
    if !require(&SSH, ssh_installed())
        || !require(&LIGHTTPD, httpd_installed())
        || !require(&GIT_DAEMON, daemon_installed())
    {
        return;
    }
    let Some(users) = Users::new(&["doer", "rev", "git"]) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    chmod(root.path(), 0o755);
    let srv = remote(root.path());
    let sshd = ssh_server(&users, root.path());
    let (doer_token, rev_token) = (token("doer"), token("rev"));
    let httpd = Httpd::start(
        &root.path().join("httpd"),
        &srv,
        &[("doer", &doer_token), ("rev", &rev_token)],
    );
    let (mut doer, mut rev) = agents(&users, root.path());
    ssh_client(&users, &mut doer, &sshd, false);
    let (_, agent) = ssh_client(&users, &mut rev, &sshd, true);
    let agent_pid = agent.as_ref().map(|a| a.0.id());
    http_client(&users, &doer, &httpd, &doer_token, true);
    http_client(&users, &rev, &httpd, &rev_token, false);
    let rounds: usize = std::env::var("PAIR_HANDOFFS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let delays = [1.3, 4.7, 0.5, 8.2, 2.6, 9.5, 0.9, 5.5, 3.3, 7.1];
    let daemon = Daemon::start(&srv, None);
    for (transport, url, task) in [
        (
            "git daemon",
            format!("git://127.0.0.1:{}/remote.git", daemon.port),
            "over-git",
        ),
        ("ssh", ssh_url(&users, &sshd, &srv), "over-ssh"),
        ("smart HTTP", httpd.url("remote.git"), "over-http"),
    ] {
        let b = format!("git+{url}#refs/pair/{task}:board.md");
        let b = b.as_str();
        started(&doer, &rev, b);
        let (mut times, mut writes) = (Vec::new(), Vec::new());
        for (i, delay) in delays.iter().cycle().take(rounds).enumerate() {
            let at = rev.pair_in(
                &rev.home,
                &["poll", b, "--agent", "rev", "--after", "0", "--json"],
            );
            let at: Value =
                serde_json::from_str(&at.stdout).unwrap_or_else(|e| panic!("{e}: {}", at.report()));
            let at = at["position"].to_string();
            let mut c = rev.std_command(&pair_bin(), &rev.home);
            c.args([
                "poll", b, "--agent", "rev", "--after", &at, "--wait", "--json",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
            let started = std::time::Instant::now();
            let waiter = c.spawn().unwrap();
            let waiter = std::thread::spawn(move || {
                let out = waiter.wait_with_output().unwrap();
                (std::time::Instant::now(), out)
            });
            std::thread::sleep(Duration::from_secs_f64(*delay));
            let note = format!("round {i}");
            let wrote = doer.pair_in(
                &doer.home,
                &[
                    "note",
                    b,
                    "--agent",
                    "doer",
                    "--section",
                    "Evidence",
                    "--note",
                    &note,
                ],
            );
            wrote.code(0);
            writes.push(wrote.elapsed);
            let written = std::time::Instant::now();
            let (woke, out) = waiter.join().unwrap();
            let v: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
            let records = v["records"].as_array().unwrap();
            assert_eq!(
                records.len(),
                1,
                "the wait ended with the doer's note: {v:#}"
            );
            assert_eq!(records[0]["by"], "doer", "{v:#}");
            assert_eq!(records[0]["command"], "note", "{v:#}");
            assert!(woke >= started + Duration::from_secs_f64(*delay));
            times.push(woke.saturating_duration_since(written));
        }
        times.sort();
        writes.sort();
        let median = times[times.len() / 2];
        eprintln!(
            "handoff over {transport}: median {} ms, max {} ms over {rounds} rounds (write \
             0.5-9.5 s into the wait; each: {:?}); the write (`note`) itself: median {} ms",
            median.as_millis(),
            times.last().unwrap().as_millis(),
            times.iter().map(Duration::as_millis).collect::<Vec<_>>(),
            writes[writes.len() / 2].as_millis()
        );
        assert!(
            median <= Duration::from_millis(1500 + 2000),
            "the median handoff over {transport} is within the claimed 1.5 s (plus 2 s): {times:?}"
        );
    }
    // (A `poll --wait` leaves a process of its own to release what it watched, which ends by
    // itself.)
    assert_eq!(running_of(&users, &rev, agent_pid), Vec::<String>::new());
    assert_eq!(running_of(&users, &doer, None), Vec::<String>::new());
}
