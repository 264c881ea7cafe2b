//! The `pair` binary: parse arguments, run the command, render the result, map errors to the
//! exit codes of SPEC §7.1.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;
use pair::cli::Cli;
use pair::commands;

/// Usage errors exit 4 (clap's own default would be 2, which means "lock timeout" here).
const USAGE: u8 = pair::error::exit::USAGE as u8;

fn wants_json() -> bool {
    std::env::args_os().skip(1).any(|a| a == "--json")
}

fn print_error(json: bool, code: i32, kind: &str, message: &str, suggestion: Option<&[String]>) {
    let mut err = std::io::stderr().lock();
    let command = suggestion.map(|argv| {
        std::iter::once("pair".to_string())
            .chain(argv.iter().map(|a| pair::protocol::shell_arg(a)))
            .collect::<Vec<_>>()
            .join(" ")
    });
    if json {
        let mut error = serde_json::json!({"code": code, "kind": kind, "message": message});
        if let (Some(argv), Some(command)) = (suggestion, &command) {
            let mut full = vec!["pair".to_string()];
            full.extend(argv.iter().cloned());
            error["hint"] = serde_json::json!({"argv": full, "command": command});
        }
        let envelope = serde_json::json!({"schema": pair::report::SCHEMA, "error": error});
        let _ = writeln!(err, "{envelope}");
    } else {
        let message = message.trim_end();
        match command {
            Some(c) => {
                let _ = writeln!(
                    err,
                    "pair: error: {}. Run `{c}`",
                    message.trim_end_matches('.')
                );
            }
            None => {
                let _ = writeln!(err, "pair: error: {message}");
            }
        }
    }
}

fn main() -> ExitCode {
    let json = wants_json();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    ExitCode::SUCCESS
                }
                _ => {
                    if json {
                        // clap's message up to its usage block, on one line.
                        let detail = e.render().to_string();
                        let message = detail
                            .split("\n\nUsage:")
                            .next()
                            .unwrap_or(&detail)
                            .split("\n\nFor more information")
                            .next()
                            .unwrap_or(&detail)
                            .trim_start_matches("error: ")
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ");
                        print_error(true, USAGE.into(), "usage", &message, None);
                    } else {
                        let _ = e.print();
                    }
                    ExitCode::from(USAGE)
                }
            };
        }
    };
    let json = cli.json;
    match commands::run(cli) {
        Ok(outcome) => {
            let mut out = std::io::stdout().lock();
            let written = if json {
                writeln!(out, "{}", outcome.json)
            } else {
                write!(out, "{}", outcome.text)
            };
            // A closed pipe (e.g. `| head`) is not worth a panic or a failure exit.
            drop(written);
            for w in &outcome.warnings {
                let _ = writeln!(std::io::stderr(), "pair: warning: {w}");
            }
            ExitCode::from(outcome.code.clamp(0, 255) as u8)
        }
        Err(e) => {
            let code = e.code();
            print_error(json, code, e.kind(), &e.to_string(), e.suggestion());
            ExitCode::from(code as u8)
        }
    }
}
