//! `pair completions`, `pair man` and `pair help`: generated from the same clap definitions the
//! binary parses.

use std::path::Path;

use clap::CommandFactory;
use serde_json::json;

use super::Outcome;
use crate::cli::{Cli, HelpArgs, ManArgs};
use crate::error::{Error, Result};
use crate::render::report::SCHEMA;

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
    let text = if crate::render::output::color_stdout() {
        styled.ansi().to_string()
    } else {
        plain.clone()
    };
    Ok(Outcome::ok(
        json!({"schema": SCHEMA, "command": a.command, "help": plain}),
        text,
    ))
}

const ENVIRONMENT: &str = r#".SH ENVIRONMENT
.TP
\fBPAIR_AGENT\fR
The default of \fB\-\-agent\fR: this agent's id.
.TP
\fBPAIR_BOARD\fR
The default of \fB\-\-board\fR: the blackboard of every command whose \fIBOARD\fR is left out.
.TP
\fBPAIR_SESSION\fR, \fBPAIR_MODEL\fR
The defaults of \fB\-\-session\fR and \fB\-\-model\fR: the writer's session and model, recorded with every write.
.TP
\fBPAIR_TRANSCRIPT\fR
The default of \fB\-\-transcript\fR: the writer's own transcript, whose tokens since its previous write every write records.
.TP
\fBNO_COLOR\fR
When set to a non\-empty value, human output is not coloured (unless \fB\-\-color always\fR).
.TP
\fBCLICOLOR_FORCE\fR
When set to a value other than empty or \fB0\fR, human output is coloured even when stdout is not a terminal (\fBNO_COLOR\fR wins).
.TP
\fBTERM\fR
When \fBdumb\fR, human output is not coloured (unless \fB\-\-color always\fR or \fBCLICOLOR_FORCE\fR).
"#;

const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
done (for \fBpoll\fR: it is your turn)
.TP
\fB1\fR
I/O or unexpected error: report it
.TP
\fB2\fR
lock not acquired within the timeout: retry later
.TP
\fB3\fR
stale: the file, or the counter named, changed since you read it: re\-read, redo
.TP
\fB4\fR
usage error: fix the call
.TP
\fB5\fR
the blackboard (or the new content) is invalid: repair it (the message ends with the \fBpair write \-\-repair\fR command to run)
.TP
\fB6\fR
protocol violation (transition, gate, role or ownership): read the message
.TP
\fB7\fR
blackboard missing, or already exists on create
.TP
\fB10\fR
\fBpoll\fR: not your turn (with \fB\-\-wait\fR: still not when \fB\-\-timeout\fR ran out): poll again
.TP
\fB11\fR
\fBpoll\fR: the phase is terminal (COMMITTED, MERGED, CLEANED_UP, STOPPED): stop
.TP
\fB12\fR
\fBpoll\fR: the work is BLOCKED: the doer asks the user and unblocks; others wait with \fB\-\-wait \-\-through\-blocked\fR
"#;

const FILES: &str = r#".SH FILES
.TP
\fIBOARD\fB.lock\fR, \fIBOARD\fB.lock.owner.json\fR
The lock every write takes, and who holds it; kept beside the blackboard (ignore them in git: \fB*.md.lock\fR, \fB*.md.lock.owner.json\fR).
.TP
\fI<repo>\fB/.worktrees/\fI<stem>\fR
The default coding worktree (\fBpair worktree\-path\fR); ignore \fB.worktrees/\fR in git.
"#;

fn render_err(e: std::io::Error) -> Error {
    Error::io(Path::new("<stdout>"), "render the man page", e)
}

/// Demote the `.SH` headings of a rendered page to `.SS`, to nest it in another page.
fn nested(section: &[u8]) -> String {
    let section = String::from_utf8_lossy(section).replace("\n.SH ", "\n.SS ");
    section
        .strip_prefix(".SH ")
        .map_or(section.clone(), |s| format!(".SS {s}"))
}

/// pair(1): the top-level page, with one section per command, so that it stands alone.
fn top_page() -> Result<String> {
    let cmd = visible();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    man.render_title(&mut buf).map_err(render_err)?;
    man.render_name_section(&mut buf).map_err(render_err)?;
    man.render_synopsis_section(&mut buf).map_err(render_err)?;
    man.render_description_section(&mut buf)
        .map_err(render_err)?;
    man.render_options_section(&mut buf).map_err(render_err)?;
    man.render_subcommands_section(&mut buf)
        .map_err(render_err)?;
    // Each visible command's own synopsis, options and examples, as further sections.
    for sub in cmd.get_subcommands() {
        let name = format!("pair {}", sub.get_name());
        let sub = sub
            .clone()
            .bin_name(name.clone())
            .display_name(name.clone());
        let man = clap_mangen::Man::new(sub);
        let mut section = Vec::new();
        buf.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        man.render_description_section(&mut section)
            .map_err(render_err)?;
        man.render_synopsis_section(&mut section)
            .map_err(render_err)?;
        man.render_options_section(&mut section)
            .map_err(render_err)?;
        man.render_extra_section(&mut section).map_err(render_err)?;
        buf.extend_from_slice(nested(&section).as_bytes());
    }
    man.render_extra_section(&mut buf).map_err(render_err)?;
    buf.extend_from_slice(EXIT_STATUS.as_bytes());
    buf.extend_from_slice(ENVIRONMENT.as_bytes());
    buf.extend_from_slice(FILES.as_bytes());
    man.render_version_section(&mut buf).map_err(render_err)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// pair-COMMAND(1): one command's page.
fn command_page(name: &str) -> Result<String> {
    let cmd = visible();
    let Some(sub) = cmd.find_subcommand(name) else {
        return Err(Error::Usage(format!(
            "no command {name:?}; see `pair help`"
        )));
    };
    let sub = sub
        .clone()
        .display_name(format!("pair-{name}"))
        .bin_name(format!("pair {name}"));
    let man = clap_mangen::Man::new(sub).source(format!("pair {}", env!("CARGO_PKG_VERSION")));
    let mut buf = Vec::new();
    man.render_title(&mut buf).map_err(render_err)?;
    man.render_name_section(&mut buf).map_err(render_err)?;
    man.render_synopsis_section(&mut buf).map_err(render_err)?;
    man.render_description_section(&mut buf)
        .map_err(render_err)?;
    man.render_options_section(&mut buf).map_err(render_err)?;
    man.render_extra_section(&mut buf).map_err(render_err)?;
    buf.extend_from_slice(EXIT_STATUS.as_bytes());
    buf.extend_from_slice(ENVIRONMENT.as_bytes());
    buf.extend_from_slice(b".SH \"SEE ALSO\"\n\\fBpair\\fR(1)\n");
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `pair man`: the top-level page; `pair man COMMAND`: one command's page; `pair man --dir
/// DIR`: every page written into DIR.
pub fn man(a: ManArgs) -> Result<Outcome> {
    if let Some(dir) = &a.dir {
        return write_pages(dir);
    }
    let roff = match &a.command {
        Some(name) => command_page(name)?,
        None => top_page()?,
    };
    Ok(Outcome::ok(
        json!({"schema": SCHEMA, "command": a.command, "roff": roff}),
        roff,
    ))
}

fn write_pages(dir: &Path) -> Result<Outcome> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the directory", e))?;
    let mut pages = vec![("pair.1".to_string(), top_page()?)];
    for sub in visible().get_subcommands() {
        let name = sub.get_name();
        pages.push((format!("pair-{name}.1"), command_page(name)?));
    }
    let mut files = Vec::new();
    for (file, roff) in pages {
        let path = dir.join(&file);
        std::fs::write(&path, roff).map_err(|e| Error::io(&path, "write", e))?;
        files.push(path.display().to_string());
    }
    let text = format!(
        "wrote {} man pages to {} (pair.1 and pair-COMMAND.1)\n",
        files.len(),
        crate::render::output::path(dir)
    );
    Ok(Outcome::ok(
        json!({"schema": SCHEMA, "dir": dir.display().to_string(), "files": files}),
        text,
    ))
}
