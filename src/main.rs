//! The `pair` binary: parse arguments, run the command, render the result, map errors to the
//! exit codes of SPEC §7.1.

#![deny(unsafe_code)]

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, FromArgMatches};
use pair::cli::{self, Cli, Cmd, ValidateFormat};
use pair::commands::{self, Outcome};
use pair::render::output::{self};
use pair::text::Settings;
use pair::text::sanitize;
use pair::{Error, store};
use serde_json::{Value as Json, json};

/// Usage errors exit 4 (clap's own default would be 2, which means "lock timeout" here).
const USAGE: u8 = pair::error::exit::USAGE as u8;

/// `--json` anywhere on the command line: the parser's own errors are then JSON too.
fn wants_json(args: &[OsString]) -> bool {
    args.iter().skip(1).any(|a| a == "--json")
}

/// The `--color` given, read before parsing so that the parser's own help and errors follow it.
fn color_arg(args: &[OsString]) -> clap::ColorChoice {
    let mut rest = args.iter().skip(1);
    let mut choice = clap::ColorChoice::Auto;
    while let Some(a) = rest.next() {
        let value = if a == "--color" {
            rest.next().and_then(|v| v.to_str())
        } else {
            a.to_str().and_then(|s| s.strip_prefix("--color="))
        };
        match value {
            Some("always") => choice = clap::ColorChoice::Always,
            Some("never") => choice = clap::ColorChoice::Never,
            Some(_) => choice = clap::ColorChoice::Auto,
            None => {}
        }
    }
    choice
}

/// The JSON error envelope (docs/json.md).
fn envelope(e: &Error) -> Json {
    output::envelope(e)
}

/// A suggested command (the argument vector after `pair`) as one shell line.
fn command_line(argv: &[String]) -> String {
    output::command_line(argv)
}

fn print_error(json: bool, code: i32, kind: &str, message: &str) {
    let mut err = std::io::stderr().lock();
    if json {
        let envelope = json!({
            "schema": pair::render::report::SCHEMA,
            "error": {"code": code, "kind": kind, "message": message}
        });
        let _ = writeln!(err, "{envelope}");
    } else {
        let _ = writeln!(err, "pair: error: {}", sanitize(message.trim_end(), false));
    }
}

/// A parse error, help or version from clap.
fn parse_failure(e: clap::Error, json: bool) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayVersion if json => print_version(true),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            if json {
                print_error(true, USAGE.into(), "usage", &cli::parse_error_message(&e));
            } else {
                let _ = e.print();
            }
            ExitCode::from(USAGE)
        }
    }
}

/// Print the version: `pair X.Y.Z` as clap words it, or its `--json` object.
fn print_version(json: bool) -> ExitCode {
    if json {
        let version = json!({
            "schema": pair::render::report::SCHEMA,
            "name": "pair",
            "version": env!("CARGO_PKG_VERSION"),
        });
        println!("{version}");
    } else {
        println!("pair {}", env!("CARGO_PKG_VERSION"));
    }
    ExitCode::SUCCESS
}

/// `pair --version` (or `-V`), alone or with `--json`: answered before the argument parser is
/// built, since building it is most of what printing the version costs. Any other command line
/// (more flags, a command) goes through the parser, which prints the same.
fn version_only(args: &[OsString]) -> Option<bool> {
    let rest: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    let version = |a: &str| a == "--version" || a == "-V";
    match rest.as_slice() {
        [v] if version(v) => Some(false),
        [a, b] if (version(a) && *b == "--json") || (*a == "--json" && version(b)) => Some(true),
        _ => None,
    }
}

/// Why the command line could not be parsed.
enum Failure {
    Clap(clap::Error),
    Usage(Error),
}

fn parse_once(
    command: &mut clap::Command,
    args: &[OsString],
) -> Result<(Cli, String), clap::Error> {
    let matches = command.try_get_matches_from_mut(args)?;
    let name = matches.subcommand_name().unwrap_or("pair").to_string();
    Cli::from_arg_matches(&matches)
        .map(|cli| (cli, name))
        .map_err(|e| e.format(command))
}

/// Parse the command line. When a command's blackboard was left out, take it from --board or
/// `$PAIR_BOARD`: insert it where BOARD goes and parse again (so that `pair verdict APPROVED
/// …` reads APPROVED as the verdict), or say that no blackboard was given.
fn parse(command: &mut clap::Command, args: &[OsString]) -> Result<(Cli, String), Failure> {
    let e = match parse_once(command, args) {
        Ok(parsed) => return Ok(parsed),
        Err(e) => e,
    };
    let missing: Vec<String> = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(v)) if e.kind() == ErrorKind::MissingRequiredArgument => {
            v.clone()
        }
        _ => return Err(Failure::Clap(e)),
    };
    let Some((at, name)) = cli::board_command(args) else {
        return Err(Failure::Clap(e));
    };
    if !missing.iter().any(|m| m.starts_with('<')) {
        return Err(Failure::Clap(e));
    }
    match cli::default_board(args, std::env::var_os("PAIR_BOARD")) {
        Some(board) => {
            let mut retry = args.to_vec();
            retry.insert(at + 1, board.into_os_string());
            parse_once(command, &retry).map_err(Failure::Clap)
        }
        None if missing
            .iter()
            .any(|m| m.starts_with("<BOARD>") || m.starts_with("<PATH>")) =>
        {
            Err(Failure::Usage(cli::no_board(&name)))
        }
        None => Err(Failure::Clap(e)),
    }
}

/// What the binary needs to know about the command beyond running it.
struct Plan {
    /// The subcommand's name.
    name: String,
    /// The blackboard it works on, if any.
    board: Option<PathBuf>,
    /// Its text is for machines (a script, roff, JSON): printed byte for byte.
    machine_text: bool,
}

impl Plan {
    fn of(cli: &Cli, name: String) -> Plan {
        let (board, machine_text) = match &cli.command {
            Cmd::Init(a) => (Some(a.board.clone()), false),
            Cmd::Poll(a) => (Some(a.board.clone()), false),
            Cmd::Status(a) => (Some(a.board.clone()), false),
            Cmd::Register(a) => (Some(a.board.clone()), false),
            Cmd::Claim(a) | Cmd::Unregister(a) => (Some(a.board.clone()), false),
            Cmd::Submit(a) => (Some(a.board.clone()), false),
            Cmd::Verdict(a) => (Some(a.board.clone()), false),
            Cmd::Dissent(a) => (Some(a.board.clone()), false),
            Cmd::Handoff(a) => (Some(a.board.clone()), false),
            Cmd::Acknowledge(a) => (Some(a.board.clone()), false),
            Cmd::Advance(a) => (Some(a.board.clone()), false),
            Cmd::Block(a) | Cmd::Unblock(a) | Cmd::Stop(a) => (Some(a.board.clone()), false),
            Cmd::Note(a) => (Some(a.board.clone()), false),
            Cmd::Correct(a) => (Some(a.board.clone()), false),
            Cmd::WorktreePath(a) => (Some(a.board.clone()), false),
            Cmd::Worktree(a) => match &a.action {
                pair::cli::WorktreeAction::Create(c) => (Some(c.board.clone()), false),
            },
            Cmd::Check(a) => (Some(a.board.clone()), false),
            // The artifact's bytes, exactly as the pin covers them.
            Cmd::Diff(a) => (Some(a.board.clone()), true),
            Cmd::Show(a) => (Some(a.board.clone()), false),
            Cmd::Brief(a) => (Some(a.board.clone()), false),
            Cmd::ReportUsage(a) => (Some(a.board.clone()), false),
            Cmd::Log(a) => (Some(a.board.clone()), false),
            Cmd::Stats(a) => (a.board.first().cloned(), false),
            Cmd::Write(a) => (a.board().cloned(), false),
            Cmd::Validate(a) => (None, a.format == ValidateFormat::Json),
            Cmd::Completions(_) | Cmd::Man(_) | Cmd::Skill(_) => (None, true),
            Cmd::Demo(_) | Cmd::DemoAgent(_) | Cmd::Help(_) => (None, false),
            Cmd::Object(a) => (Some(a.board.clone()), false),
            Cmd::Resolve(a) => (Some(a.board.clone()), false),
            Cmd::Challenge(a) => (Some(a.board.clone()), false),
            Cmd::Rule(a) => (Some(a.board.clone()), false),
            Cmd::Accept(a) => (Some(a.board.clone()), false),
            Cmd::Reopen(a) | Cmd::Withdraw(a) => (Some(a.board.clone()), false),
            Cmd::Second(a) => (Some(a.board.clone()), false),
            Cmd::Objections(a) => (Some(a.board.clone()), false),
            Cmd::Decide(a) => (Some(a.board.clone()), false),
            Cmd::Extend(a) => (Some(a.board.clone()), false),
            Cmd::Away(a) => (Some(a.board.clone()), false),
            Cmd::Unrequire(a) => (Some(a.board.clone()), false),
            Cmd::Watch(a) => (a.board.first().cloned(), false),
            Cmd::Top(_) => (None, false),
            Cmd::Migrate(a) => (Some(a.to.clone().unwrap_or_else(|| a.from.clone())), false),
            // Its standard output is the protocol's, written as it goes.
            Cmd::Mcp(a) => (Some(a.board.clone()), true),
            Cmd::Ls(_) | Cmd::Next(_) => (None, false),
        };
        Plan {
            name,
            board,
            machine_text,
        }
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// `-v`: what the command locked, read, checked and wrote, from its result, and how long the
/// whole command took.
fn verbose_lines(plan: &Plan, result: &Result<Outcome, Error>, elapsed: Duration) -> Vec<String> {
    let name = &plan.name;
    let board = plan.board.as_deref().map(output::path).unwrap_or_default();
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            return vec![format!(
                "{name} failed after {} with exit {}",
                ms(elapsed),
                e.code()
            )];
        }
    };
    let j = &outcome.json;
    let s = |k: &str| j.get(k).and_then(Json::as_str).map(String::from);
    let mut lines = Vec::new();
    if let Some(new) = s("new_sha256").or_else(|| (name == "init").then(|| s("sha256")).flatten()) {
        let target = s("target").map(PathBuf::from).or_else(|| {
            plan.board
                .as_deref()
                .map(|b| store::resolve(b).unwrap_or_else(|_| b.to_path_buf()))
        });
        match &target {
            // A git board has no lock: the push's lease on the tip read is the compare-and-swap.
            Some(t) if pair::store::location::is_git(t) => {
                lines.push("pushed with a lease on the tip read (no lock)".to_string());
            }
            Some(t) => lines.push(format!("locked {}", output::path(&store::lock_path(t)))),
            None => {}
        }
        lines.push(match s("old_sha256") {
            Some(old) => format!("read {board}: sha256 {old}"),
            None => format!("read {board}: absent (created)"),
        });
        lines.push(format!(
            "checked the new content: valid, phase {}",
            s("phase").unwrap_or_default()
        ));
        lines.push(format!(
            "wrote {}: sha256 {new}",
            target.as_deref().map(output::path).unwrap_or(board.clone())
        ));
        if let Some(op) = s("operation") {
            lines.push(format!("operation {}", pair::text::escape(&op)));
        }
    } else if name == "status" {
        lines.push(format!(
            "read {board}: {} bytes, sha256 {}; checked: valid",
            j.get("size").and_then(Json::as_u64).unwrap_or(0),
            s("sha256").unwrap_or_default()
        ));
    } else if name == "poll" {
        lines.push(format!(
            "read the frontmatter of {board}; checked: valid; phase {}",
            s("phase").unwrap_or_default()
        ));
    } else if name == "validate" {
        lines.push(format!(
            "checked {} file(s): {} invalid",
            j.get("checked").and_then(Json::as_u64).unwrap_or(0),
            j.get("invalid").and_then(Json::as_u64).unwrap_or(0)
        ));
    }
    lines.push(format!(
        "{name} took {} (exit {})",
        ms(elapsed),
        outcome.code
    ));
    lines
}

fn main() -> ExitCode {
    let started = Instant::now();
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Some(json) = version_only(&args) {
        return print_version(json);
    }
    let json = wants_json(&args);
    let parsed = match cli::parse_lean(&args) {
        Some((cli, name)) => Ok((cli, name.to_string())),
        None => parse(&mut Cli::command().color(color_arg(&args)), &args),
    };
    let (mut cli, name) = match parsed {
        Ok(p) => p,
        Err(Failure::Clap(e)) => return parse_failure(e, json),
        Err(Failure::Usage(e)) => {
            print_error(json, e.code(), e.kind(), &e.to_string());
            return ExitCode::from(USAGE);
        }
    };
    let settings = Settings {
        color: cli.global.color,
        quiet: cli.global.quiet,
        verbose: cli.global.verbose,
        json: cli.global.json,
    };
    pair::text::init(settings);
    if let Err(e) = cli.resolve() {
        print_error(json, e.code(), e.kind(), &e.to_string());
        return ExitCode::from(e.code() as u8);
    }
    let plan = Plan::of(&cli, name);
    let result = commands::run(cli);
    if settings.verbose {
        for line in verbose_lines(&plan, &result, started.elapsed()) {
            let _ = writeln!(
                std::io::stderr(),
                "pair: verbose: {}",
                sanitize(&line, false)
            );
        }
    }
    match result {
        Ok(outcome) => {
            // Quiet keeps only errors; validate's list of invalid files is its errors.
            let show = !settings.quiet || plan.name == "validate";
            if outcome.printed {
                // Printed as it went.
            } else if json {
                // Serialised into one buffer and written at once (the `Display` of a JSON
                // value goes through the formatting machinery a piece at a time).
                let mut bytes = serde_json::to_vec(&outcome.json).unwrap_or_default();
                bytes.push(b'\n');
                // A closed pipe (e.g. `| head`) is not worth a panic or a failure exit.
                let _ = std::io::stdout().lock().write_all(&bytes);
            } else if show {
                let mut text = outcome.text;
                if plan.name == "init"
                    && !settings.quiet
                    && let Some(hint) = plan.board.as_deref().and_then(output::gitignore_hint)
                {
                    text.push_str(&hint);
                }
                if plan.machine_text {
                    let _ = std::io::stdout().lock().write_all(text.as_bytes());
                } else {
                    output::print_stdout(&text);
                }
            }
            if !settings.quiet {
                for w in &outcome.warnings {
                    let _ = writeln!(std::io::stderr(), "pair: warning: {}", sanitize(w, false));
                }
            }
            // The process ends here: what it built goes back to the system with it, not freed
            // piece by piece first (a small answer's JSON costs a reader about 1 % more to
            // free than to print). Standard output is flushed on the way out.
            std::process::exit(outcome.code.clamp(0, 255))
        }
        Err(e) => {
            let code = e.code();
            if json {
                let _ = writeln!(std::io::stderr().lock(), "{}", envelope(&e));
            } else {
                // A refusal with a step the caller can take ends with the command to run.
                let message = match e.suggestion() {
                    Some(argv) => format!(
                        "{}. Run `{}`",
                        output::message(&e).trim_end().trim_end_matches('.'),
                        command_line(argv)
                    ),
                    None => output::message(&e),
                };
                print_error(false, code, e.kind(), &message);
            }
            ExitCode::from(code as u8)
        }
    }
}
