//! The semantic commands: each is one locked write that applies an operation of [`crate::ops`]
//! to the blackboard as found under the lock.

use std::path::Path;

use serde_json::json;

use super::{Outcome, read_text, shown, timeout};
use crate::cli::{
    AdvanceArgs, ArtifactArg, ClaimArgs, NoteArgs, NoteText, ReasonArgs, RegisterArgs, SubmitArgs,
    VerdictArgs, WriteCommon,
};
use crate::engine;
use crate::error::{Error, Result};
use crate::law::Consent;
use crate::model::{Frontmatter, Verdict};
use crate::ops::{self, Ctx, Edit};
use crate::protocol::{self, Artifact};
use crate::report::SCHEMA;
use crate::store::{Expect, WriteOptions};

fn note_text(t: &NoteText, required: bool) -> Result<Option<String>> {
    let text = match (&t.note, &t.note_file) {
        (Some(n), _) => n.clone(),
        (None, Some(f)) => read_text(f, "--note-file")?,
        (None, None) if required => {
            return Err(Error::Usage(
                "give the text with --note TEXT or --note-file FILE (`-` for stdin)".into(),
            ));
        }
        (None, None) => return Ok(None),
    };
    Ok(Some(if t.code { fenced(&text) } else { text }))
}

/// Wrap text in a code fence longer than any run of backticks inside it.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = crate::document::normalize_newlines(text);
    format!("{fence}\n{}\n{fence}", body.trim_end_matches('\n'))
}

fn expect(common: &WriteCommon) -> Result<Expect> {
    match &common.expect_sha256 {
        None => Ok(Expect::Present),
        Some(h) => {
            let h = h.trim().to_lowercase();
            if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(Error::Usage(format!(
                    "--expect-sha256 must be 64 hex digits, got {h:?}"
                )));
            }
            Ok(Expect::Sha256(h))
        }
    }
}

/// The user's consent given on the command line, and the command as it was run.
fn consent(user_approved: bool, waive: Option<String>) -> Consent {
    Consent {
        user_approved,
        waive,
        invocation: super::invocation(),
    }
}

/// Apply one operation in one locked write and report the result.
fn apply<F>(
    board: &Path,
    common: &WriteCommon,
    operation: &str,
    consent: Consent,
    op: F,
) -> Result<Outcome>
where
    F: FnOnce(&mut Frontmatter, &Ctx) -> Result<Edit>,
{
    super::agent_arg("--agent", &common.agent)?;
    let shown_board = shown(board);
    let opts = WriteOptions {
        timeout: timeout(common.timeout)?,
        agent: Some(common.agent.clone()),
        operation: operation.to_string(),
    };
    let committed = engine::transact(board, expect(common)?, &opts, &common.agent, &consent, op)
        .map_err(|e| e.suggest(&super::argv(), Some(&shown_board)))?;
    let written = &committed.written;
    let summary = &committed.summary;
    let fm = &written.parsed.fm;
    let next = protocol::next(fm, &common.agent, &super::place(board, fm));
    let your_turn = next.handoff_to.iter().any(|h| h == &common.agent);
    let json = json!({
        "schema": SCHEMA,
        "path": shown_board,
        "operation": operation,
        "agent": common.agent,
        "summary": summary,
        "old_phase": committed.old_phase,
        "phase": fm.phase,
        "old_sha256": written.old_sha256,
        "new_sha256": written.new_sha256,
        "counters": {
            "analysis_revision": fm.analysis_revision,
            "plan_revision": fm.plan_revision,
            "red_test_round": fm.red_test_round,
            "code_review_round": fm.code_review_round,
        },
        "next": next,
        "your_turn": your_turn,
        "warnings": written.warnings,
    });
    let text = format!("{summary}\nphase: {}\nnext: {}\n", fm.phase, next.action);
    let mut out = Outcome::ok(json, text);
    out.warnings = committed.written.warnings;
    Ok(out)
}

pub fn register(a: RegisterArgs) -> Result<Outcome> {
    let required = a.required;
    let mut near = String::new();
    let mut out = apply(
        &a.board,
        &a.common,
        "register",
        consent(false, None),
        |fm, ctx| {
            let edit = ops::register(fm, ctx, required)?;
            if !fm.required_reviewers.contains(&ctx.agent) {
                near = crate::law::did_you_mean(fm, &ctx.agent);
            }
            Ok(edit)
        },
    )?;
    // A registration under a mistyped id waits forever: say so, and how to withdraw it.
    if !near.is_empty() {
        let warning = format!(
            "{:?} is not a required reviewer{near}; if you meant that id, withdraw this \
             registration with `pair unregister {} --agent {}` and use the right --agent",
            a.common.agent,
            protocol::shell_word(&shown(&a.board)),
            protocol::shell_arg(&a.common.agent)
        );
        if let Some(w) = out.json.get_mut("warnings").and_then(|w| w.as_array_mut()) {
            w.push(json!(warning));
        }
        out.warnings.push(warning);
    }
    Ok(out)
}

pub fn unregister(a: ClaimArgs) -> Result<Outcome> {
    apply(
        &a.board,
        &a.common,
        "unregister",
        consent(false, None),
        ops::unregister,
    )
}

pub fn claim(a: ClaimArgs) -> Result<Outcome> {
    apply(
        &a.board,
        &a.common,
        "claim",
        consent(false, None),
        ops::claim,
    )
}

pub fn submit(a: SubmitArgs) -> Result<Outcome> {
    let artifact = match a.artifact {
        ArtifactArg::Analysis => Artifact::Analysis,
        ArtifactArg::Plan => Artifact::Plan,
        ArtifactArg::RedTest => Artifact::RedTest,
        ArtifactArg::Code => Artifact::Code,
        ArtifactArg::Followup => Artifact::Followup,
    };
    let note = note_text(&a.text, true)?.unwrap_or_default();
    let no_review = a.no_review;
    apply(
        &a.board,
        &a.common,
        &format!("submit-{}", artifact.as_str()),
        consent(a.user_approved, a.waive.clone()),
        |fm, ctx| ops::submit(fm, ctx, artifact, &note, no_review),
    )
}

pub fn verdict(a: VerdictArgs) -> Result<Outcome> {
    let v = match a.verdict {
        crate::cli::VerdictArg::Approved => Verdict::Approved,
        crate::cli::VerdictArg::ChangesRequested => Verdict::ChangesRequested,
        crate::cli::VerdictArg::Comment => Verdict::Comment,
    };
    let note = note_text(&a.text, true)?.unwrap_or_default();
    let revision = a.revision;
    apply(
        &a.board,
        &a.common,
        "verdict",
        consent(false, None),
        |fm, ctx| ops::verdict(fm, ctx, v, revision, &note),
    )
}

pub fn advance(a: AdvanceArgs) -> Result<Outcome> {
    let to = a.phase;
    let args = ops::AdvanceArgs {
        worktree: a.worktree.clone(),
        commit_sha: a.commit_sha.clone(),
        merged_into: a.merged_into.clone(),
        note: note_text(&a.text, false)?,
    };
    apply(
        &a.board,
        &a.common,
        "advance",
        consent(a.user_approved, a.waive.clone()),
        |fm, ctx| ops::advance(fm, ctx, to, &args),
    )
}

pub fn block(a: ReasonArgs) -> Result<Outcome> {
    let reason = a.reason.clone();
    apply(
        &a.board,
        &a.common,
        "block",
        consent(false, None),
        |fm, ctx| ops::block(fm, ctx, &reason),
    )
}

pub fn unblock(a: ReasonArgs) -> Result<Outcome> {
    let reason = a.reason.clone();
    apply(
        &a.board,
        &a.common,
        "unblock",
        consent(false, None),
        |fm, ctx| ops::unblock(fm, ctx, &reason),
    )
}

pub fn stop(a: ReasonArgs) -> Result<Outcome> {
    let reason = a.reason.clone();
    apply(
        &a.board,
        &a.common,
        "stop",
        consent(false, None),
        |fm, ctx| ops::stop(fm, ctx, &reason),
    )
}

pub fn note(a: NoteArgs) -> Result<Outcome> {
    let text = note_text(&a.text, true)?.unwrap_or_default();
    let section = a.section.clone();
    let new_section = a.new_section;
    apply(
        &a.board,
        &a.common,
        "note",
        consent(false, None),
        |fm, ctx| ops::note_in(fm, ctx, &section, &text, new_section),
    )
}
