//! `pair poll` (frontmatter only) and `pair status` (the whole file).

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Outcome, agent_arg, shown};
use crate::board::frontmatter::Phase;
use crate::cli::{PollArgs, StatusArgs};
use crate::error::{Error, Result};
use crate::render::output::{self};
use crate::render::report::{SectionInfo, Style, Turn, reviewer_table};
use crate::store;
use crate::store::wait::Waiter;
use crate::store::{Depth, Session, Snapshot};
use crate::text::escape;

/// How often `poll --wait` asks a git board's remote for the ref's tip once a wait has gone on
/// for a while, by default: 12 requests a minute.
pub const GIT_INTERVAL_S: f64 = 5.0;

/// How often a git board's waiter asks at first, by default: often while a claim, a quick
/// verdict or an unblock is likely, less and less after, then every [`GIT_INTERVAL_S`]. Each row
/// is (the wait has lasted less than this many seconds, ask again after this many).
pub const GIT_SCHEDULE: &[(f64, f64)] = &[(10.0, 0.5), (20.0, 1.0), (30.0, 2.0)];

/// The pause before a git board's waiter asks again, `elapsed` into the wait: the schedule,
/// never longer than the interval.
fn git_pause(elapsed: Duration, interval: Duration, adaptive: bool) -> Duration {
    if !adaptive {
        return interval;
    }
    let e = elapsed.as_secs_f64();
    GIT_SCHEDULE
        .iter()
        .find(|(until, _)| e < *until)
        .map_or(interval, |(_, every)| {
            Duration::from_secs_f64(*every).min(interval)
        })
}

/// How often `poll --wait` re-reads a file where no file notifications can be had, by default.
const FILE_INTERVAL_S: f64 = 60.0;

/// What a poll answers, all of it derived from one read of the board: whose turn it is and
/// what to do next, the records past the cursor, and which version of the board that is.
struct Answer {
    turn: Turn,
    /// The id on the board the asking agent's id is probably a typo of (it is nobody there).
    mistyped: Option<String>,
    cursor: Option<Cursor>,
    version: store::Version,
}

/// The depth a poll reads to: the frontmatter, or the whole board for the journal past a
/// cursor (`--after`).
pub(super) fn depth(a: &PollArgs) -> Depth {
    if a.after.is_some() {
        Depth::Whole
    } else {
        Depth::Head
    }
}

/// Everything a poll answers, from the one snapshot `snap`.
fn answer(a: &PollArgs, after: Option<u64>, snap: &Snapshot) -> Result<Answer> {
    let valid = snap.frontmatter()?;
    crate::watch::presence::record(&a.board, &a.agent, a.wait);
    let fm = &valid.parsed.fm;
    let place = super::place(&a.board, fm);
    let mut turn = Turn::new(fm, &a.agent, &shown(&a.board), &place);
    if let Some(until) = a.until {
        turn.wait_until(fm, &a.agent, until, &place);
    }
    let cursor = after.map(|n| cursor(a, n, snap)).transpose()?;
    Ok(Answer {
        turn,
        mistyped: crate::law::protocol::mistyped_id(fm, &a.agent).map(str::to_string),
        cursor,
        version: snap.version(fm),
    })
}

/// The journal past an agent's position (`poll --after SEQ`): the records after it, each with
/// its position, and the position of the last one, to pass back next time.
struct Cursor {
    /// The first position returned is `after + 1`.
    after: u64,
    records: Vec<crate::board::journal::Record>,
    position: u64,
}

/// `--after`: a position from 0 up.
fn after_arg(a: &PollArgs) -> Result<Option<u64>> {
    let Some(text) = &a.after else {
        return Ok(None);
    };
    match text.trim().parse::<i64>() {
        Ok(n) if n >= 0 => Ok(Some(n as u64)),
        Ok(n) => Err(Error::Usage(format!(
            "--after {n}: a position in the journal is 0 or more (0 reads the whole journal); \
             pass back the `position` a poll returned"
        ))),
        Err(_) => Err(Error::Usage(format!(
            "--after {text:?}: a position in a board's journal is a whole number, 0 or more (0 \
             reads the whole journal; a project's cursor goes with a project, a directory or \
             git+URL#refs/…/); pass back the `position` a poll of {} returned",
            shown(&a.board)
        ))),
    }
}

/// The journal past `after`, from the snapshot the poll answers from. A position beyond the
/// journal's end is refused: it was not one this board gave.
fn cursor(a: &PollArgs, after: u64, snap: &Snapshot) -> Result<Cursor> {
    let doc = crate::board::document::Document::parse(snap.bytes())
        .map_err(|e| crate::transaction::unsplittable(&a.board, "file", &e))?;
    let records = crate::board::journal::records(&doc)
        .map_err(|e| Error::invalid(&a.board, vec![e], false))?;
    let position = records.len() as u64;
    if after > position {
        return Err(Error::Usage(format!(
            "--after {after} is beyond the end of the journal of {}, which holds {position} \
             records: pass back the `position` a poll of this board returned (after a \
             `write --repair` that removed records, read it again from --after 0)",
            shown(&a.board)
        )));
    }
    Ok(Cursor {
        after,
        records: records.into_iter().skip(after as usize).collect(),
        position,
    })
}

/// Add the records past the position, and the new position, to a poll's outcome.
fn with_cursor(mut out: Outcome, c: &Cursor) -> Outcome {
    if let Some(obj) = out.json.as_object_mut() {
        let records: Vec<serde_json::Value> = c
            .records
            .iter()
            .zip(c.after + 1..)
            .map(|(r, seq)| {
                let mut v = super::log::record_json(r);
                v["seq"] = seq.into();
                v
            })
            .collect();
        obj.insert("records".into(), json!(records));
        obj.insert("position".into(), json!(c.position));
        // A poll to run next keeps the cursor: run as given, it reads on from this position.
        if let Some(words) = obj
            .get_mut("next")
            .and_then(|n| n.get_mut("command"))
            .and_then(serde_json::Value::as_array_mut)
            && words.get(1).and_then(serde_json::Value::as_str) == Some("poll")
        {
            with_position(words, c.position);
        }
    }
    for (r, seq) in c.records.iter().zip(c.after + 1..) {
        out.text.push_str(&format!(
            "record      #{seq} {}\n",
            super::log::record_text(r)
        ));
    }
    out.text.push_str(&format!(
        "position    {} (pass --after {} next time)\n",
        c.position, c.position
    ));
    out
}

/// Whether a journal record was written by this agent (its own writes do not wake its wait).
pub(super) fn written_by(r: &crate::board::journal::Record, agent: &str) -> bool {
    r.by.as_deref() == Some(agent)
}

/// A poll command's words with `--after POSITION` in place of any `--after` they had.
fn with_position(words: &mut Vec<serde_json::Value>, position: u64) {
    if let Some(at) = words.iter().position(|w| w == "--after") {
        words.drain(at..(at + 2).min(words.len()));
    }
    words.extend([json!("--after"), json!(position.to_string())]);
}

/// A poll's outcome, from one [`Answer`]; the text is rendered only when it is what will be
/// printed (`as_json` false): with a large ledger it costs as much as the JSON.
fn outcome(answer: &Answer, waited: Option<Duration>, as_json: bool) -> Outcome {
    let turn = &answer.turn;
    let mut json = serde_json::to_value(turn).unwrap_or_default();
    let mut text = if as_json {
        String::new()
    } else {
        turn.render_styled(&Style::for_stdout())
    };
    if let Some(obj) = json.as_object_mut() {
        obj.insert("version".into(), json!(answer.version));
        if let Some(w) = waited {
            obj.insert("waited_ms".into(), json!(w.as_millis() as u64));
            if !as_json {
                text.push_str(&format!("waited      {:.1} s\n", w.as_secs_f64()));
            }
        }
    }
    let out = Outcome {
        json,
        text,
        code: turn.exit_code(),
        warnings: vec![],
        printed: false,
    };
    match &answer.cursor {
        Some(c) => with_cursor(out, c),
        None => out,
    }
}

/// `poll` on a pairing board; `first` is the edge's read of it (or why that failed).
pub fn poll(a: PollArgs, first: Result<Snapshot>, as_json: bool, s: &Session) -> Result<Outcome> {
    agent_arg("--agent", &a.agent)?;
    let after = after_arg(&a)?;
    // Sleeping through a block is a way of waiting: --through-blocked implies --wait.
    if !a.wait && !a.through_blocked {
        return Ok(outcome(&answer(&a, after, &first?)?, None, as_json));
    }
    let timeout = super::timeout(a.timeout)?;
    let git = crate::store::location::is_git(&a.board);
    let interval = a
        .interval
        .unwrap_or(if git { GIT_INTERVAL_S } else { FILE_INTERVAL_S });
    let interval = super::seconds_flag("--interval", interval)?.max(Duration::from_millis(10));
    let start = Instant::now();
    // The wait ends with the command, whose clock started before this.
    let deadline = s.deadline().unwrap_or(start + timeout);
    // Watch first, then read: a change between the two cannot be missed. A git board's remote
    // is asked for its tip every interval. The edge's read came before the watch: it stands
    // only while the file is still the one it read (a git board's next ask comes anyway).
    let mut waiter = if git {
        Waiter::polling()
    } else {
        Waiter::new(&a.board)
    };
    if let Some(interrupt) = s.interrupt() {
        waiter.interrupted_by(interrupt);
    }
    let first = first.ok().filter(|snap| git || snap.unchanged());
    // Without --interval a git board's wait asks often at first (see GIT_SCHEDULE).
    let adaptive = git && a.interval.is_none();
    // A wait ended by a signal leaves the agent's presence saying it no longer waits, as one
    // that ends by itself does (a server's calls are ended by their server, not a signal).
    if s.interrupt().is_none() {
        crate::watch::presence::clear_on_end(&a.board, &a.agent);
    }
    let result = wait_loop(
        &a,
        after,
        first,
        &mut waiter,
        start,
        deadline,
        interval,
        adaptive,
        as_json,
        s,
    );
    crate::watch::presence::done_waiting(&a.board, &a.agent);
    release(waiter, s);
    result
}

/// The refusal of a wait under an id that is nobody on the board and close to `near`, who is.
fn mistyped_wait(a: &PollArgs, near: &str) -> Error {
    let b = crate::text::shell_word(&shown(&a.board));
    Error::Usage(format!(
        "--agent {:?} is nobody on {}, and a wait under that id would never end; did you mean \
         `{near}`? If so, wait with that id: `pair poll {b} --agent {} --wait`. Only if you are a \
         new reviewer, register first: `pair register {b} --agent {}`",
        a.agent,
        shown(&a.board),
        crate::text::shell_word(near),
        crate::text::shell_word(&a.agent),
    ))
}

#[allow(clippy::too_many_arguments)]
fn wait_loop(
    a: &PollArgs,
    after: Option<u64>,
    mut first: Option<Snapshot>,
    waiter: &mut Waiter,
    start: Instant,
    deadline: Instant,
    interval: Duration,
    adaptive: bool,
    as_json: bool,
    s: &Session,
) -> Result<Outcome> {
    let git = crate::store::location::is_git(&a.board);
    let mut announced = false;
    // A git board's remote that answered once and then cannot be reached is waited for (a
    // network blip must not end a long wait); one that never answered is an error at once.
    let mut reached = false;
    let mut lost = false;
    let mut fresh = false;
    // Every answer, the one at the deadline or on an interrupt included, is derived from the
    // last snapshot alone.
    let ended = |answer: &Answer| outcome(answer, Some(start.elapsed()), as_json);
    loop {
        let read = match first.take() {
            Some(snap) => Ok(snap),
            None => store::snapshot(&a.board, depth(a), s),
        };
        // A board made while the wait went on may be a review-only board: its own poll answers.
        if let Ok(snap) = &read
            && snap.is_review()
        {
            let snap = read?;
            return super::debate::poll(a, snap, s);
        }
        let last = match read.and_then(|snap| answer(a, after, &snap)) {
            Ok(r)
                if r.turn.your_turn
                    || (r.turn.terminal
                        && !r.turn.short_of_until()
                        && !(a.through_blocked && r.turn.phase == Phase::Blocked)) =>
            {
                return Ok(ended(&r));
            }
            // An id that is nobody on the board and close to one who is: its turn never
            // comes, so the wait is refused at once, with the id it probably meant.
            Ok(r) if r.mistyped.is_some() => {
                return Err(mistyped_wait(a, r.mistyped.as_deref().unwrap_or_default()));
            }
            Ok(r) => {
                reached = true;
                // A board that waits for others wakes when one of them moves; a watch just set
                // is followed by a read, before any sleep.
                for d in &r.turn.waits_for {
                    fresh |= waiter.also(std::path::Path::new(&d.address));
                }
                // With --after, what the journal holds past the position: a record wakes the
                // wait unless the waiting agent wrote it (it is listed all the same when the
                // wait ends).
                if let Some(c) = &r.cursor {
                    let news = c.records.iter().any(|rec| !written_by(rec, &a.agent));
                    if news || Instant::now() >= deadline {
                        return Ok(ended(&r));
                    }
                }
                Ok(r)
            }
            // A reviewer started before the doer created the blackboard waits for it.
            Err(e @ Error::Missing { .. }) => {
                reached = true;
                if !announced {
                    announce_missing(&a.board);
                    announced = true;
                }
                Err(e)
            }
            Err(e @ Error::Git { .. }) if reached && crate::store::location::is_git(&a.board) => {
                if !lost {
                    announce_lost(&e);
                    lost = true;
                }
                Err(e)
            }
            Err(e) => return Err(e),
        };
        let now = Instant::now();
        if now >= deadline {
            return last.map(|r| ended(&r));
        }
        // A git board's remote is asked again only with time left to hear its answer: past
        // that, the answer is this read's, at the deadline.
        let ask_by = if git {
            crate::store::clock::ask_by(deadline)
        } else {
            deadline
        };
        if now >= ask_by {
            waiter.wait(deadline - now);
            return last.map(|r| ended(&r));
        }
        if std::mem::take(&mut fresh) {
            continue;
        }
        if let Some(interrupt) = s.interrupt() {
            interrupt.waiting(&match &last {
                Ok(r) => format!("{}: {}", r.turn.phase, r.turn.next.action),
                Err(_) => format!("{} to be created", shown(&a.board)),
            });
        }
        let slice = (ask_by - now).min(git_pause(now - start, interval, adaptive));
        waiter.wait(slice);
        // An interrupted wait ends as one that timed out: with what it read last.
        if s.interrupt().is_some_and(|i| i.fired()) {
            return last.map(|r| ended(&r));
        }
        if !waiter.is_notified() && !crate::store::location::is_git(&a.board) {
            // Polling mode: the board may have appeared in a directory created meanwhile.
            *waiter = Waiter::new(&a.board);
            if let Some(interrupt) = s.interrupt() {
                waiter.interrupted_by(interrupt);
            }
        }
    }
}

/// Say once, on stderr, which file `poll --wait` waits for, by its absolute path (a relative
/// path typed in another directory would name another file). Not with `--json`, whose stderr
/// carries only the error envelope, nor with `--quiet`.
fn announce_missing(board: &std::path::Path) {
    let settings = crate::text::settings();
    if settings.json || settings.quiet {
        return;
    }
    let absolute = if crate::store::location::is_git(board) {
        board.to_path_buf()
    } else {
        std::path::absolute(board).unwrap_or_else(|_| board.to_path_buf())
    };
    eprintln!(
        "pair: waiting for {} to be created (the doer creates it with `pair init`)",
        output::path(&absolute)
    );
}

/// Say once, on stderr, that the remote of a git board stopped answering and the wait goes on.
fn announce_lost(e: &Error) {
    let settings = crate::text::settings();
    if settings.json || settings.quiet {
        return;
    }
    eprintln!("pair: warning: {e}; still waiting, and asking again every interval");
}

/// Drop a waiter without making the process wait for the kernel.
///
/// Closing the last descriptor of an inotify instance waits for an SRCU grace period while the
/// kernel tears its watches down: measured at 15-20 ms here, longer than everything else a
/// handoff costs, and paid on the way out of every `poll --wait` (so the agent waiting for
/// the process to exit pays it too). A short-lived child inherits a second descriptor, so our
/// close is not the last one; the child closes its standard streams at once, waits until this
/// process has exited, and pays the teardown where no one is waiting for it.
///
/// A process that outlives the command (a server, whose session has an interrupt) must not
/// gather such children: a thread of its own pays the teardown and ends.
fn release(waiter: Waiter, s: &Session) {
    if s.interrupt().is_some() {
        std::thread::spawn(move || drop(waiter));
        return;
    }
    #[cfg(target_os = "linux")]
    crate::sys::fork_teardown_child();
    drop(waiter);
}

pub fn status(a: StatusArgs, s: &Session) -> Result<Outcome> {
    if let Some(id) = &a.agent {
        agent_arg("--agent", id)?;
    }
    // A git board's status is shown from the cache, with its age, when the remote cannot be
    // reached.
    let snap = store::snapshot(&a.board, Depth::Whole, s)?;
    let bytes = snap.bytes();
    let loaded = match super::validate::check_all(bytes) {
        Ok(valid) => store::Loaded {
            path: a.board.clone(),
            sha256: snap.sha256()?,
            bytes: Vec::new(),
            valid,
        },
        Err(report) => return Err(invalid(&a.board, bytes, report.errors)),
    };
    let fm = &loaded.valid.parsed.fm;
    // A review-only board has no doer: without --agent it is read from the side of the agent
    // whose stage it is (nobody's once the debate has stopped: its judge's).
    let debate = crate::board::debate::of(fm).and_then(|r| r.ok());
    let agent = a
        .agent
        .clone()
        .or_else(|| fm.doer().map(String::from))
        .or_else(|| {
            debate.as_ref().map(|r| {
                let role = crate::law::debate::role_of(r.stage)
                    .unwrap_or(crate::board::debate::DebateRole::Judge);
                r.agent(role).to_string()
            })
        })
        .unwrap_or_default();
    let mut turn = Turn::new(fm, &agent, &shown(&a.board), &super::place(&a.board, fm));
    // A review-only board's next step is its debate's, as its poll gives it.
    if let Some(r) = &debate {
        let (mine, next) = super::debate::next(r, &agent, &super::place_of(&a.board));
        turn.your_turn = mine;
        turn.next = next;
    }
    // Without --agent, whoever runs it reads the doer's point of view in the third person.
    turn.asked_by_agent = a.agent.is_some();
    let sections = SectionInfo::of(&loaded.valid.doc);
    let warnings = &loaded.valid.parsed.warnings;
    let block = crate::render::report::Block::of(fm, &loaded.valid.doc);
    let mut json = serde_json::to_value(&turn).unwrap_or_default();
    if let Some(obj) = json.as_object_mut() {
        obj.insert("sha256".into(), json!(loaded.sha256));
        obj.insert("size".into(), json!(bytes.len()));
        obj.insert("version".into(), json!(snap.version(fm)));
        obj.insert("sections".into(), json!(sections));
        obj.insert("warnings".into(), json!(warnings));
        obj.insert("agents".into(), agents_json(fm));
        obj.insert("blocked".into(), json!(block));
        obj.insert(
            "frontmatter".into(),
            crate::render::report::frontmatter_json(fm),
        );
        obj.insert(
            "stop_reason".into(),
            json!(crate::board::ledger::terminal_stop_reason(fm)),
        );
    }
    // A review-only board's state is its review's, not a round of a gate.
    if let (Some(r), Some(obj)) = (&debate, json.as_object_mut()) {
        obj.insert("review".into(), super::debate::review_state(r));
    }
    let style = Style::for_stdout();
    let mut text = format!("{}\n", style.bold(&output::path(&a.board)));
    text.push_str(&turn.render_head(&style));
    if let Some(line) = s.remote().map(|o| o.status_line()) {
        text.push_str(&line);
    }
    if let Some(b) = &block {
        text.push_str(&format!(
            "blocked     from {} by {} at {}: {}\n",
            b.from.map_or("?".to_string(), |p| p.to_string()),
            escape(b.by.as_deref().unwrap_or("?")),
            escape(b.at.as_deref().unwrap_or("?")),
            escape(
                &b.reason
                    .as_deref()
                    .unwrap_or("(no reason recorded)")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        ));
    }
    if let Some(r) = &debate {
        text.push_str(&format!(
            "review      {}\n",
            super::debate::review_state_line(r)
        ));
    }
    if let Some(r) = &turn.review {
        text.push_str(&format!(
            "review      {} {}{}: {}\n",
            r.target.as_str().replace('_', " "),
            r.counter,
            r.diff_scope
                .map(|s| format!(" ({s} diff)"))
                .unwrap_or_default(),
            if r.pending.is_empty() {
                "complete".to_string()
            } else {
                format!("waiting for {}", r.pending.join(", "))
            }
        ));
    }
    text.push_str(&reviewer_table(fm, &style));
    text.push_str(&format!(
        "ledger      {}\n",
        escape(&crate::board::ledger::line(fm))
    ));
    if let Some(doer) = fm.doer().and_then(|d| fm.agent(d).map(|ag| (d, ag))) {
        let last = doer
            .1
            .last_seen
            .map(|t| t.to_string())
            .unwrap_or_else(|| "never".into());
        text.push_str(&format!(
            "doer        {} · {} · last seen {last}\n",
            style.agent(doer.0),
            doer.1.status.as_str()
        ));
    }
    let mut flags = vec![format!("work type {}", fm.work_type)];
    if fm.rca_required {
        flags.push("RCA required".into());
    }
    if fm.red_test_required {
        flags.push("red test required".into());
    }
    if fm.yolo {
        flags.push("yolo (human gates pre-approved)".into());
    }
    if fm.no_review {
        flags.push("no review".into());
    }
    text.push_str(&format!("settings    {}\n", flags.join(" · ")));
    if let Some(v) = crate::board::sla::value(&fm.sla) {
        text.push_str(&format!("sla         {}\n", v.trim_matches(['{', '}'])));
    }
    for (id, ag) in &fm.agents {
        if let Some(w) = &ag.away {
            text.push_str(&format!(
                "away        {} until {}: {}\n",
                style.agent(id),
                w.until,
                escape(&w.reason)
            ));
        }
    }
    text.push_str(&turn.render_where());
    let fields = crate::render::report::frontmatter_json(fm);
    let audit: Vec<String> = crate::board::field::Field::ALL
        .iter()
        .filter(|f| {
            f.owner() == crate::board::field::Owner::Doer
                && **f != crate::board::field::Field::Worktree
        })
        .filter_map(|f| match fields.get(f.name())? {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(format!("{} {s}", f.name())),
            v => Some(format!("{} {v}", f.name())),
        })
        .collect();
    if !audit.is_empty() {
        text.push_str(&format!("audit       {}\n", escape(&audit.join(" · "))));
    }
    if let Some(checks) = crate::render::report::status_line(fm) {
        text.push_str(&format!("checks      {}\n", escape(&checks)));
    }
    text.push_str(&format!("sha256      {}\n", loaded.sha256));
    text.push_str(&section_lines(&sections));
    for w in warnings {
        text.push_str(&style.yellow(&format!("warning: {}", w.escaped())));
        text.push('\n');
    }
    Ok(Outcome::ok(json, text))
}

/// The `sections` block of `status`: each section's name, line and number of entries.
fn section_lines(sections: &[SectionInfo]) -> String {
    let mut text = String::from("sections\n");
    for s in sections {
        text.push_str(&format!(
            "  {:<22} line {:<5} {} entr{}\n",
            escape(&s.name),
            s.line,
            s.entries,
            if s.entries == 1 { "y" } else { "ies" }
        ));
    }
    text
}

/// `status` of an invalid blackboard: print what can still be read of it (unless the output is
/// JSON or quiet), and return the error, which names every problem and ends with the repair
/// command (exit 5).
fn invalid(board: &std::path::Path, bytes: &[u8], errors: Vec<crate::error::FieldError>) -> Error {
    let settings = crate::text::settings();
    if !settings.json && !settings.quiet {
        let style = Style::for_stdout();
        let mut text = format!("{}\n", style.bold(&output::path(board)));
        text.push_str(&format!(
            "valid       {} (the errors are below, on stderr)\n",
            style.red("no")
        ));
        if let Some(phase) = phase_as_written(bytes) {
            text.push_str(&format!(
                "phase       {} (as written)\n",
                style.phase(&escape(&phase))
            ));
        }
        text.push_str(&format!("sha256      {}\n", crate::text::sha256_hex(bytes)));
        text.push_str(&format!("size        {} bytes\n", bytes.len()));
        if let Ok(doc) = crate::board::document::Document::parse(bytes) {
            let sections = SectionInfo::of(&doc);
            text.push_str(&section_lines(&sections));
        }
        output::print_stdout(&text);
    }
    Error::invalid(board, errors, false)
}

/// The value of the top-level `phase:` line of the frontmatter, as written (quotes removed).
fn phase_as_written(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.trim_start_matches(crate::board::document::BOM).lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    lines
        .take_while(|l| l.trim_end() != "---")
        .find_map(|l| l.strip_prefix("phase:"))
        .map(|v| v.trim().trim_matches(['"', '\'']).to_string())
        .filter(|v| !v.is_empty())
}

fn agents_json(fm: &crate::board::frontmatter::Frontmatter) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for (id, ag) in &fm.agents {
        let mut reviews = serde_json::Map::new();
        for t in crate::board::frontmatter::Target::ALL {
            let r = ag.review(*t);
            reviews.insert(
                t.as_str().to_string(),
                json!({"reviewed": r.reviewed, "verdict": r.verdict, "sha256": r.sha256}),
            );
        }
        map.insert(
            id.clone(),
            json!({
                "role": ag.role,
                "status": ag.status,
                "last_seen": ag.last_seen,
                "reviews": reviews,
                "away": ag.away.as_ref().map(|w| json!({"until": w.until, "reason": w.reason})),
            }),
        );
    }
    serde_json::Value::Object(map)
}
