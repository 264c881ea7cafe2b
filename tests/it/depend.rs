//! Dependencies: a board that waits for others (`init --after`, a `blocked-pending:BOARD`
//! deferral) is not its doer's to work on until they are COMMITTED or later; `poll`, `next` and
//! `ls` say what it waits for, `ls` shows the critical path and refuses a cycle.

use crate::common::prereq::{GIT, on_path, require};
use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn git_in(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?} in {}", dir.display());
}

/// A git repository with one commit, for boards whose work is committed.
fn repo() -> Option<tempfile::TempDir> {
    if !require(&GIT, on_path("git")) {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    git_in(dir.path(), &["init", "-q"]);
    git_in(dir.path(), &["commit", "-q", "--allow-empty", "-m", "base"]);
    Some(dir)
}

fn poll(board: &str, agent: &str) -> (Option<i32>, Value) {
    let out = output_in(Path::new("/"), &["poll", board, "--agent", agent, "--json"]);
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

/// Drive `board` (in the repository `root`, reviewed by `r1`) to COMMITTED by running, for the
/// doer and the reviewer in turn, each `next.command` exactly as given: none may be refused.
fn commit_by_next(root: &Path, board: &str) {
    let note = root.join("note.txt");
    std::fs::write(&note, "As the action says.\n").unwrap();
    let stem = Path::new(board)
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let worktree = root.join(".worktrees").join(&stem);
    let mut trail = Vec::new();
    for _ in 0..40 {
        if pair(["status", board, "--json"]).json()["phase"] == "COMMITTED" {
            return;
        }
        let mut acted = false;
        for who in ["doer", "r1"] {
            let (code, v) = poll(board, who);
            if code != Some(0) {
                continue;
            }
            let mut argv: Vec<String> = v["next"]["command"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect();
            for w in argv.iter_mut() {
                if w == "/tmp/note.md" || w == "FILE" {
                    *w = note.display().to_string();
                }
                if w == "VERDICT" {
                    *w = "APPROVED".into();
                }
            }
            if argv.iter().any(|w| w == "COMMITTED") {
                git_in(&worktree, &["commit", "-q", "-m", "the work"]);
            }
            trail.push(format!("[{}] {}", v["phase"], argv.join(" ")));
            let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
            let run = output_in(root, &args);
            assert!(
                run.status.success(),
                "next.command refused: {}\n{}",
                String::from_utf8_lossy(&run.stderr),
                trail.join("\n")
            );
            if argv.get(1).is_some_and(|w| w == "worktree") {
                std::fs::write(worktree.join(format!("{stem}.txt")), "work\n").unwrap();
                git_in(&worktree, &["add", "."]);
            }
            acted = true;
            break;
        }
        assert!(acted, "nobody has a move\n{}", trail.join("\n"));
    }
    panic!("{board} did not reach COMMITTED\n{}", trail.join("\n"));
}

fn init(board: &Path, extra: &[&str]) {
    let mut args = vec!["init", s(board), "--reviewers", "r1", "--yolo"];
    args.extend_from_slice(extra);
    pair(args).code(0);
    pair(["register", s(board), "--agent", "r1"]).code(0);
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_str()
                .map_or_else(|| r["name"].as_str().unwrap().to_string(), str::to_string)
        })
        .collect()
}

#[test]
fn a_chain_releases_in_order_as_each_dependency_commits() {
    let Some(dir) = repo() else { return };
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (a, b, c) = (root.join("a.md"), root.join("b.md"), root.join("c.md"));
    init(&a, &[]);
    init(&b, &["--after", "a"]);
    init(&c, &["--after", "b.md"]);
    // b waits for a: not the doer's turn, and the step it would take is refused.
    let (code, v) = poll(s(&b), "doer");
    assert_eq!(code, Some(10), "{v:#}");
    assert_eq!(v["waits_for"][0]["board"], "a", "{v:#}");
    assert_eq!(v["waits_for"][0]["phase"], "DRAFT", "{v:#}");
    assert_eq!(v["waits_for"][0]["state"], "waiting", "{v:#}");
    assert_eq!(v["next"]["command"][1], "poll", "{v:#}");
    let text = pair(["poll", s(&b), "--agent", "doer"]).code(10).all();
    assert!(text.contains("waits for   a (DRAFT, waiting)"), "{text}");
    pair(["advance", s(&b), "--agent", "doer", "PLANNING"])
        .code(6)
        .mentions(&["a (DRAFT)", "COMMITTED", "poll"]);
    let out = pair(["advance", s(&b), "--agent", "doer", "PLANNING", "--json"])
        .code(6)
        .all();
    assert!(out.contains(r#""argv":["pair","poll""#), "{out}");
    // ls: what each waits for, the waiting ones, the critical path.
    let v = pair(["ls", s(&root), "--json"]).code(0).json();
    assert_eq!(names(&v, "critical_path"), ["a", "b", "c"], "{v:#}");
    assert_eq!(v["boards"][0]["turn"], serde_json::json!(["doer"]), "{v:#}");
    assert_eq!(v["boards"][1]["turn"], serde_json::json!([]), "{v:#}");
    let v = pair(["ls", s(&root), "--state", "waiting", "--json"])
        .code(0)
        .json();
    assert_eq!(names(&v, "boards"), ["b", "c"], "{v:#}");
    let text = pair(["ls", s(&root)]).code(0).all();
    assert!(text.contains("critical path: a <- b <- c"), "{text}");
    assert!(text.contains("waiting for a"), "{text}");
    // next does not offer a waiting board and says which board it waits for.
    let v = pair(["next", "--agent", "doer", s(&root), "--json"])
        .code(0)
        .json();
    assert_eq!(v["step"]["name"], "a", "{v:#}");
    assert_eq!(names(&v, "held"), ["b", "c"], "{v:#}");
    // A waiting next wakes when a is committed: b is released, c still waits for b.
    let waiter = Command::new(pair_bin())
        .args([
            "poll",
            s(&b),
            "--agent",
            "doer",
            "--wait",
            "--timeout",
            "120",
            "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    commit_by_next(&root, s(&a));
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["waits_for"][0]["state"], "released", "{v:#}");
    let (code, v) = poll(s(&c), "doer");
    assert_eq!(code, Some(10), "{v:#}");
    assert_eq!(v["waits_for"][0]["state"], "waiting", "{v:#}");
    let v = pair(["ls", s(&root), "--json"]).code(0).json();
    assert_eq!(names(&v, "critical_path"), ["b", "c"], "{v:#}");
    // b's doer follows next.command to COMMITTED, never refused; then c is released.
    let next_wait = Command::new(pair_bin())
        .args([
            "next",
            "--agent",
            "doer",
            s(&root),
            "--wait",
            "--timeout",
            "120",
            "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = next_wait.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["step"]["name"], "b", "{v:#}");
    commit_by_next(&root, s(&b));
    let (code, v) = poll(s(&c), "doer");
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["waits_for"][0]["state"], "released", "{v:#}");
    let v = pair(["ls", s(&root), "--state", "waiting", "--json"])
        .code(0)
        .json();
    assert!(v["boards"].as_array().unwrap().is_empty(), "{v:#}");
    assert!(v["critical_path"].as_array().unwrap().is_empty(), "{v:#}");
    commit_by_next(&root, s(&c));
}

#[test]
fn a_stopped_dependency_keeps_its_dependant_waiting_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.md"), dir.path().join("b.md"));
    init(&a, &[]);
    init(&b, &["--after", "a.md"]);
    pair([
        "stop",
        s(&a),
        "--agent",
        "doer",
        "--reason",
        "Dropped by the user",
    ])
    .code(0);
    let (code, v) = poll(s(&b), "doer");
    assert_eq!(code, Some(10), "{v:#}");
    assert_eq!(v["waits_for"][0]["phase"], "STOPPED", "{v:#}");
    assert_eq!(v["waits_for"][0]["state"], "held", "{v:#}");
    pair(["advance", s(&b), "--agent", "doer", "PLANNING"])
        .code(6)
        .mentions(&["STOPPED"]);
    let v = pair(["ls", s(dir.path()), "--state", "waiting", "--json"])
        .code(0)
        .json();
    assert_eq!(names(&v, "boards"), ["b"], "{v:#}");
}

/// Replace a board's frontmatter line `from` by `to`, by hand (a recorded repair).
fn repair(board: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(board).unwrap();
    assert!(text.contains(from), "{text}");
    let new = text.replacen(from, to, 1);
    let file = board.with_extension("new");
    std::fs::write(&file, new).unwrap();
    let sha = sha256_hex(text.as_bytes());
    pair([
        "write",
        s(board),
        "--repair",
        "--reason",
        "By hand",
        "--content-file",
        s(&file),
        "--expect-sha256",
        &sha,
    ])
    .code(0);
}

#[test]
fn a_cycle_is_refused_at_init_and_by_ls_naming_the_boards() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a.md"),
        dir.path().join("b.md"),
        dir.path().join("c.md"),
    );
    pair(["init", s(&a), "--after", "nowhere"])
        .code(4)
        .mentions(&["nowhere", "no such board"]);
    assert!(!a.exists());
    init(&a, &[]);
    // a names c, which does not exist yet: c waiting for a would close a cycle.
    repair(
        &a,
        "work_type: feature\n",
        "work_type: feature\nafter: [c]\n",
    );
    pair(["init", s(&c), "--after", "a"])
        .code(4)
        .mentions(&["cycle", "a.md waits for", "c.md"]);
    assert!(!c.exists());
    // A cycle made by hand: ls refuses it, naming the boards.
    init(&b, &["--after", "a"]);
    repair(&a, "after: [c]\n", "after: [b]\n");
    pair(["ls", s(dir.path())])
        .code(5)
        .mentions(&["cycle", "a waits for b waits for a"]);
}

#[test]
fn a_deferral_blocked_pending_a_board_waits_for_it_and_free_text_still_works() {
    let Some(dir) = repo() else { return };
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (a, b, c) = (root.join("a.md"), root.join("b.md"), root.join("c.md"));
    init(&a, &[]);
    // b's plan gate is deferred pending the board a; c's pending free text, which names no board.
    let defer_pending = |board: &Path, pending: &str| {
        init(board, &["--max-rounds", "1"]);
        pair(["advance", s(board), "--agent", "doer", "PLANNING"]).code(0);
        pair([
            "submit",
            s(board),
            "--agent",
            "doer",
            "plan",
            "--note",
            "Plan",
        ])
        .code(0);
        pair([
            "object",
            s(board),
            "--agent",
            "r1",
            "--severity",
            "blocking",
            "--anchor",
            "## Goal",
            "--title",
            "Needs the schema",
            "--evidence",
            "It needs the schema of a",
            "--fix",
            "Wait for a",
        ])
        .code(0);
        pair([
            "verdict",
            s(board),
            "--agent",
            "r1",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--objections",
            "BLK-1",
            "--note",
            "See BLK-1",
        ])
        .code(0);
        assert_eq!(
            pair(["status", s(board), "--json"]).json()["phase"],
            "AWAITING_DECISION"
        );
        let escalation = format!("blocked-pending:{pending}");
        pair([
            "decide",
            s(board),
            "defer",
            "--agent",
            "doer",
            "--user-approved",
            "--reason",
            "Needs a",
            "--escalation",
            &escalation,
        ])
        .code(0);
    };
    defer_pending(&b, "a");
    defer_pending(&c, "schema-v2");
    let (_, v) = poll(s(&b), "doer");
    assert_eq!(v["waits_for"][0]["board"], "a", "{v:#}");
    assert_eq!(v["waits_for"][0]["by"], "deferral:plan", "{v:#}");
    assert!(v["next"]["optional"].is_null(), "{v:#}");
    pair(["unblock", s(&b), "--agent", "doer", "--reason", "Go"])
        .code(6)
        .mentions(&["a (DRAFT)"]);
    let v = pair(["ls", s(&root), "--state", "waiting", "--json"])
        .code(0)
        .json();
    assert_eq!(names(&v, "boards"), ["b"], "{v:#}");
    // Free text names no board: c waits for nothing and is resumed as any blocked board.
    let (_, v) = poll(s(&c), "doer");
    assert!(
        v["waits_for"].is_null() || v["waits_for"] == serde_json::json!([]),
        "{v:#}"
    );
    pair(["unblock", s(&c), "--agent", "doer", "--reason", "Go"]).code(0);
    // a committed releases b, with nobody editing b: the unblock it refused now lands.
    commit_by_next(&root, s(&a));
    let (_, v) = poll(s(&b), "doer");
    assert_eq!(v["waits_for"][0]["state"], "released", "{v:#}");
    pair(["unblock", s(&b), "--agent", "doer", "--reason", "Go"]).code(0);
    let v = pair(["ls", s(&root), "--state", "waiting", "--json"])
        .code(0)
        .json();
    assert!(names(&v, "boards").is_empty(), "{v:#}");
}

#[test]
fn a_git_namespace_board_waits_for_a_ref_beside_it() {
    if !require(&GIT, on_path("git")) {
        return;
    }
    let remote = tempfile::tempdir().unwrap();
    git_in(remote.path(), &["init", "-q", "--bare", "remote.git"]);
    let cache = tempfile::tempdir().unwrap();
    let env = [("PAIR_CACHE_DIR", s(cache.path()))];
    let url = format!("file://{}/remote.git", remote.path().display());
    let board = |r: &str| format!("git+{url}#refs/pair/{r}:task.md");
    pair_env(["init", &board("a"), "--goal", "A"], &env).code(0);
    pair_env(
        ["init", &board("b"), "--goal", "B", "--after", "nope"],
        &env,
    )
    .code(4);
    pair_env(["init", &board("b"), "--goal", "B", "--after", "a"], &env).code(0);
    let out = pair_env(["poll", &board("b"), "--agent", "doer", "--json"], &env);
    let v = out.code(10).json();
    assert_eq!(v["waits_for"][0]["address"], board("a"), "{v:#}");
    assert_eq!(v["waits_for"][0]["state"], "waiting", "{v:#}");
    let project = format!("git+{url}#refs/pair/:task.md");
    let v = pair_env(["ls", &project, "--json"], &env).code(0).json();
    assert_eq!(names(&v, "critical_path"), ["a", "b"], "{v:#}");
    let v = pair_env(["next", "--agent", "doer", &project, "--json"], &env)
        .code(0)
        .json();
    assert_eq!(v["step"]["name"], "a", "{v:#}");
    assert_eq!(names(&v, "held"), ["b"], "{v:#}");
    pair_env(
        [
            "stop",
            &board("a"),
            "--agent",
            "doer",
            "--reason",
            "Dropped",
        ],
        &env,
    )
    .code(0);
    let v = pair_env(["poll", &board("b"), "--agent", "doer", "--json"], &env)
        .code(10)
        .json();
    assert_eq!(v["waits_for"][0]["state"], "held", "{v:#}");
}

/// `validate DIR` refuses a cycle among the boards it finds, as `ls DIR` does, naming them.
#[test]
fn validate_of_a_directory_refuses_a_cycle_as_ls_does() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.md"), dir.path().join("b.md"));
    init(&a, &[]);
    init(&b, &["--after", "a"]);
    pair(["validate", s(dir.path())]).code(0);
    repair(
        &a,
        "work_type: feature\n",
        "work_type: feature\nafter: [b]\n",
    );
    pair(["ls", s(dir.path())])
        .code(5)
        .mentions(&["cycle", "a waits for b waits for a"]);
    let out = pair(["validate", s(dir.path())]);
    out.code(5)
        .mentions(&["cycle", "a waits for b waits for a", "--repair"]);
    let v = pair(["validate", s(dir.path()), "--format", "json"])
        .code(5)
        .json();
    assert_eq!(v["valid"], false, "{v:#}");
    // Each board alone is valid: the cycle is the project's.
    pair(["validate", s(&a)]).code(0);
}
