//! No dead ends in the objection ledger: random lifecycles with objections run in memory through
//! the engine the commands use (`transaction::apply`, which the law judges), and in every state
//! they reach that is not terminal (and in BLOCKED, which `unblock` resumes), every objection
//! still to be settled can be settled by commands the law permits — within three, without
//! moving the work on: its raiser withdraws or accepts it, the doer resolves it (naming the
//! submission that fixed it once its gate has closed), the arbiter overrules it or accepts the
//! gate, the doer unblocks.

use crate::common::*;
use pair::board::frontmatter::{Frontmatter, Observed, Phase, Sha256, Target, Timestamp, Verdict};
use pair::board::ledger::{Severity, State};
use pair::law::protocol::{self, Artifact, Command, To};
use pair::law::{Consent, validate};
use pair::ops::ledger::{self as ledger, Decision, Raise, Ruling};
use pair::ops::{self, AdvanceArgs};
use pair::transaction;
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::cell::Cell;
use std::path::Path;

const AGENTS: [&str; 3] = ["doer", "alice", "bob"];

/// One edit of a board by one agent, with or without the user's word.
type OpFn = Box<dyn Fn(&mut Frontmatter, &ops::Ctx) -> pair::Result<ops::Edit>>;

struct Op {
    who: String,
    user: bool,
    f: OpFn,
}

fn op(
    who: &str,
    user: bool,
    f: impl Fn(&mut Frontmatter, &ops::Ctx) -> pair::Result<ops::Edit> + 'static,
) -> Op {
    Op {
        who: who.to_string(),
        user,
        f: Box::new(f),
    }
}

fn fm_of(bytes: &[u8]) -> Frontmatter {
    validate::check_bytes(bytes)
        .expect("the board stays valid")
        .parsed
        .fm
}

/// Apply `op` to `bytes`: the new board, or `None` when the law (or the operation) refuses it.
fn apply(bytes: &[u8], op: &Op, now: &Cell<i64>) -> Option<Vec<u8>> {
    try_apply(bytes, op, now).ok()
}

/// [`apply`], with the refusal.
fn try_apply(bytes: &[u8], op: &Op, now: &Cell<i64>) -> pair::Result<Vec<u8>> {
    now.set(now.get() + 1);
    let at = Timestamp(
        Timestamp::parse("2026-03-01T00:00:00Z").expect("time").0
            + chrono::Duration::seconds(now.get()),
    );
    let consent = Consent {
        user_approved: op.user,
        invocation: "pair test".to_string(),
        ..Consent::default()
    };
    let applied = transaction::apply(
        Path::new("board.md"),
        bytes,
        &op.who,
        &consent,
        &Default::default(),
        at,
        |fm, ctx| (op.f)(fm, ctx),
    )?;
    assert!(
        validate::check_bytes(&applied.bytes).is_ok(),
        "an accepted step left an invalid board"
    );
    Ok(applied.bytes)
}

/// What a submission pins, as the commands pin it (a diff's content changes every round).
fn observed(fm: &Frontmatter, a: Artifact) -> Option<Observed> {
    let n = fm.counter(a.target()) + 1;
    match a {
        Artifact::Code | Artifact::Followup => Some(Observed {
            kind: a.pin_kinds()[0],
            sha256: Sha256::of(format!("{} diff {n}", a.as_str()).as_bytes()),
            files: vec![],
            tree: None,
            published: None,
        }),
        _ => Some(pair::repo::pin::text("the artifact")),
    }
}

fn raise(advisory: bool) -> Raise {
    Raise {
        severity: if advisory {
            Severity::Advisory
        } else {
            Severity::Blocking
        },
        regression_of: None,
        anchor: "## Goal".to_string(),
        title: "A finding".to_string(),
        evidence: "It fails.".to_string(),
        fix: "Fix it.".to_string(),
        undeclared: None,
        checked: None,
    }
}

/// The latest submission of the board, as `--fixed-in` names one.
fn latest(fm: &Frontmatter) -> Option<(Target, u32)> {
    Target::ALL
        .iter()
        .rev()
        .find(|t| fm.counter(**t) > 0)
        .map(|t| (*t, fm.counter(*t)))
}

#[derive(Debug, Clone)]
enum Step {
    /// The move the protocol expects next (a pending reviewer's verdict, the doer's next row),
    /// with the doer resolving the open blocking objections first.
    Guided {
        pick: usize,
        verdict: usize,
    },
    Object {
        who: usize,
        advisory: bool,
    },
    Resolve {
        pick: usize,
        fixed: bool,
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
    Decide {
        who: usize,
        decision: usize,
        user: bool,
    },
    Block {
        who: usize,
    },
    Unblock,
}

fn step() -> impl Strategy<Value = Step> {
    let who = 0..AGENTS.len();
    prop_oneof![
        10 => (any::<usize>(), prop::sample::select(vec![0usize, 0, 0, 1, 2]))
            .prop_map(|(pick, verdict)| Step::Guided { pick, verdict }),
        4 => (who.clone(), prop::bool::weighted(0.5)).prop_map(|(who, advisory)| Step::Object { who, advisory }),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(pick, fixed)| Step::Resolve { pick, fixed }),
        1 => any::<usize>().prop_map(|pick| Step::Challenge { pick }),
        1 => (who.clone(), any::<usize>(), any::<bool>(), any::<bool>())
            .prop_map(|(who, pick, uphold, user)| Step::Rule { who, pick, uphold, user }),
        1 => (who.clone(), any::<usize>()).prop_map(|(who, pick)| Step::Accept { who, pick }),
        1 => (who.clone(), any::<usize>()).prop_map(|(who, pick)| Step::Reopen { who, pick }),
        1 => (who.clone(), any::<usize>()).prop_map(|(who, pick)| Step::Withdraw { who, pick }),
        1 => (who.clone(), 0..3usize, any::<bool>()).prop_map(|(who, decision, user)| Step::Decide { who, decision, user }),
        1 => who.prop_map(|who| Step::Block { who }),
        1 => Just(Step::Unblock),
    ]
}

fn pick(fm: &Frontmatter, pick: usize) -> String {
    let all = &fm.ledger.objections;
    if all.is_empty() {
        "BLK-1".to_string()
    } else {
        all[pick % all.len()].id.clone()
    }
}

/// The operations a step means on the board as it stands (tried in order; the first accepted
/// one is taken).
fn ops_of(fm: &Frontmatter, s: &Step) -> Vec<Op> {
    let a = |i: usize| AGENTS[i];
    match s.clone() {
        Step::Guided { pick, verdict } => guided(fm, pick, verdict),
        Step::Object { who, advisory } => {
            vec![op(a(who), false, move |fm, ctx| {
                ledger::object(fm, ctx, &raise(advisory))
            })]
        }
        Step::Resolve { pick: p, fixed } => {
            let id = pick(fm, p);
            let at = latest(fm).filter(|_| fixed);
            vec![op("doer", false, move |fm, ctx| {
                ledger::resolve(fm, ctx, &id, "fixed", &[], at)
            })]
        }
        Step::Challenge { pick: p } => {
            let id = pick(fm, p);
            vec![op("doer", false, move |fm, ctx| {
                ledger::challenge(fm, ctx, &id, "not so")
            })]
        }
        Step::Rule {
            who,
            pick: p,
            uphold,
            user,
        } => {
            let id = pick(fm, p);
            let r = if uphold {
                Ruling::Uphold
            } else {
                Ruling::Overrule
            };
            vec![op(a(who), user, move |fm, ctx| {
                ledger::rule(fm, ctx, &id, r, "ruled")
            })]
        }
        Step::Accept { who, pick: p } => {
            let id = pick(fm, p);
            vec![op(a(who), false, move |fm, ctx| {
                ledger::accept(fm, ctx, &id)
            })]
        }
        Step::Reopen { who, pick: p } => {
            let id = pick(fm, p);
            vec![op(a(who), false, move |fm, ctx| {
                ledger::reopen(fm, ctx, &id, "not fixed")
            })]
        }
        Step::Withdraw { who, pick: p } => {
            let id = pick(fm, p);
            vec![op(a(who), false, move |fm, ctx| {
                ledger::withdraw(fm, ctx, &id, "taken back")
            })]
        }
        Step::Decide {
            who,
            decision,
            user,
        } => {
            let d = [Decision::Accept, Decision::Reject, Decision::Defer][decision];
            vec![op(a(who), user, move |fm, ctx| {
                let escalation = (d == Decision::Defer).then_some("human");
                ledger::decide(fm, ctx, d, "decided", escalation)
            })]
        }
        Step::Block { who } => vec![op(a(who), false, |fm, ctx| ops::block(fm, ctx, "stuck"))],
        Step::Unblock => vec![op("doer", false, |fm, ctx| ops::unblock(fm, ctx, "go on"))],
    }
}

fn advance_args(to: Phase) -> AdvanceArgs {
    AdvanceArgs {
        worktree: (to == Phase::Coding).then(|| "/abs/wt".to_string()),
        commit_sha: (to == Phase::Committed)
            .then(|| "0123456789abcdef0123456789abcdef01234567".to_string()),
        merged_into: (to == Phase::Merged).then(|| "main".to_string()),
        note: None,
        keep_branch: false,
        facts: None,
    }
}

/// The move the protocol expects next. A reviewer requesting changes raises a blocking
/// objection first (the ledger asks a request for changes to name one); the doer resolves the
/// gate's open blocking objections before it submits.
fn guided(fm: &Frontmatter, pick: usize, verdict: usize) -> Vec<Op> {
    if let Some(t) = fm.phase.review_target() {
        let r = protocol::round(fm, t);
        if !r.pending.is_empty() {
            let who = r.pending[pick % r.pending.len()].clone();
            let counter = r.counter;
            let open = fm.ledger.open_blocking(t, Some(std::slice::from_ref(&who)));
            let v = match verdict {
                _ if !open.is_empty() => Verdict::ChangesRequested,
                1 => {
                    return vec![op(&who, false, |fm, ctx| {
                        ledger::object(fm, ctx, &raise(false))
                    })];
                }
                2 => Verdict::Comment,
                _ => Verdict::Approved,
            };
            return vec![op(&who, false, move |fm, ctx| {
                let judged = fm
                    .phase
                    .review_target()
                    .and_then(|t| fm.pin(t))
                    .map(|p| p.sha256);
                ops::verdict(fm, ctx, v, counter, "reviewed", judged)
            })];
        }
    }
    if let Some(t) = revising_gate(fm) {
        let open = fm.ledger.open_blocking(t, None);
        if let Some(id) = open.first().cloned() {
            return vec![op("doer", false, move |fm, ctx| {
                ledger::resolve(fm, ctx, &id, "fixed", &[], None)
            })];
        }
    }
    match protocol::doer_next(fm) {
        Some(t) => match (t.command, t.to) {
            (Command::Submit(a), _) => vec![op("doer", true, move |fm, ctx| {
                let pin = observed(fm, a);
                ops::submit(fm, ctx, a, "the artifact", false, pin)
            })],
            (_, To::Phase(to)) if to != Phase::Committed => {
                vec![op("doer", true, move |fm, ctx| {
                    ops::advance(fm, ctx, to, &advance_args(to))
                })]
            }
            _ => vec![],
        },
        None => vec![],
    }
}

/// The gate the doer revises now, if any.
fn revising_gate(fm: &Frontmatter) -> Option<Target> {
    pair::board::ledger::revising(fm.phase)
        .or_else(|| (fm.phase == Phase::ReadyToCommit).then_some(Target::Code))
}

/// The commands that could settle objection `id`, or bring the board to where it can be: its
/// raiser withdraws or accepts it, the doer resolves it (with or without naming the latest
/// submission), the arbiter (the only required reviewer, or the doer with the user's word)
/// overrules it or accepts the gate awaiting a decision, the doer unblocks.
fn settling(fm: &Frontmatter, id: &str) -> Vec<Op> {
    let o = fm.ledger.get(id).expect("the objection").clone();
    let mut out = Vec::new();
    let by = o.by.clone();
    let i = id.to_string();
    out.push(op(&by, false, move |fm, ctx| {
        ledger::withdraw(fm, ctx, &i, "taken back")
    }));
    let i = id.to_string();
    out.push(op(&by, false, move |fm, ctx| ledger::accept(fm, ctx, &i)));
    for at in [None, latest(fm)] {
        let i = id.to_string();
        out.push(op("doer", false, move |fm, ctx| {
            ledger::resolve(fm, ctx, &i, "fixed", &[], at)
        }));
    }
    let mut arbiters: Vec<(String, bool)> = vec![("doer".to_string(), true)];
    if let [one] = fm.required_reviewers.as_slice() {
        arbiters.push((one.clone(), false));
    }
    for (who, user) in arbiters {
        let i = id.to_string();
        out.push(op(&who, user, move |fm, ctx| {
            ledger::rule(fm, ctx, &i, Ruling::Overrule, "struck")
        }));
        out.push(op(&who, user, |fm, ctx| {
            ledger::decide(fm, ctx, Decision::Accept, "as it stands", None)
        }));
    }
    out.push(op("doer", false, |fm, ctx| ops::unblock(fm, ctx, "go on")));
    out
}

fn settled(bytes: &[u8], id: &str) -> bool {
    fm_of(bytes)
        .ledger
        .get(id)
        .is_some_and(|o| !o.state.is_unsettled())
}

/// Whether objection `id` can be settled from `bytes` within `depth` commands.
fn can_settle(bytes: &[u8], id: &str, depth: u32, now: &Cell<i64>) -> bool {
    if settled(bytes, id) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let fm = fm_of(bytes);
    settling(&fm, id).iter().any(|o| {
        apply(bytes, o, now)
            .is_some_and(|next| next != bytes && can_settle(&next, id, depth - 1, now))
    })
}

/// Check every unsettled objection of a board that is not terminal (or is BLOCKED).
fn no_dead_end(bytes: &[u8], trail: &[String], now: &Cell<i64>) -> Result<(), TestCaseError> {
    let fm = fm_of(bytes);
    if fm.phase.is_terminal() && fm.phase != Phase::Blocked {
        return Ok(());
    }
    for o in fm
        .ledger
        .objections
        .iter()
        .filter(|o| o.state.is_unsettled())
    {
        prop_assert!(
            can_settle(bytes, &o.id, 3, now),
            "{} ({} {} on the {} gate, by {}) cannot be settled in phase {}; after:\n{}\n--- board ---\n{}",
            o.id,
            o.state,
            o.severity,
            o.gate,
            o.by,
            fm.phase,
            trail.join("\n"),
            String::from_utf8_lossy(bytes)
        );
    }
    Ok(())
}

fn initial(reviewers: &[&str], red_test: bool) -> Vec<u8> {
    let list = reviewers.join(",");
    // The engine runs in memory, without the journal the store seals each write with, so the
    // board is of format 1, whose frontmatter does not carry the journal's seal.
    let mut args = vec![
        "--reviewers",
        list.as_str(),
        "--yolo",
        "--max-rounds",
        "3",
        "--format",
        "1",
    ];
    if red_test {
        args.push("--red-test");
    }
    let b = init_board(&args);
    let mut bytes = unjournaled(&b.read());
    // The reviewers register, in memory like the rest.
    let now = Cell::new(0);
    for r in reviewers {
        bytes = apply(
            &bytes,
            &op(r, false, |fm, ctx| ops::register(fm, ctx, false)),
            &now,
        )
        .expect("register");
    }
    bytes
}

proptest! {
    #![proptest_config(Config { cases: 32, max_shrink_iters: 64, failure_persistence: None, ..Config::default() })]

    #[test]
    fn every_open_objection_can_be_settled_from_every_reachable_state(
        two in any::<bool>(),
        red_test in any::<bool>(),
        steps in prop::collection::vec(step(), 1..70),
    ) {
        let reviewers: &[&str] = if two { &["alice", "bob"] } else { &["alice"] };
        let mut bytes = initial(reviewers, red_test);
        let now = Cell::new(100);
        let mut trail = Vec::new();
        for s in &steps {
            let fm = fm_of(&bytes);
            for o in ops_of(&fm, s) {
                if let Some(next) = apply(&bytes, &o, &now) {
                    trail.push(format!("{s:?} by {} → {}", o.who, fm_of(&next).phase));
                    bytes = next;
                    break;
                }
            }
            no_dead_end(&bytes, &trail, &now)?;
        }
        // The first guided step (DRAFT → PLANNING) is always accepted: the run went somewhere.
        prop_assert!(
            !trail.is_empty() || !steps.iter().any(|s| matches!(s, Step::Guided { .. })),
            "no step was accepted: {steps:?}"
        );
    }
}

#[test]
fn an_advisory_left_open_on_the_approved_plan_is_settled_later_not_left_for_good() {
    // The case that was a dead end: an advisory on the plan, the plan approved with it open.
    let now = Cell::new(100);
    let mut bytes = initial(&["alice"], false);
    let run = |bytes: &[u8], o: Op| {
        try_apply(bytes, &o, &now).unwrap_or_else(|e| panic!("{} was refused: {e}", o.who))
    };
    bytes = run(
        &bytes,
        op("doer", false, |fm, ctx| {
            ops::advance(fm, ctx, Phase::Planning, &advance_args(Phase::Planning))
        }),
    );
    bytes = run(
        &bytes,
        op("doer", false, |fm, ctx| {
            let pin = observed(fm, Artifact::Plan);
            ops::submit(fm, ctx, Artifact::Plan, "The plan.", false, pin)
        }),
    );
    bytes = run(
        &bytes,
        op("alice", false, |fm, ctx| {
            ledger::object(fm, ctx, &raise(true))
        }),
    );
    bytes = run(
        &bytes,
        op("alice", false, |fm, ctx| {
            let judged = fm.pin(Target::Plan).map(|p| p.sha256);
            ops::verdict(fm, ctx, Verdict::Approved, 1, "ok", judged)
        }),
    );
    for phase in [Phase::PlanApproved, Phase::Coding] {
        if phase == Phase::Coding {
            bytes = run(
                &bytes,
                op("doer", false, |fm, ctx| {
                    ops::advance(fm, ctx, Phase::Coding, &advance_args(Phase::Coding))
                }),
            );
        }
        assert_eq!(fm_of(&bytes).phase, phase);
        assert_eq!(
            fm_of(&bytes).ledger.get("ADV-1").map(|o| o.state),
            Some(State::Open)
        );
        assert!(
            can_settle(&bytes, "ADV-1", 1, &now),
            "ADV-1 open for good in {phase}"
        );
    }
    let trail = vec!["ADV-1 on the approved plan".to_string()];
    no_dead_end(&bytes, &trail, &now).expect("no dead end");
}
