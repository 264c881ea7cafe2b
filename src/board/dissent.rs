//! The dissent stage's data: which gates need a dissenter's verdict after the reviewers pass
//! (`dissent_gates`, set at `init --dissent`), and every dissenter's verdict given
//! (`dissent_rounds`, one line each: `GATE COUNTER AGENT OUTCOME [IDS]`).
//!
//! ```yaml
//! dissent_gates: [plan, code]
//! dissent_every_cycle: true
//! dissent_rounds:
//!   - "code 1 dave blocking BLK-1,BLK-2"
//!   - "code 2 erin none"
//! ```
//!
//! `dissent_every_cycle` is written only when the user let one dissenter act on every cycle
//! (`init --dissenter-every-cycle`). All three are absent on a board without a dissent stage. The rules over this data are the
//! law's ([`crate::law::dissent`]).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::board::frontmatter::{Frontmatter, Target, word_enum};

word_enum!(
    /// What a dissenter answers (the consensus protocol's DISSENT:NONE / ADVISORY / BLOCKING).
    Outcome {
        Nothing => "none",
        Advisory => "advisory",
        Blocking => "blocking",
    }
);

/// The key of the gates that need a dissent stage.
pub const GATES_FIELD: &str = "dissent_gates";
/// The key of the setting that lets one dissenter act on every cycle of the board.
pub const EVERY_CYCLE_FIELD: &str = "dissent_every_cycle";
/// The key of the dissenters' verdicts.
pub const ROUNDS_FIELD: &str = "dissent_rounds";

/// One dissenter's verdict on one submission of a gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    pub gate: Target,
    /// The gate's counter the dissenter evaluated.
    pub counter: u32,
    pub by: String,
    pub outcome: Outcome,
    /// For a blocking dissent: the open blocking objections it names.
    pub objections: Vec<String>,
}

impl Round {
    /// The line as written in `dissent_rounds`.
    pub fn value(&self) -> String {
        let mut s = format!(
            "{} {} {} {}",
            self.gate, self.counter, self.by, self.outcome
        );
        if !self.objections.is_empty() {
            s.push(' ');
            s.push_str(&self.objections.join(","));
        }
        s
    }

    /// Read `GATE COUNTER AGENT OUTCOME [IDS]`.
    pub fn parse(s: &str) -> Result<Round, String> {
        let bad = || {
            format!(
                "expected `GATE COUNTER AGENT OUTCOME [IDS]` (e.g. `code 1 dave blocking \
                 BLK-1,BLK-2`; OUTCOME none, advisory or blocking), found {s:?}"
            )
        };
        let words: Vec<&str> = s.split_whitespace().collect();
        let (gate, counter, by, outcome, ids) = match words.as_slice() {
            [g, c, b, o] => (g, c, b, o, None),
            [g, c, b, o, ids] => (g, c, b, o, Some(ids)),
            _ => return Err(bad()),
        };
        let gate: Target = gate.parse().map_err(|_| bad())?;
        let counter: u32 = counter.parse().map_err(|_| bad())?;
        if counter == 0 || !crate::board::frontmatter::is_agent_id(by) {
            return Err(bad());
        }
        let outcome: Outcome = outcome.parse().map_err(|_| bad())?;
        let objections: Vec<String> = ids
            .map(|ids| ids.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        if objections
            .iter()
            .any(|id| crate::board::ledger::Kind::parse_id(id).is_none())
        {
            return Err(bad());
        }
        Ok(Round {
            gate,
            counter,
            by: by.to_string(),
            outcome,
            objections,
        })
    }
}

/// The dissent stage of a board: the gates that need it and the verdicts given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dissent {
    /// The gates whose approval waits for a dissenter (empty: no dissent stage).
    pub gates: Vec<Target>,
    /// The user let one dissenter act on every cycle of the board (`init
    /// --dissenter-every-cycle`); without it a dissenter acts on one cycle only.
    pub every_cycle: bool,
    /// Every dissenter's verdict, oldest first.
    pub rounds: Vec<Round>,
}

impl Dissent {
    /// Whether gate `t` needs a dissent stage.
    pub fn requires(&self, t: Target) -> bool {
        self.gates.contains(&t)
    }

    /// The verdicts given on gate `t`, oldest first.
    pub fn of_gate(&self, t: Target) -> impl Iterator<Item = &Round> {
        self.rounds.iter().filter(move |r| r.gate == t)
    }

    /// The verdict given on gate `t` at `counter`, if any.
    pub fn at(&self, t: Target, counter: u32) -> Option<&Round> {
        self.of_gate(t).find(|r| r.counter == counter)
    }

    /// The flow list of `dissent_gates`.
    pub fn gates_value(&self) -> Option<String> {
        (!self.gates.is_empty()).then(|| {
            format!(
                "[{}]",
                self.gates
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

/// Emit `dissent_rounds` (nothing when no dissenter has answered).
pub fn emit_rounds(out: &mut String, d: &Dissent) {
    if d.rounds.is_empty() {
        return;
    }
    out.push_str(ROUNDS_FIELD);
    out.push_str(":\n");
    for r in &d.rounds {
        out.push_str("  - ");
        out.push_str(&crate::board::yaml::quoted(&r.value()));
        out.push('\n');
    }
}

/// Read `--dissent`'s value: `all` (every gate), or gates separated by commas.
pub fn parse_gates(s: &str) -> Result<Vec<Target>, String> {
    if s.trim() == "all" {
        return Ok(Target::ALL.to_vec());
    }
    let mut out = Vec::new();
    for w in s.split(',') {
        let w = w.trim().replace('-', "_");
        let t: Target = w.parse().map_err(|_| {
            format!(
                "{w:?} is not a gate (all, or analysis, plan, red_test, code separated by commas)"
            )
        })?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out.sort();
    Ok(out)
}

impl Frontmatter {
    /// Whether gate `t` needs a dissent stage on this board.
    pub fn dissent_required(&self, t: Target) -> bool {
        self.dissent.requires(t)
    }
}
