//! The reviewer pool's rules (see [`crate::board::pool`] for its data): a pool member takes one
//! of a round's N reviews with `claim`, which is exclusive — once the round's N reviews are
//! taken, no other member can take one — and makes the taker required for that round. SPEC's
//! rule that every required reviewer votes stays for the named reviewers; a pool round is
//! complete when its N takers (and every named reviewer) have voted.
//!
//! The rules are data: [`RULES`] is read by [`judge`] (every write, semantic or raw) and by the
//! documentation test that keeps docs/protocol.md's table of them in step.

use crate::board::frontmatter::Frontmatter;
use crate::board::pool::{CLAIM_FIELD, Claim};
use crate::error::{Error, Hint};

/// One rule over a write's change of the pool's claims.
pub struct Rule {
    /// The rule's name, as docs/protocol.md lists it.
    pub name: &'static str,
    /// What it says, one sentence.
    pub says: &'static str,
    /// The refusal of a write that breaks it (`None`: the write keeps it).
    check: fn(&Frontmatter, &Frontmatter, &str) -> Option<Refusal>,
}

/// Why a write is refused, and what the writer does instead.
pub struct Refusal {
    pub message: String,
    hint: Hint,
}

/// Every rule of the pool, in the order they are checked.
pub const RULES: &[Rule] = &[
    Rule {
        name: "member",
        says: "only a member of the reviewer pool takes a pool review",
        check: member,
    },
    Rule {
        name: "open-round",
        says: "a claim names the open round: the target under review at its current counter",
        check: open_round,
    },
    Rule {
        name: "exclusive",
        says: "a round's pool reviews are taken at most `pool_reviews` times: a claim beyond \
               that is refused, naming who holds them",
        check: exclusive,
    },
    Rule {
        name: "kept",
        says: "a taken review stays taken until its round closes: the taker is required in it",
        check: kept,
    },
];

/// Judge a write by an agent against every rule of [`RULES`].
pub fn judge(old: &Frontmatter, new: &Frontmatter, id: &str) -> crate::Result<()> {
    for rule in RULES {
        if let Some(r) = (rule.check)(old, new, id) {
            return Err(Error::refused(r.message, r.hint));
        }
    }
    Ok(())
}

fn claim_of(fm: &Frontmatter, id: &str) -> Option<Claim> {
    fm.agent(id).and_then(|a| a.pool_claim)
}

/// The agent's claim, when this write sets or changes it.
fn new_claim(old: &Frontmatter, new: &Frontmatter, id: &str) -> Option<Claim> {
    let c = claim_of(new, id)?;
    (claim_of(old, id) != Some(c)).then_some(c)
}

fn poll_wait(id: &str) -> Hint {
    Hint::Run {
        command: "poll",
        args: vec!["--agent".into(), id.into(), "--wait".into()],
    }
}

fn member(old: &Frontmatter, new: &Frontmatter, id: &str) -> Option<Refusal> {
    new_claim(old, new, id)?;
    if new.in_pool(id) {
        return None;
    }
    Some(Refusal {
        message: match &new.pool {
            Some(p) => format!(
                "field `agents.{id}.{CLAIM_FIELD}`: {id} is not in the reviewer pool ({}); only \
                 its members take a pool review",
                p.members.join(", ")
            ),
            None => format!(
                "field `agents.{id}.{CLAIM_FIELD}`: this board has no reviewer pool; its required \
                 reviewers are named"
            ),
        },
        hint: poll_wait(id),
    })
}

fn open_round(old: &Frontmatter, new: &Frontmatter, id: &str) -> Option<Refusal> {
    let c = new_claim(old, new, id)?;
    let open = old.phase.review_target().map(|t| Claim {
        target: t,
        counter: old.counter(t),
    });
    if open == Some(c) {
        return None;
    }
    Some(Refusal {
        message: format!(
            "field `agents.{id}.{CLAIM_FIELD}`: `{}` is not the open round ({}); a pool review is \
             taken with `pair claim` while its round is open",
            c.value(),
            open.map_or_else(
                || format!("phase {} reviews nothing", old.phase),
                Claim::value
            )
        ),
        hint: poll_wait(id),
    })
}

fn exclusive(old: &Frontmatter, new: &Frontmatter, id: &str) -> Option<Refusal> {
    let c = new_claim(old, new, id)?;
    new.pool.as_ref()?;
    taken(old, c, id)
}

/// Why `id` cannot take a review of the round `c` on a board whose frontmatter is `fm`: its
/// pool reviews are all taken (`None` while one is free). The `claim` command asks it before it
/// claims, and answers a claim that lost the race to another member as a board that changed
/// since it was read (exit 3), not as a protocol violation.
pub fn taken(fm: &Frontmatter, c: Claim, id: &str) -> Option<Refusal> {
    let pool = fm.pool.as_ref()?;
    let holders = fm.pool_takers(c.target);
    if (holders.len() as u64) < u64::from(pool.reviews) {
        return None;
    }
    let (noun, unit) = crate::board::entry::target_noun(c.target);
    Some(Refusal {
        message: format!(
            "the {} review{} of {} {unit} {} {} already taken by {} (the pool gives {} per \
             round); you are not required in this round: wait for the next one with `pair poll \
             --agent {id} --wait`",
            pool.reviews,
            if pool.reviews == 1 { "" } else { "s" },
            noun.to_lowercase(),
            c.counter,
            if pool.reviews == 1 { "is" } else { "are" },
            holders.join(", "),
            pool.reviews,
        ),
        hint: poll_wait(id),
    })
}

fn kept(old: &Frontmatter, new: &Frontmatter, id: &str) -> Option<Refusal> {
    // Only the writer's own entry can change (`check_agents`): its taken claim of the open round.
    let target = old.phase.review_target()?;
    let held = claim_of(old, id)?;
    let open = Claim {
        target,
        counter: old.counter(target),
    };
    let still_open = new.phase == old.phase && new.counter(target) == open.counter;
    if held != open || !still_open || claim_of(new, id) == Some(held) {
        return None;
    }
    Some(Refusal {
        message: format!(
            "field `agents.{id}.{CLAIM_FIELD}`: {id} took `{}` and is required in it until the \
             round closes; give your verdict",
            held.value()
        ),
        hint: poll_wait(id),
    })
}

#[cfg(test)]
mod tests {
    use super::RULES;

    #[test]
    fn rule_names_are_unique() {
        let mut names: Vec<_> = RULES.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RULES.len());
    }
}
