//! `pair stats --svg`: a timeline of one or more boards that a browser opens.
//!
//! Each board has a title, a row of phase bands (one band per visit of a phase: the writes that
//! keep the board in its phase do not split it), a lane for the user's decisions when the user
//! made any, one lane per agent in which the agent's turns are bars, its writes dots, its
//! verdicts diamonds (green approved, red changes requested, grey comment) and its dissents
//! triangles pointing down, and a time axis with ticks at round intervals. Under an agent's first
//! row, each objection it raised is a line from a triangle where it was raised to a bar where it
//! was settled (dashed to the end while it is not), labelled with its id and how it ended; the
//! user's lane has a square for each write that recorded decisions of the user's (a gate
//! approved, a check waived, a ruling, a decision at the round cap), labelled with the ruling.
//! Every mark is at the time of the write that made it ([`crate::stats::moments`]), with a
//! tooltip that says it whole. Boards drawn together share one time axis, from the first write
//! of any of them to the end of the last, so that the same time is at the same place in each.
//! A legend under the boards explains the marks and keys every phase drawn by colour and number.
//!
//! Every text is laid out as a box, for a monospace font whose glyphs are at most
//! [`GLYPH`] em wide: no label overlaps another or leaves the canvas. A phase's name is written
//! in its band when it fits, else above the band row beside a stroke down to the band, else its
//! number from the key in the band, else that number above; the labels above take up to four
//! rows where they keep apart from each other and from each other's strokes, laid out to name
//! the most bands with the fewest rows (a band left over is named by its colour, the key and its
//! tooltip). An objection's or a decision's label goes after its mark, or before it when the
//! canvas ends first, and the marks of a lane take as many rows as they need to keep apart,
//! labels included. An agent id or a path too long for its place is shortened with `…` (the
//! tooltip has it whole). Times may carry fractions of a second. Every text goes through
//! [`escape`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::board::dissent::Outcome;
use crate::board::entry::Decided;
use crate::board::frontmatter::{Phase, Timestamp};
use crate::board::journal::Record;
use crate::stats::BoardStats;
use crate::stats::moments::{self, Moments};

/// The canvas width.
pub const WIDTH: f64 = 1100.0;
/// The left gutter (lane names), and where the plot starts.
const LEFT: f64 = 170.0;
/// The plot's width: time runs from `LEFT` to `LEFT + PLOT`.
const PLOT: f64 = 860.0;
const BAND: f64 = 22.0;
const LANE: f64 = 24.0;
/// Font sizes: titles, lane names and legend, small labels.
const TITLE: f64 = 12.0;
const TEXT: f64 = 11.0;
const SMALL: f64 = 9.0;
/// The widest glyph of the monospace font the SVG asks for, in em (DejaVu Sans Mono and
/// Liberation Mono: 0.60), with a margin.
pub const GLYPH: f64 = 0.62;

const TURN: &str = "#4a7fd4";
const APPROVED: &str = "#2e9d48";
const CHANGES: &str = "#d43d3d";
const COMMENT: &str = "#888";

/// Escape text for XML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// What the board is doing in a phase, which its colour says: the legend names each kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Draft,
    Working,
    Submitted,
    Review,
    Changes,
    Approved,
    Lifecycle,
    Waiting,
    Stopped,
}

impl Kind {
    const ALL: [Kind; 9] = [
        Kind::Draft,
        Kind::Working,
        Kind::Submitted,
        Kind::Review,
        Kind::Changes,
        Kind::Approved,
        Kind::Lifecycle,
        Kind::Waiting,
        Kind::Stopped,
    ];

    fn of(p: Phase) -> Kind {
        use Phase::*;
        match p {
            Draft => Kind::Draft,
            Analyzing | Planning | RedTesting | Coding => Kind::Working,
            AnalysisSubmitted | PlanningSubmitted | RedTestSubmitted | CodeSubmitted => {
                Kind::Submitted
            }
            ReviewingAnalysis | ReviewingPlan | ReviewingRedTest | ReviewingCode
            | FollowupReview => Kind::Review,
            AnalysisChangesRequested
            | PlanChangesRequested
            | RedTestChangesRequested
            | CodeChangesRequested => Kind::Changes,
            AnalysisApproved | PlanApproved | RedTestApproved | ReadyToCommit => Kind::Approved,
            Committed | Merged | CleanedUp => Kind::Lifecycle,
            Blocked | AwaitingDecision => Kind::Waiting,
            Stopped => Kind::Stopped,
        }
    }

    fn colour(self) -> &'static str {
        match self {
            Kind::Draft => "#e4e4e4",
            Kind::Working => "#bcd4f2",
            Kind::Submitted => "#f3e19a",
            Kind::Review => "#f6c48f",
            Kind::Changes => "#f0a8a8",
            Kind::Approved => "#b6e0a8",
            Kind::Lifecycle => "#9fd8cf",
            Kind::Waiting => "#d6bdee",
            Kind::Stopped => "#b8b8b8",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Kind::Draft => "draft",
            Kind::Working => "the doer works",
            Kind::Submitted => "submitted",
            Kind::Review => "in review",
            Kind::Changes => "changes requested",
            Kind::Approved => "approved",
            Kind::Lifecycle => "committed, merged, cleaned up",
            Kind::Waiting => "blocked, or waiting for a decision",
            Kind::Stopped => "stopped",
        }
    }
}

/// A phase's colour: the colour of its kind.
fn colour(p: Phase) -> &'static str {
    Kind::of(p).colour()
}

/// The width of a text at a font size.
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * GLYPH
}

/// The most characters that fit in `width` at `size`.
fn chars_in(width: f64, size: f64) -> usize {
    (width / (size * GLYPH)).floor().max(0.0) as usize
}

/// `s` cut to fit `width`, its end replaced by `…`.
fn fit_end(s: &str, width: f64, size: f64) -> String {
    let max = chars_in(width, size);
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut to fit `width`, its middle replaced by `…` (a path keeps its file name).
fn fit_middle(s: &str, width: f64, size: f64) -> String {
    let max = chars_in(width, size);
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let keep = max.saturating_sub(1);
    let tail = keep * 2 / 3;
    let head = keep - tail;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(n - tail));
    out
}

/// Seconds from `a` to `b`, to the millisecond.
fn seconds(a: Timestamp, b: Timestamp) -> f64 {
    (b.0 - a.0).num_milliseconds() as f64 / 1000.0
}

/// A text element; `anchor` is `start`, `middle` or `end`.
fn text(out: &mut String, x: f64, y: f64, size: f64, anchor: &str, class: &str, body: &str) {
    let _ = writeln!(
        out,
        "<text class=\"{class}\" x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{size}\" \
         text-anchor=\"{anchor}\">{}</text>",
        escape(body)
    );
}

/// One board's records, figures and moments.
pub struct Board<'a> {
    pub stats: &'a BoardStats,
    pub records: &'a [Record],
    pub moments: &'a Moments,
}

/// A stretch of a board in one phase: from the write that entered it to the write that left it.
struct Visit {
    phase: Phase,
    from: Timestamp,
    to: Timestamp,
    writes: usize,
}

/// The visits of the phases, in order: consecutive records in the same phase are one visit.
fn visits(records: &[Record], end: Timestamp) -> Vec<Visit> {
    let mut out: Vec<Visit> = Vec::new();
    for r in records {
        match out.last_mut() {
            Some(v) if v.phase == r.to => v.writes += 1,
            last => {
                if let Some(v) = last {
                    v.to = r.at;
                }
                out.push(Visit {
                    phase: r.to,
                    from: r.at,
                    to: end,
                    writes: 1,
                });
            }
        }
    }
    out
}

/// The height of a row of band labels above the bands.
const CALLOUT: f64 = 11.0;
/// At most this many rows of band labels above the bands: a band left over is named by its
/// colour, the key and its tooltip.
const CALLOUT_ROWS: usize = 4;
/// The room between two labels in a row above the bands: a glyph's width, so that two names
/// do not read as one.
const CALLOUT_GAP: f64 = SMALL * GLYPH;

/// A band's name or number written above the band row, beside a stroke that goes down to the
/// middle of its band: a flag, its text after the stroke (or before it, where the canvas ends).
struct Callout {
    label: String,
    /// Where the text starts, and its width.
    x: f64,
    width: f64,
    /// The middle of its band, where its stroke goes down.
    mid: f64,
    /// Its row: 0 is the nearest the bands.
    row: usize,
}

/// From the text of a flag to its stroke.
const FLAG: f64 = 2.0;

impl Callout {
    /// From the left of its stroke or text to the right of them.
    fn extent(x: f64, width: f64, mid: f64) -> (f64, f64) {
        (x.min(mid), (x + width).max(mid))
    }

    /// Whether a flag with its text at `x` of `width` in `row` and its stroke at `mid` keeps
    /// apart from this one: apart in the same row, its text clear of this one's stroke where
    /// that stroke passes (the rows under this one), and its own stroke clear of this one's text
    /// (when this one is under it).
    fn clear_of(&self, x: f64, width: f64, mid: f64, row: usize) -> bool {
        let (a0, a1) = Callout::extent(self.x, self.width, self.mid);
        let (b0, b1) = Callout::extent(x, width, mid);
        let crosses = |x0: f64, w: f64, at: f64| x0 - FLAG <= at && at <= x0 + w + FLAG;
        match row.cmp(&self.row) {
            std::cmp::Ordering::Equal => a1 + CALLOUT_GAP <= b0 || b1 + CALLOUT_GAP <= a0,
            std::cmp::Ordering::Less => !crosses(x, width, self.mid),
            std::cmp::Ordering::Greater => !crosses(self.x, self.width, mid),
        }
    }
}

/// Where a flag of `label` whose stroke goes down at `mid` fits above the bands among `placed`,
/// in one of `rows` rows: the first of them, in the order `rows` gives, where it keeps apart,
/// its text after its stroke, else before it, on the canvas.
fn callout(label: &str, mid: f64, placed: &[&Callout], rows: &[usize]) -> Option<Callout> {
    let width = text_width(label, SMALL);
    let starts: Vec<f64> = [mid + FLAG, mid - FLAG - width]
        .into_iter()
        .filter(|x| *x >= LEFT && x + width <= WIDTH - 4.0)
        .collect();
    rows.iter().find_map(|row| {
        starts
            .iter()
            .find(|x| placed.iter().all(|c| c.clear_of(**x, width, mid, *row)))
            .map(|x| Callout {
                label: label.to_string(),
                x: *x,
                width,
                mid,
                row: *row,
            })
    })
}

/// The labels of the bands: in each band, and above each.
type Labels = (Vec<Option<String>>, Vec<Option<Callout>>);

/// The labels of the bands laid out with the rows above them tried in the order `rows` gives:
/// first every band's name or number in it, else its number above; then a name above in place
/// of a number, where one fits (so that a name never takes the place of a band's only label).
fn lay_out(spans: &[(f64, f64)], names: &[String], numbers: &[String], rows: &[usize]) -> Labels {
    let inside = |l: &str, w: f64| text_width(l, SMALL) + 6.0 <= w;
    let mut in_band: Vec<Option<String>> = vec![None; spans.len()];
    let mut above: Vec<Option<Callout>> = (0..spans.len()).map(|_| None).collect();
    for (i, (x0, w)) in spans.iter().enumerate() {
        if inside(&names[i], *w) {
            in_band[i] = Some(names[i].clone());
        } else if inside(&numbers[i], *w) {
            in_band[i] = Some(numbers[i].clone());
        } else {
            let placed: Vec<&Callout> = above.iter().flatten().collect();
            above[i] = callout(&numbers[i], x0 + w / 2.0, &placed, rows);
        }
    }
    for (i, (x0, w)) in spans.iter().enumerate() {
        if in_band[i].as_deref() == Some(names[i].as_str()) {
            continue;
        }
        let placed: Vec<&Callout> = above
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .filter_map(|(_, c)| c.as_ref())
            .collect();
        if let Some(c) = callout(&names[i], x0 + w / 2.0, &placed, rows) {
            in_band[i] = None;
            above[i] = Some(c);
        }
    }
    (in_band, above)
}

/// Where each band's label goes: its phase's name in the band when it fits, else above the
/// band row ([`callout`]), else its number in the band, else its number above. Of the layouts
/// with up to [`CALLOUT_ROWS`] rows above the bands, each filled from its nearest row up or from
/// its highest row down (a long name up high leaves the rows under it to the strokes of its
/// neighbours), the one that labels the most bands, then names the most, with the fewest rows.
/// Returns the labels in the bands, the callouts and how many callout rows are used.
fn band_labels(
    visits: &[Visit],
    key: &BTreeMap<Phase, usize>,
    x: &dyn Fn(Timestamp) -> f64,
) -> (Vec<Option<String>>, Vec<Callout>, usize) {
    let spans: Vec<(f64, f64)> = visits
        .iter()
        .map(|v| {
            let x0 = x(v.from);
            (x0, (x(v.to).max(x0) - x0).max(0.5))
        })
        .collect();
    let names: Vec<String> = visits
        .iter()
        .map(|v| v.phase.as_str().to_string())
        .collect();
    let numbers: Vec<String> = visits
        .iter()
        .map(|v| key.get(&v.phase).copied().unwrap_or(0).to_string())
        .collect();
    let mut best: Option<((usize, usize), Labels)> = None;
    for n in 0..=CALLOUT_ROWS {
        let up: Vec<usize> = (0..n).collect();
        let down: Vec<usize> = (0..n).rev().collect();
        for rows in [up, down] {
            let (in_band, above) = lay_out(&spans, &names, &numbers, &rows);
            let labelled = (0..spans.len())
                .filter(|i| in_band[*i].is_some() || above[*i].is_some())
                .count();
            let named = (0..spans.len())
                .filter(|i| {
                    in_band[*i]
                        .as_ref()
                        .or(above[*i].as_ref().map(|c| &c.label))
                        == Some(&names[*i])
                })
                .count();
            if best
                .as_ref()
                .is_none_or(|(score, ..)| (labelled, named) > *score)
            {
                best = Some(((labelled, named), (in_band, above)));
            }
        }
    }
    let (_, (in_band, above)) = best.unwrap_or_default();
    let callouts: Vec<Callout> = above.into_iter().flatten().collect();
    let rows = callouts.iter().map(|c| c.row + 1).max().unwrap_or(0);
    (in_band, callouts, rows)
}

/// The key number of each phase drawn, in the order the phases first appear.
fn phase_key(boards: &[Board]) -> BTreeMap<Phase, usize> {
    let mut key = BTreeMap::new();
    for b in boards {
        for r in b.records {
            let n = key.len() + 1;
            key.entry(r.to).or_insert(n);
        }
    }
    key
}

/// Draw the timeline of the boards, on one time axis: from the first write of any of them to
/// the end of the last.
pub fn timeline(boards: &[Board]) -> String {
    let key = phase_key(boards);
    let start = boards.iter().filter_map(|b| b.stats.start).min();
    let end = boards.iter().filter_map(|b| b.stats.end).max();
    let axis = start.zip(end).map(|(start, end)| Axis {
        start,
        span: seconds(start, end).max(0.001),
        shared: boards.len() > 1,
    });
    let mut body = String::new();
    let mut y = 8.0;
    for b in boards {
        y = board(&mut body, b, &key, axis.as_ref(), y) + 18.0;
    }
    y = legend(&mut body, &key, y);
    let height = (y + 8.0).ceil();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" \
         font-family=\"DejaVu Sans Mono, Liberation Mono, monospace\" font-size=\"{TEXT}\">\n\
         <title>pair stats timeline</title>\n<rect class=\"canvas\" x=\"0\" y=\"0\" \
         width=\"{WIDTH}\" height=\"{height}\" fill=\"#fff\"/>\n{body}</svg>\n"
    )
}

/// The time axis every board is drawn on.
struct Axis {
    start: Timestamp,
    /// In seconds.
    span: f64,
    /// Whether several boards share it.
    shared: bool,
}

impl Axis {
    fn x(&self, t: Timestamp) -> f64 {
        LEFT + (seconds(self.start, t) / self.span).clamp(0.0, 1.0) * PLOT
    }
}

/// The height of a row of objections or decisions under a lane's first row.
const TRACK: f64 = 14.0;

const ADVISORY: &str = "#e39b1b";
const RULING: &str = "#7b4fb3";
/// The lane of the user's decisions: two words, so no agent id.
const USER_LANE: &str = "the user";

/// A lane: the user's, or an agent's.
struct Lane<'a> {
    name: String,
    agent: Option<&'a str>,
    items: Vec<Item<'a>>,
    /// The rows of its items: the user's lane puts them from its first row on, an agent's under
    /// its first row (which has its turns, writes, verdicts and dissents).
    rows: usize,
}

impl Lane<'_> {
    fn height(&self) -> f64 {
        match self.agent {
            Some(_) => LANE + TRACK * self.rows as f64,
            None => LANE + TRACK * self.rows.saturating_sub(1) as f64,
        }
    }

    /// The middle of item row `row`, the lane starting at `top`.
    fn row_mid(&self, top: f64, row: usize) -> f64 {
        match (self.agent, row) {
            (None, 0) => top + LANE / 2.0,
            (None, r) => top + LANE + TRACK * (r - 1) as f64 + TRACK / 2.0,
            (Some(_), r) => top + LANE + TRACK * r as f64 + TRACK / 2.0,
        }
    }
}

/// What an item of a lane marks.
enum Mark<'a> {
    Objection(&'a moments::Objection),
    Decision(&'a moments::Decision),
}

/// A mark laid out in a lane: the extent of its shapes, its label and the row it is in.
struct Item<'a> {
    mark: Mark<'a>,
    /// Its shapes span from `x0` to `x1`.
    x0: f64,
    x1: f64,
    /// Its label and where the label starts.
    label: Option<(String, f64)>,
    row: usize,
}

impl<'a> Item<'a> {
    fn new(mark: Mark<'a>, axis: &Axis, end: Timestamp) -> Item<'a> {
        let (x0, x1, labels) = match &mark {
            Mark::Objection(o) => {
                let (a, b) = (axis.x(o.raised), axis.x(o.settled.unwrap_or(end)));
                (
                    a - 4.0,
                    (b + 1.5).max(a + 4.0),
                    vec![format!("{} {}", o.id, state_words(o.state)), o.id.clone()],
                )
            }
            Mark::Decision(d) => {
                let a = axis.x(d.at);
                (a - 4.5, a + 4.5, d.label.iter().cloned().collect())
            }
        };
        // The label after the mark where it fits on the canvas, else before it in the plot.
        let label = labels.into_iter().find_map(|l| {
            let w = text_width(&l, SMALL);
            if x1 + 3.0 + w <= WIDTH - 4.0 {
                Some((l, x1 + 3.0))
            } else if x0 - 3.0 - w >= LEFT {
                Some((l, x0 - 3.0 - w))
            } else {
                None
            }
        });
        Item {
            mark,
            x0,
            x1,
            label,
            row: 0,
        }
    }

    /// From the left of its shapes or label to the right of them.
    fn extent(&self) -> (f64, f64) {
        match &self.label {
            Some((l, at)) => (self.x0.min(*at), self.x1.max(at + text_width(l, SMALL))),
            None => (self.x0, self.x1),
        }
    }
}

/// Put each item in the first row where it keeps apart from the others, in the order they
/// start; returns how many rows are used.
fn pack(items: &mut [Item]) -> usize {
    items.sort_by(|a, b| a.extent().0.total_cmp(&b.extent().0));
    let mut rows: Vec<f64> = Vec::new();
    for it in items.iter_mut() {
        let (left, right) = it.extent();
        let row = match rows.iter().position(|r| *r + 4.0 <= left) {
            Some(r) => r,
            None => {
                rows.push(f64::NEG_INFINITY);
                rows.len() - 1
            }
        };
        rows[row] = right;
        it.row = row;
    }
    rows.len()
}

/// An objection's state in words: `accepted`, `risk accepted`.
fn state_words(s: crate::board::ledger::State) -> String {
    s.as_str().replace('_', " ")
}

fn board(
    out: &mut String,
    b: &Board,
    key: &BTreeMap<Phase, usize>,
    axis: Option<&Axis>,
    top: f64,
) -> f64 {
    let s = b.stats;
    let title_y = top + TITLE;
    let (Some(start), Some(end), Some(axis)) = (s.start, s.end, axis) else {
        text(
            out,
            4.0,
            title_y,
            TITLE,
            "start",
            "title",
            &fit_middle(&s.path, WIDTH - 8.0, TITLE),
        );
        text(
            out,
            LEFT,
            title_y + 18.0,
            TEXT,
            "start",
            "note",
            "no journal yet",
        );
        return title_y + 24.0;
    };
    // The title: the path, shortened in the middle to leave room for what follows it.
    let tail = format!(
        " · now {} · {} {}",
        s.phase,
        crate::stats::figure::ELAPSED.name,
        elapsed_text(s.start.zip(s.end).map_or(0.0, |(a, b)| seconds(a, b)))
    );
    let room = WIDTH - 8.0 - text_width(&tail, TITLE);
    let _ = writeln!(out, "<g><title>{}</title>", escape(&s.path));
    text(
        out,
        4.0,
        title_y,
        TITLE,
        "start",
        "title",
        &format!("{}{tail}", fit_middle(&s.path, room.max(0.0), TITLE)),
    );
    out.push_str("</g>\n");
    let x = |t: Timestamp| axis.x(t);
    let m = b.moments;
    // The lanes: the user's when the user decided anything, then one per agent.
    let mut lanes: Vec<Lane> = Vec::new();
    let users: Vec<&moments::Decision> = m.decisions.iter().filter(|d| d.users).collect();
    if !users.is_empty() {
        lanes.push(Lane {
            name: USER_LANE.to_string(),
            agent: None,
            items: users
                .iter()
                .map(|d| Item::new(Mark::Decision(d), axis, end))
                .collect(),
            rows: 0,
        });
    }
    let mut ids: std::collections::BTreeSet<&str> = s.agents.keys().map(String::as_str).collect();
    ids.extend(m.objections.iter().map(|o| o.by.as_str()));
    ids.extend(m.dissents.iter().map(|d| d.by.as_str()));
    for id in ids {
        let objections = m
            .objections
            .iter()
            .filter(|o| o.by == id)
            .map(|o| Item::new(Mark::Objection(o), axis, end));
        // A decision the only required reviewer made as the arbiter is on its own lane.
        let decisions = m
            .decisions
            .iter()
            .filter(|d| !d.users && d.by.as_deref() == Some(id))
            .map(|d| Item::new(Mark::Decision(d), axis, end));
        lanes.push(Lane {
            name: id.to_string(),
            agent: Some(id),
            items: objections.chain(decisions).collect(),
            rows: 0,
        });
    }
    for lane in &mut lanes {
        lane.rows = pack(&mut lane.items);
    }
    let visits = visits(b.records, end);
    let (in_band, callouts, rows) = band_labels(&visits, key, &x);
    let callout_top = title_y + 8.0;
    let band_top = callout_top + CALLOUT * rows as f64;
    let lanes_top = band_top + BAND + 2.0;
    let bottom = lanes_top + lanes.iter().map(Lane::height).sum::<f64>();
    text(out, 4.0, band_top + 15.0, TEXT, "start", "gutter", "phase");
    // One band per visit of a phase, shaded on through the lanes.
    for (i, v) in visits.iter().enumerate() {
        let (x0, x1) = (x(v.from), x(v.to).max(x(v.from)));
        let w = (x1 - x0).max(0.5);
        let fill = colour(v.phase);
        let n = key.get(&v.phase).copied().unwrap_or(0);
        let tip = format!(
            "{} ({n}) from {} to {}, {} write{}",
            v.phase,
            v.from,
            v.to,
            v.writes,
            if v.writes == 1 { "" } else { "s" }
        );
        let _ = writeln!(
            out,
            "<rect class=\"shade\" x=\"{x0:.2}\" y=\"{lanes_top:.1}\" width=\"{w:.2}\" \
             height=\"{:.1}\" fill=\"{fill}\" opacity=\"0.35\"/>",
            bottom - lanes_top
        );
        let _ = writeln!(
            out,
            "<rect class=\"band\" data-phase=\"{}\" x=\"{x0:.2}\" y=\"{band_top:.1}\" \
             width=\"{w:.2}\" height=\"{BAND}\" fill=\"{fill}\" stroke=\"#fff\" \
             stroke-width=\"0.5\"><title>{}</title></rect>",
            v.phase,
            escape(&tip)
        );
        if let Some(l) = &in_band[i] {
            text(
                out,
                x0 + 3.0,
                band_top + 15.0,
                SMALL,
                "start",
                "band-label",
                l,
            );
        }
    }
    // The names or numbers of the bands too narrow for them, above the bands, each with a
    // stroke down to the middle of its band.
    for c in &callouts {
        let y = band_top - CALLOUT * c.row as f64 - 3.0;
        text(out, c.x, y, SMALL, "start", "band-callout", &c.label);
        let _ = writeln!(
            out,
            "<line class=\"callout\" x1=\"{:.2}\" y1=\"{:.1}\" x2=\"{:.2}\" y2=\"{band_top:.1}\" \
             stroke=\"#555\" stroke-width=\"0.8\"/>",
            c.mid,
            y - SMALL * 0.8,
            c.mid
        );
    }
    let dissent_records: Vec<usize> = m.dissents.iter().filter_map(|d| d.record).collect();
    let mut ly = lanes_top;
    for lane in &lanes {
        let mid = ly + LANE / 2.0;
        let _ = writeln!(out, "<g><title>{}</title>", escape(&lane.name));
        text(
            out,
            4.0,
            mid + 4.0,
            TEXT,
            "start",
            if lane.agent.is_some() {
                "gutter"
            } else {
                "gutter user"
            },
            &fit_end(&lane.name, LEFT - 10.0, TEXT),
        );
        out.push_str("</g>\n");
        let _ = writeln!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{mid:.1}\" x2=\"{:.1}\" y2=\"{mid:.1}\" stroke=\"#bbb\"/>",
            LEFT + PLOT
        );
        if let Some(id) = lane.agent {
            agent_row(out, b, id, &dissent_records, &x, ly, end);
        }
        for it in &lane.items {
            item(out, it, lane.row_mid(ly, it.row), &x, end);
        }
        ly += lane.height();
    }
    axis_of(out, axis, start, end, band_top, bottom)
}

/// An agent's first row: its turns, its writes, its verdicts and its dissents.
fn agent_row(
    out: &mut String,
    b: &Board,
    id: &str,
    dissent_records: &[usize],
    x: &dyn Fn(Timestamp) -> f64,
    ly: f64,
    end: Timestamp,
) {
    let mid = ly + LANE / 2.0;
    // Turns: from the write that made it the agent's turn to the one that passed it on.
    let mut since: Option<Timestamp> = None;
    let mut turns = Vec::new();
    for r in b.records {
        let holds = r.turn.iter().any(|t| t == id);
        match (holds, since) {
            (true, None) => since = Some(r.at),
            (false, Some(from)) => {
                turns.push((from, r.at));
                since = None;
            }
            _ => {}
        }
    }
    if let Some(from) = since {
        turns.push((from, end));
    }
    for (from, to) in turns {
        let (x0, x1) = (x(from), x(to).max(x(from)));
        let _ = writeln!(
            out,
            "<rect class=\"turn\" x=\"{x0:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\" \
             fill=\"{TURN}\" opacity=\"0.6\"><title>{}: its turn from {from} to {to}\
             </title></rect>",
            ly + LANE * 0.3,
            (x1 - x0).max(0.5),
            LANE * 0.4,
            escape(id)
        );
    }
    for (i, r) in b.records.iter().enumerate() {
        if r.by.as_deref() != Some(id) {
            continue;
        }
        let cx = x(r.at);
        if dissent_records.contains(&i) {
            continue;
        }
        match &r.verdict {
            Some(v) => {
                let fill = if v.ends_with("CHANGES_REQUESTED") {
                    CHANGES
                } else if v.ends_with("APPROVED") {
                    APPROVED
                } else {
                    COMMENT
                };
                let _ = writeln!(
                    out,
                    "<path class=\"verdict\" d=\"{}\" fill=\"{fill}\" stroke=\"#fff\" \
                     stroke-width=\"0.8\"><title>{} at {}: verdict {}</title></path>",
                    diamond(cx, mid),
                    escape(id),
                    r.at,
                    escape(v)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "<circle class=\"write\" cx=\"{cx:.2}\" cy=\"{mid:.1}\" r=\"3.5\" \
                     fill=\"#222\"><title>{} at {}: {} ({} → {})</title></circle>",
                    escape(id),
                    r.at,
                    escape(&r.command),
                    r.from.map_or("-", |p| p.as_str()),
                    r.to
                );
            }
        }
    }
    // A dissent is drawn in place of the dot of its write.
    for d in b.moments.dissents.iter().filter(|d| d.by == id) {
        let fill = match d.outcome {
            Some(Outcome::Blocking) => CHANGES,
            Some(Outcome::Advisory) => ADVISORY,
            _ => COMMENT,
        };
        let outcome = d.outcome.map_or("?", |o| o.as_str());
        let cx = x(d.at);
        let _ = writeln!(
            out,
            "<polygon class=\"dissent\" data-by=\"{}\" data-outcome=\"{outcome}\" \
             points=\"{}\" fill=\"{fill}\" stroke=\"#fff\" stroke-width=\"0.8\"><title>{} at \
             {}: dissent on {}: {outcome}. {}</title></polygon>",
            escape(id),
            dissent_points(cx, mid),
            escape(id),
            d.at,
            escape(&d.what),
            escape(&d.summary)
        );
    }
}

/// An item of a lane, its row's middle at `y`.
fn item(out: &mut String, it: &Item, y: f64, x: &dyn Fn(Timestamp) -> f64, end: Timestamp) {
    match &it.mark {
        Mark::Objection(o) => {
            let colour = match o.severity {
                crate::board::ledger::Severity::Blocking => CHANGES,
                crate::board::ledger::Severity::Advisory => ADVISORY,
            };
            let (a, b) = (x(o.raised), x(o.settled.unwrap_or(end)));
            let mut tip = format!(
                "{}: {}\n{} objection on the {} (round {}) raised by {}; now {}",
                o.id,
                o.title,
                o.severity,
                o.gate,
                o.round,
                o.by,
                state_words(o.state)
            );
            for st in &o.steps {
                let _ = write!(
                    tip,
                    "\n{} by {} at {}",
                    st.what,
                    st.by.as_deref().unwrap_or("-"),
                    st.at
                );
            }
            let id = escape(&o.id);
            let _ = writeln!(
                out,
                "<g class=\"objection\"><title>{}</title>",
                escape(&tip)
            );
            let _ = writeln!(
                out,
                "<line class=\"objection-span\" data-id=\"{id}\" x1=\"{a:.2}\" y1=\"{y:.1}\" \
                 x2=\"{b:.2}\" y2=\"{y:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{}/>",
                if o.settled.is_some() {
                    ""
                } else {
                    " stroke-dasharray=\"4 3\""
                }
            );
            let _ = writeln!(
                out,
                "<polygon class=\"objection-raised\" data-id=\"{id}\" data-at=\"{}\" \
                 points=\"{:.2},{:.1} {:.2},{y:.1} {:.2},{:.1}\" fill=\"{colour}\"/>",
                o.raised,
                a - 4.0,
                y - 4.5,
                a + 4.0,
                a - 4.0,
                y + 4.5
            );
            if let Some(t) = o.settled {
                let _ = writeln!(
                    out,
                    "<rect class=\"objection-settled\" data-id=\"{id}\" data-at=\"{t}\" \
                     data-state=\"{}\" x=\"{:.2}\" y=\"{:.1}\" width=\"3\" height=\"10\" \
                     fill=\"#333\"/>",
                    o.state,
                    b - 1.5,
                    y - 5.0
                );
            }
            if let Some((l, at)) = &it.label {
                text(out, *at, y + 3.0, SMALL, "start", "objection-label", l);
            }
            out.push_str("</g>\n");
        }
        Mark::Decision(d) => {
            let fill = match d.kind {
                Decided::Approval => APPROVED,
                Decided::Waiver => ADVISORY,
                Decided::Ruling => RULING,
            };
            let whose = if d.users {
                "the user's decision"
            } else {
                "the arbiter's decision"
            };
            let mut tip = format!(
                "{whose}, recorded by {} at {}",
                d.by.as_deref().unwrap_or("-"),
                d.at
            );
            for l in &d.lines {
                let _ = write!(tip, "\n{l}");
            }
            let kind = match d.kind {
                Decided::Approval => "approval",
                Decided::Waiver => "waiver",
                Decided::Ruling => "ruling",
            };
            let cx = x(d.at);
            let _ = writeln!(
                out,
                "<g class=\"decided\"><title>{}</title>\n<rect class=\"decision\" \
                 data-kind=\"{kind}\" data-at=\"{}\" x=\"{:.2}\" y=\"{:.1}\" width=\"9\" \
                 height=\"9\" fill=\"{fill}\" stroke=\"#fff\" stroke-width=\"0.8\"/>",
                escape(&tip),
                d.at,
                cx - 4.5,
                y - 4.5
            );
            if let Some((l, at)) = &it.label {
                text(out, *at, y + 3.0, SMALL, "start", "decision-label", l);
            }
            out.push_str("</g>\n");
        }
    }
}

fn diamond(cx: f64, cy: f64) -> String {
    format!(
        "M{cx:.2} {:.1} L{:.2} {cy:.1} L{cx:.2} {:.1} L{:.2} {cy:.1} Z",
        cy - 7.0,
        cx + 7.0,
        cy + 7.0,
        cx - 7.0
    )
}

/// A triangle pointing down: a dissent.
fn dissent_points(cx: f64, cy: f64) -> String {
    format!(
        "{:.2},{:.1} {:.2},{:.1} {cx:.2},{:.1}",
        cx - 7.0,
        cy - 6.0,
        cx + 7.0,
        cy - 6.0,
        cy + 7.0
    )
}

/// Round intervals for the ticks, in seconds.
const STEPS: &[f64] = &[
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    15.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    900.0,
    1800.0,
    3600.0,
    7200.0,
    10800.0,
    21600.0,
    43200.0,
    86400.0,
    172_800.0,
    432_000.0,
    604_800.0,
    1_209_600.0,
    2_592_000.0,
    7_776_000.0,
    31_536_000.0,
];

/// A tick's time since the start: `0`, `500ms`, `1.5s`, `2m30s`, `1h30m`, `2d6h`.
fn tick_text(t: f64) -> String {
    if t <= 0.0 {
        return "0".into();
    }
    if t < 1.0 {
        return format!("{}ms", (t * 1000.0).round());
    }
    if t < 60.0 {
        let s = format!("{t:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        return format!("{s}s");
    }
    let s = t.round() as i64;
    let (d, h, m, sec) = (s / 86400, (s % 86400) / 3600, (s % 3600) / 60, s % 60);
    let mut out = String::new();
    for (n, unit) in [(d, "d"), (h, "h"), (m, "m"), (sec, "s")] {
        if n > 0 {
            let _ = write!(out, "{n}{unit}");
        }
    }
    out
}

/// A length of time to the millisecond: `0s`, `2.5s`, `1m30s`.
fn elapsed_text(t: f64) -> String {
    if t <= 0.0 { "0s".into() } else { tick_text(t) }
}

/// The tick interval: the smallest round one whose labels keep apart.
fn tick_step(span: f64) -> f64 {
    for &step in STEPS {
        let count = (span / step).floor() as usize;
        if count > 40 {
            continue;
        }
        let widest = (0..=count)
            .map(|i| text_width(&tick_text(i as f64 * step), SMALL))
            .fold(0.0, f64::max);
        if step / span * PLOT >= widest + 12.0 {
            return step;
        }
    }
    span
}

/// The time axis under the lanes: ticks at round intervals labelled with the time since the
/// first write (of any of the boards, when several share the axis), and a caption with the
/// board's first write and end.
fn axis_of(
    out: &mut String,
    axis: &Axis,
    start: Timestamp,
    end: Timestamp,
    top: f64,
    bottom: f64,
) -> f64 {
    let y = bottom + 2.0;
    let span = axis.span;
    let _ = writeln!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" \
         stroke=\"#333\"/>",
        LEFT + PLOT
    );
    let step = tick_step(span);
    let mut placed_right = f64::MIN;
    let mut i = 0usize;
    loop {
        let t = i as f64 * step;
        if t > span * (1.0 + 1e-9) {
            break;
        }
        let tx = LEFT + (t / span) * PLOT;
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{tx:.2}\" y1=\"{top:.1}\" x2=\"{tx:.2}\" y2=\"{y:.1}\" \
             stroke=\"#000\" stroke-opacity=\"0.12\"/>"
        );
        let _ = writeln!(
            out,
            "<line class=\"tick\" x1=\"{tx:.2}\" y1=\"{y:.1}\" x2=\"{tx:.2}\" y2=\"{:.1}\" \
             stroke=\"#333\"/>",
            y + 4.0
        );
        let label = tick_text(t);
        let w = text_width(&label, SMALL);
        let cx = tx.clamp(w / 2.0 + 2.0, WIDTH - w / 2.0 - 2.0);
        if cx - w / 2.0 >= placed_right + 4.0 {
            text(out, cx, y + 14.0, SMALL, "middle", "tick-label", &label);
            placed_right = cx + w / 2.0;
        }
        i += 1;
    }
    let elapsed = format!(
        "{} {}",
        crate::stats::figure::ELAPSED.name,
        elapsed_text(seconds(start, end))
    );
    let caption = if axis.shared {
        format!(
            "ticks: time since the boards' first write ({}); this board from {start} to {end} \
             ({elapsed})",
            axis.start
        )
    } else {
        format!("ticks: time since the first write ({start}); the timeline ends {end} ({elapsed})")
    };
    text(
        out,
        LEFT,
        y + 28.0,
        SMALL,
        "start",
        "caption",
        &fit_end(&caption, WIDTH - LEFT - 4.0, SMALL),
    );
    y + 32.0
}

/// A legend's sample of a mark.
enum Swatch {
    Block(String, f64),
    Dot,
    Diamond(&'static str),
    /// An objection's line from raised to settled; dashed while still to be settled.
    Objection(&'static str, bool),
    /// A decision's square.
    Decision(&'static str),
    /// A dissent's triangle.
    Dissent(&'static str),
}

const SWATCH: f64 = 16.0;

impl Swatch {
    fn draw(&self, out: &mut String, x: f64, cy: f64) {
        let mid = x + SWATCH / 2.0;
        let _ = match self {
            Swatch::Block(fill, opacity) => writeln!(
                out,
                "<rect class=\"swatch\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{SWATCH}\" \
                 height=\"12\" fill=\"{fill}\" opacity=\"{opacity}\"/>",
                cy - 6.0
            ),
            Swatch::Dot => writeln!(
                out,
                "<circle class=\"swatch\" cx=\"{mid:.1}\" cy=\"{cy:.1}\" r=\"3.5\" \
                 fill=\"#222\"/>"
            ),
            Swatch::Diamond(fill) => writeln!(
                out,
                "<path class=\"swatch\" d=\"M{mid:.1} {:.1} l6 6 l-6 6 l-6 -6 Z\" \
                 fill=\"{fill}\"/>",
                cy - 6.0
            ),
            Swatch::Objection(colour, open) => writeln!(
                out,
                "<line class=\"swatch\" x1=\"{:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" \
                 stroke=\"{colour}\" stroke-width=\"2\"{}/>\n<polygon class=\"swatch\" \
                 points=\"{x:.1},{:.1} {:.1},{cy:.1} {x:.1},{:.1}\" fill=\"{colour}\"/>{}",
                x + 4.0,
                x + SWATCH - 1.5,
                if *open {
                    " stroke-dasharray=\"4 3\""
                } else {
                    ""
                },
                cy - 4.5,
                x + 8.0,
                cy + 4.5,
                if *open {
                    String::new()
                } else {
                    format!(
                        "\n<rect class=\"swatch\" x=\"{:.1}\" y=\"{:.1}\" width=\"3\" \
                         height=\"10\" fill=\"#333\"/>",
                        x + SWATCH - 3.0,
                        cy - 5.0
                    )
                }
            ),
            Swatch::Decision(fill) => writeln!(
                out,
                "<rect class=\"swatch\" x=\"{:.1}\" y=\"{:.1}\" width=\"9\" height=\"9\" \
                 fill=\"{fill}\"/>",
                mid - 4.5,
                cy - 4.5
            ),
            Swatch::Dissent(fill) => writeln!(
                out,
                "<polygon class=\"swatch\" points=\"{}\" fill=\"{fill}\"/>",
                dissent_points(mid, cy)
            ),
        };
    }
}

/// A heading of the legend on a row of its own; returns the y under it.
fn heading(out: &mut String, top: f64, words: &str) -> f64 {
    text(
        out,
        4.0,
        top + TEXT + 2.0,
        TEXT,
        "start",
        "legend-title",
        words,
    );
    top + TEXT + 6.0
}

/// Swatches and their labels laid out left to right, wrapping at the canvas edge. Returns the
/// y under the last row.
fn flow(out: &mut String, top: f64, items: &[(Swatch, String)], class: &str) -> f64 {
    const ROW: f64 = 18.0;
    let (mut x, mut y) = (4.0, top);
    for (swatch, label) in items {
        let label = fit_end(label, WIDTH - 8.0 - SWATCH - 4.0, TEXT);
        let w = SWATCH + 4.0 + text_width(&label, TEXT);
        if x > 4.0 && x + w > WIDTH - 4.0 {
            x = 4.0;
            y += ROW;
        }
        let cy = y + ROW / 2.0;
        swatch.draw(out, x, cy);
        text(
            out,
            x + SWATCH + 4.0,
            cy + 4.0,
            TEXT,
            "start",
            class,
            &label,
        );
        x += w + 18.0;
    }
    y + ROW
}

/// The legend: what the marks mean, and the key of the phases drawn.
fn legend(out: &mut String, key: &BTreeMap<Phase, usize>, top: f64) -> f64 {
    let y = heading(out, top, "Legend");
    let marks = vec![
        (
            Swatch::Block(TURN.to_string(), 0.6),
            "the agent's turn".to_string(),
        ),
        (Swatch::Dot, "a write".to_string()),
        (Swatch::Diamond(APPROVED), "verdict: approved".to_string()),
        (
            Swatch::Diamond(CHANGES),
            "verdict: changes requested".to_string(),
        ),
        (Swatch::Diamond(COMMENT), "verdict: comment".to_string()),
    ];
    let y = flow(out, y, &marks, "legend");
    let y = heading(
        out,
        y + 4.0,
        "Objections under the lane of the agent who raised them, from raised to settled, with \
         their id and how they ended; decisions; dissents:",
    );
    let marks = vec![
        (
            Swatch::Objection(CHANGES, false),
            "objection: blocking".to_string(),
        ),
        (
            Swatch::Objection(ADVISORY, false),
            "objection: advisory".to_string(),
        ),
        (
            Swatch::Objection(CHANGES, true),
            "objection still to be settled".to_string(),
        ),
        (
            Swatch::Decision(APPROVED),
            "the user approved a gate or a step".to_string(),
        ),
        (
            Swatch::Decision(ADVISORY),
            "the user waived a check".to_string(),
        ),
        (
            Swatch::Decision(RULING),
            "a ruling, or a decision at the round cap".to_string(),
        ),
        (Swatch::Dissent(CHANGES), "dissent: blocking".to_string()),
        (Swatch::Dissent(ADVISORY), "dissent: advisory".to_string()),
        (Swatch::Dissent(COMMENT), "dissent: none".to_string()),
    ];
    let y = flow(out, y, &marks, "legend");
    if key.is_empty() {
        return y;
    }
    let y = heading(
        out,
        y + 4.0,
        "Phase bands, one per visit of a phase, coloured by what the board is doing:",
    );
    let kinds: Vec<(Swatch, String)> = Kind::ALL
        .iter()
        .filter(|k| key.keys().any(|p| Kind::of(*p) == **k))
        .map(|k| {
            (
                Swatch::Block(k.colour().to_string(), 1.0),
                k.words().to_string(),
            )
        })
        .collect();
    let y = flow(out, y, &kinds, "legend");
    let mut phases: Vec<(Phase, usize)> = key.iter().map(|(p, n)| (*p, *n)).collect();
    phases.sort_by_key(|(_, n)| *n);
    let items: Vec<(Swatch, String)> = phases
        .into_iter()
        .map(|(p, n)| {
            (
                Swatch::Block(colour(p).to_string(), 1.0),
                format!("{n} {p}"),
            )
        })
        .collect();
    let y = heading(
        out,
        y + 4.0,
        "Phases, numbered: a band shows its phase's name, in it or above it, else its number",
    );
    flow(out, y, &items, "key")
}
