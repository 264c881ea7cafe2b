//! `pair show`: entries of the body, found by what they are rather than by reading Markdown —
//! the artifact of the current round (its entry with counter, author and time) and the round's
//! reviews, the newest entry (`--latest`), or a named section. Like `status`, it takes no lock.

use serde_json::json;

use super::{Outcome, shown};
use crate::board::entry::artifact_section;
use crate::board::entry::target_noun;
use crate::board::entry::{self, Entry};
use crate::board::frontmatter::{Frontmatter, Target};
use crate::board::ledger::Objection;
use crate::cli::ShowArgs;
use crate::error::{Error, Result};
use crate::render::report::{SCHEMA, current_target};
use crate::store::{Session, Snapshot};

pub fn run(a: ShowArgs, first: Result<Snapshot>, _s: &Session) -> Result<Outcome> {
    let loaded = first?.load()?;
    let doc = &loaded.valid.doc;
    let fm = &loaded.valid.parsed.fm;
    let all = entry::entries(doc);
    let board = shown(&a.board);
    if let Some(name) = &a.section {
        return section(&a, &board, doc, &all, name);
    }
    if let Some(id) = &a.id {
        return objection(&board, fm, &all, id);
    }
    let Some(target) = current_target(fm) else {
        let json = json!({
            "schema": SCHEMA, "path": board, "phase": fm.phase, "target": null, "counter": null,
            "artifact": null, "reviews": [], "corrections": [], "objections": [],
        });
        return Ok(Outcome::ok(
            json,
            format!(
                "Nothing has been submitted yet (phase {}); `pair show {} SECTION` prints a \
                 section.\n",
                fm.phase,
                crate::text::shell_word(&board)
            ),
        ));
    };
    let counter = fm.counter(target);
    let (artifact, reviews) = entry::round(&all, target, counter);
    let reviews: Vec<&Entry> = if a.latest { Vec::new() } else { reviews };
    let mut warnings = Vec::new();
    let (noun, unit) = target_noun(target);
    let mut text = String::new();
    match artifact {
        Some(e) => text.push_str(&with_place(e)),
        None if counter == 0 => text.push_str(&format!(
            "No {} has been submitted yet (phase {}).\n",
            noun.to_lowercase(),
            fm.phase
        )),
        None => warnings.push(format!(
            "`{}: {counter}` but `## {}` has no entry for {} {unit} {counter}",
            target.counter_field(),
            artifact_section(target, false),
            noun.to_lowercase()
        )),
    }
    // `pair diff` reads the artifact of an open review only: suggested only then.
    if target == Target::Code && artifact.is_some() && fm.phase.review_target() == Some(target) {
        text.push_str(&format!(
            "\nThe diff under review: `pair diff {}`.\n",
            crate::text::shell_word(&board)
        ));
    }
    // Each review with its reviewer's corrections beside it.
    for r in entry::with_corrections(&all, &reviews) {
        text.push('\n');
        text.push_str(&with_place(r));
    }
    let corrections: Vec<&Entry> = reviews
        .iter()
        .flat_map(|r| entry::corrections_of(&all, r))
        .fold(Vec::new(), |mut v, c| {
            if !v.contains(&c) {
                v.push(c);
            }
            v
        });
    if !a.latest && reviews.is_empty() && artifact.is_some() {
        text.push_str(&format!(
            "\nNo reviews of {} {unit} {counter} yet.\n",
            noun.to_lowercase()
        ));
    }
    // What is still to be settled, with its evidence and suggested fix: the doer answers it,
    // the reviewer checks its resolution.
    let open: Vec<&Objection> = if a.latest {
        Vec::new()
    } else {
        fm.ledger
            .objections
            .iter()
            .filter(|o| o.state.is_unsettled())
            .collect()
    };
    if !open.is_empty() {
        text.push_str(&format!(
            "\nObjections still to be settled ({}):\n",
            open.iter()
                .map(|o| o.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for o in &open {
        text.push('\n');
        text.push_str(&objection_text(fm, o, &all));
    }
    let json = json!({
        "schema": SCHEMA,
        "path": board,
        "phase": fm.phase,
        "target": target,
        "counter": counter,
        "artifact": artifact,
        "reviews": reviews,
        "corrections": corrections,
        "objections": open.iter().map(|o| objection_json(fm, o, &all)).collect::<Vec<_>>(),
        "warnings": warnings,
    });
    let mut out = Outcome::ok(json, text);
    out.warnings = warnings;
    Ok(out)
}

/// `pair show BOARD SECTION [--latest]`.
fn section(
    a: &ShowArgs,
    board: &str,
    doc: &crate::board::document::Document,
    all: &[Entry],
    name: &str,
) -> Result<Outcome> {
    let sections = doc.sections();
    let Some(sec) = sections.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = sections.iter().map(|s| s.name.as_str()).collect();
        let all = names.join(", ");
        return Err(Error::Usage(
            match crate::board::entry::nearest_section(name, &names) {
                Some(k) => format!(
                    "{name:?} is not a section of {board}; did you mean {k:?}? (`pair show {} \
                     {}`; its sections are {all})",
                    crate::text::shell_word(board),
                    crate::text::shell_word(k)
                ),
                None => format!("{name:?} is not a section of {board}; its sections are {all}"),
            },
        ));
    };
    let entries: Vec<&Entry> = all.iter().filter(|e| e.section == sec.name).collect();
    if a.latest {
        let latest = entries.last().copied();
        let text = match latest {
            Some(e) => with_place(e),
            None => format!("`## {}` has no entries yet.\n", sec.name),
        };
        let json = json!({
            "schema": SCHEMA, "path": board, "section": sec.name, "line": sec.line,
            "entry": latest,
        });
        return Ok(Outcome::ok(json, text));
    }
    let body = crate::board::document::normalize_newlines(&doc.body[sec.start..sec.end]);
    let text = format!("{}\n", body.trim_end());
    let json = json!({
        "schema": SCHEMA, "path": board, "section": sec.name, "line": sec.line,
        "text": text, "entries": entries,
    });
    Ok(Outcome::ok(json, text))
}

/// An entry as Markdown, after a line saying where it is.
fn with_place(e: &Entry) -> String {
    format!("<!-- {}, line {} -->\n{}", e.section, e.line, e.markdown())
}

/// One objection as the ledger keeps it, in a line.
fn objection_line(fm: &Frontmatter, o: &Objection) -> String {
    format!(
        "{} — {} {} on the {} gate, round {} — raised by {}{} — anchor `{}` — {}",
        o.id,
        o.state,
        o.severity,
        o.gate,
        o.round,
        o.by,
        super::ledger::seconded(fm, &o.id),
        o.anchor,
        o.title
    )
}

/// An objection: its line, then its entries (the raising, with the evidence and the suggested
/// fix, and every later move on it).
fn objection_text(fm: &Frontmatter, o: &Objection, all: &[Entry]) -> String {
    let mut text = format!("{}\n", objection_line(fm, o));
    let entries = entry::of_objection(all, o.gate, &o.id);
    if entries.is_empty() {
        text.push_str(&format!(
            "(no entry about {} in `## {}`)\n",
            o.id,
            artifact_section(o.gate, true)
        ));
    }
    for e in entries {
        text.push('\n');
        text.push_str(&with_place(e));
    }
    text
}

fn objection_json(fm: &Frontmatter, o: &Objection, all: &[Entry]) -> serde_json::Value {
    json!({
        "id": o.id, "by": o.by, "gate": o.gate, "round": o.round, "severity": o.severity,
        "state": o.state, "anchor": o.anchor, "title": o.title, "cause": o.cause,
        "seconded_by": crate::board::ledger::second::seconders(fm, &o.id),
        "entries": entry::of_objection(all, o.gate, &o.id),
    })
}

/// `pair show BOARD --id ID`: one objection and every entry about it.
fn objection(board: &str, fm: &Frontmatter, all: &[Entry], id: &str) -> Result<Outcome> {
    let Some(o) = fm.ledger.get(id) else {
        let ids: Vec<&str> = fm.ledger.objections.iter().map(|o| o.id.as_str()).collect();
        return Err(Error::Usage(format!(
            "no objection {id:?} on {board} ({}); `pair objections {}` lists them",
            if ids.is_empty() {
                "it has none".to_string()
            } else {
                format!("it has {}", ids.join(", "))
            },
            crate::text::shell_word(board)
        )));
    };
    let mut json = objection_json(fm, o, all);
    if let Some(obj) = json.as_object_mut() {
        obj.insert("schema".into(), json!(SCHEMA));
        obj.insert("path".into(), json!(board));
    }
    Ok(Outcome::ok(json, objection_text(fm, o, all)))
}
