//! Random commands from random agents on one board never break it, and while the phase is not
//! terminal someone always has a move (SPEC §2.2, §3, §8).

use crate::common::*;
use crate::proto::*;
use proptest::prelude::*;
use proptest::test_runner::Config;

const AGENTS: [&str; 4] = ["doer", "alice", "bob", "mallory"];

const KINDS: [&str; 5] = ["analysis", "plan", "red-test", "code", "followup"];

const VERDICTS: [&str; 3] = ["APPROVED", "CHANGES_REQUESTED", "COMMENT"];

const TARGETS: [&str; 10] = [
    "ANALYZING",
    "PLANNING",
    "RED_TESTING",
    "CODING",
    "COMMITTED",
    "MERGED",
    "CLEANED_UP",
    "PLAN_APPROVED",
    "READY_TO_COMMIT",
    "DRAFT",
];

const SECTIONS: [&str; 4] = ["Evidence", "Goal", "Validation", "Implementation Notes"];

#[derive(Debug, Clone)]
enum Step {
    Register {
        who: usize,
        required: bool,
    },
    Claim {
        who: usize,
    },
    Submit {
        who: usize,
        kind: usize,
        approved: bool,
        no_review: bool,
    },
    Verdict {
        who: usize,
        verdict: usize,
        off: i64,
    },
    Advance {
        who: usize,
        target: usize,
        approved: bool,
        waive: bool,
        relative: bool,
    },
    Block {
        who: usize,
    },
    Unblock {
        who: usize,
    },
    Stop {
        who: usize,
    },
    Note {
        who: usize,
        section: usize,
    },
    /// The move SPEC §3.1 expects next in this phase (a reviewer's verdict in a reviewable
    /// phase, else the doer's submission or advance), so runs get far into the workflow.
    Guided {
        reviewer: usize,
        choice: bool,
        verdict: usize,
    },
}

/// Mostly the doer for doer-ish commands and the reviewers for reviewer-ish ones, but anyone.
fn who(doer_weight: u32, reviewer_weight: u32) -> impl Strategy<Value = usize> {
    prop_oneof![
        doer_weight => Just(0usize),
        reviewer_weight => Just(1usize),
        reviewer_weight => Just(2usize),
        1 => Just(3usize),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (who(1, 6), prop::bool::weighted(0.2))
            .prop_map(|(who, required)| Step::Register { who, required }),
        2 => who(1, 6).prop_map(|who| Step::Claim { who }),
        8 => (who(8, 1), 0..KINDS.len(), prop::bool::weighted(0.85), prop::bool::weighted(0.3))
            .prop_map(|(who, kind, approved, no_review)| Step::Submit { who, kind, approved, no_review }),
        10 => (who(1, 8), prop_oneof![4 => Just(0usize), 2 => Just(1usize), 1 => Just(2usize)],
               prop_oneof![8 => Just(0i64), 1 => Just(-1i64), 1 => Just(1i64)])
            .prop_map(|(who, verdict, off)| Step::Verdict { who, verdict, off }),
        7 => (who(8, 1), 0..TARGETS.len(), prop::bool::weighted(0.85), prop::bool::weighted(0.15), prop::bool::weighted(0.1))
            .prop_map(|(who, target, approved, waive, relative)| Step::Advance { who, target, approved, waive, relative }),
        1 => who(2, 2).prop_map(|who| Step::Block { who }),
        2 => who(4, 1).prop_map(|who| Step::Unblock { who }),
        1 => who(1, 1).prop_map(|who| Step::Stop { who }),
        1 => (who(1, 1), 0..SECTIONS.len()).prop_map(|(who, section)| Step::Note { who, section }),
        40 => (prop_oneof![5 => Just(1usize), 5 => Just(2usize), 1 => Just(3usize)], any::<bool>(),
               prop_oneof![6 => Just(0usize), 2 => Just(1usize), 1 => Just(2usize)])
            .prop_map(|(reviewer, choice, verdict)| Step::Guided { reviewer, choice, verdict }),
    ]
}

fn config() -> impl Strategy<Value = Vec<&'static str>> {
    prop_oneof![
        Just(vec!["--reviewers", "alice,bob"]),
        Just(vec!["--reviewers", "alice"]),
        Just(vec![]),
        Just(vec!["--work-type", "debugging", "--reviewers", "alice,bob"]),
        Just(vec!["--yolo"]),
        Just(vec!["--rca", "--red-test"]),
    ]
}

/// The current counter a verdict should name (the review target's, or the plan's).
fn current_rev(status: &serde_json::Value) -> i64 {
    let phase = status["phase"].as_str().unwrap_or_default();
    let key = target_of(phase).map(|(_, k)| k).unwrap_or("plan_revision");
    status["counters"][key].as_i64().unwrap_or(0)
}

fn words(p: &Proto, s: &Step) -> (String, Vec<String>) {
    let st = p.status();
    match s {
        Step::Register { who, required } => {
            let mut v = vec!["register".to_string()];
            if *required {
                v.push("--required".into());
            }
            (AGENTS[*who].into(), v)
        }
        Step::Claim { who } => (AGENTS[*who].into(), vec!["claim".into()]),
        Step::Submit {
            who,
            kind,
            approved,
            no_review,
        } => {
            let mut v: Vec<String> = vec![
                "submit".into(),
                KINDS[*kind].into(),
                "--note".into(),
                "n".into(),
            ];
            if *approved {
                v.push("--user-approved".into());
            }
            if *no_review {
                v.push("--no-review".into());
            }
            (AGENTS[*who].into(), v)
        }
        Step::Verdict { who, verdict, off } => {
            let rev = (current_rev(&st) + off).max(0);
            (
                AGENTS[*who].into(),
                vec![
                    "verdict".into(),
                    VERDICTS[*verdict].into(),
                    "--revision".into(),
                    rev.to_string(),
                    "--note".into(),
                    "v".into(),
                ],
            )
        }
        Step::Advance {
            who,
            target,
            approved,
            waive,
            relative,
        } => {
            let t = TARGETS[*target];
            let mut v: Vec<String> = vec!["advance".into(), t.into()];
            match t {
                "CODING" => {
                    v.push("--worktree".into());
                    v.push(if *relative {
                        "rel/wt".into()
                    } else {
                        p.wt.clone()
                    });
                }
                "COMMITTED" => {
                    v.push("--commit-sha".into());
                    v.push(SHA_A.into());
                }
                "MERGED" => {
                    v.push("--merged-into".into());
                    v.push("main".into());
                }
                _ => {}
            }
            if *approved {
                v.push("--user-approved".into());
            }
            if *waive {
                v.push("--waive".into());
                v.push("user-waived".into());
            }
            (AGENTS[*who].into(), v)
        }
        Step::Block { who } => (
            AGENTS[*who].into(),
            vec!["block".into(), "--reason".into(), "b".into()],
        ),
        Step::Unblock { who } => (
            AGENTS[*who].into(),
            vec!["unblock".into(), "--reason".into(), "u".into()],
        ),
        Step::Stop { who } => (
            AGENTS[*who].into(),
            vec!["stop".into(), "--reason".into(), "s".into()],
        ),
        Step::Guided {
            reviewer,
            choice,
            verdict,
        } => {
            let phase = st["phase"].as_str().unwrap_or_default();
            if is_reviewable(phase) {
                let r = AGENTS[*reviewer];
                if st["agents"].get(r).is_none() {
                    return (r.into(), vec!["register".into()]);
                }
                return words(
                    p,
                    &Step::Verdict {
                        who: *reviewer,
                        verdict: *verdict,
                        off: 0,
                    },
                );
            }
            let nobody = st["required_reviewers"]
                .as_array()
                .is_none_or(|a| a.is_empty());
            let mut v: Vec<String> = match (phase, *choice) {
                ("DRAFT", false) => vec!["advance".into(), "ANALYZING".into()],
                ("DRAFT", true) => vec!["advance".into(), "PLANNING".into()],
                ("ANALYZING" | "ANALYSIS_CHANGES_REQUESTED", _) => {
                    vec!["submit".into(), "analysis".into()]
                }
                ("ANALYSIS_APPROVED", _) => vec!["advance".into(), "PLANNING".into()],
                ("PLANNING" | "PLAN_CHANGES_REQUESTED", _) => vec!["submit".into(), "plan".into()],
                ("PLAN_APPROVED", false) => vec!["advance".into(), "RED_TESTING".into()],
                ("PLAN_APPROVED", true) | ("RED_TEST_APPROVED", _) => {
                    vec![
                        "advance".into(),
                        "CODING".into(),
                        "--worktree".into(),
                        p.wt.clone(),
                    ]
                }
                ("RED_TESTING" | "RED_TEST_CHANGES_REQUESTED", _) => {
                    vec!["submit".into(), "red-test".into()]
                }
                ("CODING", _) => vec!["submit".into(), "code".into()],
                ("CODE_CHANGES_REQUESTED", _) | ("READY_TO_COMMIT", false) => {
                    vec!["submit".into(), "followup".into()]
                }
                ("READY_TO_COMMIT", true) => vec![
                    "advance".into(),
                    "COMMITTED".into(),
                    "--commit-sha".into(),
                    SHA_A.into(),
                ],
                ("COMMITTED", _) => vec![
                    "advance".into(),
                    "MERGED".into(),
                    "--merged-into".into(),
                    "main".into(),
                ],
                ("MERGED", _) => vec!["advance".into(), "CLEANED_UP".into()],
                ("BLOCKED", _) => vec!["unblock".into(), "--reason".into(), "u".into()],
                _ => vec![
                    "note".into(),
                    "--section".into(),
                    "Evidence".into(),
                    "--note".into(),
                    "x".into(),
                ],
            };
            if v[0] == "submit" {
                v.push("--note".into());
                v.push("n".into());
                if nobody {
                    v.push("--no-review".into());
                }
            }
            if v[0] == "advance" || v[0] == "submit" {
                v.push("--user-approved".into());
            }
            ("doer".into(), v)
        }
        Step::Note { who, section } => (
            AGENTS[*who].into(),
            vec![
                "note".into(),
                "--section".into(),
                SECTIONS[*section].into(),
                "--note".into(),
                "x".into(),
            ],
        ),
    }
}

fn run_steps(init: &[&str], steps: &[Step]) -> Result<(), TestCaseError> {
    let p = Proto::init(init);
    let mut log: Vec<String> = Vec::new();
    for s in steps {
        let (actor, w) = words(&p, s);
        let before = p.b.read();
        let wr: Vec<&str> = w.iter().map(|x| x.as_str()).collect();
        let out = p.run(&actor, &wr);
        log.push(format!("{actor}: pair {} → {:?}", w.join(" "), out.code));
        let ctx = || {
            format!(
                "init {init:?}\nsteps:\n{}\n{}\n--- file ---\n{}",
                log.join("\n"),
                out.report(),
                p.text()
            )
        };
        prop_assert!(
            matches!(out.code, Some(0 | 3 | 4 | 6)),
            "unexpected exit code for a command on a valid board\n{}",
            ctx()
        );
        if out.code != Some(0) {
            prop_assert!(
                p.b.read() == before,
                "a refused command changed the file\n{}",
                ctx()
            );
        }
        let v = pair(["validate", p.p()]);
        prop_assert!(
            v.code == Some(0),
            "validate must accept the board after every step\n{}\n{}",
            v.report(),
            ctx()
        );

        let st = p.status();
        let phase = st["phase"].as_str().unwrap_or_default().to_string();
        if !is_terminal(&phase) {
            let mut pollers: Vec<&str> = vec!["doer", "alice", "bob"];
            if st["agents"].get("mallory").is_some() {
                pollers.push("mallory");
            }
            let mut found = false;
            let mut seen = Vec::new();
            for who in &pollers {
                let (o, pj) = p.poll(who);
                prop_assert!(
                    matches!(o.code, Some(0 | 10)),
                    "poll in a non-terminal phase exits 0 or 10\n{}\n{}",
                    o.report(),
                    ctx()
                );
                prop_assert_eq!(pj["your_turn"].as_bool(), Some(o.code == Some(0)));
                seen.push(format!("{who}: {}", pj["next"]));
                if pj["your_turn"] == true {
                    found = true;
                    break;
                }
            }
            prop_assert!(found, "nobody has a move in {phase}: {seen:#?}\n{}", ctx());
        } else {
            // BLOCKED has its own exit code, 12; the other terminal phases exit 11.
            let (o, _) = p.poll("doer");
            prop_assert_eq!(
                o.code,
                Some(if phase == "BLOCKED" { 12 } else { 11 }),
                "poll on a terminal phase exits 11 (12 when BLOCKED)\n{}",
                ctx()
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        cases: 24,
        max_shrink_iters: 48,
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn random_commands_keep_the_board_valid_and_someone_always_has_a_move(
        init in config(),
        steps in prop::collection::vec(step(), 25),
    ) {
        run_steps(&init, &steps)?;
    }
}
