//! The git lifecycle's own operations: recording a worktree `pair worktree create` made, and a
//! validation run `pair check` made. Both take what git and the command observed as arguments
//! (gathered before the lock) and only edit the board.

use super::{AdvanceArgs, Ctx, Edit, Entry, admit, advance, touch};
use crate::board::checks::CheckRun;
use crate::board::entry::DECISIONS;
use crate::board::frontmatter::{Frontmatter, Phase};
use crate::error::{Error, Flag, Hint, Result};
use crate::law;
use crate::law::protocol::Command;

/// The worktree `pair worktree create` made, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub repo_root: String,
    pub base_branch: Option<String>,
    pub base_sha: String,
    pub topic_branch: String,
    pub worktree: String,
}

/// The phase `pair worktree create` moves to (the law's [`law::protocol::worktree_step`]).
pub fn worktree_target(fm: &Frontmatter) -> Phase {
    law::protocol::worktree_step(fm).unwrap_or(Phase::Coding)
}

/// Whether the doer may create the worktree now (phase, standing, nothing recorded yet, the
/// user's approval of the human gate): checked before git makes anything, and again in the write.
pub fn admit_create(fm: &Frontmatter, ctx: &Ctx) -> Result<Phase> {
    law::admit_phase(fm, &ctx.agent, Command::Advance)?;
    let red_test = matches!(
        fm.phase,
        Phase::RedTesting
            | Phase::RedTestChangesRequested
            | Phase::RedTestSubmitted
            | Phase::ReviewingRedTest
    );
    if red_test && fm.worktree.is_none() {
        return Err(Error::protocol(format!(
            "`pair worktree create` is the step out of PLAN_APPROVED or RED_TEST_APPROVED; the \
             blackboard is {} with no worktree (it left PLAN_APPROVED by `advance`): write the \
             red test where it is, submit it with `--files` naming the test files, and create \
             the worktree once the red test is approved (RED_TEST_APPROVED), copying the test \
             into it",
            fm.phase
        )));
    }
    if !matches!(fm.phase, Phase::PlanApproved | Phase::RedTestApproved) {
        return Err(Error::protocol(format!(
            "`pair worktree create` is the step out of PLAN_APPROVED (or RED_TEST_APPROVED); \
             the blackboard is {}{}",
            fm.phase,
            match &fm.worktree {
                Some(w) => format!(" and already records the worktree {w}"),
                None => String::new(),
            }
        )));
    }
    admit(fm, ctx, Command::Advance)?;
    if let Some(w) = fm.worktree.as_deref().or(fm.audit.repo_root.as_deref()) {
        return Err(Error::protocol(format!(
            "the blackboard already records a worktree or repository ({w}); a board has one"
        )));
    }
    let to = worktree_target(fm);
    if !fm.yolo && !ctx.consent.user_approved {
        return Err(Error::refused(
            format!(
                "human gate: creating the worktree moves {} → {to} and needs the user's \
                 approval. Ask the user, then run it again with --user-approved",
                fm.phase
            ),
            Hint::Rerun {
                add: vec![Flag::bare("--user-approved")],
            },
        ));
    }
    Ok(to)
}

/// `pair worktree create`: record the worktree, its repository, branch and base in the same
/// write as the move out of PLAN_APPROVED.
pub fn create_worktree(fm: &mut Frontmatter, ctx: &Ctx, c: &Created) -> Result<Edit> {
    let to = admit_create(fm, ctx)?;
    let from = fm.phase;
    let args = AdvanceArgs {
        worktree: (to == Phase::Coding).then(|| c.worktree.clone()),
        ..AdvanceArgs::default()
    };
    let mut edit = advance(fm, ctx, to, &args)?;
    fm.worktree = Some(c.worktree.clone());
    fm.audit.repo_root = Some(c.repo_root.clone());
    fm.audit.base_branch = c.base_branch.clone();
    fm.audit.base_sha = Some(c.base_sha.clone());
    fm.audit.topic_branch = Some(c.topic_branch.clone());
    // The law records the approval of PLAN_APPROVED → CODING's gate; the other rows have none,
    // so the approval this command asked for is recorded here.
    let approval = match (from, to, fm.yolo) {
        (Phase::PlanApproved, Phase::Coding, _) | (_, _, true) => String::new(),
        _ => format!(
            "\n\nThe user approved creating it (`{}`).",
            ctx.consent.invocation
        ),
    };
    edit.entries.push(Entry::new(
        DECISIONS,
        format!("Worktree created — {} — {}", ctx.agent, ctx.now),
        format!(
            "Worktree {} on the new branch {} from {} ({}) of {}.{approval}",
            c.worktree,
            c.topic_branch,
            c.base_branch.as_deref().unwrap_or("a detached HEAD"),
            c.base_sha,
            c.repo_root
        ),
    ));
    edit.summary = format!(
        "created the worktree {} on {}: {}",
        c.worktree, c.topic_branch, edit.summary
    );
    Ok(edit)
}

/// `pair check`: record a validation run as the latest run of its name, with its entry in
/// `## Validation`. `worktree` is the worktree it ran in, which must still be the recorded one.
pub fn record_check(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    run: CheckRun,
    worktree: &str,
    text: String,
) -> Result<Edit> {
    admit(fm, ctx, Command::Check)?;
    if fm.worktree.as_deref() != Some(worktree) {
        return Err(Error::stale_artifact(
            format!(
                "the check ran in {worktree}, but the blackboard now records the worktree {}; \
                 run it again",
                fm.worktree.as_deref().unwrap_or("(none)")
            ),
            Some(crate::error::Hint::Rerun { add: vec![] }),
        ));
    }
    let heading = format!(
        "Check {} — {} — tree {} — {} — {}",
        run.name,
        match run.exit_code {
            Some(0) => "passed (exit 0)".to_string(),
            Some(c) => format!("failed (exit {c})"),
            None => "failed (ended by a signal)".to_string(),
        },
        &run.tree[..run.tree.len().min(12)],
        ctx.agent,
        ctx.now
    );
    let summary = format!(
        "check {}: {} on tree {}",
        run.name,
        if run.passed() { "passed" } else { "failed" },
        &run.tree[..run.tree.len().min(12)]
    );
    match fm.check_runs.iter_mut().find(|r| r.name == run.name) {
        Some(r) => *r = run,
        None => fm.check_runs.push(run),
    }
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Check,
        summary,
        entries: vec![Entry::new("Validation", heading, text)],
    })
}
