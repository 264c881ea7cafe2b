//! Rotation with an explicit handoff (`pair handoff`, `pair acknowledge`): the doer's role and a
//! required reviewer's place change hands only when the incoming agent acknowledges, each agent a
//! process of its own, on a file board and on a git board from two clones.

use crate::common::daemon::{Daemon, daemon_installed};
use crate::common::prereq::{GIT_DAEMON, require};
use crate::common::{Out, git, pair, pair_bin};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn json(out: &Out) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", out.report()))
}

/// A board with reviewer alice and plan 1 submitted.
fn submitted(dir: &Path) -> String {
    let b = dir.join("task.md").to_str().unwrap().to_string();
    pair(["init", &b, "--goal", "g", "--yolo"]).code(0);
    pair(["register", &b, "--agent", "alice"]).code(0);
    pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
    pair(["submit", &b, "--agent", "doer", "plan", "--note", "p1"]).code(0);
    b
}

/// A board with reviewer alice, plan 1 submitted and sent back with changes requested.
fn sent_back(dir: &Path) -> String {
    let b = submitted(dir);
    pair([
        "verdict",
        &b,
        "--agent",
        "alice",
        "CHANGES_REQUESTED",
        "--revision",
        "1",
        "--note",
        "step 2 is missing",
    ])
    .code(0);
    b
}

#[test]
fn a_doer_rotation_mid_stream_is_acknowledged_before_the_new_doer_resubmits() {
    let dir = tempfile::tempdir().unwrap();
    let b = sent_back(dir.path());
    // Changes requested and not answered: mid-cycle, refused without the user's word.
    let before = std::fs::read(&b).unwrap();
    pair(["handoff", &b, "--agent", "doer", "--to", "carol"])
        .code(6)
        .mentions(&["middle of a review cycle", "--user-approved"]);
    assert_eq!(
        std::fs::read(&b).unwrap(),
        before,
        "a refusal leaves the board"
    );
    pair([
        "handoff",
        &b,
        "--agent",
        "doer",
        "--to",
        "carol",
        "--summary",
        "Add step 2 as alice asked",
        "--user-approved",
    ])
    .code(0);
    // The incoming agent is told to acknowledge, and is refused anything else until it does.
    let v = json(&pair(["poll", &b, "--agent", "carol", "--json"]));
    assert_eq!(
        v["next"]["command"],
        serde_json::json!(["pair", "acknowledge", b, "--agent", "carol"]),
        "{v:#}"
    );
    pair(["submit", &b, "--agent", "carol", "plan", "--note", "p2"])
        .code(6)
        .mentions(&["not acknowledged", "pair acknowledge"]);
    let brief = pair(["brief", &b, "--for", "doer", "--agent", "carol"]);
    brief.code(0).mentions(&[
        "add step 2 as alice asked",
        "alice: changes_requested on plan revision 1",
        "plan_changes_requested",
    ]);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(
        v["handoff"],
        serde_json::json!({"role": "doer", "from": "doer", "to": "carol"}),
        "{v:#}"
    );
    pair(["status", &b])
        .code(0)
        .mentions(&["doer hands the doer role over to carol"]);
    // The outgoing doer still holds the role until then, but its steps wait for the
    // acknowledgement: it is told to wait, or to take the offer back.
    let v = json(&pair(["poll", &b, "--agent", "doer", "--json"]));
    assert_eq!(v["your_turn"], false, "{v:#}");
    assert_eq!(v["next"]["command"][1], "poll", "{v:#}");
    assert_eq!(
        v["next"]["handoff_to"],
        serde_json::json!(["carol"]),
        "{v:#}"
    );
    let said = v["next"]["action"].as_str().unwrap();
    assert!(
        said.contains("you offered the doer role to carol")
            && said.contains(&format!("pair handoff {b} --agent doer --withdraw")),
        "{said}"
    );
    pair(["acknowledge", &b, "--agent", "carol"]).code(0);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(v["phase"], "PLAN_CHANGES_REQUESTED", "{v:#}");
    pair(["submit", &b, "--agent", "carol", "plan", "--note", "p2"]).code(0);
    pair(["submit", &b, "--agent", "doer", "plan", "--note", "p3"])
        .code(6)
        .mentions(&["handed the doer role over to carol", "carol"]);
    pair([
        "verdict",
        &b,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "2",
        "--note",
        "ok",
    ])
    .code(0);
    let v = json(&pair(["poll", &b, "--agent", "carol", "--json"]));
    assert_eq!(v["phase"], "PLAN_APPROVED", "{v:#}");
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains("\"doer doer carol acknowledged\""), "{text}");
    assert!(
        text.contains("### Handoff — doer role to carol — doer — "),
        "{text}"
    );
    assert!(text.contains("### Handoff acknowledged — doer role from doer — carol — "));
    assert!(text.contains("by=doer cmd=handoff"), "{text}");
    assert!(text.contains("by=carol cmd=acknowledge"), "{text}");
    pair(["validate", &b]).code(0);
}

#[test]
fn a_reviewer_place_changes_hands_and_the_old_reviewer_votes_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let b = sent_back(dir.path());
    // The outcome of alice's round stands on her verdict: her place waits for the next step.
    pair(["handoff", &b, "--agent", "alice", "--to", "dave"])
        .code(6)
        .mentions(&["records a round's outcome"]);
    pair(["submit", &b, "--agent", "doer", "plan", "--note", "p2"]).code(0);
    // A round is open: mid-cycle, refused without the user's word.
    pair(["handoff", &b, "--agent", "alice", "--to", "dave"])
        .code(6)
        .mentions(&["middle of a review cycle", "--user-approved"]);
    let offer = [
        "handoff",
        &b,
        "--agent",
        "alice",
        "--to",
        "dave",
        "--summary",
        "step 2 was my point",
        "--user-approved",
    ];
    pair(offer).code(0);
    pair(["register", &b, "--agent", "dave"])
        .code(6)
        .mentions(&["acknowledge"]);
    // Only the incoming agent acknowledges; only the outgoing one withdraws.
    pair(["acknowledge", &b, "--agent", "erin"]).code(6);
    pair(["handoff", &b, "--agent", "dave", "--withdraw"]).code(6);
    pair(["handoff", &b, "--agent", "alice", "--withdraw"]).code(0);
    pair(["acknowledge", &b, "--agent", "dave"]).code(6);
    pair(offer).code(0);
    pair(["acknowledge", &b, "--agent", "dave"]).code(0);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(
        v["required_reviewers"],
        serde_json::json!(["dave"]),
        "{v:#}"
    );
    // The open round waits for dave's verdict; alice's is refused.
    pair([
        "verdict",
        &b,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "2",
        "--note",
        "ok",
    ])
    .code(6)
    .mentions(&["handed the reviewer role over to dave"]);
    pair([
        "verdict",
        &b,
        "--agent",
        "dave",
        "APPROVED",
        "--revision",
        "2",
        "--note",
        "ok",
    ])
    .code(0);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(v["phase"], "PLAN_APPROVED", "{v:#}");
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(
        text.contains("\"reviewer alice dave acknowledged\""),
        "{text}"
    );
    pair(["validate", &b]).code(0);
    // A note is still alice's to write, in another second than her last write (the note
    // touches her own last_seen, which is no role).
    crate::common::pair_env(
        [
            "note",
            &b,
            "--agent",
            "alice",
            "--section",
            "Decisions",
            "--note",
            "bye",
        ],
        &[("PAIR_NOW", "2099-01-01T00:00:00Z")],
    )
    .code(0);
    pair(["block", &b, "--agent", "alice", "--reason", "x"])
        .code(6)
        .mentions(&["handed the reviewer role over to dave"]);
}

#[test]
fn a_raw_write_cannot_move_a_role_without_the_acknowledgement() {
    let dir = tempfile::tempdir().unwrap();
    let b = sent_back(dir.path());
    pair(["submit", &b, "--agent", "doer", "plan", "--note", "p2"]).code(0);
    pair([
        "verdict",
        &b,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "2",
        "--note",
        "ok",
    ])
    .code(0);
    pair(["handoff", &b, "--agent", "doer", "--to", "carol"]).code(0);
    let text = std::fs::read_to_string(&b).unwrap();
    // carol marks the handoff acknowledged but leaves the doer in the role.
    let forged = text.replace(
        "\"doer doer carol pending\"",
        "\"doer doer carol acknowledged\"",
    );
    let path = dir.path().join("forged.md");
    std::fs::write(&path, &forged).unwrap();
    pair([
        "write",
        &b,
        "--as",
        "carol",
        "--content-file",
        path.to_str().unwrap(),
    ])
    .code_in(&[4, 6]);
    assert_eq!(std::fs::read_to_string(&b).unwrap(), text);
    // The doer cannot acknowledge its own handoff by hand either.
    pair([
        "write",
        &b,
        "--as",
        "doer",
        "--content-file",
        path.to_str().unwrap(),
    ])
    .code_in(&[4, 6]);
    assert_eq!(std::fs::read_to_string(&b).unwrap(), text);
}

#[test]
fn through_git_daemon_a_handoff_from_one_clone_is_acknowledged_from_another() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "remote.git"]);
    let daemon = Daemon::start(remote.path(), None);
    let b = daemon.board("refs/pair/task");
    let home = tempfile::tempdir().unwrap();
    let run = |who: &str, args: &[&str]| -> std::process::Output {
        let cache = home.path().join(format!("cache-{who}"));
        Command::new(pair_bin())
            .args(args)
            .current_dir(home.path())
            .env("PAIR_CACHE_DIR", cache)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("PAIR_AGENT")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let ok = |who: &str, args: &[&str]| {
        let out = run(who, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok("doer", &["init", &b, "--goal", "g", "--yolo"]);
    ok("alice", &["register", &b, "--agent", "alice"]);
    ok("doer", &["advance", &b, "--agent", "doer", "PLANNING"]);
    ok(
        "doer",
        &[
            "handoff",
            &b,
            "--agent",
            "doer",
            "--to",
            "carol",
            "--summary",
            "plan it",
        ],
    );
    let refused = run(
        "carol",
        &["submit", &b, "--agent", "carol", "plan", "--note", "p"],
    );
    assert_eq!(refused.status.code(), Some(6));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("acknowledge"));
    ok("carol", &["acknowledge", &b, "--agent", "carol"]);
    ok(
        "carol",
        &["submit", &b, "--agent", "carol", "plan", "--note", "p"],
    );
    let late = run(
        "doer",
        &["block", &b, "--agent", "doer", "--reason", "late"],
    );
    assert_eq!(late.status.code(), Some(6));
    let said = String::from_utf8_lossy(&late.stderr);
    assert!(
        said.contains("handed the doer role over to carol"),
        "{said}"
    );
    ok("alice", &["validate", &b]);
}

#[test]
fn the_successor_judges_the_objections_its_predecessor_raised_as_its_poll_says() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("task.md").to_str().unwrap().to_string();
    pair(["init", &b, "--goal", "g", "--yolo", "--max-rounds", "3"]).code(0);
    pair(["register", &b, "--agent", "alice"]).code(0);
    pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
    pair(["submit", &b, "--agent", "doer", "plan", "--note", "p1"]).code(0);
    pair([
        "object",
        &b,
        "--agent",
        "alice",
        "--severity",
        "blocking",
        "--anchor",
        "## Goal",
        "--title",
        "Step 2 is missing",
        "--evidence",
        "the plan stops at step 1",
        "--fix",
        "add step 2",
    ])
    .code(0);
    pair([
        "verdict",
        &b,
        "--agent",
        "alice",
        "CHANGES_REQUESTED",
        "--revision",
        "1",
        "--objections",
        "BLK-1",
        "--note",
        "see BLK-1",
    ])
    .code(0);
    pair([
        "resolve",
        &b,
        "BLK-1",
        "--agent",
        "doer",
        "--resolution",
        "step 2 added",
    ])
    .code(0);
    pair(["submit", &b, "--agent", "doer", "plan", "--note", "p2"]).code(0);
    pair([
        "handoff",
        &b,
        "--agent",
        "alice",
        "--to",
        "dave",
        "--user-approved",
    ])
    .code(0);
    pair(["acknowledge", &b, "--agent", "dave"]).code(0);
    // alice's resolved objection is dave's to judge: his poll offers it, and it runs as given.
    let v = json(&pair(["poll", &b, "--agent", "dave", "--json"]));
    let argv: Vec<String> = v["next"]["command"]
        .as_array()
        .unwrap_or_else(|| panic!("no next.command: {v:#}"))
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert_eq!(argv[1], "accept", "{v:#}");
    assert!(argv.contains(&"BLK-1".to_string()), "{v:#}");
    pair(&argv[1..]).code(0);
    pair([
        "verdict",
        &b,
        "--agent",
        "dave",
        "APPROVED",
        "--revision",
        "2",
        "--note",
        "step 2 is there",
    ])
    .code(0);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(v["phase"], "PLAN_APPROVED", "{v:#}");
    pair(["validate", &b]).code(0);
}

/// A board blocked on a person is where a doer is replaced: the handoff is offered and
/// acknowledged while BLOCKED, and the new doer resumes the work. Whether it is mid-cycle is
/// judged on the phase `unblock` returns to.
#[test]
fn a_blocked_board_changes_doers_and_the_new_doer_unblocks_it() {
    let dir = tempfile::tempdir().unwrap();
    let b = sent_back(dir.path());
    pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
    pair([
        "block",
        &b,
        "--agent",
        "doer",
        "--reason",
        "waiting for the user",
    ])
    .code(0);
    pair([
        "handoff",
        &b,
        "--agent",
        "doer",
        "--to",
        "carol",
        "--summary",
        "The user is away; carol resumes when they answer",
    ])
    .code(0);
    let v = json(&pair(["poll", &b, "--agent", "carol", "--json"]));
    assert_eq!(
        v["next"]["command"],
        serde_json::json!(["pair", "acknowledge", b, "--agent", "carol"]),
        "{v:#}"
    );
    pair(["acknowledge", &b, "--agent", "carol"]).code(0);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(v["phase"], "BLOCKED", "{v:#}");
    // The old doer holds nothing any more; the new one resumes the work.
    pair(["unblock", &b, "--agent", "doer", "--reason", "back"]).code(6);
    pair([
        "unblock",
        &b,
        "--agent",
        "carol",
        "--reason",
        "the user answered",
    ])
    .code(0);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(v["phase"], "PLANNING", "{v:#}");
    pair(["validate", &b]).code(0);

    // Blocked in the middle of a round: the cycle is where unblock returns, so the user's word
    // is needed, and a reviewer's place may be handed over only with it too.
    pair(["submit", &b, "--agent", "carol", "plan", "--note", "p2"]).code(0);
    pair([
        "block",
        &b,
        "--agent",
        "alice",
        "--reason",
        "a question for the user",
    ])
    .code(0);
    pair(["handoff", &b, "--agent", "carol", "--to", "erin"])
        .code(6)
        .mentions(&["middle of a review cycle", "--user-approved"]);
    pair(["handoff", &b, "--agent", "alice", "--to", "dave"])
        .code(6)
        .mentions(&["middle of a review cycle", "--user-approved"]);
    pair([
        "handoff",
        &b,
        "--agent",
        "alice",
        "--to",
        "dave",
        "--user-approved",
    ])
    .code(0);
    pair(["acknowledge", &b, "--agent", "dave"]).code(0);
    pair(["unblock", &b, "--agent", "carol", "--reason", "answered"]).code(0);
    pair([
        "verdict",
        &b,
        "--agent",
        "dave",
        "APPROVED",
        "--revision",
        "2",
        "--note",
        "ok",
    ])
    .code(0);
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(v["phase"], "PLAN_APPROVED", "{v:#}");
    pair(["validate", &b]).code(0);
}

/// Other terminal phases still refuse a handoff: nothing is left to hand over.
#[test]
fn a_stopped_board_refuses_a_handoff() {
    let dir = tempfile::tempdir().unwrap();
    let b = sent_back(dir.path());
    pair(["stop", &b, "--agent", "doer", "--reason", "dropped"]).code(0);
    let before = std::fs::read(&b).unwrap();
    pair(["handoff", &b, "--agent", "doer", "--to", "carol"])
        .code(6)
        .mentions(&["STOPPED"]);
    assert_eq!(std::fs::read(&b).unwrap(), before);
}

/// `stats` counts the handoffs of each role per board (offered, acknowledged, withdrawn,
/// pending, offer to acknowledgement), and `stats PROJECT` sums them: its totals are the sum
/// of the boards'.
#[test]
fn stats_counts_the_handoffs_per_role_per_board_and_in_the_project_total() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("one")).unwrap();
    std::fs::create_dir_all(project.join("two")).unwrap();
    // Board one: a doer's offer withdrawn, offered again and acknowledged; a reviewer's place
    // handed over mid-round and acknowledged.
    let one = sent_back(&project.join("one"));
    pair([
        "handoff",
        &one,
        "--agent",
        "doer",
        "--to",
        "carol",
        "--user-approved",
    ])
    .code(0);
    pair(["handoff", &one, "--agent", "doer", "--withdraw"]).code(0);
    pair([
        "handoff",
        &one,
        "--agent",
        "doer",
        "--to",
        "carol",
        "--user-approved",
    ])
    .code(0);
    pair(["acknowledge", &one, "--agent", "carol"]).code(0);
    pair(["submit", &one, "--agent", "carol", "plan", "--note", "p2"]).code(0);
    pair([
        "handoff",
        &one,
        "--agent",
        "alice",
        "--to",
        "dave",
        "--user-approved",
    ])
    .code(0);
    pair(["acknowledge", &one, "--agent", "dave"]).code(0);
    // Board two: a doer's offer still pending.
    let two = sent_back(&project.join("two"));
    pair([
        "handoff",
        &two,
        "--agent",
        "doer",
        "--to",
        "erin",
        "--user-approved",
    ])
    .code(0);

    let v = json(&pair(["stats", project.to_str().unwrap(), "--json"]));
    let boards = v["boards"].as_array().unwrap();
    assert_eq!(boards.len(), 2, "{v:#}");
    let of = |path: &str| {
        boards
            .iter()
            .find(|b| b["path"].as_str().unwrap().ends_with(path))
            .unwrap_or_else(|| panic!("{path}: {v:#}"))["role_handoffs"]
            .clone()
    };
    let (h1, h2) = (of("one/task.md"), of("two/task.md"));
    let counts = |h: &Value, role: &str| {
        ["offered", "acknowledged", "withdrawn", "pending"]
            .map(|k| h[role][k].as_u64().unwrap_or(0))
    };
    assert_eq!(counts(&h1, "doer"), [2, 1, 1, 0], "{h1:#}");
    assert_eq!(counts(&h1, "reviewer"), [1, 1, 0, 0], "{h1:#}");
    assert_eq!(counts(&h2, "doer"), [1, 0, 0, 1], "{h2:#}");
    assert!(h2.get("reviewer").is_none(), "{h2:#}");
    assert!(
        h1["doer"]["acknowledge_seconds"].as_f64().unwrap() >= 0.0,
        "{h1:#}"
    );
    // The project's totals are the sums of the boards'.
    let total = &v["total"]["role_handoffs"];
    for role in ["doer", "reviewer"] {
        let sum: Vec<u64> = (0..4)
            .map(|i| counts(&h1, role)[i] + counts(&h2, role)[i])
            .collect();
        assert_eq!(counts(total, role).to_vec(), sum, "{role}: {v:#}");
        let secs = |h: &Value| h[role]["acknowledge_seconds"].as_f64().unwrap_or(0.0);
        assert!(
            (secs(total) - secs(&h1) - secs(&h2)).abs() < 1e-9,
            "{role}: {v:#}"
        );
    }
    pair(["stats", project.to_str().unwrap()])
        .code(0)
        .mentions(&[
            "role handoffs doer: 2 offered, 1 acknowledged, 1 withdrawn, 0 pending",
            "role handoffs reviewer: 1 offered, 1 acknowledged, 0 withdrawn, 0 pending",
            "role handoffs doer: 1 offered, 0 acknowledged, 0 withdrawn, 1 pending",
            "role handoffs doer: 3 offered, 1 acknowledged, 1 withdrawn, 1 pending",
        ]);
}

/// Once a board is finished, a handoff offered and never acknowledged is moot: the incoming
/// agent is not offered an `acknowledge` it would be refused, a project's `next` does not count
/// the board as its, and `status` shows no pending handoff; the offer stays on the record.
#[test]
fn a_handoff_left_pending_on_a_finished_board_is_offered_to_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let b = submitted(dir.path());
    pair([
        "handoff",
        &b,
        "--agent",
        "doer",
        "--to",
        "carol",
        "--user-approved",
    ])
    .code(0);
    // While it is live, carol's step anywhere is the acknowledgement.
    let project = dir.path().to_str().unwrap();
    let v = json(&pair(["next", "--agent", "carol", project, "--json"]));
    assert_eq!(v["next"]["command"][1], "acknowledge", "{v:#}");
    pair(["stop", &b, "--agent", "doer", "--reason", "user-cancelled"]).code(0);
    let v = json(&pair(["poll", &b, "--agent", "carol", "--json"]));
    assert_eq!(v["phase"], "STOPPED", "{v:#}");
    assert_eq!(v["next"]["command"], Value::Null, "{v:#}");
    assert_eq!(v["handoff"], Value::Null, "{v:#}");
    assert_eq!(v["your_turn"], false, "{v:#}");
    let out = pair(["next", "--agent", "carol", project, "--json"]);
    out.code(10);
    let v = json(&out);
    assert_eq!(v["step"], Value::Null, "{v:#}");
    assert_eq!(v["next"]["command"][1], "next", "{v:#}");
    let shown = pair(["status", &b]);
    shown.code(0);
    assert!(
        !shown.stdout.contains("hands the doer role"),
        "{}",
        shown.report()
    );
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains("\"doer doer carol pending\""), "{text}");
    pair(["validate", &b]).code(0);
}

/// An agent that handed its role over (acknowledged) is done on that board: a project's `next`
/// offers it nothing there and, with no other board of its own left unfinished, says it is done
/// (exit 11, no command), also with `--wait`, which does not wait for what cannot come.
#[test]
fn next_tells_an_agent_that_handed_its_role_over_it_is_done_there() {
    let dir = tempfile::tempdir().unwrap();
    let b = submitted(dir.path());
    let project = dir.path().to_str().unwrap();
    pair([
        "handoff",
        &b,
        "--agent",
        "doer",
        "--to",
        "carol",
        "--user-approved",
    ])
    .code(0);
    // While the offer is pending, the role is still the doer's: it waits, not done.
    let v = json(&pair(["next", "--agent", "doer", project, "--json"]));
    assert_eq!(v["finished"], false, "{v:#}");
    assert_eq!(v["done"], serde_json::json!([]), "{v:#}");
    pair(["acknowledge", &b, "--agent", "carol"]).code(0);
    for wait in [&[][..], &["--wait", "--timeout", "30"][..]] {
        let mut args = vec!["next", "--agent", "doer", project, "--json"];
        args.extend_from_slice(wait);
        let out = pair(args);
        out.code(11);
        let v = json(&out);
        assert_eq!(v["finished"], true, "{v:#}");
        assert_eq!(v["step"], Value::Null, "{v:#}");
        assert_eq!(v["next"]["command"], Value::Null, "{v:#}");
        assert_eq!(v["done"][0]["name"], "task", "{v:#}");
        assert_eq!(v["done"][0]["role"], "doer", "{v:#}");
        assert_eq!(v["done"][0]["to"], "carol", "{v:#}");
    }
    let text = pair(["next", "--agent", "doer", project]);
    text.code(11)
        .mentions(&["You are done", "handed the doer role over to carol"]);
    // With another board of its own still open, it is told of the handed one and waits.
    let other = dir.path().join("other.md");
    pair(["init", other.to_str().unwrap(), "--goal", "g"]).code(0);
    let v = json(&pair(["next", "--agent", "doer", project, "--json"]));
    assert_eq!(v["finished"], false, "{v:#}");
    assert_eq!(v["done"][0]["name"], "task", "{v:#}");
}
