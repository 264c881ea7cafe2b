//! The dissent stage (`init --dissent`): after the required reviewers pass a gate, a fresh
//! dissenter answers none, advisory or blocking; blocking sends the gate back to the doer, the
//! next dissenter judges the revision against the prior objections, and the third blocking
//! dissent goes to the arbiter's `decide`. Each agent is a separate `pair` process.

use crate::common::{Out, pair};
use serde_json::Value;
use std::path::Path;

fn json(out: &Out) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", out.report()))
}

fn phase(b: &str) -> String {
    json(&pair(["status", b, "--json"]))["phase"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A board whose plan gate requires a dissent stage, alice its one required reviewer, the plan
/// submitted and passed by alice.
fn passed(dir: &Path) -> String {
    let b = dir.join("task.md").to_str().unwrap().to_string();
    pair([
        "init",
        &b,
        "--goal",
        "Add retries to the uploader",
        "--yolo",
        "--reviewers",
        "alice",
        "--dissent",
        "plan",
    ])
    .code(0);
    pair(["register", &b, "--agent", "alice"]).code(0);
    pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
    pair([
        "submit",
        &b,
        "--agent",
        "doer",
        "plan",
        "--note",
        "Step 1: retry.\nStep 2: log.",
    ])
    .code(0);
    pair([
        "verdict",
        &b,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "REVIEWPROSE looks fine",
    ])
    .code(0);
    b
}

fn object(b: &str, who: &str, title: &str, regression_of: Option<&str>) -> String {
    let mut args = vec![
        "object",
        b,
        "--agent",
        who,
        "--severity",
        "blocking",
        "--anchor",
        "## Goal",
        "--title",
        title,
        "--evidence",
        "fails when the network drops",
        "--fix",
        "cap the retries",
    ];
    if let Some(r) = regression_of {
        args.extend(["--regression-of", r]);
    }
    let out = pair(&args);
    assert_eq!(out.code, Some(0), "{}", out.report());
    out.stdout.lines().next().unwrap().trim().to_string()
}

fn dissent(b: &str, who: &str, outcome: &str, revision: &str, ids: &[&str]) -> Out {
    let joined = ids.join(",");
    let mut args = vec![
        "dissent",
        b,
        "--agent",
        who,
        outcome,
        "--revision",
        revision,
        "--note",
        "as read",
    ];
    if !ids.is_empty() {
        args.extend(["--objections", &joined]);
    }
    pair(&args)
}

/// The doer resolves `id` and resubmits; alice passes the new revision.
fn revise(b: &str, id: &str, revision: &str, text: &str) {
    pair([
        "resolve",
        b,
        id,
        "--agent",
        "doer",
        "--resolution",
        "capped",
        "--surfaces",
        "uploader.rs",
    ])
    .code(0);
    pair(["submit", b, "--agent", "doer", "plan", "--note", text]).code(0);
    pair([
        "verdict",
        b,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        revision,
        "--note",
        "ok",
    ])
    .code(0);
}

#[test]
fn a_dissent_stage_that_blocks_twice_passes_on_round_three() {
    let dir = tempfile::tempdir().unwrap();
    let b = passed(dir.path());
    // The reviewers' pass does not approve the gate: it waits for a dissenter.
    assert_eq!(phase(&b), "PLANNING_SUBMITTED");
    pair(["validate", &b]).code(0);
    pair(["register", &b, "--agent", "d1"]).code(0);
    let blk = object(&b, "d1", "Retries never end", None);
    assert_eq!(blk, "BLK-1");
    dissent(&b, "d1", "blocking", "1", &["BLK-1"]).code(0);
    assert_eq!(phase(&b), "PLAN_CHANGES_REQUESTED");

    revise(
        &b,
        "BLK-1",
        "2",
        "Step 1: retry at most 5 times.\nStep 2: log.",
    );
    assert_eq!(phase(&b), "PLANNING_SUBMITTED");
    // The first dissenter may not answer a second cycle.
    let again = dissent(&b, "d1", "none", "2", &[]);
    assert_eq!(again.code, Some(6), "{}", again.report());
    assert!(again.stderr.contains("dissented"), "{}", again.report());
    pair(["register", &b, "--agent", "d2"]).code(0);
    // The prior objection is judged first: none is refused while its resolution waits.
    let early = dissent(&b, "d2", "none", "2", &[]);
    assert_ne!(early.code, Some(0), "{}", early.report());
    pair(["accept", &b, "BLK-1", "--agent", "d2"]).code(0);
    let reg = object(&b, "d2", "The cap hides outages", Some("BLK-1"));
    assert_eq!(reg, "REG-1");
    dissent(&b, "d2", "blocking", "2", &["REG-1"]).code(0);
    assert_eq!(phase(&b), "PLAN_CHANGES_REQUESTED");

    revise(
        &b,
        "REG-1",
        "3",
        "Step 1: retry at most 5 times.\nStep 2: log and alert.",
    );
    pair(["register", &b, "--agent", "d3"]).code(0);
    pair(["accept", &b, "REG-1", "--agent", "d3"]).code(0);
    dissent(&b, "d3", "none", "3", &[]).code(0);
    assert_eq!(phase(&b), "PLAN_APPROVED");
    pair(["validate", &b]).code(0);
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains("Dissent rounds: 3."), "{text}");
    assert!(text.contains("\"plan 3 d3 none\""), "{text}");
    // stats counts the three dissent rounds of the plan gate, each with where it sent the board.
    let v = json(&pair(["stats", &b, "--json"]));
    let answers: Vec<(String, String)> = v["boards"][0]["gates"]["plan"]["dissent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["by"].as_str().unwrap().to_string(),
                d["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        answers,
        [
            ("d1".to_string(), "PLAN_CHANGES_REQUESTED".to_string()),
            ("d2".to_string(), "PLAN_CHANGES_REQUESTED".to_string()),
            ("d3".to_string(), "PLAN_APPROVED".to_string()),
        ]
    );
    assert_eq!(v["total"]["gates"]["plan"]["dissent"], 3, "{v:#}");
    let out = pair(["stats", &b]);
    out.code(0).mentions(&[
        "dissent d1 PLAN_CHANGES_REQUESTED; d2 PLAN_CHANGES_REQUESTED; d3 PLAN_APPROVED",
    ]);
}

#[test]
fn a_dissent_stage_at_its_cap_goes_to_the_arbiter_who_defers_with_an_escalation() {
    let dir = tempfile::tempdir().unwrap();
    let b = passed(dir.path());
    for (round, who) in ["d1", "d2", "d3"].iter().enumerate() {
        let revision = (round + 1).to_string();
        pair(["register", &b, "--agent", who]).code(0);
        if round > 0 {
            // The revision fixed nothing: every prior objection is reopened, one more raised.
            let prior: Vec<String> = (1..=round).map(|n| format!("BLK-{n}")).collect();
            for p in &prior {
                pair(["reopen", &b, p, "--agent", who, "--reason", "still broken"]).code(0);
            }
            let id = object(&b, who, "Another hole", None);
            let mut ids: Vec<&str> = prior.iter().map(String::as_str).collect();
            ids.push(&id);
            dissent(&b, who, "blocking", &revision, &ids).code(0);
        } else {
            let id = object(&b, who, "A hole", None);
            dissent(&b, who, "blocking", &revision, &[&id]).code(0);
        }
        if round < 2 {
            assert_eq!(phase(&b), "PLAN_CHANGES_REQUESTED");
            // Resolve every open blocking objection, then resubmit.
            let open = json(&pair(["objections", &b, "--open", "--json"]));
            for o in open["objections"].as_array().unwrap() {
                if o["state"] == "open" || o["state"] == "reopened" {
                    pair([
                        "resolve",
                        &b,
                        o["id"].as_str().unwrap(),
                        "--agent",
                        "doer",
                        "--resolution",
                        "fixed",
                    ])
                    .code(0);
                }
            }
            let next = (round + 2).to_string();
            pair([
                "submit",
                &b,
                "--agent",
                "doer",
                "plan",
                "--note",
                &format!("v{next}"),
            ])
            .code(0);
            pair([
                "verdict",
                &b,
                "--agent",
                "alice",
                "APPROVED",
                "--revision",
                &next,
                "--note",
                "ok",
            ])
            .code(0);
        }
    }
    assert_eq!(phase(&b), "AWAITING_DECISION");
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(
        text.contains("Dissent round 3 of the plan gate was blocking"),
        "{text}"
    );
    // A silent deferral is refused; the arbiter (alice, the only required reviewer) defers with
    // an escalation path.
    let silent = pair([
        "decide", &b, "defer", "--agent", "alice", "--reason", "later",
    ]);
    assert_eq!(silent.code, Some(4), "{}", silent.report());
    pair([
        "decide",
        &b,
        "defer",
        "--agent",
        "alice",
        "--reason",
        "needs an architecture review",
        "--escalation",
        "human",
    ])
    .code(0);
    assert_eq!(phase(&b), "BLOCKED");
    pair(["validate", &b]).code(0);
}

#[test]
fn neither_the_doer_nor_a_reviewer_of_the_gate_may_dissent() {
    let dir = tempfile::tempdir().unwrap();
    let b = passed(dir.path());
    let before = std::fs::read(&b).unwrap();
    for who in ["doer", "alice"] {
        let out = dissent(&b, who, "none", "1", &[]);
        assert_ne!(out.code, Some(0), "{who}: {}", out.report());
        assert!(
            out.stderr.contains("doer") || out.stderr.contains("reviewer"),
            "{who}: {}",
            out.report()
        );
        let raise = pair([
            "object",
            &b,
            "--agent",
            who,
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
        ]);
        assert_ne!(raise.code, Some(0), "{who}: {}", raise.report());
    }
    assert_eq!(
        std::fs::read(&b).unwrap(),
        before,
        "refusals leave the board untouched"
    );
    // An agent not on the board is told to register, then may answer.
    let v = json(&pair(["poll", &b, "--agent", "fresh", "--json"]));
    assert_eq!(v["next"]["command"][1], "register", "{v:#}");
    pair(["register", &b, "--agent", "fresh"]).code(0);
    let v = json(&pair(["poll", &b, "--agent", "fresh", "--json"]));
    assert_eq!(v["next"]["command"][1], "dissent", "{v:#}");
    dissent(&b, "fresh", "none", "1", &[]).code(0);
    assert_eq!(phase(&b), "PLAN_APPROVED");
}

#[test]
fn an_advisory_dissent_approves_and_its_notes_reach_the_consensus_entry() {
    let dir = tempfile::tempdir().unwrap();
    let b = passed(dir.path());
    pair(["register", &b, "--agent", "d1"]).code(0);
    // advisory needs an advisory objection of the dissenter's
    assert_ne!(dissent(&b, "d1", "advisory", "1", &[]).code, Some(0));
    pair([
        "object",
        &b,
        "--agent",
        "d1",
        "--severity",
        "advisory",
        "--anchor",
        "## Goal",
        "--title",
        "Backoff is linear",
        "--evidence",
        "e",
        "--fix",
        "exponential",
    ])
    .code(0);
    assert_ne!(dissent(&b, "d1", "none", "1", &[]).code, Some(0));
    dissent(&b, "d1", "advisory", "1", &[]).code(0);
    assert_eq!(phase(&b), "PLAN_APPROVED");
    let text = std::fs::read_to_string(&b).unwrap();
    let consensus = text
        .split("### Consensus — plan")
        .nth(1)
        .expect("a consensus entry");
    assert!(consensus.contains("ADV-1"), "{consensus}");
    assert!(consensus.contains("Dissent rounds: 1."), "{consensus}");
}

#[test]
fn the_dissenters_brief_is_the_bundle_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let b = passed(dir.path());
    pair([
        "note",
        &b,
        "--agent",
        "doer",
        "--section",
        "Implementation Notes",
        "--note",
        "DOERREASONING I think",
    ])
    .code(0);
    let first = pair(["brief", &b, "--for", "dissenter"]);
    assert_eq!(first.code, Some(0), "{}", first.report());
    assert!(first.stdout.contains("## TASK_SPEC"), "{}", first.stdout);
    assert!(first.stdout.contains("## ARTIFACT"), "{}", first.stdout);
    assert!(
        !first.stdout.contains("PRIOR_OBJECTIONS"),
        "{}",
        first.stdout
    );
    pair(["register", &b, "--agent", "d1"]).code(0);
    object(&b, "d1", "Retries never end", None);
    dissent(&b, "d1", "blocking", "1", &["BLK-1"]).code(0);
    revise(
        &b,
        "BLK-1",
        "2",
        "Step 1: retry at most 5 times.\nStep 2: log.",
    );
    let out = pair(["brief", &b, "--for", "dissenter", "--json"]);
    let v = json(&out);
    let titles: Vec<&str> = v["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "TASK_SPEC",
            "ARTIFACT",
            "PRIOR_OBJECTIONS",
            "RESOLUTIONS",
            "DIFF",
            "IMPACTED_SURFACES",
            "Next step"
        ]
    );
    let md = v["markdown"].as_str().unwrap();
    for absent in ["DOERREASONING", "REVIEWPROSE"] {
        assert!(!md.contains(absent), "{absent} leaked:\n{md}");
    }
    assert!(md.contains("+Step 1: retry at most 5 times."), "{md}");
    assert!(md.contains("-Step 1: retry."), "{md}");
    assert!(md.contains("- uploader.rs"), "{md}");
    assert!(md.contains("Retries never end"), "{md}");
}

/// Whether a board text approves the plan without a passing dissent on its current revision
/// (and without the arbiter's `decide accept`).
fn approved_without_dissent(text: &str) -> bool {
    if !text.contains("\nphase: PLAN_APPROVED\n") {
        return false;
    }
    let n = text
        .lines()
        .find_map(|l| l.strip_prefix("plan_revision: "))
        .unwrap_or("0");
    let passed = text.lines().any(|l| {
        let l = l.trim();
        l.starts_with(&format!("- \"plan {n} "))
            && (l.ends_with(" none\"") || l.ends_with(" advisory\""))
    });
    !passed && !text.contains("stop_reason: accepted")
}

fn current_revision(b: &str) -> String {
    json(&pair(["status", b, "--json"]))["counters"]["plan"]
        .as_u64()
        .map_or_else(
            || {
                let text = std::fs::read_to_string(b).unwrap();
                text.lines()
                    .find_map(|l| l.strip_prefix("plan_revision: "))
                    .unwrap_or("0")
                    .to_string()
            },
            |n| n.to_string(),
        )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, max_shrink_iters: 16, failure_persistence: None, ..Default::default() })]
    /// Random sequences of the commands of every agent (reviews, dissents, objections,
    /// resolutions, decisions, and raw writes that try to approve the plan) never leave the plan
    /// approved without a passing dissent on its current revision, and every board stays valid.
    #[test]
    fn random_commands_never_approve_a_dissent_gate_without_its_dissent(
        steps in proptest::collection::vec(0u8..10, 1..24)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path().join("task.md").to_str().unwrap().to_string();
        pair(["init", &b, "--goal", "g", "--yolo", "--reviewers", "alice", "--dissent", "plan"]).code(0);
        pair(["register", &b, "--agent", "alice"]).code(0);
        pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
        for (i, s) in steps.iter().enumerate() {
            let d = format!("d{}", i % 3);
            let n = current_revision(&b);
            let _ = match s {
                0 => pair(["submit", &b, "--agent", "doer", "plan", "--note", "p"]),
                1 => pair(["verdict", &b, "--agent", "alice", "APPROVED", "--revision", &n, "--note", "ok"]),
                2 => pair(["verdict", &b, "--agent", "alice", "CHANGES_REQUESTED", "--no-objection-ids", "--revision", &n, "--note", "no"]),
                3 => pair(["register", &b, "--agent", &d]),
                4 => pair(["dissent", &b, "--agent", &d, "none", "--revision", &n]),
                5 => {
                    pair(["object", &b, "--agent", &d, "--severity", "blocking", "--anchor", "## Goal", "--title", "t", "--evidence", "e", "--fix", "f"]);
                    let open = json(&pair(["objections", &b, "--open", "--json"]));
                    let ids: Vec<String> = open["objections"].as_array().map(|a| a.iter()
                        .filter(|o| o["state"] == "open" || o["state"] == "reopened")
                        .map(|o| o["id"].as_str().unwrap().to_string()).collect()).unwrap_or_default();
                    pair(["dissent", &b, "--agent", &d, "blocking", "--revision", &n, "--objections", &ids.join(",")])
                }
                6 => {
                    for k in 1..=3 {
                        pair(["resolve", &b, &format!("BLK-{k}"), "--agent", "doer", "--resolution", "r"]);
                    }
                    pair(["advance", &b, "--agent", "doer", "PLANNING"])
                }
                7 => {
                    for k in 1..=3 {
                        pair(["accept", &b, &format!("BLK-{k}"), "--agent", &d]);
                    }
                    pair(["decide", &b, "accept", "--agent", "alice", "--reason", "r"])
                }
                8 => {
                    // A raw write that says the plan is approved, by each agent in turn.
                    let text = std::fs::read_to_string(&b).unwrap();
                    let forged = dir.path().join("forged.md");
                    let start = text.find("\nphase: ").map(|p| p + 1).unwrap();
                    let end = start + text[start..].find('\n').unwrap();
                    let mut f = text.clone();
                    f.replace_range(start..end, "phase: PLAN_APPROVED");
                    std::fs::write(&forged, f).unwrap();
                    let sha = json(&pair(["status", &b, "--json"]))["sha256"].as_str().unwrap().to_string();
                    let who = ["alice", "doer", d.as_str()][i % 3];
                    pair(["write", &b, "--as", who, "--content-file", forged.to_str().unwrap(), "--expect-sha256", &sha])
                }
                _ => pair(["unblock", &b, "--agent", "doer", "--reason", "go on"]),
            };
            let text = std::fs::read_to_string(&b).unwrap();
            proptest::prop_assert!(!approved_without_dissent(&text), "step {i} ({s}) of {steps:?}:\n{text}");
            let valid = pair(["validate", &b]);
            proptest::prop_assert_eq!(valid.code, Some(0), "step {} of {:?}: {}", i, steps, valid.report());
        }
    }
}

#[test]
fn a_board_with_a_dissent_stage_cannot_work_without_reviewers() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("task.md").to_str().unwrap().to_string();
    pair(["init", &b, "--goal", "G", "--yolo", "--dissent", "plan"]).code(0);
    pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
    let before = std::fs::read(&b).unwrap();
    // Nobody reviews, so the submission would approve itself past the dissenter.
    let out = pair([
        "submit",
        &b,
        "--agent",
        "doer",
        "plan",
        "--note",
        "Step 1.",
        "--no-review",
    ]);
    assert_eq!(out.code, Some(6), "{}", out.report());
    assert!(
        out.stderr.contains("dissent stage") && out.stderr.contains("pair register"),
        "{}",
        out.report()
    );
    assert_eq!(std::fs::read(&b).unwrap(), before, "the board was changed");
    // A raw write that turns no_review on is refused by the same rule.
    let text = String::from_utf8(before.clone()).unwrap();
    let raw = dir.path().join("raw.md");
    std::fs::write(&raw, text.replace("no_review: false", "no_review: true")).unwrap();
    let sha = crate::common::sha256_hex(&before);
    let out = pair([
        "write",
        &b,
        "--as",
        "doer",
        "--content-file",
        raw.to_str().unwrap(),
        "--expect-sha256",
        &sha,
    ]);
    assert_ne!(out.code, Some(0), "{}", out.report());
    assert!(out.stderr.contains("dissent stage"), "{}", out.report());
    assert_eq!(std::fs::read(&b).unwrap(), before);
}

/// A board whose analysis and plan gates require a dissent stage, alice their one required
/// reviewer: `dana` answers the analysis gate, and the plan is submitted and passed by alice.
fn two_gates(dir: &Path, extra: &[&str]) -> String {
    let b = dir.join("task.md").to_str().unwrap().to_string();
    let mut init = vec![
        "init",
        b.as_str(),
        "--goal",
        "Add retries to the uploader",
        "--yolo",
        "--rca",
        "--reviewers",
        "alice",
        "--dissent",
        "analysis,plan",
    ];
    init.extend(extra);
    pair(&init).code(0);
    pair(["register", &b, "--agent", "alice"]).code(0);
    pair(["advance", &b, "--agent", "doer", "ANALYZING"]).code(0);
    pair([
        "submit",
        &b,
        "--agent",
        "doer",
        "analysis",
        "--note",
        "The loop.",
    ])
    .code(0);
    let ok = ["--revision", "1", "--note", "ok"];
    pair([&["verdict", &b, "--agent", "alice", "APPROVED"][..], &ok].concat()).code(0);
    pair(["register", &b, "--agent", "dana"]).code(0);
    dissent(&b, "dana", "none", "1", &[]).code(0);
    assert_eq!(phase(&b), "ANALYSIS_APPROVED");
    pair(["advance", &b, "--agent", "doer", "PLANNING"]).code(0);
    pair([
        "submit",
        &b,
        "--agent",
        "doer",
        "plan",
        "--note",
        "Step 1: retry.",
    ])
    .code(0);
    pair([&["verdict", &b, "--agent", "alice", "APPROVED"][..], &ok].concat()).code(0);
    assert_eq!(phase(&b), "PLANNING_SUBMITTED");
    b
}

#[test]
fn a_dissenter_acts_on_one_cycle_of_a_board_and_a_fresh_id_answers_the_next_gate() {
    let dir = tempfile::tempdir().unwrap();
    let b = two_gates(dir.path(), &[]);
    // The used-up dissenter is offered nothing at the second gate.
    let v = json(&pair(["poll", &b, "--agent", "dana", "--json"]));
    assert_eq!(v["your_turn"], false, "{v:#}");
    assert_ne!(v["next"]["command"][1], "dissent", "{v:#}");
    assert!(
        !v["next"]["handoff_to"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == "dana"),
        "{v:#}"
    );
    // Its dissent is refused, exit 6, naming the step: a fresh id; the board is untouched.
    let before = std::fs::read(&b).unwrap();
    let out = dissent(&b, "dana", "none", "1", &[]);
    assert_eq!(out.code, Some(6), "{}", out.report());
    assert!(
        out.stderr
            .contains("already dissented on this board (analysis 1)"),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("register"), "{}", out.report());
    let e = pair([
        "dissent",
        &b,
        "--agent",
        "dana",
        "none",
        "--revision",
        "1",
        "--note",
        "again",
        "--json",
    ])
    .json_error(6);
    assert_eq!(e["kind"], "protocol", "{e:#}");
    assert_eq!(e["hint"]["argv"][1], "register", "{e:#}");
    assert_eq!(
        std::fs::read(&b).unwrap(),
        before,
        "the refusal leaves the board untouched"
    );
    // Nor may a raw write turn the setting on: it is the user's, made with the board.
    let text = String::from_utf8(before.clone()).unwrap();
    let raw = dir.path().join("raw.md");
    let set = text.replace(
        "dissent_gates: [analysis, plan]\n",
        "dissent_gates: [analysis, plan]\ndissent_every_cycle: true\n",
    );
    assert_ne!(set, text);
    std::fs::write(&raw, set).unwrap();
    let sha = crate::common::sha256_hex(&before);
    let out = pair([
        "write",
        &b,
        "--as",
        "dana",
        "--content-file",
        raw.to_str().unwrap(),
        "--expect-sha256",
        &sha,
    ]);
    assert_eq!(out.code, Some(6), "{}", out.report());
    assert!(
        out.stderr.contains("dissent_every_cycle"),
        "{}",
        out.report()
    );
    assert_eq!(std::fs::read(&b).unwrap(), before);
    // A fresh id is offered the dissent and answers it.
    pair(["register", &b, "--agent", "erin"]).code(0);
    let v = json(&pair(["poll", &b, "--agent", "erin", "--json"]));
    assert_eq!(v["next"]["command"][1], "dissent", "{v:#}");
    dissent(&b, "erin", "none", "1", &[]).code(0);
    assert_eq!(phase(&b), "PLAN_APPROVED");
    pair(["validate", &b]).code(0);
}

#[test]
fn a_board_made_with_dissenter_every_cycle_lets_one_dissenter_answer_every_gate() {
    let dir = tempfile::tempdir().unwrap();
    let b = two_gates(dir.path(), &["--dissenter-every-cycle"]);
    assert!(
        std::fs::read_to_string(&b)
            .unwrap()
            .contains("\ndissent_every_cycle: true\n")
    );
    let v = json(&pair(["status", &b, "--json"]));
    assert_eq!(v["frontmatter"]["dissent_every_cycle"], true, "{v:#}");
    let v = json(&pair(["poll", &b, "--agent", "dana", "--json"]));
    assert_eq!(v["next"]["command"][1], "dissent", "{v:#}");
    dissent(&b, "dana", "none", "1", &[]).code(0);
    assert_eq!(phase(&b), "PLAN_APPROVED");
    pair(["validate", &b]).code(0);
    // The setting needs a dissent stage, and no pairing board without one carries it.
    let other = dir.path().join("other.md").to_str().unwrap().to_string();
    let out = pair(["init", &other, "--goal", "g", "--dissenter-every-cycle"]);
    assert_eq!(out.code, Some(4), "{}", out.report());
}
