//! Seconds: one finding, one objection. A required reviewer who finds what another reviewer's
//! open objection already says seconds it (`pair second`) instead of raising a duplicate; the
//! objection is then held by its raiser and by each seconder. Every second is one line of the
//! top-level `seconds` list, oldest first: `ID SECONDER`.
//!
//! ```yaml
//! seconds:
//!   - "BLK-1 bob"
//! ```
//!
//! The field is absent on a board where nobody seconded. It is a top-level key, not a key of
//! an objection in `ledger`: a `pair` that does not know it keeps an unknown top-level key as it
//! found it (SPEC §2.1) and reads the ledger as before, where an unknown key inside an objection
//! would make it refuse the board. Its absence from that older `pair`'s reading only takes away
//! what a second allows (a seconder's verdict citing the objection); see docs/spec-reading.md.
//! A withdrawn second is removed; a second on an objection that is no longer open stays on the
//! record and allows nothing more.

use crate::board::frontmatter::{Frontmatter, Target};
use crate::board::handoff::places_of;
use crate::board::ledger::{Objection, Severity};

/// The key of the seconds.
pub const FIELD: &str = "seconds";

/// How many lines apart two `path:line` anchors of one file are "the same place" for the
/// warning `object` gives about an open objection already there.
pub const NEAR_LINES: u32 = 3;

/// One reviewer seconding one objection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Second {
    /// The objection seconded.
    pub id: String,
    /// The reviewer who seconds it.
    pub by: String,
}

impl Second {
    /// The line as written in `seconds`.
    pub fn value(&self) -> String {
        format!("{} {}", self.id, self.by)
    }

    /// Read `ID SECONDER`.
    pub fn parse(s: &str) -> Result<Second, String> {
        let bad = || {
            format!(
                "expected `ID SECONDER` (an objection id and the id of the reviewer seconding \
                 it, e.g. `BLK-1 bob`), found {s:?}"
            )
        };
        let words: Vec<&str> = s.split_whitespace().collect();
        let [id, by] = words.as_slice() else {
            return Err(bad());
        };
        if crate::board::ledger::Kind::parse_id(id).is_none()
            || !crate::board::frontmatter::is_agent_id(by)
        {
            return Err(bad());
        }
        Ok(Second {
            id: id.to_string(),
            by: by.to_string(),
        })
    }
}

/// The reviewers who second objection `id`, in the order they did.
pub fn seconders<'a>(fm: &'a Frontmatter, id: &str) -> Vec<&'a str> {
    fm.seconds
        .iter()
        .filter(|s| s.id == id)
        .map(|s| s.by.as_str())
        .collect()
}

/// Whether `agent` holds objection `o`: it raised it or seconds it, itself or through a place
/// handed over to it.
pub fn holds(fm: &Frontmatter, o: &Objection, agent: &str) -> bool {
    let mine = places_of(fm, agent);
    mine.contains(&o.by)
        || fm
            .seconds
            .iter()
            .any(|s| s.id == o.id && mine.contains(&s.by))
}

/// Whether `agent` seconds objection `id` (itself or through a place handed over to it): the
/// id the second is recorded under, if it does.
pub fn second_of(fm: &Frontmatter, id: &str, agent: &str) -> Option<String> {
    let mine = places_of(fm, agent);
    fm.seconds
        .iter()
        .find(|s| s.id == id && mine.contains(&s.by))
        .map(|s| s.by.clone())
}

/// The open blocking objections of gate `t` that `agent` holds (raised or seconded): what its
/// CHANGES_REQUESTED names, and what keeps it from approving.
pub fn open_blocking_held(fm: &Frontmatter, t: Target, agent: &str) -> Vec<String> {
    fm.ledger
        .of_gate(t)
        .filter(|o| o.severity == Severity::Blocking && o.state.is_open())
        .filter(|o| holds(fm, o, agent))
        .map(|o| o.id.clone())
        .collect()
}

/// The open objections of gate `t` anchored at or within [`NEAR_LINES`] lines of `anchor` (a
/// `path:line` of the same file, or the very same anchor of another form), raised by someone
/// other than `agent` and not already seconded by it: what `object` warns about.
pub fn near<'a>(fm: &'a Frontmatter, t: Target, anchor: &str, agent: &str) -> Vec<&'a Objection> {
    use crate::board::ledger::anchor::{Anchor, parse};
    let here = parse(anchor).ok();
    fm.ledger
        .of_gate(t)
        .filter(|o| o.state.is_open() && !holds(fm, o, agent))
        .filter(|o| match (&here, parse(&o.anchor).ok()) {
            (Some(Anchor::Line { path, line }), Some(Anchor::Line { path: p2, line: l2 })) => {
                *path == p2 && line.abs_diff(l2) <= NEAR_LINES
            }
            (Some(a), Some(b)) => *a == b,
            _ => false,
        })
        .collect()
}

/// Emit `seconds` (nothing when nobody seconded).
pub fn emit(out: &mut String, seconds: &[Second]) {
    if seconds.is_empty() {
        return;
    }
    out.push_str(FIELD);
    out.push_str(":\n");
    for s in seconds {
        out.push_str("  - ");
        out.push_str(&crate::board::yaml::quoted(&s.value()));
        out.push('\n');
    }
}

/// The value of `seconds` on one line (the field registry's).
pub fn value(seconds: &[Second]) -> Option<String> {
    (!seconds.is_empty()).then(|| {
        let lines: Vec<String> = seconds.iter().map(Second::value).collect();
        format!("[{}]", lines.join("; "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_reads_as_it_is_written() {
        let s = Second::parse("BLK-1 bob").unwrap();
        assert_eq!(s.value(), "BLK-1 bob");
        for bad in ["BLK-1", "BLK-1 bob carol", "XYZ-1 bob", "BLK-1 -bob", ""] {
            assert!(Second::parse(bad).is_err(), "{bad}");
        }
    }
}
