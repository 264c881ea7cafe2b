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

/// A board in `dir` named `name` whose plan asks `reviews` review(s) of the pool alice, bob,
/// carol, submitted at `at` (every member registered before).
fn pool_submitted(dir: &Path, name: &str, reviews: &str, at: &str) -> String {
    let b = s(&dir.join(format!("{name}.md"))).to_string();
    let now = [("PAIR_NOW", at)];
    pair_env(
        [
            "init",
            &b,
            "--goal",
            "g",
            "--yolo",
            "--reviewer-pool",
            "alice,bob,carol",
            "--reviews",
            reviews,
        ],
        &now,
    )
    .code(0);
    for m in ["alice", "bob", "carol"] {
        pair_env(["register", &b, "--agent", m], &now).code(0);
    }
    pair_env(["advance", &b, "--agent", "doer", "PLANNING"], &now).code(0);
    pair_env(
        [
            "submit", &b, "--agent", "doer", "plan", "--note", "the plan",
        ],
        &now,
    )
    .code(0);
    b
}

fn next_at(dir: &Path, agent: &str, at: &str, more: &[&str]) -> crate::common::Out {
    let mut args = vec!["next", "--agent", agent, s(dir), "--json"];
    args.extend_from_slice(more);
    pair_env(args, &[("PAIR_NOW", at)])
}

/// Two boards wait for the pool's review, submitted a second apart; alice claims the older one
/// (its phase, REVIEWING_PLAN, is entered at the claim). Two seconds later `next` gives her
/// the verdict on the board she holds, not the other board, which now looks older; bob, who
/// holds nothing, is given the other board to claim.
#[test]
fn next_gives_the_review_an_agent_claimed_before_an_older_looking_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let a = pool_submitted(dir.path(), "a", "1", "2026-01-01T00:00:00Z");
    pool_submitted(dir.path(), "b", "1", "2026-01-01T00:00:01Z");
    pair_env(
        ["claim", &a, "--agent", "alice"],
        &[("PAIR_NOW", "2026-01-01T00:00:02Z")],
    )
    .code(0);
    let v = next_at(dir.path(), "alice", "2026-01-01T00:00:04Z", &[])
        .code(0)
        .json();
    assert_eq!(v["step"]["name"], "a", "{v:#}");
    assert_eq!(v["step"]["phase"], "REVIEWING_PLAN", "{v:#}");
    assert_eq!(v["step"]["rank"], "claimed", "{v:#}");
    assert_eq!(v["next"]["command"][1], "verdict", "{v:#}");
    assert_eq!(v["next"]["command"][2], a, "{v:#}");
    // The claim on b is held back while a is unfinished.
    assert_eq!(v["waiting"], 1, "{v:#}");
    assert_eq!(v["deferred"], 1, "{v:#}");
    let v = next_at(dir.path(), "bob", "2026-01-01T00:00:04Z", &[])
        .code(0)
        .json();
    assert_eq!(v["step"]["name"], "b", "{v:#}");
    assert_eq!(v["step"]["rank"], "new", "{v:#}");
    assert_eq!(v["next"]["command"][1], "claim", "{v:#}");
}

/// Among new work the review submitted first comes first, by the submission's time the pin
/// records, not by the board's last phase change: b was submitted before a, and another member's
/// claim later moved b into REVIEWING_PLAN.
#[test]
fn next_orders_new_reviews_by_when_they_were_submitted_not_by_the_last_write() {
    let dir = tempfile::tempdir().unwrap();
    let b = pool_submitted(dir.path(), "b", "2", "2026-01-01T00:00:00Z");
    pool_submitted(dir.path(), "a", "2", "2026-01-01T00:00:05Z");
    pair_env(
        ["claim", &b, "--agent", "bob"],
        &[("PAIR_NOW", "2026-01-01T00:00:10Z")],
    )
    .code(0);
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(
        text.contains("submitted_at: \"2026-01-01T00:00:00Z\""),
        "{text}"
    );
    let v = next_at(dir.path(), "alice", "2026-01-01T00:00:20Z", &[])
        .code(0)
        .json();
    assert_eq!(v["step"]["name"], "b", "{v:#}");
    assert_eq!(v["step"]["rank"], "new", "{v:#}");
    assert_eq!(v["step"]["phase"], "REVIEWING_PLAN", "{v:#}");
    assert_eq!(v["step"]["since"], "2026-01-01T00:00:10Z", "{v:#}");
    assert_eq!(v["step"]["available_at"], "2026-01-01T00:00:00Z", "{v:#}");
    assert_eq!(v["steps"][1]["name"], "a", "{v:#}");
    pair(["validate", &b]).code(0);
}

/// An agent holding an unfinished pool review is offered no new claim; `--max-held 2` lets it
/// take a second one (listed after the review it holds); `--max-held 0` is a usage error.
#[test]
fn next_offers_no_second_claim_while_one_is_held_unless_max_held_allows_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = pool_submitted(dir.path(), "a", "1", "2026-01-01T00:00:00Z");
    let b = pool_submitted(dir.path(), "b", "1", "2026-01-01T00:00:01Z");
    pair(["claim", &a, "--agent", "alice"]).code(0);
    let v = next_at(dir.path(), "alice", "2026-01-01T00:00:30Z", &[])
        .code(0)
        .json();
    let names: Vec<&str> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a"], "{v:#}");
    let v = next_at(
        dir.path(),
        "alice",
        "2026-01-01T00:00:30Z",
        &["--max-held", "2"],
    )
    .code(0)
    .json();
    assert_eq!(v["step"]["name"], "a", "{v:#}");
    assert_eq!(v["deferred"], 0, "{v:#}");
    assert_eq!(v["steps"][1]["name"], "b", "{v:#}");
    assert_eq!(v["steps"][1]["claims"], true, "{v:#}");
    assert_eq!(v["steps"][1]["next"]["command"][1], "claim", "{v:#}");
    assert_eq!(v["steps"][1]["next"]["command"][2], b, "{v:#}");
    // Once the held review is given, the next claim is offered again.
    pair([
        "verdict",
        &a,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "fine",
    ])
    .code(0);
    let v = next_at(dir.path(), "alice", "2026-01-01T00:00:40Z", &[])
        .code(0)
        .json();
    assert_eq!(v["step"]["name"], "b", "{v:#}");
    assert_eq!(v["next"]["command"][1], "claim", "{v:#}");
    next_at(
        dir.path(),
        "alice",
        "2026-01-01T00:00:40Z",
        &["--max-held", "0"],
    )
    .code(4);
}

/// A pool member not on a board yet is sent to register there only when the board has a review
/// for it to take: a board still being planned offers it nothing (registering there came first,
/// by age, before a review submitted later elsewhere), and a board whose plan waits for the
/// pool offers the registration that leads to the claim.
#[test]
fn next_sends_a_pool_member_to_register_only_where_a_review_waits() {
    let dir = tempfile::tempdir().unwrap();
    let early = s(&dir.path().join("early.md")).to_string();
    let t0 = [("PAIR_NOW", "2026-01-01T00:00:00Z")];
    pair_env(
        [
            "init",
            &early,
            "--goal",
            "g",
            "--yolo",
            "--reviewer-pool",
            "alice,bob",
            "--reviews",
            "1",
        ],
        &t0,
    )
    .code(0);
    pair_env(["advance", &early, "--agent", "doer", "PLANNING"], &t0).code(0);
    let v = next_at(dir.path(), "alice", "2026-01-01T00:00:01Z", &[])
        .code(10)
        .json();
    assert_eq!(v["steps"], serde_json::json!([]), "{v:#}");
    let late = s(&dir.path().join("late.md")).to_string();
    let t5 = [("PAIR_NOW", "2026-01-01T00:00:05Z")];
    pair_env(
        [
            "init",
            &late,
            "--goal",
            "g",
            "--yolo",
            "--reviewer-pool",
            "alice,bob",
            "--reviews",
            "1",
        ],
        &t5,
    )
    .code(0);
    pair_env(["advance", &late, "--agent", "doer", "PLANNING"], &t5).code(0);
    pair_env(
        [
            "submit", &late, "--agent", "doer", "plan", "--note", "the plan",
        ],
        &t5,
    )
    .code(0);
    let v = next_at(dir.path(), "alice", "2026-01-01T00:00:06Z", &[])
        .code(0)
        .json();
    assert_eq!(v["step"]["name"], "late", "{v:#}");
    assert_eq!(v["next"]["command"][1], "register", "{v:#}");
    assert_eq!(v["waiting"], 1, "{v:#}");
    pair(["register", &late, "--agent", "alice"]).code(0);
    let v = next_at(dir.path(), "alice", "2026-01-01T00:00:07Z", &[])
        .code(0)
        .json();
    assert_eq!(v["next"]["command"][1], "claim", "{v:#}");
}

/// Free pool members are spread over the reviews that wait instead of all being given the
/// oldest: matched with them oldest first, the member who gave the fewest reviews in the project
/// first (then by id), round the list when members outnumber the reviews.
#[test]
fn next_spreads_free_pool_members_over_the_waiting_reviews_fewest_reviews_first() {
    let dir = tempfile::tempdir().unwrap();
    let a = pool_submitted(dir.path(), "a", "1", "2026-01-01T00:00:00Z");
    pool_submitted(dir.path(), "b", "1", "2026-01-01T00:00:01Z");
    let first = |who: &str| {
        let v = next_at(dir.path(), who, "2026-01-01T00:00:10Z", &[])
            .code(0)
            .json();
        assert_eq!(v["next"]["command"][1], "claim", "{v:#}");
        assert_eq!(v["waiting"], 2, "{v:#}");
        v["step"]["name"].as_str().unwrap().to_string()
    };
    assert_eq!(
        [first("alice"), first("bob"), first("carol")],
        ["a", "b", "a"]
    );
    // Alice reviews a third board: having given one review, she comes after bob and carol.
    let c = pool_submitted(dir.path(), "c", "1", "2026-01-01T00:00:02Z");
    pair(["claim", &c, "--agent", "alice"]).code(0);
    pair([
        "verdict",
        &c,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "fine",
    ])
    .code(0);
    assert_eq!(
        [first("bob"), first("carol"), first("alice")],
        ["a", "b", "a"]
    );
    // A member holding an unfinished claim is not free: with bob on a, b and d wait, and carol
    // (no review given) is matched with b, alice (one) with d.
    pool_submitted(dir.path(), "d", "1", "2026-01-01T00:00:03Z");
    pair(["claim", &a, "--agent", "bob"]).code(0);
    assert_eq!([first("carol"), first("alice")], ["b", "d"]);
}
