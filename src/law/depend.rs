//! Dependencies' rules (see [`crate::board::depend`] for their data): a board that waits for
//! other boards is not its doer's to work on until every one of them is released. The law is
//! given the phases of the boards waited for ([`Dep`], read where the boards are kept) and
//! judges from them alone.
//!
//! The rules are data: [`RELEASES`] says which phases release a dependency, [`HOLDS`] which
//! keep it waiting with a word of why, [`GATED`] which of the doer's commands a waiting board
//! refuses. `poll`, `next`, `ls`, the write's judgement and the docs read these tables.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::board::frontmatter::Phase;
use crate::error::{Error, Hint, Result};
use crate::law::protocol::{Next, NextActor};

/// The phases that release a dependency: the work waited for is committed, or later.
pub const RELEASES: &[Phase] = &[Phase::Committed, Phase::Merged, Phase::CleanedUp];

/// The phases in which a dependency keeps its dependants waiting and says why: its work
/// stopped, or is blocked (it may never be committed).
pub const HOLDS: &[Phase] = &[Phase::Stopped, Phase::Blocked];

/// The doer's steps a waiting board refuses: a command (by name), from one phase or from any.
/// The start of work (`advance` out of DRAFT), every submission (`submit`, the first one
/// included), and resuming a blocked board (`unblock`, as after a deferral).
pub const GATED: &[(&str, Option<Phase>)] = &[
    ("advance", Some(Phase::Draft)),
    ("submit", None),
    ("unblock", None),
];

/// Whether `command` taken in `phase` is a step of [`GATED`].
pub fn gated(command: &str, phase: Phase) -> bool {
    GATED
        .iter()
        .any(|(c, from)| *c == command && from.is_none_or(|f| f == phase))
}

/// Where a dependency stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// In a phase of [`RELEASES`]: no longer waited for.
    Released,
    /// Its work goes on.
    Waiting,
    /// In a phase of [`HOLDS`]: STOPPED or BLOCKED, waited for until it is resumed.
    Held,
    /// No such board (named in `after:`, it is waited for until it exists and is released).
    Missing,
    /// It cannot be read, or is not a valid board.
    Unreadable,
}

impl State {
    /// Where a board in `phase` stands as a dependency.
    pub fn of(phase: Phase) -> State {
        if RELEASES.contains(&phase) {
            State::Released
        } else if HOLDS.contains(&phase) {
            State::Held
        } else {
            State::Waiting
        }
    }
}

/// A board waited for, as read where it is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dep {
    /// The name as the board writes it (`after:` or `blocked-pending:`).
    pub board: String,
    /// Where it was looked for: a path or a git address.
    pub address: String,
    /// Why it is waited for: `after`, or `deferral:<gate>`.
    pub by: String,
    /// Its phase, when it could be read.
    pub phase: Option<Phase>,
    pub state: State,
}

impl Dep {
    /// Whether it still keeps its dependant waiting.
    pub fn waits(&self) -> bool {
        self.state != State::Released
    }

    /// `a.md (PLANNING)`, with a word of why for a held, missing or unreadable one.
    pub fn describe(&self) -> String {
        match (self.state, self.phase) {
            (State::Held, Some(p)) => format!(
                "{} ({p}: it stays waited for until its work resumes and is committed)",
                self.board
            ),
            (_, Some(p)) => format!("{} ({p})", self.board),
            (State::Missing, _) => format!("{} (no such board yet)", self.board),
            _ => format!("{} (cannot be read)", self.board),
        }
    }
}

/// Whether a board in `phase` with these dependencies waits: one is not released, and the
/// board itself is neither released nor stopped.
pub fn is_waiting(phase: Phase, deps: &[Dep]) -> bool {
    !RELEASES.contains(&phase) && phase != Phase::Stopped && deps.iter().any(Dep::waits)
}

/// The dependencies that keep a board waiting.
pub fn waiting(deps: &[Dep]) -> Vec<&Dep> {
    deps.iter().filter(|d| d.waits()).collect()
}

fn list(deps: &[&Dep]) -> String {
    deps.iter()
        .map(|d| d.describe())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Judge a write that takes `command` on a board whose dependencies `deps` gives (asked for
/// only when the step is one of [`GATED`]): refused while any is not released.
pub fn judge(
    command: &str,
    phase: Phase,
    agent: &str,
    deps: impl FnOnce() -> Vec<Dep>,
) -> Result<()> {
    if !gated(command, phase) {
        return Ok(());
    }
    let deps = deps();
    let held = waiting(&deps);
    if held.is_empty() {
        return Ok(());
    }
    Err(Error::refused(
        format!(
            "`{command}` waits: this blackboard waits for {} to reach {} (its dependencies); \
             `pair poll --wait` wakes when they do",
            list(&held),
            phases(RELEASES),
        ),
        Hint::Run {
            command: "poll",
            args: vec!["--agent".into(), agent.into(), "--wait".into()],
        },
    ))
}

/// The phases as words: `COMMITTED, MERGED or CLEANED_UP`.
pub fn phases(p: &[Phase]) -> String {
    let words: Vec<String> = p.iter().map(|p| p.to_string()).collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => words.join(""),
    }
}

/// The step of a board that waits: the doer's gated step becomes a wait (`wait` is the
/// command that waits, a `poll --wait`); a gated optional step is left out. Other steps, and
/// every step of a board that does not wait, are kept.
pub fn hold(mut next: Next, phase: Phase, deps: &[Dep], wait: Vec<String>) -> Next {
    let held = waiting(deps);
    if held.is_empty() {
        return next;
    }
    let gated = |argv: &[String]| argv.get(1).is_some_and(|c| gated(c, phase));
    if next.optional.as_ref().is_some_and(|o| gated(&o.command)) {
        next.optional = None;
        next.action = format!(
            "{} It waits for {} to reach {} before it can resume.",
            next.action,
            list(&held),
            phases(RELEASES)
        );
    }
    if next.command.as_deref().is_some_and(gated) {
        next.action = format!(
            "Not yet: this blackboard waits for {} to reach {}. Wait with `{}`.",
            list(&held),
            phases(RELEASES),
            crate::text::shell_line(&wait)
        );
        next.actor = NextActor::None;
        next.handoff_to = Vec::new();
        next.command = Some(wait);
        next.choices = None;
        next.placeholders = BTreeMap::new();
        next.unable = None;
    }
    next
}

/// A cycle among the boards, each named with the boards it waits for, as the chain of names
/// from a board back to itself (`a`, `b`, `a`); `None` when there is none. Names not in
/// `edges` wait for nothing.
pub fn cycle(edges: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        n: &str,
        edges: &BTreeMap<String, Vec<String>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(n) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = stack.iter().position(|s| s == n).unwrap_or(0);
                let mut c: Vec<String> = stack[from..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            None => {}
        }
        marks.insert(n.to_string(), Mark::Open);
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, marks, stack) {
                return Some(c);
            }
        }
        stack.pop();
        marks.insert(n.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for n in edges.keys() {
        let mut stack = Vec::new();
        if let Some(c) = visit(n, edges, &mut marks, &mut stack) {
            return Some(c);
        }
    }
    None
}

/// The critical path: the longest chain of unfinished boards each waiting for the one before
/// it, from the first to be finished to the last (`a`, `b`, `c`: c waits for b, which waits for
/// a). Only boards in `unfinished` count; the graph must have no cycle ([`cycle`]). Ties go to
/// the chain first in name order. Empty when no unfinished board waits for an unfinished one.
pub fn critical_path(
    edges: &BTreeMap<String, Vec<String>>,
    unfinished: &BTreeSet<String>,
) -> Vec<String> {
    fn longest(
        n: &str,
        edges: &BTreeMap<String, Vec<String>>,
        unfinished: &BTreeSet<String>,
        memo: &mut BTreeMap<String, Vec<String>>,
    ) -> Vec<String> {
        if let Some(p) = memo.get(n) {
            return p.clone();
        }
        let mut best: Vec<String> = Vec::new();
        for m in edges.get(n).into_iter().flatten() {
            if unfinished.contains(m) {
                let p = longest(m, edges, unfinished, memo);
                if p.len() > best.len() {
                    best = p;
                }
            }
        }
        best.push(n.to_string());
        memo.insert(n.to_string(), best.clone());
        best
    }
    let mut memo = BTreeMap::new();
    let mut best: Vec<String> = Vec::new();
    for n in unfinished {
        let p = longest(n, edges, unfinished, &mut memo);
        if p.len() > best.len() {
            best = p;
        }
    }
    if best.len() < 2 { Vec::new() } else { best }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(e: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        e.iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn a_cycle_is_named_from_a_board_back_to_itself() {
        let g = graph(&[("a", &["c"]), ("b", &["a"]), ("c", &["b"])]);
        assert_eq!(
            cycle(&g),
            Some(vec!["a".into(), "c".into(), "b".into(), "a".into()])
        );
        let g = graph(&[("a", &[]), ("b", &["a"]), ("c", &["b", "a"])]);
        assert_eq!(cycle(&g), None);
        let g = graph(&[("a", &["a"])]);
        assert_eq!(cycle(&g), Some(vec!["a".into(), "a".into()]));
    }

    #[test]
    fn the_critical_path_is_the_longest_unfinished_chain() {
        let g = graph(&[("b", &["a"]), ("c", &["b"]), ("d", &["a"]), ("e", &["x"])]);
        let all: BTreeSet<String> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(critical_path(&g, &all), vec!["a", "b", "c"]);
        let mut done = all.clone();
        done.remove("a");
        assert_eq!(critical_path(&g, &done), vec!["b", "c"]);
        done.remove("b");
        assert!(critical_path(&g, &done).is_empty());
    }

    #[test]
    fn the_tables_agree() {
        assert!(RELEASES.iter().all(|p| !HOLDS.contains(p)));
        assert_eq!(State::of(Phase::Committed), State::Released);
        assert_eq!(State::of(Phase::Stopped), State::Held);
        assert_eq!(State::of(Phase::Draft), State::Waiting);
    }
}
