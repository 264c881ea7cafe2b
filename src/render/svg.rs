//! `pair stats --svg`: a timeline of one or more boards that a browser opens. Each board has a
//! band row of its phases and one lane per agent, in which the agent's turns are bars, its
//! writes dots and its verdicts diamonds (green approved, red changes requested, grey comment).
//! Every text goes through [`escape`].

use std::fmt::Write as _;

use crate::board::frontmatter::{Phase, Timestamp};
use crate::board::journal::Record;
use crate::stats::BoardStats;

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 150.0;
const LANE: f64 = 24.0;

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

/// A stable colour per phase.
fn colour(p: Phase) -> String {
    let i = Phase::ALL.iter().position(|q| *q == p).unwrap_or(0);
    format!("hsl({}, 55%, 80%)", (i * 47) % 360)
}

/// One board's records and figures.
pub struct Board<'a> {
    pub stats: &'a BoardStats,
    pub records: &'a [Record],
}

/// Draw the timeline of the boards.
pub fn timeline(boards: &[Board]) -> String {
    let mut body = String::new();
    let mut y = 10.0;
    for b in boards {
        y = board(&mut body, b, y) + 20.0;
    }
    let height = y.max(40.0);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\" font-family=\"sans-serif\" \
         font-size=\"11\">\n<title>pair stats timeline</title>\n{body}</svg>\n",
        w = WIDTH + LEFT + 10.0
    )
}

fn board(out: &mut String, b: &Board, top: f64) -> f64 {
    let s = b.stats;
    let _ = writeln!(
        out,
        "<text x=\"4\" y=\"{}\" font-weight=\"bold\">{}</text>",
        top + 12.0,
        escape(&s.path)
    );
    let (Some(start), Some(end)) = (s.start, s.end) else {
        let _ = writeln!(
            out,
            "<text x=\"{LEFT}\" y=\"{}\">no journal yet</text>",
            top + 30.0
        );
        return top + 40.0;
    };
    let span = ((end.0 - start.0).num_seconds().max(1)) as f64;
    let x = |t: Timestamp| LEFT + ((t.0 - start.0).num_seconds() as f64 / span) * WIDTH;
    let agents: Vec<&String> = s.agents.keys().collect();
    let band_top = top + 18.0;
    let lanes_top = band_top + LANE + 4.0;
    let bottom = lanes_top + LANE * agents.len() as f64;
    // Phases as bands over the whole board, labelled in the band row.
    let _ = writeln!(
        out,
        "<text x=\"4\" y=\"{}\">phase</text>",
        band_top + LANE * 0.65
    );
    for (i, r) in b.records.iter().enumerate() {
        let until = b.records.get(i + 1).map_or(end, |n| n.at);
        let (x0, x1) = (x(r.at), x(until));
        let _ = writeln!(
            out,
            "<rect x=\"{x0:.1}\" y=\"{band_top}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\" \
             opacity=\"0.6\"><title>{} from {} to {until}</title></rect>",
            (x1 - x0).max(0.5),
            bottom - band_top,
            colour(r.to),
            escape(r.to.as_str()),
            r.at
        );
        if b.records
            .get(i.wrapping_sub(1))
            .is_none_or(|p| p.to != r.to)
        {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"9\">{}</text>",
                x0 + 2.0,
                band_top + LANE * 0.65,
                escape(r.to.as_str())
            );
        }
    }
    // One lane per agent: its turns, its writes and its verdicts.
    for (k, id) in agents.iter().enumerate() {
        let ly = lanes_top + LANE * k as f64;
        let _ = writeln!(
            out,
            "<text x=\"4\" y=\"{:.1}\">{}</text>",
            ly + LANE * 0.65,
            escape(id)
        );
        let _ = writeln!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#999\"/>",
            LEFT + WIDTH,
            y = ly + LANE / 2.0
        );
        for (i, r) in b.records.iter().enumerate() {
            if r.turn.iter().any(|t| t == *id) {
                let until = b.records.get(i + 1).map_or(end, |n| n.at);
                let _ = writeln!(
                    out,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
                     fill=\"#4a7fd4\" opacity=\"0.5\"><title>{}: turn from {} to {until}\
                     </title></rect>",
                    x(r.at),
                    ly + LANE * 0.3,
                    (x(until) - x(r.at)).max(0.5),
                    LANE * 0.4,
                    escape(id),
                    r.at
                );
            }
            if r.by.as_deref() != Some(id.as_str()) {
                continue;
            }
            let (cx, cy) = (x(r.at), ly + LANE / 2.0);
            match &r.verdict {
                Some(v) => {
                    let fill = if v.ends_with("CHANGES_REQUESTED") {
                        "#d43d3d"
                    } else if v.ends_with("APPROVED") {
                        "#2e9d48"
                    } else {
                        "#888"
                    };
                    let _ = writeln!(
                        out,
                        "<path d=\"M{cx:.1} {:.1} L{:.1} {cy:.1} L{cx:.1} {:.1} L{:.1} {cy:.1} Z\" \
                         fill=\"{fill}\"><title>{} at {}: verdict {}</title></path>",
                        cy - 7.0,
                        cx + 7.0,
                        cy + 7.0,
                        cx - 7.0,
                        escape(id),
                        r.at,
                        escape(v)
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3.5\" fill=\"#222\"><title>{} \
                         at {}: {}</title></circle>",
                        escape(id),
                        r.at,
                        escape(&r.command)
                    );
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"9\">{start}</text>\n<text x=\"{:.1}\" \
         y=\"{:.1}\" font-size=\"9\" text-anchor=\"end\">{end}</text>",
        bottom + 12.0,
        LEFT + WIDTH,
        bottom + 12.0
    );
    bottom + 16.0
}
