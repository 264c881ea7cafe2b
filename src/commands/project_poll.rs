//! `pair poll PROJECT --agent ID --after CURSOR [--wait]`: a cursor across a project. What
//! `next` answers (the agent's one step anywhere in the project), plus every journal record
//! written on any board since the cursor, and the cursor to pass next time: an agent that keeps
//! it sees every record of every board exactly once, across restarts. `--wait` returns as soon
//! as the agent has a step or any board has a new record.

use std::time::Duration;

use serde_json::{Value, json};

use super::Outcome;
use super::project::{Found, outcome, project_word, steps};
use crate::board::journal::Record;
use crate::cli::PollArgs;
use crate::error::{Error, Result};
use crate::project::cursor::Cursor;
use crate::project::{Member, Project};
use crate::store::Session;
use crate::text::escape;

/// One new record of a board of the project.
struct Seen {
    name: String,
    board: String,
    seq: u64,
    record: Record,
}

/// The journals of the project past a cursor.
struct CatchUp {
    records: Vec<Seen>,
    cursor: Cursor,
    /// Boards whose position in the cursor was past their journal's end (a repair removed
    /// records, or the board was made again): read again from their first record.
    restarted: Vec<String>,
    /// Boards whose journal could not be read now, with why: their position is kept.
    unread: Vec<(String, String)>,
}

/// The cursor as given: `0`, or a token a project poll returned.
fn cursor_arg(a: &PollArgs) -> Result<Cursor> {
    let Some(text) = &a.after else {
        return Err(Error::Usage(format!(
            "{} is a project: poll it with --after CURSOR (0 the first time, then the `cursor` \
             the answer gives), or ask for your next step alone with `pair next --agent {} {}`",
            a.board.display(),
            a.agent,
            a.board.display()
        )));
    };
    Cursor::parse(text).map_err(|why| {
        Error::Usage(format!(
            "--after {:?} is not a cursor of this project: {why}. Pass 0 to read every board \
             from its start, or the `cursor` the last `pair poll {} --after …` returned",
            text,
            a.board.display()
        ))
    })
}

/// Read what every board holds past its position in `cursor`. A board's seal (the record
/// count its frontmatter carries) spares reading a board that has nothing new.
fn catch_up(project: &Project, members: &[Member], cursor: &Cursor, s: &Session) -> CatchUp {
    let mut positions: Vec<(String, u64)> = Vec::new();
    let mut to_read: Vec<&Member> = Vec::new();
    for m in members {
        let at = cursor.get(&m.name);
        let sealed =
            m.fm.as_ref()
                .and_then(|fm| fm.journal.as_ref())
                .map(|j| j.records);
        if sealed == Some(at) || m.fm.is_none() {
            // Nothing new, or not readable now: the position stays.
            positions.push((m.name.clone(), at));
        } else {
            to_read.push(m);
        }
    }
    let mut records = Vec::new();
    let mut restarted = Vec::new();
    let mut unread = Vec::new();
    for (m, bytes) in to_read.iter().zip(project.read_members(&to_read, s)) {
        let at = cursor.get(&m.name);
        let journal = bytes.and_then(|b| {
            let doc = crate::board::document::Document::parse(&b)
                .map_err(|e| crate::transaction::unsplittable(&m.board, "file", &e))?;
            crate::board::journal::records(&doc)
                .map_err(|e| Error::invalid(&m.board, vec![e], false))
        });
        let journal = match journal {
            Ok(j) => j,
            Err(e) => {
                unread.push((m.name.clone(), e.to_string()));
                positions.push((m.name.clone(), at));
                continue;
            }
        };
        let end = journal.len() as u64;
        let from = if at > end {
            restarted.push(m.name.clone());
            0
        } else {
            at
        };
        for (record, seq) in journal.into_iter().skip(from as usize).zip(from + 1..) {
            records.push(Seen {
                name: m.name.clone(),
                board: m.board.display().to_string(),
                seq,
                record,
            });
        }
        positions.push((m.name.clone(), end));
    }
    // In time order across boards; records of one time by board, then position.
    records.sort_by(|x, y| {
        x.record
            .at
            .0
            .cmp(&y.record.at.0)
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.seq.cmp(&y.seq))
    });
    CatchUp {
        records,
        cursor: Cursor::of(positions.iter().map(|(n, p)| (n.as_str(), *p))),
        restarted,
        unread,
    }
}

/// The command that waits from the new cursor.
fn wait_command(a: &PollArgs, cursor: &str) -> Vec<String> {
    [
        "pair",
        "poll",
        &project_word(&a.board),
        "--agent",
        &a.agent,
        "--after",
        cursor,
        "--wait",
        "--timeout",
        crate::law::protocol::WAIT_SECONDS,
    ]
    .iter()
    .map(|w| w.to_string())
    .collect()
}

fn answer(
    a: &PollArgs,
    project: &Project,
    members: &[Member],
    found: Found,
    c: CatchUp,
    waited: Option<Duration>,
) -> Outcome {
    let token = c.cursor.token();
    let mut out = outcome(
        &a.agent,
        project,
        found,
        members.len(),
        waited,
        wait_command(a, &token),
    );
    let records: Vec<Value> = c
        .records
        .iter()
        .map(|r| {
            let mut v = super::log::record_json(&r.record);
            v["name"] = r.name.clone().into();
            v["board"] = r.board.clone().into();
            v["seq"] = r.seq.into();
            v
        })
        .collect();
    if let Some(obj) = out.json.as_object_mut() {
        obj.insert("records".into(), json!(records));
        obj.insert("cursor".into(), json!(token));
        obj.insert("restarted".into(), json!(c.restarted));
        obj.insert(
            "unread".into(),
            json!(
                c.unread
                    .iter()
                    .map(|(n, e)| json!({"name": n, "error": e}))
                    .collect::<Vec<_>>()
            ),
        );
    }
    for r in &c.records {
        out.text.push_str(&format!(
            "record      {} #{} {}\n",
            escape(&r.name),
            r.seq,
            super::log::record_text(&r.record)
        ));
    }
    for n in &c.restarted {
        out.text.push_str(&format!(
            "restarted   {} (its journal is shorter than the cursor said: read from its start)\n",
            escape(n)
        ));
    }
    for (n, e) in &c.unread {
        out.text.push_str(&format!(
            "unread      {}: {}\n",
            escape(n),
            escape(e.lines().next().unwrap_or(""))
        ));
    }
    out.text.push_str(&format!(
        "cursor      {token} (pass --after {token} next time)\n"
    ));
    out
}

/// `pair poll PROJECT --agent ID --after CURSOR [--wait]`.
pub fn poll(a: PollArgs, s: &Session) -> Result<Outcome> {
    super::agent_arg("--agent", &a.agent)?;
    if a.through_blocked {
        return Err(Error::Usage(format!(
            "--through-blocked waits on one board; {} is a project: wait with --wait (a blocked \
             board is no step of yours, and the wait goes on)",
            a.board.display()
        )));
    }
    if let Some(until) = a.until {
        return Err(Error::Usage(format!(
            "--until {until} waits for one board's lifecycle; {} is a project: poll the board \
             itself (`pair poll BOARD --agent {} --wait --until {until}`)",
            a.board.display(),
            crate::text::shell_word(&a.agent)
        )));
    }
    let cursor = cursor_arg(&a)?;
    let project = Project::open(&a.board)?;
    if !a.wait {
        let members = project.read(s)?;
        let c = catch_up(&project, &members, &cursor, s);
        let found = steps(&members, &a.agent, super::project::MAX_HELD);
        return Ok(answer(&a, &project, &members, found, c, None));
    }
    super::project::wait_across(
        &project,
        a.timeout,
        a.interval,
        "a record or work",
        s,
        |members, waited, last| {
            let c = catch_up(&project, &members, &cursor, s);
            let found = steps(&members, &a.agent, super::project::MAX_HELD);
            // A record wakes the wait unless the waiting agent wrote it: its own writes are
            // not news to it (they are still listed when something else wakes it).
            let news = c
                .records
                .iter()
                .any(|r| !super::read::written_by(&r.record, &a.agent));
            let work = news || !found.steps.is_empty() || found.finished;
            Ok((work || last).then(|| answer(&a, &project, &members, found, c, waited)))
        },
    )
}

/// The cursor past every record the project's boards hold now: where a wait that has seen
/// nothing yet starts (a waiting `next` of `pair mcp PROJECT`). A board's seal says where its
/// journal ends; a board without one is read.
pub fn cursor_now(spec: &std::path::Path, s: &Session) -> Result<Cursor> {
    let project = Project::open(spec)?;
    let members = project.read(s)?;
    let sealed = Cursor::of(members.iter().filter_map(|m| {
        let records = m.fm.as_ref()?.journal.as_ref()?.records;
        Some((m.name.as_str(), records))
    }));
    Ok(catch_up(&project, &members, &sealed, s).cursor)
}
