//! Dependencies' data: a board may wait for other boards before its doer works on it. It names
//! them in `after:` (set by `init --after`), and a deferral `decide defer --escalation
//! blocked-pending:X` names one more when X is a board of the same project. The names are
//! read where the board is kept ([`crate::store::depend`]) and judged by the law
//! ([`crate::law::depend`]), which is given the phases found.

use crate::board::frontmatter::{Frontmatter, Target};
use crate::board::ledger::StopReason;

/// The key of the boards a board waits for.
pub const FIELD: &str = "after";

/// The escalation of a deferral that waits for something: `blocked-pending:X`.
pub const PENDING: &str = "blocked-pending:";

/// Why a board waits for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// Named in `after:` (`init --after`).
    After,
    /// Named by the deferral of a gate (`blocked-pending:X`).
    Deferral(Target),
}

/// A board named as one this board waits for, as written (resolved where the board is kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub by: By,
}

/// Whether a name can be written as a dependency: 1 to 256 characters, none a control
/// character, not blank.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("a dependency names a board; found an empty name".into());
    }
    if name.chars().count() > 256 || name.chars().any(char::is_control) {
        return Err(format!(
            "a dependency names a board in at most 256 characters and no control character, \
             found {name:?}"
        ));
    }
    Ok(())
}

impl Frontmatter {
    /// The boards this board may wait for: its `after:` list, then each gate deferred as
    /// `blocked-pending:X`, in target order. A deferral's X is free text unless it names a
    /// board (the store decides: [`crate::store::depend`]).
    pub fn dependencies(&self) -> Vec<Named> {
        let mut out: Vec<Named> = self
            .after
            .iter()
            .map(|n| Named {
                name: n.clone(),
                by: By::After,
            })
            .collect();
        for (t, g) in &self.ledger.gates {
            if g.stop_reason == Some(StopReason::Deferred)
                && let Some(x) = g
                    .escalation
                    .as_deref()
                    .and_then(|e| e.strip_prefix(PENDING))
            {
                let x = x.trim();
                if check_name(x).is_ok() && !out.iter().any(|n| n.name == x) {
                    out.push(Named {
                        name: x.to_string(),
                        by: By::Deferral(*t),
                    });
                }
            }
        }
        out
    }
}
