//! The moments of a board that its timeline marks, each at the time of the write that made it:
//! every objection raised and settled, the decisions recorded in `## Decisions`
//! ([`crate::board::entry::DECIDED`]), and the dissents.
//!
//! An entry's heading carries its time in whole seconds, the journal's record of the write that
//! made it the millisecond: [`Writes`] finds that record, so that several writes of one second
//! keep their order on the timeline.

use std::collections::{HashMap, HashSet};

use crate::board::dissent::Outcome;
use crate::board::entry::{
    DECISION, DISSENT, Decided, Entry, GATE_APPROVED, GATE_WAIVED, NO_REVIEW_APPROVED,
    OBJECTIONS_WAIVED, REVIEWER_ADDED, REVIEWER_REMOVED, REWORK, REWORK_REJECTED, SLA_CHANGED,
    USERS_RULING, decided, middle, writer,
};
use crate::board::frontmatter::{Frontmatter, Phase, Target, Timestamp};
use crate::board::journal::Record;
use crate::board::ledger::{MOVES, Mover, Severity, State, Verb};
use crate::law::protocol::{Artifact, Command};
use crate::stats::objections::history;

/// What identifies the write of an entry among its writer's writes of that second.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// The write that moved the phase from the first to the second (a gate approved or waived
    /// says which).
    Move(Phase, Phase),
    /// A write of one of these commands.
    Commands(Vec<&'static str>),
    /// A write whose command starts with the same three letters as the entry's label
    /// (`object` for an `Objection`, `resolve` for a `Resolution`, `rule` for a `Ruling`, …).
    Stem(String),
}

/// The command a move of the ledger is made with (`rule` of `rule … overrule`).
fn command_of(v: Verb) -> &'static str {
    v.command().split(' ').next().unwrap_or("")
}

/// The records of `## Decisions` whose heading does not start as the command that writes them.
fn written_by(label: &str) -> Option<Vec<&'static str>> {
    let commands: &[Command] = match label {
        NO_REVIEW_APPROVED | OBJECTIONS_WAIVED => &[Command::Submit(Artifact::Plan)],
        REVIEWER_ADDED => &[Command::Register],
        REVIEWER_REMOVED => &[Command::Unrequire],
        SLA_CHANGED => &[Command::Extend],
        _ => return None,
    };
    Some(commands.iter().map(|c| c.name()).collect())
}

fn key(e: &Entry) -> Key {
    if (e.label == GATE_APPROVED || e.label == GATE_WAIVED)
        && let [m] = middle(e)[..]
        && let Some((a, b)) = m.split_once(" → ")
        && let (Ok(a), Ok(b)) = (a.parse::<Phase>(), b.parse::<Phase>())
    {
        return Key::Move(a, b);
    }
    if let Some(words) = written_by(&e.label) {
        return Key::Commands(words);
    }
    match e.label.as_str() {
        // The user's ruling goes with a move the arbiter makes ([`MOVES`]).
        USERS_RULING => {
            let mut words: Vec<&'static str> = MOVES
                .iter()
                .filter(|m| m.who == Mover::Arbiter)
                .map(|m| command_of(m.verb))
                .collect();
            words.sort_unstable();
            words.dedup();
            Key::Commands(words)
        }
        REWORK => Key::Commands(vec![command_of(Verb::Rework)]),
        REWORK_REJECTED => Key::Commands(vec![command_of(Verb::RejectRework)]),
        label => Key::Stem(label.chars().take(3).collect::<String>().to_lowercase()),
    }
}

fn fits(k: &Key, r: &Record) -> bool {
    match k {
        Key::Move(a, b) => r.from == Some(*a) && r.to == *b,
        Key::Commands(words) => words.iter().any(|w| {
            r.command == *w
                || r.command
                    .strip_prefix(w)
                    .is_some_and(|rest| rest.starts_with('-'))
        }),
        Key::Stem(stem) => r.command.chars().take(3).collect::<String>().to_lowercase() == *stem,
    }
}

/// How long after an entry's time the record of its write may come: the entry takes its time
/// as the write starts, in whole seconds, and the record its own as the write ends (after a
/// lock waited for, git run).
const LATER_MS: i64 = 60_000;

/// The journal record of the write that made each entry: a record by the entry's writer
/// ([`writer`]) at or after the entry's time, the first not yet taken by an earlier entry of the
/// same kind: one that moved the phase as a gate's approval or waiver says, else one whose
/// command is the entry's (an objection's `object`, a resolution's `resolve`, …: the same first
/// three letters; a user's ruling the command of an arbiter's move, `rule` or `decide`). An entry
/// no command is known for takes the writer's first record within its second.
#[derive(Debug, Clone, Default)]
pub struct Writes {
    /// By the entry's heading line.
    by_line: HashMap<u32, usize>,
}

impl Writes {
    pub fn new(entries: &[Entry], records: &[Record]) -> Writes {
        let mut by_writer: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, r) in records.iter().enumerate() {
            if let Some(by) = r.by.as_deref() {
                by_writer.entry(by).or_default().push(i);
            }
        }
        let mut order: Vec<&Entry> = entries.iter().collect();
        order.sort_by_key(|e| (e.time, e.line));
        let mut taken: HashSet<(Key, usize)> = HashSet::new();
        let mut by_line = HashMap::new();
        for e in order {
            let Some(mine) = writer(e).and_then(|w| by_writer.get(w.as_str())) else {
                continue;
            };
            let k = key(e);
            let after = |i: &usize| (0..LATER_MS).contains(&e.time.millis_until(records[*i].at));
            let fitting = mine
                .iter()
                .copied()
                .find(|i| after(i) && fits(&k, &records[*i]) && !taken.contains(&(k.clone(), *i)));
            let found = match fitting {
                Some(i) => {
                    taken.insert((k, i));
                    Some(i)
                }
                None => mine
                    .iter()
                    .copied()
                    .find(|i| (0..1000).contains(&e.time.millis_until(records[*i].at))),
            };
            if let Some(i) = found {
                by_line.insert(e.line, i);
            }
        }
        Writes { by_line }
    }

    /// The index of the record of the write that made `e`.
    pub fn record(&self, e: &Entry) -> Option<usize> {
        self.by_line.get(&e.line).copied()
    }

    /// When `e` was written: its record's time, else its own.
    pub fn at(&self, e: &Entry, records: &[Record]) -> Timestamp {
        self.record(e).map_or(e.time, |i| records[i].at)
    }
}

/// One step of an objection: its entry's first part, who wrote it, when.
#[derive(Debug, Clone)]
pub struct Step {
    pub what: String,
    pub by: Option<String>,
    pub at: Timestamp,
}

/// An objection, from the write that raised it to the one that settled it.
#[derive(Debug, Clone)]
pub struct Objection {
    pub id: String,
    /// Who raised it.
    pub by: String,
    pub gate: Target,
    pub round: u32,
    pub severity: Severity,
    pub state: State,
    pub title: String,
    pub raised: Timestamp,
    /// `None` while it is still to be settled.
    pub settled: Option<Timestamp>,
    /// Every entry about it, with the one that settled it.
    pub steps: Vec<Step>,
}

/// The decisions one write recorded.
#[derive(Debug, Clone)]
pub struct Decision {
    pub at: Timestamp,
    /// The agent who recorded them.
    pub by: Option<String>,
    /// Whether they are the user's; `false` for a decision the only required reviewer made as
    /// the arbiter.
    pub users: bool,
    /// The weightiest of them.
    pub kind: Decided,
    /// What was decided in a few words, for a ruling or a waiver: `plan: accept`, `overruled
    /// BLK-2`, `waived`.
    pub label: Option<String>,
    /// Each record: its heading's middle parts and the first line of its text.
    pub lines: Vec<String>,
}

/// A dissenter's answer.
#[derive(Debug, Clone)]
pub struct Dissent {
    pub at: Timestamp,
    pub by: String,
    /// Its journal record's index.
    pub record: Option<usize>,
    pub outcome: Option<Outcome>,
    /// What it answered: `code round 2`.
    pub what: String,
    /// The first line of its text.
    pub summary: String,
}

/// The moments of a board.
#[derive(Debug, Clone, Default)]
pub struct Moments {
    pub objections: Vec<Objection>,
    pub decisions: Vec<Decision>,
    pub dissents: Vec<Dissent>,
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.trim().trim_matches('*');
    if line.chars().count() > 160 {
        let mut s: String = line.chars().take(159).collect();
        s.push('…');
        s
    } else {
        line.to_string()
    }
}

/// The moments of a board: its frontmatter, its entries and its journal's records.
pub fn of(fm: &Frontmatter, entries: &[Entry], records: &[Record]) -> Moments {
    let writes = Writes::new(entries, records);
    let step = |e: &Entry| Step {
        what: std::iter::once(e.label.as_str())
            .chain(middle(e))
            .collect::<Vec<_>>()
            .join(" — "),
        by: writer(e),
        at: writes.at(e, records),
    };
    let objections = fm
        .ledger
        .objections
        .iter()
        .filter_map(|o| {
            let h = history(o, entries);
            let raised = writes.at(h.raised?, records);
            let mut steps: Vec<Step> = h.about.iter().map(|e| step(e)).collect();
            if let Some(s) = h.settled
                && !h.about.iter().any(|e| e.line == s.line)
            {
                steps.push(step(s));
            }
            Some(Objection {
                id: o.id.clone(),
                by: o.by.clone(),
                gate: o.gate,
                round: o.round,
                severity: o.severity,
                state: o.state,
                title: o.title.clone(),
                raised,
                settled: h.settled.map(|e| writes.at(e, records)),
                steps,
            })
        })
        .collect();
    // The decisions, one per write that recorded any.
    let mut groups: Vec<(Option<usize>, Vec<&Entry>)> = Vec::new();
    for e in entries.iter().filter(|e| decided(e).is_some()) {
        let r = writes.record(e);
        let same = |(gr, es): &&mut (Option<usize>, Vec<&Entry>)| match (r, gr) {
            (Some(a), Some(b)) => a == *b,
            (None, None) => es
                .first()
                .is_some_and(|f| f.time == e.time && writer(f) == writer(e)),
            _ => false,
        };
        match groups.iter_mut().find(same) {
            Some((_, es)) => es.push(e),
            None => groups.push((r, vec![e])),
        }
    }
    let decisions = groups
        .into_iter()
        .filter_map(|(r, es)| {
            let kind = es.iter().filter_map(|e| decided(e)).max()?;
            let first = es.first()?;
            let with = |label: &str| es.iter().find(|e| e.label == label);
            // The entries the same write made elsewhere: its rulings on objections.
            let rulings: Vec<String> = entries
                .iter()
                .filter(|x| r.is_some() && writes.record(x) == r)
                .filter_map(|x| {
                    let id = x.label.strip_prefix("Ruling ")?;
                    Some(format!("{} {id}", middle(x).first()?))
                })
                .collect();
            let label = if let Some(d) = with(DECISION) {
                match middle(d)[..] {
                    [gate, verb, ..] => Some(format!("{gate}: {verb}")),
                    _ => Some("decision".to_string()),
                }
            } else if let Some(u) = with(USERS_RULING) {
                if !rulings.is_empty() {
                    Some(rulings.join(", "))
                } else if entries
                    .iter()
                    .any(|x| r.is_some() && writes.record(x) == r && x.label == REWORK_REJECTED)
                {
                    Some("rework rejected".to_string())
                } else {
                    Some(format!("ruling {}", middle(u).join(" ")))
                }
            } else if kind == Decided::Waiver {
                Some("waived".to_string())
            } else {
                None
            };
            let lines = es
                .iter()
                .map(|e| {
                    let head = std::iter::once(e.label.as_str())
                        .chain(middle(e))
                        .collect::<Vec<_>>()
                        .join(" — ");
                    let text = first_line(&e.text);
                    if text.is_empty() {
                        head
                    } else {
                        format!("{head}: {text}")
                    }
                })
                .collect();
            Some(Decision {
                at: writes.at(first, records),
                by: writer(first),
                users: es.iter().any(|e| e.label != DECISION),
                kind,
                label,
                lines,
            })
        })
        .collect();
    let dissents = entries
        .iter()
        .filter(|e| e.label == DISSENT)
        .filter_map(|e| {
            let parts: Vec<&str> = e.heading.split(" — ").collect();
            let outcome = parts.len().checked_sub(2).map(|i| parts[i])?;
            Some(Dissent {
                at: writes.at(e, records),
                by: writer(e)?,
                record: writes.record(e),
                outcome: outcome.parse().ok(),
                what: middle(e).join(" "),
                summary: first_line(&e.text),
            })
        })
        .collect();
    Moments {
        objections,
        decisions,
        dissents,
    }
}
