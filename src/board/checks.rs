//! Checks tied to the tree: the validation commands a blackboard requires (`required_checks`,
//! set by `init --require-check NAME=CMD`) and the latest run of each named check
//! (`check_runs`, written by `pair check`), as typed frontmatter fields.
//!
//! ```yaml
//! required_checks:
//!   tests: "cargo test"
//! check_runs:
//!   tests:
//!     command: ["sh", "-c", "cargo test"]
//!     exit_code: 0
//!     tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
//!     duration_ms: 5120
//!     agent: doer
//!     at: "2026-01-31T12:00:00Z"
//! ```
//!
//! A required check runs as `sh -c CMD` in the recorded worktree; a run counts for
//! `advance COMMITTED` when it ran that command on the approved tree and exited 0.

use crate::board::frontmatter::{Timestamp, is_agent_id};
use crate::board::yaml::{self, Node, Value};
use crate::error::FieldError;

/// A validation command the blackboard requires before the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequiredCheck {
    pub name: String,
    /// The shell command line, run as `sh -c CMD`.
    pub command: String,
}

impl RequiredCheck {
    /// The argument vector a run of this check executes.
    pub fn argv(&self) -> Vec<String> {
        vec!["sh".into(), "-c".into(), self.command.clone()]
    }
}

/// The latest run of a named check.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckRun {
    pub name: String,
    pub command: Vec<String>,
    /// `None`: the command was ended by a signal.
    pub exit_code: Option<i32>,
    /// The git tree id of the content it ran on (index plus worktree changes to tracked files).
    pub tree: String,
    pub duration_ms: u64,
    pub agent: String,
    pub at: Timestamp,
}

impl CheckRun {
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// A check name: what an agent id may be (letters, digits, `.`, `_`, `-`; up to 64).
pub fn is_check_name(s: &str) -> bool {
    is_agent_id(s)
}

fn is_tree_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn line_of(n: &Node) -> Option<u32> {
    (n.line > 0).then_some(n.line)
}

fn err(errors: &mut Vec<FieldError>, field: String, node: &Node, message: impl Into<String>) {
    errors.push(FieldError {
        field,
        line: line_of(node),
        message: message.into(),
    });
}

/// `required_checks`: a mapping of check name to its command line.
pub fn required_from_node(node: &Node, errors: &mut Vec<FieldError>) -> Vec<RequiredCheck> {
    let entries = match &node.value {
        Value::Null => return Vec::new(),
        Value::Map(e) => e,
        _ => {
            err(
                errors,
                "required_checks".into(),
                node,
                "expected a mapping of check name to the command it runs (`tests: \"cargo test\"`)",
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (name, n) in entries {
        let field = format!("required_checks.{name}");
        if !is_check_name(name) {
            err(
                errors,
                field,
                n,
                "a check name uses letters, digits, `.`, `_` and `-` (up to 64, starting with a \
                 letter or digit)",
            );
            continue;
        }
        match &n.value {
            Value::Str(c) if !c.trim().is_empty() && !c.contains(['\n', '\r', '\0']) => {
                out.push(RequiredCheck {
                    name: name.clone(),
                    command: c.clone(),
                })
            }
            _ => err(
                errors,
                field,
                n,
                "expected the command line to run (a non-empty string on one line)",
            ),
        }
    }
    out
}

const RUN_KEYS: &[&str] = &["command", "exit_code", "tree", "duration_ms", "agent", "at"];

/// `check_runs`: a mapping of check name to its latest run.
pub fn runs_from_node(node: &Node, errors: &mut Vec<FieldError>) -> Vec<CheckRun> {
    let entries = match &node.value {
        Value::Null => return Vec::new(),
        Value::Map(e) => e,
        _ => {
            err(
                errors,
                "check_runs".into(),
                node,
                "expected a mapping of check name to its latest run",
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (name, n) in entries {
        let path = format!("check_runs.{name}");
        if !is_check_name(name) {
            err(errors, path, n, "not a check name");
            continue;
        }
        let Value::Map(fields) = &n.value else {
            err(
                errors,
                path,
                n,
                "expected a mapping with command, exit_code, tree, duration_ms, agent and at",
            );
            continue;
        };
        let before = errors.len();
        let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        for (k, v) in fields {
            if !RUN_KEYS.contains(&k.as_str()) {
                err(
                    errors,
                    format!("{path}.{k}"),
                    v,
                    "unknown key in a check run",
                );
            }
        }
        let missing = |errors: &mut Vec<FieldError>, k: &str| {
            errors.push(FieldError {
                field: format!("{path}.{k}"),
                line: line_of(n),
                message: "required field is missing".into(),
            })
        };
        let command = match get("command").map(|v| (v, &v.value)) {
            Some((_, Value::Seq(items)))
                if !items.is_empty() && items.iter().all(|i| matches!(&i.value, Value::Str(_))) =>
            {
                items
                    .iter()
                    .filter_map(|i| match &i.value {
                        Value::Str(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect()
            }
            Some((v, _)) => {
                err(
                    errors,
                    format!("{path}.command"),
                    v,
                    "expected the argument vector it ran (a non-empty list of strings)",
                );
                Vec::new()
            }
            None => {
                missing(errors, "command");
                Vec::new()
            }
        };
        let exit_code = match get("exit_code").map(|v| (v, &v.value)) {
            Some((_, Value::Null)) => None,
            Some((_, Value::Int(i))) if i32::try_from(*i).is_ok() => i32::try_from(*i).ok(),
            Some((v, _)) => {
                err(
                    errors,
                    format!("{path}.exit_code"),
                    v,
                    "expected the exit code (an integer), or null for a run ended by a signal",
                );
                None
            }
            None => {
                missing(errors, "exit_code");
                None
            }
        };
        let tree = match get("tree").map(|v| (v, &v.value)) {
            Some((_, Value::Str(s))) if is_tree_id(s) => s.clone(),
            Some((v, _)) => {
                err(
                    errors,
                    format!("{path}.tree"),
                    v,
                    "expected a git tree id (40 or 64 lower-case hex digits, quoted)",
                );
                String::new()
            }
            None => {
                missing(errors, "tree");
                String::new()
            }
        };
        let duration_ms = match get("duration_ms").map(|v| (v, &v.value)) {
            Some((_, Value::Int(i))) if u64::try_from(*i).is_ok() => {
                u64::try_from(*i).unwrap_or_default()
            }
            Some((v, _)) => {
                err(
                    errors,
                    format!("{path}.duration_ms"),
                    v,
                    "expected a duration in milliseconds (an integer ≥ 0)",
                );
                0
            }
            None => {
                missing(errors, "duration_ms");
                0
            }
        };
        let agent = match get("agent").map(|v| (v, &v.value)) {
            Some((_, Value::Str(s))) if is_agent_id(s) => s.clone(),
            Some((v, _)) => {
                err(errors, format!("{path}.agent"), v, "expected an agent id");
                String::new()
            }
            None => {
                missing(errors, "agent");
                String::new()
            }
        };
        let at = match get("at").map(|v| (v, &v.value)) {
            Some((_, Value::Str(s))) if Timestamp::parse(s).is_some() => Timestamp::parse(s),
            Some((v, _)) => {
                err(
                    errors,
                    format!("{path}.at"),
                    v,
                    "expected a quoted UTC timestamp like \"2026-01-31T12:00:00Z\"",
                );
                None
            }
            None => {
                missing(errors, "at");
                None
            }
        };
        if errors.len() > before {
            continue;
        }
        if let Some(at) = at {
            out.push(CheckRun {
                name: name.clone(),
                command,
                exit_code,
                tree,
                duration_ms,
                agent,
                at,
            });
        }
    }
    out
}

/// Emit `required_checks` (nothing when none are required).
pub fn emit_required(out: &mut String, checks: &[RequiredCheck]) {
    if checks.is_empty() {
        return;
    }
    out.push_str("required_checks:\n");
    for c in checks {
        out.push_str("  ");
        out.push_str(&yaml::scalar(&c.name));
        out.push_str(": ");
        out.push_str(&yaml::quoted(&c.command));
        out.push('\n');
    }
}

/// Emit `check_runs` (nothing when no check has run).
pub fn emit_runs(out: &mut String, runs: &[CheckRun]) {
    if runs.is_empty() {
        return;
    }
    out.push_str("check_runs:\n");
    for r in runs {
        out.push_str("  ");
        out.push_str(&yaml::scalar(&r.name));
        out.push_str(":\n    command: [");
        out.push_str(
            &r.command
                .iter()
                .map(|a| yaml::quoted(a))
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push_str("]\n    exit_code: ");
        out.push_str(&r.exit_code.map_or("null".into(), |c| c.to_string()));
        out.push_str("\n    tree: ");
        out.push_str(&yaml::quoted(&r.tree));
        out.push_str("\n    duration_ms: ");
        out.push_str(&r.duration_ms.to_string());
        out.push_str("\n    agent: ");
        out.push_str(&yaml::scalar(&r.agent));
        out.push_str("\n    at: ");
        out.push_str(&yaml::quoted(&r.at.to_string()));
        out.push('\n');
    }
}

/// The one-line form of each field, for messages (`None`: left out).
pub fn required_value(checks: &[RequiredCheck]) -> Option<String> {
    (!checks.is_empty()).then(|| {
        format!(
            "{{{}}}",
            checks
                .iter()
                .map(|c| format!("{}: {}", c.name, yaml::quoted(&c.command)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

pub fn runs_value(runs: &[CheckRun]) -> Option<String> {
    (!runs.is_empty()).then(|| {
        format!(
            "{{{}}}",
            runs.iter()
                .map(|r| format!(
                    "{}: exit {} on {}",
                    r.name,
                    r.exit_code.map_or("signal".into(), |c| c.to_string()),
                    &r.tree[..r.tree.len().min(12)]
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Parse `NAME=CMD` as `init --require-check` takes it.
pub fn parse_requirement(s: &str) -> Result<RequiredCheck, String> {
    let Some((name, command)) = s.split_once('=') else {
        return Err(format!(
            "--require-check {s:?}: expected NAME=COMMAND (for example `tests=cargo test`)"
        ));
    };
    let name = name.trim();
    if !is_check_name(name) {
        return Err(format!(
            "--require-check {s:?}: the name {name:?} must use letters, digits, `.`, `_` and `-`"
        ));
    }
    if command.trim().is_empty() || command.contains(['\n', '\r', '\0']) {
        return Err(format!(
            "--require-check {s:?}: the command must be a non-empty line"
        ));
    }
    Ok(RequiredCheck {
        name: name.to_string(),
        command: command.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requirement_is_name_equals_command() {
        let c = parse_requirement("tests=cargo test --all").unwrap();
        assert_eq!(c.name, "tests");
        assert_eq!(c.argv(), ["sh", "-c", "cargo test --all"]);
        assert!(parse_requirement("tests").is_err());
        assert!(parse_requirement("bad name=x").is_err());
        assert!(parse_requirement("t=").is_err());
    }

    #[test]
    fn runs_round_trip_through_yaml() {
        let run = CheckRun {
            name: "tests".into(),
            command: vec!["sh".into(), "-c".into(), "echo \"hi\"".into()],
            exit_code: Some(1),
            tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
            duration_ms: 12,
            agent: "alice".into(),
            at: Timestamp::parse("2026-01-31T12:00:00Z").unwrap(),
        };
        let mut text = String::new();
        emit_runs(&mut text, std::slice::from_ref(&run));
        let node = yaml::parse(&text, 0).unwrap();
        let Value::Map(top) = &node.value else {
            panic!("a mapping")
        };
        let mut errors = Vec::new();
        let back = runs_from_node(&top[0].1, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(back, vec![run]);
    }
}
