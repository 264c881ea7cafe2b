//! `pair completions`, `pair man` and `pair help`: generated from the same clap definitions the
//! binary parses.

use clap::CommandFactory;
use serde_json::json;

use super::Outcome;
use crate::cli::{Cli, HelpArgs};
use crate::error::{Error, Result};
use crate::report::SCHEMA;

/// The command line as built for parsing: global flags propagated into every command.
fn built() -> clap::Command {
    let mut cmd = Cli::command();
    cmd.build();
    cmd
}

/// The command line as users see it: the hidden internal commands left out (the generators
/// would otherwise offer them).
fn visible() -> clap::Command {
    let full = Cli::command();
    // The commands as built: with the global flags each accepts.
    let commands = built();
    let mut cmd = clap::Command::new("pair")
        .subcommand_required(true)
        .disable_help_subcommand(true)
        .subcommands(
            commands
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .cloned(),
        )
        .args(full.get_arguments().cloned());
    cmd = cmd.version(env!("CARGO_PKG_VERSION"));
    if let Some(a) = full.get_about() {
        cmd = cmd.about(a.clone());
    }
    if let Some(a) = full.get_long_about() {
        cmd = cmd.long_about(a.clone());
    }
    if let Some(a) = full.get_after_help() {
        cmd = cmd.after_help(a.clone());
    }
    cmd
}

/// A completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Outcome {
    let mut cmd = visible();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "pair", &mut buf);
    let script = String::from_utf8_lossy(&buf).into_owned();
    Outcome::ok(
        json!({"schema": SCHEMA, "shell": shell.to_string(), "script": script}),
        script,
    )
}

/// `pair help [COMMAND]`: the long help of pair or of one command, exit 0.
pub fn help(a: HelpArgs) -> Result<Outcome> {
    let mut cmd = built();
    let target = match &a.command {
        None => &mut cmd,
        Some(name) => cmd
            .find_subcommand_mut(name)
            .ok_or_else(|| Error::Usage(format!("no command {name:?}; see `pair help`")))?,
    };
    let styled = target.render_long_help();
    let plain = styled.to_string();
    let text = if crate::output::color_stdout() {
        styled.ansi().to_string()
    } else {
        plain.clone()
    };
    Ok(Outcome::ok(
        json!({"schema": SCHEMA, "command": a.command, "help": plain}),
        text,
    ))
}

/// The man page, in roff: the top-level page, then one section per command.
pub fn man() -> Result<Outcome> {
    let cmd = visible();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut buf)
        .map_err(|e| Error::io(std::path::Path::new("<stdout>"), "render the man page", e))?;
    // Each visible subcommand's own synopsis, options and examples, as further sections.
    for sub in cmd.get_subcommands() {
        let name = format!("pair {}", sub.get_name());
        let sub = sub
            .clone()
            .bin_name(name.clone())
            .display_name(name.clone());
        let man = clap_mangen::Man::new(sub);
        let mut section = Vec::new();
        let io = |e| Error::io(std::path::Path::new("<stdout>"), "render the man page", e);
        buf.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        man.render_description_section(&mut section).map_err(io)?;
        man.render_synopsis_section(&mut section).map_err(io)?;
        man.render_options_section(&mut section).map_err(io)?;
        man.render_extra_section(&mut section).map_err(io)?;
        // Nested .SH headings would start new top-level sections; demote them to .SS.
        let section = String::from_utf8_lossy(&section).replace("\n.SH ", "\n.SS ");
        let section = section
            .strip_prefix(".SH ")
            .map_or(section.clone(), |s| format!(".SS {s}"));
        buf.extend_from_slice(section.as_bytes());
    }
    let roff = String::from_utf8_lossy(&buf).into_owned();
    Ok(Outcome::ok(json!({"schema": SCHEMA, "roff": roff}), roff))
}
