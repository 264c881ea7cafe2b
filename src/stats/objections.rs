//! Figures across tasks: per objection, the time (and tokens, where the writes reported them)
//! from raised to settled, read from the board's entries and journal; per board and in total,
//! objections by severity and by how they ended; which phases are the bottleneck; and the
//! trend over the tasks in the order they started.
//!
//! An objection is raised by the write of its `Objection ID` entry. It is settled by the write
//! that left it in a state nobody still has to act on: its `Accepted`, `Withdrawn` or `Ruling`
//! entry (the last entry about it), or, for a decision or a rework that settles several at once,
//! the `Decision` or `Rework` entry that names it. The tokens are those of the journal records
//! of the writes about it (its raising, resolutions, challenges, rulings, acceptance: a record
//! by the entry's agent within the second of the entry's time), where they reported any.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{BoardStats, Secs, Usage, secs};
use crate::board::entry::{DECISIONS, Entry, of_objection};
use crate::board::frontmatter::{Frontmatter, Phase, Timestamp};
use crate::board::journal::Record;
use crate::board::ledger::{Kind, Severity, State};

/// One objection's history.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectionStats {
    pub id: String,
    pub gate: crate::board::frontmatter::Target,
    pub severity: Severity,
    /// A regression (`REG-N`): raised against the resolution of another objection.
    pub regression: bool,
    /// Where it stands now.
    pub state: State,
    pub raised: Option<Timestamp>,
    /// When it was settled; `None` while it is still to be settled (or the entry that settled
    /// it cannot be found).
    pub settled: Option<Timestamp>,
    /// From raised to settled, or to the board's end while unsettled.
    pub seconds: Secs,
    /// How often it was reopened.
    pub reopened: usize,
    /// Tokens and cost of the writes about it.
    #[serde(flatten)]
    pub usage: Usage,
}

/// Objections counted together.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ObjectionTotal {
    pub raised: usize,
    /// By severity (`blocking`, `advisory`).
    pub by_severity: BTreeMap<String, usize>,
    /// By the state they ended in (`accepted`, `overruled`, `deferred`, …; `open`, `resolved`,
    /// `challenged`, `reopened` while still to be settled).
    pub by_state: BTreeMap<String, usize>,
    /// How many reopenings there were.
    pub reopenings: usize,
    /// Regressions raised (`REG-N`).
    pub regressions: usize,
    pub settled: usize,
    /// Raised to settled, over the settled ones: in all, and the longest.
    pub settle_seconds: Secs,
    pub max_settle_seconds: Secs,
    #[serde(flatten)]
    pub usage: Usage,
}

impl ObjectionTotal {
    pub fn add(&mut self, o: &ObjectionStats) {
        self.raised += 1;
        *self.by_severity.entry(o.severity.to_string()).or_default() += 1;
        *self.by_state.entry(o.state.to_string()).or_default() += 1;
        self.reopenings += o.reopened;
        self.regressions += usize::from(o.regression);
        if o.settled.is_some() {
            self.settled += 1;
            self.settle_seconds += o.seconds;
            self.max_settle_seconds = self.max_settle_seconds.max(o.seconds);
        }
        self.usage.merge(&o.usage);
    }

    pub fn merge(&mut self, o: &ObjectionTotal) {
        self.raised += o.raised;
        for (k, n) in &o.by_severity {
            *self.by_severity.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.by_state {
            *self.by_state.entry(k.clone()).or_default() += n;
        }
        self.reopenings += o.reopenings;
        self.regressions += o.regressions;
        self.settled += o.settled;
        self.settle_seconds += o.settle_seconds;
        self.max_settle_seconds = self.max_settle_seconds.max(o.max_settle_seconds);
        self.usage.merge(&o.usage);
    }
}

fn names(text: &str, id: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .any(|w| w == id)
}

/// The records of the write that made `e` (by its agent, within the second of its time). An
/// agent may write several times in one second (entries carry whole seconds): the record whose
/// command is the entry's (`object` for an `Objection`, `resolve` for a `Resolution`, `rule`
/// for a `Ruling`, …: the same first three letters) is taken before the first of that second.
/// `raiser` is the objection's author, the writer of its `Objection` entry (whose heading puts
/// the severity where other entries put the agent).
fn usage_of(e: &Entry, raiser: &str, records: &[Record]) -> Usage {
    let mut u = Usage::default();
    let agent = if e.label.starts_with("Objection ") {
        Some(raiser)
    } else {
        e.agent.as_deref()
    };
    let candidates = || {
        records
            .iter()
            .filter(|r| r.by.as_deref() == agent && (0..1000).contains(&e.time.millis_until(r.at)))
    };
    let stem = e.label.get(..3).map(str::to_ascii_lowercase);
    let same = candidates().find(|r| r.command.get(..3).map(str::to_ascii_lowercase) == stem);
    if let Some(r) = same.or_else(|| candidates().next()) {
        u.add(r.tokens, r.cost_micros);
    }
    u
}

/// Every objection of a board, with its history; `end` ends the time of those still to be
/// settled.
pub fn objections(
    fm: &Frontmatter,
    entries: &[Entry],
    records: &[Record],
    end: Timestamp,
) -> Vec<ObjectionStats> {
    fm.ledger
        .objections
        .iter()
        .map(|o| {
            let about = of_objection(entries, o.gate, &o.id);
            let word = |e: &Entry| e.label.split(' ').next().unwrap_or("").to_string();
            let raised = about
                .iter()
                .find(|e| word(e) == "Objection")
                .map(|e| e.time);
            let last = about.last().map(|e| e.time);
            let reopened = about.iter().filter(|e| word(e) == "Reopened").count();
            let mut usage = Usage::default();
            for e in &about {
                usage.merge(&usage_of(e, &o.by, records));
            }
            let settled = if o.state.is_unsettled() {
                None
            } else {
                match o.state {
                    State::RiskAccepted | State::Deferred | State::Superseded => {
                        let label = if o.state == State::Superseded {
                            "Rework"
                        } else {
                            "Decision"
                        };
                        entries
                            .iter()
                            .filter(|e| e.section == DECISIONS && word(e) == label)
                            .filter(|e| last.is_none_or(|l| e.time >= l))
                            .find(|e| names(&e.text, &o.id))
                            .map(|e| e.time)
                    }
                    _ => last,
                }
            };
            let seconds = match (raised, settled) {
                (Some(r), Some(s)) => secs(r, s),
                (Some(r), None) => secs(r, end),
                _ => Secs::default(),
            };
            ObjectionStats {
                id: o.id.clone(),
                gate: o.gate,
                severity: o.severity,
                regression: Kind::parse_id(&o.id).is_some_and(|(k, _)| k == Kind::Regression),
                state: o.state,
                raised,
                settled,
                seconds,
                reopened,
                usage,
            }
        })
        .collect()
}

/// A phase's share of the time.
#[derive(Debug, Clone, Serialize)]
pub struct Bottleneck {
    pub phase: Phase,
    pub seconds: Secs,
    /// Its share of the time in every phase but the terminal ones, in percent (one decimal).
    pub share: f64,
}

/// The phases that took the most time, longest first (terminal phases left out: a finished
/// board waits there forever), at most `n`.
pub fn bottlenecks(phases: &BTreeMap<Phase, super::Span>, n: usize) -> Vec<Bottleneck> {
    let working: Vec<(Phase, Secs)> = phases
        .iter()
        .filter(|(p, _)| !p.is_terminal())
        .map(|(p, s)| (*p, s.seconds))
        .collect();
    let all: i64 = working.iter().map(|(_, s)| s.millis()).sum();
    let mut v: Vec<Bottleneck> = working
        .into_iter()
        .filter(|(_, s)| s.millis() > 0)
        .map(|(phase, seconds)| Bottleneck {
            phase,
            seconds,
            share: if all > 0 {
                (seconds.millis() as f64 * 1000.0 / all as f64).round() / 10.0
            } else {
                0.0
            },
        })
        .collect();
    v.sort_by(|a, b| b.seconds.cmp(&a.seconds).then(a.phase.cmp(&b.phase)));
    v.truncate(n);
    v
}

/// One task in the trend: its figures, in the order the tasks started.
#[derive(Debug, Clone, Serialize)]
pub struct TrendPoint {
    pub path: String,
    pub start: Option<Timestamp>,
    pub seconds: Secs,
    pub rounds: usize,
    pub objections: usize,
    pub tokens: Option<u64>,
}

/// How the figures moved from the earlier half of the tasks to the later half.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    pub tasks: Vec<TrendPoint>,
    /// Mean per task in the earlier and the later half (`null` with fewer than two tasks).
    pub earlier: Option<TrendMean>,
    pub later: Option<TrendMean>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrendMean {
    pub tasks: usize,
    pub seconds: f64,
    pub rounds: f64,
    pub objections: f64,
}

/// The trend over boards (with their objection counts), by start time.
pub fn trend(boards: &[(&BoardStats, usize)]) -> Trend {
    let mut tasks: Vec<TrendPoint> = boards
        .iter()
        .map(|(b, objections)| TrendPoint {
            path: b.path.clone(),
            start: b.start,
            seconds: b.seconds,
            rounds: b.gates.values().map(|g| g.rounds.len()).sum(),
            objections: *objections,
            tokens: b.usage.tokens,
        })
        .collect();
    tasks.sort_by(|a, b| a.start.cmp(&b.start).then(a.path.cmp(&b.path)));
    let mean = |part: &[TrendPoint]| {
        let n = part.len().max(1) as f64;
        TrendMean {
            tasks: part.len(),
            seconds: part
                .iter()
                .map(|t| t.seconds.millis() as f64 / 1000.0)
                .sum::<f64>()
                / n,
            rounds: part.iter().map(|t| t.rounds as f64).sum::<f64>() / n,
            objections: part.iter().map(|t| t.objections as f64).sum::<f64>() / n,
        }
    };
    let (earlier, later) = if tasks.len() >= 2 {
        let half = tasks.len() / 2;
        (
            Some(mean(&tasks[..half])),
            Some(mean(&tasks[tasks.len() - half..])),
        )
    } else {
        (None, None)
    };
    Trend {
        tasks,
        earlier,
        later,
    }
}
