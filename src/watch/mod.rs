//! The watchdog's judgement, as a pure function of one board, its journal, the presence
//! records beside it, this host and the time: which agents are stalled, which required
//! reviewers never registered, which phase is past its SLA, and whose process is gone.
//! [`settle`] then applies the one-nudge-per-agent-per-phase rule against the watchdog's own
//! small state, kept beside the board (never in it).

pub mod presence;
pub mod side;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::board::frontmatter::{Frontmatter, Phase, Timestamp};
use crate::board::journal::Record;
use crate::board::sla::{self, SlaName};
use crate::watch::presence::Presence;

/// How long after its last write a turn holder whose process is gone may stay out of sight
/// before the watchdog says so (a command-line agent's `pair` process ends with each write).
pub const DEAD_GRACE_SECONDS: u64 = 120;

/// What was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An agent has held its turn longer than its SLA or the stall time.
    Stall,
    /// A required reviewer never registered, past the stall time since its gate opened.
    Unregistered,
    /// The phase is past its SLA.
    Breach,
    /// The turn holder's last write came from a process on this host that is gone, and it has
    /// not been seen since.
    Dead,
    /// A reviewer whose verdict the open round waits for said it could not review
    /// (`verdict UNABLE`): said at once; escalated after the stall time.
    Unable,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Stall => "stall",
            Kind::Unregistered => "unregistered",
            Kind::Breach => "breach",
            Kind::Dead => "dead",
            Kind::Unable => "unable",
        }
    }
    /// Which hook hears of it: `--on-breach` for a breach, `--on-stall` for the rest.
    pub fn is_breach(self) -> bool {
        self == Kind::Breach
    }
}

/// One finding on one board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    /// The agent it is about (`None` for a breach: the phase's, whoever holds the turn).
    pub agent: Option<String>,
    pub phase: Phase,
    /// When the clock started (the turn, the gate, the phase, the last write).
    pub since: Timestamp,
    pub seconds: i64,
    /// The limit passed, in seconds, and which SLA set it (`null`: the default stall time).
    pub limit: u64,
    pub sla: Option<SlaName>,
    /// Whose turn it is.
    pub turn: Vec<String>,
    pub reason: String,
}

/// Whole seconds from `a` to `b` (what a finding reports).
fn secs(a: Timestamp, b: Timestamp) -> i64 {
    (b.0 - a.0).num_seconds()
}

/// A limit in seconds, in milliseconds.
fn millis(limit: u64) -> i64 {
    i64::try_from(limit).map_or(i64::MAX, |s| s.saturating_mul(1000))
}

/// Whether more than `limit` seconds have passed from `since` to `now`, to the millisecond (as
/// the journal's times are): a limit is passed as soon as the time is over it.
fn over(since: Timestamp, now: Timestamp, limit: u64) -> bool {
    since.millis_until(now) > millis(limit)
}

fn dur(s: i64) -> String {
    sla::format_duration(s.max(0) as u64)
}

/// When `agent`'s turn began: the last write that made it its turn (a submission, which raises
/// a review counter, makes it anew), or its own last write while it held the turn; without a
/// journal, the phase's start.
fn turn_start(fm: &Frontmatter, records: &[Record], agent: &str) -> Timestamp {
    let mut since = None;
    let mut prev: &[String] = &[];
    for r in records {
        let holds = r.turn.iter().any(|t| t == agent);
        let submits = r.counters.iter().any(|c| c.to > c.from);
        if holds && (!prev.iter().any(|t| t == agent) || r.by.as_deref() == Some(agent) || submits)
        {
            since = Some(r.at);
        }
        if !holds {
            since = None;
        }
        prev = &r.turn;
    }
    since.unwrap_or(fm.phase_updated_at)
}

/// When the open round of the current review phase began: the write that raised its counter.
fn gate_opened(fm: &Frontmatter, records: &[Record]) -> Timestamp {
    let Some(t) = fm.phase.review_target() else {
        return fm.phase_updated_at;
    };
    let counter = fm.counter(t);
    records
        .iter()
        .rev()
        .find(|r| {
            r.counters
                .iter()
                .any(|c| c.name == t.counter_field() && c.to == counter)
        })
        .map_or(fm.phase_updated_at, |r| r.at)
}

/// Whether a process with this pid runs on this machine (`EPERM`: it runs, as someone else).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // Signal 0 only checks that the process exists.
    match crate::sys::kill(pid, 0) {
        Ok(()) => true,
        Err(e) => e.raw_os_error() == Some(libc::EPERM),
    }
}

fn away_until(fm: &Frontmatter, agent: &str, now: Timestamp) -> Option<Timestamp> {
    fm.agent(agent)
        .and_then(|a| a.away.as_ref())
        .map(|a| a.until)
        .filter(|u| *u >= now)
}

/// What the watchdog finds on a board now. `host` is this machine's name as the journal writes
/// it; `alive` says whether a pid runs here.
pub fn findings(
    fm: &Frontmatter,
    records: &[Record],
    presence: &[Presence],
    host: &str,
    now: Timestamp,
    alive: &dyn Fn(u32) -> bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if fm.phase.is_terminal() {
        return out;
    }
    let phase = fm.phase;
    let turn = crate::law::protocol::turn(fm);
    let seen = |agent: &str| {
        presence
            .iter()
            .find(|p| p.agent == agent)
            .and_then(|p| p.time().map(|t| (t, p)))
    };
    let (stall_limit, source) = sla::stall_limit(&fm.sla, phase);
    let stall_sla = match source {
        sla::Source::Phase(n) => Some(n),
        sla::Source::Stall => Some(SlaName::Stall),
        sla::Source::Default => None,
    };
    let finding = |kind, agent: Option<&str>, since, limit, sla, reason| Finding {
        kind,
        agent: agent.map(str::to_string),
        phase,
        since,
        seconds: secs(since, now),
        limit,
        sla,
        turn: turn.clone(),
        reason,
    };
    for agent in &turn {
        if fm.agent(agent).is_none() {
            continue;
        }
        if away_until(fm, agent, now).is_some() {
            continue;
        }
        let since = turn_start(fm, records, agent);
        if !over(since, now, stall_limit) {
            continue;
        }
        let held = secs(since, now);
        let life = match seen(agent) {
            Some((t, _)) if t >= since => {
                format!("; it is alive (polled at {t}) but has not acted")
            }
            _ => format!("; no sign of {agent} since"),
        };
        out.push(finding(
            Kind::Stall,
            Some(agent),
            since,
            stall_limit,
            stall_sla,
            format!(
                "it has been {agent}'s turn in {phase} since {since} ({}), longer than {} ({}){life}",
                dur(held),
                source.describe(),
                dur(stall_limit as i64)
            ),
        ));
    }
    if phase.review_target().is_some() {
        let (limit, src) = sla::stall_limit(
            &fm.sla
                .iter()
                .copied()
                .filter(|l| l.name == SlaName::Stall)
                .collect::<Vec<_>>(),
            phase,
        );
        let opened = gate_opened(fm, records);
        let open_for = secs(opened, now);
        for id in fm.required_now().iter().filter(|r| fm.agent(r).is_none()) {
            if !over(opened, now, limit) {
                continue;
            }
            out.push(finding(
                Kind::Unregistered,
                Some(id),
                opened,
                limit,
                (src == sla::Source::Stall).then_some(SlaName::Stall),
                format!(
                    "{id} is a required reviewer but never registered; the gate opened at \
                     {opened} ({} ago, longer than {}). It registers with `pair register \
                     --agent {id}`, or the user removes it with `pair unrequire`",
                    dur(open_for),
                    src.describe()
                ),
            ));
        }
    }
    if let Some(l) = sla::phase_limit(&fm.sla, phase) {
        let since = sla::clock_start(records, phase, fm.phase_updated_at);
        let held = secs(since, now);
        if over(since, now, l.seconds) {
            out.push(finding(
                Kind::Breach,
                None,
                since,
                l.seconds,
                Some(l.name),
                format!(
                    "{phase}: the {} SLA's clock started at {since} ({}), {} over its limit \
                     ({}); the board does not move by itself: extend the SLA (`pair extend`), \
                     or decide, block or stop",
                    l.name,
                    dur(held),
                    dur(held - l.seconds as i64),
                    dur(l.seconds as i64)
                ),
            ));
        }
    }
    if let Some(t) = phase.review_target() {
        let opened = gate_opened(fm, records);
        let pending = crate::law::protocol::round(fm, t).pending;
        for id in &pending {
            // Its last write in the open round: an UNABLE not followed by a verdict.
            let last = records
                .iter()
                .rev()
                .take_while(|r| r.at >= opened)
                .find(|r| r.by.as_deref() == Some(id.as_str()));
            if let Some(r) = last.filter(|r| r.command == crate::stats::UNABLE) {
                out.push(finding(
                    Kind::Unable,
                    Some(id),
                    r.at,
                    stall_limit,
                    stall_sla,
                    format!(
                        "{id} could not review {t} {} (UNABLE at {}; its reason is in the \
                         board's review entries): the round still waits for its verdict. \
                         Once the cause is fixed, {id} (or another reviewer the user names) \
                         gives it on the same revision; the doer resubmits nothing",
                        fm.counter(t),
                        r.at
                    ),
                ));
            }
        }
    }
    if let Some(last) = records.last()
        && let Some(by) = &last.by
        && turn.iter().any(|t| t == by)
        && last.host == host
        && away_until(fm, by, now).is_none()
        && over(last.at, now, DEAD_GRACE_SECONDS)
        && !alive(last.pid)
    {
        let live_since = seen(by).is_some_and(|(t, p)| {
            t >= last.at && (p.host != host || alive(p.pid) || alive(p.ppid))
        });
        if !live_since {
            out.push(finding(
                Kind::Dead,
                Some(by),
                last.at,
                DEAD_GRACE_SECONDS,
                None,
                format!(
                    "{by} holds the turn, but the process of its last write (pid {} on {host}, \
                     at {}) is gone and {by} has not been seen since",
                    last.pid, last.at
                ),
            ));
        }
    }
    out
}

/// The watchdog's memory of one board: how often each finding was reported in the current
/// phase, and when first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub schema: u32,
    /// `KIND AGENT LIMIT PHASE CLOCK_START` → what was reported (a new limit, after
    /// `pair extend`, is a new finding).
    pub nudges: BTreeMap<String, Nudge>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nudge {
    pub count: u32,
    pub at: String,
}

/// Which findings to report now, with their nudge count: the first time in a phase (1, a
/// nudge), once more after the same limit has passed again (2, the escalation), then not
/// again until the phase changes. A phase is told apart by its name and when its SLA clock
/// started ([`sla::clock_start`]), so a resubmission that keeps the phase is a new one.
/// Entries of other phases are dropped.
pub fn settle(
    state: &mut State,
    fm: &Frontmatter,
    records: &[Record],
    found: Vec<Finding>,
    now: Timestamp,
) -> Vec<(Finding, u32)> {
    let suffix = format!(
        " {} {}",
        fm.phase,
        sla::clock_start(records, fm.phase, fm.phase_updated_at)
    );
    state.nudges.retain(|k, _| k.ends_with(&suffix));
    state.schema = 1;
    let mut out = Vec::new();
    for f in found {
        // `KIND AGENT LIMIT PHASE CLOCK_START`
        let k = format!(
            "{} {} {}{suffix}",
            f.kind.as_str(),
            f.agent.as_deref().unwrap_or("-"),
            f.limit
        );
        match state.nudges.get_mut(&k) {
            None => {
                state.nudges.insert(
                    k,
                    Nudge {
                        count: 1,
                        at: now.to_string(),
                    },
                );
                out.push((f, 1));
            }
            Some(n) if n.count == 1 => {
                let first = Timestamp::parse(&n.at).unwrap_or(now);
                if first.millis_until(now) >= millis(f.limit) {
                    n.count = 2;
                    n.at = now.to_string();
                    out.push((f, 2));
                }
            }
            Some(_) => {}
        }
    }
    out
}
