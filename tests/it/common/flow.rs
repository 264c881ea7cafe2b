//! Texts a board is driven with (plans, analyses, code) and the steps that take it to a phase.

use crate::common::*;
use crate::proto::{Proto, *};

/// A board with two required reviewers, in PLANNING.
pub fn planning() -> Proto {
    let p = Proto::init(&["--goal", "Make uploads retry", "--reviewers", "alice,bob"]);
    p.ok("alice", &["register"]);
    p.ok("bob", &["register"]);
    p.ok(&p.doer.clone(), &["advance", "PLANNING", "--user-approved"]);
    p
}

pub const PLAN_WITH_HEADINGS: &str = "The plan.\n\n### Root cause\n\nNo retry.\n\n#### Detail\n\nSee upload.rs.\n\n### Fix\n\nRetry 3 times.\n";

pub fn submit_plan(p: &Proto) -> Out {
    let file = p.b.aux_file("plan.md", PLAN_WITH_HEADINGS);
    p.ok(
        &p.doer.clone(),
        &[
            "submit",
            "plan",
            "--note-file",
            file.to_str().unwrap(),
            "--user-approved",
        ],
    )
}

/// A board in PLAN_APPROVED with the given required reviewers (all registered, all approving).
pub fn plan_approved(reviewers: &[&str], extra_init: &[&str]) -> Proto {
    let list = reviewers.join(",");
    let mut init = vec!["--reviewers", list.as_str()];
    init.extend_from_slice(extra_init);
    let p = Proto::init(&init);
    for r in reviewers {
        p.ok(r, &["register"]);
    }
    p.ok(&p.doer.clone(), &["advance", "PLANNING", "--user-approved"]);
    p.ok(
        &p.doer.clone(),
        &["submit", "plan", "--note", "p1", "--user-approved"],
    );
    for r in reviewers {
        p.ok(
            r,
            &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        );
    }
    p.assert_phase("PLAN_APPROVED");
    p
}

pub const PLAN: &str = "Plan Revisions";

pub const PLAN_REVIEWS: &str = "Plan Reviews";

pub const RCA: &str = "Root Cause Analysis";

pub const CODE: &str = "Code Review Rounds";

pub const DECISIONS: &str = "Decisions";

/// Asserts the headings of `section` match, in order, the expected lists of words.
#[track_caller]
pub fn assert_headings_in_order(p: &Proto, section: &str, expected: &[&[&str]]) {
    let text = p.text();
    let hs = entry_headings(&text, section);
    assert_eq!(
        hs.len(),
        expected.len(),
        "`## {section}` must hold exactly {} entries, got {hs:#?}\n--- file ---\n{text}",
        expected.len()
    );
    for (i, (h, words)) in hs.iter().zip(expected).enumerate() {
        for w in *words {
            let ok = if let Ok(n) = w.parse::<u64>() {
                names_number(h, n)
            } else {
                norm(h).contains(&norm(w))
            };
            assert!(
                ok,
                "entry {} of `## {section}` must mention {w:?} (chronological order): {h:?}\nall: {hs:#?}",
                i + 1
            );
        }
    }
}

#[track_caller]
pub fn assert_next(v: &serde_json::Value, actor: &str, handoff: &[&str], action_words: &[&str]) {
    assert_eq!(v["next"]["actor"], actor, "next.actor\n{v:#}");
    assert_eq!(
        strs(&v["next"]["handoff_to"]),
        sv(handoff),
        "next.handoff_to\n{v:#}"
    );
    let action = v["next"]["action"].as_str().unwrap_or_default();
    for w in action_words {
        assert!(
            action.contains(w),
            "next.action must mention {w:?}: {action:?}\n{v:#}"
        );
    }
}
