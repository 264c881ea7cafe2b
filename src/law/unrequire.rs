//! The law's rule for removing a required reviewer (`pair unrequire`): a required reviewer that
//! never registered can leave the list with the user's approval, recorded in Decisions, so a
//! gate does not wait for it forever. A registered one stays: its verdict is on its way or on the
//! record.

use crate::board::entry::REVIEWER_REMOVED;
use crate::board::frontmatter::{Frontmatter, Timestamp};
use crate::error::{Error, Flag, Hint, Result};
use crate::law::{Consent, Record};

/// The one id `new` drops from `old`'s required reviewers (the others kept, in order).
pub fn removed(old: &[String], new: &[String]) -> Option<String> {
    if new.len() + 1 != old.len() {
        return None;
    }
    let i = old
        .iter()
        .zip(new)
        .position(|(a, b)| a != b)
        .unwrap_or(new.len());
    (old[..i] == new[..i] && old[i + 1..] == new[i..]).then(|| old[i].clone())
}

/// Judge a removal from `required_reviewers`: `Ok(false)` when the change is not one (the other
/// rules of the list judge it), `Ok(true)` with the record pushed when it is allowed.
pub fn judge(
    old: &Frontmatter,
    new: &Frontmatter,
    writer: &str,
    consent: &Consent,
    now: Timestamp,
    records: &mut Vec<Record>,
) -> Result<bool> {
    let Some(id) = removed(&old.required_reviewers, &new.required_reviewers) else {
        return Ok(false);
    };
    if old.agent(&id).is_some() {
        return Err(Error::protocol(format!(
            "field `required_reviewers`: {id} is registered, so it is not removed; a registered \
             required reviewer gives its verdict (ask it to, or let `pair watch` nudge it), or \
             the user blocks or stops the work (`pair block`, `pair stop`)"
        )));
    }
    // With a round open, an empty list would complete it with nobody's review. In a work phase
    // it is harmless: the next submission snapshots the registered reviewers again (or needs
    // the user's `--no-review`).
    if new.required_reviewers.is_empty() && old.phase.review_target().is_some() {
        return Err(Error::protocol(format!(
            "field `required_reviewers`: {id} is the last required reviewer of the open round; \
             removing it would pass the gate with nobody's review. Ask the user to name another \
             reviewer (it registers with `pair register --required`), then remove {id}"
        )));
    }
    if !consent.user_approved {
        return Err(Error::refused(
            format!(
                "field `required_reviewers`: removing {id} needs the user's approval (only the \
                 user names required reviewers). Ask the user, then run it again with \
                 --user-approved"
            ),
            Hint::Rerun {
                add: vec![Flag::bare("--user-approved")],
            },
        ));
    }
    let mut text = format!(
        "The user approved removing {id}, which never registered, from the required reviewers \
         (`{}`).",
        consent.invocation
    );
    if let Some(r) = consent.reason.as_deref().filter(|r| !r.trim().is_empty()) {
        text.push_str(&format!(
            "\n\nReason: {}",
            r.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    records.push(Record {
        heading: format!("{REVIEWER_REMOVED} — {id} — {writer} — {now}"),
        text,
    });
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_removal_is_exactly_one_id_dropped_in_order() {
        assert_eq!(
            removed(&v(&["a", "b", "c"]), &v(&["a", "c"])),
            Some("b".into())
        );
        assert_eq!(removed(&v(&["a", "b"]), &v(&["a"])), Some("b".into()));
        assert_eq!(removed(&v(&["a", "b"]), &v(&["b"])), Some("a".into()));
        assert_eq!(removed(&v(&["a", "b", "c"]), &v(&["c", "a"])), None);
        assert_eq!(removed(&v(&["a", "b"]), &v(&["a", "b"])), None);
        assert_eq!(removed(&v(&["a"]), &v(&["b", "c"])), None);
    }
}
