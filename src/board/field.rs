//! The registry of top-level frontmatter fields (SPEC §2.1): one entry per field, in canonical
//! emission order, with its YAML name and its owner (SPEC §5).
//!
//! Everything that walks the fields — emission, the known-key list, the law's ownership check,
//! the record a repair leaves — goes through [`Field::ALL`] and the exhaustive matches below, so
//! adding a field to [`Frontmatter`] without deciding who owns it and where it is written does
//! not compile.

use crate::board::frontmatter::{Frontmatter, Timestamp};
use crate::board::yaml;

/// One top-level frontmatter field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Format,
    Journal,
    Phase,
    PhaseUpdatedAt,
    Yolo,
    WorkType,
    RcaRequired,
    RedTestRequired,
    RequiredReviewers,
    ReviewerPool,
    PoolReviews,
    After,
    IndependentReview,
    NoReview,
    AnalysisRevision,
    PlanRevision,
    RedTestRound,
    CodeReviewRound,
    Pins,
    Worktree,
    BlockedFrom,
    RepoRoot,
    BaseBranch,
    BaseSha,
    TopicBranch,
    CommitSha,
    MergedInto,
    MergedAt,
    WorktreeRemoved,
    RequiredChecks,
    CheckRuns,
    CheckNeeds,
    Agents,
    Ledger,
    Sla,
    DissentGates,
    DissentEveryCycle,
    DissentRounds,
    Handoffs,
    Seconds,
}

/// Who may change a field (SPEC §5), as the law reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// Moves only along the transition table: the phase, the counters, `blocked_from`, the
    /// `pins` (set by the submission that moves their counter), and `phase_updated_at` with the
    /// phase (the doer may also touch it alone).
    Protocol,
    /// The doer's field.
    Doer,
    /// A setting fixed at creation (the gates, the board's format): changed only by a recorded
    /// human repair.
    Settings,
    /// `required_reviewers`: the first submission's snapshot, or a reviewer the user named adding
    /// itself.
    ReviewerList,
    /// `no_review`: turned on once, with the user's approval, while nobody reviews.
    NoReview,
    /// Each agent entry belongs to its own agent.
    Agents,
    /// `check_runs` and `check_needs`: any agent on the blackboard records a run (`pair
    /// check`).
    Checks,
    /// The objection ledger: each objection moves along the ledger's rules
    /// ([`crate::board::ledger::MOVES`]); the round cap is a setting.
    Ledger,
    /// `sla`: the user's; changed only with the user's approval (`pair extend`), recorded.
    User,
    /// `dissent_rounds`: each dissenter adds its own verdict (`pair dissent`), under the dissent
    /// stage's rules ([`crate::law::dissent`]).
    Dissent,
    /// `handoffs`: a role handed over, acknowledged or withdrawn, under the handoff's rules
    /// ([`crate::law::handoff`]).
    Handoff,
    /// `seconds`: each reviewer adds or removes its own second of an open objection, under the
    /// law's rules ([`crate::law::ledger::check_seconds`]).
    Seconds,
    /// `journal`: the journal's seal, set by `pair` at every write of a board of format 2 after
    /// the law allowed it: whatever a raw write's content says, the seal replaces it.
    Store,
}

impl Field {
    /// Every field, in canonical emission order.
    pub const ALL: &'static [Field] = &[
        Field::Format,
        Field::Journal,
        Field::Phase,
        Field::PhaseUpdatedAt,
        Field::Yolo,
        Field::WorkType,
        Field::RcaRequired,
        Field::RedTestRequired,
        Field::RequiredReviewers,
        Field::ReviewerPool,
        Field::PoolReviews,
        Field::After,
        Field::IndependentReview,
        Field::NoReview,
        Field::AnalysisRevision,
        Field::PlanRevision,
        Field::RedTestRound,
        Field::CodeReviewRound,
        Field::Pins,
        Field::Worktree,
        Field::BlockedFrom,
        Field::RepoRoot,
        Field::BaseBranch,
        Field::BaseSha,
        Field::TopicBranch,
        Field::CommitSha,
        Field::MergedInto,
        Field::MergedAt,
        Field::WorktreeRemoved,
        Field::RequiredChecks,
        Field::CheckRuns,
        Field::CheckNeeds,
        Field::Ledger,
        Field::Seconds,
        Field::Sla,
        Field::DissentGates,
        Field::DissentEveryCycle,
        Field::DissentRounds,
        Field::Handoffs,
        Field::Agents,
    ];

    /// The YAML key.
    pub fn name(self) -> &'static str {
        match self {
            Field::Format => crate::board::format::FIELD,
            Field::Journal => crate::board::journal::SEAL_FIELD,
            Field::Phase => "phase",
            Field::PhaseUpdatedAt => "phase_updated_at",
            Field::Yolo => "yolo",
            Field::WorkType => "work_type",
            Field::RcaRequired => "rca_required",
            Field::RedTestRequired => "red_test_required",
            Field::RequiredReviewers => "required_reviewers",
            Field::ReviewerPool => crate::board::pool::MEMBERS_FIELD,
            Field::PoolReviews => crate::board::pool::REVIEWS_FIELD,
            Field::After => crate::board::depend::FIELD,
            Field::IndependentReview => crate::board::frontmatter::INDEPENDENT_REVIEW,
            Field::NoReview => "no_review",
            Field::AnalysisRevision => "analysis_revision",
            Field::PlanRevision => "plan_revision",
            Field::RedTestRound => "red_test_round",
            Field::CodeReviewRound => "code_review_round",
            Field::Pins => "pins",
            Field::Worktree => "worktree",
            Field::BlockedFrom => "blocked_from",
            Field::RepoRoot => "repo_root",
            Field::BaseBranch => "base_branch",
            Field::BaseSha => "base_sha",
            Field::TopicBranch => "topic_branch",
            Field::CommitSha => "commit_sha",
            Field::MergedInto => "merged_into",
            Field::MergedAt => "merged_at",
            Field::WorktreeRemoved => "worktree_removed",
            Field::RequiredChecks => "required_checks",
            Field::CheckRuns => "check_runs",
            Field::CheckNeeds => crate::board::checks::NEEDS_FIELD,
            Field::Agents => "agents",
            Field::Ledger => "ledger",
            Field::Sla => "sla",
            Field::DissentGates => crate::board::dissent::GATES_FIELD,
            Field::DissentEveryCycle => crate::board::dissent::EVERY_CYCLE_FIELD,
            Field::DissentRounds => crate::board::dissent::ROUNDS_FIELD,
            Field::Handoffs => crate::board::handoff::FIELD,
            Field::Seconds => crate::board::ledger::second::FIELD,
        }
    }

    /// Who may change it.
    pub fn owner(self) -> Owner {
        match self {
            Field::Phase
            | Field::PhaseUpdatedAt
            | Field::AnalysisRevision
            | Field::PlanRevision
            | Field::RedTestRound
            | Field::CodeReviewRound
            | Field::Pins
            | Field::BlockedFrom => Owner::Protocol,
            // The format is set when the board is made, like the gates (see `crate::board::format`).
            Field::Format
            | Field::Yolo
            | Field::WorkType
            | Field::RcaRequired
            | Field::RedTestRequired
            | Field::RequiredChecks
            | Field::ReviewerPool
            | Field::PoolReviews
            | Field::After
            | Field::IndependentReview
            | Field::DissentGates
            | Field::DissentEveryCycle => Owner::Settings,
            Field::DissentRounds => Owner::Dissent,
            Field::Handoffs => Owner::Handoff,
            Field::Seconds => Owner::Seconds,
            Field::CheckRuns | Field::CheckNeeds => Owner::Checks,
            Field::RequiredReviewers => Owner::ReviewerList,
            Field::NoReview => Owner::NoReview,
            Field::Worktree
            | Field::RepoRoot
            | Field::BaseBranch
            | Field::BaseSha
            | Field::TopicBranch
            | Field::CommitSha
            | Field::MergedInto
            | Field::MergedAt
            | Field::WorktreeRemoved => Owner::Doer,
            Field::Agents => Owner::Agents,
            Field::Ledger => Owner::Ledger,
            Field::Sla => Owner::User,
            Field::Journal => Owner::Store,
        }
    }

    /// The value as it is written in the frontmatter (`None`: an optional field left out).
    pub fn value(self, fm: &Frontmatter) -> Option<String> {
        let opt = |v: &Option<String>| Some(v.as_deref().map_or("null".into(), yaml::scalar));
        let ts = |t: &Timestamp| yaml::quoted(&t.to_string());
        let a = &fm.audit;
        match self {
            Field::Format => crate::board::format::value(fm),
            Field::Journal => fm.journal.as_ref().map(crate::board::journal::Seal::value),
            Field::Phase => Some(fm.phase.to_string()),
            Field::PhaseUpdatedAt => Some(ts(&fm.phase_updated_at)),
            Field::Yolo => Some(fm.yolo.to_string()),
            Field::WorkType => Some(yaml::scalar(&fm.work_type)),
            Field::RcaRequired => Some(fm.rca_required.to_string()),
            Field::RedTestRequired => Some(fm.red_test_required.to_string()),
            Field::RequiredReviewers => Some(format!(
                "[{}]",
                fm.required_reviewers
                    .iter()
                    .map(|r| yaml::scalar(r))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Field::ReviewerPool => fm.pool.as_ref().map(|p| {
                format!(
                    "[{}]",
                    p.members
                        .iter()
                        .map(|r| yaml::scalar(r))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
            Field::PoolReviews => fm.pool.as_ref().map(|p| p.reviews.to_string()),
            // Written only when the board waits for another.
            Field::After => (!fm.after.is_empty()).then(|| {
                format!(
                    "[{}]",
                    fm.after
                        .iter()
                        .map(|r| yaml::scalar(r))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
            // Written only when set: a board without the policy carries no such key.
            Field::IndependentReview => fm.independent_review.then(|| "true".to_string()),
            Field::NoReview => Some(fm.no_review.to_string()),
            Field::AnalysisRevision => Some(fm.analysis_revision.to_string()),
            Field::PlanRevision => Some(fm.plan_revision.to_string()),
            Field::RedTestRound => Some(fm.red_test_round.to_string()),
            Field::CodeReviewRound => Some(fm.code_review_round.to_string()),
            // A block, like the agents; this one-line form names it in messages.
            Field::Pins if fm.pins.is_empty() => None,
            Field::Pins => Some(format!(
                "{{{}}}",
                fm.pins
                    .iter()
                    .map(|(t, p)| format!("{t}: {} {} {}", p.counter, p.kind, p.sha256.short()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Field::Worktree => opt(&fm.worktree),
            Field::BlockedFrom => Some(fm.blocked_from.map_or("null".into(), |p| p.to_string())),
            Field::RepoRoot => a.repo_root.as_ref().and(opt(&a.repo_root)),
            Field::BaseBranch => a.base_branch.as_ref().and(opt(&a.base_branch)),
            Field::BaseSha => a.base_sha.as_ref().and(opt(&a.base_sha)),
            Field::TopicBranch => a.topic_branch.as_ref().and(opt(&a.topic_branch)),
            Field::CommitSha => a.commit_sha.as_ref().and(opt(&a.commit_sha)),
            Field::MergedInto => a.merged_into.as_ref().and(opt(&a.merged_into)),
            Field::MergedAt => a.merged_at.as_ref().map(ts),
            Field::WorktreeRemoved => a.worktree_removed.map(|b| b.to_string()),
            Field::RequiredChecks => crate::board::checks::required_value(&fm.required_checks),
            Field::CheckRuns => crate::board::checks::runs_value(&fm.check_runs),
            Field::CheckNeeds => crate::board::checks::needs_value(&fm.check_runs),
            // The agents are a block, not a value; `differs` compares them entry by entry.
            Field::Agents => Some(format!("{} agents", fm.agents.len())),
            Field::Ledger if fm.ledger.is_empty() => None,
            Field::Ledger => Some(format!("{{{}}}", crate::board::ledger::summary(&fm.ledger))),
            Field::Sla => crate::board::sla::value(&fm.sla),
            Field::DissentGates => fm.dissent.gates_value(),
            // Written only when set, like `independent_review`.
            Field::DissentEveryCycle => fm.dissent.every_cycle.then(|| "true".to_string()),
            Field::DissentRounds => (!fm.dissent.rounds.is_empty()).then(|| {
                let lines: Vec<String> = fm.dissent.rounds.iter().map(|r| r.value()).collect();
                format!("[{}]", lines.join("; "))
            }),
            Field::Handoffs => crate::board::handoff::value(&fm.handoffs),
            Field::Seconds => crate::board::ledger::second::value(&fm.seconds),
        }
    }

    /// Whether the field differs between two frontmatters.
    pub fn differs(self, a: &Frontmatter, b: &Frontmatter) -> bool {
        match self {
            Field::Agents => a.agents != b.agents,
            Field::Pins => a.pins != b.pins,
            Field::CheckRuns => a.check_runs != b.check_runs,
            Field::Ledger => a.ledger != b.ledger,
            // `format: 1` and no `format` are the same board.
            Field::Format => crate::board::format::of(a) != crate::board::format::of(b),
            _ => self.value(a) != self.value(b),
        }
    }
}

/// The top-level fields that differ between two frontmatters, in canonical order, with the
/// unknown keys (compared by value) last under the name `extra`.
pub fn changed(old: &Frontmatter, new: &Frontmatter) -> Vec<Field> {
    Field::ALL
        .iter()
        .copied()
        .filter(|f| f.differs(old, new))
        .collect()
}

/// Whether a top-level key is one this version knows.
pub fn is_known_key(key: &str) -> bool {
    Field::ALL.iter().any(|f| f.name() == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_in_canonical_order() {
        let names: Vec<_> = Field::ALL.iter().map(|f| f.name()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert_eq!(names.first(), Some(&"format"));
        assert_eq!(names.last(), Some(&"agents"));
    }
}
