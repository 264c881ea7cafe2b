//! The law: every rule a change to a blackboard must obey, stated once, as a pure function of
//! the old board, the new board, the writer and the user's consent (SPEC §3–§5).
//!
//! Semantic commands and raw writes both end here. A command builds the board it wants and the
//! transaction asks [`judge`] whether that change is allowed; a raw `pair write --as ID` hands in
//! the board it was given and gets the same answer. So "a semantic write is a legal raw write by
//! the same writer" holds by construction, and a rule added here binds both.
//!
//! The law reads its rules from data: the transition table and the terminal permissions in
//! [`protocol`], and field ownership in the [`field`] registry. What it returns besides "allowed"
//! are the Decisions records the change requires (a passed human gate, a waiver, the no-review
//! approval, a newly required reviewer), which the transaction appends in the same write.

pub mod agreement;
pub mod debate;
pub mod depend;
pub mod dissent;
pub mod handoff;
pub mod independence;
pub mod ledger;
pub mod lifecycle;
pub mod pool;
pub mod protocol;
pub mod sla;
pub mod unrequire;
pub mod validate;

use crate::board::entry::{GATE_APPROVED, GATE_WAIVED, NO_REVIEW_APPROVED, REVIEWER_ADDED};
use crate::board::field::{self, Field, Owner};
use crate::board::frontmatter::{Agent, Frontmatter, Phase, Role, Target, Timestamp};
use crate::error::{Error, Flag, Hint, Result};
use crate::law::protocol::{Actor, Command, Source, TRANSITIONS, To, Transition, outcome_phase};

/// Who makes a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer<'a> {
    /// A named agent: its ownership is checked.
    Agent(&'a str),
    /// A raw write that names nobody: it may only append to the body.
    Anonymous,
}

/// What the user approved for this change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Consent {
    /// `--user-approved`: the user approved the human gate of this step.
    pub user_approved: bool,
    /// `--waive REASON`: the user waived the predicate of this step.
    pub waive: Option<String>,
    /// The command as it was run, for the record of a passed gate.
    pub invocation: String,
    /// `--no-objection-ids`: a CHANGES_REQUESTED on a ledger board that names no objection
    /// (recorded).
    pub no_objection_ids: bool,
    /// `--reason TEXT` of a change the user approved (`extend`, `unrequire`), kept in its record.
    pub reason: Option<String>,
}

/// How the body changed.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// Only appended to, through [`crate::board::document::Document::append`] (semantic commands).
    Appended,
    /// Replaced by a raw write: checked line by line.
    Replaced { old: &'a str, new: &'a str },
}

/// An entry the change must leave in `## Decisions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub heading: String,
    pub text: String,
}

/// The law's answer to an allowed change.
#[derive(Debug, Clone)]
pub struct Ruling {
    /// The transition taken, when the phase moved.
    pub transition: Option<&'static Transition>,
    /// Records to append to `## Decisions`, in order.
    pub records: Vec<Record>,
}

fn refuse(message: impl Into<String>) -> Error {
    Error::protocol(message)
}

fn register_hint(id: &str) -> Hint {
    Hint::Run {
        command: "register",
        args: vec!["--agent".into(), id.into()],
    }
}

/// Who may report usage on a board (`pair report-usage`): one of its agents. The refusal names
/// the closest id and the command that puts the agent on the board.
pub fn may_report_usage(fm: &Frontmatter, agent: &str) -> Result<()> {
    if fm.agent(agent).is_some() {
        return Ok(());
    }
    Err(Error::refused(
        format!(
            "{agent} is not on this blackboard; only its agents report usage on it{}",
            did_you_mean(fm, agent)
        ),
        Hint::Run {
            command: "register",
            args: vec!["--agent".into(), agent.to_string()],
        },
    ))
}

/// ", did you mean `x`?" when an agent id on the blackboard (or a required one) is close to
/// `id`; nothing otherwise.
pub fn did_you_mean(fm: &Frontmatter, id: &str) -> String {
    crate::board::suggest::agent(fm, id)
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

/// The refusal for an agent that is not on the blackboard.
pub fn not_registered(id: &str) -> Error {
    Error::refused(
        format!("agent {id:?} is not on the blackboard; a reviewer registers first"),
        register_hint(id),
    )
}

/// Whether `id` may run `command` on this board at all: an agent on the blackboard in a role
/// that never runs the command is told so first (no phase would let it); then the phase (the
/// terminal permissions, then whether the command applies in this phase at all), then the
/// standing of an agent not on the blackboard. Commands call this before they build their
/// change, so a refusal names the real reason, and its hint is a step the caller may take;
/// [`judge`] then checks the change itself.
pub fn admit(fm: &Frontmatter, id: &str, command: Command) -> Result<()> {
    handoff::admit(fm, id, command)?;
    if matches!(command, Command::Handoff | Command::Acknowledge) {
        // The handoff's own rules say who offers and who acknowledges ([`handoff::judge`]).
        return admit_phase(fm, id, command);
    }
    if fm.agent(id).is_some() {
        admit_standing(fm, id, command)?;
    }
    admit_phase(fm, id, command)?;
    admit_standing(fm, id, command)
}

fn wait_hint(id: &str) -> Hint {
    Hint::Run {
        command: "poll",
        args: vec!["--agent".into(), id.into(), "--wait".into()],
    }
}

/// The phase's say: a terminal board takes only what [`protocol::TERMINAL_ALLOWS`] lists, and a
/// command some row of the table names must have a row leaving this phase (`advance` depends on
/// its target: its op asks for its row before [`admit_standing`]).
pub fn admit_phase(fm: &Frontmatter, id: &str, command: Command) -> Result<()> {
    let phase = fm.phase;
    if phase.is_terminal() && !protocol::terminal_allows(phase, command) {
        let message = format!(
            "the blackboard is {phase} (terminal): `{}` is refused",
            command.name()
        );
        return Err(match fm.doer() {
            // Only the doer can take the way out; nobody else is told to.
            Some(doer) if phase == Phase::Blocked && doer == id => Error::refused(
                format!("{message}; the doer can resume with `unblock`"),
                Hint::Run {
                    command: "unblock",
                    args: vec![
                        "--agent".into(),
                        doer.into(),
                        "--reason".into(),
                        "TEXT".into(),
                    ],
                },
            ),
            Some(_) if phase == Phase::Blocked => refuse(format!(
                "{message} until the doer resumes the work with `unblock` (then it is allowed \
                 again where its phase allows it); wait for that with `poll --through-blocked`"
            )),
            _ => refuse(message),
        });
    }
    let has_row = || {
        TRANSITIONS
            .iter()
            .any(|t| t.command == command && t.from.matches(phase))
    };
    match command {
        Command::Claim | Command::Verdict if !phase.is_reviewable() => Err(Error::refused(
            format!(
                "{}: phase {phase} is not a review phase; wait for a submission",
                if command == Command::Claim {
                    "nothing to claim"
                } else {
                    "no review is open"
                }
            ),
            wait_hint(id),
        )),
        Command::Submit(a) if !has_row() => {
            if phase.is_reviewable() {
                Err(Error::refused(
                    format!(
                        "phase {phase} is under review; an artifact cannot be withdrawn or \
                         resubmitted mid-review. Wait until every required reviewer has given a \
                         verdict"
                    ),
                    wait_hint(id),
                ))
            } else {
                Err(refuse(format!(
                    "`submit {}` is not allowed in phase {phase}; it is allowed in {}",
                    a.as_str(),
                    source_phases(command).join(", ")
                )))
            }
        }
        Command::Unblock if phase != Phase::Blocked => Err(refuse(format!(
            "the blackboard is {phase}, not BLOCKED; nothing to unblock"
        ))),
        _ => Ok(()),
    }
}

/// The agent's standing: on the blackboard, in the role the command needs. A refusal suggests
/// registering only for the commands any agent may run once registered (`block`, `stop`,
/// `note`); becoming required, or the doer, is not the caller's to decide.
pub fn admit_standing(fm: &Frontmatter, id: &str, command: Command) -> Result<()> {
    let role = fm.agent(id).map(|a| a.role);
    let doer = fm.doer().unwrap_or("the doer");
    match (command, role) {
        (Command::Register, Some(Role::Doer)) => Err(refuse(format!(
            "{id:?} is the doer of this blackboard and cannot register as a reviewer"
        ))),
        (Command::Register, _) => Ok(()),
        (Command::Unregister, None) => Err(refuse(format!(
            "agent {id:?} is not on the blackboard; there is no registration to withdraw{}",
            did_you_mean(fm, id)
        ))),
        (c, None) => match c.actor() {
            Actor::Doer => Err(refuse(format!(
                "only the doer ({doer}) may {}; {id:?} is not on the blackboard{}",
                verb(c),
                did_you_mean(fm, id)
            ))),
            Actor::Reviewer => Err(refuse(format!(
                "only a required reviewer may {}; {id:?} is not on the blackboard{}. Only the \
                 user names required reviewers (if they named you: `pair register --agent {id} \
                 --required`)",
                verb(c),
                did_you_mean(fm, id)
            ))),
            Actor::Any | Actor::Auto | Actor::Dissenter => Err(Error::refused(
                format!(
                    "agent {id:?} is not on the blackboard{}; a reviewer registers first",
                    did_you_mean(fm, id)
                ),
                register_hint(id),
            )),
        },
        (c, Some(role)) => match (c.actor(), role) {
            (Actor::Doer, Role::Reviewer) => Err(refuse(format!(
                "only the doer ({doer}) may {}; {id:?} is a reviewer",
                verb(c)
            ))),
            (Actor::Reviewer, Role::Doer) => Err(refuse(format!(
                "only a reviewer may {}; {id:?} is the doer",
                verb(c)
            ))),
            (Actor::Dissenter, Role::Doer) => Err(refuse(format!(
                "{id:?} is the doer and may not dissent on its own work; a fresh agent dissents"
            ))),
            _ => Ok(()),
        },
    }
}

fn verb(c: Command) -> &'static str {
    match c {
        Command::Advance => "advance the phase",
        Command::Claim => "claim a review",
        Command::Verdict => "give a verdict",
        Command::Correct => "correct a review",
        c => c.name(),
    }
}

/// Judge a change made by `writer` with the user's `consent`: allowed, with the records the
/// change requires, or the rule it breaks.
pub fn judge(
    old: &Frontmatter,
    new: &Frontmatter,
    body: Body<'_>,
    writer: Writer<'_>,
    consent: &Consent,
    now: Timestamp,
) -> Result<Ruling> {
    let mut ruling = Ruling {
        transition: None,
        records: Vec::new(),
    };
    let changed = field::changed(old, new);
    match writer {
        Writer::Anonymous => judge_anonymous(old, new, &changed)?,
        Writer::Agent(id) => {
            // An acknowledged handoff moves the role first; the write's other changes are
            // judged against the board as it leaves it.
            let moved = handoff::judge(old, new, id, consent.user_approved, now)?;
            let old = moved.as_ref().unwrap_or(old);
            let changed = field::changed(old, new);
            let role = role_of(old, new, id)?;
            check_agents(old, new, id)?;
            crate::law::pool::judge(old, new, id)?;
            crate::law::dissent::judge(old, new, id, role)?;
            check_fields(old, new, &changed, id, role, consent, now, &mut ruling)?;
            if old.phase == new.phase && !is_resubmission(old, new) {
                check_unmoved(old, new)?;
            } else {
                let t = check_transition(old, new, id, role, consent, now, &mut ruling)?;
                ruling.transition = Some(t);
            }
            crate::law::ledger::judge(
                old,
                new,
                id,
                role,
                consent,
                ruling.transition,
                now,
                &mut ruling.records,
            )?;
        }
    }
    if let Body::Replaced {
        old: before,
        new: after,
    } = body
    {
        if let Writer::Agent(_) = writer
            && let Some(m) = crate::law::lifecycle::raw_step_refusal(old, new)
        {
            return Err(refuse(m));
        }
        check_append_only(before, after)?;
        crate::board::journal::check_kept(before, after)?;
    }
    Ok(ruling)
}

/// A writer that names nobody may change no frontmatter field (only append to the body, and
/// only where notes are allowed).
fn judge_anonymous(old: &Frontmatter, new: &Frontmatter, changed: &[Field]) -> Result<()> {
    let name_the_writer = || Hint::Rerun {
        add: vec![Flag::with("--as", "ID")],
    };
    // The journal's seal is pair's: the write's own seal replaces whatever the content says.
    if let Some(f) = changed.iter().find(|f| f.owner() != Owner::Store) {
        return Err(Error::refused(
            format!(
                "field `{}` changed ({} → {}), but this raw write names no writer; a change to \
                 the frontmatter must be attributable: name the agent making it (--as ID, \
                 --agent ID or PAIR_AGENT), or, for a human fixing the file, use --repair \
                 --reason TEXT",
                f.name(),
                f.value(old).unwrap_or_else(|| "(absent)".into()),
                f.value(new).unwrap_or_else(|| "(absent)".into()),
            ),
            name_the_writer(),
        ));
    }
    if old.extra != new.extra {
        return Err(Error::refused(
            "the frontmatter changed, but this raw write names no writer (--as ID, --agent ID or \
             PAIR_AGENT)",
            name_the_writer(),
        ));
    }
    check_terminal_unchanged(old, new)
}

/// Each changed top-level field against its owner in the registry.
#[allow(clippy::too_many_arguments)]
fn check_fields(
    old: &Frontmatter,
    new: &Frontmatter,
    changed: &[Field],
    id: &str,
    role: Role,
    consent: &Consent,
    now: Timestamp,
    ruling: &mut Ruling,
) -> Result<()> {
    let doer = old.doer().unwrap_or("the doer");
    for f in changed {
        match f.owner() {
            Owner::Doer if role != Role::Doer => {
                return Err(refuse(format!(
                    "field `{}` belongs to the doer ({doer}); {id} may not change it",
                    f.name()
                )));
            }
            Owner::Settings => {
                return Err(refuse(format!(
                    "field `{}` sets the workflow's gates; it changes only by a human repair \
                     (`pair write --repair --reason TEXT`), which is recorded",
                    f.name()
                )));
            }
            Owner::NoReview => check_no_review(old, new, role, id, now, ruling)?,
            Owner::ReviewerList => {
                if !crate::law::unrequire::judge(old, new, id, consent, now, &mut ruling.records)? {
                    check_reviewer_list(old, new, id, role, now, ruling)?
                }
            }
            Owner::User => {
                crate::law::sla::judge_change(old, new, id, consent, now, &mut ruling.records)?
            }
            Owner::Protocol
                if *f == Field::PhaseUpdatedAt && old.phase == new.phase && role != Role::Doer =>
            {
                return Err(refuse(format!(
                    "field `phase_updated_at` belongs to the doer ({doer}) unless the phase \
                     changes"
                )));
            }
            // The ledger's own rules judge it ([`crate::law::ledger::judge`]). The journal's seal
            // is pair's: whatever the new content says, the write's seal replaces it.
            Owner::Doer
            | Owner::Protocol
            | Owner::Agents
            | Owner::Checks
            | Owner::Ledger
            | Owner::Dissent
            | Owner::Handoff
            | Owner::Seconds
            | Owner::Store => {}
        }
    }
    if old.extra != new.extra && role != Role::Doer {
        return Err(refuse(format!(
            "top-level fields beyond the protocol's belong to the doer ({doer}); {id} may not \
             change them"
        )));
    }
    Ok(())
}

/// A resubmission after drift moves a counter and may keep the phase (FOLLOWUP_REVIEW): it is
/// a transition of the table even when the phase stays.
fn is_resubmission(old: &Frontmatter, new: &Frontmatter) -> bool {
    old.phase == new.phase
        && Target::ALL
            .iter()
            .any(|t| old.counter(*t) != new.counter(*t))
        && TRANSITIONS
            .iter()
            .any(|t| t.resubmits && reaches(t, old, new))
}

/// The phase did not move: neither may the counters, `blocked_from` or the pins, and a
/// terminal board takes at most notes.
fn check_unmoved(old: &Frontmatter, new: &Frontmatter) -> Result<()> {
    check_terminal_unchanged(old, new)?;
    if let Some(t) = Target::ALL
        .iter()
        .find(|t| old.counter(**t) != new.counter(**t))
    {
        return Err(refuse(format!(
            "field `{}` changes only with a submission (`pair submit`)",
            t.counter_field()
        )));
    }
    if old.pins != new.pins {
        return Err(refuse(
            "field `pins` changes only with a submission, which pins the artifact it submits",
        ));
    }
    if old.blocked_from != new.blocked_from {
        return Err(refuse(
            "field `blocked_from` changes only with block/unblock",
        ));
    }
    Ok(())
}

/// The writer's role: its own entry, or a reviewer entry it adds for itself (a registration).
fn role_of(old: &Frontmatter, new: &Frontmatter, id: &str) -> Result<Role> {
    match (old.agent(id), new.agent(id)) {
        (Some(a), _) => Ok(a.role),
        (None, Some(a)) if a.role == Role::Reviewer => Ok(Role::Reviewer),
        _ => Err(not_registered(id)),
    }
}

/// The status `unblock` gives every agent other than the doer that the block left `BLOCKED` (the
/// agent who blocked, or the arbiter who deferred): the block is over for everyone.
pub const RESUMED: crate::board::frontmatter::Status = crate::board::frontmatter::Status::Idle;

/// Whether `a → b` is the one change an `unblock` makes to another agent's entry: `BLOCKED`
/// becomes [`RESUMED`], nothing else.
fn resumed(
    old: &Frontmatter,
    new: &Frontmatter,
    a: &crate::board::frontmatter::Agent,
    b: &crate::board::frontmatter::Agent,
) -> bool {
    let unblock = old.phase == Phase::Blocked && old.blocked_from == Some(new.phase);
    let mut same = b.clone();
    same.status = a.status;
    unblock
        && a.status == crate::board::frontmatter::Status::Blocked
        && b.status == RESUMED
        && same == *a
}

/// Agent entries: removed only as a withdrawn registration ([`check_withdrawal`]), role fixed,
/// each changed only by its own agent, added only by the agent itself, and a verdict given or
/// replaced only in its open round on the current counter.
fn check_agents(old: &Frontmatter, new: &Frontmatter, writer: &str) -> Result<()> {
    for (id, a) in &old.agents {
        let Some(b) = new.agent(id) else {
            check_withdrawal(old, new, id, a, writer)?;
            continue;
        };
        if a.role != b.role {
            return Err(refuse(format!("field `agents.{id}.role` never changes")));
        }
        if b != a && id != writer && !resumed(old, new, a, b) {
            let field = crate::board::frontmatter::changed_agent_key(a, b)
                .map_or_else(|| format!("agents.{id}"), |k| format!("agents.{id}.{k}"));
            return Err(refuse(format!(
                "field `{field}` belongs to {id}; {writer} may not change it"
            )));
        }
    }
    let open = old.phase.review_target();
    for (id, b) in &new.agents {
        let before = old.agent(id);
        if before.is_none() && id != writer {
            return Err(refuse(format!(
                "field `agents.{id}` is new; only {id} may add its own entry (`pair register`)"
            )));
        }
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
            check_judged(old, id, *t, now.sha256)?;
        }
    }
    Ok(())
}

/// An agent entry is removed only as a withdrawn registration: by the agent itself, a
/// reviewer, that has given no verdict (a verdict stays on the record) and is not required
/// (who is required changes only by the user's word).
fn check_withdrawal(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    a: &Agent,
    writer: &str,
) -> Result<()> {
    let repair = "a human can repair with `pair write --repair --reason TEXT`";
    if id != writer {
        return Err(refuse(format!(
            "field `agents.{id}` was removed; only {id} may withdraw its own registration \
             (`pair unregister`); {repair}"
        )));
    }
    if a.role == Role::Doer {
        return Err(refuse(format!(
            "field `agents.{id}` was removed; the doer's entry is never removed ({repair})"
        )));
    }
    if Target::ALL
        .iter()
        .any(|t| a.review(*t).verdict.is_some() || a.review(*t).reviewed.is_some())
    {
        return Err(refuse(format!(
            "field `agents.{id}` was removed; {id} has given verdicts, which stay on the record \
             ({repair})"
        )));
    }
    if old.is_required_now(id) || new.is_required_now(id) {
        return Err(refuse(format!(
            "field `agents.{id}` was removed; {id} is a required reviewer, and only the user \
             changes who is required ({repair})"
        )));
    }
    Ok(())
}

/// A verdict on a pinned round records the hash of the artifact it judged, and that is the
/// pinned one: "reviewed" means this exact content. On a round that is not pinned (a board from
/// before pins, or a raw submission that left it unpinned) there is nothing to record.
fn check_judged(
    old: &Frontmatter,
    id: &str,
    t: Target,
    judged: Option<crate::board::frontmatter::Sha256>,
) -> Result<()> {
    let field = t.sha_field();
    let counter = old.counter(t);
    match (old.pin(t), judged) {
        (Some(pin), Some(h)) if h == pin.sha256 => Ok(()),
        (Some(pin), Some(h)) => Err(Error::stale_artifact(
            format!(
                "stale verdict: field `agents.{id}.{field}` says the verdict judged {h}, but {t} \
                 {counter} is pinned at {} ({}); read the pinned artifact (`pair diff`) and give \
                 the verdict on it",
                pin.sha256,
                pin.kind.describe()
            ),
            Some(crate::error::Hint::Run {
                command: "diff",
                args: vec![],
            }),
        )),
        (Some(pin), None) => Err(refuse(format!(
            "field `agents.{id}.{field}`: {t} {counter} is pinned ({} sha256 {}); a verdict on it \
             records the hash of the artifact it judged (`pair verdict` does)",
            pin.kind.describe(),
            pin.sha256
        ))),
        (None, Some(_)) => Err(refuse(format!(
            "field `agents.{id}.{field}`: {t} {counter} is not pinned; a verdict on it records no \
             artifact hash"
        ))),
        (None, None) => Ok(()),
    }
}

/// `no_review` is turned on once, by the doer, while nobody reviews; the approval is recorded.
fn check_no_review(
    old: &Frontmatter,
    new: &Frontmatter,
    role: Role,
    id: &str,
    now: Timestamp,
    ruling: &mut Ruling,
) -> Result<()> {
    let nobody = |fm: &Frontmatter| !fm.has_reviewers() && fm.reviewers().is_empty();
    if let Some(why) = dissent::no_review_refusal(new) {
        return Err(refuse(&why));
    }
    if role != Role::Doer || old.no_review || !nobody(old) || !nobody(new) {
        return Err(refuse(
            "field `no_review` may only be turned on, by the doer with the user's approval, while \
             no reviewer is registered or required (`pair submit … --no-review`)",
        ));
    }
    ruling.records.push(Record {
        heading: format!("{NO_REVIEW_APPROVED} — {id} — {now}"),
        text: "The user approved working without reviewers; submissions are approved as they \
               are submitted."
            .to_string(),
    });
    Ok(())
}

/// `required_reviewers` changes only by the first submission's snapshot (checked with its
/// transition) or by a reviewer the user named adding itself, which is recorded.
fn check_reviewer_list(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    role: Role,
    now: Timestamp,
    ruling: &mut Ruling,
) -> Result<()> {
    let added = new.required_reviewers.len() == old.required_reviewers.len() + 1
        && new.required_reviewers.starts_with(&old.required_reviewers);
    let adds_itself = role == Role::Reviewer
        && added
        && new.required_reviewers.last().map(String::as_str) == Some(id);
    if adds_itself {
        let when = match old.phase.review_target() {
            Some(t) => format!("joins the open {t} round"),
            None => "joins from the next review round".to_string(),
        };
        ruling.records.push(Record {
            heading: format!("{REVIEWER_ADDED} — {id} — {now}"),
            text: format!("The user named {id} a required reviewer; {id} {when}."),
        });
        return Ok(());
    }
    let snapshot = old.required_reviewers.is_empty() && old.phase != new.phase;
    if snapshot {
        return Ok(());
    }
    Err(refuse(
        "field `required_reviewers` changes only when the doer's first submission snapshots the \
         registered reviewers or a reviewer the user named adds itself (`pair register \
         --required`)",
    ))
}

/// A terminal phase that does not move: at most notes (the body and the writer's `last_seen`),
/// and only where notes are allowed.
fn check_terminal_unchanged(old: &Frontmatter, new: &Frontmatter) -> Result<()> {
    if !old.phase.is_terminal() || old.phase != new.phase {
        return Ok(());
    }
    if !protocol::terminal_allows(old.phase, Command::Note) {
        return Err(refuse(format!(
            "the blackboard is {} (terminal); writes are refused",
            old.phase
        )));
    }
    // A handoff's own change (judged by [`handoff::judge`]) is allowed where the phase takes
    // handoffs; an acknowledgement reached here already moved the role.
    let handoffs = protocol::terminal_allows(old.phase, Command::Handoff);
    let handed = handoffs && same_but_handoffs(old, new);
    if !same_but_last_seen(old, new) && !handed {
        return Err(refuse(format!(
            "the blackboard is {}: only notes may be added (`pair note`){}; the frontmatter may \
             not change until `pair unblock` or `pair stop`",
            old.phase,
            if handoffs {
                " and a role handed over (`pair handoff`, `pair acknowledge`)"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// Whether two frontmatters differ at most in their agents' `last_seen` and the handoffs.
fn same_but_handoffs(old: &Frontmatter, new: &Frontmatter) -> bool {
    let mut old = old.clone();
    old.handoffs.clone_from(&new.handoffs);
    same_but_last_seen(&old, new)
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

/// Whether the move `from → to` (with `new` as the board after it) is this row.
fn reaches(t: &Transition, old: &Frontmatter, new: &Frontmatter) -> bool {
    let (from, to) = (old.phase, new.phase);
    if !t.from.matches(from) {
        return false;
    }
    match t.to {
        To::Phase(p) if p == to => true,
        // A submission with nobody to review (an approved no-review workflow) completes its
        // empty round in the same write.
        To::Phase(_) => match t.command {
            Command::Submit(a) if t.completes_empty_round => {
                new.no_review
                    && new.required_reviewers.is_empty()
                    && outcome_phase(a.target(), true) == to
            }
            _ => false,
        },
        To::BlockedFrom => old.blocked_from == Some(to),
        To::DecisionAccepted => crate::board::ledger::pending_gate(old)
            .is_some_and(|g| from == Phase::AwaitingDecision && outcome_phase(g, true) == to),
        // A passed round of a gate with a dissent stage moves only by the dissent.
        To::RoundOutcome => from.review_target().is_some_and(|target| {
            let r = protocol::round(new, target);
            r.complete
                && outcome_phase(target, r.approved) == to
                && !crate::law::dissent::holds_round(new, target)
        }),
        To::DissentOutcome => crate::law::dissent::moves(old, new),
    }
}

/// The phase moved: it must be a row of the table this writer may take, its human gate approved
/// and its guard holding (or waived by the doer), with the counters and `blocked_from` moving as
/// the row says.
fn check_transition(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    role: Role,
    consent: &Consent,
    now: Timestamp,
    ruling: &mut Ruling,
) -> Result<&'static Transition> {
    let t = find_row(old, new, id, role)?;
    if t.resubmits {
        check_drift(old, new, id, t)?;
    }
    check_gates(old, new, t, id, consent, now, ruling)?;
    check_counters(old, new, t)?;
    check_snapshot(old, new, t)?;
    check_pins(old, new, t)?;
    let from = old.phase;
    match t.command {
        Command::Block if new.blocked_from != Some(from) => Err(refuse(format!(
            "field `blocked_from` must be {from} when blocking from {from}"
        ))),
        Command::Unblock | Command::Stop if new.blocked_from.is_some() => Err(refuse(
            "field `blocked_from` must be null after unblock or stop",
        )),
        _ => Ok(t),
    }
}

/// The row of the table that takes `old.phase` to `new.phase` and that this writer may take.
fn find_row(
    old: &Frontmatter,
    new: &Frontmatter,
    id: &str,
    role: Role,
) -> Result<&'static Transition> {
    let (from, to) = (old.phase, new.phase);
    let rows: Vec<&'static Transition> = TRANSITIONS
        .iter()
        .filter(|t| reaches(t, old, new))
        .collect();
    if rows.is_empty() {
        return Err(refuse(format!(
            "field `phase`: there is no transition from {from} to {to} (see the phase table in \
             docs/protocol.md; a human can force it with `pair write --repair --reason TEXT`)"
        )));
    }
    let allowed = |t: &Transition| match t.actor {
        Actor::Doer => role == Role::Doer,
        Actor::Reviewer => role == Role::Reviewer && new.is_required_now(id),
        Actor::Dissenter => {
            role == Role::Reviewer && crate::law::dissent::is_dissenter_now(old, id)
        }
        Actor::Any | Actor::Auto => true,
    };
    let Some(t) = rows.iter().copied().find(|t| allowed(t)) else {
        let who = match rows[0].actor {
            Actor::Doer => "the doer",
            Actor::Reviewer => "a required reviewer (claim)",
            Actor::Dissenter => "a fresh dissenter (dissent)",
            _ => "someone else",
        };
        return Err(refuse(format!(
            "field `phase`: {from} → {to} is taken by {who}, not by {id}"
        )));
    };
    if from.is_terminal() && !protocol::terminal_allows(from, t.command) {
        return Err(refuse(format!(
            "the blackboard is {from} (terminal); {from} → {to} is refused"
        )));
    }
    Ok(t)
}

/// The row's human gate needs the user's approval (unless `yolo`), and its guard must hold or be
/// waived by the doer with the user's consent; both are recorded.
fn check_gates(
    old: &Frontmatter,
    new: &Frontmatter,
    t: &Transition,
    id: &str,
    consent: &Consent,
    now: Timestamp,
    ruling: &mut Ruling,
) -> Result<()> {
    let (from, to) = (old.phase, new.phase);
    let gated = t.human_gate && !old.yolo;
    let guarded = t.actor == Actor::Doer && !t.guard.holds(old);
    let waive_flag = || match &consent.waive {
        Some(r) => Flag::with("--waive", r.clone()),
        None => Flag::with("--waive", "REASON"),
    };
    if gated && !consent.user_approved {
        let mut add = vec![Flag::bare("--user-approved")];
        if guarded {
            add.push(waive_flag());
        }
        return Err(Error::refused(
            format!(
                "human gate: {from} → {to} needs the user's approval{}. Ask the user, then run it \
                 again with --user-approved",
                if guarded && consent.waive.is_none() {
                    format!(
                        ", and {} does not hold (waive it only if the user did)",
                        t.guard.describe()
                    )
                } else {
                    String::new()
                }
            ),
            Hint::Rerun { add },
        ));
    }
    if gated {
        ruling.records.push(Record {
            heading: format!("{GATE_APPROVED} — {from} → {to} — {id} — {now}"),
            text: format!(
                "The user approved the human gate {from} → {to} (`{}`).",
                consent.invocation
            ),
        });
    }
    if !guarded {
        return Ok(());
    }
    let Some(reason) = &consent.waive else {
        let mut add = Vec::new();
        if gated {
            add.push(Flag::bare("--user-approved"));
        }
        add.push(waive_flag());
        return Err(Error::refused(
            format!(
                "{from} → {to} needs {}; it does not hold. If the user explicitly waived this \
                 gate, run it again with --waive REASON",
                t.guard.describe()
            ),
            Hint::Rerun { add },
        ));
    };
    ruling.records.push(Record {
        heading: format!("{GATE_WAIVED} — {from} → {to} — {id} — {now}"),
        text: format!(
            "The user waived the predicate \"{}\".\n\nReason: {}",
            t.guard.describe(),
            reason.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    });
    Ok(())
}

/// A resubmission from a review phase is a way out of a round that can no longer complete: the
/// artifact under review was pinned, is of a kind that lives outside the blackboard, and the new
/// submission pins different content. Anything else is withdrawing an artifact mid-review.
fn check_drift(old: &Frontmatter, new: &Frontmatter, id: &str, t: &Transition) -> Result<()> {
    let Command::Submit(a) = t.command else {
        return Ok(());
    };
    let target = a.target();
    let why = match (old.pin(target), new.pins.get(target)) {
        (Some(was), Some(now))
            if was.kind.can_drift() && (now.sha256 != was.sha256 || now.tree != was.tree) =>
        {
            return Ok(());
        }
        (None, _) => "; this round is not pinned, so nothing shows it changed".to_string(),
        (Some(was), _) if !was.kind.can_drift() => String::new(),
        (Some(was), _) => format!(
            "; it may be resubmitted only when it changed after it was submitted, and the {} \
             still matches its pin ({})",
            was.kind.describe(),
            was.sha256.short()
        ),
    };
    Err(Error::refused(
        format!(
            "phase {} is under review; an artifact cannot be withdrawn or resubmitted \
             mid-review{why}. Wait until every required reviewer has given a verdict",
            old.phase
        ),
        Hint::Run {
            command: "poll",
            args: vec!["--agent".into(), id.into(), "--wait".into()],
        },
    ))
}

/// A submission pins what it submits (or, written raw, may leave its target unpinned); no other
/// change moves a pin.
fn check_pins(old: &Frontmatter, new: &Frontmatter, t: &Transition) -> Result<()> {
    let submitted = match t.command {
        Command::Submit(a) => Some(a),
        _ => None,
    };
    for target in Target::ALL.iter().copied() {
        let (before, after) = (old.pins.get(target), new.pins.get(target));
        match submitted {
            Some(a) if a.target() == target => {
                let Some(p) = after else { continue };
                if p.counter != new.counter(target) {
                    return Err(refuse(format!(
                        "field `pins.{target}.counter` must be the submission's new {} ({}), \
                         not {}",
                        target.counter_field(),
                        new.counter(target),
                        p.counter
                    )));
                }
                if !a.pin_kinds().contains(&p.kind) {
                    return Err(refuse(format!(
                        "field `pins.{target}.kind`: `submit {}` pins {}, not {}",
                        a.as_str(),
                        a.pin_kinds()
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(" or "),
                        p.kind
                    )));
                }
            }
            _ if before != after => {
                return Err(refuse(format!(
                    "field `pins.{target}` changes only with a submission of the {target}"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Counters move with their submission, by exactly one (never past the maximum).
fn check_counters(old: &Frontmatter, new: &Frontmatter, t: &Transition) -> Result<()> {
    let (from, to) = (old.phase, new.phase);
    let expected: Option<Target> = match t.command {
        Command::Submit(a) => Some(a.target()),
        _ => None,
    };
    for target in Target::ALL.iter().copied() {
        let (before, after) = (old.counter(target), new.counter(target));
        if Some(target) == expected {
            if before.checked_add(1) != Some(after) {
                return Err(refuse(format!(
                    "field `{}` must increase by exactly one on submission ({before} → {})",
                    target.counter_field(),
                    before
                        .checked_add(1)
                        .map_or("no further value: it is at its maximum".into(), |n| n
                            .to_string())
                )));
            }
        } else if before != after {
            return Err(refuse(format!(
                "field `{}`: {from} → {to} must {}",
                target.counter_field(),
                match expected {
                    Some(e) => format!("increase {} by one", e.counter_field()),
                    None => "leave the counters unchanged".to_string(),
                }
            )));
        }
    }
    Ok(())
}

/// The first submission snapshots every registered reviewer into `required_reviewers` (or,
/// with nobody registered, turns on the no-review workflow); nothing else fills the list.
fn check_snapshot(old: &Frontmatter, new: &Frontmatter, t: &Transition) -> Result<()> {
    let is_submit = matches!(t.command, Command::Submit(_));
    if old.required_reviewers != new.required_reviewers
        && old.required_reviewers.is_empty()
        && (!is_submit || new.no_review)
    {
        return Err(refuse(
            "field `required_reviewers` is filled only by the first submission's snapshot of the \
             registered reviewers",
        ));
    }
    if is_submit && old.required_reviewers.is_empty() && !new.no_review && new.pool.is_none() {
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
    Ok(())
}

/// Every line of the old body must still be in the new body, in order; only additions between
/// or after them are allowed.
pub fn check_append_only(old: &str, new: &str) -> Result<()> {
    // The usual raw write appends at the end: one comparison of bytes says so.
    if new.starts_with(old) && (old.is_empty() || old.ends_with('\n')) {
        return Ok(());
    }
    let mut new_lines = crate::board::document::raw_lines(new);
    for (i, line) in crate::board::document::raw_lines(old).enumerate() {
        let line_cmp = line.trim_end_matches(['\n', '\r']);
        if !new_lines.any(|n| n.trim_end_matches(['\n', '\r']) == line_cmp) {
            return Err(refuse(format!(
                "the body is append-only: line {} of the old body ({:?}) was removed or changed",
                i + 1,
                line_cmp.chars().take(60).collect::<String>()
            )));
        }
    }
    Ok(())
}

/// The phases a transition row leaves from, for "allowed in …" messages.
pub fn source_phases(command: Command) -> Vec<String> {
    let mut out = Vec::new();
    for t in TRANSITIONS.iter().filter(|t| t.command == command) {
        match t.from {
            Source::One(a) => out.push(a.to_string()),
            Source::Two(a, b) => {
                out.push(a.to_string());
                out.push(b.to_string());
            }
            Source::Reviewable => out.push("any review phase".into()),
            Source::NonTerminal => out.push("any non-terminal phase".into()),
            Source::NonTerminalOrBlocked => out.push("any non-terminal phase or BLOCKED".into()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::validate;

    const BOARD: &str = "---
phase: PLANNING
phase_updated_at: \"2026-01-01T00:00:00Z\"
yolo: false
work_type: feature
rca_required: true
red_test_required: false
required_reviewers: []
no_review: false
analysis_revision: 0
plan_revision: 0
red_test_round: 0
code_review_round: 0
worktree: null
blocked_from: null
agents:
  doer:
    role: doer
    status: WORKING
  alice:
    role: reviewer
    status: IDLE
---
# body
";

    fn board() -> Frontmatter {
        validate::check_bytes(BOARD.as_bytes())
            .expect("valid sample")
            .parsed
            .fm
    }

    fn now() -> Timestamp {
        Timestamp::parse("2026-02-01T00:00:00Z").expect("timestamp")
    }

    fn approved() -> Consent {
        Consent {
            user_approved: true,
            invocation: "pair test".into(),
            ..Consent::default()
        }
    }

    fn judge_as(old: &Frontmatter, new: &Frontmatter, id: &str, c: &Consent) -> Result<Ruling> {
        judge(old, new, Body::Appended, Writer::Agent(id), c, now())
    }

    /// The doer's plan submission from PLANNING, snapshotting alice.
    fn submitted(old: &Frontmatter) -> Frontmatter {
        let mut new = old.clone();
        new.phase = Phase::PlanningSubmitted;
        new.plan_revision = 1;
        new.required_reviewers = vec!["alice".into()];
        new
    }

    fn message(r: Result<Ruling>) -> String {
        r.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn a_gated_submission_needs_the_users_approval_and_records_it() {
        let old = board();
        let mut old_ok = old.clone();
        old_ok.rca_required = false;
        let new = submitted(&old_ok);
        let refused = judge_as(&old_ok, &new, "doer", &Consent::default()).unwrap_err();
        assert_eq!(
            refused.hint(),
            Some(&Hint::Rerun {
                add: vec![Flag::bare("--user-approved")]
            })
        );
        let ruling = judge_as(&old_ok, &new, "doer", &approved()).expect("allowed");
        assert_eq!(ruling.records.len(), 1);
        assert!(
            ruling.records[0]
                .heading
                .starts_with("Gate approved — PLANNING → PLANNING_SUBMITTED")
        );
    }

    #[test]
    fn a_guard_that_does_not_hold_is_refused_unless_waived_and_the_waiver_is_recorded() {
        let old = board(); // rca_required, analysis never approved
        let new = submitted(&old);
        let m = message(judge_as(&old, &new, "doer", &approved()));
        assert!(m.contains("root cause analysis is approved"), "{m}");
        let waived = Consent {
            waive: Some("the user said so".into()),
            ..approved()
        };
        let ruling = judge_as(&old, &new, "doer", &waived).expect("waived");
        assert!(
            ruling
                .records
                .iter()
                .any(|r| r.heading.starts_with("Gate waived"))
        );
    }

    #[test]
    fn a_reviewer_may_not_take_the_doers_transition() {
        let mut old = board();
        old.rca_required = false;
        let mut new = submitted(&old);
        new.agents[1].1.last_seen = Some(now());
        let m = message(judge_as(&old, &new, "alice", &approved()));
        assert!(m.contains("taken by the doer, not by alice"), "{m}");
    }

    #[test]
    fn counters_move_by_exactly_one_and_never_past_the_maximum() {
        let mut old = board();
        old.rca_required = false;
        let mut new = submitted(&old);
        new.plan_revision = 2;
        assert!(message(judge_as(&old, &new, "doer", &approved())).contains("exactly one"));
        old.plan_revision = u32::MAX;
        new.plan_revision = 0;
        assert!(message(judge_as(&old, &new, "doer", &approved())).contains("maximum"));
    }

    #[test]
    fn an_anonymous_writer_may_only_append_to_the_body() {
        let old = board();
        let mut new = old.clone();
        new.worktree = Some("/wt".into());
        let r = judge(
            &old,
            &new,
            Body::Appended,
            Writer::Anonymous,
            &approved(),
            now(),
        );
        assert!(message(r).contains("names no writer"));
        let body = Body::Replaced {
            old: "# body\n",
            new: "# body\nmore\n",
        };
        assert!(judge(&old, &old, body, Writer::Anonymous, &approved(), now()).is_ok());
        let body = Body::Replaced {
            old: "# body\nline\n",
            new: "# body\nchanged\n",
        };
        let r = judge(&old, &old, body, Writer::Anonymous, &approved(), now());
        assert!(message(r).contains("append-only"));
    }

    #[test]
    fn settings_change_only_by_repair() {
        let old = board();
        let mut new = old.clone();
        new.yolo = true;
        assert!(message(judge_as(&old, &new, "doer", &approved())).contains("human repair"));
    }

    #[test]
    fn a_verdict_outside_its_open_round_is_refused() {
        let old = board();
        let mut new = old.clone();
        let a = new.agent_mut("alice").expect("alice");
        a.plan.reviewed = Some(0);
        a.plan.verdict = Some(crate::board::frontmatter::Verdict::Approved);
        assert!(message(judge_as(&old, &new, "alice", &approved())).contains("open"));
    }

    #[test]
    fn a_no_review_submission_completes_its_empty_round_in_the_same_write() {
        let mut old = board();
        old.rca_required = false;
        old.agents.truncate(1);
        let mut new = old.clone();
        new.phase = Phase::PlanApproved;
        new.plan_revision = 1;
        new.no_review = true;
        let ruling = judge_as(&old, &new, "doer", &approved()).expect("allowed");
        assert!(matches!(
            ruling.transition.map(|t| t.command),
            Some(Command::Submit(_))
        ));
        assert!(
            ruling
                .records
                .iter()
                .any(|r| r.heading.starts_with("No-review"))
        );
        // Without no_review the same jump is no transition.
        new.no_review = false;
        assert!(message(judge_as(&old, &new, "doer", &approved())).contains("no transition"));
    }

    /// Code round 1 under review, its staged diff pinned.
    fn pinned_code_round() -> Frontmatter {
        use crate::board::frontmatter::{Pin, PinKind, Sha256};
        let mut fm = board();
        fm.phase = Phase::CodeSubmitted;
        fm.plan_revision = 1;
        fm.code_review_round = 1;
        fm.required_reviewers = vec!["alice".into()];
        fm.worktree = Some("/wt".into());
        fm.pins.set(
            Target::Code,
            Some(Pin {
                counter: 1,
                kind: PinKind::Staged,
                sha256: Sha256::of(b"diff 1"),
                files: vec![],
                tree: None,
                published: None,
                submitted_at: None,
            }),
        );
        fm
    }

    #[test]
    fn a_verdict_on_a_pinned_round_records_exactly_the_pin() {
        use crate::board::frontmatter::{Review, Sha256, Verdict};
        let old = pinned_code_round();
        let judged = |h: Option<Sha256>| {
            let mut new = old.clone();
            new.phase = Phase::ReadyToCommit;
            new.agent_mut("alice").expect("alice").code = Review {
                reviewed: Some(1),
                verdict: Some(Verdict::Approved),
                sha256: h,
            };
            judge_as(&old, &new, "alice", &Consent::default())
        };
        let none = judged(None).unwrap_err();
        assert_eq!(none.code(), crate::error::exit::PROTOCOL);
        assert!(none.to_string().contains("reviewed_code_sha256"), "{none}");
        let other = judged(Some(Sha256::of(b"diff 2"))).unwrap_err();
        assert_eq!(other.code(), crate::error::exit::STALE, "{other}");
        assert!(judged(Some(Sha256::of(b"diff 1"))).is_ok());
    }

    #[test]
    fn a_pin_moves_only_with_its_submission_and_a_resubmission_needs_drift() {
        use crate::board::frontmatter::{Pin, PinKind, Sha256};
        let old = pinned_code_round();
        let pin = |counter, kind, content: &[u8]| Pin {
            counter,
            kind,
            sha256: Sha256::of(content),
            files: vec![],
            tree: None,
            published: None,
            submitted_at: None,
        };
        // Not a submission: no pin moves.
        let mut new = old.clone();
        new.pins
            .set(Target::Plan, Some(pin(1, PinKind::Text, b"plan")));
        assert!(message(judge_as(&old, &new, "doer", &approved())).contains("pins"));
        // A resubmission of the same content is withdrawing it mid-review.
        let mut new = old.clone();
        new.code_review_round = 2;
        new.pins
            .set(Target::Code, Some(pin(2, PinKind::Staged, b"diff 1")));
        let m = message(judge_as(&old, &new, "doer", &approved()));
        assert!(
            m.contains("under review") && m.contains("still matches"),
            "{m}"
        );
        // Of changed content, it is the way out of a drifted round.
        new.pins
            .set(Target::Code, Some(pin(2, PinKind::Staged, b"diff 2")));
        let ruling = judge_as(&old, &new, "doer", &approved()).expect("a drifted round");
        assert!(ruling.transition.is_some_and(|t| t.resubmits));
        // A code submission pins the staged diff, at the new counter.
        new.pins
            .set(Target::Code, Some(pin(2, PinKind::Unstaged, b"diff 2")));
        assert!(message(judge_as(&old, &new, "doer", &approved())).contains("pins.code.kind"));
        new.pins
            .set(Target::Code, Some(pin(1, PinKind::Staged, b"diff 2")));
        assert!(message(judge_as(&old, &new, "doer", &approved())).contains("pins.code.counter"));
    }

    #[test]
    fn a_terminal_board_takes_notes_only_where_the_table_allows() {
        let mut old = board();
        old.phase = Phase::Blocked;
        old.blocked_from = Some(Phase::Planning);
        let mut new = old.clone();
        new.agents[1].1.last_seen = Some(now());
        assert!(judge_as(&old, &new, "alice", &approved()).is_ok());
        old.phase = Phase::Stopped;
        old.blocked_from = None;
        new.phase = Phase::Stopped;
        new.blocked_from = None;
        assert!(message(judge_as(&old, &new, "alice", &approved())).contains("terminal"));
        assert!(admit(&old, "alice", Command::Note).is_err());
    }
}
