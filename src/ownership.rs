//! Field ownership (SPEC §5) for raw writes made as an agent (`pair write --as ID`).
//!
//! The new content is compared with the old field by field: each changed field must belong to
//! the writer, a phase change must be a row of [`protocol::TRANSITIONS`] that this writer may
//! take, counters move only with their submission, and the old body must survive line for line.

use crate::error::{Error, Result};
use crate::model::{Frontmatter, Phase, Role, Target};
use crate::protocol::{self, Actor, Command, TRANSITIONS, To, outcome_phase};

fn refuse(msg: String) -> Error {
    Error::protocol(msg)
}

/// The first field that differs between two agent entries.
fn agent_diff(old: &crate::model::Agent, new: &crate::model::Agent) -> &'static str {
    if old.role != new.role {
        return "role";
    }
    if old.status != new.status {
        return "status";
    }
    if old.last_seen != new.last_seen {
        return "last_seen";
    }
    for t in Target::ALL {
        if old.review(*t).reviewed != new.review(*t).reviewed {
            return t.reviewed_field();
        }
        if old.review(*t).verdict != new.review(*t).verdict {
            return t.verdict_field();
        }
    }
    "an unknown field"
}

/// A human gate a raw write passed with `--user-approved`, to be recorded in Decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatePassed {
    pub from: Phase,
    pub to: Phase,
}

/// Check a raw write made without naming a writer (the helper-compatible `pair write`): the
/// rules every write obeys (see [`check_common`]) hold, whoever made it. Field ownership needs a
/// writer and is checked by [`check`].
pub fn check_anonymous(
    old: &Frontmatter,
    old_body: &str,
    new: &Frontmatter,
    new_body: &str,
    user_approved: bool,
) -> Result<Option<GatePassed>> {
    check_common(old, old_body, new, new_body, None, user_approved)
}

/// Check that `writer` may turn `old` into `new` (frontmatter and body): the common rules, and
/// every changed field belongs to the writer.
pub fn check(
    old: &Frontmatter,
    old_body: &str,
    new: &Frontmatter,
    new_body: &str,
    writer: &str,
    user_approved: bool,
) -> Result<Option<GatePassed>> {
    let doer = old.doer().unwrap_or("doer").to_string();
    let role = match old.agent(writer) {
        Some(a) => a.role,
        None => match new.agent(writer) {
            // A reviewer registering itself.
            Some(a) if a.role == Role::Reviewer => Role::Reviewer,
            _ => {
                return Err(refuse(format!(
                    "{writer:?} is not an agent on this blackboard; register first"
                )));
            }
        },
    };
    let is_doer = role == Role::Doer;

    // Agent entries: each belongs to its own agent.
    for (id, a) in &old.agents {
        if let Some(b) = new.agent(id)
            && b != a
            && id != writer
        {
            return Err(refuse(format!(
                "field `agents.{id}.{}` belongs to {id}; {writer} may not change it",
                agent_diff(a, b)
            )));
        }
    }
    for (id, _) in &new.agents {
        if old.agent(id).is_none() && id != writer {
            return Err(refuse(format!(
                "field `agents.{id}` is new; only {id} may add its own entry (`pair register`)"
            )));
        }
    }

    // Doer-owned top-level fields.
    let doer_fields: [(&str, bool); 10] = [
        ("no_review", old.no_review != new.no_review),
        ("worktree", old.worktree != new.worktree),
        ("repo_root", old.audit.repo_root != new.audit.repo_root),
        (
            "base_branch",
            old.audit.base_branch != new.audit.base_branch,
        ),
        ("base_sha", old.audit.base_sha != new.audit.base_sha),
        (
            "topic_branch",
            old.audit.topic_branch != new.audit.topic_branch,
        ),
        ("commit_sha", old.audit.commit_sha != new.audit.commit_sha),
        (
            "merged_into",
            old.audit.merged_into != new.audit.merged_into,
        ),
        ("merged_at", old.audit.merged_at != new.audit.merged_at),
        (
            "worktree_removed",
            old.audit.worktree_removed != new.audit.worktree_removed,
        ),
    ];
    if !is_doer {
        if let Some((f, _)) = doer_fields.iter().find(|(_, changed)| *changed) {
            return Err(refuse(format!(
                "field `{f}` belongs to the doer ({doer}); {writer} may not change it"
            )));
        }
        if old.extra != new.extra {
            return Err(refuse(format!(
                "top-level fields beyond the protocol's belong to the doer ({doer}); {writer} \
                 may not change them"
            )));
        }
        if old.phase == new.phase && old.phase_updated_at != new.phase_updated_at {
            return Err(refuse(format!(
                "field `phase_updated_at` belongs to the doer ({doer}) unless the phase changes"
            )));
        }
    }
    check_common(
        old,
        old_body,
        new,
        new_body,
        Some((writer, role)),
        user_approved,
    )
}

/// The rules every raw write obeys, named or anonymous: agent entries are never removed and
/// never change role; verdicts change only in the open round, on its current counter; the gate
/// settings change only by a recorded repair; `required_reviewers` changes only by a reviewer
/// adding itself or by the first submission's snapshot; `no_review` only before anyone was
/// registered; the phase moves only along the transition table; the body is append-only.
fn check_common(
    old: &Frontmatter,
    old_body: &str,
    new: &Frontmatter,
    new_body: &str,
    writer: Option<(&str, Role)>,
    user_approved: bool,
) -> Result<Option<GatePassed>> {
    for (id, a) in &old.agents {
        let Some(b) = new.agent(id) else {
            return Err(refuse(format!(
                "field `agents.{id}` was removed; agent entries are never removed (a human can \
                 repair with `pair write --repair --reason TEXT`)"
            )));
        };
        if a.role != b.role {
            return Err(refuse(format!("field `agents.{id}.role` never changes")));
        }
    }
    let open = old.phase.review_target();
    for (id, b) in &new.agents {
        let before = old.agent(id);
        for t in Target::ALL {
            let was = before.map(|a| *a.review(*t)).unwrap_or_default();
            let now = *b.review(*t);
            if was == now {
                continue;
            }
            let counter = old.counter(*t);
            let in_open_round = open == Some(*t)
                && now.reviewed == Some(counter)
                && now.verdict.is_some()
                && b.role == Role::Reviewer;
            if !in_open_round {
                return Err(refuse(format!(
                    "field `agents.{id}.{}`: a verdict is given or replaced only while its round \
                     is open and only on the current {} ({counter}); use `pair verdict`",
                    t.verdict_field(),
                    t.counter_field()
                )));
            }
        }
    }
    for (field, changed) in [
        ("yolo", old.yolo != new.yolo),
        ("rca_required", old.rca_required != new.rca_required),
        (
            "red_test_required",
            old.red_test_required != new.red_test_required,
        ),
        ("work_type", old.work_type != new.work_type),
    ] {
        if changed {
            return Err(refuse(format!(
                "field `{field}` sets the workflow's gates; it changes only by a human repair \
                 (`pair write --repair --reason TEXT`), which is recorded"
            )));
        }
    }
    if old.no_review != new.no_review {
        let nobody =
            |fm: &Frontmatter| fm.required_reviewers.is_empty() && fm.reviewers().is_empty();
        if old.no_review || !nobody(old) || !nobody(new) {
            return Err(refuse(
                "field `no_review` may only be turned on, with the user's approval, while no \
                 reviewer is registered or required (`pair submit … --no-review`)"
                    .to_string(),
            ));
        }
    }
    let reviewers_changed = old.required_reviewers != new.required_reviewers;
    if reviewers_changed {
        let added = new.required_reviewers.len() == old.required_reviewers.len() + 1
            && new.required_reviewers.starts_with(&old.required_reviewers);
        let added_id = new.required_reviewers.last().map(String::as_str);
        let adds_itself = match writer {
            Some((id, Role::Reviewer)) => added && added_id == Some(id),
            Some(_) => false,
            // Anonymous: a registered reviewer named required by the user.
            None => {
                added
                    && added_id
                        .and_then(|id| new.agent(id))
                        .is_some_and(|a| a.role == Role::Reviewer)
            }
        };
        // The first submission's snapshot is checked with its transition.
        let snapshot = old.required_reviewers.is_empty() && old.phase != new.phase;
        if !(adds_itself || snapshot) {
            return Err(refuse(
                "field `required_reviewers` changes only when the doer's first submission \
                 snapshots the registered reviewers or a reviewer the user named adds itself \
                 (`pair register --required`)"
                    .to_string(),
            ));
        }
    }
    let gate = check_phase_and_counters(old, new, writer, user_approved)?;
    check_append_only(old_body, new_body)?;
    Ok(gate)
}

/// Phase, counters and blocked_from move only through a transition of the table that the
/// writer (any actor, when the writer is not named) may take.
fn check_phase_and_counters(
    old: &Frontmatter,
    new: &Frontmatter,
    writer: Option<(&str, Role)>,
    user_approved: bool,
) -> Result<Option<GatePassed>> {
    let counters_changed: Vec<Target> = Target::ALL
        .iter()
        .copied()
        .filter(|t| old.counter(*t) != new.counter(*t))
        .collect();
    if old.phase == new.phase {
        if old.phase.is_terminal() && !protocol::terminal_allows(old.phase, "note") {
            return Err(refuse(format!(
                "the blackboard is {} (terminal); writes are refused",
                old.phase
            )));
        }
        if old.phase.is_terminal() && !same_but_last_seen(old, new) {
            return Err(refuse(format!(
                "the blackboard is {}: only notes may be added (`pair note`); the frontmatter \
                 may not change until `pair unblock` or `pair stop`",
                old.phase
            )));
        }
        if let Some(t) = counters_changed.first() {
            return Err(refuse(format!(
                "field `{}` changes only with a submission (`pair submit`)",
                t.counter_field()
            )));
        }
        if old.blocked_from != new.blocked_from {
            return Err(refuse(
                "field `blocked_from` changes only with block/unblock".to_string(),
            ));
        }
        Ok(None)
    } else {
        check_transition(old, new, writer, user_approved, &counters_changed)
    }
}

fn check_transition(
    old: &Frontmatter,
    new: &Frontmatter,
    writer: Option<(&str, Role)>,
    user_approved: bool,
    counters_changed: &[Target],
) -> Result<Option<GatePassed>> {
    let (from, to) = (old.phase, new.phase);
    let reaches = |t: &protocol::Transition| match t.to {
        To::Phase(p) => p == to,
        To::BlockedFrom => old.blocked_from == Some(to),
        To::RoundOutcome => from.review_target().is_some_and(|target| {
            let r = protocol::round(new, target);
            r.complete && outcome_phase(target, r.approved) == to
        }),
    };
    let rows: Vec<&protocol::Transition> = TRANSITIONS
        .iter()
        .filter(|t| t.from.matches(from) && reaches(t))
        .collect();
    if rows.is_empty() {
        return Err(refuse(format!(
            "field `phase`: there is no transition from {from} to {to} (see the phase table in \
             the README; a human can force it with `pair write --repair --reason TEXT`)"
        )));
    }
    let allowed = |t: &protocol::Transition| match (t.actor, writer) {
        (_, None) => true,
        (Actor::Doer, Some((_, role))) => role == Role::Doer,
        (Actor::Reviewer, Some((id, role))) => {
            role == Role::Reviewer && new.required_reviewers.iter().any(|r| r == id)
        }
        (Actor::Any | Actor::Auto, Some(_)) => true,
    };
    let writer_name = writer.map_or("this write", |(id, _)| id);
    let Some(t) = rows.iter().find(|t| allowed(t)) else {
        let who = match rows[0].actor {
            Actor::Doer => "the doer".to_string(),
            Actor::Reviewer => "a required reviewer (claim)".to_string(),
            _ => "someone else".to_string(),
        };
        return Err(refuse(format!(
            "field `phase`: {from} → {to} is taken by {who}, not by {writer_name}"
        )));
    };
    if from.is_terminal() && !protocol::terminal_allows(from, t.command.name()) {
        return Err(refuse(format!(
            "the blackboard is {from} (terminal); {from} → {to} is refused"
        )));
    }
    if t.human_gate && !old.yolo && !user_approved {
        return Err(refuse(format!(
            "human gate: {from} → {to} needs the user's approval; add --user-approved once the \
             user approved it"
        )));
    }
    if t.actor == Actor::Doer && !t.guard.holds(old) {
        return Err(refuse(format!(
            "{from} → {to} needs {}; to waive it with the user's consent use `pair advance --waive`",
            t.guard.describe()
        )));
    }
    // Counters move with their submission, by one.
    let expected: Vec<Target> = match t.command {
        Command::Submit(a) => vec![a.target()],
        _ => vec![],
    };
    if counters_changed != expected.as_slice() {
        let f = counters_changed
            .iter()
            .chain(expected.iter())
            .next()
            .map(|t| t.counter_field())
            .unwrap_or("counter");
        return Err(refuse(format!(
            "field `{f}`: {from} → {to} must {}",
            if expected.is_empty() {
                "leave the counters unchanged".to_string()
            } else {
                format!("increase {} by one", expected[0].counter_field())
            }
        )));
    }
    for target in &expected {
        if new.counter(*target) != old.counter(*target) + 1 {
            return Err(refuse(format!(
                "field `{}` must increase by exactly one on submission",
                target.counter_field()
            )));
        }
    }
    if old.required_reviewers != new.required_reviewers
        && old.required_reviewers.is_empty()
        && (!matches!(t.command, Command::Submit(_)) || new.no_review)
    {
        return Err(refuse(
            "field `required_reviewers` is filled only by the first submission's snapshot of \
             the registered reviewers"
                .to_string(),
        ));
    }
    if let Command::Submit(_) = t.command
        && old.required_reviewers.is_empty()
        && !new.no_review
    {
        let registered: Vec<String> = new.reviewers().into_iter().map(String::from).collect();
        if new.required_reviewers != registered {
            return Err(refuse(format!(
                "field `required_reviewers`: the first submission snapshots the registered \
                 reviewers ({}) into required_reviewers",
                if registered.is_empty() {
                    "none; pass --no-review with the user's approval".to_string()
                } else {
                    registered.join(", ")
                }
            )));
        }
    }
    match t.command {
        Command::Block if new.blocked_from != Some(from) => Err(refuse(format!(
            "field `blocked_from` must be {from} when blocking from {from}"
        ))),
        Command::Unblock | Command::Stop if new.blocked_from.is_some() => Err(refuse(
            "field `blocked_from` must be null after unblock or stop".to_string(),
        )),
        _ => Ok((t.human_gate && !old.yolo && user_approved).then_some(GatePassed { from, to })),
    }
}

/// Whether two frontmatters differ at most in their agents' `last_seen`.
fn same_but_last_seen(old: &Frontmatter, new: &Frontmatter) -> bool {
    let strip = |fm: &Frontmatter| {
        let mut fm = fm.clone();
        for (_, a) in fm.agents.iter_mut() {
            a.last_seen = None;
        }
        fm
    };
    strip(old) == strip(new)
}

/// Every line of the old body must still be in the new body, in order; only additions between
/// or after them are allowed.
pub fn check_append_only(old: &str, new: &str) -> Result<()> {
    let mut new_lines = new.split_inclusive('\n').enumerate();
    for (i, line) in old.split_inclusive('\n').enumerate() {
        let line_cmp = line.trim_end_matches(['\n', '\r']);
        let found = new_lines.any(|(_, n)| n.trim_end_matches(['\n', '\r']) == line_cmp);
        if !found {
            return Err(refuse(format!(
                "the body is append-only: line {} of the old body ({:?}) was removed or changed",
                i + 1,
                line_cmp.chars().take(60).collect::<String>()
            )));
        }
    }
    Ok(())
}
