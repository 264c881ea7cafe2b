//! A pool of reviewers (`init --reviewer-pool A,B,C --reviews N`): a member takes one of a
//! round's N reviews with `claim`, exclusively; racing claimers never take the same review, on a
//! file board and on a git board served over loopback.

use crate::common::daemon::{Daemon, daemon_installed};
use crate::common::prereq::{GIT_DAEMON, require};
use crate::common::{Out, git, pair, pair_bin};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn json(out: &Out) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", out.report()))
}

/// A board in `dir` with a pool of `members` giving `reviews` reviews per round, every member
/// registered and the plan submitted.
fn submitted(dir: &Path, members: &[String], reviews: u32) -> String {
    let b = dir.join("task.md").to_str().unwrap().to_string();
    let pool = members.join(",");
    let n = reviews.to_string();
    pair([
        "init",
        &b,
        "--goal",
        "g",
        "--yolo",
        "--reviewer-pool",
        &pool,
        "--reviews",
        &n,
    ])
    .code(0);
    for m in members {
        pair(["register", &b, "--agent", m]).code(0);
    }
    pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
    pair([
        "submit", &b, "--agent", "doer", "plan", "--note", "the plan",
    ])
    .code(0);
    b
}

fn members(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("r{i}")).collect()
}

#[test]
fn a_pool_member_claims_the_review_and_a_second_claimer_is_told_who_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = ["alice", "bob", "carol"].map(String::from).to_vec();
    let b = submitted(dir.path(), &ids, 1);
    // Every free member is offered the claim; nobody is required by name.
    for m in &ids {
        let v = json(&pair(["poll", &b, "--agent", m, "--json"]));
        assert_eq!(v["next"]["command"][1], "claim", "{v:#}");
        assert_eq!(v["review"]["unclaimed"], 1, "{v:#}");
    }
    pair(["claim", &b, "--agent", "bob"]).code(0);
    let before = std::fs::read(&b).unwrap();
    pair(["claim", &b, "--agent", "carol"]).code(3).mentions(&[
        "already taken by bob",
        "poll",
        "--wait",
    ]);
    assert_eq!(
        std::fs::read(&b).unwrap(),
        before,
        "a refused claim leaves the board"
    );
    // Only the taker votes; the others wait.
    pair([
        "verdict",
        &b,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "ok",
    ])
    .code(6);
    let v = json(&pair(["poll", &b, "--agent", "alice", "--json"]));
    assert_eq!(v["your_turn"], false, "{v:#}");
    let v = json(&pair(["poll", &b, "--agent", "bob", "--json"]));
    assert_eq!(v["next"]["command"][1], "verdict", "{v:#}");
    pair([
        "verdict",
        &b,
        "--agent",
        "bob",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "ok",
    ])
    .code(0)
    .mentions(&["PLAN_APPROVED"]);
    // carol, offered the claim before bob's review ended the round, runs it only now: the board
    // moved on since she read it (exit 3, re-read), and it is left as it was.
    let before = std::fs::read(&b).unwrap();
    pair(["claim", &b, "--agent", "carol"]).code(3).mentions(&[
        "no review to claim",
        "PLAN_APPROVED",
        "poll --agent carol --wait",
    ]);
    assert_eq!(std::fs::read(&b).unwrap(), before);
    pair(["validate", &b]).code(0);
}

#[test]
fn init_refuses_more_reviews_than_members_and_a_member_also_named() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("t.md");
    let b = b.to_str().unwrap();
    pair(["init", b, "--reviewer-pool", "a,b", "--reviews", "3"])
        .code(4)
        .mentions(&["--reviews", "from 1 to 2"]);
    pair(["init", b, "--reviewer-pool", "a,b", "--reviewers", "a"])
        .code(4)
        .mentions(&["--reviewer-pool", "\"a\""]);
    pair(["init", b, "--reviews", "1"]).code(4);
    assert!(!Path::new(b).exists());
}

#[test]
fn a_raw_write_cannot_take_a_review_the_pool_has_given_out() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = ["alice", "bob"].map(String::from).to_vec();
    let b = submitted(dir.path(), &ids, 1);
    pair(["claim", &b, "--agent", "alice"]).code(0);
    let text = std::fs::read_to_string(&b).unwrap();
    let sha = crate::common::sha256_hex(text.as_bytes());
    // bob writes his own claim of the same round by hand.
    let forged = text.replacen(
        "  bob:\n    role: reviewer\n    status: IDLE\n",
        "  bob:\n    role: reviewer\n    status: REVIEWING\n    pool_claim: plan 1\n",
        1,
    );
    assert_ne!(forged, text, "the test edits bob's entry");
    let f = dir.path().join("new.md");
    std::fs::write(&f, &forged).unwrap();
    pair([
        "write",
        &b,
        "--content-file",
        f.to_str().unwrap(),
        "--expect-sha256",
        &sha,
        "--operation",
        "claim",
        "--as",
        "bob",
    ])
    .code(6)
    .mentions(&["already taken by alice"]);
    assert_eq!(std::fs::read_to_string(&b).unwrap(), text);
}

/// Spawn one `pair claim` per member at once; returns (member, exit code, stderr).
fn race(cmd: impl Fn(&str) -> Command, ids: &[String]) -> Vec<(String, i32, String)> {
    let children: Vec<_> = ids
        .iter()
        .map(|m| {
            let c = cmd(m)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (m.clone(), c)
        })
        .collect();
    children
        .into_iter()
        .map(|(m, c)| {
            let out = c.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(!err.contains("panicked"), "{err}");
            (m, out.status.code().unwrap_or(-1), err)
        })
        .collect()
}

fn takers(board_text: &str) -> usize {
    board_text.matches("pool_claim: plan 1").count()
}

#[test]
fn many_members_racing_claim_never_take_the_same_review() {
    let dir = tempfile::tempdir().unwrap();
    let ids = members(12);
    let b = submitted(dir.path(), &ids, 3);
    let results = race(
        |m| {
            let mut c = Command::new(pair_bin());
            c.args(["claim", &b, "--agent", m, "--timeout", "60"])
                .env_remove("PAIR_AGENT");
            c
        },
        &ids,
    );
    let won: Vec<_> = results.iter().filter(|r| r.1 == 0).collect();
    let lost: Vec<_> = results.iter().filter(|r| r.1 != 0).collect();
    assert_eq!(won.len(), 3, "{results:#?}");
    for (m, code, err) in &lost {
        assert_eq!(*code, 3, "{m}: {err}");
        assert!(err.contains("already taken by"), "{m}: {err}");
    }
    let text = std::fs::read_to_string(&b).unwrap();
    assert_eq!(takers(&text), 3, "{text}");
    for (m, _, _) in &won {
        assert!(text.contains(&format!(
            "  {m}:\n    role: reviewer\n    status: REVIEWING"
        )));
    }
    let v = json(&pair(["poll", &b, "--agent", "doer", "--json"]));
    assert_eq!(v["review"]["unclaimed"], 0, "{v:#}");
    let mut pending: Vec<String> = v["review"]["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    pending.sort();
    let mut winners: Vec<String> = won.iter().map(|r| r.0.clone()).collect();
    winners.sort();
    assert_eq!(pending, winners);
    pair(["validate", &b]).code(0);
}

#[test]
fn through_git_daemon_racing_clones_take_one_review_once() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "remote.git"]);
    let daemon = Daemon::start(remote.path(), None);
    let b = daemon.board("refs/pair/task");
    let ids = members(6);
    let home = tempfile::tempdir().unwrap();
    let run = |who: &str, args: &[&str]| -> Command {
        let cache = home.path().join(format!("cache-{who}"));
        let mut c = Command::new(pair_bin());
        c.args(args)
            .current_dir(home.path())
            .env("PAIR_CACHE_DIR", cache)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("PAIR_AGENT")
            .stdin(Stdio::null());
        c
    };
    let ok = |who: &str, args: &[&str]| {
        let out = run(who, args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let pool = ids.join(",");
    ok(
        "doer",
        &[
            "init",
            &b,
            "--goal",
            "g",
            "--yolo",
            "--reviewer-pool",
            &pool,
        ],
    );
    for m in &ids {
        ok(m, &["register", &b, "--agent", m]);
    }
    ok("doer", &["advance", &b, "--agent", "doer", "PLANNING"]);
    ok(
        "doer",
        &["submit", &b, "--agent", "doer", "plan", "--note", "p"],
    );
    let results = race(
        |m| run(m, &["claim", &b, "--agent", m, "--timeout", "60"]),
        &ids,
    );
    let won: Vec<_> = results.iter().filter(|r| r.1 == 0).collect();
    assert_eq!(won.len(), 1, "{results:#?}");
    for (m, code, err) in results.iter().filter(|r| r.1 != 0) {
        assert_eq!(*code, 3, "{m}: {err}");
        assert!(
            err.contains(&format!("already taken by {}", won[0].0)),
            "{m}: {err}"
        );
    }
    let out = Command::new("git")
        .args([
            "--git-dir",
            remote.path().join("remote.git").to_str().unwrap(),
        ])
        .args(["cat-file", "blob", "refs/pair/task:task.md"])
        .output()
        .unwrap();
    assert_eq!(takers(&String::from_utf8_lossy(&out.stdout)), 1);
    // A member who lost is told it is not its turn; the winner is told to give its verdict.
    let loser = results.iter().find(|r| r.1 != 0).unwrap().0.clone();
    let out = run(&loser, &["poll", &b, "--agent", &loser, "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10));
    let winner = won[0].0.clone();
    let v: Value =
        serde_json::from_str(&ok(&winner, &["poll", &b, "--agent", &winner, "--json"])).unwrap();
    assert_eq!(v["next"]["command"][1], "verdict", "{v:#}");
}

/// A person reading a pool board is shown the pool, the reviews a round asks of it and who took
/// this round (not "required: none"), and so is a reviewer's brief.
#[test]
fn poll_status_and_brief_show_the_pool_and_who_took_the_round() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = ["alice", "bob", "carol"].map(String::from).to_vec();
    let b = submitted(dir.path(), &ids, 1);
    pair(["poll", &b, "--agent", "doer"])
        .mentions(&["pool alice, bob, carol: 1 review a round, none taken yet"]);
    pair(["claim", &b, "--agent", "bob"]).code(0);
    let out = pair(["poll", &b, "--agent", "alice"]);
    out.mentions(&["required: bob (pool alice, bob, carol: 1 review a round, taken by bob)"]);
    assert!(!out.stdout.contains("required: none"), "{}", out.report());
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(
        v["pool"],
        serde_json::json!({"members": ["alice", "bob", "carol"], "reviews": 1, "taken_by": ["bob"]}),
        "{v:#}"
    );
    let table = pair(["status", &b]);
    let line = |id: &str| {
        table
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no row for {id}\n{}", table.report()))
            .to_string()
    };
    assert!(line("bob").contains(" yes "), "{}", table.report());
    assert!(line("alice").contains(" pool "), "{}", table.report());
    pair(["brief", &b, "--for", "reviewer"])
        .code(0)
        .mentions(&["required in this round: bob (pool alice, bob, carol"]);
}

/// On a pool board of one review, the member who took the round is its only required reviewer:
/// when the round cap is reached it is the arbiter, as its poll says, and its decision (run as
/// given) is accepted without the user's word.
#[test]
fn the_member_who_took_the_capped_round_decides_as_its_arbiter() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("task.md").to_str().unwrap().to_string();
    pair([
        "init",
        &b,
        "--goal",
        "g",
        "--yolo",
        "--reviewer-pool",
        "alice,bob,carol",
        "--max-rounds",
        "1",
    ])
    .code(0);
    for m in ["alice", "bob", "carol"] {
        pair(["register", &b, "--agent", m]).code(0);
    }
    pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
    pair(["submit", &b, "--agent", "doer", "plan", "--note", "p1"]).code(0);
    pair(["claim", &b, "--agent", "bob"]).code(0);
    pair([
        "object",
        &b,
        "--agent",
        "bob",
        "--severity",
        "blocking",
        "--anchor",
        "## Goal",
        "--title",
        "No cap",
        "--evidence",
        "loops",
        "--fix",
        "cap it",
    ])
    .code(0);
    pair([
        "verdict",
        &b,
        "--agent",
        "bob",
        "CHANGES_REQUESTED",
        "--revision",
        "1",
        "--objections",
        "BLK-1",
        "--note",
        "no",
    ])
    .code(0);
    let v = json(&pair(["poll", &b, "--agent", "bob", "--json"]));
    assert_eq!(v["phase"], "AWAITING_DECISION", "{v:#}");
    assert_eq!(v["your_turn"], true, "{v:#}");
    let argv: Vec<String> = v["next"]["command"]
        .as_array()
        .unwrap_or_else(|| panic!("{v:#}"))
        .iter()
        .skip(1)
        .map(|w| match w.as_str().unwrap() {
            "DECISION" => "accept".to_string(),
            "REASON" => "the cap is a follow-up".to_string(),
            w => w.to_string(),
        })
        .collect();
    assert!(!argv.iter().any(|w| w == "--user-approved"), "{argv:?}");
    pair(&argv).code(0);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(v["phase"], "PLAN_APPROVED", "{v:#}");
    pair(["validate", &b]).code(0);
}

/// Another member's claim removed by a raw write is refused naming the field it changed.
#[test]
fn a_raw_write_removing_another_members_claim_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = ["alice", "bob"].map(String::from).to_vec();
    let b = submitted(dir.path(), &ids, 1);
    pair(["claim", &b, "--agent", "alice"]).code(0);
    let text = std::fs::read_to_string(&b).unwrap();
    let sha = crate::common::sha256_hex(text.as_bytes());
    let forged = text.replacen("    pool_claim: plan 1\n", "", 1);
    assert_ne!(forged, text, "the test removes alice's claim");
    let f = dir.path().join("new.md");
    std::fs::write(&f, &forged).unwrap();
    let out = pair([
        "write",
        &b,
        "--content-file",
        f.to_str().unwrap(),
        "--expect-sha256",
        &sha,
        "--as",
        "bob",
    ]);
    out.code(6)
        .mentions(&["field `agents.alice.pool_claim` belongs to alice"]);
    assert!(!out.all().contains("unknown field"), "{}", out.report());
    assert_eq!(std::fs::read_to_string(&b).unwrap(), text);
}

#[test]
fn a_pool_members_register_arriving_after_the_board_stopped_is_told_to_re_read() {
    // A member is offered `register` while a submission waits; by the time it runs it, the
    // board may have gone on to a phase that takes no reviewer. That is a board that moved on
    // since it was read (exit 3), not a refusal of what the member was told.
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("task.md").to_str().unwrap().to_string();
    pair([
        "init",
        &b,
        "--goal",
        "g",
        "--reviewer-pool",
        "alice,bob",
        "--reviews",
        "1",
    ])
    .code(0);
    pair(["stop", &b, "--agent", "doer", "--reason", "the user asked"]).code(0);
    let before = std::fs::read(&b).unwrap();
    pair(["register", &b, "--agent", "bob"]).code(3).mentions(&[
        "nothing to review",
        "STOPPED",
        "poll --agent bob --wait",
    ]);
    // Someone outside the pool was never offered it: refused as before (terminal phase).
    pair(["register", &b, "--agent", "mallory"]).code(6);
    assert_eq!(
        std::fs::read(&b).unwrap(),
        before,
        "the board is left as it was"
    );
}
