//! The semantic commands: each is one locked write that applies an operation of [`crate::ops`]
//! to the blackboard as found under the lock.

use std::path::Path;

use serde_json::json;

use super::{Outcome, published, read_text, shown};
use crate::board::frontmatter::{Frontmatter, Observed, Phase, PinKind, Sha256, Verdict};
use crate::cli::{
    AdvanceArgs, ArtifactArg, ClaimArgs, CorrectArgs, NoteArgs, NoteText, ReasonArgs, RegisterArgs,
    SubmitArgs, VerdictArgs, WriteCommon,
};
use crate::error::{Error, Result};
use crate::law::protocol::{self, Artifact, Command, TRANSITIONS};
use crate::law::{self, Consent};
use crate::ops::{self, Ctx, Edit};
use crate::render::report::SCHEMA;
use crate::repo::pin::{self, DiffSource, Judged};
use crate::store::Session;
use crate::store::{self, Depth, Expect, Snapshot, WriteOptions};
use crate::text::shell_word;
use crate::transaction;

/// The note of a command as its entry will hold it (see [`ops::note_text`]), and the warning
/// to give when its headings were demoted.
fn note_text(t: &NoteText, required: bool) -> Result<(Option<String>, Vec<String>)> {
    let text = match (&t.note, &t.note_file) {
        (Some(n), _) => n.clone(),
        (None, Some(f)) => read_text(f, "--note-file")?,
        (None, None) if required => {
            return Err(Error::NoText {
                what: "text",
                flag: "note",
            });
        }
        (None, None) => return Ok((None, vec![])),
    };
    if t.code {
        return Ok((Some(fenced(&text)), vec![]));
    }
    let (text, warning) = ops::note_text(&text);
    Ok((Some(text), warning.into_iter().collect()))
}

/// Add warnings to a command's result (stderr and the JSON `warnings`).
pub(super) fn add_warnings(out: &mut Outcome, warnings: Vec<String>) {
    if let Some(list) = out.json.get_mut("warnings").and_then(|w| w.as_array_mut()) {
        list.extend(warnings.iter().map(|w| json!(w)));
    }
    out.warnings.extend(warnings);
}

/// Wrap text in a code fence longer than any run of backticks inside it.
pub(super) fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = crate::board::document::normalize_newlines(text);
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
pub(super) fn consent(user_approved: bool, waive: Option<String>) -> Consent {
    Consent {
        user_approved,
        waive,
        invocation: super::invocation(),
        ..Consent::default()
    }
}

/// Check what every write's arguments carry — the agent, `--timeout`, `--expect-sha256`, the
/// usage it reports — before the board is read: a usage error is reported as one whether or not
/// the board exists or its remote answers.
pub(super) fn check_common(common: &WriteCommon) -> Result<()> {
    super::agent_arg("--agent", &common.agent)?;
    super::timeout(common.timeout)?;
    expect(common)?;
    let _: crate::board::journal::Usage = (&common.usage).try_into()?;
    Ok(())
}

/// Apply one operation in one locked write and report the result.
pub(super) fn apply<F>(
    board: &Path,
    common: &WriteCommon,
    operation: &str,
    consent: Consent,
    s: &Session,
    op: F,
) -> Result<Outcome>
where
    F: FnMut(&mut Frontmatter, &Ctx) -> Result<Edit>,
{
    // The arguments are checked before the board is read.
    check_common(common)?;
    let snap = store::snapshot(board, Depth::Edit { fresh: false }, s)?;
    apply_on(snap, common, operation, consent, s, Vec::new(), op)
}

/// [`apply`] on the board the edge read before it chose this handler (`first`: the read, or
/// why it failed, reported after the arguments are checked).
pub(super) fn apply_read<F>(
    first: Result<Snapshot>,
    common: &WriteCommon,
    operation: &str,
    consent: Consent,
    s: &Session,
    op: F,
) -> Result<Outcome>
where
    F: FnMut(&mut Frontmatter, &Ctx) -> Result<Edit>,
{
    check_common(common)?;
    apply_on(first?, common, operation, consent, s, Vec::new(), op)
}

/// [`apply`] on the board the command read as `snap`, publishing commits with the write (a git
/// board pushes them atomically with it).
pub(super) fn apply_on<F>(
    snap: Snapshot,
    common: &WriteCommon,
    operation: &str,
    consent: Consent,
    s: &Session,
    publish: Vec<store::Publish>,
    op: F,
) -> Result<Outcome>
where
    F: FnMut(&mut Frontmatter, &Ctx) -> Result<Edit>,
{
    super::agent_arg("--agent", &common.agent)?;
    let board = &snap.path().to_path_buf();
    let shown_board = shown(board);
    let opts = WriteOptions {
        publish,
        ..super::write_options(
            operation,
            common.timeout,
            Some(common.agent.clone()),
            (&common.usage).try_into()?,
        )?
    };
    let committed = transaction::Transaction::open(snap, &common.agent, consent, s)
        .expect(expect(common)?)
        .commit(&opts, op)
        .map_err(|e| e.suggest(&super::argv(), Some(&shown_board)))?;
    let written = &committed.written;
    let summary = &committed.summary;
    let fm = &written.parsed.fm;
    let next = protocol::next(fm, &common.agent, &super::place(board, fm));
    let your_turn = next.handoff_to.iter().any(|h| h == &common.agent);
    let pin = crate::render::report::current_target(fm).and_then(|t| {
        fm.pin(t).map(|p| {
            json!({"target": t, "counter": p.counter, "kind": p.kind, "sha256": p.sha256,
                   "files": p.files, "tree": p.tree,
                   "commit": p.published.as_ref().map(|x| &x.commit),
                   "ref": p.published.as_ref().map(|x| &x.refname),
                   "paths": p.published.as_ref().map(|x| &x.paths)})
        })
    });
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
        "pin": pin,
        "next": next,
        "your_turn": your_turn,
        "warnings": written.warnings,
    });
    let text = format!("{summary}\nphase: {}\nnext: {}\n", fm.phase, next.action);
    let mut out = Outcome::ok(json, text);
    out.warnings = committed.written.warnings;
    add_warnings(&mut out, committed.warnings);
    Ok(out)
}

pub fn register(a: RegisterArgs, s: &Session) -> Result<Outcome> {
    let required = a.required;
    let mut near = String::new();
    let mut out = apply(
        &a.board,
        &a.common,
        "register",
        consent(false, None),
        s,
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
            crate::text::shell_word(&shown(&a.board)),
            crate::text::shell_arg(&a.common.agent)
        );
        if let Some(w) = out.json.get_mut("warnings").and_then(|w| w.as_array_mut()) {
            w.push(json!(warning));
        }
        out.warnings.push(warning);
    }
    Ok(out)
}

pub fn unregister(a: ClaimArgs, s: &Session) -> Result<Outcome> {
    apply(
        &a.board,
        &a.common,
        "unregister",
        consent(false, None),
        s,
        ops::unregister,
    )
}

pub fn claim(a: ClaimArgs, s: &Session) -> Result<Outcome> {
    apply(
        &a.board,
        &a.common,
        "claim",
        consent(false, None),
        s,
        ops::claim,
    )
}

pub fn submit(a: SubmitArgs, s: &Session) -> Result<Outcome> {
    let artifact = match a.artifact {
        ArtifactArg::Analysis => Artifact::Analysis,
        ArtifactArg::Plan => Artifact::Plan,
        ArtifactArg::RedTest => Artifact::RedTest,
        ArtifactArg::Code => Artifact::Code,
        ArtifactArg::Followup => Artifact::Followup,
    };
    let (note, note_warnings) = note_text(&a.text, true)?;
    let note = note.unwrap_or_default();
    let no_review = a.no_review;
    if !a.files.is_empty() && artifact != Artifact::RedTest {
        return Err(Error::Usage(format!(
            "--files names a red test's test files; `submit {}` pins {}",
            artifact.as_str(),
            match artifact {
                Artifact::Code => "the staged diff",
                Artifact::Followup => "the unstaged diff",
                _ => "the submitted text",
            }
        )));
    }
    // What the submission pins is read before the lock (git can take a while on a big diff);
    // the write then checks that the worktree and base it was read from are still the ones
    // recorded. On a git board it is also published: a commit pushed with the write.
    super::agent_arg("--agent", &a.common.agent)?;
    check_common(&a.common)?;
    // What the submission pins is derived from the board read now, and the write edits that
    // read.
    let snap = store::snapshot(&a.board, Depth::Edit { fresh: true }, s)?;
    let key = published::board_key(&a.board);
    let message = format!("pair: the {} submitted for review", artifact.as_str());
    let mut publish = Vec::new();
    // A relative test file is taken from the recorded worktree, where the test is written.
    let worktree = if a.files.is_empty() {
        None
    } else {
        snap.frontmatter()?
            .parsed
            .fm
            .worktree
            .map(std::path::PathBuf::from)
    };
    let (observed, seen) = match artifact {
        Artifact::Code | Artifact::Followup => {
            match observe_diff(&snap, &a.common.agent, artifact, key.as_ref(), &message)? {
                Some((o, src, p)) => {
                    publish.extend(p);
                    (Some(o), Some(src))
                }
                None => (None, None),
            }
        }
        Artifact::RedTest if !a.files.is_empty() => match &key {
            Some(k) => {
                let (mut o, made, paths) = pin::publish_files(
                    &note,
                    &a.files,
                    worktree.as_deref(),
                    None,
                    &message,
                    &a.common.agent,
                )?;
                let (publication, push) = published::publication(k, artifact, &made, paths);
                o.published = Some(publication);
                publish.push(push);
                (Some(o), None)
            }
            None => (
                Some(pin::files(&note, &a.files, worktree.as_deref())?),
                None,
            ),
        },
        _ => (Some(pin::text(&note)), None),
    };
    let rework = a.rework_reason.clone().filter(|_| a.rework);
    let mut out = apply_on(
        snap,
        &a.common,
        &format!("submit-{}", artifact.as_str()),
        consent(a.user_approved, a.waive.clone()),
        s,
        publish,
        move |fm, ctx| {
            if let Some(seen) = &seen
                && DiffSource::of(fm) != *seen
            {
                return Err(Error::stale_artifact(
                    "the worktree or base_sha recorded on the blackboard changed while \
                              the diff was being read; run the command again",
                    Some(crate::error::Hint::Rerun { add: vec![] }),
                ));
            }
            // A rework restarts the gate's rounds before the submission opens round 1.
            let restart = match &rework {
                Some(reason) => Some(ops::ledger::rework(fm, ctx, artifact.target(), reason)?),
                None => None,
            };
            let mut edit = ops::submit(fm, ctx, artifact, &note, no_review, observed.clone())?;
            edit.entries.extend(restart);
            Ok(edit)
        },
    )?;
    add_warnings(&mut out, note_warnings);
    Ok(out)
}

/// The diff a code or follow-up submission pins, read from the worktree the blackboard records
/// (without the lock), and on a git board (`key`) the commit that publishes it. `None` when the
/// submission will be refused anyway (wrong agent, wrong phase, unreadable board): the locked
/// write says why.
fn observe_diff(
    snap: &Snapshot,
    agent: &str,
    artifact: Artifact,
    key: Option<&(String, String)>,
    message: &str,
) -> Result<Option<(Observed, DiffSource, Option<store::Publish>)>> {
    let Ok(valid) = snap.frontmatter() else {
        return Ok(None);
    };
    let fm = &valid.parsed.fm;
    let command = Command::Submit(artifact);
    let has_row = TRANSITIONS
        .iter()
        .any(|t| t.command == command && t.from.matches(fm.phase));
    if !has_row || fm.worktree.is_none() || law::admit(fm, agent, command).is_err() {
        return Ok(None);
    }
    let Some(key) = key else {
        return Ok(Some((
            pin::observe_diff(fm, artifact)?,
            DiffSource::of(fm),
            None,
        )));
    };
    let (mut observed, made) = pin::publish_diff(fm, artifact, message, agent)?;
    let (publication, push) = published::publication(key, artifact, &made, Vec::new());
    observed.published = Some(publication);
    Ok(Some((observed, DiffSource::of(fm), Some(push))))
}

/// What the doer submits again to pin the artifact under review anew: the follow-up in a
/// follow-up review, else the artifact of the gate under review.
pub(super) fn resubmitted(fm: &Frontmatter) -> Artifact {
    let target = fm.phase.review_target();
    match fm.phase {
        Phase::FollowupReview => Artifact::Followup,
        _ => Artifact::ALL
            .iter()
            .copied()
            .find(|a| Some(a.target()) == target)
            .unwrap_or(Artifact::Code),
    }
}

/// The step after a refusal because the artifact under review changed since it was pinned:
/// for the doer, the submission that pins it anew; for anyone else (`agent`, or `ID` when the
/// caller did not say who it is), the wait for that resubmission.
pub(super) fn after_drift(fm: &Frontmatter, agent: Option<&str>) -> crate::error::Hint {
    match (agent, fm.doer()) {
        (Some(a), Some(doer)) if a == doer => crate::error::Hint::Run {
            command: "submit",
            args: vec![
                "--agent".into(),
                doer.into(),
                resubmitted(fm).as_str().into(),
                "--note-file".into(),
                "FILE".into(),
            ],
        },
        _ => crate::error::Hint::Run {
            command: "poll",
            args: vec![
                "--agent".into(),
                agent.unwrap_or("ID").into(),
                "--wait".into(),
            ],
        },
    }
}

/// `--artifact-sha256`: 64 hex digits.
fn sha_arg(s: &str) -> Result<Sha256> {
    Sha256::parse(&s.trim().to_lowercase()).ok_or_else(|| {
        Error::Usage(format!(
            "--artifact-sha256 must be the 64 hex digits `pair diff` or `poll` gave, got {s:?}"
        ))
    })
}

/// What a verdict judged, checked before the lock: the pinned artifact must still be what was
/// submitted, and what the reviewer read (`--artifact-sha256`) must be it. `None` when the
/// verdict will be refused anyway or the round is not pinned (with a warning saying so).
fn judge_artifact(
    snap: &Snapshot,
    agent: &str,
    revision: u32,
    read: Option<Sha256>,
) -> Result<(Option<Sha256>, Vec<String>)> {
    let board = snap.path();
    let Ok(valid) = snap.frontmatter() else {
        return Ok((None, vec![]));
    };
    let fm = &valid.parsed.fm;
    let Some(target) = fm.phase.review_target() else {
        return Ok((None, vec![]));
    };
    if fm.counter(target) != revision
        || !fm.is_required_now(agent)
        || law::admit(fm, agent, Command::Verdict).is_err()
    {
        return Ok((None, vec![]));
    }
    let body = match fm.pin(target) {
        Some(p) if p.kind == PinKind::Files => Some(snap.load()?.valid.doc.body),
        _ => None,
    };
    let resubmit = format!(
        "pair submit {} --agent {} {} --note-file FILE",
        shell_word(&super::shown(board)),
        shell_word(fm.doer().unwrap_or("DOER")),
        resubmitted(fm).as_str()
    );
    let readable = published::readable(board, fm, target)?;
    // A reviewer cannot resubmit: its step is to wait for the doer's resubmission.
    let wait = after_drift(fm, Some(agent));
    match pin::check_verdict(
        fm,
        target,
        body.as_deref(),
        read,
        &resubmit,
        &wait,
        readable.as_ref(),
    )
    .map_err(|e| e.suggest(&super::argv(), Some(&super::shown(board))))?
    {
        Judged::Pinned(h) => Ok((Some(h), vec![])),
        Judged::NotPinned => Ok((
            None,
            vec![format!(
                "{} {} is not pinned (its submission recorded no artifact hash): this verdict is \
                 not checked against the artifact{}",
                target.as_str().replace('_', " "),
                revision,
                if read.is_some() {
                    ", and --artifact-sha256 was not checked"
                } else {
                    ""
                }
            )],
        )),
    }
}

pub fn verdict(a: VerdictArgs, first: Result<Snapshot>, s: &Session) -> Result<Outcome> {
    let v = match a.verdict {
        crate::cli::VerdictArg::Approved => Verdict::Approved,
        crate::cli::VerdictArg::ChangesRequested => Verdict::ChangesRequested,
        crate::cli::VerdictArg::Comment => Verdict::Comment,
        crate::cli::VerdictArg::Unable => return unable(a, first, s),
    };
    if a.reason.is_some() {
        return Err(Error::Usage(
            "--reason goes with UNABLE (a reviewer that could not review says why); a verdict's \
             reasons go in --note or --note-file"
                .into(),
        ));
    }
    let (note, mut warnings) = note_text(&a.text, true)?;
    let note = note.unwrap_or_default();
    let revision = a.revision;
    let read = a.artifact_sha256.as_deref().map(sha_arg).transpose()?;
    super::agent_arg("--agent", &a.common.agent)?;
    check_common(&a.common)?;
    let snap = first?;
    let (judged, judge_warnings) = judge_artifact(&snap, &a.common.agent, revision, read)?;
    warnings.extend(judge_warnings);
    let named = a.objections.clone();
    let no_ids = a.no_objection_ids;
    let mut out = apply_on(
        snap,
        &a.common,
        "verdict",
        Consent {
            no_objection_ids: no_ids,
            ..consent(false, None)
        },
        s,
        Vec::new(),
        |fm, ctx| {
            // The objections a change request is about, checked against the ledger.
            let note = match ops::ledger::named(fm, ctx, v, &named, no_ids)? {
                Some(line) if note.trim().is_empty() => line,
                Some(line) => format!("{}\n\n{line}", note.trim_end()),
                None => note.clone(),
            };
            ops::verdict(fm, ctx, v, revision, &note, judged)
        },
    )?;
    add_warnings(&mut out, warnings);
    Ok(out)
}

/// `dissent`: a fresh dissenter answers the gate its reviewers passed.
pub fn dissent(a: crate::cli::DissentArgs, s: &Session) -> Result<Outcome> {
    let outcome = match a.outcome {
        crate::cli::DissentArg::None => crate::board::dissent::Outcome::Nothing,
        crate::cli::DissentArg::Advisory => crate::board::dissent::Outcome::Advisory,
        crate::cli::DissentArg::Blocking => crate::board::dissent::Outcome::Blocking,
    };
    let (note, warnings) = note_text(&a.text, true)?;
    let note = note.unwrap_or_default();
    super::agent_arg("--agent", &a.common.agent)?;
    let ids: Vec<String> = a.objections.iter().map(|i| i.trim().to_string()).collect();
    let revision = a.revision;
    let mut out = apply(
        &a.board,
        &a.common,
        "dissent",
        consent(false, None),
        s,
        |fm, ctx| ops::dissent(fm, ctx, outcome, revision, &ids, &note),
    )?;
    add_warnings(&mut out, warnings);
    Ok(out)
}

/// `verdict UNABLE`: the reviewer could not review (its tools failed, a check could not run).
/// Not a judgement: the round's verdicts do not change, so it costs no round and asks for no
/// resubmission; the reason is on the record, in the journal (`cmd=unable`) for `stats` and
/// the watchdog, and the same or another reviewer gives the real verdict on the same revision.
fn unable(a: VerdictArgs, first: Result<Snapshot>, s: &Session) -> Result<Outcome> {
    let reason = match a.reason.as_deref().map(str::trim) {
        Some(r) if !r.is_empty() => r.to_string(),
        _ => {
            return Err(Error::Usage(
                "UNABLE needs --reason TEXT: say what kept you from reviewing (e.g. --reason \
                 'the tests could not run: disk full')"
                    .into(),
            ));
        }
    };
    if a.artifact_sha256.is_some() || !a.objections.is_empty() || a.no_objection_ids {
        return Err(Error::Usage(
            "UNABLE judges nothing: --artifact-sha256, --objections and --no-objection-ids go \
             with a verdict"
                .into(),
        ));
    }
    let (note, warnings) = note_text(&a.text, false)?;
    let note = note.unwrap_or_default();
    let revision = a.revision;
    let mut out = apply_read(
        first,
        &a.common,
        crate::stats::UNABLE,
        consent(false, None),
        s,
        |fm, ctx| ops::unable(fm, ctx, revision, &reason, &note),
    )?;
    add_warnings(&mut out, warnings);
    Ok(out)
}

pub fn advance(a: AdvanceArgs, s: &Session) -> Result<Outcome> {
    let to = a.phase;
    let (note, note_warnings) = note_text(&a.text, false)?;
    let mut args = ops::AdvanceArgs {
        worktree: a.worktree.clone(),
        commit_sha: a.commit_sha.clone(),
        merged_into: a.merged_into.clone(),
        note,
        keep_branch: a.keep_branch,
        facts: None,
    };
    super::agent_arg("--agent", &a.common.agent)?;
    check_common(&a.common)?;
    let snap = store::snapshot(&a.board, Depth::Edit { fresh: true }, s)?;
    observe_step(&snap, &a.common.agent, to, &mut args)?;
    let publish = committed_publication(&a.board, &snap, &args)?;
    // The worktree and repository the board records, for the clean-up after CLEANED_UP.
    let recorded: std::cell::RefCell<Option<(String, String)>> = Default::default();
    let mut out = apply_on(
        snap,
        &a.common,
        "advance",
        consent(a.user_approved, a.waive.clone()),
        s,
        publish,
        |fm, ctx| {
            if let (Some(w), Some(r)) = (&fm.worktree, &fm.audit.repo_root) {
                *recorded.borrow_mut() = Some((w.clone(), r.clone()));
            }
            let edit = ops::advance(fm, ctx, to, &args)?;
            // The move that records the worktree records a git worktree: the code under review
            // is its diff.
            if let Some(w) = &args.worktree {
                crate::repo::git::worktree_top(Path::new(w))?;
                if let Some(root) = fm.audit.repo_root.as_deref() {
                    same_repository(w, root)?;
                }
            }
            Ok(edit)
        },
    )?;
    add_warnings(&mut out, note_warnings);
    // The last worktree gone from `.worktrees/`: the directory goes too.
    if to == Phase::CleanedUp {
        let removed = recorded
            .into_inner()
            .and_then(|(w, r)| super::worktree::remove_empty_base(Path::new(&r), Path::new(&w)));
        if let Some(dir) = &removed {
            out.text.push_str(&format!(
                "removed the empty {}\n",
                crate::text::escape(&dir.display().to_string())
            ));
        }
        if let Some(o) = out.json.as_object_mut() {
            o.insert(
                "removed_dir".into(),
                json!(removed.map(|d| d.display().to_string())),
            );
        }
    }
    Ok(out)
}

/// What git says about the step, read before the lock (the operation holds it against the board
/// under the lock, see [`crate::law::lifecycle`]); on a board that records a repository, a commit
/// left out is the worktree's `HEAD`. Nothing is read when the step will be refused anyway.
fn observe_step(
    snap: &Snapshot,
    agent: &str,
    to: Phase,
    args: &mut ops::AdvanceArgs,
) -> Result<()> {
    let Ok(valid) = snap.frontmatter() else {
        return Ok(());
    };
    let fm = &valid.parsed.fm;
    if !crate::law::lifecycle::verified(fm) || law::admit(fm, agent, Command::Advance).is_err() {
        return Ok(());
    }
    if to == Phase::Committed && args.commit_sha.is_none() {
        args.commit_sha = crate::repo::lifecycle::default_commit(fm)?;
    }
    let facts = crate::repo::lifecycle::observe(
        fm,
        to,
        args.commit_sha.as_deref(),
        args.merged_into.as_deref(),
    )?;
    // The full id of the commit is what gets recorded.
    if let crate::law::lifecycle::Step::Commit(c) = &facts.step
        && let Some(sha) = &c.sha
    {
        args.commit_sha = Some(sha.clone());
    }
    args.facts = Some(facts);
    Ok(())
}

/// On a git board, the commit `advance COMMITTED` records travels with the write: pushed, in
/// the same atomic push as the board, to the board's artifact ref named after it
/// ([`published::committed_ref`]), from the recorded repository's objects, so that `validate`
/// on any clone can read it. Nothing is published for a file board, for a board that records
/// no repository, or for a commit git did not find there (a step that is refused, or waived).
fn committed_publication(
    board: &Path,
    snap: &Snapshot,
    args: &ops::AdvanceArgs,
) -> Result<Vec<store::Publish>> {
    let Some(crate::law::lifecycle::Facts {
        step: crate::law::lifecycle::Step::Commit(c),
        ..
    }) = &args.facts
    else {
        return Ok(Vec::new());
    };
    let (Some(sha), Some(key)) = (&c.sha, published::board_key(board)) else {
        return Ok(Vec::new());
    };
    let Ok(valid) = snap.frontmatter() else {
        return Ok(Vec::new());
    };
    let Some(root) = valid.parsed.fm.audit.repo_root.as_deref() else {
        return Ok(Vec::new());
    };
    Ok(vec![store::Publish {
        refname: published::committed_ref(&key, sha),
        commit: sha.clone(),
        objects: crate::repo::artifact::objects_dir(Path::new(root))?,
    }])
}

/// `--worktree PATH` on a board that records a repository must be one of its worktrees.
fn same_repository(worktree: &str, repo_root: &str) -> Result<()> {
    let theirs = crate::repo::common_dir(Path::new(worktree))?;
    let ours = crate::repo::common_dir(Path::new(repo_root))?;
    if theirs != ours {
        return Err(Error::Usage(format!(
            "--worktree {} is a worktree of another repository ({}), not of repo_root {} ({}) \
             that the blackboard records",
            crate::text::escape(worktree),
            crate::render::output::path(&theirs),
            crate::text::escape(repo_root),
            crate::render::output::path(&ours)
        )));
    }
    Ok(())
}

pub fn block(a: ReasonArgs, s: &Session) -> Result<Outcome> {
    let reason = a.reason.clone();
    apply(
        &a.board,
        &a.common,
        "block",
        consent(false, None),
        s,
        |fm, ctx| ops::block(fm, ctx, &reason),
    )
}

pub fn unblock(a: ReasonArgs, s: &Session) -> Result<Outcome> {
    let reason = a.reason.clone();
    apply(
        &a.board,
        &a.common,
        "unblock",
        consent(false, None),
        s,
        |fm, ctx| ops::unblock(fm, ctx, &reason),
    )
}

pub fn stop(a: ReasonArgs, s: &Session) -> Result<Outcome> {
    let reason = a.reason.clone();
    apply(
        &a.board,
        &a.common,
        "stop",
        consent(false, None),
        s,
        |fm, ctx| ops::stop(fm, ctx, &reason),
    )
}

pub fn note(a: NoteArgs, s: &Session) -> Result<Outcome> {
    let (text, note_warnings) = note_text(&a.text, true)?;
    let text = text.unwrap_or_default();
    let section = a.section.clone();
    let new_section = a.new_section;
    let mut out = apply(
        &a.board,
        &a.common,
        "note",
        consent(false, None),
        s,
        |fm, ctx| ops::note_in(fm, ctx, &section, &text, new_section),
    )?;
    add_warnings(&mut out, note_warnings);
    Ok(out)
}

/// `correct`: find the caller's review to correct in the body (before the lock: the body is
/// append-only, so it is still there under it), then append the correction.
pub fn correct(a: CorrectArgs, s: &Session) -> Result<Outcome> {
    super::agent_arg("--agent", &a.common.agent)?;
    let (text, note_warnings) = note_text(&a.text, true)?;
    let text = text.unwrap_or_default();
    check_common(&a.common)?;
    let snap = store::snapshot(&a.board, Depth::Edit { fresh: true }, s)?;
    let loaded = snap.load_to_edit()?;
    let me = a.common.agent.as_str();
    // Who may correct, first (the write checks it again under the lock).
    law::admit(&loaded.valid.parsed.fm, me, Command::Correct)?;
    let all = crate::board::entry::entries(&loaded.valid.doc);
    let mine: Vec<&crate::board::entry::Entry> = all
        .iter()
        .filter(|e| e.kind == crate::board::entry::Kind::Review && e.agent.as_deref() == Some(me))
        .collect();
    let listed = || {
        let mut seen: Vec<String> = Vec::new();
        for e in &mine {
            if let (Some(t), Some(n)) = (e.target, e.counter) {
                let w = format!("{t}:{n}");
                if !seen.contains(&w) {
                    seen.push(w);
                }
            }
        }
        seen.join(", ")
    };
    let review = match a.review {
        Some((t, n)) => mine
            .iter()
            .rev()
            .find(|e| e.target == Some(t) && e.counter == Some(n))
            .copied()
            .ok_or_else(|| {
                Error::Usage(format!(
                    "--review {t}:{n}: {me} gave no review of it{}",
                    if mine.is_empty() {
                        String::new()
                    } else {
                        format!("; {me}'s reviews: {}", listed())
                    }
                ))
            })?,
        None => mine.last().copied().ok_or_else(|| {
            Error::Usage(format!(
                "{me} has given no review on this blackboard: there is nothing to correct (a \
                 correction is made by a reviewer, to its own review)"
            ))
        })?,
    };
    let (Some(target), Some(counter), Some(verdict)) =
        (review.target, review.counter, review.verdict)
    else {
        return Err(Error::Usage(format!(
            "the review at line {} names no verdict it could be linked by",
            review.line
        )));
    };
    let mut out = apply_on(
        snap,
        &a.common,
        "correct",
        consent(false, None),
        s,
        Vec::new(),
        |fm, ctx| ops::correct(fm, ctx, target, counter, verdict, &text),
    )?;
    add_warnings(&mut out, note_warnings);
    Ok(out)
}
