//! Rotation with an explicit handoff, counted: per role, how many handoffs were offered,
//! acknowledged and withdrawn (and whether one is still pending), and the time from each offer
//! to its acknowledgement.
//!
//! The journal records a handoff's offer and its withdrawal as `cmd=handoff` and its
//! acknowledgement as `cmd=acknowledge`. One handoff is pending at a time, so a `handoff` record
//! while one is pending is its withdrawal (only its offerer withdraws it), and any other is an
//! offer. The role of each comes from the board's `handoffs` list (its lines, oldest first, are
//! the handoffs that were not withdrawn, in the order they were offered); a withdrawn offer's
//! role is the one its offerer held then: the doer's when it was the doer (the doer changes only
//! by an acknowledged handoff of the doer's role), else a reviewer's place.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Secs, secs};
use crate::board::frontmatter::{Role, Timestamp};
use crate::board::handoff::{Handoff, State};
use crate::board::journal::Record;

/// The journal's command word of an offer or a withdrawal.
pub const OFFER: &str = "handoff";
/// The journal's command word of an acknowledgement.
pub const ACKNOWLEDGE: &str = "acknowledge";

/// The handoffs of one role.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RoleHandoffs {
    pub offered: usize,
    pub acknowledged: usize,
    pub withdrawn: usize,
    /// Offered and neither acknowledged nor withdrawn yet (0 or 1 on a board).
    pub pending: usize,
    /// From offer to acknowledgement, over the acknowledged ones: in all, and the longest.
    pub acknowledge_seconds: Secs,
    pub max_acknowledge_seconds: Secs,
}

impl RoleHandoffs {
    /// Add another board's figures.
    pub fn add(&mut self, o: &RoleHandoffs) {
        self.offered += o.offered;
        self.acknowledged += o.acknowledged;
        self.withdrawn += o.withdrawn;
        self.pending += o.pending;
        self.acknowledge_seconds += o.acknowledge_seconds;
        self.max_acknowledge_seconds = self.max_acknowledge_seconds.max(o.max_acknowledge_seconds);
    }
}

/// The handoffs of a board (or of several), per role; a role nobody handed over is left out.
pub type Handoffs = BTreeMap<Role, RoleHandoffs>;

/// Sum boards' handoffs.
pub fn total<'a>(boards: impl IntoIterator<Item = &'a Handoffs>) -> Handoffs {
    let mut t = Handoffs::new();
    for b in boards {
        for (role, h) in b {
            t.entry(*role).or_default().add(h);
        }
    }
    t
}

/// [`Handoffs`] computed as the journal's records come, from the board's `handoffs` list and
/// its doer now.
#[derive(Debug, Clone)]
pub struct HandoffFold {
    /// The board's handoff lines, and how many were matched to an acknowledgement.
    lines: Vec<Handoff>,
    matched: usize,
    /// Who held the doer's role at the record being read.
    doer: Option<String>,
    /// The offer pending: its role and when it was made.
    pending: Option<(Role, Timestamp)>,
    out: Handoffs,
}

impl HandoffFold {
    /// `lines` is the board's `handoffs`, `doer` its doer now.
    pub fn new(lines: &[Handoff], doer: Option<&str>) -> HandoffFold {
        // The first doer: the one who handed the role over first, else the doer now.
        let first = lines
            .iter()
            .find(|h| h.role == Role::Doer && h.state == State::Acknowledged)
            .map(|h| h.from.clone())
            .or_else(|| doer.map(str::to_string));
        HandoffFold {
            lines: lines.to_vec(),
            matched: 0,
            doer: first,
            pending: None,
            out: Handoffs::new(),
        }
    }

    /// The next record of the journal.
    pub fn push(&mut self, r: &Record) {
        match r.command.as_str() {
            OFFER => match self.pending.take() {
                Some((role, _)) => self.out.entry(role).or_default().withdrawn += 1,
                None => {
                    let by = r.by.as_deref();
                    // A withdrawn offer has no line of its own: the line stays for a later one.
                    let held = if by.is_some() && by == self.doer.as_deref() {
                        Role::Doer
                    } else {
                        Role::Reviewer
                    };
                    self.out.entry(held).or_default().offered += 1;
                    self.pending = Some((held, r.at));
                }
            },
            ACKNOWLEDGE => {
                let Some((offered_as, at)) = self.pending.take() else {
                    return;
                };
                // The acknowledged handoff is the next line of the board's list.
                let line = self.lines[self.matched.min(self.lines.len())..]
                    .iter()
                    .position(|h| h.state == State::Acknowledged)
                    .map(|k| {
                        self.matched += k + 1;
                        self.lines[self.matched - 1].clone()
                    });
                let role = line.as_ref().map_or(offered_as, |h| h.role);
                if role == Role::Doer {
                    self.doer = line.map(|h| h.to).or_else(|| r.by.clone());
                }
                let e = self.out.entry(role).or_default();
                e.acknowledged += 1;
                let l = secs(at, r.at);
                e.acknowledge_seconds += l;
                e.max_acknowledge_seconds = e.max_acknowledge_seconds.max(l);
            }
            _ => {}
        }
    }

    /// The figures; an offer still open is pending.
    pub fn finish(mut self) -> Handoffs {
        if let Some((role, _)) = self.pending {
            self.out.entry(role).or_default().pending += 1;
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(at: &str, by: &str, cmd: &str) -> Record {
        let line = format!(
            "- at={at} by={by} cmd={cmd} phase=PLANNING>PLANNING turn=doer wait_us=0 uid=0 \
             host=h pid=1 before=- after={} prev=-",
            "0".repeat(64)
        );
        Record::parse(&line, 1).unwrap()
    }

    #[test]
    fn offers_withdrawals_and_acknowledgements_are_told_apart_per_role() {
        let lines = vec![
            Handoff::parse("doer alice carol acknowledged").unwrap(),
            Handoff::parse("reviewer bob dave pending").unwrap(),
        ];
        let mut f = HandoffFold::new(&lines, Some("carol"));
        f.push(&rec("2026-01-01T00:00:00Z", "bob", OFFER));
        f.push(&rec("2026-01-01T00:00:05Z", "bob", OFFER));
        f.push(&rec("2026-01-01T00:00:10Z", "alice", OFFER));
        f.push(&rec("2026-01-01T00:00:40Z", "carol", ACKNOWLEDGE));
        f.push(&rec("2026-01-01T00:01:00Z", "bob", OFFER));
        let h = f.finish();
        let doer = &h[&Role::Doer];
        assert_eq!((doer.offered, doer.acknowledged, doer.withdrawn), (1, 1, 0));
        assert_eq!(doer.acknowledge_seconds, Secs::from_secs(30));
        let rev = &h[&Role::Reviewer];
        assert_eq!(
            (rev.offered, rev.acknowledged, rev.withdrawn, rev.pending),
            (2, 0, 1, 1)
        );
    }
}
