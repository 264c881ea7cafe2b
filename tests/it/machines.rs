//! Review across machines, for real: the doer and the reviewer are two Unix users whose homes the
//! other cannot read (mode 0700), each with its own clone and cache, sharing nothing but a bare
//! remote served by `git daemon` on 127.0.0.1 (and once over `file://`). Every reviewer command
//! works from the reviewer's own clone on what the doer's submissions published.

use crate::common::accounts::Users;
use crate::common::daemon::{Daemon, daemon_installed};
use crate::common::prereq::{GIT_DAEMON, require};
use crate::common::*;
use serde_json::Value;
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
        let mut c = assert_cmd::Command::new("/usr/bin/setpriv");
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
            .env("TMPDIR", self.home.join("tmp"))
            .timeout(Duration::from_secs(120));
        c
    }

    #[track_caller]
    fn pair_in(&self, dir: &Path, args: &[&str]) -> Out {
        let mut c = self.command(&pair_bin(), dir);
        c.args(args);
        run(&mut c, format!("(as {}) pair {}", self.id, args.join(" ")))
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
    };
    (agent("doer"), agent("rev"))
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
fn two_users(users: &Users, root: &Path, url: &str) {
    let (doer, rev) = agents(users, root);
    for a in [&doer, &rev] {
        a.git(&a.home, &["clone", "-q", url, "clone"]);
    }
    // The reviewer cannot read anything of the doer's.
    let peek = rev.pair_in(&rev.home, &["validate", doer.clone_dir().to_str().unwrap()]);
    assert_ne!(peek.code, Some(0), "{}", peek.report());
    let b = format!("git+{url}#refs/pair/max:board.md");
    let b = b.as_str();

    doer.pair(&[
        "init",
        b,
        "--doer",
        "doer",
        "--reviewers",
        "rev",
        "--red-test",
        "--max-rounds",
        "3",
        "--goal",
        "max returns the larger number",
    ])
    .code(0);
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
        "Swap the branches of max; a red test first.",
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
    let again = rev.json(&["check", b, "--agent", "rev", "--reproduce", "tests"]);
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
    let clone = doer.clone_dir();
    // The red test was written in the main checkout; the merge brings it from the topic branch.
    fs::remove_file(&test).unwrap();
    doer.git(&clone, &["merge", "-q", "--ff-only", "pair/max-board"]);
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

    // `validate` says "checked" only where it checked: the doer's clone has the repository, the
    // reviewer's machine does not.
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
    let theirs = rev.json(&["validate", b]);
    assert_eq!(theirs["valid"], true, "{theirs:#}");
    assert_eq!(
        theirs["files"][0]["lifecycle"]["checked_here"], false,
        "{theirs:#}"
    );
    rev.pair(&["validate", b])
        .code(0)
        .mentions(&["not checked here (repository not present)"]);
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
    two_users(&users, root.path(), &url);
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
    two_users(&users, root.path(), &url);
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
