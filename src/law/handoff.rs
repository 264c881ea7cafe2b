//! The handoff's rules (see [`crate::board::handoff`] for its data): a role changes hands only
//! by an explicit handoff the incoming agent acknowledges; until then the outgoing agent holds
//! it, after it the incoming one does. A handoff in the middle of a review cycle
//! ([`MID_CYCLE`]) needs the user's approval.
//!
//! The rules are data: [`RULES`] is read by [`judge`] (every write, semantic or raw) and by the
//! documentation test that keeps docs/protocol.md's table of them in step; [`MID_CYCLE`] by the
//! law, `pair handoff`'s refusal and docs/spec-reading.md.

use crate::board::frontmatter::{Frontmatter, Role, Timestamp};
use crate::board::handoff::{self, Handoff, State};
use crate::error::{Error, Hint, Result};
use crate::law::protocol::Command;

/// One rule over a write's change of the handoffs.
pub struct Rule {
    /// The rule's name, as docs/protocol.md lists it.
    pub name: &'static str,
    /// What it says, one sentence.
    pub says: &'static str,
}

/// Every rule of the handoff, in the order [`judge`] checks them.
pub const RULES: &[Rule] = &[
    Rule {
        name: "incoming-waits",
        says: "an agent a role is offered to writes nothing but its acknowledgement until it \
               acknowledges: the role is still the outgoing agent's",
    },
    Rule {
        name: "outgoing-leaves",
        says: "an agent that handed its role over (acknowledged) changes no frontmatter field \
               any more: the role is its successor's",
    },
    Rule {
        name: "offer",
        says: "a handoff is offered by the agent holding the role (the doer, or a named \
               required reviewer) to an agent not on the board, while no other is pending",
    },
    Rule {
        name: "mid-cycle",
        says: "a handoff offered in the middle of a review cycle (the mid-cycle table) needs \
               the user's approval (--user-approved)",
    },
    Rule {
        name: "blocked",
        says: "a handoff is offered, withdrawn and acknowledged on a BLOCKED board too (a board \
               waiting on a person is where a doer is replaced), judged mid-cycle by the phase \
               `unblock` returns to; every other terminal phase refuses it",
    },
    Rule {
        name: "withdraw",
        says: "a pending handoff is withdrawn only by the agent that offered it",
    },
    Rule {
        name: "acknowledge",
        says: "a pending handoff is acknowledged only by its incoming agent, in the write that \
               moves the role: the incoming agent in it, the outgoing one out of it",
    },
    Rule {
        name: "kept",
        says: "an acknowledged handoff stays on the record as it is",
    },
];

/// When a handoff is in the middle of a review cycle, for the role handed over.
pub struct MidCycle {
    pub role: Role,
    /// The case, in words (docs/spec-reading.md lists them).
    pub when: &'static str,
    holds: fn(&Frontmatter, &str) -> bool,
}

/// Every case of "the middle of a review cycle", per role.
pub const MID_CYCLE: &[MidCycle] = &[
    MidCycle {
        role: Role::Doer,
        when: "a submission waits for verdicts (a review phase: *_SUBMITTED, REVIEWING_*, \
               FOLLOWUP_REVIEW)",
        holds: |fm, _| fm.phase.is_reviewable(),
    },
    MidCycle {
        role: Role::Doer,
        when: "changes were requested and the doer has not resubmitted (a *_CHANGES_REQUESTED \
               phase)",
        holds: |fm, _| fm.phase.outcome_of().is_some_and(|(_, approved)| !approved),
    },
    MidCycle {
        role: Role::Reviewer,
        when: "a submission waits for verdicts and the reviewer is required in its round (its \
               verdict is due, or, given, is given again by the incoming agent)",
        holds: |fm, id| {
            fm.phase
                .review_target()
                .is_some_and(|t| fm.round_reviewers(t).iter().any(|r| r == id))
        },
    },
];

/// The case of [`MID_CYCLE`] a handoff of `role` by `id` would interrupt now, if any. On a
/// BLOCKED board the cycle is the one `unblock` returns to ([`cycle_board`]).
pub fn mid_cycle(fm: &Frontmatter, role: Role, id: &str) -> Option<&'static MidCycle> {
    let fm = cycle_board(fm);
    MID_CYCLE
        .iter()
        .find(|m| m.role == role && (m.holds)(&fm, id))
}

/// The board as its review cycle stands: itself, or, when BLOCKED, the board in the phase
/// `unblock` returns to (a block pauses the cycle; it does not end it).
pub fn cycle_board(fm: &Frontmatter) -> std::borrow::Cow<'_, Frontmatter> {
    match fm.blocked_from {
        Some(p) if fm.phase == crate::board::frontmatter::Phase::Blocked => {
            let mut paused = fm.clone();
            paused.phase = p;
            std::borrow::Cow::Owned(paused)
        }
        _ => std::borrow::Cow::Borrowed(fm),
    }
}

/// The role `id` holds, the one a handoff by it hands over: the doer's, or a named required
/// reviewer's place (a pool member's review is no place of its own).
pub fn role_held(fm: &Frontmatter, id: &str) -> Option<Role> {
    if fm.doer() == Some(id) {
        Some(Role::Doer)
    } else if fm.required_reviewers.iter().any(|r| r == id) && fm.agent(id).is_some() {
        Some(Role::Reviewer)
    } else {
        None
    }
}

/// The pending handoff, when it can still be acknowledged in the board's phase (the table of
/// [`crate::law::protocol::TERMINAL_ALLOWS`]: on a blocked board yes, on a finished one no:
/// there is no role left to take, the offer is moot). `next`, `poll`, `status` and a project's
/// `next` speak of this one only.
pub fn live_pending(fm: &Frontmatter) -> Option<&Handoff> {
    handoff::pending(fm)
        .filter(|_| crate::law::protocol::terminal_allows(fm.phase, Command::Acknowledge))
}

/// The live pending handoff offered to `id` ([`live_pending`]).
pub fn offered_to<'a>(fm: &'a Frontmatter, id: &str) -> Option<&'a Handoff> {
    live_pending(fm).filter(|h| h.to == id)
}

/// The live pending handoff `id` offered: its role waits for the incoming agent's
/// acknowledgement (or `id`'s withdrawal), so `id` is not offered the role's steps.
pub fn offered_by<'a>(fm: &'a Frontmatter, id: &str) -> Option<&'a Handoff> {
    live_pending(fm).filter(|h| h.from == id)
}

/// The acknowledgement's command line, after `pair` and the board.
pub fn acknowledge_hint(id: &str) -> Hint {
    Hint::Run {
        command: "acknowledge",
        args: vec!["--agent".into(), id.into()],
    }
}

fn waiting(h: &Handoff) -> Error {
    Error::refused(
        format!(
            "{} hands the {} role over to you, but you have not acknowledged it: the role is \
             still {}'s, and your writes in it are refused until you take it with `pair \
             acknowledge --agent {}` (read `pair brief --for {} --agent {}` first)",
            h.from, h.role, h.from, h.to, h.role, h.to
        ),
        acknowledge_hint(&h.to),
    )
}

fn gone(fm: &Frontmatter, h: &Handoff) -> Error {
    Error::protocol(format!(
        "{} handed the {} role over to {} (acknowledged): {} no longer holds it, and writes in \
         it are {}'s now",
        h.from,
        h.role,
        h.to,
        h.from,
        handoff::holder(fm, &h.from)
    ))
}

/// Whether `id` may run `command` as far as the handoffs say: the incoming agent of a pending
/// handoff runs only `acknowledge` (and notes); an agent that handed its role over runs nothing
/// but notes; only the incoming agent acknowledges. Commands call it first ([`super::admit`]).
pub fn admit(fm: &Frontmatter, id: &str, command: Command) -> Result<()> {
    if command == Command::Note {
        return Ok(());
    }
    if let Some(h) = handoff::pending_to(fm, id) {
        return if command == Command::Acknowledge {
            Ok(())
        } else {
            Err(waiting(h))
        };
    }
    if let Some(h) = handoff::handed_away(fm, id)
        && role_held(fm, id).is_none()
    {
        return Err(gone(fm, h));
    }
    if command == Command::Acknowledge {
        return Err(Error::refused(
            match handoff::pending(fm) {
                Some(h) => format!(
                    "the pending handoff is {}'s {} role to {}, not to {id}; only its incoming \
                     agent acknowledges it",
                    h.from, h.role, h.to
                ),
                None => format!("no handoff is offered to {id}: nothing to acknowledge"),
            },
            Hint::Run {
                command: "poll",
                args: vec!["--agent".into(), id.into()],
            },
        ));
    }
    Ok(())
}

/// What a write does to the handoffs.
enum Change<'a> {
    None,
    Offer(&'a Handoff),
    Withdraw(&'a Handoff),
    Acknowledge(&'a Handoff),
    Other,
}

fn change<'a>(old: &'a Frontmatter, new: &'a Frontmatter) -> Change<'a> {
    let (o, n) = (&old.handoffs, &new.handoffs);
    if o == n {
        return Change::None;
    }
    if n.len() == o.len() + 1 && n[..o.len()] == o[..] && n[o.len()].state == State::Pending {
        return Change::Offer(&n[o.len()]);
    }
    if o.len() == n.len() + 1 && o[..n.len()] == n[..] && o[n.len()].state == State::Pending {
        return Change::Withdraw(&o[n.len()]);
    }
    if let (Some(a), Some(b)) = (o.last(), n.last())
        && o.len() == n.len()
        && o[..o.len() - 1] == n[..n.len() - 1]
        && a.state == State::Pending
        && b.state == State::Acknowledged
        && (&a.role, &a.from, &a.to) == (&b.role, &b.from, &b.to)
    {
        return Change::Acknowledge(a);
    }
    Change::Other
}

/// Judge a write by agent `id` against [`RULES`]. For an acknowledgement, the answer is the
/// board as the handoff leaves it ([`handoff::acknowledged`]): the rest of the law judges the
/// write's other changes against that board, so the role moves only this way.
pub fn judge(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    user_approved: bool,
    now: Timestamp,
) -> Result<Option<Frontmatter>> {
    // The writer's own `last_seen` moves with every write, a note included: no role's field.
    let moved = !same_but_own_last_seen(old, new, id);
    let change = change(old, new);
    // incoming-waits
    if let Some(h) = handoff::pending_to(old, id)
        && moved
        && !matches!(change, Change::Acknowledge(_))
    {
        return Err(waiting(h));
    }
    // outgoing-leaves
    if let Some(h) = handoff::handed_away(old, id)
        && moved
        && role_held(old, id).is_none()
    {
        return Err(gone(old, h));
    }
    match change {
        Change::None => Ok(None),
        Change::Offer(h) => {
            offer(old, h, id, user_approved)?;
            Ok(None)
        }
        Change::Withdraw(h) if h.from == id => Ok(None),
        Change::Withdraw(h) => Err(Error::protocol(format!(
            "field `{}`: the pending handoff of {}'s {} role is withdrawn only by {}",
            handoff::FIELD,
            h.from,
            h.role,
            h.from
        ))),
        Change::Acknowledge(h) if h.to == id => Ok(handoff::acknowledged(old, now)),
        Change::Acknowledge(h) => Err(Error::protocol(format!(
            "field `{}`: the handoff of {}'s {} role is acknowledged only by {}, its incoming \
             agent (`pair acknowledge --agent {}`)",
            handoff::FIELD,
            h.from,
            h.role,
            h.to,
            h.to
        ))),
        Change::Other => Err(Error::protocol(format!(
            "field `{}` changed in a way no handoff does: a handoff is offered (one pending line \
             added), withdrawn (the pending line removed) or acknowledged (the pending line \
             acknowledged), and an acknowledged one stays as it is; use `pair handoff` and \
             `pair acknowledge`",
            handoff::FIELD
        ))),
    }
}

/// Whether `new` differs from `old` at most in `id`'s own `last_seen`.
fn same_but_own_last_seen(old: &Frontmatter, new: &Frontmatter, id: &str) -> bool {
    let mut old = old.clone();
    if let (Some(a), Some(b)) = (old.agent_mut(id), new.agent(id)) {
        a.last_seen = b.last_seen;
    }
    old == *new
}

fn offer(old: &Frontmatter, h: &Handoff, id: &str, user_approved: bool) -> Result<()> {
    if h.from != id {
        return Err(Error::protocol(format!(
            "field `{}`: a handoff of {}'s role is offered only by {} itself",
            handoff::FIELD,
            h.from,
            h.from
        )));
    }
    match check_offer(old, id, &h.to, user_approved)? {
        r if r == h.role => Ok(()),
        r => Err(Error::protocol(format!(
            "field `{}`: {id} holds the {r} role, not the {} role the handoff names",
            handoff::FIELD,
            h.role
        ))),
    }
}

/// Whether `id` may offer its role to `to` now, and which role that is (`pair handoff` asks
/// before it writes; [`judge`] asks again of the write).
pub fn check_offer(old: &Frontmatter, id: &str, to: &str, user_approved: bool) -> Result<Role> {
    if let Some(p) = handoff::pending(old) {
        return Err(Error::protocol(format!(
            "a handoff is already pending ({}'s {} role to {}); it is acknowledged or withdrawn \
             before another is offered",
            p.from, p.role, p.to
        )));
    }
    let Some(role) = role_held(old, id) else {
        return Err(Error::protocol(format!(
            "{id} holds no role to hand over: a handoff passes on the doer's role or a named \
             required reviewer's place{}",
            if old.in_pool(id) {
                " (a pool member's review is taken with `claim`, and left to another member)"
            } else {
                ""
            }
        )));
    };
    let cycle = cycle_board(old).phase;
    if role == Role::Reviewer && cycle.outcome_of().is_some() {
        return Err(Error::refused(
            format!(
                "phase {cycle} records a round's outcome, which rests on the required reviewers' \
                 own verdicts: a reviewer's place is handed over during a round (with the user's \
                 approval) or once the doer has moved on to the next step"
            ),
            Hint::Run {
                command: "poll",
                args: vec!["--agent".into(), id.into(), "--wait".into()],
            },
        ));
    }
    if to == id
        || old.agent(to).is_some()
        || old.required_reviewers.iter().any(|r| r == to)
        || old.in_pool(to)
    {
        return Err(Error::Usage(format!(
            "{to} is already on this board; a role is handed over to an agent new to it (one \
             agent holding two places would review its own work or vote twice)"
        )));
    }
    if let Some(m) = mid_cycle(old, role, id)
        && !user_approved
    {
        return Err(Error::refused(
            format!(
                "a handoff of the {role} role now is in the middle of a review cycle: {}; finish \
                 the cycle first, or hand over with the user's approval (--user-approved)",
                m.when
            ),
            Hint::Rerun {
                add: vec![crate::error::Flag::bare("--user-approved")],
            },
        ));
    }
    Ok(role)
}
