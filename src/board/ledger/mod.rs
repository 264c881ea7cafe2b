//! The objection ledger: reviewers' findings as data, with ids, stable anchors and states, and
//! the round cap and decisions that end every review gate.
//!
//! The frontmatter keeps the ledger compact under one `ledger` key (the round cap, each gate's
//! rounds and stop reason, and per objection its id, raiser, gate, round, severity, anchor,
//! state and title); the full texts (evidence, fix, resolutions, grounds, rulings) are body
//! entries. [`MOVES`] is the one statement of who may move an objection from which state to
//! which, in which phase: the commands, the law (so a raw `write --as` is held to it), `poll`'s
//! next step and the table in docs/protocol.md all read it.
//!
//! * [`anchor`] — the anchor forms and their syntax;
//! * [`form`] — the `ledger:` block of the frontmatter, written and read;
//! * [`second`] — the seconds: reviewers backing another's open objection;
//! * [`status`] — what `status`, `validate` and `poll` say about it;
//! * [`valid`] — the invariants `validate` checks;
//! * [`rules`] — what the law checks of a change to the ledger, and the invariants `validate`
//!   checks;
//! * [`next`] — what `poll` says about objections.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::board::frontmatter::{Frontmatter, Phase, Target};

pub mod anchor;
pub mod form;
pub mod second;
pub mod status;

pub use form::{emit, from_node, summary};
pub use status::{GateSummary, Summary, Unsettled, describe, line, summary_of};

crate::board::frontmatter::word_enum!(
    /// How much an objection weighs: a blocking one keeps its gate from being approved.
    Severity {
        Blocking => "blocking",
        Advisory => "advisory",
    }
);

crate::board::frontmatter::word_enum!(
    /// Where an objection stands.
    State {
        Open => "open",
        Resolved => "resolved",
        Accepted => "accepted",
        Challenged => "challenged",
        Overruled => "overruled",
        Withdrawn => "withdrawn",
        Deferred => "deferred",
        Reopened => "reopened",
        Superseded => "superseded",
        RiskAccepted => "risk_accepted",
    }
);

crate::board::frontmatter::word_enum!(
    /// Why a gate, or the work, stopped.
    StopReason {
        Approved => "approved",
        CapReached => "cap_reached",
        Diverging => "diverging",
        Accepted => "accepted",
        Rejected => "rejected",
        Deferred => "deferred",
        StoppedByUser => "stopped_by_user",
        Blocked => "blocked",
        Completed => "completed",
    }
);

impl State {
    /// Open for the purpose of the gate: the doer must act on it (a blocking one blocks).
    pub fn is_open(self) -> bool {
        matches!(self, State::Open | State::Reopened)
    }
    /// Still to be settled by someone: open, resolved awaiting acceptance, or challenged.
    pub fn is_unsettled(self) -> bool {
        matches!(
            self,
            State::Open | State::Reopened | State::Resolved | State::Challenged
        )
    }
}

impl StopReason {
    /// The reasons that leave a gate waiting for a decision.
    pub fn awaits_decision(self) -> bool {
        matches!(
            self,
            StopReason::CapReached | StopReason::Diverging | StopReason::Deferred
        )
    }
}

/// The round cap when the board sets none.
pub const DEFAULT_MAX_ROUNDS: u32 = 3;

/// One objection, as the frontmatter keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Objection {
    pub id: String,
    pub by: String,
    pub gate: Target,
    pub round: u32,
    pub severity: Severity,
    pub anchor: String,
    pub state: State,
    pub title: String,
    /// For a regression (`REG-N`): the objection whose resolution caused it.
    pub cause: Option<String>,
}

/// The id prefixes, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Blocking,
    Advisory,
    Regression,
}

impl Kind {
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Blocking => "BLK",
            Kind::Advisory => "ADV",
            Kind::Regression => "REG",
        }
    }
    pub fn severity(self) -> Severity {
        match self {
            Kind::Advisory => Severity::Advisory,
            _ => Severity::Blocking,
        }
    }
    /// The kind and number of an id like `BLK-3`.
    pub fn parse_id(id: &str) -> Option<(Kind, u32)> {
        let (prefix, n) = id.split_once('-')?;
        let kind = [Kind::Blocking, Kind::Advisory, Kind::Regression]
            .into_iter()
            .find(|k| k.prefix() == prefix)?;
        if n.is_empty() || n.starts_with('0') || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some((kind, n.parse().ok()?))
    }
}

/// One gate's bookkeeping (a gate is a review target: analysis, plan, red test, code).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gate {
    /// The target's counter before the first round of the current ledger view (0, or the
    /// counter a rework restarted from): round `k` of the gate is counter `since + k`.
    pub since: u32,
    /// Why the gate stopped: null while its rounds go on.
    pub stop_reason: Option<StopReason>,
    /// With `stop_reason: deferred`: `human`, `parking-lot` or `blocked-pending:X`.
    pub escalation: Option<String>,
    /// The open blocking objections of the gate when each of its rounds completed.
    pub open: Vec<u32>,
    /// After a rework: the `since` it replaced, so a reviewer can reject the rework.
    pub reworked_from: Option<u32>,
}

/// The ledger: the round cap, the gates and the objections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ledger {
    /// `init --max-rounds N`; `None` is the default (3) on a board that uses the ledger.
    pub max_rounds: Option<u32>,
    pub gates: Vec<(Target, Gate)>,
    pub objections: Vec<Objection>,
}

impl Ledger {
    /// Whether the board uses the ledger: it set a round cap (opted in at `init`), or a
    /// reviewer raised an objection on it. Other boards work as without a ledger.
    pub fn in_use(&self) -> bool {
        self.max_rounds.is_some() || !self.objections.is_empty()
    }
    pub fn is_empty(&self) -> bool {
        self.max_rounds.is_none() && self.gates.is_empty() && self.objections.is_empty()
    }
    pub fn max_rounds(&self) -> u32 {
        self.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS)
    }
    pub fn gate(&self, t: Target) -> Gate {
        self.gates
            .iter()
            .find(|(g, _)| *g == t)
            .map(|(_, g)| g.clone())
            .unwrap_or_default()
    }
    /// Set a gate's bookkeeping (kept in target order; a default gate is left out).
    pub fn set_gate(&mut self, t: Target, gate: Gate) {
        self.gates.retain(|(g, _)| *g != t);
        if gate != Gate::default() {
            self.gates.push((t, gate));
            self.gates.sort_by_key(|(g, _)| *g);
        }
    }
    pub fn get(&self, id: &str) -> Option<&Objection> {
        self.objections.iter().find(|o| o.id == id)
    }
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Objection> {
        self.objections.iter_mut().find(|o| o.id == id)
    }
    /// The next id of a kind: numbered per board.
    pub fn next_id(&self, kind: Kind) -> String {
        let n = self
            .objections
            .iter()
            .filter_map(|o| Kind::parse_id(&o.id))
            .filter(|(k, _)| *k == kind)
            .map(|(_, n)| n)
            .max()
            .unwrap_or(0);
        format!("{}-{}", kind.prefix(), n.saturating_add(1))
    }
    /// The objections of a gate's current view (not superseded by a rework).
    pub fn of_gate(&self, t: Target) -> impl Iterator<Item = &Objection> {
        self.objections
            .iter()
            .filter(move |o| o.gate == t && o.state != State::Superseded)
    }
    /// Ids of the gate's open blocking objections, optionally only those of one reviewer.
    pub fn open_blocking(&self, t: Target, by: Option<&[String]>) -> Vec<String> {
        self.of_gate(t)
            .filter(|o| o.severity == Severity::Blocking && o.state.is_open())
            .filter(|o| by.is_none_or(|b| b.contains(&o.by)))
            .map(|o| o.id.clone())
            .collect()
    }
}

/// A submission named as `GATE:N` (`code:2`, `plan:1`, `red_test:1` or `red-test:1`): the
/// gate and its counter. What `resolve --fixed-in` and `correct --review` take.
pub fn parse_round(s: &str) -> Result<(Target, u32), String> {
    let bad = || {
        format!(
            "{s:?} is not GATE:N (GATE one of analysis, plan, red_test, code; N the revision or \
             round, e.g. code:2)"
        )
    };
    let (gate, n) = s.trim().split_once(':').ok_or_else(bad)?;
    let gate: Target = gate.trim().replace('-', "_").parse().map_err(|_| bad())?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 {
        return Err(bad());
    }
    Ok((gate, n))
}

/// The submissions made after counter `after` of `gate`, as GATE:N: its later rounds, then
/// every round of the later gates. What `resolve --fixed-in` may name for an objection raised
/// on `gate` at `after`.
pub fn submitted_after(fm: &Frontmatter, gate: Target, after: u32) -> Vec<String> {
    Target::ALL
        .iter()
        .filter(|t| **t >= gate)
        .flat_map(|t| {
            let from = if *t == gate { after + 1 } else { 1 };
            (from..=fm.counter(*t)).map(move |n| format!("{t}:{n}"))
        })
        .collect()
}

/// The counter of its gate an objection was raised on.
pub fn raised_at(fm: &Frontmatter, o: &Objection) -> u32 {
    fm.ledger.gate(o.gate).since + o.round
}

/// The round of a gate its current counter is (1 for the first submission of the view).
pub fn round_of(fm: &Frontmatter, t: Target) -> u32 {
    fm.counter(t).saturating_sub(fm.ledger.gate(t).since)
}

/// The gate a decision is pending on (AWAITING_DECISION, or BLOCKED from it): the gate whose
/// stop reason awaits a decision.
pub fn pending_gate(fm: &Frontmatter) -> Option<Target> {
    fm.ledger
        .gates
        .iter()
        .find(|(_, g)| g.stop_reason.is_some_and(StopReason::awaits_decision))
        .map(|(t, _)| *t)
}

/// Whether the gate's current approved phase stands by a decision (`decide accept`) rather
/// than by the verdicts.
pub fn accepted_by_decision(fm: &Frontmatter, t: Target) -> bool {
    fm.counter(t) > 0 && fm.ledger.gate(t).stop_reason == Some(StopReason::Accepted)
}

/// Whether the open blocking counts of a gate grew in two consecutive rounds.
pub fn diverging(open: &[u32]) -> bool {
    match open {
        [.., a, b, c] => a < b && b < c,
        _ => false,
    }
}

/// Why a round that just completed with changes requested goes to a decision, if it does: the
/// gate reached its cap, or it is diverging. Only on a board that uses the ledger.
pub fn decision_due(fm: &Frontmatter, t: Target, open: &[u32]) -> Option<StopReason> {
    if !fm.ledger.in_use() {
        return None;
    }
    if round_of(fm, t) >= fm.ledger.max_rounds() {
        Some(StopReason::CapReached)
    } else if diverging(open) {
        Some(StopReason::Diverging)
    } else {
        None
    }
}

/// The stop reason of a terminal phase, read from the phase and the gates' records.
pub fn terminal_stop_reason(fm: &Frontmatter) -> Option<StopReason> {
    let pending = pending_gate(fm).map(|t| fm.ledger.gate(t).stop_reason);
    match fm.phase {
        Phase::Committed | Phase::Merged | Phase::CleanedUp => Some(StopReason::Completed),
        Phase::Blocked if pending == Some(Some(StopReason::Deferred)) => Some(StopReason::Deferred),
        Phase::Blocked => Some(StopReason::Blocked),
        Phase::Stopped
            if fm
                .ledger
                .gates
                .iter()
                .any(|(_, g)| g.stop_reason == Some(StopReason::Rejected)) =>
        {
            Some(StopReason::Rejected)
        }
        Phase::Stopped => Some(StopReason::StoppedByUser),
        _ => None,
    }
}

/// The phases in which the doer revises a gate's artifact (and resolves its objections).
pub fn revising(phase: Phase) -> Option<Target> {
    match phase {
        Phase::Analyzing | Phase::AnalysisChangesRequested => Some(Target::Analysis),
        Phase::Planning | Phase::PlanChangesRequested => Some(Target::Plan),
        Phase::RedTesting | Phase::RedTestChangesRequested => Some(Target::RedTest),
        Phase::Coding | Phase::CodeChangesRequested => Some(Target::Code),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// The moves: who may move an objection from which state to which, in which phase.

/// Who makes a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mover {
    /// The reviewer who raised the objection (for `object`: a required reviewer).
    Raiser,
    /// The doer.
    Doer,
    /// The arbiter: the gate's only required reviewer, or anyone with the user's word
    /// (`--user-approved`).
    Arbiter,
}

/// Where an objection's gate stands, which decides the moves that can be made on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The gate is under review (a review phase of its target).
    Review,
    /// The doer is revising the gate's artifact (its work or changes-requested phase; for the
    /// code, READY_TO_COMMIT too, which takes follow-ups).
    Revising,
    /// The gate awaits a decision (AWAITING_DECISION on it).
    Decision,
    /// The gate has closed: the board is in its approved phase or has moved on to a later gate,
    /// in a phase that is not terminal. No round of the gate will come again, so what is left
    /// open on it is settled here (else it would stay open for good).
    Closed,
}

/// The command (and, for `rule` and `decide`, the word) that makes a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Object,
    Resolve,
    Challenge,
    Uphold,
    Overrule,
    Accept,
    Reopen,
    Withdraw,
    DecideAccept,
    DecideDefer,
    Rework,
    RejectRework,
}

impl Verb {
    /// The command line that makes the move.
    pub fn command(self) -> &'static str {
        match self {
            Verb::Object => "object",
            Verb::Resolve => "resolve",
            Verb::Challenge => "challenge",
            Verb::Uphold => "rule … uphold",
            Verb::Overrule => "rule … overrule",
            Verb::Accept => "accept",
            Verb::Reopen => "reopen",
            Verb::Withdraw => "withdraw",
            Verb::DecideAccept => "decide accept",
            Verb::DecideDefer => "decide defer",
            Verb::Rework => "submit … --rework",
            Verb::RejectRework => "rule rework reject-rework",
        }
    }
}

/// One row of the ledger's rules: an objection in one of `from` (none: a new objection) moves
/// to `to`, by `who`, with `verb`, `when` its gate is in that phase.
#[derive(Debug, Clone, Copy)]
pub struct Move {
    pub from: &'static [State],
    pub to: State,
    pub who: Mover,
    pub verb: Verb,
    /// Where the objection's gate must stand: any of these.
    pub when: &'static [Stage],
}

use State as S;

const UNSETTLED: &[State] = &[S::Open, S::Reopened, S::Challenged];
const UNSETTLED_OR_DEFERRED: &[State] = &[S::Open, S::Reopened, S::Challenged, S::Deferred];

const REVIEW: &[Stage] = &[Stage::Review];
const REVISING: &[Stage] = &[Stage::Revising];
const REVIEW_OR_REVISING: &[Stage] = &[Stage::Review, Stage::Revising];
const DECISION: &[Stage] = &[Stage::Decision];
const REVISING_OR_CLOSED: &[Stage] = &[Stage::Revising, Stage::Closed];
const REVIEW_OR_CLOSED: &[Stage] = &[Stage::Review, Stage::Closed];
const ANY_BUT_DECISION: &[Stage] = &[Stage::Review, Stage::Revising, Stage::Closed];

/// The ledger's rules, one row per move.
#[rustfmt::skip]
pub const MOVES: &[Move] = &[
    Move { from: &[],                                         to: S::Open,         who: Mover::Raiser,  verb: Verb::Object,       when: REVIEW },
    Move { from: &[S::Open, S::Reopened],                     to: S::Resolved,     who: Mover::Doer,    verb: Verb::Resolve,      when: REVISING_OR_CLOSED },
    Move { from: &[S::Open, S::Reopened],                     to: S::Challenged,   who: Mover::Doer,    verb: Verb::Challenge,    when: REVISING },
    Move { from: &[S::Challenged],                            to: S::Open,         who: Mover::Arbiter, verb: Verb::Uphold,       when: REVIEW_OR_REVISING },
    Move { from: &[S::Challenged],                            to: S::Overruled,    who: Mover::Arbiter, verb: Verb::Overrule,     when: REVIEW_OR_REVISING },
    Move { from: &[S::Resolved],                              to: S::Accepted,     who: Mover::Raiser,  verb: Verb::Accept,       when: REVIEW_OR_CLOSED },
    Move { from: &[S::Resolved, S::Accepted],                 to: S::Reopened,     who: Mover::Raiser,  verb: Verb::Reopen,       when: REVIEW },
    Move { from: &[S::Open, S::Reopened, S::Challenged, S::Resolved], to: S::Withdrawn, who: Mover::Raiser, verb: Verb::Withdraw, when: ANY_BUT_DECISION },
    Move { from: UNSETTLED_OR_DEFERRED,                       to: S::RiskAccepted, who: Mover::Arbiter, verb: Verb::DecideAccept, when: DECISION },
    Move { from: UNSETTLED,                                   to: S::Deferred,     who: Mover::Arbiter, verb: Verb::DecideDefer,  when: DECISION },
    Move { from: &[S::Open, S::Reopened, S::Challenged, S::Resolved], to: S::Superseded, who: Mover::Doer, verb: Verb::Rework, when: REVISING },
    Move { from: &[S::Superseded],                            to: S::Open,         who: Mover::Arbiter, verb: Verb::RejectRework, when: REVIEW },
];

/// The row for a verb from a state (`None`: a new objection).
pub fn find_move(verb: Verb, from: Option<State>) -> Option<&'static Move> {
    MOVES.iter().find(|m| {
        m.verb == verb
            && match from {
                None => m.from.is_empty(),
                Some(s) => m.from.contains(&s),
            }
    })
}

/// The gate the board is at: the one under review, being revised, whose outcome the phase
/// shows, or that awaits a decision (`None` in DRAFT and in a terminal phase).
pub fn gate_at(fm: &Frontmatter) -> Option<Target> {
    if fm.phase.is_terminal() {
        return None;
    }
    fm.phase
        .review_target()
        .or_else(|| revising(fm.phase))
        .or_else(|| fm.phase.outcome_of().map(|(t, _)| t))
        .or_else(|| {
            (fm.phase == Phase::AwaitingDecision)
                .then(|| pending_gate(fm))
                .flatten()
        })
}

/// Whether gate `t` is being revised in phase `p`. The approved code gate takes follow-ups, so a
/// resolution may come with one in READY_TO_COMMIT.
fn revises(p: Phase, t: Target) -> bool {
    revising(p) == Some(t) || (t == Target::Code && p == Phase::ReadyToCommit)
}

impl Stage {
    /// Whether gate `t` stands at this stage on the board.
    pub fn holds(self, fm: &Frontmatter, t: Target) -> bool {
        match self {
            Stage::Review => fm.phase.review_target() == Some(t),
            Stage::Revising => revises(fm.phase, t),
            Stage::Decision => fm.phase == Phase::AwaitingDecision && pending_gate(fm) == Some(t),
            Stage::Closed => {
                gate_at(fm).is_some_and(|g| g > t || fm.phase.outcome_of() == Some((t, true)))
            }
        }
    }

    /// The stage in words, for the table in docs/protocol.md.
    pub fn describe(self) -> &'static str {
        match self {
            Stage::Review => "under review",
            Stage::Revising => "being revised",
            Stage::Decision => "awaiting a decision (AWAITING_DECISION)",
            Stage::Closed => "closed (its approved phase, or any later one that is not terminal)",
        }
    }

    /// The phases in which gate `t` is at this stage, in words (for a refusal that says when a
    /// move IS allowed).
    pub fn phases(self, t: Target) -> String {
        let list = |ps: Vec<Phase>| ps.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ");
        match self {
            Stage::Review => list(
                Phase::ALL
                    .iter()
                    .copied()
                    .filter(|p| p.review_target() == Some(t))
                    .collect(),
            ),
            Stage::Revising => list(
                Phase::ALL
                    .iter()
                    .copied()
                    .filter(|p| revises(*p, t))
                    .collect(),
            ),
            Stage::Decision => format!("AWAITING_DECISION on the {t} gate"),
            Stage::Closed => format!(
                "any phase that is not terminal once the {t} gate has closed (from {} on)",
                Phase::ALL
                    .iter()
                    .find(|p| p.outcome_of() == Some((t, true)))
                    .map_or("its approval", |p| p.as_str())
            ),
        }
    }
}

/// Whether gate `t` stands at one of the stages of `when`.
pub fn holds(when: &[Stage], fm: &Frontmatter, t: Target) -> bool {
    when.iter().any(|s| s.holds(fm, t))
}

/// Where a gate must stand for a move, in words: "while the gate is under review or being
/// revised".
pub fn describe_when(when: &[Stage]) -> String {
    let words: Vec<&str> = when.iter().map(|s| s.describe()).collect();
    let joined = match words.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    format!("while the gate is {joined}")
}

/// The phases in which a move on a gate-`t` objection is allowed, in words.
pub fn allowed_phases(when: &[Stage], t: Target) -> String {
    let parts: Vec<String> = when.iter().map(|s| s.phases(t)).collect();
    match parts.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{}; or {last}", init.join("; ")),
    }
}

impl Mover {
    pub fn describe(self) -> &'static str {
        match self {
            Mover::Raiser => "the reviewer who raised it",
            Mover::Doer => "the doer",
            Mover::Arbiter => "the arbiter",
        }
    }
}

/// The moves as a Markdown table, for docs/protocol.md (a test keeps the two identical).
pub fn markdown_table() -> String {
    let mut out = String::from("| from | to | who | command | when |\n|---|---|---|---|---|\n");
    for m in MOVES {
        let from = if m.from.is_empty() {
            "(new)".to_string()
        } else {
            m.from
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| {from} | `{}` | {} | `{}` | {} |\n",
            m.to,
            m.who.describe(),
            m.verb.command(),
            describe_when(m.when)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_numbered_per_kind_and_parse_strictly() {
        let mut l = Ledger::default();
        assert_eq!(l.next_id(Kind::Blocking), "BLK-1");
        l.objections.push(Objection {
            id: "BLK-1".into(),
            by: "alice".into(),
            gate: Target::Code,
            round: 1,
            severity: Severity::Blocking,
            anchor: "src/a.rs:1".into(),
            state: State::Open,
            title: "t".into(),
            cause: None,
        });
        assert_eq!(l.next_id(Kind::Blocking), "BLK-2");
        assert_eq!(l.next_id(Kind::Regression), "REG-1");
        assert_eq!(Kind::parse_id("ADV-12"), Some((Kind::Advisory, 12)));
        for bad in ["BLK-0", "BLK-01", "BLK", "XYZ-1", "BLK-1a"] {
            assert_eq!(Kind::parse_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn divergence_is_growth_in_two_consecutive_rounds() {
        assert!(!diverging(&[1, 2]));
        assert!(diverging(&[1, 2, 3]));
        assert!(!diverging(&[1, 3, 3]));
        assert!(diverging(&[5, 0, 1, 2]));
    }

    #[test]
    fn every_verb_has_a_row_and_the_table_renders_one_line_per_move() {
        let table = markdown_table();
        assert_eq!(table.lines().count(), MOVES.len() + 2);
        assert!(find_move(Verb::Object, None).is_some());
        assert!(find_move(Verb::Accept, Some(State::Open)).is_none());
        assert!(find_move(Verb::Accept, Some(State::Resolved)).is_some());
    }
}
