//! Random sequences of ledger and protocol commands, from random agents, on a board that uses the
//! objection ledger. After every step the board is valid, no gate has more rounds than its cap, and
//! an approved gate has no open blocking objection unless the decision accepted it; and whatever
//! happened, reviewers who keep requesting changes cannot keep the gate going: driving it on always
//! ends it within the cap.

use crate::common::*;
use crate::proto::*;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::Value;

const AGENTS: [&str; 3] = ["doer", "alice", "bob"];

const ANCHORS: [&str; 4] = ["## Goal", "## Step one", "near the top", "## Nowhere"];

#[derive(Debug, Clone)]
enum Step {
    Object {
        who: usize,
        advisory: bool,
        anchor: usize,
        regression: bool,
    },
    Resolve {
        who: usize,
        pick: usize,
    },
    Challenge {
        pick: usize,
    },
    Rule {
        who: usize,
        pick: usize,
        uphold: bool,
        user: bool,
    },
    Accept {
        who: usize,
        pick: usize,
    },
    Reopen {
        who: usize,
        pick: usize,
    },
    Withdraw {
        who: usize,
        pick: usize,
    },
    Verdict {
        who: usize,
        verdict: usize,
        name: bool,
        no_ids: bool,
    },
    Submit {
        waive: bool,
        rework: bool,
    },
    Decide {
        who: usize,
        decision: usize,
        escalate: bool,
        user: bool,
    },
    Unblock,
}

fn step() -> impl Strategy<Value = Step> {
    let who = 0..AGENTS.len();
    prop_oneof![
        4 => (who.clone(), prop::bool::weighted(0.3), 0..ANCHORS.len(), prop::bool::weighted(0.2))
            .prop_map(|(who, advisory, anchor, regression)| Step::Object { who, advisory, anchor, regression }),
        3 => (prop_oneof![4 => Just(0usize), 1 => Just(1usize)], any::<usize>())
            .prop_map(|(who, pick)| Step::Resolve { who, pick }),
        1 => any::<usize>().prop_map(|pick| Step::Challenge { pick }),
        2 => (who.clone(), any::<usize>(), any::<bool>(), prop::bool::weighted(0.3))
            .prop_map(|(who, pick, uphold, user)| Step::Rule { who, pick, uphold, user }),
        2 => (who.clone(), any::<usize>()).prop_map(|(who, pick)| Step::Accept { who, pick }),
        1 => (who.clone(), any::<usize>()).prop_map(|(who, pick)| Step::Reopen { who, pick }),
        1 => (who.clone(), any::<usize>()).prop_map(|(who, pick)| Step::Withdraw { who, pick }),
        6 => (who.clone(), 0..3usize, prop::bool::weighted(0.8), prop::bool::weighted(0.1))
            .prop_map(|(who, verdict, name, no_ids)| Step::Verdict { who, verdict, name, no_ids }),
        4 => (prop::bool::weighted(0.2), prop::bool::weighted(0.1))
            .prop_map(|(waive, rework)| Step::Submit { waive, rework }),
        2 => (who, 0..3usize, prop::bool::weighted(0.8), any::<bool>())
            .prop_map(|(who, decision, escalate, user)| Step::Decide { who, decision, escalate, user }),
        1 => Just(Step::Unblock),
    ]
}

fn json(args: &[&str]) -> Value {
    pair(args).json()
}

fn objections(p: &Proto) -> Vec<Value> {
    json(&["objections", p.p(), "--json"])["objections"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn pick_id(p: &Proto, pick: usize) -> String {
    let all = objections(p);
    if all.is_empty() {
        return "BLK-1".into();
    }
    all[pick % all.len()]["id"].as_str().unwrap().to_string()
}

fn poll(p: &Proto, who: &str) -> Value {
    json(&["poll", p.p(), "--agent", who, "--json"])
}

/// The open blocking ids of `who` on the plan.
fn open_of(p: &Proto, who: &str) -> Vec<String> {
    objections(p)
        .iter()
        .filter(|o| o["by"] == who && o["severity"] == "blocking")
        .filter(|o| o["state"] == "open" || o["state"] == "reopened")
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect()
}

fn run(p: &Proto, s: &Step) {
    let a = |i: usize| AGENTS[i];
    let pl = poll(p, "doer");
    let counter = pl["review"]["counter"].to_string();
    let sha = pl["review"]["artifact"]["sha256"]
        .as_str()
        .unwrap_or("")
        .to_string();
    match s {
        Step::Object {
            who,
            advisory,
            anchor,
            regression,
        } => {
            let mut w = vec![
                "object",
                "--severity",
                if *advisory { "advisory" } else { "blocking" },
                "--anchor",
                ANCHORS[*anchor],
                "--title",
                "A finding",
                "--evidence",
                "e",
                "--fix",
                "f",
            ];
            let cause;
            if *regression {
                cause = pick_id(p, 0);
                w.extend(["--regression-of", cause.as_str()]);
            }
            p.run(a(*who), &w);
        }
        Step::Resolve { who, pick } => {
            p.run(
                a(*who),
                &["resolve", &pick_id(p, *pick), "--resolution", "fixed"],
            );
        }
        Step::Challenge { pick } => {
            p.run(
                "doer",
                &["challenge", &pick_id(p, *pick), "--grounds", "not so"],
            );
        }
        Step::Rule {
            who,
            pick,
            uphold,
            user,
        } => {
            let id = pick_id(p, *pick);
            let mut w = vec![
                "rule",
                id.as_str(),
                if *uphold { "uphold" } else { "overrule" },
                "--reason",
                "r",
            ];
            if *user {
                w.push("--user-approved");
            }
            p.run(a(*who), &w);
        }
        Step::Accept { who, pick } => {
            p.run(a(*who), &["accept", &pick_id(p, *pick)]);
        }
        Step::Reopen { who, pick } => {
            p.run(a(*who), &["reopen", &pick_id(p, *pick), "--reason", "r"]);
        }
        Step::Withdraw { who, pick } => {
            p.run(a(*who), &["withdraw", &pick_id(p, *pick), "--reason", "r"]);
        }
        Step::Verdict {
            who,
            verdict,
            name,
            no_ids,
        } => {
            let v = ["APPROVED", "CHANGES_REQUESTED", "COMMENT"][*verdict];
            let ids = open_of(p, a(*who)).join(",");
            let mut w = vec![
                "verdict",
                v,
                "--revision",
                counter.as_str(),
                "--artifact-sha256",
                sha.as_str(),
                "--note",
                "n",
            ];
            if *name && !ids.is_empty() && *verdict == 1 {
                w.extend(["--objections", ids.as_str()]);
            }
            if *no_ids {
                w.push("--no-objection-ids");
            }
            p.run(a(*who), &w);
        }
        Step::Submit { waive, rework } => {
            let mut w = vec!["submit", "plan", "--note", "The plan again."];
            if *waive {
                w.extend(["--waive", "the user waived them"]);
            }
            if *rework {
                w.extend(["--rework", "--reason", "start over"]);
            }
            p.run("doer", &w);
        }
        Step::Decide {
            who,
            decision,
            escalate,
            user,
        } => {
            let d = ["accept", "reject", "defer"][*decision];
            let mut w = vec!["decide", d, "--reason", "r"];
            if *escalate && *decision == 2 {
                w.extend(["--escalation", "human"]);
            }
            if *user {
                w.push("--user-approved");
            }
            p.run(a(*who), &w);
        }
        Step::Unblock => {
            p.run("doer", &["unblock", "--reason", "r"]);
        }
    }
}

/// The invariants that hold after every step.
fn check(p: &Proto, max_rounds: u64) {
    pair(["validate", p.p()]).code(0);
    let l = json(&["objections", p.p(), "--json"]);
    if let Some(plan) = l["gates"].get("plan") {
        let round = plan["round"].as_u64().unwrap();
        assert!(
            round <= max_rounds,
            "the plan gate is in round {round} of {max_rounds}: {l}"
        );
    }
    if l["phase"] == "PLAN_APPROVED" {
        for o in l["objections"].as_array().unwrap() {
            if o["gate"] == "plan" && o["severity"] == "blocking" {
                assert!(
                    o["state"] != "open" && o["state"] != "reopened" && o["state"] != "challenged",
                    "an approved gate with an open blocking objection: {l}"
                );
                if o["state"] == "risk_accepted" {
                    assert_eq!(l["gates"]["plan"]["stop_reason"], "accepted", "{l}");
                }
            }
        }
    }
}

/// Drive the gate on with reviewers who always request changes: it must end within the cap.
fn finish(p: &Proto, reviewers: &[&str]) {
    for _ in 0..60 {
        let pl = poll(p, "doer");
        let phase = pl["phase"].as_str().unwrap().to_string();
        match phase.as_str() {
            "PLAN_APPROVED" | "STOPPED" => return,
            "BLOCKED" => {
                p.run("doer", &["unblock", "--reason", "go on"]).code(0);
            }
            "AWAITING_DECISION" => {
                let mut w = vec!["decide", "accept", "--reason", "end it"];
                let who = if reviewers.len() == 1 {
                    reviewers[0]
                } else {
                    w.push("--user-approved");
                    "doer"
                };
                p.run(who, &w).code(0);
            }
            "PLANNING_SUBMITTED" | "REVIEWING_PLAN" => {
                let counter = pl["review"]["counter"].to_string();
                let sha = pl["review"]["artifact"]["sha256"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                let who = pl["review"]["pending"][0].as_str().unwrap().to_string();
                // Settle what the reviewer can, then object again and request changes.
                for o in objections(p) {
                    if o["by"] == who.as_str() && o["state"] == "resolved" {
                        p.run(
                            &who,
                            &["reopen", o["id"].as_str().unwrap(), "--reason", "not yet"],
                        );
                    }
                    if o["state"] == "challenged" {
                        let mut w = vec![
                            "rule",
                            o["id"].as_str().unwrap(),
                            "uphold",
                            "--reason",
                            "stands",
                        ];
                        if reviewers.len() > 1 {
                            w.push("--user-approved");
                        }
                        p.run(&who, &w);
                    }
                }
                if open_of(p, &who).is_empty() {
                    p.run(
                        &who,
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
                    )
                    .code(0);
                }
                let ids = open_of(p, &who).join(",");
                p.run(
                    &who,
                    &[
                        "verdict",
                        "CHANGES_REQUESTED",
                        "--revision",
                        &counter,
                        "--artifact-sha256",
                        &sha,
                        "--note",
                        "n",
                        "--objections",
                        &ids,
                    ],
                )
                .code(0);
            }
            "PLAN_CHANGES_REQUESTED" | "PLANNING" => {
                for o in objections(p) {
                    if o["severity"] == "blocking"
                        && (o["state"] == "open" || o["state"] == "reopened")
                    {
                        p.run(
                            "doer",
                            &["resolve", o["id"].as_str().unwrap(), "--resolution", "done"],
                        )
                        .code(0);
                    }
                }
                p.run("doer", &["submit", "plan", "--note", "Again."])
                    .code(0);
            }
            other => panic!("the gate stalled in {other}"),
        }
    }
    panic!("the plan gate did not end within its cap: {}", p.text());
}

proptest! {
    #![proptest_config(Config { cases: 10, max_shrink_iters: 20, failure_persistence: None, ..Config::default() })]
    #[test]
    fn random_ledger_and_protocol_commands_keep_the_board_valid_and_every_gate_ends(
        two in any::<bool>(),
        max_rounds in 1u64..=3,
        steps in prop::collection::vec(step(), 1..18),
    ) {
        let reviewers: Vec<&str> = if two { vec!["alice", "bob"] } else { vec!["alice"] };
        let list = reviewers.join(",");
        let rounds = max_rounds.to_string();
        let p = Proto::init(&["--reviewers", &list, "--yolo", "--max-rounds", &rounds]);
        for r in &reviewers {
            p.run(r, &["register"]).code(0);
        }
        p.run("doer", &["advance", "PLANNING"]).code(0);
        p.run("doer", &["submit", "plan", "--note", "The plan.\n\n### Step one\n\nDo it."]).code(0);
        for s in &steps {
            run(&p, s);
            check(&p, max_rounds);
        }
        finish(&p, &reviewers);
        check(&p, max_rounds);
    }
}
