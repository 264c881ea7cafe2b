//! Where the time and the tokens went, computed from a board's journal alone.
//!
//! Each record starts an interval that lasts until the next record (the last one until `end`:
//! the last record's time on a terminal board, else now). In that interval the board is in the
//! record's `to` phase and the turn is held by the record's `turn` agents. From that:
//!
//! * wall time per phase, and per gate (a gate spans the phases of one artifact, from working on
//!   it to its verdict: [`gate_of`]);
//! * rounds per gate: a round starts with a write that raises the gate's counter (a submission)
//!   and ends with the first write that leaves the gate's review phases, its outcome being the
//!   phase it went to (`PLAN_APPROVED`, `PLAN_CHANGES_REQUESTED`, `BLOCKED`, …), or
//!   `resubmitted`, or `open`;
//! * per agent: the time it held the turn, and its handoffs: from the write that made it its
//!   turn (it was not its turn before) to its next write;
//! * tokens and cost per phase and gate, counted in the phase the work was done in (the phase
//!   before the write, or `report-usage --phase`).
//!
//! SLA breaches belong to the watchdog: [`BoardStats::sla_breaches`] is `None` until SLAs exist.

pub mod handoffs;
pub mod moments;
pub mod objections;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::board::frontmatter::{Phase, Target, Timestamp};
use crate::board::journal::{Record, cost_number};
pub use crate::law::independence::Independence;

/// One figure `pair stats` prints: the name it is printed under, where `--json` has it, and what
/// it measures. `stats --help`, docs/stats.md and the text output all read [`FIGURES`].
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    pub name: &'static str,
    pub json: &'static str,
    pub means: &'static str,
}

/// The figures, each named after what it measures.
pub mod figure {
    use super::Figure;

    pub const ELAPSED: Figure = Figure {
        name: "elapsed",
        json: "seconds",
        means: "From the board's first journal record to its last one on a terminal board, else \
                to now.",
    };
    pub const RECORDS: Figure = Figure {
        name: "records",
        json: "records",
        means: "Journal records: one per write, `report-usage` included.",
    };
    pub const TIME_IN_PHASE: Figure = Figure {
        name: "time in phase",
        json: "phases.PHASE.seconds",
        means: "Wall-clock time the board spent in the phase, all its visits together: each \
                record's interval (until the next record) counts in the phase the write left \
                the board in.",
    };
    pub const USAGE: Figure = Figure {
        name: "usage",
        json: "tokens, cost",
        means: "Tokens and cost the writes reported (`--tokens`, `--cost`, or the tokens a \
                writer's transcript gained since its previous write: \
                `--transcript`/`PAIR_TRANSCRIPT`), counted in the phase the work was done in: the phase before the write, or `report-usage --phase`. \
                Left out where no write reported any.",
    };
    pub const TIME_IN_GATE: Figure = Figure {
        name: "time in gate",
        json: "gates.GATE.seconds",
        means: "The time in phase of one artifact's phases together: writing it, submitted, in \
                review and the outcome (`PLANNING` through `PLAN_APPROVED` or \
                `PLAN_CHANGES_REQUESTED`).",
    };
    pub const ROUND: Figure = Figure {
        name: "round",
        json: "gates.GATE.rounds",
        means: "One review round, printed `#N OUTCOME DURATION`: from the submission that raised \
                the gate's counter to N to the first write that left the gate's review phases. \
                The outcome is the phase it went to, `resubmitted`, or `open`.",
    };
    pub const INDEPENDENCE: Figure = Figure {
        name: "reviews",
        json: "gates.GATE.independence",
        means: "Whether the gate's verdicts came from another session than the artifact each \
                judged (the session of the submission before it): `independent` when every \
                one did, `same session` (`same_session`) when one came from the author's, \
                `unknown` when a verdict or its submission named no session (`--session`, \
                `PAIR_SESSION`). Left out of a gate with no verdict.",
    };
    pub const DISSENT: Figure = Figure {
        name: "dissent",
        json: "gates.GATE.dissent",
        means: "The gate's dissent rounds (`pair dissent`: a fresh dissenter's answer after the \
                reviewers passed), printed `DISSENTER OUTCOME`: the phase the answer left the \
                board in (approved: none or advisory; changes requested: blocking; \
                AWAITING_DECISION: blocking at the last round). Left out of a gate without one.",
    };
    pub const WRITES: Figure = Figure {
        name: "writes",
        json: "agents.ID.writes",
        means: "Journal records the agent wrote.",
    };
    pub const TURN_TIME: Figure = Figure {
        name: "turn time",
        json: "agents.ID.turn_seconds",
        means: "Wall-clock time during which it was the agent's turn (the records' `turn` named \
                it). Reviewers that hold the turn together each count it in full.",
    };
    pub const RESPONSES: Figure = Figure {
        name: "responses",
        json: "agents.ID.handoffs",
        means: "How often the turn passed to the agent (a write by someone else made it the \
                agent's turn when it was not) and the agent then wrote.",
    };
    pub const RESPONSE_TIME: Figure = Figure {
        name: "response time",
        json: "agents.ID.handoff_seconds, max_handoff_seconds",
        means: "Printed as total / longest. For each response, from the write that handed the \
                agent the turn to the agent's next write: noticing, reading, the work itself and \
                the write. It is not the wake-up of `poll --wait`, which writes nothing: a \
                reviewer that wakes in 3 s and reviews for a minute responds in about a minute.",
    };
    pub const WAITED_ON_SINCE: Figure = Figure {
        name: "waited on since",
        json: "agents.ID.waiting_since",
        means: "A response still due: when the turn passed to the agent, which has not written \
                since.",
    };
    pub const ROLE_HANDOFFS: Figure = Figure {
        name: "role handoffs",
        json: "role_handoffs.ROLE.offered, acknowledged, withdrawn, pending",
        means: "Per role (`doer`, `reviewer`), the rotations with an explicit handoff: offers \
                (`pair handoff`), acknowledgements by the incoming agent (`pair acknowledge`), \
                offers taken back (`handoff --withdraw`) and the one still pending. Left out \
                where no role was handed over.",
    };
    pub const ACKNOWLEDGE_TIME: Figure = Figure {
        name: "to acknowledgement",
        json: "role_handoffs.ROLE.acknowledge_seconds, max_acknowledge_seconds",
        means: "Printed as total / longest. For each acknowledged handoff, from the write that \
                offered it to the incoming agent's acknowledgement: the time the role stayed \
                with the outgoing agent.",
    };
    pub const SLA_BREACH: Figure = Figure {
        name: "SLA breach",
        json: "sla_breaches",
        means: "A stretch of an SLA (from the write that entered its phases to the write that \
                left them, or now) longer than the limit the board carries now; printed with \
                the phase, start, length, excess and whose turn it was. Only on boards that set \
                SLAs.",
    };
}

/// Every figure, in the order `pair stats` prints them.
pub const FIGURES: &[Figure] = &[
    figure::ELAPSED,
    figure::RECORDS,
    figure::TIME_IN_PHASE,
    figure::USAGE,
    figure::TIME_IN_GATE,
    figure::ROUND,
    figure::INDEPENDENCE,
    figure::DISSENT,
    figure::WRITES,
    figure::TURN_TIME,
    figure::RESPONSES,
    figure::RESPONSE_TIME,
    figure::WAITED_ON_SINCE,
    figure::ROLE_HANDOFFS,
    figure::ACKNOWLEDGE_TIME,
    figure::SLA_BREACH,
];

/// The figures for `pair stats --help`.
pub fn help() -> String {
    let mut t = String::from(
        "Examples:\n  pair stats task.md\n  pair stats boards/*.md --json\n  pair stats task.md \
         --svg timeline.svg\n\nFigures (docs/stats.md):\n",
    );
    for f in FIGURES {
        t.push_str(&format!("  {} ({}): {}\n", f.name, f.json, f.means));
    }
    t
}

/// The figures as a Markdown table, for docs/stats.md (checked against it by a test).
pub fn markdown_table() -> String {
    let mut t = String::from("| figure | `--json` | what it measures |\n|---|---|---|\n");
    for f in FIGURES {
        let json: Vec<String> = f.json.split(", ").map(|k| format!("`{k}`")).collect();
        t.push_str(&format!(
            "| {} | {} | {} |\n",
            f.name,
            json.join(", "),
            f.means
        ));
    }
    t
}

/// The gate a phase belongs to: the artifact being written, submitted, reviewed or approved.
pub fn gate_of(p: Phase) -> Option<Target> {
    match p {
        Phase::Analyzing => Some(Target::Analysis),
        Phase::Planning => Some(Target::Plan),
        Phase::RedTesting => Some(Target::RedTest),
        Phase::Coding => Some(Target::Code),
        _ => p.requires_counter().map(|(t, _)| t),
    }
}

/// A duration to the millisecond, as the journal's times give it. In JSON it is seconds: a whole
/// number when whole, else with the milliseconds as decimals (`0.25`), so that two writes within
/// one second still count the time between them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Secs(pub i64);

impl Secs {
    /// Whole seconds.
    pub fn from_secs(s: i64) -> Secs {
        Secs(s.saturating_mul(1000))
    }
    /// The milliseconds.
    pub fn millis(self) -> i64 {
        self.0
    }
    /// The whole seconds in it (rounded down).
    pub fn whole(self) -> i64 {
        self.0.div_euclid(1000)
    }
}

impl std::ops::AddAssign for Secs {
    fn add_assign(&mut self, o: Secs) {
        self.0 = self.0.saturating_add(o.0);
    }
}

impl Serialize for Secs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 % 1000 == 0 {
            s.serialize_i64(self.0 / 1000)
        } else {
            s.serialize_f64(self.0 as f64 / 1000.0)
        }
    }
}

/// Tokens and cost summed over records (`None` where no record reported any).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub tokens: Option<u64>,
    pub cost_micros: Option<u64>,
}

impl Usage {
    fn add(&mut self, tokens: Option<u64>, cost: Option<u64>) {
        if let Some(t) = tokens {
            self.tokens = Some(self.tokens.unwrap_or(0).saturating_add(t));
        }
        if let Some(c) = cost {
            self.cost_micros = Some(self.cost_micros.unwrap_or(0).saturating_add(c));
        }
    }
    fn merge(&mut self, o: &Usage) {
        self.add(o.tokens, o.cost_micros);
    }
}

impl Serialize for Usage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("tokens", &self.tokens)?;
        m.serialize_entry("cost", &self.cost_micros.map(cost_number))?;
        m.end()
    }
}

/// The journal's command word of a `verdict UNABLE` write.
pub const UNABLE: &str = "unable";

/// Time and usage of one phase or gate.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Span {
    pub seconds: Secs,
    #[serde(flatten)]
    pub usage: Usage,
}

/// One review round of a gate.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// The gate's counter the round reviews.
    pub number: u32,
    pub started: Timestamp,
    pub ended: Option<Timestamp>,
    pub seconds: Secs,
    /// The phase the round ended in, `resubmitted`, or `open`.
    pub outcome: String,
    /// The reviewers that said they could not review this round (`verdict UNABLE`), in order;
    /// not verdicts: the round did not count them.
    pub unable: Vec<String>,
}

/// One gate: its time, usage and rounds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Gate {
    pub seconds: Secs,
    #[serde(flatten)]
    pub usage: Usage,
    pub rounds: Vec<Round>,
    /// Whether its verdicts came from another session than their artifacts' ([`figure::INDEPENDENCE`]):
    /// the least independent of them; `None` before its first verdict.
    pub independence: Option<Independence>,
    /// Its dissent rounds, in order ([`figure::DISSENT`]).
    pub dissent: Vec<DissentRound>,
}

/// One answer of a dissenter.
#[derive(Debug, Clone, Serialize)]
pub struct DissentRound {
    /// The dissenter.
    pub by: Option<String>,
    pub at: Timestamp,
    /// The phase the answer left the board in.
    pub outcome: Phase,
}

/// The journal's command word of a `pair dissent` write.
pub const DISSENT: &str = "dissent";

/// One agent's share.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AgentStats {
    pub writes: usize,
    /// Time during which it was this agent's turn.
    pub turn_seconds: Secs,
    /// Handoffs that ended with the agent's write.
    pub handoffs: usize,
    /// Their total latency (from the write that made it its turn to its next write).
    pub handoff_seconds: Secs,
    pub max_handoff_seconds: Secs,
    /// When a handoff still waits for the agent's write.
    pub waiting_since: Option<Timestamp>,
    /// Its `verdict UNABLE` writes: reviews it could not make (not verdicts).
    pub unable: usize,
    #[serde(flatten)]
    pub usage: Usage,
}

/// A stretch of an SLA that lasted longer than its limit.
#[derive(Debug, Clone, Serialize)]
pub struct SlaBreach {
    pub sla: crate::board::sla::SlaName,
    /// The phase the board was in when the limit passed.
    pub phase: Phase,
    /// The one agent whose turn it was then, when it was one agent's.
    pub agent: Option<String>,
    /// Whose turn it was then.
    pub turn: Vec<String>,
    /// When the stretch began (for a review round, its submission).
    pub started: Timestamp,
    /// How long the stretch lasted (until now for the current one), the limit, and the excess.
    pub seconds: i64,
    pub limit: u64,
    pub seconds_over: i64,
}

/// The breaches of a board's SLAs in its history: each stretch of an SLA
/// ([`crate::board::sla::stretches`]: for a review round, from its submission to the write that ended
/// it, through the claim), until the write that left it (or `now`, for the current stretch of a
/// board that is not terminal), measured against the limits the board carries now. The phase
/// and turn are those in force when the limit passed.
pub fn sla_breaches(
    records: &[Record],
    limits: &[crate::board::sla::Limit],
    phase: Phase,
    now: Timestamp,
) -> Vec<SlaBreach> {
    let mut fold = SlaFold::new(limits.to_vec());
    for r in records {
        fold.push(r);
    }
    fold.finish(phase, now)
}

/// [`sla_breaches`] computed as the records come, one at a time, holding only the stretch they
/// are in.
#[derive(Debug, Clone)]
pub struct SlaFold {
    limits: Vec<crate::board::sla::Limit>,
    /// The stretch the last record is in: its SLA, when it was entered, and the phase and turn
    /// in force when its limit passed (the last record of the stretch at or before then).
    current: Option<Stretch>,
    out: Vec<SlaBreach>,
}

#[derive(Debug, Clone)]
struct Stretch {
    name: crate::board::sla::SlaName,
    entered: Timestamp,
    passed: (Phase, Vec<String>),
}

impl SlaFold {
    pub fn new(limits: Vec<crate::board::sla::Limit>) -> SlaFold {
        SlaFold {
            limits,
            current: None,
            out: Vec::new(),
        }
    }

    /// The next record of the journal.
    pub fn push(&mut self, r: &Record) {
        let name = crate::board::sla::name_of(r.to);
        let raises = r.counters.iter().any(|c| c.to > c.from);
        // A stretch runs on through records of its SLA that raise no counter.
        if let (Some(s), Some(n)) = (&mut self.current, name)
            && s.name == n
            && !raises
        {
            if let Some(l) = self.limits.iter().find(|l| l.name == n)
                && r.at.0 <= s.entered.0 + chrono::Duration::seconds(l.seconds as i64)
            {
                s.passed = (r.to, r.turn.clone());
            }
            return;
        }
        if let Some(s) = self.current.take() {
            self.close(s, r.at);
        }
        self.current = name.map(|name| Stretch {
            name,
            entered: r.at,
            passed: (r.to, r.turn.clone()),
        });
    }

    fn close(&mut self, s: Stretch, end: Timestamp) {
        let Some(l) = self.limits.iter().find(|l| l.name == s.name) else {
            return;
        };
        let held = secs(s.entered, end);
        if held <= Secs::from_secs(l.seconds as i64) {
            return;
        }
        let held = held.whole();
        let (phase, turn) = s.passed;
        self.out.push(SlaBreach {
            sla: l.name,
            phase,
            agent: match turn.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            },
            turn,
            started: s.entered,
            seconds: held,
            limit: l.seconds,
            seconds_over: held - l.seconds as i64,
        });
    }

    /// The breaches; the current stretch of a board that is not terminal runs until `now`.
    pub fn finish(mut self, phase: Phase, now: Timestamp) -> Vec<SlaBreach> {
        if let Some(s) = self.current.take()
            && !phase.is_terminal()
        {
            let end = now.max(s.entered);
            self.close(s, end);
        }
        self.out
    }
}

/// Breaches of one SLA across boards.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SlaTotal {
    pub breaches: usize,
    pub seconds_over: i64,
}

/// The figures of one board.
#[derive(Debug, Clone, Serialize)]
pub struct BoardStats {
    pub path: String,
    pub phase: Phase,
    pub records: usize,
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    pub seconds: Secs,
    pub phases: BTreeMap<Phase, Span>,
    pub gates: BTreeMap<Target, Gate>,
    pub agents: BTreeMap<String, AgentStats>,
    pub usage: Usage,
    /// Its handoffs of roles, per role ([`handoffs::HandoffFold`]).
    pub role_handoffs: handoffs::Handoffs,
    /// The breaches of the board's SLAs ([`sla_breaches`]); `None` when the board sets no SLA
    /// (never a made-up zero).
    pub sla_breaches: Option<Vec<SlaBreach>>,
}

/// The time from `a` to `b`, to the millisecond (none when `b` is earlier).
fn secs(a: Timestamp, b: Timestamp) -> Secs {
    Secs(a.millis_until(b).max(0))
}

/// Compute a board's figures from its records; `now` ends the last interval of a board that is
/// not terminal.
pub fn board(path: &str, phase: Phase, records: &[Record], now: Timestamp) -> BoardStats {
    let mut fold = Fold::new(path, phase, now);
    for r in records {
        fold.push(r.clone());
    }
    fold.finish()
}

/// [`board`] computed as the records come, one at a time: each record's interval ends at the
/// next one's time, so the fold holds one record back, and nothing else grows with the journal
/// but the rounds.
#[derive(Debug, Clone)]
pub struct Fold {
    s: BoardStats,
    now: Timestamp,
    /// The record whose interval is still open.
    held: Option<Record>,
    /// Open handoffs: agent → when it became its turn.
    pending: BTreeMap<String, Timestamp>,
    /// Open rounds: gate → index in its rounds.
    open: BTreeMap<Target, usize>,
    /// The session that wrote each gate's current artifact (`None` inside: it named none).
    authors: BTreeMap<Target, Option<String>>,
    prev_turn: Vec<String>,
}

impl Fold {
    pub fn new(path: &str, phase: Phase, now: Timestamp) -> Fold {
        Fold {
            s: BoardStats {
                path: path.to_string(),
                phase,
                records: 0,
                start: None,
                end: None,
                seconds: Secs::default(),
                phases: BTreeMap::new(),
                gates: BTreeMap::new(),
                agents: BTreeMap::new(),
                usage: Usage::default(),
                role_handoffs: handoffs::Handoffs::new(),
                sla_breaches: None,
            },
            now,
            held: None,
            pending: BTreeMap::new(),
            open: BTreeMap::new(),
            authors: BTreeMap::new(),
            prev_turn: Vec::new(),
        }
    }

    /// The next record of the journal.
    pub fn push(&mut self, r: Record) {
        self.s.records += 1;
        self.s.start.get_or_insert(r.at);
        if let Some(prev) = self.held.take() {
            self.interval(&prev, r.at);
        }
        self.held = Some(r);
    }

    /// The figures; the last record's interval ends at its own time on a terminal board, else
    /// now.
    pub fn finish(mut self) -> BoardStats {
        let Some(last) = self.held.take() else {
            return self.s;
        };
        let end = if self.s.phase.is_terminal() {
            last.at
        } else {
            self.now.max(last.at)
        };
        self.s.end = Some(end);
        self.s.seconds = self
            .s
            .start
            .map_or(Secs::default(), |start| secs(start, end));
        self.interval(&last, end);
        let mut s = self.s;
        for (t, k) in self.open {
            if let Some(gate) = s.gates.get_mut(&t) {
                let round = &mut gate.rounds[k];
                round.seconds = secs(round.started, end);
            }
        }
        for (who, since) in self.pending {
            s.agents.entry(who).or_default().waiting_since = Some(since);
        }
        s
    }

    /// A record and the interval it starts, until `until`.
    fn interval(&mut self, r: &Record, until: Timestamp) {
        let s = &mut self.s;
        let dt = secs(r.at, until);
        // Usage counts in the phase the work was done in.
        let work = r.work_phase();
        s.usage.add(r.tokens, r.cost_micros);
        s.phases
            .entry(work)
            .or_default()
            .usage
            .add(r.tokens, r.cost_micros);
        if let Some(g) = gate_of(work) {
            s.gates
                .entry(g)
                .or_default()
                .usage
                .add(r.tokens, r.cost_micros);
        }
        // Time counts in the phase the write left the board in.
        s.phases.entry(r.to).or_default().seconds += dt;
        if let Some(g) = gate_of(r.to) {
            s.gates.entry(g).or_default().seconds += dt;
        }
        // The writer: a write ends its pending handoff.
        if let Some(by) = &r.by {
            let a = s.agents.entry(by.clone()).or_default();
            a.writes += 1;
            a.usage.add(r.tokens, r.cost_micros);
            if let Some(since) = self.pending.remove(by) {
                let l = secs(since, r.at);
                a.handoffs += 1;
                a.handoff_seconds += l;
                a.max_handoff_seconds = a.max_handoff_seconds.max(l);
            }
        }
        // Rounds: a raised counter starts one; leaving the review phases ends it.
        for c in r.counters.iter().filter(|c| c.to > c.from) {
            let Some(t) = Target::ALL
                .iter()
                .copied()
                .find(|t| t.counter_field() == c.name)
            else {
                continue;
            };
            let gate = s.gates.entry(t).or_default();
            if let Some(k) = self.open.remove(&t) {
                close(&mut gate.rounds[k], r.at, "resubmitted".into());
            }
            gate.rounds.push(Round {
                number: c.to,
                started: r.at,
                ended: None,
                seconds: Secs::default(),
                outcome: "open".into(),
                unable: Vec::new(),
            });
            self.open.insert(t, gate.rounds.len() - 1);
            self.authors.insert(t, r.session.clone());
        }
        // A verdict, against the session that wrote what it judged.
        if let Some(t) = r
            .verdict
            .as_deref()
            .and_then(|v| v.split_once(':'))
            .and_then(|(t, _)| t.parse::<Target>().ok())
        {
            let author = self.authors.get(&t).cloned().flatten();
            let now = Independence::of(r.session.as_deref(), author.as_deref());
            let gate = s.gates.entry(t).or_default();
            gate.independence = Some(gate.independence.map_or(now, |was| was.max(now)));
        }
        // A dissenter's answer, on the gate whose review phase it was given in.
        if r.command == DISSENT
            && let Some(t) = r.from.and_then(|p| p.review_target())
        {
            s.gates.entry(t).or_default().dissent.push(DissentRound {
                by: r.by.clone(),
                at: r.at,
                outcome: r.to,
            });
        }
        // A reviewer that could not review: on the record of the open round, not a verdict.
        if r.command == UNABLE
            && let Some(by) = &r.by
        {
            s.agents.entry(by.clone()).or_default().unable += 1;
            if let Some(t) = r.to.review_target()
                && let (Some(k), Some(gate)) = (self.open.get(&t), s.gates.get_mut(&t))
            {
                gate.rounds[*k].unable.push(by.clone());
            }
        }
        let closing: Vec<Target> = self
            .open
            .keys()
            .copied()
            .filter(|t| r.to.review_target() != Some(*t))
            .collect();
        for t in closing {
            if let (Some(k), Some(gate)) = (self.open.remove(&t), s.gates.get_mut(&t)) {
                close(&mut gate.rounds[k], r.at, r.to.to_string());
            }
        }
        // The turn: time held, and handoffs to agents whose turn it just became.
        for who in &r.turn {
            s.agents.entry(who.clone()).or_default().turn_seconds += dt;
            if !self.prev_turn.contains(who) && r.by.as_ref() != Some(who) {
                self.pending.entry(who.clone()).or_insert(r.at);
            }
        }
        self.prev_turn.clone_from(&r.turn);
    }
}

fn close(round: &mut Round, at: Timestamp, outcome: String) {
    round.ended = Some(at);
    round.seconds = secs(round.started, at);
    round.outcome = outcome;
}

/// A gate's figures across boards.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GateTotal {
    pub seconds: Secs,
    #[serde(flatten)]
    pub usage: Usage,
    pub rounds: usize,
    /// How many rounds ended each way.
    pub outcomes: BTreeMap<String, usize>,
    /// How many of the boards' gates had each [`Gate::independence`].
    pub independence: BTreeMap<Independence, usize>,
    /// Dissent rounds across the boards.
    pub dissent: usize,
}

/// The figures of several boards together.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Total {
    pub boards: usize,
    pub records: usize,
    pub seconds: Secs,
    pub phases: BTreeMap<Phase, Span>,
    pub gates: BTreeMap<Target, GateTotal>,
    pub agents: BTreeMap<String, AgentStats>,
    pub usage: Usage,
    /// The boards' handoffs of roles, summed per role.
    pub role_handoffs: handoffs::Handoffs,
    /// SLA name → breaches across the boards that carry SLAs (`None`: none does).
    pub sla_breaches: Option<BTreeMap<crate::board::sla::SlaName, SlaTotal>>,
}

/// Sum boards' figures.
pub fn total(boards: &[BoardStats]) -> Total {
    let mut t = Total {
        boards: boards.len(),
        role_handoffs: handoffs::total(boards.iter().map(|b| &b.role_handoffs)),
        ..Total::default()
    };
    for b in boards {
        if let Some(list) = &b.sla_breaches {
            let totals = t.sla_breaches.get_or_insert_with(BTreeMap::new);
            for x in list {
                let e = totals.entry(x.sla).or_default();
                e.breaches += 1;
                e.seconds_over += x.seconds_over;
            }
        }
        t.records += b.records;
        t.seconds += b.seconds;
        t.usage.merge(&b.usage);
        for (p, span) in &b.phases {
            let e = t.phases.entry(*p).or_default();
            e.seconds += span.seconds;
            e.usage.merge(&span.usage);
        }
        for (g, gate) in &b.gates {
            let e = t.gates.entry(*g).or_default();
            e.seconds += gate.seconds;
            e.usage.merge(&gate.usage);
            e.rounds += gate.rounds.len();
            for r in &gate.rounds {
                *e.outcomes.entry(r.outcome.clone()).or_default() += 1;
            }
            e.dissent += gate.dissent.len();
            if let Some(i) = gate.independence {
                *e.independence.entry(i).or_default() += 1;
            }
        }
        for (id, a) in &b.agents {
            let e = t.agents.entry(id.clone()).or_default();
            e.writes += a.writes;
            e.turn_seconds += a.turn_seconds;
            e.handoffs += a.handoffs;
            e.handoff_seconds += a.handoff_seconds;
            e.max_handoff_seconds = e.max_handoff_seconds.max(a.max_handoff_seconds);
            e.waiting_since = match (e.waiting_since, a.waiting_since) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            e.usage.merge(&a.usage);
        }
    }
    t
}
