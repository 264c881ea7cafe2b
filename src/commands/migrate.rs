//! `pair migrate FROM TO`: copy a blackboard between a file and a git board, byte for byte.

use serde_json::json;

use super::{Outcome, shown, timeout};
use crate::cli::migrate::MigrateArgs;
use crate::error::{Error, Result};
use crate::render::output;
use crate::render::report::SCHEMA;
use crate::store::Session;
use crate::store::location::Location;
use crate::store::{self, WriteOptions};

/// Copy the board: read it whole, check it is a valid blackboard, and create the copy
/// (never clobbering). Nothing is added to the copy, not even a journal record, so its bytes
/// and SHA-256 are the original's.
pub fn run(a: MigrateArgs, s: &Session) -> Result<Outcome> {
    let (from, to) = (Location::of(&a.from)?, Location::of(&a.to)?);
    if from == to {
        return Err(Error::Usage(format!(
            "FROM and TO are the same blackboard ({}); name a git board and a file",
            output::path(&a.from)
        )));
    }
    let bytes = store::read(&a.from, s)?;
    let opts = WriteOptions {
        description: super::invocation(),
        timeout: timeout(a.timeout)?,
        agent: None,
        operation: "migrate".to_string(),
        usage: Default::default(),
        publish: Vec::new(),
    };
    store::create_copy(&a.to, &bytes, &opts, s)?;
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
        output::path(&a.from),
        output::path(&a.to),
        bytes.len()
    );
    Ok(Outcome::ok(json, text))
}
