//! The arguments of `pair migrate`.

use std::path::PathBuf;

use clap::ValueHint;

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// The blackboard to copy: a file, or a git board (`git+<url>#<ref>:<path>`). Alone, the
    /// blackboard to upgrade in place to the newest format this pair writes.
    #[arg(value_name = "FROM", value_hint = ValueHint::FilePath)]
    pub from: PathBuf,
    /// Where to copy it: a git board whose ref does not exist yet, or a file that does not
    /// exist yet.
    #[arg(value_name = "TO", value_hint = ValueHint::FilePath)]
    pub to: Option<PathBuf>,
    /// How long to wait for the lock of a file, or for a git board's remote, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
}
