//! `pair stats PROJECT`: the figures across tasks that `pair stats` adds to each board's own
//! ([`crate::stats::objections`]): a directory argument stands for its blackboards; per board
//! and in total, objections by severity and how they ended, and each objection's time and
//! tokens from raised to settled; the bottleneck phases; the trend over the tasks.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

use super::stats::duration;
use crate::board::frontmatter::Timestamp;
use crate::error::{Error, Result};
use crate::stats::objections::{self, ObjectionStats, ObjectionTotal};
use crate::stats::{BoardStats, Total};
use crate::store::Session;

/// One board the arguments name, and whether it was found in a project (a directory or a board
/// namespace) rather than named itself.
pub struct Named {
    pub path: PathBuf,
    pub in_project: bool,
}

/// A board of a project that could not be read: `stats` reports it and goes on, as `ls` does.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Unread {
    pub path: String,
    /// The exit code reading it alone would have (5 invalid or too large, 7 missing, 1 I/O).
    pub code: i32,
    pub error: String,
}

impl Unread {
    pub fn of(path: &Path, e: &Error) -> Unread {
        Unread {
            path: path.display().to_string(),
            code: e.code(),
            error: e.to_string(),
        }
    }
}

/// The boards the arguments name: a directory stands for its blackboards (recursively, as
/// `validate DIR` finds them, in name order), a git remote's board namespace
/// (`git+<url>#refs/pair/`) for every board under it, a board for itself. What a project holds
/// that is no board it can read (a ref whose board does not parse, a directory that cannot be
/// listed) is given apart.
pub fn expand(args: &[PathBuf], s: &Session) -> Result<(Vec<Named>, Vec<Unread>)> {
    let mut out = Vec::new();
    let mut unread = Vec::new();
    for a in args {
        if crate::store::location::is_git(a) && crate::project::is_project(a) {
            let members = crate::project::Project::open(a)?.read(s)?;
            if members.is_empty() {
                return Err(Error::Usage(format!(
                    "{} holds no blackboard; `pair ls {}` lists what it finds",
                    a.display(),
                    crate::text::shell_word(&a.display().to_string())
                )));
            }
            for m in members {
                match (&m.fm, m.error) {
                    (None, Some(error)) => unread.push(Unread {
                        path: m.board.display().to_string(),
                        code: crate::error::exit::INVALID,
                        error,
                    }),
                    _ => out.push(Named {
                        path: m.board,
                        in_project: true,
                    }),
                }
            }
        } else if a.is_dir() {
            let (found, errors) = crate::project::walk(a, s);
            if found.is_empty() && errors.is_empty() {
                return Err(Error::Usage(format!(
                    "{} holds no blackboard; `pair validate {}` lists what it finds",
                    a.display(),
                    crate::text::shell_word(&a.display().to_string())
                )));
            }
            unread.extend(errors.into_iter().map(|(p, error)| Unread {
                path: p.display().to_string(),
                code: crate::error::exit::IO,
                error,
            }));
            out.extend(found.into_iter().map(|path| Named {
                path,
                in_project: true,
            }));
        } else {
            out.push(Named {
                path: a.clone(),
                in_project: false,
            });
        }
    }
    Ok((out, unread))
}

/// One board's objections with their history (none read when it has none).
pub fn objections_of(
    path: &Path,
    b: &BoardStats,
    now: Timestamp,
    s: &Session,
) -> Result<Vec<ObjectionStats>> {
    // `stats` streams the journal in a bounded memory (`store::history`); the board is read
    // whole only when its ledger has objections to tell the history of.
    let head = crate::store::snapshot(path, crate::store::Depth::Head, s)?;
    if head.frontmatter()?.parsed.fm.ledger.objections.is_empty() {
        return Ok(Vec::new());
    }
    let loaded = crate::store::snapshot(path, crate::store::Depth::Whole, s)?.load()?;
    let doc = &loaded.valid.doc;
    let fm = &loaded.valid.parsed.fm;
    let entries = crate::board::entry::entries(doc);
    let records = crate::board::journal::records(doc).unwrap_or_default();
    let end = b.end.unwrap_or(now);
    Ok(objections::objections(fm, &entries, &records, end))
}

fn total_of(list: &[ObjectionStats]) -> ObjectionTotal {
    let mut t = ObjectionTotal::default();
    for o in list {
        t.add(o);
    }
    t
}

fn counts(m: &std::collections::BTreeMap<String, usize>) -> String {
    m.iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Add the figures across tasks to `stats`' JSON (`objections`, `bottleneck`, `trend`; and per
/// board `boards[i].objections`), and the text that says them.
pub fn add(
    mut json: Json,
    boards: &[BoardStats],
    total: &Total,
    per_board: &[Vec<ObjectionStats>],
) -> (Json, String) {
    let mut text = String::new();
    let mut all = ObjectionTotal::default();
    let mut board_totals = Vec::new();
    for (i, (b, list)) in boards.iter().zip(per_board).enumerate() {
        let t = total_of(list);
        all.merge(&t);
        if let Some(o) = json
            .get_mut("boards")
            .and_then(|v| v.get_mut(i))
            .and_then(Json::as_object_mut)
        {
            o.insert(
                "objections".into(),
                json!({ "list": list, "total": t, "bottleneck": objections::bottlenecks(&b.phases, 3) }),
            );
        }
        if !list.is_empty() {
            let _ = writeln!(
                text,
                "{}: {} objections ({}), ended: {}; {} reopened, {} regressions",
                crate::text::escape(&b.path),
                t.raised,
                counts(&t.by_severity),
                counts(&t.by_state),
                t.reopenings,
                t.regressions
            );
            for o in list {
                let tokens = o
                    .usage
                    .tokens
                    .map(|n| format!(", {n} tokens"))
                    .unwrap_or_default();
                let seconded = if o.seconded_by.is_empty() {
                    String::new()
                } else {
                    let who: Vec<String> = o
                        .seconded_by
                        .iter()
                        .map(|w| crate::text::escape(w).into_owned())
                        .collect();
                    format!(", seconded by {}", who.join(", "))
                };
                let _ = writeln!(
                    text,
                    "  {} {} {} {}: {} {}{tokens}{seconded}",
                    o.id,
                    o.gate,
                    o.severity,
                    o.state,
                    if o.settled.is_some() {
                        "settled in"
                    } else {
                        "open for"
                    },
                    duration(o.seconds)
                );
            }
        }
        board_totals.push((b, t.raised));
    }
    let bottleneck = objections::bottlenecks(&total.phases, 3);
    let trend = objections::trend(&board_totals);
    if let Some(o) = json.as_object_mut() {
        o.insert("objections".into(), json!(all));
        o.insert("bottleneck".into(), json!(bottleneck));
        o.insert("trend".into(), json!(trend));
    }
    if boards.len() > 1 && all.raised == 0 {
        let _ = writeln!(text, "objections: none raised");
    } else if boards.len() > 1 {
        let _ = writeln!(
            text,
            "objections: {} raised ({}), ended: {}; {} reopened, {} regressions; {} settled, {} \
             in all, longest {}",
            all.raised,
            counts(&all.by_severity),
            counts(&all.by_state),
            all.reopenings,
            all.regressions,
            all.settled,
            duration(all.settle_seconds),
            duration(all.max_settle_seconds)
        );
        let b: Vec<String> = bottleneck
            .iter()
            .map(|x| format!("{} {} ({}%)", x.phase, duration(x.seconds), x.share))
            .collect();
        if !b.is_empty() {
            let _ = writeln!(text, "bottleneck: {}", b.join(", "));
        }
        if let (Some(e), Some(l)) = (&trend.earlier, &trend.later) {
            let _ = writeln!(
                text,
                "trend (earlier {} tasks → later {}): {} → {} per task, rounds {:.1} → {:.1}, \
                 objections {:.1} → {:.1}",
                e.tasks,
                l.tasks,
                duration(crate::stats::Secs((e.seconds * 1000.0) as i64)),
                duration(crate::stats::Secs((l.seconds * 1000.0) as i64)),
                e.rounds,
                l.rounds,
                e.objections,
                l.objections
            );
        }
    }
    (json, text)
}
