//! The reviewer pool's data: a board may ask for N reviews from a pool of reviewers instead of
//! naming its required reviewers (`reviewer_pool`, `pool_reviews`), and a pool member takes a
//! round's review with `claim`, recorded in its own entry as `pool_claim: <target> <counter>`.
//! The rules over this data are the law's ([`crate::law::pool`]).

use crate::board::frontmatter::{Frontmatter, Target};

/// The pool a board asks its reviews from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    /// The agents who may take a review, in the order given.
    pub members: Vec<String>,
    /// How many reviews each round needs from the pool (at least 1, at most the members).
    pub reviews: u32,
}

/// The round a pool member took: a target at one counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    pub target: Target,
    pub counter: u32,
}

impl Claim {
    /// The value as written in an agent's entry: `plan 2`.
    pub fn value(self) -> String {
        format!("{} {}", self.target, self.counter)
    }

    /// Read `TARGET COUNTER`.
    pub fn parse(s: &str) -> Result<Claim, String> {
        let bad = || {
            format!(
                "expected `TARGET COUNTER` (a target of analysis, plan, red_test, code and a \
                 whole number), found {s:?}"
            )
        };
        let mut words = s.split_whitespace();
        let (Some(t), Some(n), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad());
        };
        let target: Target = t.parse().map_err(|_| bad())?;
        let counter: u32 = n.parse().map_err(|_| bad())?;
        Ok(Claim { target, counter })
    }
}

/// The key of the pool's members.
pub const MEMBERS_FIELD: &str = "reviewer_pool";
/// The key of the number of reviews a round needs from the pool.
pub const REVIEWS_FIELD: &str = "pool_reviews";
/// The key of a pool member's claim, in its agent entry.
pub const CLAIM_FIELD: &str = "pool_claim";

impl Frontmatter {
    /// Whether `id` is a member of the board's reviewer pool.
    pub fn in_pool(&self, id: &str) -> bool {
        self.pool
            .as_ref()
            .is_some_and(|p| p.members.iter().any(|m| m == id))
    }

    /// The pool members who took the current round of `target`, in file order.
    pub fn pool_takers(&self, target: Target) -> Vec<String> {
        let current = Claim {
            target,
            counter: self.counter(target),
        };
        self.agents
            .iter()
            .filter(|(id, a)| a.pool_claim == Some(current) && self.in_pool(id))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The reviews of the current round of `target` no pool member has taken yet.
    pub fn pool_unclaimed(&self, target: Target) -> u32 {
        match &self.pool {
            Some(p) => p
                .reviews
                .saturating_sub(u32::try_from(self.pool_takers(target).len()).unwrap_or(u32::MAX)),
            None => 0,
        }
    }

    /// Who is required in the current round of `target`: the named required reviewers, then the
    /// pool members who took it.
    pub fn round_reviewers(&self, target: Target) -> Vec<String> {
        let mut out = self.required_reviewers.clone();
        for t in self.pool_takers(target) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    /// The target of the board's round: the one under review, the one whose outcome the phase
    /// records, the gate that awaits a decision, or, on a BLOCKED board, that of the phase
    /// `unblock` returns to. `None` in a phase with no round (writing an artifact, terminal).
    pub fn round_target(&self) -> Option<Target> {
        let phase = match (self.phase, self.blocked_from) {
            (crate::board::frontmatter::Phase::Blocked, Some(p)) => p,
            (p, _) => p,
        };
        phase
            .review_target()
            .or_else(|| phase.outcome_of().map(|(t, _)| t))
            .or_else(|| crate::board::ledger::pending_gate(self))
    }

    /// Who is required in the board's round ([`Self::round_target`]): the named required
    /// reviewers, then the pool members who took it; without a round, the named ones. Every
    /// question "who is required now" (verdicts, claims, objections, the arbiter, the
    /// watchdog, `poll`, `status`, `brief`) is answered here.
    pub fn required_now(&self) -> Vec<String> {
        match self.round_target() {
            Some(t) => self.round_reviewers(t),
            None => self.required_reviewers.clone(),
        }
    }

    /// Whether `id` is required in the board's round ([`Self::required_now`]).
    pub fn is_required_now(&self, id: &str) -> bool {
        self.required_now().iter().any(|r| r == id)
    }

    /// Whether the board has reviewers at all: named ones or a pool.
    pub fn has_reviewers(&self) -> bool {
        !self.required_reviewers.is_empty() || self.pool.is_some()
    }
}

/// Who is required now, in words: the ids ([`Frontmatter::required_now`]), or `none`, and on a
/// pool board the pool, the reviews a round asks of it and who took this round:
/// `bob (pool alice, bob, carol: 1 review a round, taken by bob)`.
pub fn required_text(fm: &Frontmatter) -> String {
    let now = fm.required_now();
    let ids = if now.is_empty() {
        "none".to_string()
    } else {
        now.join(", ")
    };
    match &fm.pool {
        Some(p) => format!("{ids} ({})", pool_text(fm, p)),
        None => ids,
    }
}

/// The pool in words: `pool alice, bob, carol: 1 review a round, taken by bob` (or `none taken
/// yet`, or nothing of takers outside a round).
pub fn pool_text(fm: &Frontmatter, p: &Pool) -> String {
    let mut t = format!(
        "pool {}: {} review{} a round",
        p.members.join(", "),
        p.reviews,
        if p.reviews == 1 { "" } else { "s" }
    );
    if let Some(target) = fm.round_target() {
        let takers = fm.pool_takers(target);
        if takers.is_empty() {
            t.push_str(", none taken yet");
        } else {
            t.push_str(&format!(", taken by {}", takers.join(", ")));
        }
    }
    t
}
