//! `pair show`: entries of the body, found by what they are rather than by reading Markdown —
//! the artifact of the current round (its entry with counter, author and time) and the round's
//! reviews, the newest entry (`--latest`), or a named section. Like `status`, it takes no lock.

use serde_json::json;

use super::{Outcome, shown};
use crate::board::entry::artifact_section;
use crate::board::entry::target_noun;
use crate::board::entry::{self, Entry};
use crate::board::frontmatter::Target;
use crate::cli::ShowArgs;
use crate::error::{Error, Result};
use crate::render::report::{SCHEMA, current_target};
use crate::store;
use crate::store::Session;

pub fn run(a: ShowArgs, s: &Session) -> Result<Outcome> {
    let loaded = store::load(&a.board, s)?;
    let doc = &loaded.valid.doc;
    let fm = &loaded.valid.parsed.fm;
    let all = entry::entries(doc);
    let board = shown(&a.board);
    if let Some(name) = &a.section {
        return section(&a, &board, doc, &all, name);
    }
    let Some(target) = current_target(fm) else {
        let json = json!({
            "schema": SCHEMA, "path": board, "phase": fm.phase, "target": null, "counter": null,
            "artifact": null, "reviews": [],
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
    if target == Target::Code && artifact.is_some() {
        text.push_str(&format!(
            "\nThe diff under review: `pair diff {}`.\n",
            crate::text::shell_word(&board)
        ));
    }
    for r in &reviews {
        text.push('\n');
        text.push_str(&with_place(r));
    }
    if !a.latest && reviews.is_empty() && artifact.is_some() {
        text.push_str(&format!(
            "\nNo reviews of {} {unit} {counter} yet.\n",
            noun.to_lowercase()
        ));
    }
    let json = json!({
        "schema": SCHEMA,
        "path": board,
        "phase": fm.phase,
        "target": target,
        "counter": counter,
        "artifact": artifact,
        "reviews": reviews,
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
        return Err(Error::Usage(
            match crate::board::suggest::closest(name, names.iter().copied()) {
                Some(k) => format!("{name:?} is not a section of {board}; did you mean {k:?}?"),
                None => format!(
                    "{name:?} is not a section of {board}; its sections are {}",
                    names.join(", ")
                ),
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
