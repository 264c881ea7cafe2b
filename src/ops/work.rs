//! The doer's side: submitting artifacts and advancing the phase.

use super::{Ctx, Edit, Entry, admit, checked_note, set_phase, touch};
use crate::board::entry::{DECISIONS, artifact_section, target_noun};
use crate::board::frontmatter::{Frontmatter, Observed, Phase, PinKind, Status};
use crate::error::{Error, Flag, Hint, Result};
use crate::law::protocol::{self, Actor, Artifact, Command, Needs, TRANSITIONS, To, Transition};

/// `submit`: the doer submits an artifact for review.
///
/// `pin` is what the submission observed of its artifact (the hash of the submitted text, of the
/// test files, or of the diff): it is pinned with the new counter. Without one the target is left
/// unpinned, as a raw write may leave it.
pub fn submit(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    artifact: Artifact,
    note: &str,
    no_review: bool,
    pin: Option<Observed>,
) -> Result<Edit> {
    let command = Command::Submit(artifact);
    admit(fm, ctx, command)?;
    let note = checked_note(note)?;
    let from = fm.phase;
    // The law admitted the submission from this phase: the row is there.
    let Some(t) = TRANSITIONS
        .iter()
        .find(|t| t.command == command && t.from.matches(from))
    else {
        return Err(Error::protocol(
            "internal error: submit row without a source",
        ));
    };
    let To::Phase(to) = t.to else {
        return Err(Error::protocol(
            "internal error: submit row without a phase",
        ));
    };
    snapshot_reviewers(fm, t, artifact, no_review)?;
    let target = artifact.target();
    let Some(n) = fm.next_counter(target) else {
        return Err(Error::protocol(format!(
            "`{}` is at its maximum ({}); no further {} can be counted. A human can reset it \
             with `pair write --repair --reason TEXT`",
            target.counter_field(),
            fm.counter(target),
            artifact.as_str()
        )));
    };
    let was_pinned = fm.pin(target).map(|was| (was.counter, was.sha256));
    *fm.counter_mut(target) = n;
    let (_, unit) = target_noun(target);
    let heading = submission_heading(artifact, n, ctx, from);
    // The submitted text is itself the pinned artifact of a text pin, so nothing is added to
    // it; the entry of a diff says which diff it pinned.
    let mut text = note;
    if let Some(p) = pin
        .as_ref()
        .filter(|p| p.kind.can_drift() && p.kind != PinKind::Files)
    {
        let before = was_pinned.map(|(counter, sha)| {
            format!(" (round {counter} was pinned at `{sha}`; it changed after it was submitted)")
        });
        let line = format!(
            "Pinned: {} sha256 `{}`{}.",
            p.kind.describe(),
            p.sha256,
            before.filter(|_| from.is_reviewable()).unwrap_or_default()
        );
        text = if text.trim().is_empty() {
            line
        } else {
            format!("{}\n\n{line}", text.trim_end())
        };
    }
    let pinned = pin.as_ref().map(|p| {
        format!(
            "; pinned the {} at sha256 {}",
            p.kind.describe(),
            p.sha256.short()
        )
    });
    fm.pins.set(target, pin.map(|p| p.pin(n, ctx.now)));
    set_phase(fm, ctx, to);
    touch(fm, ctx, Some(Status::Waiting));
    let verb = if from.is_reviewable() {
        "resubmitted"
    } else {
        "submitted"
    };
    let mut summary = format!(
        "{verb} {} {unit} {n}: {from} → {to}{}",
        artifact.as_str(),
        pinned.unwrap_or_default()
    );
    // Nobody to review (an approved no-review workflow): the row completes the empty round.
    let r = protocol::round(fm, target);
    if t.completes_empty_round && r.complete && !fm.has_reviewers() {
        let out = protocol::outcome_phase(target, r.approved);
        set_phase(fm, ctx, out);
        touch(fm, ctx, Some(Status::Working));
        summary.push_str(&format!(" → {out} (no reviewers required)"));
    }
    Ok(Edit {
        command,
        summary,
        entries: vec![Entry::new(artifact_section(target, false), heading, text)],
    })
}

/// Who reviews: the first submission snapshots the registered reviewers; with nobody
/// registered it needs the user's approval of a no-review workflow.
fn snapshot_reviewers(
    fm: &mut Frontmatter,
    t: &Transition,
    artifact: Artifact,
    no_review: bool,
) -> Result<()> {
    // A pool gives the reviews: the members take them one by one, nobody is snapshotted.
    if fm.required_reviewers.is_empty() && !fm.no_review && fm.pool.is_none() {
        fm.required_reviewers = fm.reviewers().into_iter().map(String::from).collect();
    }
    if !fm.has_reviewers() && !fm.no_review {
        if let Some(why) = crate::law::dissent::no_review_refusal(fm) {
            return Err(Error::refused(
                why,
                Hint::Run {
                    command: "poll",
                    args: vec!["--wait".into()],
                },
            ));
        }
        if !no_review {
            let mut add = vec![Flag::bare("--no-review")];
            if t.human_gate && !fm.yolo {
                add.push(Flag::bare("--user-approved"));
            }
            return Err(Error::refused(
                format!(
                    "no reviewers are registered, so nobody would review this {}. Have reviewers \
                     run `pair register` first, or, if the user approved working without review, \
                     submit again with --no-review",
                    artifact.as_str()
                ),
                Hint::Rerun { add },
            ));
        }
        fm.no_review = true;
    } else if no_review && fm.has_reviewers() {
        return Err(Error::protocol(format!(
            "--no-review applies only when no reviewers are registered; required reviewers: {}",
            fm.required_reviewers.join(", ")
        )));
    }
    Ok(())
}

/// The heading of submission number `n` of an artifact (a resubmission from a review phase,
/// after its artifact drifted, says so).
fn submission_heading(artifact: Artifact, n: u32, ctx: &Ctx, from: Phase) -> String {
    let (noun, unit) = target_noun(artifact.target());
    let verb = if from.is_reviewable() {
        "resubmitted"
    } else {
        "submitted"
    };
    match artifact {
        Artifact::Code => format!(
            "Code review round {n} — {verb} (staged diff) — {} — {}",
            ctx.agent, ctx.now
        ),
        Artifact::Followup => format!(
            "Follow-up review round {n} — {verb} (unstaged diff) — {} — {}",
            ctx.agent, ctx.now
        ),
        _ if from.is_reviewable() => {
            format!("{noun} {unit} {n} — {verb} — {} — {}", ctx.agent, ctx.now)
        }
        _ => format!("{noun} {unit} {n} — {} — {}", ctx.agent, ctx.now),
    }
}

/// Extra inputs of `advance`.
#[derive(Debug, Clone, Default)]
pub struct AdvanceArgs {
    pub worktree: Option<String>,
    pub commit_sha: Option<String>,
    pub merged_into: Option<String>,
    pub note: Option<String>,
    /// `--keep-branch` (CLEANED_UP): the topic branch is kept on purpose.
    pub keep_branch: bool,
    /// What git said about the step, gathered before the write (see [`crate::law::lifecycle`]).
    pub facts: Option<crate::law::lifecycle::Facts>,
}

/// The doer's `advance` row from the current phase to `to`, or a refusal naming the moves there
/// are.
fn advance_row(fm: &Frontmatter, ctx: &Ctx, to: Phase) -> Result<&'static Transition> {
    let from = fm.phase;
    let candidates: Vec<&'static Transition> = TRANSITIONS
        .iter()
        .filter(|t| t.command == Command::Advance && t.actor == Actor::Doer && t.from.matches(from))
        .collect();
    if let Some(t) = candidates.iter().find(|t| t.to == To::Phase(to)) {
        return Ok(t);
    }
    let options: Vec<String> = candidates
        .iter()
        .filter_map(|t| match t.to {
            To::Phase(p) => Some(p.to_string()),
            _ => None,
        })
        .collect();
    let submit = TRANSITIONS.iter().find(|t| {
        matches!(t.command, Command::Submit(_)) && t.from.matches(from) && t.to == To::Phase(to)
    });
    let (hint_text, hint) = if from.is_reviewable() {
        (
            " (the phase moves on by itself when the last required reviewer gives a verdict)"
                .to_string(),
            None,
        )
    } else if let Some(Command::Submit(a)) = submit.map(|t| t.command)
        && fm.doer() == Some(ctx.agent.as_str())
    {
        (
            format!("; {to} is reached by submitting the {}", a.as_str()),
            Some(Hint::Run {
                command: "submit",
                args: vec![
                    "--agent".into(),
                    ctx.agent.clone(),
                    a.as_str().into(),
                    "--note-file".into(),
                    "FILE".into(),
                ],
            }),
        )
    } else {
        (String::new(), None)
    };
    let message = if options.is_empty() {
        format!("the doer cannot advance from {from}{hint_text}")
    } else {
        format!(
            "the doer cannot advance from {from} to {to}; from {from} it can advance to {}{hint_text}",
            options.join(" or ")
        )
    };
    Err(match hint {
        Some(h) => Error::refused(message, h),
        None => Error::protocol(message),
    })
}

/// Check the flag the row needs (`--worktree`, `--commit-sha`, `--merged-into`) and refuse one
/// it does not use.
fn check_needs(fm: &Frontmatter, t: &Transition, to: Phase, args: &AdvanceArgs) -> Result<()> {
    let from = fm.phase;
    match t.needs {
        Needs::Worktree => match (&args.worktree, &fm.worktree) {
            (Some(w), _) => check_worktree_arg(w)?,
            (None, Some(_)) => {}
            (None, None) => {
                return Err(Error::Usage(format!(
                    "{from} → {to} needs the coding worktree: add --worktree ABSOLUTE_PATH \
                     (`pair worktree-path BOARD` prints the default)"
                )));
            }
        },
        Needs::CommitSha => match &args.commit_sha {
            Some(s)
                if s.len() >= 4 && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) => {}
            Some(s) => {
                return Err(Error::Usage(format!(
                    "--commit-sha {s:?} is not a git commit hash (4-64 hex digits)"
                )));
            }
            None => {
                return Err(Error::Usage(format!(
                    "{from} → {to} needs --commit-sha SHA (the commit you made)"
                )));
            }
        },
        Needs::MergedInto => match &args.merged_into {
            Some(b) if !b.trim().is_empty() && !b.chars().any(char::is_control) => {}
            Some(_) => {
                return Err(Error::Usage(
                    "--merged-into needs a branch name (no control characters)".into(),
                ));
            }
            None => {
                return Err(Error::Usage(format!(
                    "{from} → {to} needs --merged-into BRANCH"
                )));
            }
        },
        Needs::Nothing => {}
    }
    if t.needs != Needs::Worktree && args.worktree.is_some() {
        return Err(Error::Usage(format!(
            "--worktree is only used when advancing to CODING, not to {to}"
        )));
    }
    Ok(())
}

/// Record the audit fields of the commit/merge/cleanup steps; the Decisions entry they leave.
fn record_step(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    to: Phase,
    args: &AdvanceArgs,
) -> Option<(String, String)> {
    match to {
        Phase::Coding => {
            if let Some(w) = &args.worktree {
                fm.worktree = Some(w.clone());
            }
            None
        }
        Phase::Committed => {
            fm.audit.commit_sha = args.commit_sha.clone();
            Some((
                format!(
                    "Committed — round {} — {} — {}",
                    fm.code_review_round, ctx.agent, ctx.now
                ),
                format!(
                    "Commit {} in {}.",
                    args.commit_sha.as_deref().unwrap_or_default(),
                    fm.worktree.as_deref().unwrap_or_default()
                ),
            ))
        }
        Phase::Merged => {
            fm.audit.merged_into = args.merged_into.clone();
            fm.audit.merged_at = Some(ctx.now);
            Some((
                format!("Merged — {} — {}", ctx.agent, ctx.now),
                format!(
                    "Merged into {}.",
                    args.merged_into.as_deref().unwrap_or_default()
                ),
            ))
        }
        Phase::CleanedUp => {
            fm.audit.worktree_removed = Some(true);
            Some((
                format!("Cleaned up — {} — {}", ctx.agent, ctx.now),
                format!(
                    "Worktree {} removed.",
                    fm.worktree.as_deref().unwrap_or_default()
                ),
            ))
        }
        _ => None,
    }
}

/// `advance`: the doer's phase moves.
pub fn advance(fm: &mut Frontmatter, ctx: &Ctx, to: Phase, args: &AdvanceArgs) -> Result<Edit> {
    // The phase first (terminal, then the row to `to`), then the caller's standing.
    crate::law::admit_phase(fm, &ctx.agent, Command::Advance)?;
    let from = fm.phase;
    let t = advance_row(fm, ctx, to)?;
    admit(fm, ctx, Command::Advance)?;
    check_needs(fm, t, to, args)?;
    if args.keep_branch && to != Phase::CleanedUp {
        return Err(Error::Usage(format!(
            "--keep-branch is only used when advancing to CLEANED_UP, not to {to}"
        )));
    }
    let note = args.note.as_deref().map(checked_note).transpose()?;
    // The git lifecycle's checks, on the board as it is under the lock.
    let checked = crate::law::lifecycle::verify(fm, to, args.facts.as_ref(), args.keep_branch)?;
    let waived =
        crate::law::lifecycle::rule(&checked, &ctx.consent, from, to, &ctx.agent, ctx.now)?;
    let mut record = record_step(fm, ctx, to, args);
    if let Some((_, text)) = &mut record {
        if !checked.passed.is_empty() {
            text.push_str("\n\nVerified: ");
            text.push_str(&checked.passed.join("; "));
            text.push('.');
        }
        if args.keep_branch {
            text.push_str(&format!(
                "\n\nThe topic branch {} is kept (--keep-branch).",
                fm.audit
                    .topic_branch
                    .as_deref()
                    .unwrap_or("(none recorded)")
            ));
        }
    }
    if let Some(note) = note {
        match &mut record {
            Some((_, text)) => {
                text.push_str("\n\n");
                text.push_str(note.trim_end());
            }
            None => {
                record = Some((
                    format!("Advance {from} → {to} — {} — {}", ctx.agent, ctx.now),
                    note,
                ));
            }
        }
    }
    set_phase(fm, ctx, to);
    touch(
        fm,
        ctx,
        Some(if to.is_terminal() {
            Status::Idle
        } else {
            Status::Working
        }),
    );
    Ok(Edit {
        command: Command::Advance,
        summary: format!("{from} → {to}"),
        entries: waived
            .into_iter()
            .chain(record)
            .map(|(h, text)| Entry::new(DECISIONS, h, text))
            .collect(),
    })
}

/// `--worktree` must be an absolute path with no `..` component.
pub fn check_worktree_arg(w: &str) -> Result<()> {
    let p = std::path::Path::new(w);
    if !p.is_absolute() {
        return Err(Error::Usage(format!(
            "--worktree {w:?} must be an absolute path"
        )));
    }
    if p.components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(Error::Usage(format!(
            "--worktree {w:?} must not contain `..`"
        )));
    }
    if w.chars().any(char::is_control) {
        return Err(Error::Usage(
            "--worktree must not contain control characters or line breaks".into(),
        ));
    }
    Ok(())
}
