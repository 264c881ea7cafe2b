//! The law's rule for the `sla` field: the user's, changed only with the user's approval and
//! recorded in Decisions.

use std::fmt::Write as _;

use crate::board::entry::SLA_CHANGED;
use crate::board::sla::{Limit, value};

/// The law's rule for `sla` ([`crate::board::field::Owner::User`]): it is the user's, so it changes
/// only with the user's approval (`--user-approved`), and the change is recorded in Decisions
/// with the reason given.
pub fn judge_change(
    old: &crate::board::frontmatter::Frontmatter,
    new: &crate::board::frontmatter::Frontmatter,
    id: &str,
    consent: &crate::law::Consent,
    now: crate::board::frontmatter::Timestamp,
    records: &mut Vec<crate::law::Record>,
) -> crate::error::Result<()> {
    use crate::error::{Error, Flag, Hint};
    let shown = |l: &[Limit]| value(l).unwrap_or_else(|| "none".into());
    if !consent.user_approved {
        return Err(Error::refused(
            format!(
                "field `sla` ({} → {}) is the user's: it changes only with the user's approval. \
                 Ask the user, then run it again with --user-approved",
                shown(&old.sla),
                shown(&new.sla)
            ),
            Hint::Rerun {
                add: vec![Flag::bare("--user-approved")],
            },
        ));
    }
    let mut text = format!(
        "The user approved changing the SLAs from {} to {} (`{}`).",
        shown(&old.sla),
        shown(&new.sla),
        consent.invocation
    );
    if let Some(r) = consent.reason.as_deref().filter(|r| !r.trim().is_empty()) {
        let _ = write!(
            text,
            "\n\nReason: {}",
            r.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    records.push(crate::law::Record {
        heading: format!("{SLA_CHANGED} — {id} — {now}"),
        text,
    });
    Ok(())
}
