//! A project: a set of boards (a directory, or a git remote's board namespace) read as one by
//! `pair ls` and `pair next`.

use crate::common::{git, pair, pair_bin, pair_env};
use std::path::Path;
use std::process::{Command, Stdio};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A board in PLANNING_SUBMITTED with `r1` registered, its plan submitted at `at`.
fn submitted(board: &str, at: &str, env: &[(&str, &str)]) {
    let now = [env, &[("PAIR_NOW", at)]].concat();
    pair_env(
        ["init", board, "--goal", "A task", "--reviewers", "r1"],
        &now,
    )
    .code(0);
    pair_env(["register", board, "--agent", "r1"], &now).code(0);
    pair_env(
        [
            "advance",
            board,
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ],
        &now,
    )
    .code(0);
    pair_env(
        [
            "submit",
            board,
            "--agent",
            "doer",
            "plan",
            "--note",
            "The plan",
            "--user-approved",
        ],
        &now,
    )
    .code(0);
}

#[test]
fn ls_lists_every_board_under_a_directory_sorted_and_filtered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("team/sub")).unwrap();
    let a = dir.path().join("team/a.md");
    let b = dir.path().join("team/sub/b.md");
    std::fs::write(dir.path().join("team/README.md"), "# not a board\n").unwrap();
    pair(["init", s(&a), "--goal", "A"]).code(0);
    submitted(s(&b), "2026-01-01T00:00:00Z", &[]);
    let v = pair(["ls", s(dir.path()), "--json"]).code(0).json();
    let rows = v["boards"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["team/a", "team/sub/b"], "{v:#}");
    assert_eq!(rows[0]["phase"], "DRAFT");
    assert_eq!(rows[1]["phase"], "PLANNING_SUBMITTED");
    assert_eq!(rows[1]["turn"], serde_json::json!(["r1"]));
    assert_eq!(rows[1]["round"], 1);
    // Entered in 2026: stalled past the default hour.
    assert_eq!(rows[1]["stalled"], true);
    assert_eq!(rows[0]["cursor"], 1);
    let v = pair(["ls", s(dir.path()), "--agent", "r1", "--json"])
        .code(0)
        .json();
    assert_eq!(v["boards"].as_array().unwrap().len(), 1, "{v:#}");
    let v = pair([
        "ls",
        s(dir.path()),
        "--sort",
        "phase",
        "--state",
        "stalled",
        "--json",
    ])
    .code(0)
    .json();
    assert_eq!(v["boards"][0]["name"], "team/sub/b", "{v:#}");
    pair(["ls", s(dir.path()), "--state", "nonsense"]).code(4);
    let text = pair(["ls", s(dir.path())]).code(0).stdout.clone();
    assert!(
        text.contains("team/sub/b") && text.contains("stalled"),
        "{text}"
    );
}

/// `ls` reads its clock to the millisecond: a board is stalled (or breached) as soon as the
/// time is over its limit, not at the next whole second.
#[test]
fn ls_calls_a_board_stalled_as_soon_as_its_limit_is_passed() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.md");
    submitted(s(&a), "2026-01-01T00:00:00Z", &[]);
    let stalled = |at: &str| {
        let v = pair_env(["ls", s(dir.path()), "--json"], &[("PAIR_NOW", at)])
            .code(0)
            .json();
        v["boards"][0]["stalled"].as_bool().unwrap()
    };
    // The default stall time is an hour.
    assert!(!stalled("2026-01-01T00:59:59.700Z"));
    assert!(!stalled("2026-01-01T01:00:00Z"));
    assert!(stalled("2026-01-01T01:00:00.300Z"));
}

#[test]
fn next_gives_the_oldest_waiting_review_first_and_its_command_works() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a.md"),
        dir.path().join("b.md"),
        dir.path().join("c.md"),
    );
    // b waits longest, then a; c is the doer's only.
    submitted(s(&a), "2026-01-01T00:00:05Z", &[]);
    submitted(s(&b), "2026-01-01T00:00:01Z", &[]);
    pair(["init", s(&c), "--goal", "C"]).code(0);
    let note = dir.path().join("note.txt");
    std::fs::write(&note, "Fine.\n").unwrap();
    let mut taken = Vec::new();
    for _ in 0..2 {
        let v = pair(["next", "--agent", "r1", s(dir.path()), "--json"])
            .code(0)
            .json();
        assert_eq!(v["step"]["kind"], "review", "{v:#}");
        taken.push(v["step"]["name"].as_str().unwrap().to_string());
        // Run the command as given, with the placeholders filled.
        let cmd: Vec<String> = v["next"]["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| match w.as_str().unwrap() {
                "VERDICT" => "APPROVED".to_string(),
                "NOTE" | "TEXT" => "Fine.".to_string(),
                "FILE" => s(&note).to_string(),
                w => w.to_string(),
            })
            .collect();
        assert_eq!(cmd[0], "pair");
        let out = Command::new(pair_bin())
            .args(&cmd[1..])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd:?}: {out:?}");
    }
    assert_eq!(taken, ["b", "a"]);
    // Nothing left for r1: exit 10 and the command to wait.
    let v = pair(["next", "--agent", "r1", s(dir.path()), "--json"])
        .code(10)
        .json();
    assert_eq!(v["found"], false);
    assert_eq!(v["next"]["command"][1], "next");
    // The doer's work: the oldest first.
    let v = pair(["next", "--agent", "doer", s(dir.path()), "--json"])
        .code(0)
        .json();
    assert_eq!(v["step"]["kind"], "work", "{v:#}");
}

#[test]
fn next_wait_wakes_when_any_board_gives_the_agent_work() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let a = sub.join("a.md");
    pair(["init", s(&a), "--goal", "A", "--reviewers", "r1"]).code(0);
    pair(["register", s(&a), "--agent", "r1"]).code(0);
    let waiter = Command::new(pair_bin())
        .args(["next", "--agent", "r1", s(dir.path()), "--wait"])
        .args(["--timeout", "60", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    pair([
        "advance",
        s(&a),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    pair([
        "submit",
        s(&a),
        "--agent",
        "doer",
        "plan",
        "--note",
        "Plan",
        "--user-approved",
    ])
    .code(0);
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["step"]["name"], "deep/er/a", "{v:#}");
    assert_eq!(v["step"]["phase"], "PLANNING_SUBMITTED", "{v:#}");
}

#[test]
fn a_git_remote_namespace_is_a_project_read_with_one_listing() {
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "remote.git"]);
    let cache = tempfile::tempdir().unwrap();
    let env = [("PAIR_CACHE_DIR", s(cache.path()))];
    let url = format!("file://{}/remote.git", remote.path().display());
    let board = |r: &str| format!("git+{url}#refs/pair/{r}:task.md");
    submitted(&board("one"), "2026-01-01T00:00:03Z", &env);
    submitted(&board("two"), "2026-01-01T00:00:01Z", &env);
    pair_env(["init", &board("three"), "--goal", "T"], &env).code(0);
    let project = format!("git+{url}#refs/pair/:task.md");
    let v = pair_env(["ls", &project, "--json"], &env).code(0).json();
    let names: Vec<&str> = v["boards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["one", "three", "two"], "{v:#}");
    let v = pair_env(["next", "--agent", "r1", &project, "--json"], &env)
        .code(0)
        .json();
    assert_eq!(v["step"]["name"], "two", "{v:#}");
    assert_eq!(v["step"]["board"], board("two"), "{v:#}");
    // Another machine (its own cache) reads the same.
    let other = tempfile::tempdir().unwrap();
    let v = pair_env(
        ["ls", &project, "--json"],
        &[("PAIR_CACHE_DIR", s(other.path()))],
    )
    .code(0)
    .json();
    assert_eq!(v["boards"].as_array().unwrap().len(), 3);
    pair_env(["ls", &format!("git+{url}#refs/pair")], &env).code(4);
}

/// `stats DIR`: an invalid board and one over the size limit are reported, each with why, and
/// the others' figures given, as `ls` lists them (exit 0); a board named on its own that cannot
/// be read is still the command's error.
#[test]
fn stats_of_a_directory_reports_a_bad_board_and_counts_the_others() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["a", "b"] {
        let b = dir.path().join(format!("{n}.md"));
        pair(["init", s(&b), "--goal", "A task", "--reviewers", "r1"]).code(0);
    }
    let good = std::fs::read_to_string(dir.path().join("a.md")).unwrap();
    let bad = dir.path().join("bad.md");
    std::fs::write(&bad, good.replacen("phase: DRAFT", "phase: NOWHERE", 1)).unwrap();
    let large = dir.path().join("large.md");
    std::fs::write(&large, &good).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&large)
        .unwrap()
        .set_len(65 * 1024 * 1024)
        .unwrap();
    let ls = pair(["ls", s(dir.path()), "--json"]).code(0).json();
    assert_eq!(ls["boards"].as_array().unwrap().len(), 4, "{ls:#}");
    let v = pair(["stats", s(dir.path()), "--json"]).code(0).json();
    assert_eq!(v["total"]["boards"], 2, "{v:#}");
    let unread = v["unread"].as_array().unwrap();
    let paths: Vec<&str> = unread.iter().map(|u| u["path"].as_str().unwrap()).collect();
    assert_eq!(paths, [s(&bad), s(&large)], "{v:#}");
    assert!(unread.iter().all(|u| u["code"] == 5), "{v:#}");
    assert!(
        unread[0]["error"].as_str().unwrap().contains("NOWHERE"),
        "{v:#}"
    );
    let out = pair(["stats", s(dir.path())]);
    out.code(0).mentions(&[
        "bad.md: cannot be read",
        "large.md: cannot be read",
        "total: 2 boards",
    ]);
    pair(["stats", s(&bad)]).code(5);
}

/// `stats` on a git remote's board namespace: a junk ref is reported, the boards counted.
#[test]
fn stats_of_a_git_namespace_reports_a_junk_ref_and_counts_the_boards() {
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "remote.git"]);
    let bare = remote.path().join("remote.git");
    let cache = tempfile::tempdir().unwrap();
    let env = [("PAIR_CACHE_DIR", s(cache.path()))];
    let url = format!("file://{}/remote.git", remote.path().display());
    let board = |r: &str| format!("git+{url}#refs/pair/{r}:task.md");
    for r in ["one", "two"] {
        pair_env(["init", &board(r), "--goal", "T"], &env).code(0);
    }
    // A ref under the prefix whose task.md is no board, made with plain git.
    let junk = std::process::Command::new("git")
        .args(["--git-dir", s(&bare), "hash-object", "-w", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(b"---\nphase: [\n---\njunk\n")?;
            c.wait_with_output()
        })
        .unwrap();
    let blob = String::from_utf8_lossy(&junk.stdout).trim().to_string();
    let tree = std::process::Command::new("git")
        .args(["--git-dir", s(&bare), "mktree"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(format!("100644 blob {blob}\ttask.md\n").as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    let tree = String::from_utf8_lossy(&tree.stdout).trim().to_string();
    let commit = git(&bare, &["commit-tree", &tree, "-m", "junk"]);
    git(&bare, &["update-ref", "refs/pair/junk", commit.trim()]);
    let project = format!("git+{url}#refs/pair/:task.md");
    let v = pair_env(["stats", &project, "--json"], &env).code(0).json();
    assert_eq!(v["total"]["boards"], 2, "{v:#}");
    let unread = v["unread"].as_array().unwrap();
    assert_eq!(unread.len(), 1, "{v:#}");
    assert_eq!(unread[0]["path"], board("junk"), "{v:#}");
}
