//! `pair stats`: per board and in total, where the time and the tokens went ([`crate::stats`]);
//! `--svg FILE` draws the timeline ([`crate::render::svg`]).

use std::fmt::Write as _;

use serde_json::json;

use super::{Outcome, shown, stats_cross as cross};
use crate::board::frontmatter::Timestamp;
use crate::board::journal::cost_text;
use crate::cli::StatsArgs;
use crate::error::{Error, Result};
use crate::render::output;
use crate::render::report::SCHEMA;
use crate::stats::moments::Moments;
use crate::stats::objections::ObjectionStats;
use crate::stats::{self, BoardStats, Secs, Usage, figure};
use crate::store::Session;

fn usage_text(u: &Usage) -> String {
    let mut parts = Vec::new();
    if let Some(t) = u.tokens {
        parts.push(format!("{t} tokens"));
    }
    if let Some(c) = u.cost_micros {
        parts.push(format!("cost {}", cost_text(c)));
    }
    parts.join(", ")
}

/// A duration as `1h02m03s`; under a minute to the millisecond (`0.25s`), as the journal's
/// times are.
pub fn duration(d: Secs) -> String {
    let s = d.whole();
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    let ms = d.millis().rem_euclid(1000);
    match (h, m) {
        (0, 0) if ms != 0 => {
            let frac = format!("{ms:03}");
            format!("{sec}.{}s", frac.trim_end_matches('0'))
        }
        (0, 0) => format!("{sec}s"),
        (0, _) => format!("{m}m{sec:02}s"),
        _ => format!("{h}h{m:02}m{sec:02}s"),
    }
}

/// The handoffs of roles, one line per role handed over: `role handoffs  doer: 1 offered, 1
/// acknowledged, 0 withdrawn, 0 pending; to acknowledgement 30s / 30s`.
fn handoffs_text(t: &mut String, h: &stats::handoffs::Handoffs) {
    for (role, x) in h {
        let _ = writeln!(
            t,
            "  {} {role}: {} offered, {} acknowledged, {} withdrawn, {} pending; {} {} / {}",
            figure::ROLE_HANDOFFS.name,
            x.offered,
            x.acknowledged,
            x.withdrawn,
            x.pending,
            figure::ACKNOWLEDGE_TIME.name,
            duration(x.acknowledge_seconds),
            duration(x.max_acknowledge_seconds)
        );
    }
}

fn board_text(b: &BoardStats) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{}: {} {}, {} {}, now {}",
        crate::text::escape(&b.path),
        b.records,
        figure::RECORDS.name,
        figure::ELAPSED.name,
        duration(b.seconds),
        b.phase
    );
    if b.records == 0 {
        t.push_str("  no journal yet: the next write starts it\n");
        return t;
    }
    let _ = writeln!(
        t,
        "  {:<28} {:>13}  {}",
        "phase",
        figure::TIME_IN_PHASE.name,
        figure::USAGE.name
    );
    for (p, s) in &b.phases {
        let _ = writeln!(
            t,
            "  {:<28} {:>13}  {}",
            p.as_str(),
            duration(s.seconds),
            usage_text(&s.usage)
        );
    }
    let _ = writeln!(
        t,
        "  {:<10} {:>12}  {:<38} {:<14} {}",
        "gate",
        figure::TIME_IN_GATE.name,
        format!("{}s (#N outcome duration)", figure::ROUND.name),
        figure::INDEPENDENCE.name,
        figure::USAGE.name
    );
    for (g, s) in &b.gates {
        let rounds: Vec<String> = s
            .rounds
            .iter()
            .map(|r| format!("#{} {} {}", r.number, r.outcome, duration(r.seconds)))
            .collect();
        let _ = writeln!(
            t,
            "  {:<10} {:>12}  {:<38} {:<14} {}",
            g.as_str(),
            duration(s.seconds),
            if rounds.is_empty() {
                "-".to_string()
            } else {
                rounds.join("; ")
            },
            s.independence.map_or("-", |i| i.as_str()),
            usage_text(&s.usage)
        );
        if !s.dissent.is_empty() {
            let answers: Vec<String> = s
                .dissent
                .iter()
                .map(|d| {
                    format!(
                        "{} {}",
                        crate::text::escape(d.by.as_deref().unwrap_or("?")),
                        d.outcome
                    )
                })
                .collect();
            let _ = writeln!(
                t,
                "  {:<10} {} {}",
                "",
                figure::DISSENT.name,
                answers.join("; ")
            );
        }
    }
    let _ = writeln!(
        t,
        "  {:<12} {:>7} {:>11}   {} ({} total / longest)   {}",
        "agent",
        figure::WRITES.name,
        figure::TURN_TIME.name,
        figure::RESPONSES.name,
        figure::RESPONSE_TIME.name,
        figure::USAGE.name
    );
    for (id, a) in &b.agents {
        let waiting = a
            .waiting_since
            .map(|w| format!(", {} {w}", figure::WAITED_ON_SINCE.name))
            .unwrap_or_default();
        let _ = writeln!(
            t,
            "  {:<12} {:>7} {:>11}   {} ({} / {}){waiting}   {}",
            id,
            a.writes,
            duration(a.turn_seconds),
            a.handoffs,
            duration(a.handoff_seconds),
            duration(a.max_handoff_seconds),
            usage_text(&a.usage)
        );
    }
    handoffs_text(&mut t, &b.role_handoffs);
    let u = usage_text(&b.usage);
    if !u.is_empty() {
        let _ = writeln!(t, "  {}: {u}", figure::USAGE.name);
    }
    match &b.sla_breaches {
        None => {}
        Some(list) if list.is_empty() => t.push_str(
            "  SLA breaches: none
",
        ),
        Some(list) => {
            t.push_str(
                "  SLA breaches:
",
            );
            for x in list {
                let _ = writeln!(
                    t,
                    "    {} {} from {} ({}): {} over {} (turn: {})",
                    x.sla,
                    x.phase,
                    x.started,
                    duration(Secs::from_secs(x.seconds)),
                    duration(Secs::from_secs(x.seconds_over)),
                    duration(Secs::from_secs(x.limit as i64)),
                    if x.turn.is_empty() {
                        "-".to_string()
                    } else {
                        x.turn.join(", ")
                    }
                );
            }
        }
    }
    t
}

/// One board's figures, the records and moments its timeline draws (with `--svg`), and its
/// objections.
type Figures = (
    BoardStats,
    Vec<crate::board::journal::Record>,
    Moments,
    Vec<ObjectionStats>,
);

/// The moments a board's timeline marks (its objections, decisions and dissents), at the times
/// of `records`, the journal's.
fn moments_of(
    path: &std::path::Path,
    records: &[crate::board::journal::Record],
    s: &Session,
) -> Result<Moments> {
    let loaded = crate::store::snapshot(path, crate::store::Depth::Whole, s)?.load()?;
    let entries = crate::board::entry::entries(&loaded.valid.doc);
    Ok(stats::moments::of(
        &loaded.valid.parsed.fm,
        &entries,
        records,
    ))
}

fn figures(path: &std::path::Path, svg: bool, now: Timestamp, s: &Session) -> Result<Figures> {
    // The journal is streamed through the figures; only a timeline to draw keeps its records.
    let mut history = crate::store::history(path, s)?;
    let fm = &history.parsed.fm;
    let phase = fm.phase;
    let mut fold = stats::Fold::new(&shown(path), phase, now);
    let mut sla = (!fm.sla.is_empty()).then(|| stats::SlaFold::new(fm.sla.clone()));
    let mut handoffs = stats::handoffs::HandoffFold::new(&fm.handoffs, fm.doer());
    let mut records = Vec::new();
    while let Some(r) = history.next_record()? {
        if let Some(sla) = &mut sla {
            sla.push(&r);
        }
        handoffs.push(&r);
        if svg {
            records.push(r.clone());
        }
        fold.push(r);
    }
    let mut b = fold.finish();
    b.sla_breaches = sla.map(|f| f.finish(phase, now));
    b.role_handoffs = handoffs.finish();
    let objections = cross::objections_of(path, &b, now, s)?;
    let moments = if svg {
        moments_of(path, &records, s)?
    } else {
        Moments::default()
    };
    Ok((b, records, moments, objections))
}

pub fn run(a: StatsArgs, s: &Session) -> Result<Outcome> {
    let now = Timestamp::now_ms();
    let mut boards = Vec::new();
    let mut all_records = Vec::new();
    let mut all_moments = Vec::new();
    let (paths, mut unread) = cross::expand(&a.board, s)?;
    let mut objections = Vec::new();
    for named in &paths {
        match figures(&named.path, a.svg.is_some(), now, s) {
            Ok((b, records, m, o)) => {
                boards.push(b);
                all_records.push(records);
                all_moments.push(m);
                objections.push(o);
            }
            // A board of a project that cannot be read is reported, and the others counted, as
            // `ls` lists them; a board named on its own is the command's error.
            Err(e) if named.in_project => unread.push(cross::Unread::of(&named.path, &e)),
            Err(e) => return Err(e),
        }
    }
    let total = stats::total(&boards);
    if let Some(file) = &a.svg {
        let drawn: Vec<crate::render::svg::Board> = boards
            .iter()
            .zip(&all_records)
            .zip(&all_moments)
            .map(|((stats, records), moments)| crate::render::svg::Board {
                stats,
                records,
                moments,
            })
            .collect();
        let svg = crate::render::svg::timeline(&drawn);
        std::fs::write(file, svg).map_err(|e| Error::io(file, "write the SVG timeline", e))?;
    }
    let json = json!({
        "schema": SCHEMA,
        "boards": boards,
        "total": total,
        "svg": a.svg.as_ref().map(|f| f.display().to_string()),
        "unread": unread,
    });
    let (json, cross_text) = cross::add(json, &boards, &total, &objections);
    let mut text = String::new();
    for u in &unread {
        let _ = writeln!(
            text,
            "{}: cannot be read, left out of the figures (exit {} alone): {}",
            crate::text::escape(&u.path),
            u.code,
            crate::text::escape(u.error.lines().next().unwrap_or(""))
        );
    }
    for b in &boards {
        text.push_str(&board_text(b));
    }
    if boards.len() > 1 {
        let _ = writeln!(
            text,
            "total: {} boards, {} {}, {} {} (summed over the boards)",
            total.boards,
            total.records,
            figure::RECORDS.name,
            figure::ELAPSED.name,
            duration(total.seconds)
        );
        for (g, s) in &total.gates {
            let outcomes: Vec<String> =
                s.outcomes.iter().map(|(o, n)| format!("{n} {o}")).collect();
            let _ = writeln!(
                text,
                "  {:<10} {:>10}  {} rounds ({})  {}{}",
                g.as_str(),
                duration(s.seconds),
                s.rounds,
                outcomes.join(", "),
                usage_text(&s.usage),
                if s.independence.is_empty() {
                    String::new()
                } else {
                    let n: Vec<String> = s
                        .independence
                        .iter()
                        .map(|(i, n)| format!("{n} {}", i.as_str()))
                        .collect();
                    format!("  reviews: {}", n.join(", "))
                }
            );
        }
        handoffs_text(&mut text, &total.role_handoffs);
        let u = usage_text(&total.usage);
        if !u.is_empty() {
            let _ = writeln!(text, "  {}: {u}", figure::USAGE.name);
        }
        for (name, x) in total.sla_breaches.iter().flatten() {
            let _ = writeln!(
                text,
                "  SLA {name}: {} breaches, {} over in all",
                x.breaches,
                duration(Secs::from_secs(x.seconds_over))
            );
        }
    }
    text.push_str(&cross_text);
    if let Some(f) = &a.svg {
        let _ = writeln!(text, "timeline written to {}", output::path(f));
    }
    if !boards.is_empty() {
        text.push_str("what each figure measures: pair stats --help\n");
    }
    Ok(Outcome::ok(json, text))
}
