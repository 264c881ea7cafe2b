//! The ledger as the frontmatter writes it: one `ledger:` block (the round cap, the gates, the
//! objections), emitted through the YAML tree and read back with every problem named by its
//! path and line.

use std::fmt;

use super::{Gate, Ledger, Objection, Severity, State, StopReason};
use crate::board::frontmatter::Target;
use crate::board::yaml::{self, Node, Value};
use crate::board::yaml_plain;
use crate::error::FieldError;

impl fmt::Display for Objection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} round {} {} @ {}",
            self.id, self.state, self.gate, self.round, self.by, self.anchor
        )
    }
}

#[cfg(test)]
fn node(value: Value) -> Node {
    Node {
        value,
        line: 0,
        raw: None,
    }
}

#[cfg(test)]
fn s(v: &str) -> Node {
    node(Value::Str(v.to_string()))
}

#[cfg(test)]
fn int(v: u32) -> Node {
    node(Value::Int(i128::from(v)))
}

/// The ledger as the YAML tree the frontmatter writes (what [`emit`] writes directly).
#[cfg(test)]
pub fn to_node(l: &Ledger) -> Node {
    let mut entries = Vec::new();
    if let Some(m) = l.max_rounds {
        entries.push(("max_rounds".to_string(), int(m)));
    }
    if !l.gates.is_empty() {
        let gates = l
            .gates
            .iter()
            .map(|(t, g)| {
                let mut e = vec![("since".to_string(), int(g.since))];
                e.push((
                    "stop_reason".into(),
                    g.stop_reason.map_or(node(Value::Null), |r| s(r.as_str())),
                ));
                if let Some(x) = &g.escalation {
                    e.push(("escalation".into(), s(x)));
                }
                e.push((
                    "open".into(),
                    node(Value::Seq(g.open.iter().map(|n| int(*n)).collect())),
                ));
                if let Some(r) = g.reworked_from {
                    e.push(("reworked_from".into(), int(r)));
                }
                (t.as_str().to_string(), node(Value::Map(e)))
            })
            .collect();
        entries.push(("gates".to_string(), node(Value::Map(gates))));
    }
    if !l.objections.is_empty() {
        let items = l
            .objections
            .iter()
            .map(|o| {
                let mut e = vec![
                    ("id".to_string(), s(&o.id)),
                    ("by".into(), s(&o.by)),
                    ("gate".into(), s(o.gate.as_str())),
                    ("round".into(), int(o.round)),
                    ("severity".into(), s(o.severity.as_str())),
                    ("state".into(), s(o.state.as_str())),
                    ("anchor".into(), s(&o.anchor)),
                    ("title".into(), s(&o.title)),
                ];
                if let Some(c) = &o.cause {
                    e.push(("cause".into(), s(c)));
                }
                node(Value::Map(e))
            })
            .collect();
        entries.push(("objections".to_string(), node(Value::Seq(items))));
    }
    node(Value::Map(entries))
}

/// Write the `ledger` block (nothing when the ledger is empty).
///
/// Written directly, not through a YAML tree: a ledger of a thousand objections is emitted on
/// every write and every validation, and building and dropping the tree cost several times the
/// writing. The text is the tree's emission byte for byte (a property test compares them).
pub fn emit(out: &mut String, l: &Ledger) {
    use std::fmt::Write as _;
    if l.is_empty() {
        return;
    }
    out.push_str("ledger:\n");
    let line = |out: &mut String, pad: &str, key: &str, value: &str| {
        out.push_str(pad);
        out.push_str(key);
        out.push_str(": ");
        yaml::push_scalar(out, value);
        out.push('\n');
    };
    let int = |out: &mut String, pad: &str, key: &str, n: u32| {
        let _ = writeln!(out, "{pad}{key}: {n}");
    };
    if let Some(m) = l.max_rounds {
        int(out, "  ", "max_rounds", m);
    }
    if !l.gates.is_empty() {
        out.push_str("  gates:\n");
        for (t, g) in &l.gates {
            out.push_str("    ");
            yaml::push_scalar(out, t.as_str());
            out.push_str(":\n");
            int(out, "      ", "since", g.since);
            match g.stop_reason {
                Some(r) => line(out, "      ", "stop_reason", r.as_str()),
                None => out.push_str("      stop_reason: null\n"),
            }
            if let Some(x) = &g.escalation {
                line(out, "      ", "escalation", x);
            }
            if g.open.is_empty() {
                out.push_str("      open: []\n");
            } else {
                out.push_str("      open:\n");
                for n in &g.open {
                    let _ = writeln!(out, "        - {n}");
                }
            }
            if let Some(r) = g.reworked_from {
                int(out, "      ", "reworked_from", r);
            }
        }
    }
    if !l.objections.is_empty() {
        out.push_str("  objections:\n");
        for o in &l.objections {
            out.push_str("    - id: ");
            yaml::push_scalar(out, &o.id);
            out.push('\n');
            line(out, "      ", "by", &o.by);
            line(out, "      ", "gate", o.gate.as_str());
            int(out, "      ", "round", o.round);
            line(out, "      ", "severity", o.severity.as_str());
            line(out, "      ", "state", o.state.as_str());
            line(out, "      ", "anchor", &o.anchor);
            line(out, "      ", "title", &o.title);
            if let Some(c) = &o.cause {
                line(out, "      ", "cause", c);
            }
        }
    }
}

/// A one-line summary for messages naming the field.
pub fn summary(l: &Ledger) -> String {
    format!(
        "{} objections, {} gates, max_rounds {}",
        l.objections.len(),
        l.gates.len(),
        l.max_rounds
            .map_or("default".to_string(), |m| m.to_string())
    )
}

/// Reads the YAML tree of the `ledger` key, collecting every problem with its path and line.
struct Reader<'a> {
    errors: &'a mut Vec<FieldError>,
}

impl Reader<'_> {
    fn err(&mut self, field: String, n: &Node, message: String) {
        self.errors.push(FieldError {
            field,
            line: (n.line > 0).then_some(n.line),
            message,
        });
    }
    fn map<'n>(&mut self, path: &str, n: &'n Node, what: &str) -> Option<&'n [(String, Node)]> {
        match &n.value {
            Value::Map(m) => Some(m),
            other => {
                self.err(
                    path.into(),
                    n,
                    format!("expected a mapping ({what}), found {}", other.describe()),
                );
                None
            }
        }
    }
    fn count(&mut self, path: impl FnOnce() -> String, n: &Node) -> Option<u32> {
        match &n.value {
            Value::Int(i) if *i >= 0 && *i <= i128::from(u32::MAX) => Some(*i as u32),
            other => {
                self.err(
                    path(),
                    n,
                    format!("expected a whole number >= 0, found {}", other.describe()),
                );
                None
            }
        }
    }
    fn text(&mut self, path: impl FnOnce() -> String, n: &Node) -> Option<String> {
        match &n.value {
            Value::Str(v) => Some(v.clone()),
            other => {
                self.err(
                    path(),
                    n,
                    format!("expected a string, found {}", other.describe()),
                );
                None
            }
        }
    }
    fn word<T: std::str::FromStr + Copy + fmt::Display>(
        &mut self,
        path: impl FnOnce() -> String,
        n: &Node,
        all: &[T],
    ) -> Option<T> {
        let words = || {
            all.iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &n.value {
            Value::Str(v) => match v.parse::<T>() {
                Ok(w) => Some(w),
                Err(_) => {
                    self.err(
                        path(),
                        n,
                        format!("expected one of {}, found {v:?}", words()),
                    );
                    None
                }
            },
            other => {
                self.err(
                    path(),
                    n,
                    format!("expected one of {}, found {}", words(), other.describe()),
                );
                None
            }
        }
    }
}

const LEDGER_KEYS: &[&str] = &["max_rounds", "gates", "objections"];
const GATE_KEYS: &[&str] = &[
    "since",
    "stop_reason",
    "escalation",
    "open",
    "reworked_from",
];
const OBJECTION_KEYS: &[&str] = &[
    "id", "by", "gate", "round", "severity", "state", "anchor", "title", "cause",
];

/// Build the ledger from its YAML tree; every problem goes to `errors` with its path and line.
pub fn from_node(n: &Node, errors: &mut Vec<FieldError>) -> Ledger {
    let mut r = Reader { errors };
    let mut l = Ledger::default();
    if n.value == Value::Null {
        return l;
    }
    let Some(entries) = r.map("ledger", n, "max_rounds, gates, objections") else {
        return l;
    };
    for (k, v) in entries {
        match k.as_str() {
            "max_rounds" => match r.count(|| "ledger.max_rounds".into(), v) {
                Some(0) => r.err(
                    "ledger.max_rounds".into(),
                    v,
                    "expected at least 1 review round per gate, found 0".into(),
                ),
                m => l.max_rounds = m,
            },
            "gates" => {
                let Some(gates) = r.map("ledger.gates", v, "target to its gate") else {
                    continue;
                };
                for (t, g) in gates {
                    let path = format!("ledger.gates.{t}");
                    let Ok(target) = t.parse::<Target>() else {
                        r.err(
                            path,
                            g,
                            "not a gate; gates are analysis, plan, red_test and code".into(),
                        );
                        continue;
                    };
                    if let Some(gate) = gate_from(&mut r, &path, g) {
                        l.gates.push((target, gate));
                    }
                }
            }
            "objections" => {
                let Value::Seq(items) = &v.value else {
                    r.err(
                        "ledger.objections".into(),
                        v,
                        format!(
                            "expected a list of objections, found {}",
                            v.value.describe()
                        ),
                    );
                    continue;
                };
                for (i, item) in items.iter().enumerate() {
                    let path = format!("ledger.objections.{}", i + 1);
                    if let Some(o) = objection_from(&mut r, &path, item) {
                        l.objections.push(o);
                    }
                }
            }
            other => r.err(
                format!("ledger.{other}"),
                v,
                format!(
                    "unknown key in the ledger (it has {})",
                    LEDGER_KEYS.join(", ")
                ),
            ),
        }
    }
    l
}

fn gate_from(r: &mut Reader<'_>, path: &str, n: &Node) -> Option<Gate> {
    let entries = r.map(path, n, "since, stop_reason, open")?;
    let before = r.errors.len();
    let mut g = Gate::default();
    for (k, v) in entries {
        let p = format!("{path}.{k}");
        match k.as_str() {
            "since" => g.since = r.count(|| p, v).unwrap_or(0),
            "stop_reason" if v.value == Value::Null => {}
            "stop_reason" => g.stop_reason = r.word(|| p, v, StopReason::ALL),
            "escalation" if v.value == Value::Null => {}
            "escalation" => g.escalation = r.text(|| p, v),
            "reworked_from" if v.value == Value::Null => {}
            "reworked_from" => g.reworked_from = r.count(|| p, v),
            "open" => match &v.value {
                Value::Seq(items) => {
                    for (i, item) in items.iter().enumerate() {
                        if let Some(c) = r.count(|| format!("{p}.{}", i + 1), item) {
                            g.open.push(c);
                        }
                    }
                }
                other => r.err(
                    p,
                    v,
                    format!("expected a list of counts, found {}", other.describe()),
                ),
            },
            _ => r.err(
                p,
                v,
                format!(
                    "unknown key in a gate (a gate has {})",
                    GATE_KEYS.join(", ")
                ),
            ),
        }
    }
    (r.errors.len() == before).then_some(g)
}

fn objection_from(r: &mut Reader<'_>, path: &str, n: &Node) -> Option<Objection> {
    let entries = r.map(
        path,
        n,
        "id, by, gate, round, severity, state, anchor, title",
    )?;
    let before = r.errors.len();
    let get = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let req = |r: &mut Reader<'_>, k: &str| -> Option<&Node> {
        match get(k) {
            Some(v) => Some(v),
            None => {
                r.err(format!("{path}.{k}"), n, "required field is missing".into());
                None
            }
        }
    };
    let id = req(r, "id").and_then(|v| r.text(|| format!("{path}.id"), v));
    let by = req(r, "by").and_then(|v| r.text(|| format!("{path}.by"), v));
    let gate = req(r, "gate").and_then(|v| r.word(|| format!("{path}.gate"), v, Target::ALL));
    let round = req(r, "round").and_then(|v| r.count(|| format!("{path}.round"), v));
    let severity =
        req(r, "severity").and_then(|v| r.word(|| format!("{path}.severity"), v, Severity::ALL));
    let state = req(r, "state").and_then(|v| r.word(|| format!("{path}.state"), v, State::ALL));
    let anchor = req(r, "anchor").and_then(|v| r.text(|| format!("{path}.anchor"), v));
    let title = req(r, "title").and_then(|v| r.text(|| format!("{path}.title"), v));
    let cause = match get("cause") {
        None => None,
        Some(v) if v.value == Value::Null => None,
        Some(v) => r.text(|| format!("{path}.cause"), v),
    };
    for (k, v) in entries {
        if !OBJECTION_KEYS.contains(&k.as_str()) {
            r.err(
                format!("{path}.{k}"),
                v,
                format!(
                    "unknown key in an objection (an objection has {})",
                    OBJECTION_KEYS.join(", ")
                ),
            );
        }
    }
    if r.errors.len() > before {
        return None;
    }
    Some(Objection {
        id: id?,
        by: by?,
        gate: gate?,
        round: round?,
        severity: severity?,
        state: state?,
        anchor: anchor?,
        title: title?,
        cause,
    })
}

/// Reads the lines below `ledger:` in the form [`emit`] writes, nothing else.
struct Plain<'l, 'a> {
    lines: &'l [yaml_plain::Line<'a>],
    at: usize,
    /// The nodes the YAML tree of what was read would have (its budget counts them).
    nodes: usize,
}

impl<'a> Plain<'_, 'a> {
    /// The value of `key: value` on the next line, when that line is at `indent` and has it.
    fn field(&mut self, indent: usize, key: &str) -> Option<&'a str> {
        let l = self.lines.get(self.at)?;
        if l.indent != indent {
            return None;
        }
        let value = l.text.strip_prefix(key)?.strip_prefix(": ")?;
        self.at += 1;
        self.nodes += 1;
        Some(value)
    }

    /// `key:` alone on the next line at `indent` (a block follows).
    fn head(&mut self, indent: usize, key: &str) -> bool {
        match self.lines.get(self.at) {
            Some(l) if l.indent == indent && l.text.strip_suffix(':') == Some(key) => {
                self.at += 1;
                true
            }
            _ => false,
        }
    }

    /// A sequence item's first line at `indent` (`- key: value`): its value.
    fn item(&mut self, indent: usize, key: &str) -> Option<&'a str> {
        let l = self.lines.get(self.at)?;
        if l.indent != indent {
            return None;
        }
        let value = l
            .text
            .strip_prefix("- ")?
            .strip_prefix(key)?
            .strip_prefix(": ")?;
        self.at += 1;
        // The item's mapping and its first entry.
        self.nodes += 2;
        Some(value)
    }

    fn indent(&self) -> Option<usize> {
        self.lines.get(self.at).map(|l| l.indent)
    }
}

/// A string, as the YAML tree reads it (a double-quoted string or a plain word); anything else
/// is left to the tree and its messages.
fn plain_text(v: &str) -> Option<String> {
    match yaml_plain::scalar(v)? {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

fn plain_count(v: &str) -> Option<u32> {
    match yaml_plain::scalar(v)? {
        Value::Int(i) => u32::try_from(i).ok(),
        _ => None,
    }
}

fn plain_word<T: std::str::FromStr>(v: &str) -> Option<T> {
    // A plain word is the string itself; only a quoted one needs reading first.
    if v.starts_with('"') {
        plain_text(v)?.parse().ok()
    } else if yaml_plain::plain_string(v) {
        v.parse().ok()
    } else {
        None
    }
}

/// The lines below a top-level `ledger:` read straight into the ledger, when they are exactly
/// the form [`emit`] writes (keys in its order, its indentation, nothing the tree would find
/// wrong): the ledger, the lines it took (up to the next top-level key) and the nodes its YAML
/// tree would have. `None` for anything else: the tree then reads it, and names its problems
/// ([`from_node`]). Whatever this accepts, [`from_node`] reads to the same ledger without an
/// error (property tests hold the two together).
pub fn read_plain(lines: &[yaml_plain::Line<'_>]) -> Option<(TypedLedger, usize, usize)> {
    let mut p = Plain {
        lines,
        at: 0,
        nodes: 1,
    };
    let mut l = Ledger::default();
    if let Some(v) = p.field(2, "max_rounds") {
        l.max_rounds = Some(plain_count(v).filter(|m| *m > 0)?);
    }
    if p.head(2, "gates") {
        p.nodes += 1;
        while p.indent() == Some(4) {
            let text = p.lines[p.at].text;
            let (key, rest) = yaml_plain::split_key(text)?;
            if !rest.is_empty() {
                return None;
            }
            let target: Target = key.parse().ok()?;
            if l.gates.iter().any(|(t, _)| *t == target) {
                return None;
            }
            p.at += 1;
            p.nodes += 1;
            let mut g = Gate {
                since: plain_count(p.field(6, "since")?)?,
                ..Gate::default()
            };
            let reason = p.field(6, "stop_reason")?;
            if reason != "null" {
                g.stop_reason = Some(plain_word(reason)?);
            }
            if let Some(v) = p.field(6, "escalation") {
                g.escalation = Some(plain_text(v)?);
            }
            if p.field(6, "open").is_some_and(|v| v == "[]") {
                // `open: []`, counted by `field`.
            } else if p.head(6, "open") {
                p.nodes += 1;
                while p.indent() == Some(8) {
                    let v = p.lines[p.at].text.strip_prefix("- ")?;
                    g.open.push(plain_count(v)?);
                    p.at += 1;
                    p.nodes += 1;
                }
                if g.open.is_empty() {
                    return None;
                }
            } else {
                return None;
            }
            if let Some(v) = p.field(6, "reworked_from") {
                g.reworked_from = Some(plain_count(v)?);
            }
            l.gates.push((target, g));
        }
        if l.gates.is_empty() {
            return None;
        }
    }
    if p.head(2, "objections") {
        p.nodes += 1;
        while p.indent() == Some(4) {
            let id = plain_text(p.item(4, "id")?)?;
            let by = plain_text(p.field(6, "by")?)?;
            let gate = plain_word(p.field(6, "gate")?)?;
            let round = plain_count(p.field(6, "round")?)?;
            let severity = plain_word(p.field(6, "severity")?)?;
            let state = plain_word(p.field(6, "state")?)?;
            let anchor = plain_text(p.field(6, "anchor")?)?;
            let title = plain_text(p.field(6, "title")?)?;
            let cause = match p.field(6, "cause") {
                Some(v) => Some(plain_text(v)?),
                None => None,
            };
            l.objections.push(Objection {
                id,
                by,
                gate,
                round,
                severity,
                anchor,
                state,
                title,
                cause,
            });
        }
        if l.objections.is_empty() {
            return None;
        }
    }
    // The block ends at the next top-level key, and holds something.
    if p.at == 0 || p.indent().is_some_and(|i| i != 0) {
        return None;
    }
    let (first, last) = (&lines[0], &lines[p.at - 1]);
    let start = first.text.as_ptr() as usize - first.indent;
    let end = last.text.as_ptr() as usize + last.text.len() + 1;
    let typed = TypedLedger {
        ledger: l,
        source_len: end - start,
    };
    Some((typed, p.at, p.nodes))
}

/// A ledger read by [`read_plain`], with the length of the lines it was read from (below
/// `ledger:`, newlines included): [`emit`] writes it again in at most that many bytes (every
/// scalar in its shortest form, which the form read has or exceeds), so a frontmatter's
/// written size can be bounded without writing the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedLedger {
    pub ledger: Ledger,
    pub source_len: usize,
}

#[cfg(test)]
mod emit_tests {
    use super::*;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z][a-z0-9_./-]{0,8}",
            Just(String::new()),
            Just("null".to_string()),
            Just("Yes".to_string()),
            Just("12".to_string()),
            Just("src/a.rs:3".to_string()),
            Just("## Plan".to_string()),
            ".{0,12}",
            "[\"\\\\\n\t\r\u{1}\u{85}\u{feff}é漢😀 -]{0,6}",
        ]
    }

    fn ledger() -> impl Strategy<Value = Ledger> {
        let objection = (
            text(),
            text(),
            0..Target::ALL.len(),
            any::<u32>(),
            0..Severity::ALL.len(),
            text(),
            0..State::ALL.len(),
            text(),
            proptest::option::of(text()),
        )
            .prop_map(
                |(id, by, t, round, sv, anchor, st, title, cause)| Objection {
                    id,
                    by,
                    gate: Target::ALL[t],
                    round,
                    severity: Severity::ALL[sv],
                    anchor,
                    state: State::ALL[st],
                    title,
                    cause,
                },
            );
        let gate = (
            0..Target::ALL.len(),
            any::<u32>(),
            proptest::option::of(0..StopReason::ALL.len()),
            proptest::option::of(text()),
            proptest::collection::vec(any::<u32>(), 0..4),
            proptest::option::of(any::<u32>()),
        )
            .prop_map(|(t, since, r, escalation, open, reworked_from)| {
                (
                    Target::ALL[t],
                    Gate {
                        since,
                        stop_reason: r.map(|i| StopReason::ALL[i]),
                        escalation,
                        open,
                        reworked_from,
                    },
                )
            });
        (
            proptest::option::of(prop_oneof![0u32..4, any::<u32>()]),
            proptest::collection::vec(gate, 0..3),
            proptest::collection::vec(objection, 0..4),
        )
            .prop_map(|(max_rounds, gates, objections)| Ledger {
                max_rounds,
                gates,
                objections,
            })
    }

    /// Whether the frontmatter reader read `text`'s ledger into its type, after checking it
    /// agrees with the general parser's tree read by [`from_node`]: the same ledger, no error,
    /// and otherwise the same tree. `Err` names the disagreement.
    fn typed_agrees(text: &str) -> Result<bool, String> {
        let Some((tree, typed)) = yaml_plain::parse_frontmatter(text, 0) else {
            return Ok(false);
        };
        let general = yaml::parse_general(text, 0).map_err(|e| format!("{e}\n{text}"))?;
        let Some(TypedLedger {
            ledger: typed,
            source_len,
        }) = typed
        else {
            return (tree == general && lines(&tree) == lines(&general))
                .then_some(false)
                .ok_or_else(|| format!("another tree\n{text}"));
        };
        let mut again = String::new();
        emit(&mut again, &typed);
        if again.len() > "ledger:\n".len() + source_len {
            return Err(format!(
                "written again in {} bytes, read from {source_len} below its key\n{text}",
                again.len()
            ));
        }
        let Value::Map(entries) = &general.value else {
            return Err(format!("not a mapping\n{text}"));
        };
        let (_, n) = entries.iter().find(|(k, _)| k == "ledger").unwrap();
        let mut errors = Vec::new();
        let from_tree = from_node(n, &mut errors);
        if !errors.is_empty() || from_tree != typed {
            return Err(format!(
                "typed {typed:?}\ntree {from_tree:?} {errors:?}\n{text}"
            ));
        }
        let mut expected = general.clone();
        if let Value::Map(slots) = &mut expected.value {
            for (k, v) in slots.iter_mut() {
                if k == "ledger" {
                    v.value = Value::Null;
                }
            }
        }
        if tree != expected || lines(&tree) != lines(&expected) {
            return Err(format!("another tree around the ledger\n{text}"));
        }
        Ok(true)
    }

    fn lines(n: &Node) -> Vec<u32> {
        let mut out = vec![n.line];
        match &n.value {
            Value::Seq(items) => items.iter().for_each(|i| out.extend(lines(i))),
            Value::Map(entries) => entries.iter().for_each(|(_, v)| out.extend(lines(v))),
            _ => {}
        }
        out
    }

    /// A frontmatter around an emitted ledger.
    fn around(l: &Ledger) -> String {
        let mut text = String::from("phase: PLANNING\n");
        emit(&mut text, l);
        text.push_str("zz: 1\n");
        text
    }

    /// Ways to spoil one line of an emitted ledger.
    fn spoil(text: &str, at: usize, how: usize, word: &str) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let at = 1 + at % (lines.len() - 1);
        match how % 7 {
            0 => {
                lines.remove(at);
            }
            1 => {
                let l = lines[at].clone();
                lines.insert(at, l);
            }
            2 => lines[at] = format!("  {}", lines[at]),
            3 => lines[at] = lines[at].trim_start_matches("  ").to_string(),
            4 => {
                let key = lines[at].split(": ").next().unwrap_or("").to_string();
                lines[at] = format!("{key}: {word}");
            }
            5 => {
                let next = (at + 1).min(lines.len() - 1);
                lines.swap(at, next);
            }
            _ => lines[at] = format!("{}: {word}", "      cause"),
        }
        lines.join("\n") + "\n"
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn the_typed_reading_of_an_emitted_ledger_is_the_tree_s(l in ledger()) {
            let text = around(&l);
            let typed = typed_agrees(&text).map_err(TestCaseError::fail)?;
            // Every emitted ledger the plain reader's tree holds and reads without an error is
            // read into its type.
            let clean = yaml_plain::parse(&text, 0).is_some_and(|tree| {
                let Value::Map(entries) = &tree.value else { return false };
                entries.iter().find(|(k, _)| k == "ledger").is_some_and(|(_, n)| {
                    let mut errors = Vec::new();
                    from_node(n, &mut errors);
                    errors.is_empty()
                })
            });
            prop_assert_eq!(typed, clean, "{}", text);
        }

        #[test]
        fn a_spoilt_ledger_is_read_into_its_type_only_as_the_tree_reads_it(
            l in ledger(),
            at in 0usize..64,
            how in 0usize..7,
            word in prop_oneof![
                Just("null".to_string()),
                Just("[]".to_string()),
                Just("[1, 2]".to_string()),
                Just("-1".to_string()),
                Just("0".to_string()),
                Just("\"x\"".to_string()),
                Just("plan".to_string()),
                Just("open".to_string()),
                Just("4294967296".to_string()),
                "[a-z]{1,6}",
            ],
        ) {
            let text = spoil(&around(&l), at, how, &word);
            typed_agrees(&text).map_err(TestCaseError::fail)?;
        }

        #[test]
        fn the_direct_emission_is_the_tree_s(l in ledger()) {
            let mut direct = String::new();
            emit(&mut direct, &l);
            let mut tree = String::new();
            if !l.is_empty() {
                yaml::emit_entry(&mut tree, 0, "ledger", &to_node(&l));
            }
            prop_assert_eq!(direct, tree);
        }
    }
}
