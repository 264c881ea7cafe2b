//! What the law asks of a change to the ledger (what `validate` asks of a ledger is in
//! [`valid`]).
//!
//! [`judge`] is called by [`crate::law::judge`] for every write an agent makes, semantic or raw:
//! each objection may move only along a row of [`MOVES`] by the agent the row names, in the
//! phase it names; a gate's bookkeeping must be what the phase change implies ([`settle`]); the
//! verdicts, submissions and decisions the ledger speaks about obey its rules.

pub mod next;
pub mod valid;

use crate::board::entry::{OBJECTIONS_WAIVED, USERS_RULING};
use crate::board::frontmatter::{Frontmatter, Phase, Role, Target, Timestamp, Verdict};
use crate::board::handoff::places_of;
use crate::board::ledger::{
    Gate, Kind, Ledger, MOVES, Mover, Objection, Severity, State, StopReason, Verb, allowed_phases,
    anchor, decision_due, describe_when, holds, pending_gate, revising, round_of,
};
use crate::error::{Error, Result};
use crate::law::protocol::{Actor, Command, Transition, outcome_phase};
use crate::law::{Consent, Record};

/// Whether a command is one of the ledger's.
pub fn is_ledger_command(c: Command) -> bool {
    matches!(
        c,
        Command::Object
            | Command::Resolve
            | Command::Challenge
            | Command::Rule
            | Command::Accept
            | Command::Reopen
            | Command::Withdraw
            | Command::Decide
    )
}

/// The verbs a ledger command makes.
pub fn verbs(c: Command) -> &'static [Verb] {
    match c {
        Command::Object => &[Verb::Object],
        Command::Resolve => &[Verb::Resolve],
        Command::Challenge => &[Verb::Challenge],
        Command::Rule => &[Verb::Uphold, Verb::Overrule, Verb::RejectRework],
        Command::Accept => &[Verb::Accept],
        Command::Reopen => &[Verb::Reopen],
        Command::Withdraw => &[Verb::Withdraw],
        Command::Decide => &[Verb::DecideAccept, Verb::DecideDefer],
        _ => &[],
    }
}

/// Who runs a ledger command, read from [`MOVES`]: a reviewer raises, accepts, reopens and
/// withdraws; the doer resolves and challenges; the arbiter (a reviewer, or anyone with the
/// user's word) rules and decides.
pub fn actor(c: Command) -> Actor {
    let who = MOVES
        .iter()
        .find(|m| verbs(c).contains(&m.verb))
        .map(|m| m.who);
    match who {
        Some(Mover::Raiser) => Actor::Reviewer,
        Some(Mover::Doer) => Actor::Doer,
        _ => Actor::Any,
    }
}

/// The gate's only required reviewer, who arbitrates in a two-agent pairing: the one named
/// reviewer, or on a pool board of one review, the member who took the round
/// ([`Frontmatter::required_now`]).
pub fn sole_reviewer(fm: &Frontmatter) -> Option<String> {
    match fm.required_now().as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// Whether `id` may act as the arbiter: the only required reviewer, or an agent on the board
/// relaying the user's decision (`--user-approved`).
pub fn is_arbiter(fm: &Frontmatter, id: &str, consent: &Consent) -> bool {
    sole_reviewer(fm).as_deref() == Some(id) || (consent.user_approved && fm.agent(id).is_some())
}

/// Who the arbiter is, in words.
pub fn arbiter_text(fm: &Frontmatter) -> String {
    match sole_reviewer(fm) {
        Some(r) => {
            format!("the arbiter ({r}, the only required reviewer, or the user: --user-approved)")
        }
        None => "the user (several reviewers: run it with --user-approved once the user decided)"
            .to_string(),
    }
}

/// Whether `id` (with `role`) is the mover a row names for objection `o`.
pub fn may_move(
    fm: &Frontmatter,
    id: &str,
    role: Role,
    consent: &Consent,
    o: &Objection,
    who: Mover,
) -> bool {
    match who {
        // A dissent's objection is judged by the dissenter of the open stage, a fresh one.
        Mover::Raiser => role == Role::Reviewer && crate::law::dissent::acts_as_raiser(fm, id, o),
        Mover::Doer => role == Role::Doer,
        Mover::Arbiter => is_arbiter(fm, id, consent),
    }
}

/// The phase a completed round moves to: the round outcome, or AWAITING_DECISION when the
/// gate reached its cap or diverges (on a board that uses the ledger).
pub fn round_end(fm: &Frontmatter, t: Target, approved: bool) -> Phase {
    if approved {
        return outcome_phase(t, true);
    }
    match decision_due_at_round_end(fm, t) {
        Some(_) => Phase::AwaitingDecision,
        None => outcome_phase(t, false),
    }
}

/// For `Guard::DecisionDue`: whether the round under review, completing now with changes
/// requested, would go to a decision.
pub fn decision_due_now(fm: &Frontmatter) -> Option<StopReason> {
    decision_due_at_round_end(fm, fm.phase.review_target()?)
}

/// Whether gate `t`'s round, ending now with changes requested, goes to a decision: its open
/// blocking counts so far, with this round's added.
fn decision_due_at_round_end(fm: &Frontmatter, t: Target) -> Option<StopReason> {
    let mut open = fm.ledger.gate(t).open;
    open.push(fm.ledger.open_blocking(t, None).len() as u32);
    decision_due(fm, t, &open)
}

fn completed(old: &Frontmatter, new: &Frontmatter, t: Target) -> bool {
    old.phase.review_target() == Some(t)
        && old.phase != new.phase
        && (new.phase == outcome_phase(t, true)
            || new.phase == outcome_phase(t, false)
            || new.phase == Phase::AwaitingDecision)
}

fn from_decision(old: &Frontmatter, t: Target) -> bool {
    old.phase == Phase::AwaitingDecision && pending_gate(old) == Some(t)
}

/// A gate's bookkeeping after the change `old → new`: what the phase change implies (a round
/// completed, a round opened, a decision taken), with `since`/`reworked_from` and an explicit
/// rejection or deferral as `new` records them.
pub fn gate_expected(old: &Frontmatter, new: &Frontmatter, t: Target) -> Gate {
    let was = old.ledger.gate(t);
    let now = new.ledger.gate(t);
    let mut g = was.clone();
    g.since = now.since;
    g.reworked_from = now.reworked_from;
    if now.since != was.since {
        // A rework (or its rejection) restarts the gate's history.
        g.open.clear();
    }
    if completed(old, new, t) {
        g.open.push(new.ledger.open_blocking(t, None).len() as u32);
        g.escalation = None;
        g.stop_reason = if new.phase == outcome_phase(t, true) {
            Some(StopReason::Approved)
        } else if new.phase == Phase::AwaitingDecision
            && crate::law::dissent::cap_reached(old, new, t)
        {
            Some(StopReason::CapReached)
        } else if new.phase == Phase::AwaitingDecision {
            Some(decision_due(new, t, &g.open).unwrap_or(StopReason::CapReached))
        } else {
            None
        };
    } else if new.phase.review_target() == Some(t) && new.counter(t) != old.counter(t) {
        g.stop_reason = None;
        g.escalation = None;
    } else if from_decision(old, t) && new.phase == outcome_phase(t, true) {
        g.stop_reason = Some(StopReason::Accepted);
        g.escalation = None;
    } else if from_decision(old, t)
        && new.phase == Phase::Stopped
        && now.stop_reason == Some(StopReason::Rejected)
    {
        g.stop_reason = Some(StopReason::Rejected);
        g.escalation = None;
    } else if from_decision(old, t)
        && new.phase == Phase::Blocked
        && now.stop_reason == Some(StopReason::Deferred)
    {
        g.stop_reason = Some(StopReason::Deferred);
        g.escalation = now.escalation.clone();
    }
    g
}

/// Bring the gates' bookkeeping in line with the change `old → new` (the engine runs this after
/// every semantic edit; a raw write must already be in line).
pub fn settle(old: &Frontmatter, new: &mut Frontmatter) {
    if !new.ledger.in_use() {
        return;
    }
    for t in Target::ALL {
        let g = gate_expected(old, new, *t);
        new.ledger.set_gate(*t, g);
    }
}

fn refuse(message: impl Into<String>) -> Error {
    Error::protocol(message)
}

/// `human`, `parking-lot` or `blocked-pending:X`.
pub fn valid_escalation(e: &str) -> bool {
    e == "human"
        || e == "parking-lot"
        || e.strip_prefix("blocked-pending:")
            .is_some_and(|x| !x.trim().is_empty() && !x.contains('\n'))
}

/// What the change does to the ledger, judged: see the module's description. Records the
/// ledger's decisions (a consensus on approval, a waiver, the user's ruling) in `records`.
#[allow(clippy::too_many_arguments)]
pub fn judge(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    role: Role,
    consent: &Consent,
    transition: Option<&Transition>,
    now: Timestamp,
    records: &mut Vec<Record>,
) -> Result<()> {
    check_seconds(old, new, id, role)?;
    let touched = old.ledger != new.ledger;
    if !touched && !old.ledger.in_use() && transition.is_none() {
        return Ok(());
    }
    if old.ledger.max_rounds != new.ledger.max_rounds {
        return Err(refuse(
            "field `ledger.max_rounds` sets the workflow's round cap; it is set at `pair init \
             --max-rounds N` and changes only by a human repair (`pair write --repair --reason \
             TEXT`)",
        ));
    }
    let mut user_ruled = Vec::new();
    check_objections(old, new, id, role, consent, transition, &mut user_ruled)?;
    check_gates(old, new, id, consent, transition, &mut user_ruled)?;
    check_verdicts(old, new, id, consent, now, records)?;
    check_transition(old, new, consent, transition, now, id, records)?;
    if !user_ruled.is_empty() && sole_reviewer(old).as_deref() != Some(id) {
        records.push(Record {
            heading: format!("{USERS_RULING} — {} — {id} — {now}", user_ruled.join(", ")),
            text: format!(
                "The user made this ruling as the arbiter (`{}`).",
                consent.invocation
            ),
        });
    }
    Ok(())
}

fn check_objections(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    role: Role,
    consent: &Consent,
    transition: Option<&Transition>,
    user_ruled: &mut Vec<String>,
) -> Result<()> {
    let (was, now) = (&old.ledger.objections, &new.ledger.objections);
    if now.len() < was.len() || was.iter().zip(now).any(|(a, b)| a.id != b.id) {
        return Err(refuse(
            "field `ledger.objections`: objections are never removed or reordered; they stay on \
             the record (withdraw one with `pair withdraw`)",
        ));
    }
    for (i, (a, b)) in was.iter().zip(now).enumerate() {
        let path = format!("ledger.objections.{}", i + 1);
        let mut same = b.clone();
        same.state = a.state;
        if same != *a {
            return Err(refuse(format!(
                "field `{path}` ({}): only an objection's state changes; its id, raiser, gate, \
                 round, severity, anchor, title and cause stay as raised",
                a.id
            )));
        }
        if a.state == b.state {
            continue;
        }
        let rows: Vec<_> = MOVES
            .iter()
            .filter(|m| m.from.contains(&a.state) && m.to == b.state)
            .collect();
        if rows.is_empty() {
            return Err(refuse(format!(
                "field `{path}.state` ({}): no rule moves an objection from `{}` to `{}` (see \
                 the ledger table in docs/protocol.md)",
                a.id, a.state, b.state
            )));
        }
        let fits = |m: &&&crate::board::ledger::Move| {
            may_move(old, id, role, consent, a, m.who)
                && holds(m.when, old, a.gate)
                && verb_fits(old, new, a.gate, m.verb, transition)
        };
        match rows.iter().find(fits) {
            Some(m) => {
                if m.who == Mover::Arbiter {
                    user_ruled.push(a.id.clone());
                }
            }
            None => {
                let m = rows[0];
                return Err(refuse(format!(
                    "field `{path}.state` ({}): `{}` → `{}` is made by {} {} (`pair {}`; for \
                     this {} objection: in {}); {id} may not make it{}",
                    a.id,
                    a.state,
                    b.state,
                    if m.who == Mover::Arbiter {
                        arbiter_text(old)
                    } else {
                        m.who.describe().to_string()
                    },
                    describe_when(m.when),
                    m.verb.command(),
                    a.gate,
                    allowed_phases(m.when, a.gate),
                    if holds(m.when, old, a.gate) {
                        String::new()
                    } else {
                        format!(" in phase {}", old.phase)
                    }
                )));
            }
        }
    }
    let mut ledger = Ledger {
        objections: was.clone(),
        ..Ledger::default()
    };
    for (i, o) in now.iter().enumerate().skip(was.len()) {
        check_new(old, &ledger, o, i + 1, id, role)?;
        ledger.objections.push(o.clone());
    }
    Ok(())
}

/// The moves that only go with a particular change of the board.
fn verb_fits(
    old: &Frontmatter,
    new: &Frontmatter,
    t: Target,
    verb: Verb,
    transition: Option<&Transition>,
) -> bool {
    let (was, now) = (old.ledger.gate(t), new.ledger.gate(t));
    match verb {
        Verb::Rework => {
            matches!(transition.map(|tr| tr.command), Some(Command::Submit(a)) if a.target() == t)
                && now.since != was.since
        }
        Verb::RejectRework => was.reworked_from.is_some() && now.reworked_from.is_none(),
        Verb::DecideAccept => transition.is_some_and(|tr| tr.command == Command::Decide),
        Verb::DecideDefer => {
            new.phase == Phase::Blocked && now.stop_reason == Some(StopReason::Deferred)
        }
        _ => true,
    }
}

/// The gate an agent may raise an objection on now: its artifact must be under review, and the
/// agent a required reviewer. The one statement of that rule, for `pair object` and for a raw
/// write that adds an objection.
pub fn objection_gate(fm: &Frontmatter, agent: &str) -> Result<Target> {
    let Some(gate) = fm.phase.review_target() else {
        return Err(Error::refused(
            format!(
                "phase {} is not a review phase: objections are raised on the artifact under \
                 review",
                fm.phase
            ),
            crate::error::Hint::Run {
                command: "poll",
                args: vec!["--agent".into(), agent.to_string(), "--wait".into()],
            },
        ));
    };
    if crate::law::dissent::stage_open(fm) == Some(gate) {
        // The reviewers passed: only the dissenter the stage waits for raises objections now.
        return match crate::law::dissent::unfit(fm, agent, gate) {
            None => Ok(gate),
            Some(why) => Err(refuse(format!(
                "the {gate} gate waits for its dissent: {why}"
            ))),
        };
    }
    if !fm.is_required_now(agent) {
        return Err(refuse(format!(
            "{agent:?} is not a required reviewer; only required reviewers raise objections (a \
             reviewer the user named joins them with `pair register --required`)"
        )));
    }
    Ok(gate)
}

/// Why `cause` cannot be the cause of a regression on `gate` (`None`: it can). A regression is
/// tied to a resolved (or accepted) objection of its gate whose resolution caused it.
pub fn regression_cause_refusal(ledger: &Ledger, gate: Target, cause: &str) -> Option<String> {
    let ok = ledger
        .of_gate(gate)
        .any(|o| o.id == cause && matches!(o.state, State::Resolved | State::Accepted));
    (!ok).then(|| {
        format!(
            "a regression is tied to a resolved (or accepted) objection of the {gate} gate whose \
             resolution caused it; {cause} is not one"
        )
    })
}

/// What the change does to `seconds`: a reviewer adds only its own second, of another
/// reviewer's open objection on the gate under review, as a required reviewer of it (who may
/// raise objections there: [`objection_gate`]); and removes only its own, while the objection is
/// still to be settled. Nobody else changes a second.
pub fn check_seconds(old: &Frontmatter, new: &Frontmatter, id: &str, role: Role) -> Result<()> {
    use crate::board::ledger::second::FIELD;
    if old.seconds == new.seconds {
        return Ok(());
    }
    let mine = places_of(old, id);
    for s in old.seconds.iter().filter(|s| !new.seconds.contains(s)) {
        if !mine.contains(&s.by) {
            return Err(refuse(format!(
                "field `{FIELD}`: {}'s second of {} is withdrawn only by {} (`pair second … \
                 --withdraw`); {id} may not withdraw it",
                s.by, s.id, s.by
            )));
        }
        if !old
            .ledger
            .get(&s.id)
            .is_some_and(|o| o.state.is_unsettled())
        {
            return Err(refuse(format!(
                "field `{FIELD}`: {} is settled; its seconds stay on the record",
                s.id
            )));
        }
    }
    for s in new.seconds.iter().filter(|s| !old.seconds.contains(s)) {
        if s.by != id || role != Role::Reviewer {
            return Err(refuse(format!(
                "field `{FIELD}` ({}): a second is added by a required reviewer under its own \
                 id (`pair second`); {id} may not add one as {:?}",
                s.id, s.by
            )));
        }
        if let Some(why) = second_refusal(old, &s.id, id) {
            return Err(refuse(format!("field `{FIELD}`: {why}")));
        }
    }
    Ok(())
}

/// Why `agent` may not second objection `oid` now (`None`: it may). The one statement of the
/// rule, for `pair second` and for a raw write that adds a second.
pub fn second_refusal(fm: &Frontmatter, oid: &str, agent: &str) -> Option<String> {
    let Some(o) = fm.ledger.get(oid) else {
        return Some(format!("no objection {oid:?} on this blackboard to second"));
    };
    if fm.agent(agent).is_some_and(|a| a.role == Role::Doer) {
        return Some(format!(
            "{agent} is the doer; a reviewer seconds another reviewer's objection"
        ));
    }
    if places_of(fm, agent).contains(&o.by) {
        return Some(format!(
            "{oid} is {agent}'s own objection (raised by {}); a reviewer seconds another \
             reviewer's",
            o.by
        ));
    }
    if let Some(by) = crate::board::ledger::second::second_of(fm, oid, agent) {
        return Some(format!(
            "{by} already seconds {oid}; a reviewer seconds it once"
        ));
    }
    if !o.state.is_open() {
        return Some(format!(
            "{oid} is `{}`; only an open objection is seconded (raise your own with `pair \
             object` if the finding stands)",
            o.state
        ));
    }
    match objection_gate(fm, agent) {
        Err(e) => Some(format!("{oid} cannot be seconded now: {e}")),
        Ok(gate) if gate != o.gate => Some(format!(
            "{oid} is on the {} gate; a second is given while its gate is under review, and \
             the phase is {}",
            o.gate, fm.phase
        )),
        Ok(_) => None,
    }
}

/// A new objection: raised by a required reviewer, in a review phase of its gate, with the next
/// id of its kind, in the current round, with an anchor of an accepted form.
fn check_new(
    old: &Frontmatter,
    before: &Ledger,
    o: &Objection,
    n: usize,
    id: &str,
    role: Role,
) -> Result<()> {
    let path = format!("ledger.objections.{n}");
    if o.by != id || role != Role::Reviewer {
        return Err(refuse(format!(
            "field `{path}` ({}): an objection is raised by a required reviewer under its own \
             id (`pair object`); {id} may not raise one as {:?}",
            o.id, o.by
        )));
    }
    match objection_gate(old, id) {
        Err(e) => return Err(refuse(format!("field `{path}` ({}): {e}", o.id))),
        Ok(gate) if gate != o.gate => {
            return Err(refuse(format!(
                "field `{path}` ({}): an objection to the {} is raised while it is under review; \
                 the phase is {}",
                o.id, o.gate, old.phase
            )));
        }
        Ok(_) => {}
    }
    let Some((kind, _)) = Kind::parse_id(&o.id) else {
        return Err(refuse(format!(
            "field `{path}.id`: {:?} is not an objection id (BLK-N, ADV-N or REG-N)",
            o.id
        )));
    };
    let want = before.next_id(kind);
    if o.id != want {
        return Err(refuse(format!(
            "field `{path}.id`: the next {} id is {want}, not {}",
            kind.prefix(),
            o.id
        )));
    }
    if o.severity != kind.severity() || o.state != State::Open {
        return Err(refuse(format!(
            "field `{path}`: {} is raised `open` with severity `{}`",
            o.id,
            kind.severity()
        )));
    }
    let round = round_of(old, o.gate);
    if o.round != round {
        return Err(refuse(format!(
            "field `{path}.round`: {} is raised in round {round} of the {} gate, not {}",
            o.id, o.gate, o.round
        )));
    }
    match (kind, &o.cause) {
        (Kind::Regression, Some(c)) => {
            if let Some(why) = regression_cause_refusal(before, o.gate, c) {
                return Err(refuse(format!("field `{path}.cause`: {why}")));
            }
        }
        (Kind::Regression, None) => {
            return Err(refuse(format!(
                "field `{path}.cause`: {} is a regression and names its cause (--regression-of)",
                o.id
            )));
        }
        (_, Some(_)) => {
            return Err(refuse(format!(
                "field `{path}.cause`: only a regression (REG-N) names a cause"
            )));
        }
        (_, None) => {}
    }
    anchor::parse(&o.anchor).map_err(|e| refuse(format!("field `{path}.anchor`: {e}")))?;
    if o.title.trim().is_empty() || o.title.contains('\n') {
        return Err(refuse(format!(
            "field `{path}.title`: a title is one non-empty line"
        )));
    }
    Ok(())
}

fn check_gates(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    consent: &Consent,
    transition: Option<&Transition>,
    user_ruled: &mut Vec<String>,
) -> Result<()> {
    if !new.ledger.in_use() {
        if old.ledger.gates != new.ledger.gates {
            return Err(refuse(
                "field `ledger.gates` changes only on a board that uses the ledger",
            ));
        }
        return Ok(());
    }
    for t in Target::ALL.iter().copied() {
        let (was, now) = (old.ledger.gate(t), new.ledger.gate(t));
        let want = gate_expected(old, new, t);
        if now != want {
            return Err(refuse(format!(
                "field `ledger.gates.{t}`: after this change it must read {} (the rounds, open \
                 counts and stop reason follow the phase), not {}",
                gate_text(&want),
                gate_text(&now)
            )));
        }
        if now.since != was.since || now.reworked_from != was.reworked_from {
            let rework = matches!(transition.map(|tr| tr.command), Some(Command::Submit(a)) if a.target() == t)
                && now.since == old.counter(t)
                && now.reworked_from == Some(was.since);
            let rejected = was.reworked_from == Some(now.since)
                && now.reworked_from.is_none()
                && transition.is_none()
                && old.phase.review_target() == Some(t)
                && is_arbiter(old, id, consent);
            if !(rework || rejected) {
                return Err(refuse(format!(
                    "field `ledger.gates.{t}.since`: it moves only with a rework (`pair submit … \
                     --rework --reason TEXT`) or the arbiter's rejection of one (`pair rule \
                     BOARD rework reject-rework`)"
                )));
            }
            if rejected {
                user_ruled.push(format!("rework of the {t}"));
            }
        }
        let decided = now.stop_reason != was.stop_reason
            && matches!(
                now.stop_reason,
                Some(StopReason::Rejected | StopReason::Deferred | StopReason::Accepted)
            );
        if decided {
            if !is_arbiter(old, id, consent) {
                return Err(refuse(format!(
                    "the decision on the {t} gate is made by {}; {id} may not make it",
                    arbiter_text(old)
                )));
            }
            user_ruled.push(format!("decision on the {t}"));
            if now.stop_reason == Some(StopReason::Deferred)
                && !now.escalation.as_deref().is_some_and(valid_escalation)
            {
                return Err(refuse(format!(
                    "field `ledger.gates.{t}.escalation`: a deferral names its escalation path \
                     (human, parking-lot or blocked-pending:X); a silent deferral is refused"
                )));
            }
            let unsettled: Vec<&str> = new
                .ledger
                .of_gate(t)
                .filter(|o| {
                    o.severity == Severity::Blocking
                        && matches!(o.state, State::Open | State::Reopened | State::Challenged)
                })
                .map(|o| o.id.as_str())
                .collect();
            if now.stop_reason != Some(StopReason::Rejected) && !unsettled.is_empty() {
                return Err(refuse(format!(
                    "field `ledger.objections`: the decision settles every open blocking \
                     objection of the {t} gate ({}): accepted as risks, or deferred",
                    unsettled.join(", ")
                )));
            }
        }
    }
    Ok(())
}

fn gate_text(g: &Gate) -> String {
    format!(
        "since {}, stop_reason {}, open {:?}",
        g.since,
        g.stop_reason.map_or("null".to_string(), |r| r.to_string()),
        g.open
    )
}

/// A verdict APPROVED needs none of the reviewer's blocking objections open on the gate; a
/// CHANGES_REQUESTED on a ledger board needs one (or `--no-objection-ids`, recorded).
fn check_verdicts(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    consent: &Consent,
    now: Timestamp,
    records: &mut Vec<Record>,
) -> Result<()> {
    let Some(t) = old.phase.review_target() else {
        return Ok(());
    };
    let (Some(a), Some(b)) = (old.agent(id), new.agent(id)) else {
        return Ok(());
    };
    let (was, is) = (a.review(t), b.review(t));
    if was == is || is.reviewed != Some(new.counter(t)) {
        return approvals_stand(old, new, t, id);
    }
    let mine = places_of(new, id);
    // What the reviewer holds: the objections it raised, and those it seconds.
    let open = crate::board::ledger::second::open_blocking_held(new, t, id);
    let challenged: Vec<&str> = new
        .ledger
        .of_gate(t)
        .filter(|o| {
            mine.contains(&o.by) && o.severity == Severity::Blocking && o.state == State::Challenged
        })
        .map(|o| o.id.as_str())
        .collect();
    match is.verdict {
        Some(Verdict::Approved) if !challenged.is_empty() => Err(Error::refused(
            format!(
                "verdict APPROVED is refused: {id}'s blocking objections on the {t} gate are \
                 challenged and not yet ruled on ({}); approving would end the gate with the \
                 dispute undecided. The arbiter rules first (`pair rule BOARD BLK-N \
                 uphold|overrule --reason TEXT`), or {id} withdraws them (`pair withdraw`)",
                challenged.join(", ")
            ),
            crate::error::Hint::Run {
                command: "objections",
                args: vec!["--open".into()],
            },
        )),
        Some(Verdict::Approved) if !open.is_empty() => Err(Error::refused(
            format!(
                "verdict APPROVED is refused: {id} has open blocking objections on the {t} gate \
                 ({}); accept their resolutions (`pair accept`), or withdraw them (`pair \
                 withdraw`; a second: `pair second … --withdraw`), or request changes naming \
                 them",
                open.join(", ")
            ),
            crate::error::Hint::Run {
                command: "objections",
                args: vec!["--open".into()],
            },
        )),
        Some(Verdict::ChangesRequested) if new.ledger.in_use() && open.is_empty() => {
            if consent.no_objection_ids {
                records.push(Record {
                    heading: format!(
                        "Changes requested without objection ids — {t} — {id} — {now}"
                    ),
                    text: format!(
                        "{id} requested changes on {t} {} without naming an open blocking \
                         objection (--no-objection-ids).",
                        new.counter(t)
                    ),
                });
                Ok(())
            } else {
                Err(refuse(format!(
                    "verdict CHANGES_REQUESTED is refused: on a board that uses the ledger it \
                     names at least one open blocking objection {id} raised or seconds on the \
                     {t} gate, and {id} has none. Raise one (`pair object … --severity \
                     blocking`), or second another reviewer's (`pair second BOARD BLK-N`), then \
                     give the verdict with --objections BLK-N; or, for free-text-only changes, pass \
                     --no-objection-ids (recorded)"
                )))
            }
        }
        _ => Ok(()),
    }
}

/// While the round is open, a reviewer whose current verdict is APPROVED has no open blocking
/// objection on the gate: raising or reopening one replaces that verdict in the same write
/// (`pair object`, `pair reopen` do), and another agent's move cannot reopen one under it.
fn approvals_stand(old: &Frontmatter, new: &Frontmatter, t: Target, writer: &str) -> Result<()> {
    if new.phase.review_target() != Some(t) {
        return Ok(());
    }
    for (rid, agent) in &new.agents {
        let r = agent.review(t);
        if r.reviewed != Some(new.counter(t)) || r.verdict != Some(Verdict::Approved) {
            continue;
        }
        let open = new.ledger.open_blocking(t, Some(&places_of(new, rid)));
        if open.is_empty() || old.ledger.open_blocking(t, Some(&places_of(old, rid))) == open {
            continue;
        }
        return Err(refuse(if rid == writer {
            format!(
                "{rid} approved {t} {}; an open blocking objection of {rid} ({}) replaces that \
                 verdict with CHANGES_REQUESTED in the same write (`pair object` and `pair \
                 reopen` do)",
                new.counter(t),
                open.join(", ")
            )
        } else {
            format!(
                "{rid} approved {t} {}, so its objections ({}) cannot be opened under that \
                 verdict by {writer}; rule once the round has completed",
                new.counter(t),
                open.join(", ")
            )
        }));
    }
    Ok(())
}

/// The phase changes the ledger speaks about: the round cap and divergence, a submission that
/// leaves blocking objections open, the consensus of advisory notes on approval.
fn check_transition(
    old: &Frontmatter,
    new: &Frontmatter,
    consent: &Consent,
    transition: Option<&Transition>,
    now: Timestamp,
    id: &str,
    records: &mut Vec<Record>,
) -> Result<()> {
    let Some(tr) = transition else {
        return Ok(());
    };
    if let Some(t) = old.phase.review_target()
        && new.phase == Phase::AwaitingDecision
    {
        let open = new.ledger.gate(t).open;
        let dissent_cap = crate::law::dissent::cap_reached(old, new, t);
        let Some(why) = decision_due(new, t, &open)
            .filter(|_| !dissent_cap)
            .or(dissent_cap.then_some(StopReason::CapReached))
        else {
            return Err(refuse(format!(
                "field `phase`: AWAITING_DECISION follows a {t} round only when the gate reached \
                 its cap (max_rounds {}) or diverges, on a board that uses the ledger",
                new.ledger.max_rounds()
            )));
        };
        // The reason the gate stops is recorded with the round that stopped it.
        let unsettled: Vec<&str> = new
            .ledger
            .of_gate(t)
            .filter(|o| o.severity == Severity::Blocking && o.state.is_unsettled())
            .map(|o| o.id.as_str())
            .collect();
        records.push(Record {
            heading: format!("Decision needed — {t} — {why} — {now}"),
            text: format!(
                "{} Unsettled blocking objections: {}. The decision (`pair decide accept|reject|defer`) \
                 is made by {}.",
                match why {
                    _ if dissent_cap => format!(
                        "Dissent round {} of the {t} gate was blocking; a gate has {} dissent \
                         rounds.",
                        crate::law::dissent::rounds_on(new, t),
                        crate::law::dissent::MAX_ROUNDS
                    ),
                    StopReason::Diverging => format!(
                        "The {t} gate's open blocking objections grew in two consecutive rounds \
                         ({open:?})."
                    ),
                    _ => format!(
                        "Round {} of the {t} gate completed with changes requested; max_rounds \
                         is {}.",
                        round_of(new, t),
                        new.ledger.max_rounds()
                    ),
                },
                if unsettled.is_empty() {
                    "none".to_string()
                } else {
                    unsettled.join(", ")
                },
                arbiter_text(new)
            ),
        });
    }
    if let Some(t) = old.phase.review_target()
        && tr.command == Command::Verdict
        && new.phase == outcome_phase(t, false)
        && new.ledger.in_use()
    {
        let open = new.ledger.gate(t).open;
        if let Some(why) = decision_due(new, t, &open) {
            return Err(refuse(format!(
                "field `phase`: the {t} round completes with changes requested and the gate \
                 {}: the phase goes to AWAITING_DECISION, not {}",
                match why {
                    StopReason::Diverging => "is diverging".to_string(),
                    _ => format!("reached its cap (max_rounds {})", new.ledger.max_rounds()),
                },
                new.phase
            )));
        }
    }
    if let Some(t) = revising(old.phase)
        && matches!(tr.command, Command::Submit(a) if a.target() == t)
    {
        let open = new.ledger.open_blocking(t, None);
        if !open.is_empty() {
            match &consent.waive {
                Some(reason) => records.push(Record {
                    heading: format!("{OBJECTIONS_WAIVED} — {t} — {id} — {now}"),
                    text: format!(
                        "Submitted with blocking objections neither resolved nor challenged: {}.\n\nReason: {}",
                        open.join(", "),
                        reason.split_whitespace().collect::<Vec<_>>().join(" ")
                    ),
                }),
                None => {
                    return Err(Error::refused(
                        format!(
                            "the {t} gate has open blocking objections ({}): resolve or \
                             challenge each before submitting (`pair resolve`, `pair \
                             challenge`), or pass --waive REASON if the user waived them",
                            open.join(", ")
                        ),
                        crate::error::Hint::Run {
                            command: "objections",
                            args: vec!["--open".into()],
                        },
                    ));
                }
            }
        }
    }
    // Advisory notes are not lost: on approval they are collected into one consensus entry.
    for t in Target::ALL.iter().copied() {
        if new.phase != outcome_phase(t, true) || old.phase == new.phase {
            continue;
        }
        let notes: Vec<&Objection> = new
            .ledger
            .of_gate(t)
            .filter(|o| o.severity == Severity::Advisory)
            .collect();
        let risks: Vec<&Objection> = new
            .ledger
            .of_gate(t)
            .filter(|o| o.state == State::RiskAccepted)
            .collect();
        let dissent = new.dissent_required(t);
        if notes.is_empty() && risks.is_empty() && !dissent {
            continue;
        }
        let line = |o: &&Objection| {
            format!(
                "- {} ({}, {}, round {}, `{}`): {}",
                o.id, o.by, o.state, o.round, o.anchor, o.title
            )
        };
        let mut text = format!("The {t} gate closed after {} round(s).", round_of(new, t));
        if dissent {
            text.push_str(&format!(
                " Dissent rounds: {}.",
                crate::law::dissent::rounds_on(new, t)
            ));
        }
        if !notes.is_empty() {
            text.push_str("\n\nAdvisory notes:\n\n");
            text.push_str(&notes.iter().map(line).collect::<Vec<_>>().join("\n"));
        }
        if !risks.is_empty() {
            text.push_str("\n\nAccepted risks (blocking objections accepted by decision):\n\n");
            text.push_str(&risks.iter().map(line).collect::<Vec<_>>().join("\n"));
        }
        records.push(Record {
            heading: format!("Consensus — {t} — {now}"),
            text,
        });
    }
    Ok(())
}
