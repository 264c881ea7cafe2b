//! The journal: one line per successful write, in a final `## Journal` section of the board.
//!
//! Every write (semantic, raw, repair, init, `report-usage`) appends its record in the same
//! atomic replace as the change it records, so a crash leaves both or neither. The record is
//! added by the store ([`crate::store::update`]) after the law allowed the change: nobody
//! writes records by hand, and a raw write must leave every record as it found it
//! ([`check_kept`], called by the law).
//!
//! A record is one Markdown list item of `key=value` words, in a fixed order:
//!
//! ```text
//! - at=2026-01-01T00:00:00Z by=alice cmd=submit-plan phase=PLANNING>PLANNING_SUBMITTED
//!   counters=plan_revision:0>1 turn=bob wait_us=41 uid=1000 host=box pid=4242 tokens=1200
//!   cost=0.04 before=<sha256> after=<sha256> prev=<16 hex>
//! ```
//!
//! (one line in the file). `before` is the SHA-256 of the whole file before the write (what
//! `--expect-sha256` compares); `after` is the SHA-256 of the file as written *without its own
//! record line* (a record cannot hash the file that contains it); `prev` is the first 16 hex
//! digits of the SHA-256 of the previous record's line (`-` for the first), which chains the
//! records so that `validate` can tell a dropped, reordered or edited record from the file alone.
//! `turn` names the agents whose turn it is after the write (`protocol::next`), so "who holds the
//! turn since when" is the last record's `turn` and `at`. `at` is the time of the write to the
//! millisecond (`2026-01-01T00:00:00.250Z`; older records have whole seconds).
//!
//! **The seal** (format 2, [`Seal`]). The chain tells a dropped, reordered or edited record
//! *between* two others, but not one missing at the end, nor a journal deleted whole, nor a
//! forged record appended with the right `prev`. So on a board of format 2 every write also
//! records, in the frontmatter, how long the journal is once its record is added and a digest of
//! that record: `journal: {records: 18, head: "<16 hex>"}`. The digest cannot cover the record's
//! `after` (which hashes the frontmatter that holds the digest), so it is taken of the record's
//! line without its `after=` word ([`digest`]): every other word of the record is fixed before the
//! frontmatter is written, and `after`, in turn, hashes the frontmatter with the seal in it. The
//! seal and the chain together pin every record: a record removed anywhere, the section
//! deleted, a record appended or the last one replaced no longer match it, which `validate`
//! reports as an error naming the line ([`check`]).

use std::fmt::Write as _;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::board::document::{self, Document};
use crate::board::frontmatter::{Frontmatter, Parsed, Phase, Target, Timestamp};
use crate::error::FieldError;
use crate::error::{Error, Result};
use crate::text::sha256_hex;

/// The section the journal lives in; always the last one of the body.
pub const SECTION: &str = "Journal";

/// How every record line starts.
const RECORD_START: &str = "- at=";

/// The keys of a record's words, in their order.
const KEYS: &[&str] = &[
    "at",
    "by",
    "cmd",
    "phase",
    "counters",
    "verdict",
    "turn",
    "wait_us",
    "uid",
    "host",
    "pid",
    "tokens",
    "cost",
    "for",
    "mended",
    "transcript",
    "content",
    "sig",
    "before",
    "after",
    "prev",
];

/// The keys of words read wherever they stand in a record (this version writes them after
/// `mended=`, before `before=`): the writer's session and model ([`Origin`]), which boards
/// written elsewhere may place otherwise.
const FREE_KEYS: &[&str] = &["session", "model"];

/// How many hex digits of the previous line's SHA-256 a record carries.
const PREV_HEX: usize = 16;

/// The first format whose boards carry the seal ([`Seal`]) in their frontmatter.
pub const SEALED_FROM: u32 = 2;

/// The frontmatter key of the seal.
pub const SEAL_FIELD: &str = "journal";

/// The journal as the last write left it, recorded in the frontmatter of a board of format 2
/// (`journal: {records: N, head: "<16 hex>"}`): how many records the journal holds once the
/// write's own record is added, and the [`digest`] of that record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seal {
    pub records: u64,
    pub head: String,
    /// The board's identity, on a signed board (format 3): 32 hex digits chosen when the board
    /// became signed, carried by every write after it and covered by every record's signature
    /// ([`signed_message`]), so that a signed record does not verify on another board.
    pub board: Option<String>,
}

impl Seal {
    /// The value as the frontmatter writes it.
    pub fn value(&self) -> String {
        match &self.board {
            Some(board) => format!(
                "{{records: {}, head: \"{}\", board: \"{board}\"}}",
                self.records, self.head
            ),
            None => format!("{{records: {}, head: \"{}\"}}", self.records, self.head),
        }
    }

    /// Read the `journal` value.
    pub fn conv(v: &crate::board::yaml::Value) -> std::result::Result<Option<Seal>, String> {
        use crate::board::yaml::Value;
        let expected = "expected the journal's seal as the last write left it, \
                        {records: N, head: \"16 hex digits\"} and on a signed board \
                        board: \"32 hex digits\" (written by pair: keep it as it is)";
        let Value::Map(entries) = v else {
            return Err(format!("{expected}, found {}", v.describe()));
        };
        let mut records = None;
        let mut head = None;
        let mut board = None;
        for (k, n) in entries {
            match (k.as_str(), &n.value) {
                ("records", Value::Int(i)) if *i >= 1 && *i <= i128::from(u64::MAX) => {
                    records = Some(*i as u64)
                }
                ("head", Value::Str(h))
                    if h.len() == PREV_HEX && h.bytes().all(|b| b.is_ascii_hexdigit()) =>
                {
                    head = Some(h.to_ascii_lowercase())
                }
                ("board", Value::Str(b))
                    if b.len() == BOARD_HEX && b.bytes().all(|c| c.is_ascii_hexdigit()) =>
                {
                    board = Some(b.to_ascii_lowercase())
                }
                (k, v) => return Err(format!("{expected}; `{k}` is {}", v.describe())),
            }
        }
        match (records, head) {
            (Some(records), Some(head)) => Ok(Some(Seal {
                records,
                head,
                board,
            })),
            _ => Err(format!("{expected}; a key is missing")),
        }
    }
}

/// The seal's digest of a record line: the first 16 hex digits of the SHA-256 of the line
/// without its `after=` word (the one word of a record that depends on the frontmatter).
pub fn digest(line: &str) -> String {
    link(&without_after(line))
}

/// A record line without its ` after=…` word.
fn without_after(line: &str) -> std::borrow::Cow<'_, str> {
    match line.find(" after=") {
        Some(start) => {
            let rest = &line[start + 1..];
            let end = rest.find(' ').map_or(line.len(), |e| start + 1 + e);
            format!("{}{}", &line[..start], &line[end..]).into()
        }
        None => line.into(),
    }
}

/// How many hex digits a signed board's identity has ([`Seal::board`]).
pub const BOARD_HEX: usize = 32;

/// The first format whose records are signed ([`signed_message`]).
pub const SIGNED_FROM: u32 = 3;

/// The namespace of a record's SSH signature (`ssh-keygen -Y sign -n`): a signature made for
/// anything else (a git commit, a file) is not a record's, and the other way round.
pub const NAMESPACE: &str = "pair-record@pair";

/// The first line of every signed message, naming what it is and its version.
const MESSAGE_TAG: &str = "pair signed record 1";

fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// A record line without its `sig=` and `after=` words: the words its signature covers
/// (`sed -E 's/ (sig|after)=[^ ]*//g'`).
pub fn signed_words(line: &str) -> String {
    line.split(' ')
        .filter(|w| !w.starts_with("sig=") && !w.starts_with("after="))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The bytes a record's signature covers, for the board `board` ([`Seal::board`]): three
/// lines, `pair signed record 1`, `board=<id>`, and the record's words but `sig` and `after`
/// ([`signed_words`]). The words hold `before` (the board before the write: its place in the
/// chain), `prev`, and `content` (the board the write left, without its seal and journal), so
/// a signed record verifies only on its board, at its place, with its content.
pub fn signed_message(board: &str, line: &str) -> Vec<u8> {
    format!("{MESSAGE_TAG}\nboard={board}\n{}\n", signed_words(line)).into_bytes()
}

/// The `content=` of a record: the SHA-256 of `head`, the file up to its `## Journal` heading,
/// without the frontmatter's lines that start with `journal:` (the seal, which holds the
/// record's digest). With standard tools:
/// `sed '/^## Journal[[:space:]]*$/,$d' BOARD | awk 'NR==1{f=1;print;next} f&&/^---[ \t\r]*$/{f=0} f&&/^journal:/{next} {print}' | sha256sum`.
pub fn content_digest(head: &[u8]) -> String {
    let mut hasher = Sha256::new();
    let mut in_fm = false;
    for (i, line) in head.split_inclusive(|b| *b == b'\n').enumerate() {
        if i == 0 {
            in_fm = true;
        } else if in_fm {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            let trimmed = text
                .iter()
                .rposition(|b| !matches!(b, b' ' | b'\t' | b'\r'))
                .map_or(&text[..0], |e| &text[..=e]);
            if trimmed == b"---" {
                in_fm = false;
            } else if line.starts_with(b"journal:") {
                continue;
            }
        }
        hasher.update(line);
    }
    crate::text::hex(&hasher.finalize())
}

/// Where the `## Journal` heading of a file that ends with its journal starts (the bytes
/// [`content_digest`] covers end there).
pub fn journal_heading(bytes: &[u8]) -> Option<usize> {
    journal_is_last(bytes).map(|(_, _, at)| at)
}

/// A new signed board's identity: drawn from the moment, the process and the board itself.
/// It need not be secret, only not shared by two boards.
fn new_board_id(bytes: &[u8], now: Timestamp) -> String {
    let mut hasher = Sha256::new();
    hasher.update(now.millis().as_bytes());
    hasher.update(std::process::id().to_le_bytes());
    hasher.update(format!("{:?}", std::time::SystemTime::now()).as_bytes());
    hasher.update(host().as_bytes());
    hasher.update(bytes);
    crate::text::hex(&hasher.finalize())[..BOARD_HEX].to_string()
}

/// Tokens and cost an agent reports with a write (`--tokens N`, `--cost X`), and the phase the
/// work belongs to when it is not the current one (`report-usage --phase P`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    pub tokens: Option<u64>,
    /// In millionths of the currency unit, so sums are exact.
    pub cost_micros: Option<u64>,
    pub phase: Option<Phase>,
}

impl Usage {
    /// Parse `--cost`: a non-negative decimal with at most six decimals.
    pub fn parse_cost(s: &str) -> std::result::Result<u64, String> {
        let bad = || {
            format!(
                "--cost must be a non-negative decimal with at most 6 decimals (e.g. 0.42), \
                 got {s:?}"
            )
        };
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty()
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
            || frac.len() > 6
            || (s.contains('.') && frac.is_empty())
        {
            return Err(bad());
        }
        let int: u64 = int.parse().map_err(|_| bad())?;
        let frac: u64 = format!("{frac:0<6}").parse().map_err(|_| bad())?;
        int.checked_mul(1_000_000)
            .and_then(|i| i.checked_add(frac))
            .ok_or_else(bad)
    }
}

/// A cost in millionths, as the shortest decimal.
pub fn cost_text(micros: u64) -> String {
    let int = micros / 1_000_000;
    let frac = micros % 1_000_000;
    if frac == 0 {
        return int.to_string();
    }
    let f = format!("{frac:06}");
    format!("{int}.{}", f.trim_end_matches('0'))
}

/// A cost in millionths as a JSON number (the nearest double to the decimal).
pub fn cost_number(micros: u64) -> f64 {
    micros as f64 / 1_000_000.0
}

/// Where a write comes from beyond the agent id: the writer's session (one context of an agent
/// program: a conversation, a process that keeps its memory) and its model, as the writer gave
/// them (`--session`/`PAIR_SESSION`, `--model`/`PAIR_MODEL`). Recorded in the write's journal
/// record (`session=`, `model=`), so a board shows whether its reviews came from another
/// context than the artifact they judged ([`crate::law::independence`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub session: Option<String>,
    pub model: Option<String>,
}

/// The longest session or model name a record takes.
pub const ORIGIN_MAX: usize = 128;

impl Origin {
    /// Check a `--session` or `--model` value (`flag` names it): one word of 1 to
    /// [`ORIGIN_MAX`] printable ASCII characters, as a record's word must be.
    pub fn check(flag: &str, value: &str) -> std::result::Result<String, String> {
        if !value.is_empty()
            && value.len() <= ORIGIN_MAX
            && value.bytes().all(|b| b.is_ascii_graphic())
        {
            Ok(value.to_string())
        } else {
            Err(format!(
                "{flag} {value:?} is not usable: give one word of 1 to {ORIGIN_MAX} printable \
                 ASCII characters, no spaces (e.g. the agent program's session id)"
            ))
        }
    }
}

/// What the writer knows about a write beyond the content: who, which command, the usage.
#[derive(Debug, Clone, Default)]
pub struct Intent {
    pub agent: Option<String>,
    pub command: String,
    pub usage: Usage,
    /// The writer's session and model, when given.
    pub origin: Origin,
    /// A repair: its record lists the breaks of the chain it found ([`Record::mended`]).
    pub repair: bool,
    /// Where the write stopped reading its writer's transcript (`transcript=`), when it read
    /// one ([`crate::board::transcript`]).
    pub transcript: Option<crate::board::transcript::Position>,
}

/// One counter a write moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counter {
    pub name: String,
    pub from: u32,
    pub to: u32,
}

/// One journal record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    pub at: Timestamp,
    /// The writer's agent id; `None` for a raw write that named nobody.
    pub by: Option<String>,
    pub command: String,
    /// `None` when the board was created by this write (or the old content was unreadable).
    pub from: Option<Phase>,
    pub to: Phase,
    pub counters: Vec<Counter>,
    /// The verdict the write recorded, as `TARGET:VERDICT` (`plan:APPROVED`).
    pub verdict: Option<String>,
    /// The agents whose turn it is after the write.
    pub turn: Vec<String>,
    pub wait_us: u64,
    pub uid: u32,
    pub host: String,
    pub pid: u32,
    pub tokens: Option<u64>,
    #[serde(skip)]
    pub cost_micros: Option<u64>,
    /// The phase the reported usage belongs to, when not the phase before the write.
    pub usage_phase: Option<Phase>,
    /// On a repair's record: the records (1-based) whose `prev` did not match the record before
    /// them when the repair was made. The repair recorded the journal as it stood; those breaks
    /// are said by `validate` as warnings, any other as an error.
    pub mended: Vec<u32>,
    /// The writer's session (`session=`), when it gave one ([`Origin`]).
    pub session: Option<String>,
    /// The writer's model (`model=`), when it gave one.
    pub model: Option<String>,
    /// Where the write stopped reading its writer's transcript (`transcript=OFFSET:HEAD`).
    #[serde(skip)]
    pub transcript: Option<crate::board::transcript::Position>,
    /// On a signed board (format 3): the SHA-256 of the board the write left without its seal
    /// and journal ([`content_digest`]), which the signature covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// On a signed board: the writer's SSH signature of [`signed_message`] (the `sshsig`
    /// format's armored base64, on one line).
    #[serde(skip)]
    pub sig: Option<String>,
    pub before: Option<String>,
    pub after: String,
    pub prev: Option<String>,
    /// The record's line in the file (1-based), when read from one.
    #[serde(skip)]
    pub line: u32,
}

impl Record {
    /// The phase the record's usage is counted in: the phase the work was done in.
    pub fn work_phase(&self) -> Phase {
        self.usage_phase.or(self.from).unwrap_or(self.to)
    }

    /// The line, without its ending.
    pub fn render(&self) -> String {
        let dash = |o: Option<&str>| o.unwrap_or("-").to_string();
        let mut s = format!(
            "- at={} by={} cmd={} phase={}>{}",
            self.at.millis(),
            dash(self.by.as_deref()),
            self.command,
            dash(self.from.map(Phase::as_str)),
            self.to
        );
        if !self.counters.is_empty() {
            let c: Vec<String> = self
                .counters
                .iter()
                .map(|c| format!("{}:{}>{}", c.name, c.from, c.to))
                .collect();
            let _ = write!(s, " counters={}", c.join(","));
        }
        if let Some(v) = &self.verdict {
            let _ = write!(s, " verdict={v}");
        }
        let turn = if self.turn.is_empty() {
            "-".to_string()
        } else {
            self.turn.join(",")
        };
        let _ = write!(
            s,
            " turn={turn} wait_us={} uid={} host={} pid={}",
            self.wait_us, self.uid, self.host, self.pid
        );
        if let Some(t) = self.tokens {
            let _ = write!(s, " tokens={t}");
        }
        if let Some(c) = self.cost_micros {
            let _ = write!(s, " cost={}", cost_text(c));
        }
        if let Some(p) = self.usage_phase {
            let _ = write!(s, " for={p}");
        }
        if !self.mended.is_empty() {
            let m: Vec<String> = self.mended.iter().map(u32::to_string).collect();
            let _ = write!(s, " mended={}", m.join(","));
        }
        if let Some(v) = &self.session {
            let _ = write!(s, " session={v}");
        }
        if let Some(v) = &self.model {
            let _ = write!(s, " model={v}");
        }
        if let Some(p) = &self.transcript {
            let _ = write!(s, " transcript={}", p.value());
        }
        if let Some(c) = &self.content {
            let _ = write!(s, " content={c}");
        }
        if let Some(v) = &self.sig {
            let _ = write!(s, " sig={v}");
        }
        let _ = write!(
            s,
            " before={} after={} prev={}",
            dash(self.before.as_deref()),
            self.after,
            dash(self.prev.as_deref())
        );
        s
    }

    /// Parse one line (without its ending); the message says what is wrong.
    pub fn parse(line: &str, number: u32) -> std::result::Result<Record, String> {
        let rest = line
            .strip_prefix("- ")
            .ok_or("a journal record starts with `- `")?;
        // The session and model, wherever they stand (the first of each counts).
        let mut free: [Option<String>; 2] = [None, None];
        for (k, v) in rest.split(' ').filter_map(|w| w.split_once('=')) {
            if let Some(i) = FREE_KEYS.iter().position(|f| *f == k)
                && free[i].is_none()
            {
                free[i] = Some(Origin::check(&format!("{k}="), v)?);
            }
        }
        let [session, model] = free;
        // A later version's words are skipped (SPEC §2.1); the known ones keep their order.
        let mut words = crate::board::format::known_words(rest, KEYS).peekable();
        let mut take = |key: &str, optional: bool| -> std::result::Result<Option<&str>, String> {
            match words.peek().and_then(|w| w.split_once('=')) {
                Some((k, v)) if k == key => {
                    words.next();
                    Ok(Some(v))
                }
                _ if optional => Ok(None),
                _ => Err(format!(
                    "expected `{key}=` here (the keys come in a fixed order)"
                )),
            }
        };
        let req = |v: Option<&str>| v.unwrap_or_default().to_string();
        let at = req(take("at", false)?);
        let at = Timestamp::parse(&at).ok_or(format!("at={at:?} is not a UTC time"))?;
        let by = req(take("by", false)?);
        let by = (by != "-").then_some(by);
        if let Some(b) = &by
            && !crate::board::frontmatter::is_agent_id(b)
        {
            return Err(format!("by={b:?} is not an agent id"));
        }
        let command = req(take("cmd", false)?);
        if command.is_empty() || !command.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("cmd= names no command".into());
        }
        let phase = req(take("phase", false)?);
        let (from, to) = phase
            .split_once('>')
            .ok_or("phase= is BEFORE>AFTER".to_string())?;
        let from = match from {
            "-" => None,
            p => Some(
                p.parse::<Phase>()
                    .map_err(|_| format!("{p:?} is not a phase"))?,
            ),
        };
        let to = to
            .parse::<Phase>()
            .map_err(|_| format!("{to:?} is not a phase"))?;
        let mut counters = Vec::new();
        if let Some(c) = take("counters", true)? {
            for item in c.split(',') {
                let parsed = item.split_once(':').and_then(|(name, v)| {
                    let (a, b) = v.split_once('>')?;
                    Some(Counter {
                        name: name.to_string(),
                        from: a.parse().ok()?,
                        to: b.parse().ok()?,
                    })
                });
                counters.push(parsed.ok_or(format!("counter {item:?} is not NAME:OLD>NEW"))?);
            }
        }
        let verdict = match take("verdict", true)? {
            Some(v) => {
                let ok = v.split_once(':').is_some_and(|(t, w)| {
                    t.parse::<Target>().is_ok()
                        && w.parse::<crate::board::frontmatter::Verdict>().is_ok()
                });
                if !ok {
                    return Err(format!("verdict={v:?} is not TARGET:VERDICT"));
                }
                Some(v.to_string())
            }
            None => None,
        };
        let turn = req(take("turn", false)?);
        let turn = if turn == "-" {
            vec![]
        } else {
            turn.split(',').map(str::to_string).collect()
        };
        let number_of = |k: &str, v: Option<&str>| -> std::result::Result<u64, String> {
            v.unwrap_or_default()
                .parse()
                .map_err(|_| format!("{k}= is not a number"))
        };
        let wait_us = number_of("wait_us", take("wait_us", false)?)?;
        let uid = number_of("uid", take("uid", false)?)? as u32;
        let host = req(take("host", false)?);
        let pid = number_of("pid", take("pid", false)?)? as u32;
        let tokens = match take("tokens", true)? {
            Some(t) => Some(number_of("tokens", Some(t))?),
            None => None,
        };
        let cost_micros = match take("cost", true)? {
            Some(c) => Some(Usage::parse_cost(c)?),
            None => None,
        };
        let usage_phase = match take("for", true)? {
            Some(p) => Some(
                p.parse::<Phase>()
                    .map_err(|_| format!("for={p:?} is not a phase"))?,
            ),
            None => None,
        };
        let mended = match take("mended", true)? {
            Some(m) => m
                .split(',')
                .map(|n| n.parse::<u32>().ok().filter(|n| *n >= 1))
                .collect::<Option<Vec<u32>>>()
                .ok_or(format!("mended={m:?} is not a list of record numbers"))?,
            None => vec![],
        };
        let transcript = take("transcript", true)?
            .map(crate::board::transcript::Position::parse)
            .transpose()?;
        let hex =
            |k: &str, v: Option<&str>, len: usize| -> std::result::Result<Option<String>, String> {
                match v.unwrap_or_default() {
                    "-" => Ok(None),
                    h if h.len() == len && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                        Ok(Some(h.to_string()))
                    }
                    _ => Err(format!("{k}= is not {len} hex digits or `-`")),
                }
            };
        let content = match take("content", true)? {
            Some(c) => {
                Some(hex("content", Some(c), 64)?.ok_or("content= must be a SHA-256".to_string())?)
            }
            None => None,
        };
        let sig = match take("sig", true)? {
            Some(v) if !v.is_empty() && v.bytes().all(is_base64) => Some(v.to_string()),
            Some(_) => return Err("sig= is not an SSH signature in base64".into()),
            None => None,
        };
        let before = hex("before", take("before", false)?, 64)?;
        let after = hex("after", take("after", false)?, 64)?
            .ok_or("after= must be a SHA-256".to_string())?;
        let prev = hex("prev", take("prev", false)?, PREV_HEX)?;
        if let Some(w) = words.next() {
            return Err(format!("unexpected {w:?} after prev="));
        }
        Ok(Record {
            at,
            by,
            command,
            from,
            to,
            counters,
            verdict,
            turn,
            wait_us,
            uid,
            host,
            pid,
            tokens,
            cost_micros,
            usage_phase,
            mended,
            session,
            model,
            transcript,
            content,
            sig,
            before,
            after,
            prev,
            line: number,
        })
    }
}

/// The `prev=` value that follows a record line.
pub fn link(line: &str) -> String {
    sha256_hex(line.as_bytes())[..PREV_HEX].to_string()
}

/// The lines of the journal section in a body: (1-based file line, text without ending), blank
/// lines left out. `None` when the body has no journal.
pub fn section_lines(doc: &Document) -> Option<Vec<(u32, &str)>> {
    let sec = doc.sections().into_iter().find(|s| s.name == SECTION)?;
    let text = &doc.body[sec.start..sec.end];
    let mut out = Vec::new();
    for (i, line) in document::raw_lines(text).enumerate().skip(1) {
        let l = line.trim_end_matches(['\n', '\r']);
        if !l.trim().is_empty() {
            out.push((sec.line + i as u32, l));
        }
    }
    Some(out)
}

/// The records of a board's journal (empty when it has none), or the first malformed line.
pub fn records(doc: &Document) -> std::result::Result<Vec<Record>, FieldError> {
    let Some(lines) = section_lines(doc) else {
        return Ok(vec![]);
    };
    lines.into_iter().map(|(n, l)| parse_line(l, n)).collect()
}

/// One line of the journal section (without its ending) at file line `n`, as a record, or the
/// error naming the line.
pub fn parse_line(line: &str, n: u32) -> std::result::Result<Record, FieldError> {
    Record::parse(line, n).map_err(|m| FieldError {
        field: "journal".into(),
        line: Some(n),
        message: format!("{m}; journal records are written by pair only"),
    })
}

/// The law on the journal of a raw write: the new body must hold the old journal's records,
/// unchanged and in order, and no record more (the record of this write is added by pair after
/// the law allowed it). Other lines after the last record are the writer's own text, which
/// [`seal`] moves before the journal.
pub fn check_kept(old_body: &str, new_body: &str) -> Result<()> {
    let lines = |body: &str| -> Vec<String> {
        let doc = Document {
            bom: false,
            eol: document::Eol::Lf,
            fm_text: String::new(),
            fm_first_line: 1,
            body: body.to_string(),
            body_first_line: 1,
            outline: Default::default(),
        };
        section_lines(&doc)
            .unwrap_or_default()
            .into_iter()
            .map(|(_, l)| l.to_string())
            .collect()
    };
    let journals = |body: &str| {
        document::sections(body, 1)
            .iter()
            .filter(|s| s.name == SECTION)
            .count()
    };
    let repeated = journals(new_body);
    if repeated > 1 {
        return Err(Error::protocol(format!(
            "the new content has `## {SECTION}` {repeated} times: the journal is one section, \
             written by pair; keep the one you read, as you read it"
        )));
    }
    let old = lines(old_body);
    let new = lines(new_body);
    for (i, o) in old.iter().enumerate() {
        match new.get(i) {
            Some(n) if n == o => {}
            _ => {
                return Err(Error::protocol(format!(
                    "the journal is append-only and written by pair: record {} of `## {SECTION}` \
                     ({:?}) was removed or changed; keep the section exactly as you read it",
                    i + 1,
                    o.chars().take(60).collect::<String>()
                )));
            }
        }
    }
    // Lines a raw write appended after the last record are its own (moved before the journal
    // when it is sealed); a line that reads as a record is not.
    if let Some(forged) = new[old.len()..]
        .iter()
        .find(|l| l.starts_with(RECORD_START))
    {
        return Err(Error::protocol(format!(
            "`## {SECTION}` gained a record pair did not write ({:?}); pair adds each write's \
             record itself",
            forged.chars().take(60).collect::<String>()
        )));
    }
    Ok(())
}

/// The process facts of a record: this host's name, as records give it.
pub fn host() -> String {
    let name: String = if let Ok(bytes) = crate::sys::hostname() {
        String::from_utf8_lossy(&bytes)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '?'
                }
            })
            .collect()
    } else {
        String::new()
    };
    if name.is_empty() { "-".into() } else { name }
}

fn counters(old: Option<&Frontmatter>, new: &Frontmatter) -> Vec<Counter> {
    Target::ALL
        .iter()
        .filter_map(|t| {
            let from = old.map_or(0, |o| o.counter(*t));
            let to = new.counter(*t);
            (from != to).then(|| Counter {
                name: t.counter_field().to_string(),
                from,
                to,
            })
        })
        .collect()
}

/// The verdict an agent's write recorded: its review of a target changed to a verdict.
fn verdict(agent: Option<&str>, old: Option<&Frontmatter>, new: &Frontmatter) -> Option<String> {
    let id = agent?;
    let now = new.agent(id)?;
    let before = old.and_then(|o| o.agent(id));
    Target::ALL.iter().find_map(|t| {
        let r = now.review(*t);
        let changed = before.is_none_or(|b| b.review(*t) != r);
        match r.verdict {
            Some(v) if changed => Some(format!("{t}:{v}")),
            _ => None,
        }
    })
}

/// A writer's signer: a message ([`signed_message`]) in, the signature's one-line base64 out, or
/// why it cannot sign.
pub type Sign<'a> = dyn Fn(&[u8]) -> std::result::Result<String, String> + 'a;

/// What the store knows of a write when it seals it.
pub struct Facts<'a> {
    pub intent: &'a Intent,
    pub old: Option<&'a Frontmatter>,
    pub old_sha256: Option<&'a str>,
    pub new: &'a Frontmatter,
    /// Whose turn it is on the new board ([`crate::law::protocol::turn`]).
    pub turn: Vec<String>,
    pub wait_us: u64,
    pub now: Timestamp,
    /// The writer's signer, on a signed board (format 3): signs a message ([`signed_message`])
    /// and gives the signature's one-line base64, or says why it cannot.
    pub sign: Option<&'a Sign<'a>>,
}

/// New content with its record, and the SHA-256 of the whole of it.
pub struct Sealed {
    pub bytes: Vec<u8>,
    pub sha256: String,
    /// The seal written into the frontmatter (a board of format 2), which the frontmatter the
    /// caller checked did not have yet.
    pub seal: Option<Seal>,
}

/// Append this write's record to new content: the journal section is moved to the end of the
/// body if something follows it, created if missing, and the record becomes the last line of
/// the file. On a board of format 2 the frontmatter's seal is set to the journal with the
/// record (its other lines as they were). The file is hashed once: the hash of everything
/// before the record is `after`, and the same hasher, fed the record, gives the new file's
/// SHA-256.
pub fn seal(bytes: Vec<u8>, facts: &Facts) -> std::result::Result<Sealed, String> {
    let (out, eol, found) = match journal_is_last(&bytes) {
        Some((eol, found, _)) => {
            let mut out = bytes;
            if !out.ends_with(b"\n") {
                out.extend_from_slice(eol.as_bytes());
            }
            (out, eol, found)
        }
        None => rebuild(&bytes)?,
    };
    let prev = records_tail(&out).map(link);
    let intent = facts.intent;
    let mut record = Record {
        at: facts.now,
        by: intent
            .agent
            .clone()
            .filter(|a| crate::board::frontmatter::is_agent_id(a)),
        command: intent
            .command
            .chars()
            .map(|c| if c.is_ascii_graphic() { c } else { '?' })
            .collect(),
        from: facts.old.map(|o| o.phase),
        to: facts.new.phase,
        counters: counters(facts.old, facts.new),
        verdict: verdict(intent.agent.as_deref(), facts.old, facts.new),
        turn: facts.turn.clone(),
        wait_us: facts.wait_us,
        uid: crate::sys::uid(),
        host: host(),
        pid: std::process::id(),
        tokens: intent.usage.tokens,
        cost_micros: intent.usage.cost_micros,
        usage_phase: intent.usage.phase,
        mended: if intent.repair {
            chain_breaks(&out)
        } else {
            vec![]
        },
        session: intent.origin.session.clone(),
        model: intent.origin.model.clone(),
        transcript: intent.transcript.clone(),
        content: None,
        sig: None,
        before: facts.old_sha256.map(str::to_string),
        // Set below, once the frontmatter holds the seal.
        after: "0".repeat(64),
        prev,
        line: 0,
    };
    // A signed board: the record names the content it leaves and carries the writer's
    // signature of it, with the board's identity (the one the board has, or a new one for a board
    // that becomes signed with this write).
    let board = (crate::board::format::of(facts.new) >= SIGNED_FROM).then(|| {
        facts
            .old
            .filter(|o| crate::board::format::of(o) >= SIGNED_FROM)
            .and_then(|o| o.journal.as_ref())
            .and_then(|s| s.board.clone())
            .unwrap_or_else(|| new_board_id(&out, facts.now))
    });
    if let Some(id) = &board {
        let head = journal_heading(&out).ok_or("the journal is not the last section")?;
        record.content = Some(content_digest(&out[..head]));
        let sign = facts
            .sign
            .ok_or("a signed board takes only signed records: give --signing-key")?;
        record.sig = Some(sign(&signed_message(id, &record.render()))?);
    }
    let seal = (crate::board::format::of(facts.new) >= SEALED_FROM).then(|| Seal {
        records: found + 1,
        head: digest(&record.render()),
        board,
    });
    let out = match &seal {
        Some(seal) => with_seal(out, facts.new, seal)?,
        None => out,
    };
    let mut hasher = Sha256::new();
    hasher.update(&out);
    record.after = crate::text::hex(&hasher.clone().finalize());
    let line = format!("{}{eol}", record.render());
    hasher.update(line.as_bytes());
    let mut out = out;
    out.extend_from_slice(line.as_bytes());
    Ok(Sealed {
        bytes: out,
        sha256: crate::text::hex(&hasher.finalize()),
        seal,
    })
}

/// The file with its frontmatter's seal set (`fm` is the frontmatter it holds): the `journal`
/// line written in the file's own words ([`crate::board::rewrite::render`]), everything else
/// byte for byte.
fn with_seal(
    bytes: Vec<u8>,
    fm: &Frontmatter,
    seal: &Seal,
) -> std::result::Result<Vec<u8>, String> {
    if fm.journal.as_ref() == Some(seal) {
        return Ok(bytes);
    }
    let doc = Document::parse_frontmatter_only(&bytes).map_err(|e| e.to_string())?;
    let mut sealed = fm.clone();
    sealed.journal = Some(seal.clone());
    let rendered = crate::board::rewrite::render(&doc.fm_text, fm, &sealed);
    let bom = if doc.bom { document::BOM.len() } else { 0 };
    let first_end = memchr::memchr(b'\n', &bytes[bom..])
        .map(|p| bom + p + 1)
        .ok_or("the frontmatter's first line has no end")?;
    let fm_end = first_end + doc.fm_text.len();
    let text = doc.eol.apply(&rendered.text);
    let mut out = Vec::with_capacity(bytes.len() + text.len() + 16);
    out.extend_from_slice(&bytes[..first_end]);
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(&bytes[fm_end..]);
    Ok(out)
}

/// The usual case, found from the end of the file without parsing the body: the last level-2
/// heading is `## Journal` and only records and blank lines follow it. (A heading inside a
/// code fence cannot be followed by records alone: the fence would never close, and such a
/// file is refused before it gets here.) The file's line ending and the number of records, when
/// so.
fn journal_is_last(bytes: &[u8]) -> Option<(&'static str, u64, usize)> {
    let heading = format!("## {SECTION}");
    let blank = |l: &[u8]| l.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
    // One pass backwards, line by line (line ends found with memrchr): on a board whose journal
    // is a megabyte, searching for the heading and then splitting the records byte by byte was
    // most of a write's journal work.
    let mut end = bytes.len();
    let mut records = 0;
    loop {
        let start = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |p| p + 1);
        let line = &bytes[start..end];
        if start > 0
            && let Some(rest) = line.strip_prefix(heading.as_bytes())
            && blank(rest)
        {
            let eol = if rest.ends_with(b"\r") { "\r\n" } else { "\n" };
            return Some((eol, records, start));
        }
        let record = line.starts_with(RECORD_START.as_bytes());
        if !(record || blank(line)) || start == 0 {
            return None;
        }
        records += u64::from(record);
        end = start - 1;
    }
}

/// Any other case: parse the body, move the journal (and its records) to the end, or start it.
/// The file, its line ending and the number of records.
fn rebuild(bytes: &[u8]) -> std::result::Result<(Vec<u8>, &'static str, u64), String> {
    let doc = Document::parse(bytes).map_err(|e| e.to_string())?;
    let head_len = bytes.len() - doc.body.len();
    let eol = doc.eol.as_str();
    let sections = doc.sections();
    let journal = sections.iter().find(|s| s.name == SECTION);
    let mut body = doc.body.clone();
    let mut records = 0;
    match journal {
        Some(j) => {
            // The journal's heading and records stay together; whatever a raw write appended
            // after the last record (its own lines, or sections) moves before the journal, to
            // the end of the section it followed, as if the journal were not there.
            let text = &body[j.start..j.end];
            records = document::raw_lines(text)
                .filter(|l| l.starts_with(RECORD_START))
                .count() as u64;
            let records_end = document::raw_lines(text)
                .scan(0usize, |at, l| {
                    *at += l.len();
                    Some((*at, l))
                })
                .filter(|(_, l)| l.starts_with(RECORD_START))
                .map(|(end, _)| end)
                .last()
                .unwrap_or_else(|| text.find('\n').map_or(text.len(), |p| p + 1));
            let moved = format!("{}{}", &text[records_end..], &body[j.end..]);
            if !moved.trim().is_empty() {
                let journal_text = text[..records_end].to_string();
                let mut out = body[..j.start].to_string();
                out.push_str(moved.trim_start_matches(['\r', '\n']).trim_end());
                out.push_str(eol);
                out.push_str(eol);
                out.push_str(journal_text.trim_end());
                out.push_str(eol);
                body = out;
            } else if !body.ends_with('\n') {
                body.push_str(eol);
            }
        }
        None => {
            // Always one blank line more than the body had (two line ends when it has no final
            // one): what was written is the file up to the journal, less one line end.
            if !body.is_empty() {
                if !body.ends_with('\n') {
                    body.push_str(eol);
                }
                body.push_str(eol);
            }
            let _ = write!(body, "## {SECTION}{eol}{eol}");
        }
    }
    let mut out = Vec::with_capacity(head_len + body.len() + 400);
    out.extend_from_slice(&bytes[..head_len]);
    out.extend_from_slice(body.as_bytes());
    Ok((out, eol, records))
}

/// The last non-blank line of a file that ends with its journal section, when that line is a
/// record (not the heading).
fn records_tail(bytes: &[u8]) -> Option<&str> {
    let start = last_line_start(bytes)?;
    let line = std::str::from_utf8(&bytes[start..]).ok()?;
    let line = line.trim_end_matches(['\n', '\r']);
    line.starts_with(RECORD_START).then_some(line)
}

/// `validate`'s checks of the journal against the file: well-formed records, an unbroken chain,
/// the last record's phase the current one, and on a board of format 2 the seal (the journal
/// as the last write left it: as many records, the last one the one it sealed). Errors name the
/// line; a file changed since its last recorded write (by a program that ignores the lock) and
/// a section after the journal (which the next write moves back) are warnings.
pub fn check(bytes: &[u8], doc: &Document, parsed: &Parsed) -> (Vec<FieldError>, Vec<FieldError>) {
    check_with(Some(bytes), doc, parsed)
}

/// [`check`]'s errors and warnings but the one that compares the file with its last record's
/// `after`: what a writer checks of the board it found (the comparison would hash the whole
/// board once more, for a warning the writer does not give).
pub fn check_for_write(doc: &Document, parsed: &Parsed) -> (Vec<FieldError>, Vec<FieldError>) {
    check_with(None, doc, parsed)
}

fn check_with(
    bytes: Option<&[u8]>,
    doc: &Document,
    parsed: &Parsed,
) -> (Vec<FieldError>, Vec<FieldError>) {
    let fm = &parsed.fm;
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let err = |line: Option<u32>, message: String| FieldError {
        field: "journal".into(),
        line,
        message,
    };
    let lines = section_lines(doc);
    check_seal(parsed, lines.as_deref(), &mut errors, &mut warnings);
    let Some(lines) = lines else {
        return (errors, warnings);
    };
    let sections = doc.sections();
    // Text appended after the journal (by hand) hides and loses nothing, and the next write
    // moves the journal back to the end: said, not refused.
    if let Some(s) = sections.iter().find(|s| s.name == SECTION)
        && let Some(after) = sections.iter().find(|t| t.start > s.start)
    {
        warnings.push(err(
            Some(after.line),
            format!(
                "`## {}` follows `## {SECTION}`; the journal is the last section (the next write \
                 moves it back)",
                after.name
            ),
        ));
    }
    let mut records = Vec::with_capacity(lines.len());
    for (n, l) in &lines {
        match Record::parse(l, *n) {
            Err(m) => {
                errors.push(err(
                    Some(*n),
                    format!("{m}; journal records are written by pair only"),
                ));
                return (errors, warnings);
            }
            Ok(r) => records.push(r),
        }
    }
    // A repair records the journal as it stood, damage and all (its Decisions entry says what
    // was wrong), and its record lists the breaks of the chain it found: those are said, any
    // other break is an error.
    let mended: std::collections::HashMap<u32, u32> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.command == REPAIR)
        .flat_map(|(k, r)| {
            let at = r.line;
            r.mended
                .iter()
                .filter(move |p| (**p as usize) <= k)
                .map(move |p| (*p, at))
        })
        .collect();
    let mut prev_line: Option<&str> = None;
    for (i, (r, (n, l))) in records.iter().zip(&lines).enumerate() {
        let want = prev_line.map(link);
        if r.prev != want {
            let message = format!(
                "the chain is broken: prev={} but the record before it hashes to {} (a record \
                 was removed, reordered or edited)",
                r.prev.as_deref().unwrap_or("-"),
                want.as_deref().unwrap_or("- (this is the first record)")
            );
            match mended.get(&(i as u32 + 1)) {
                Some(at) => warnings.push(err(
                    Some(*n),
                    format!("{message}; the repair at line {at} recorded the journal as it stood"),
                )),
                None => errors.push(err(Some(*n), message)),
            }
        }
        prev_line = Some(l);
    }
    let last = records.pop();
    if let Some(r) = last {
        if r.to != fm.phase {
            errors.push(err(
                Some(r.line),
                format!(
                    "the last record leaves the board in {} but the frontmatter's phase is {}; \
                     the phase changed without a recorded write",
                    r.to, fm.phase
                ),
            ));
        }
        // The last record hashes the file without its own line: everything before it.
        if let Some(bytes) = bytes
            && let Some(pos) = last_line_start(bytes)
            && sha256_hex(&bytes[..pos]) != r.after
        {
            warnings.push(err(
                Some(r.line),
                "the file changed after its last recorded write (edited by a program that \
                 ignores pair's lock?); the next write records the current content"
                    .into(),
            ));
        }
    }
    (errors, warnings)
}

/// The seal of a board of format 2 against its journal's record lines (`None`: no `## Journal`
/// section): the journal holds exactly the records the last write left, the last one the
/// record it sealed. A board of format 1 carries no seal; one found there is not read.
fn check_seal(
    parsed: &Parsed,
    lines: Option<&[(u32, &str)]>,
    errors: &mut Vec<FieldError>,
    warnings: &mut Vec<FieldError>,
) {
    let fm = &parsed.fm;
    let line = parsed.line(SEAL_FIELD);
    let err = |line: Option<u32>, message: String| FieldError {
        field: SEAL_FIELD.into(),
        line,
        message,
    };
    let format = crate::board::format::of(fm);
    // A later format may seal its journal otherwise: it is read as far as this version can.
    if format > crate::board::format::CURRENT {
        return;
    }
    // A signed board stays signed: one whose format was lowered outside pair (so that its
    // signatures would not be checked) is named, whatever else it holds.
    if format < SIGNED_FROM && (lowered(fm) || lines.is_some_and(holds_signed)) {
        errors.push(err(
            parsed.line(crate::board::format::FIELD).or(line),
            format!(
                "this board's journal holds signed records (or its seal names a signed board's \
                 identity), and its format says {format}: a signed board is format {SIGNED_FROM} \
                 for good, and this one was lowered outside pair, so that its signatures would \
                 not be checked. Restore it from the board's history, or repair the board"
            ),
        ));
    }
    if format < SEALED_FROM {
        if fm.journal.is_some() {
            warnings.push(err(
                line,
                format!(
                    "a board of format {format} carries no seal of its journal, so this one is \
                     not read (`pair migrate BOARD` makes the board format {} and seals it)",
                    crate::board::format::CURRENT
                ),
            ));
        }
        return;
    }
    let Some(seal) = &fm.journal else {
        errors.push(err(
            parsed.line(crate::board::format::FIELD),
            format!(
                "a board of format {format} records its journal as the last write left it in \
                 `{SEAL_FIELD}`, and this one has none: the frontmatter was edited outside pair, \
                 so removed records cannot be told. Check `## {SECTION}` against the board's \
                 history and repair the board; the repair seals the journal as it stands"
            ),
        ));
        return;
    };
    if format >= SIGNED_FROM && seal.board.is_none() {
        errors.push(err(
            line,
            format!(
                "a signed board (format {format}) names its identity in `{SEAL_FIELD}.board`, \
                 which every record's signature covers, and this one has none: the frontmatter \
                 was edited outside pair. Restore it from the board's history, or repair the \
                 board"
            ),
        ));
    }
    let gone = lines.is_none();
    let lines = lines.unwrap_or_default();
    let found = lines.len() as u64;
    let last = lines.last();
    let at = |l: Option<&(u32, &str)>| l.map(|(n, _)| *n).or(line);
    if found < seal.records {
        let missing = seal.records - found;
        let what = if lines.is_empty() {
            format!(
                "`## {SECTION}` {}",
                if gone { "is gone" } else { "holds no record" }
            )
        } else {
            format!("`## {SECTION}` holds {found}")
        };
        errors.push(err(
            line,
            format!(
                "the last write left {} journal record{} and {what}: {missing} {} removed \
                 outside pair (the journal is append-only). Restore them from a copy or the \
                 board's history, or repair the board; the repair is recorded and seals the \
                 journal as it stands",
                seal.records,
                if seal.records == 1 { "" } else { "s" },
                if missing == 1 { "was" } else { "were" }
            ),
        ));
    } else if found > seal.records {
        let extra = found - seal.records;
        errors.push(err(
            at(lines.get(seal.records as usize)),
            format!(
                "the last write left {} journal record{}, and `## {SECTION}` holds {found}: \
                 {extra} {} added outside pair (pair adds each write's record itself). Remove \
                 {}, or repair the board",
                seal.records,
                if seal.records == 1 { "" } else { "s" },
                if extra == 1 { "was" } else { "were" },
                if extra == 1 { "it" } else { "them" }
            ),
        ));
    } else if let Some((n, l)) = last
        && digest(l) != seal.head
    {
        errors.push(err(
            Some(*n),
            format!(
                "the last record is not the one the last write sealed (`{SEAL_FIELD}.head` is \
                 {}, this record's digest is {}): it was replaced or edited outside pair. \
                 Restore it, or repair the board",
                seal.head,
                digest(l)
            ),
        ));
    }
}

/// Whether a board's seal names a signed board's identity.
fn lowered(fm: &Frontmatter) -> bool {
    fm.journal.as_ref().is_some_and(|s| s.board.is_some())
}

/// Whether a journal holds a signed record (a line with a `sig=` word).
fn holds_signed(lines: &[(u32, &str)]) -> bool {
    lines
        .iter()
        .any(|(_, l)| l.starts_with(RECORD_START) && l.contains(" sig="))
}

/// The records (1-based) of a file's journal whose `prev` does not match the record before
/// them, as a repair finds them (lines that are not records are left to `validate`).
fn chain_breaks(bytes: &[u8]) -> Vec<u32> {
    let Ok(doc) = Document::parse(bytes) else {
        return vec![];
    };
    let lines = section_lines(&doc).unwrap_or_default();
    links(&lines)
        .enumerate()
        .filter(|(_, (prev, want))| prev.is_some_and(|p| p != want))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// Each record line's `prev=` word (`None` when it has none) beside the link the record before
/// it makes (`-` for the first), read from the words alone, without parsing the records.
fn links<'a>(lines: &'a [(u32, &'a str)]) -> impl Iterator<Item = (Option<&'a str>, String)> + 'a {
    let befores = std::iter::once(None).chain(lines.iter().map(|(_, l)| Some(*l)));
    lines.iter().zip(befores).map(|((_, l), before)| {
        let prev = l.rsplit(' ').next().and_then(|w| w.strip_prefix("prev="));
        (prev, before.map_or_else(|| "-".to_string(), link))
    })
}

/// The record lines of one version of a board (from a git ref's history), read without judging
/// the rest of it; `None` when the bytes are not a board.
pub fn record_lines(bytes: &[u8]) -> Option<Vec<String>> {
    let doc = Document::parse(bytes).ok()?;
    Some(
        section_lines(&doc)
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, l)| l.starts_with(RECORD_START))
            .map(|(_, l)| l.to_string())
            .collect(),
    )
}

/// Whether a later version of a board keeps the journal of an earlier one (two versions in a
/// git ref's history, each commit one write): `None` when it holds the earlier one's last record
/// at its place (the chain then holds every record before it); else what was lost, in words. (A
/// version written by a repair, [`is_repair`], may have mended the journal: its callers say so
/// rather than refuse it.)
pub fn lost(earlier: &[String], later: &[String]) -> Option<String> {
    let n = earlier.len();
    if n == 0 {
        return None;
    }
    match later.get(n - 1) {
        Some(l) if *l == earlier[n - 1] => None,
        Some(_) => Some(format!(
            "record {n} of the {n} it held before is not the same record now (replaced)"
        )),
        None => Some(format!(
            "{} of the {n} records it held before {} gone ({} remain)",
            n - later.len(),
            if n - later.len() == 1 { "is" } else { "are" },
            later.len()
        )),
    }
}

/// The command a repair's record names (`pair write --repair`).
pub const REPAIR: &str = "repair";

/// Whether a version of a board was written by a repair: its last record is one.
pub fn is_repair(lines: &[String]) -> bool {
    lines
        .last()
        .and_then(|l| Record::parse(l, 0).ok())
        .is_some_and(|r| r.command == REPAIR)
}

/// Whether a later version of a board records a repair that an earlier one does not hold (two
/// versions in a git ref's history): a repair was recorded after the earlier version.
pub fn repaired_after(earlier: &[String], later: &[String]) -> bool {
    let held: std::collections::HashSet<&String> = earlier.iter().collect();
    later
        .iter()
        .filter(|l| !held.contains(l))
        .any(|l| Record::parse(l, 0).is_ok_and(|r| r.command == REPAIR))
}

/// Whether `line` (a file's last line, from [`last_line_start`]) is a journal record whose
/// `after` is `prefix_sha256`, the hash of everything before it: the file is then exactly what
/// that record's write left.
pub fn records_after(line: &[u8], prefix_sha256: &str) -> bool {
    let Ok(line) = std::str::from_utf8(line) else {
        return false;
    };
    let line = line.trim_end_matches(['\n', '\r']);
    line.starts_with(RECORD_START) && Record::parse(line, 0).is_ok_and(|r| r.after == prefix_sha256)
}

/// What a write checks of the journal of a board that is byte for byte what its last record's
/// write left ([`crate::law::validate::check_found_as`]), in place of [`check`]'s whole
/// reading: the board has a seal (format 2) and it holds (the number of records, the last
/// record's digest), there is one `## Journal` and it is the last section, every record is
/// chained to the one before it, and the last one is well formed and ends in the frontmatter's
/// phase. What it does not read again is the words of the records before the last, which the
/// writes that added them checked and the chain still pins. `false` whenever any of it fails:
/// the whole check then says what is wrong.
pub fn tail_holds(doc: &Document, parsed: &Parsed) -> bool {
    let fm = &parsed.fm;
    let format = crate::board::format::of(fm);
    if !(SEALED_FROM..=crate::board::format::CURRENT).contains(&format) {
        return false;
    }
    let Some(seal) = &fm.journal else {
        return false;
    };
    let sections = doc.sections();
    if sections.iter().filter(|s| s.name == SECTION).count() != 1
        || sections.last().is_none_or(|s| s.name != SECTION)
    {
        return false;
    }
    let Some(lines) = section_lines(doc) else {
        return false;
    };
    let Some((n, last)) = lines.last() else {
        return false;
    };
    if lines.len() as u64 != seal.records || digest(last) != seal.head {
        return false;
    }
    // A board below the signed format with signed records was lowered: the whole check says so.
    if format < SIGNED_FROM && (lowered(fm) || holds_signed(&lines)) {
        return false;
    }
    links(&lines).all(|(prev, want)| prev == Some(want.as_str()))
        && Record::parse(last, *n).is_ok_and(|r| r.to == fm.phase)
}

/// Where the last non-empty line of a file starts.
pub fn last_line_start(bytes: &[u8]) -> Option<usize> {
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    if end == 0 {
        return None;
    }
    Some(memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |p| p + 1))
}

#[cfg(test)]
mod tests {
    use super::journal_is_last;

    #[test]
    fn the_journal_is_found_last_only_when_records_and_blank_lines_follow_its_heading() {
        let rec = "- at=2026-01-01T00:00:00Z by=a cmd=note";
        let lf = format!("---\nphase: PLANNING\n---\n## Notes\nx\n\n## Journal\n\n{rec}\n{rec}\n");
        let at = |s: &str| s.find("## Journal").unwrap();
        assert_eq!(journal_is_last(lf.as_bytes()), Some(("\n", 2, at(&lf))));
        let crlf = lf.replace('\n', "\r\n");
        assert_eq!(
            journal_is_last(crlf.as_bytes()),
            Some(("\r\n", 2, at(&crlf)))
        );
        // No final line end, trailing blanks.
        let open = format!("---\n---\n## Journal  \n{rec}\n  \t\n{rec}");
        assert_eq!(journal_is_last(open.as_bytes()), Some(("\n", 2, at(&open))));
        let empty = "---\n---\n## Notes\n\n## Journal\n\n";
        assert_eq!(
            journal_is_last(empty.as_bytes()),
            Some(("\n", 0, at(empty)))
        );
        for not_last in [
            format!("---\n---\n## Journal\n{rec}\n## Notes\n"),
            format!("---\n---\n## Journal\n{rec}\ntext\n"),
            format!("---\n---\n## Journals\n{rec}\n"),
            format!("---\n---\n## Notes\n{rec}\n"),
            format!("## Journal\n{rec}\n"),
            String::new(),
        ] {
            assert_eq!(journal_is_last(not_last.as_bytes()), None, "{not_last:?}");
        }
    }

    #[test]
    fn session_and_model_round_trip_and_are_read_wherever_they_stand() {
        use super::Record;
        let h = "0".repeat(64);
        let tail = format!("before=- after={h} prev=-");
        let head = "- at=2026-01-01T00:00:00.000Z by=a cmd=note phase=PLANNING>PLANNING turn=a \
                    wait_us=1 uid=0 host=h pid=2";
        let line = format!("{head} session=s-1 model=m/2 {tail}");
        let r = Record::parse(&line, 1).unwrap();
        assert_eq!(r.session.as_deref(), Some("s-1"));
        assert_eq!(r.model.as_deref(), Some("m/2"));
        assert_eq!(r.render(), line);
        // Elsewhere in the record, as another writer may put them: read the same.
        let moved = format!("- model=m/2 {} {tail} session=s-1", &head[2..]);
        let r = Record::parse(&moved, 1).unwrap();
        assert_eq!(
            (r.session.as_deref(), r.model.as_deref()),
            (Some("s-1"), Some("m/2"))
        );
        // Without them, nothing is recorded.
        let r = Record::parse(&format!("{head} {tail}"), 1).unwrap();
        assert_eq!((r.session, r.model), (None, None));
        assert!(Record::parse(&format!("{head} session= {tail}"), 1).is_err());
    }
}
