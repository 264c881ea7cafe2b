//! Reaching any phase by driving the real binary from a fresh board (hand-written from SPEC §3.1).

use crate::common::*;
use crate::proto::*;

// ---------------------------------------------------------------------------------------------
// reaching every phase

/// Steps from a fresh board (reviewers alice and bob required from `init`; carol registered
/// but not required) to `phase`. Hand-written from SPEC §3.1.
pub fn recipe(phase: &str) -> Vec<&'static str> {
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
pub fn board_in(phase: &str, init: &[&str]) -> Proto {
    let p = Proto::init(init);
    p.steps(&recipe(phase));
    p.assert_phase(phase);
    p
}

// ---------------------------------------------------------------------------------------------
// raw writes checked against ownership (`pair write --as`)

pub fn raw_write_as(p: &Proto, content: &str, extra: &[&str]) -> Out {
    let h = p.b.sha();
    p.b.write_expect(content, &h, extra)
}
