//! The semantic operations of SPEC §3–§5 on an in-memory blackboard.
//!
//! Each operation checks the actor, the phase and the gates against [`protocol::TRANSITIONS`],
//! then changes the body (appending its entry) and the frontmatter together, so the caller
//! writes both in one locked replace. Nothing here touches the disk; a refusal leaves the
//! in-memory copy to be dropped and the file untouched.

use crate::document::{Document, check_note, normalize_newlines, valid_section_name};
use crate::error::{Error, Result};
use crate::model::{Agent, Frontmatter, Phase, Role, Status, Target, Timestamp, Verdict};
use crate::protocol::{
    self, Actor, Artifact, Command, From, Needs, TRANSITIONS, To, Transition, outcome_phase,
    shell_word,
};

/// Who is acting, when, and with which of the user's permissions.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub agent: String,
    pub now: Timestamp,
    /// The board path as the user wrote it, for the commands named in messages.
    pub board: String,
    /// `--user-approved`: the user approved the human gate of this step.
    pub user_approved: bool,
    /// `--waive REASON`: the user waived the predicate of this step.
    pub waive: Option<String>,
}

impl Ctx {
    fn b(&self) -> String {
        shell_word(&self.board)
    }
}

const DECISIONS: &str = "Decisions";

/// The body section an artifact's submissions and reviews go to (SPEC §2.3).
pub fn artifact_section(target: Target, review: bool) -> &'static str {
    match (target, review) {
        (Target::Analysis, _) => "Root Cause Analysis",
        (Target::Plan, false) => "Plan Revisions",
        (Target::Plan, true) => "Plan Reviews",
        (Target::RedTest, _) => "Red Tests",
        (Target::Code, _) => "Code Review Rounds",
    }
}

fn target_noun(t: Target) -> (&'static str, &'static str) {
    match t {
        Target::Analysis => ("Analysis", "revision"),
        Target::Plan => ("Plan", "revision"),
        Target::RedTest => ("Red test", "round"),
        Target::Code => ("Code", "round"),
    }
}

fn entry(heading: &str, text: &str) -> String {
    let text = text.trim_end_matches(['\n', '\r', ' ']);
    if text.is_empty() {
        format!("### {heading}\n")
    } else {
        format!("### {heading}\n\n{text}\n")
    }
}

/// Append an entry to a section, or refuse if the section cannot be found or made.
fn add(doc: &mut Document, section: &str, text: &str) -> Result<()> {
    if doc.append(section, text) {
        Ok(())
    } else {
        Err(Error::protocol(format!(
            "cannot append to section {section:?}: the name cannot be used as a `## ` heading, or \
             the body hides it (run `pair validate` on the blackboard)"
        )))
    }
}

/// A note's text with its line endings normalized, if it can be appended without changing the
/// document's structure.
fn checked_note(text: &str) -> Result<String> {
    check_note(text)
        .map_err(|p| Error::Usage(format!("the note cannot be appended: {}", p.message)))?;
    Ok(normalize_newlines(text))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The actor's agent entry, or a refusal telling it to register.
fn actor<'a>(fm: &'a mut Frontmatter, ctx: &Ctx) -> Result<&'a mut Agent> {
    let id = ctx.agent.clone();
    fm.agent_mut(&id).ok_or_else(|| not_registered(ctx))
}

/// The refusal for an agent that is not on the blackboard, with the command that fixes it.
fn not_registered(ctx: &Ctx) -> Error {
    Error::protocol(format!(
        "agent {:?} is not on the blackboard; a reviewer registers first with \
         `pair register {} --agent {}`",
        ctx.agent,
        ctx.b(),
        shell_word(&ctx.agent)
    ))
}

fn require_role(fm: &Frontmatter, ctx: &Ctx, role: Role, what: &str) -> Result<()> {
    let Some(a) = fm.agent(&ctx.agent) else {
        return Err(not_registered(ctx));
    };
    if a.role != role {
        let doer = fm.doer().unwrap_or("the doer");
        return Err(Error::protocol(match role {
            Role::Doer => format!(
                "only the doer ({doer}) may {what}; {:?} is a reviewer",
                ctx.agent
            ),
            Role::Reviewer => format!("only a reviewer may {what}; {:?} is the doer", ctx.agent),
        }));
    }
    Ok(())
}

/// Refuse any write to a terminal blackboard except those SPEC §3.1 lets through.
fn check_terminal(fm: &Frontmatter, ctx: &Ctx, command: &str) -> Result<()> {
    if !fm.phase.is_terminal() || protocol::terminal_allows(fm.phase, command) {
        return Ok(());
    }
    let hint = match fm.phase {
        Phase::Blocked => format!(
            "; the doer can resume with `pair unblock {} --agent {} --reason TEXT`",
            ctx.b(),
            shell_word(fm.doer().unwrap_or("doer"))
        ),
        _ => String::new(),
    };
    Err(Error::protocol(format!(
        "the blackboard is {} (terminal): `{command}` is refused{hint}",
        fm.phase
    )))
}

fn touch(fm: &mut Frontmatter, ctx: &Ctx, status: Option<Status>) {
    if let Some(a) = fm.agent_mut(&ctx.agent) {
        a.last_seen = Some(ctx.now);
        if let Some(s) = status {
            a.status = s;
        }
    }
}

fn set_phase(fm: &mut Frontmatter, ctx: &Ctx, phase: Phase) {
    if fm.phase != phase {
        fm.phase = phase;
        fm.phase_updated_at = ctx.now;
    }
}

/// Enforce a transition's human gate and guard; record approvals and waivers in Decisions.
fn pass_gates(
    fm: &Frontmatter,
    doc: &mut Document,
    ctx: &Ctx,
    t: &Transition,
    to: Phase,
    cmdline: &str,
) -> Result<()> {
    // The full command a refusal suggests: every flag this step needs, not just the missing one.
    let gated = t.human_gate && !fm.yolo;
    let guarded = !t.guard.holds(fm);
    let full = format!(
        "{cmdline}{}{}",
        if gated { " --user-approved" } else { "" },
        match (&ctx.waive, guarded) {
            (Some(reason), _) => format!(" --waive {}", shell_word(reason)),
            (None, true) => " --waive REASON".to_string(),
            (None, false) => String::new(),
        }
    );
    if gated {
        if !ctx.user_approved {
            return Err(Error::protocol(format!(
                "human gate: {} → {to} needs the user's approval{}. Ask the user, then run \
                 `{full}`",
                fm.phase,
                if guarded && ctx.waive.is_none() {
                    format!(
                        ", and {} does not hold (waive it only if the user did)",
                        t.guard.describe()
                    )
                } else {
                    String::new()
                }
            )));
        }
        add(
            doc,
            DECISIONS,
            &entry(
                &format!(
                    "Gate approved — {} → {to} — {} — {}",
                    fm.phase, ctx.agent, ctx.now
                ),
                &format!(
                    "The user approved the human gate {} → {to} (`{cmdline} --user-approved`).",
                    fm.phase
                ),
            ),
        )?;
    }
    if !t.guard.holds(fm) {
        match &ctx.waive {
            Some(reason) => add(
                doc,
                DECISIONS,
                &entry(
                    &format!(
                        "Gate waived — {} → {to} — {} — {}",
                        fm.phase, ctx.agent, ctx.now
                    ),
                    &format!(
                        "The user waived the predicate \"{}\".\n\nReason: {}",
                        t.guard.describe(),
                        one_line(reason)
                    ),
                ),
            )?,
            None => {
                return Err(Error::protocol(format!(
                    "{} → {to} needs {}; it does not hold. If the user explicitly waived this \
                     gate, run `{full}`",
                    fm.phase,
                    t.guard.describe()
                )));
            }
        }
    }
    Ok(())
}

/// `register`: add the actor as a reviewer (and, with `required`, to `required_reviewers`).
pub fn register(
    fm: &mut Frontmatter,
    doc: &mut Document,
    ctx: &Ctx,
    required: bool,
) -> Result<String> {
    check_terminal(fm, ctx, "register")?;
    let id = ctx.agent.clone();
    let mut said = Vec::new();
    match fm.agent(&id).map(|a| a.role) {
        Some(Role::Doer) => {
            return Err(Error::protocol(format!(
                "{id:?} is the doer of this blackboard and cannot register as a reviewer"
            )));
        }
        Some(Role::Reviewer) => said.push(format!("{id} was already registered")),
        None => {
            fm.agents
                .push((id.clone(), Agent::new(Role::Reviewer, Status::Idle)));
            said.push(format!("registered {id} as a reviewer"));
        }
    }
    if required && !fm.required_reviewers.contains(&id) {
        fm.required_reviewers.push(id.clone());
        let when = match fm.phase.review_target() {
            Some(t) => format!("joins the open {t} round"),
            None => "joins from the next review round".to_string(),
        };
        add(
            doc,
            DECISIONS,
            &entry(
                &format!("Required reviewer added — {id} — {}", ctx.now),
                &format!("The user named {id} a required reviewer; {id} {when}."),
            ),
        )?;
        said.push(format!("{id} is now a required reviewer and {when}"));
    } else if fm.required_reviewers.contains(&id) {
        said.push(format!("{id} is a required reviewer"));
    }
    touch(fm, ctx, None);
    Ok(said.join("; "))
}

/// `claim`: a required reviewer takes up the submitted artifact.
pub fn claim(fm: &mut Frontmatter, _doc: &mut Document, ctx: &Ctx) -> Result<String> {
    check_terminal(fm, ctx, "claim")?;
    require_role(fm, ctx, Role::Reviewer, "claim a review")?;
    require_required(fm, ctx)?;
    let from = fm.phase;
    if let Some(t) = TRANSITIONS
        .iter()
        .find(|t| t.command == Command::Claim && t.from.matches(from))
    {
        let To::Phase(to) = t.to else {
            return Err(Error::protocol("internal error: claim row without a phase"));
        };
        set_phase(fm, ctx, to);
        touch(fm, ctx, Some(Status::Reviewing));
        return Ok(format!("{} claimed the review: {from} → {to}", ctx.agent));
    }
    if from.is_reviewable() {
        touch(fm, ctx, Some(Status::Reviewing));
        return Ok(format!("{} is reviewing ({from})", ctx.agent));
    }
    Err(Error::protocol(format!(
        "nothing to claim: phase {from} is not a review phase. Wait with `pair poll {} --agent {} --wait`",
        ctx.b(),
        shell_word(&ctx.agent)
    )))
}

fn require_required(fm: &Frontmatter, ctx: &Ctx) -> Result<()> {
    if fm.required_reviewers.contains(&ctx.agent) {
        return Ok(());
    }
    Err(Error::protocol(format!(
        "{:?} is not a required reviewer (required: {}); only required reviewers' verdicts count. \
         If the user names you, run `pair register {} --agent {} --required`",
        ctx.agent,
        if fm.required_reviewers.is_empty() {
            "none".to_string()
        } else {
            fm.required_reviewers.join(", ")
        },
        ctx.b(),
        shell_word(&ctx.agent)
    )))
}

/// `submit`: the doer submits an artifact for review.
pub fn submit(
    fm: &mut Frontmatter,
    doc: &mut Document,
    ctx: &Ctx,
    artifact: Artifact,
    note: &str,
    no_review: bool,
) -> Result<String> {
    check_terminal(fm, ctx, "submit")?;
    require_role(fm, ctx, Role::Doer, "submit")?;
    let note = &checked_note(note)?;
    let from = fm.phase;
    let Some(t) = TRANSITIONS
        .iter()
        .find(|t| t.command == Command::Submit(artifact) && t.from.matches(from))
    else {
        if from.is_reviewable() {
            return Err(Error::protocol(format!(
                "phase {from} is under review; an artifact cannot be withdrawn or resubmitted \
                 mid-review. Wait until every required reviewer has given a verdict \
                 (`pair poll {} --agent {} --wait`)",
                ctx.b(),
                shell_word(&ctx.agent)
            )));
        }
        let allowed: Vec<String> = from_phases(Command::Submit(artifact));
        return Err(Error::protocol(format!(
            "`submit {}` is not allowed in phase {from}; it is allowed in {}",
            artifact.as_str(),
            allowed.join(", ")
        )));
    };
    let To::Phase(to) = t.to else {
        return Err(Error::protocol(
            "internal error: submit row without a phase",
        ));
    };
    let mut cmdline = format!(
        "pair submit {} --agent {} {} --note-file FILE",
        ctx.b(),
        shell_word(&ctx.agent),
        artifact.as_str()
    );
    if no_review {
        cmdline.push_str(" --no-review");
    }
    let gate_flag = if t.human_gate && !fm.yolo {
        " --user-approved"
    } else {
        ""
    };
    // Who reviews: snapshot the registered reviewers on the first submission.
    if fm.required_reviewers.is_empty() && !fm.no_review {
        fm.required_reviewers = fm.reviewers().into_iter().map(String::from).collect();
    }
    if fm.required_reviewers.is_empty() && !fm.no_review {
        if !no_review {
            return Err(Error::protocol(format!(
                "no reviewers are registered, so nobody would review this {}. Have reviewers run \
                 `pair register {} --agent ID`, or, if the user approved working without review, \
                 run `{cmdline} --no-review{gate_flag}`",
                artifact.as_str(),
                ctx.b()
            )));
        }
        fm.no_review = true;
        add(
            doc,
            DECISIONS,
            &entry(
                &format!("No-review workflow approved — {} — {}", ctx.agent, ctx.now),
                "The user approved working without reviewers; submissions are approved as they \
                 are submitted.",
            ),
        )?;
    } else if no_review && !fm.required_reviewers.is_empty() {
        return Err(Error::protocol(format!(
            "--no-review applies only when no reviewers are registered; required reviewers: {}",
            fm.required_reviewers.join(", ")
        )));
    }
    pass_gates(fm, doc, ctx, t, to, &cmdline)?;

    let target = artifact.target();
    let n = fm.counter(target) + 1;
    *fm.counter_mut(target) = n;
    let (noun, unit) = target_noun(target);
    let heading = match artifact {
        Artifact::Code => format!(
            "Code review round {n} — submitted (staged diff) — {} — {}",
            ctx.agent, ctx.now
        ),
        Artifact::Followup => format!(
            "Follow-up review round {n} — submitted (unstaged diff) — {} — {}",
            ctx.agent, ctx.now
        ),
        _ => format!("{noun} {unit} {n} — {} — {}", ctx.agent, ctx.now),
    };
    add(doc, artifact_section(target, false), &entry(&heading, note))?;
    set_phase(fm, ctx, to);
    touch(fm, ctx, Some(Status::Waiting));
    let mut summary = format!("submitted {} {unit} {n}: {from} → {to}", artifact.as_str());
    // Nobody to review (an approved no-review workflow): the round is complete at once.
    let r = protocol::round(fm, target);
    if r.complete && fm.required_reviewers.is_empty() {
        let out = outcome_phase(target, r.approved);
        set_phase(fm, ctx, out);
        touch(fm, ctx, Some(Status::Working));
        summary.push_str(&format!(" → {out} (no reviewers required)"));
    }
    Ok(summary)
}

/// The phases from which some row of `command` leaves, for "allowed in …" messages.
fn from_phases(command: Command) -> Vec<String> {
    let mut out = Vec::new();
    for t in TRANSITIONS.iter().filter(|t| t.command == command) {
        match t.from {
            From::One(a) => out.push(a.to_string()),
            From::Two(a, b) => {
                out.push(a.to_string());
                out.push(b.to_string());
            }
            From::Reviewable => out.push("any review phase".into()),
            From::NonTerminal => out.push("any non-terminal phase".into()),
            From::NonTerminalOrBlocked => out.push("any non-terminal phase or BLOCKED".into()),
        }
    }
    out
}

/// `verdict`: a required reviewer's verdict on the current revision; completes the round when it
/// is the last one missing.
pub fn verdict(
    fm: &mut Frontmatter,
    doc: &mut Document,
    ctx: &Ctx,
    verdict: Verdict,
    revision: u32,
    note: &str,
) -> Result<String> {
    check_terminal(fm, ctx, "verdict")?;
    require_role(fm, ctx, Role::Reviewer, "give a verdict")?;
    let note = &checked_note(note)?;
    let Some(target) = fm.phase.review_target() else {
        return Err(Error::protocol(format!(
            "no review is open: phase {} is not a review phase. Wait with `pair poll {} --agent {} --wait`",
            fm.phase,
            ctx.b(),
            shell_word(&ctx.agent)
        )));
    };
    require_required(fm, ctx)?;
    let counter = fm.counter(target);
    let (noun, unit) = target_noun(target);
    if revision != counter {
        return Err(Error::StaleCounter {
            message: format!(
                "stale verdict: you reviewed {} {unit} {revision}, but the current {} {unit} is \
                 {counter}. Read the current {} and give your verdict with --revision {counter}",
                noun.to_lowercase(),
                noun.to_lowercase(),
                noun.to_lowercase()
            ),
        });
    }
    let id = ctx.agent.clone();
    let replaced = {
        let a = actor(fm, ctx)?;
        let r = a.review_mut(target);
        let replaced = r.reviewed == Some(counter) && r.verdict.is_some();
        r.reviewed = Some(counter);
        r.verdict = Some(verdict);
        replaced
    };
    let status = match verdict {
        Verdict::Approved => Status::Approved,
        Verdict::ChangesRequested => Status::ChangesRequested,
        Verdict::Comment => Status::Waiting,
    };
    touch(fm, ctx, Some(status));
    let label = match (target, fm.phase.diff_scope()) {
        (Target::Code, Some("unstaged")) => format!("Follow-up review — round {counter}"),
        (Target::Code, _) => format!("Code review — round {counter}"),
        _ => format!("{noun} review — {unit} {counter}"),
    };
    add(
        doc,
        artifact_section(target, true),
        &entry(
            &format!(
                "{label} — {id} — {verdict}{} — {}",
                if replaced {
                    " (replaces earlier verdict)"
                } else {
                    ""
                },
                ctx.now
            ),
            note,
        ),
    )?;
    let mut summary = format!(
        "{id}: {verdict} on {} {unit} {counter}",
        noun.to_lowercase()
    );
    let r = protocol::round(fm, target);
    if r.complete {
        let from = fm.phase;
        let to = outcome_phase(target, r.approved);
        set_phase(fm, ctx, to);
        summary.push_str(&format!("; the round is complete: {from} → {to}"));
    } else {
        summary.push_str(&format!("; still waiting for {}", r.pending.join(", ")));
    }
    Ok(summary)
}

/// Extra inputs of `advance`.
#[derive(Debug, Clone, Default)]
pub struct AdvanceArgs {
    pub worktree: Option<String>,
    pub commit_sha: Option<String>,
    pub merged_into: Option<String>,
    pub note: Option<String>,
}

/// `advance`: the doer's phase moves.
pub fn advance(
    fm: &mut Frontmatter,
    doc: &mut Document,
    ctx: &Ctx,
    to: Phase,
    args: &AdvanceArgs,
) -> Result<String> {
    check_terminal(fm, ctx, "advance")?;
    require_role(fm, ctx, Role::Doer, "advance the phase")?;
    let from = fm.phase;
    let candidates: Vec<&Transition> = TRANSITIONS
        .iter()
        .filter(|t| t.command == Command::Advance && t.actor == Actor::Doer && t.from.matches(from))
        .collect();
    let Some(t) = candidates.iter().find(|t| t.to == To::Phase(to)) else {
        let options: Vec<String> = candidates
            .iter()
            .filter_map(|t| match t.to {
                To::Phase(p) => Some(p.to_string()),
                _ => None,
            })
            .collect();
        let hint = if from.is_reviewable() {
            " (the phase moves on by itself when the last required reviewer gives a verdict)"
                .to_string()
        } else if let Some(s) = TRANSITIONS.iter().find(|t| {
            matches!(t.command, Command::Submit(_)) && t.from.matches(from) && t.to == To::Phase(to)
        }) {
            let Command::Submit(a) = s.command else {
                unreachable!()
            };
            format!(
                "; to reach {to}, run `pair submit {} --agent {} {} --note-file FILE`",
                ctx.b(),
                shell_word(&ctx.agent),
                a.as_str()
            )
        } else {
            String::new()
        };
        return Err(Error::protocol(if options.is_empty() {
            format!("the doer cannot advance from {from}{hint}")
        } else {
            format!(
                "the doer cannot advance from {from} to {to}; from {from} it can advance to {}{hint}",
                options.join(" or ")
            )
        }));
    };
    let mut cmdline = format!(
        "pair advance {} --agent {} {to}",
        ctx.b(),
        shell_word(&ctx.agent)
    );
    // The flags the step needs.
    match t.needs {
        Needs::Worktree => match (&args.worktree, &fm.worktree) {
            (Some(w), _) => {
                check_worktree_arg(w)?;
                cmdline.push_str(&format!(" --worktree {}", shell_word(w)));
            }
            (None, Some(_)) => {}
            (None, None) => {
                return Err(Error::Usage(format!(
                    "{from} → {to} needs the coding worktree: add --worktree ABSOLUTE_PATH \
                     (`pair worktree-path {}` prints the default)",
                    ctx.b()
                )));
            }
        },
        Needs::CommitSha => match &args.commit_sha {
            Some(s)
                if s.len() >= 4 && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                cmdline.push_str(&format!(" --commit-sha {s}"));
            }
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
            Some(b) if !b.trim().is_empty() && !b.chars().any(char::is_control) => {
                cmdline.push_str(&format!(" --merged-into {}", shell_word(b)));
            }
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
    pass_gates(fm, doc, ctx, t, to, &cmdline)?;

    let mut record: Option<(String, String)> = None;
    match to {
        Phase::Coding => {
            if let Some(w) = &args.worktree {
                fm.worktree = Some(w.clone());
            }
        }
        Phase::Committed => {
            fm.audit.commit_sha = args.commit_sha.clone();
            record = Some((
                format!(
                    "Committed — round {} — {} — {}",
                    fm.code_review_round, ctx.agent, ctx.now
                ),
                format!(
                    "Commit {} in {}.",
                    args.commit_sha.clone().unwrap_or_default(),
                    fm.worktree.clone().unwrap_or_default()
                ),
            ));
        }
        Phase::Merged => {
            fm.audit.merged_into = args.merged_into.clone();
            fm.audit.merged_at = Some(ctx.now);
            record = Some((
                format!("Merged — {} — {}", ctx.agent, ctx.now),
                format!(
                    "Merged into {}.",
                    args.merged_into.clone().unwrap_or_default()
                ),
            ));
        }
        Phase::CleanedUp => {
            fm.audit.worktree_removed = Some(true);
            record = Some((
                format!("Cleaned up — {} — {}", ctx.agent, ctx.now),
                format!(
                    "Worktree {} removed.",
                    fm.worktree.clone().unwrap_or_default()
                ),
            ));
        }
        _ => {}
    }
    if let Some(note) = &args.note {
        let note = checked_note(note)?;
        match &mut record {
            Some((_, text)) => {
                text.push_str("\n\n");
                text.push_str(note.trim_end());
            }
            None => {
                record = Some((
                    format!("Advance {from} → {to} — {} — {}", ctx.agent, ctx.now),
                    note.to_string(),
                ));
            }
        }
    }
    if let Some((h, text)) = record {
        add(doc, DECISIONS, &entry(&h, &text))?;
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
    Ok(format!("{from} → {to}"))
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

fn reason_text(reason: &str) -> Result<String> {
    let r = reason.trim();
    if r.is_empty() {
        return Err(Error::Usage("--reason must not be empty".into()));
    }
    checked_note(r)
}

/// `block`: any agent stops the work until the doer unblocks it.
pub fn block(fm: &mut Frontmatter, doc: &mut Document, ctx: &Ctx, reason: &str) -> Result<String> {
    check_terminal(fm, ctx, "block")?;
    actor(fm, ctx)?;
    let reason = reason_text(reason)?;
    let from = fm.phase;
    fm.blocked_from = Some(from);
    add(
        doc,
        DECISIONS,
        &entry(
            &format!("Blocked — from {from} — {} — {}", ctx.agent, ctx.now),
            &reason,
        ),
    )?;
    set_phase(fm, ctx, Phase::Blocked);
    touch(fm, ctx, Some(Status::Blocked));
    Ok(format!("{from} → BLOCKED"))
}

/// `unblock`: the doer resumes where the work was blocked.
pub fn unblock(
    fm: &mut Frontmatter,
    doc: &mut Document,
    ctx: &Ctx,
    reason: &str,
) -> Result<String> {
    check_terminal(fm, ctx, "unblock")?;
    require_role(fm, ctx, Role::Doer, "unblock")?;
    if fm.phase != Phase::Blocked {
        return Err(Error::protocol(format!(
            "the blackboard is {}, not BLOCKED; nothing to unblock",
            fm.phase
        )));
    }
    let reason = reason_text(reason)?;
    let Some(to) = fm.blocked_from else {
        return Err(Error::protocol(
            "blocked_from is not set; repair the blackboard with `pair write --repair`",
        ));
    };
    fm.blocked_from = None;
    add(
        doc,
        DECISIONS,
        &entry(
            &format!("Unblocked — back to {to} — {} — {}", ctx.agent, ctx.now),
            &reason,
        ),
    )?;
    set_phase(fm, ctx, to);
    touch(fm, ctx, Some(Status::Working));
    Ok(format!("BLOCKED → {to}"))
}

/// `stop`: the user asked to stop; any agent records it.
pub fn stop(fm: &mut Frontmatter, doc: &mut Document, ctx: &Ctx, reason: &str) -> Result<String> {
    check_terminal(fm, ctx, "stop")?;
    actor(fm, ctx)?;
    let reason = reason_text(reason)?;
    let from = fm.phase;
    fm.blocked_from = None;
    add(
        doc,
        DECISIONS,
        &entry(
            &format!("Stopped — from {from} — {} — {}", ctx.agent, ctx.now),
            &reason,
        ),
    )?;
    set_phase(fm, ctx, Phase::Stopped);
    touch(fm, ctx, Some(Status::Stopped));
    Ok(format!("{from} → STOPPED"))
}

/// `note`: append a free entry to a section.
pub fn note(
    fm: &mut Frontmatter,
    doc: &mut Document,
    ctx: &Ctx,
    section: &str,
    text: &str,
) -> Result<String> {
    check_terminal(fm, ctx, "note")?;
    actor(fm, ctx)?;
    let name = section.trim();
    if !valid_section_name(name) {
        return Err(Error::Usage(format!(
            "--section {section:?} is not a usable section name: give a plain name such as \
             Evidence or Validation (no `#`, backticks, tildes or line breaks)"
        )));
    }
    let text = checked_note(text)?;
    add(
        doc,
        name,
        &entry(&format!("Note — {} — {}", ctx.agent, ctx.now), &text),
    )?;
    touch(fm, ctx, None);
    Ok(format!("appended a note to {name}"))
}
