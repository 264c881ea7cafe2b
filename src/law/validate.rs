//! Whole-blackboard validation: the split (SPEC §2), the types (§2.1) and the invariants (§2.2).
//!
//! `pair validate` reports through [`check_board`], which adds to these the body and frontmatter
//! agreeing ([`crate::law::agreement`]) and the journal ([`crate::board::journal::check`]). Every
//! write checks the board it finds with the same errors ([`check_found`]; a repair excepted: it
//! may start from any content) and its new content with [`check_content`] (the journal's part of
//! new content is the store's seal and the law's [`crate::board::journal::check_kept`]; content
//! its builder left unchecked, a repair's, is checked whole once sealed), so no write proceeds
//! on a board `validate` rejects, nor leaves one.

use crate::board::document::{Document, SplitError};
use crate::board::frontmatter::{self, Parsed, Phase, Role};
use crate::board::yaml::{self, MAX_FRONTMATTER_BYTES};
use crate::error::FieldError;
use crate::law::protocol::{self, outcome_phase};

/// The largest blackboard read or written, in bytes (64 MiB). Every reader checks the size
/// before reading, and no write makes a file larger.
pub const MAX_BOARD_BYTES: u64 = 64 * 1024 * 1024;

/// Why a file of `size` bytes is not a blackboard.
/// The longest text one entry of a command may hold (a note, a verdict's review, a plan, an
/// objection's evidence), in bytes (1 MiB): a longer text belongs in a file of the repository,
/// named in the note. A raw write is bounded by the board's limit only.
pub const MAX_ENTRY_BYTES: usize = 1024 * 1024;

/// The refusal of an entry for `section` whose text is `size` bytes, over [`MAX_ENTRY_BYTES`].
pub fn entry_too_large(section: &str, size: usize) -> Option<FieldError> {
    (size > MAX_ENTRY_BYTES).then(|| FieldError {
        field: format!("## {section}"),
        line: None,
        message: format!(
            "the text of the new entry is {size} bytes, over the 1 MiB limit of one entry \
             ({MAX_ENTRY_BYTES} bytes); put the long part in a file of the repository and name \
             it in a shorter note"
        ),
    })
}

pub fn too_large_message(size: u64) -> String {
    format!(
        "the file is {size} bytes, over the 64 MiB limit of a blackboard ({MAX_BOARD_BYTES} \
         bytes); move old entries to another file"
    )
}

/// Why a board whose size is not known is refused: the remote left its blob out of a fetch that
/// takes no blob over the limit, so it is over it.
pub fn too_large_unfetched_message() -> String {
    format!(
        "the file is over the 64 MiB limit of a blackboard ({MAX_BOARD_BYTES} bytes): the remote \
         left it out of the fetch, which takes no file that large, so it was not downloaded; move \
         old entries to another file"
    )
}

/// Why a frontmatter of `size` bytes is refused; `canonical`: the size is that of the form
/// every write emits.
fn frontmatter_too_large(size: usize, canonical: bool) -> String {
    format!(
        "is {size} bytes{}, over the 1 MiB limit ({MAX_FRONTMATTER_BYTES} bytes){}",
        if canonical {
            " as every write would emit it (one line per field, every agent field spelled out)"
        } else {
            ""
        },
        if canonical {
            "; no write could succeed. Remove agents or unknown keys"
        } else {
            ""
        }
    )
}

/// The outcome of checking one blackboard's content.
#[derive(Debug, Clone)]
pub struct Report {
    pub errors: Vec<FieldError>,
    pub warnings: Vec<FieldError>,
}

/// A blackboard that passed every check, with its parts.
#[derive(Debug, Clone)]
pub struct Valid {
    pub doc: Document,
    pub parsed: Parsed,
}

/// The error of content that cannot be split into frontmatter and body (or read as text).
pub fn split_error(e: &SplitError) -> FieldError {
    let (field, line) = match e {
        SplitError::Empty | SplitError::Unclosed => ("frontmatter", None),
        SplitError::NoFrontmatter { .. } => ("frontmatter", Some(1)),
        SplitError::DoubledCr { line } => ("frontmatter", Some(*line)),
        SplitError::NotUtf8 { line, part } => (*part, Some(*line)),
        // The markers may be in the frontmatter or the body: name neither.
        SplitError::ConflictMarkers { line, .. } => ("file", Some(*line)),
    };
    let message = e.to_string();
    // The Display of a split error already leads with its line; keep the message plain.
    let message = match line {
        Some(l) => message
            .strip_prefix(&format!("line {l}: "))
            .map(str::to_string)
            .unwrap_or(message),
        None => message,
    };
    FieldError {
        field: field.to_string(),
        line,
        message,
    }
}

/// Parse and check the frontmatter of a split document.
pub fn check_frontmatter(doc: &Document) -> Result<Parsed, Report> {
    if doc.fm_text.len() > MAX_FRONTMATTER_BYTES {
        return Err(Report {
            errors: vec![FieldError {
                field: "frontmatter".to_string(),
                line: None,
                message: frontmatter_too_large(doc.fm_text.len(), false),
            }],
            warnings: vec![],
        });
    }
    let (mut node, ledger) =
        yaml::parse_frontmatter(&doc.fm_text, doc.fm_first_line - 1).map_err(|e| Report {
            errors: vec![FieldError {
                field: "frontmatter".to_string(),
                line: e.line,
                message: format!("YAML error: {}", e.message),
            }],
            warnings: vec![],
        })?;
    // Unknown keys are written back exactly as they were found.
    yaml::attach_raw(&mut node, &doc.fm_text, |k| !frontmatter::is_known_key(k));
    let ledger_read = ledger.as_ref().map(|t| t.source_len);
    let mut parsed =
        frontmatter::from_parts(&node, ledger.map(|t| t.ledger)).map_err(|errors| Report {
            errors,
            warnings: vec![],
        })?;
    // Every write emits the frontmatter in its canonical form, which can be much larger than
    // the text read (flow mappings, omitted agent fields, aliases): a board whose canonical
    // form is over the limit could never be written again, so it is not valid either.
    let emitted = written_len(&mut parsed.fm, ledger_read);
    if emitted > MAX_FRONTMATTER_BYTES {
        return Err(Report {
            errors: vec![FieldError {
                field: "frontmatter".to_string(),
                line: None,
                message: frontmatter_too_large(emitted, true),
            }],
            warnings: parsed.warnings,
        });
    }
    let errors = invariants(&parsed);
    if errors.is_empty() {
        Ok(parsed)
    } else {
        Err(Report {
            errors,
            warnings: parsed.warnings,
        })
    }
}

/// The length of the frontmatter's canonical form. A ledger read in the form every write emits
/// (`ledger_read`: the bytes below its key) is written again in at most as many bytes
/// ([`crate::board::ledger::form::TypedLedger`]), so while that bound is under the limit the
/// ledger, most of a large frontmatter, is not written out to be measured.
fn written_len(fm: &mut frontmatter::Frontmatter, ledger_read: Option<usize>) -> usize {
    if let Some(read) = ledger_read {
        let ledger = std::mem::take(&mut fm.ledger);
        let rest = fm.emit().len();
        fm.ledger = ledger;
        let bound = rest + "ledger:\n".len() + read;
        if bound <= MAX_FRONTMATTER_BYTES {
            return bound;
        }
    }
    fm.emit().len()
}

/// Check a whole file's bytes.
pub fn check_bytes(bytes: &[u8]) -> Result<Valid, Report> {
    if bytes.len() as u64 > MAX_BOARD_BYTES {
        return Err(Report {
            errors: vec![FieldError {
                field: "file".to_string(),
                line: None,
                message: too_large_message(bytes.len() as u64),
            }],
            warnings: vec![],
        });
    }
    let doc = Document::parse(bytes).map_err(|e| Report {
        errors: vec![split_error(&e)],
        warnings: vec![],
    })?;
    let parsed = check_frontmatter(&doc)?;
    let blocks = doc.unclosed_blocks();
    if let Some(error) = unclosed_error(blocks, doc.body_first_line) {
        return Err(Report {
            errors: vec![error],
            warnings: parsed.warnings,
        });
    }
    Ok(Valid { doc, parsed })
}

/// The error of a body that leaves a code fence, an HTML comment or a `<details>` element open
/// ([`crate::board::document::unclosed_blocks`]), the fence first; `body_first_line` is the
/// file line the body starts on.
pub fn unclosed_error(
    (fence, html): (Option<u32>, Option<crate::board::document::UnclosedHtml>),
    body_first_line: u32,
) -> Option<FieldError> {
    if let Some(line) = fence {
        return Some(FieldError {
            field: "body".to_string(),
            line: Some(body_first_line + line - 1),
            message: "a code fence opened here is never closed, so every section after it is \
                      hidden inside the code block; close the fence"
                .to_string(),
        });
    }
    html.map(|h| FieldError {
        field: "body".to_string(),
        line: Some(body_first_line + h.line - 1),
        message: format!(
            "{} opened here is never closed with {}, so when the blackboard is rendered it \
             hides everything after it, the sections that follow included; close it, or put \
             it in backticks or a code fence",
            h.what, h.closer
        ),
    })
}

/// Everything `pair validate` checks of a board's bytes: [`check_bytes`], the body and the
/// frontmatter agreeing, and the journal (its records well formed and chained, the last one
/// ending in the frontmatter's phase). Every error is reported, not just the first.
pub fn check_board(bytes: &[u8]) -> Result<Valid, Report> {
    check_rest(bytes, check_bytes(bytes)?)
}

/// What [`check_board`] checks beyond [`check_bytes`], on the bytes it accepted.
pub fn check_rest(bytes: &[u8], valid: Valid) -> Result<Valid, Report> {
    rest(Some(bytes), valid)
}

/// [`check_board`] for a writer about to change the board: the same errors, without the warning
/// that the file changed since its last recorded write (the write records it now), which would
/// cost hashing the board once more.
pub fn check_found(bytes: &[u8]) -> Result<Valid, Report> {
    check_found_as(bytes, || false)
}

/// [`check_found`], told whether the bytes are exactly what the last recorded write left
/// (`as_recorded`: the hash of everything before the last record is its `after`; asked only
/// when everything else passed). The journal of such a board was checked whole, its chain
/// and its seal, by the write that added its last record, which left the rest of the file as
/// it checked it: what is read again is the seal, the chain's links and the last record
/// ([`crate::board::journal::tail_holds`]), not the words of every record before it. A board
/// without a seal (format 1) is always checked whole. This keeps a write's cost from growing
/// with the length of its board's history.
pub fn check_found_as(bytes: &[u8], as_recorded: impl FnOnce() -> bool) -> Result<Valid, Report> {
    let valid = check_bytes(bytes)?;
    let errors = crate::law::agreement::check(&valid.parsed, &valid.doc);
    if errors.is_empty()
        && crate::board::journal::tail_holds(&valid.doc, &valid.parsed)
        && as_recorded()
    {
        return Ok(valid);
    }
    with_journal(None, valid, errors)
}

fn rest(bytes: Option<&[u8]>, valid: Valid) -> Result<Valid, Report> {
    let errors = crate::law::agreement::check(&valid.parsed, &valid.doc);
    with_journal(bytes, valid, errors)
}

fn with_journal(
    bytes: Option<&[u8]>,
    valid: Valid,
    errors: Vec<FieldError>,
) -> Result<Valid, Report> {
    let mut valid = valid;
    let mut errors = errors;
    let (journal_errors, journal_warnings) = match bytes {
        Some(bytes) => crate::board::journal::check(bytes, &valid.doc, &valid.parsed),
        None => crate::board::journal::check_for_write(&valid.doc, &valid.parsed),
    };
    errors.extend(journal_errors);
    valid.parsed.warnings.extend(journal_warnings);
    if errors.is_empty() {
        Ok(valid)
    } else {
        Err(Report {
            errors,
            warnings: valid.parsed.warnings,
        })
    }
}

/// What new content must pass before `pair` seals its journal record into it and writes it:
/// [`check_bytes`] and the body and frontmatter agreeing. (Its journal is the old board's,
/// kept as it was ([`crate::board::journal::check_kept`]), plus the record the store seals.)
pub fn check_content(bytes: &[u8]) -> Result<Valid, Report> {
    check_rest_of_content(check_bytes(bytes)?)
}

/// What [`check_content`] checks beyond [`check_bytes`], on the content it accepted.
pub fn check_rest_of_content(valid: Valid) -> Result<Valid, Report> {
    let errors = crate::law::agreement::check(&valid.parsed, &valid.doc);
    if errors.is_empty() {
        Ok(valid)
    } else {
        Err(Report {
            errors,
            warnings: valid.parsed.warnings,
        })
    }
}

/// Check only what `poll` reads: the frontmatter (the body is neither read nor checked).
pub fn check_frontmatter_bytes(bytes: &[u8]) -> Result<Valid, Report> {
    let doc = Document::parse_frontmatter_only(bytes).map_err(|e| Report {
        errors: vec![split_error(&e)],
        warnings: vec![],
    })?;
    let parsed = check_frontmatter(&doc)?;
    Ok(Valid { doc, parsed })
}

/// One invariant: reports each violation as (field, message).
type Invariant = fn(&frontmatter::Frontmatter, &mut dyn FnMut(&str, String));

/// The invariants of SPEC §2.2 on a well-typed frontmatter, each a function below.
pub fn invariants(p: &Parsed) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut err = |field: &str, message: String| {
        errors.push(FieldError {
            field: field.to_string(),
            line: p.line(field),
            message,
        });
    };
    let checks: [Invariant; 9] = [
        one_doer,
        required_are_reviewers,
        verdict_bookkeeping,
        artifact_submitted,
        worktree_recorded,
        blocked_bookkeeping,
        review_has_reviewers,
        outcome_agrees,
        dissent_settings,
    ];
    for check in checks {
        check(&p.fm, &mut err);
    }
    // The pins and the hashes recorded with verdicts.
    errors.extend(frontmatter::pin_invariants(p));
    // The objection ledger.
    errors.extend(crate::law::ledger::valid::invariants(p));
    errors
}

/// Exactly one doer.
fn one_doer(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    let doers: Vec<&str> = fm
        .agents
        .iter()
        .filter(|(_, a)| a.role == Role::Doer)
        .map(|(k, _)| k.as_str())
        .collect();
    // A review-only board has no doer: its agents are the debate's, under `review:`.
    if let Some(review) = crate::board::debate::of(fm) {
        if let Err(e) = review {
            err("review", format!("not a valid review: {e}"));
        }
        return;
    }
    match doers.len() {
        1 => {}
        0 => err(
            "agents",
            "no agent has role doer; exactly one agent must be the doer".to_string(),
        ),
        _ => {
            let field = format!("agents.{}.role", doers[1]);
            err(
                &field,
                format!(
                    "{} agents have role doer ({}); exactly one may",
                    doers.len(),
                    doers.join(", ")
                ),
            )
        }
    }
}

/// Required reviewers are reviewers, never the doer.
fn required_are_reviewers(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    for id in &fm.required_reviewers {
        if let Some(a) = fm.agent(id)
            && a.role == Role::Doer
        {
            err(
                "required_reviewers",
                format!("{id:?} is the doer and cannot be a required reviewer"),
            );
        }
    }
}

/// Per-agent verdict bookkeeping.
fn verdict_bookkeeping(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    for (id, agent) in &fm.agents {
        for t in frontmatter::Target::ALL {
            let r = agent.review(*t);
            let counter = fm.counter(*t);
            let rf = format!("agents.{id}.{}", t.reviewed_field());
            let vf = format!("agents.{id}.{}", t.verdict_field());
            if let Some(n) = r.reviewed
                && n > counter
            {
                err(
                    &rf,
                    format!(
                        "is {n} but {} is only {counter}; a reviewer cannot review a {} that \
                         was not submitted yet",
                        t.counter_field(),
                        if *t == frontmatter::Target::Code {
                            "round"
                        } else {
                            "revision"
                        }
                    ),
                );
            }
            match (r.reviewed, r.verdict) {
                (Some(_), None) => err(
                    &vf,
                    format!(
                        "is null but {} is set; set both or neither",
                        t.reviewed_field()
                    ),
                ),
                (None, Some(v)) => err(
                    &rf,
                    format!(
                        "is null but {} is {v}; a verdict must name the counter it reviewed",
                        t.verdict_field()
                    ),
                ),
                _ => {}
            }
        }
    }
}

/// A phase naming an artifact needs it submitted.
fn artifact_submitted(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    if let Some((t, min)) = fm.phase.requires_counter()
        && fm.counter(t) < min
    {
        err(
            t.counter_field(),
            format!(
                "is {} but phase {} needs it to be at least {min}",
                fm.counter(t),
                fm.phase
            ),
        );
    }
}

/// A worktree from CODING on (for a blocked board, the phase it was blocked in).
fn worktree_recorded(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    let effective = if fm.phase == Phase::Blocked {
        fm.blocked_from.unwrap_or(fm.phase)
    } else {
        fm.phase
    };
    if effective.needs_worktree() && fm.worktree.is_none() {
        err(
            "worktree",
            format!(
                "is null but phase {} needs the absolute path of the coding worktree",
                effective
            ),
        );
    }
}

/// Blocked bookkeeping.
fn blocked_bookkeeping(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    match (fm.phase, fm.blocked_from) {
        (Phase::Blocked, None) => err(
            "blocked_from",
            "is null but phase is BLOCKED; it must name the phase to return to".to_string(),
        ),
        (Phase::Blocked, Some(b)) if b.is_terminal() => err(
            "blocked_from",
            format!("is {b}, a terminal phase; it must be the non-terminal phase that was blocked"),
        ),
        (p, Some(b)) if p != Phase::Blocked => err(
            "blocked_from",
            format!("is {b} but phase is {p}; blocked_from is set only while BLOCKED"),
        ),
        _ => {}
    }
}

/// `dissent_every_cycle` is a setting of the dissent stage: a board without one has no dissenter.
fn dissent_settings(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    if fm.dissent.every_cycle && fm.dissent.gates.is_empty() {
        err(
            crate::board::dissent::EVERY_CYCLE_FIELD,
            format!(
                "is true but `{}` names no gate: the setting is of a dissent stage",
                crate::board::dissent::GATES_FIELD
            ),
        );
    }
}

/// Reviewable phases need reviewers (or an approved no-review workflow).
fn review_has_reviewers(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    if let Some(target) = fm.phase.review_target() {
        if !fm.has_reviewers() && !fm.no_review {
            err(
                "required_reviewers",
                format!(
                    "is empty in the reviewable phase {}; register reviewers or set no_review: \
                     true with the user's approval",
                    fm.phase
                ),
            );
        }
        let r = protocol::round(fm, target);
        // A passed round of a gate with a dissent stage waits for the dissent in its phase.
        let awaits_dissent = crate::law::dissent::stage_open(fm) == Some(target);
        if r.complete && fm.has_reviewers() && !awaits_dissent {
            err(
                "phase",
                format!(
                    "is {} but every required reviewer has a current {target} verdict, so the \
                     round is complete and the phase must be {}",
                    fm.phase,
                    outcome_phase(target, r.approved)
                ),
            );
        }
    }
}

/// Outcome phases agree with the verdicts (SPEC §4). A reviewer who joined after the round
/// closed has no verdict yet and does not contradict it.
fn outcome_agrees(fm: &frontmatter::Frontmatter, err: &mut dyn FnMut(&str, String)) {
    if let Some((target, approved)) = fm.phase.outcome_of() {
        // A gate accepted by decision after its round cap stands approved by that decision.
        if approved && crate::board::ledger::accepted_by_decision(fm, target) {
            return;
        }
        let r = protocol::round(fm, target);
        if approved {
            if !r.changes_requested_by.is_empty() || !r.comment_by.is_empty() {
                let who: Vec<_> = r
                    .changes_requested_by
                    .iter()
                    .chain(&r.comment_by)
                    .cloned()
                    .collect();
                err(
                    "phase",
                    format!(
                        "is {} but {} did not approve {} {} ({})",
                        fm.phase,
                        who.join(", "),
                        target,
                        r.counter,
                        target.verdict_field()
                    ),
                );
            } else if fm.dissent_required(target)
                && fm
                    .dissent
                    .at(target, r.counter)
                    .is_none_or(|d| d.outcome == crate::board::dissent::Outcome::Blocking)
            {
                err(
                    "phase",
                    format!(
                        "is {} but the {target} gate requires a dissent stage and no dissenter \
                         passed {target} {} ({})",
                        fm.phase,
                        r.counter,
                        crate::board::dissent::ROUNDS_FIELD
                    ),
                );
            } else if !protocol::stands_approved(fm, target) {
                err(
                    "phase",
                    format!(
                        "is {} but no required reviewer has approved {} {}",
                        fm.phase, target, r.counter
                    ),
                );
            }
        } else if r.changes_requested_by.is_empty()
            && r.comment_by.is_empty()
            && fm
                .dissent
                .at(target, r.counter)
                .is_none_or(|d| d.outcome != crate::board::dissent::Outcome::Blocking)
        {
            err(
                "phase",
                format!(
                    "is {} but no required reviewer requested changes or commented on {} {}",
                    fm.phase, target, r.counter
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(fm_extra: &str, phase: &str) -> String {
        format!(
            "---\nphase: {phase}\nphase_updated_at: \"2026-01-01T00:00:00Z\"\nwork_type: feature\nrca_required: false\nred_test_required: false\nrequired_reviewers: [rev]\nplan_revision: 1\nanalysis_revision: 0\nred_test_round: 0\ncode_review_round: 0\nworktree: null\n{fm_extra}agents:\n  doer:\n    role: doer\n    status: WORKING\n  rev:\n    role: reviewer\n    status: REVIEWING\n    reviewed_plan_revision: 1\n    plan_verdict: CHANGES_REQUESTED\n---\n# body\n\n## Plan Revisions\n\n### Plan revision 1 — doer — 2026-01-01T00:00:00Z\n\nplan\n\n## Plan Reviews\n\n### Plan review — revision 1 — rev — CHANGES_REQUESTED — 2026-01-01T00:00:00Z\n\nno\n"
        )
    }

    #[test]
    fn outcome_phase_must_agree_with_verdicts() {
        assert!(check_bytes(board("", "PLAN_CHANGES_REQUESTED").as_bytes()).is_ok());
        let err = check_bytes(board("", "PLAN_APPROVED").as_bytes()).unwrap_err();
        assert_eq!(err.errors[0].field, "phase");
        assert_eq!(err.errors[0].line, Some(2));
    }

    #[test]
    fn complete_round_in_reviewable_phase_is_an_error() {
        let err = check_bytes(board("", "REVIEWING_PLAN").as_bytes()).unwrap_err();
        assert!(err.errors[0].message.contains("PLAN_CHANGES_REQUESTED"));
    }

    #[test]
    fn blocked_needs_blocked_from() {
        let err = check_bytes(board("", "BLOCKED").as_bytes()).unwrap_err();
        assert_eq!(err.errors[0].field, "blocked_from");
        assert!(check_bytes(board("blocked_from: PLANNING\n", "BLOCKED").as_bytes()).is_ok());
    }
}
