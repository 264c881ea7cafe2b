//! The dissent stage's rules (see [`crate::board::dissent`] for its data). On a gate that
//! requires it (`init --dissent`), the reviewers' pass is not the end of the gate: the phase
//! stays in the review while a fresh dissenter — an agent that is neither the doer nor a reviewer
//! of the gate, and has not dissented on the board before (unless the board was made with
//! `--dissenter-every-cycle`) — answers none, advisory or blocking. None and
//! advisory approve the gate (advisory objections go into its consensus entry); blocking sends it
//! back to the doer as a changes-requested round would, and the next dissenter judges the
//! revisions against those objections. The [`MAX_ROUNDS`]th blocking dissent sends the gate to
//! the arbiter's decision (`pair decide`), counted apart from the review-round cap.
//!
//! The rules are data: [`WHO`], [`OUTCOMES`] and [`RULES`] are read by [`judge`] (every write,
//! semantic or raw), by `poll`'s next step, by `pair dissent` and by the documentation test that
//! keeps docs/protocol.md's tables of them in step.

use crate::board::dissent::{Outcome, Round};
use crate::board::frontmatter::{Frontmatter, Phase, Role, Target, Verdict};
use crate::board::ledger::{Objection, Severity, State, round_of};
use crate::error::{Error, Hint, Result};
use crate::law::protocol::{outcome_phase, round};

/// Dissent rounds on one gate before the arbiter decides (counted apart from `max_rounds`).
pub const MAX_ROUNDS: u32 = 3;

/// Who may act in the dissent stage, one row per kind of agent: the stage's own table.
pub struct Who {
    pub who: &'static str,
    pub may_dissent: bool,
    pub why: &'static str,
}

/// Who may dissent on a gate.
pub const WHO: &[Who] = &[
    Who {
        who: "the doer",
        may_dissent: false,
        why: "it wrote the artifact",
    },
    Who {
        who: "a reviewer of the gate (required in it, or with a verdict on it)",
        may_dissent: false,
        why: "its pass is what the dissent tests",
    },
    Who {
        who: "an agent that already dissented on the board (on any gate)",
        may_dissent: false,
        why: "a fresh dissenter each cycle: a dissenter answers one dissent round of one board, \
              unless the board was made with `--dissenter-every-cycle`",
    },
    Who {
        who: "any other agent on the blackboard (`pair register`, not required)",
        may_dissent: true,
        why: "one answer, on the submission the reviewers passed",
    },
];

/// Where a dissent sends the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goes {
    /// The gate's approved phase (READY_TO_COMMIT for the code), with a consensus entry.
    Approved,
    /// Back to the doer: the gate's changes-requested phase; at dissent round [`MAX_ROUNDS`],
    /// AWAITING_DECISION.
    Revision,
}

/// One outcome a dissenter may answer.
pub struct OutcomeRow {
    pub outcome: Outcome,
    /// What the answer needs, in words.
    pub needs: &'static str,
    pub goes: Goes,
}

/// The outcomes of a dissent.
pub const OUTCOMES: &[OutcomeRow] = &[
    OutcomeRow {
        outcome: Outcome::Nothing,
        needs: "no objection raised by the dissenter in this cycle and none of the stage left open",
        goes: Goes::Approved,
    },
    OutcomeRow {
        outcome: Outcome::Advisory,
        needs: "at least one advisory objection (ADV-N) raised by the dissenter in this cycle, \
                none blocking left open; the advisory notes go into the gate's consensus entry",
        goes: Goes::Approved,
    },
    OutcomeRow {
        outcome: Outcome::Blocking,
        needs: "`--objections` naming exactly the stage's open blocking objections (its new \
                BLK-N and REG-N, prior ones it reopened)",
        goes: Goes::Revision,
    },
];

/// One rule over a write's change of the dissent stage.
pub struct Rule {
    pub name: &'static str,
    pub says: &'static str,
}

/// Every rule of the dissent stage, in the order [`judge`] checks them.
pub const RULES: &[Rule] = &[
    Rule {
        name: "settings",
        says: "`dissent_gates` and `dissent_every_cycle` are set at `pair init --dissent \
               [--dissenter-every-cycle]` and change only by a human repair",
    },
    Rule {
        name: "record",
        says: "a dissent is recorded once, by its dissenter under its own id: verdicts are never \
               changed or removed, one is added per write",
    },
    Rule {
        name: "stage-open",
        says: "a dissent answers the submission the reviewers just passed, on a gate that \
               requires the stage, while no dissenter has answered on it",
    },
    Rule {
        name: "fresh",
        says: "the dissenter is neither the doer nor a reviewer of the gate, and has not dissented \
               on the board before (on any gate), unless `dissent_every_cycle` is set",
    },
    Rule {
        name: "judged",
        says: "in a revision cycle, every prior objection of the stage the doer resolved is \
               accepted or reopened before the answer",
    },
    Rule {
        name: "outcome",
        says: "the answer is what the objections say (the outcomes table)",
    },
    Rule {
        name: "moves",
        says: "the answer moves the gate in the same write: none and advisory to its approved \
               phase, blocking to its changes-requested phase, the third blocking to \
               AWAITING_DECISION; a passed round of such a gate moves only so",
    },
];

fn refuse(message: impl Into<String>) -> Error {
    Error::protocol(message)
}

fn poll_wait(id: &str) -> Hint {
    Hint::Run {
        command: "poll",
        args: vec!["--agent".into(), id.into(), "--wait".into()],
    }
}

/// The gate waiting for a dissent: under review, requiring the stage, its round approved by the
/// reviewers and no dissent recorded on its current submission.
pub fn stage_open(fm: &Frontmatter) -> Option<Target> {
    let t = fm.phase.review_target()?;
    let r = round(fm, t);
    (fm.dissent_required(t)
        && r.approved
        && !r.approved_by.is_empty()
        && fm.dissent.at(t, fm.counter(t)).is_none())
    .then_some(t)
}

/// Why a board may not work without reviewers (`None`: it may): a dissent stage follows the
/// reviewers' pass, and a submission nobody reviews would be approved by itself, past its
/// dissenter.
pub fn no_review_refusal(fm: &Frontmatter) -> Option<String> {
    let gates = &fm.dissent.gates;
    (!gates.is_empty()).then(|| {
        let names: Vec<&str> = gates.iter().map(|g| g.as_str()).collect();
        format!(
            "this board's {} gate{} require{} a dissent stage, which follows the reviewers' pass: \
             it cannot work without reviewers (no_review); have a reviewer run `pair register`",
            names.join(" and "),
            if names.len() == 1 { "" } else { "s" },
            if names.len() == 1 { "s" } else { "" },
        )
    })
}

/// Whether the reviewers' pass on `t`'s current submission waits for a dissent (or got one):
/// such a round does not move the phase by itself.
pub fn holds_round(fm: &Frontmatter, t: Target) -> bool {
    fm.dissent_required(t) && round(fm, t).approved
}

/// The dissent rounds of gate `t` in its current view (after a rework, the rounds before it do
/// not count).
pub fn rounds_on(fm: &Frontmatter, t: Target) -> u32 {
    let since = fm.ledger.gate(t).since;
    fm.dissent.of_gate(t).filter(|r| r.counter > since).count() as u32
}

/// Whether `id` is a reviewer of gate `t`: required in it, or with a verdict on it.
pub fn reviews(fm: &Frontmatter, id: &str, t: Target) -> bool {
    fm.is_required_now(id)
        || fm.required_reviewers.iter().any(|r| r == id)
        || fm
            .agent(id)
            .is_some_and(|a| a.review(t).reviewed.is_some() || a.review(t).verdict.is_some())
}

/// The dissent `id` already gave on the board, if the board allows a dissenter one cycle only.
fn used_up<'a>(fm: &'a Frontmatter, id: &str) -> Option<&'a Round> {
    if fm.dissent.every_cycle {
        return None;
    }
    fm.dissent.rounds.iter().find(|r| r.by == id)
}

/// Why `id` may not dissent on gate `t` (`None`: it may): the [`WHO`] table's refusals.
pub fn unfit(fm: &Frontmatter, id: &str, t: Target) -> Option<String> {
    let row = if fm.doer() == Some(id) {
        &WHO[0]
    } else if reviews(fm, id, t) {
        &WHO[1]
    } else if let Some(r) = used_up(fm, id) {
        return Some(format!(
            "{id} already dissented on this board ({} {}) and may not dissent again ({}); a \
             fresh dissenter answers the {t} gate: an agent id new to the board registers and \
             answers under that id",
            r.gate, r.counter, WHO[2].why
        ));
    } else {
        return None;
    };
    Some(format!(
        "{id} is {} of the {t} gate and may not dissent on it ({}); a fresh agent dissents",
        row.who.split(" (").next().unwrap_or(row.who),
        row.why
    ))
}

/// The refusal of a dissent by `id` on gate `t` (`None`: it may dissent), with the step to take:
/// for a dissenter whose one cycle is used up, a fresh agent id registering; else waiting.
pub fn unfit_refusal(fm: &Frontmatter, id: &str, t: Target, prefix: &str) -> Option<Error> {
    let why = unfit(fm, id, t)?;
    let hint = match used_up(fm, id) {
        Some(_) if fm.doer() != Some(id) && !reviews(fm, id, t) => Hint::Run {
            command: "register",
            args: vec!["--agent".into(), "NEW_ID".into()],
        },
        _ => poll_wait(id),
    };
    Some(Error::refused(format!("{prefix}{why}"), hint))
}

/// Whether `id` is the dissenter the open stage waits for.
pub fn is_dissenter_now(fm: &Frontmatter, id: &str) -> bool {
    stage_open(fm).is_some_and(|t| unfit(fm, id, t).is_none() && fm.agent(id).is_some())
}

/// Whether an objection was raised by a dissenter (nobody else raises one who is not a
/// reviewer of its gate).
pub fn raised_in_dissent(fm: &Frontmatter, o: &Objection) -> bool {
    fm.dissent_required(o.gate) && fm.doer() != Some(o.by.as_str()) && !reviews(fm, &o.by, o.gate)
}

/// Who moves an objection "as its raiser": for a dissent's objection, the dissenter of the open
/// stage (a fresh one judges the prior objections); for a reviewer's, the reviewer.
pub fn acts_as_raiser(fm: &Frontmatter, id: &str, o: &Objection) -> bool {
    if raised_in_dissent(fm, o) {
        stage_open(fm) == Some(o.gate) && is_dissenter_now(fm, id)
    } else {
        crate::board::handoff::holder(fm, &o.by) == id
    }
}

/// The stage's open blocking objections on gate `t`.
pub fn open_blocking(fm: &Frontmatter, t: Target) -> Vec<String> {
    fm.ledger
        .of_gate(t)
        .filter(|o| o.severity == Severity::Blocking && o.state.is_open())
        .filter(|o| raised_in_dissent(fm, o))
        .map(|o| o.id.clone())
        .collect()
}

/// The stage's objections the doer resolved, waiting for the dissenter's acceptance.
pub fn to_judge(fm: &Frontmatter, t: Target) -> Vec<String> {
    fm.ledger
        .of_gate(t)
        .filter(|o| o.state == State::Resolved && raised_in_dissent(fm, o))
        .map(|o| o.id.clone())
        .collect()
}

/// The objections `id` raised on gate `t` in its current round.
fn raised_now<'a>(
    fm: &'a Frontmatter,
    id: &'a str,
    t: Target,
) -> impl Iterator<Item = &'a Objection> {
    let r = round_of(fm, t);
    fm.ledger
        .of_gate(t)
        .filter(move |o| o.by == id && o.round == r)
}

/// Why the answer `outcome` (naming `ids`) does not fit the board `fm` (`None`: it does).
pub fn outcome_refusal(
    fm: &Frontmatter,
    id: &str,
    t: Target,
    outcome: Outcome,
    ids: &[String],
) -> Option<String> {
    let pending = to_judge(fm, t);
    if !pending.is_empty() {
        return Some(format!(
            "the doer resolved {} of the dissent on the {t} gate: accept each (`pair accept`) or \
             reopen it (`pair reopen --reason TEXT`) before answering",
            pending.join(", ")
        ));
    }
    let open = open_blocking(fm, t);
    let mine: Vec<&Objection> = raised_now(fm, id, t).collect();
    match outcome {
        Outcome::Nothing | Outcome::Advisory if !open.is_empty() => Some(format!(
            "blocking objections of the dissent are open on the {t} gate ({}): answer blocking \
             naming them",
            open.join(", ")
        )),
        Outcome::Nothing if !mine.is_empty() => Some(format!(
            "{id} raised {} in this cycle: answer advisory (or blocking), not none",
            mine.iter()
                .map(|o| o.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Outcome::Advisory if !mine.iter().any(|o| o.severity == Severity::Advisory) => Some(
            "an advisory dissent names its notes as advisory objections: raise at least one \
                 (`pair object --severity advisory`), or answer none"
                .to_string(),
        ),
        Outcome::Nothing | Outcome::Advisory if !ids.is_empty() => {
            Some("only a blocking dissent names objections (--objections)".into())
        }
        Outcome::Blocking if open.is_empty() => Some(format!(
            "a blocking dissent names open blocking objections, and the dissent on the {t} gate \
             has none: raise them first (`pair object --severity blocking`)"
        )),
        Outcome::Blocking => {
            let mut want = open.clone();
            want.sort();
            let mut got = ids.to_vec();
            got.sort();
            (want != got).then(|| {
                format!(
                    "a blocking dissent names exactly the open blocking objections of the \
                     dissent on the {t} gate: --objections {}",
                    open.join(",")
                )
            })
        }
        _ => None,
    }
}

/// The phase a dissent on gate `t` moves to, on the board `fm` that records it.
pub fn phase_after(fm: &Frontmatter, t: Target, outcome: Outcome) -> Phase {
    let row = OUTCOMES
        .iter()
        .find(|r| r.outcome == outcome)
        .map(|r| r.goes);
    match row {
        Some(Goes::Approved) => outcome_phase(t, true),
        _ if rounds_on(fm, t) >= MAX_ROUNDS => Phase::AwaitingDecision,
        _ => outcome_phase(t, false),
    }
}

/// The dissent this write adds, if any.
pub fn added(old: &Frontmatter, new: &Frontmatter) -> Option<Round> {
    (new.dissent.rounds.len() == old.dissent.rounds.len() + 1)
        .then(|| new.dissent.rounds.last().cloned())
        .flatten()
}

/// Whether `old → new` is a dissent's move of gate `t`'s phase (for the transition table).
pub fn moves(old: &Frontmatter, new: &Frontmatter) -> bool {
    let Some(t) = stage_open(old) else {
        return false;
    };
    added(old, new).is_some_and(|r| r.gate == t && phase_after(new, t, r.outcome) == new.phase)
}

/// Whether the dissent of `old → new` sends its gate to the arbiter (its last round blocking).
pub fn cap_reached(old: &Frontmatter, new: &Frontmatter, t: Target) -> bool {
    moves(old, new)
        && new.phase == Phase::AwaitingDecision
        && added(old, new).is_some_and(|r| r.gate == t && r.outcome == Outcome::Blocking)
}

/// Judge a write by agent `id` (in `role`) against every rule of [`RULES`].
pub fn judge(old: &Frontmatter, new: &Frontmatter, id: &str, role: Role) -> Result<()> {
    if old.dissent == new.dissent {
        // "moves": a passed round of a dissent gate moves only by a dissent.
        if let Some(t) = old.phase.review_target()
            && new.phase == outcome_phase(t, true)
            && old.phase != new.phase
            && holds_round(new, t)
        {
            return Err(Error::refused(
                format!(
                    "field `phase`: the {t} gate requires a dissent stage; the reviewers' pass \
                     waits for a fresh dissenter's answer (`pair dissent`) before {}",
                    new.phase
                ),
                poll_wait(id),
            ));
        }
        return Ok(());
    }
    if old.dissent.gates != new.dissent.gates || old.dissent.every_cycle != new.dissent.every_cycle
    {
        let field = if old.dissent.gates != new.dissent.gates {
            crate::board::dissent::GATES_FIELD
        } else {
            crate::board::dissent::EVERY_CYCLE_FIELD
        };
        return Err(refuse(format!("field `{field}`: {}", RULES[0].says)));
    }
    let field = crate::board::dissent::ROUNDS_FIELD;
    let kept = new.dissent.rounds.len() == old.dissent.rounds.len() + 1
        && new.dissent.rounds[..old.dissent.rounds.len()] == old.dissent.rounds[..];
    let Some(r) = added(old, new).filter(|r| kept && r.by == id && role == Role::Reviewer) else {
        return Err(refuse(format!("field `{field}`: {}", RULES[1].says)));
    };
    let Some(t) = stage_open(old) else {
        return Err(Error::refused(
            format!(
                "field `{field}`: no dissent is awaited in phase {}: {}",
                old.phase, RULES[2].says
            ),
            poll_wait(id),
        ));
    };
    if r.gate != t || r.counter != old.counter(t) {
        return Err(refuse(format!(
            "field `{field}`: the dissent awaited is on {t} {}, not {} {}",
            old.counter(t),
            r.gate,
            r.counter
        )));
    }
    if let Some(e) = unfit_refusal(old, id, t, &format!("field `{field}`: ")) {
        return Err(e);
    }
    if let Some(why) = outcome_refusal(new, id, t, r.outcome, &r.objections) {
        return Err(refuse(format!("dissent {}: {why}", r.outcome)));
    }
    let want = phase_after(new, t, r.outcome);
    if new.phase != want {
        return Err(refuse(format!(
            "field `phase`: a {} dissent on the {t} gate (dissent round {} of {MAX_ROUNDS}) moves \
             it to {want}, not {}",
            r.outcome,
            rounds_on(new, t),
            new.phase
        )));
    }
    Ok(())
}

/// Whether a verdict on `t` by `id` is a pass (for the validation of a held round).
pub fn passed(fm: &Frontmatter, id: &str, t: Target) -> bool {
    fm.agent(id).is_some_and(|a| {
        a.review(t).verdict == Some(Verdict::Approved)
            && a.review(t).reviewed == Some(fm.counter(t))
    })
}

/// The stage's tables as Markdown, for docs/protocol.md (a test keeps the two identical).
pub fn markdown_tables() -> String {
    let mut out = String::from("| who | may dissent | why |\n|---|---|---|\n");
    for w in WHO {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            w.who,
            if w.may_dissent { "yes" } else { "no" },
            w.why
        ));
    }
    out.push_str("\n| answer | needs | the gate goes to |\n|---|---|---|\n");
    for o in OUTCOMES {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            o.outcome,
            o.needs,
            match o.goes {
                Goes::Approved => "its approved phase (READY_TO_COMMIT for the code)".to_string(),
                Goes::Revision => format!(
                    "its changes-requested phase; at dissent round {MAX_ROUNDS}, AWAITING_DECISION"
                ),
            }
        ));
    }
    out.push_str("\n| rule | says |\n|---|---|\n");
    for r in RULES {
        out.push_str(&format!("| `{}` | {} |\n", r.name, r.says));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_are_unique_and_every_outcome_has_a_row() {
        let mut names: Vec<_> = RULES.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RULES.len());
        for o in Outcome::ALL {
            assert!(OUTCOMES.iter().any(|r| r.outcome == *o), "{o}");
        }
    }
}
