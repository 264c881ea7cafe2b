//! What an agent is told: everything it needs for its step in `poll`/`status --json`, a `next`
//! that is a runnable command, absolute paths, BLOCKED handled on its own, typos caught and
//! refusals in the order phase first, then standing.

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
        text = insert_before_closing(&text, "worktree_removed: true\n");
        text = text.replace("worktree_removed: true\nagents:", "agents:");
        text = text.replace(
            "blocked_from: null\n",
            "blocked_from: null\nworktree_removed: true\n",
        );
    }
    insert_before_closing(&text, &agent_block("alice", "reviewer", "IDLE", &overrides))
}

fn poll_json(board: &str, agent: &str) -> (Out, Value) {
    let out = pair(["poll", board, "--agent", agent, "--json"]);
    let v = out.json();
    (out, v)
}

// ---------------------------------------------------------------------------------------------
// 1. what a reviewer needs to find the code

#[test]
fn poll_json_gives_a_code_reviewer_the_worktree_and_the_exact_diff_command() {
    for (phase, diff) in [
        ("CODE_SUBMITTED", vec!["diff", "--cached"]),
        ("REVIEWING_CODE", vec!["diff", "--cached"]),
        ("FOLLOWUP_REVIEW", vec!["diff"]),
    ] {
        let b = Board::new(board_in(phase, false, "/srv/repo/.worktrees/board"));
        pair(["validate", b.p()]).code(0);
        let (out, v) = poll_json(b.p(), "alice");
        out.code(0);
        assert_eq!(v["worktree"], "/srv/repo/.worktrees/board", "{v:#}");
        let mut expected = vec!["git", "-C", "/srv/repo/.worktrees/board"];
        expected.extend(diff.iter().copied());
        assert_eq!(
            v["review"]["diff_command"],
            serde_json::json!(expected),
            "{v:#}"
        );
        let action = v["next"]["action"].as_str().unwrap();
        assert!(
            action.contains(&expected.join(" ")),
            "the action names the diff command: {action}"
        );
        for key in [
            "rca_required",
            "red_test_required",
            "no_review",
            "yolo",
            "blocked_from",
        ] {
            assert!(v.get(key).is_some(), "poll --json lacks `{key}`: {v:#}");
        }
        let text = pair(["poll", b.p(), "--agent", "alice"]);
        assert!(
            text.stdout.contains(&expected.join(" ")),
            "{}",
            text.report()
        );
    }
    // Outside a code review there is no diff to read.
    let b = Board::new(board_in("PLANNING_SUBMITTED", false, "/w"));
    let (_, v) = poll_json(b.p(), "alice");
    assert_eq!(v["review"]["diff_command"], Value::Null, "{v:#}");
    assert_eq!(v["worktree"], Value::Null, "{v:#}");
}

#[test]
fn status_json_carries_every_frontmatter_field_of_the_registry() {
    let mut text = board_in("COMMITTED", false, "/srv/repo/.worktrees/board");
    text = text.replace(
        "blocked_from: null\n",
        "blocked_from: null\nrepo_root: /srv/repo\nbase_branch: main\nbase_sha: 0123abcd\n\
         topic_branch: pair/board\ncommit_sha: 89abcdef\n",
    );
    let b = Board::new(&text);
    pair(["validate", b.p()]).code(0);
    let out = pair(["status", b.p(), "--json"]);
    out.code(0);
    let v = out.json();
    let fm = v["frontmatter"].as_object().expect("frontmatter object");
    let names: Vec<&str> = pair::field::Field::ALL
        .iter()
        .map(|f| f.name())
        .filter(|n| *n != "agents")
        .collect();
    let keys: Vec<&str> = fm.keys().map(String::as_str).collect();
    let mut sorted_names = names.clone();
    sorted_names.sort();
    let mut sorted_keys = keys.clone();
    sorted_keys.sort();
    assert_eq!(sorted_keys, sorted_names, "{v:#}");
    assert_eq!(fm["worktree"], "/srv/repo/.worktrees/board");
    assert_eq!(fm["repo_root"], "/srv/repo");
    assert_eq!(fm["base_branch"], "main");
    assert_eq!(fm["base_sha"], "0123abcd");
    assert_eq!(fm["topic_branch"], "pair/board");
    assert_eq!(fm["commit_sha"], "89abcdef");
    assert_eq!(fm["merged_into"], Value::Null);
    assert_eq!(fm["worktree_removed"], Value::Null);
    assert_eq!(fm["required_reviewers"], serde_json::json!(["alice"]));
    assert_eq!(fm["code_review_round"], 2);
    assert_eq!(fm["phase"], "COMMITTED");
    assert_eq!(v["worktree"], "/srv/repo/.worktrees/board");
    // The text shows them too.
    let human = pair(["status", b.p()]);
    for needle in [
        "worktree    /srv/repo/.worktrees/board",
        "commit_sha 89abcdef",
        "topic_branch pair/board",
    ] {
        assert!(
            human.stdout.contains(needle),
            "{needle}\n{}",
            human.report()
        );
    }
}
