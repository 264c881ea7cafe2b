//! What `poll`'s `next` says about objections: the decision a gate awaits, the open blocking
//! ids a doer must resolve, the resolutions and challenges waiting for a reviewer.

use std::collections::BTreeMap;

use super::sole_reviewer;
use crate::board::frontmatter::{Frontmatter, Phase, Target, Verdict};
use crate::board::ledger::{Severity, Stage, State, StopReason, pending_gate, revising, round_of};
use crate::law::protocol::{Next, NextActor, Optional, Place};
use crate::text::shell_arg;

fn shell(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_arg(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn argv(command: &str, place: &Place, agent: &str, rest: &[&str]) -> Vec<String> {
    let mut v = vec!["pair".to_string(), command.to_string(), place.board.clone()];
    v.extend(rest.iter().map(|s| s.to_string()));
    v.push("--agent".into());
    v.push(agent.into());
    v
}

/// Adjust the step `decide` chose for what the ledger knows.
pub fn steer(fm: &Frontmatter, agent: &str, place: &Place, next: Next) -> Next {
    if fm.phase == Phase::AwaitingDecision {
        return decision(fm, agent, place, next);
    }
    if !fm.ledger.in_use() || !next.handoff_to.iter().any(|h| h == agent) {
        return next;
    }
    if let Some(t) = revising(fm.phase)
        && fm.doer() == Some(agent)
    {
        let open = fm.ledger.open_blocking(t, None);
        let Some(first) = open.first() else {
            return next;
        };
        let mut line = argv("resolve", place, agent, &[first]);
        line.extend(["--resolution-file".into(), "FILE".into()]);
        let mut placeholders = BTreeMap::new();
        placeholders.insert(
            "FILE".to_string(),
            format!("a file saying how {first} was fixed (Markdown; no `#` or `##` headings)"),
        );
        return Next {
            action: format!(
                "Open blocking objections on the {t}: {}. Resolve each (`{}`, with --surfaces \
                 a,b for what the fix touched) or challenge it (`pair challenge … --grounds-file \
                 FILE`) before you submit; `pair objections {} --open` lists them. Then: {}",
                open.join(", "),
                shell(&line),
                crate::text::shell_word(&place.board),
                next.action
            ),
            command: Some(line),
            choices: None,
            placeholders,
            // A resolution needs no approval: the doer acts, whatever gate the submission has.
            actor: NextActor::Doer,
            ..next
        };
    }
    let Some(t) = fm.phase.review_target() else {
        return next;
    };
    // Resolutions of this gate, and of gates that have closed (no later round would offer them).
    let mine: Vec<&str> = fm
        .ledger
        .objections
        .iter()
        .filter(|o| crate::board::handoff::holder(fm, &o.by) == agent && o.state == State::Resolved)
        .filter(|o| o.gate == t || Stage::Closed.holds(fm, o.gate))
        .map(|o| o.id.as_str())
        .collect();
    let to_rule: Vec<&str> = if sole_reviewer(fm).as_deref() == Some(agent) {
        fm.ledger
            .of_gate(t)
            .filter(|o| o.state == State::Challenged)
            .map(|o| o.id.as_str())
            .collect()
    } else {
        Vec::new()
    };
    let open = crate::board::ledger::second::open_blocking_held(fm, t, agent);
    let mut said = Vec::new();
    let mut accept_line = None;
    let mut rule_line = None;
    if let Some(first) = mine.first() {
        let line = argv("accept", place, agent, &[first]);
        // A closed gate's objection is not reopened (no round of it comes again).
        let closed = mine
            .iter()
            .any(|id| fm.ledger.get(id).is_some_and(|o| o.gate != t));
        said.push(format!(
            "Resolutions awaiting your acceptance: {} (`{}`, or `pair reopen … --reason TEXT` if \
             it is not fixed{})",
            mine.join(", "),
            shell(&line),
            if closed {
                "; one on a gate that has closed is not reopened: withdraw it instead"
            } else {
                ""
            }
        ));
        accept_line = Some(line);
    }
    if let Some(first) = to_rule.first() {
        let mut line = argv("rule", place, agent, &[first, "RULING"]);
        line.extend(["--reason".into(), "REASON".into()]);
        said.push(format!(
            "Challenges awaiting your ruling as the arbiter: {} (`{}`)",
            to_rule.join(", "),
            shell(&line)
        ));
        rule_line = Some(line);
    }
    if !open.is_empty() {
        said.push(format!(
            "Your open blocking objections (raised or seconded): {} ({})",
            open.join(", "),
            if crate::law::dissent::is_dissenter_now(fm, agent) {
                "a blocking dissent names them with --objections; none and advisory are refused \
                 while they are open"
            } else {
                "CHANGES_REQUESTED names them with --objections; APPROVED is refused while they \
                 are open"
            }
        ));
    }
    if said.is_empty() {
        return next;
    }
    let (command, choices, placeholders) = match (accept_line, rule_line) {
        (Some(l), _) => (Some(l), None, BTreeMap::new()),
        (None, Some(l)) => {
            let mut p = BTreeMap::new();
            p.insert(
                "RULING".to_string(),
                "one of: uphold (the doer must address it) or overrule (struck)".to_string(),
            );
            p.insert("REASON".to_string(), "why".to_string());
            (
                Some(l),
                Some(vec!["uphold".to_string(), "overrule".to_string()]),
                p,
            )
        }
        (None, None) => (next.command, next.choices, next.placeholders),
    };
    Next {
        actor: next.actor,
        handoff_to: next.handoff_to,
        action: format!("{}. Then: {}", said.join(". "), next.action),
        command,
        choices,
        placeholders,
        optional: next.optional,
        unable: next.unable,
    }
}

/// What an agent may settle on a gate that has closed, whether or not it is its turn (no round
/// of that gate will come again to offer it): for the doer, an open objection a later
/// submission fixed (`pair resolve … --fixed-in GATE:N`); for the reviewer who raised one, a
/// resolution to accept. `None` when there is nothing to settle.
pub fn optional(fm: &Frontmatter, agent: &str, place: &Place) -> Option<Optional> {
    if !fm.ledger.in_use() {
        return None;
    }
    let closed = |g| Stage::Closed.holds(fm, g) && !Stage::Revising.holds(fm, g);
    if fm.doer() == Some(agent) {
        let open: Vec<&crate::board::ledger::Objection> = fm
            .ledger
            .objections
            .iter()
            .filter(|o| o.state.is_open() && closed(o.gate))
            .collect();
        let first = open.first()?;
        let mut line = argv("resolve", place, agent, &[&first.id]);
        line.extend([
            "--fixed-in".into(),
            "ROUND".into(),
            "--resolution-file".into(),
            "FILE".into(),
        ]);
        let submitted = crate::board::ledger::submitted_after(
            fm,
            first.gate,
            crate::board::ledger::raised_at(fm, first),
        );
        let mut placeholders = BTreeMap::new();
        placeholders.insert(
            "ROUND".to_string(),
            format!(
                "the submission that fixed it, as GATE:N, made after it was raised (submitted: \
                 {})",
                submitted.join(", ")
            ),
        );
        placeholders.insert(
            "FILE".to_string(),
            format!(
                "a file saying how {} was fixed (Markdown; no `#` or `##` headings)",
                first.id
            ),
        );
        let ids: Vec<String> = open
            .iter()
            .map(|o| format!("{} ({}, {})", o.id, o.gate, o.severity))
            .collect();
        return Some(Optional {
            action: format!(
                "Still open on gates that have closed: {}. If a later submission fixed one, \
                 resolve it naming that submission: `{}`; otherwise leave it (its raiser may \
                 withdraw it).",
                ids.join(", "),
                shell(&line)
            ),
            command: line,
            placeholders,
        });
    }
    let resolved: Vec<&str> = fm
        .ledger
        .objections
        .iter()
        .filter(|o| {
            crate::board::handoff::holder(fm, &o.by) == agent
                && o.state == State::Resolved
                && closed(o.gate)
        })
        .map(|o| o.id.as_str())
        .collect();
    let first = resolved.first()?;
    let line = argv("accept", place, agent, &[first]);
    Some(Optional {
        action: format!(
            "Resolutions of your objections on gates that have closed await your acceptance: {} \
             (`{}`, or `pair withdraw … --reason TEXT`).",
            resolved.join(", "),
            shell(&line)
        ),
        command: line,
        placeholders: BTreeMap::new(),
    })
}

/// AWAITING_DECISION: the arbiter decides (the only required reviewer, else the user through
/// the doer).
fn decision(fm: &Frontmatter, agent: &str, place: &Place, next: Next) -> Next {
    let Some(t) = pending_gate(fm) else {
        return next;
    };
    let g = fm.ledger.gate(t);
    let why = match g.stop_reason {
        Some(StopReason::Diverging) => format!(
            "is diverging (its open blocking objections grew in two consecutive rounds: {:?})",
            g.open
        ),
        Some(StopReason::Deferred) => format!(
            "was deferred ({}) and is back for a decision",
            g.escalation.as_deref().unwrap_or("no escalation")
        ),
        _ => format!(
            "reached its round cap (round {} of max_rounds {})",
            round_of(fm, t),
            fm.ledger.max_rounds()
        ),
    };
    let open: Vec<&str> = fm
        .ledger
        .of_gate(t)
        .filter(|o| {
            o.state.is_unsettled() && o.severity == crate::board::ledger::Severity::Blocking
        })
        .map(|o| o.id.as_str())
        .collect();
    let (actor, who) = match sole_reviewer(fm) {
        Some(r) => (NextActor::Reviewer, r),
        None => (NextActor::User, fm.doer().unwrap_or("doer").to_string()),
    };
    let mut line = argv("decide", place, agent, &["DECISION"]);
    line.extend(["--reason".into(), "REASON".into()]);
    if actor == NextActor::User {
        line.push("--user-approved".into());
    }
    let mut placeholders = BTreeMap::new();
    placeholders.insert(
        "DECISION".to_string(),
        "one of: accept (approve, the open objections recorded as accepted risks) \
         or reject (stop the work); to defer instead, take the optional step"
            .to_string(),
    );
    placeholders.insert("REASON".to_string(), "why".to_string());
    // A deferral names its escalation path (a silent one is refused), so it is a command of its
    // own, complete as given once filled in: the optional step.
    let mut defer = argv("decide", place, agent, &["defer"]);
    defer.extend([
        "--reason".into(),
        "REASON".into(),
        "--escalation".into(),
        "ESCALATION".into(),
    ]);
    if actor == NextActor::User {
        defer.push("--user-approved".into());
    }
    let mut defer_placeholders = BTreeMap::new();
    defer_placeholders.insert("REASON".to_string(), "why it is deferred".to_string());
    defer_placeholders.insert(
        "ESCALATION".to_string(),
        "where the item goes: human, parking-lot or blocked-pending:X (X says what it waits for)"
            .to_string(),
    );
    let optional = Optional {
        action: format!(
            "Or defer the decision (the board is BLOCKED until the doer unblocks it): `{}`.",
            shell(&defer)
        ),
        command: defer,
        placeholders: defer_placeholders,
    };
    let asker = if actor == NextActor::User {
        "Ask the user to decide, then run"
    } else {
        "Decide as the arbiter"
    };
    Next {
        actor,
        handoff_to: vec![who],
        action: format!(
            "The {t} gate {why}; unsettled blocking objections: {}. {asker}: `{}`.",
            if open.is_empty() {
                "none".to_string()
            } else {
                open.join(", ")
            },
            shell(&line)
        ),
        command: Some(line),
        choices: Some(vec!["accept".into(), "reject".into()]),
        placeholders,
        optional: Some(optional),
        unable: None,
    }
}

/// The verdicts a reviewer may give on gate `t` as the ledger stands, each accepted as given
/// with the same flags, and those flags. Off the ledger every verdict is open. On it, a
/// reviewer with open blocking objections requests changes naming them (`--objections`; APPROVED
/// is refused while they are open, and the flag goes with no other verdict); one whose blocking
/// objections are challenged may only comment until the arbiter rules; any other reviewer
/// approves or comments, and requests changes by raising a blocking objection first.
pub fn verdict_options(fm: &Frontmatter, t: Target, agent: &str) -> (Vec<Verdict>, Vec<String>) {
    if !fm.ledger.in_use() {
        return (
            vec![
                Verdict::Approved,
                Verdict::ChangesRequested,
                Verdict::Comment,
            ],
            Vec::new(),
        );
    }
    let open = crate::board::ledger::second::open_blocking_held(fm, t, agent);
    if !open.is_empty() {
        return (
            vec![Verdict::ChangesRequested],
            vec!["--objections".into(), open.join(",")],
        );
    }
    let challenged = fm.ledger.of_gate(t).any(|o| {
        crate::board::handoff::holder(fm, &o.by) == agent
            && o.severity == Severity::Blocking
            && o.state == State::Challenged
    });
    if challenged {
        (vec![Verdict::Comment], Vec::new())
    } else {
        (vec![Verdict::Approved, Verdict::Comment], Vec::new())
    }
}
