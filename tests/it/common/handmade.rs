//! Boards written by hand in any phase, and `poll`'s JSON for them.

use crate::common::*;
use serde_json::Value;

/// A valid blackboard in `phase`: doer `doer`, required reviewer `alice`, every counter high
/// enough for the phase, alice's verdicts agreeing with an outcome phase, a worktree from
/// CODING on, and `blocked_from: PLANNING` when BLOCKED.
pub fn board_in(phase: &str, red_test_required: bool, worktree: &str) -> String {
    let outcome = |p: &str| -> Option<(&'static str, &'static str)> {
        match p {
            "ANALYSIS_APPROVED" => Some(("analysis", "APPROVED")),
            "ANALYSIS_CHANGES_REQUESTED" => Some(("analysis", "CHANGES_REQUESTED")),
            "PLAN_APPROVED" => Some(("plan", "APPROVED")),
            "PLAN_CHANGES_REQUESTED" => Some(("plan", "CHANGES_REQUESTED")),
            "RED_TEST_APPROVED" => Some(("red_test", "APPROVED")),
            "RED_TEST_CHANGES_REQUESTED" => Some(("red_test", "CHANGES_REQUESTED")),
            "READY_TO_COMMIT" => Some(("code", "APPROVED")),
            "CODE_CHANGES_REQUESTED" => Some(("code", "CHANGES_REQUESTED")),
            _ => None,
        }
    };
    let needs_worktree = [
        "CODING",
        "CODE_SUBMITTED",
        "REVIEWING_CODE",
        "CODE_CHANGES_REQUESTED",
        "FOLLOWUP_REVIEW",
        "READY_TO_COMMIT",
        "COMMITTED",
        "MERGED",
        "CLEANED_UP",
    ]
    .contains(&phase);
    let mut overrides: Vec<(&str, &str)> = Vec::new();
    if let Some((target, verdict)) = outcome(phase) {
        let (reviewed, field) = match target {
            "analysis" => ("reviewed_analysis_revision", "analysis_verdict"),
            "plan" => ("reviewed_plan_revision", "plan_verdict"),
            "red_test" => ("reviewed_red_test_round", "red_test_verdict"),
            _ => ("reviewed_code_round", "code_verdict"),
        };
        let n = if target == "code" { "2" } else { "1" };
        overrides.push((reviewed, n));
        overrides.push((field, verdict));
    }
    let mut text = set_top(MINIMAL, "phase", phase);
    text = set_top(&text, "required_reviewers", "[alice]");
    text = set_top(
        &text,
        "red_test_required",
        if red_test_required { "true" } else { "false" },
    );
    text = set_top(&text, "analysis_revision", "1");
    text = set_top(&text, "plan_revision", "1");
    text = set_top(&text, "red_test_round", "1");
    text = set_top(&text, "code_review_round", "2");
    if needs_worktree {
        text = set_top(&text, "worktree", worktree);
    }
    if phase == "BLOCKED" {
        text = set_top(&text, "blocked_from", "PLANNING");
    }
    if phase == "CLEANED_UP" {
        text = text.replace(
            "blocked_from: null\n",
            "blocked_from: null\nworktree_removed: true\n",
        );
    }
    agreeing(&insert_before_closing(
        &text,
        &agent_block("alice", "reviewer", "IDLE", &overrides),
    ))
}

pub fn poll_json(board: &str, agent: &str) -> (Out, Value) {
    let out = pair(["poll", board, "--agent", agent, "--json"]);
    let v = out.json();
    (out, v)
}
