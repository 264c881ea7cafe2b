//! `pair handoff` and `pair acknowledge`: a role handed over with a summary and the brief's
//! material, and taken by the incoming agent (see [`crate::law::handoff`]).

use super::Outcome;
use super::semantic::{apply, consent};
use crate::cli::{ClaimArgs, HandoffArgs};
use crate::error::{Error, Result};
use crate::ops;
use crate::store::{self, Session};

pub fn handoff(a: HandoffArgs, s: &Session) -> Result<Outcome> {
    if a.withdraw {
        let reason = a
            .summary
            .clone()
            .unwrap_or_else(|| "The handoff is withdrawn; the role stays mine.".into());
        let reason = ops::checked_note(&reason)?;
        return apply(
            &a.board,
            &a.common,
            "handoff",
            consent(a.user_approved, None),
            s,
            |fm, ctx| ops::withdraw_handoff(fm, ctx, &reason),
        );
    }
    let Some(to) = a.to.clone() else {
        return Err(Error::Usage("--to ID names the incoming agent".into()));
    };
    super::agent_arg("--to", &to)?;
    let summary = match &a.summary {
        Some(t) => ops::checked_note(t)?,
        None => String::new(),
    };
    // The brief's material is gathered from the board as it is read here; the handoff itself
    // is judged under the lock, on the board as it is then.
    super::agent_arg("--agent", &a.common.agent)?;
    super::semantic::check_common(&a.common)?;
    let snap = store::snapshot(&a.board, store::Depth::Edit { fresh: true }, s)?;
    let loaded = snap.load_to_edit()?;
    let fm = &loaded.valid.parsed.fm;
    let place = super::place(&a.board, fm);
    let material = super::brief::handoff_material(fm, &a.common.agent, &place);
    let record = format!(
        "{}#### Handed over (from the blackboard at sha256 {})\n\n{material}",
        if summary.trim().is_empty() {
            "(no summary given)\n\n".to_string()
        } else {
            format!("{}\n\n", summary.trim_end())
        },
        loaded.sha256
    );
    super::semantic::apply_on(
        snap,
        &a.common,
        "handoff",
        consent(a.user_approved, None),
        s,
        Vec::new(),
        |fm, ctx| ops::handoff(fm, ctx, &to, &record),
    )
}

pub fn acknowledge(a: ClaimArgs, s: &Session) -> Result<Outcome> {
    apply(
        &a.board,
        &a.common,
        "acknowledge",
        consent(false, None),
        s,
        |fm, ctx| ops::acknowledge(fm, ctx, ""),
    )
}
