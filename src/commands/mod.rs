//! The commands. Each takes its parsed arguments, does its work through the store, and returns
//! an [`Outcome`]: a JSON object, the same result as text, and the exit code.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value as Json;

use crate::cli::{Cli, Cmd};
use crate::error::{Error, Result};
use crate::store::{self, Depth, Session};

mod attend;
mod brief;
pub mod check_output;
mod debate;
pub mod demo;
mod demo_project;
mod diff;
mod docs;
mod handoff;
mod init;
pub mod ledger;
mod lifecycle;
mod log;
pub mod mcp;
pub mod migrate;
pub mod project;
mod project_poll;
mod published;
mod read;
mod semantic;
mod show;
pub mod skill;
mod stats;
mod stats_cross;
mod top;
mod usage;
mod validate;
mod watch;
mod worktree;
mod write;

/// A command's result.
#[derive(Debug)]
pub struct Outcome {
    /// The `--json` object (always carries `"schema": 1`).
    pub json: Json,
    /// The human-readable rendering.
    pub text: String,
    /// 0, or the non-error status codes of `poll` (10, 11, 12) and `validate` (5).
    pub code: i32,
    /// Things worth saying on stderr that do not change the outcome.
    pub warnings: Vec<String>,
    /// The command printed its result itself as it went (a long history, streamed): the edge
    /// prints neither `json` nor `text`.
    pub printed: bool,
}

impl Outcome {
    pub fn ok(json: Json, text: String) -> Outcome {
        Outcome {
            json,
            text,
            code: 0,
            warnings: vec![],
            printed: false,
        }
    }
}

/// How an edge other than the command line (the MCP server) runs a command: the command line
/// the call stands for, and what may end its wait.
#[derive(Debug, Default)]
pub struct Call {
    /// The words after `pair` the call stands for: what the record of a passed gate copies and
    /// a refusal's suggested command starts from (default: this process's command line).
    pub argv: Option<Vec<String>>,
    /// Ends the command's wait early, and hears when it sleeps.
    pub interrupt: Option<crate::store::wait::Interrupt>,
    /// The only directories the call may read a file from ([`crate::input::confine`]):
    /// `None` on the command line, which reads what its user can read.
    pub places: Option<Vec<PathBuf>>,
}

thread_local! {
    /// The command line of the call running on this thread, when an edge gave one.
    static CALL_ARGV: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Clears the thread's call command line when the call ends, however it ends.
struct CallArgv;

impl Drop for CallArgv {
    fn drop(&mut self) {
        CALL_ARGV.with(|a| a.borrow_mut().take());
    }
}

/// Run a parsed command line. A command that reached a git board's remote says what it found
/// there in its JSON (`remote`: the tip, whether it fetched, a rewritten ref, offline reads).
pub fn run(cli: Cli) -> Result<Outcome> {
    run_with(cli, Call::default())
}

/// Run a parsed command as [`run`] does, for an edge that gives the [`Call`] it stands for.
pub fn run_with(cli: Cli, call: Call) -> Result<Outcome> {
    let started = std::time::Instant::now();
    let _argv = call.argv.map(|argv| {
        CALL_ARGV.with(|a| *a.borrow_mut() = Some(argv));
        CallArgv
    });
    let _places = call.places.as_deref().map(crate::input::confine);
    run_call(cli, call.interrupt, started)
}

/// How a command writes: its command line as the description, its `--timeout`, the agent
/// it writes as, the journal's operation and the usage it reports; nothing published, no
/// repair.
pub(crate) fn write_options(
    operation: &str,
    seconds: f64,
    agent: Option<String>,
    usage: crate::board::journal::Usage,
) -> Result<crate::store::WriteOptions> {
    Ok(crate::store::WriteOptions {
        description: invocation(),
        timeout: timeout(seconds)?,
        agent,
        operation: operation.to_string(),
        usage,
        publish: Vec::new(),
        repair: false,
        origin: Default::default(),
        transcript: None,
        keys: Default::default(),
    })
}

/// `$PAIR_GIT_TIMEOUT`: how long a command with no `--timeout` gives each read of a git
/// board's remote, in seconds, instead of the default (a slow link, a very large board).
fn git_timeout_env() -> Result<Option<Duration>> {
    match std::env::var("PAIR_GIT_TIMEOUT") {
        Ok(v) if !v.trim().is_empty() => timeout(v.trim().parse().map_err(|_| {
            Error::Usage(format!(
                "PAIR_GIT_TIMEOUT={v:?} is not a number of seconds: set it to one (e.g. \
                 PAIR_GIT_TIMEOUT=60) or unset it for the default of 10 s"
            ))
        })?)
        .map(Some),
        _ => Ok(None),
    }
}

fn run_call(
    cli: Cli,
    interrupt: Option<crate::store::wait::Interrupt>,
    started: std::time::Instant,
) -> Result<Outcome> {
    // `status` and `validate` list a board's warnings themselves, a newer format's included.
    let lists_warnings = matches!(cli.command, Cmd::Status(_) | Cmd::Validate(_));
    // One deadline for the whole command: every git call it makes, in every session it makes,
    // ends by then (a write's --timeout bounds each of its exchanges with a git board's remote
    // too, the reads before the write included; an invalid value is the command's own error to
    // report).
    let exchange = match write_timeout(&cli.command).and_then(|t| timeout(t).ok()) {
        Some(limit) => limit,
        None => git_timeout_env()?.unwrap_or(crate::store::DEFAULT_TIMEOUT),
    };
    let total = command_limit(&cli.command, exchange);
    let clock = crate::store::clock::Clock::new(total.map(|t| started + t), exchange);
    let _clock = clock.enter();
    // `status` is for a person looking at a board: a git board's cache stands in for a remote
    // that cannot be reached.
    let mut session = Session::new(matches!(cli.command, Cmd::Status(_)))
        .with_origin(cli.global.origin())
        .with_transcript(cli.global.transcript.clone())
        .with_keys(cli.global.keys());
    if let Some(interrupt) = interrupt {
        session = session.with_interrupt(interrupt);
    }
    let mut out = run_command(cli, &session)?;
    if !lists_warnings && let Some(found) = session.newer_format() {
        out.warnings.push(crate::board::format::read_notice(found));
    }
    if let (Some(seen), Some(obj)) = (session.remote(), out.json.as_object_mut()) {
        obj.insert(
            "remote".into(),
            serde_json::to_value(seen).unwrap_or_default(),
        );
    }
    Ok(out)
}

fn run_command(cli: Cli, s: &Session) -> Result<Outcome> {
    let json = cli.global.json;
    match cli.command {
        Cmd::Init(a) => match a.review.clone() {
            Some(target) => debate::init(&a, &target, s),
            None => init::run(a, s),
        },
        Cmd::Poll(a) if crate::project::is_project(&a.board) => project_poll::poll(a, s),
        // A command that a review-only board answers with a handler of its own reads the board
        // first, and the handler works from that read.
        Cmd::Poll(a) => match store::snapshot(&a.board, read::depth(&a), s) {
            Ok(snap) if snap.is_review() => debate::poll(&a, snap, s),
            first => read::poll(a, first, json, s),
        },
        Cmd::Verdict(a) => match store::snapshot(&a.board, Depth::Edit { fresh: true }, s) {
            Ok(snap) if snap.is_review() => debate::verdict(a, snap, s),
            first => semantic::verdict(a, first, s),
        },
        Cmd::Object(a) => match store::snapshot(&a.board, Depth::Edit { fresh: true }, s) {
            Ok(snap) if snap.is_review() => debate::object(a, snap, s),
            first => ledger::object(a, first, s),
        },
        Cmd::Challenge(a) => match store::snapshot(&a.board, Depth::Edit { fresh: false }, s) {
            Ok(snap) if snap.is_review() => debate::challenge(a, snap, s),
            first => ledger::challenge(a, first, s),
        },
        Cmd::Rule(a) => match store::snapshot(&a.board, Depth::Edit { fresh: false }, s) {
            Ok(snap) if snap.is_review() => debate::rule(a, snap, s),
            first => ledger::rule(a, first, s),
        },
        Cmd::Show(a) => match store::snapshot(&a.board, Depth::Whole, s) {
            Ok(snap) if snap.is_review() => debate::show(a, snap, s),
            first => show::run(a, first, s),
        },
        Cmd::Status(a) => read::status(a, s),
        Cmd::Validate(a) => {
            if json && a.format == crate::cli::ValidateFormat::Github {
                return Err(Error::Usage(
                    "--json and --format github are two different outputs; choose one".into(),
                ));
            }
            validate::run(a, s)
        }
        Cmd::Write(a) => write::run(a, s),
        Cmd::Register(a) => semantic::register(a, s),
        Cmd::Unregister(a) => semantic::unregister(a, s),
        Cmd::Claim(a) => semantic::claim(a, s),
        Cmd::Submit(a) => semantic::submit(a, s),
        Cmd::Dissent(a) => semantic::dissent(a, s),
        Cmd::Handoff(a) => handoff::handoff(a, s),
        Cmd::Acknowledge(a) => handoff::acknowledge(a, s),
        Cmd::Advance(a) => semantic::advance(a, s),
        Cmd::Block(a) => semantic::block(a, s),
        Cmd::Unblock(a) => semantic::unblock(a, s),
        Cmd::Stop(a) => semantic::stop(a, s),
        Cmd::Note(a) => semantic::note(a, s),
        Cmd::Correct(a) => semantic::correct(a, s),
        Cmd::Diff(a) => diff::run(a, json, s),
        Cmd::WorktreePath(a) => worktree::run(a),
        Cmd::Worktree(a) => match a.action {
            crate::cli::WorktreeAction::Create(c) => lifecycle::worktree_create(c, s),
        },
        Cmd::Check(a) => lifecycle::check(a, s),
        Cmd::Demo(a) => demo::run(a),
        Cmd::DemoAgent(a) => demo::agent(a),
        Cmd::Skill(_) => Ok(skill::run()),
        Cmd::Completions(a) => Ok(docs::completions(a.shell)),
        Cmd::Man(a) => docs::man(a),
        Cmd::Help(a) => docs::help(a),
        Cmd::Brief(a) => brief::run(a, s),
        Cmd::Resolve(a) => ledger::resolve(a, s),
        Cmd::Accept(a) => ledger::accept(a, s),
        Cmd::Reopen(a) => ledger::reopen(a, s),
        Cmd::Withdraw(a) => ledger::withdraw(a, s),
        Cmd::Second(a) => ledger::second(a, s),
        Cmd::Objections(a) => ledger::objections(a, s),
        Cmd::Decide(a) => ledger::decide(a, s),
        Cmd::ReportUsage(a) => usage::run(a, s),
        Cmd::Log(a) => log::run(a, json, s),
        Cmd::Stats(a) => stats::run(a, s),
        Cmd::Extend(a) => attend::extend(a, s),
        Cmd::Away(a) => attend::away(a, s),
        Cmd::Unrequire(a) => attend::unrequire(a, s),
        Cmd::Watch(a) => watch::run(a, json, s),
        Cmd::Top(a) => top::run(a, s),
        Cmd::Migrate(a) => migrate::run(a, s),
        Cmd::Mcp(a) => mcp::serve(
            a,
            s.origin().clone(),
            s.transcript().map(Into::into),
            s.keys().clone(),
        ),
        Cmd::Ls(a) => project::ls(a, s),
        Cmd::Next(a) => project::next(a, s),
    }
}

/// The `--timeout` of a command that writes a board: how long it waits for the lock or, on a
/// git board, for the remote. (`poll --wait` and `log --follow` give theirs to the wait; they
/// bound each read themselves.)
fn write_timeout(cmd: &Cmd) -> Option<f64> {
    Some(match cmd {
        Cmd::Init(a) => a.timeout,
        Cmd::Write(a) => a.timeout,
        Cmd::Migrate(a) => a.timeout,
        Cmd::Register(a) => a.common.timeout,
        Cmd::Unregister(a) | Cmd::Claim(a) => a.common.timeout,
        Cmd::Submit(a) => a.common.timeout,
        Cmd::Verdict(a) => a.common.timeout,
        Cmd::Dissent(a) => a.common.timeout,
        Cmd::Handoff(a) => a.common.timeout,
        Cmd::Acknowledge(a) => a.common.timeout,
        Cmd::Advance(a) => a.common.timeout,
        Cmd::Block(a) | Cmd::Unblock(a) | Cmd::Stop(a) => a.common.timeout,
        Cmd::Note(a) => a.common.timeout,
        Cmd::Correct(a) => a.common.timeout,
        Cmd::Worktree(a) => match &a.action {
            crate::cli::WorktreeAction::Create(c) => c.common.timeout,
        },
        Cmd::Check(a) => a.common.timeout,
        Cmd::Object(a) => a.common.timeout,
        Cmd::Resolve(a) => a.common.timeout,
        Cmd::Challenge(a) => a.common.timeout,
        Cmd::Rule(a) => a.common.timeout,
        Cmd::Accept(a) => a.common.timeout,
        Cmd::Reopen(a) | Cmd::Withdraw(a) => a.common.timeout,
        Cmd::Second(a) => a.common.timeout,
        Cmd::Decide(a) => a.common.timeout,
        Cmd::ReportUsage(a) => a.common.timeout,
        Cmd::Extend(a) => a.common.timeout,
        Cmd::Away(a) => a.common.timeout,
        Cmd::Unrequire(a) => a.common.timeout,
        Cmd::Poll(_)
        | Cmd::Status(_)
        | Cmd::Validate(_)
        | Cmd::Diff(_)
        | Cmd::WorktreePath(_)
        | Cmd::Demo(_)
        | Cmd::DemoAgent(_)
        | Cmd::Skill(_)
        | Cmd::Completions(_)
        | Cmd::Man(_)
        | Cmd::Help(_)
        | Cmd::Show(_)
        | Cmd::Brief(_)
        | Cmd::Objections(_)
        | Cmd::Log(_)
        | Cmd::Stats(_)
        | Cmd::Watch(_)
        | Cmd::Mcp(_)
        | Cmd::Ls(_)
        | Cmd::Next(_)
        | Cmd::Top(_) => return None,
    })
}

/// How long the whole command may take with its remotes, given the limit of one exchange: a
/// write's `--timeout`, a wait's `--timeout`, else the limit of one exchange (`$PAIR_GIT_TIMEOUT`
/// or the default). `None` for a command that runs until it is stopped (`watch`, `top`, `mcp`,
/// `demo`), and for `check` and `worktree create`, whose long local step (the command checked,
/// the checkout) has no limit: each of their exchanges with a remote is given the `--timeout`.
fn command_limit(cmd: &Cmd, exchange: Duration) -> Option<Duration> {
    let wait = |t: f64| timeout(t).ok();
    match cmd {
        Cmd::Check(_) | Cmd::Worktree(_) => None,
        Cmd::Watch(a) if !a.once => None,
        Cmd::Top(_) | Cmd::Mcp(_) | Cmd::Demo(_) | Cmd::DemoAgent(_) => None,
        Cmd::Poll(a) if a.wait || a.through_blocked => wait(a.timeout),
        Cmd::Next(a) if a.wait => wait(a.timeout),
        Cmd::Log(a) if a.follow => wait(a.timeout),
        _ => Some(exchange),
    }
}

/// Check an agent id given on the command line (`flag` names where it came from).
pub(crate) fn agent_arg(flag: &str, id: &str) -> Result<()> {
    if crate::board::frontmatter::is_agent_id(id) {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "{flag} {id:?} is not a valid agent id: use 1-64 letters, digits, `.`, `_` or `-`, \
             starting with a letter or digit"
        )))
    }
}

/// A `--timeout` in seconds as a duration.
pub(crate) fn timeout(seconds: f64) -> Result<Duration> {
    seconds_flag("--timeout", seconds)
}

/// A flag given in seconds (`--timeout`, `--interval`) as a duration; the error names the flag.
pub(crate) fn seconds_flag(flag: &str, seconds: f64) -> Result<Duration> {
    if seconds.is_finite() && (0.0..=86_400.0).contains(&seconds) {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(Error::Usage(format!(
            "{flag} must be a number of seconds from 0 to 86400, got {}",
            shown_number(seconds)
        )))
    }
}

/// A number as a user would recognise it: `1e300`, not three hundred digits.
fn shown_number(x: f64) -> String {
    if x.is_finite() && x.abs() < 1e9 {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The most `pair` reads from a file or standard input given on the command line: a complete
/// blackboard (`--content-file`, `--template`) may be this large, and a note or goal cannot
/// make a blackboard larger.
pub(crate) const MAX_INPUT_BYTES: u64 = crate::law::validate::MAX_BOARD_BYTES;

fn input_too_large(path: &Path, what: &str) -> Error {
    Error::Usage(format!(
        "{what} {}: over the 64 MiB limit of input ({MAX_INPUT_BYTES} bytes)",
        if path == Path::new("-") {
            "(standard input)".to_string()
        } else {
            crate::render::output::path(path)
        }
    ))
}

/// Read a file given on the command line, `-` meaning stdin: a file through the one reader of
/// what `pair` reads on an agent's behalf ([`crate::input`]: a regular file, never blocking, at
/// most [`MAX_INPUT_BYTES`], inside the call's places when an edge confined it); standard
/// input up to the same limit.
pub(crate) fn read_input(path: &Path, what: &str) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(|e| Error::io(path, "read standard input", e))?;
        if buf.len() as u64 > MAX_INPUT_BYTES {
            return Err(input_too_large(path, what));
        }
        return Ok(buf);
    }
    crate::input::read(path, what, &crate::input::Rules::given(MAX_INPUT_BYTES))
}

/// Read UTF-8 text given on the command line, `-` meaning stdin.
pub(crate) fn read_text(path: &Path, what: &str) -> Result<String> {
    String::from_utf8(read_input(path, what)?).map_err(|_| {
        Error::Usage(format!(
            "{what} {}: not valid UTF-8",
            crate::render::output::path(path)
        ))
    })
}

/// The command line as it was run, after `pair` (the call's, when an edge gave one).
pub(crate) fn argv() -> Vec<String> {
    if let Some(argv) = CALL_ARGV.with(|a| a.borrow().clone()) {
        return argv;
    }
    std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// The longest `--note` text a gate record copies; a longer or multi-line one is in the entry
/// the command wrote, and the record names it by its flag.
const RECORDED_NOTE_CHARS: usize = 80;

/// The command as it was run, as one shell line (for the records of passed gates): every
/// argument as given (`--note-file plan.md`, `--waive 'User: skip it'`), except that a note
/// given inline that is long or has several lines is named by its flag (`--note TEXT`).
pub(crate) fn invocation() -> String {
    invocation_of(argv())
}

fn invocation_of(argv: Vec<String>) -> String {
    let note = |text: &str| {
        if text.contains(['\n', '\r']) || text.chars().count() > RECORDED_NOTE_CHARS {
            "TEXT".to_string()
        } else {
            crate::text::shell_arg(text)
        }
    };
    let mut words = vec!["pair".to_string()];
    let mut args = argv.into_iter();
    while let Some(a) = args.next() {
        if a == "--note" {
            let text = args.next().unwrap_or_default();
            words.push(format!("--note {}", note(&text)));
        } else if let Some(text) = a.strip_prefix("--note=") {
            words.push(format!("--note={}", note(text)));
        } else if a == "--transcript" {
            // The writer's transcript is its own file: the board records only what was read.
            args.next();
        } else if a.starts_with("--transcript=") {
        } else {
            words.push(crate::text::shell_arg(&unsecret(&a)));
        }
    }
    words.join(" ")
}

/// A word of the command line with any git board address in it as the user wrote it, minus
/// the parts of its URL that may carry a secret (such an address is refused before anything
/// is written; this keeps the record clean whatever reaches it).
fn unsecret(word: &str) -> String {
    use crate::store::location::{PREFIX, redacted};
    match word.find(PREFIX) {
        Some(0) => redacted(word),
        Some(i) if word[..i].ends_with('=') => format!("{}{}", &word[..i], redacted(&word[i..])),
        _ => word.to_string(),
    }
}

/// Where a blackboard is, for the commands `next` proposes: its absolute path (so they work
/// from any directory) and, when the next step needs a worktree, the default one.
pub(crate) fn place(
    board: &Path,
    fm: &crate::board::frontmatter::Frontmatter,
) -> crate::law::protocol::Place {
    place_with(board, fm, crate::store::depend::read(board, fm))
}

/// [`place`] with the board's dependencies as already read (a project's `next` reads every
/// board once).
pub(crate) fn place_with(
    board: &Path,
    fm: &crate::board::frontmatter::Frontmatter,
    waits: Vec<crate::law::depend::Dep>,
) -> crate::law::protocol::Place {
    // A git board is named by its address wherever the command runs; its default worktree is
    // in the clone the command runs in (none outside a repository).
    let absolute = if crate::store::location::is_git(board) {
        board.to_path_buf()
    } else {
        std::path::absolute(board).unwrap_or_else(|_| board.to_path_buf())
    };
    let default_worktree = if crate::law::protocol::wants_default_worktree(fm) {
        worktree::default_worktree(board, None)
            .ok()
            .map(|d| d.path.display().to_string())
    } else {
        None
    };
    crate::law::protocol::Place {
        board: absolute.display().to_string(),
        default_worktree,
        waits,
    }
}

/// The board as a `next` command names it: a file by its absolute path, a git board by its
/// address.
pub(crate) fn place_of(board: &Path) -> String {
    if crate::store::location::is_git(board) {
        board.display().to_string()
    } else {
        std::path::absolute(board)
            .unwrap_or_else(|_| board.to_path_buf())
            .display()
            .to_string()
    }
}

/// The path as the user wrote it, for messages and action sentences.
pub(crate) fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::invocation_of;

    #[test]
    fn a_gate_record_copies_the_command_and_names_a_long_note_by_its_flag() {
        let words = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            invocation_of(words(&["submit", "t.md", "plan", "--note-file", "plan.md"])),
            "pair submit t.md plan --note-file plan.md"
        );
        assert_eq!(
            invocation_of(words(&["submit", "t.md", "--note", "short plan"])),
            "pair submit t.md --note 'short plan'"
        );
        assert_eq!(
            invocation_of(words(&["submit", "t.md", "--note", "line\nline"])),
            "pair submit t.md --note TEXT"
        );
        assert_eq!(
            invocation_of(words(&[
                "submit",
                "t.md",
                &format!("--note={}", "x".repeat(81))
            ])),
            "pair submit t.md --note=TEXT"
        );
    }

    #[test]
    fn a_recorded_command_keeps_a_git_address_as_written_minus_its_secrets() {
        let words = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let kept = "git+ssh://git@host/r.git#refs/pair/t";
        assert_eq!(
            invocation_of(words(&["note", kept, "--agent", "doer"])),
            format!("pair note '{kept}' --agent doer")
        );
        assert_eq!(
            invocation_of(words(&[
                "note",
                "git+https://TOKEN@host/r.git?access_token=T#refs/pair/t",
                "--board=git+ssh://u:pw@host/r.git#refs/pair/t",
            ])),
            "pair note 'git+https://***@host/r.git?***#refs/pair/t' \
             '--board=git+ssh://u:***@host/r.git#refs/pair/t'"
        );
    }
}
