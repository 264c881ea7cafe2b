//! Rotation with an explicit handoff, as data: the outgoing agent offers its role (the doer's,
//! or a required reviewer's place) to an incoming agent (`pair handoff`), the incoming agent
//! acknowledges it (`pair acknowledge`), and only then holds the role. Every handoff is one line
//! of `handoffs`, oldest first: `ROLE FROM TO STATE`.
//!
//! ```yaml
//! handoffs:
//!   - "doer alice carol acknowledged"
//!   - "reviewer bob dave pending"
//! ```
//!
//! The field is absent on a board whose roles never rotated. At most one handoff is pending
//! (the last line); a withdrawn one is removed. The rules over this data are the law's
//! ([`crate::law::handoff`]); what an acknowledgement does to the board is [`acknowledged`],
//! read by both the law and the operation so it is written once.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::board::frontmatter::{Agent, Frontmatter, Role, Status, Timestamp, word_enum};

/// The key of the handoffs.
pub const FIELD: &str = "handoffs";

word_enum!(
    /// Where a handoff stands.
    State {
        Pending => "pending",
        Acknowledged => "acknowledged",
    }
);

/// One handoff of a role from one agent to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// The role handed over: the doer's, or a required reviewer's place.
    pub role: Role,
    pub from: String,
    pub to: String,
    pub state: State,
}

impl Handoff {
    /// The line as written in `handoffs`.
    pub fn value(&self) -> String {
        format!("{} {} {} {}", self.role, self.from, self.to, self.state)
    }

    /// Read `ROLE FROM TO STATE`.
    pub fn parse(s: &str) -> Result<Handoff, String> {
        let bad = || {
            format!(
                "expected `ROLE FROM TO STATE` (e.g. `doer alice carol pending`; ROLE doer or \
                 reviewer, STATE pending or acknowledged), found {s:?}"
            )
        };
        let words: Vec<&str> = s.split_whitespace().collect();
        let [role, from, to, state] = words.as_slice() else {
            return Err(bad());
        };
        let role: Role = role.parse().map_err(|_| bad())?;
        let state: State = state.parse().map_err(|_| bad())?;
        if !crate::board::frontmatter::is_agent_id(from)
            || !crate::board::frontmatter::is_agent_id(to)
            || from == to
        {
            return Err(bad());
        }
        Ok(Handoff {
            role,
            from: from.to_string(),
            to: to.to_string(),
            state,
        })
    }
}

/// The pending handoff, if any (the last line, when it is pending).
pub fn pending(fm: &Frontmatter) -> Option<&Handoff> {
    fm.handoffs.last().filter(|h| h.state == State::Pending)
}

/// The pending handoff offered to `id`, if any.
pub fn pending_to<'a>(fm: &'a Frontmatter, id: &str) -> Option<&'a Handoff> {
    pending(fm).filter(|h| h.to == id)
}

/// The acknowledged handoff by which `id` gave up its role, when it holds none since (no later
/// handoff gave it one back).
pub fn handed_away<'a>(fm: &'a Frontmatter, id: &str) -> Option<&'a Handoff> {
    fm.handoffs
        .iter()
        .rev()
        .filter(|h| h.state == State::Acknowledged)
        .find(|h| h.from == id || h.to == id)
        .filter(|h| h.from == id)
}

/// Who holds the place `id` held, following the acknowledged handoffs from it (`id` itself when
/// it never handed its place over). An objection raised by a reviewer that handed its place over
/// is its successor's to judge.
pub fn holder(fm: &Frontmatter, id: &str) -> String {
    let mut who = id.to_string();
    // Each step moves along a later handoff, so the walk ends.
    let mut from = 0;
    while let Some((i, h)) = fm
        .handoffs
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, h)| h.state == State::Acknowledged && h.from == who)
    {
        who = h.to.clone();
        from = i + 1;
    }
    who
}

/// Every id whose place `id` holds: `id` itself and each agent that handed its place over to it
/// (directly or along a chain of acknowledged handoffs). What one of them raised is `id`'s to
/// judge as its raiser.
pub fn places_of(fm: &Frontmatter, id: &str) -> Vec<String> {
    let mut out = vec![id.to_string()];
    for h in fm
        .handoffs
        .iter()
        .filter(|h| h.state == State::Acknowledged)
    {
        if !out.contains(&h.from) && holder(fm, &h.from) == id {
            out.push(h.from.clone());
        }
    }
    out
}

/// The board as an acknowledgement of the pending handoff leaves it, before anything else the
/// write changes: the handoff acknowledged, the incoming agent's entry added in the role (a
/// doer keeps the outgoing doer's status; a reviewer starts with no verdict, its place's verdict
/// on an open round is its own to give), and the outgoing agent out of the role (the doer's
/// entry removed, since a board has one doer; a reviewer's kept with its verdicts on record, no
/// longer required). `None` when no handoff is pending.
pub fn acknowledged(old: &Frontmatter, now: Timestamp) -> Option<Frontmatter> {
    let h = pending(old)?.clone();
    let mut fm = old.clone();
    if let Some(last) = fm.handoffs.last_mut() {
        last.state = State::Acknowledged;
    }
    let status = match h.role {
        Role::Doer => old.agent(&h.from).map_or(Status::Idle, |a| a.status),
        Role::Reviewer => Status::Idle,
    };
    let mut entry = Agent::new(h.role, status);
    entry.last_seen = Some(now);
    match h.role {
        Role::Doer => {
            fm.agents.retain(|(id, _)| id != &h.from);
            // The doer's entry keeps its place in the file.
            let at = old
                .agents
                .iter()
                .position(|(id, _)| id == &h.from)
                .unwrap_or(0)
                .min(fm.agents.len());
            fm.agents.insert(at, (h.to.clone(), entry));
        }
        Role::Reviewer => {
            for r in fm.required_reviewers.iter_mut() {
                if r == &h.from {
                    *r = h.to.clone();
                }
            }
            if let Some(a) = fm.agent_mut(&h.from) {
                a.status = Status::Idle;
            }
            fm.agents.push((h.to.clone(), entry));
        }
    }
    Some(fm)
}

/// Emit `handoffs` (nothing when no role ever rotated).
pub fn emit(out: &mut String, handoffs: &[Handoff]) {
    if handoffs.is_empty() {
        return;
    }
    out.push_str(FIELD);
    out.push_str(":\n");
    for h in handoffs {
        out.push_str("  - ");
        out.push_str(&crate::board::yaml::quoted(&h.value()));
        out.push('\n');
    }
}

/// The value of `handoffs` on one line (the field registry's).
pub fn value(handoffs: &[Handoff]) -> Option<String> {
    (!handoffs.is_empty()).then(|| {
        let lines: Vec<String> = handoffs.iter().map(Handoff::value).collect();
        format!("[{}]", lines.join("; "))
    })
}
