//! Keeping the work moving in time: changing an SLA (`extend`), declaring a planned absence
//! (`away`), and removing a required reviewer that never registered (`unrequire`).

use super::{Ctx, Edit, admit, touch};
use crate::board::frontmatter::{Away, Frontmatter, Timestamp};
use crate::board::sla::{self, Limit};
use crate::error::{Error, Result};
use crate::law::protocol::Command;

fn reason_of(reason: &str) -> Result<String> {
    let r = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    if r.is_empty() {
        return Err(Error::Usage("--reason must not be empty".into()));
    }
    Ok(r)
}

/// `extend`: set the named SLAs to new limits (the law holds it to the user's approval and
/// records it with the reason).
pub fn extend(fm: &mut Frontmatter, ctx: &Ctx, limits: &[Limit], reason: &str) -> Result<Edit> {
    admit(fm, ctx, Command::Extend)?;
    reason_of(reason)?;
    if limits.is_empty() {
        return Err(Error::Usage(
            "--sla names no SLA; give NAME=DURATION (e.g. --sla review=4h)".into(),
        ));
    }
    let mut changed = Vec::new();
    for l in limits {
        let was = fm.sla.iter().find(|o| o.name == l.name).map(|o| o.seconds);
        if was == Some(l.seconds) {
            continue;
        }
        changed.push(format!(
            "{} {} → {}",
            l.name,
            was.map_or("unset".into(), sla::format_duration),
            sla::format_duration(l.seconds)
        ));
        fm.sla.retain(|o| o.name != l.name);
        fm.sla.push(*l);
    }
    if changed.is_empty() {
        return Err(Error::Usage(format!(
            "the SLAs are already {}; nothing to change",
            sla::value(&fm.sla).unwrap_or_default()
        )));
    }
    fm.sla = sla::sorted(std::mem::take(&mut fm.sla));
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Extend,
        summary: format!("SLA changed: {}", changed.join(", ")),
        entries: vec![],
    })
}

/// `away`: the agent declares a planned absence until `until` (or, with `None`, ends it).
pub fn away(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    until: Option<Timestamp>,
    reason: &str,
) -> Result<Edit> {
    admit(fm, ctx, Command::Away)?;
    let was = fm.agent(&ctx.agent).and_then(|a| a.away.clone());
    // A write of the agent's own ends its absence (touch); this one then sets the new one.
    touch(fm, ctx, None);
    let summary = match until {
        Some(until) => {
            if until <= ctx.now {
                return Err(Error::Usage(format!(
                    "--until {until} is not after now ({}); an absence ends in the future",
                    ctx.now
                )));
            }
            if (until.0 - ctx.now.0).num_seconds() > sla::MAX_SECONDS as i64 {
                return Err(Error::Usage(format!(
                    "--until {until} is more than {} after now ({}); an absence is at most that \
                     long, so the watchdog cannot be silenced for good",
                    sla::format_duration(sla::MAX_SECONDS),
                    ctx.now
                )));
            }
            let reason = reason_of(reason)?;
            if let Some(a) = fm.agent_mut(&ctx.agent) {
                a.away = Some(Away { until, reason });
            }
            format!("{} is away until {until}", ctx.agent)
        }
        None => {
            if was.is_none() {
                return Err(Error::Usage(format!(
                    "{} has no absence to clear",
                    ctx.agent
                )));
            }
            format!("{} is back", ctx.agent)
        }
    };
    Ok(Edit {
        command: Command::Away,
        summary,
        entries: vec![],
    })
}

/// `unrequire`: remove a required reviewer that never registered and settle the open round on
/// the reviewers that remain, as a verdict would (the law holds the removal to the user's
/// approval and records it).
pub fn unrequire(fm: &mut Frontmatter, ctx: &Ctx, id: &str, reason: &str) -> Result<Edit> {
    admit(fm, ctx, Command::Unrequire)?;
    reason_of(reason)?;
    if !fm.required_reviewers.iter().any(|r| r == id) {
        return Err(Error::Usage(format!(
            "{id} is not a required reviewer (required: {})",
            if fm.required_reviewers.is_empty() {
                "none".to_string()
            } else {
                fm.required_reviewers.join(", ")
            }
        )));
    }
    fm.required_reviewers.retain(|r| r != id);
    touch(fm, ctx, None);
    let mut summary = format!("{id} is no longer a required reviewer");
    if let Some(t) = fm.phase.review_target()
        && fm.counter(t) > 0
    {
        summary.push_str(&super::review::settle_round(fm, ctx, t));
    }
    Ok(Edit {
        command: Command::Unrequire,
        summary,
        entries: vec![],
    })
}
