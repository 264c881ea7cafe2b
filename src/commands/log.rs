//! `pair log`: a board's history from its journal, newest last; `--follow` prints each new
//! record as it is written, woken by file-system notifications like `poll --wait`.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};

use super::{Outcome, shown, timeout};
use crate::board::frontmatter::{Phase, Timestamp};
use crate::board::journal::{self, Record, cost_number, cost_text};
use crate::cli::LogArgs;
use crate::error::{Error, Result};
use crate::render::output;
use crate::render::report::SCHEMA;
use crate::store;
use crate::store::Session;

/// One record as `log --json` and `stats` give it.
pub fn record_json(r: &Record) -> Json {
    let mut v = serde_json::to_value(r).unwrap_or(Json::Null);
    v["cost"] = r.cost_micros.map(cost_number).into();
    v["line"] = r.line.into();
    v
}

/// One record for a person: time, writer, command, phase move, counters, turn, usage.
pub fn record_text(r: &Record) -> String {
    let phase = match r.from {
        Some(f) if f == r.to => r.to.to_string(),
        Some(f) => format!("{f} → {}", r.to),
        None => format!("(new) → {}", r.to),
    };
    let mut s = format!(
        "{}  {:<12} {:<14} {phase}",
        r.at,
        r.by.as_deref().unwrap_or("(anonymous)"),
        r.command
    );
    for c in &r.counters {
        s.push_str(&format!("  {} {}→{}", c.name, c.from, c.to));
    }
    if !r.turn.is_empty() {
        s.push_str(&format!("  turn: {}", r.turn.join(", ")));
    }
    if let Some(t) = r.tokens {
        s.push_str(&format!("  tokens {t}"));
    }
    if let Some(c) = r.cost_micros {
        s.push_str(&format!("  cost {}", cost_text(c)));
    }
    if let Some(p) = r.usage_phase {
        s.push_str(&format!("  for {p}"));
    }
    s
}

/// The board's records and its current phase.
pub fn read_records(board: &Path, s: &Session) -> Result<(Vec<Record>, Phase)> {
    let loaded = store::load(board, s)?;
    let records =
        journal::records(&loaded.valid.doc).map_err(|e| Error::invalid(board, vec![e], false))?;
    Ok((records, loaded.valid.parsed.fm.phase))
}

pub fn run(a: LogArgs, json: bool, s: &Session) -> Result<Outcome> {
    let since = match &a.since {
        Some(s) => Some(Timestamp::parse(s).ok_or_else(|| {
            Error::Usage(format!(
                "--since {s:?} is not a UTC time like 2026-01-01T09:00:00Z"
            ))
        })?),
        None => None,
    };
    if let Some(id) = &a.agent {
        super::agent_arg("--agent", id)?;
    }
    let keep = |r: &Record| {
        a.agent.as_ref().is_none_or(|id| r.by.as_ref() == Some(id))
            && since.is_none_or(|t| r.at >= t)
    };
    if a.follow {
        return follow(&a, json, &keep, s);
    }
    let (records, phase) = read_records(&a.board, s)?;
    let shown_records: Vec<&Record> = records.iter().filter(|r| keep(r)).collect();
    let j = json!({
        "schema": SCHEMA,
        "path": shown(&a.board),
        "phase": phase,
        "total": records.len(),
        "records": shown_records.iter().map(|r| record_json(r)).collect::<Vec<_>>(),
    });
    let mut text = String::new();
    if records.is_empty() {
        text.push_str("no journal yet: the next write starts it\n");
    }
    for r in &shown_records {
        text.push_str(&record_text(r));
        text.push('\n');
    }
    Ok(Outcome::ok(j, text))
}

/// Print the records, then each new one, until the board is terminal or the timeout passes.
fn follow(a: &LogArgs, json: bool, keep: &dyn Fn(&Record) -> bool, s: &Session) -> Result<Outcome> {
    let limit = timeout(a.timeout)?;
    let deadline = Instant::now() + limit;
    // Watch before the first read, so no write slips in between.
    // A git board's remote is asked for its tip at `poll --wait`'s default interval.
    let git = crate::store::location::is_git(&a.board);
    let mut waiter = if git {
        crate::store::wait::Waiter::polling()
    } else {
        crate::store::wait::Waiter::new(&a.board)
    };
    let mut seen = 0usize;
    let mut printed = 0usize;
    let ended = loop {
        // Each read of a git board's remote gets what is left, at most the default limit.
        s.limit_remote(
            deadline
                .saturating_duration_since(Instant::now())
                .min(crate::store::DEFAULT_TIMEOUT),
        );
        let (records, phase) = read_records(&a.board, s)?;
        // A journal never shrinks under the law; if it did (a hand edit), start over.
        if records.len() < seen {
            seen = 0;
        }
        for r in records[seen..].iter().filter(|r| keep(r)) {
            let line = if json {
                format!("{}\n", record_json(r))
            } else {
                format!("{}\n", record_text(r))
            };
            if json {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(line.as_bytes());
                let _ = out.flush();
            } else {
                output::print_stdout(&line);
            }
            printed += 1;
        }
        seen = records.len();
        if phase.is_terminal() {
            break "terminal";
        }
        let now = Instant::now();
        if now >= deadline {
            break "timeout";
        }
        // Without notifications the waiter sleeps: re-read each second.
        let step = if waiter.is_notified() {
            60.0
        } else if git {
            super::read::GIT_INTERVAL_S
        } else {
            1.0
        };
        waiter.wait((deadline - now).min(Duration::from_secs_f64(step)));
    };
    let j = json!({
        "schema": SCHEMA,
        "path": shown(&a.board),
        "followed": true,
        "printed": printed,
        "ended": ended,
    });
    let text = match ended {
        "terminal" => "(the board reached a terminal phase)\n".to_string(),
        _ => String::new(),
    };
    Ok(Outcome::ok(j, text))
}
