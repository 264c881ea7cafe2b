//! `pair write`: raw compare-and-swap write of a complete new file, flag-compatible with the
//! original `blackboard_write.py` helper.

use serde_json::json;

use super::{Outcome, read_input, shown, timeout};
use crate::cli::WriteArgs;
use crate::document::Document;
use crate::error::{Error, Result};
use crate::model::Timestamp;
use crate::ownership;
use crate::report::SCHEMA;
use crate::store::{self, Expect, WriteOptions};
use crate::validate;

/// How a raw write is checked.
enum Mode {
    /// Helper-compatible: validated only.
    Raw,
    /// As an agent: ownership and transitions checked (SPEC §5).
    As(String),
    /// A human repair: validated and recorded.
    Repair(String),
}

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
    let mode = if a.repair {
        Mode::Repair(a.reason.clone().unwrap_or_default())
    } else if let Some(id) = a.as_agent.as_ref().or(a.agent.as_ref()) {
        // Naming the writer (--as, --agent or PAIR_AGENT) means its ownership is checked.
        Mode::As(id.clone())
    } else {
        Mode::Raw
    };
    if let Mode::As(id) | Mode::Repair(id) = &mode
        && id.trim().is_empty()
    {
        return Err(Error::Usage("--as and --reason need a value".into()));
    }
    let user_approved = a.user_approved;
    let writer = match &mode {
        Mode::As(id) => Some(id.clone()),
        _ => None,
    };
    let repairer = a.agent.clone().unwrap_or_else(|| "a human".to_string());
    let board_for_errors = board.clone();
    let written = store::update(&board, expect, &opts, move |current| match mode {
        Mode::Raw | Mode::As(_) => {
            // Creation has nothing to compare against; the store still validates it.
            let Some(current) = current else {
                return Ok(content);
            };
            let invalid = |errors, new_content| Error::Invalid {
                path: board_for_errors.clone(),
                errors,
                new_content,
            };
            let old =
                validate::check_bytes(&current.bytes).map_err(|r| invalid(r.errors, false))?;
            let new = validate::check_bytes(&content).map_err(|r| invalid(r.errors, true))?;
            let (old_fm, new_fm) = (&old.parsed.fm, &new.parsed.fm);
            let (old_body, new_body) = (&old.doc.body, &new.doc.body);
            let gate = match &mode {
                Mode::As(id) => {
                    ownership::check(old_fm, old_body, new_fm, new_body, id, user_approved)?
                }
                _ => ownership::check_anonymous(old_fm, old_body, new_fm, new_body, user_approved)?,
            };
            // An approved human gate is recorded, as the semantic commands record it.
            match gate {
                Some(g) => {
                    let who = writer.clone().unwrap_or_else(|| "a raw write".to_string());
                    record_decision(
                        &content,
                        &format!(
                            "Gate approved — {} → {} — {who} — {}",
                            g.from,
                            g.to,
                            Timestamp::now()
                        ),
                        &format!(
                            "The user approved the human gate {} → {} (`pair write --user-approved`).",
                            g.from, g.to
                        ),
                        &board_for_errors,
                    )
                }
                None => Ok(content),
            }
        }
        Mode::Repair(reason) => {
            let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
            record_decision(
                &content,
                &format!("Repair — {repairer} — {}", Timestamp::now()),
                &format!(
                    "The blackboard was repaired by hand (`pair write --repair`), skipping \
                     ownership and transition checks.\n\nReason: {reason}"
                ),
                &board_for_errors,
            )
        }
    })?;
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

/// Append an entry to the Decisions section of the content about to be written, keeping its
/// frontmatter text, line endings and BOM as they are.
fn record_decision(
    content: &[u8],
    heading: &str,
    text: &str,
    board: &std::path::Path,
) -> crate::error::Result<Vec<u8>> {
    let mut doc = Document::parse(content).map_err(|e| Error::Invalid {
        path: board.to_path_buf(),
        errors: vec![crate::model::FieldError {
            field: "file".into(),
            line: None,
            message: e.to_string(),
        }],
        new_content: true,
    })?;
    if !doc.append("Decisions", &format!("### {heading}\n\n{text}\n")) {
        return Err(Error::Usage(
            "the new content has no usable `## Decisions` section to record this in".into(),
        ));
    }
    let fm_text = doc.fm_text.replace("\r\n", "\n");
    Ok(doc.render(&fm_text).into_bytes())
}
