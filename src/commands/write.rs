//! `pair write`: raw compare-and-swap write of a complete new file, flag-compatible with the
//! original `blackboard_write.py` helper.

use serde_json::json;

use super::{Outcome, read_input, shown, timeout};
use crate::cli::WriteArgs;
use crate::error::{Error, Result};
use crate::report::SCHEMA;
use crate::store::{self, Expect, WriteOptions};

pub fn run(a: WriteArgs) -> Result<Outcome> {
    let Some(board) = a.board().cloned() else {
        return Err(Error::Usage(
            "name the blackboard: `pair write BOARD ...` or `--path BOARD`".into(),
        ));
    };
    let expect = match (&a.expect_sha256, a.create_if_missing) {
        (Some(h), false) => {
            let h = h.trim().to_lowercase();
            if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(Error::Usage(format!(
                    "--expect-sha256 must be 64 hex digits (the SHA-256 of the whole file as you \
                     read it, e.g. from `pair status {} --json`), got {h:?}",
                    shown(&board)
                )));
            }
            Expect::Sha256(h)
        }
        (None, true) => Expect::Absent,
        _ => {
            return Err(Error::Usage(
                "give exactly one of --expect-sha256 HEX or --create-if-missing".into(),
            ));
        }
    };
    let content = read_input(&a.content_file, "--content-file")?;
    let opts = WriteOptions {
        timeout: timeout(a.timeout)?,
        agent: a.agent.clone(),
        operation: a.operation.clone(),
    };
    let written = store::update(&board, expect, &opts, move |_| Ok(content))?;
    let phase = written.valid.parsed.fm.phase;
    let json = json!({
        "schema": SCHEMA,
        "path": shown(&board),
        "target": written.target.display().to_string(),
        "operation": a.operation,
        "created": written.created,
        "old_sha256": written.old_sha256,
        "new_sha256": written.new_sha256,
        "phase": phase,
        "warnings": written.warnings,
    });
    let text = format!(
        "{} {} ({}): phase {phase}, sha256 {}\n",
        if written.created { "created" } else { "wrote" },
        shown(&board),
        a.operation,
        written.new_sha256
    );
    let mut out = Outcome::ok(json, text);
    out.warnings = written.warnings;
    Ok(out)
}
