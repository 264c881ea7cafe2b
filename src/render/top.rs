//! `pair top`'s screen, drawn from a [`View`] alone: a header line, one row per board (whose
//! turn, phase, time in phase, round, and what is wrong: a stall, an SLA breach, a board that
//! cannot be read), the selected board's latest entries, and a line of keys.
//!
//! Nothing here needs colour: the selected row is marked with `>` (and shown reversed), a stalled
//! or breached board is flagged in words (`STALL`, `SLA`, `DEAD`), so the screen reads the same
//! in a monochrome terminal, over SSH, and in `tmux capture-pane`. On a small terminal the
//! entries pane goes first, then columns, narrowest last; the board names stay.
//!
//! Every text the view holds (a board's name is a file name or a ref, anyone's to choose) is
//! drawn through [`crate::text::escape`], as `ls` prints it: a control character, an escape
//! sequence or a bidi override reaches the terminal as its escape (`\x1b`), never raw.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState, Wrap};

/// A text of the view as it is drawn: escaped ([`crate::text::escape`]).
fn shown(s: &str) -> String {
    crate::text::escape(s).into_owned()
}

/// One board as the dashboard shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoardRow {
    /// Its name in the project.
    pub name: String,
    /// Its phase, or `?` when it cannot be read.
    pub phase: String,
    /// Whose turn it is (ids), empty on a terminal board.
    pub turn: Vec<String>,
    /// Time in the phase, already written (`4m`, `2h03m`).
    pub in_phase: String,
    /// The current round of the gate being worked on (`plan 2`), or empty.
    pub round: String,
    /// What is wrong, in words: `STALL alice`, `SLA review`, `DEAD doer`, `ERROR …`.
    pub flags: Vec<String>,
}

/// One entry of the selected board, newest last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryLine {
    pub heading: String,
    /// Its first line of text.
    pub first: String,
}

/// Everything one screen shows.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The project, as named on the command line.
    pub title: String,
    pub rows: Vec<BoardRow>,
    pub selected: usize,
    /// The selected board's latest entries.
    pub entries: Vec<EntryLine>,
    /// The time of the last read (UTC, to the second).
    pub at: String,
}

/// Below this height the entries pane is left out; below this width, the round and turn
/// columns.
const ENTRIES_MIN_HEIGHT: u16 = 14;
const WIDE: u16 = 60;

/// Draw the view on the frame.
pub fn draw(f: &mut Frame, v: &View) {
    let area = f.area();
    if area.height == 0 || area.width == 0 {
        return;
    }
    let flagged = v.rows.iter().filter(|r| !r.flags.is_empty()).count();
    let header = format!(
        "pair top {} · {} boards, {} flagged · {}",
        shown(&v.title),
        v.rows.len(),
        flagged,
        shown(&v.at)
    );
    let keys = "↑/↓ or j/k select · g/G first/last · q quit";
    let show_entries = area.height >= ENTRIES_MIN_HEIGHT;
    let chunks = if show_entries {
        let table_h = (v.rows.len() as u16 + 1).clamp(2, area.height.saturating_sub(2) / 2);
        Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(table_h),
            Constraint::Min(3),
            Constraint::Length(1),
        ])
        .split(area)
    } else {
        Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(0),
            Constraint::Length(u16::from(area.height >= 3)),
        ])
        .split(area)
    };
    f.render_widget(Paragraph::new(header), chunks[0]);
    table(f, v, chunks[1]);
    if show_entries {
        entries(f, v, chunks[2]);
    }
    f.render_widget(Paragraph::new(keys), chunks[3]);
}

fn table(f: &mut Frame, v: &View, area: Rect) {
    let wide = area.width >= WIDE;
    let head: Vec<&str> = if wide {
        vec!["board", "phase", "turn", "in phase", "round", "flags"]
    } else {
        vec!["board", "phase", "in phase", "flags"]
    };
    let rows: Vec<Row> = v
        .rows
        .iter()
        .map(|r| {
            let mut cells = vec![shown(&r.name), shown(&r.phase)];
            if wide {
                cells.push(if r.turn.is_empty() {
                    "-".into()
                } else {
                    shown(&r.turn.join(","))
                });
            }
            cells.push(shown(&r.in_phase));
            if wide {
                cells.push(shown(&r.round));
            }
            cells.push(shown(&r.flags.join(" ")));
            let row = Row::new(cells.into_iter().map(Cell::from).collect::<Vec<_>>());
            if r.flags.is_empty() {
                row
            } else {
                row.style(Style::default().add_modifier(Modifier::BOLD))
            }
        })
        .collect();
    let widths: Vec<Constraint> = if wide {
        vec![
            Constraint::Fill(3),
            Constraint::Fill(4),
            Constraint::Fill(2),
            Constraint::Length(8),
            Constraint::Length(7),
            Constraint::Fill(3),
        ]
    } else {
        vec![
            Constraint::Fill(2),
            Constraint::Fill(2),
            Constraint::Length(8),
            Constraint::Fill(1),
        ]
    };
    let t = Table::new(rows, widths)
        .header(Row::new(head).style(Style::default().add_modifier(Modifier::UNDERLINED)))
        .column_spacing(1)
        .highlight_symbol("> ")
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default();
    if !v.rows.is_empty() {
        state.select(Some(v.selected.min(v.rows.len() - 1)));
    }
    f.render_stateful_widget(t, area, &mut state);
}

fn entries(f: &mut Frame, v: &View, area: Rect) {
    let name = v
        .rows
        .get(v.selected)
        .map_or_else(|| "-".to_string(), |r| shown(&r.name));
    let mut lines: Vec<Line> = Vec::new();
    if v.entries.is_empty() {
        lines.push(Line::from("(no entries yet)"));
    }
    // The newest entries that fit, newest last: two lines each.
    let room = area.height.saturating_sub(2) as usize / 2;
    let skip = v.entries.len().saturating_sub(room.max(1));
    for e in &v.entries[skip..] {
        lines.push(Line::from(Span::styled(
            shown(&e.heading),
            Style::default().add_modifier(Modifier::BOLD),
        )));
        lines.push(Line::from(format!("  {}", shown(&e.first))));
    }
    let block = Block::default()
        .borders(Borders::TOP)
        .title(format!(" {name}: latest entries "));
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

/// A duration for the in-phase column: `12s`, `4m`, `2h03m`, `3d04h`.
pub fn short_duration(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// Seconds until [`short_duration`] of `seconds` next changes: the dashboard redraws then, and
/// not before, when nothing is written.
pub fn next_change(seconds: i64) -> u64 {
    let s = seconds.max(0);
    let unit = match s {
        0..60 => 1,
        60..3600 => 60,
        3600..86_400 => 60,
        _ => 3600,
    };
    (unit - s % unit) as u64
}
