//! The arguments of the commands that read a project (a set of boards): `pair ls`, `pair next`.

use std::path::PathBuf;

use clap::{ValueEnum, ValueHint};

/// How many unfinished pool claims an agent holds before `next` offers it another one, unless
/// `--max-held` says otherwise.
pub const MAX_HELD: usize = 1;

/// How `ls` orders its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LsSort {
    /// By the board's name in the project.
    #[default]
    Name,
    /// By phase, in the protocol's order.
    Phase,
    /// Longest in its phase first.
    Age,
    /// Highest round first.
    Round,
    /// By whose turn it is.
    Turn,
}

/// Which boards `ls` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LsState {
    /// Not in a terminal phase.
    Open,
    /// In a terminal phase (COMMITTED, MERGED, CLEANED_UP, BLOCKED, STOPPED).
    Terminal,
    /// Someone holds the turn longer than the stall limit.
    Stalled,
    /// Past the phase's SLA.
    Breached,
    /// Unreadable or invalid.
    Invalid,
    /// Waits for a board not yet COMMITTED or later.
    Waiting,
}

#[derive(Debug, clap::Args)]
pub struct LsArgs {
    /// The project: a directory of blackboards, or git+<url>#<ref-prefix>/ (every board ref
    /// under the prefix).
    #[arg(value_name = "PROJECT", value_hint = ValueHint::AnyPath)]
    pub project: PathBuf,
    /// Order of the rows.
    #[arg(long, value_enum, default_value_t, value_name = "KEY")]
    pub sort: LsSort,
    /// Only boards this agent is on or whose turn it is.
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Only boards in this state, or in this phase (a phase name such as REVIEWING_CODE).
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct NextArgs {
    /// The project (a directory of blackboards, or git+<url>#<ref-prefix>/).
    #[arg(value_name = "PROJECT", value_hint = ValueHint::AnyPath)]
    pub project: PathBuf,
    /// Your agent id.
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: String,
    /// Block until there is something for you to do.
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this many seconds (exit 10).
    #[arg(
        long,
        default_value_t = 600.0,
        value_name = "SECONDS",
        requires = "wait"
    )]
    pub timeout: f64,
    /// With --wait: how often a git remote is asked (default 1; a directory is watched).
    #[arg(long, value_name = "SECONDS", requires = "wait")]
    pub interval: Option<f64>,
    /// Unfinished pool reviews you may hold before a new claim is offered.
    #[arg(long, default_value_t = MAX_HELD, value_name = "N")]
    pub max_held: usize,
}
