//! The frontmatter's own form, read without the general YAML parser.
//!
//! Every write emits the frontmatter in one block form: `key: value` lines indented by two,
//! `- ` sequence items, plain words (one, or a few with single spaces, as a pool claim's
//! `plan 1`), double-quoted strings, `null`, booleans, integers and one-line flow collections of
//! scalars. [`parse`] reads exactly that subset, about twenty times faster than the general
//! parser, and gives up (`None`) on anything else — a comment, an anchor, a tag, a single-quoted
//! or multi-line scalar, a tab, a duplicate key, a word YAML could read as something other than
//! a string — so that [`super::yaml::parse`] reads it instead, with its budgets and its error
//! messages. Whatever this module accepts, it reads as the general parser does, lines included
//! (a test compares the two on every fixture and generated board).

use super::ledger::form::TypedLedger;
use super::yaml::{Node, Value};

/// Deeper than this, or with more nodes than this, the general parser (and its budgets) decide.
const MAX_DEPTH: usize = 16;
const MAX_NODES: usize = 50_000;

/// One non-empty line: its indentation, the text after it, its line number in the file.
pub struct Line<'a> {
    pub indent: usize,
    pub text: &'a str,
    pub number: u32,
}

struct Reader<'a> {
    lines: Vec<Line<'a>>,
    at: usize,
    nodes: usize,
    /// Read the top-level `ledger` straight into its type (see [`parse_frontmatter`]).
    typed_ledger: bool,
    ledger: Option<TypedLedger>,
}

/// Read `text` (the frontmatter, `line_offset` lines into the file) when it is in the form pair
/// writes; `None` for anything else.
pub fn parse(text: &str, line_offset: u32) -> Option<Node> {
    read(text, line_offset, false).map(|(node, _)| node)
}

/// [`parse`] for a whole frontmatter, with its top-level `ledger` read straight into the typed
/// ledger when it is in the form every write emits ([`crate::board::ledger::form::read_plain`]):
/// then the tree holds `ledger: null` in its place (same line) and the ledger comes beside it.
/// A ledger in any other form is in the tree, to be read with its messages. The ledger is most
/// of a large frontmatter, and building its tree and dropping it cost several times reading it.
pub fn parse_frontmatter(text: &str, line_offset: u32) -> Option<(Node, Option<TypedLedger>)> {
    read(text, line_offset, true)
}

fn read(text: &str, line_offset: u32, typed_ledger: bool) -> Option<(Node, Option<TypedLedger>)> {
    // A tab or a carriage return anywhere: not the form pair writes.
    if memchr::memchr2(b'\t', b'\r', text.as_bytes()).is_some() {
        return None;
    }
    let mut lines = Vec::with_capacity(text.len() / 16 + 1);
    let bytes = text.as_bytes();
    let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    let mut from = 0;
    for (i, end) in ends.enumerate() {
        let raw = &text[from..end];
        from = end + 1;
        if raw.is_empty() {
            continue;
        }
        if raw.ends_with(' ') {
            return None;
        }
        let indent = raw.bytes().take_while(|b| *b == b' ').count();
        let body = &raw[indent..];
        if body.is_empty() || (indent == 0 && (body.starts_with("---") || body.starts_with("...")))
        {
            return None;
        }
        lines.push(Line {
            indent,
            text: body,
            number: u32::try_from(i).ok()? + 1 + line_offset,
        });
    }
    let first = lines.first()?;
    if first.indent != 0 || first.text.starts_with('-') {
        return None;
    }
    let mut r = Reader {
        lines,
        at: 0,
        nodes: 0,
        typed_ledger,
        ledger: None,
    };
    let root = r.mapping(0, None, 0)?;
    (r.at == r.lines.len()).then_some((root, r.ledger))
}

impl<'a> Reader<'a> {
    fn count(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES).then_some(())
    }

    /// A block mapping whose keys sit at `indent`; `first` is an entry already cut from a
    /// sequence item's line (`- key: value`).
    fn mapping(
        &mut self,
        indent: usize,
        first: Option<(&'a str, u32)>,
        depth: usize,
    ) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.count()?;
        let mut entries: Vec<(String, Node)> = Vec::new();
        let mut line_no = None;
        let mut pending = first;
        loop {
            let (text, number) = match pending.take() {
                Some(p) => p,
                None => match self.lines.get(self.at) {
                    Some(l) if l.indent == indent && !is_item(l.text) => {
                        self.at += 1;
                        (l.text, l.number)
                    }
                    Some(l) if l.indent > indent => return None,
                    _ => break,
                },
            };
            line_no.get_or_insert(number);
            let (key, rest) = split_key(text)?;
            if entries.iter().any(|(k, _)| *k == key) {
                return None;
            }
            let value = if rest.is_empty() {
                match self.typed(depth, &key) {
                    Some(placeholder) => placeholder,
                    None => self.nested(indent, number, depth)?,
                }
            } else {
                let v = inline(rest.strip_prefix(' ')?, number)?;
                self.count()?;
                v
            };
            entries.push((key, value));
        }
        Some(Node {
            value: Value::Map(entries),
            line: line_no?,
            raw: None,
        })
    }

    /// The top-level `ledger:` block read into its type, when asked for and in the emitted form:
    /// the null that stands in its place in the tree (on the line its mapping would have), the
    /// nodes its tree would have had counted against the budget.
    fn typed(&mut self, depth: usize, key: &str) -> Option<Node> {
        if !self.typed_ledger || depth != 0 || key != "ledger" {
            return None;
        }
        let rest = &self.lines[self.at..];
        let (ledger, taken, nodes) = crate::board::ledger::form::read_plain(rest)?;
        let line = rest.first()?.number;
        if self.nodes + nodes > MAX_NODES {
            // Over the budget: the tree runs out of it too, and the general parser decides.
            return None;
        }
        self.at += taken;
        self.nodes += nodes;
        self.ledger = Some(ledger);
        Some(Node {
            value: Value::Null,
            line,
            raw: None,
        })
    }

    /// The block below `key:` (on line `number`, keys at `indent`): a deeper mapping or
    /// sequence, or a sequence at the key's own indentation.
    fn nested(&mut self, indent: usize, _number: u32, depth: usize) -> Option<Node> {
        let next = self.lines.get(self.at)?;
        if next.indent > indent {
            if is_item(next.text) {
                self.sequence(next.indent, depth + 1)
            } else {
                self.mapping(next.indent, None, depth + 1)
            }
        } else if next.indent == indent && is_item(next.text) {
            self.sequence(indent, depth + 1)
        } else {
            None
        }
    }

    fn sequence(&mut self, indent: usize, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.count()?;
        let mut items = Vec::new();
        let mut line_no = None;
        while let Some(l) = self.lines.get(self.at) {
            if l.indent != indent || !is_item(l.text) {
                if l.indent > indent {
                    return None;
                }
                break;
            }
            self.at += 1;
            let (text, number) = (&l.text[2..], l.number);
            line_no.get_or_insert(number);
            if text.starts_with(['-', ' ']) || text.is_empty() {
                return None;
            }
            let item = if split_key(text).is_some() {
                self.mapping(indent + 2, Some((text, number)), depth + 1)?
            } else {
                let v = inline(text, number)?;
                self.count()?;
                v
            };
            items.push(item);
        }
        Some(Node {
            value: Value::Seq(items),
            line: line_no?,
            raw: None,
        })
    }
}

fn is_item(text: &str) -> bool {
    text.starts_with("- ") || text == "-"
}

/// `key: rest` or `key:` → the key and what follows the colon.
pub fn split_key(text: &str) -> Option<(String, &str)> {
    let (key, rest) = if text.starts_with('"') {
        let (s, used) = quoted(text)?;
        (s, &text[used..])
    } else {
        let end = text
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
            .unwrap_or(text.len());
        let word = &text[..end];
        if !plain_string(word) {
            return None;
        }
        (word.to_string(), &text[end..])
    };
    let rest = rest.strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with(' ')).then_some((key, rest))
}

/// A value on its key's line: a scalar or a one-line flow collection of scalars.
fn inline(text: &str, line: u32) -> Option<Node> {
    let node = |value| Node {
        value,
        line,
        raw: None,
    };
    match text.as_bytes().first()? {
        b'[' => {
            let inner = text.strip_prefix('[')?.strip_suffix(']')?;
            let mut items = Vec::new();
            for part in flow_parts(inner)? {
                items.push(node(scalar(part)?));
            }
            Some(node(Value::Seq(items)))
        }
        b'{' => {
            let inner = text.strip_prefix('{')?.strip_suffix('}')?;
            let mut entries: Vec<(String, Node)> = Vec::new();
            for part in flow_parts(inner)? {
                let (key, rest) = split_key(part)?;
                if entries.iter().any(|(k, _)| *k == key) {
                    return None;
                }
                entries.push((key, node(scalar(rest.strip_prefix(' ')?)?)));
            }
            Some(node(Value::Map(entries)))
        }
        _ => Some(node(scalar(text)?)),
    }
}

/// The comma-separated parts of a flow collection's inside (`a, "b, c", d`); none for `[]`.
fn flow_parts(inner: &str) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    if inner.is_empty() {
        return Some(parts);
    }
    let bytes = inner.as_bytes();
    let (mut start, mut i, mut in_quote) = (0, 0, false);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_quote => i += 1,
            b'"' => in_quote = !in_quote,
            b'[' | b']' | b'{' | b'}' if !in_quote => return None,
            b',' if !in_quote => {
                parts.push(&inner[start..i]);
                if bytes.get(i + 1) != Some(&b' ') {
                    return None;
                }
                i += 1;
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&inner[start..]);
    parts
        .iter()
        .all(|p| !p.is_empty() && !p.starts_with(' ') && !p.ends_with(' '))
        .then_some(parts)
}

/// A whole scalar: a double-quoted string, or a plain `null`, boolean, integer or word.
pub fn scalar(text: &str) -> Option<Value> {
    if text.starts_with('"') {
        let (s, used) = quoted(text)?;
        return (used == text.len()).then_some(Value::Str(s));
    }
    match text {
        "null" => return Some(Value::Null),
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if digits.len() > 1 && digits.starts_with('0') || text == "-0" {
            return None;
        }
        return text.parse::<i64>().ok().map(|i| Value::Int(i.into()));
    }
    (plain_string(text) || plain_words(text)).then(|| Value::Str(text.to_string()))
}

/// Plain words separated by single spaces, the first a [`plain_string`]'s start (`plan 1`, as
/// a pool claim is written): YAML reads the whole as this very string (no word of it can be an
/// indicator, a comment, a `: ` or a number's or keyword's whole text).
fn plain_words(s: &str) -> bool {
    let first = s.bytes().next().unwrap_or(b' ');
    (first.is_ascii_alphabetic() || first == b'/' || first == b'_')
        && s.contains(' ')
        && s.split(' ').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-'))
        })
}

/// A plain word every YAML reader takes for this very string (the set pair emits unquoted).
pub fn plain_string(s: &str) -> bool {
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
    const RESERVED: &[&str] = &[
        "null", "true", "false", "yes", "no", "on", "off", "y", "n", "inf", "nan", "infinity",
    ];
    !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(s))
}

/// A double-quoted string at the start of `text`: its value and the bytes it took.
fn quoted(text: &str) -> Option<(String, usize)> {
    let body = text.strip_prefix('"')?;
    // Printable ASCII without an escape, the common case: the value is the bytes as they are.
    for (i, b) in body.bytes().enumerate() {
        match b {
            b'"' => return Some((body[..i].to_string(), i + 2)),
            b' '..=b'~' if b != b'\\' => {}
            _ => break,
        }
    }
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, i + 2)),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    '/' => out.push('/'),
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'u' | 'U' => {
                        let n = if e == 'u' { 4 } else { 8 };
                        let mut v = 0u32;
                        for _ in 0..n {
                            let (_, h) = chars.next()?;
                            v = v * 16 + h.to_digit(16)?;
                        }
                        out.push(char::from_u32(v)?);
                    }
                    _ => return None,
                }
            }
            c if super::yaml::yaml_printable(c) => out.push(c),
            _ => return None,
        }
    }
    None
}
