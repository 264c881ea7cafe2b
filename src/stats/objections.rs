//! Figures across tasks: per objection, the time (and tokens, where the writes reported them)
//! from raised to settled, read from the board's entries and journal; per board and in total,
//! objections by severity and by how they ended; which phases are the bottleneck; and the
//! trend over the tasks in the order they started.
//!
//! An objection is raised by the write of its `Objection ID` entry. It is settled by the write
//! that left it in a state nobody still has to act on: its `Accepted`, `Withdrawn` or `Ruling`
//! entry (the last entry about it), or, for a decision or a rework that settles several at once,
//! the `Decision` (not the `Decision needed` before it) or `Rework` entry that names it. The
//! tokens are those of the journal records of the writes about it (its raising, resolutions,
//! challenges, rulings, acceptance: the record of the write that made each entry, as
//! [`Writes`] finds it), where they reported any.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{BoardStats, Secs, Usage, secs};
use crate::board::entry::{DECISION, DECISIONS, Entry, REWORK, of_objection};
use crate::board::frontmatter::{Frontmatter, Phase, Timestamp};
use crate::board::journal::Record;
use crate::board::ledger::{Kind, Objection, Severity, State};
use crate::stats::moments::Writes;

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
    /// The reviewers who second it (`pair second`), in the order they did.
    pub seconded_by: Vec<String>,
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
    /// Objections seconded by at least one other reviewer (one finding held by several).
    pub seconded: usize,
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
        self.seconded += usize::from(!o.seconded_by.is_empty());
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
        self.seconded += o.seconded;
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

/// An objection's entries: every one about it in body order, the one that raised it, and the
/// one that settled it (`None` while it is still to be settled, or when that entry cannot be
/// found).
pub struct History<'a> {
    pub about: Vec<&'a Entry>,
    pub raised: Option<&'a Entry>,
    pub settled: Option<&'a Entry>,
}

/// The first word of an entry's label: `Objection`, `Resolution`, `Accepted`, `Decision`, …
fn word(e: &Entry) -> &str {
    e.label.split(' ').next().unwrap_or("")
}

/// The history of objection `o` in the board's entries.
pub fn history<'a>(o: &Objection, entries: &'a [Entry]) -> History<'a> {
    let about = of_objection(entries, o.gate, &o.id);
    let raised = about.iter().find(|e| word(e) == "Objection").copied();
    let last = about.last().map(|e| e.time);
    let settled = if o.state.is_unsettled() {
        None
    } else {
        match o.state {
            State::RiskAccepted | State::Deferred | State::Superseded => {
                let label = if o.state == State::Superseded {
                    REWORK
                } else {
                    DECISION
                };
                entries
                    .iter()
                    .filter(|e| e.section == DECISIONS && e.label == label)
                    .filter(|e| last.is_none_or(|l| e.time >= l))
                    .find(|e| names(&e.text, &o.id))
            }
            _ => about.last().copied(),
        }
    };
    History {
        about,
        raised,
        settled,
    }
}

/// Every objection of a board, with its history; `end` ends the time of those still to be
/// settled.
pub fn objections(
    fm: &Frontmatter,
    entries: &[Entry],
    records: &[Record],
    end: Timestamp,
) -> Vec<ObjectionStats> {
    let writes = Writes::new(entries, records);
    fm.ledger
        .objections
        .iter()
        .map(|o| {
            let h = history(o, entries);
            let raised = h.raised.map(|e| e.time);
            let settled = h.settled.map(|e| e.time);
            let reopened = h.about.iter().filter(|e| word(e) == "Reopened").count();
            let mut usage = Usage::default();
            for e in &h.about {
                if let Some(r) = writes.record(e).map(|i| &records[i]) {
                    usage.add(r.tokens, r.cost_micros);
                }
            }
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
                seconded_by: crate::board::ledger::second::seconders(fm, &o.id)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
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
