//! The pairing protocol as data: phase classes, the transition table (SPEC §3.1), review rounds
//! (§4) and whose turn it is (§8).
//!
//! [`TRANSITIONS`] is the single statement of who may move the phase where, with which command,
//! under which condition. Commands, `write --as` checks, `poll`'s next step and the docs' phase
//! table all read it, so a rule cannot drift between two places.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::board::frontmatter::{Frontmatter, Phase, PinKind, Target, Verdict};

/// Who may take a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Actor {
    Doer,
    Reviewer,
    /// Any agent on the blackboard.
    Any,
    /// Nobody directly: the `verdict` write that completes a round.
    Auto,
    /// A fresh dissenter: on the blackboard, neither the doer nor a reviewer of the gate, not a
    /// dissenter of it before ([`crate::law::dissent`]).
    Dissenter,
}

/// The artifact a doer submits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Artifact {
    Analysis,
    Plan,
    RedTest,
    Code,
    Followup,
}

impl Artifact {
    pub const ALL: &'static [Artifact] = &[
        Artifact::Analysis,
        Artifact::Plan,
        Artifact::RedTest,
        Artifact::Code,
        Artifact::Followup,
    ];
    /// The word used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Artifact::Analysis => "analysis",
            Artifact::Plan => "plan",
            Artifact::RedTest => "red-test",
            Artifact::Code => "code",
            Artifact::Followup => "followup",
        }
    }
    pub fn target(self) -> Target {
        match self {
            Artifact::Analysis => Target::Analysis,
            Artifact::Plan => Target::Plan,
            Artifact::RedTest => Target::RedTest,
            Artifact::Code | Artifact::Followup => Target::Code,
        }
    }
    /// What a submission of this artifact pins: the submitted text (a red test also its test
    /// files), the staged diff of a code submission, the unstaged diff of a follow-up.
    pub fn pin_kinds(self) -> &'static [PinKind] {
        match self {
            Artifact::Analysis | Artifact::Plan => &[PinKind::Text],
            Artifact::RedTest => &[PinKind::Text, PinKind::Files],
            Artifact::Code => &[PinKind::Staged],
            Artifact::Followup => &[PinKind::Unstaged],
        }
    }
}

/// A command that changes a blackboard. The transition table names the ones that move the phase;
/// `Register` and `Note` never do, but the terminal permissions and the law still speak of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Register,
    /// A reviewer withdraws its own registration (no verdicts given, not required).
    Unregister,
    Advance,
    Submit(Artifact),
    Claim,
    /// A reviewer's verdict; the write that completes a round also takes the automatic move.
    Verdict,
    Block,
    Unblock,
    Stop,
    Note,
    /// `pair check`: record a validation run (any agent on the blackboard).
    Check,
    /// The ledger's commands ([`crate::board::ledger::MOVES`] says who takes each).
    Object,
    Resolve,
    Challenge,
    Rule,
    Accept,
    Reopen,
    Withdraw,
    /// `pair second`: a required reviewer seconds another reviewer's open objection, or
    /// withdraws its second ([`crate::law::ledger::check_seconds`]).
    Second,
    /// The decision a gate awaits after its round cap (or divergence).
    Decide,
    /// `pair extend`: the user changes an SLA.
    Extend,
    /// `pair away`: an agent declares (or ends) a planned absence.
    Away,
    /// `pair unrequire`: the user removes a required reviewer that never registered.
    Unrequire,
    /// `pair correct`: a reviewer corrects its own review after the review's round closed.
    Correct,
    /// `pair dissent`: a fresh dissenter answers the gate the reviewers passed.
    Dissent,
    /// `pair handoff`: the doer or a required reviewer offers its role to an incoming agent (or
    /// withdraws the offer), see [`crate::law::handoff`].
    Handoff,
    /// `pair acknowledge`: the incoming agent takes the role handed to it.
    Acknowledge,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Register => "register",
            Command::Unregister => "unregister",
            Command::Advance => "advance",
            Command::Submit(_) => "submit",
            Command::Claim => "claim",
            Command::Verdict => "verdict",
            Command::Block => "block",
            Command::Unblock => "unblock",
            Command::Stop => "stop",
            Command::Note => "note",
            Command::Check => "check",
            Command::Object => "object",
            Command::Resolve => "resolve",
            Command::Challenge => "challenge",
            Command::Rule => "rule",
            Command::Accept => "accept",
            Command::Reopen => "reopen",
            Command::Withdraw => "withdraw",
            Command::Second => "second",
            Command::Decide => "decide",
            Command::Extend => "extend",
            Command::Away => "away",
            Command::Unrequire => "unrequire",
            Command::Correct => "correct",
            Command::Dissent => "dissent",
            Command::Handoff => "handoff",
            Command::Acknowledge => "acknowledge",
        }
    }

    /// Who may run the command at all (the table's rows may narrow it further: a claim needs a
    /// required reviewer). `Any` means any agent on the blackboard; a registration is made by an
    /// agent that is not on it yet, and never by the doer.
    pub fn actor(self) -> Actor {
        match self {
            // Outside the table (or, for a verdict, only its automatic move is there).
            Command::Verdict
            | Command::Register
            | Command::Unregister
            | Command::Correct
            | Command::Second => Actor::Reviewer,
            Command::Note | Command::Check => Actor::Any,
            // The ledger's rules say who moves an objection.
            c if crate::law::ledger::is_ledger_command(c) => crate::law::ledger::actor(c),
            // The table says who takes each of its commands.
            c => TRANSITIONS
                .iter()
                .find(|t| t.command == c)
                .map_or(Actor::Any, |t| t.actor),
        }
    }
}

/// The commands a terminal phase still accepts (SPEC §3.1): every other write is refused.
#[rustfmt::skip]
pub const TERMINAL_ALLOWS: &[(Phase, &[Command])] = &[
    (Phase::Blocked,   &[Command::Unblock, Command::Stop, Command::Note, Command::Handoff, Command::Acknowledge]),
    (Phase::Committed, &[Command::Advance]),
    (Phase::Merged,    &[Command::Advance]),
    (Phase::CleanedUp, &[]),
    (Phase::Stopped,   &[]),
];

/// Whether `command` may write to a blackboard in `phase` (always, unless the phase is terminal).
pub fn terminal_allows(phase: Phase, command: Command) -> bool {
    match TERMINAL_ALLOWS.iter().find(|(p, _)| *p == phase) {
        Some((_, allowed)) => allowed
            .iter()
            .any(|c| std::mem::discriminant(c) == std::mem::discriminant(&command)),
        None => true,
    }
}

/// A condition a transition needs besides actor and phase. A doer may `--waive` it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    None,
    /// `rca_required` is false.
    NoRcaRequired,
    /// `red_test_required` is false.
    NoRedTestRequired,
    /// When `rca_required`, the analysis round on the current revision is approved.
    AnalysisApprovedIfRequired,
    /// On a board that uses the ledger, the round completing with changes requested is the
    /// gate's last (`max_rounds`) or the gate is diverging.
    DecisionDue,
}

impl Guard {
    pub fn holds(self, fm: &Frontmatter) -> bool {
        match self {
            Guard::None => true,
            Guard::NoRcaRequired => !fm.rca_required,
            Guard::NoRedTestRequired => !fm.red_test_required,
            Guard::AnalysisApprovedIfRequired => {
                !fm.rca_required || stands_approved(fm, Target::Analysis)
            }
            Guard::DecisionDue => crate::law::ledger::decision_due_now(fm).is_some(),
        }
    }
    /// The predicate in words, for refusals and for the waiver record.
    pub fn describe(self) -> &'static str {
        match self {
            Guard::None => "none",
            Guard::NoRcaRequired => "rca_required is false (root cause analysis is not required)",
            Guard::NoRedTestRequired => "red_test_required is false (a red test is not required)",
            Guard::AnalysisApprovedIfRequired => {
                "the root cause analysis is approved (rca_required is true)"
            }
            Guard::DecisionDue => {
                "the round completing with changes requested is round `max_rounds` of the gate, \
                 or the gate's open blocking objections grew in two consecutive rounds"
            }
        }
    }
}

/// A flag the transition needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Nothing,
    Worktree,
    CommitSha,
    MergedInto,
}

/// Where the phase goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    Phase(Phase),
    /// Back to `blocked_from`.
    BlockedFrom,
    /// The approved or changes-requested phase of the round (§4).
    RoundOutcome,
    /// The approved phase of the gate that awaits a decision (`decide accept`).
    DecisionAccepted,
    /// Where a dissent sends the gate it answers ([`crate::law::dissent::OUTCOMES`]).
    DissentOutcome,
}

/// One row of SPEC §3.1.
#[derive(Debug, Clone, Copy)]
pub struct Transition {
    pub from: Source,
    pub to: To,
    pub actor: Actor,
    pub command: Command,
    pub guard: Guard,
    /// The doer must pass `--user-approved` unless `yolo`.
    pub human_gate: bool,
    pub needs: Needs,
    /// A submission with nobody required to review (an approved no-review workflow, SPEC §4.1)
    /// completes its empty round in the same write, landing on the approved phase.
    pub completes_empty_round: bool,
    /// A resubmission from a review phase: taken only when the pinned artifact under review
    /// changed after it was submitted (the round cannot complete on it any more), with a new pin.
    pub resubmits: bool,
}

/// The phases a transition leaves from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    One(Phase),
    Two(Phase, Phase),
    /// Every reviewable phase.
    Reviewable,
    /// Every non-terminal phase.
    NonTerminal,
    /// Every non-terminal phase and BLOCKED.
    NonTerminalOrBlocked,
}

impl Source {
    pub fn matches(self, p: Phase) -> bool {
        match self {
            Source::One(a) => p == a,
            Source::Two(a, b) => p == a || p == b,
            Source::Reviewable => p.is_reviewable(),
            Source::NonTerminal => !p.is_terminal(),
            Source::NonTerminalOrBlocked => !p.is_terminal() || p == Phase::Blocked,
        }
    }
}

use crate::text::shell_arg;
use crate::text::shell_word;
use Phase as P;

const fn row(
    from: Source,
    to: Phase,
    actor: Actor,
    command: Command,
    guard: Guard,
    human_gate: bool,
    needs: Needs,
) -> Transition {
    Transition {
        from,
        to: To::Phase(to),
        actor,
        command,
        guard,
        human_gate,
        needs,
        completes_empty_round: matches!(command, Command::Submit(_)),
        resubmits: false,
    }
}

/// A doer's resubmission of the artifact under review after it drifted from its pin.
const fn resubmit(from: Source, to: Phase, artifact: Artifact) -> Transition {
    Transition {
        resubmits: true,
        ..row(
            from,
            to,
            Actor::Doer,
            Command::Submit(artifact),
            Guard::None,
            FREE,
            Needs::Nothing,
        )
    }
}

const GATE: bool = true;
const FREE: bool = false;

/// SPEC §3.1, one row per line. Where one phase has several doer moves, the first whose guard
/// holds is the one `poll` proposes.
#[rustfmt::skip]
pub const TRANSITIONS: &[Transition] = &[
    //  from                                                         to                        who             command                               condition                             gate  needs
    row(Source::One(P::Draft),                                         P::Planning,              Actor::Doer,     Command::Advance,                     Guard::NoRcaRequired,                 GATE, Needs::Nothing),
    row(Source::One(P::Draft),                                         P::Analyzing,             Actor::Doer,     Command::Advance,                     Guard::None,                          GATE, Needs::Nothing),
    row(Source::Two(P::Analyzing, P::AnalysisChangesRequested),        P::AnalysisSubmitted,     Actor::Doer,     Command::Submit(Artifact::Analysis),  Guard::None,                          GATE, Needs::Nothing),
    row(Source::One(P::AnalysisChangesRequested),                      P::Analyzing,             Actor::Doer,     Command::Advance,                     Guard::None,                          FREE, Needs::Nothing),
    row(Source::One(P::AnalysisApproved),                              P::Planning,              Actor::Doer,     Command::Advance,                     Guard::None,                          FREE, Needs::Nothing),
    row(Source::Two(P::Planning, P::PlanChangesRequested),             P::PlanningSubmitted,     Actor::Doer,     Command::Submit(Artifact::Plan),      Guard::AnalysisApprovedIfRequired,    GATE, Needs::Nothing),
    row(Source::One(P::PlanChangesRequested),                          P::Planning,              Actor::Doer,     Command::Advance,                     Guard::None,                          FREE, Needs::Nothing),
    row(Source::One(P::PlanApproved),                                  P::Coding,                Actor::Doer,     Command::Advance,                     Guard::NoRedTestRequired,             GATE, Needs::Worktree),
    row(Source::One(P::PlanApproved),                                  P::RedTesting,            Actor::Doer,     Command::Advance,                     Guard::None,                          FREE, Needs::Nothing),
    row(Source::Two(P::RedTesting, P::RedTestChangesRequested),        P::RedTestSubmitted,      Actor::Doer,     Command::Submit(Artifact::RedTest),   Guard::None,                          FREE, Needs::Nothing),
    resubmit(Source::Two(P::RedTestSubmitted, P::ReviewingRedTest),    P::RedTestSubmitted,      Artifact::RedTest),
    row(Source::One(P::RedTestChangesRequested),                       P::RedTesting,            Actor::Doer,     Command::Advance,                     Guard::None,                          FREE, Needs::Nothing),
    row(Source::One(P::RedTestApproved),                               P::Coding,                Actor::Doer,     Command::Advance,                     Guard::None,                          FREE, Needs::Worktree),
    row(Source::One(P::Coding),                                        P::CodeSubmitted,         Actor::Doer,     Command::Submit(Artifact::Code),      Guard::None,                          FREE, Needs::Nothing),
    resubmit(Source::Two(P::CodeSubmitted, P::ReviewingCode),          P::CodeSubmitted,         Artifact::Code),
    row(Source::One(P::ReadyToCommit),                                 P::Committed,             Actor::Doer,     Command::Advance,                     Guard::None,                          GATE, Needs::CommitSha),
    row(Source::Two(P::CodeChangesRequested, P::ReadyToCommit),        P::FollowupReview,        Actor::Doer,     Command::Submit(Artifact::Followup),  Guard::None,                          FREE, Needs::Nothing),
    resubmit(Source::One(P::FollowupReview),                           P::FollowupReview,        Artifact::Followup),
    row(Source::One(P::AnalysisSubmitted),                             P::ReviewingAnalysis,     Actor::Reviewer, Command::Claim,                       Guard::None,                          FREE, Needs::Nothing),
    row(Source::One(P::PlanningSubmitted),                             P::ReviewingPlan,         Actor::Reviewer, Command::Claim,                       Guard::None,                          FREE, Needs::Nothing),
    row(Source::One(P::RedTestSubmitted),                              P::ReviewingRedTest,      Actor::Reviewer, Command::Claim,                       Guard::None,                          FREE, Needs::Nothing),
    row(Source::One(P::CodeSubmitted),                                 P::ReviewingCode,         Actor::Reviewer, Command::Claim,                       Guard::None,                          FREE, Needs::Nothing),
    Transition { from: Source::Reviewable, to: To::RoundOutcome,                  actor: Actor::Auto,     command: Command::Verdict,            guard: Guard::None,                   human_gate: FREE, needs: Needs::Nothing, completes_empty_round: false, resubmits: false },
    Transition { from: Source::Reviewable, to: To::DissentOutcome,                actor: Actor::Dissenter, command: Command::Dissent,           guard: Guard::None,                   human_gate: FREE, needs: Needs::Nothing, completes_empty_round: false, resubmits: false },
    row(Source::One(P::Committed),                                     P::Merged,                Actor::Doer,     Command::Advance,                     Guard::None,                          GATE, Needs::MergedInto),
    row(Source::One(P::Merged),                                        P::CleanedUp,             Actor::Doer,     Command::Advance,                     Guard::None,                          FREE, Needs::Nothing),
    row(Source::NonTerminal,                                           P::Blocked,               Actor::Any,      Command::Block,                       Guard::None,                          FREE, Needs::Nothing),
    Transition { from: Source::One(P::Blocked), to: To::BlockedFrom,             actor: Actor::Doer,     command: Command::Unblock,            guard: Guard::None,                   human_gate: FREE, needs: Needs::Nothing, completes_empty_round: false, resubmits: false },
    row(Source::NonTerminalOrBlocked,                                  P::Stopped,               Actor::Any,      Command::Stop,                        Guard::None,                          FREE, Needs::Nothing),
    // The objection ledger's round cap: a decision ends the gate (`decide reject` is the `stop`
    // row, `decide defer` the `block` row, from AWAITING_DECISION).
    Transition { from: Source::Reviewable, to: To::Phase(P::AwaitingDecision),     actor: Actor::Auto,     command: Command::Verdict,            guard: Guard::DecisionDue,            human_gate: FREE, needs: Needs::Nothing, completes_empty_round: false, resubmits: false },
    Transition { from: Source::One(P::AwaitingDecision), to: To::DecisionAccepted, actor: Actor::Doer,     command: Command::Decide,             guard: Guard::None,                   human_gate: GATE, needs: Needs::Nothing, completes_empty_round: false, resubmits: false },
    Transition { from: Source::One(P::AwaitingDecision), to: To::DecisionAccepted, actor: Actor::Reviewer, command: Command::Decide,             guard: Guard::None,                   human_gate: FREE, needs: Needs::Nothing, completes_empty_round: false, resubmits: false },
];

impl Phase {
    /// Phases in which every agent stops polling (SPEC §3): the phases of [`TERMINAL_ALLOWS`].
    pub fn is_terminal(self) -> bool {
        TERMINAL_ALLOWS.iter().any(|(p, _)| *p == self)
    }

    /// Phases in which reviewers act, and on which target.
    pub fn review_target(self) -> Option<Target> {
        match self {
            P::AnalysisSubmitted | P::ReviewingAnalysis => Some(Target::Analysis),
            P::PlanningSubmitted | P::ReviewingPlan => Some(Target::Plan),
            P::RedTestSubmitted | P::ReviewingRedTest => Some(Target::RedTest),
            P::CodeSubmitted | P::ReviewingCode | P::FollowupReview => Some(Target::Code),
            _ => None,
        }
    }

    pub fn is_reviewable(self) -> bool {
        self.review_target().is_some()
    }

    /// Which diff reviewers read in a code phase.
    pub fn diff_scope(self) -> Option<DiffScope> {
        match self {
            P::CodeSubmitted | P::ReviewingCode => Some(DiffScope::Staged),
            P::FollowupReview => Some(DiffScope::Unstaged),
            _ => None,
        }
    }

    /// The artifact counter that must be ≥ 1 in this phase (≥ 2 for FOLLOWUP_REVIEW).
    pub fn requires_counter(self) -> Option<(Target, u32)> {
        match self {
            P::AnalysisSubmitted
            | P::ReviewingAnalysis
            | P::AnalysisChangesRequested
            | P::AnalysisApproved => Some((Target::Analysis, 1)),
            P::PlanningSubmitted | P::ReviewingPlan | P::PlanChangesRequested | P::PlanApproved => {
                Some((Target::Plan, 1))
            }
            P::RedTestSubmitted
            | P::ReviewingRedTest
            | P::RedTestChangesRequested
            | P::RedTestApproved => Some((Target::RedTest, 1)),
            P::CodeSubmitted | P::ReviewingCode | P::CodeChangesRequested | P::ReadyToCommit => {
                Some((Target::Code, 1))
            }
            P::FollowupReview => Some((Target::Code, 2)),
            _ => None,
        }
    }

    /// Phases from CODING to CLEANED_UP, which need a recorded worktree.
    pub fn needs_worktree(self) -> bool {
        matches!(
            self,
            P::Coding
                | P::CodeSubmitted
                | P::ReviewingCode
                | P::CodeChangesRequested
                | P::FollowupReview
                | P::ReadyToCommit
                | P::Committed
                | P::Merged
                | P::CleanedUp
        )
    }

    /// For a phase that records a round's outcome: the target and whether it says approved.
    pub fn outcome_of(self) -> Option<(Target, bool)> {
        // The inverse of `outcome_phase`, so the mapping is written once.
        Target::ALL
            .iter()
            .flat_map(|t| [(*t, true), (*t, false)])
            .find(|(t, approved)| outcome_phase(*t, *approved) == self)
    }
}

/// The diff a code review reads: the staged diff of a code submission, or the unstaged diff of
/// a follow-up over the staged baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DiffScope {
    Staged,
    Unstaged,
}

impl DiffScope {
    /// The command that shows this diff in `worktree`: `git -C W diff --cached` for the staged
    /// diff of a code submission, `git -C W diff` for the unstaged diff of a follow-up.
    pub fn command(self, worktree: &str) -> Vec<String> {
        let mut argv = vec![
            "git".to_string(),
            "-C".into(),
            worktree.into(),
            "diff".into(),
        ];
        if self == DiffScope::Staged {
            argv.push("--cached".into());
        }
        argv
    }
}

/// The diff a code review in this phase reads, as a command, when the worktree is recorded.
pub fn diff_command(fm: &Frontmatter) -> Option<Vec<String>> {
    Some(fm.phase.diff_scope()?.command(fm.worktree.as_deref()?))
}

impl std::fmt::Display for DiffScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DiffScope::Staged => "staged",
            DiffScope::Unstaged => "unstaged",
        })
    }
}

/// The phase a completed round moves to.
pub fn outcome_phase(target: Target, approved: bool) -> Phase {
    match (target, approved) {
        (Target::Analysis, true) => P::AnalysisApproved,
        (Target::Analysis, false) => P::AnalysisChangesRequested,
        (Target::Plan, true) => P::PlanApproved,
        (Target::Plan, false) => P::PlanChangesRequested,
        (Target::RedTest, true) => P::RedTestApproved,
        (Target::RedTest, false) => P::RedTestChangesRequested,
        (Target::Code, true) => P::ReadyToCommit,
        (Target::Code, false) => P::CodeChangesRequested,
    }
}

/// The state of the round on the current counter of a target (SPEC §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Round {
    pub target: Target,
    pub counter: u32,
    pub complete: bool,
    pub approved: bool,
    pub changes_requested: bool,
    pub comment_only: bool,
    /// Required reviewers without a current verdict (includes missing and stale ones).
    pub pending: Vec<String>,
    /// Required reviewers with no agent entry.
    pub missing: Vec<String>,
    /// Required reviewers whose last verdict is for an older counter.
    pub stale: Vec<String>,
    pub approved_by: Vec<String>,
    pub changes_requested_by: Vec<String>,
    pub comment_by: Vec<String>,
    /// The reviews of this round no member of the reviewer pool has taken yet (0 without a
    /// pool).
    pub unclaimed: u32,
}

/// Evaluate the round of `target` on its current counter.
pub fn round(fm: &Frontmatter, target: Target) -> Round {
    let counter = fm.counter(target);
    let mut r = Round {
        target,
        counter,
        complete: false,
        approved: false,
        changes_requested: false,
        comment_only: false,
        pending: vec![],
        missing: vec![],
        stale: vec![],
        approved_by: vec![],
        changes_requested_by: vec![],
        comment_by: vec![],
        unclaimed: 0,
    };
    r.unclaimed = fm.pool_unclaimed(target);
    for id in &fm.round_reviewers(target) {
        let Some(agent) = fm.agent(id) else {
            r.missing.push(id.clone());
            r.pending.push(id.clone());
            continue;
        };
        let review = agent.review(target);
        match (review.reviewed, review.verdict) {
            (Some(n), Some(v)) if n == counter => match v {
                Verdict::Approved => r.approved_by.push(id.clone()),
                Verdict::ChangesRequested => r.changes_requested_by.push(id.clone()),
                Verdict::Comment => r.comment_by.push(id.clone()),
            },
            (Some(_), _) | (_, Some(_)) => {
                r.stale.push(id.clone());
                r.pending.push(id.clone());
            }
            (None, None) => r.pending.push(id.clone()),
        }
    }
    r.complete = r.pending.is_empty() && r.unclaimed == 0 && (counter > 0);
    r.approved = r.complete && r.changes_requested_by.is_empty() && r.comment_by.is_empty();
    r.changes_requested = r.complete && !r.approved;
    r.comment_only = r.changes_requested && r.changes_requested_by.is_empty();
    r
}

/// Whether the last closed round of `target` stands approved: no required reviewer has a current
/// verdict other than APPROVED, and at least one has approved (or the user approved working
/// without review). A reviewer added after the round closed has no verdict yet and joins from the
/// next round, so it does not reopen this one.
pub fn stands_approved(fm: &Frontmatter, target: Target) -> bool {
    let r = round(fm, target);
    (r.changes_requested_by.is_empty()
        && r.comment_by.is_empty()
        && (!r.approved_by.is_empty() || fm.no_review)
        && r.counter > 0)
        || crate::board::ledger::accepted_by_decision(fm, target)
}

/// The doer's proposed next move in a work phase: the first table row from this phase, for the
/// doer, whose guard holds.
pub fn doer_next(fm: &Frontmatter) -> Option<&'static Transition> {
    TRANSITIONS.iter().find(|t| {
        t.actor == Actor::Doer
            && matches!(t.from, Source::One(_) | Source::Two(_, _))
            && t.from.matches(fm.phase)
            && t.guard.holds(fm)
    })
}

/// Who acts next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NextActor {
    Doer,
    Reviewer,
    User,
    None,
}

/// The `next` block of a poll report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Next {
    pub actor: NextActor,
    pub handoff_to: Vec<String>,
    /// One sentence for the agent that asked, naming the command of [`Next::command`].
    pub action: String,
    /// The argument vector of the next `pair` command for the agent that asked, starting with
    /// `pair`, every value `pair` knows filled in; `None` when the step is not a `pair` command
    /// (ask the user, stop).
    pub command: Option<Vec<String>>,
    /// The values one placeholder of `command` takes, when it is a choice (the verdicts).
    pub choices: Option<Vec<String>>,
    /// Each placeholder word of `command` (a whole argument in capitals) and what to put there.
    pub placeholders: BTreeMap<String, String>,
    /// A step the agent may take but need not, outside the turn: in COMMITTED, the doer's
    /// record of the merge once the user asks for it; in MERGED, the record of the clean-up;
    /// in BLOCKED, the doer's `unblock` once the user says the work can resume; on a board that
    /// uses the ledger, settling what is left open on a gate that has closed. A terminal phase
    /// is nobody's turn, so this is never [`Next::command`] there.
    pub optional: Option<Optional>,
    /// Where a verdict is due: the reviewer's other answer when it could not review (its tools
    /// failed, a check could not run), `verdict … UNABLE --reason REASON`, complete once
    /// REASON is filled in. Not a verdict: it costs no round and asks the doer for nothing.
    pub unable: Option<Optional>,
}

/// An optional step (see [`Next::optional`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Optional {
    /// One sentence: when to take it, naming the command.
    pub action: String,
    /// The command as an argument vector starting with `pair`.
    pub command: Vec<String>,
    /// Each placeholder word of `command` and what to put there.
    pub placeholders: BTreeMap<String, String>,
}

/// Where the blackboard is, as the next step's command needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// The blackboard's absolute path, so that a command copied from `next` works from any
    /// directory.
    pub board: String,
    /// The default coding worktree (`pair worktree-path`), when the next step needs one and it
    /// could be found.
    pub default_worktree: Option<String>,
    /// The boards this one waits for, as read where they are kept ([`crate::law::depend`]):
    /// while any is not released, the doer's gated step is a wait.
    pub waits: Vec<crate::law::depend::Dep>,
}

/// How long the `poll --wait` that `next` proposes waits, in seconds.
pub const WAIT_SECONDS: &str = "600";

/// What each verdict says, for the `VERDICT` placeholder.
fn verdict_meaning(v: Verdict) -> &'static str {
    match v {
        Verdict::Approved => "APPROVED (nothing blocks it)",
        Verdict::ChangesRequested => "CHANGES_REQUESTED (it must change)",
        Verdict::Comment => "COMMENT (remarks the doer must answer)",
    }
}

/// A `pair` command under construction: its words, and the placeholders among them.
#[derive(Debug, Clone)]
struct Line {
    argv: Vec<String>,
    placeholders: BTreeMap<String, String>,
    choices: Option<Vec<String>>,
}

impl Line {
    /// `pair COMMAND BOARD`.
    fn new(command: &str, place: &Place) -> Line {
        Line {
            argv: vec!["pair".into(), command.into(), place.board.clone()],
            placeholders: BTreeMap::new(),
            choices: None,
        }
    }
    fn arg(mut self, a: impl Into<String>) -> Line {
        self.argv.push(a.into());
        self
    }
    fn flag(self, name: &str, value: impl Into<String>) -> Line {
        self.arg(name).arg(value)
    }
    /// A value the caller fills in: `name` (capitals) stands in the command, `what` says what
    /// goes there.
    fn hole(mut self, name: &str, what: impl Into<String>) -> Line {
        self.placeholders.insert(name.to_string(), what.into());
        self.arg(name)
    }
    /// The command as one shell line (placeholders are plain words and stay unquoted).
    fn shell(&self) -> String {
        self.argv
            .iter()
            .map(|a| shell_arg(a))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The phase `pair worktree create` moves to, when it is a step out of the board's phase: from
/// PLAN_APPROVED, RED_TESTING when a red test is required (the test is written in the worktree
/// too), CODING otherwise; from RED_TEST_APPROVED (a red test written before any worktree),
/// CODING. `None` in every other phase, and once a worktree or repository is recorded.
pub fn worktree_step(fm: &Frontmatter) -> Option<Phase> {
    if fm.worktree.is_some() || fm.audit.repo_root.is_some() {
        return None;
    }
    match fm.phase {
        P::PlanApproved if fm.red_test_required => Some(P::RedTesting),
        P::PlanApproved | P::RedTestApproved => Some(P::Coding),
        _ => None,
    }
}

/// Whether the doer's next move is [`worktree_step`]'s: the move of the table's row, made by
/// `pair worktree create` when the board is in a git repository.
fn creates_worktree(fm: &Frontmatter, t: &Transition) -> bool {
    t.command == Command::Advance && matches!(t.to, To::Phase(p) if worktree_step(fm) == Some(p))
}

/// Whether the doer's next move needs a worktree that is not recorded yet (or can make one):
/// then the caller looks up the default one for [`Place::default_worktree`].
pub fn wants_default_worktree(fm: &Frontmatter) -> bool {
    fm.worktree.is_none()
        && doer_next(fm).is_some_and(|t| t.needs == Needs::Worktree || creates_worktree(fm, t))
}

/// The doer's command for a row of the table.
fn row_command(t: &Transition, doer: &str, fm: &Frontmatter, place: &Place) -> Line {
    let mut line = match t.command {
        Command::Submit(Artifact::RedTest) if fm.worktree.is_some() => Line::new("submit", place)
            .flag("--agent", doer)
            .arg(Artifact::RedTest.as_str())
            .arg("--note-file")
            .hole(
                "FILE",
                "a file holding the red-test (Markdown; no `#` or `##` headings)",
            )
            .arg("--files")
            .hole(
                "TEST_FILES",
                format!(
                    "the test files, comma-separated (a relative path is taken from the \
                         worktree {}), pinned with the text",
                    fm.worktree.as_deref().unwrap_or_default()
                ),
            ),
        Command::Submit(a) => Line::new("submit", place)
            .flag("--agent", doer)
            .arg(a.as_str())
            .arg("--note-file")
            .hole(
                "FILE",
                match a.as_str() {
                    // The code and a follow-up are a diff, which the submission pins:
                    // the file is what the doer says about them.
                    what @ ("code" | "followup") => format!(
                        "a file holding your note on the {what} (Markdown; no `#` or `##` \
                         headings); the {what} itself is its diff, which the submission pins"
                    ),
                    what => {
                        format!("a file holding the {what} (Markdown; no `#` or `##` headings)")
                    }
                },
            ),
        Command::Unblock => Line::new("unblock", place)
            .flag("--agent", doer)
            .arg("--reason")
            .hole("REASON", "why the work can resume (the user said so)"),
        c => {
            let line = Line::new(c.name(), place).flag("--agent", doer);
            match t.to {
                To::Phase(p) => line.arg(p.as_str()),
                To::BlockedFrom => match fm.blocked_from {
                    Some(p) => line.arg(p.as_str()),
                    None => line.hole("PHASE", "the phase to move to"),
                },
                To::RoundOutcome | To::DissentOutcome => line.hole("PHASE", "the phase to move to"),
                To::DecisionAccepted => line
                    .arg("accept")
                    .arg("--reason")
                    .hole("REASON", "why the gate is accepted as it stands"),
            }
        }
    };
    line = match t.needs {
        Needs::Worktree if fm.worktree.is_none() => match &place.default_worktree {
            Some(w) => line.flag("--worktree", w.as_str()),
            None => line.arg("--worktree").hole(
                "WORKTREE",
                "the absolute path of the coding worktree (`pair worktree-path BOARD` prints \
                 the default)",
            ),
        },
        // A board that records its repository takes the worktree's HEAD, checked against git.
        Needs::CommitSha if fm.audit.repo_root.is_some() => line,
        Needs::CommitSha => line.arg("--commit-sha").hole(
            "SHA",
            format!(
                "the commit you made (`git -C {} rev-parse HEAD`)",
                fm.worktree.as_deref().unwrap_or("WORKTREE")
            ),
        ),
        Needs::MergedInto => line
            .arg("--merged-into")
            .hole("BRANCH", "the branch the commit was merged into"),
        _ => line,
    };
    if t.human_gate && !fm.yolo {
        line = line.arg("--user-approved");
    }
    line
}

/// The `poll --wait` that waits for one's turn.
fn wait_command(agent: &str, fm: &Frontmatter, place: &Place) -> Line {
    let line = Line::new("poll", place)
        .flag("--agent", agent)
        .arg("--wait")
        .flag("--timeout", WAIT_SECONDS)
        .arg("--json");
    // Only the doer resumes a blocked board; everybody else sleeps through the block.
    if fm.doer() == Some(agent) {
        line
    } else {
        line.arg("--through-blocked")
    }
}

/// A reviewer's answer when it could not review `target` `counter` ([`Next::unable`]).
fn unable_step(agent: &str, target: Target, counter: u32, place: &Place) -> Optional {
    let line = Line::new("verdict", place)
        .flag("--agent", agent)
        .arg("UNABLE")
        .flag("--revision", counter.to_string())
        .arg("--reason")
        .hole(
            "REASON",
            "what kept you from reviewing (e.g. the tests could not run: disk full)",
        );
    Optional {
        action: format!(
            "If you could not review {target} {counter} (your tools failed, a check could not \
             run), say so instead of giving a verdict: `{}`. It is no verdict: it costs no \
             round and asks the doer for nothing; give the verdict once you can.",
            line.shell()
        ),
        command: line.argv,
        placeholders: line.placeholders,
    }
}

fn step(actor: NextActor, handoff_to: Vec<String>, action: String, line: Option<Line>) -> Next {
    let (command, choices, placeholders) = match line {
        Some(l) => (Some(l.argv), l.choices, l.placeholders),
        None => (None, None, BTreeMap::new()),
    };
    Next {
        actor,
        handoff_to,
        action,
        command,
        choices,
        placeholders,
        optional: None,
        unable: None,
    }
}

/// Decide who acts next (SPEC §8, first matching rule wins), and what the agent that asked
/// runs: its step when it is its turn, otherwise how to wait for the others.
pub fn next(fm: &Frontmatter, agent: &str, place: &Place) -> Next {
    // A handoff's step (acknowledge it, or wait for it) is all there is for either agent.
    if let Some(h) = handoff_step(fm, agent, place) {
        return h;
    }
    let mut next = waited(fm, agent, place);
    // What the agent may settle on a closed gate, unless it is the step itself.
    if next.optional.is_none() {
        next.optional = crate::law::ledger::next::optional(fm, agent, place)
            .filter(|o| next.command.as_ref() != Some(&o.command));
    }
    if place.waits.is_empty() {
        return next;
    }
    // A board waiting for others: the doer's gated step waits for them.
    crate::law::depend::hold(
        next,
        fm.phase,
        &place.waits,
        wait_command(agent, fm, place).argv,
    )
}

/// The step of [`next`] without the optional one: the agent's own on its turn, else the wait.
fn waited(fm: &Frontmatter, agent: &str, place: &Place) -> Next {
    if let Some(asked) = mistyped(fm, agent, place) {
        return asked;
    }
    let next = crate::law::ledger::next::steer(fm, agent, place, decide(fm, agent, place));
    if next.actor == NextActor::None || next.handoff_to.iter().any(|h| h == agent) {
        return next;
    }
    let who = match next.actor {
        NextActor::User => format!("{} (asking the user)", next.handoff_to.join(", ")),
        _ => next.handoff_to.join(", "),
    };
    let line = wait_command(agent, fm, place);
    let action = format!(
        "Not your turn: waiting for {who}. Wait with `{}`.",
        line.shell()
    );
    step(next.actor, next.handoff_to, action, Some(line))
}

/// A handoff's step: the incoming agent of a pending handoff acknowledges it (after reading the
/// brief that carries the summary); the outgoing agent waits for that acknowledgement (or takes
/// its offer back); an agent that handed its role over has nothing left to do. A pending offer
/// on a terminal board is moot: neither agent is given a step for it.
fn handoff_step(fm: &Frontmatter, agent: &str, place: &Place) -> Option<Next> {
    use crate::board::handoff;
    if let Some(h) = crate::law::handoff::offered_by(fm, agent) {
        let line = wait_command(agent, fm, place);
        let withdraw = Line::new("handoff", place)
            .flag("--agent", agent)
            .arg("--withdraw");
        let actor = match h.role {
            crate::board::frontmatter::Role::Doer => NextActor::Doer,
            crate::board::frontmatter::Role::Reviewer => NextActor::Reviewer,
        };
        return Some(step(
            actor,
            vec![h.to.clone()],
            format!(
                "Not your turn: you offered the {} role to {}, who takes it with `pair \
                 acknowledge`; the role's steps wait for that. Wait with `{}`, or take the \
                 offer back with `{}`.",
                h.role,
                h.to,
                line.shell(),
                withdraw.shell()
            ),
            Some(line),
        ));
    }
    if let Some(h) = crate::law::handoff::offered_to(fm, agent) {
        let line = Line::new("acknowledge", place).flag("--agent", agent);
        let actor = match h.role {
            crate::board::frontmatter::Role::Doer => NextActor::Doer,
            crate::board::frontmatter::Role::Reviewer => NextActor::Reviewer,
        };
        return Some(step(
            actor,
            vec![agent.to_string()],
            format!(
                "{} hands the {} role over to you. Read its summary with `pair brief {} --for \
                 {} --agent {}`, then take the role with `{}`; until then it is {}'s.",
                h.from,
                h.role,
                shell_word(&place.board),
                h.role,
                shell_arg(agent),
                line.shell(),
                h.from
            ),
            Some(line),
        ));
    }
    let h = handoff::handed_away(fm, agent)?;
    if crate::law::handoff::role_held(fm, agent).is_some() {
        return None;
    }
    Some(step(
        NextActor::None,
        vec![],
        format!(
            "You handed the {} role over to {} (acknowledged): nothing on this board is yours \
             to do any more.",
            h.role,
            handoff::holder(fm, agent)
        ),
        None,
    ))
}

/// The id on the blackboard that `agent`, which is nobody there, is probably a typo of: none on a
/// finished board, for an agent, a required reviewer or a pool member, or while a dissent stage
/// waits for a new agent (whose id may well be close to an earlier one's).
pub fn mistyped_id<'a>(fm: &'a Frontmatter, agent: &str) -> Option<&'a str> {
    if fm.phase.is_terminal()
        || fm.agent(agent).is_some()
        || fm.required_reviewers.iter().any(|r| r == agent)
        || fm.in_pool(agent)
        || crate::law::dissent::stage_open(fm).is_some()
    {
        return None;
    }
    crate::board::suggest::agent(fm, agent)
}

/// An id that is not on the blackboard but close to one that is: a mistyped id would register
/// and wait forever, so it is not told it is its turn; its next command is the poll under the
/// id it probably meant (a new reviewer registers instead, as the action says).
fn mistyped(fm: &Frontmatter, agent: &str, place: &Place) -> Option<Next> {
    let near = mistyped_id(fm, agent)?;
    let b = shell_word(&place.board);
    let line = Line::new("poll", place).flag("--agent", near);
    Some(step(
        NextActor::Reviewer,
        vec![],
        format!(
            "Not your turn: {agent:?} is not on the blackboard; did you mean `{near}`? If so, \
             poll with that id: `{}`. Only if you are a new reviewer, register: `pair register \
             {b} --agent {}`.",
            line.shell(),
            shell_arg(agent)
        ),
        Some(line),
    ))
}

/// The reviewer pool's step, while a round has reviews no member took: a free member claims
/// one; everyone else waits for the takers and the free members.
fn pool_step(
    fm: &Frontmatter,
    agent: &str,
    target: Target,
    r: &Round,
    place: &Place,
) -> Option<Next> {
    if r.unclaimed == 0 {
        return None;
    }
    let taken = fm.round_reviewers(target);
    let free: Vec<String> = fm
        .pool
        .as_ref()?
        .members
        .iter()
        .filter(|m| !taken.contains(m))
        .cloned()
        .collect();
    let mut waiting_on = r.pending.clone();
    waiting_on.extend(free.iter().cloned());
    if free.iter().any(|m| m == agent) {
        let line = Line::new("claim", place).flag("--agent", agent);
        let (noun, unit) = crate::board::entry::target_noun(target);
        return Some(step(
            NextActor::Reviewer,
            waiting_on,
            format!(
                "A review of {} {unit} {} is open to the reviewer pool ({} of {} to take): take \
                 it with `{}` (exclusive: a claim after the last review is taken is refused), \
                 then poll for your verdict.",
                noun.to_lowercase(),
                r.counter,
                r.unclaimed,
                fm.pool.as_ref().map_or(0, |p| p.reviews),
                line.shell()
            ),
            Some(line),
        ));
    }
    if r.pending.iter().any(|p| p == agent) {
        // A taker's own verdict: the usual step.
        return None;
    }
    Some(step(
        NextActor::Reviewer,
        waiting_on,
        format!(
            "Waiting for the reviewer pool: {} more review{} of this round to be claimed.",
            r.unclaimed,
            if r.unclaimed == 1 { "" } else { "s" }
        ),
        None,
    ))
}

/// The dissent stage's step: the reviewers passed a gate that requires it. A registered agent
/// that may dissent ([`crate::law::dissent::unfit`]) judges the doer's resolutions of the prior
/// objections first (`accept`), then answers (`dissent`); with none on the board, the reviewers
/// bring in a fresh one (it registers, reads `pair brief --for dissenter`, answers).
fn dissent_step(fm: &Frontmatter, agent: &str, target: Target, place: &Place) -> Next {
    use crate::board::dissent::Outcome;
    use crate::law::dissent as d;
    let b = shell_word(&place.board);
    let fresh: Vec<String> = fm
        .agents
        .iter()
        .filter(|(id, _)| d::unfit(fm, id, target).is_none())
        .map(|(id, _)| id.clone())
        .collect();
    let counter = fm.counter(target);
    let round = d::rounds_on(fm, target) + 1;
    if fresh.is_empty() || !fresh.iter().any(|f| f == agent) {
        let waiting_on = if fresh.is_empty() {
            fm.round_reviewers(target)
        } else {
            fresh.clone()
        };
        return step(
            NextActor::Reviewer,
            waiting_on,
            format!(
                "The reviewers passed {target} {counter}; the gate waits for a fresh dissenter \
                 (dissent round {round} of {}): an agent that is neither the doer nor a reviewer \
                 of the gate{} registers (`pair register {b} --agent NEW-ID`), reads its bundle \
                 (`pair brief {b} --for dissenter`) and answers (`pair dissent`).",
                d::MAX_ROUNDS,
                if fm.dissent.every_cycle {
                    ""
                } else {
                    " and has not dissented on this board before"
                }
            ),
            None,
        );
    }
    let waiting_on = fresh.clone();
    let pending = d::to_judge(fm, target);
    if let Some(first) = pending.first() {
        let line = Line::new("accept", place).arg(first).flag("--agent", agent);
        return step(
            NextActor::Reviewer,
            waiting_on,
            format!(
                "Dissent round {round}: judge the doer's resolutions of the prior objections ({}) \
                 against the diff (`pair brief {b} --for dissenter`): accept each that holds with \
                 `{}`, or reopen it (`pair reopen {b} {first} --agent {} --reason TEXT`); then \
                 answer with `pair dissent`.",
                pending.join(", "),
                line.shell(),
                shell_arg(agent)
            ),
            Some(line),
        );
    }
    let open = d::open_blocking(fm, target);
    let mine_advisory = fm.ledger.of_gate(target).any(|o| {
        o.by == agent
            && o.severity == crate::board::ledger::Severity::Advisory
            && o.round == crate::board::ledger::round_of(fm, target)
    });
    let outcome = if !open.is_empty() {
        Outcome::Blocking
    } else if mine_advisory {
        Outcome::Advisory
    } else {
        Outcome::Nothing
    };
    let mut line = Line::new("dissent", place)
        .flag("--agent", agent)
        .arg(outcome.as_str())
        .flag("--revision", counter.to_string());
    if !open.is_empty() {
        line = line.flag("--objections", open.join(","));
    }
    let line = line.arg("--note-file").hole(
        "FILE",
        "a file holding your dissent (Markdown; no `#` or `##` headings)",
    );
    step(
        NextActor::Reviewer,
        waiting_on,
        format!(
            "Dissent round {round} of {} on {target} {counter}: read only your bundle (`pair brief \
             {b} --for dissenter`). Raise each real problem as an objection (`pair object {b} \
             --agent {} --severity blocking|advisory --anchor ANCHOR --title TEXT --evidence TEXT \
             --fix TEXT`; a regression of a resolution: --regression-of ID), then answer: `{}` \
             (blocking names the open ones with --objections; advisory needs an ADV-N of yours; \
             none, no objection).",
            d::MAX_ROUNDS,
            shell_arg(agent),
            line.shell()
        ),
        Some(line),
    )
}

/// Who acts next and the step of the agent that asked.
fn decide(fm: &Frontmatter, agent: &str, place: &Place) -> Next {
    let doer = fm.doer().unwrap_or("doer").to_string();
    let b = shell_word(&place.board);
    if fm.phase.is_terminal() {
        return terminal(fm, agent, &doer, place);
    }
    if fm.agent(agent).is_none() {
        let line = Line::new("register", place).flag("--agent", agent);
        return step(
            NextActor::Reviewer,
            vec![agent.to_string()],
            if fm.required_reviewers.iter().any(|r| r == agent) || fm.in_pool(agent) {
                format!(
                    "Register first: `{}` (you are already a required reviewer or in the \
                     reviewer pool; --required is not needed).",
                    line.shell()
                )
            } else {
                format!(
                    "Register first: `{}` (add --required only if the user named you as a \
                     required reviewer).",
                    line.shell()
                )
            },
            Some(line),
        );
    }
    if let Some(target) = fm.phase.review_target() {
        if !fm.has_reviewers() {
            return step(
                NextActor::Doer,
                vec![doer.clone()],
                format!(
                    "No reviewers are required for this {target} review. Ask the user to name \
                     reviewers (each runs `pair register {b} --agent ID --required`), then poll \
                     again."
                ),
                None,
            );
        }
        let r = round(fm, target);
        if let Some(next) = pool_step(fm, agent, target, &r, place) {
            return next;
        }
        if !r.pending.is_empty() {
            // A pinned round: read exactly what was pinned, and name its hash with the verdict.
            let pin = fm.pin(target);
            let scope = match (pin, fm.phase.diff_scope(), diff_command(fm)) {
                (Some(p), _, _) => format!(
                    " (the {}, pinned at sha256 {})",
                    p.kind.describe(),
                    p.sha256.short()
                ),
                (None, Some(s), Some(cmd)) => format!(
                    " (review the {s} diff in the worktree {}: `{}`)",
                    fm.worktree.as_deref().unwrap_or_default(),
                    cmd.iter()
                        .map(|a| shell_arg(a))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                (None, Some(s), None) => format!(" (review the {s} diff in the worktree)"),
                _ => String::new(),
            };
            // Only the verdicts the ledger would accept, each with the flags it needs.
            let (verdicts, flags) = crate::law::ledger::next::verdict_options(fm, target, agent);
            let choices: Vec<String> = verdicts.iter().map(|v| v.as_str().to_string()).collect();
            let mut line = Line::new("verdict", place)
                .flag("--agent", agent)
                .hole(
                    "VERDICT",
                    format!(
                        "one of: {}",
                        verdicts
                            .iter()
                            .map(|v| verdict_meaning(*v))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .flag("--revision", r.counter.to_string());
            if let Some(p) = pin {
                line = line.flag("--artifact-sha256", p.sha256.to_string());
            }
            for f in flags {
                line = line.arg(f);
            }
            let mut line = line.arg("--note-file").hole(
                "FILE",
                "a file holding your review (Markdown; no `#` or `##` headings)",
            );
            let narrowed = if !fm.ledger.in_use() || verdicts.contains(&Verdict::ChangesRequested) {
                String::new()
            } else if verdicts.contains(&Verdict::Approved) {
                format!(
                    " To request changes, raise a blocking objection first (`pair object {b} \
                     --agent {} --severity blocking --anchor ANCHOR --title TEXT --evidence TEXT \
                     --fix TEXT`); the verdict then names it.",
                    shell_arg(agent)
                )
            } else {
                " Your blocking objections are challenged: APPROVED waits for the arbiter's \
                 ruling (or withdraw them with `pair withdraw`)."
                    .to_string()
            };
            line.choices = Some(choices.clone());
            let unable = unable_step(agent, target, r.counter, place);
            let mut next = step(
                NextActor::Reviewer,
                r.pending.clone(),
                format!(
                    "Review {target} {} {}{scope}, then give your verdict (VERDICT is one of {}): \
                     `{}`.{narrowed}{}",
                    if target == Target::Code {
                        "round"
                    } else {
                        "revision"
                    },
                    r.counter,
                    choices.join(", "),
                    line.shell(),
                    if pin.is_some() {
                        format!(" Read exactly the pinned artifact with `pair diff {b}`.")
                    } else {
                        String::new()
                    }
                ) + &if fm.independent_review {
                    format!(
                        " This board asks for independent review: give the verdict from a \
                         session that did not write the {target}, naming it (PAIR_SESSION or \
                         --session)."
                    )
                } else {
                    String::new()
                },
                Some(line),
            );
            next.unable = Some(unable);
            return next;
        }
        if crate::law::dissent::stage_open(fm) == Some(target) {
            return dissent_step(fm, agent, target, place);
        }
        // A complete round that did not move the phase: only a broken raw write leaves this.
        return step(
            NextActor::Doer,
            vec![doer.clone()],
            format!(
                "Every required reviewer has a current verdict but the phase was not moved to {}. \
                 Ask the user to repair it (`pair write {b} --repair --reason TEXT ...`).",
                outcome_phase(target, r.approved)
            ),
            None,
        );
    }
    match doer_next(fm) {
        // A worktree to make, in a git repository: `pair worktree create` makes and records it.
        Some(t) if creates_worktree(fm, t) && place.default_worktree.is_some() => {
            let mut line = Line::new("worktree", place);
            line.argv.insert(2, "create".into());
            line = line.flag("--agent", &doer);
            let what = format!(
                "create the coding worktree (`git worktree add` on a new topic branch, recorded) \
                 and move to {}",
                match t.to {
                    To::Phase(p) => p.as_str(),
                    _ => "CODING",
                }
            );
            if fm.yolo {
                step(
                    NextActor::Doer,
                    vec![doer.clone()],
                    format!("{}: run `{}`.", capitalize(&what), line.shell()),
                    Some(line),
                )
            } else {
                let line = line.arg("--user-approved");
                step(
                    NextActor::User,
                    vec![doer.clone()],
                    format!(
                        "Human gate: {what} only after the user approves; then run `{}`.",
                        line.shell()
                    ),
                    Some(line),
                )
            }
        }
        Some(t) => {
            let line = row_command(t, &doer, fm, place);
            let wt = fm.worktree.as_deref().unwrap_or("the worktree");
            let what = match t.command {
                Command::Submit(Artifact::Code) => {
                    format!("stage the change in {wt} (`git -C {wt} add …`) and submit it")
                }
                Command::Submit(Artifact::Followup) => format!(
                    "fix it in {wt} without staging (reviewers read the unstaged diff) and \
                     submit the follow-up"
                ),
                Command::Submit(Artifact::RedTest) if fm.worktree.is_some() => format!(
                    "write the failing test in {wt} and submit it with its files (`--files` pins \
                     them with the text)"
                ),
                Command::Submit(a) => format!("write the {} and submit it", a.as_str()),
                // A verified commit: the tree of what is committed must be the approved one.
                Command::Advance if t.needs == Needs::CommitSha && fm.audit.repo_root.is_some() => {
                    // After a follow-up the approved tree holds the unstaged changes too.
                    let git = match fm.pins.get(Target::Code).map(|p| p.kind) {
                        Some(PinKind::Unstaged) => {
                            format!("git -C {wt} add -u && git -C {wt} commit -m 'MESSAGE'")
                        }
                        _ => format!("git -C {wt} commit -m 'MESSAGE'"),
                    };
                    format!(
                        "commit exactly the approved content in {wt} (`{git}`), then move to \
                         COMMITTED (the commit's tree is checked)"
                    )
                }
                _ => match t.to {
                    To::Phase(p) => format!("move to {p}"),
                    _ => "move on".to_string(),
                },
            };
            if t.human_gate && !fm.yolo {
                step(
                    NextActor::User,
                    vec![doer.clone()],
                    format!(
                        "Human gate: {what} only after the user approves; then run `{}`.",
                        line.shell()
                    ),
                    Some(line),
                )
            } else {
                step(
                    NextActor::Doer,
                    vec![doer.clone()],
                    format!("{}: run `{}`.", capitalize(&what), line.shell()),
                    Some(line),
                )
            }
        }
        None => step(
            NextActor::Doer,
            vec![doer.clone()],
            format!(
                "No move out of {} applies as the gates stand; ask the user (a gate can be waived \
                 with `--waive REASON`).",
                fm.phase
            ),
            None,
        ),
    }
}

/// A terminal phase: nobody's turn; the doer's remaining moves (resume, record the merge or the
/// clean-up) come from the table, and everybody else stops, or sleeps through a block.
fn terminal(fm: &Frontmatter, agent: &str, doer: &str, place: &Place) -> Next {
    let b = shell_word(&place.board);
    let is_doer = agent == doer;
    let row = doer_next(fm).map(|t| row_command(t, doer, fm, place));
    let (action, line) = match (fm.phase, row) {
        // BLOCKED is terminal (SPEC §3): nobody's turn. Only the doer resumes it, and only when
        // the user says so: its `unblock` is the optional step, never the next command, so the
        // exit code (12), `your_turn` and `next` say the same.
        (P::Blocked, Some(line)) if is_doer => {
            let optional = format!(
                "Only when the user says the work can resume, resume it: `{}`.",
                line.shell()
            );
            let action = format!(
                "The blackboard is BLOCKED{}, which is nobody's turn: `pair status {b}` shows who \
                 blocked it and why. Ask the user; when they say the work can resume, unblock it \
                 (the optional step).",
                blocked_from_text(fm)
            );
            return nobodys_turn(action, optional, line);
        }
        (P::Blocked, _) => {
            let line = wait_command(agent, fm, place);
            (
                format!(
                    "The blackboard is BLOCKED{}; `pair status {b}` shows who blocked it and why. \
                     Only the doer resumes it, when the user says so; wait for that with `{}`.",
                    blocked_from_text(fm),
                    line.shell()
                ),
                Some(line),
            )
        }
        // Terminal: nobody's turn and no next command; what the doer may still record is
        // optional, reported apart.
        (P::Committed, Some(line)) if is_doer => {
            let optional = format!(
                "Only when the user asks, merge the commit and record the merge: `{}`.",
                line.shell()
            );
            let action = "The work is COMMITTED, which is terminal: stop polling. Recording a \
                          merge later is optional (the optional step).";
            return nobodys_turn(action.to_string(), optional, line);
        }
        (P::Merged, Some(line)) if is_doer => {
            let optional = format!(
                "Once the worktree is removed and the topic branch deleted{}, record the \
                 clean-up: `{}`.",
                match (fm.worktree.as_deref(), fm.audit.topic_branch.as_deref()) {
                    (Some(w), Some(br)) => format!(
                        " (`git worktree remove {}`, `git branch -d {}`)",
                        shell_arg(w),
                        shell_arg(br)
                    ),
                    (Some(w), None) => format!(" (`git worktree remove {}`)", shell_arg(w)),
                    _ => String::new(),
                },
                line.shell()
            );
            let action = "The work is MERGED, which is terminal: stop polling. Recording the \
                          clean-up later is optional (the optional step).";
            return nobodys_turn(action.to_string(), optional, line);
        }
        (p @ (P::Committed | P::Merged), _) => {
            let line = until_line(agent, P::CleanedUp, place);
            let optional = format!(
                "To see the work to its end (the doer records the merge and the clean-up when \
                 the user asks), wait for it: `{}`.",
                line.shell()
            );
            let action = format!("The phase is {p}, which is terminal: stop polling.");
            return nobodys_turn(action, optional, line);
        }
        (p, _) => (
            format!("The phase is {p}, which is terminal: stop polling."),
            None,
        ),
    };
    step(NextActor::None, vec![], action, line)
}

/// The phases a board moves through after it is committed, in order: the lifecycle's end,
/// which `poll --wait --until PHASE` waits for past COMMITTED (SPEC §3 stops every poll at
/// COMMITTED; the doer's records of the merge and the clean-up come after it).
pub const LIFECYCLE_END: [Phase; 3] = [P::Committed, P::Merged, P::CleanedUp];

/// The phases `--until` takes: those of [`LIFECYCLE_END`] after COMMITTED.
pub fn until_phases() -> &'static [Phase] {
    &LIFECYCLE_END[1..]
}

/// Whether a wait until `until` goes on in `phase`: the phase is terminal but on the way to
/// `until` (COMMITTED before MERGED; COMMITTED or MERGED before CLEANED_UP).
pub fn short_of(phase: Phase, until: Phase) -> bool {
    let at = |p: Phase| LIFECYCLE_END.iter().position(|q| *q == p);
    matches!((at(phase), at(until)), (Some(a), Some(b)) if a < b)
}

/// The `poll --wait --until` that waits past COMMITTED for `until`.
fn until_line(agent: &str, until: Phase, place: &Place) -> Line {
    Line::new("poll", place)
        .flag("--agent", agent)
        .arg("--wait")
        .flag("--timeout", WAIT_SECONDS)
        .flag("--until", until.to_string())
        .arg("--json")
}

/// The step of an agent that waits for the board to reach `until` (`poll --wait --until`):
/// the same wait again, while the board is [`short_of`] it.
pub fn wait_until(fm: &Frontmatter, agent: &str, until: Phase, place: &Place) -> Next {
    let line = until_line(agent, until, place);
    let action = format!(
        "The work is {}; only the doer records what follows, when the user asks. Keep waiting \
         for {until}: `{}`.",
        fm.phase,
        line.shell()
    );
    step(NextActor::None, vec![], action, Some(line))
}

/// Nobody's turn, with `line` as the step the agent may take outside it (the optional step).
fn nobodys_turn(action: String, optional: String, line: Line) -> Next {
    let mut next = step(NextActor::None, vec![], action, None);
    next.optional = Some(Optional {
        action: optional,
        command: line.argv,
        placeholders: line.placeholders,
    });
    next
}

fn blocked_from_text(fm: &Frontmatter) -> String {
    fm.blocked_from
        .map(|p| format!(" (from {p})"))
        .unwrap_or_default()
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

impl Transition {
    fn source_text(&self) -> String {
        match self.from {
            Source::One(a) => a.to_string(),
            Source::Two(a, b) => format!("{a}, {b}"),
            Source::Reviewable => "any review phase".to_string(),
            Source::NonTerminal => "any non-terminal phase".to_string(),
            Source::NonTerminalOrBlocked => "any non-terminal phase, BLOCKED".to_string(),
        }
    }

    fn target_text(&self) -> String {
        match self.to {
            To::Phase(p) => p.to_string(),
            To::BlockedFrom => "`blocked_from`".to_string(),
            To::RoundOutcome => {
                "X_APPROVED / X_CHANGES_REQUESTED (code: READY_TO_COMMIT / CODE_CHANGES_REQUESTED)"
                    .to_string()
            }
            To::DecisionAccepted => "the gate's X_APPROVED (code: READY_TO_COMMIT)".to_string(),
            To::DissentOutcome => "X_APPROVED (none, advisory) / X_CHANGES_REQUESTED (blocking) / \
                                   AWAITING_DECISION (blocking, dissent round 3)"
                .to_string(),
        }
    }

    fn command_text(&self) -> String {
        let base = match self.command {
            Command::Submit(a) => format!("`submit {}`", a.as_str()),
            Command::Verdict => "automatic, in the `verdict` that completes the round".to_string(),
            Command::Decide => "`decide accept`".to_string(),
            Command::Dissent => "`dissent none|advisory|blocking`".to_string(),
            c => format!("`{}`", c.name()),
        };
        match self.needs {
            Needs::Worktree => format!("{base} `--worktree`"),
            Needs::CommitSha => format!("{base} `--commit-sha`"),
            Needs::MergedInto => format!("{base} `--merged-into`"),
            Needs::Nothing => base,
        }
    }

    fn condition_text(&self) -> String {
        let mut parts = Vec::new();
        if self.human_gate {
            parts.push("human gate".to_string());
        }
        match self.guard {
            Guard::None => {}
            Guard::NoRcaRequired => parts.push("not `rca_required`".to_string()),
            Guard::NoRedTestRequired => parts.push("not `red_test_required`".to_string()),
            Guard::AnalysisApprovedIfRequired => {
                parts.push("if `rca_required`, analysis approved".to_string())
            }
            Guard::DecisionDue => parts.push(
                "ledger boards: round `max_rounds` of the gate, or a diverging round, completes \
                 with changes requested"
                    .to_string(),
            ),
        }
        if self.resubmits {
            parts.push("only when the pinned artifact changed after it was submitted".to_string());
        }
        if let Command::Submit(a) = self.command {
            parts.push(format!("{} +1", a.target().counter_field()));
        }
        // A review phase always has someone to review: a resubmission never meets an empty round.
        if self.completes_empty_round && !self.resubmits {
            parts.push("with `no_review` and nobody required, approved in the same write".into());
        }
        if self.command == Command::Claim {
            parts.push("required reviewer".to_string());
        }
        if self.command == Command::Dissent {
            parts.push(
                "the gate requires a dissent stage (`init --dissent`) and its required reviewers \
                 passed the current submission; a fresh agent, neither the doer nor a reviewer of \
                 the gate"
                    .to_string(),
            );
        }
        if self.command == Command::Block {
            parts.push("records `blocked_from`".to_string());
        }
        if self.command == Command::Decide {
            parts.push(match self.actor {
                Actor::Doer => "the user decides (several reviewers)".to_string(),
                _ => "the gate's only required reviewer (the arbiter)".to_string(),
            });
        }
        if parts.is_empty() {
            "—".to_string()
        } else {
            parts.join("; ")
        }
    }
}

/// The transition table as a Markdown table, for docs/protocol.md (a test keeps the two identical).
pub fn markdown_table() -> String {
    let mut out =
        String::from("| from | to | who | command | condition |\n|---|---|---|---|---|\n");
    for t in TRANSITIONS {
        let who = match t.actor {
            Actor::Doer => "doer",
            Actor::Reviewer => "reviewer",
            Actor::Any => "any agent",
            Actor::Auto => "—",
            Actor::Dissenter => "dissenter",
        };
        out.push_str(&format!(
            "| {} | {} | {who} | {} | {} |\n",
            t.source_text(),
            t.target_text(),
            t.command_text(),
            t.condition_text()
        ));
    }
    out
}

/// The agents whose turn it is on a board.
pub fn turn(fm: &Frontmatter) -> Vec<String> {
    let viewer = fm.doer().unwrap_or("doer");
    next(fm, viewer, &Place::default()).handoff_to
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_phases_are_the_rows_of_the_terminal_permissions() {
        let terminal: Vec<Phase> = Phase::ALL
            .iter()
            .copied()
            .filter(|p| p.is_terminal())
            .collect();
        assert_eq!(
            terminal,
            [
                P::Committed,
                P::Merged,
                P::CleanedUp,
                P::Blocked,
                P::Stopped
            ]
        );
        assert!(terminal_allows(P::Blocked, Command::Note));
        assert!(!terminal_allows(P::Blocked, Command::Advance));
        assert!(terminal_allows(P::Merged, Command::Advance));
        assert!(terminal_allows(P::Planning, Command::Register));
    }

    #[test]
    fn exactly_the_submission_rows_complete_an_empty_round() {
        for t in TRANSITIONS {
            assert_eq!(
                t.completes_empty_round,
                matches!(t.command, Command::Submit(_)),
                "{}",
                t.source_text()
            );
        }
    }

    #[test]
    fn every_work_phase_offers_the_doer_a_move() {
        // The phases a doer can be left in with nothing to run would be dead ends.
        for p in Phase::ALL.iter().copied() {
            if p.is_terminal() || p.is_reviewable() {
                continue;
            }
            let offered = TRANSITIONS
                .iter()
                .any(|t| t.actor == Actor::Doer && t.from.matches(p));
            assert!(offered, "{p} offers the doer no move");
        }
    }
}
