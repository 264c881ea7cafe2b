//! `pair extend`, `pair away` and `pair unrequire`: one locked write each, through the
//! operations of [`crate::ops`] and the law.

use chrono::{DateTime, Utc};

use super::Outcome;
use super::semantic::{apply, consent};
use crate::board::frontmatter::Timestamp;
use crate::cli::{AwayArgs, ExtendArgs, UnrequireArgs};
use crate::error::{Error, Result};
use crate::law::Consent;
use crate::ops;
use crate::store::Session;

fn with_reason(mut c: Consent, reason: &str) -> Consent {
    c.reason = Some(reason.to_string());
    c
}

pub fn extend(a: ExtendArgs, s: &Session) -> Result<Outcome> {
    let limits = crate::board::sla::parse_assignments(&a.sla)
        .map_err(|e| Error::Usage(format!("--sla: {e}")))?;
    let reason = a.reason.clone();
    apply(
        &a.board,
        &a.common,
        "extend",
        with_reason(consent(a.user_approved, None), &a.reason),
        s,
        |fm, ctx| ops::extend(fm, ctx, &limits, &reason),
    )
}

/// `--until`: a time, or a duration from the time the write is made.
#[derive(Clone, Copy)]
enum Until {
    At(Timestamp),
    In(u64),
}

fn until_arg(s: &str) -> Result<Until> {
    if let Some(t) = Timestamp::parse(s) {
        return Ok(Until::At(t));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        let utc = t.with_timezone(&Utc);
        let whole = DateTime::from_timestamp(utc.timestamp(), 0).unwrap_or(utc);
        return Ok(Until::At(Timestamp(whole)));
    }
    crate::board::sla::parse_duration(s).map(Until::In).map_err(|e| {
        Error::Usage(format!(
            "--until {s:?} is neither a time (2026-01-31T18:00:00Z, or RFC 3339 with an offset) \
             nor a duration from now: {e}"
        ))
    })
}

pub fn away(a: AwayArgs, s: &Session) -> Result<Outcome> {
    let until = a.until.as_deref().map(until_arg).transpose()?;
    let reason = a.reason.clone().unwrap_or_default();
    apply(
        &a.board,
        &a.common,
        "away",
        consent(false, None),
        s,
        |fm, ctx| {
            let at = until.map(|u| match u {
                Until::At(t) => t,
                Until::In(s) => Timestamp(ctx.now.0 + chrono::Duration::seconds(s as i64)),
            });
            ops::away(fm, ctx, at, &reason)
        },
    )
}

pub fn unrequire(a: UnrequireArgs, s: &Session) -> Result<Outcome> {
    super::agent_arg("ID", &a.reviewer)?;
    let reason = a.reason.clone();
    let id = a.reviewer.clone();
    apply(
        &a.board,
        &a.common,
        "unrequire",
        with_reason(consent(a.user_approved, None), &a.reason),
        s,
        |fm, ctx| ops::unrequire(fm, ctx, &id, &reason),
    )
}
