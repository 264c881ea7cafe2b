//! What `status`, `validate` and `poll` say about the ledger, read from the frontmatter alone.

use serde::Serialize;

use super::{Severity, State, StopReason, round_of, terminal_stop_reason};
use crate::board::frontmatter::{Frontmatter, Target};

/// One line about the ledger for `status` and `validate`: the stop reason of the work, each
/// gate's round and stop reason, the open blocking objections. `None` on a board that does not
/// use the ledger.
pub fn describe(fm: &Frontmatter) -> Option<String> {
    let l = &fm.ledger;
    if !l.in_use() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(r) = terminal_stop_reason(fm) {
        parts.push(format!("stop_reason {r}"));
    }
    for (t, g) in &l.gates {
        parts.push(format!(
            "{t} round {} of {}{}",
            round_of(fm, *t),
            l.max_rounds(),
            g.stop_reason
                .map(|r| format!(
                    " ({r}{})",
                    g.escalation
                        .as_ref()
                        .map(|e| format!(", escalation {e}"))
                        .unwrap_or_default()
                ))
                .unwrap_or_default()
        ));
    }
    let open = shown(
        l.objections
            .iter()
            .filter(|o| o.severity == Severity::Blocking && o.state.is_open()),
        |o| o.id.clone(),
    );
    parts.push(format!(
        "{} objection(s), open blocking: {}",
        l.objections.len(),
        if open.is_empty() {
            "none".to_string()
        } else {
            open
        }
    ));
    // Everything still to be settled, so an advisory left open is not lost from sight.
    let unsettled = shown(
        l.objections.iter().filter(|o| o.state.is_unsettled()),
        |o| format!("{} ({} {}, {})", o.id, o.gate, o.severity, o.state),
    );
    if !unsettled.is_empty() {
        parts.push(format!("unsettled: {unsettled}"));
    }
    Some(parts.join(" · "))
}

/// How many unsettled objections `poll` and `status` list, in the ledger's order; the count
/// says how many there are in all, and `pair objections BOARD --open` lists every one. An
/// agent polls often: a ledger of a thousand objections must not fill its context each time.
pub const SHOWN_UNSETTLED: usize = 20;

/// The first [`SHOWN_UNSETTLED`] items, each as `show` writes it, joined, with how many more
/// there are (counted, not written).
fn shown<'a>(
    mut items: impl Iterator<Item = &'a super::Objection>,
    show: impl Fn(&super::Objection) -> String,
) -> String {
    let out: Vec<String> = items.by_ref().take(SHOWN_UNSETTLED).map(show).collect();
    let more = items.count();
    let mut text = out.join(", ");
    if more > 0 {
        text.push_str(&format!(
            " and {more} more (`pair objections BOARD --open` lists them all)"
        ));
    }
    text
}

/// What `poll` and `status` say about the ledger, from the frontmatter alone, on every board:
/// whether it uses the ledger is part of the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Whether the board uses the objection ledger: it was created with a round cap, or a
    /// reviewer raised an objection on it (the first one turns it on).
    pub in_use: bool,
    /// The round cap of every gate; `None` on a board that does not use the ledger (no cap).
    pub max_rounds: Option<u32>,
    /// The objections still to be settled: open, reopened, resolved (awaiting the raiser's
    /// acceptance) and challenged (awaiting a ruling); the first [`SHOWN_UNSETTLED`] of them.
    pub unsettled: Vec<Unsettled>,
    /// How many objections are still to be settled, listed in `unsettled` or not.
    pub unsettled_count: usize,
    /// Per gate with a submission: its current round and stop reason.
    pub gates: std::collections::BTreeMap<String, GateSummary>,
    /// The stop reason of a terminal phase.
    pub stop_reason: Option<StopReason>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unsettled {
    pub id: String,
    pub by: String,
    pub gate: Target,
    pub severity: Severity,
    pub state: State,
    pub anchor: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateSummary {
    pub round: u32,
    pub stop_reason: Option<StopReason>,
    pub escalation: Option<String>,
}

/// The ledger summary for `poll` and `status`.
pub fn summary_of(fm: &Frontmatter) -> Summary {
    let l = &fm.ledger;
    Summary {
        in_use: l.in_use(),
        max_rounds: l.in_use().then(|| l.max_rounds()),
        unsettled_count: l
            .objections
            .iter()
            .filter(|o| o.state.is_unsettled())
            .count(),
        unsettled: l
            .objections
            .iter()
            .filter(|o| o.state.is_unsettled())
            .take(SHOWN_UNSETTLED)
            .map(|o| Unsettled {
                id: o.id.clone(),
                by: o.by.clone(),
                gate: o.gate,
                severity: o.severity,
                state: o.state,
                anchor: o.anchor.clone(),
            })
            .collect(),
        gates: Target::ALL
            .iter()
            .filter(|t| fm.counter(**t) > 0)
            .map(|t| {
                let g = l.gate(*t);
                (
                    t.as_str().to_string(),
                    GateSummary {
                        round: round_of(fm, *t),
                        stop_reason: g.stop_reason,
                        escalation: g.escalation,
                    },
                )
            })
            .collect(),
        stop_reason: terminal_stop_reason(fm),
    }
}

/// One line about the ledger for `poll` and `status`, on every board: what it holds, or that
/// the board does not use it and what would turn it on.
pub fn line(fm: &Frontmatter) -> String {
    describe(fm).unwrap_or_else(|| {
        "not in use: no round cap and no objection yet (the first `pair object` turns it on; \
         from then on a CHANGES_REQUESTED names its objections)"
            .to_string()
    })
}
