//! The semantic operations of SPEC §3–§5, as edits of a typed board.
//!
//! An operation reads the board, checks what only it can know (its arguments, which row of the
//! transition table it means, a stale `--revision`), changes the frontmatter and returns the body
//! entries it wants appended. It never touches the body itself and never judges its own change:
//! the transaction ([`crate::transaction`]) asks the [`crate::law`] about every change, semantic or
//! raw, and appends the entries together with the records the law requires.
//!
//! * [`review`] — register, claim, verdict (the reviewers' side);
//! * [`dissent`] — a fresh dissenter's answer after the reviewers pass;
//! * [`work`] — submit, advance (the doer's side);
//! * [`control`] — block, unblock, stop, note (anyone's);
//! * [`lifecycle`] — recording a created worktree and a validation run.
//! * [`ledger`] — object, resolve, challenge, rule, accept, reopen, withdraw, decide, rework
//!   (the objection ledger).

use crate::board::document::{check_note, demote_note_headings, normalize_newlines};
use crate::board::frontmatter::{Frontmatter, Phase, Status, Timestamp};
use crate::error::{Error, Result};
use crate::law::protocol::Command;
use crate::law::{self, Consent};

mod attend;
mod control;
mod dissent;
mod handoff;
pub mod ledger;
mod lifecycle;
mod review;
mod work;

pub use attend::{away, extend, unrequire};
pub use control::{block, note, note_in, stop, unblock};
pub use dissent::dissent;
pub use handoff::{acknowledge, handoff, withdraw_handoff};
pub use lifecycle::{Created, admit_create, create_worktree, record_check, worktree_target};
pub use review::{claim, correct, register, unable, unregister, verdict};
pub use work::{AdvanceArgs, advance, check_worktree_arg, submit};

/// Who is acting, when (taken under the lock), and with which of the user's permissions.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub agent: String,
    pub now: Timestamp,
    pub consent: Consent,
    /// The names of the body's level-2 sections, in order (what a note may append to).
    pub sections: Vec<String>,
}

/// An entry to append to a body section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub section: String,
    pub heading: String,
    pub text: String,
}

impl Entry {
    pub fn new(section: &str, heading: String, text: impl Into<String>) -> Entry {
        Entry {
            section: section.to_string(),
            heading,
            text: text.into(),
        }
    }

    /// The entry as Markdown: a level-3 heading and the text.
    pub fn render(&self) -> String {
        let text = self.text.trim_end_matches(['\n', '\r', ' ']);
        if text.is_empty() {
            format!("### {}\n", self.heading)
        } else {
            format!("### {}\n\n{text}\n", self.heading)
        }
    }
}

/// What an operation did: a one-line summary and the entries to append.
#[derive(Debug, Clone)]
pub struct Edit {
    pub command: Command,
    pub summary: String,
    pub entries: Vec<Entry>,
}

/// A note's text with its line endings normalized and its headings demoted below the entries'
/// level ([`note_text`]), if it can be appended without changing the document's structure.
pub(crate) fn checked_note(text: &str) -> Result<String> {
    check_note(text)
        .map_err(|p| Error::Usage(format!("the note cannot be appended: {}", p.message)))?;
    Ok(note_text(text).0)
}

/// A note as its entry will hold it: `\n` line endings, and its headings one level down when it
/// has a level-3 heading (the level of the entries' own headings), with a warning naming the
/// lines that changed. What a submission pins is this text.
pub fn note_text(text: &str) -> (String, Option<String>) {
    let (text, demoted) = demote_note_headings(&normalize_newlines(text));
    let warning = (!demoted.is_empty()).then(|| {
        let lines: Vec<String> = demoted.iter().map(u32::to_string).collect();
        format!(
            "the note's headings were moved one level down (line{} {} of the note): `###` \
             headings are the blackboard's entry headings, so a note's headings start at `####`",
            if demoted.len() == 1 { "" } else { "s" },
            lines.join(", ")
        )
    });
    (text, warning)
}

/// Mark the actor as seen now, and set its status.
pub(crate) fn touch(fm: &mut Frontmatter, ctx: &Ctx, status: Option<Status>) {
    if let Some(a) = fm.agent_mut(&ctx.agent) {
        a.last_seen = Some(ctx.now);
        // Any write of the agent's own ends a planned absence (`pair away`).
        a.away = None;
        if let Some(s) = status {
            a.status = s;
        }
    }
}

pub(crate) fn set_phase(fm: &mut Frontmatter, ctx: &Ctx, phase: Phase) {
    if fm.phase != phase {
        fm.phase = phase;
        fm.phase_updated_at = ctx.now;
    }
}

/// Admit the actor to a command (terminal permissions, then role), per the law.
pub(crate) fn admit(fm: &Frontmatter, ctx: &Ctx, command: Command) -> Result<()> {
    law::admit(fm, &ctx.agent, command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::frontmatter::Verdict;
    use crate::error::Hint;
    use crate::law::protocol::Artifact;

    fn board() -> Frontmatter {
        let text = "---\nphase: PLANNING\nphase_updated_at: \"2026-01-01T00:00:00Z\"\nwork_type: feature\nrca_required: false\nred_test_required: false\nrequired_reviewers: []\nanalysis_revision: 0\nplan_revision: 0\nred_test_round: 0\ncode_review_round: 0\nworktree: null\nagents:\n  doer:\n    role: doer\n    status: WORKING\n  alice:\n    role: reviewer\n    status: IDLE\n---\n";
        crate::law::validate::check_bytes(text.as_bytes())
            .expect("valid")
            .parsed
            .fm
    }

    fn ctx(agent: &str) -> Ctx {
        Ctx {
            agent: agent.into(),
            now: Timestamp::parse("2026-02-01T00:00:00Z").expect("timestamp"),
            consent: Consent::default(),
            sections: vec![],
        }
    }

    #[test]
    fn submit_snapshots_reviewers_counts_and_asks_for_its_entry() {
        let mut fm = board();
        let edit = submit(
            &mut fm,
            &ctx("doer"),
            Artifact::Plan,
            "the plan",
            false,
            None,
        )
        .expect("ok");
        assert_eq!(fm.plan_revision, 1);
        assert_eq!(fm.phase, Phase::PlanningSubmitted);
        assert_eq!(fm.required_reviewers, ["alice"]);
        assert_eq!(fm.phase_updated_at, ctx("doer").now);
        assert_eq!(edit.entries.len(), 1);
        assert_eq!(edit.entries[0].section, "Plan Revisions");
        assert!(
            edit.entries[0]
                .render()
                .starts_with("### Plan revision 1 — doer — ")
        );
    }

    #[test]
    fn the_last_verdict_completes_the_round_in_the_same_edit() {
        let mut fm = board();
        submit(&mut fm, &ctx("doer"), Artifact::Plan, "p", false, None).expect("submitted");
        let edit = verdict(&mut fm, &ctx("alice"), Verdict::Approved, 1, "ok", None).expect("ok");
        assert_eq!(fm.phase, Phase::PlanApproved);
        assert!(edit.summary.contains("round is complete"));
        let stale = verdict(&mut fm, &ctx("alice"), Verdict::Approved, 0, "ok", None);
        assert!(stale.is_err());
    }

    #[test]
    fn refusals_come_in_order_phase_then_standing() {
        let mut fm = board();
        // Not a review phase: said before "not a required reviewer".
        let e = claim(&mut fm, &ctx("alice")).unwrap_err();
        assert!(e.to_string().contains("not a review phase"), "{e}");
        let e = note(&mut fm, &ctx("stranger"), "Evidence", "x").unwrap_err();
        assert_eq!(
            e.hint().map(|h| matches!(
                h,
                Hint::Run {
                    command: "register",
                    ..
                }
            )),
            Some(true)
        );
    }
}
