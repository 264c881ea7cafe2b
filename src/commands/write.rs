//! `pair write`: raw compare-and-swap write of a complete new file, flag-compatible with the
//! original `blackboard_write.py` helper.

use serde_json::json;

use super::{Outcome, read_input, shown, timeout};
use crate::board::document::Document;
use crate::board::entry::DECISIONS;
use crate::board::field::{self, Field};
use crate::board::frontmatter::{Frontmatter, Timestamp};
use crate::cli::WriteArgs;
use crate::error::{Error, Result};
use crate::law::Consent;
use crate::law::validate;
use crate::ops::Entry;
use crate::render::report::SCHEMA;
use crate::store::Session;
use crate::store::{self, Built, Expect, WriteOptions};
use crate::transaction::{self, RawMode};

/// How a raw write is checked.
enum Mode {
    /// Helper-compatible, naming nobody: validated, and may only append to the body.
    Raw,
    /// As an agent: ownership and transitions checked (SPEC §5).
    As(String),
    /// A human repair: validated and recorded.
    Repair(String),
}

pub fn run(a: WriteArgs, s: &Session) -> Result<Outcome> {
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
        description: super::invocation(),
        timeout: timeout(a.timeout)?,
        // The writer named by `--as` (or else `--agent`, `PAIR_AGENT`) is the one whose
        // ownership is checked, and the one the journal and the lock owner record name.
        agent: a.as_agent.clone().or_else(|| a.agent.clone()),
        // The journal names a repair as one, whatever the operation is called: a repair may
        // mend the journal, and the ref's history of a git board is read past it
        // (`crate::board::journal::is_repair`).
        operation: if a.repair {
            crate::board::journal::REPAIR.to_string()
        } else {
            a.operation.clone()
        },
        usage: (&a.usage).try_into()?,
        publish: Vec::new(),
        repair: a.repair,
        origin: s.origin().clone(),
        transcript: s.transcript().map(Into::into),
        keys: s.keys().clone(),
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
    let consent = Consent {
        user_approved: a.user_approved,
        waive: a.waive.clone(),
        invocation: super::invocation(),
        ..Consent::default()
    };
    let repairer = a.agent.clone().unwrap_or_else(|| "a human".to_string());
    let board_for_errors = board.clone();
    let written = store::update(&board, expect, &opts, s, move |current| {
        // Creation has nothing to compare against; the store still validates it.
        let Some(current) = current else {
            return Ok(content.clone().into());
        };
        let now = Timestamp::now();
        match &mode {
            Mode::Raw => transaction::replace_with(
                &board_for_errors,
                current.into(),
                content.clone(),
                &RawMode::Anonymous,
                &consent,
                s.origin(),
                now,
                &|fm| store::depend::read(&board_for_errors, fm),
            ),
            Mode::As(id) => transaction::replace_with(
                &board_for_errors,
                current.into(),
                content.clone(),
                &RawMode::As(id.clone()),
                &consent,
                s.origin(),
                now,
                &|fm| store::depend::read(&board_for_errors, fm),
            ),
            Mode::Repair(reason) => repair(
                &board_for_errors,
                current,
                content.clone(),
                &repairer,
                reason,
                now,
            )
            .map(Built::from),
        }
    })
    .map_err(|e| e.suggest(&super::argv(), Some(&shown(&board))))?;
    let phase = written.parsed.fm.phase;
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
        crate::render::output::path(&board),
        a.operation,
        written.new_sha256
    );
    let mut out = Outcome::ok(json, text);
    out.warnings = written.warnings;
    Ok(out)
}

/// Which agent entries a repair added, removed or changed.
fn agent_changes(old: &Frontmatter, new: &Frontmatter) -> Vec<String> {
    let mut out = Vec::new();
    for (id, a) in &old.agents {
        match new.agent(id) {
            None => out.push(format!("- `agents.{id}`: removed")),
            Some(b) if b != a => out.push(format!("- `agents.{id}`: changed")),
            Some(_) => {}
        }
    }
    for (id, _) in &new.agents {
        if old.agent(id).is_none() {
            out.push(format!("- `agents.{id}`: added"));
        }
    }
    out
}

/// Set `phase_updated_at` to `now` in content about to be written, changing only that line.
fn restamp(board: &std::path::Path, content: &[u8], now: Timestamp) -> Result<Vec<u8>> {
    let doc = Document::parse(content).map_err(|e| transaction::unsplittable(board, "file", &e))?;
    let fm: String = doc
        .fm_text
        .replace("\r\n", "\n")
        .split_inclusive('\n')
        .map(|line| {
            if line.starts_with("phase_updated_at:") {
                format!("phase_updated_at: \"{now}\"\n")
            } else {
                line.to_string()
            }
        })
        .collect();
    Ok(doc.render(&fm).into_bytes())
}

/// A human repair: no law, and the old content may be anything, but the result must be a board
/// `validate` accepts (the store checks it whole, journal record sealed, since this builder
/// leaves it unchecked), and the record says what changed (each changed field, old → new) and
/// why.
fn repair(
    board: &std::path::Path,
    current: &store::Current,
    new: Vec<u8>,
    repairer: &str,
    reason: &str,
    now: Timestamp,
) -> Result<Vec<u8>> {
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    let old = &current.bytes[..];
    let invalid = |errors, new_content| Error::invalid(board, errors, new_content);
    // What was wrong with the journal as found (the file's, or the ref's history), said in the
    // record: the repair seals the journal as it stands.
    let mut journal: Vec<String> = current
        .history
        .iter()
        .map(|e| format!("- {}", e.message))
        .collect();
    if let Err(r) = validate::check_found(old) {
        journal.extend(
            r.errors
                .iter()
                .filter(|e| e.field == "journal" || e.field == crate::board::journal::SEAL_FIELD)
                .map(|e| format!("- {}", e.message)),
        );
    }
    let journal = if journal.is_empty() {
        String::new()
    } else {
        format!(
            "\n\nThe journal as found (the repair records it as it now stands):\n\n{}",
            journal.join("\n")
        )
    };
    let mut new = new;
    let mut new_valid = validate::check_bytes(&new).map_err(|r| invalid(r.errors, true))?;
    // The old content may be exactly what needs repairing: compare fields only when it parses.
    let changes = match validate::check_bytes(old) {
        Ok(old_valid) => {
            let o = &old_valid.parsed.fm;
            // A repair that moves the phase dates the move, as every phase change does.
            if o.phase != new_valid.parsed.fm.phase
                && o.phase_updated_at == new_valid.parsed.fm.phase_updated_at
            {
                new = restamp(board, &new, now)?;
                new_valid = validate::check_bytes(&new).map_err(|r| invalid(r.errors, true))?;
            }
            let n = &new_valid.parsed.fm;
            let mut lines: Vec<String> = field::changed(o, n)
                .into_iter()
                .flat_map(|f| match f {
                    Field::Agents => agent_changes(o, n),
                    f => vec![format!(
                        "- `{}`: {} → {}",
                        f.name(),
                        f.value(o).unwrap_or_else(|| "(absent)".into()),
                        f.value(n).unwrap_or_else(|| "(absent)".into())
                    )],
                })
                .collect();
            if o.extra != n.extra {
                lines.push("- fields beyond the protocol's changed".to_string());
            }
            if lines.is_empty() {
                "No frontmatter field changed.".to_string()
            } else {
                format!("Changed:\n\n{}", lines.join("\n"))
            }
        }
        Err(_) => "The old content was not a valid blackboard.".to_string(),
    };
    transaction::append_records(
        board,
        &new,
        [Entry::new(
            DECISIONS,
            format!("Repair — {repairer} — {now}"),
            format!(
                "The blackboard was repaired by hand (`pair write --repair`), skipping ownership \
                 and transition checks.\n\n{changes}{journal}\n\nReason: {reason}"
            ),
        )],
    )
}
