//! `pair diff`: exactly the artifact under review — the pinned diff or text — and its SHA-256, so
//! a reviewer reads the same bytes the pin covers.
//!
//! Without `--json` the artifact's bytes go to stdout unchanged (`pair diff BOARD | sha256sum`
//! prints the pin) and the hash and what was read go to stderr. Like `status`, it takes no lock.

use std::io::Write;

use serde_json::json;

use super::{Outcome, shown};
use crate::board::entry::target_noun;
use crate::board::frontmatter::PinKind;
use crate::cli::DiffArgs;
use crate::error::{Error, Result};
use crate::render::report::SCHEMA;
use crate::repo::pin::{self, FileStat};
use crate::store;
use crate::store::Session;

pub fn run(a: DiffArgs, json_out: bool, s: &Session) -> Result<Outcome> {
    let loaded = store::snapshot(&a.board, store::Depth::Whole, s)?.load()?;
    let fm = &loaded.valid.parsed.fm;
    let Some(target) = fm.phase.review_target() else {
        return Err(Error::protocol(format!(
            "nothing is under review: phase {} is not a review phase, and `pair diff` prints the \
             artifact a review round is about",
            fm.phase
        )));
    };
    let readable = super::published::readable(&a.board, fm, target)?;
    let cur = pin::current(fm, target, &loaded.valid.doc.body, readable.as_ref())?;
    let (noun, unit) = target_noun(target);
    let round = format!("{} {unit} {}", noun.to_lowercase(), cur.counter);
    if let (Some(p), Some(false)) = (&cur.pin, cur.matches_pin()) {
        return Err(Error::stale_artifact(
            format!(
                "stale artifact: {} changed after {round} was submitted (pinned sha256 {}, now \
                 {}); what is there now is not what was submitted for review. The doer must \
                 resubmit it or restore it",
                cur.source, p.sha256, cur.sha256
            ),
            Some(super::semantic::after_drift(fm, a.caller.agent.as_deref())),
        )
        .suggest(&super::argv(), Some(&shown(&a.board))));
    }
    // A published red test is shown as the change it makes to the base (or its files whole);
    // the pin still covers its text and files in the pinned form, which --pinned prints.
    let red_test = match (&readable, cur.kind, a.pinned) {
        (Some(r), PinKind::Files, false) => Some(r),
        _ => None,
    };
    if a.whole && red_test.is_none() {
        return Err(Error::Usage(
            "--whole prints a published red test's files whole; this artifact is not one (use \
             --pinned for the pinned bytes)"
                .into(),
        ));
    }
    let (shown_bytes, shown_as) = match red_test {
        Some(r) if a.whole => {
            let mut out = Vec::new();
            let paths = cur
                .pin
                .as_ref()
                .and_then(|p| p.published.as_ref())
                .map(|p| p.paths.clone())
                .unwrap_or_default();
            for path in &paths {
                out.extend_from_slice(format!("==> {path} <==\n").as_bytes());
                out.extend_from_slice(&crate::repo::artifact::file(r, path)?);
            }
            (out, "whole")
        }
        Some(r) => (crate::repo::artifact::diff(r)?, "change"),
        None => (cur.bytes.clone(), "pinned"),
    };
    let is_diff = matches!(cur.kind, PinKind::Staged | PinKind::Unstaged) || shown_as == "change";
    let files: Vec<FileStat> = if is_diff {
        pin::diff_stat(&shown_bytes)
    } else {
        Vec::new()
    };
    let insertions: u64 = files.iter().map(|f| f.insertions).sum();
    let deletions: u64 = files.iter().map(|f| f.deletions).sum();
    let lines = shown_bytes.iter().filter(|b| **b == b'\n').count();
    let pinned = cur.pin.is_some();
    let state = if pinned {
        "pinned".to_string()
    } else {
        "not pinned: its submission recorded no hash, so this is the artifact as it is now".into()
    };
    let summary = format!(
        "sha256 {} · {round}: {} ({state}){}",
        cur.sha256,
        cur.source,
        match shown_as {
            "change" =>
                "; shown: the test files' change against the base (--pinned prints the \
                         pinned bytes, --whole the files whole)",
            "whole" => "; shown: the test files whole (--pinned prints the pinned bytes)",
            _ => "",
        }
    );
    if json_out {
        let content = match (a.stat, std::str::from_utf8(&shown_bytes)) {
            (false, Ok(s)) => json!(s),
            _ => json!(null),
        };
        return Ok(Outcome::ok(
            json!({
                "schema": SCHEMA,
                "path": shown(&a.board),
                "target": target,
                "counter": cur.counter,
                "kind": cur.kind,
                "source": cur.source,
                "pinned": pinned,
                "sha256": cur.sha256,
                "files": cur.pin.as_ref().map(|p| p.files.clone()).unwrap_or_default(),
                "tree": cur.pin.as_ref().and_then(|p| p.tree.clone()),
                "stat": {
                    "bytes": shown_bytes.len(),
                    "lines": lines,
                    "files": files,
                    "insertions": insertions,
                    "deletions": deletions,
                },
                "content": content,
                "shown": shown_as,
            }),
            String::new(),
        ));
    }
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not a failure.
    let _ = if a.stat {
        out.write_all(stat_text(&cur, is_diff, &files, insertions, deletions, lines).as_bytes())
    } else {
        out.write_all(&shown_bytes)
    };
    let _ = out.flush();
    let _ = writeln!(std::io::stderr(), "pair diff: {summary}");
    Ok(Outcome::ok(json!({}), String::new()))
}

fn stat_text(
    cur: &pin::Current,
    is_diff: bool,
    files: &[FileStat],
    insertions: u64,
    deletions: u64,
    lines: usize,
) -> String {
    let mut s = String::new();
    match cur.kind {
        _ if is_diff => {
            let width = files.iter().map(|f| f.path.len()).max().unwrap_or(0);
            for f in files {
                if f.binary {
                    s.push_str(&format!(" {:<width$} | binary\n", f.path));
                } else {
                    s.push_str(&format!(
                        " {:<width$} | +{} -{}\n",
                        f.path, f.insertions, f.deletions
                    ));
                }
            }
            s.push_str(&format!(
                " {} file{} changed, {insertions} insertion{}(+), {deletions} deletion{}(-)\n",
                files.len(),
                if files.len() == 1 { "" } else { "s" },
                if insertions == 1 { "" } else { "s" },
                if deletions == 1 { "" } else { "s" },
            ));
        }
        _ => {
            s.push_str(&format!(
                " {lines} line{}, {} byte{}\n",
                if lines == 1 { "" } else { "s" },
                cur.bytes.len(),
                if cur.bytes.len() == 1 { "" } else { "s" }
            ));
            for f in cur.pin.iter().flat_map(|p| p.files.iter()) {
                s.push_str(&format!(" {f}\n"));
            }
        }
    }
    s
}
