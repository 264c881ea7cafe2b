//! What `validate` asks of a ledger (and every write re-checks on the new content): well-formed
//! ids and anchors, causes that exist, rounds that were played, a decision pending exactly where
//! the phase says, escalations only on deferred gates, and no open blocking objection in an
//! approved gate.

use super::valid_escalation;
use crate::board::frontmatter::{Parsed, Phase, Role, Target};
use crate::board::ledger::{Kind, StopReason, anchor};
use crate::error::FieldError;

/// The ledger's invariants, for `validate` and every write.
pub fn invariants(p: &Parsed) -> Vec<FieldError> {
    let fm = &p.fm;
    let l = &fm.ledger;
    let mut errors = Vec::new();
    for (i, sec) in fm.seconds.iter().enumerate() {
        let field = format!("{}.{}", crate::board::ledger::second::FIELD, i + 1);
        let line = p.line(crate::board::ledger::second::FIELD);
        let message = match l.get(&sec.id) {
            None => Some(format!(
                "{} seconds {}, which is not an objection on this board",
                sec.by, sec.id
            )),
            Some(o) if o.by == sec.by => Some(format!(
                "{} raised {}; a reviewer seconds another reviewer's objection, not its own",
                sec.by, sec.id
            )),
            Some(_) => None,
        };
        if let Some(message) = message {
            errors.push(FieldError {
                field,
                line,
                message,
            });
        }
    }
    let mut err = |field: String, message: String| {
        let line = p.line("ledger");
        errors.push(FieldError {
            field,
            line,
            message,
        });
    };
    if l.is_empty() && fm.phase != Phase::AwaitingDecision {
        return errors;
    }
    let mut seen: std::collections::HashSet<&str> =
        std::collections::HashSet::with_capacity(l.objections.len());
    for (i, o) in l.objections.iter().enumerate() {
        let path = format!("ledger.objections.{}", i + 1);
        match Kind::parse_id(&o.id) {
            None => err(
                format!("{path}.id"),
                format!("{:?} is not an objection id (BLK-N, ADV-N or REG-N)", o.id),
            ),
            Some((k, _)) if k.severity() != o.severity => err(
                format!("{path}.severity"),
                format!(
                    "{} is `{}`, but its id says `{}`",
                    o.id,
                    o.severity,
                    k.severity()
                ),
            ),
            Some((k, _)) => match (&o.cause, k) {
                (None, Kind::Regression) => err(
                    format!("{path}.cause"),
                    format!(
                        "{} is a regression and names the objection that caused it",
                        o.id
                    ),
                ),
                (Some(c), Kind::Regression) if !seen.contains(c.as_str()) => err(
                    format!("{path}.cause"),
                    format!("{} names {c}, which is not an earlier objection", o.id),
                ),
                (Some(_), Kind::Blocking | Kind::Advisory) => err(
                    format!("{path}.cause"),
                    "only a regression (REG-N) names a cause".to_string(),
                ),
                _ => {}
            },
        }
        if !seen.insert(&o.id) {
            err(format!("{path}.id"), format!("{} is listed twice", o.id));
        }
        if o.round == 0 || o.round > fm.counter(o.gate) {
            err(
                format!("{path}.round"),
                format!(
                    "is {}, but the {} gate has had {} submission(s)",
                    o.round,
                    o.gate,
                    fm.counter(o.gate)
                ),
            );
        }
        if fm.agent(&o.by).map(|a| a.role) != Some(Role::Reviewer) {
            err(
                format!("{path}.by"),
                format!("{:?} is not a reviewer on the blackboard", o.by),
            );
        }
        if let Err(e) = anchor::parse(&o.anchor) {
            err(format!("{path}.anchor"), e.to_string());
        }
    }
    let pending: Vec<Target> = l
        .gates
        .iter()
        .filter(|(_, g)| g.stop_reason.is_some_and(StopReason::awaits_decision))
        .map(|(t, _)| *t)
        .collect();
    let may_wait = match fm.phase {
        Phase::AwaitingDecision => true,
        Phase::Blocked => fm.blocked_from == Some(Phase::AwaitingDecision),
        Phase::Stopped => true,
        _ => false,
    };
    if fm.phase == Phase::AwaitingDecision && pending.len() != 1 {
        err(
            "phase".into(),
            format!(
                "is AWAITING_DECISION, so exactly one gate has a stop_reason that awaits a \
                 decision (cap_reached, diverging or deferred); found {}",
                pending.len()
            ),
        );
    }
    if !pending.is_empty() && !may_wait {
        err(
            format!("ledger.gates.{}.stop_reason", pending[0]),
            format!(
                "awaits a decision, but the phase is {}; it is AWAITING_DECISION (or BLOCKED \
                 from it)",
                fm.phase
            ),
        );
    }
    for (t, g) in &l.gates {
        match (&g.escalation, g.stop_reason) {
            (Some(e), Some(StopReason::Deferred)) if valid_escalation(e) => {}
            (None, Some(StopReason::Deferred)) => err(
                format!("ledger.gates.{t}.escalation"),
                "a deferred gate names its escalation path (human, parking-lot or \
                 blocked-pending:X)"
                    .into(),
            ),
            (Some(e), Some(StopReason::Deferred)) => err(
                format!("ledger.gates.{t}.escalation"),
                format!("{e:?} is not human, parking-lot or blocked-pending:X"),
            ),
            (Some(_), _) => err(
                format!("ledger.gates.{t}.escalation"),
                "is set only on a deferred gate".into(),
            ),
            _ => {}
        }
        if g.since > fm.counter(*t) {
            err(
                format!("ledger.gates.{t}.since"),
                format!(
                    "is {} but {} is {}",
                    g.since,
                    t.counter_field(),
                    fm.counter(*t)
                ),
            );
        }
        if matches!(
            g.stop_reason,
            Some(StopReason::StoppedByUser | StopReason::Blocked | StopReason::Completed)
        ) {
            err(
                format!("ledger.gates.{t}.stop_reason"),
                "stopped_by_user, blocked and completed are the stop reasons of the work, not \
                 of a gate"
                    .into(),
            );
        }
    }
    // "Approved" means no blocking objection is open, unless the decision accepted it.
    if let Some((t, true)) = fm.phase.outcome_of() {
        let open = l.open_blocking(t, None);
        if !open.is_empty() {
            err(
                "ledger.objections".into(),
                format!(
                    "the phase is {} but blocking objections of the {t} gate are open ({})",
                    fm.phase,
                    open.join(", ")
                ),
            );
        }
    }
    errors
}
