//! A review-only board's data: the pinned target, the debate's rounds and findings, and the
//! stop reason `pair` computed. It lives under the frontmatter key `review:` (absent on a pairing
//! board); the rules that move it are in [`crate::law::debate`].

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::board::frontmatter::Frontmatter;
use crate::board::yaml::{Node, Value};

/// The frontmatter key of a review-only board.
pub const KEY: &str = "review";

/// What the target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// One file, hashed as its bytes.
    File,
    /// A commit range `A..B`, hashed as its diff in the pinned form.
    Range,
    /// The staged diff, hashed in the pinned form.
    Staged,
}

/// How deep the debate goes (the mode follows the target's size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Lightweight,
    Full,
}

/// The stage of a round: whose turn it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The enthusiast records findings.
    Find,
    /// The adversary maps what is safe and disputes findings.
    Dispute,
    /// The judge confirms or dismisses each finding.
    Rule,
    /// The debate has stopped (see [`Review::stop`]).
    Done,
}

/// A debate role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DebateRole {
    Enthusiast,
    Adversary,
    Judge,
}

impl DebateRole {
    pub const ALL: [DebateRole; 3] = [
        DebateRole::Enthusiast,
        DebateRole::Adversary,
        DebateRole::Judge,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            DebateRole::Enthusiast => "enthusiast",
            DebateRole::Adversary => "adversary",
            DebateRole::Judge => "judge",
        }
    }
}

/// Where a finding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingState {
    /// Recorded, not disputed yet.
    Open,
    /// The adversary disputed it.
    Disputed,
    /// The judge confirmed it.
    Confirmed,
    /// The judge dismissed it.
    Dismissed,
    /// It names a file outside the pinned target: never counted.
    Discarded,
}

/// Why the debate stopped, computed by `pair` from the findings and rulings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    ZeroFindings,
    AllSelfReference,
    AntiDivergenceHalt,
    MaxRounds,
}

impl StopReason {
    pub const ALL: [StopReason; 4] = [
        StopReason::ZeroFindings,
        StopReason::AllSelfReference,
        StopReason::AntiDivergenceHalt,
        StopReason::MaxRounds,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::ZeroFindings => "zero-findings",
            StopReason::AllSelfReference => "all-self-reference",
            StopReason::AntiDivergenceHalt => "anti-divergence-halt",
            StopReason::MaxRounds => "max-rounds",
        }
    }
}

/// One finding of the enthusiast, with its id as the objection ledger numbers them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    pub round: u32,
    pub by: String,
    pub anchor: String,
    pub title: String,
    pub state: FindingState,
}

/// What one closed round yielded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundYield {
    pub round: u32,
    /// Findings recorded in the round (discarded ones not counted).
    pub findings: u32,
    pub discarded: u32,
    pub confirmed: u32,
    /// Confirmed findings at a location no earlier round confirmed.
    pub substantive: u32,
    /// Confirmed findings at (or within five lines of) a location an earlier round confirmed.
    pub self_reference: u32,
}

/// The result, written once the debate stops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stop {
    pub reason: StopReason,
    pub round: u32,
    /// The target's SHA-256 re-computed before the result was written.
    pub target_sha256: String,
    /// The target changed during the debate (its SHA-256 is not the pinned one).
    pub drift: bool,
}

/// The review-only board's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// The target as given to `init --review`.
    pub target: String,
    pub kind: TargetKind,
    /// Where the target is read: the file's absolute path, or the repository's top level.
    pub root: String,
    /// The files findings may name (a diff's files relative to `root`; a file's absolute path).
    pub files: Vec<String>,
    /// The SHA-256 pinned at the start.
    pub sha256: String,
    /// The target's size in lines (the file's, or the diff's).
    pub lines: u32,
    pub mode: Mode,
    pub max_rounds: u32,
    /// The agents of the three roles: enthusiast, adversary, judge.
    pub roles: Vec<String>,
    pub round: u32,
    pub stage: Stage,
    #[serde(default)]
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub yields: Vec<RoundYield>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
}

impl Review {
    /// The agent of a role.
    pub fn agent(&self, role: DebateRole) -> &str {
        let i = DebateRole::ALL.iter().position(|r| *r == role).unwrap_or(0);
        self.roles.get(i).map_or("", String::as_str)
    }

    /// The role of an agent.
    pub fn role_of(&self, agent: &str) -> Option<DebateRole> {
        DebateRole::ALL
            .iter()
            .copied()
            .find(|r| self.agent(*r) == agent)
    }

    /// The findings of the current round that count (not discarded).
    pub fn current(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.round == self.round && f.state != FindingState::Discarded)
    }

    /// The next objection id for a severity, numbered as the ledger numbers them.
    pub fn next_id(&self, prefix: &str) -> String {
        let n = self
            .findings
            .iter()
            .filter_map(|f| {
                f.id.strip_prefix(prefix)?
                    .strip_prefix('-')?
                    .parse::<u32>()
                    .ok()
            })
            .max()
            .unwrap_or(0);
        format!("{prefix}-{}", n + 1)
    }
}

/// The review of a board, if it is a review-only board; an error names what is wrong with it.
pub fn of(fm: &Frontmatter) -> Option<Result<Review, String>> {
    let (_, node) = fm.extra.iter().find(|(k, _)| k == KEY)?;
    Some(from_node(node))
}

/// Read the `review:` node.
pub fn from_node(node: &Node) -> Result<Review, String> {
    serde_json::from_value(to_json(&node.value)).map_err(|e| e.to_string())
}

/// Store a review into a frontmatter (replacing the one there).
pub fn set(fm: &mut Frontmatter, review: &Review) {
    let node = Node {
        value: from_json(&serde_json::to_value(review).unwrap_or(Json::Null)),
        line: 0,
        raw: None,
    };
    match fm.extra.iter_mut().find(|(k, _)| k == KEY) {
        Some((_, n)) => *n = node,
        None => fm.extra.push((KEY.to_string(), node)),
    }
}

fn to_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => i64::try_from(*i)
            .map(Json::from)
            .unwrap_or_else(|_| Json::String(i.to_string())),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::Str(s) => Json::String(s.clone()),
        Value::Seq(items) => Json::Array(items.iter().map(|n| to_json(&n.value)).collect()),
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, n)| (k.clone(), to_json(&n.value)))
                .collect(),
        ),
    }
}

fn from_json(v: &Json) -> Value {
    let node = |v: &Json| Node {
        value: from_json(v),
        line: 0,
        raw: None,
    };
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => n
            .as_i64()
            .map(|i| Value::Int(i128::from(i)))
            .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(0.0))),
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::Seq(items.iter().map(node).collect()),
        Json::Object(entries) => {
            Value::Map(entries.iter().map(|(k, v)| (k.clone(), node(v))).collect())
        }
    }
}
