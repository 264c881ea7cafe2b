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
//!
//! What a run needs besides its command (`check --needs PATH --setup CMD`: files git does not
//! track, and the command that makes them in a fresh checkout) is kept apart, under
//! `check_needs`, tied to the run by its time, so that a `pair` that knows no such key keeps it
//! as an unknown field instead of refusing the board over an unknown key in a run:
//!
//! ```yaml
//! check_needs:
//!   tests:
//!     files: ["gen/config.txt"]
//!     setup: "make gen"
//!     run_at: "2026-01-31T12:00:00Z"
//! ```

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
    /// What it needs besides its command (`check_needs`), if it declared anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<Needs>,
}

/// What a check needs besides its command in a checkout holding only what git tracks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Needs {
    /// Paths relative to the checkout that the command reads and git does not track.
    pub files: Vec<String>,
    /// The command line (run as `sh -c`) that makes them in a fresh checkout.
    pub setup: Option<String>,
}

/// The key under which each run's needs are kept.
pub const NEEDS_FIELD: &str = "check_needs";

/// A path a check may declare it needs: relative, inside the checkout (no `..`), on one line.
pub fn is_needed_path(p: &str) -> bool {
    !p.trim().is_empty()
        && !p.starts_with('/')
        && !p.starts_with('~')
        && !p.contains(['\n', '\r', '\0'])
        && !p.split('/').any(|c| c == "..")
}

/// Programs whose `-c` argument is a shell script.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash", "busybox"];

/// Where the tools a check runs live on every machine: a path under one names a tool (a
/// missing one makes the check "could not run here"), not a file the check reads.
const TOOL_DIRS: &[&str] = &["/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/dev/"];

/// The paths a check's command names that a reproduction, in a fresh checkout elsewhere, may not
/// have: in its arguments and in the script of a shell's `-c`, `$HOME` (or `${HOME}`), a `~`
/// path, and any absolute path — the worktree's own included, as a reproduction runs in another
/// checkout — but one under [`TOOL_DIRS`]. The program itself (`argv[0]`) is not looked at: a
/// program missing here is a check that could not run here. In order, each once.
pub fn outside_paths(argv: &[String]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let program = argv
        .first()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .unwrap_or("");
    let shell = SHELLS.contains(&program);
    let mut script_next = false;
    for w in argv.iter().skip(1) {
        if script_next {
            script_next = false;
            scan_script(w, &mut found);
            continue;
        }
        if shell && w.starts_with('-') && !w.starts_with("--") && w.contains('c') {
            script_next = true;
            continue;
        }
        scan_script(w, &mut found);
    }
    found
}

fn scan_script(script: &str, found: &mut Vec<String>) {
    let mut push = |p: &str| {
        if !found.iter().any(|f| f == p) {
            found.push(p.to_string());
        }
    };
    let bytes = script.as_bytes();
    for (i, _) in script.match_indices("$HOME") {
        let next = bytes.get(i + 5).copied();
        if !next.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
            push("$HOME");
        }
    }
    if script.contains("${HOME}") || script.contains("${HOME:") || script.contains("${HOME-") {
        push("${HOME}");
    }
    let split = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                ';' | '|' | '&' | '(' | ')' | '<' | '>' | '\'' | '"' | '`' | '=' | ':' | ','
            )
    };
    for t in script.split(split).filter(|t| !t.is_empty()) {
        let tilde = t == "~"
            || t.starts_with("~/")
            || (t.starts_with('~') && t[1..].starts_with(|c: char| c.is_ascii_alphabetic()));
        let absolute = t.starts_with('/')
            && !t.chars().all(|c| c == '/')
            && !TOOL_DIRS.iter().any(|d| t.starts_with(d));
        if tilde || absolute {
            push(t);
        }
    }
}

/// A setup command line: not empty, on one line.
pub fn is_setup(s: &str) -> bool {
    !s.trim().is_empty() && !s.contains(['\n', '\r', '\0'])
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
                needs: None,
            });
        }
    }
    out
}

const NEEDS_KEYS: &[&str] = &["files", "setup", "run_at"];

/// `check_needs`: attach each entry to the run of its name recorded at its `run_at`. An entry of
/// a run that is no longer the latest (a `pair` that knows no needs recorded a new run over it)
/// is a warning, not used, and dropped by the next write.
pub fn needs_from_node(
    node: &Node,
    runs: &mut [CheckRun],
    errors: &mut Vec<FieldError>,
    warnings: &mut Vec<FieldError>,
) {
    let entries = match &node.value {
        Value::Null => return,
        Value::Map(e) => e,
        _ => {
            err(
                errors,
                NEEDS_FIELD.into(),
                node,
                "expected a mapping of check name to what its latest run needs",
            );
            return;
        }
    };
    for (name, n) in entries {
        let path = format!("{NEEDS_FIELD}.{name}");
        let Value::Map(fields) = &n.value else {
            err(
                errors,
                path,
                n,
                "expected a mapping with files, setup and run_at",
            );
            continue;
        };
        let before = errors.len();
        let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        for (k, v) in fields {
            if !NEEDS_KEYS.contains(&k.as_str()) {
                warnings.push(FieldError {
                    field: format!("{path}.{k}"),
                    line: line_of(v),
                    message: "unknown key in a check's needs (kept until the check runs again; a \
                              newer version of pair may use it)"
                        .into(),
                });
            }
        }
        let files: Vec<String> = match get("files").map(|v| (v, &v.value)) {
            None | Some((_, Value::Null)) => Vec::new(),
            Some((_, Value::Seq(items)))
                if items
                    .iter()
                    .all(|i| matches!(&i.value, Value::Str(s) if is_needed_path(s))) =>
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
                    format!("{path}.files"),
                    v,
                    "expected a list of paths relative to the checkout (no `..`, not absolute)",
                );
                Vec::new()
            }
        };
        let setup = match get("setup").map(|v| (v, &v.value)) {
            None | Some((_, Value::Null)) => None,
            Some((_, Value::Str(s))) if is_setup(s) => Some(s.clone()),
            Some((v, _)) => {
                err(
                    errors,
                    format!("{path}.setup"),
                    v,
                    "expected the setup command line (a non-empty string on one line)",
                );
                None
            }
        };
        let at = match get("run_at").map(|v| (v, &v.value)) {
            Some((_, Value::Str(s))) if Timestamp::parse(s).is_some() => Timestamp::parse(s),
            Some((v, _)) => {
                err(
                    errors,
                    format!("{path}.run_at"),
                    v,
                    "expected the time of the run it belongs to, a quoted UTC timestamp",
                );
                None
            }
            None => {
                errors.push(FieldError {
                    field: format!("{path}.run_at"),
                    line: line_of(n),
                    message: "required field is missing".into(),
                });
                None
            }
        };
        if errors.len() > before {
            continue;
        }
        match runs
            .iter_mut()
            .find(|r| &r.name == name && Some(&r.at) == at.as_ref())
        {
            Some(r) => r.needs = Some(Needs { files, setup }),
            None => warnings.push(FieldError {
                field: path,
                line: line_of(n),
                message: "the needs of a run that is no longer the latest run of this check \
                          (not used; the next write drops them)"
                    .into(),
            }),
        }
    }
}

/// Emit `check_needs` (nothing when no run declared any).
pub fn emit_needs(out: &mut String, runs: &[CheckRun]) {
    let with: Vec<(&CheckRun, &Needs)> = runs
        .iter()
        .filter_map(|r| r.needs.as_ref().map(|n| (r, n)))
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str(NEEDS_FIELD);
    out.push_str(":\n");
    for (r, n) in with {
        out.push_str("  ");
        out.push_str(&yaml::scalar(&r.name));
        out.push_str(":\n    files: [");
        out.push_str(
            &n.files
                .iter()
                .map(|a| yaml::quoted(a))
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push_str("]\n");
        if let Some(s) = &n.setup {
            out.push_str("    setup: ");
            out.push_str(&yaml::quoted(s));
            out.push('\n');
        }
        out.push_str("    run_at: ");
        out.push_str(&yaml::quoted(&r.at.to_string()));
        out.push('\n');
    }
}

/// The one-line form of `check_needs`, for messages.
pub fn needs_value(runs: &[CheckRun]) -> Option<String> {
    let parts: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            r.needs.as_ref().map(|n| {
                format!(
                    "{}: files [{}]{}",
                    r.name,
                    n.files.join(", "),
                    n.setup
                        .as_ref()
                        .map(|s| format!(", setup {}", yaml::quoted(s)))
                        .unwrap_or_default()
                )
            })
        })
        .collect();
    (!parts.is_empty()).then(|| format!("{{{}}}", parts.join(", ")))
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
            needs: Some(Needs {
                files: vec!["gen/a b.txt".into()],
                setup: Some("make gen && echo \"ok\"".into()),
            }),
        };
        let mut text = String::new();
        emit_runs(&mut text, std::slice::from_ref(&run));
        emit_needs(&mut text, std::slice::from_ref(&run));
        let node = yaml::parse(&text, 0).unwrap();
        let Value::Map(top) = &node.value else {
            panic!("a mapping")
        };
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let mut back = runs_from_node(&top[0].1, &mut errors);
        needs_from_node(&top[1].1, &mut back, &mut errors, &mut warnings);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(back, vec![run.clone()]);
        // Needs of a run that is no longer the latest are not used, with a warning.
        let later = text.replace(
            "run_at: \"2026-01-31T12:00:00Z\"",
            "run_at: \"2026-01-31T12:00:01Z\"",
        );
        let node = yaml::parse(&later, 0).unwrap();
        let Value::Map(top) = &node.value else {
            panic!("a mapping")
        };
        let mut back = runs_from_node(&top[0].1, &mut errors);
        needs_from_node(&top[1].1, &mut back, &mut errors, &mut warnings);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(back[0].needs, None);
    }

    #[test]
    fn paths_outside_the_checkout_are_found_in_arguments_and_shell_scripts() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            outside_paths(&v(&[
                "sh",
                "-c",
                "cat $HOME/.netrc && ls ${HOME}/x ~/y ~bob/z"
            ])),
            ["$HOME", "${HOME}", "~/y", "~bob/z"]
        );
        assert_eq!(
            outside_paths(&v(&[
                "bash",
                "-ec",
                "make -C /opt/sdk >/dev/null 2>&1; /usr/bin/env true"
            ])),
            ["/opt/sdk"]
        );
        assert_eq!(
            outside_paths(&v(&["/usr/bin/pytest", "--rootdir=/home/d/wt", "tests/"])),
            ["/home/d/wt"]
        );
        // Tools, /dev/null, relative paths, a variable named like HOME, a lone slash: nothing.
        assert!(
            outside_paths(&v(&[
                "sh",
                "-c",
                "/bin/echo ok > /dev/null; cd src && $HOMEDIR_X; cut -d / -f1 a/b"
            ]))
            .is_empty()
        );
        assert!(outside_paths(&v(&["cargo", "test", "--", "--nocapture"])).is_empty());
    }

    #[test]
    fn a_needed_path_is_relative_and_inside_the_checkout() {
        for ok in ["gen/config.txt", ".env", "a/b/c.txt"] {
            assert!(is_needed_path(ok), "{ok}");
        }
        for bad in ["", "/etc/passwd", "~/x", "../x", "a/../../x", "a\nb"] {
            assert!(!is_needed_path(bad), "{bad}");
        }
    }
}
