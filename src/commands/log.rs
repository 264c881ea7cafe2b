//! `pair log`: a board's history from its journal, newest last; `--follow` prints each new
//! record as it is written, woken by file-system notifications like `poll --wait`.

use std::io::Write as _;
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};

use super::{Outcome, shown, timeout};
use crate::board::frontmatter::Timestamp;
use crate::board::journal::{Record, cost_number, cost_text};
use crate::cli::LogArgs;
use crate::error::{Error, Result};
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
    // Every time with its milliseconds (a whole second too), so that the columns line up.
    let mut s = format!(
        "{}  {:<12} {:<16} {phase}",
        r.at.0.format("%Y-%m-%dT%H:%M:%S%.3fZ"),
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
    if let Some(v) = &r.session {
        s.push_str(&format!("  session {v}"));
    }
    if let Some(v) = &r.model {
        s.push_str(&format!("  model {v}"));
    }
    s
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
    // The history is streamed, record by record, and never held: the board is read through once
    // to check it (nothing is printed of a board that fails), then again to print.
    let mut history = store::history(&a.board, s)?;
    let (total, _) = history.check(&keep)?;
    history.rewind()?;
    let mut out = Printer::new(json);
    if json {
        let head = json!({"path": shown(&a.board), "phase": history.parsed.fm.phase});
        // The object's keys in the order `serde_json` writes them (sorted): `path`, `phase`,
        // `records`, (`remote`,) `schema`, `total`.
        let head = head.to_string();
        out.write(&format!("{},\"records\":[", &head[..head.len() - 1]));
    } else if total == 0 {
        out.write("no journal yet: the next write starts it\n");
    }
    let mut first = true;
    while let Some(r) = history.next_record()? {
        if !keep(&r) {
            continue;
        }
        if json {
            out.write(&format!(
                "{}{}",
                if first { "" } else { "," },
                record_json(&r)
            ));
        } else {
            out.write(&format!("{}\n", record_text(&r)));
        }
        first = false;
    }
    if json {
        let mut tail = String::from("]");
        if let Some(remote) = s.remote() {
            tail.push_str(&format!(
                ",\"remote\":{}",
                serde_json::to_value(remote).unwrap_or_default()
            ));
        }
        tail.push_str(&format!(",\"schema\":{SCHEMA},\"total\":{total}}}\n"));
        out.write(&tail);
    }
    out.finish();
    let mut outcome = Outcome::ok(
        json!({"schema": SCHEMA, "path": shown(&a.board), "total": total}),
        String::new(),
    );
    outcome.printed = true;
    Ok(outcome)
}

/// Output written as it is made: the JSON as it is, human text escaped; a reader that went
/// away (`| head`) ends the printing quietly.
struct Printer {
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    json: bool,
    quiet: bool,
    broken: bool,
}

impl Printer {
    fn new(json: bool) -> Printer {
        Printer {
            out: std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock()),
            json,
            // `--quiet` keeps only errors, as for every command's human output.
            quiet: !json && crate::text::settings().quiet,
            broken: false,
        }
    }

    fn write(&mut self, text: &str) {
        if self.broken || self.quiet {
            return;
        }
        let written = if self.json {
            self.out.write_all(text.as_bytes())
        } else {
            self.out
                .write_all(crate::text::sanitize(text, false).as_bytes())
        };
        self.broken = written.is_err();
    }

    fn finish(mut self) {
        let _ = self.out.flush();
    }
}

/// Print the records, then each new one, until the board is terminal or the timeout passes.
/// Each look at the board streams its history again and prints what is new.
fn follow(a: &LogArgs, json: bool, keep: &dyn Fn(&Record) -> bool, s: &Session) -> Result<Outcome> {
    let limit = timeout(a.timeout)?;
    // The wait ends with the command, whose clock started before this.
    let deadline = s.deadline().unwrap_or(Instant::now() + limit);
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
        let mut history = store::history(&a.board, s)?;
        let (total, _) = history.check(keep)?;
        history.rewind()?;
        // A journal never shrinks under the law; if it did (a hand edit), start over.
        if total < seen {
            seen = 0;
        }
        let mut index = 0usize;
        let mut out = Printer::new(json);
        while let Some(r) = history.next_record()? {
            index += 1;
            if index <= seen || !keep(&r) {
                continue;
            }
            if json {
                out.write(&format!("{}\n", record_json(&r)));
            } else {
                out.write(&format!("{}\n", record_text(&r)));
            }
            printed += 1;
        }
        out.finish();
        seen = total;
        if history.parsed.fm.phase.is_terminal() {
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
