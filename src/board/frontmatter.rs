//! The typed frontmatter: phases, statuses, verdicts, roles, counters, timestamps and agents as
//! Rust types, built from the YAML tree with every problem reported at once, and emitted back in
//! the canonical order of SPEC §2.1.
//!
//! Emission is deterministic and idempotent: emitting what was parsed from an emitted file gives
//! the same bytes. Keys this version does not know are kept (in their original order, after the
//! known ones) so a newer `pair` and an older one can share a blackboard.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;

use crate::board::field::Field;
use crate::board::yaml::{self, Node, Value};
use crate::error::FieldError;

/// Declares a closed set of YAML words as a Rust enum with `as_str`, `ALL`, `FromStr`, `Display`
/// and `Serialize` (as the word itself).
macro_rules! word_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }
        }
        impl FromStr for $name {
            type Err = ();
            fn from_str(s: &str) -> Result<Self, ()> {
                match s { $($word => Ok($name::$variant),)+ _ => Err(()) }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}
pub(crate) use word_enum;

word_enum!(
    /// The workflow phase (SPEC §3).
    Phase {
        Draft => "DRAFT",
        Analyzing => "ANALYZING",
        AnalysisSubmitted => "ANALYSIS_SUBMITTED",
        ReviewingAnalysis => "REVIEWING_ANALYSIS",
        AnalysisChangesRequested => "ANALYSIS_CHANGES_REQUESTED",
        AnalysisApproved => "ANALYSIS_APPROVED",
        Planning => "PLANNING",
        PlanningSubmitted => "PLANNING_SUBMITTED",
        ReviewingPlan => "REVIEWING_PLAN",
        PlanChangesRequested => "PLAN_CHANGES_REQUESTED",
        PlanApproved => "PLAN_APPROVED",
        RedTesting => "RED_TESTING",
        RedTestSubmitted => "RED_TEST_SUBMITTED",
        ReviewingRedTest => "REVIEWING_RED_TEST",
        RedTestChangesRequested => "RED_TEST_CHANGES_REQUESTED",
        RedTestApproved => "RED_TEST_APPROVED",
        Coding => "CODING",
        CodeSubmitted => "CODE_SUBMITTED",
        ReviewingCode => "REVIEWING_CODE",
        CodeChangesRequested => "CODE_CHANGES_REQUESTED",
        FollowupReview => "FOLLOWUP_REVIEW",
        ReadyToCommit => "READY_TO_COMMIT",
        Committed => "COMMITTED",
        Merged => "MERGED",
        CleanedUp => "CLEANED_UP",
        Blocked => "BLOCKED",
        Stopped => "STOPPED",
        AwaitingDecision => "AWAITING_DECISION",
    }
);

word_enum!(
    /// An agent's own status (SPEC §2.1).
    Status {
        Draft => "DRAFT",
        Idle => "IDLE",
        Waiting => "WAITING",
        Working => "WORKING",
        Reviewing => "REVIEWING",
        Approved => "APPROVED",
        ChangesRequested => "CHANGES_REQUESTED",
        Blocked => "BLOCKED",
        Stopped => "STOPPED",
    }
);

word_enum!(
    /// A reviewer's verdict on one revision of one target.
    Verdict {
        Approved => "APPROVED",
        ChangesRequested => "CHANGES_REQUESTED",
        Comment => "COMMENT",
    }
);

word_enum!(
    /// An agent's role.
    Role {
        Doer => "doer",
        Reviewer => "reviewer",
    }
);

word_enum!(
    /// What a review round is about. Each target has its own counter and verdict fields.
    Target {
        Analysis => "analysis",
        Plan => "plan",
        RedTest => "red_test",
        Code => "code",
    }
);

word_enum!(
    /// What a pin covers (see [`Pin`]).
    PinKind {
        Text => "text",
        Files => "files",
        Staged => "staged",
        Unstaged => "unstaged",
    }
);

impl PinKind {
    /// Whether a submission of `target` may pin this kind of artifact.
    pub fn fits(self, target: Target) -> bool {
        match target {
            Target::Analysis | Target::Plan => self == PinKind::Text,
            Target::RedTest => matches!(self, PinKind::Text | PinKind::Files),
            Target::Code => matches!(self, PinKind::Staged | PinKind::Unstaged),
        }
    }

    /// Whether the artifact lives outside the blackboard and can change after it was pinned (a
    /// submitted text is in the append-only body and cannot).
    pub fn can_drift(self) -> bool {
        self != PinKind::Text
    }

    /// The artifact in words.
    pub fn describe(self) -> &'static str {
        match self {
            PinKind::Text => "submitted text",
            PinKind::Files => "submitted text and test files",
            PinKind::Staged => "staged diff",
            PinKind::Unstaged => "unstaged diff",
        }
    }
}

/// A SHA-256 digest, written as 64 lower-case hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256(pub [u8; 32]);

impl Sha256 {
    /// The digest of some bytes.
    pub fn of(bytes: &[u8]) -> Sha256 {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(bytes);
        let mut out = [0u8; 32];
        for (o, b) in out.iter_mut().zip(digest.iter()) {
            *o = *b;
        }
        Sha256(out)
    }

    /// Exactly 64 lower-case hex digits.
    pub fn parse(s: &str) -> Option<Sha256> {
        let b = s.as_bytes();
        if b.len() != 64 || !b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Sha256(out))
    }

    /// The first 12 hex digits, for messages.
    pub fn short(&self) -> String {
        self.to_string()[..12].to_string()
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl Serialize for Sha256 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The artifact a submission pinned: the counter it was submitted as, what it is, and the
/// SHA-256 of its canonical bytes (see `crate::repo::pin`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pin {
    pub counter: u32,
    pub kind: PinKind,
    pub sha256: Sha256,
    /// For a red test submitted with `--files`: the files, as absolute paths, in order.
    pub files: Vec<String>,
    /// For a code or follow-up diff: the git tree id of the content under review (the index,
    /// plus the unstaged follow-up), which the commit must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// Where the artifact was published, when it was: a commit on the board's remote that anyone
    /// with the remote can read (see `crate::repo::artifact`).
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub published: Option<Publication>,
    /// When the submission was made (`submitted_at`): when its round's review became
    /// available. Absent on a pin written before it was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submitted_at: Option<Timestamp>,
}

/// A published artifact: the commit that holds exactly the content under review, the ref it
/// was pushed to, and for a red test the pinned files' paths inside that commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Publication {
    /// The commit (its parent is the base the diff is taken against).
    pub commit: String,
    /// The ref on the board's remote that holds it (`refs/pair-artifacts/...`).
    #[serde(rename = "ref")]
    pub refname: String,
    /// For a `files` pin: each file's path in the commit, in the order of `files`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// The prefix of every ref an artifact is published to: a namespace of its own, never a
/// board's ref.
pub const ARTIFACT_REF_PREFIX: &str = "refs/pair-artifacts/";

/// What a submission observed, before it is given its counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    pub kind: PinKind,
    pub sha256: Sha256,
    pub files: Vec<String>,
    pub tree: Option<String>,
    pub published: Option<Publication>,
}

impl Observed {
    pub fn pin(self, counter: u32, submitted_at: Timestamp) -> Pin {
        Pin {
            submitted_at: Some(submitted_at),
            counter,
            kind: self.kind,
            sha256: self.sha256,
            files: self.files,
            tree: self.tree,
            published: self.published,
        }
    }
}

/// The latest pin of each target (the `pins` field), with the keys of each pin this version
/// does not know (kept until the pin is replaced).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pins([Option<Pin>; 4], [crate::board::format::Unknown; 4]);

impl Pins {
    fn index(t: Target) -> usize {
        match t {
            Target::Analysis => 0,
            Target::Plan => 1,
            Target::RedTest => 2,
            Target::Code => 3,
        }
    }
    pub fn get(&self, t: Target) -> Option<&Pin> {
        self.0[Self::index(t)].as_ref()
    }
    pub fn set(&mut self, t: Target, pin: Option<Pin>) {
        self.0[Self::index(t)] = pin;
        self.1[Self::index(t)] = Default::default();
    }
    /// The keys of a target's pin this version does not know.
    pub fn unknown(&self, t: Target) -> &crate::board::format::Unknown {
        &self.1[Self::index(t)]
    }
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }
    /// The pins there are, in target order.
    pub fn iter(&self) -> impl Iterator<Item = (Target, &Pin)> {
        Target::ALL
            .iter()
            .filter_map(move |t| self.get(*t).map(|p| (*t, p)))
    }
}

impl Target {
    /// The frontmatter counter of this target.
    pub fn counter_field(self) -> &'static str {
        match self {
            Target::Analysis => "analysis_revision",
            Target::Plan => "plan_revision",
            Target::RedTest => "red_test_round",
            Target::Code => "code_review_round",
        }
    }
    /// The agent field recording which counter value a reviewer reviewed.
    pub fn reviewed_field(self) -> &'static str {
        match self {
            Target::Analysis => "reviewed_analysis_revision",
            Target::Plan => "reviewed_plan_revision",
            Target::RedTest => "reviewed_red_test_round",
            Target::Code => "reviewed_code_round",
        }
    }
    /// The agent field holding the verdict.
    pub fn verdict_field(self) -> &'static str {
        match self {
            Target::Analysis => "analysis_verdict",
            Target::Plan => "plan_verdict",
            Target::RedTest => "red_test_verdict",
            Target::Code => "code_verdict",
        }
    }
    /// The agent field holding the SHA-256 of the artifact the verdict judged.
    pub fn sha_field(self) -> &'static str {
        match self {
            Target::Analysis => "reviewed_analysis_sha256",
            Target::Plan => "reviewed_plan_sha256",
            Target::RedTest => "reviewed_red_test_sha256",
            Target::Code => "reviewed_code_sha256",
        }
    }
}

/// A UTC timestamp in the one format the protocol uses: `YYYY-MM-DDTHH:MM:SSZ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    pub const FORMAT: &'static str = "%Y-%m-%dT%H:%M:%SZ";

    /// The current time, truncated to whole seconds. Test and debug builds take it from
    /// `PAIR_NOW` (`2026-01-01T00:00:00Z`) when that is set, so tests control every timestamp;
    /// a release build ignores it.
    pub fn now() -> Timestamp {
        #[cfg(debug_assertions)]
        if let Some(t) = std::env::var("PAIR_NOW")
            .ok()
            .and_then(|s| Timestamp::parse(&s))
        {
            return t;
        }
        let now = Utc::now();
        Timestamp(DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now))
    }

    /// The current time to the millisecond, as the journal records a write: as
    /// [`Timestamp::now`] (`PAIR_NOW` included), with the milliseconds kept.
    pub fn now_ms() -> Timestamp {
        #[cfg(debug_assertions)]
        if let Some(t) = std::env::var("PAIR_NOW")
            .ok()
            .and_then(|s| Timestamp::parse(&s))
        {
            return t;
        }
        let now = Utc::now();
        Timestamp(DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now))
    }

    /// The time to the millisecond, always with three decimals (`2026-01-01T00:00:00.250Z`), as
    /// a journal record writes it (a finer fraction is cut).
    pub fn millis(&self) -> String {
        let ms = chrono::Timelike::nanosecond(&self.0) / 1_000_000;
        format!("{}.{ms:03}Z", self.0.format("%Y-%m-%dT%H:%M:%S"))
    }

    /// Milliseconds from `self` to `later` (negative when `later` is earlier).
    pub fn millis_until(&self, later: Timestamp) -> i64 {
        (later.0 - self.0).num_milliseconds()
    }

    pub fn parse(s: &str) -> Option<Timestamp> {
        // A later version may write fractional seconds; they are kept.
        let (s, nanos) = crate::board::format::split_fraction(s)?;
        // chrono accepts some unpadded fields; the protocol's format has a fixed width.
        if s.len() != 20 {
            return None;
        }
        Self::fixed(&s)
            .or_else(|| NaiveDateTime::parse_from_str(&s, Self::FORMAT).ok())
            .and_then(|n| chrono::Timelike::with_nanosecond(&n, nanos))
            .map(|n| Timestamp(n.and_utc()))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` with every field in digits, the fields handed to chrono to check:
    /// the form every write uses, read without chrono's format interpreter (a journal of a
    /// thousand records holds thousands of times). Anything else goes to the interpreter.
    fn fixed(s: &str) -> Option<NaiveDateTime> {
        let b = s.as_bytes();
        let num = |at: std::ops::Range<usize>| -> Option<u32> {
            b.get(at)?.iter().try_fold(0u32, |n, d| {
                d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
            })
        };
        if b.len() != 20
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
            || b[19] != b'Z'
        {
            return None;
        }
        let date = chrono::NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)?;
        let time = chrono::NaiveTime::from_hms_opt(num(11..13)?, num(14..16)?, num(17..19)?)?;
        Some(NaiveDateTime::new(date, time))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = chrono::Timelike::nanosecond(&self.0);
        if nanos == 0 {
            write!(f, "{}", self.0.format(Self::FORMAT))
        } else {
            let fraction = crate::board::format::fraction(nanos);
            write!(f, "{}{fraction}Z", self.0.format("%Y-%m-%dT%H:%M:%S"))
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Whether a string is a valid agent id: `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`.
pub fn is_agent_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// Whether a string is a valid work type: `[a-z][a-z0-9_-]*`.
pub fn is_work_type(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-'))
}

/// One reviewer's record for one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Review {
    pub reviewed: Option<u32>,
    pub verdict: Option<Verdict>,
    /// The pinned artifact the verdict judged (set with the verdict on a pinned round).
    pub sha256: Option<Sha256>,
}

/// One entry of `agents`.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    pub role: Role,
    pub status: Status,
    pub last_seen: Option<Timestamp>,
    pub analysis: Review,
    pub plan: Review,
    pub red_test: Review,
    pub code: Review,
    /// A planned absence the agent declared (`pair away`): the watchdog does not call it stalled
    /// before `until`.
    pub away: Option<Away>,
    /// The round of the reviewer pool this agent took (`pool_claim`), see
    /// [`crate::board::pool`].
    pub pool_claim: Option<crate::board::pool::Claim>,
    /// Keys this version does not know, in file order.
    pub extra: Vec<(String, Node)>,
}

/// A planned absence: until when, and why (`away_until`, `away_reason` in the agent's entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Away {
    pub until: Timestamp,
    pub reason: String,
}

impl Agent {
    pub fn new(role: Role, status: Status) -> Agent {
        Agent {
            role,
            status,
            last_seen: None,
            analysis: Review::default(),
            plan: Review::default(),
            red_test: Review::default(),
            code: Review::default(),
            away: None,
            pool_claim: None,
            extra: Vec::new(),
        }
    }
    pub fn review(&self, t: Target) -> &Review {
        match t {
            Target::Analysis => &self.analysis,
            Target::Plan => &self.plan,
            Target::RedTest => &self.red_test,
            Target::Code => &self.code,
        }
    }
    pub fn review_mut(&mut self, t: Target) -> &mut Review {
        match t {
            Target::Analysis => &mut self.analysis,
            Target::Plan => &mut self.plan,
            Target::RedTest => &mut self.red_test,
            Target::Code => &mut self.code,
        }
    }
}

/// The optional audit trail of the commit/merge/cleanup steps.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Audit {
    pub repo_root: Option<String>,
    pub base_branch: Option<String>,
    pub base_sha: Option<String>,
    pub topic_branch: Option<String>,
    pub commit_sha: Option<String>,
    pub merged_into: Option<String>,
    pub merged_at: Option<Timestamp>,
    pub worktree_removed: Option<bool>,
}

/// The frontmatter, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    /// The board's format version (`format`; `None`: not written, which is format 1), see
    /// [`crate::board::format`].
    pub format: Option<u32>,
    /// The journal as the last write left it (`journal`, on a board of format 2), see
    /// [`crate::board::journal::Seal`].
    pub journal: Option<crate::board::journal::Seal>,
    pub phase: Phase,
    pub phase_updated_at: Timestamp,
    pub yolo: bool,
    pub work_type: String,
    pub rca_required: bool,
    pub red_test_required: bool,
    pub required_reviewers: Vec<String>,
    /// The reviewer pool (`reviewer_pool`, `pool_reviews`), absent when the board names its
    /// reviewers, see [`crate::board::pool`].
    pub pool: Option<crate::board::pool::Pool>,
    /// The boards this board waits for (`after`, `init --after`), empty when it waits for
    /// none, see [`crate::board::depend`].
    pub after: Vec<String>,
    /// `independent_review: true`: a verdict from the session that wrote the artifact under
    /// review is refused ([`crate::law::independence`]); absent (false) unless `init
    /// --independent-review` set it.
    pub independent_review: bool,
    pub no_review: bool,
    pub analysis_revision: u32,
    pub plan_revision: u32,
    pub red_test_round: u32,
    pub code_review_round: u32,
    /// The artifact each target's latest submission pinned.
    pub pins: Pins,
    pub worktree: Option<String>,
    pub blocked_from: Option<Phase>,
    pub audit: Audit,
    /// The validation commands `advance COMMITTED` requires a pass of (`init --require-check`).
    pub required_checks: Vec<crate::board::checks::RequiredCheck>,
    /// The latest run of each named check (`pair check`).
    pub check_runs: Vec<crate::board::checks::CheckRun>,
    /// Agents in file order.
    pub agents: Vec<(String, Agent)>,
    /// The objection ledger (`ledger`), empty on a board that does not use it.
    pub ledger: crate::board::ledger::Ledger,
    /// The SLAs the user set (`sla`, see [`crate::board::sla`]), in table order.
    pub sla: Vec<crate::board::sla::Limit>,
    /// The dissent stage (`dissent_gates`, `dissent_rounds`), empty on a board without one, see
    /// [`crate::board::dissent`].
    pub dissent: crate::board::dissent::Dissent,
    /// Every handoff of a role (`handoffs`), oldest first, empty on a board whose roles never
    /// rotated, see [`crate::board::handoff`].
    pub handoffs: Vec<crate::board::handoff::Handoff>,
    /// Every second of an objection (`seconds`), oldest first, empty on a board where nobody
    /// seconded one, see [`crate::board::ledger::second`].
    pub seconds: Vec<crate::board::ledger::second::Second>,
    /// Top-level keys this version does not know, in file order.
    pub extra: Vec<(String, Node)>,
}

impl Frontmatter {
    pub fn counter(&self, t: Target) -> u32 {
        match t {
            Target::Analysis => self.analysis_revision,
            Target::Plan => self.plan_revision,
            Target::RedTest => self.red_test_round,
            Target::Code => self.code_review_round,
        }
    }
    pub fn counter_mut(&mut self, t: Target) -> &mut u32 {
        match t {
            Target::Analysis => &mut self.analysis_revision,
            Target::Plan => &mut self.plan_revision,
            Target::RedTest => &mut self.red_test_round,
            Target::Code => &mut self.code_review_round,
        }
    }
    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.agents.iter().find(|(k, _)| k == id).map(|(_, a)| a)
    }
    pub fn agent_mut(&mut self, id: &str) -> Option<&mut Agent> {
        self.agents
            .iter_mut()
            .find(|(k, _)| k == id)
            .map(|(_, a)| a)
    }
    /// The doer's id (the first agent with role doer; validation ensures there is exactly one).
    pub fn doer(&self) -> Option<&str> {
        self.agents
            .iter()
            .find(|(_, a)| a.role == Role::Doer)
            .map(|(k, _)| k.as_str())
    }
    /// Ids of all agents with role reviewer, in file order.
    pub fn reviewers(&self) -> Vec<&str> {
        self.agents
            .iter()
            .filter(|(_, a)| a.role == Role::Reviewer)
            .map(|(k, _)| k.as_str())
            .collect()
    }

    /// The pin of a target's current counter: the artifact under review (or last reviewed) is
    /// pinned when its latest submission recorded it. `None`: not pinned.
    pub fn pin(&self, t: Target) -> Option<&Pin> {
        self.pins.get(t).filter(|p| p.counter == self.counter(t))
    }

    /// The counter of a target plus one, or `None` when it is at its maximum.
    pub fn next_counter(&self, t: Target) -> Option<u32> {
        self.counter(t).checked_add(1)
    }

    /// The canonical YAML text (without delimiters), lines ending in `\n`, in the order of
    /// [`Field::ALL`].
    pub fn emit(&self) -> String {
        let mut out = String::with_capacity(1024);
        for field in Field::ALL {
            match field {
                Field::RequiredReviewers if !self.required_reviewers.is_empty() => {
                    out.push_str("required_reviewers:\n");
                    for r in &self.required_reviewers {
                        out.push_str("  - ");
                        out.push_str(&yaml::scalar(r));
                        out.push('\n');
                    }
                }
                Field::Pins if !self.pins.is_empty() => {
                    out.push_str("pins:\n");
                    for (t, pin) in self.pins.iter() {
                        emit_pin(&mut out, t, pin);
                        for (k, v) in &self.pins.unknown(t).0 {
                            yaml::emit_entry(&mut out, 4, k, v);
                        }
                    }
                }
                Field::RequiredChecks => {
                    crate::board::checks::emit_required(&mut out, &self.required_checks)
                }
                Field::CheckRuns => crate::board::checks::emit_runs(&mut out, &self.check_runs),
                Field::CheckNeeds => crate::board::checks::emit_needs(&mut out, &self.check_runs),
                Field::Agents if !self.agents.is_empty() => {
                    out.push_str("agents:\n");
                    for (id, agent) in &self.agents {
                        out.push_str("  ");
                        out.push_str(&yaml::scalar(id));
                        out.push_str(":\n");
                        emit_agent(&mut out, agent);
                    }
                }
                Field::Agents => out.push_str("agents: {}\n"),
                Field::Ledger => crate::board::ledger::emit(&mut out, &self.ledger),
                Field::Sla => crate::board::sla::emit(&mut out, &self.sla),
                Field::DissentRounds => crate::board::dissent::emit_rounds(&mut out, &self.dissent),
                Field::Handoffs => crate::board::handoff::emit(&mut out, &self.handoffs),
                Field::Seconds => crate::board::ledger::second::emit(&mut out, &self.seconds),
                f => {
                    if let Some(v) = f.value(self) {
                        out.push_str(f.name());
                        out.push_str(": ");
                        out.push_str(&v);
                        out.push('\n');
                    }
                }
            }
        }
        for (k, v) in &self.extra {
            match &v.raw {
                Some(raw) => out.push_str(raw),
                None => yaml::emit_entry(&mut out, 0, k, v),
            }
        }
        out
    }
}

fn emit_pin(out: &mut String, t: Target, pin: &Pin) {
    out.push_str("  ");
    out.push_str(t.as_str());
    out.push_str(":\n    counter: ");
    out.push_str(&pin.counter.to_string());
    out.push_str("\n    kind: ");
    out.push_str(pin.kind.as_str());
    out.push_str("\n    sha256: ");
    out.push_str(&yaml::quoted(&pin.sha256.to_string()));
    out.push('\n');
    if let Some(at) = &pin.submitted_at {
        out.push_str("    submitted_at: ");
        out.push_str(&yaml::quoted(&at.to_string()));
        out.push('\n');
    }
    if let Some(tree) = &pin.tree {
        out.push_str("    tree: ");
        out.push_str(&yaml::quoted(tree));
        out.push('\n');
    }
    if !pin.files.is_empty() {
        out.push_str("    files:\n");
        for f in &pin.files {
            out.push_str("      - ");
            out.push_str(&yaml::scalar(f));
            out.push('\n');
        }
    }
    if let Some(p) = &pin.published {
        out.push_str("    commit: ");
        out.push_str(&yaml::quoted(&p.commit));
        out.push_str("\n    ref: ");
        out.push_str(&yaml::scalar(&p.refname));
        out.push('\n');
        if !p.paths.is_empty() {
            out.push_str("    paths:\n");
            for f in &p.paths {
                out.push_str("      - ");
                out.push_str(&yaml::scalar(f));
                out.push('\n');
            }
        }
    }
}

/// The first key of an agent's entry, as every write spells it ([`emit_agent`]), whose value
/// differs between two versions of the entry (a key one of them lacks included): what a
/// refusal names. `None` when both spell the same entry.
pub fn changed_agent_key(old: &Agent, new: &Agent) -> Option<String> {
    // Each key of the entry with its text (a nested value's lines with it), in emission order.
    fn keyed(a: &Agent) -> Vec<(String, String)> {
        let mut text = String::new();
        emit_agent(&mut text, a);
        let mut out: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            let nested = line.starts_with("     ") || line.trim_start().starts_with('-');
            match out.last_mut() {
                Some((_, value)) if nested => {
                    value.push('\n');
                    value.push_str(line);
                }
                _ => {
                    let (k, v) = line
                        .trim_start()
                        .split_once(':')
                        .unwrap_or((line.trim(), ""));
                    out.push((k.to_string(), v.to_string()));
                }
            }
        }
        out
    }
    let (a, b) = (keyed(old), keyed(new));
    let value = |list: &[(String, String)], k: &str| {
        list.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    a.iter()
        .chain(&b)
        .map(|(k, _)| k)
        .find(|k| value(&a, k) != value(&b, k))
        .cloned()
}

fn emit_agent(out: &mut String, a: &Agent) {
    let mut line = |k: &str, v: String| {
        out.push_str("    ");
        out.push_str(k);
        out.push_str(": ");
        out.push_str(&v);
        out.push('\n');
    };
    line("role", a.role.to_string());
    line("status", a.status.to_string());
    line(
        "last_seen",
        a.last_seen
            .map_or("null".to_string(), |t| yaml::quoted(&t.to_string())),
    );
    for t in Target::ALL {
        let r = a.review(*t);
        line(
            t.reviewed_field(),
            r.reviewed.map_or("null".to_string(), |n| n.to_string()),
        );
        line(
            t.verdict_field(),
            r.verdict.map_or("null".to_string(), |v| v.to_string()),
        );
        if let Some(h) = r.sha256 {
            line(t.sha_field(), yaml::quoted(&h.to_string()));
        }
    }
    if let Some(away) = &a.away {
        line("away_until", yaml::quoted(&away.until.to_string()));
        line("away_reason", yaml::quoted(&away.reason));
    }
    if let Some(c) = a.pool_claim {
        line(crate::board::pool::CLAIM_FIELD, c.value());
    }
    for (k, v) in &a.extra {
        yaml::emit_entry(out, 4, k, v);
    }
}

/// The frontmatter as parsed, with the line of every known field (for later checks' errors)
/// and the warnings found on the way.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub fm: Frontmatter,
    pub lines: HashMap<String, u32>,
    pub warnings: Vec<FieldError>,
}

impl Parsed {
    pub fn line(&self, field: &str) -> Option<u32> {
        self.lines.get(field).copied()
    }
}

/// Whether a top-level key is one this version knows.
pub fn is_known_key(key: &str) -> bool {
    crate::board::field::is_known_key(key)
}

const AGENT_KEYS: &[&str] = &[
    "role",
    "status",
    "last_seen",
    "reviewed_analysis_revision",
    "analysis_verdict",
    "reviewed_plan_revision",
    "plan_verdict",
    "reviewed_red_test_round",
    "red_test_verdict",
    "reviewed_code_round",
    "code_verdict",
    "reviewed_analysis_sha256",
    "reviewed_plan_sha256",
    "reviewed_red_test_sha256",
    "reviewed_code_sha256",
    "away_until",
    "away_reason",
    crate::board::pool::CLAIM_FIELD,
];

/// Walks one mapping, converting fields and collecting errors with their paths and lines.
struct Fields<'a, 'e> {
    entries: &'a [(String, Node)],
    prefix: String,
    map_line: u32,
    errors: &'e mut Vec<FieldError>,
    lines: &'e mut HashMap<String, u32>,
}

type Conv<T> = fn(&Value) -> Result<T, String>;

impl<'a> Fields<'a, '_> {
    fn path(&self, key: &str) -> String {
        // Joined by hand: this runs for every field of every board read, where the formatting
        // machinery costs several times the copy.
        let mut path = String::with_capacity(self.prefix.len() + key.len());
        path.push_str(&self.prefix);
        path.push_str(key);
        path
    }

    /// The field's node, borrowed from the mapping (not from the walker: no copy of a large
    /// subtree such as the ledger is needed to read it while errors are collected).
    fn get(&mut self, key: &str) -> Option<&'a Node> {
        let entries = self.entries;
        let node = entries.iter().find(|(k, _)| k == key).map(|(_, n)| n)?;
        let path = self.path(key);
        self.lines.insert(path, node.line);
        Some(node)
    }

    /// A required field.
    fn req<T>(&mut self, key: &str, conv: Conv<T>) -> Option<T> {
        match self.get(key) {
            Some(node) => self.convert(key, node, conv),
            None => {
                let field = self.path(key);
                let line = (self.map_line > 0).then_some(self.map_line);
                self.errors.push(FieldError {
                    field,
                    line,
                    message: "required field is missing".to_string(),
                });
                None
            }
        }
    }

    /// An optional field with a default when absent.
    fn opt<T>(&mut self, key: &str, default: T, conv: Conv<T>) -> T {
        match self.get(key) {
            Some(node) => self.convert(key, node, conv).unwrap_or(default),
            None => default,
        }
    }

    fn convert<T>(&mut self, key: &str, node: &Node, conv: Conv<T>) -> Option<T> {
        match conv(&node.value) {
            Ok(v) => Some(v),
            Err(message) => {
                self.errors.push(FieldError {
                    field: self.path(key),
                    line: (node.line > 0).then_some(node.line),
                    message,
                });
                None
            }
        }
    }

    fn unknown_top(&self) -> Vec<(String, Node)> {
        self.entries
            .iter()
            .filter(|(k, _)| !is_known_key(k))
            .cloned()
            .collect()
    }

    fn unknown(&self, known: &[&str]) -> Vec<(String, Node)> {
        self.entries
            .iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .cloned()
            .collect()
    }
}

fn found(v: &Value) -> String {
    match v {
        Value::Seq(_) | Value::Map(_) | Value::Null => format!("found {}", v.describe()),
        _ => format!("found {} {}", v.kind(), v.describe()),
    }
}

/// The key of [`Frontmatter::independent_review`].
pub const INDEPENDENT_REVIEW: &str = "independent_review";

fn conv_bool(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(format!("expected true or false, {}", found(other))),
    }
}

fn conv_count(v: &Value) -> Result<u32, String> {
    match v {
        Value::Int(i) if *i >= 0 && *i <= i128::from(u32::MAX) => Ok(*i as u32),
        Value::Int(i) => Err(format!(
            "expected a whole number from 0 to {}, found {i}",
            u32::MAX
        )),
        other => Err(format!(
            "expected a whole number >= 0 (unquoted), {}",
            found(other)
        )),
    }
}

fn conv_opt_count(v: &Value) -> Result<Option<u32>, String> {
    match v {
        Value::Null => Ok(None),
        other => conv_count(other)
            .map(Some)
            .map_err(|e| format!("{e} (or null)")),
    }
}

fn word_list<T: Copy + fmt::Display>(all: &[T]) -> String {
    all.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn conv_word<T: FromStr + Copy + fmt::Display>(all: &[T], v: &Value) -> Result<T, String> {
    match v {
        Value::Str(s) => s
            .parse::<T>()
            .map_err(|_| format!("expected one of {}, found {s:?}", word_list(all))),
        other => Err(format!(
            "expected one of {}, {}",
            word_list(all),
            found(other)
        )),
    }
}

fn conv_phase(v: &Value) -> Result<Phase, String> {
    conv_word(Phase::ALL, v)
}
fn conv_opt_phase(v: &Value) -> Result<Option<Phase>, String> {
    match v {
        Value::Null => Ok(None),
        other => conv_phase(other).map(Some),
    }
}
fn conv_status(v: &Value) -> Result<Status, String> {
    conv_word(Status::ALL, v)
}
fn conv_role(v: &Value) -> Result<Role, String> {
    conv_word(Role::ALL, v)
}
fn conv_opt_verdict(v: &Value) -> Result<Option<Verdict>, String> {
    match v {
        Value::Null => Ok(None),
        other => conv_word(Verdict::ALL, other)
            .map(Some)
            .map_err(|e| format!("{e} (or null)")),
    }
}

fn conv_timestamp(v: &Value) -> Result<Timestamp, String> {
    match v {
        Value::Str(s) => Timestamp::parse(s).ok_or_else(|| {
            format!("expected a UTC timestamp like \"2026-01-31T12:00:00Z\", found {s:?}")
        }),
        other => Err(format!(
            "expected a quoted UTC timestamp like \"2026-01-31T12:00:00Z\", {}",
            found(other)
        )),
    }
}
fn conv_opt_timestamp(v: &Value) -> Result<Option<Timestamp>, String> {
    match v {
        Value::Null => Ok(None),
        other => conv_timestamp(other).map(Some),
    }
}

fn conv_opt_string(v: &Value) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Str(s) => Ok(Some(s.clone())),
        other => Err(format!("expected a string or null, {}", found(other))),
    }
}

fn conv_sha(v: &Value) -> Result<Sha256, String> {
    match v {
        Value::Str(s) => Sha256::parse(s).ok_or_else(|| {
            format!("expected a SHA-256: 64 lower-case hex digits (quoted), found {s:?}")
        }),
        other => Err(format!(
            "expected a SHA-256: 64 lower-case hex digits, quoted, {}",
            found(other)
        )),
    }
}

fn conv_opt_sha(v: &Value) -> Result<Option<Sha256>, String> {
    match v {
        Value::Null => Ok(None),
        other => conv_sha(other).map(Some),
    }
}

fn conv_pin_counter(v: &Value) -> Result<u32, String> {
    match conv_count(v)? {
        0 => {
            Err("expected the counter the pinned submission was given (1 or more), found 0".into())
        }
        n => Ok(n),
    }
}

/// A git tree id: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits, or null.
fn conv_opt_tree(v: &Value) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Str(s)
            if (s.len() == 40 || s.len() == 64)
                && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
        {
            Ok(Some(s.clone()))
        }
        other => Err(format!(
            "expected a git tree id (40 or 64 lower-case hex digits, quoted), {}",
            found(other)
        )),
    }
}

fn conv_pin_kind(v: &Value) -> Result<PinKind, String> {
    conv_word(PinKind::ALL, v)
}

fn conv_paths(v: &Value) -> Result<Vec<String>, String> {
    let Value::Seq(items) = v else {
        return Err(format!("expected a list of absolute paths, {}", found(v)));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match &item.value {
            Value::Str(s) if s.starts_with('/') && !s.chars().any(char::is_control) => {
                Ok(s.clone())
            }
            other => Err(format!(
                "item {} should be an absolute path, {}",
                i + 1,
                found(other)
            )),
        })
        .collect()
}

const PIN_KEYS: &[&str] = &[
    "counter",
    "kind",
    "sha256",
    "files",
    "tree",
    "commit",
    "ref",
    "paths",
    "submitted_at",
];

/// Whether `s` can name a file inside a git tree: relative, `/`-separated, no empty, `.` or
/// `..` part, no control character.
pub fn is_tree_path(s: &str) -> bool {
    !s.is_empty()
        && !s.chars().any(char::is_control)
        && s.split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// A path inside a published commit: relative, `/`-separated, no `.` or `..` part.
fn conv_rel_paths(v: &Value) -> Result<Vec<String>, String> {
    let Value::Seq(items) = v else {
        return Err(format!(
            "expected a list of paths inside the published commit, {}",
            found(v)
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match &item.value {
            Value::Str(s) if is_tree_path(s) => Ok(s.clone()),
            other => Err(format!(
                "item {} should be a relative path inside the commit (no leading `/`, no `.` or \
                 `..` part), {}",
                i + 1,
                found(other)
            )),
        })
        .collect()
}

/// The ref an artifact was published to: a full ref name under `refs/pair-artifacts/`.
fn conv_artifact_ref(v: &Value) -> Result<String, String> {
    match v {
        Value::Str(s)
            if s.starts_with(ARTIFACT_REF_PREFIX)
                && s.len() > ARTIFACT_REF_PREFIX.len()
                && !s.contains("..")
                && !s
                    .chars()
                    .any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c)) =>
        {
            Ok(s.clone())
        }
        other => Err(format!(
            "expected the ref the artifact was published to, under {ARTIFACT_REF_PREFIX}, {}",
            found(other)
        )),
    }
}

/// The `pins` mapping: target → `{counter, kind, sha256, files}`.
fn pins_from_node(
    node: &Node,
    errors: &mut Vec<FieldError>,
    lines: &mut HashMap<String, u32>,
    warnings: &mut Vec<FieldError>,
) -> Pins {
    let mut pins = Pins::default();
    let entries = match &node.value {
        Value::Null => return pins,
        Value::Map(entries) => entries,
        other => {
            errors.push(FieldError {
                field: "pins".into(),
                line: (node.line > 0).then_some(node.line),
                message: format!(
                    "expected a mapping of target (analysis, plan, red_test, code) to its pin, {}",
                    found(other)
                ),
            });
            return pins;
        }
    };
    for (key, pnode) in entries {
        let path = format!("pins.{key}");
        let line = (pnode.line > 0).then_some(pnode.line);
        lines.insert(path.clone(), pnode.line);
        let Ok(target) = key.parse::<Target>() else {
            errors.push(FieldError {
                field: path,
                line,
                message: "not a target; pins are kept for analysis, plan, red_test and code".into(),
            });
            continue;
        };
        let Value::Map(fields) = &pnode.value else {
            errors.push(FieldError {
                field: path,
                line,
                message: format!(
                    "expected a mapping with counter, kind and sha256, {}",
                    found(&pnode.value)
                ),
            });
            continue;
        };
        let before = errors.len();
        let mut f = Fields {
            entries: fields,
            prefix: format!("{path}."),
            map_line: pnode.line,
            errors,
            lines,
        };
        let counter = f.req("counter", conv_pin_counter);
        let kind = f.req("kind", conv_pin_kind);
        let sha256 = f.req("sha256", conv_sha);
        let files = f.opt("files", Vec::new(), conv_paths);
        let tree = f.opt("tree", None, conv_opt_tree);
        let commit = f.opt("commit", None, conv_opt_tree);
        let refname = f.opt("ref", None, |v| conv_artifact_ref(v).map(Some));
        let paths = f.opt("paths", Vec::new(), conv_rel_paths);
        let submitted_at = f.opt("submitted_at", None, |v| conv_timestamp(v).map(Some));
        // A later version may add fields to a pin: kept, with a warning.
        let unknown = f.unknown(PIN_KEYS);
        for (k, n) in &unknown {
            warnings.push(crate::board::format::unknown_key(format!("{path}.{k}"), n));
        }
        if errors.len() > before {
            continue;
        }
        if let (Some(counter), Some(kind), Some(sha256)) = (counter, kind, sha256) {
            pins.set(
                target,
                Some(Pin {
                    counter,
                    kind,
                    sha256,
                    files,
                    tree,
                    published: commit.map(|commit| Publication {
                        commit,
                        refname: refname.unwrap_or_default(),
                        paths,
                    }),
                    submitted_at,
                }),
            );
            pins.1[Pins::index(target)] = crate::board::format::Unknown(unknown);
        }
    }
    pins
}

/// The invariants of the pins and of the hashes recorded with verdicts (SPEC §2.2 extended):
/// a pin names a submitted counter and an artifact its target submits; `files` comes with a
/// red test's `files` pin and only with it; a verdict's hash comes with its verdict.
pub fn pin_invariants(p: &Parsed) -> Vec<FieldError> {
    let fm = &p.fm;
    let mut errors = Vec::new();
    let mut err = |field: String, message: String| {
        let line = p.line(&field).or_else(|| {
            field
                .rsplit_once('.')
                .and_then(|(parent, _)| p.line(parent))
        });
        errors.push(FieldError {
            field,
            line,
            message,
        });
    };
    for (t, pin) in fm.pins.iter() {
        let counter = fm.counter(t);
        if pin.counter > counter {
            err(
                format!("pins.{t}.counter"),
                format!(
                    "is {} but {} is only {counter}; a pin names a submission that was made",
                    pin.counter,
                    t.counter_field()
                ),
            );
        }
        if !pin.kind.fits(t) {
            err(
                format!("pins.{t}.kind"),
                format!(
                    "a {t} submission does not pin a {} ({})",
                    pin.kind,
                    pin.kind.describe()
                ),
            );
        }
        match (pin.kind == PinKind::Files, pin.files.is_empty()) {
            (true, true) => err(
                format!("pins.{t}.files"),
                "a `files` pin lists the files it covers".into(),
            ),
            (false, false) => err(
                format!("pins.{t}.files"),
                format!("only a `files` pin lists files, not a `{}` pin", pin.kind),
            ),
            _ => {}
        }
        if let Some(p) = &pin.published {
            if p.refname.is_empty() {
                err(
                    format!("pins.{t}.ref"),
                    "a published pin names the ref its commit was pushed to".into(),
                );
            }
            if pin.kind == PinKind::Files && p.paths.len() != pin.files.len() {
                err(
                    format!("pins.{t}.paths"),
                    format!(
                        "lists {} path(s) for {} file(s); a published `files` pin gives each \
                         file's path in the commit",
                        p.paths.len(),
                        pin.files.len()
                    ),
                );
            }
            if pin.kind != PinKind::Files && !p.paths.is_empty() {
                err(
                    format!("pins.{t}.paths"),
                    format!("only a `files` pin lists paths, not a `{}` pin", pin.kind),
                );
            }
        }
        if pin.tree.is_some() && !matches!(pin.kind, PinKind::Staged | PinKind::Unstaged) {
            err(
                format!("pins.{t}.tree"),
                format!("only a diff pin records a tree, not a `{}` pin", pin.kind),
            );
        }
    }
    for (id, agent) in &fm.agents {
        for t in Target::ALL {
            let r = agent.review(*t);
            if r.sha256.is_some() && r.verdict.is_none() {
                err(
                    format!("agents.{id}.{}", t.sha_field()),
                    format!(
                        "is set but {} is null; the hash is recorded with the verdict",
                        t.verdict_field()
                    ),
                );
            }
        }
    }
    errors
}

fn conv_opt_bool(v: &Value) -> Result<Option<bool>, String> {
    match v {
        Value::Null => Ok(None),
        other => conv_bool(other).map(Some),
    }
}

fn conv_work_type(v: &Value) -> Result<String, String> {
    match v {
        Value::Str(s) if is_work_type(s) => Ok(s.clone()),
        Value::Str(s) => Err(format!(
            "expected feature, debugging, refactor, docs, spike or another lower-case word \
             matching [a-z][a-z0-9_-]*, found {s:?}"
        )),
        other => Err(format!("expected a lower-case word, {}", found(other))),
    }
}

fn conv_worktree(v: &Value) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Str(s) if s.starts_with('/') => Ok(Some(s.clone())),
        Value::Str(s) => Err(format!(
            "expected an absolute path (starting with `/`) or null, found {s:?}"
        )),
        other => Err(format!(
            "expected an absolute path or null, {}",
            found(other)
        )),
    }
}

fn conv_opt_agent_ids(v: &Value) -> Result<Option<Vec<String>>, String> {
    conv_agent_ids(v).map(Some)
}

fn conv_opt_claim(v: &Value) -> Result<Option<crate::board::pool::Claim>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Str(s) => crate::board::pool::Claim::parse(s).map(Some),
        other => Err(format!(
            "expected `TARGET COUNTER` (a string) or null, {}",
            found(other)
        )),
    }
}

/// The pool from its two fields: both or neither, with 1 ≤ reviews ≤ members.
fn pool_from(
    members: Option<Vec<String>>,
    reviews: Option<u32>,
    lines: &HashMap<String, u32>,
    errors: &mut Vec<FieldError>,
) -> Option<crate::board::pool::Pool> {
    use crate::board::pool::{MEMBERS_FIELD, Pool, REVIEWS_FIELD};
    let error = |field: &str, message: String| FieldError {
        field: field.to_string(),
        line: lines.get(field).copied(),
        message,
    };
    match (members, reviews) {
        (None, None) => None,
        (Some(members), Some(reviews)) => {
            if members.is_empty() {
                errors.push(error(
                    MEMBERS_FIELD,
                    "a reviewer pool has at least one member".into(),
                ));
            } else if reviews == 0 || reviews as usize > members.len() {
                errors.push(error(
                    REVIEWS_FIELD,
                    format!(
                        "expected from 1 to {} (the pool's members), found {reviews}",
                        members.len()
                    ),
                ));
            }
            Some(Pool { members, reviews })
        }
        (Some(_), None) => {
            errors.push(error(
                MEMBERS_FIELD,
                format!("a reviewer pool needs `{REVIEWS_FIELD}` (how many reviews a round takes from it)"),
            ));
            None
        }
        (None, Some(_)) => {
            errors.push(error(
                REVIEWS_FIELD,
                format!("`{REVIEWS_FIELD}` needs `{MEMBERS_FIELD}` (the pool's members)"),
            ));
            None
        }
    }
}

fn conv_dissent_gates(v: &Value) -> Result<Vec<Target>, String> {
    let Value::Seq(items) = v else {
        return Err(format!("expected a list of gates, {}", found(v)));
    };
    let mut out: Vec<Target> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let t = match &item.value {
            Value::Str(s) => s.parse::<Target>().ok(),
            _ => None,
        };
        match t {
            Some(t) if !out.contains(&t) => out.push(t),
            Some(t) => return Err(format!("gate {t} is listed twice")),
            None => {
                return Err(format!(
                    "item {} should be a gate ({}), {}",
                    i + 1,
                    word_list(Target::ALL),
                    found(&item.value)
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn conv_dissent_rounds(v: &Value) -> Result<Vec<crate::board::dissent::Round>, String> {
    let Value::Seq(items) = v else {
        return Err(format!("expected a list of dissent verdicts, {}", found(v)));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match &item.value {
            Value::Str(s) => {
                crate::board::dissent::Round::parse(s).map_err(|e| format!("item {}: {e}", i + 1))
            }
            other => Err(format!(
                "item {} should be a string, {}",
                i + 1,
                found(other)
            )),
        })
        .collect()
}

/// `after`: the boards a board waits for, each named once.
fn conv_after(v: &Value) -> Result<Vec<String>, String> {
    let Value::Seq(items) = v else {
        return Err(format!("expected a list of boards, {}", found(v)));
    };
    let mut out: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match &item.value {
            Value::Str(s) => {
                crate::board::depend::check_name(s).map_err(|e| format!("item {}: {e}", i + 1))?;
                if out.contains(s) {
                    return Err(format!("board {s:?} is listed twice"));
                }
                out.push(s.clone());
            }
            other => {
                return Err(format!(
                    "item {} should be a board, {}",
                    i + 1,
                    found(other)
                ));
            }
        }
    }
    Ok(out)
}

fn conv_handoffs(v: &Value) -> Result<Vec<crate::board::handoff::Handoff>, String> {
    let Value::Seq(items) = v else {
        return Err(format!("expected a list of handoffs, {}", found(v)));
    };
    let out = items
        .iter()
        .enumerate()
        .map(|(i, item)| match &item.value {
            Value::Str(s) => {
                crate::board::handoff::Handoff::parse(s).map_err(|e| format!("item {}: {e}", i + 1))
            }
            other => Err(format!(
                "item {} should be a string, {}",
                i + 1,
                found(other)
            )),
        })
        .collect::<Result<Vec<_>, String>>()?;
    let last = out.len().saturating_sub(1);
    if let Some(i) = out
        .iter()
        .position(|h| h.state == crate::board::handoff::State::Pending)
        .filter(|i| *i != last)
    {
        return Err(format!(
            "item {} is pending but is not the last; at most one handoff is pending, the latest",
            i + 1
        ));
    }
    Ok(out)
}

fn conv_seconds(v: &Value) -> Result<Vec<crate::board::ledger::second::Second>, String> {
    let Value::Seq(items) = v else {
        return Err(format!("expected a list of seconds, {}", found(v)));
    };
    let mut out: Vec<crate::board::ledger::second::Second> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let s = match &item.value {
            Value::Str(s) => crate::board::ledger::second::Second::parse(s)
                .map_err(|e| format!("item {}: {e}", i + 1))?,
            other => {
                return Err(format!(
                    "item {} should be a string, {}",
                    i + 1,
                    found(other)
                ));
            }
        };
        if out.contains(&s) {
            return Err(format!(
                "item {}: {} seconds {} twice; a reviewer seconds an objection once",
                i + 1,
                s.by,
                s.id
            ));
        }
        out.push(s);
    }
    Ok(out)
}

fn conv_agent_ids(v: &Value) -> Result<Vec<String>, String> {
    let Value::Seq(items) = v else {
        return Err(format!("expected a list of agent ids, {}", found(v)));
    };
    let mut out: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match &item.value {
            Value::Str(s) if is_agent_id(s) => {
                if out.contains(s) {
                    return Err(format!("agent id {s:?} is listed twice"));
                }
                out.push(s.clone());
            }
            Value::Str(s) => {
                return Err(format!(
                    "item {} is not a valid agent id ([A-Za-z0-9][A-Za-z0-9._-]{{0,63}}), found {s:?}",
                    i + 1
                ));
            }
            other => {
                return Err(format!(
                    "item {} should be an agent id, {}",
                    i + 1,
                    found(other)
                ));
            }
        }
    }
    Ok(out)
}

/// Build the typed frontmatter from the YAML tree. On failure, every field error found.
pub fn from_node(node: &Node) -> Result<Parsed, Vec<FieldError>> {
    from_parts(node, None)
}

/// [`from_node`] of a tree whose `ledger` was read into its type beside it
/// ([`crate::board::yaml::parse_frontmatter`]): `ledger` is that one, the tree's `ledger: null`
/// only its place and line.
pub fn from_parts(
    node: &Node,
    ledger: Option<crate::board::ledger::Ledger>,
) -> Result<Parsed, Vec<FieldError>> {
    let Value::Map(entries) = &node.value else {
        return Err(vec![FieldError {
            field: "frontmatter".to_string(),
            line: (node.line > 0).then_some(node.line),
            message: format!(
                "the frontmatter must be a YAML mapping of fields (phase: …, agents: …), {}",
                found(&node.value)
            ),
        }]);
    };
    let mut errors = Vec::new();
    // The line of every field read: sized for a board of a few agents, grown for more.
    let mut lines = HashMap::with_capacity(128);
    let mut warnings = Vec::new();
    let mut f = Fields {
        entries,
        prefix: String::new(),
        map_line: node.line,
        errors: &mut errors,
        lines: &mut lines,
    };
    let format = f.opt(
        crate::board::format::FIELD,
        None,
        crate::board::format::conv,
    );
    let journal = f.opt(
        crate::board::journal::SEAL_FIELD,
        None,
        crate::board::journal::Seal::conv,
    );
    let phase = f.req("phase", conv_phase);
    let phase_updated_at = f.req("phase_updated_at", conv_timestamp);
    let yolo = f.opt("yolo", false, conv_bool);
    let work_type = f.req("work_type", conv_work_type);
    let rca_required = f.req("rca_required", conv_bool);
    let red_test_required = f.req("red_test_required", conv_bool);
    let required_reviewers = f.req("required_reviewers", conv_agent_ids);
    let pool_members = f.opt(crate::board::pool::MEMBERS_FIELD, None, conv_opt_agent_ids);
    let pool_reviews = f.opt(crate::board::pool::REVIEWS_FIELD, None, conv_opt_count);
    let after = f.opt(crate::board::depend::FIELD, Vec::new(), conv_after);
    let independent_review = f.opt(
        crate::board::frontmatter::INDEPENDENT_REVIEW,
        false,
        conv_bool,
    );
    let dissent = crate::board::dissent::Dissent {
        gates: f.opt(
            crate::board::dissent::GATES_FIELD,
            Vec::new(),
            conv_dissent_gates,
        ),
        every_cycle: f.opt(crate::board::dissent::EVERY_CYCLE_FIELD, false, conv_bool),
        rounds: f.opt(
            crate::board::dissent::ROUNDS_FIELD,
            Vec::new(),
            conv_dissent_rounds,
        ),
    };
    let handoffs = f.opt(crate::board::handoff::FIELD, Vec::new(), conv_handoffs);
    let seconds = f.opt(
        crate::board::ledger::second::FIELD,
        Vec::new(),
        conv_seconds,
    );
    let no_review = f.opt("no_review", false, conv_bool);
    let analysis_revision = f.req("analysis_revision", conv_count);
    let plan_revision = f.req("plan_revision", conv_count);
    let red_test_round = f.req("red_test_round", conv_count);
    let code_review_round = f.req("code_review_round", conv_count);
    let worktree = f.req("worktree", conv_worktree);
    let blocked_from = f.opt("blocked_from", None, conv_opt_phase);
    let audit = Audit {
        repo_root: f.opt("repo_root", None, conv_opt_string),
        base_branch: f.opt("base_branch", None, conv_opt_string),
        base_sha: f.opt("base_sha", None, conv_opt_string),
        topic_branch: f.opt("topic_branch", None, conv_opt_string),
        commit_sha: f.opt("commit_sha", None, conv_opt_string),
        merged_into: f.opt("merged_into", None, conv_opt_string),
        merged_at: f.opt("merged_at", None, conv_opt_timestamp),
        worktree_removed: f.opt("worktree_removed", None, conv_opt_bool),
    };
    let pins_node = f.get("pins");
    let required_checks_node = f.get("required_checks");
    let check_runs_node = f.get("check_runs");
    let check_needs_node = f.get(crate::board::checks::NEEDS_FIELD);
    let ledger_node = f.get("ledger");
    let sla_node = f.get("sla");
    let extra = f.unknown_top();
    let agents_node = f.get("agents");
    for (k, n) in extra.iter().filter(|(k, _)| k != crate::board::debate::KEY) {
        warnings.push(FieldError {
            field: k.clone(),
            line: (n.line > 0).then_some(n.line),
            message: "unknown field (kept as is; a newer version of pair may use it)".to_string(),
        });
    }
    let agents = agents_from(agents_node, &mut errors, &mut lines, &mut warnings);
    let pins = match pins_node {
        Some(n) => pins_from_node(n, &mut errors, &mut lines, &mut warnings),
        None => Pins::default(),
    };
    let required_checks = required_checks_node
        .map(|n| crate::board::checks::required_from_node(n, &mut errors))
        .unwrap_or_default();
    let mut check_runs = check_runs_node
        .map(|n| crate::board::checks::runs_from_node(n, &mut errors))
        .unwrap_or_default();
    if let Some(n) = check_needs_node {
        crate::board::checks::needs_from_node(n, &mut check_runs, &mut errors, &mut warnings);
    }
    let ledger = match (ledger, ledger_node) {
        (Some(typed), _) => typed,
        (None, Some(n)) => crate::board::ledger::from_node(n, &mut errors),
        (None, None) => crate::board::ledger::Ledger::default(),
    };
    let sla = sla_node
        .map(|n| crate::board::sla::from_node(n, &mut errors))
        .unwrap_or_default();
    let pool = pool_from(pool_members, pool_reviews, &lines, &mut errors);
    let format_line = lines.get(crate::board::format::FIELD).copied();
    crate::board::format::on_read(format, format_line, &mut warnings, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    // Every `req` succeeded, so these are all Some.
    let (
        Some(phase),
        Some(phase_updated_at),
        Some(work_type),
        Some(rca_required),
        Some(red_test_required),
        Some(required_reviewers),
        Some(analysis_revision),
        Some(plan_revision),
        Some(red_test_round),
        Some(code_review_round),
        Some(worktree),
    ) = (
        phase,
        phase_updated_at,
        work_type,
        rca_required,
        red_test_required,
        required_reviewers,
        analysis_revision,
        plan_revision,
        red_test_round,
        code_review_round,
        worktree,
    )
    else {
        return Err(vec![FieldError {
            field: "frontmatter".to_string(),
            line: None,
            message: "internal error: a required field was not converted".to_string(),
        }]);
    };
    Ok(Parsed {
        fm: Frontmatter {
            format,
            journal,
            phase,
            phase_updated_at,
            yolo,
            work_type,
            rca_required,
            red_test_required,
            required_reviewers,
            pool,
            after,
            independent_review,
            dissent,
            handoffs,
            seconds,
            no_review,
            analysis_revision,
            plan_revision,
            red_test_round,
            code_review_round,
            pins,
            worktree,
            blocked_from,
            audit,
            required_checks,
            check_runs,
            agents,
            ledger,
            sla,
            extra,
        },
        lines,
        warnings,
    })
}

/// The `agents` mapping: each entry converted, its errors and warnings collected.
fn agents_from(
    agents_node: Option<&Node>,
    errors: &mut Vec<FieldError>,
    lines: &mut HashMap<String, u32>,
    warnings: &mut Vec<FieldError>,
) -> Vec<(String, Agent)> {
    let mut agents = Vec::new();
    match agents_node {
        None => errors.push(FieldError {
            field: "agents".to_string(),
            line: None,
            message: "required field is missing".to_string(),
        }),
        Some(Node {
            value: Value::Map(list),
            ..
        }) => {
            for (id, anode) in list {
                let path = format!("agents.{id}");
                lines.insert(path.clone(), anode.line);
                if !is_agent_id(id) {
                    errors.push(FieldError {
                        field: path.clone(),
                        line: (anode.line > 0).then_some(anode.line.saturating_sub(1).max(1)),
                        message: format!(
                            "{id:?} is not a valid agent id: use 1-64 letters, digits, `.`, `_` \
                             or `-`, starting with a letter or digit"
                        ),
                    });
                }
                if let Some(agent) = agent_from_node(&path, anode, errors, lines, warnings) {
                    agents.push((id.clone(), agent));
                }
            }
        }
        Some(Node { value, line, .. }) => errors.push(FieldError {
            field: "agents".to_string(),
            line: (*line > 0).then_some(*line),
            message: format!("expected a mapping of agent id to agent, {}", found(value)),
        }),
    }
    agents
}

fn agent_from_node(
    path: &str,
    node: &Node,
    errors: &mut Vec<FieldError>,
    lines: &mut HashMap<String, u32>,
    warnings: &mut Vec<FieldError>,
) -> Option<Agent> {
    let Value::Map(entries) = &node.value else {
        errors.push(FieldError {
            field: path.to_string(),
            line: (node.line > 0).then_some(node.line),
            message: format!(
                "expected a mapping with role, status and verdict fields, {}",
                found(&node.value)
            ),
        });
        return None;
    };
    let before = errors.len();
    let mut f = Fields {
        entries,
        prefix: format!("{path}."),
        map_line: node.line,
        errors,
        lines,
    };
    let role = f.req("role", conv_role);
    let status = f.req("status", conv_status);
    let last_seen = f.opt("last_seen", None, conv_opt_timestamp);
    let mut reviews = [Review::default(); 4];
    for (i, t) in Target::ALL.iter().enumerate() {
        reviews[i] = Review {
            reviewed: f.opt(t.reviewed_field(), None, conv_opt_count),
            verdict: f.opt(t.verdict_field(), None, conv_opt_verdict),
            sha256: f.opt(t.sha_field(), None, conv_opt_sha),
        };
    }
    let away_until = f.opt("away_until", None, conv_opt_timestamp);
    let away_reason = f.opt("away_reason", None, conv_opt_string);
    let pool_claim = f.opt(crate::board::pool::CLAIM_FIELD, None, conv_opt_claim);
    let extra = f.unknown(AGENT_KEYS);
    if away_reason.is_some() && away_until.is_none() {
        errors.push(FieldError {
            field: format!("{path}.away_reason"),
            line: lines.get(&format!("{path}.away_reason")).copied(),
            message: "an absence has a reason only with its `away_until` time".into(),
        });
    }
    for (k, n) in &extra {
        warnings.push(FieldError {
            field: format!("{path}.{k}"),
            line: (n.line > 0).then_some(n.line),
            message: "unknown field (kept as is; a newer version of pair may use it)".to_string(),
        });
    }
    if errors.len() > before {
        return None;
    }
    Some(Agent {
        role: role?,
        status: status?,
        last_seen,
        analysis: reviews[0],
        plan: reviews[1],
        red_test: reviews[2],
        code: reviews[3],
        away: away_until.map(|until| Away {
            until,
            reason: away_reason.unwrap_or_default(),
        }),
        pool_claim,
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const SAMPLE: &str = "phase: DRAFT\nphase_updated_at: \"2026-01-01T00:00:00Z\"\nwork_type: feature\nrca_required: false\nred_test_required: false\nrequired_reviewers: []\nplan_revision: 0\nanalysis_revision: 0\nred_test_round: 0\ncode_review_round: 0\nworktree: null\nagents:\n  doer:\n    role: doer\n    status: DRAFT\n    last_seen: null\n    shoe_size: 44\nfuture_key:\n  nested: [1, two]\n";

    fn parse(text: &str) -> Result<Parsed, Vec<FieldError>> {
        from_node(&yaml::parse(text, 1).unwrap())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        /// The fixed-form reading of a time gives what chrono's format interpreter gives, on
        /// times near the form: digits and separators anywhere, out-of-range fields, leap
        /// seconds, signs.
        #[test]
        fn a_time_is_read_as_the_format_interpreter_reads_it(
            s in proptest::prop_oneof![
                "[0-9]{4}-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9]Z",
                "20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z",
                "[0-9+ -]{0,1}[0-9]{3,4}[-:T][0-9]{1,2}[-:T][0-9]{2}[T ][0-9]{2}[:-][0-9]{2}:[0-6][0-9]Z?",
            ],
        ) {
            let slow = (s.len() == 20)
                .then(|| NaiveDateTime::parse_from_str(&s, Timestamp::FORMAT).ok())
                .flatten();
            let fast = (s.len() == 20)
                .then(|| Timestamp::fixed(&s).or_else(|| NaiveDateTime::parse_from_str(&s, Timestamp::FORMAT).ok()))
                .flatten();
            proptest::prop_assert_eq!(fast, slow, "{}", s);
            if let Some(t) = Timestamp::fixed(&s) {
                proptest::prop_assert_eq!(Some(t), NaiveDateTime::parse_from_str(&s, Timestamp::FORMAT).ok());
            }
        }
    }

    #[test]
    fn seed_style_frontmatter_parses_and_keeps_unknown_keys() {
        let p = parse(SAMPLE).unwrap();
        assert_eq!(p.fm.phase, Phase::Draft);
        assert_eq!(p.fm.doer(), Some("doer"));
        assert_eq!(p.warnings.len(), 2);
        let emitted = p.fm.emit();
        assert!(
            emitted.contains("future_key:\n  nested:\n    - 1\n    - two\n"),
            "{emitted}"
        );
        assert!(emitted.contains("    shoe_size: 44\n"), "{emitted}");
        let again = parse(&emitted).unwrap();
        assert_eq!(again.fm, p.fm);
        assert_eq!(again.fm.emit(), emitted);
    }

    #[test]
    fn all_errors_are_reported_with_lines() {
        let bad = SAMPLE
            .replace("phase: DRAFT", "phase: DONE")
            .replace("plan_revision: 0", "plan_revision: '1'")
            .replace("status: DRAFT", "status: SLEEPING");
        let errs = parse(&bad).unwrap_err();
        let fields: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["phase", "plan_revision", "agents.doer.status"]);
        assert_eq!(errs[0].line, Some(2));
        assert!(
            errs[1].message.contains("string \"1\""),
            "{}",
            errs[1].message
        );
    }

    #[test]
    fn pins_and_verdict_hashes_parse_strictly_and_round_trip() {
        let h = "ab".repeat(32);
        let good = format!(
            "{SAMPLE}pins:\n  code:\n    counter: 2\n    kind: staged\n    sha256: \"{h}\"\n"
        )
        .replace(
            "shoe_size: 44\n",
            &format!("reviewed_code_sha256: \"{h}\"\n"),
        );
        let p = parse(&good).unwrap();
        let pin = p.fm.pins.get(Target::Code).unwrap();
        assert_eq!((pin.counter, pin.kind), (2, PinKind::Staged));
        assert_eq!(pin.sha256.to_string(), h);
        assert_eq!(p.fm.agents[0].1.code.sha256, Some(pin.sha256));
        assert_eq!(parse(&p.fm.emit()).unwrap().fm, p.fm);
        for (bad, field) in [
            (good.replace(&h, &h.to_uppercase()), "pins.code.sha256"),
            (good.replace(&h, "abc"), "pins.code.sha256"),
            (
                good.replace("counter: 2", "counter: 0"),
                "pins.code.counter",
            ),
            (good.replace("kind: staged", "kind: zip"), "pins.code.kind"),
            (good.replace("  code:", "  docs:"), "pins.docs"),
        ] {
            let errs = parse(&bad).unwrap_err();
            assert!(errs.iter().any(|e| e.field == field), "{field}: {errs:?}");
        }
    }

    #[test]
    fn a_later_versions_pin_fields_are_kept_until_the_pin_is_replaced() {
        let h = "ab".repeat(32);
        let text = format!(
            "{SAMPLE}pins:\n  code:\n    counter: 2\n    kind: staged\n    signer: ci\n    \
             sha256: \"{h}\"\n"
        );
        let p = parse(&text).unwrap();
        assert!(p.warnings.iter().any(|w| w.field == "pins.code.signer"));
        let emitted = p.fm.emit();
        assert!(emitted.contains("    signer: ci\n"), "{emitted}");
        assert_eq!(parse(&emitted).unwrap().fm, p.fm);
        let mut fm = p.fm.clone();
        let pin = fm.pins.get(Target::Code).cloned();
        fm.pins.set(Target::Code, pin);
        assert!(!fm.emit().contains("signer"));
    }

    #[test]
    fn the_format_is_written_only_when_the_board_has_it() {
        let p = parse(SAMPLE).unwrap();
        assert_eq!((p.fm.format, crate::board::format::of(&p.fm)), (None, 1));
        assert!(!p.fm.emit().contains("format"));
        let explicit = parse(&format!("format: 1\n{SAMPLE}")).unwrap();
        assert_eq!(explicit.fm.format, Some(1));
        assert!(explicit.fm.emit().starts_with("format: 1\nphase: DRAFT\n"));
        assert!(crate::board::field::changed(&p.fm, &explicit.fm).is_empty());
        for bad in ["format: 0", "format: two", "format: 1.5", "format: \"1\""] {
            let errs = parse(&format!("{SAMPLE}{bad}\n")).unwrap_err();
            assert_eq!(errs[0].field, "format", "{bad}: {errs:?}");
            assert_eq!(errs[0].line, Some(21), "{bad}: {errs:?}");
        }
        let newer = parse(&format!("format: 4\n{SAMPLE}")).unwrap();
        assert!(newer.warnings.iter().any(|w| w.field == "format"));
        let broken = parse(&format!("format: 4\n{SAMPLE}").replace("DRAFT\nphase_", "NEW\nphase_"));
        let errs = broken.unwrap_err();
        assert!(
            errs.last().unwrap().message.contains("upgrade pair"),
            "{errs:?}"
        );
    }

    #[test]
    fn timestamps_are_strict() {
        assert!(Timestamp::parse("2026-01-01T00:00:00Z").is_some());
        assert!(Timestamp::parse("2026-1-01T00:00:00Z").is_none());
        assert!(Timestamp::parse("2026-01-01 00:00:00Z").is_none());
        assert!(Timestamp::parse("yesterday").is_none());
        assert!(Timestamp::parse("2026-01-01T00:00:00.Z").is_none());
        assert!(Timestamp::parse("2026-01-01T00:00:00,5Z").is_none());
    }

    #[test]
    fn fractional_seconds_of_a_later_version_are_read_and_kept() {
        let t = Timestamp::parse("2026-05-01T10:00:00.250Z").unwrap();
        assert_eq!(t.to_string(), "2026-05-01T10:00:00.250Z");
        assert!(t > Timestamp::parse("2026-05-01T10:00:00Z").unwrap());
        let text = SAMPLE.replace("00:00:00Z", "00:00:00.250Z");
        let p = parse(&text).unwrap();
        assert_eq!(parse(&p.fm.emit()).unwrap().fm, p.fm);
        assert!(p.fm.emit().contains("\"2026-01-01T00:00:00.250Z\""));
    }
}
