//! `pair mcp`'s tools, read from the command line's definitions.
//!
//! Each command an agent runs is a tool of the same name (`worktree create` is
//! `worktree-create`). Its input schema is read from the command's clap arguments — the same
//! definitions the command line is parsed with — and a tool call becomes the command line it
//! stands for, which the same parser turns into the same [`Cli`]. So adding a command adds its
//! tool, and a tool accepts exactly what the command accepts.
//!
//! The server is started for one agent on one blackboard: the blackboard, the agent, the lock
//! timeout and the flags every command shares are fixed then ([`SERVER_ARGS`], and the global
//! options) and are in no tool's schema. A server of a project fixes the project too
//! ([`PROJECT_ARGS`]); its tools act on the board its `next` named. What is no tool is data:
//! [`NOT_TOOLS`].

use std::any::TypeId;
use std::path::PathBuf;

use clap::{ArgAction, Args, CommandFactory, FromArgMatches, ValueHint};
use serde_json::{Map, Value as Json, json};

use crate::cli::Cli;
use crate::error::{Error, Result};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The blackboard every tool works on, or a project (a directory of blackboards, or
    /// git+<url>#<ref-prefix>/): then `next` names the board the other tools work on (may be
    /// left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::AnyPath)]
    pub board: PathBuf,
    /// The agent every tool acts as.
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: String,
    /// How long each write waits for the lock (a git board: for its remote), in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// A directory whose files the tools' `*_file` arguments may also read (repeatable); by
    /// default only the board's directory and the worktree the board records.
    #[arg(long = "read-root", value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub read_roots: Vec<PathBuf>,
}

/// The commands that are no tool, each with why: what only a person runs, what streams its
/// output, and what the server gives in another way.
pub const NOT_TOOLS: &[(&str, &str)] = &[
    ("demo", "a scripted show for a person"),
    ("completions", "a script for a person's shell"),
    ("man", "manual pages, for a person"),
    (
        "help",
        "the command line's help: each tool's schema says what it takes",
    ),
    (
        "migrate",
        "moving a board between stores is a person's decision",
    ),
    (
        "watch",
        "a watchdog that runs until stopped, for a person or a service",
    ),
    (
        "validate",
        "a check for CI: every tool validates the board it reads",
    ),
    (
        "write",
        "a raw whole-file write, for a person's repair: the tools make every change",
    ),
    (
        "log",
        "it streams the journal to standard output, the server's protocol stream; `brief` \
         rebuilds an agent's context",
    ),
    ("stats", "a report for a person"),
    ("top", "a live dashboard for a person at a terminal"),
    (
        "ls",
        "a listing of a project's boards for a person: an agent asks `next`",
    ),
    (
        "report-usage",
        "tokens and cost are in no tool's schema (see docs/spec-reading.md)",
    ),
    ("mcp", "the server itself"),
    (
        "second",
        "seconding an objection is the command line's (`pair second`): the tool list's token \
         budget has no room for another tool",
    ),
];

/// Arguments (by id) in no tool's schema, each with why. The server is started for one agent
/// on one blackboard, so these are fixed when it starts (`pair mcp BOARD --agent ID --timeout
/// SECONDS`) or are flags every write shares that a call does not take. The global options
/// (`--json`, `--color`, `--quiet`, `--verbose`, `--board`) are left out as global.
pub const SERVER_ARGS: &[(&str, &str)] = &[
    ("board", "the server's blackboard"),
    ("paths", "the server's blackboard"),
    ("agent", "the server's agent"),
    ("doer", "the server's agent (`init` names the doer)"),
    ("timeout", "the lock timeout: `pair mcp --timeout`"),
    (
        "tokens",
        "usage is reported on the command line, not per call",
    ),
    (
        "cost",
        "usage is reported on the command line, not per call",
    ),
    (
        "signed",
        "a signed board is made with its maker's key on the command line (`pair init --signed`); \
         the server signs with the key it started with",
    ),
    (
        "expect_sha256",
        "a compare-and-swap on the file's bytes, which an agent that reads through the tools \
         never holds: the protocol judges each change",
    ),
];

/// Arguments the server fixes only when it serves a project (`pair mcp PROJECT --agent ID`):
/// (tool, argument, why).
pub const PROJECT_ARGS: &[(&str, &str, &str)] = &[("next", "project", "the server's project")];

/// Arguments a tool keeps although [`SERVER_ARGS`] names them: `poll`'s and `next`'s timeouts
/// bound their waits, not a lock.
pub const OWN_ARGS: &[(&str, &str)] = &[("poll", "timeout"), ("next", "timeout")];

/// Arguments several tools take, described once in the server's instructions and in no schema.
pub const SHARED_ARGS: &[(&str, &str)] = &[
    (
        "note",
        "Markdown without `#` or `##` headings (`note_file`: read from a file)",
    ),
    ("code", "the note in a code block"),
    ("user_approved", "only once the user agreed (a human gate)"),
    ("waive", "the user's reason to skip the step's condition"),
];

/// The text a tool's command refuses to run without (exit 4, "give the …"): (tool, the
/// arguments any one of which gives it). Each is also given by its file twin `ARGUMENT_file`,
/// so the schema requires one of them (`anyOf`). A verdict of UNABLE gives its `reason`
/// instead of a note. The ledger's texts (an objection's title, evidence, fix; a resolution)
/// are checked by their commands alike but not listed here: the tool list's token budget
/// ([`crate::cli::mcp`] tests) keeps their schemas plain.
pub const REQUIRED_TEXT: &[(&str, &[&str])] = &[
    ("submit", &["note"]),
    ("verdict", &["note", "reason"]),
    ("dissent", &["note"]),
    ("note", &["note"]),
    ("correct", &["note"]),
];

/// Arguments a tool leaves out although its command takes them: (tool, argument, why).
pub const LEFT_OUT: &[(&str, &str, &str)] = &[
    (
        "poll",
        "interval",
        "how often a wait re-reads where it cannot be told of a change: the defaults fit an agent",
    ),
    (
        "poll",
        "until",
        "waiting past COMMITTED for the doer's records of the merge and the clean-up is the \
         command line's (`pair poll --until`): a tool's wait ends at COMMITTED",
    ),
    (
        "next",
        "interval",
        "how often a wait asks a git remote: the default fits an agent",
    ),
    (
        "next",
        "max_held",
        "how many pool reviews an agent holds at once: one at a time fits an agent",
    ),
    (
        "check",
        "yes",
        "a reproduction runs another agent's command here: the server runs a required check \
         without setup (the user's command), and refuses the others with the command line to \
         run from a shell once read",
    ),
    (
        "check",
        "needs",
        "what a check needs besides its command is declared on the command line",
    ),
    (
        "check",
        "setup",
        "what a check needs besides its command is declared on the command line",
    ),
    ("init", "dissent", USERS_CHOICE),
    ("init", "dissenter_every_cycle", USERS_CHOICE),
    ("init", "yolo", USERS_CHOICE),
    ("init", "independent_review", USERS_CHOICE),
    ("init", "sla", USERS_CHOICE),
    ("init", "require_check", USERS_CHOICE),
    ("init", "format", USERS_CHOICE),
    ("init", "template", USERS_CHOICE),
    ("init", "from_review", USERS_CHOICE),
    ("init", "after", USERS_CHOICE),
];

/// Why a board's policies are no tool's arguments: pre-approving the human gates, the dissent
/// stage, the independence policy, SLAs, required checks, an older format, a template and a
/// debate's findings as the goal are the user's choices, made on the command line when the
/// board is created, never an agent's.
const USERS_CHOICE: &str =
    "a board's policy is the user's choice when the board is made, on the command line";

/// How long a waiting `poll` waits through the server when the call names no timeout, in
/// seconds: within what common clients allow one request (about 60 s). An agent calls it
/// again, as it polls again on the command line.
pub const POLL_TIMEOUT_S: f64 = 45.0;

/// Defaults a tool has that differ from the command line's: (tool, argument, value).
pub const SERVER_DEFAULTS: &[(&str, &str, f64)] = &[
    ("poll", "timeout", POLL_TIMEOUT_S),
    ("next", "timeout", POLL_TIMEOUT_S),
];

/// What the server fixes when it starts, for every call.
#[derive(Debug, Clone)]
pub struct Fixed {
    /// The board a call works on (for a server of a project, the board the last `next` named;
    /// the project itself for `next`).
    pub board: PathBuf,
    /// The project the server serves, if it serves one (`pair mcp PROJECT`).
    pub project: Option<PathBuf>,
    pub agent: String,
    /// The lock timeout, in seconds.
    pub timeout: f64,
    /// The writer's session and model every write records: the server's own (`pair mcp
    /// --session ID --model NAME`, or `PAIR_SESSION`, `PAIR_MODEL` as it started), whatever
    /// a call's environment says.
    pub origin: crate::board::journal::Origin,
    /// The writer's transcript every write reads: the server's own (`pair mcp --transcript
    /// FILE`, or `PAIR_TRANSCRIPT` as it started), whatever a call's environment says.
    pub transcript: Option<PathBuf>,
    /// The signing key and trust root every call uses: the server's own (`pair mcp
    /// --signing-key KEY --allowed-signers FILE`, or their variables as it started), never a
    /// call's argument.
    pub keys: crate::signature::Keys,
    /// The directories beside the board's and the recorded worktree that a call's files may be
    /// read from (`pair mcp --read-root DIR`).
    pub read_roots: Vec<PathBuf>,
}

/// One tool: a command an agent runs, its schema, and how a call becomes its command line.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The command's words joined by `-`: `poll`, `worktree-create`.
    pub name: String,
    /// The command's words: `["worktree", "create"]`.
    pub words: Vec<String>,
    /// What it does, in one line (the command's own).
    pub description: String,
    params: Vec<Param>,
    /// Every argument of the command that takes a value, by long flag: read when a suggested
    /// command line is turned back into a call.
    valued: Vec<String>,
    /// The positional arguments in order, by id (the blackboard's included).
    positionals: Vec<String>,
    /// The long flag that names the agent (`agent`; `init`'s is `doer`).
    agent_flag: Option<String>,
    /// The id of the positional argument the server fills in: the blackboard (`board`,
    /// `paths`), or the project (`next`'s, on a server of a project).
    board_id: Option<String>,
    takes_lock_timeout: bool,
}

/// One argument of a tool.
#[derive(Debug, Clone)]
struct Param {
    /// As the schema names it: the long flag with `_` for `-`, or a positional's id.
    name: String,
    id: String,
    long: Option<String>,
    positional: bool,
    /// After `--` (`check`'s command).
    last: bool,
    kind: Kind,
    many: bool,
    required: bool,
    default: Option<String>,
    help: String,
    /// Names a file that `-` would make standard input: the server's protocol stream.
    file: bool,
    delimiter: Option<char>,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Flag,
    Integer,
    Number,
    Text,
    Choice(Vec<String>),
}

/// The command line's definitions, built (global options propagated, positions numbered).
fn definitions() -> clap::Command {
    let mut cmd = Cli::command();
    cmd.build();
    cmd
}

/// Every tool, in the order the command line defines the commands.
pub fn tools() -> Vec<Tool> {
    tools_of(false)
}

/// Every tool of a server of a project: the same tools, with [`PROJECT_ARGS`] fixed too.
pub fn project_tools() -> Vec<Tool> {
    tools_of(true)
}

fn tools_of(project: bool) -> Vec<Tool> {
    let root = definitions();
    let mut out = Vec::new();
    collect(&root, &mut Vec::new(), project, &mut out);
    out
}

/// The commands that are tools' and the commands that are not, by words joined with a space:
/// every visible command is in exactly one of the two.
pub fn visible_commands() -> Vec<String> {
    fn walk(cmd: &clap::Command, words: &mut Vec<String>, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            words.push(sub.get_name().to_string());
            if sub.has_subcommands() && !is_not_tool(&words.join(" ")) {
                walk(sub, words, out);
            } else {
                out.push(words.join(" "));
            }
            words.pop();
        }
    }
    let mut out = Vec::new();
    walk(&definitions(), &mut Vec::new(), &mut out);
    out
}

fn is_not_tool(command: &str) -> bool {
    NOT_TOOLS.iter().any(|(c, _)| *c == command)
}

fn collect(cmd: &clap::Command, words: &mut Vec<String>, project: bool, out: &mut Vec<Tool>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        words.push(sub.get_name().to_string());
        if is_not_tool(&words.join(" ")) {
        } else if sub.has_subcommands() {
            collect(sub, words, project, out);
        } else {
            out.push(tool(sub, words, project));
        }
        words.pop();
    }
}

fn tool(sub: &clap::Command, words: &[String], project: bool) -> Tool {
    let name = words.join("-");
    let mut params = Vec::new();
    let mut valued = Vec::new();
    let mut agent_flag = None;
    let mut board_id = None;
    let mut takes_lock_timeout = false;
    let mut positionals: Vec<(usize, String)> = Vec::new();
    for arg in sub.get_arguments() {
        let id = arg.get_id().as_str();
        if matches!(id, "help" | "version") {
            continue;
        }
        let takes_value = !matches!(
            arg.get_action(),
            ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
        );
        if let Some(long) = arg.get_long() {
            if takes_value {
                valued.push(long.to_string());
                valued.extend(
                    arg.get_all_aliases()
                        .unwrap_or_default()
                        .into_iter()
                        .map(String::from),
                );
            }
            let aliases = arg.get_all_aliases().unwrap_or_default();
            if !arg.is_global_set() && (long == "agent" || aliases.contains(&"agent")) {
                agent_flag = Some(long.to_string());
            }
        }
        if arg.is_positional() {
            positionals.push((arg.get_index().unwrap_or(usize::MAX), id.to_string()));
        }
        if arg.is_global_set() {
            continue;
        }
        if LEFT_OUT.iter().any(|(t, a, _)| *t == name && *a == id) {
            continue;
        }
        if project && PROJECT_ARGS.iter().any(|(t, a, _)| *t == name && *a == id) {
            board_id = Some(id.to_string());
            continue;
        }
        let own = OWN_ARGS.iter().any(|(t, a)| *t == name && *a == id);
        if SERVER_ARGS.iter().any(|(a, _)| *a == id) && !own {
            match id {
                "board" | "paths" => board_id = Some(id.to_string()),
                "timeout" => takes_lock_timeout = true,
                _ => {}
            }
            continue;
        }
        let parser = arg.get_value_parser();
        let type_id = parser.type_id();
        let kind = if !takes_value {
            Kind::Flag
        } else if [
            TypeId::of::<u8>(),
            TypeId::of::<u16>(),
            TypeId::of::<u32>(),
            TypeId::of::<u64>(),
            TypeId::of::<i32>(),
            TypeId::of::<i64>(),
            TypeId::of::<usize>(),
        ]
        .iter()
        .any(|t| type_id == *t)
        {
            Kind::Integer
        } else if type_id == TypeId::of::<f64>() || type_id == TypeId::of::<f32>() {
            Kind::Number
        } else {
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            // Hidden possible values are suggestions (a work type) or too many to list (the
            // phases): the command checks the value with its own message.
            if values.is_empty() || arg.is_hide_possible_values_set() {
                Kind::Text
            } else {
                Kind::Choice(values)
            }
        };
        let server_default = SERVER_DEFAULTS
            .iter()
            .find(|(t, a, _)| *t == name && *a == id)
            .map(|(_, _, v)| v.to_string());
        let default = server_default.or_else(|| {
            (kind != Kind::Flag)
                .then(|| arg.get_default_values().first())
                .flatten()
                .map(|v| v.to_string_lossy().into_owned())
        });
        let file = arg
            .get_value_names()
            .is_some_and(|names| names.iter().any(|n| n.as_str() == "FILE"));
        params.push(Param {
            name: match arg.get_long() {
                Some(long) if !arg.is_positional() => long.replace('-', "_"),
                _ => id.to_string(),
            },
            id: id.to_string(),
            long: arg.get_long().map(String::from),
            positional: arg.is_positional(),
            last: arg.is_last_set(),
            kind,
            many: matches!(arg.get_action(), ArgAction::Append),
            required: arg.is_required_set(),
            default,
            help: arg.get_help().map(|h| h.to_string()).unwrap_or_default(),
            file,
            delimiter: arg.get_value_delimiter(),
        });
    }
    positionals.sort();
    // Positionals first, in their order (the schema reads as the command line does).
    params.sort_by_key(|p| !p.positional);
    Tool {
        description: short_help(&sub.get_about().map(|a| a.to_string()).unwrap_or_default()),
        name,
        words: words.to_vec(),
        params,
        valued,
        positionals: positionals.into_iter().map(|(_, id)| id).collect(),
        agent_flag,
        board_id,
        takes_lock_timeout,
    }
}

/// A help text as short as a schema wants it: its first sentence and first clause (up to `; `),
/// without parenthetical asides, a flag `--name-x` spelled as its argument `name_x`.
fn short_help(help: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut code = false;
    let mut chars = help.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => code = !code,
            '(' if !code => {
                depth += 1;
                out.truncate(out.trim_end().len());
                continue;
            }
            ')' if !code && depth > 0 => {
                depth -= 1;
                continue;
            }
            '.' | ';' if !code && depth == 0 && chars.peek().is_none_or(|n| *n == ' ') => break,
            _ => {}
        }
        if depth > 0 {
            continue;
        }
        if c == '-'
            && !code
            && out.ends_with('-')
            && chars.peek().is_some_and(char::is_ascii_lowercase)
        {
            // `--flag-name` → `flag_name`.
            out.pop();
            while let Some(n) = chars.next_if(|n| n.is_ascii_lowercase() || *n == '-') {
                out.push(if n == '-' { '_' } else { n });
            }
            continue;
        }
        out.push(c);
    }
    out.trim().to_string()
}

/// Whether a description says more than the schema around it already does: more than one word
/// besides small words and the words of `known` (the argument's and the tool's names, its
/// possible values), a word being known when it is one of those or shares their first four
/// letters ("The branch merged into" says nothing `merged_into` does not).
fn says_more(description: &str, known: &[&str]) -> bool {
    const SMALL: &[&str] = &[
        "the", "a", "an", "your", "you", "of", "this", "that", "to", "into", "for", "or", "and",
        "is", "it", "its", "in", "on", "with", "by", "as", "be", "s",
    ];
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect()
    };
    let known: Vec<String> = known.iter().flat_map(|k| words(k)).collect();
    let is_known = |w: &str| {
        known.iter().any(|k| {
            k == w || (w.len() >= 4 && k.len() >= 4 && w.as_bytes()[..4] == k.as_bytes()[..4])
        })
    };
    words(description)
        .iter()
        .filter(|w| !SMALL.contains(&w.as_str()) && !is_known(w))
        .count()
        > 1
}

impl Tool {
    /// The tool's input schema: a plain JSON Schema object (no `$ref`, no `$defs`), each
    /// property named as its flag is (`-` written `_`) or as its positional argument.
    pub fn schema(&self) -> Map<String, Json> {
        let mut properties = Map::new();
        for p in &self.params {
            let scalar = |kind: &Kind| match kind {
                Kind::Flag => json!({"type": "boolean"}),
                Kind::Integer => json!({"type": "integer"}),
                Kind::Number => json!({"type": "number"}),
                Kind::Text => json!({"type": "string"}),
                Kind::Choice(values) => json!({"type": "string", "enum": values}),
            };
            let mut prop = if p.many {
                json!({"type": "array", "items": scalar(&p.kind)})
            } else {
                scalar(&p.kind)
            };
            if let Some(help) = self.describe(p) {
                prop["description"] = json!(help);
            }
            if let Some(d) = &p.default {
                prop["default"] = match p.kind {
                    Kind::Integer | Kind::Number => d
                        .parse::<f64>()
                        .ok()
                        .and_then(|n| {
                            if n.fract() == 0.0 {
                                Some(json!(n as i64))
                            } else {
                                serde_json::Number::from_f64(n).map(Json::Number)
                            }
                        })
                        .unwrap_or(json!(d)),
                    _ => json!(d),
                };
            }
            properties.insert(p.name.clone(), prop);
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Json::Object(properties));
        let mut required: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| p.name.as_str())
            .collect();
        // A required text: the text or its file (or another argument that stands for it).
        let mut either: Vec<Json> = Vec::new();
        for (_, args) in REQUIRED_TEXT.iter().filter(|(tool, _)| *tool == self.name) {
            let alternatives: Vec<Json> = args
                .iter()
                .flat_map(|arg| [arg.to_string(), format!("{arg}_file")])
                .filter(|arg| self.has_argument(arg))
                .map(|arg| json!({"required": [arg]}))
                .collect();
            match alternatives.len() {
                0 => {}
                1 => required.extend(
                    self.params
                        .iter()
                        .find(|p| Some(p.name.as_str()) == alternatives[0]["required"][0].as_str())
                        .map(|p| p.name.as_str()),
                ),
                _ => either.push(json!({"anyOf": alternatives})),
            }
        }
        if !required.is_empty() {
            schema.insert("required".into(), json!(required));
        }
        match either.len() {
            0 => {}
            1 => schema.extend(either.remove(0).as_object().cloned().unwrap_or_default()),
            _ => {
                schema.insert("allOf".into(), json!(either));
            }
        }
        schema
    }

    /// An argument's description in the schema, if it needs one: none for an argument the
    /// instructions describe ([`SHARED_ARGS`]), for the file twin `NAME_file` of a text argument
    /// `NAME`, and for a help that says no more than the name.
    fn describe(&self, p: &Param) -> Option<String> {
        if SHARED_ARGS.iter().any(|(name, _)| *name == p.name) {
            return None;
        }
        if p.name
            .strip_suffix("_file")
            .is_some_and(|text| self.has_argument(text))
        {
            return None;
        }
        let mut known = vec![p.name.as_str(), self.name.as_str()];
        if let Kind::Choice(values) = &p.kind {
            known.extend(values.iter().map(String::as_str));
        }
        Some(short_help(&p.help)).filter(|h| says_more(h, &known))
    }

    /// Whether the tool's command names the agent that runs it (`--agent`): every command an
    /// agent runs does.
    pub fn acts_as_agent(&self) -> bool {
        self.agent_flag.is_some()
    }

    /// Whether the server fills in the tool's board (or, for `next` on a server of a project,
    /// its project): `skill` takes none.
    pub fn takes_board(&self) -> bool {
        self.board_id.is_some()
    }

    /// Whether the tool takes the argument `name` (as its schema names it).
    pub fn has_argument(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.name == name)
    }

    /// The command line (after `pair`) a call of this tool with `args` stands for: the fixed
    /// blackboard, agent and lock timeout, then the call's arguments as their flags.
    pub fn command_line(&self, args: &Map<String, Json>, fixed: &Fixed) -> Result<Vec<String>> {
        for name in args.keys() {
            if !self.has_argument(name) {
                let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                return Err(Error::Usage(format!(
                    "`{name}` is not an argument of `{}`; {}",
                    self.name,
                    if names.is_empty() {
                        "it takes none".to_string()
                    } else {
                        format!("it takes {}", names.join(", "))
                    }
                )));
            }
        }
        let mut argv = self.words.clone();
        if self.board_id.is_some() {
            argv.push(fixed.board.display().to_string());
        }
        let mut options = Vec::new();
        let mut last = Vec::new();
        for p in &self.params {
            let Some(value) = args.get(&p.name).filter(|v| !v.is_null()) else {
                continue;
            };
            if p.kind == Kind::Flag {
                match value {
                    Json::Bool(true) => options.push(format!("--{}", flag(p))),
                    Json::Bool(false) => {}
                    _ => return Err(wrong_type(p, "true or false")),
                }
                continue;
            }
            let values: Vec<String> = match value {
                Json::Array(items) if p.many => {
                    items.iter().map(|v| word(p, v)).collect::<Result<_>>()?
                }
                Json::Array(_) => return Err(wrong_type(p, "one value, not a list")),
                v => vec![word(p, v)?],
            };
            for v in values {
                if p.file && v == "-" {
                    return Err(Error::Usage(format!(
                        "`{}`: `-` would read standard input, which is the MCP server's \
                         protocol stream; give a file's path, or the text itself",
                        p.name
                    )));
                }
                if p.last {
                    last.push(v);
                } else if p.positional {
                    if v.starts_with('-') {
                        return Err(Error::Usage(format!(
                            "`{}`: a value that begins with `-` would be read as a flag",
                            p.name
                        )));
                    }
                    argv.push(v);
                } else if v.is_empty() || v.starts_with('-') {
                    options.push(format!("--{}={v}", flag(p)));
                } else {
                    options.push(format!("--{}", flag(p)));
                    options.push(v);
                }
            }
        }
        if let Some(agent) = &self.agent_flag {
            argv.push(format!("--{agent}"));
            argv.push(fixed.agent.clone());
        }
        if self.takes_lock_timeout && fixed.timeout != LOCK_TIMEOUT_DEFAULT {
            argv.push("--timeout".into());
            argv.push(fixed.timeout.to_string());
        }
        argv.extend(options);
        if !last.is_empty() {
            argv.push("--".into());
            argv.extend(last);
        }
        Ok(argv)
    }

    /// A command line (starting with `pair`) of this tool's command as a call: the arguments
    /// it gives, less what the server fixes, and the board (or project) it names. `None` when
    /// it is not this tool's command, or uses an argument the tool leaves out ([`LEFT_OUT`]).
    fn call_of(&self, argv: &[String]) -> Option<(Map<String, Json>, Option<String>)> {
        let rest = argv.get(1..)?;
        if rest.len() < self.words.len() || rest[..self.words.len()] != self.words[..] {
            return None;
        }
        let mut args = Map::new();
        let mut board = None;
        let mut positional = 0usize;
        let mut words = rest[self.words.len()..].iter();
        let mut after_dashes = false;
        while let Some(w) = words.next() {
            if !after_dashes && w == "--" {
                after_dashes = true;
                continue;
            }
            if !after_dashes && let Some(flag) = w.strip_prefix("--") {
                let (long, inline) = match flag.split_once('=') {
                    Some((l, v)) => (l, Some(v.to_string())),
                    None => (flag, None),
                };
                let param = self.params.iter().find(|p| p.long.as_deref() == Some(long));
                // A command line with an argument the tool leaves out is no call of it.
                if param.is_none()
                    && LEFT_OUT
                        .iter()
                        .any(|(t, a, _)| *t == self.name && *a == long.replace('-', "_"))
                {
                    return None;
                }
                let value = if param.is_some_and(|p| p.kind == Kind::Flag) {
                    None
                } else if inline.is_some() {
                    inline
                } else if self.valued.iter().any(|v| v == long) {
                    words.next().cloned()
                } else {
                    None
                };
                if let Some(p) = param {
                    put(&mut args, p, value);
                }
                continue;
            }
            let param = if after_dashes {
                self.params.iter().find(|p| p.last)
            } else {
                let id = self.positionals.get(positional)?;
                positional += 1;
                if self.board_id.as_ref() == Some(id) {
                    board = Some(w.clone());
                }
                self.params
                    .iter()
                    .find(|p| &p.id == id && p.positional && !p.last)
            };
            if let Some(p) = param {
                put(&mut args, p, Some(w.clone()));
            }
        }
        // Where the server has its own default (a wait within one request's time), the command
        // line's value is left to it: a client that copies the call must not wait longer than
        // it allows a request.
        for (_, arg, _) in SERVER_DEFAULTS.iter().filter(|(t, _, _)| *t == self.name) {
            args.remove(*arg);
        }
        Some((args, board))
    }
}

/// The lock timeout a write waits by default, in seconds (the command line's default, left off
/// the command lines the server makes).
pub const LOCK_TIMEOUT_DEFAULT: f64 = 10.0;

fn flag(p: &Param) -> &str {
    p.long.as_deref().unwrap_or(&p.id)
}

fn wrong_type(p: &Param, what: &str) -> Error {
    Error::Usage(format!("`{}` takes {what}", p.name))
}

/// A value of a call as one word of the command line.
fn word(p: &Param, v: &Json) -> Result<String> {
    match v {
        Json::String(s) => Ok(s.clone()),
        Json::Number(n) => Ok(n.to_string()),
        Json::Bool(_) | Json::Null | Json::Array(_) | Json::Object(_) => Err(wrong_type(
            p,
            match p.kind {
                Kind::Integer => "a whole number",
                Kind::Number => "a number",
                _ => "a string",
            },
        )),
    }
}

/// Set a call's argument from a word of a command line.
fn put(args: &mut Map<String, Json>, p: &Param, value: Option<String>) {
    let scalar = |w: &str| match p.kind {
        Kind::Integer => w.parse::<i64>().map(Json::from).unwrap_or(json!(w)),
        Kind::Number => w
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Json::Number)
            .unwrap_or(json!(w)),
        _ => json!(w),
    };
    let Some(value) = value else {
        args.insert(p.name.clone(), json!(true));
        return;
    };
    if p.many {
        let entry = args.entry(p.name.clone()).or_insert_with(|| json!([]));
        if let Json::Array(items) = entry {
            match p.delimiter {
                Some(d) => items.extend(value.split(d).map(scalar)),
                None => items.push(scalar(&value)),
            }
        }
    } else {
        args.insert(p.name.clone(), scalar(&value));
    }
}

/// A suggested command line (starting with `pair`) as the call of a tool that stands for it:
/// `{"name", "arguments"}`, or `None` when its command is no tool.
pub fn call_of(tools: &[Tool], argv: &[String]) -> Option<Json> {
    call_on(tools, argv).map(|(call, _)| call)
}

/// A suggested command line as a call ([`call_of`]), with the board (or, for `next` on a server
/// of a project, the project) the command names, as it names it.
pub fn call_on(tools: &[Tool], argv: &[String]) -> Option<(Json, Option<String>)> {
    if argv.first().map(String::as_str) != Some("pair") {
        return None;
    }
    // The tool with the most words first: `worktree-create`, not a `worktree`.
    let mut candidates: Vec<&Tool> = tools.iter().collect();
    candidates.sort_by_key(|t| std::cmp::Reverse(t.words.len()));
    candidates.into_iter().find_map(|t| {
        t.call_of(argv)
            .map(|(args, board)| (json!({"name": t.name, "arguments": args}), board))
    })
}

/// Parse the command line of a call (after `pair`) with the command line's own parser: the
/// same [`Cli`] the binary would run. A parse error is the usage error clap words.
pub fn parse(argv: &[String]) -> Result<Cli> {
    let mut cmd = Cli::command();
    let words = std::iter::once("pair".to_string()).chain(argv.iter().cloned());
    let matches = cmd
        .try_get_matches_from_mut(words)
        .map_err(|e| Error::Usage(super::parse_error_message(&e)))?;
    Cli::from_arg_matches(&matches)
        .map_err(|e| Error::Usage(super::parse_error_message(&e.format(&mut cmd))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_help_is_cut_to_its_first_clause_without_asides() {
        assert_eq!(short_help("Your agent id."), "Your agent id");
        assert_eq!(
            short_help("Read the text from a file (`-` for stdin)."),
            "Read the text from a file"
        );
        assert_eq!(
            short_help("The SHA-256 (as `pair diff` gave it. Or not): refused. More."),
            "The SHA-256: refused"
        );
        assert_eq!(
            short_help("Where: `path:line`, `a.b (c)`. Then"),
            "Where: `path:line`, `a.b (c)`"
        );
        assert_eq!(
            short_help("With --wait: keep waiting; then stop"),
            "With wait: keep waiting"
        );
        assert_eq!(
            short_help("After `--` and --no-review."),
            "After `--` and no_review"
        );
        assert!(!says_more("The text", &[]));
        assert!(!says_more("Your verdict", &["verdict"]));
        assert!(!says_more(
            "The branch merged into",
            &["merged_into", "advance"]
        ));
        assert!(!says_more(
            "blocking or advisory",
            &["severity", "blocking", "advisory"]
        ));
        assert!(says_more("The new topic branch", &["branch"]));
    }
}
