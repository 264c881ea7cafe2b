//! The reviewers' side: registering, claiming a review, giving a verdict.

use super::{Ctx, Edit, Entry, admit, checked_note, set_phase, touch};
use crate::board::entry::{artifact_section, target_noun};
use crate::board::frontmatter::{Agent, Frontmatter, Role, Sha256, Status, Target, Verdict};
use crate::error::{Error, Hint, Result};
use crate::law::protocol::{self, Command, DiffScope, TRANSITIONS, To};

/// `register`: add the actor as a reviewer (and, with `required`, to `required_reviewers`; the
/// law records that the user named it).
pub fn register(fm: &mut Frontmatter, ctx: &Ctx, required: bool) -> Result<Edit> {
    // A pool member is offered `register` while a submission waits; when it arrives after the
    // board went on to a phase that takes no reviewer (the round ended and the board was
    // committed, stopped or blocked since it read it), re-read (exit 3), as for a late claim.
    if fm.in_pool(&ctx.agent) && fm.agent(&ctx.agent).is_none() && fm.phase.is_terminal() {
        return Err(Error::StaleCounter {
            message: format!(
                "nothing to review: the board is in {} now (the round may have ended since you \
                 read it); read it again with `pair poll --agent {} --wait`",
                fm.phase, ctx.agent
            ),
        });
    }
    admit(fm, ctx, Command::Register)?;
    let id = ctx.agent.clone();
    let mut said = Vec::new();
    if fm.agent(&id).is_some() {
        said.push(format!("{id} was already registered"));
    } else {
        fm.agents
            .push((id.clone(), Agent::new(Role::Reviewer, Status::Idle)));
        said.push(format!("registered {id} as a reviewer"));
    }
    if required && !fm.required_reviewers.contains(&id) {
        fm.required_reviewers.push(id.clone());
        let when = match fm.phase.review_target() {
            Some(t) => format!("joins the open {t} round"),
            None => "joins from the next review round".to_string(),
        };
        said.push(format!("{id} is now a required reviewer and {when}"));
    } else if fm.required_reviewers.contains(&id) {
        said.push(format!("{id} is a required reviewer"));
    }
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Register,
        summary: said.join("; "),
        entries: vec![],
    })
}

/// Only required reviewers' claims and verdicts count.
fn require_required(fm: &Frontmatter, ctx: &Ctx) -> Result<()> {
    if fm.is_required_now(&ctx.agent) {
        return Ok(());
    }
    Err(Error::protocol(format!(
        "{:?} is not a required reviewer (required: {}); only required reviewers' verdicts \
             count, and only the user names them (if they named you: `pair register --agent {} \
             --required`)",
        ctx.agent,
        crate::board::pool::required_text(fm),
        ctx.agent,
    )))
}

/// `claim`: a required reviewer takes up the submitted artifact.
pub fn claim(fm: &mut Frontmatter, ctx: &Ctx) -> Result<Edit> {
    // A pool member is offered a claim while a submission waits; when its claim arrives after
    // another member's review already ended the round, the board moved on since it read it:
    // re-read (exit 3), as for any board that moved on, not a refusal of what it was told.
    if fm.in_pool(&ctx.agent) && !fm.is_required_now(&ctx.agent) && !fm.phase.is_reviewable() {
        return Err(Error::StaleCounter {
            message: format!(
                "no review to claim: the board is in {} now (another member's review may have \
                 ended the round since you read it); read it again with `pair poll --agent {} \
                 --wait`",
                fm.phase, ctx.agent
            ),
        });
    }
    admit(fm, ctx, Command::Claim)?;
    let from = fm.phase;
    // A pool member takes one of the round's reviews (the law refuses one too many).
    match from.review_target() {
        Some(t) if fm.in_pool(&ctx.agent) && !fm.is_required_now(&ctx.agent) => {
            let claim = crate::board::pool::Claim {
                target: t,
                counter: fm.counter(t),
            };
            // Another member took the round since this one read it: re-read, as for any board
            // that moved on (exit 3); the law refuses the same claim made by a raw write.
            if let Some(r) = crate::law::pool::taken(fm, claim, &ctx.agent) {
                return Err(Error::StaleCounter { message: r.message });
            }
            if let Some(a) = fm.agent_mut(&ctx.agent) {
                a.pool_claim = Some(claim);
            }
        }
        _ => require_required(fm, ctx)?,
    }
    let row = TRANSITIONS
        .iter()
        .find(|t| t.command == Command::Claim && t.from.matches(from));
    // Every claim says the same two things: what became of the phase and of the status.
    let what = match from.review_target() {
        Some(t) => {
            let (noun, unit) = target_noun(t);
            format!("{} {unit} {}", noun.to_lowercase(), fm.counter(t))
        }
        None => "the review".to_string(),
    };
    let was = fm.agent(&ctx.agent).map(|a| a.status);
    let summary = match (row.map(|t| t.to), was) {
        (Some(To::Phase(to)), _) => {
            set_phase(fm, ctx, to);
            format!(
                "{} claimed {what}: phase {from} → {to}; status REVIEWING",
                ctx.agent
            )
        }
        (_, Some(Status::Reviewing)) => format!(
            "{} claimed {what} again: nothing changed (phase stays {from}: a claim moves only a \
             *_SUBMITTED phase; status already REVIEWING)",
            ctx.agent
        ),
        (_, was) => format!(
            "{} claimed {what}: phase stays {from} (a claim moves only a *_SUBMITTED phase); \
             status {} → REVIEWING",
            ctx.agent,
            was.map_or("none", |s| s.as_str())
        ),
    };
    touch(fm, ctx, Some(Status::Reviewing));
    Ok(Edit {
        command: Command::Claim,
        summary,
        entries: vec![],
    })
}

/// `verdict`: a required reviewer's verdict on the current revision; completes the round when it
/// is the last one missing. `judged` is the hash of the artifact the reviewer judged, recorded
/// with the verdict (the law holds it to the round's pin).
pub fn verdict(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    verdict: Verdict,
    revision: u32,
    note: &str,
    judged: Option<Sha256>,
) -> Result<Edit> {
    admit(fm, ctx, Command::Verdict)?;
    let Some(target) = fm.phase.review_target() else {
        return Err(Error::protocol(
            "internal error: a verdict outside a review phase",
        ));
    };
    require_required(fm, ctx)?;
    let note = checked_note(note)?;
    let counter = fm.counter(target);
    let (noun, unit) = target_noun(target);
    let noun_lc = noun.to_lowercase();
    // A revision that does not exist yet was never read: a mistake in the call, not a change
    // on the board since it was read.
    if revision > counter {
        return Err(Error::Usage(format!(
            "--revision {revision}: {noun_lc} {unit} {revision} does not exist; the current \
             {noun_lc} {unit} is {counter}. Read it and give your verdict with --revision \
             {counter}"
        )));
    }
    if revision != counter {
        return Err(Error::StaleCounter {
            message: format!(
                "stale verdict: you reviewed {noun_lc} {unit} {revision}, but the current \
                 {noun_lc} {unit} is {counter}. Read the current {noun_lc} and give your verdict \
                 with --revision {counter}"
            ),
        });
    }
    let id = ctx.agent.clone();
    let replaced = match fm.agent_mut(&id) {
        Some(a) => {
            let r = a.review_mut(target);
            let replaced = r.reviewed == Some(counter) && r.verdict.is_some();
            r.reviewed = Some(counter);
            r.verdict = Some(verdict);
            r.sha256 = judged;
            replaced
        }
        None => return Err(crate::law::not_registered(&id)),
    };
    let status = match verdict {
        Verdict::Approved => Status::Approved,
        Verdict::ChangesRequested => Status::ChangesRequested,
        Verdict::Comment => Status::Waiting,
    };
    touch(fm, ctx, Some(status));
    let heading = review_heading(fm, ctx, target, verdict, replaced);
    let mut summary = format!("{id}: {verdict} on {noun_lc} {unit} {counter}");
    let note = match (judged, fm.pin(target)) {
        (Some(h), Some(pin)) => {
            summary.push_str(&format!(" (judged {} {})", pin.kind.describe(), h.short()));
            let line = format!("Judged: {} sha256 `{h}`.", pin.kind.describe());
            if note.trim().is_empty() {
                line
            } else {
                format!("{}\n\n{line}", note.trim_end())
            }
        }
        _ => note,
    };
    summary.push_str(&settle_round(fm, ctx, target));
    Ok(Edit {
        command: Command::Verdict,
        summary,
        entries: vec![Entry::new(artifact_section(target, true), heading, note)],
    })
}

/// The heading label of an "unable to review" entry (a record: it carries no verdict, so the
/// round's verdicts and the body's reviews stay in agreement).
pub const UNABLE: &str = "Unable to review";

/// `verdict UNABLE`: a required reviewer could not review the current revision (its tools
/// failed, a check could not run). Not a judgement: no verdict is recorded or replaced, the
/// round is not completed, the doer is asked for nothing; the reviewer's status says it is held
/// up (`BLOCKED`) until it, or another reviewer, gives the verdict on the same revision.
pub fn unable(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    revision: u32,
    reason: &str,
    note: &str,
) -> Result<Edit> {
    admit(fm, ctx, Command::Verdict)?;
    let Some(target) = fm.phase.review_target() else {
        return Err(Error::protocol(
            "internal error: an unable-to-review outside a review phase",
        ));
    };
    require_required(fm, ctx)?;
    let reason = checked_note(reason)?;
    let note = checked_note(note)?;
    let counter = fm.counter(target);
    let (noun, unit) = target_noun(target);
    let noun_lc = noun.to_lowercase();
    if revision != counter {
        return Err(Error::StaleCounter {
            message: format!(
                "stale: you meant {noun_lc} {unit} {revision}, but the current {noun_lc} {unit} \
                 is {counter}. Try the current {noun_lc} and say UNABLE (or give your verdict) \
                 with --revision {counter}"
            ),
        });
    }
    let given = fm
        .agent(&ctx.agent)
        .map(|a| *a.review(target))
        .filter(|r| r.reviewed == Some(counter) && r.verdict.is_some());
    touch(fm, ctx, Some(Status::Blocked));
    let mut text = format!("Reason: {}", reason.trim());
    if !note.trim().is_empty() {
        text.push_str(&format!("\n\n{}", note.trim_end()));
    }
    let r = protocol::round(fm, target);
    let standing = match given.and_then(|g| g.verdict) {
        Some(v) => format!("; its {v} on {noun_lc} {unit} {counter} stands"),
        None => String::new(),
    };
    let summary = format!(
        "{}: UNABLE to review {noun_lc} {unit} {counter} ({}): not a verdict, no round \
         counted{standing}; {}",
        ctx.agent,
        reason.trim(),
        if r.pending.is_empty() {
            "no verdict is pending".to_string()
        } else {
            format!(
                "the round still waits for {} on {unit} {counter} (nothing to resubmit)",
                r.pending.join(", ")
            )
        }
    );
    Ok(Edit {
        command: Command::Verdict,
        summary,
        entries: vec![Entry::new(
            artifact_section(target, true),
            format!(
                "{UNABLE} — {noun_lc} {unit} {counter} — {} — {}",
                ctx.agent, ctx.now
            ),
            text,
        )],
    })
}

/// The round of `target` after a change to its verdicts or to who must give one: when no required
/// reviewer is pending it is complete and the board takes the round's outcome (or the decision
/// the ledger's cap calls for). Returns the clause for the summary.
pub(crate) fn settle_round(fm: &mut Frontmatter, ctx: &Ctx, target: Target) -> String {
    let r = protocol::round(fm, target);
    if r.complete && crate::law::dissent::stage_open(fm) == Some(target) {
        format!(
            "; the reviewers passed {target} {}: the gate waits for a fresh dissenter (`pair \
             dissent`, dissent round {} of {})",
            r.counter,
            crate::law::dissent::rounds_on(fm, target) + 1,
            crate::law::dissent::MAX_ROUNDS
        )
    } else if r.complete {
        let from = fm.phase;
        let to = crate::law::ledger::round_end(fm, target, r.approved);
        set_phase(fm, ctx, to);
        format!("; the round is complete: {from} → {to}")
    } else {
        format!("; still waiting for {}", r.pending.join(", "))
    }
}

/// The heading of a review entry: the round's label, the reviewer, its verdict (and whether it
/// replaces an earlier one on the same counter), the time. One form for every write that records
/// a verdict, so `validate` can hold the frontmatter's verdicts to the body's.
pub(crate) fn review_heading(
    fm: &Frontmatter,
    ctx: &Ctx,
    target: Target,
    verdict: Verdict,
    replaced: bool,
) -> String {
    let counter = fm.counter(target);
    let (noun, unit) = target_noun(target);
    let label = match (target, fm.phase.diff_scope()) {
        (Target::Code, Some(DiffScope::Unstaged)) => format!("Follow-up review — round {counter}"),
        (Target::Code, _) => format!("Code review — round {counter}"),
        _ => format!("{noun} review — {unit} {counter}"),
    };
    format!(
        "{label} — {} — {verdict}{} — {}",
        ctx.agent,
        if replaced {
            " (replaces earlier verdict)"
        } else {
            ""
        },
        ctx.now
    )
}

/// `unregister`: a reviewer withdraws a registration the user did not ask for. The law allows
/// it only for the agent's own entry, with no verdict given and not required.
pub fn unregister(fm: &mut Frontmatter, ctx: &Ctx) -> Result<Edit> {
    admit(fm, ctx, Command::Unregister)?;
    fm.agents.retain(|(id, _)| id != &ctx.agent);
    Ok(Edit {
        command: Command::Unregister,
        summary: format!("{} withdrew its registration", ctx.agent),
        entries: vec![],
    })
}

/// `correct`: a reviewer corrects its own review of `target`'s `counter` (whose verdict was
/// `verdict`) once that review's round has closed — while it is open, the reviewer replaces its
/// verdict instead, which the round counts. The verdict stands; the correction is an entry of
/// its own in the review's section, attributed and linked to the review by its heading, and
/// shown beside it.
pub fn correct(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    target: Target,
    counter: u32,
    verdict: Verdict,
    text: &str,
) -> Result<Edit> {
    admit(fm, ctx, Command::Correct)?;
    let text = checked_note(text)?;
    let (noun, unit) = target_noun(target);
    let what = format!("{} {unit} {counter}", noun.to_lowercase());
    if fm.phase.review_target() == Some(target) && fm.counter(target) == counter {
        return Err(Error::refused(
            format!(
                "the round of {what} is still open: replace your verdict instead (it is the one \
                 the round counts; `pair verdict … --revision {counter}`); a correction is for a \
                 review whose round has closed"
            ),
            Hint::Run {
                command: "verdict",
                args: vec![
                    "--agent".into(),
                    ctx.agent.clone(),
                    "VERDICT".into(),
                    "--revision".into(),
                    counter.to_string(),
                    "--note-file".into(),
                    "FILE".into(),
                ],
            },
        ));
    }
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Correct,
        summary: format!(
            "{} corrected its review of {what} ({verdict}; the verdict stands)",
            ctx.agent
        ),
        entries: vec![Entry::new(
            artifact_section(target, true),
            crate::board::entry::correction_heading(target, counter, &ctx.agent, ctx.now),
            format!(
                "Corrects {}'s review of {what} ({verdict}), after its round closed; the verdict \
                 stands.\n\n{}",
                ctx.agent,
                text.trim_end()
            ),
        )],
    })
}
