//! A small, span-carrying YAML tree for the frontmatter.
//!
//! The frontmatter is parsed by `serde-saphyr` into [`Node`]s rather than straight into the typed
//! model, for three reasons: every validation error must name the *line* of the offending value;
//! validation must report *all* problems at once instead of stopping at serde's first type error;
//! and keys this version does not know must survive a round trip untouched. The typed model
//! (`crate::board::frontmatter`) is then built from this tree by hand.
//!
//! Parsing runs with tight budgets (nodes, depth, alias expansion) and rejects duplicate keys, so
//! a hostile frontmatter costs bounded time and memory.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_saphyr::Spanned;

/// The largest frontmatter accepted, in bytes (SPEC §2).
pub const MAX_FRONTMATTER_BYTES: usize = 1024 * 1024;

/// A YAML value with the 1-based line it started on (0 when unknown).
///
/// Equality compares values only: the same data emitted elsewhere in a file is the same data.
#[derive(Debug, Clone)]
pub struct Node {
    pub value: Value,
    pub line: u32,
    /// For a top-level entry the model does not know: its exact source text (`key: value`
    /// lines, with the comments before it), re-emitted verbatim so that tags, comments and
    /// number spellings survive a write. Set only when that text parses alone to this value.
    pub raw: Option<String>,
}

impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        self.value == other.value
    }
}

/// The shapes a frontmatter value can take. Mapping keys are strings; order is kept.
#[derive(Debug, Clone)]
pub enum Value {
    Null,
    Bool(bool),
    /// Wide enough for every YAML integer up to `u64::MAX` and down to `i64::MIN`.
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

/// Floats compare by bits, so a NaN equals itself and an unchanged file compares equal.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Seq(a), Value::Seq(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            _ => false,
        }
    }
}

impl Value {
    /// A short human name of the value's type, used in "expected X, found Y" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "number",
            Value::Str(_) => "string",
            Value::Seq(_) => "list",
            Value::Map(_) => "mapping",
        }
    }

    /// A compact rendering of the value for error messages (truncated for long values).
    pub fn describe(&self) -> String {
        let text = match self {
            Value::Null => "null".to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Str(s) => format!("{s:?}"),
            Value::Seq(_) => "a list".to_string(),
            Value::Map(_) => "a mapping".to_string(),
        };
        if text.chars().count() > 60 {
            let cut: String = text.chars().take(57).collect();
            format!("{cut}...")
        } else {
            text
        }
    }
}

/// A YAML syntax or budget error, with the line it was found on when the parser knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub line: Option<u32>,
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Parse frontmatter text into a tree. `line_offset` is added to every line so the lines refer to
/// the whole file, not the frontmatter alone.
pub fn parse(text: &str, line_offset: u32) -> Result<Node, YamlError> {
    parse_with(text, line_offset, false).map(|(node, _)| node)
}

/// [`parse`] for a board's frontmatter, its `ledger` read straight into its type when it is in
/// the form pair writes (then the tree holds `ledger: null` in its place, see
/// [`super::yaml_plain::parse_frontmatter`]); [`crate::board::frontmatter::from_parts`] takes
/// both.
pub fn parse_frontmatter(
    text: &str,
    line_offset: u32,
) -> Result<(Node, Option<super::ledger::form::TypedLedger>), YamlError> {
    parse_with(text, line_offset, true)
}

fn parse_with(
    text: &str,
    line_offset: u32,
    typed_ledger: bool,
) -> Result<(Node, Option<super::ledger::form::TypedLedger>), YamlError> {
    if text.len() > MAX_FRONTMATTER_BYTES {
        return Err(YamlError {
            line: None,
            message: format!(
                "frontmatter is {} bytes; the limit is {} bytes (1 MiB)",
                text.len(),
                MAX_FRONTMATTER_BYTES
            ),
        });
    }
    if text.trim().is_empty() {
        let node = Node {
            value: Value::Null,
            line: line_offset + 1,
            raw: None,
        };
        return Ok((node, None));
    }
    let plain = if typed_ledger {
        super::yaml_plain::parse_frontmatter(text, line_offset)
    } else {
        super::yaml_plain::parse(text, line_offset).map(|node| (node, None))
    };
    if let Some(read) = plain {
        return Ok(read);
    }
    parse_general(text, line_offset).map(|node| (node, None))
}

/// [`parse`] by the general YAML parser alone, whatever the form of the text (the reference
/// [`super::yaml_plain`] is checked against).
pub fn parse_general(text: &str, line_offset: u32) -> Result<Node, YamlError> {
    if text.trim().is_empty() {
        return parse(text, line_offset);
    }
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = 32;
    budget.max_nodes = 100_000;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_documents = 1;
    budget.max_events = 200_000;
    let mut alias_limits = serde_saphyr::options::AliasLimits::default();
    alias_limits.max_total_replayed_events = 10_000;
    alias_limits.max_replay_stack_depth = 16;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits = alias_limits;
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    options.with_snippet = false;
    options.strict_booleans = true;
    options.legacy_octal_numbers = false;
    options.leading_zero_numbers_as_strings = true;
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    let spanned: Spanned<Value> =
        serde_saphyr::from_str_with_options(text, options).map_err(|e| {
            let line = e
                .location()
                .map(|l| l.line())
                .filter(|l| *l > 0)
                .map(|l| l as u32 + line_offset);
            YamlError {
                line,
                message: clean_message(&e.to_string()),
            }
        })?;
    let mut node = Node {
        value: spanned.value,
        line: spanned.referenced.line() as u32,
        raw: None,
    };
    shift_lines(&mut node, line_offset);
    Ok(node)
}

/// saphyr's messages sometimes carry their own location suffix; we report lines ourselves.
fn clean_message(msg: &str) -> String {
    let first = msg.lines().next().unwrap_or(msg).trim();
    // Locations inside the message are relative to the frontmatter; the caller reports the
    // file line instead.
    let first = match first.find(" at line ") {
        Some(i) => &first[..i],
        None => first,
    };
    if first.starts_with("budget breached") {
        let what = if first.contains("Depth") {
            "it is nested more than 32 levels deep"
        } else if first.contains("Documents") {
            "it holds more than one YAML document (a `---` or `...` line inside the frontmatter?)"
        } else if first.contains("Alias") || first.contains("Anchor") || first.contains("Replay") {
            "its aliases expand too much (an alias bomb?)"
        } else {
            "it is too large or complex"
        };
        return format!("the frontmatter exceeds a safety limit: {what}");
    }
    if let Some(rest) = first.strip_prefix("duplicate mapping key: ") {
        let key = rest
            .split(", set DuplicateKeyPolicy")
            .next()
            .unwrap_or(rest);
        return format!("duplicate key `{key}`: each key may appear only once in a mapping");
    }
    first.to_string()
}

fn shift_lines(node: &mut Node, offset: u32) {
    if node.line > 0 {
        node.line += offset;
    }
    match &mut node.value {
        Value::Seq(items) => items.iter_mut().for_each(|n| shift_lines(n, offset)),
        Value::Map(entries) => entries.iter_mut().for_each(|(_, n)| shift_lines(n, offset)),
        _ => {}
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

fn spanned_node(s: Spanned<Value>) -> Node {
    Node {
        value: s.value,
        line: s.referenced.line() as u32,
        raw: None,
    }
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        match i128::try_from(v) {
            Ok(i) => Ok(Value::Int(i)),
            Err(_) => Ok(Value::Float(v as f64)),
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Value>>()? {
            items.push(spanned_node(item));
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Node)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<Spanned<Value>>()? {
            let key_line = key.referenced.line();
            let key = match key.value {
                Value::Str(s) => s,
                Value::Int(i) => i.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Null => "null".to_string(),
                other => {
                    return Err(de::Error::custom(format!(
                        "mapping keys must be plain words, found {} at line {}",
                        other.kind(),
                        key.referenced.line()
                    )));
                }
            };
            // `1` and "1" are different YAML keys but the same field name here.
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "duplicate key `{key}` (line {key_line}): each key may appear only once; \
                     `1` and \"1\" count as the same key"
                )));
            }
            let value = map.next_value::<Spanned<Value>>()?;
            entries.push((key, spanned_node(value)));
        }
        Ok(Value::Map(entries))
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i128(*i),
            Value::Float(f) => s.serialize_f64(*f),
            Value::Str(v) => s.serialize_str(v),
            Value::Seq(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Map(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Split frontmatter text into its top-level entries: each starts at a line that begins a key
/// in column 0 and runs to the next such line; comment and blank lines before a key belong to
/// it. Lines are kept exactly (with `\n` endings).
pub(crate) fn top_level_segments(text: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut pending = String::new();
    for line in text.split_inclusive('\n') {
        let starts_entry = match line.as_bytes().first() {
            None | Some(b' ' | b'\t' | b'\r' | b'\n' | b'#') => false,
            Some(b'-') => !(line.starts_with("- ") || line.trim_end() == "-"),
            Some(_) => true,
        };
        let filler = line.trim().is_empty() || line.starts_with('#');
        if starts_entry {
            if !current.is_empty() {
                segments.push(std::mem::take(&mut current));
            }
            current.push_str(&pending);
            pending.clear();
            current.push_str(line);
        } else if filler {
            pending.push_str(line);
        } else {
            current.push_str(&pending);
            pending.clear();
            current.push_str(line);
        }
    }
    current.push_str(&pending);
    if !current.is_empty() {
        segments.push(current);
    }
    segments
}

/// The key a segment's first entry line names, when it is a plain word (a fast pre-filter).
fn plain_key(segment: &str) -> Option<&str> {
    let line = segment
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))?;
    let key = line.split_once(':')?.0;
    key.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        .then_some(key)
}

/// Record the exact source text of the top-level entries `wanted` selects (the keys the model
/// does not know), so they can be written back byte for byte. An entry whose text does not parse
/// alone to the same value (it uses an anchor defined elsewhere, say) keeps `raw: None` and is
/// written back by value.
pub fn attach_raw(node: &mut Node, text: &str, wanted: impl Fn(&str) -> bool) {
    let Value::Map(entries) = &mut node.value else {
        return;
    };
    if !entries.iter().any(|(k, _)| wanted(k)) {
        return;
    }
    let text = text.replace("\r\n", "\n");
    for segment in top_level_segments(&text) {
        if plain_key(&segment).is_some_and(|k| !wanted(k)) {
            continue;
        }
        let Ok(Node {
            value: Value::Map(mut alone),
            ..
        }) = parse(&segment, 0)
        else {
            continue;
        };
        if alone.len() != 1 {
            continue;
        }
        let (key, value) = alone.remove(0);
        if !wanted(&key) {
            continue;
        }
        if let Some((_, target)) = entries.iter_mut().find(|(k, _)| *k == key)
            && target.value == value.value
        {
            let mut raw = segment;
            if !raw.ends_with('\n') {
                raw.push('\n');
            }
            target.raw = Some(raw);
        }
    }
}

/// Render a string as a YAML scalar: plain when that is unambiguous, double-quoted otherwise.
///
/// Plain output is limited to a conservative character set and excludes every word YAML 1.1 or
/// 1.2 could read as something other than a string, so emit → parse always returns the same
/// string.
pub fn scalar(s: &str) -> String {
    if is_plain_safe(s) {
        s.to_string()
    } else {
        quoted(s)
    }
}

/// Always double-quoted, with every character YAML does not allow raw (C0 and C1 controls,
/// DEL, the BOM, U+FFFE/U+FFFF) escaped, so whatever was parsed can be written back.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_quoted(&mut out, s);
    out
}

/// [`quoted`], appended to `out`.
pub fn push_quoted(out: &mut String, s: &str) {
    // Printable ASCII without a quote or a backslash, the common case, is written as it is.
    if s.bytes()
        .all(|b| matches!(b, b' '..=b'~') && b != b'"' && b != b'\\')
    {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if yaml_printable(c) => out.push(c),
            c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
}

/// YAML's printable set (c-printable), less the BOM.
pub(crate) fn yaml_printable(c: char) -> bool {
    matches!(c as u32,
        0x20..=0x7E | 0x85 | 0xA0..=0xD7FF | 0xE000..=0xFEFE | 0xFF00..=0xFFFD | 0x10000..=0x10FFFF)
}

fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.bytes().next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == b'/' || first == b'_') {
        return false;
    }
    if !s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-'))
    {
        return false;
    }
    const RESERVED: &[&str] = &["null", "true", "false", "yes", "no", "on", "off", "y", "n"];
    !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(s))
}

/// Emit an arbitrary value as the value part of `key: <value>` at the given indentation, one
/// string ending in a newline. Scalars stay on the key's line; collections go below it.
pub fn emit_entry(out: &mut String, indent: usize, key: &str, node: &Node) {
    push_pad(out, indent);
    emit_entry_rest(out, indent, key, node);
}

fn push_pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// [`emit_entry`] from the key on (the indentation is already written).
fn emit_entry_rest(out: &mut String, indent: usize, key: &str, node: &Node) {
    push_scalar(out, key);
    match &node.value {
        Value::Seq(items) if items.is_empty() => out.push_str(": []\n"),
        Value::Map(entries) if entries.is_empty() => out.push_str(": {}\n"),
        Value::Seq(items) => {
            out.push_str(":\n");
            for item in items {
                emit_seq_item(out, indent + 2, item);
            }
        }
        Value::Map(entries) => {
            out.push_str(":\n");
            for (k, v) in entries {
                emit_entry(out, indent + 2, k, v);
            }
        }
        Value::Str(s) => {
            out.push_str(": ");
            push_scalar(out, s);
            out.push('\n');
        }
        other => {
            out.push_str(": ");
            out.push_str(&emit_scalar(other));
            out.push('\n');
        }
    }
}

/// [`scalar`], appended to `out`.
pub(crate) fn push_scalar(out: &mut String, s: &str) {
    if is_plain_safe(s) {
        out.push_str(s);
    } else {
        push_quoted(out, s);
    }
}

fn emit_seq_item(out: &mut String, indent: usize, node: &Node) {
    push_pad(out, indent);
    out.push_str("- ");
    match &node.value {
        Value::Seq(items) if !items.is_empty() => {
            // Nested lists are rare in frontmatter; flow style keeps them on one line.
            out.push_str(&flow(&node.value));
            out.push('\n');
        }
        Value::Map(entries) if !entries.is_empty() => {
            for (i, (k, v)) in entries.iter().enumerate() {
                // The first entry sits on the item's line, after "- ".
                if i == 0 {
                    emit_entry_rest(out, indent + 2, k, v);
                } else {
                    emit_entry(out, indent + 2, k, v);
                }
            }
        }
        other => {
            out.push_str(&flow(other));
            out.push('\n');
        }
    }
}

/// One-line (flow) rendering of any value.
pub fn flow(v: &Value) -> String {
    match v {
        Value::Seq(items) => {
            let parts: Vec<String> = items.iter().map(|n| flow(&n.value)).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Map(entries) => {
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, n)| format!("{}: {}", quoted(k), flow(&n.value)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => emit_scalar(other),
    }
}

fn emit_scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => {
            if f.is_nan() {
                ".nan".to_string()
            } else if f.is_infinite() {
                if *f > 0.0 { ".inf" } else { "-.inf" }.to_string()
            } else {
                let s = format!("{f:?}");
                if s.contains(['.', 'e', 'E']) {
                    s
                } else {
                    format!("{s}.0")
                }
            }
        }
        Value::Str(s) => scalar(s),
        Value::Seq(_) | Value::Map(_) => flow(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_based_and_offset() {
        let node = parse("a: 1\nb:\n  c: x\n", 1).unwrap();
        let Value::Map(entries) = &node.value else {
            panic!("not a map")
        };
        assert_eq!(entries[0].1.line, 2);
        let Value::Map(inner) = &entries[1].1.value else {
            panic!("not a map")
        };
        assert_eq!(inner[0].1.line, 4);
    }

    #[test]
    fn quoted_numbers_stay_strings() {
        let node = parse("a: '1'\nb: 1\n", 0).unwrap();
        let Value::Map(e) = node.value else { panic!() };
        assert_eq!(e[0].1.value, Value::Str("1".into()));
        assert_eq!(e[1].1.value, Value::Int(1));
    }

    #[test]
    fn duplicate_keys_are_rejected() {
        let err = parse("a: 1\na: 2\n", 0).unwrap_err();
        assert!(err.message.to_lowercase().contains("duplicate"), "{err:?}");
    }

    #[test]
    fn alias_bomb_is_rejected() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        assert!(parse(&text, 0).is_err());
    }

    #[test]
    fn scalar_round_trips_ambiguous_words() {
        for s in [
            "null",
            "yes",
            "1",
            "1e3",
            "a: b",
            "",
            " x",
            "/abs/path",
            "alice",
            "0x10",
        ] {
            let yaml = format!("k: {}\n", scalar(s));
            let node = parse(&yaml, 0).unwrap();
            let Value::Map(e) = node.value else { panic!() };
            assert_eq!(e[0].1.value, Value::Str(s.into()), "{yaml}");
        }
    }
}
