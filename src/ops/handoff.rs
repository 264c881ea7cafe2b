//! `handoff` and `acknowledge`: a role handed over with a summary, and taken by the incoming
//! agent (the rules are [`crate::law::handoff`]'s, what an acknowledgement does is
//! [`crate::board::handoff::acknowledged`]).

use super::{Ctx, Edit, Entry, admit, touch};
use crate::board::entry::DECISIONS;
use crate::board::frontmatter::Frontmatter;
use crate::board::handoff::{self, Handoff, State};
use crate::error::{Error, Result};
use crate::law::protocol::Command;

/// `handoff --to IN`: offer the role the agent holds to `to`; `record` is the Decisions entry's
/// text (the summary and the brief material the command gathered).
pub fn handoff(fm: &mut Frontmatter, ctx: &Ctx, to: &str, record: &str) -> Result<Edit> {
    admit(fm, ctx, Command::Handoff)?;
    let role = crate::law::handoff::check_offer(fm, &ctx.agent, to, ctx.consent.user_approved)?;
    fm.handoffs.push(Handoff {
        role,
        from: ctx.agent.clone(),
        to: to.to_string(),
        state: State::Pending,
    });
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Handoff,
        summary: format!(
            "{} hands the {role} role over to {to}; it stays {}'s until {to} acknowledges",
            ctx.agent, ctx.agent
        ),
        entries: vec![Entry::new(
            DECISIONS,
            format!(
                "Handoff — {role} role to {to} — {} — {}",
                ctx.agent, ctx.now
            ),
            record,
        )],
    })
}

/// `handoff --withdraw`: the outgoing agent takes its pending offer back.
pub fn withdraw_handoff(fm: &mut Frontmatter, ctx: &Ctx, reason: &str) -> Result<Edit> {
    admit(fm, ctx, Command::Handoff)?;
    let Some(h) = handoff::pending(fm).cloned() else {
        return Err(Error::Usage(
            "no handoff is pending: nothing to withdraw".into(),
        ));
    };
    if h.from != ctx.agent {
        return Err(Error::protocol(format!(
            "the pending handoff is {}'s ({} role to {}); only {} withdraws it: `pair poll \
             --agent {}` says what is yours to do",
            h.from, h.role, h.to, h.from, ctx.agent
        )));
    }
    fm.handoffs.pop();
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Handoff,
        summary: format!(
            "{} withdrew the handoff of the {} role to {}; the role stays {}'s",
            ctx.agent, h.role, h.to, ctx.agent
        ),
        entries: vec![Entry::new(
            DECISIONS,
            format!(
                "Handoff withdrawn — {} role to {} — {} — {}",
                h.role, h.to, ctx.agent, ctx.now
            ),
            reason,
        )],
    })
}

/// `acknowledge`: the incoming agent takes the role handed to it.
pub fn acknowledge(fm: &mut Frontmatter, ctx: &Ctx, note: &str) -> Result<Edit> {
    admit(fm, ctx, Command::Acknowledge)?;
    let Some(h) = handoff::pending_to(fm, &ctx.agent).cloned() else {
        return Err(Error::Usage(format!(
            "no handoff is offered to {}: nothing to acknowledge; `pair poll --agent {}` says \
             what is yours to do",
            ctx.agent, ctx.agent
        )));
    };
    if let Some(moved) = handoff::acknowledged(fm, ctx.now) {
        *fm = moved;
    }
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Acknowledge,
        summary: format!(
            "{} acknowledged the handoff: the {} role is {}'s now, no longer {}'s",
            ctx.agent, h.role, ctx.agent, h.from
        ),
        entries: vec![Entry::new(
            DECISIONS,
            format!(
                "Handoff acknowledged — {} role from {} — {} — {}",
                h.role, h.from, ctx.agent, ctx.now
            ),
            note,
        )],
    })
}
