//! One law: a semantic write is a legal raw write by the same writer with the same approvals.
//!
//! Random lifecycles run in memory through the engine that the commands use
//! (`transaction::apply`, the same function `pair submit`, `pair verdict`, … run under the lock),
//! and every accepted step is replayed as the raw write `pair write --as WHO` would make
//! (`transaction::replace`). The replay must be accepted; replayed without the user's approval, a
//! step that passed a human gate or a waiver must be refused. A smaller run drives the real
//! binary the same way.

use crate::common::*;
use pair::board::frontmatter::{Observed, Phase, Sha256, Timestamp, Verdict};
use pair::law::protocol::{self, Artifact, Command, To};
use pair::law::{Consent, validate};
use pair::ops::{self, AdvanceArgs};
use pair::transaction::{self, RawMode};
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::path::Path;

const AGENTS: [&str; 4] = ["doer", "alice", "bob", "mallory"];

const PHASE_TARGETS: [Phase; 9] = [
    Phase::Analyzing,
    Phase::Planning,
    Phase::RedTesting,
    Phase::Coding,
    Phase::Committed,
    Phase::Merged,
    Phase::CleanedUp,
    Phase::PlanApproved,
    Phase::Draft,
];

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

/// A fresh board: the doer, the registered reviewers, the required ones, and the gates.
fn initial(registered: &[&str], required: &[&str], rca: bool, red: bool, yolo: bool) -> Vec<u8> {
    let mut agents = agent_block("doer", "doer", "DRAFT", &[]);
    for r in registered {
        agents.push_str(&agent_block(r, "reviewer", "IDLE", &[]));
    }
    let required = if required.is_empty() {
        "[]".to_string()
    } else {
        format!("[{}]", required.join(", "))
    };
    format!(
        "---\nphase: DRAFT\nphase_updated_at: \"2026-01-01T00:00:00Z\"\nyolo: {yolo}\n\
         work_type: feature\nrca_required: {rca}\nred_test_required: {red}\n\
         required_reviewers: {required}\nno_review: false\nanalysis_revision: 0\n\
         plan_revision: 0\nred_test_round: 0\ncode_review_round: 0\nworktree: null\n\
         blocked_from: null\nagents:\n{agents}---\n# Blackboard\n\n## Goal\n\nDo it.\n\n\
         ## Decisions\n"
    )
    .into_bytes()
}

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
        artifact: usize,
        no_review: bool,
    },
    Verdict {
        who: usize,
        verdict: usize,
        off: i64,
    },
    Advance {
        who: usize,
        to: usize,
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
    },
    /// The move SPEC §3.1 expects next, so runs get deep into the workflow.
    Guided {
        pick: usize,
        verdict: usize,
    },
}

fn step() -> impl Strategy<Value = Step> {
    let who = 0..AGENTS.len();
    prop_oneof![
        2 => (who.clone(), any::<bool>()).prop_map(|(who, required)| Step::Register { who, required }),
        1 => who.clone().prop_map(|who| Step::Claim { who }),
        2 => (who.clone(), 0..Artifact::ALL.len(), prop::bool::weighted(0.2))
            .prop_map(|(who, artifact, no_review)| Step::Submit { who, artifact, no_review }),
        2 => (who.clone(), 0..3usize, -1i64..=1).prop_map(|(who, verdict, off)| Step::Verdict { who, verdict, off }),
        2 => (who.clone(), 0..PHASE_TARGETS.len()).prop_map(|(who, to)| Step::Advance { who, to }),
        1 => who.clone().prop_map(|who| Step::Block { who }),
        1 => who.clone().prop_map(|who| Step::Unblock { who }),
        1 => prop::bool::weighted(0.15).prop_map(|_| Step::Stop { who: 1 }),
        1 => who.prop_map(|who| Step::Note { who }),
        12 => (0..8usize, prop::sample::select(vec![0usize, 0, 0, 1, 2]))
            .prop_map(|(pick, verdict)| Step::Guided { pick, verdict }),
    ]
}

/// The operation a step means on the current board: who acts, and the edit.
type OpFn = Box<
    dyn FnOnce(&mut pair::board::frontmatter::Frontmatter, &ops::Ctx) -> pair::Result<ops::Edit>,
>;

/// What the submission of `a` pins, as the commands pin it: the text's hash, or a diff's. The
/// diff's content changes every other round, so a resubmission mid-review is sometimes a real
/// drift (accepted) and sometimes the same content (refused).
fn observed(
    fm: &pair::board::frontmatter::Frontmatter,
    a: Artifact,
    note: &str,
) -> Option<Observed> {
    let n = fm.counter(a.target()) + 1;
    match a {
        Artifact::Code | Artifact::Followup => Some(Observed {
            kind: a.pin_kinds()[0],
            sha256: Sha256::of(format!("{} diff {}", a.as_str(), n / 2).as_bytes()),
            files: vec![],
            tree: None,
            published: None,
        }),
        _ => Some(pair::repo::pin::text(note)),
    }
}

/// What a verdict judged, as `pair verdict` records it: the round's pin.
fn judged(fm: &pair::board::frontmatter::Frontmatter) -> Option<Sha256> {
    fm.phase
        .review_target()
        .and_then(|t| fm.pin(t))
        .map(|p| p.sha256)
}

fn advance_args(to: Phase) -> AdvanceArgs {
    AdvanceArgs {
        worktree: (to == Phase::Coding).then(|| "/abs/wt".to_string()),
        commit_sha: (to == Phase::Committed).then(|| SHA.to_string()),
        merged_into: (to == Phase::Merged).then(|| "main".to_string()),
        note: None,
        keep_branch: false,
        facts: None,
    }
}

fn plan(bytes: &[u8], step: &Step) -> (String, OpFn) {
    let fm = validate::check_bytes(bytes)
        .expect("board stays valid")
        .parsed
        .fm;
    let verdicts = [
        Verdict::Approved,
        Verdict::ChangesRequested,
        Verdict::Comment,
    ];
    match step.clone() {
        Step::Register { who, required } => (
            AGENTS[who].into(),
            Box::new(move |fm, ctx| ops::register(fm, ctx, required)),
        ),
        Step::Claim { who } => (AGENTS[who].into(), Box::new(ops::claim)),
        Step::Submit {
            who,
            artifact,
            no_review,
        } => (
            AGENTS[who].into(),
            Box::new(move |fm, ctx| {
                let a = Artifact::ALL[artifact];
                let pin = observed(fm, a, "the artifact");
                ops::submit(fm, ctx, a, "the artifact", no_review, pin)
            }),
        ),
        Step::Verdict { who, verdict, off } => {
            let rev = fm
                .phase
                .review_target()
                .map_or(1, |t| fm.counter(t) as i64 + off)
                .max(0) as u32;
            (
                AGENTS[who].into(),
                Box::new(move |fm, ctx| {
                    let h = judged(fm);
                    ops::verdict(fm, ctx, verdicts[verdict], rev, "looked", h)
                }),
            )
        }
        Step::Advance { who, to } => {
            let to = PHASE_TARGETS[to];
            (
                AGENTS[who].into(),
                Box::new(move |fm, ctx| ops::advance(fm, ctx, to, &advance_args(to))),
            )
        }
        Step::Block { who } => (
            AGENTS[who].into(),
            Box::new(|fm, ctx| ops::block(fm, ctx, "stuck")),
        ),
        Step::Unblock { who } => (
            AGENTS[who].into(),
            Box::new(|fm, ctx| ops::unblock(fm, ctx, "unstuck")),
        ),
        Step::Stop { who } => (
            AGENTS[who].into(),
            Box::new(|fm, ctx| ops::stop(fm, ctx, "the user said stop")),
        ),
        Step::Note { who } => (
            AGENTS[who].into(),
            Box::new(|fm, ctx| ops::note(fm, ctx, "Evidence", "seen")),
        ),
        Step::Guided { pick, verdict } => guided(&fm, pick, verdicts[verdict]),
    }
}

/// The expected next move: a pending reviewer's verdict (or its registration), else the doer's
/// next row of the table.
fn guided(
    fm: &pair::board::frontmatter::Frontmatter,
    pick: usize,
    verdict: Verdict,
) -> (String, OpFn) {
    if let Some(target) = fm.phase.review_target() {
        let r = protocol::round(fm, target);
        if !r.pending.is_empty() {
            let who = r.pending[pick % r.pending.len()].clone();
            if fm.agent(&who).is_none() {
                return (who, Box::new(|fm, ctx| ops::register(fm, ctx, false)));
            }
            let rev = r.counter;
            return (
                who,
                Box::new(move |fm, ctx| {
                    let h = judged(fm);
                    ops::verdict(fm, ctx, verdict, rev, "reviewed", h)
                }),
            );
        }
    }
    let doer = fm.doer().unwrap_or("doer").to_string();
    // With nobody to review, the user approves working without review.
    let no_review = fm.reviewers().is_empty() && fm.required_reviewers.is_empty() && !fm.no_review;
    match protocol::doer_next(fm) {
        Some(t) => match (t.command, t.to) {
            (Command::Submit(a), _) => (
                doer,
                Box::new(move |fm, ctx| {
                    let pin = observed(fm, a, "artifact");
                    ops::submit(fm, ctx, a, "artifact", no_review, pin)
                }),
            ),
            (_, To::Phase(to)) => (
                doer,
                Box::new(move |fm, ctx| ops::advance(fm, ctx, to, &advance_args(to))),
            ),
            _ => (
                doer,
                Box::new(|fm, ctx| ops::note(fm, ctx, "Evidence", "x")),
            ),
        },
        None => (
            doer,
            Box::new(|fm, ctx| ops::note(fm, ctx, "Evidence", "x")),
        ),
    }
}

fn count(bytes: &[u8], needle: &str) -> usize {
    String::from_utf8_lossy(bytes).matches(needle).count()
}

/// Run a lifecycle; return how many steps were accepted and the final board.
fn run_lifecycle(
    mut bytes: Vec<u8>,
    steps: &[Step],
    approve: &[bool],
    waive: &[bool],
) -> Result<(usize, Vec<u8>), TestCaseError> {
    let path = Path::new("board.md");
    let mut now = Timestamp::parse("2026-02-01T00:00:00Z").expect("timestamp");
    let mut accepted = 0;
    for (i, step) in steps.iter().enumerate() {
        let (who, op) = plan(&bytes, step);
        let consent = Consent {
            user_approved: approve[i % approve.len()],
            waive: waive[i % waive.len()].then(|| "the user waived it".to_string()),
            invocation: "pair test".to_string(),
            ..Consent::default()
        };
        now = Timestamp(now.0 + chrono::Duration::seconds(1));
        let Ok(applied) =
            transaction::apply(path, &bytes, &who, &consent, &Default::default(), now, op)
        else {
            continue;
        };
        accepted += 1;
        prop_assert!(
            validate::check_bytes(&applied.bytes).is_ok(),
            "step {i} {step:?} by {who} left an invalid board"
        );
        let replay = transaction::replace(
            path,
            &bytes,
            applied.bytes.clone(),
            &RawMode::As(who.clone()),
            &consent,
            &Default::default(),
            now,
        );
        prop_assert!(
            replay.is_ok(),
            "step {i} {step:?} by {who} was accepted semantically but its raw replay was refused: \
             {}\n--- old ---\n{}\n--- new ---\n{}",
            replay.err().map(|e| e.to_string()).unwrap_or_default(),
            String::from_utf8_lossy(&bytes),
            String::from_utf8_lossy(&applied.bytes)
        );
        // The approvals are part of the change: without them, a step that needed them is
        // refused raw as it would have been semantically.
        let needed = ["### Gate approved — ", "### Gate waived — "]
            .iter()
            .any(|h| count(&applied.bytes, h) > count(&bytes, h));
        let bare = Consent {
            invocation: consent.invocation.clone(),
            ..Consent::default()
        };
        let unapproved = transaction::replace(
            path,
            &bytes,
            applied.bytes.clone(),
            &RawMode::As(who.clone()),
            &bare,
            &Default::default(),
            now,
        );
        prop_assert_eq!(
            unapproved.is_ok(),
            !needed,
            "step {} {:?} by {}: the replay without approvals must be refused exactly when the \
             step needed them",
            i,
            step,
            who
        );
        // A raw write naming nobody may not make a frontmatter change at all.
        let old_fm = validate::check_bytes(&bytes).expect("valid").parsed.fm;
        if old_fm != applied.parsed.fm {
            let anonymous = transaction::replace(
                path,
                &bytes,
                applied.bytes.clone(),
                &RawMode::Anonymous,
                &consent,
                &Default::default(),
                now,
            );
            prop_assert!(
                anonymous.is_err(),
                "an anonymous raw write changed the frontmatter"
            );
        }
        bytes = applied.bytes;
    }
    Ok((accepted, bytes))
}

proptest! {
    #![proptest_config(Config { cases: 160, ..Config::default() })]

    #[test]
    fn every_semantic_write_is_accepted_as_the_same_writers_raw_write(
        registered in prop::sample::subsequence(vec!["alice", "bob"], 0..=2),
        required_extra in prop::sample::subsequence(vec!["alice", "bob", "carol"], 0..=2),
        rca in any::<bool>(),
        red in any::<bool>(),
        yolo in prop::bool::weighted(0.2),
        steps in prop::collection::vec(step(), 1..60),
        approve in prop::collection::vec(prop::bool::weighted(0.85), 1..8),
        waive in prop::collection::vec(prop::bool::weighted(0.15), 1..8),
    ) {
        let required: Vec<&str> = if required_extra.len() % 2 == 0 { vec![] } else { required_extra };
        let bytes = initial(&registered, &required, rca, red, yolo);
        prop_assert!(validate::check_bytes(&bytes).is_ok(), "test bug: invalid initial board");
        run_lifecycle(bytes, &steps, &approve, &waive)?;
    }
}

#[test]
fn guided_lifecycles_reach_the_end_and_every_step_replays() {
    // Deterministic deep runs: every gate on, two reviewers, the second round of each review
    // sent back once by the choice of verdicts.
    for (rca, red, reviewers) in [
        (true, true, &["alice", "bob"][..]),
        (false, false, &["alice", "bob"][..]),
        (true, false, &["alice"][..]),
        (true, true, &[][..]),
    ] {
        let bytes = initial(reviewers, &[], rca, red, false);
        let steps: Vec<Step> = (0..80)
            .map(|i| Step::Guided {
                pick: i,
                verdict: if i % 7 == 3 { 1 } else { 0 },
            })
            .collect();
        let (accepted, end) =
            run_lifecycle(bytes, &steps, &[true], &[false]).expect("replays hold");
        let phase = validate::check_bytes(&end).expect("valid").parsed.fm.phase;
        assert_eq!(phase, Phase::CleanedUp, "after {accepted} accepted steps");
    }
}

// ---------------------------------------------------------------------------------------------
// the same law through the binary

/// Run a semantic command on `b`, then replay exactly the bytes it wrote as `pair write --as`
/// with the same approvals on a copy of the old board: it must be accepted.
#[track_caller]
fn semantic_then_replay(b: &Board, who: &str, args: &[&str], approvals: &[&str]) {
    semantic_then_replay_with(b, who, args, &[], approvals)
}

/// [`semantic_then_replay`], with flags only the semantic command takes (`--no-review`).
#[track_caller]
fn semantic_then_replay_with(
    b: &Board,
    who: &str,
    args: &[&str],
    semantic_only: &[&str],
    approvals: &[&str],
) {
    let old = b.read();
    let mut full: Vec<&str> = args.to_vec();
    full.insert(1, b.p());
    full.extend(["--agent", who]);
    full.extend(semantic_only);
    full.extend(approvals);
    pair(&full).code(0);
    // The replay writes what the command wrote, less the record pair adds to every write.
    let new = without_last_record(&b.read());
    let copy = Board::new(&old);
    let content = copy.aux_file("replay.md", &new);
    let mut write = vec![
        "write",
        copy.p(),
        "--content-file",
        content.to_str().expect("utf-8 path"),
    ];
    let sha = sha256_hex(&old);
    write.extend(["--expect-sha256", &sha, "--as", who]);
    write.extend(approvals);
    pair(&write).code(0);
}

#[test]
fn a_no_review_plan_submission_replays_as_the_doers_raw_write() {
    // The disagreement the one law removes: PLANNING → PLAN_APPROVED in one write.
    let b = init_board(&[]);
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    semantic_then_replay_with(
        &b,
        "doer",
        &["submit", "plan", "--note", "p"],
        &["--no-review"],
        &["--user-approved"],
    );
    assert!(b.read_string().contains("phase: PLAN_APPROVED"));
}

#[test]
fn each_step_of_a_lifecycle_replays_through_the_binary() {
    let b = init_board(&["--reviewers", "alice", "--work-type", "debugging"]);
    let approved: &[&str] = &["--user-approved"];
    let none: &[&str] = &[];
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    semantic_then_replay(&b, "doer", &["advance", "ANALYZING"], approved);
    semantic_then_replay(&b, "doer", &["submit", "analysis", "--note", "a"], approved);
    semantic_then_replay(&b, "alice", &["claim"], none);
    semantic_then_replay(
        &b,
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        none,
    );
    semantic_then_replay(&b, "doer", &["advance", "PLANNING"], none);
    semantic_then_replay(&b, "doer", &["submit", "plan", "--note", "p"], approved);
    semantic_then_replay(
        &b,
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        none,
    );
    semantic_then_replay(&b, "doer", &["advance", "RED_TESTING"], none);
    semantic_then_replay(
        &b,
        "alice",
        &["note", "--section", "Evidence", "--note", "n"],
        none,
    );
    semantic_then_replay(&b, "alice", &["block", "--reason", "wait"], none);
    semantic_then_replay(&b, "doer", &["unblock", "--reason", "go"], none);
    semantic_then_replay(&b, "doer", &["stop", "--reason", "done"], none);
}

// ---------------------------------------------------------------------------------------------
// attribution, counters and time

#[test]
fn an_anonymous_raw_write_cannot_forge_approvals() {
    let b = init_board(&["--reviewers", "alice,bob"]);
    for r in ["alice", "bob"] {
        pair(["register", b.p(), "--agent", r]).code(0);
    }
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    pair([
        "submit",
        b.p(),
        "--agent",
        "doer",
        "plan",
        "--note",
        "p",
        "--user-approved",
    ])
    .code(0);
    let old = b.read_string();
    let mut forged = old.replacen("phase: PLANNING_SUBMITTED", "phase: PLAN_APPROVED", 1);
    for r in ["alice", "bob"] {
        let block = section_of_agent(&forged, r);
        let signed = block
            .replacen(
                "reviewed_plan_revision: null",
                "reviewed_plan_revision: 1",
                1,
            )
            .replacen("plan_verdict: null", "plan_verdict: APPROVED", 1);
        forged = forged.replacen(&block, &signed, 1);
    }
    assert_ne!(forged, old, "test bug: nothing forged");
    b.write_expect(&forged, &sha256_hex(&old), &[])
        .code(6)
        .mentions(&["names no writer", "--as"]);
    b.assert_untouched(old.as_bytes());
    // Named, the doer may not sign the reviewers' verdicts either.
    b.write_expect(&forged, &sha256_hex(&old), &["--as", "doer"])
        .code(6)
        .mentions(&["belongs to"]);
    b.assert_untouched(old.as_bytes());
    // A body-only raw write naming nobody stays possible (the helper-compatible use).
    let appended = format!("{old}\nA line appended by hand.\n");
    b.write_expect(&appended, &sha256_hex(&old), &[]).code(0);
}

/// The YAML block of one agent entry (its key line and the lines indented under it).
fn section_of_agent(text: &str, id: &str) -> String {
    let head = format!("  {id}:\n");
    let start = text.find(&format!("\n{head}")).expect("agent entry") + 1;
    let mut end = start + head.len();
    for line in text[end..].split_inclusive('\n') {
        if !line.starts_with("    ") {
            break;
        }
        end += line.len();
    }
    text[start..end].to_string()
}

#[test]
fn a_counter_at_its_maximum_is_refused_with_a_clear_message() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    let max = set_top(&b.read_string(), "plan_revision", "4294967295");
    let max = agreeing(&max);
    let max_board = Board::new(&max);
    pair(["validate", max_board.p()]).code(0);
    pair([
        "submit",
        max_board.p(),
        "--agent",
        "doer",
        "plan",
        "--note",
        "p",
        "--user-approved",
    ])
    .code(6)
    .mentions(&["plan_revision", "maximum"]);
    max_board.assert_untouched(max.as_bytes());
}

/// A raw write is held to who owns each field: a reviewer may not change the doer's fields, the
/// phase's time while the phase stays, or top-level fields beyond the protocol's; the doer may
/// change each.
#[test]
fn a_raw_write_changes_only_the_fields_the_writer_owns() {
    let p = crate::proto::Proto::init(&["--reviewers", "alice", "--yolo"]);
    p.ok("alice", &["register"]);
    // Each edit, applied to the board as it stands when it is written.
    fn stamp(t: &str) -> String {
        let line = t
            .lines()
            .find(|l| l.starts_with("phase_updated_at: "))
            .unwrap();
        t.replacen(line, "phase_updated_at: \"2020-01-01T00:00:00Z\"", 1)
    }
    fn worktree(t: &str) -> String {
        t.replacen("worktree: null", "worktree: /elsewhere", 1)
    }
    fn extra(t: &str) -> String {
        t.replacen("blocked_from: null\n", "blocked_from: null\nteam: red\n", 1)
    }
    type Edit = fn(&str) -> String;
    let edits: [(Edit, &str); 3] = [
        (
            worktree,
            "field `worktree` belongs to the doer (doer); alice may not change it",
        ),
        (
            stamp,
            "field `phase_updated_at` belongs to the doer (doer) unless the phase changes",
        ),
        (
            extra,
            "top-level fields beyond the protocol's belong to the doer (doer); alice may not \
             change them",
        ),
    ];
    let text = p.text();
    for (edit, field) in edits {
        let edited = edit(&text);
        assert_ne!(edited, text);
        p.b.write_expect(&edited, &p.b.sha(), &["--as", "alice"])
            .code(6)
            .mentions(&[field]);
    }
    // The doer's own change, each on the board as it now stands.
    for (edit, _) in [edits[1], edits[2], edits[0]] {
        p.b.write_expect(edit(&p.text()), &p.b.sha(), &["--as", "doer"])
            .code(0);
    }
}

/// A reviewer the user named adds itself to the required list, and that is all it may change
/// there: a raw write that appends it but also swaps another required reviewer is refused.
#[test]
fn a_reviewer_adding_itself_to_the_required_list_may_not_change_the_rest() {
    let p = crate::proto::Proto::init(&["--reviewers", "alice,bob", "--yolo"]);
    p.ok("alice", &["register"]);
    p.ok("carol", &["register"]);
    let text = p.text();
    let list = "required_reviewers:\n  - alice\n  - bob\n";
    assert!(text.contains(list), "{text}");
    let swapped = text.replacen(
        list,
        "required_reviewers:\n  - alice\n  - dave\n  - carol\n",
        1,
    );
    p.b.write_expect(&swapped, &p.b.sha(), &["--as", "carol"])
        .code(6)
        .mentions(&["field `required_reviewers` changes only when"]);
    // Appending itself alone is the recorded self-addition.
    let appended = text.replacen(
        list,
        "required_reviewers:\n  - alice\n  - bob\n  - carol\n",
        1,
    );
    p.b.write_expect(&appended, &p.b.sha(), &["--as", "carol"])
        .code(0);
    assert!(
        p.text().contains("### Required reviewer added — carol — "),
        "{}",
        p.text()
    );
}

/// A registration is withdrawn only by a reviewer who is not required, before and after the
/// write: one that names itself required in the very write that removes its entry is refused.
#[test]
fn a_reviewer_may_not_withdraw_while_making_itself_required() {
    let p = crate::proto::Proto::init(&["--reviewers", "alice", "--yolo"]);
    p.ok("alice", &["register"]);
    p.ok("carol", &["register"]);
    let text = p.text();
    let start = text.find("  carol:\n").unwrap();
    let end = text[start..]
        .find("\n---\n")
        .map(|e| start + e + 1)
        .unwrap();
    let entry = &text[start..end];
    assert!(
        entry.lines().skip(1).all(|l| l.starts_with("    ")),
        "{entry}"
    );
    let withdrawn = text.replacen(entry, "", 1).replacen(
        "required_reviewers:\n  - alice\n",
        "required_reviewers:\n  - alice\n  - carol\n",
        1,
    );
    p.b.write_expect(&withdrawn, &p.b.sha(), &["--as", "carol"])
        .code(6)
        .mentions(&["carol is a required reviewer"]);
}

/// Only an `unblock` resets the status the block gave another agent: a raw `stop` of a BLOCKED
/// board that also sets the blocking reviewer's status is refused, the status being hers.
#[test]
fn a_raw_stop_of_a_blocked_board_may_not_reset_another_agents_status() {
    let p = crate::proto::Proto::init(&["--reviewers", "alice", "--yolo"]);
    p.ok("alice", &["register"]);
    p.ok("doer", &["advance", "PLANNING"]);
    p.ok("alice", &["block", "--reason", "A question"]);
    let text = p.text();
    let set_status = |s: &str, who: &str, to: &str| -> String {
        let i = s.find(&format!("  {who}:\n")).unwrap();
        let j = i + s[i..].find("status: ").unwrap();
        let k = j + s[j..].find('\n').unwrap();
        format!("{}status: {to}{}", &s[..j], &s[k..])
    };
    assert!(text.contains("blocked_from: PLANNING"), "{text}");
    let stopped = text
        .replacen("phase: BLOCKED", "phase: STOPPED", 1)
        .replacen("blocked_from: PLANNING", "blocked_from: null", 1)
        .replacen(
            "\n## Journal",
            "### Stopped — from BLOCKED — doer — 2026-01-01T00:00:00Z\n\ndone\n\n## Journal",
            1,
        );
    let stopped = set_status(&stopped, "doer", "STOPPED");
    // The stop alone is the doer's to write.
    let reset = set_status(&stopped, "alice", "IDLE");
    p.b.write_expect(&reset, &p.b.sha(), &["--as", "doer"])
        .code(6)
        .mentions(&["field `agents.alice.status` belongs to alice; doer may not change it"]);
    p.b.write_expect(&stopped, &p.b.sha(), &["--as", "doer"])
        .code(0);
    p.assert_phase("STOPPED");
}
