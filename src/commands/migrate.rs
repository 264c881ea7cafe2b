//! `pair migrate FROM TO`: copy a blackboard between a file and a git board, byte for byte.

use std::path::PathBuf;

use clap::ValueHint;
use serde_json::json;

use super::{Outcome, shown, timeout};
use crate::error::{Error, Result};
use crate::render::report::SCHEMA;
use crate::store::location::Location;
use crate::store::{self, WriteOptions};

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// The blackboard to copy: a file, or a git board (`git+<url>#<ref>:<path>`).
    #[arg(value_name = "FROM", value_hint = ValueHint::FilePath)]
    pub from: PathBuf,
    /// Where to copy it: a git board whose ref does not exist yet, or a file that does not
    /// exist yet.
    #[arg(value_name = "TO", value_hint = ValueHint::FilePath)]
    pub to: PathBuf,
    /// How long to wait for the lock of a file, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
}

/// Copy the board: read it whole, check it is a valid blackboard, and create the copy
/// (never clobbering). Nothing is added to the copy, not even a journal record, so its bytes
/// and SHA-256 are the original's.
pub fn run(a: MigrateArgs) -> Result<Outcome> {
    let (from, to) = (Location::of(&a.from)?, Location::of(&a.to)?);
    if from == to {
        return Err(Error::Usage(format!(
            "FROM and TO are the same blackboard ({}); name a git board and a file",
            shown(&a.from)
        )));
    }
    let bytes = store::read(&a.from)?;
    let opts = WriteOptions {
        timeout: timeout(a.timeout)?,
        agent: None,
        operation: "migrate".to_string(),
        usage: Default::default(),
    };
    store::create_copy(&a.to, &bytes, &opts)?;
    let sha256 = crate::text::sha256_hex(&bytes);
    let json = json!({
        "schema": SCHEMA,
        "from": shown(&a.from),
        "to": shown(&a.to),
        "sha256": sha256,
        "size": bytes.len(),
    });
    let text = format!(
        "copied {} to {} ({} bytes, sha256 {sha256})\n",
        shown(&a.from),
        shown(&a.to),
        bytes.len()
    );
    Ok(Outcome::ok(json, text))
}
