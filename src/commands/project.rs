//! `pair ls PROJECT` (one line per board, for a person) and `pair next --agent ID PROJECT` (the
//! one step an agent should take next anywhere in the project).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;

use super::{Outcome, agent_arg};
use crate::board::frontmatter::{Frontmatter, Phase, Timestamp};
use crate::cli::project::{LsArgs, LsSort, LsState, NextArgs};
use crate::error::{Error, Result, exit};
use crate::law::depend::Dep;
use crate::law::protocol::{Next, NextActor};
use crate::project::{Member, Project};
use crate::render::report::SCHEMA;
use crate::store::Session;
use crate::text::{escape, shell_line};

/// How often `next --wait` asks a git remote for its refs' tips, by default.
pub const GIT_INTERVAL_S: f64 = 1.0;

/// How often `next --wait` re-reads a directory where no file notifications can be had.
const FILE_INTERVAL_S: f64 = 60.0;

/// One board as `ls` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub name: String,
    pub board: String,
    /// `null` when the board cannot be read (see `error`).
    pub phase: Option<Phase>,
    pub terminal: bool,
    /// Whose turn it is.
    pub turn: Vec<String>,
    /// Seconds since the phase was entered.
    pub in_phase_s: Option<i64>,
    /// The round (revision) of the phase's gate.
    pub round: Option<u32>,
    /// Open blocking objections.
    pub blocking: usize,
    /// Someone holds the turn longer than the stall limit.
    pub stalled: bool,
    /// Past the phase's own SLA.
    pub breached: bool,
    /// How many journal records the board holds: the position `poll --after` counts from.
    pub cursor: Option<u64>,
    pub agents: Vec<String>,
    pub error: Option<String>,
    /// The boards it waits for, each with its phase and standing.
    pub waits_for: Vec<Dep>,
    /// It waits: a board it waits for is not released, and it is not finished itself.
    pub waiting: bool,
}

fn row(m: &Member, now: Timestamp, deps: Vec<Dep>) -> Row {
    let waiting =
        m.fm.as_ref()
            .is_some_and(|fm| crate::law::depend::is_waiting(fm.phase, &deps));
    let mut r = row_of(m, now);
    if waiting && let Some(doer) = m.fm.as_ref().and_then(|fm| fm.doer()) {
        // The doer's work waits: it is not the doer's turn.
        r.turn.retain(|t| t != doer);
    }
    r.waits_for = deps;
    r.waiting = waiting;
    r
}

fn row_of(m: &Member, now: Timestamp) -> Row {
    let Some(fm) = &m.fm else {
        return Row {
            name: m.name.clone(),
            board: m.board.display().to_string(),
            phase: None,
            terminal: false,
            turn: vec![],
            in_phase_s: None,
            round: None,
            blocking: 0,
            stalled: false,
            breached: false,
            cursor: None,
            agents: vec![],
            error: m.error.clone(),
            waits_for: vec![],
            waiting: false,
        };
    };
    let ms = fm.phase_updated_at.millis_until(now).max(0);
    let secs = ms / 1000;
    let terminal = fm.phase.is_terminal();
    let (stall, _) = crate::board::sla::stall_limit(&fm.sla, fm.phase);
    let limit = crate::board::sla::phase_limit(&fm.sla, fm.phase);
    // Over a limit as soon as the time is, to the millisecond.
    let over = |limit: u64| ms as u64 > limit.saturating_mul(1000);
    Row {
        name: m.name.clone(),
        board: m.board.display().to_string(),
        phase: Some(fm.phase),
        terminal,
        turn: crate::law::protocol::turn(fm),
        in_phase_s: Some(secs),
        round: crate::stats::gate_of(fm.phase).map(|t| fm.counter(t)),
        blocking: fm
            .ledger
            .objections
            .iter()
            .filter(|o| {
                o.state.is_unsettled() && o.severity == crate::board::ledger::Severity::Blocking
            })
            .count(),
        stalled: !terminal && over(stall),
        breached: !terminal && limit.is_some_and(|l| over(l.seconds)),
        cursor: fm.journal.as_ref().map(|j| j.records),
        agents: fm.agents.iter().map(|(id, _)| id.clone()).collect(),
        error: None,
        waits_for: vec![],
        waiting: false,
    }
}

fn keep(r: &Row, a: &LsArgs) -> Result<bool> {
    if let Some(agent) = &a.agent
        && !r.agents.contains(agent)
        && !r.turn.contains(agent)
    {
        return Ok(false);
    }
    let Some(state) = &a.state else {
        return Ok(true);
    };
    if let Ok(s) = LsState::from_str(state, true) {
        return Ok(match s {
            LsState::Open => r.phase.is_some() && !r.terminal,
            LsState::Terminal => r.terminal,
            LsState::Stalled => r.stalled,
            LsState::Breached => r.breached,
            LsState::Invalid => r.error.is_some(),
            LsState::Waiting => r.waiting,
        });
    }
    match Phase::ALL
        .iter()
        .find(|p| p.as_str().eq_ignore_ascii_case(state))
    {
        Some(p) => Ok(r.phase == Some(*p)),
        None => Err(Error::Usage(format!(
            "--state {state:?} is neither a state (open, terminal, stalled, breached, invalid, \
             waiting) \
             nor a phase (such as REVIEWING_CODE); run `pair ls --help`"
        ))),
    }
}

use clap::ValueEnum;

fn phase_rank(p: Option<Phase>) -> usize {
    p.and_then(|p| Phase::ALL.iter().position(|q| *q == p))
        .unwrap_or(usize::MAX)
}

/// `pair ls PROJECT`.
pub fn ls(a: LsArgs, s: &Session) -> Result<Outcome> {
    if let Some(agent) = &a.agent {
        agent_arg("--agent", agent)?;
    }
    let project = Project::open(&a.project)?;
    let members = project.read(s)?;
    let now = Timestamp::now_ms();
    let deps = crate::project::dependencies(&members);
    let critical = critical_path(&members, &deps)?;
    let mut rows = Vec::new();
    for (m, d) in members.iter().zip(deps) {
        let r = row(m, now, d);
        if keep(&r, &a)? {
            rows.push(r);
        }
    }
    match a.sort {
        LsSort::Name => {}
        LsSort::Phase => rows.sort_by_key(|r| phase_rank(r.phase)),
        LsSort::Age => rows.sort_by_key(|r| std::cmp::Reverse(r.in_phase_s)),
        LsSort::Round => rows.sort_by_key(|r| std::cmp::Reverse(r.round)),
        LsSort::Turn => rows.sort_by(|x, y| x.turn.cmp(&y.turn)),
    }
    let mut text = render_rows(&rows);
    if !critical.is_empty() {
        text.push_str(&format!(
            "critical path: {} ({} boards, the first to finish first)\n",
            escape(&critical.join(" <- ")),
            critical.len()
        ));
    }
    Ok(Outcome {
        json: json!({
            "schema": SCHEMA,
            "project": project.name(),
            "boards": rows,
            "critical_path": critical,
        }),
        text,
        code: exit::OK,
        warnings: vec![],
        printed: false,
    })
}

/// The longest chain of unfinished boards each waiting for the one before, by name; a cycle
/// (a board edited by hand can close one) is refused, naming its boards
/// ([`crate::project::cycle`]).
fn critical_path(members: &[Member], deps: &[Vec<Dep>]) -> Result<Vec<String>> {
    if let Some((_, e)) = crate::project::cycle(members, deps) {
        return Err(e);
    }
    let edges = crate::project::edges(members, deps);
    let unfinished: BTreeSet<String> = members
        .iter()
        .filter(|m| {
            m.fm.as_ref()
                .is_none_or(|fm| !crate::law::depend::RELEASES.contains(&fm.phase))
        })
        .map(|m| m.name.clone())
        .collect();
    Ok(crate::law::depend::critical_path(&edges, &unfinished))
}

fn age(secs: Option<i64>) -> String {
    secs.map_or_else(
        || "-".to_string(),
        |s| crate::board::sla::format_duration(s.max(0) as u64),
    )
}

fn render_rows(rows: &[Row]) -> String {
    let mut table = vec![[
        "BOARD".to_string(),
        "PHASE".into(),
        "TURN".into(),
        "IN PHASE".into(),
        "ROUND".into(),
        "BLOCKING".into(),
        "FLAGS".into(),
    ]];
    for r in rows {
        let mut flags = Vec::new();
        if r.stalled {
            flags.push("stalled".to_string());
        }
        if r.breached {
            flags.push("breached".to_string());
        }
        if r.waiting {
            let on: Vec<&str> = r
                .waits_for
                .iter()
                .filter(|d| d.waits())
                .map(|d| d.board.as_str())
                .collect();
            flags.push(format!("waiting for {}", on.join(",")));
        }
        if let Some(e) = &r.error {
            flags.push(format!("invalid: {}", e.lines().next().unwrap_or("")));
        }
        table.push([
            escape(&r.name).into_owned(),
            r.phase.map_or("-".into(), |p| p.to_string()),
            if r.turn.is_empty() {
                "-".into()
            } else {
                escape(&r.turn.join(",")).into_owned()
            },
            age(r.in_phase_s),
            r.round.map_or("-".into(), |n| n.to_string()),
            r.blocking.to_string(),
            escape(&flags.join(" ")).into_owned(),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in &table {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    if rows.is_empty() {
        out.push_str("(no board)\n");
    }
    out
}

/// What kind of step a candidate is: within a rank, reviews come first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Review,
    Work,
}

/// Where a step stands in `next`'s order: what the agent already holds before anything new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    Claimed,
    Turn,
    Acknowledge,
    New,
}

/// One rank of [`RANKS`].
pub struct RankRule {
    pub rank: Rank,
    /// Its name, as `step.rank` (JSON) and docs/commands.md spell it.
    pub name: &'static str,
    /// What a step of this rank is, one sentence.
    pub says: &'static str,
}

/// `next`'s order of steps, first first: read by [`steps`], by `step.rank` and by the
/// documentation test that keeps docs/commands.md's table in step. Within a rank, reviews come
/// before work, then the step that became available first (a review: when its submission was
/// made, the pin's `submitted_at`; any other step: when its phase was entered), then by name.
pub const RANKS: &[RankRule] = &[
    RankRule {
        rank: Rank::Claimed,
        name: "claimed",
        says: "a pool review the agent claimed and has not given its verdict on",
    },
    RankRule {
        rank: Rank::Turn,
        name: "turn",
        says: "the agent's turn on a board it is registered on (its doer work, or a review it \
               is required in by name)",
    },
    RankRule {
        rank: Rank::Acknowledge,
        name: "acknowledge",
        says: "a role a handoff offers the agent, to acknowledge",
    },
    RankRule {
        rank: Rank::New,
        name: "new",
        says: "new work: a pool review to claim, or a board to register on",
    },
];

pub use crate::cli::project::MAX_HELD;

impl Rank {
    fn rule(self) -> &'static RankRule {
        RANKS
            .iter()
            .find(|r| r.rank == self)
            .expect("every rank is in RANKS")
    }

    /// Its place in [`RANKS`]: the lower, the sooner.
    pub fn order(self) -> usize {
        RANKS
            .iter()
            .position(|r| r.rank == self)
            .unwrap_or(usize::MAX)
    }

    pub fn name(self) -> &'static str {
        self.rule().name
    }
}

impl Serialize for Rank {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One step an agent may take on a board of the project.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub name: String,
    pub board: String,
    pub kind: Kind,
    /// Its rank in `next`'s order ([`RANKS`]).
    pub rank: Rank,
    /// The step takes a new pool claim (`--max-held` counts it).
    pub claims: bool,
    pub phase: Phase,
    /// When the phase was entered.
    pub since: String,
    /// When the step became available: for a review, when its submission was made (the pin's
    /// `submitted_at`, else when the phase was entered); for any other step, when the phase
    /// was entered.
    pub available_at: String,
    pub next: Next,
    #[serde(skip)]
    available_ts: Timestamp,
}

/// Whether a board is the agent's business: it is on it, named as a required reviewer, in its
/// reviewer pool, or offered a role by a handoff it has not acknowledged yet (its step there is
/// the acknowledgement). A project's `next` never signs an agent up for a board it is not on.
fn concerns(fm: &Frontmatter, agent: &str) -> bool {
    fm.agents.iter().any(|(id, _)| id == agent)
        || crate::law::handoff::offered_to(fm, agent).is_some()
        || fm.required_reviewers.iter().any(|r| r == agent)
        || fm
            .pool
            .as_ref()
            .is_some_and(|p| p.members.iter().any(|m| m == agent))
}

/// A board of the agent's that waits for others: its doer's step is held until they are
/// released.
#[derive(Debug, Clone, Serialize)]
pub struct Held {
    pub name: String,
    pub board: String,
    pub waits_for: Vec<Dep>,
}

/// A board the agent is done on: it handed its role over (acknowledged) and holds none there.
#[derive(Debug, Clone, Serialize)]
pub struct Done {
    pub name: String,
    pub board: String,
    /// The role it handed over, and to whom (who holds the place now).
    pub role: crate::board::frontmatter::Role,
    pub to: String,
}

/// What `next` found for an agent across a project.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The steps to take, the first first.
    pub steps: Vec<Step>,
    /// The agent's boards that wait for other boards.
    pub held: Vec<Held>,
    /// The boards the agent handed its role over on.
    pub done: Vec<Done>,
    /// New pool claims left out because the agent holds `max_held` unfinished ones.
    pub deferred: usize,
    /// Whether every board the agent has anything to do with is finished, or done for it
    /// (with at least one it handed over): nothing more will come for it here.
    pub finished: bool,
}

/// When a step became available: a review when its submission was made (the pin, when it
/// records it), anything else when its phase was entered.
fn available_at(fm: &Frontmatter, kind: Kind) -> Timestamp {
    let submitted = match kind {
        Kind::Review => fm
            .phase
            .review_target()
            .and_then(|t| fm.pin(t))
            .and_then(|p| p.submitted_at),
        Kind::Work => None,
    };
    submitted.unwrap_or(fm.phase_updated_at)
}

fn rank_of(fm: &Frontmatter, agent: &str, kind: Kind, claims: bool) -> Rank {
    if crate::law::handoff::offered_to(fm, agent).is_some() {
        Rank::Acknowledge
    } else if kind == Kind::Review
        && fm
            .phase
            .review_target()
            .is_some_and(|t| fm.pool_takers(t).iter().any(|a| a == agent))
    {
        Rank::Claimed
    } else if fm.agent(agent).is_some() && !claims {
        Rank::Turn
    } else {
        Rank::New
    }
}

fn done(m: &Member, fm: &Frontmatter, agent: &str) -> Option<Done> {
    let h = crate::board::handoff::handed_away(fm, agent)?;
    if crate::law::handoff::role_held(fm, agent).is_some() {
        return None;
    }
    Some(Done {
        name: m.name.clone(),
        board: m.board.display().to_string(),
        role: h.role,
        to: crate::board::handoff::holder(fm, agent),
    })
}

/// Whether the board's round has something for a pool member new to it: a review of the pool
/// not taken yet, or a dissent stage (which a fresh agent may answer).
fn review_to_take(fm: &Frontmatter) -> bool {
    fm.phase
        .review_target()
        .is_some_and(|t| fm.pool_unclaimed(t) > 0 || crate::law::dissent::stage_open(fm) == Some(t))
}

fn step(m: &Member, fm: &Frontmatter, agent: &str, deps: &[Dep]) -> (Option<Step>, Option<Held>) {
    if !concerns(fm, agent) {
        return (None, None);
    }
    let place = super::place_with(&m.board, fm, deps.to_vec());
    let next = crate::law::protocol::next(fm, agent, &place);
    let held = || {
        (crate::law::depend::is_waiting(fm.phase, deps) && fm.doer() == Some(agent)).then(|| Held {
            name: m.name.clone(),
            board: place.board.clone(),
            waits_for: deps.iter().filter(|d| d.waits()).cloned().collect(),
        })
    };
    if !next.handoff_to.iter().any(|h| h == agent) || next.command.is_none() {
        return (None, held());
    }
    let kind = match next.actor {
        NextActor::Reviewer => Kind::Review,
        // The doer's own step, also one it takes once the user agreed.
        NextActor::Doer | NextActor::User => Kind::Work,
        NextActor::None => return (None, held()),
    };
    let claims = kind == Kind::Review
        && crate::law::handoff::offered_to(fm, agent).is_none()
        && fm.in_pool(agent)
        && !fm.is_required_now(agent);
    if claims && fm.agent(agent).is_none() && !review_to_take(fm) {
        // A pool member new to the board registers to take a review there; with none to take,
        // registering would come before a review waiting elsewhere and only spend its time.
        return (None, held());
    }
    let available = available_at(fm, kind);
    (
        Some(Step {
            name: m.name.clone(),
            board: place.board.clone(),
            kind,
            rank: rank_of(fm, agent, kind, claims),
            claims,
            phase: fm.phase,
            since: fm.phase_updated_at.to_string(),
            available_at: available.to_string(),
            available_ts: available,
            next,
        }),
        None,
    )
}

/// Every step the agent may take in the project, the one to take first first: by rank
/// ([`RANKS`]), then reviews before work, then the one available first, then by name, the new
/// pool claims spread over the free members ([`spread`]); no new pool claim while the agent
/// holds `max_held` unfinished ones. Also the agent's boards held by what they wait for, and
/// those it handed its role over on.
pub fn steps(members: &[Member], agent: &str, max_held: usize) -> Found {
    let deps = crate::project::dependencies(members);
    let mut found = Found::default();
    // Whether some board of the agent's may still give it work.
    let mut open = false;
    for (m, d) in members.iter().zip(&deps) {
        let Some(fm) = &m.fm else { continue };
        if let Some(gone) = done(m, fm, agent) {
            found.done.push(gone);
            continue;
        }
        // A BLOCKED board goes on once unblocked; the other terminal phases are final.
        if concerns(fm, agent) && (!fm.phase.is_terminal() || fm.phase == Phase::Blocked) {
            open = true;
        }
        let (st, h) = step(m, fm, agent, d);
        found.steps.extend(st);
        found.held.extend(h);
    }
    found.steps.sort_by(|a, b| {
        a.rank
            .order()
            .cmp(&b.rank.order())
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| 0.cmp(&a.available_ts.millis_until(b.available_ts)))
            .then_with(|| a.name.cmp(&b.name))
    });
    let holding = found
        .steps
        .iter()
        .filter(|s| s.rank == Rank::Claimed)
        .count();
    if holding >= max_held {
        let before = found.steps.len();
        found.steps.retain(|s| !s.claims);
        found.deferred = before - found.steps.len();
    }
    spread(&mut found.steps, members, agent);
    found.finished = !open && !found.done.is_empty();
    found
}

/// Pool members free at once, each given the same oldest review, would all race for it, and the
/// pool would take one review at a time however many wait. So the free members (holding no
/// unfinished claim; the agent asking always counts), fewest reviews given in the project first,
/// then by id, are matched with the new claims, oldest first: the one at the agent's place
/// (round the list when members outnumber the claims) is put first among its new claims.
fn spread(steps: &mut Vec<Step>, members: &[Member], agent: &str) {
    let new: Vec<usize> = (0..steps.len()).filter(|i| steps[*i].claims).collect();
    if new.len() < 2 {
        return;
    }
    let offering: BTreeSet<&str> = new.iter().map(|i| steps[*i].name.as_str()).collect();
    let mut peers: BTreeSet<&str> = BTreeSet::from([agent]);
    let mut busy: BTreeSet<String> = BTreeSet::new();
    let mut given: std::collections::BTreeMap<&str, usize> = Default::default();
    for m in members {
        let Some(fm) = &m.fm else { continue };
        let Some(pool) = &fm.pool else { continue };
        if offering.contains(m.name.as_str()) {
            peers.extend(pool.members.iter().map(String::as_str));
        }
        for (id, a) in &fm.agents {
            let targets = crate::board::frontmatter::Target::ALL;
            *given.entry(id.as_str()).or_default() += targets
                .iter()
                .filter(|t| a.review(**t).verdict.is_some())
                .count();
        }
        if let Some(t) = fm.phase.review_target() {
            let counter = fm.counter(t);
            for id in fm.pool_takers(t) {
                if fm
                    .agent(&id)
                    .is_some_and(|a| a.review(t).reviewed != Some(counter))
                {
                    busy.insert(id);
                }
            }
        }
    }
    let mut free: Vec<&str> = peers
        .into_iter()
        .filter(|p| *p == agent || !busy.contains(*p))
        .collect();
    free.sort_by_key(|p| (given.get(p).copied().unwrap_or(0), *p));
    let place = free.iter().position(|p| *p == agent).unwrap_or(0);
    let pick = new[place % new.len()];
    let st = steps.remove(pick);
    steps.insert(new[0], st);
}

/// How a command names the project for a command it hands on: a git address as given, a
/// directory by its absolute path (the command may be run from elsewhere).
pub(super) fn project_word(project: &std::path::Path) -> String {
    if crate::store::location::is_git(project) {
        project.display().to_string()
    } else {
        std::path::absolute(project)
            .unwrap_or_else(|_| project.to_path_buf())
            .display()
            .to_string()
    }
}

fn wait_command(a: &NextArgs) -> Vec<String> {
    [
        "pair",
        "next",
        "--agent",
        &a.agent,
        &project_word(&a.project),
        "--wait",
        "--timeout",
        crate::law::protocol::WAIT_SECONDS,
    ]
    .iter()
    .map(|w| w.to_string())
    .collect()
}

fn next_outcome(
    a: &NextArgs,
    project: &Project,
    found: Found,
    boards: usize,
    waited: Option<Duration>,
) -> Outcome {
    outcome(&a.agent, project, found, boards, waited, wait_command(a))
}

/// What `next` (and a project's `poll`) answers: the agent's first step with its command, or,
/// with none, `wait` as the command to run; or, when every board of the agent's is finished or
/// handed over, that it is done (exit 11, no command).
pub(super) fn outcome(
    agent: &str,
    project: &Project,
    found: Found,
    boards: usize,
    waited: Option<Duration>,
    wait: Vec<String>,
) -> Outcome {
    let Found {
        steps,
        held,
        done,
        deferred,
        finished,
    } = found;
    let first = steps.first().cloned();
    let finished = first.is_none() && finished;
    let mut json = json!({
        "schema": SCHEMA,
        "project": project.name(),
        "agent": agent,
        "boards": boards,
        "found": first.is_some(),
        "waiting": steps.len(),
        "steps": steps,
        "held": held,
        "done": done,
        "deferred": deferred,
        "finished": finished,
    });
    let mut text = String::new();
    match &first {
        Some(st) => {
            json["step"] = serde_json::to_value(st).unwrap_or_default();
            json["next"] = serde_json::to_value(&st.next).unwrap_or_default();
            text.push_str(&format!(
                "board       {}\nphase       {}\nkind        {}\nrank        {}\naction      {}\n",
                escape(&st.name),
                st.phase,
                match st.kind {
                    Kind::Review => "review",
                    Kind::Work => "work",
                },
                st.rank.name(),
                escape(&st.next.action)
            ));
            if let Some(c) = &st.next.command {
                text.push_str(&format!("command     {}\n", escape(&shell_line(c))));
            }
            if steps.len() > 1 {
                text.push_str(&format!("also        {} more waiting\n", steps.len() - 1));
            }
        }
        None => {
            let held_text = if held.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} of yours wait{} for other boards: {})",
                    held.len(),
                    if held.len() == 1 { "s" } else { "" },
                    held.iter()
                        .map(|h| {
                            let on: Vec<&str> =
                                h.waits_for.iter().map(|d| d.board.as_str()).collect();
                            format!("{} for {}", h.name, on.join(", "))
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            };
            let (action, command) = if finished {
                (
                    format!(
                        "You are done in the project: you handed your role over on {} and \
                         every other board of yours is finished. Nothing here will be yours \
                         to do; stop.",
                        done.iter()
                            .map(|d| d.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    serde_json::Value::Null,
                )
            } else {
                let deferred_text = if deferred == 0 {
                    String::new()
                } else {
                    format!(
                        " ({deferred} pool review(s) left to others: you hold as many unfinished \
                         claims as --max-held allows)"
                    )
                };
                (
                    format!(
                        "Nothing for you on the {boards} board(s) of the project{held_text}\
                         {deferred_text}. Wait with `{}`.",
                        shell_line(&wait)
                    ),
                    json!(wait),
                )
            };
            json["step"] = serde_json::Value::Null;
            json["next"] = json!({
                "actor": "none",
                "handoff_to": [],
                "action": action,
                "command": command,
                "choices": null,
                "placeholders": {},
                "optional": null,
            });
            text.push_str(&format!("action      {}\n", escape(&action)));
        }
    }
    for h in &held {
        text.push_str(&format!(
            "held        {} waits for {}\n",
            escape(&h.name),
            escape(&crate::render::report::waits_text(&h.waits_for))
        ));
    }
    for d in &done {
        text.push_str(&format!(
            "done        {}: you handed the {} role over to {}\n",
            escape(&d.name),
            d.role,
            escape(&d.to)
        ));
    }
    if let Some(w) = waited {
        json["waited_ms"] = json!(w.as_millis() as u64);
        text.push_str(&format!("waited      {:.1} s\n", w.as_secs_f64()));
    }
    Outcome {
        json,
        text,
        code: if first.is_some() {
            exit::OK
        } else if finished {
            exit::TERMINAL
        } else {
            exit::NOT_YOUR_TURN
        },
        warnings: vec![],
        printed: false,
    }
}

/// `pair next --agent ID PROJECT [--wait]`.
pub fn next(a: NextArgs, s: &Session) -> Result<Outcome> {
    agent_arg("--agent", &a.agent)?;
    if a.max_held == 0 {
        return Err(Error::Usage(
            "--max-held 0 would offer no pool review at all; give 1 or more (run `pair next \
             --help`)"
                .into(),
        ));
    }
    let project = Project::open(&a.project)?;
    if !a.wait {
        let members = project.read(s)?;
        let found = steps(&members, &a.agent, a.max_held);
        return Ok(next_outcome(&a, &project, found, members.len(), None));
    }
    let count = |m: &[Member]| m.len();
    wait_across(
        &project,
        a.timeout,
        a.interval,
        "work",
        s,
        |members, waited, last| {
            let found = steps(&members, &a.agent, a.max_held);
            // Done in the project: nothing will come, so the wait ends now.
            Ok((!found.steps.is_empty() || found.finished || last)
                .then(|| next_outcome(&a, &project, found, count(&members), waited)))
        },
    )
}

/// Read the project until `settle` answers, waiting across all its boards at once between
/// reads (file notifications under a directory, one `git ls-remote` per `interval` seconds for
/// a remote). `settle` is given the boards read, the time waited so far and whether this read is the last (the time is up or the wait was interrupted), and
/// answers what to print, or `None` to wait on; `what` says what is waited for.
pub(super) fn wait_across(
    project: &Project,
    timeout: f64,
    interval: Option<f64>,
    what: &str,
    s: &Session,
    mut settle: impl FnMut(Vec<Member>, Option<Duration>, bool) -> Result<Option<Outcome>>,
) -> Result<Outcome> {
    let timeout = super::timeout(timeout)?;
    let interval = interval.unwrap_or(if project.is_remote() {
        GIT_INTERVAL_S
    } else {
        FILE_INTERVAL_S
    });
    let interval = super::seconds_flag("--interval", interval)?.max(Duration::from_millis(10));
    let start = Instant::now();
    // The wait ends with the command, whose clock started before this; each ask of a remote
    // gets what is left of it, at most the limit of one exchange.
    let deadline = s.deadline().unwrap_or(start + timeout);
    // Watch first, then read: a change between the two cannot be missed.
    let mut waiter = project.waiter(interval);
    if let Some(i) = s.interrupt() {
        waiter.interrupted_by(i);
    }
    loop {
        let members = project.read(s)?;
        let mut now = Instant::now();
        // A remote is asked again only with time left to hear its answer: past that, the
        // answer is this read's, at the deadline.
        let ask_by = if project.is_remote() {
            crate::store::clock::ask_by(deadline)
        } else {
            deadline
        };
        let closing = now < deadline && now >= ask_by && !s.interrupt().is_some_and(|i| i.fired());
        if closing {
            waiter.sleep(deadline - now);
            now = Instant::now();
        }
        let last = closing || now >= deadline || s.interrupt().is_some_and(|i| i.fired());
        if let Some(done) = settle(members, Some(start.elapsed()), last)? {
            return Ok(done);
        }
        if let Some(i) = s.interrupt() {
            i.waiting(&format!("{what} in {}", project.name()));
        }
        waiter.wait(ask_by.saturating_duration_since(now), s);
    }
}
