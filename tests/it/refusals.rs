//! Refusals: every (phase, command, actor) combination the protocol forbids (SPEC §3–§5, §7.1),
//! with an exit code and the file left byte for byte unchanged.
//!
//! The expectations are an independent, hand-written table (below), derived from SPEC.md and the
//! contract only — never from any table in `src/`. Each starting phase is reached by driving the
//! real binary.

use crate::common::phases::board_in;
use crate::common::*;
use crate::proto::*;

#[test]
fn a_refused_operation_never_leaves_a_partial_write() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p1 --user-approved",
    ]);
    let h = p.b.sha();
    let bytes = p.b.read();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "alice",
            vec!["verdict", "APPROVED", "--revision", "7", "--note", "stale"],
        ),
        (
            "carol",
            vec![
                "verdict",
                "APPROVED",
                "--revision",
                "1",
                "--note",
                "not required",
            ],
        ),
        (
            "doer",
            vec!["submit", "plan", "--note", "withdraw", "--user-approved"],
        ),
        (
            "alice",
            vec!["note", "--section", "Goal", "--note", "x\n## Decisions\ny"],
        ),
        (
            "alice",
            vec!["note", "--section", "Goal", "--note", "```\nunclosed"],
        ),
        ("alice", vec!["advance", "PLANNING", "--user-approved"]),
        ("doer", vec!["unblock", "--reason", "r"]),
        (
            "alice",
            vec![
                "verdict",
                "APPROVED",
                "--revision",
                "1",
                "--note",
                "n",
                "--expect-sha256",
                "abc",
            ],
        ),
    ];
    for (actor, words) in &cases {
        let out = p.run(actor, words);
        assert!(
            matches!(out.code, Some(c) if c != 0),
            "must be refused\n{}",
            out.report()
        );
        assert_eq!(
            p.b.sha(),
            h,
            "a refused operation changed the file\n{}",
            out.report()
        );
        p.b.assert_untouched(&bytes);
        p.b.assert_clean_dir(&[]);
    }
    // an invalid raw write as well
    let bad = set_top(&p.text(), "phase", "NOT_A_PHASE");
    p.b.write_expect(&bad, &h, &[]).code(5);
    assert_eq!(p.b.sha(), h);
    p.b.assert_clean_dir(&[]);
    p.assert_valid();
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
        // A revision that does not exist yet: a usage error naming the current one.
        "verdict APPROVED --revision {rev+1} --note n",
        &[4],
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

/// A refusal for the wrong role says, in words, what only the other role may do, and who the
/// caller is on the board.
#[test]
fn a_refusal_for_the_wrong_role_names_the_step_and_the_callers_standing() {
    let p = Proto::init(&["--reviewers", "alice", "--yolo", "--dissent"]);
    p.ok("alice", &["register"]);
    p.refused("alice", &["advance", "PLANNING"], 6)
        .mentions(&["only the doer (doer) may advance the phase; \"alice\" is a reviewer"]);
    p.refused("zed", &["advance", "PLANNING"], 6).mentions(&[
        "only the doer (doer) may advance the phase; \"zed\" is not on the blackboard",
    ]);
    p.ok("doer", &["advance", "PLANNING"]);
    p.ok("doer", &["submit", "plan", "--note", "The plan."]);
    for (words, said) in [
        (
            vec!["claim"],
            "only a reviewer may claim a review; \"doer\" is the doer",
        ),
        (
            vec!["verdict", "APPROVED", "--revision", "1", "--note", "n"],
            "only a reviewer may give a verdict; \"doer\" is the doer",
        ),
        (
            vec!["correct", "--note", "n"],
            "only a reviewer may correct a review; \"doer\" is the doer",
        ),
        (
            vec!["dissent", "none", "--revision", "1", "--note", "n"],
            "\"doer\" is the doer and may not dissent on its own work; a fresh agent dissents",
        ),
    ] {
        p.refused("doer", &words, 6).mentions(&[said]);
    }
}
