//! The arguments of `pair migrate`.

use std::path::PathBuf;

use clap::ValueHint;

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// The blackboard to copy: a file, or a git board (`git+<url>#<ref>:<path>`). Alone, the
    /// blackboard to upgrade in place to the newest unsigned format (with --signed: to a signed board).
    #[arg(value_name = "FROM", value_hint = ValueHint::FilePath)]
    pub from: PathBuf,
    /// Where to copy it: a git board whose ref does not exist yet, or a file that does not
    /// exist yet.
    #[arg(value_name = "TO", value_hint = ValueHint::FilePath)]
    pub to: Option<PathBuf>,
    /// With FROM alone: turn the board signed (format 3): from this write on every record
    /// carries its writer's SSH signature (--signing-key), checked against the trust root.
    #[arg(long, conflicts_with = "to")]
    pub signed: bool,
    /// Who writes the upgrade (on a signed board, whose key signs its record).
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: Option<String>,
    /// How long to wait for the lock of a file, or for a git board's remote, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
}
