//! The ledger's operations: raising an objection, moving one along [`MOVES`], a rework, and the
//! decision that ends a capped gate. Each edits the frontmatter and asks for its body entry;
//! the law judges the change by the same table.

use super::{Ctx, Edit, Entry, admit, checked_note, set_phase, touch};
use crate::board::entry::{DECISION, DECISIONS, REWORK, REWORK_REJECTED, artifact_section};
use crate::board::frontmatter::{Frontmatter, Phase, Role, Status, Target, Verdict};
use crate::board::ledger::{
    Kind, Objection, Severity, Stage, State, StopReason, Verb, allowed_phases, find_move, holds,
    pending_gate, revising, round_of,
};
use crate::error::{Error, Flag, Hint, Result};
use crate::law::ledger::{arbiter_text, is_arbiter, may_move, valid_escalation};
use crate::law::protocol::{Command, outcome_phase};

/// What `pair object` raises.
#[derive(Debug, Clone)]
pub struct Raise {
    pub severity: Severity,
    pub regression_of: Option<String>,
    pub anchor: String,
    pub title: String,
    pub evidence: String,
    pub fix: String,
    /// `--undeclared-impact TEXT`: the coupling that puts a file outside the artifact in scope.
    pub undeclared: Option<String>,
    /// The gate and counter the anchor was checked against (before the lock).
    pub checked: Option<(Target, u32)>,
}

fn text(what: &str, t: &str) -> Result<String> {
    let t = t.trim();
    if t.is_empty() {
        return Err(Error::Usage(format!("{what} must not be empty")));
    }
    checked_note(t)
}

fn unknown(fm: &Frontmatter, id: &str) -> Error {
    let ids: Vec<&str> = fm.ledger.objections.iter().map(|o| o.id.as_str()).collect();
    Error::Usage(format!(
        "no objection {id:?} on this blackboard ({}); `pair objections BOARD` lists them",
        if ids.is_empty() {
            "it has none".to_string()
        } else {
            format!("it has {}", ids.join(", "))
        }
    ))
}

/// A reviewer who approved the round and now holds an open blocking objection on it requests
/// changes instead: its verdict on the current counter is replaced in the same write, and the
/// replacement is recorded as a review entry of the verdict's own form (so the body still says
/// what each reviewer's verdict is). `None` when there was no approval to replace.
fn replace_approval(fm: &mut Frontmatter, ctx: &Ctx, gate: Target, id: &str) -> Option<Entry> {
    let counter = fm.counter(gate);
    let a = fm.agent_mut(&ctx.agent)?;
    let r = a.review_mut(gate);
    if r.reviewed != Some(counter) || r.verdict != Some(Verdict::Approved) {
        return None;
    }
    r.verdict = Some(Verdict::ChangesRequested);
    a.status = Status::ChangesRequested;
    Some(entry(
        gate,
        super::review::review_heading(fm, ctx, gate, Verdict::ChangesRequested, true),
        format!(
            "{}'s APPROVED on {gate} {counter} is replaced by CHANGES_REQUESTED naming {id}.",
            ctx.agent
        ),
    ))
}

/// `object`: a required reviewer raises an objection on the gate under review.
pub fn object(fm: &mut Frontmatter, ctx: &Ctx, r: &Raise) -> Result<Edit> {
    admit(fm, ctx, Command::Object)?;
    let gate = crate::law::ledger::objection_gate(fm, &ctx.agent)?;
    if let Some((t, n)) = r.checked
        && (t != gate || fm.counter(gate) != n)
    {
        return Err(Error::StaleCounter {
            message: format!(
                "stale: the anchor was checked against {t} {n}, but the artifact under review is \
                 now {gate} {}; check it again",
                fm.counter(gate)
            ),
        });
    }
    let title = r.title.trim();
    if title.is_empty() || title.contains('\n') {
        return Err(Error::Usage("--title is one non-empty line".into()));
    }
    let evidence = text("--evidence", &r.evidence)?;
    let fix = text("--fix", &r.fix)?;
    let kind = match (&r.regression_of, r.severity) {
        (Some(_), Severity::Advisory) => {
            return Err(Error::Usage(
                "a regression (--regression-of) is blocking; drop --severity advisory".into(),
            ));
        }
        (Some(_), _) => Kind::Regression,
        (None, Severity::Blocking) => Kind::Blocking,
        (None, Severity::Advisory) => Kind::Advisory,
    };
    if let Some(cause) = &r.regression_of
        && let Some(why) = crate::law::ledger::regression_cause_refusal(&fm.ledger, gate, cause)
    {
        return Err(Error::protocol(format!("--regression-of {cause}: {why}")));
    }
    let id = fm.ledger.next_id(kind);
    let round = round_of(fm, gate);
    fm.ledger.objections.push(Objection {
        id: id.clone(),
        by: ctx.agent.clone(),
        gate,
        round,
        severity: kind.severity(),
        anchor: r.anchor.trim().to_string(),
        state: State::Open,
        title: title.to_string(),
        cause: r.regression_of.clone(),
    });
    let replaced = match kind.severity() {
        Severity::Blocking => replace_approval(fm, ctx, gate, &id),
        Severity::Advisory => None,
    };
    touch(fm, ctx, None);
    let mut body = format!("**{title}**\n\nAnchor: `{}`", r.anchor.trim());
    if let Some(c) = &r.undeclared {
        body.push_str(&format!(
            " (undeclared impact: {})",
            c.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    if let Some(c) = &r.regression_of {
        body.push_str(&format!("\n\nIntroduced by the resolution of {c}."));
    }
    body.push_str(&format!(
        "\n\nEvidence:\n\n{}\n\nSuggested fix:\n\n{}",
        evidence.trim_end(),
        fix.trim_end()
    ));
    Ok(Edit {
        command: Command::Object,
        summary: format!(
            "{id}: {} objection by {} on the {gate} (round {round})",
            kind.severity(),
            ctx.agent
        ),
        entries: vec![Entry::new(
            artifact_section(gate, true),
            format!(
                "Objection {id} — {gate} round {round} — {} — {} — {}",
                ctx.agent,
                kind.severity(),
                ctx.now
            ),
            body,
        )]
        .into_iter()
        .chain(replaced)
        .collect(),
    })
}

/// Move objection `id` with `verb`, per [`crate::board::ledger::MOVES`]; the gate and the state it
/// left.
fn step(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    command: Command,
    verb: Verb,
    id: &str,
) -> Result<(Target, State)> {
    admit(fm, ctx, command)?;
    let role = fm
        .agent(&ctx.agent)
        .map(|a| a.role)
        .unwrap_or(Role::Reviewer);
    let o: Objection = fm.ledger.get(id).cloned().ok_or_else(|| unknown(fm, id))?;
    let Some(m) = find_move(verb, Some(o.state)) else {
        let from: Vec<String> = crate::board::ledger::MOVES
            .iter()
            .filter(|m| m.verb == verb)
            .flat_map(|m| m.from.iter().map(|s| format!("`{s}`")))
            .collect();
        return Err(Error::protocol(format!(
            "{id} is `{}`; `pair {}` moves an objection that is {}",
            o.state,
            verb.command(),
            from.join(" or ")
        )));
    };
    if !may_move(fm, &ctx.agent, role, &ctx.consent, &o, m.who) {
        let who = match m.who {
            crate::board::ledger::Mover::Arbiter => arbiter_text(fm),
            crate::board::ledger::Mover::Raiser => format!("the reviewer who raised it ({})", o.by),
            w => w.describe().to_string(),
        };
        let message = format!(
            "`pair {}` on {id} is made by {who}; {} may not make it",
            verb.command(),
            ctx.agent
        );
        return Err(
            if m.who == crate::board::ledger::Mover::Arbiter && fm.agent(&ctx.agent).is_some() {
                Error::refused(
                    message,
                    Hint::Rerun {
                        add: vec![Flag::bare("--user-approved")],
                    },
                )
            } else {
                Error::protocol(message)
            },
        );
    }
    if !holds(m.when, fm, o.gate) {
        return Err(Error::protocol(format!(
            "`pair {}` on {id} (an objection on the {} gate) is allowed in {}. The phase is {}, \
             which is none of these, so it is refused now",
            verb.command(),
            o.gate,
            allowed_phases(m.when, o.gate),
            fm.phase
        )));
    }
    if let Some(x) = fm.ledger.get_mut(id) {
        x.state = m.to;
    }
    touch(fm, ctx, None);
    Ok((o.gate, o.state))
}

fn entry(gate: Target, heading: String, body: String) -> Entry {
    Entry::new(artifact_section(gate, true), heading, body)
}

/// The words a move's entry and summary use: the entry's heading word and the past tense.
fn words(verb: Verb) -> (&'static str, &'static str) {
    match verb {
        Verb::Resolve => ("Resolution", "resolved"),
        Verb::Challenge => ("Challenge", "challenged"),
        Verb::Accept => ("Accepted", "accepted"),
        Verb::Reopen => ("Reopened", "reopened"),
        Verb::Withdraw => ("Withdrawn", "withdrawn"),
        other => (other.command(), other.command()),
    }
}

/// A move on one objection that records one entry: take the step, then say who did it.
fn simple_move(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    command: Command,
    verb: Verb,
    id: &str,
    body: String,
) -> Result<(Target, Edit)> {
    let (gate, _) = step(fm, ctx, command, verb, id)?;
    let (heading, past) = words(verb);
    let edit = Edit {
        command,
        summary: format!("{id} {past} by {}", ctx.agent),
        entries: vec![entry(
            gate,
            format!("{heading} {id} — {} — {}", ctx.agent, ctx.now),
            body,
        )],
    };
    Ok((gate, edit))
}

/// `resolve`: the doer says how an objection was fixed, and what the fix touched. On a gate
/// that has closed (no round of it will come again) the doer names the submission that fixed
/// it (`fixed_in`: a gate and its counter, submitted after the objection was raised); while the
/// gate is being revised the fix goes with the next submission and none is named.
pub fn resolve(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    id: &str,
    resolution: &str,
    surfaces: &[String],
    fixed_in: Option<(Target, u32)>,
) -> Result<Edit> {
    let resolution = text("--resolution", resolution)?;
    let mut body = resolution.trim_end().to_string();
    if !surfaces.is_empty() {
        body.push_str(&format!("\n\nImpacted surfaces: {}", surfaces.join(", ")));
    }
    // Who may, and in which phase: the table; then what a closed gate asks of the resolution.
    let (gate, _) = step(fm, ctx, Command::Resolve, Verb::Resolve, id)?;
    let o = fm.ledger.get(id).cloned().ok_or_else(|| unknown(fm, id))?;
    let closed = Stage::Closed.holds(fm, gate);
    let revising = Stage::Revising.holds(fm, gate);
    let raised_at = crate::board::ledger::raised_at(fm, &o);
    match fixed_in {
        Some((g, n)) if !closed => {
            return Err(Error::Usage(format!(
                "--fixed-in {g}:{n}: {id} is on the {gate} gate, which has not closed (the phase \
                 is {}); a resolution made while the gate is revised goes with its next \
                 submission: leave --fixed-in out",
                fm.phase
            )));
        }
        Some((g, n)) => {
            let later = g > gate || (g == gate && n > raised_at);
            if n > fm.counter(g) || !later {
                return Err(Error::Usage(format!(
                    "--fixed-in {g}:{n}: name a submission made after {id} was raised on {gate} \
                     {raised_at}: {}",
                    submitted_since(fm, gate, raised_at)
                )));
            }
            let (noun, unit) = crate::board::entry::target_noun(g);
            body.push_str(&format!(
                "\n\nFixed in {} {unit} {n} (after the {gate} gate closed).",
                noun.to_lowercase()
            ));
        }
        None if closed && !revising => {
            return Err(Error::Usage(format!(
                "{id} is on the {gate} gate, which has closed (the phase is {}): name the \
                 submission that fixed it with --fixed-in GATE:N; {}",
                fm.phase,
                submitted_since(fm, gate, raised_at)
            )));
        }
        None => {}
    }
    let (heading, past) = words(Verb::Resolve);
    Ok(Edit {
        command: Command::Resolve,
        summary: format!("{id} {past} by {}", ctx.agent),
        entries: vec![entry(
            gate,
            format!("{heading} {id} — {} — {}", ctx.agent, ctx.now),
            body,
        )],
    })
}

/// The submissions made after `gate`'s counter `after`, in words for a refusal.
fn submitted_since(fm: &Frontmatter, gate: Target, after: u32) -> String {
    let names = crate::board::ledger::submitted_after(fm, gate, after);
    if names.is_empty() {
        "none has been made yet".to_string()
    } else {
        format!("made since: {}", names.join(", "))
    }
}

/// `challenge`: the doer disputes an objection; the arbiter rules on it.
pub fn challenge(fm: &mut Frontmatter, ctx: &Ctx, id: &str, grounds: &str) -> Result<Edit> {
    let grounds = text("--grounds", grounds)?;
    Ok(simple_move(fm, ctx, Command::Challenge, Verb::Challenge, id, grounds)?.1)
}

/// A ruling: on a challenge, or on a rework.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ruling {
    Uphold,
    Overrule,
    RejectRework,
}

impl Ruling {
    pub fn as_str(self) -> &'static str {
        match self {
            Ruling::Uphold => "uphold",
            Ruling::Overrule => "overrule",
            Ruling::RejectRework => "reject-rework",
        }
    }
}

/// `rule`: the arbiter upholds or overrules a challenge, or rejects a rework (`rule rework
/// reject-rework`) whose objections were addressable incrementally.
pub fn rule(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    id: &str,
    ruling: Ruling,
    reason: &str,
) -> Result<Edit> {
    let reason = text("--reason", reason)?;
    if ruling == Ruling::RejectRework {
        return reject_rework(fm, ctx, id, &reason);
    }
    if id == "rework" {
        return Err(Error::Usage(
            "`pair rule BOARD rework` takes the ruling reject-rework".into(),
        ));
    }
    let verb = if ruling == Ruling::Uphold {
        Verb::Uphold
    } else {
        Verb::Overrule
    };
    let (gate, _) = step(fm, ctx, Command::Rule, verb, id)?;
    let word = if ruling == Ruling::Uphold {
        "upheld"
    } else {
        "overruled"
    };
    Ok(Edit {
        command: Command::Rule,
        summary: format!("{id} {word} by {}", ctx.agent),
        entries: vec![entry(
            gate,
            format!("Ruling {id} — {word} — {} — {}", ctx.agent, ctx.now),
            reason,
        )],
    })
}

fn reject_rework(fm: &mut Frontmatter, ctx: &Ctx, id: &str, reason: &str) -> Result<Edit> {
    if id != "rework" {
        return Err(Error::Usage(format!(
            "reject-rework rules on the rework, not on an objection: `pair rule BOARD rework \
             reject-rework --reason TEXT` (not {id:?})"
        )));
    }
    admit(fm, ctx, Command::Rule)?;
    let Some(gate) = fm.phase.review_target() else {
        return Err(Error::protocol(format!(
            "a rework is rejected while its first round is under review; the phase is {}",
            fm.phase
        )));
    };
    let mut g = fm.ledger.gate(gate);
    let Some(prev) = g.reworked_from else {
        return Err(Error::protocol(format!(
            "the {gate} gate's current round is not a rework; there is nothing to reject"
        )));
    };
    if !is_arbiter(fm, &ctx.agent, &ctx.consent) {
        return Err(Error::refused(
            format!(
                "a rework is rejected by {}; {} may not",
                arbiter_text(fm),
                ctx.agent
            ),
            Hint::Rerun {
                add: vec![Flag::bare("--user-approved")],
            },
        ));
    }
    g.since = prev;
    g.reworked_from = None;
    fm.ledger.set_gate(gate, g);
    let mut back = Vec::new();
    for o in fm.ledger.objections.iter_mut() {
        if o.gate == gate && o.state == State::Superseded {
            o.state = State::Open;
            back.push(o.id.clone());
        }
    }
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Rule,
        summary: format!(
            "the {gate} rework is rejected; {} open again",
            if back.is_empty() {
                "no objection is".to_string()
            } else {
                back.join(", ") + " are"
            }
        ),
        entries: vec![Entry::new(
            DECISIONS,
            format!("{REWORK_REJECTED} — {gate} — {} — {}", ctx.agent, ctx.now),
            format!(
                "{reason}\n\nThe objections were addressable incrementally; back to open: {}.",
                if back.is_empty() {
                    "none".to_string()
                } else {
                    back.join(", ")
                }
            ),
        )],
    })
}

/// `accept`: the objecting reviewer agrees the resolution fixes it.
pub fn accept(fm: &mut Frontmatter, ctx: &Ctx, id: &str) -> Result<Edit> {
    Ok(simple_move(fm, ctx, Command::Accept, Verb::Accept, id, String::new())?.1)
}

/// `reopen`: the objecting reviewer finds the resolution does not fix it.
pub fn reopen(fm: &mut Frontmatter, ctx: &Ctx, id: &str, reason: &str) -> Result<Edit> {
    let reason = text("--reason", reason)?;
    let (gate, mut edit) = simple_move(fm, ctx, Command::Reopen, Verb::Reopen, id, reason)?;
    edit.entries.extend(replace_approval(fm, ctx, gate, id));
    Ok(edit)
}

/// `withdraw`: the objecting reviewer takes an objection back. Its seconds stay on the record
/// and hold nothing more: a seconder who still finds it raises its own (the entry says so).
pub fn withdraw(fm: &mut Frontmatter, ctx: &Ctx, id: &str, reason: &str) -> Result<Edit> {
    let mut reason = text("--reason", reason)?;
    let seconders = crate::board::ledger::second::seconders(fm, id).join(", ");
    if !seconders.is_empty() {
        reason.push_str(&format!(
            "\n\nSeconded by {seconders}: the objection is withdrawn for them too; a seconder \
             who still holds the finding raises its own (`pair object`)."
        ));
    }
    Ok(simple_move(fm, ctx, Command::Withdraw, Verb::Withdraw, id, reason)?.1)
}

/// `second`: a required reviewer seconds another reviewer's open objection (one finding, one
/// objection): it then holds it as its raiser does for its verdicts (CHANGES_REQUESTED names
/// it, APPROVED is refused while it is open). `withdraw`: the reviewer takes its second back.
/// The raiser alone still accepts, reopens or withdraws the objection.
pub fn second(fm: &mut Frontmatter, ctx: &Ctx, id: &str, withdraw: bool) -> Result<Edit> {
    use crate::board::ledger::second::{Second, second_of};
    admit(fm, ctx, Command::Second)?;
    let o: Objection = fm.ledger.get(id).cloned().ok_or_else(|| unknown(fm, id))?;
    let who = ctx.agent.clone();
    let (heading, body, summary) = if withdraw {
        let Some(by) = second_of(fm, id, &who) else {
            return Err(Error::protocol(format!(
                "{who} does not second {id}; there is no second to withdraw (`pair objections` \
                 shows who seconds what)"
            )));
        };
        if !o.state.is_unsettled() {
            return Err(Error::protocol(format!(
                "{id} is `{}` (settled); its seconds stay on the record",
                o.state
            )));
        }
        fm.seconds.retain(|s| !(s.id == id && s.by == by));
        (
            "Second-withdrawn",
            format!("{who} no longer seconds {id} ({}).", o.title),
            format!("{id}: second withdrawn by {who}"),
        )
    } else {
        if let Some(why) = crate::law::ledger::second_refusal(fm, id, &who) {
            return Err(Error::protocol(why));
        }
        fm.seconds.push(Second {
            id: id.to_string(),
            by: who.clone(),
        });
        (
            "Seconded",
            format!(
                "{who} seconds {id}, raised by {}: **{}** (anchor `{}`).",
                o.by, o.title, o.anchor
            ),
            format!("{id}: seconded by {who}"),
        )
    };
    let replaced = match (withdraw, o.severity) {
        (false, Severity::Blocking) => replace_approval(fm, ctx, o.gate, id),
        _ => None,
    };
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Second,
        summary,
        entries: vec![entry(
            o.gate,
            format!("{heading} {id} — {who} — {}", ctx.now),
            body,
        )]
        .into_iter()
        .chain(replaced)
        .collect(),
    })
}

/// What `pair decide` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Reject,
    Defer,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Reject => "reject",
            Decision::Defer => "defer",
        }
    }
}

/// `decide`: the arbiter ends a gate that reached its cap or diverged: accept it (the open
/// objections recorded as accepted risks), reject the work, or defer it with an escalation path.
pub fn decide(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    decision: Decision,
    reason: &str,
    escalation: Option<&str>,
) -> Result<Edit> {
    admit(fm, ctx, Command::Decide)?;
    let reason = text("--reason", reason)?;
    let (Phase::AwaitingDecision, Some(gate)) = (fm.phase, pending_gate(fm)) else {
        return Err(Error::protocol(format!(
            "no decision is pending: phase {} is not AWAITING_DECISION (a gate goes there when \
             its round cap is reached or it diverges)",
            fm.phase
        )));
    };
    if !is_arbiter(fm, &ctx.agent, &ctx.consent) {
        return Err(Error::refused(
            format!(
                "the decision on the {gate} gate is made by {}; {} may not make it",
                arbiter_text(fm),
                ctx.agent
            ),
            Hint::Rerun {
                add: vec![Flag::bare("--user-approved")],
            },
        ));
    }
    match (decision, escalation) {
        (Decision::Defer, None) => {
            return Err(Error::Usage(
                "a silent deferral is refused: `decide defer` names where the item goes with \
                 --escalation human, --escalation parking-lot or --escalation blocked-pending:X"
                    .into(),
            ));
        }
        (Decision::Defer, Some(e)) if !valid_escalation(e) => {
            return Err(Error::Usage(format!(
                "--escalation {e:?}: the escalation paths are human, parking-lot and \
                 blocked-pending:X (X says what it waits for)"
            )));
        }
        (Decision::Accept | Decision::Reject, Some(_)) => {
            return Err(Error::Usage(
                "--escalation goes with `decide defer` only".into(),
            ));
        }
        _ => {}
    }
    let to_state = match decision {
        Decision::Accept => Some(State::RiskAccepted),
        Decision::Defer => Some(State::Deferred),
        Decision::Reject => None,
    };
    let verb = match decision {
        Decision::Accept => Verb::DecideAccept,
        _ => Verb::DecideDefer,
    };
    let mut moved = Vec::new();
    if let Some(to) = to_state {
        for o in fm.ledger.objections.iter_mut() {
            if o.gate == gate
                && o.severity == Severity::Blocking
                && find_move(verb, Some(o.state)).is_some_and(|m| m.to == to)
            {
                o.state = to;
                moved.push(o.id.clone());
            }
        }
    }
    let from = fm.phase;
    let mut g = fm.ledger.gate(gate);
    let to = match decision {
        Decision::Accept => outcome_phase(gate, true),
        Decision::Reject => {
            g.stop_reason = Some(StopReason::Rejected);
            fm.blocked_from = None;
            Phase::Stopped
        }
        Decision::Defer => {
            g.stop_reason = Some(StopReason::Deferred);
            g.escalation = escalation.map(str::to_string);
            fm.blocked_from = Some(Phase::AwaitingDecision);
            Phase::Blocked
        }
    };
    fm.ledger.set_gate(gate, g);
    set_phase(fm, ctx, to);
    touch(
        fm,
        ctx,
        match decision {
            Decision::Accept => None,
            Decision::Reject => Some(Status::Stopped),
            Decision::Defer => Some(Status::Blocked),
        },
    );
    let list = if moved.is_empty() {
        "none".to_string()
    } else {
        moved.join(", ")
    };
    let body = match decision {
        Decision::Accept => format!("{reason}\n\nAccepted risks: {list}."),
        Decision::Reject => format!("{reason}\n\nThe work stops (stop_reason: rejected)."),
        Decision::Defer => format!(
            "Reason: {reason}\n\nEscalation: {}\n\nUnresolved: {list}",
            escalation.unwrap_or_default()
        ),
    };
    Ok(Edit {
        command: Command::Decide,
        summary: format!(
            "decision on the {gate} gate: {} ({from} → {to})",
            decision.as_str()
        ),
        entries: vec![Entry::new(
            DECISIONS,
            format!(
                "{DECISION} — {gate} — {} — {} — {}",
                decision.as_str(),
                ctx.agent,
                ctx.now
            ),
            body,
        )],
    })
}

/// `submit … --rework --reason`: restart the gate's rounds with a fresh ledger view; the old
/// view's unsettled objections are superseded (they stay on the record). Runs before the
/// submission itself.
pub fn rework(fm: &mut Frontmatter, ctx: &Ctx, gate: Target, reason: &str) -> Result<Entry> {
    let reason = text("--reason", reason)?;
    if !fm.ledger.in_use() {
        return Err(Error::Usage(
            "--rework restarts a gate's rounds on a board that uses the objection ledger; this \
             one does not (no objections, no --max-rounds)"
                .into(),
        ));
    }
    if revising(fm.phase) != Some(gate) {
        return Err(Error::protocol(format!(
            "a rework of the {gate} is submitted while the doer revises it; the phase is {}",
            fm.phase
        )));
    }
    let mut g = fm.ledger.gate(gate);
    g.reworked_from = Some(g.since);
    g.since = fm.counter(gate);
    g.open.clear();
    fm.ledger.set_gate(gate, g);
    let mut superseded = Vec::new();
    for o in fm.ledger.objections.iter_mut() {
        if o.gate == gate
            && find_move(Verb::Rework, Some(o.state)).is_some()
            && o.state != State::Superseded
        {
            o.state = State::Superseded;
            superseded.push(o.id.clone());
        }
    }
    Ok(Entry::new(
        DECISIONS,
        format!("{REWORK} — {gate} — {} — {}", ctx.agent, ctx.now),
        format!(
            "Reason: {reason}\n\nThe {gate} gate's rounds restart; superseded: {}. A reviewer \
             may refuse the rework (`pair rule BOARD rework reject-rework`) if the objections \
             were addressable incrementally.",
            if superseded.is_empty() {
                "none".to_string()
            } else {
                superseded.join(", ")
            }
        ),
    ))
}

/// The objections a verdict names (`--objections`), checked: each an open blocking objection of
/// the reviewer on the gate under review. A CHANGES_REQUESTED on a board that uses the ledger
/// names at least one, unless `--no-objection-ids`. The line to add to the verdict's note.
pub fn named(
    fm: &Frontmatter,
    ctx: &Ctx,
    verdict: Verdict,
    ids: &[String],
    no_ids: bool,
) -> Result<Option<String>> {
    let Some(gate) = fm.phase.review_target() else {
        return Ok(None);
    };
    if !ids.is_empty() && verdict != Verdict::ChangesRequested {
        return Err(Error::Usage(format!(
            "--objections goes with CHANGES_REQUESTED, not {verdict}"
        )));
    }
    if !ids.is_empty() && no_ids {
        return Err(Error::Usage(
            "--objections and --no-objection-ids say opposite things; choose one".into(),
        ));
    }
    for id in ids {
        let o = fm.ledger.get(id).ok_or_else(|| unknown(fm, id))?;
        if o.gate != gate
            || !crate::board::ledger::second::holds(fm, o, &ctx.agent)
            || o.severity != Severity::Blocking
            || !o.state.is_open()
        {
            return Err(Error::Usage(format!(
                "--objections {id}: a verdict names open blocking objections its reviewer raised \
                 or seconds (`pair second`) on the {gate} gate; {id} is {} {} by {} on the {}",
                o.state, o.severity, o.by, o.gate
            )));
        }
    }
    if verdict == Verdict::ChangesRequested && fm.ledger.in_use() && ids.is_empty() && !no_ids {
        let open = crate::board::ledger::second::open_blocking_held(fm, gate, &ctx.agent);
        return Err(Error::Usage(format!(
            "CHANGES_REQUESTED on a board that uses the objection ledger names the open blocking \
             objections it is about: --objections {}{}; for free-text-only changes pass \
             --no-objection-ids (recorded)",
            if open.is_empty() {
                "BLK-N".to_string()
            } else {
                open.join(",")
            },
            if open.is_empty() {
                " (raise one first with `pair object`)"
            } else {
                ""
            }
        )));
    }
    Ok((!ids.is_empty()).then(|| format!("Objections: {}.", ids.join(", "))))
}
