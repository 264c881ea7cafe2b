//! Independence of review: whether a judgement of an artifact came from another context than
//! the one that wrote it.
//!
//! Every write records the writer's session and model when the writer gives them
//! ([`crate::board::journal::Origin`]: `--session`/`PAIR_SESSION`, `--model`/`PAIR_MODEL`). The
//! artifact under review at a gate was written by the session of the write that raised the
//! gate's counter to its current value (the submission); a verdict on it is **independent** when
//! it names a session and that session is another, **same session** when it is the author's,
//! and **unknown** when either named none.
//!
//! A board with `independent_review: true` (`init --independent-review`) refuses the judging
//! writes of [`JUDGED`] that are not independent as far as can be told: from the author's
//! session, or naming no session at all. A submission that named no session leaves the
//! author unknown: its verdicts are accepted, and `stats` says `unknown`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::board::frontmatter::{Frontmatter, Target};
use crate::board::journal::Record;
use crate::error::{Error, Result};

pub use crate::board::frontmatter::INDEPENDENT_REVIEW as FIELD;

/// A write that judges an artifact, which the policy holds to independence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judging {
    /// A reviewer's verdict on the gate's current artifact (`verdict APPROVED`, …; `verdict
    /// UNABLE` judges nothing and is not held).
    Verdict,
    /// A dissenter's answer on the gate's current artifact (`dissent none|advisory|blocking`).
    Dissent,
}

impl Judging {
    /// As the refusal names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Judging::Verdict => "a verdict",
            Judging::Dissent => "a dissent",
        }
    }
}

/// The judging writes the policy holds, in the order they are looked for.
pub const JUDGED: &[Judging] = &[Judging::Verdict, Judging::Dissent];

/// How a judgement stands to the artifact's author.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Independence {
    /// The judge and the author each named a session, and they differ.
    Independent,
    /// Either named none.
    Unknown,
    /// The judge wrote from the author's session.
    SameSession,
}

impl Independence {
    /// As `stats` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Independence::Independent => "independent",
            Independence::Unknown => "unknown",
            Independence::SameSession => "same session",
        }
    }

    /// Compare a judge's session with the author's.
    pub fn of(judge: Option<&str>, author: Option<&str>) -> Independence {
        match (judge, author) {
            (Some(j), Some(a)) if j == a => Independence::SameSession,
            (Some(_), Some(_)) => Independence::Independent,
            _ => Independence::Unknown,
        }
    }
}

/// The gate and kind of the judgement agent `id`'s write makes (its review of a gate changed to
/// a verdict, or a dissent round of its own added), if it makes one.
pub fn judged(old: &Frontmatter, new: &Frontmatter, id: &str) -> Option<(Target, Judging)> {
    JUDGED.iter().find_map(|j| match j {
        Judging::Verdict => {
            let now = new.agent(id)?;
            let before = old.agent(id);
            Target::ALL.iter().copied().find_map(|t| {
                let r = now.review(t);
                let changed = before.is_none_or(|b| b.review(t) != r);
                (changed && r.verdict.is_some()).then_some((t, *j))
            })
        }
        Judging::Dissent => crate::law::dissent::added(old, new)
            .filter(|r| r.by == id)
            .map(|r| (r.gate, *j)),
    })
}

/// The session that wrote each gate's current artifact: the session of the last record that
/// raised the gate's counter (`None` inside: that write named no session).
pub fn authors(records: &[Record]) -> BTreeMap<Target, Option<String>> {
    let mut out = BTreeMap::new();
    for r in records {
        for c in r.counters.iter().filter(|c| c.to > c.from) {
            if let Some(t) = Target::ALL.iter().find(|t| t.counter_field() == c.name) {
                out.insert(*t, r.session.clone());
            }
        }
    }
    out
}

/// The policy on one write by agent `id` from session `session`: on a board that asks for
/// independent review, a judging write must name its session, and not the author's. `author`
/// gives the session that wrote a gate's current artifact (read from the journal only when it
/// is needed).
pub fn judge(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    session: Option<&str>,
    author: impl FnOnce(Target) -> Option<String>,
) -> Result<()> {
    if !old.independent_review {
        return Ok(());
    }
    let Some((t, kind)) = judged(old, new, id) else {
        return Ok(());
    };
    let n = old.counter(t);
    let Some(session) = session else {
        return Err(Error::NotIndependent {
            message: format!(
                "this board asks for independent review (`{FIELD}: true`): {} on {t} {n} \
                 must say which session it comes from; run it again with --session ID (or \
                 PAIR_SESSION set), from a session that did not write the {t}",
                kind.as_str()
            ),
        });
    };
    match author(t) {
        Some(a) if a == session => Err(Error::NotIndependent {
            message: format!(
                "this board asks for independent review (`{FIELD}: true`): session {session:?} \
                 wrote {t} {n}, so it cannot judge it; run the review from a fresh session (a new \
                 conversation or process of the agent program, with its own --session or \
                 PAIR_SESSION), which reads the {t} afresh"
            ),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independence_compares_two_named_sessions_only() {
        assert_eq!(
            Independence::of(Some("a"), Some("b")),
            Independence::Independent
        );
        assert_eq!(
            Independence::of(Some("a"), Some("a")),
            Independence::SameSession
        );
        assert_eq!(Independence::of(None, Some("a")), Independence::Unknown);
        assert_eq!(Independence::of(Some("a"), None), Independence::Unknown);
    }
}
