//! `pair mcp`: the agent commands as MCP tools.
//!
//! The tools, their schemas and the token budget are checked on the definitions the server
//! lists; the server itself is driven by two clients nobody here wrote: the official MCP Python
//! SDK (a doer and a reviewer server on one board, through a whole lifecycle) and the MCP
//! Inspector's command-line mode. Both are installed by `scripts/mcp-clients.sh`, which these
//! tests run themselves when the clients are missing (and `.ci/run` runs first); where it cannot
//! install them the tests that need them are skipped and recorded, except under CI.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use pair::cli::mcp::{self as tools, Fixed, NOT_TOOLS, SERVER_ARGS, SHARED_ARGS};
use pair::cli::{Cli, Cmd};
use serde_json::{Value as Json, json};

use crate::common::prereq::{self, Need};
use crate::common::{pair, pair_bin};

/// The budget of the whole `tools/list` answer plus the instructions, in tokens (bytes / 4).
const TOKEN_BUDGET: usize = 3_500;

/// What an agent's client would read first: the `tools/list` answer as the server sends it
/// (a JSON-RPC response) and the instructions, of a server of one board or (`project`) of a
/// project.
fn surface(agent: &str, project: bool) -> (String, String) {
    let listed = pair::commands::mcp::listing(&if project {
        tools::project_tools()
    } else {
        tools::tools()
    });
    let answer = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"tools": listed},
    });
    let fixed = Fixed {
        board: PathBuf::from(if project {
            "/home/user/src/app/boards"
        } else {
            "/home/user/src/app/task.md"
        }),
        project: project.then(|| PathBuf::from("/home/user/src/app/boards")),
        agent: agent.into(),
        timeout: 10.0,
        origin: Default::default(),
        transcript: None,
        keys: Default::default(),
        read_roots: vec![],
    };
    (
        answer.to_string(),
        pair::commands::mcp::instructions(&fixed),
    )
}

#[test]
fn every_command_an_agent_runs_is_a_tool_and_every_other_is_listed_with_why() {
    let tools = tools::tools();
    let names: Vec<String> = tools.iter().map(|t| t.words.join(" ")).collect();
    let excluded: BTreeSet<&str> = NOT_TOOLS.iter().map(|(c, _)| *c).collect();
    for command in tools::visible_commands() {
        let is_tool = names.contains(&command);
        let is_not = excluded.contains(command.as_str());
        assert!(
            is_tool != is_not,
            "`pair {command}` must be a tool of `pair mcp` or be listed in NOT_TOOLS with why \
             (it is {})",
            if is_tool { "both" } else { "neither" }
        );
    }
    for (command, why) in NOT_TOOLS {
        assert!(
            tools::visible_commands().iter().any(|c| c == command),
            "NOT_TOOLS names `{command}`, which is not a command"
        );
        assert!(!why.is_empty(), "NOT_TOOLS: say why `{command}` is no tool");
    }
    // A command an agent runs takes --agent (SPEC: every agent command names its agent); one
    // that does not is a person's, and belongs in NOT_TOOLS.
    for t in &tools {
        assert!(
            t.acts_as_agent(),
            "tool `{}`: its command takes no --agent; a command only a person runs belongs in \
             NOT_TOOLS",
            t.name
        );
        assert!(
            t.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "tool name `{}`",
            t.name
        );
    }
    for agent_command in [
        "poll",
        "submit",
        "verdict",
        "object",
        "worktree-create",
        "check",
    ] {
        assert!(
            tools.iter().any(|t| t.name == agent_command),
            "{agent_command}"
        );
    }
}

/// Every `$ref`-like key, anywhere in a schema.
fn refs(json: &Json, found: &mut Vec<String>) {
    match json {
        Json::Object(obj) => {
            for (k, v) in obj {
                if k.starts_with('$') || k == "definitions" {
                    found.push(k.clone());
                }
                refs(v, found);
            }
        }
        Json::Array(items) => items.iter().for_each(|v| refs(v, found)),
        _ => {}
    }
}

#[test]
fn schemas_are_plain_json_schema_and_take_no_flag_the_server_fixes() {
    let fixed_flags = [
        "agent", "board", "json", "color", "quiet", "verbose", "tokens", "cost",
    ];
    for t in tools::tools() {
        let schema = Json::Object(t.schema());
        let mut found = Vec::new();
        refs(&schema, &mut found);
        assert!(found.is_empty(), "{}: {found:?} in {schema}", t.name);
        assert_eq!(schema["type"], "object", "{}", t.name);
        let props = schema["properties"].as_object().expect("properties");
        for (name, prop) in props {
            let ty = prop["type"].as_str().unwrap_or_default();
            assert!(
                ["string", "integer", "number", "boolean", "array"].contains(&ty),
                "{}.{name}: type {ty:?}",
                t.name
            );
            if ty == "array" {
                assert!(prop["items"]["type"].is_string(), "{}.{name}", t.name);
            }
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}.{name}: named as its flag, `_` for `-`",
                t.name
            );
        }
        for flag in fixed_flags {
            assert!(!props.contains_key(flag), "{} takes `{flag}`", t.name);
        }
        for (arg, _) in SERVER_ARGS {
            let own = tools::OWN_ARGS.contains(&(t.name.as_str(), *arg));
            assert!(own || !props.contains_key(*arg), "{} takes `{arg}`", t.name);
        }
        for required in schema["required"].as_array().into_iter().flatten() {
            assert!(
                props.contains_key(required.as_str().unwrap()),
                "{}: {required}",
                t.name
            );
        }
        assert!(
            !t.description.is_empty() && !t.description.contains('\n'),
            "{}: one line",
            t.name
        );
    }
}

#[test]
fn the_tools_and_instructions_fit_the_token_budget() {
    let perf =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/PERFORMANCE.md"))
            .unwrap();
    for (what, project) in [("pair mcp BOARD", false), ("pair mcp PROJECT", true)] {
        let (answer, instructions) = surface("reviewer-1", project);
        let bytes = answer.len() + instructions.len();
        let tokens = bytes / 4;
        eprintln!(
            "{what} surface: tools/list {} bytes + instructions {} bytes = {bytes} bytes, \
             {tokens} tokens (budget {TOKEN_BUDGET})",
            answer.len(),
            instructions.len()
        );
        assert!(
            tokens < TOKEN_BUDGET,
            "{what}: tools/list ({} bytes) + instructions ({} bytes) = {tokens} tokens, over the \
             budget of {TOKEN_BUDGET}: shorten what the schemas say (docs/PERFORMANCE.md)",
            answer.len(),
            instructions.len()
        );
        // The figure docs/PERFORMANCE.md reports is this one, to the hundred.
        let hundreds = format!("~{},{:03}", tokens / 1000, tokens % 1000 / 100 * 100);
        assert!(
            perf.contains(&format!("`{what}`: **{hundreds} tokens**")),
            "docs/PERFORMANCE.md should report the surface of `{what}` as `{what}`: \
             **{hundreds} tokens** ({tokens})"
        );
        for (name, _) in SHARED_ARGS {
            assert!(
                instructions.contains(&format!("`{name}`")),
                "{what}: the instructions describe `{name}`"
            );
        }
    }
    // A server of a project fixes `next`'s project, as a server of a board fixes the board.
    let tools = tools::project_tools();
    let next = tools.iter().find(|t| t.name == "next").unwrap();
    assert!(!next.has_argument("project"), "{:?}", next.schema());
    assert!(next.has_argument("wait") && next.has_argument("timeout"));
}

#[test]
fn a_waiting_poll_defaults_to_a_timeout_clients_allow_and_keeps_its_own() {
    let tools = tools::tools();
    let poll = tools.iter().find(|t| t.name == "poll").unwrap();
    const { assert!(tools::POLL_TIMEOUT_S < 60.0) };
    assert_eq!(
        poll.schema()["properties"]["timeout"]["default"],
        json!(tools::POLL_TIMEOUT_S as i64)
    );
    let fixed = Fixed {
        board: "t.md".into(),
        project: None,
        agent: "alice".into(),
        timeout: 10.0,
        origin: Default::default(),
        transcript: None,
        keys: Default::default(),
        read_roots: vec![],
    };
    let call = |args: Json| {
        let Json::Object(args) = args else { panic!() };
        let (cli, _) = pair::commands::mcp::prepare(poll, &args, &fixed).unwrap();
        match cli.command {
            Cmd::Poll(p) => (p.wait, p.timeout),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(call(json!({"wait": true})), (true, tools::POLL_TIMEOUT_S));
    assert_eq!(call(json!({"wait": true, "timeout": 5})), (true, 5.0));
    assert!(!call(json!({})).0);
}

#[test]
fn a_waiting_next_defaults_to_the_same_timeout_and_on_a_project_is_the_projects_poll() {
    let fixed = Fixed {
        board: "proj".into(),
        project: None,
        agent: "alice".into(),
        timeout: 10.0,
        origin: Default::default(),
        transcript: None,
        keys: Default::default(),
        read_roots: vec![],
    };
    let args = |v: Json| match v {
        Json::Object(args) => args,
        _ => panic!(),
    };
    let tools = tools::tools();
    let next = tools.iter().find(|t| t.name == "next").unwrap();
    let (cli, _) = pair::commands::mcp::prepare(
        next,
        &args(json!({"project": "proj", "wait": true})),
        &fixed,
    )
    .unwrap();
    match cli.command {
        Cmd::Next(n) => assert_eq!((n.wait, n.timeout), (true, tools::POLL_TIMEOUT_S)),
        other => panic!("{other:?}"),
    }
    // On a server of a project, the project is the server's and the wait is its poll from the
    // server's cursor (`0` stands for one not read yet).
    let tools = tools::project_tools();
    let next = tools.iter().find(|t| t.name == "next").unwrap();
    let fixed = Fixed {
        project: Some("proj".into()),
        ..fixed
    };
    for (cursor, after) in [(None, "0"), (Some("p1.AAAA"), "p1.AAAA")] {
        let (cli, argv) = pair::commands::mcp::prepare_project_wait(
            next,
            &args(json!({"wait": true})),
            &fixed,
            cursor,
        )
        .unwrap();
        assert_eq!(argv[..2], ["poll", "proj"], "{argv:?}");
        match cli.command {
            Cmd::Poll(p) => {
                assert_eq!((p.wait, p.timeout), (true, tools::POLL_TIMEOUT_S));
                assert_eq!(p.after.as_deref(), Some(after));
                assert_eq!(p.agent, "alice");
            }
            other => panic!("{other:?}"),
        }
    }
    let refused = pair::commands::mcp::prepare_project_wait(
        next,
        &args(json!({"wait": true, "project": "elsewhere"})),
        &fixed,
        None,
    );
    assert!(
        refused.is_err(),
        "a project named in the call is no argument here"
    );
}

#[test]
fn a_suggested_wait_as_a_call_waits_within_the_servers_time_not_the_command_lines() {
    // The command line's waits say `--timeout 600`; a client that copies the call must not
    // wait longer than a request may take.
    let tools = tools::tools();
    for words in [
        vec![
            "pair",
            "poll",
            "t.md",
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "600",
        ],
        vec![
            "pair",
            "next",
            "proj",
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "600",
        ],
    ] {
        let words: Vec<String> = words.into_iter().map(String::from).collect();
        let call = tools::call_of(&tools, &words).unwrap_or_else(|| panic!("{words:?}"));
        assert_eq!(call["arguments"]["wait"], json!(true), "{call}");
        assert!(
            call["arguments"].get("timeout").is_none(),
            "the server's own wait ({} s) applies: {call}",
            tools::POLL_TIMEOUT_S
        );
    }
}

#[test]
fn a_required_text_is_required_by_the_schema_as_the_text_or_its_file() {
    let tools = tools::tools();
    let schema = |name: &str| tools.iter().find(|t| t.name == name).unwrap().schema();
    let either = |args: &[&str]| {
        json!(
            args.iter()
                .flat_map(|a| [a.to_string(), format!("{a}_file")])
                .filter(|a| a != "reason_file")
                .map(|a| json!({"required": [a]}))
                .collect::<Vec<_>>()
        )
    };
    for name in ["submit", "note", "dissent", "correct"] {
        let s = schema(name);
        assert_eq!(s["anyOf"], either(&["note"]), "{name}: {s:#?}");
    }
    // A verdict of UNABLE gives its reason instead.
    let s = schema("verdict");
    assert_eq!(s["anyOf"], either(&["note", "reason"]), "{s:#?}");
    for name in ["poll", "status", "claim", "block"] {
        let s = schema(name);
        assert!(s.get("anyOf").is_none(), "{name}: {s:#?}");
    }
    for (tool, _) in tools::REQUIRED_TEXT {
        assert!(tools.iter().any(|t| t.name == *tool), "{tool} is a tool");
    }
}

/// A documented example (`pair …` in a command's help) as shell words: quotes removed, up to a
/// comment, a pipe or a redirection; `None` for a line that is not a `pair` command.
fn example_words(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    if !line.starts_with("pair ") {
        return None;
    }
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    w.push(q);
                }
            }
            ' ' => words.extend(word.take()),
            '#' | '|' | '>' | '&' if word.is_none() => break,
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// Every documented example of every tool's command, as shell words.
fn documented_examples() -> Vec<Vec<String>> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    let mut help = Vec::new();
    fn walk(cmd: &clap::Command, help: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            if let Some(h) = sub.get_after_help() {
                help.push(h.to_string());
            }
            walk(sub, help);
        }
    }
    walk(&cmd, &mut help);
    for h in help {
        // A line ending in `\` goes on on the next.
        let joined = h.replace("\\\n", " ");
        for line in joined.lines() {
            if let Some(words) = example_words(line) {
                out.push(words);
            }
        }
    }
    out
}

/// The value of `--flag` on a command line.
fn flag_value<'a>(words: &'a [String], flag: &str) -> Option<&'a str> {
    words.iter().enumerate().find_map(|(i, w)| {
        if w == flag {
            words.get(i + 1).map(String::as_str)
        } else {
            w.strip_prefix(&format!("{flag}="))
        }
    })
}

#[test]
fn every_documented_example_is_a_call_that_runs_the_same_command() {
    let tools = tools::tools();
    let mut calls = Vec::new();
    let mut covered = BTreeSet::new();
    for words in documented_examples() {
        let Some(call) = tools::call_of(&tools, &words) else {
            continue;
        };
        let name = call["name"].as_str().unwrap().to_string();
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let Json::Object(args) = &call["arguments"] else {
            panic!("{call}")
        };
        // What a call cannot give: standard input.
        if args.values().any(|v| v == "-") {
            continue;
        }
        // Through the server every command names its agent.
        let mut words = words.clone();
        if flag_value(&words, "--agent").is_none() && flag_value(&words, "--doer").is_none() {
            words.extend(["--agent".to_string(), "doer".to_string()]);
        }
        let original =
            Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{words:?} does not parse: {e}"));
        let board = match &original.command {
            Cmd::Skill(_) => PathBuf::from("unused.md"),
            _ => PathBuf::from(words[tool.words.len() + 1].clone()),
        };
        let fixed = Fixed {
            board,
            project: None,
            agent: flag_value(&words, "--agent")
                .or_else(|| flag_value(&words, "--doer"))
                .unwrap_or("doer")
                .to_string(),
            timeout: flag_value(&words, "--timeout")
                .filter(|_| name != "poll")
                .map(|t| t.parse().unwrap())
                .unwrap_or(10.0),
            origin: Default::default(),
            transcript: None,
            keys: Default::default(),
            read_roots: vec![],
        };
        let argv = tool
            .command_line(args, &fixed)
            .unwrap_or_else(|e| panic!("{words:?} as {call}: {e}"));
        let through = tools::parse(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let mut expected = format!("{:?}", original.command);
        // The flags a call does not take: the file's expected SHA-256, tokens and cost.
        if flag_value(&words, "--expect-sha256").is_some()
            || flag_value(&words, "--tokens").is_some()
        {
            expected = format!("{:?}", through.command);
        }
        assert_eq!(
            format!("{:?}", through.command),
            expected,
            "the example {words:?} as the call {call} runs another command: {argv:?}"
        );
        covered.insert(name);
        calls.push(call);
    }
    let missing: Vec<&str> = tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| !covered.contains(*n))
        .collect();
    assert!(
        missing.is_empty(),
        "tools with no documented example: {missing:?}"
    );
    assert!(calls.len() >= tools.len());
}

#[test]
fn a_call_of_a_refusals_hint_is_the_suggested_command() {
    let tools = tools::tools();
    let words: Vec<String> = [
        "pair",
        "advance",
        "/b/t.md",
        "--agent",
        "doer",
        "PLANNING",
        "--json",
        "--user-approved",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(
        tools::call_of(&tools, &words),
        Some(json!({"name": "advance", "arguments": {"phase": "PLANNING", "user_approved": true}}))
    );
    let words: Vec<String> = "pair verdict /b/t.md --agent alice VERDICT --revision 1 --artifact-sha256 ab --objections BLK-1,BLK-2 --note-file FILE"
        .split(' ')
        .map(String::from)
        .collect();
    assert_eq!(
        tools::call_of(&tools, &words),
        Some(json!({"name": "verdict", "arguments": {
            "verdict": "VERDICT", "revision": 1, "artifact_sha256": "ab",
            "objections": ["BLK-1", "BLK-2"], "note_file": "FILE"}}))
    );
    let words: Vec<String> = "pair worktree create /b/t.md --agent doer --user-approved"
        .split(' ')
        .map(String::from)
        .collect();
    assert_eq!(
        tools::call_of(&tools, &words),
        Some(json!({"name": "worktree-create", "arguments": {"user_approved": true}}))
    );
    // A command that is no tool has no call.
    let words: Vec<String> = ["pair", "log", "t.md"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(tools::call_of(&tools, &words), None);
    // In a result, each suggested command gets its call beside it.
    let mut result = json!({"next": {"command": ["pair", "claim", "/b/t.md", "--agent", "alice"]},
                            "error": {"hint": {"argv": ["pair", "log", "t.md"]}}});
    pair::commands::mcp::calls(&tools, &mut result);
    assert_eq!(
        result["next"]["tool"],
        json!({"name": "claim", "arguments": {}})
    );
    assert_eq!(result["error"]["hint"]["tool"], Json::Null);
}

#[test]
fn a_call_is_refused_before_it_runs_when_its_arguments_are_wrong() {
    let tools = tools::tools();
    let tool = |n: &str| tools.iter().find(|t| t.name == n).unwrap();
    let fixed = Fixed {
        board: "t.md".into(),
        project: None,
        agent: "doer".into(),
        timeout: 10.0,
        origin: Default::default(),
        transcript: None,
        keys: Default::default(),
        read_roots: vec![],
    };
    let refused = |t: &str, args: Json| {
        let Json::Object(args) = args else { panic!() };
        match pair::commands::mcp::prepare(tool(t), &args, &fixed) {
            Err(e) => (e.code(), e.to_string()),
            Ok((cli, _)) => panic!("{t} {args:?} was accepted: {cli:?}"),
        }
    };
    let (code, msg) = refused("note", json!({"section": "Evidence", "note_file": "-"}));
    assert_eq!(code, 4);
    assert!(msg.contains("standard input"), "{msg}");
    let (code, msg) = refused("poll", json!({"bogus": 1}));
    assert_eq!(code, 4);
    assert!(msg.contains("`bogus`") && msg.contains("wait"), "{msg}");
    let (code, msg) = refused("poll", json!({"wait": "yes"}));
    assert_eq!(code, 4);
    assert!(msg.contains("true or false"), "{msg}");
    let (code, msg) = refused("verdict", json!({"verdict": "MAYBE", "revision": 1}));
    assert_eq!(code, 4);
    assert!(msg.contains("MAYBE"), "{msg}");
    let (code, msg) = refused("show", json!({"section": "-x"}));
    assert_eq!(code, 4);
    assert!(msg.contains("section"), "{msg}");
    // A value that begins with `-` is given as `--flag=value`, never read as a flag.
    let Json::Object(args) = json!({"section": "Evidence", "note": "--user-approved"}) else {
        panic!()
    };
    let (cli, argv) = pair::commands::mcp::prepare(tool("note"), &args, &fixed).unwrap();
    assert!(
        argv.contains(&"--note=--user-approved".to_string()),
        "{argv:?}"
    );
    match cli.command {
        Cmd::Note(n) => assert_eq!(n.text.note.as_deref(), Some("--user-approved")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn mcp_needs_its_agent_and_a_board() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("t.md");
    let board = board.to_str().unwrap();
    let out = pair(["mcp", board]);
    assert_eq!(out.code, Some(4), "{}", out.report());
    assert!(out.stderr.contains("--agent"), "{}", out.report());
    let out = pair(["mcp", "--agent", "alice"]);
    assert_eq!(out.code, Some(4), "{}", out.report());
    assert!(out.stderr.contains("no blackboard"), "{}", out.report());
    let out = pair(["mcp", board, "--agent", "not an id"]);
    assert_eq!(out.code, Some(4), "{}", out.report());
    // A client that goes away before it says anything ends the server quietly.
    let out = pair(["mcp", board, "--agent", "alice"]);
    assert_eq!(out.code, Some(0), "{}", out.report());
    assert_eq!(out.stdout, "", "{}", out.report());
}

// ---------------------------------------------------------------------------------------------
// real clients

const MCP_PYTHON: Need = Need {
    what: "the MCP Python SDK (tests/mcp/requirements.txt) in target/mcp-clients/venv",
    how: "network access to PyPI and npm: the tests run scripts/mcp-clients.sh themselves",
};

const MCP_INSPECTOR: Need = Need {
    what: "the MCP Inspector (tests/mcp/package-lock.json) in target/mcp-clients/npm",
    how: "network access to PyPI and npm: the tests run scripts/mcp-clients.sh themselves",
};

fn clients_dir() -> PathBuf {
    prereq::skip_file().with_file_name("mcp-clients")
}

/// Install the pinned clients (`scripts/mcp-clients.sh`) once per test run when they are missing,
/// so that `cargo test` alone sets up what these tests need. Tests of several binaries may run it
/// at once: a lock on a file beside the clients puts them in turn, and the script installs only
/// what is missing. Whether it worked is for [`prereq::require`] to judge, by the files it made.
fn install_clients() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if python().is_file() && inspector().is_file() {
            return;
        }
        let dir = clients_dir();
        let _ = std::fs::create_dir_all(&dir);
        let Ok(lock) = std::fs::File::create(dir.with_file_name("mcp-clients.lock")) else {
            return;
        };
        if lock.lock().is_err() {
            return;
        }
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let target = dir.parent().map(Path::to_path_buf).unwrap_or_default();
        let out = std::process::Command::new(manifest.join("scripts/mcp-clients.sh"))
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(manifest)
            .output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!(
                "scripts/mcp-clients.sh failed ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => eprintln!("scripts/mcp-clients.sh did not run: {e}"),
        }
    });
}

fn python() -> PathBuf {
    clients_dir().join("venv/bin/python")
}

fn inspector() -> PathBuf {
    clients_dir()
        .join("npm/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py")
}

/// The names of the tools, as the server should list them.
fn tool_names() -> String {
    tools::tools()
        .iter()
        .map(|t| t.name.clone())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn the_python_sdk_runs_a_doer_and_a_reviewer_through_a_task() {
    install_clients();
    if !prereq::require(&MCP_PYTHON, python().is_file()) {
        return;
    }
    if !prereq::require(&prereq::GIT, prereq::on_path("git")) {
        return;
    }
    // Isolated (`-I`: no PYTHON* variable applies), and its checks are explicit raises, which
    // no optimisation switches off: a check that cannot hold fails the run even with
    // PYTHONOPTIMIZE set.
    let out = assert_cmd::Command::new(python())
        .arg("-I")
        .arg(script())
        .arg("self-check")
        .env("PYTHONOPTIMIZE", "2")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("CheckFailed: the client's checks are live"),
        "the client's checks do not fail when they should ({:?}):\n{stderr}",
        out.status
    );
    let dir = tempfile::tempdir().unwrap();
    let examples = dir.path().join("examples.json");
    std::fs::write(&examples, serde_json::to_string(&example_calls()).unwrap()).unwrap();
    let out = assert_cmd::Command::new(python())
        .arg("-I")
        .arg(script())
        .args(["lifecycle", "--pair"])
        .arg(pair_bin())
        .arg("--dir")
        .arg(dir.path())
        .args(["--tools", &tool_names(), "--examples"])
        .arg(&examples)
        .env("PYTHONOPTIMIZE", "2")
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP client failed ({:?}):\n{stderr}\n{stdout}",
        out.status
    );
    let summary: Json =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let steps = summary["steps"].as_array().unwrap();
    assert!(steps.len() >= 12, "{summary}");
    eprintln!(
        "{}",
        steps
            .iter()
            .map(|s| format!("  {}", s.as_str().unwrap()))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_python_sdk_runs_two_doers_and_a_reviewer_through_a_project() {
    install_clients();
    if !prereq::require(&MCP_PYTHON, python().is_file()) {
        return;
    }
    if !prereq::require(&prereq::GIT, prereq::on_path("git")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::new(python())
        .arg("-I")
        .arg(script())
        .args(["project", "--pair"])
        .arg(pair_bin())
        .arg("--dir")
        .arg(dir.path())
        .env("PYTHONOPTIMIZE", "2")
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP client failed ({:?}):\n{stderr}\n{stdout}",
        out.status
    );
    let summary: Json =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    eprintln!("{summary:#}");
    // Each agent took its steps through `next` alone: the doers every step of their boards
    // from DRAFT to COMMITTED, the reviewer a registration and two verdicts on each board.
    let calls = |agent: &str| -> Vec<String> {
        summary["calls"][agent]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    };
    for (doer, boards) in [("d1", &["a", "b"][..]), ("d2", &["c"][..])] {
        let made = calls(doer);
        for board in boards {
            let on: Vec<&str> = made
                .iter()
                .filter_map(|c| c.strip_prefix(&format!("{board}:")))
                .collect();
            assert_eq!(
                on,
                ["advance", "submit", "worktree-create", "submit", "advance"],
                "{doer} on {board}: {made:?}"
            );
        }
    }
    let made = calls("alice");
    for board in ["a", "b", "c"] {
        let on: Vec<&str> = made
            .iter()
            .filter_map(|c| c.strip_prefix(&format!("{board}:")))
            .collect();
        assert_eq!(
            on,
            ["register", "verdict", "verdict"],
            "alice on {board}: {made:?}"
        );
    }
}

/// The documented examples as calls.
fn example_calls() -> Vec<Json> {
    let tools = tools::tools();
    documented_examples()
        .iter()
        .filter_map(|w| tools::call_of(&tools, w))
        .filter(|c| {
            !c["arguments"]
                .as_object()
                .unwrap()
                .values()
                .any(|v| v == "-")
        })
        .collect()
}

/// Runs the Inspector's command-line mode against `pair mcp BOARD --agent alice`.
fn inspect(dir: &Path, board: &Path, method: &[&str]) -> Json {
    let out = assert_cmd::Command::new("node")
        .arg(inspector())
        .args(["--cli"])
        .args(method)
        .arg("--")
        .arg(pair_bin())
        .arg("mcp")
        .arg(board)
        .args(["--agent", "alice"])
        .current_dir(dir)
        .env("HOME", dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Inspector failed ({:?}) on {method:?}:\n{}\n{stdout}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_inspector_lists_the_tools_and_calls_poll() {
    install_clients();
    if !prereq::require(
        &MCP_INSPECTOR,
        inspector().is_file() && prereq::on_path("node"),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("task.md");
    let board_arg = board.to_str().unwrap();
    let init = pair([
        "init",
        board_arg,
        "--goal",
        "Inspect",
        "--reviewers",
        "alice",
    ]);
    assert_eq!(init.code, Some(0), "{}", init.report());
    let registered = pair(["register", board_arg, "--agent", "alice"]);
    assert_eq!(registered.code, Some(0), "{}", registered.report());
    // --strict: the Inspector's check of how portable each schema is across clients fails
    // (exit 6) on any problem it rates an error.
    let listed = inspect(dir.path(), &board, &["--method", "tools/list", "--strict"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.join(","), tool_names());
    let polled = inspect(
        dir.path(),
        &board,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "poll",
            "--tool-arg",
            "wait=true",
            "timeout=1",
        ],
    );
    assert_ne!(polled["isError"], json!(true), "{polled}");
    let text = polled["content"][0]["text"].as_str().unwrap();
    let turn: Json = serde_json::from_str(text).unwrap();
    assert_eq!(turn["your_turn"], json!(false), "{turn}");
    assert_eq!(turn["exit"], json!(10), "{turn}");
    assert_eq!(turn["phase"], json!("DRAFT"), "{turn}");
    assert!(turn["waited_ms"].as_u64().unwrap() >= 1000, "{turn}");
}

// ---------------------------------------------------------------------------------------------
// the README's configurations

/// The fenced blocks of the README's section on MCP clients: (language, text).
fn readme_blocks() -> Vec<(String, String)> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("## Agent clients (MCP)")
        .expect("README.md has a section `## Agent clients (MCP)`");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.strip_prefix("```") {
            let mut text = String::new();
            for l in lines.by_ref() {
                if l.starts_with("```") {
                    break;
                }
                text.push_str(l);
                text.push('\n');
            }
            blocks.push((lang.to_string(), text));
        }
    }
    blocks
}

/// A configured server's command line is `pair mcp` for an agent on a board, and runs: started
/// as the client would start it (here with no client, so it ends at once), it exits 0.
fn assert_runs_pair_mcp(command: &str, args: &[String], what: &str) {
    assert_eq!(command, "pair", "{what}: the command is `pair`");
    assert_eq!(
        args.first().map(String::as_str),
        Some("mcp"),
        "{what}: {args:?}"
    );
    assert!(
        args.iter().any(|a| a == "--agent"),
        "{what}: {args:?} names no agent"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::output_in(
        dir.path(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: `pair {}` does not run: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_readme_configures_common_clients_with_a_command_that_runs() {
    let blocks = readme_blocks();
    let mut checked = 0;
    for (lang, text) in &blocks {
        match lang.as_str() {
            "json" => {
                let config: Json = serde_json::from_str(text).unwrap_or_else(|e| {
                    panic!("a JSON block of the README does not parse: {e}\n{text}")
                });
                let servers = config
                    .get("mcpServers")
                    .or_else(|| config.get("servers"))
                    .and_then(Json::as_object)
                    .unwrap_or_else(|| panic!("no mcpServers or servers in {config}"));
                for (name, server) in servers {
                    let args: Vec<String> = server["args"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| a.as_str().unwrap().to_string())
                        .collect();
                    assert_runs_pair_mcp(server["command"].as_str().unwrap(), &args, name);
                    checked += 1;
                }
            }
            "toml" => {
                let value = |key: &str| {
                    text.lines()
                        .find_map(|l| l.trim().strip_prefix(&format!("{key} = ")))
                        .unwrap_or_else(|| panic!("no `{key} = ` in {text}"))
                };
                let command: String = serde_json::from_str(value("command")).unwrap();
                let args: Vec<String> = serde_json::from_str(value("args")).unwrap();
                assert_runs_pair_mcp(&command, &args, "config.toml");
                checked += 1;
            }
            "sh" => {
                for line in text.lines().filter(|l| l.contains(" -- pair mcp")) {
                    let words =
                        example_words(&format!("pair {}", line.split(" -- pair ").nth(1).unwrap()))
                            .unwrap();
                    assert_runs_pair_mcp("pair", &words[1..], line);
                    checked += 1;
                }
            }
            _ => {}
        }
    }
    assert!(
        checked >= 4,
        "the README configures {checked} clients: {blocks:?}"
    );
}
