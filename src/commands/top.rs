//! `pair top PROJECT`: a live dashboard of every board of a project, for a person at a terminal
//! ([`crate::render::top`] draws it).
//!
//! It redraws when a board changes: a file notification on the project's directory tree wakes
//! it (a thread of `notify`), as does a key (a thread reading the terminal's events) and the
//! moment the shortest time-in-phase shown next changes its text; between those it sleeps in
//! one blocking receive, so an idle dashboard costs nothing. Leaving it — `q`, Esc, Ctrl-C, or
//! an error — restores the terminal (raw mode off, the main screen back, the cursor shown), by
//! a guard that runs on every way out.

use std::io::{IsTerminal, Stdout};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use serde_json::json;

use super::Outcome;
use crate::board::entry;
use crate::board::frontmatter::Timestamp;
use crate::board::journal;
use crate::cli::TopArgs;
use crate::error::{Error, Result};
use crate::render::report::{SCHEMA, current_target};
use crate::render::top::{BoardRow, EntryLine, View, draw, next_change, short_duration};
use crate::store::Session;

/// How many of the selected board's newest entries are kept for the entries pane.
const ENTRIES: usize = 12;

/// What wakes the loop.
enum Wake {
    Key(KeyEvent),
    Resize,
    /// A board may have changed.
    Changed,
    /// The terminal's events cannot be read any more.
    Gone(String),
}

/// The boards of a project: the `.md` blackboards under a directory (as `validate DIR` finds
/// them), or one board; each with its name in the project.
pub fn boards(project: &Path, s: &Session) -> Result<Vec<(String, PathBuf)>> {
    if crate::store::location::is_git(project) {
        if !crate::project::is_project(project) {
            return Ok(vec![(project.display().to_string(), project.to_path_buf())]);
        }
        let members = crate::project::Project::open(project)?.read(s)?;
        return Ok(members.into_iter().map(|m| (m.name, m.board)).collect());
    }
    let meta = std::fs::metadata(project).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Missing {
                path: project.to_path_buf(),
            }
        } else {
            Error::io(project, "read", e)
        }
    })?;
    if !meta.is_dir() {
        let name = project
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Ok(vec![(name, project.to_path_buf())]);
    }
    let (paths, _) = super::validate::boards_in(project, s);
    Ok(paths
        .into_iter()
        .map(|p| {
            let name = p
                .strip_prefix(project)
                .unwrap_or(&p)
                .with_extension("")
                .to_string_lossy()
                .replace('\\', "/");
            (name, p)
        })
        .collect())
}

/// What the dashboard reads, kept across redraws: a project remembers each board's frontmatter
/// by its stamp (a file's inode, time and size; a ref's tip) and reads again only the boards
/// whose stamp moved ([`crate::project::Project::read`]); the selected board's entries are kept
/// by its stamp too. A single board is read (its frontmatter) on each redraw.
struct Reader {
    project: Option<crate::project::Project>,
    /// The selected board's latest entries: its path, its stamp, the entries.
    entries: Option<(PathBuf, String, Vec<EntryLine>)>,
    /// How many times a board was read whole for its entries.
    whole_reads: u64,
}

impl Reader {
    fn open(path: &Path) -> Reader {
        let project = crate::project::is_project(path)
            .then(|| crate::project::Project::open(path).ok())
            .flatten();
        Reader {
            project,
            entries: None,
            whole_reads: 0,
        }
    }

    /// The boards: name, path, frontmatter (or why it cannot be read), stamp.
    fn boards(&self, path: &Path, s: &Session) -> Vec<Listed> {
        if let Some(p) = &self.project {
            return match p.read(s) {
                Ok(members) => members
                    .into_iter()
                    .map(|m| Listed {
                        name: m.name,
                        path: m.board,
                        fm: m.fm.ok_or_else(|| m.error.unwrap_or_default()),
                        stamp: Some(m.stamp),
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
        }
        boards(path, s)
            .unwrap_or_default()
            .into_iter()
            .map(|(name, path)| {
                let fm = crate::store::snapshot(&path, crate::store::Depth::Head, s)
                    .and_then(|snap| snap.frontmatter())
                    .map(|v| v.parsed.fm)
                    .map_err(|e| e.to_string());
                Listed {
                    name,
                    path,
                    fm,
                    stamp: None,
                }
            })
            .collect()
    }

    /// The latest entries of a board: read whole only when its stamp moved (or it has none).
    fn entries(&mut self, b: &Listed, s: &Session) -> Vec<EntryLine> {
        if let (Some((path, stamp, entries)), Some(now)) = (&self.entries, &b.stamp)
            && *path == b.path
            && stamp == now
        {
            return entries.clone();
        }
        self.whole_reads += 1;
        let entries = match crate::store::snapshot(&b.path, crate::store::Depth::Whole, s)
            .and_then(|snap| snap.load())
        {
            Ok(loaded) => {
                // The newest entries by their time, whatever section each is in (the body keeps
                // them in section order); the oldest of them first.
                let mut all = entry::entries(&loaded.valid.doc);
                all.sort_by_key(|e| e.time);
                let skip = all.len().saturating_sub(ENTRIES);
                all[skip..]
                    .iter()
                    .map(|e| EntryLine {
                        heading: e.heading.clone(),
                        first: e
                            .text
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("")
                            .to_string(),
                    })
                    .collect()
            }
            Err(_) => Vec::new(),
        };
        if let Some(stamp) = &b.stamp {
            self.entries = Some((b.path.clone(), stamp.clone(), entries.clone()));
        }
        entries
    }

    /// Boards read since the dashboard opened: frontmatters (and other Markdown files' heads)
    /// of a project, and boards read whole for their entries.
    fn reads(&self) -> u64 {
        self.project.as_ref().map_or(0, |p| p.reads()) + self.whole_reads
    }
}

/// One board as listed.
struct Listed {
    name: String,
    path: PathBuf,
    fm: std::result::Result<crate::board::frontmatter::Frontmatter, String>,
    /// What identifies this version of it, when the project knows.
    stamp: Option<String>,
}

/// One board's row from its frontmatter alone, and the seconds until its text next changes.
/// The flags are the watchdog's findings the frontmatter shows (a stall or an SLA measured from
/// the phase's start); `pair watch` reads the journals too.
fn row(b: &Listed, now: Timestamp) -> (BoardRow, u64) {
    let fm = match &b.fm {
        Ok(fm) => fm,
        Err(e) => {
            let first = e.lines().next().unwrap_or_default().to_string();
            return (
                BoardRow {
                    name: b.name.clone(),
                    phase: "?".into(),
                    flags: vec![format!("ERROR {first}")],
                    ..BoardRow::default()
                },
                u64::MAX,
            );
        }
    };
    let held = fm.phase_updated_at.millis_until(now) / 1000;
    let terminal = fm.phase.is_terminal();
    let turn = if terminal {
        Vec::new()
    } else {
        crate::law::protocol::turn(fm)
    };
    let found = crate::watch::findings(
        fm,
        &[],
        &[],
        &journal::host(),
        now,
        &crate::watch::pid_alive,
    );
    let mut flags: Vec<String> = Vec::new();
    for f in &found {
        let word = match f.kind {
            crate::watch::Kind::Stall => "STALL",
            crate::watch::Kind::Unregistered => "UNREGISTERED",
            crate::watch::Kind::Breach => "SLA",
            crate::watch::Kind::Dead => "DEAD",
            crate::watch::Kind::Unable => "UNABLE",
        };
        let who = f
            .agent
            .clone()
            .or_else(|| f.sla.map(|n| n.to_string()))
            .unwrap_or_default();
        let flag = format!("{word} {who}").trim().to_string();
        if !flags.contains(&flag) {
            flags.push(flag);
        }
    }
    let round = current_target(fm)
        .filter(|_| !terminal)
        .map(|t| format!("{t} {}", fm.counter(t)))
        .unwrap_or_default();
    // Findings appear as time passes: redraw when the row's clock text changes, which is at
    // least every minute for the first hour.
    let next = if terminal {
        u64::MAX
    } else {
        next_change(held)
    };
    (
        BoardRow {
            name: b.name.clone(),
            phase: fm.phase.to_string(),
            turn,
            in_phase: short_duration(held),
            round,
            flags,
        },
        next,
    )
}

/// Every board's row (from what changed since the last redraw) and the selected board's
/// entries: the view, and when to redraw unasked.
fn read_view(
    a: &TopArgs,
    reader: &mut Reader,
    selected: &mut usize,
    s: &Session,
) -> (View, Option<Duration>) {
    let now = Timestamp::now_ms();
    let list = reader.boards(&a.project, s);
    let mut rows = Vec::with_capacity(list.len());
    let mut next = u64::MAX;
    for b in &list {
        let (row, n) = row(b, now);
        rows.push(row);
        next = next.min(n);
    }
    *selected = (*selected).min(rows.len().saturating_sub(1));
    let entries = match list.get(*selected) {
        Some(b) => reader.entries(b, s),
        None => Vec::new(),
    };
    let view = View {
        title: a.project.display().to_string(),
        rows,
        selected: *selected,
        entries,
        at: clock_text(now),
    };
    if crate::store::location::is_git(&a.project) {
        // No notification comes from a remote: ask it again every few seconds (one ls-remote;
        // only boards whose tips moved are fetched).
        next = next.min(REMOTE_INTERVAL_S);
    }
    (view, (next != u64::MAX).then(|| Duration::from_secs(next)))
}

/// The dashboard's clock, to the second.
fn clock_text(now: Timestamp) -> String {
    now.to_string().chars().take(19).collect::<String>() + "Z"
}

/// How often the dashboard's clock is redrawn, whatever the boards do: it keeps time once
/// every board is finished too.
const CLOCK: Duration = Duration::from_secs(1);

/// How often the dashboard of a git remote's namespace asks the remote again, in seconds.
pub const REMOTE_INTERVAL_S: u64 = 2;

/// The terminal in the dashboard's state; dropping it puts the terminal back.
struct Screen {
    term: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    fn open() -> Result<Screen> {
        let fail = |e: std::io::Error| {
            Error::Usage(format!(
                "`pair top` cannot set up the terminal ({e}); run it in a terminal, or use \
                 `pair stats` or `pair watch --once` for a report"
            ))
        };
        terminal::enable_raw_mode().map_err(fail)?;
        let mut out = std::io::stdout();
        if let Err(e) = crossterm::execute!(out, EnterAlternateScreen, crossterm::cursor::Hide) {
            let _ = terminal::disable_raw_mode();
            return Err(fail(e));
        }
        let term = match Terminal::new(CrosstermBackend::new(out)) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(fail(e));
            }
        };
        Ok(Screen { term })
    }
}

fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        std::io::stdout(),
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

fn keys(tx: Sender<Wake>) {
    loop {
        let sent = match event::read() {
            Ok(Event::Key(k)) => tx.send(Wake::Key(k)),
            Ok(Event::Resize(..)) => tx.send(Wake::Resize),
            Ok(_) => Ok(()),
            Err(e) => {
                let _ = tx.send(Wake::Gone(e.to_string()));
                return;
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

/// Watch the project's directory (or the board's) for changes to `.md` files.
fn watcher(project: &Path, tx: Sender<Wake>) -> Option<notify::RecommendedWatcher> {
    let dir = if project.is_dir() {
        project.to_path_buf()
    } else {
        project
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    };
    crate::store::wait::watch_tree(&dir, move |ev: notify::Result<notify::Event>| {
        let md = ev.as_ref().map_or(true, |e| {
            e.paths
                .iter()
                .any(|p| p.extension().is_some_and(|x| x == "md"))
        });
        if md {
            let _ = tx.send(Wake::Changed);
        }
    })
}

pub fn run(a: TopArgs, s: &Session) -> Result<Outcome> {
    // Check the project before taking over the terminal, so a wrong path is a plain error.
    let count = boards(&a.project, s)?.len();
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(Error::Usage(
            "`pair top` is a live dashboard for a terminal; its input or output is not one. \
             For a report, run `pair stats PROJECT` (or `pair watch PROJECT --once`)"
                .into(),
        ));
    }
    let (tx, rx): (Sender<Wake>, Receiver<Wake>) = mpsc::channel();
    let _watch = watcher(&a.project, tx.clone());
    let mut screen = Screen::open()?;
    {
        let tx = tx.clone();
        std::thread::spawn(move || keys(tx));
    }
    drop(tx);
    let mut selected = 0usize;
    let mut reader = Reader::open(&a.project);
    let (mut view, tick) = read_view(&a, &mut reader, &mut selected, s);
    // When the rows change by the clock alone (a stall limit passed, a remote to ask again).
    let mut due = tick.map(|t| std::time::Instant::now() + t);
    let mut redraws = 0u64;
    loop {
        screen
            .term
            .draw(|f| draw(f, &view))
            .map_err(|e| Error::io(Path::new("<terminal>"), "draw the dashboard", e))?;
        redraws += 1;
        let now = std::time::Instant::now();
        let wait = due.map_or(CLOCK, |d| d.saturating_duration_since(now).min(CLOCK));
        let woke = rx.recv_timeout(wait);
        // A tick of the clock alone redraws the time; the boards are read again when they
        // may have changed, or when their rows' clocks are due.
        let rows_due = due.is_some_and(|d| std::time::Instant::now() >= d);
        let mut reread = !matches!(woke, Err(RecvTimeoutError::Timeout)) || rows_due;
        let mut quit = false;
        let mut handle = |w: std::result::Result<Wake, RecvTimeoutError>| -> Result<()> {
            match w {
                Ok(Wake::Key(k)) if k.kind != KeyEventKind::Release => {
                    match key(k, &mut selected, view.rows.len()) {
                        Some(true) => quit = true,
                        Some(false) => {}
                        None => reread = false,
                    }
                }
                Ok(Wake::Key(_)) => reread = false,
                Ok(Wake::Resize) | Ok(Wake::Changed) => reread = true,
                Err(RecvTimeoutError::Timeout) => {}
                Ok(Wake::Gone(e)) => {
                    return Err(Error::Usage(format!("`pair top` lost its terminal ({e})")));
                }
                Err(RecvTimeoutError::Disconnected) => quit = true,
            }
            Ok(())
        };
        handle(woke)?;
        // A burst of notifications (one write is several events) makes one read.
        let mut more = false;
        while let Ok(w) = rx.try_recv() {
            handle(Ok(w))?;
            more = true;
        }
        reread |= more;
        if quit {
            break;
        }
        if reread {
            let tick;
            (view, tick) = read_view(&a, &mut reader, &mut selected, s);
            due = tick.map(|t| std::time::Instant::now() + t);
        } else {
            view.at = clock_text(Timestamp::now_ms());
        }
    }
    Ok(done(screen, &a, count, redraws, reader.reads()))
}

/// Apply a key: `Some(true)` to quit, `Some(false)` when it moved the selection, `None` when
/// it means nothing here.
fn key(k: KeyEvent, selected: &mut usize, n: usize) -> Option<bool> {
    let last = n.saturating_sub(1);
    match k.code {
        KeyCode::Char('q') | KeyCode::Esc => return Some(true),
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => return Some(true),
        KeyCode::Down | KeyCode::Char('j') => *selected = (*selected + 1).min(last),
        KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
        KeyCode::Home | KeyCode::Char('g') => *selected = 0,
        KeyCode::End | KeyCode::Char('G') => *selected = last,
        KeyCode::PageDown => *selected = (*selected + 10).min(last),
        KeyCode::PageUp => *selected = selected.saturating_sub(10),
        _ => return None,
    }
    Some(false)
}

fn done(screen: Screen, a: &TopArgs, boards: usize, redraws: u64, reads: u64) -> Outcome {
    drop(screen);
    Outcome::ok(
        json!({
            "schema": SCHEMA,
            "project": a.project.display().to_string(),
            "boards": boards,
            "redraws": redraws,
            "reads": reads,
        }),
        String::new(),
    )
}
