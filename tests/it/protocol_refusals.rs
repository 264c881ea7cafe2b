//! Refusals: every (phase, command, actor) combination the protocol forbids (SPEC §3–§5, §7.1).
//!
//! The expectations are an independent, hand-written table (below), derived from SPEC.md and
//! the contract only — never from any table in `src/`. Each starting phase is reached by
//! driving the real binary; each refusal must give the expected exit code and leave the file
//! byte-for-byte unchanged.

use crate::common::*;
use crate::proto::*;

// ---------------------------------------------------------------------------------------------
// reaching every phase

/// Steps from a fresh board (reviewers alice and bob required from `init`; carol registered
/// but not required) to `phase`. Hand-written from SPEC §3.1.
fn recipe(phase: &str) -> Vec<&'static str> {
    let base = vec!["alice register", "bob register", "carol register"];
    let cat = |prev: &str, more: &[&'static str]| {
        let mut v = recipe(prev);
        v.extend_from_slice(more);
        v
    };
    match phase {
        "DRAFT" => base,
        "ANALYZING" => cat("DRAFT", &["DOER advance ANALYZING --user-approved"]),
        "ANALYSIS_SUBMITTED" => cat(
            "ANALYZING",
            &["DOER submit analysis --note a1 --user-approved"],
        ),
        "REVIEWING_ANALYSIS" => cat("ANALYSIS_SUBMITTED", &["alice claim"]),
        "ANALYSIS_CHANGES_REQUESTED" => cat(
            "ANALYSIS_SUBMITTED",
            &[
                "alice verdict CHANGES_REQUESTED --revision 1 --note n",
                "bob verdict APPROVED --revision 1 --note n",
            ],
        ),
        "ANALYSIS_APPROVED" => cat(
            "ANALYSIS_SUBMITTED",
            &[
                "alice verdict APPROVED --revision 1 --note n",
                "bob verdict APPROVED --revision 1 --note n",
            ],
        ),
        "PLANNING" => cat("DRAFT", &["DOER advance PLANNING --user-approved"]),
        "PLANNING_SUBMITTED" => cat("PLANNING", &["DOER submit plan --note p1 --user-approved"]),
        "REVIEWING_PLAN" => cat("PLANNING_SUBMITTED", &["alice claim"]),
        "PLAN_CHANGES_REQUESTED" => cat(
            "PLANNING_SUBMITTED",
            &[
                "alice verdict CHANGES_REQUESTED --revision 1 --note n",
                "bob verdict APPROVED --revision 1 --note n",
            ],
        ),
        "PLAN_APPROVED" => cat(
            "PLANNING_SUBMITTED",
            &[
                "alice verdict APPROVED --revision 1 --note n",
                "bob verdict APPROVED --revision 1 --note n",
            ],
        ),
        "RED_TESTING" => cat("PLAN_APPROVED", &["DOER advance RED_TESTING"]),
        "RED_TEST_SUBMITTED" => cat("RED_TESTING", &["DOER submit red-test --note r1"]),
        "REVIEWING_RED_TEST" => cat("RED_TEST_SUBMITTED", &["alice claim"]),
        "RED_TEST_CHANGES_REQUESTED" => cat(
            "RED_TEST_SUBMITTED",
            &[
                "alice verdict CHANGES_REQUESTED --revision 1 --note n",
                "bob verdict APPROVED --revision 1 --note n",
            ],
        ),
        "RED_TEST_APPROVED" => cat(
            "RED_TEST_SUBMITTED",
            &[
                "alice verdict APPROVED --revision 1 --note n",
                "bob verdict APPROVED --revision 1 --note n",
            ],
        ),
        "CODING" => cat(
            "PLAN_APPROVED",
            &["DOER advance CODING --worktree {wt} --user-approved"],
        ),
        "CODE_SUBMITTED" => cat("CODING", &["DOER submit code --note c1"]),
        "REVIEWING_CODE" => cat("CODE_SUBMITTED", &["alice claim"]),
        "CODE_CHANGES_REQUESTED" => cat(
            "CODE_SUBMITTED",
            &[
                "alice verdict CHANGES_REQUESTED --revision 1 --note n",
                "bob verdict APPROVED --revision 1 --note n",
            ],
        ),
        "READY_TO_COMMIT" => cat(
            "CODE_SUBMITTED",
            &[
                "alice verdict APPROVED --revision 1 --note n",
                "bob verdict APPROVED --revision 1 --note n",
            ],
        ),
        "FOLLOWUP_REVIEW" => cat("READY_TO_COMMIT", &["DOER submit followup --note f2"]),
        "COMMITTED" => cat(
            "READY_TO_COMMIT",
            &[
                "DOER advance COMMITTED --commit-sha 0123456789abcdef0123456789abcdef01234567 --user-approved",
            ],
        ),
        "MERGED" => cat(
            "COMMITTED",
            &["DOER advance MERGED --merged-into main --user-approved"],
        ),
        "CLEANED_UP" => cat("MERGED", &["DOER advance CLEANED_UP"]),
        "BLOCKED" => cat("PLANNING", &["alice block --reason r"]),
        "STOPPED" => cat("PLANNING", &["alice stop --reason r"]),
        other => panic!("test bug: no recipe for {other}"),
    }
}

#[track_caller]
fn board_in(phase: &str, init: &[&str]) -> Proto {
    let p = Proto::init(init);
    p.steps(&recipe(phase));
    p.assert_phase(phase);
    p
}

/// The counter a verdict in this phase would name (the review target's, or the nearest one).
fn related_counter(phase: &str) -> &'static str {
    if let Some((_, k)) = target_of(phase) {
        return k;
    }
    match phase {
        "DRAFT" | "ANALYZING" | "ANALYSIS_CHANGES_REQUESTED" | "ANALYSIS_APPROVED" => {
            "analysis_revision"
        }
        "PLANNING" | "PLAN_CHANGES_REQUESTED" | "PLAN_APPROVED" | "BLOCKED" | "STOPPED" => {
            "plan_revision"
        }
        "RED_TESTING" | "RED_TEST_CHANGES_REQUESTED" | "RED_TEST_APPROVED" => "red_test_round",
        _ => "code_review_round",
    }
}

// ---------------------------------------------------------------------------------------------
// the hand-written expectations

const ALL: &[&str] = &[
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODING",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
    "COMMITTED",
    "MERGED",
    "CLEANED_UP",
    "BLOCKED",
    "STOPPED",
];
const WORK_PHASES: &[&str] = &[
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODING",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
];
const REVIEW_PHASES: &[&str] = &[
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
];
const TERMINAL_PHASES: &[&str] = &["COMMITTED", "MERGED", "CLEANED_UP", "BLOCKED", "STOPPED"];
/// Terminal phases where even stop/note are refused.
const DONE_PHASES: &[&str] = &["COMMITTED", "MERGED", "CLEANED_UP", "STOPPED"];
const NOT_BLOCKED: &[&str] = &[
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODING",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
    "COMMITTED",
    "MERGED",
    "CLEANED_UP",
    "STOPPED",
];
const NON_TERMINAL: &[&str] = &[
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODING",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
];

/// Phases from which each submission is refused (the complement of SPEC §3.1's sources).
const NOT_ANALYSIS_SRC: &[&str] = &[
    "DRAFT",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODING",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
    "COMMITTED",
    "MERGED",
    "CLEANED_UP",
    "BLOCKED",
    "STOPPED",
];
const NOT_PLAN_SRC: &[&str] = &[
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODING",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
    "COMMITTED",
    "MERGED",
    "CLEANED_UP",
    "BLOCKED",
    "STOPPED",
];
const NOT_RED_SRC: &[&str] = &[
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TEST_APPROVED",
    "CODING",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
    "COMMITTED",
    "MERGED",
    "CLEANED_UP",
    "BLOCKED",
    "STOPPED",
];
const NOT_CODE_SRC: &[&str] = &[
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
    "COMMITTED",
    "MERGED",
    "CLEANED_UP",
    "BLOCKED",
    "STOPPED",
];
const NOT_FOLLOWUP_SRC: &[&str] = &[
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODING",
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
    "COMMITTED",
    "MERGED",
    "CLEANED_UP",
    "BLOCKED",
    "STOPPED",
];

/// (phases, actor, command after `--agent ACTOR`, accepted exit codes).
/// Placeholders: `{wt}` absolute worktree, `{rev}` the current counter of the phase's target
/// (or the nearest counter in a work phase), `{rev+1}`, `{rev-1}`, `{next}` the doer's first
/// legal `advance` target from this phase with its flags (or PLANNING), `{badsha}` a wrong hash.
type Row = (
    &'static [&'static str],
    &'static str,
    &'static str,
    &'static [i32],
);

const ROWS: &[Row] = &[
    // --- the doer never registers, claims or gives a verdict
    (ALL, "doer", "register", &[6]),
    (ALL, "doer", "register --required", &[6]),
    (ALL, "doer", "claim", &[6]),
    (
        ALL,
        "doer",
        "verdict APPROVED --revision {rev} --note n",
        &[6],
    ),
    (
        ALL,
        "doer",
        "verdict CHANGES_REQUESTED --revision {rev} --note n",
        &[6],
    ),
    // --- submissions only from their source phases (withdrawing mid-review included)
    (
        NOT_ANALYSIS_SRC,
        "doer",
        "submit analysis --note n --user-approved",
        &[6],
    ),
    (
        NOT_PLAN_SRC,
        "doer",
        "submit plan --note n --user-approved",
        &[6],
    ),
    (
        NOT_RED_SRC,
        "doer",
        "submit red-test --note n --user-approved",
        &[6],
    ),
    (
        NOT_CODE_SRC,
        "doer",
        "submit code --note n --user-approved",
        &[6],
    ),
    (
        NOT_FOLLOWUP_SRC,
        "doer",
        "submit followup --note n --user-approved",
        &[6],
    ),
    // --- reviewers (required, registered-only, unregistered) never submit, advance or unblock
    (
        ALL,
        "alice",
        "submit analysis --note n --user-approved",
        &[6],
    ),
    (ALL, "alice", "submit plan --note n --user-approved", &[6]),
    (ALL, "alice", "submit red-test --note n", &[6]),
    (ALL, "alice", "submit code --note n", &[6]),
    (ALL, "alice", "submit followup --note n", &[6]),
    (ALL, "alice", "advance {next}", &[6]),
    (ALL, "alice", "advance PLANNING --user-approved", &[6]),
    (ALL, "alice", "unblock --reason r", &[6]),
    (ALL, "carol", "submit plan --note n --user-approved", &[6]),
    (ALL, "carol", "submit code --note n", &[6]),
    (ALL, "carol", "advance {next}", &[6]),
    (ALL, "carol", "unblock --reason r", &[6]),
    (ALL, "mallory", "submit plan --note n --user-approved", &[6]),
    (ALL, "mallory", "advance {next}", &[6]),
    (ALL, "mallory", "unblock --reason r", &[6]),
    // --- claim: a required reviewer, in a reviewable phase
    (WORK_PHASES, "alice", "claim", &[6]),
    (TERMINAL_PHASES, "alice", "claim", &[6]),
    (ALL, "carol", "claim", &[6]),
    (ALL, "mallory", "claim", &[6]),
    // --- verdict: a required reviewer, in a reviewable phase, on the current counter
    (
        WORK_PHASES,
        "alice",
        "verdict APPROVED --revision {rev} --note n",
        &[6],
    ),
    (
        WORK_PHASES,
        "bob",
        "verdict CHANGES_REQUESTED --revision {rev} --note n",
        &[6],
    ),
    (
        TERMINAL_PHASES,
        "alice",
        "verdict APPROVED --revision {rev} --note n",
        &[6],
    ),
    (
        ALL,
        "carol",
        "verdict APPROVED --revision {rev} --note n",
        &[6],
    ),
    (
        ALL,
        "carol",
        "verdict COMMENT --revision {rev} --note n",
        &[6],
    ),
    (
        ALL,
        "mallory",
        "verdict APPROVED --revision {rev} --note n",
        &[6],
    ),
    (
        REVIEW_PHASES,
        "alice",
        "verdict APPROVED --revision {rev+1} --note n",
        &[3],
    ),
    (
        REVIEW_PHASES,
        "bob",
        "verdict CHANGES_REQUESTED --revision {rev-1} --note n",
        &[3],
    ),
    // --- block: non-terminal only, by an agent on the board
    (TERMINAL_PHASES, "doer", "block --reason r", &[6]),
    (TERMINAL_PHASES, "alice", "block --reason r", &[6]),
    (NON_TERMINAL, "mallory", "block --reason r", &[6]),
    // --- unblock: only BLOCKED
    (NOT_BLOCKED, "doer", "unblock --reason r", &[6]),
    // --- stop and note: not once committed/merged/cleaned up/stopped
    (DONE_PHASES, "doer", "stop --reason r", &[6]),
    (DONE_PHASES, "alice", "stop --reason r", &[6]),
    (
        DONE_PHASES,
        "doer",
        "note --section Evidence --note n",
        &[6],
    ),
    (
        DONE_PHASES,
        "bob",
        "note --section Validation --note n",
        &[6],
    ),
    // --- register on a terminal blackboard
    (TERMINAL_PHASES, "dave", "register", &[6]),
    (TERMINAL_PHASES, "dave", "register --required", &[6]),
    (TERMINAL_PHASES, "alice", "register", &[6]),
    // --- a semantic command with a wrong --expect-sha256 is stale, wherever it is
    (
        ALL,
        "doer",
        "note --section Evidence --note n --expect-sha256 {badsha}",
        &[3, 6],
    ),
    (
        NON_TERMINAL,
        "alice",
        "note --section Evidence --note n --expect-sha256 {badsha}",
        &[3],
    ),
    (
        NON_TERMINAL,
        "doer",
        "block --reason r --expect-sha256 {badsha}",
        &[3],
    ),
    (
        REVIEW_PHASES,
        "alice",
        "verdict APPROVED --revision {rev} --note n --expect-sha256 {badsha}",
        &[3],
    ),
    // --- usage errors
    (
        ALL,
        "alice",
        "verdict MAYBE --revision {rev} --note n",
        &[4],
    ),
    (ALL, "doer", "submit essay --note n --user-approved", &[4]),
];

/// Gate and argument rows for particular phases (same board setup).
const GATE_ROWS: &[Row] = &[
    // human gates without --user-approved (yolo false)
    (&["DRAFT"], "doer", "advance ANALYZING", &[6]),
    (&["DRAFT"], "doer", "advance PLANNING", &[6]),
    (&["ANALYZING"], "doer", "submit analysis --note n", &[6]),
    (
        &["ANALYSIS_CHANGES_REQUESTED"],
        "doer",
        "submit analysis --note n",
        &[6],
    ),
    (&["PLANNING"], "doer", "submit plan --note n", &[6]),
    (
        &["PLAN_CHANGES_REQUESTED"],
        "doer",
        "submit plan --note n",
        &[6],
    ),
    (
        &["PLAN_APPROVED"],
        "doer",
        "advance CODING --worktree {wt}",
        &[6],
    ),
    (
        &["READY_TO_COMMIT"],
        "doer",
        "advance COMMITTED --commit-sha 0123456789abcdef0123456789abcdef01234567",
        &[6],
    ),
    (
        &["COMMITTED"],
        "doer",
        "advance MERGED --merged-into main",
        &[6],
    ),
    // worktree must be given, and absolute
    (
        &["PLAN_APPROVED"],
        "doer",
        "advance CODING --worktree rel/wt --user-approved",
        &[4],
    ),
    (
        &["RED_TEST_APPROVED"],
        "doer",
        "advance CODING --worktree rel/wt",
        &[4],
    ),
    (
        &["RED_TEST_APPROVED"],
        "doer",
        "advance CODING --worktree ./wt",
        &[4],
    ),
    (
        &["PLAN_APPROVED"],
        "doer",
        "advance CODING --user-approved",
        &[4, 6],
    ),
    (&["RED_TEST_APPROVED"], "doer", "advance CODING", &[4, 6]),
    (
        &["READY_TO_COMMIT"],
        "doer",
        "advance COMMITTED --user-approved",
        &[4, 6],
    ),
    (
        &["COMMITTED"],
        "doer",
        "advance MERGED --user-approved",
        &[4, 6],
    ),
    // notes are required on submissions and verdicts; reasons on block/stop
    (&["PLANNING"], "doer", "submit plan --user-approved", &[4]),
    (
        &["REVIEWING_PLAN"],
        "alice",
        "verdict APPROVED --revision {rev}",
        &[4],
    ),
    (&["PLANNING"], "doer", "block", &[4]),
    (&["PLANNING"], "doer", "stop", &[4]),
    // no such phase
    (
        &["DRAFT"],
        "doer",
        "advance NOWHERE --user-approved",
        &[4, 6],
    ),
    // a semantic command with a wrong --expect-sha256
    (
        &["DRAFT"],
        "doer",
        "advance ANALYZING --user-approved --expect-sha256 {badsha}",
        &[3],
    ),
    (
        &["PLANNING"],
        "doer",
        "submit plan --note n --user-approved --expect-sha256 {badsha}",
        &[3],
    ),
    (
        &["DRAFT"],
        "carol",
        "register --required --expect-sha256 {badsha}",
        &[3],
    ),
];

/// The doer's legal `advance` targets per phase (SPEC §3.1), hand-written. Every other target
/// is refused with 6.
fn advance_allowed(phase: &str) -> &'static [&'static str] {
    match phase {
        "DRAFT" => &["ANALYZING", "PLANNING"],
        "ANALYSIS_CHANGES_REQUESTED" => &["ANALYZING"],
        "ANALYSIS_APPROVED" => &["PLANNING"],
        "PLAN_CHANGES_REQUESTED" => &["PLANNING"],
        "PLAN_APPROVED" => &["RED_TESTING", "CODING"],
        "RED_TEST_CHANGES_REQUESTED" => &["RED_TESTING"],
        "RED_TEST_APPROVED" => &["CODING"],
        "READY_TO_COMMIT" => &["COMMITTED"],
        "COMMITTED" => &["MERGED"],
        "MERGED" => &["CLEANED_UP"],
        _ => &[],
    }
}

/// The flags an `advance` to `target` needs, so a refusal is about the transition only.
fn advance_flags(target: &str) -> &'static str {
    match target {
        "CODING" => "--worktree {wt} --user-approved",
        "COMMITTED" => "--commit-sha 0123456789abcdef0123456789abcdef01234567 --user-approved",
        "MERGED" => "--merged-into main --user-approved",
        _ => "--user-approved",
    }
}

// ---------------------------------------------------------------------------------------------
// the runner

const BADSHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn expand(p: &Proto, phase: &str, cmd: &str) -> Vec<String> {
    let rev = p.counter(related_counter(phase));
    let next = advance_allowed(phase)
        .first()
        .map(|t| format!("{t} {}", advance_flags(t)))
        .unwrap_or_else(|| "PLANNING --user-approved".to_string());
    let s = cmd
        .replace("{next}", &next)
        .replace("{rev+1}", &(rev + 1).to_string())
        .replace("{rev-1}", &rev.saturating_sub(1).to_string())
        .replace("{rev}", &rev.to_string())
        .replace("{badsha}", BADSHA)
        .replace("{wt}", &p.wt);
    s.split_whitespace().map(|x| x.to_string()).collect()
}

/// Runs one expectation; returns a failure description (and restores the board) on mismatch.
fn check(p: &Proto, phase: &str, actor: &str, words: &[String], codes: &[i32]) -> Option<String> {
    let before = p.b.read();
    let w: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
    let out = p.run(actor, &w);
    let after = p.b.read();
    let mut problems = Vec::new();
    if !out.code.is_some_and(|c| codes.contains(&c)) {
        problems.push(format!("exit {:?}, expected one of {codes:?}", out.code));
    }
    if after != before {
        problems.push("the file changed".to_string());
        p.restore(&before);
    }
    if problems.is_empty() {
        None
    } else {
        let msg = out.all().trim().lines().next().unwrap_or("").to_string();
        Some(format!(
            "[{phase}] {actor}: pair {} → {} ({msg})",
            w.join(" "),
            problems.join(", ")
        ))
    }
}

/// Runs every applicable row of ROWS and GATE_ROWS, plus the advance matrix, on `phases`.
fn run_matrix(phases: &[&str]) {
    let mut failures = Vec::new();
    let mut count = 0;
    for phase in phases {
        let p = board_in(phase, &["--reviewers", "alice,bob"]);
        for (ps, actor, cmd, codes) in ROWS.iter().chain(GATE_ROWS) {
            if !ps.contains(phase) {
                continue;
            }
            let words = expand(&p, phase, cmd);
            count += 1;
            if let Some(f) = check(&p, phase, actor, &words, codes) {
                failures.push(f);
            }
        }
        // the doer's advance to every target SPEC §3.1 does not allow from here
        for target in ALL {
            if advance_allowed(phase).contains(target) {
                continue;
            }
            let cmd = format!("advance {target} {}", advance_flags(target));
            let words = expand(&p, phase, &cmd);
            count += 1;
            if let Some(f) = check(&p, phase, "doer", &words, &[6]) {
                failures.push(f);
            }
        }
        assert_eq!(
            p.phase(),
            *phase,
            "the board must still be in {phase} after all refusals"
        );
        p.assert_valid();
    }
    assert!(count > 0, "test bug: no rows ran");
    assert!(
        failures.is_empty(),
        "{} of {count} forbidden combinations were not refused as expected:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn forbidden_commands_are_refused_in_early_work_phases() {
    run_matrix(&[
        "DRAFT",
        "ANALYZING",
        "ANALYSIS_CHANGES_REQUESTED",
        "ANALYSIS_APPROVED",
        "PLANNING",
        "PLAN_CHANGES_REQUESTED",
    ]);
}

#[test]
fn forbidden_commands_are_refused_in_late_work_phases() {
    run_matrix(&[
        "PLAN_APPROVED",
        "RED_TESTING",
        "RED_TEST_CHANGES_REQUESTED",
        "RED_TEST_APPROVED",
        "CODING",
        "CODE_CHANGES_REQUESTED",
        "READY_TO_COMMIT",
    ]);
}

#[test]
fn forbidden_commands_are_refused_in_analysis_and_plan_review_phases() {
    run_matrix(&[
        "ANALYSIS_SUBMITTED",
        "REVIEWING_ANALYSIS",
        "PLANNING_SUBMITTED",
        "REVIEWING_PLAN",
    ]);
}

#[test]
fn forbidden_commands_are_refused_in_red_test_and_code_review_phases() {
    run_matrix(&[
        "RED_TEST_SUBMITTED",
        "REVIEWING_RED_TEST",
        "CODE_SUBMITTED",
        "REVIEWING_CODE",
        "FOLLOWUP_REVIEW",
    ]);
}

#[test]
fn forbidden_commands_are_refused_in_terminal_phases() {
    run_matrix(&["COMMITTED", "MERGED", "CLEANED_UP", "BLOCKED", "STOPPED"]);
}

// ---------------------------------------------------------------------------------------------
// gate predicates that need a particular board

#[test]
fn rca_required_refuses_draft_to_planning_even_with_user_approval() {
    let p = board_in("DRAFT", &["--rca", "--reviewers", "alice,bob"]);
    p.refused("doer", &["advance", "PLANNING", "--user-approved"], 6)
        .mentions_any(&["rca", "root cause", "analysis"]);
}

#[test]
fn rca_required_refuses_a_plan_submission_before_the_analysis_is_approved() {
    // reach ANALYSIS_CHANGES_REQUESTED → ANALYZING; the plan cannot be submitted from there
    let p = board_in(
        "ANALYSIS_CHANGES_REQUESTED",
        &["--rca", "--reviewers", "alice,bob"],
    );
    p.refused(
        "doer",
        &["submit", "plan", "--note", "n", "--user-approved"],
        6,
    );
    p.ok("doer", &["advance", "ANALYZING"]);
    p.refused(
        "doer",
        &["submit", "plan", "--note", "n", "--user-approved"],
        6,
    );
}

#[test]
fn red_test_required_refuses_plan_approved_to_coding_without_a_waiver() {
    let p = board_in("PLAN_APPROVED", &["--red-test", "--reviewers", "alice,bob"]);
    p.refused(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
        6,
    )
    .mentions_any(&["red test", "red_test", "red-test"]);
}

#[test]
fn submission_with_nobody_to_review_is_refused_without_no_review() {
    let p = Proto::init(&[]);
    p.ok("doer", &["advance", "ANALYZING", "--user-approved"]);
    p.refused(
        "doer",
        &["submit", "analysis", "--note", "n", "--user-approved"],
        6,
    )
    .mentions_any(&["review"]);
    let p = Proto::init(&[]);
    p.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    p.refused(
        "doer",
        &["submit", "plan", "--note", "n", "--user-approved"],
        6,
    )
    .mentions_any(&["review"]);
}

// ---------------------------------------------------------------------------------------------
// the named refusals, one by one

#[test]
fn verdict_on_stale_revision_is_refused_with_exit_3() {
    let p = board_in("PLAN_CHANGES_REQUESTED", &["--reviewers", "alice,bob"]);
    p.ok(
        "doer",
        &["submit", "plan", "--note", "v2", "--user-approved"],
    );
    p.assert_state("PLANNING_SUBMITTED", [0, 2, 0, 0]);
    let out = p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "late"],
        3,
    );
    out.mentions_any(&["stale", "revision", "counter"]);
    let out = p.refused(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "late",
            "--json",
        ],
        3,
    );
    out.json_error(3);
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "3", "--note", "future"],
        3,
    );
}

#[test]
fn verdict_by_a_registered_reviewer_who_is_not_required_is_refused() {
    let p = board_in("PLANNING_SUBMITTED", &["--reviewers", "alice,bob"]);
    p.refused(
        "carol",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
        6,
    )
    .mentions_any(&["required"]);
    p.refused(
        "mallory",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
        6,
    );
}

#[test]
fn verdict_by_the_doer_is_refused() {
    let p = board_in("REVIEWING_PLAN", &["--reviewers", "alice,bob"]);
    p.refused(
        "doer",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "self-review",
        ],
        6,
    );
}

#[test]
fn reviewer_cannot_advance_or_submit() {
    let p = board_in("PLAN_APPROVED", &["--reviewers", "alice,bob"]);
    p.refused(
        "alice",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
        6,
    );
    p.refused("alice", &["advance", "RED_TESTING"], 6);
    let p = board_in("CODING", &["--reviewers", "alice,bob"]);
    p.refused("bob", &["submit", "code", "--note", "n"], 6);
}

#[test]
fn submit_while_in_a_reviewable_phase_is_refused_as_a_withdrawal() {
    for (phase, kind) in [
        ("ANALYSIS_SUBMITTED", "analysis"),
        ("REVIEWING_PLAN", "plan"),
        ("RED_TEST_SUBMITTED", "red-test"),
        ("REVIEWING_CODE", "code"),
        ("FOLLOWUP_REVIEW", "followup"),
    ] {
        let p = board_in(phase, &["--reviewers", "alice,bob"]);
        p.refused(
            "doer",
            &["submit", kind, "--note", "withdraw", "--user-approved"],
            6,
        );
    }
}

#[test]
fn each_human_gate_without_user_approved_is_refused_and_named() {
    let cases: &[(&str, &[&str])] = &[
        ("DRAFT", &["advance", "ANALYZING"]),
        ("DRAFT", &["advance", "PLANNING"]),
        ("ANALYZING", &["submit", "analysis", "--note", "n"]),
        ("PLANNING", &["submit", "plan", "--note", "n"]),
        (
            "PLAN_APPROVED",
            &["advance", "CODING", "--worktree", "{wt}"],
        ),
        (
            "READY_TO_COMMIT",
            &["advance", "COMMITTED", "--commit-sha", SHA_A],
        ),
        ("COMMITTED", &["advance", "MERGED", "--merged-into", "main"]),
    ];
    for (phase, cmd) in cases {
        let p = board_in(phase, &["--reviewers", "alice,bob"]);
        p.refused("doer", cmd, 6)
            .mentions_any(&["--user-approved", "human gate", "user approv"]);
    }
}

#[test]
fn relative_worktree_is_a_usage_error() {
    let p = board_in("PLAN_APPROVED", &["--reviewers", "alice,bob"]);
    p.refused(
        "doer",
        &["advance", "CODING", "--worktree", "wt", "--user-approved"],
        4,
    )
    .mentions_any(&["absolute", "worktree"]);
    let p = board_in("RED_TEST_APPROVED", &["--reviewers", "alice,bob"]);
    p.refused("doer", &["advance", "CODING", "--worktree", "../wt"], 4);
}

#[test]
fn expect_sha256_mismatch_on_a_semantic_command_is_stale() {
    let p = board_in("REVIEWING_PLAN", &["--reviewers", "alice,bob"]);
    let old = p.b.sha();
    p.ok("bob", &["claim"]);
    // alice read the file before bob's claim: her verdict is stale
    p.refused(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "n",
            "--expect-sha256",
            &old,
        ],
        3,
    );
    p.refused(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "n",
            "--expect-sha256",
            &old,
            "--json",
        ],
        3,
    )
    .json_error(3);
    // with the current hash it goes through
    let cur = p.b.sha();
    p.ok(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "n",
            "--expect-sha256",
            &cur,
        ],
    );
}

#[test]
fn the_doer_cannot_register_as_a_reviewer() {
    let p = board_in("DRAFT", &["--reviewers", "alice,bob"]);
    p.refused("doer", &["register"], 6);
    p.refused("doer", &["register", "--required"], 6);
}

#[test]
fn refusals_with_json_print_the_error_envelope_only_on_stderr() {
    let p = board_in("DRAFT", &["--reviewers", "alice,bob"]);
    let err = p
        .refused("doer", &["advance", "ANALYZING", "--json"], 6)
        .json_error(6);
    assert!(
        norm(err["message"].as_str().unwrap()).contains("user approved"),
        "the message names the gate / --user-approved: {err}"
    );
    p.refused(
        "alice",
        &["advance", "PLANNING", "--user-approved", "--json"],
        6,
    )
    .json_error(6);
}

#[test]
fn notes_that_would_open_a_level_1_or_2_heading_are_refused() {
    let p = board_in("PLANNING", &["--reviewers", "alice,bob"]);
    for text in [
        "harmless\n## Plan Reviews\nsneaky",
        "# Title\nbody",
        "## Decisions",
        "```\nunclosed fence\n",
    ] {
        let f = p.b.aux_file("note.md", text);
        let out = p.refused_any(
            "alice",
            &[
                "note",
                "--section",
                "Goal",
                "--note-file",
                f.to_str().unwrap(),
            ],
            &[4, 6],
        );
        assert!(!out.all().trim().is_empty(), "a refusal says why");
        p.refused_any(
            "doer",
            &["submit", "plan", "--note", text, "--user-approved"],
            &[4, 6],
        );
        let before = p.b.read();
        let out = p.run_stdin(
            "bob",
            &["note", "--section", "Evidence", "--note-file", "-"],
            text,
        );
        out.code_in(&[4, 6]);
        p.b.assert_untouched(&before);
    }
    // the same text inside a closed fence is fine
    p.ok_entry(
        "alice",
        &[
            "note",
            "--section",
            "Goal",
            "--note",
            "```\n## not a heading\n```",
        ],
        "Goal",
        None,
        None,
    );
    assert_eq!(
        section_names(&p.text())
            .iter()
            .filter(|s| *s == "Plan Reviews")
            .count(),
        1
    );
}

// ---------------------------------------------------------------------------------------------
// raw writes checked against ownership (`pair write --as`)

fn write_as(p: &Proto, content: &str, extra: &[&str]) -> Out {
    let h = p.b.sha();
    p.b.write_expect(content, &h, extra)
}

#[test]
fn raw_write_as_a_reviewer_changing_the_phase_is_refused_naming_phase() {
    let p = board_in("PLAN_APPROVED", &["--reviewers", "alice,bob"]);
    let before = p.b.read();
    let new = set_top(&p.text(), "phase", "RED_TESTING");
    let out = write_as(&p, &new, &["--as", "alice"]);
    out.code(6).mentions(&["phase"]);
    p.b.assert_untouched(&before);
}

#[test]
fn raw_write_as_a_reviewer_may_carry_its_claim_transition() {
    let p = board_in("PLANNING_SUBMITTED", &["--reviewers", "alice,bob"]);
    let new = set_top(&p.text(), "phase", "REVIEWING_PLAN");
    write_as(&p, &new, &["--as", "alice"]).code(0);
    p.assert_phase("REVIEWING_PLAN");
    p.assert_valid();
}

#[test]
fn raw_write_as_a_reviewer_editing_another_agents_entry_is_refused() {
    let p = board_in("REVIEWING_PLAN", &["--reviewers", "alice,bob"]);
    let text = p.text();
    // bob's status line (the agents are in a map: find bob's block)
    let bob_at = text.find("\n  bob:\n").expect("bob's entry");
    let st = text[bob_at..].find("    status: ").unwrap() + bob_at;
    let eol = text[st..].find('\n').unwrap() + st;
    let new = format!("{}    status: BLOCKED{}", &text[..st], &text[eol..]);
    let before = p.b.read();
    let out = write_as(&p, &new, &["--as", "alice"]);
    out.code(6).mentions_any(&["bob", "status"]);
    p.b.assert_untouched(&before);
}

#[test]
fn raw_write_as_the_doer_changing_a_reviewers_verdict_is_refused() {
    let p = board_in("PLAN_CHANGES_REQUESTED", &["--reviewers", "alice,bob"]);
    let text = p.text();
    assert!(text.contains("plan_verdict: CHANGES_REQUESTED"), "{text}");
    let new = text.replacen(
        "plan_verdict: CHANGES_REQUESTED",
        "plan_verdict: APPROVED",
        1,
    );
    let new = set_top(&new, "phase", "PLAN_APPROVED");
    let before = p.b.read();
    let out = write_as(&p, &new, &["--as", "doer"]);
    out.code(6).mentions_any(&["verdict", "alice"]);
    p.b.assert_untouched(&before);
}

#[test]
fn raw_write_removing_or_rewriting_a_body_line_is_refused() {
    let p = board_in("PLANNING_SUBMITTED", &["--reviewers", "alice,bob"]);
    let text = p.text();
    let before = p.b.read();
    // rewrite the plan artifact's note
    assert!(text.contains("p1"), "{text}");
    let idx = text.rfind("p1").unwrap();
    let rewritten = format!("{}P-ONE{}", &text[..idx], &text[idx + 2..]);
    write_as(&p, &rewritten, &["--as", "doer"]).code(6);
    p.b.assert_untouched(&before);
    // remove the Goal heading line
    let removed = text.replacen("## Evidence\n", "", 1);
    assert_ne!(removed, text);
    write_as(&p, &removed, &["--as", "alice"]).code(6);
    p.b.assert_untouched(&before);
    // appending is fine for the doer
    let appended = format!("{text}\nextra line\n");
    write_as(&p, &appended, &["--as", "doer"]).code(0);
}

#[test]
fn raw_repair_skips_ownership_but_still_validates_and_is_recorded() {
    let p = board_in("PLANNING_SUBMITTED", &["--reviewers", "alice,bob"]);
    let text = p.text();
    let before = p.b.read();
    // invalid: a string counter
    let invalid = set_top(&text, "plan_revision", "'1'");
    write_as(&p, &invalid, &["--repair", "--reason", "fix"]).code(5);
    p.b.assert_untouched(&before);
    // valid repair that no agent could do: back to PLANNING
    let fixed = set_top(&text, "phase", "PLANNING");
    write_as(
        &p,
        &fixed,
        &["--repair", "--reason", "human-reset-to-planning"],
    )
    .code(0);
    p.assert_phase("PLANNING");
    p.assert_valid();
    let d = sect(&p.text(), "Decisions").unwrap_or_default();
    assert!(
        d.contains("human-reset-to-planning"),
        "the repair is recorded in Decisions:\n{}",
        p.text()
    );
}
