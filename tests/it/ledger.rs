//! The objection ledger: objections with ids and stable anchors, resolutions, acceptance,
//! challenges and rulings, regressions tied to their cause, the round cap and its decisions,
//! divergence, rework, and the law holding raw writes to the same table.

use crate::common::repo::Lc;
use crate::common::*;
use crate::proto::*;
use serde_json::Value;

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

/// `pair objections BOARD --json`.
pub(crate) fn ledger(p: &Proto) -> Value {
    pair(["objections", p.p(), "--json"]).code(0).json()
}

/// The state of objection `id`.
pub(crate) fn state(p: &Proto, id: &str) -> String {
    let l = ledger(p);
    l["objections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {l}"))["state"]
        .as_str()
        .unwrap()
        .to_string()
}

pub(crate) fn phase(p: &Proto) -> String {
    pair(["poll", p.p(), "--agent", &p.doer, "--json"]).json()["phase"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The pinned artifact hash of the round under review.
pub(crate) fn artifact(p: &Proto) -> String {
    pair(["poll", p.p(), "--agent", &p.doer, "--json"]).json()["review"]["artifact"]["sha256"]
        .as_str()
        .unwrap()
        .to_string()
}

pub(crate) fn counter(p: &Proto) -> String {
    pair(["poll", p.p(), "--agent", &p.doer, "--json"]).json()["review"]["counter"].to_string()
}

/// A raise by `who`; returns the id printed.
#[track_caller]
pub(crate) fn object(
    p: &Proto,
    who: &str,
    severity: &str,
    anchor: &str,
    title: &str,
    extra: &[&str],
) -> String {
    let mut words = vec![
        "object",
        "--severity",
        severity,
        "--anchor",
        anchor,
        "--title",
        title,
        "--evidence",
        "It fails under load.",
        "--fix",
        "Bound it.",
        "--json",
    ];
    words.extend_from_slice(extra);
    let out = p.ok(who, &words);
    out.json()["id"].as_str().unwrap().to_string()
}

#[track_caller]
pub(crate) fn verdict(p: &Proto, who: &str, v: &str, extra: &[&str]) -> Out {
    let a = artifact(p);
    let c = counter(p);
    let mut words = vec![
        "verdict",
        v,
        "--revision",
        &c,
        "--artifact-sha256",
        &a,
        "--note",
        "review",
    ];
    words.extend_from_slice(extra);
    p.run(who, &words)
}

/// A board with reviewers alice and bob (user-approved gates pre-approved), its code round 1
/// under review: the worktree's staged diff touches `lib.txt`.
pub(crate) fn code_review(extra: &[&str]) -> Proto {
    let mut args = vec!["--reviewers", "alice,bob", "--yolo"];
    args.extend_from_slice(extra);
    let p = Proto::init(&args);
    p.ok("alice", &["register"]);
    p.ok("bob", &["register"]);
    p.ok("doer", &["advance", "PLANNING"]);
    p.ok("doer", &["submit", "plan", "--note", "The plan."]);
    verdict(&p, "alice", "APPROVED", &[]).code(0);
    verdict(&p, "bob", "APPROVED", &[]).code(0);
    p.ok("doer", &["advance", "CODING", "--worktree", "{wt}"]);
    p.ok("doer", &["submit", "code", "--note", "Staged: two."]);
    assert_eq!(phase(&p), "CODE_SUBMITTED");
    p
}

/// A board with one reviewer (alice, the arbiter) and its plan revision 1 under review.
fn plan_review(extra: &[&str]) -> Proto {
    let mut args = vec!["--reviewers", "alice", "--yolo"];
    args.extend_from_slice(extra);
    let p = Proto::init(&args);
    p.ok("alice", &["register"]);
    p.ok("doer", &["advance", "PLANNING"]);
    p.ok(
        "doer",
        &[
            "submit",
            "plan",
            "--note",
            "The plan.\n\n### Step one\n\nEdit lib.txt.",
        ],
    );
    p
}

#[test]
fn a_code_gate_with_two_reviewers_tracks_objections_across_rounds() {
    let p = code_review(&["--max-rounds", "3"]);
    let head = git(std::path::Path::new(&p.wt), &["rev-parse", "HEAD"]);
    let pin = artifact(&p);
    // Each anchor form.
    assert_eq!(
        object(&p, "alice", "blocking", "lib.txt:2", "Two is wrong", &[]),
        "BLK-1"
    );
    assert_eq!(
        object(&p, "alice", "advisory", "## Goal", "Goal is vague", &[]),
        "ADV-1"
    );
    assert_eq!(
        object(
            &p,
            "bob",
            "blocking",
            "lib.txt#two",
            "Two is unchecked",
            &[]
        ),
        "BLK-2"
    );
    assert_eq!(
        object(
            &p,
            "bob",
            "blocking",
            &format!("commit {}", &head.trim()[..12]),
            "Base commit lacks a test",
            &[]
        ),
        "BLK-3"
    );
    assert_eq!(
        object(
            &p,
            "bob",
            "advisory",
            &format!("sha256:{pin}"),
            "Diff is large",
            &[]
        ),
        "ADV-2"
    );
    // Vague anchors, missing lines, files outside the artifact: refused with the forms (exit 4).
    for bad in [
        "near the top of the file",
        "around line 50",
        "lib.txt:99",
        // Only in the working tree, not in the staged diff's new side.
        "lib.txt:3",
        "lib.txt#three",
        "notes.txt:1",
    ] {
        let out = p.refused(
            "alice",
            &[
                "object",
                "--severity",
                "blocking",
                "--anchor",
                bad,
                "--title",
                "t",
                "--evidence",
                "e",
                "--fix",
                "f",
            ],
            4,
        );
        out.mentions(&["path:line"]);
    }
    std::fs::write(std::path::Path::new(&p.wt).join("notes.txt"), "a\nb\n").unwrap();
    assert_eq!(
        object(
            &p,
            "alice",
            "blocking",
            "notes.txt:2",
            "Notes drift",
            &[
                "--undeclared-impact",
                "lib.txt is read by the notes generator"
            ]
        ),
        "BLK-4"
    );
    // Approving with an open blocking objection, or requesting changes without naming one.
    verdict(&p, "alice", "APPROVED", &[])
        .code(6)
        .mentions(&["BLK-1"]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &[])
        .code(4)
        .mentions(&["--objections", "--no-objection-ids"]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-2"]).code(4);
    verdict(
        &p,
        "alice",
        "CHANGES_REQUESTED",
        &["--objections", "BLK-1,BLK-4"],
    )
    .code(0);
    verdict(
        &p,
        "bob",
        "CHANGES_REQUESTED",
        &["--objections", "BLK-2,BLK-3"],
    )
    .code(0);
    assert_eq!(phase(&p), "CODE_CHANGES_REQUESTED");
    // The doer's next step names the ids to resolve.
    let poll = pair(["poll", p.p(), "--agent", "doer", "--json"]).json();
    let action = poll["next"]["action"].as_str().unwrap();
    for id in ["BLK-1", "BLK-2", "BLK-3", "BLK-4"] {
        assert!(action.contains(id), "{action}");
    }
    assert_eq!(poll["next"]["command"][1], "resolve");
    assert_eq!(poll["next"]["command"][3], "BLK-1");
    // poll answers "what is open" from the frontmatter alone.
    assert_eq!(
        poll["objections"]["unsettled"].as_array().unwrap().len(),
        6,
        "{poll}"
    );
    assert_eq!(poll["objections"]["gates"]["code"]["round"], 1);
    assert_eq!(poll["objections"]["max_rounds"], 3);
    // A reviewer cannot resolve, the doer cannot submit with open objections.
    p.refused("alice", &["resolve", "BLK-1", "--resolution", "done"], 6);
    p.refused("bob", &["resolve", "BLK-1", "--resolution", "done"], 6)
        .mentions(&["doer"]);
    std::fs::write(
        std::path::Path::new(&p.wt).join("lib.txt"),
        "one\ntwo\nthree\nfour\n",
    )
    .unwrap();
    p.refused("doer", &["submit", "followup", "--note", "fix"], 6)
        .mentions(&["BLK-1"]);
    p.ok(
        "doer",
        &[
            "resolve",
            "BLK-1",
            "--resolution",
            "Two is right now.",
            "--surfaces",
            "lib.txt",
        ],
    );
    p.ok_stdin(
        "doer",
        &["resolve", "BLK-4", "--resolution-file", "-"],
        "Notes regenerated.",
    );
    p.ok(
        "doer",
        &[
            "challenge",
            "BLK-2",
            "--grounds",
            "Three is checked by the caller.",
        ],
    );
    p.ok(
        "doer",
        &[
            "challenge",
            "BLK-3",
            "--grounds",
            "The base commit is not under review.",
        ],
    );
    // Ruling as the doer, or as one of several reviewers, needs the user's word.
    p.refused("doer", &["rule", "BLK-2", "uphold", "--reason", "x"], 6);
    p.refused("alice", &["rule", "BLK-2", "uphold", "--reason", "x"], 6);
    p.ok(
        "doer",
        &["submit", "followup", "--note", "Fixed two; four added."],
    );
    assert_eq!(phase(&p), "FOLLOWUP_REVIEW");
    // The reviewer sees the resolution waiting for its acceptance.
    let poll = pair(["poll", p.p(), "--agent", "alice", "--json"]).json();
    assert!(
        poll["next"]["action"]
            .as_str()
            .unwrap()
            .contains("awaiting your acceptance: BLK-1"),
        "{poll}"
    );
    assert_eq!(poll["next"]["command"][1], "accept");
    p.refused("bob", &["accept", "BLK-1"], 6);
    p.ok("alice", &["accept", "BLK-1"]);
    p.ok(
        "alice",
        &["reopen", "BLK-4", "--reason", "Notes still drift."],
    );
    assert_eq!(state(&p, "BLK-4"), "reopened");
    // The user arbitrates between several reviewers: one challenge upheld, one overruled.
    p.ok(
        "alice",
        &[
            "rule",
            "BLK-2",
            "uphold",
            "--reason",
            "The caller does not check it.",
            "--user-approved",
        ],
    );
    p.ok(
        "bob",
        &[
            "rule",
            "BLK-3",
            "overrule",
            "--reason",
            "Out of scope.",
            "--user-approved",
        ],
    );
    assert_eq!(state(&p, "BLK-2"), "open");
    assert_eq!(state(&p, "BLK-3"), "overruled");
    assert!(
        p.text().contains("### User's ruling — BLK-2"),
        "{}",
        p.text()
    );
    // A regression tied to the resolution that caused it.
    assert_eq!(
        object(
            &p,
            "alice",
            "blocking",
            "lib.txt:4",
            "Four breaks the format",
            &["--regression-of", "BLK-1"]
        ),
        "REG-1"
    );
    let reg = ledger(&p)["objections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "REG-1")
        .cloned()
        .unwrap();
    assert_eq!(reg["cause"], "BLK-1");
    assert_eq!(reg["round"], 2);
    // A regression of an objection that was never resolved is refused.
    p.refused(
        "alice",
        &[
            "object",
            "--severity",
            "blocking",
            "--regression-of",
            "BLK-2",
            "--anchor",
            "lib.txt:1",
            "--title",
            "t",
            "--evidence",
            "e",
            "--fix",
            "f",
        ],
        6,
    );
    verdict(
        &p,
        "alice",
        "CHANGES_REQUESTED",
        &["--objections", "BLK-4,REG-1"],
    )
    .code(0);
    verdict(&p, "bob", "CHANGES_REQUESTED", &["--objections", "BLK-2"]).code(0);
    assert_eq!(phase(&p), "CODE_CHANGES_REQUESTED");
    let l = ledger(&p);
    assert_eq!(l["gates"]["code"]["round"], 2);
    assert_eq!(l["gates"]["code"]["open"], serde_json::json!([4, 3]));
    pair(["validate", p.p()]).code(0);
}

#[test]
fn the_round_cap_goes_to_a_decision_and_accept_records_the_risks_and_the_advice() {
    let p = code_review(&["--max-rounds", "1"]);
    object(&p, "alice", "blocking", "lib.txt:1", "One is wrong", &[]);
    object(&p, "bob", "advisory", "## Goal", "Say why", &[]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    verdict(&p, "bob", "APPROVED", &[]).code(0);
    assert_eq!(phase(&p), "AWAITING_DECISION");
    let poll = pair(["poll", p.p(), "--agent", "doer", "--json"]).json();
    assert_eq!(poll["next"]["actor"], "user");
    assert_eq!(poll["next"]["command"][1], "decide");
    // Each choice is accepted as given; a deferral names its escalation path, so it is a
    // complete command of its own, the optional step.
    assert_eq!(
        poll["next"]["choices"],
        serde_json::json!(["accept", "reject"])
    );
    let defer = &poll["next"]["optional"]["command"];
    assert_eq!(defer[3], "defer", "{poll:#}");
    assert!(
        defer
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == "--escalation"),
        "{poll:#}"
    );
    // Several reviewers: the user decides; nobody decides alone.
    p.refused("alice", &["decide", "accept", "--reason", "fine"], 6);
    p.refused("doer", &["decide", "accept", "--reason", "fine"], 6);
    p.ok(
        "doer",
        &[
            "decide",
            "accept",
            "--reason",
            "A known limitation.",
            "--user-approved",
        ],
    );
    assert_eq!(phase(&p), "READY_TO_COMMIT");
    assert_eq!(state(&p, "BLK-1"), "risk_accepted");
    let text = p.text();
    let consensus = text
        .split("### Consensus — code")
        .nth(1)
        .expect("a consensus entry");
    assert!(
        consensus.contains("ADV-1") && consensus.contains("BLK-1"),
        "{consensus}"
    );
    let status = pair(["status", p.p(), "--json"]).code(0).json();
    assert_eq!(
        status["frontmatter"]["ledger"]["gates"]["code"]["stop_reason"],
        "accepted"
    );
    pair(["validate", p.p()])
        .code(0)
        .mentions(&["code round 1 of 1 (accepted)"]);
}

#[test]
fn the_arbiter_rejects_and_the_work_stops_with_stop_reason_rejected() {
    let p = plan_review(&["--max-rounds", "1"]);
    object(&p, "alice", "blocking", "## Step one", "Wrong file", &[]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    assert_eq!(phase(&p), "AWAITING_DECISION");
    // One reviewer: it is the arbiter.
    let poll = pair(["poll", p.p(), "--agent", "alice", "--json"]).json();
    assert_eq!(poll["your_turn"], true);
    p.refused("doer", &["decide", "reject", "--reason", "no"], 6);
    p.ok(
        "alice",
        &["decide", "reject", "--reason", "The approach cannot work."],
    );
    assert_eq!(phase(&p), "STOPPED");
    let status = pair(["status", p.p(), "--json"]).code(0).json();
    assert_eq!(status["stop_reason"], "rejected");
    pair(["validate", p.p()])
        .code(0)
        .mentions(&["stop_reason rejected"]);
}

#[test]
fn a_deferral_needs_an_escalation_path_and_blocks_until_the_decision_is_back() {
    let p = plan_review(&["--max-rounds", "1"]);
    object(
        &p,
        "alice",
        "blocking",
        "## Step one",
        "Needs the schema",
        &[],
    );
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    p.refused("alice", &["decide", "defer", "--reason", "later"], 4)
        .mentions(&["silent"]);
    p.refused(
        "alice",
        &[
            "decide",
            "defer",
            "--reason",
            "later",
            "--escalation",
            "someday",
        ],
        4,
    );
    p.ok(
        "alice",
        &[
            "decide",
            "defer",
            "--reason",
            "Needs schema v2.",
            "--escalation",
            "blocked-pending:schema-v2",
        ],
    );
    assert_eq!(phase(&p), "BLOCKED");
    assert_eq!(state(&p, "BLK-1"), "deferred");
    let status = pair(["status", p.p(), "--json"]).code(0).json();
    assert_eq!(status["stop_reason"], "deferred");
    assert_eq!(
        status["frontmatter"]["ledger"]["gates"]["plan"]["escalation"],
        "blocked-pending:schema-v2"
    );
    pair(["validate", p.p()])
        .code(0)
        .mentions(&["deferred", "blocked-pending:schema-v2"]);
    assert!(p.text().contains("Unresolved: BLK-1"));
    // When X is resolved, the decision comes back.
    p.ok("doer", &["unblock", "--reason", "Schema v2 landed."]);
    assert_eq!(phase(&p), "AWAITING_DECISION");
    p.ok(
        "alice",
        &["decide", "accept", "--reason", "Schema is there now."],
    );
    assert_eq!(phase(&p), "PLAN_APPROVED");
    assert_eq!(state(&p, "BLK-1"), "risk_accepted");
}

#[test]
fn a_gate_whose_open_objections_grow_two_rounds_running_goes_to_a_decision_early() {
    let p = plan_review(&["--max-rounds", "5"]);
    for round in 1..=3 {
        let id = object(
            &p,
            "alice",
            "blocking",
            "## Step one",
            &format!("Problem {round}"),
            &[],
        );
        let open: Vec<String> = ledger(&p)["objections"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["state"] == "open")
            .map(|o| o["id"].as_str().unwrap().to_string())
            .collect();
        assert!(open.contains(&id));
        verdict(
            &p,
            "alice",
            "CHANGES_REQUESTED",
            &["--objections", &open.join(",")],
        )
        .code(0);
        if round < 3 {
            assert_eq!(phase(&p), "PLAN_CHANGES_REQUESTED");
            for o in &open {
                p.ok("doer", &["challenge", o, "--grounds", "Disputed."]);
            }
            p.ok(
                "doer",
                &["submit", "plan", "--note", &format!("Plan {round}.")],
            );
            for o in &open {
                p.ok("alice", &["rule", o, "uphold", "--reason", "Stands."]);
            }
        }
    }
    assert_eq!(phase(&p), "AWAITING_DECISION");
    let l = ledger(&p);
    assert_eq!(l["gates"]["plan"]["stop_reason"], "diverging");
    assert!(p.text().contains("### Decision needed — plan — diverging"));
    assert_eq!(l["gates"]["plan"]["open"], serde_json::json!([1, 2, 3]));
}

#[test]
fn a_rework_restarts_the_rounds_and_the_reviewer_may_reject_it() {
    let p = plan_review(&["--max-rounds", "2"]);
    object(&p, "alice", "blocking", "## Step one", "Wrong file", &[]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    p.refused("doer", &["submit", "plan", "--note", "v2", "--rework"], 4);
    p.ok(
        "doer",
        &[
            "submit",
            "plan",
            "--note",
            "A new approach.",
            "--rework",
            "--reason",
            "The design was wrong.",
        ],
    );
    assert_eq!(state(&p, "BLK-1"), "superseded");
    let l = ledger(&p);
    assert_eq!(l["gates"]["plan"]["round"], 1);
    assert_eq!(l["gates"]["plan"]["reworked_from"], 0);
    assert!(p.text().contains("### Rework — plan"));
    // The reviewer finds BLK-1 was a one-line fix: the rework is rejected, BLK-1 is back.
    p.refused(
        "doer",
        &["rule", "rework", "reject-rework", "--reason", "x"],
        6,
    );
    p.ok(
        "alice",
        &[
            "rule",
            "rework",
            "reject-rework",
            "--reason",
            "BLK-1 was one line.",
        ],
    );
    assert_eq!(state(&p, "BLK-1"), "open");
    assert_eq!(ledger(&p)["gates"]["plan"]["round"], 2);
    pair(["validate", p.p()]).code(0);
}

#[test]
fn a_raw_write_is_held_to_the_same_ledger_rules() {
    let p = plan_review(&["--max-rounds", "3"]);
    object(&p, "alice", "blocking", "## Step one", "Wrong file", &[]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    let text = p.text();
    let state_line = "      state: open\n";
    assert!(text.contains(state_line));
    // A reviewer cannot mark its own objection resolved.
    let resolved = text.replacen(state_line, "      state: resolved\n", 1);
    p.b.write_expect(&resolved, &p.b.sha(), &["--as", "alice"])
        .code(6)
        .mentions(&["doer"]);
    // A doer cannot accept it.
    let accepted = text.replacen(state_line, "      state: accepted\n", 1);
    p.b.write_expect(&accepted, &p.b.sha(), &["--as", "doer"])
        .code(6);
    // The doer may resolve it raw, as `pair resolve` would.
    p.b.write_expect(&resolved, &p.b.sha(), &["--as", "doer"])
        .code(0);
    // Objections are never dropped.
    let text = p.text();
    let start = text.find("  objections:\n").unwrap();
    let end = text.find("agents:\n").unwrap();
    let dropped = format!("{}{}", &text[..start], &text[end..]);
    p.b.write_expect(&dropped, &p.b.sha(), &["--as", "doer"])
        .code(6);
}

#[test]
fn boards_without_the_ledger_request_changes_in_free_text_as_before() {
    let p = plan_review(&[]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &[]).code(0);
    assert_eq!(phase(&p), "PLAN_CHANGES_REQUESTED");
    assert!(!p.text().contains("ledger:"));
    // Once opted in, free-text-only change requests are recorded.
    let q = plan_review(&["--max-rounds", "3"]);
    verdict(&q, "alice", "CHANGES_REQUESTED", &["--no-objection-ids"]).code(0);
    assert!(
        q.text()
            .contains("### Changes requested without objection ids — plan — alice")
    );
}

#[test]
fn objections_are_raised_only_by_required_reviewers_under_review() {
    let p = plan_review(&["--max-rounds", "3"]);
    p.refused(
        "doer",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "## Goal",
            "--title",
            "t",
            "--evidence",
            "e",
            "--fix",
            "f",
        ],
        6,
    );
    pair(["register", p.p(), "--agent", "carol"]).code(0);
    p.refused(
        "carol",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "## Goal",
            "--title",
            "t",
            "--evidence",
            "e",
            "--fix",
            "f",
        ],
        6,
    );
    verdict(&p, "alice", "APPROVED", &[]).code(0);
    p.refused(
        "alice",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "## Goal",
            "--title",
            "t",
            "--evidence",
            "e",
            "--fix",
            "f",
        ],
        6,
    )
    .mentions(&["not a review phase"]);
    p.refused("alice", &["accept", "BLK-9"], 4)
        .mentions(&["no objection"]);
}

#[test]
fn the_documented_ledger_table_is_the_moves_table() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md")).unwrap();
    let table = pair::board::ledger::markdown_table();
    assert!(
        doc.contains(&table),
        "docs/protocol.md must contain the ledger table exactly as generated:\n{table}"
    );
}

/// The keys docs/json.md lists under the section whose heading names `pair COMMAND`.
fn documented_keys(command: &str) -> Vec<String> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json.md")).unwrap();
    let mut keys = Vec::new();
    let mut inside = false;
    for line in doc.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.contains(&format!("`pair {command}`"));
        } else if inside && let Some(row) = line.strip_prefix("| `") {
            keys.push(row.split('`').next().unwrap().to_string());
        }
    }
    keys
}

#[test]
fn the_ledger_commands_print_the_documented_json_keys() {
    let p = plan_review(&["--max-rounds", "1"]);
    let check = |command: &str, v: &Value| {
        let keys = documented_keys(command);
        assert_eq!(v["schema"], 1, "{command}: {v}");
        for k in v.as_object().unwrap().keys() {
            assert!(
                keys.contains(k),
                "{command} prints `{k}`, which docs/json.md does not list"
            );
        }
    };
    let out = p.ok(
        "alice",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "## Goal",
            "--title",
            "t",
            "--evidence",
            "e",
            "--fix",
            "f",
            "--json",
        ],
    );
    check("object", &out.json());
    check("objections", &ledger(&p));
    let out = verdict(
        &p,
        "alice",
        "CHANGES_REQUESTED",
        &["--objections", "BLK-1", "--json"],
    );
    check("verdict", &out.code(0).json());
    let out = p.ok("alice", &["decide", "reject", "--reason", "no", "--json"]);
    check("decide", &out.json());
    check("status", &pair(["status", p.p(), "--json"]).code(0).json());
}

#[test]
fn validate_names_the_field_of_a_broken_ledger() {
    let p = plan_review(&["--max-rounds", "3"]);
    object(&p, "alice", "blocking", "## Step one", "Wrong file", &[]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    let good = p.text();
    pair(["validate", p.p()]).code(0);
    let cases: [(String, &str); 6] = [
        (
            good.replace("      severity: blocking\n", "      severity: advisory\n"),
            "ledger.objections.1.severity",
        ),
        (
            good.replace("    - id: BLK-1\n", "    - id: BLK-01\n"),
            "ledger.objections.1.id",
        ),
        (
            good.replace("    - id: BLK-1\n", "    - id: REG-1\n"),
            "ledger.objections.1.cause",
        ),
        (
            good.replace("      state: open\n", "      state: lost\n"),
            "ledger.objections.1.state",
        ),
        (
            good.replace(
                "      anchor: \"## Step one\"\n",
                "      anchor: near the top\n",
            ),
            "ledger.objections.1.anchor",
        ),
        (
            good.replace(
                "phase: PLAN_CHANGES_REQUESTED\n",
                "phase: AWAITING_DECISION\n",
            ),
            "phase",
        ),
    ];
    for (text, field) in cases {
        assert_ne!(text, good, "{field}: the case must change the board");
        let b = Board::new(&text);
        let out = pair(["validate", b.p(), "--json"]);
        out.code(5);
        let v = out.json();
        let errors = v["files"][0]["errors"].as_array().unwrap();
        assert!(errors.iter().any(|e| e["field"] == field), "{field}: {v}");
    }
    // An approved gate with an open blocking objection is invalid (it could only be written by
    // a repair).
    let approved = good
        .replace("phase: PLAN_CHANGES_REQUESTED\n", "phase: PLAN_APPROVED\n")
        .replace("plan_verdict: CHANGES_REQUESTED", "plan_verdict: APPROVED");
    let b = Board::new(&approved);
    pair(["validate", b.p()]).code(5).mentions(&["BLK-1"]);
}

#[test]
fn an_objection_raised_after_approving_replaces_the_approval_and_the_round_cannot_approve_over_it()
{
    let p = Proto::init(&["--reviewers", "alice,bob", "--yolo", "--max-rounds", "3"]);
    p.ok("alice", &["register"]);
    p.ok("bob", &["register"]);
    p.ok("doer", &["advance", "PLANNING"]);
    p.ok("doer", &["submit", "plan", "--note", "The plan."]);
    verdict(&p, "alice", "APPROVED", &[]).code(0);
    assert_eq!(
        object(&p, "alice", "blocking", "## Goal", "Second thoughts", &[]),
        "BLK-1"
    );
    let s = pair(["status", p.p(), "--json"]).code(0).json();
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["verdict"],
        "CHANGES_REQUESTED"
    );
    assert!(
        p.text()
            .contains("APPROVED on plan 1 is replaced by CHANGES_REQUESTED naming BLK-1")
    );
    verdict(&p, "bob", "APPROVED", &[]).code(0);
    assert_eq!(phase(&p), "PLAN_CHANGES_REQUESTED");
    pair(["validate", p.p()]).code(0);
}

#[test]
fn a_heading_anchor_may_be_written_at_the_headings_own_level() {
    // The plan's `### Step one` is appended as `#### Step one`: both spellings name it.
    let p = plan_review(&["--max-rounds", "3"]);
    assert_eq!(
        object(
            &p,
            "alice",
            "blocking",
            "#### Step one",
            "Step one is vague",
            &[]
        ),
        "BLK-1"
    );
    assert_eq!(
        object(&p, "alice", "advisory", "## Step one", "Name the file", &[]),
        "ADV-1"
    );
    p.refused(
        "alice",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "#### Step nine",
            "--title",
            "T",
            "--evidence",
            "E",
            "--fix",
            "F",
        ],
        4,
    )
    .mentions(&["Step nine"]);
}

/// Run `next.command` of `who`'s poll once per offered choice, each on the board as it stands
/// (restored after), and expect every one accepted; returns the choices.
#[track_caller]
fn every_choice_runs(p: &Proto, who: &str, note: &std::path::Path) -> Vec<String> {
    let v = pair(["poll", p.p(), "--agent", who, "--json"])
        .code(0)
        .json();
    let next = &v["next"];
    let argv: Vec<String> = next["command"]
        .as_array()
        .unwrap_or_else(|| panic!("{who}: a command: {next:#}"))
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let choices: Vec<String> = next["choices"]
        .as_array()
        .unwrap_or_else(|| panic!("{who}: choices: {next:#}"))
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    let before = p.b.read();
    for choice in &choices {
        let filled: Vec<String> = argv[1..]
            .iter()
            .map(|w| match w.as_str() {
                "VERDICT" => choice.clone(),
                "FILE" => note.display().to_string(),
                _ => w.clone(),
            })
            .collect();
        pair(&filled).code(0);
        std::fs::write(p.p(), &before).unwrap();
    }
    choices
}

#[test]
fn the_verdicts_next_offers_on_a_ledger_board_are_each_accepted_as_given() {
    let p = code_review(&[]);
    let dir = tempfile::tempdir().unwrap();
    let note = dir.path().join("review.md");
    std::fs::write(&note, "Reviewed.\n").unwrap();
    // Before any objection the board does not use the ledger: every verdict is open.
    assert_eq!(
        every_choice_runs(&p, "alice", &note),
        ["APPROVED", "CHANGES_REQUESTED", "COMMENT"]
    );
    assert_eq!(
        object(&p, "alice", "blocking", "lib.txt:2", "Two", &[]),
        "BLK-1"
    );
    // Alice's open objection: only a request for changes naming it is accepted.
    assert_eq!(every_choice_runs(&p, "alice", &note), ["CHANGES_REQUESTED"]);
    let v = pair(["poll", p.p(), "--agent", "alice", "--json"]).json();
    let command: Vec<&str> = v["next"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        command.windows(2).any(|w| w == ["--objections", "BLK-1"]),
        "{command:?}"
    );
    // Bob has none, on a board that now uses the ledger: he approves or comments, and is told
    // how to request changes.
    assert_eq!(every_choice_runs(&p, "bob", &note), ["APPROVED", "COMMENT"]);
    let v = pair(["poll", p.p(), "--agent", "bob", "--json"]).json();
    assert!(
        v["next"]["action"]
            .as_str()
            .unwrap()
            .contains("pair object"),
        "{:#}",
        v["next"]
    );
    assert_eq!(phase(&p), "CODE_SUBMITTED");
}

/// Run the argument vector `argv` (from `next.command` or `next.optional.command`) with its
/// placeholders filled in by `fill`; every placeholder must be filled.
#[track_caller]
fn run_filled(argv: &Value, placeholders: &Value, fill: &[(&str, &str)]) -> Out {
    let words: Vec<String> = argv
        .as_array()
        .unwrap_or_else(|| panic!("a command: {argv}"))
        .iter()
        .skip(1)
        .map(|w| {
            let w = w.as_str().unwrap();
            match fill.iter().find(|(k, _)| *k == w) {
                Some((_, v)) => v.to_string(),
                None => {
                    assert!(placeholders.get(w).is_none(), "{w} left unfilled: {argv}");
                    w.to_string()
                }
            }
        })
        .collect();
    pair(&words)
}

#[test]
fn an_objection_left_open_on_a_gate_that_closed_is_settled_in_a_later_phase() {
    let p = plan_review(&["--max-rounds", "3"]);
    for title in ["Name the constant", "Log the retries", "Say why three"] {
        object(&p, "alice", "advisory", "## Goal", title, &[]);
    }
    // Advisories never block: the plan is approved with ADV-1..3 open, and the gate closes.
    verdict(&p, "alice", "APPROVED", &[]).code(0);
    p.ok("doer", &["advance", "CODING", "--worktree", "{wt}"]);
    p.ok("doer", &["submit", "code", "--note", "Staged: two."]);
    assert_eq!(phase(&p), "CODE_SUBMITTED");
    // While the code is under review, the doer may say the code fixed ADV-1: poll offers it as
    // the optional step, naming the submission that fixed it.
    let v = pair(["poll", p.p(), "--agent", "doer", "--json"])
        .code(10)
        .json();
    let optional = &v["next"]["optional"];
    assert_eq!(optional["command"][1], "resolve", "{v:#}");
    assert_eq!(optional["command"][3], "ADV-1", "{v:#}");
    assert!(
        optional["placeholders"]["ROUND"]
            .as_str()
            .is_some_and(|r| r.contains("code:1") && !r.contains("plan:1")),
        "{optional:#}"
    );
    // Without the round, or naming one before the objection, it is refused with the rounds
    // that may be named.
    p.refused("doer", &["resolve", "ADV-1", "--resolution", "named"], 4)
        .mentions(&["--fixed-in", "code:1"]);
    p.refused(
        "doer",
        &[
            "resolve",
            "ADV-1",
            "--resolution",
            "named",
            "--fixed-in",
            "plan:1",
        ],
        4,
    )
    .mentions(&["code:1"]);
    let note =
        p.b.aux_file("fixed.md", "The constant is named in the code.\n");
    run_filled(
        &optional["command"],
        &optional["placeholders"],
        &[("ROUND", "code:1"), ("FILE", note.to_str().unwrap())],
    )
    .code(0);
    assert_eq!(state(&p, "ADV-1"), "resolved");
    assert!(
        p.text()
            .contains("Fixed in code round 1 (after the plan gate closed)."),
        "{}",
        p.text()
    );
    // Alice's review turn offers the acceptance first, as the command to run.
    let v = pair(["poll", p.p(), "--agent", "alice", "--json"])
        .code(0)
        .json();
    assert_eq!(v["next"]["command"][1], "accept", "{v:#}");
    assert_eq!(v["next"]["command"][3], "ADV-1", "{v:#}");
    run_filled(&v["next"]["command"], &v["next"]["placeholders"], &[]).code(0);
    assert_eq!(state(&p, "ADV-1"), "accepted");
    verdict(&p, "alice", "APPROVED", &[]).code(0);
    assert_eq!(phase(&p), "READY_TO_COMMIT");
    // After the last approval: the doer resolves ADV-2, and alice, whose turn it is not, is
    // offered the acceptance as her optional step.
    let v = pair(["poll", p.p(), "--agent", "doer", "--json"])
        .code(0)
        .json();
    let optional = &v["next"]["optional"];
    assert_eq!(optional["command"][3], "ADV-2", "{v:#}");
    run_filled(
        &optional["command"],
        &optional["placeholders"],
        &[("ROUND", "code:1"), ("FILE", note.to_str().unwrap())],
    )
    .code(0);
    let v = pair(["poll", p.p(), "--agent", "alice", "--json"])
        .code(10)
        .json();
    let optional = &v["next"]["optional"];
    assert_eq!(optional["command"][1], "accept", "{v:#}");
    assert_eq!(optional["command"][3], "ADV-2", "{v:#}");
    run_filled(&optional["command"], &optional["placeholders"], &[]).code(0);
    // Its raiser withdraws ADV-3 in READY_TO_COMMIT.
    p.ok(
        "alice",
        &["withdraw", "ADV-3", "--reason", "Covered by the code"],
    );
    assert_eq!(
        [state(&p, "ADV-2"), state(&p, "ADV-3")],
        ["accepted", "withdrawn"]
    );
    let open = pair(["objections", p.p(), "--open", "--json"])
        .code(0)
        .json();
    assert_eq!(open["objections"], serde_json::json!([]), "{open:#}");
    pair(["validate", p.p()]).code(0);
}

#[test]
fn poll_and_status_say_whether_the_board_uses_the_ledger_from_its_first_line() {
    let p = plan_review(&[]);
    for (out, what) in [
        (pair(["poll", p.p(), "--agent", "alice", "--json"]), "poll"),
        (pair(["status", p.p(), "--json"]), "status"),
    ] {
        let v = out.json();
        let o = &v["objections"];
        assert_eq!(o["in_use"], false, "{what}: {o:#}");
        assert_eq!(o["max_rounds"], Value::Null, "{what}: {o:#}");
        assert_eq!(o["unsettled"], serde_json::json!([]), "{what}: {o:#}");
    }
    for cmd in ["poll", "status"] {
        pair([cmd, p.p(), "--agent", "alice"]).mentions(&["ledger      not in use", "pair object"]);
    }
    // The first objection turns it on.
    object(&p, "alice", "advisory", "## Goal", "Name it", &[]);
    let v = pair(["poll", p.p(), "--agent", "alice", "--json"]).json();
    assert_eq!(v["objections"]["in_use"], true, "{v:#}");
    assert_eq!(v["objections"]["max_rounds"], 3, "{v:#}");
    assert_eq!(v["objections"]["unsettled"][0]["id"], "ADV-1", "{v:#}");
    pair(["poll", p.p(), "--agent", "alice"])
        .mentions(&["ledger      1 objection(s)", "ADV-1 (plan advisory, open)"]);
    // A board made with a round cap uses it before any objection.
    let capped = plan_review(&["--max-rounds", "2"]);
    let v = pair(["status", capped.p(), "--json"]).json();
    assert_eq!(v["objections"]["in_use"], true, "{v:#}");
    assert_eq!(v["objections"]["max_rounds"], 2, "{v:#}");
}

#[test]
fn withdraw_shows_its_reason_is_required_and_a_refusal_says_where_it_is_allowed() {
    // The usage line says --reason (or --reason-file) is required.
    let help = pair(["withdraw", "--help"]);
    help.code(0)
        .mentions(&["<--reason <TEXT>|--reason-file <FILE>>"]);
    // A gate awaiting a decision: its raiser may not withdraw now, and is told where it may.
    let p = plan_review(&["--max-rounds", "1"]);
    object(&p, "alice", "blocking", "## Goal", "Wrong", &[]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    assert_eq!(phase(&p), "AWAITING_DECISION");
    p.refused("alice", &["withdraw", "BLK-1"], 4)
        .mentions(&["--reason"]);
    p.refused("alice", &["withdraw", "BLK-1", "--reason", "Not needed"], 6)
        .mentions(&[
            "is allowed in",
            "PLANNING_SUBMITTED, REVIEWING_PLAN",
            "PLANNING, PLAN_CHANGES_REQUESTED",
            "from PLAN_APPROVED on",
            "The phase is AWAITING_DECISION",
        ]);
}

#[test]
fn show_and_brief_print_each_open_objection_with_its_evidence_and_fix() {
    let p = Proto::init(&["--reviewers", "alice", "--yolo", "--rca"]);
    p.ok("alice", &["register"]);
    p.ok("doer", &["advance", "ANALYZING"]);
    p.ok(
        "doer",
        &[
            "submit",
            "analysis",
            "--note",
            "The cause is the retry loop.",
        ],
    );
    object(
        &p,
        "alice",
        "blocking",
        "## Goal",
        "The cause is elsewhere",
        &[],
    );
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    let with_board = |args: &[&str]| pair_env(args, &[("PAIR_BOARD", p.p())]);
    // With the board from PAIR_BOARD a lone argument is the section; a wrong one gets the
    // section that holds what it names, never `init`.
    let wrong = with_board(&["show", "Analysis Reviews"]);
    wrong
        .code(4)
        .mentions(&["did you mean \"Root Cause Analysis\"", "pair show"]);
    assert!(!wrong.stderr.contains("init"), "{}", wrong.report());
    with_board(&["show", "Root Cause Analysis"])
        .code(0)
        .mentions(&["Objection BLK-1", "It fails under load.", "Bound it."]);
    // A board named on the command line is still the board.
    with_board(&["show", p.p(), "--latest"])
        .code(0)
        .mentions(&["The cause is the retry loop."]);
    // Plain show: the round, then each open objection with its evidence and suggested fix.
    pair(["show", p.p()]).code(0).mentions(&[
        "Objections still to be settled (BLK-1)",
        "BLK-1 — open blocking on the analysis gate",
        "Evidence:",
        "It fails under load.",
        "Suggested fix:",
        "Bound it.",
    ]);
    let v = pair(["show", p.p(), "--json"]).code(0).json();
    assert_eq!(v["objections"][0]["id"], "BLK-1", "{v:#}");
    assert!(
        v["objections"][0]["entries"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Bound it."))
    );
    // The doer's brief says the same, not only "Objections: BLK-1.".
    pair(["brief", p.p(), "--for", "doer"]).code(0).mentions(&[
        "## Open objections",
        "BLK-1 — open blocking on the analysis gate",
        "It fails under load.",
        "Bound it.",
    ]);
    // One objection, with what was said about it since.
    p.ok(
        "doer",
        &[
            "resolve",
            "BLK-1",
            "--resolution",
            "Traced it to the cache.",
        ],
    );
    pair(["show", p.p(), "--id", "BLK-1"]).code(0).mentions(&[
        "BLK-1 — resolved blocking",
        "It fails under load.",
        "Bound it.",
        "Resolution BLK-1",
        "Traced it to the cache.",
    ]);
    pair(["show", p.p(), "--id", "BLK-9"])
        .code(4)
        .mentions(&["BLK-1"]);
}

/// A long ledger does not flood every poll: `poll` and `status` list the first 20 unsettled
/// objections and say how many there are; `pair objections --open` lists them all, and the
/// verdict `next.command` gives still names every open blocking one.
#[test]
fn poll_lists_the_first_twenty_unsettled_objections_and_counts_them_all() {
    let p = plan_review(&[]);
    for i in 1..=23 {
        object(
            &p,
            "alice",
            "blocking",
            "## Plan Revisions",
            &format!("t{i}"),
            &[],
        );
    }
    let poll = pair(["poll", p.p(), "--agent", "alice", "--json"]).json();
    let o = &poll["objections"];
    assert_eq!(o["unsettled_count"], 23, "{o:#}");
    let listed = o["unsettled"].as_array().unwrap();
    assert_eq!(listed.len(), 20, "{o:#}");
    assert_eq!(listed[0]["id"], "BLK-1", "{o:#}");
    assert_eq!(listed[19]["id"], "BLK-20", "{o:#}");
    let command: Vec<&str> = poll["next"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let named = command
        .iter()
        .position(|w| *w == "--objections")
        .map(|i| command[i + 1])
        .unwrap_or_else(|| panic!("{command:?}"));
    assert_eq!(named.split(',').count(), 23, "{command:?}");
    let text = pair(["status", p.p()]);
    text.code(0).mentions(&[
        "BLK-20",
        "and 3 more (`pair objections BOARD --open` lists them all)",
    ]);
    assert!(!text.stdout.contains("BLK-21"), "{}", text.stdout);
    let all = pair(["objections", p.p(), "--open", "--json"]).json();
    let n = all
        .as_array()
        .or_else(|| all["objections"].as_array())
        .map(Vec::len);
    assert_eq!(n, Some(23), "{all:#}");
}

#[test]
fn an_anchor_outside_the_worktree_or_not_a_regular_file_is_refused_without_reading_it() {
    let p = code_review(&["--max-rounds", "3"]);
    let wt = std::path::Path::new(&p.wt);
    crate::common::files::mkfifo(&wt.join("pipe.txt"));
    std::os::unix::fs::symlink("/dev/zero", wt.join("zero.txt")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", wt.join("passwd.txt")).unwrap();
    std::fs::write(wt.parent().unwrap().join("outside.txt"), "a\nb\n").unwrap();
    for (bad, words) in [
        ("/etc/passwd:1", &["without `/`"][..]),
        ("/etc/passwd#root", &["without `/`"]),
        ("/nonexistent:1", &["without `/`"]),
        ("../outside.txt:1", &["not a stable anchor"]),
        ("pipe.txt:1", &["FIFO"]),
        ("zero.txt:1", &["device"]),
        ("passwd.txt:1", &["outside"]),
    ] {
        let out = p.refused(
            "alice",
            &[
                "object",
                "--severity",
                "blocking",
                "--anchor",
                bad,
                "--title",
                "t",
                "--evidence",
                "e",
                "--fix",
                "f",
                "--undeclared-impact",
                "coupled",
            ],
            4,
        );
        out.mentions(words);
        // Whether the file exists or how long it is is not told.
        assert!(!out.stderr.contains("no such file"), "{}", out.stderr);
    }
}

/// Each ledger command run by the wrong side is refused before anything else is looked at,
/// naming who runs it: the reviewers raise, accept, reopen and withdraw; the doer resolves and
/// challenges. The ledger's table says so, and each command reads it.
#[test]
fn each_ledger_command_refuses_the_wrong_side_naming_who_runs_it() {
    let p = plan_review(&[]);
    for (who, words, said) in [
        (
            "doer",
            vec![
                "object",
                "--severity",
                "blocking",
                "--anchor",
                "## Goal",
                "--title",
                "t",
                "--evidence",
                "e",
                "--fix",
                "f",
            ],
            "only a reviewer may object; \"doer\" is the doer",
        ),
        (
            "doer",
            vec!["accept", "BLK-1"],
            "only a reviewer may accept; \"doer\" is the doer",
        ),
        (
            "doer",
            vec!["reopen", "BLK-1", "--reason", "r"],
            "only a reviewer may reopen; \"doer\" is the doer",
        ),
        (
            "doer",
            vec!["withdraw", "BLK-1", "--reason", "r"],
            "only a reviewer may withdraw; \"doer\" is the doer",
        ),
        (
            "alice",
            vec!["resolve", "BLK-1", "--resolution", "r"],
            "only the doer (doer) may resolve; \"alice\" is a reviewer",
        ),
        (
            "alice",
            vec!["challenge", "BLK-1", "--grounds", "g"],
            "only the doer (doer) may challenge; \"alice\" is a reviewer",
        ),
    ] {
        p.refused(who, &words, 6).mentions(&[said]);
    }
}

/// A ruling by someone who is not the arbiter says who the arbiter is: with several required
/// reviewers, the user, through `--user-approved`, which the refusal's hint adds.
#[test]
fn a_ruling_by_a_reviewer_among_several_names_the_user_as_the_arbiter() {
    let p = Proto::init(&["--reviewers", "alice,bob", "--yolo"]);
    p.ok("alice", &["register"]);
    p.ok("bob", &["register"]);
    p.ok("doer", &["advance", "PLANNING"]);
    p.ok("doer", &["submit", "plan", "--note", "The plan."]);
    object(&p, "alice", "blocking", "## Goal", "Vague", &[]);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    verdict(&p, "bob", "APPROVED", &[]).code(0);
    p.ok(
        "doer",
        &["challenge", "BLK-1", "--grounds", "The goal is exact."],
    );
    p.refused("bob", &["rule", "BLK-1", "uphold", "--reason", "r"], 6)
        .mentions(&[
            "is made by the user (several reviewers: run it with --user-approved once the user \
             decided); bob may not make it",
        ]);
}
