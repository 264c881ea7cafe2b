//! What an agent's own transcript says it spent, and where a write left off reading it.
//!
//! An agent names its transcript once (`--transcript FILE`, `PAIR_TRANSCRIPT`): the JSON-lines
//! log its program writes, with per-message usage. Every write by that agent then records, in
//! its journal record, the tokens the transcript gained since the agent's previous write on the
//! board (`tokens=`) and where reading stopped (`transcript=OFFSET:HEAD`, a [`Position`]), so
//! the next write reads only what came after. Nothing of the file's content is recorded: the
//! offset and 8 hex digits of the SHA-256 of the file's first bytes, which tell a transcript
//! replaced or truncated since.
//!
//! Two formats are read, each line recognised by its shape ([`tally`]):
//!
//! * Claude Code's session logs (`~/.claude/projects/<dir>/<session>.jsonl`): a line of `type`
//!   `assistant` carries `message.usage` (`input_tokens`, `output_tokens`,
//!   `cache_creation_input_tokens`, `cache_read_input_tokens`); one message is written over
//!   several lines sharing `message.id`, each with the usage so far, so a message counts once,
//!   with its largest output.
//! * Codex's rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): a line of `type`
//!   `event_msg` whose `payload.type` is `token_count` carries `payload.info.last_token_usage`
//!   (the turn's usage) and `payload.info.total_token_usage` (the session's so far); an event
//!   repeated with the same total counts once.
//!
//! Any other line (another type, a malformed one, another program's) is skipped and counted as
//! skipped: a transcript never stops a write.

use std::collections::HashMap;

use serde_json::Value;

/// The journal word a write records where it left its writer's transcript.
pub const WORD: &str = "transcript";

/// How many bytes of a transcript's start its fingerprint covers (fewer when the position is
/// before them).
pub const HEAD_BYTES: u64 = 1024;

/// Where a write stopped reading its writer's transcript: the byte offset after the last
/// complete line read, and the fingerprint of the file's first `min(offset, HEAD_BYTES)` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub offset: u64,
    /// 8 hex digits of the SHA-256 of the file's first bytes ([`fingerprint`]).
    pub head: String,
}

impl Position {
    /// The word's value, `OFFSET:HEAD`.
    pub fn value(&self) -> String {
        format!("{}:{}", self.offset, self.head)
    }

    /// Read a `transcript=` value.
    pub fn parse(v: &str) -> std::result::Result<Position, String> {
        let bad = || format!("transcript={v:?} is not OFFSET:8 hex digits");
        let (offset, head) = v.split_once(':').ok_or_else(bad)?;
        let offset = offset.parse::<u64>().map_err(|_| bad())?;
        if head.len() != 8 || !head.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        Ok(Position {
            offset,
            head: head.to_ascii_lowercase(),
        })
    }

    /// How many bytes of the file's start the fingerprint covers.
    pub fn head_len(&self) -> u64 {
        self.offset.min(HEAD_BYTES)
    }
}

/// The fingerprint of a transcript's first bytes.
pub fn fingerprint(head: &[u8]) -> String {
    crate::text::sha256_hex(head)[..8].to_string()
}

/// The position an agent's previous write on a board left: the `transcript=` word of the last
/// journal record by `agent` that has one, read backwards from the end of the board (the
/// journal is its last section), stopping at the journal's heading.
pub fn previous(board: &[u8], agent: &str) -> Option<Position> {
    let by = format!(" by={agent} ");
    let word = format!(" {WORD}=");
    let mut end = board.len();
    while end > 0 {
        let start = memchr::memrchr(b'\n', &board[..end.saturating_sub(1)]).map_or(0, |i| i + 1);
        let line = &board[start..end];
        end = start;
        if line.starts_with(b"## ") {
            return None;
        }
        if !line.starts_with(b"- at=") {
            continue;
        }
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        if !line.contains(&by) {
            continue;
        }
        if let Some(i) = line.find(&word) {
            let rest = &line[i + word.len()..];
            let v = rest.split([' ', '\n', '\r']).next().unwrap_or_default();
            if let Ok(p) = Position::parse(v) {
                return Some(p);
            }
        }
    }
    None
}

/// What the lines of a transcript read add up to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub tokens: u64,
    /// Lines that carried usage in a known format.
    pub counted: u64,
    /// Lines that looked like usage but could not be read (not JSON, fields of the wrong type).
    pub malformed: u64,
    /// The formats seen, in the order met.
    pub formats: Vec<&'static str>,
}

/// One Claude Code message's usage (the line with the largest output of those sharing its id).
#[derive(Debug, Clone, Copy, Default)]
struct Message {
    output: u64,
    total: u64,
}

/// Tokens of complete lines (each ending in `\n`), in either format. Lines that are neither
/// format's usage are skipped; those that look like usage and are not readable are counted as
/// malformed.
#[derive(Default)]
pub struct Reader {
    messages: HashMap<String, Message>,
    order: Vec<String>,
    codex: u64,
    last_codex_total: Option<Value>,
    counted: u64,
    malformed: u64,
    formats: Vec<&'static str>,
}

impl Reader {
    /// Read one line (without its ending).
    pub fn line(&mut self, line: &[u8]) {
        // Most lines carry no usage (tool results, prompts): they are not parsed.
        let claude = memchr::memmem::find(line, b"\"usage\"").is_some();
        let codex = memchr::memmem::find(line, b"\"token_count\"").is_some();
        if !claude && !codex {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            self.malformed += 1;
            return;
        };
        let kind = v.get("type").and_then(Value::as_str);
        if kind == Some("assistant") && v.pointer("/message/usage").is_some() {
            match claude_usage(&v) {
                Some((id, m)) => {
                    self.seen("claude-code");
                    self.counted += 1;
                    match self.messages.get_mut(&id) {
                        Some(old) if old.output >= m.output => {}
                        Some(old) => *old = m,
                        None => {
                            self.order.push(id.clone());
                            self.messages.insert(id, m);
                        }
                    }
                }
                None => self.malformed += 1,
            }
        } else if kind == Some("event_msg")
            && v.pointer("/payload/type").and_then(Value::as_str) == Some("token_count")
        {
            let info = v.pointer("/payload/info");
            // An event with no usage yet (`info: null`: rate limits only) counts nothing.
            let Some(info) = info.filter(|i| !i.is_null()) else {
                return;
            };
            let total = info.get("total_token_usage").cloned();
            if total.is_some() && total == self.last_codex_total {
                return;
            }
            match info.get("last_token_usage").and_then(codex_total) {
                Some(t) => {
                    self.seen("codex");
                    self.counted += 1;
                    self.codex = self.codex.saturating_add(t);
                    self.last_codex_total = total;
                }
                None => self.malformed += 1,
            }
        }
    }

    fn seen(&mut self, format: &'static str) {
        if !self.formats.contains(&format) {
            self.formats.push(format);
        }
    }

    /// The sum of what was read.
    pub fn finish(self) -> Tally {
        let claude = self
            .order
            .iter()
            .filter_map(|id| self.messages.get(id))
            .fold(0u64, |s, m| s.saturating_add(m.total));
        Tally {
            tokens: claude.saturating_add(self.codex),
            counted: self.counted,
            malformed: self.malformed,
            formats: self.formats,
        }
    }
}

/// A Claude Code assistant line's message id and usage: input, cache creation, cache reads and
/// output, each absent one 0. `None` when a field is not a number or the line has no id.
fn claude_usage(v: &Value) -> Option<(String, Message)> {
    let usage = v.pointer("/message/usage")?.as_object()?;
    let id = v
        .pointer("/message/id")
        .and_then(Value::as_str)
        .or_else(|| v.get("requestId").and_then(Value::as_str))
        .or_else(|| v.get("uuid").and_then(Value::as_str))?
        .to_string();
    let field = |k: &str| -> Option<u64> {
        match usage.get(k) {
            None | Some(Value::Null) => Some(0),
            Some(n) => n.as_u64(),
        }
    };
    let output = field("output_tokens")?;
    let total = [
        field("input_tokens")?,
        field("cache_creation_input_tokens")?,
        field("cache_read_input_tokens")?,
        output,
    ]
    .into_iter()
    .fold(0u64, u64::saturating_add);
    Some((id, Message { output, total }))
}

/// A Codex usage object's total: `total_tokens`, else input plus output.
fn codex_total(u: &Value) -> Option<u64> {
    if let Some(t) = u.get("total_tokens") {
        return t.as_u64();
    }
    let input = u.get("input_tokens")?.as_u64()?;
    let output = u.get("output_tokens")?.as_u64()?;
    Some(input.saturating_add(output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_reads_back() {
        let p = Position {
            offset: 1234,
            head: "0a1b2c3d".into(),
        };
        assert_eq!(Position::parse(&p.value()), Ok(p));
        assert!(Position::parse("12").is_err());
        assert!(Position::parse("x:0a1b2c3d").is_err());
        assert!(Position::parse("12:0a1b").is_err());
    }

    #[test]
    fn the_previous_position_is_the_agents_last() {
        let board = b"---\nx\n---\n## Journal\n\n- at=1 by=alice cmd=a transcript=10:0a1b2c3d before=-\n- at=2 by=bob cmd=b transcript=20:11111111 before=-\n- at=3 by=alice cmd=c before=-\n";
        assert_eq!(previous(board, "alice").unwrap().offset, 10);
        assert_eq!(previous(board, "bob").unwrap().offset, 20);
        assert_eq!(previous(board, "carol"), None);
    }

    #[test]
    fn a_claude_message_counts_once_with_its_largest_output() {
        let mut r = Reader::default();
        r.line(br#"{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}"#);
        r.line(br#"{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":50}}}"#);
        r.line(br#"{"type":"user","message":{"content":"the usage of x"}}"#);
        r.line(b"{not json \"usage\"");
        let t = r.finish();
        assert_eq!(t.tokens, 163);
        assert_eq!(t.malformed, 1);
        assert_eq!(t.formats, vec!["claude-code"]);
    }

    #[test]
    fn a_codex_event_repeated_counts_once() {
        let mut r = Reader::default();
        let e = br#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":120},"last_token_usage":{"input_tokens":100,"output_tokens":20,"total_tokens":120}}}}"#;
        r.line(br#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#);
        r.line(e);
        r.line(e);
        let t = r.finish();
        assert_eq!(t.tokens, 120);
        assert_eq!(t.formats, vec!["codex"]);
    }
}
