//! The ledger as the frontmatter writes it: one `ledger:` block (the round cap, the gates, the
//! objections), emitted through the YAML tree and read back with every problem named by its
//! path and line.

use std::fmt;

use super::{Gate, Ledger, Objection, Severity, State, StopReason};
use crate::board::frontmatter::Target;
use crate::board::yaml::{self, Node, Value};
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
            proptest::option::of(any::<u32>()),
            proptest::collection::vec(gate, 0..3),
            proptest::collection::vec(objection, 0..4),
        )
            .prop_map(|(max_rounds, gates, objections)| Ledger {
                max_rounds,
                gates,
                objections,
            })
    }

    proptest! {
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
