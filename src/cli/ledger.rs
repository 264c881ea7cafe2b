//! The arguments of the objection ledger's commands: `object`, `resolve`, `challenge`, `rule`,
//! `accept`, `reopen`, `withdraw`, `second`, `objections` and `decide`.

use std::path::PathBuf;

use clap::{Args, ValueEnum, ValueHint};

use crate::cli::WriteCommon;

/// The severities `object` takes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SeverityArg {
    Blocking,
    Advisory,
}

#[derive(Debug, Args)]
pub struct ObjectArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// blocking (keeps the gate from approval) or advisory (collected on approval).
    #[arg(long, value_enum)]
    pub severity: SeverityArg,
    /// The objection whose resolution caused this regression (REG-N).
    #[arg(long, value_name = "ID")]
    pub regression_of: Option<String>,
    /// Where in the artifact (`path:line`, `path#symbol`, `## Heading`, `commit SHA` or
    /// `sha256:HASH`).
    #[arg(long, value_name = "ANCHOR")]
    pub anchor: String,
    /// The objection in one line.
    #[arg(long, value_name = "TEXT", conflicts_with = "title_file")]
    pub title: Option<String>,
    /// Read the title from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub title_file: Option<PathBuf>,
    /// The concrete failure and why it meets the bar.
    #[arg(long, value_name = "TEXT", conflicts_with = "evidence_file")]
    pub evidence: Option<String>,
    /// Read the evidence from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub evidence_file: Option<PathBuf>,
    /// A specific fix that would resolve it.
    #[arg(long, value_name = "TEXT", conflicts_with = "fix_file")]
    pub fix: Option<String>,
    /// Read the fix from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub fix_file: Option<PathBuf>,
    /// The coupling that brings an outside anchor in scope.
    #[arg(long, value_name = "TEXT", conflicts_with = "undeclared_impact_file")]
    pub undeclared_impact: Option<String>,
    /// Read the coupling from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub undeclared_impact_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// The objection (BLK-N, ADV-N, REG-N).
    #[arg(value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub common: WriteCommon,
    /// What changed and why it fixes the objection.
    #[arg(long, value_name = "TEXT", conflicts_with = "resolution_file")]
    pub resolution: Option<String>,
    /// Read the resolution from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub resolution_file: Option<PathBuf>,
    /// The areas the fix touched (comma-separated, for the regression check).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub surfaces: Vec<String>,
    /// The submission that fixed it, as GATE:N (e.g. code:2, for an objection whose gate has
    /// closed).
    #[arg(long, value_name = "GATE:N", value_parser = round_arg)]
    pub fixed_in: Option<(crate::board::frontmatter::Target, u32)>,
}

/// A submission named as GATE:N.
pub(crate) fn round_arg(s: &str) -> Result<(crate::board::frontmatter::Target, u32), String> {
    crate::board::ledger::parse_round(s)
}

#[derive(Debug, Args)]
pub struct ChallengeArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// The objection disputed.
    #[arg(value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub common: WriteCommon,
    /// Why it is invalid (cite the spec, give counter-evidence, or show the failure cannot
    /// happen).
    #[arg(long, value_name = "TEXT", conflicts_with = "grounds_file")]
    pub grounds: Option<String>,
    /// Read the grounds from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub grounds_file: Option<PathBuf>,
}

/// A ruling word.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RulingArg {
    Uphold,
    Overrule,
    RejectRework,
    Confirm,
    Dismiss,
}

/// A reason, inline or in a file: one of the two is required (the usage line shows it).
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct ReasonText {
    /// Why (recorded).
    #[arg(long, value_name = "TEXT", conflicts_with = "reason_file")]
    pub reason: Option<String>,
    /// Read the reason from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub reason_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RuleArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// The challenged objection, or `rework` for reject-rework.
    #[arg(value_name = "ID")]
    pub id: String,
    /// uphold (the doer must address it), overrule (struck from the record) or reject-rework;
    /// on a review-only board, confirm or dismiss (the finding holds, or not).
    #[arg(value_enum, value_name = "RULING")]
    pub ruling: RulingArg,
    #[command(flatten)]
    pub common: WriteCommon,
    #[command(flatten)]
    pub reason: ReasonText,
    /// The user made this ruling (needed when several reviewers are required, or for the doer).
    #[arg(long)]
    pub user_approved: bool,
}

#[derive(Debug, Args)]
pub struct AcceptArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// Your resolved objection.
    #[arg(value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub common: WriteCommon,
}

#[derive(Debug, Args)]
pub struct ReopenArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// Your objection.
    #[arg(value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub common: WriteCommon,
    #[command(flatten)]
    pub reason: ReasonText,
}

#[derive(Debug, Args)]
pub struct SecondArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// Another reviewer's open objection (BLK-N, ADV-N, REG-N).
    #[arg(value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub common: WriteCommon,
    /// Take your second back.
    #[arg(long)]
    pub withdraw: bool,
}

#[derive(Debug, Args)]
pub struct ObjectionsArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub caller: super::Caller,
    /// Only the objections still to be settled (open, reopened, resolved, challenged).
    #[arg(long)]
    pub open: bool,
}

/// What `decide` decides.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DecisionArg {
    Accept,
    Reject,
    Defer,
}

#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// accept (approve; open objections become accepted risks), reject (stop the work) or
    /// defer (needs --escalation).
    #[arg(value_enum, value_name = "DECISION")]
    pub decision: DecisionArg,
    #[command(flatten)]
    pub common: WriteCommon,
    #[command(flatten)]
    pub reason: ReasonText,
    /// Where a deferred item goes: human, parking-lot or blocked-pending:X.
    #[arg(long, value_name = "PATH")]
    pub escalation: Option<String>,
    /// The user made this decision (needed when several reviewers are required, or for the doer).
    #[arg(long)]
    pub user_approved: bool,
}
