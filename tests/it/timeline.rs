//! The SVG timeline of `pair stats --svg`, read back as geometry: on real boards with short
//! phases, revisited phases, writes that keep a phase, a long path and a long agent id, every
//! label's box lies inside the canvas and no two overlap, no label covers a mark of an objection,
//! a decision or a dissent, the marks of two of them never overlap, and no stroke from a band's
//! label crosses a text; there is one phase band per visit, named in it or above it where its
//! name fits, a time axis with ticks shared by the boards drawn together, and a legend that names
//! every mark and keys every phase drawn. Times with milliseconds are drawn to the millisecond.
//! Each objection is marked on the lane of its raiser from the time it was raised to the time it
//! was settled, each decision of the user's on the user's lane, each dissent on its dissenter's
//! lane, at the time of the write that made it, in the demo's real time too. `pair stats`
//! settles an objection accepted as a risk at the user's decision, not at the need for one.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;

/// The widest glyph of the monospace font the SVG asks for, in em, with a margin (DejaVu Sans
/// Mono and Liberation Mono advance 0.60 em), and a text's extent above and below its baseline.
const GLYPH: f64 = 0.62;
const ASCENT: f64 = 0.8;
const DESCENT: f64 = 0.25;

#[track_caller]
fn at(time: &str, args: &[&str]) {
    pair_env(args, &[("PAIR_NOW", time)]).code(0);
}

fn t(hms: &str) -> String {
    format!("2026-01-01T{hms}Z")
}

const LONG_ID: &str = "reviewer-with-a-rather-long-agent-identifier-x";

/// A plan gate of three rounds over an hour: phases of a second or two, the review phases
/// visited three times, writes that keep the board in its phase (registrations, the first of
/// two verdicts, a usage report), a long directory and file name and a long reviewer id.
fn long_board(dir: &std::path::Path) -> String {
    let d = dir
        .join("a-directory-with-a-long-name")
        .join("and-another-one-below-it");
    fs::create_dir_all(&d).unwrap();
    let b = d
        .join("the-board-of-a-task-with-a-very-long-file-name-for-the-timeline.md")
        .to_str()
        .unwrap()
        .to_string();
    let p = b.as_str();
    let reviewers = format!("alice,{LONG_ID}");
    let verdict = |time: &str, who: &str, v: &str, rev: &str| {
        at(
            &t(time),
            &[
                "verdict",
                p,
                v,
                "--revision",
                rev,
                "--note",
                "n",
                "--agent",
                who,
            ],
        )
    };
    let submit = |time: &str, note: &str| {
        at(
            &t(time),
            &[
                "submit",
                p,
                "plan",
                "--note",
                note,
                "--agent",
                "doer",
                "--user-approved",
            ],
        )
    };
    at(
        &t("00:00:00"),
        &["init", p, "--reviewers", &reviewers, "--goal", "g"],
    );
    at(&t("00:00:05"), &["register", p, "--agent", "alice"]);
    at(&t("00:00:07"), &["register", p, "--agent", LONG_ID]);
    at(
        &t("00:01:00"),
        &[
            "advance",
            p,
            "PLANNING",
            "--agent",
            "doer",
            "--user-approved",
        ],
    );
    submit("00:01:02", "v1");
    at(&t("00:01:03"), &["claim", p, "--agent", "alice"]);
    verdict("00:05:00", "alice", "APPROVED", "1");
    verdict("00:20:00", LONG_ID, "CHANGES_REQUESTED", "1");
    submit("00:30:00", "v2");
    at(&t("00:30:01"), &["claim", p, "--agent", LONG_ID]);
    verdict("00:31:00", "alice", "APPROVED", "2");
    verdict("00:40:00", LONG_ID, "COMMENT", "2");
    submit("00:45:00", "v3");
    at(&t("00:45:01"), &["claim", p, "--agent", "alice"]);
    verdict("00:46:00", "alice", "APPROVED", "3");
    verdict("00:50:00", LONG_ID, "APPROVED", "3");
    at(
        &t("00:50:30"),
        &["report-usage", p, "--agent", "alice", "--tokens", "50"],
    );
    at(
        &t("01:00:00"),
        &["stop", p, "--agent", "doer", "--reason", "done"],
    );
    b
}

/// A board whose writes are milliseconds apart: 2.5 s in all.
fn quick_board(dir: &std::path::Path) -> String {
    let b = dir.join("quick.md").to_str().unwrap().to_string();
    let p = b.as_str();
    at(
        &t("00:00:00.000"),
        &["init", p, "--reviewers", "alice", "--goal", "g"],
    );
    at(&t("00:00:00.120"), &["register", p, "--agent", "alice"]);
    at(
        &t("00:00:00.300"),
        &[
            "advance",
            p,
            "PLANNING",
            "--agent",
            "doer",
            "--user-approved",
        ],
    );
    at(
        &t("00:00:00.350"),
        &[
            "submit",
            p,
            "plan",
            "--note",
            "v1",
            "--agent",
            "doer",
            "--user-approved",
        ],
    );
    at(&t("00:00:00.900"), &["claim", p, "--agent", "alice"]);
    at(
        &t("00:00:02.100"),
        &[
            "verdict",
            p,
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
            "--agent",
            "alice",
        ],
    );
    at(
        &t("00:00:02.500"),
        &["stop", p, "--agent", "doer", "--reason", "done"],
    );
    b
}

/// An element of the SVG: its name, attributes, and text up to its closing tag.
#[derive(Debug, Clone)]
struct Element {
    name: String,
    attrs: BTreeMap<String, String>,
    text: String,
}

impl Element {
    fn attr(&self, k: &str) -> &str {
        self.attrs.get(k).map(String::as_str).unwrap_or("")
    }
    fn num(&self, k: &str) -> f64 {
        self.attr(k)
            .parse()
            .unwrap_or_else(|_| panic!("{k} of {self:?} is not a number"))
    }
    fn class(&self) -> &str {
        self.attr("class")
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Every opening tag of the SVG with its attributes, and for `<text>` its content.
fn elements(svg: &str) -> Vec<Element> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if rest.starts_with('/') || rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let end = rest.find('>').expect("a closed tag");
        let tag = rest[..end].trim_end_matches('/');
        let name: String = tag.chars().take_while(|c| c.is_alphanumeric()).collect();
        let mut attrs = BTreeMap::new();
        let mut a = &tag[name.len()..];
        while let Some(eq) = a.find("=\"") {
            let key = a[..eq].trim().to_string();
            let v_end = a[eq + 2..].find('"').expect("a quoted value");
            attrs.insert(key, unescape(&a[eq + 2..eq + 2 + v_end]));
            a = &a[eq + 2 + v_end + 1..];
        }
        let body = &rest[end + 1..];
        let text = if name == "text" || name == "title" {
            unescape(&body[..body.find("</").expect("a closing tag")])
        } else {
            String::new()
        };
        out.push(Element { name, attrs, text });
        rest = body;
    }
    out
}

/// A label's box: left, top, right, bottom.
type Extent = (f64, f64, f64, f64);

fn text_box(e: &Element) -> Extent {
    let (x, y, size) = (e.num("x"), e.num("y"), e.num("font-size"));
    let w = e.text.chars().count() as f64 * size * GLYPH;
    let left = match e.attr("text-anchor") {
        "middle" => x - w / 2.0,
        "end" => x - w,
        _ => x,
    };
    (left, y - size * ASCENT, left + w, y + size * DESCENT)
}

/// The points of a polygon.
fn points(e: &Element) -> Vec<(f64, f64)> {
    e.attr("points")
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').expect("x,y");
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// The box of a mark: a rect, a polygon, or a line (as thick as it is drawn).
fn mark_box(e: &Element) -> Extent {
    match e.name.as_str() {
        "rect" => (
            e.num("x"),
            e.num("y"),
            e.num("x") + e.num("width"),
            e.num("y") + e.num("height"),
        ),
        "polygon" => points(e).iter().fold(
            (f64::MAX, f64::MAX, f64::MIN, f64::MIN),
            |(l, t, r, b), (x, y)| (l.min(*x), t.min(*y), r.max(*x), b.max(*y)),
        ),
        "line" => (
            e.num("x1").min(e.num("x2")),
            e.num("y1").min(e.num("y2")) - 1.0,
            e.num("x1").max(e.num("x2")),
            e.num("y1").max(e.num("y2")) + 1.0,
        ),
        other => panic!("no box for a {other}"),
    }
}

fn overlap(a: Extent, b: Extent) -> bool {
    !(a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1)
}

/// The middle of a mark, across and down.
fn centre(e: &Element) -> (f64, f64) {
    let b = mark_box(e);
    ((b.0 + b.2) / 2.0, (b.1 + b.3) / 2.0)
}

const MARKS: [&str; 5] = [
    "objection-raised",
    "objection-span",
    "objection-settled",
    "decision",
    "dissent",
];

/// The runs of one phase in a board's journal: its visits, in order.
fn visits(board: &str) -> Vec<String> {
    let log = pair(["log", board, "--json"]);
    log.code(0);
    let mut out: Vec<String> = Vec::new();
    for r in log.json()["records"].as_array().unwrap() {
        let to = r["to"].as_str().unwrap().to_string();
        if out.last() != Some(&to) {
            out.push(to);
        }
    }
    out
}

/// What each band of a one-board picture is named by, in order: the text in it, or the text
/// above it beside the stroke that goes down to its middle.
fn band_names(els: &[Element]) -> Vec<Option<String>> {
    // A text's place is written to a tenth, a shape's to a hundredth.
    let near = |a: f64, b: f64| (a - b).abs() < 0.06;
    els.iter()
        .filter(|e| e.class() == "band")
        .map(|b| {
            let (x, w) = (b.num("x"), b.num("width"));
            if let Some(l) = els
                .iter()
                .find(|e| e.class() == "band-label" && near(e.num("x"), x + 3.0))
            {
                return Some(l.text.clone());
            }
            let stroke = els
                .iter()
                .find(|e| e.class() == "callout" && near(e.num("x1"), x + w / 2.0))?;
            let mid = stroke.num("x1");
            els.iter()
                .filter(|e| e.class() == "band-callout")
                .find(|e| {
                    let t = text_box(e);
                    (near(t.0, mid + 2.0) || near(t.2, mid - 2.0)) && near(t.1, stroke.num("y1"))
                })
                .map(|e| e.text.clone())
        })
        .collect()
}

/// Draw `boards` and check the picture's geometry; returns its elements.
#[track_caller]
fn drawn(boards: &[&str], svg: &std::path::Path) -> Vec<Element> {
    let mut args = vec!["stats"];
    args.extend_from_slice(boards);
    args.extend_from_slice(&["--svg", svg.to_str().unwrap()]);
    pair(args).code(0);
    let text = fs::read_to_string(svg).unwrap();
    let els = elements(&text);
    let root = els.iter().find(|e| e.name == "svg").expect("an svg root");
    let (width, height) = (root.num("width"), root.num("height"));
    assert_eq!(
        root.attr("viewBox"),
        format!("0 0 {} {}", root.attr("width"), root.attr("height"))
    );
    assert!(
        root.attr("font-family").contains("monospace"),
        "{:?}",
        root.attrs
    );
    let labels: Vec<(&Element, Extent)> = els
        .iter()
        .filter(|e| e.name == "text")
        .map(|e| (e, text_box(e)))
        .collect();
    assert!(labels.len() > 20, "{text}");
    for (e, b) in &labels {
        assert!(
            b.0 >= 0.0 && b.1 >= 0.0 && b.2 <= width && b.3 <= height,
            "the label {:?} ({b:?}) leaves the canvas {width}×{height}",
            e.text
        );
    }
    for (i, (a, ba)) in labels.iter().enumerate() {
        for (c, bc) in &labels[i + 1..] {
            let apart = ba.2 <= bc.0 || bc.2 <= ba.0 || ba.3 <= bc.1 || bc.3 <= ba.1;
            assert!(
                apart,
                "the labels {:?} {ba:?} and {:?} {bc:?} overlap",
                a.text, c.text
            );
        }
    }
    // Shapes stay on the canvas too.
    for e in els.iter().filter(|e| e.name == "rect") {
        let (x, y, w, h) = (e.num("x"), e.num("y"), e.num("width"), e.num("height"));
        assert!(
            x >= 0.0 && y >= 0.0 && x + w <= width + 0.01 && y + h <= height + 0.01,
            "{e:?}"
        );
    }
    // The marks of objections, decisions and dissents stay on the canvas and no label covers
    // one; the marks of two objections (an objection's triangle, line and bar are one) or of two
    // decisions never overlap.
    let marks: Vec<(&Element, Extent)> = els
        .iter()
        .filter(|e| MARKS.contains(&e.class()))
        .map(|e| (e, mark_box(e)))
        .collect();
    for (m, b) in &marks {
        assert!(
            b.0 >= 0.0 && b.1 >= 0.0 && b.2 <= width && b.3 <= height,
            "the mark {m:?} ({b:?}) leaves the canvas {width}×{height}"
        );
        for (e, t) in &labels {
            assert!(
                !overlap(*b, *t),
                "the label {:?} {t:?} covers the mark {m:?} {b:?}",
                e.text
            );
        }
    }
    let item = |e: &Element| match e.class() {
        "decision" => format!("{e:p}"),
        _ => format!("{}@{:.1}", e.attr("data-id"), centre(e).1),
    };
    let shapes: Vec<&(&Element, Extent)> = marks
        .iter()
        .filter(|(e, _)| e.class() != "dissent")
        .collect();
    for (i, (a, ba)) in shapes.iter().enumerate() {
        for (c, bc) in &shapes[i + 1..] {
            assert!(
                item(a) == item(c) || !overlap(*ba, *bc),
                "the marks {a:?} and {c:?} overlap"
            );
        }
    }
    // A stroke from a label above the bands down to its band crosses no text, and a name in a
    // band fits in it.
    for l in els.iter().filter(|e| e.class() == "callout") {
        let (x, y0, y1) = (l.num("x1"), l.num("y1"), l.num("y2"));
        for (e, t) in &labels {
            assert!(
                !(t.0 < x && x < t.2 && t.1 < y1 && t.3 > y0),
                "the stroke {l:?} crosses the label {:?} {t:?}",
                e.text
            );
        }
    }
    let band_rects: Vec<&Element> = els.iter().filter(|e| e.class() == "band").collect();
    for (e, t) in labels.iter().filter(|(e, _)| e.class() == "band-label") {
        assert!(
            band_rects.iter().any(|b| overlap(*t, mark_box(b))
                && t.0 >= b.num("x")
                && t.2 <= b.num("x") + b.num("width")),
            "the band label {:?} {t:?} does not fit in its band",
            e.text
        );
    }
    // One band per visit of a phase, in order, for each board together.
    let bands: Vec<String> = els
        .iter()
        .filter(|e| e.class() == "band")
        .map(|e| e.attr("data-phase").to_string())
        .collect();
    let want: Vec<String> = boards.iter().flat_map(|b| visits(b)).collect();
    assert_eq!(bands, want, "one band per visit of a phase");
    // A time axis with ticks for each board, labelled.
    let ticks = els.iter().filter(|e| e.class() == "tick").count();
    assert!(ticks >= 4 * boards.len(), "{ticks} ticks");
    let tick_labels = labels
        .iter()
        .filter(|(e, _)| e.class() == "tick-label")
        .count();
    assert!(tick_labels >= 3 * boards.len(), "{tick_labels} tick labels");
    // The legend names each mark and keys every phase drawn.
    let words: Vec<&str> = labels.iter().map(|(e, _)| e.text.as_str()).collect();
    for needed in [
        "Legend",
        "the agent's turn",
        "a write",
        "verdict: approved",
        "verdict: changes requested",
        "verdict: comment",
        "objection: blocking",
        "objection: advisory",
        "objection still to be settled",
        "the user approved a gate or a step",
        "the user waived a check",
        "a ruling, or a decision at the round cap",
        "dissent: blocking",
        "dissent: advisory",
        "dissent: none",
    ] {
        assert!(words.contains(&needed), "the legend lacks {needed:?}");
    }
    for (n, phase) in bands
        .iter()
        .fold(Vec::<&String>::new(), |mut seen, p| {
            if !seen.contains(&p) {
                seen.push(p);
            }
            seen
        })
        .iter()
        .enumerate()
    {
        let entry = format!("{} {phase}", n + 1);
        assert!(words.contains(&entry.as_str()), "the key lacks {entry:?}");
    }
    els
}

#[test]
fn the_timeline_has_a_legend_an_axis_one_band_per_visit_and_labels_that_never_collide() {
    let dir = tempfile::tempdir().unwrap();
    let long = long_board(dir.path());
    let svg = dir.path().join("timeline.svg");
    let els = drawn(&[&long], &svg);
    let bands: Vec<&str> = els
        .iter()
        .filter(|e| e.class() == "band")
        .map(|e| e.attr("data-phase"))
        .collect();
    // The registrations, the first verdicts and the usage report keep their phase: one band
    // each for DRAFT, every visit of REVIEWING_PLAN and PLAN_APPROVED.
    assert_eq!(
        bands,
        [
            "DRAFT",
            "PLANNING",
            "PLANNING_SUBMITTED",
            "REVIEWING_PLAN",
            "PLAN_CHANGES_REQUESTED",
            "PLANNING_SUBMITTED",
            "REVIEWING_PLAN",
            "PLAN_CHANGES_REQUESTED",
            "PLANNING_SUBMITTED",
            "REVIEWING_PLAN",
            "PLAN_APPROVED",
            "STOPPED"
        ]
    );
    let labels: Vec<&str> = els
        .iter()
        .filter(|e| e.name == "text")
        .map(|e| e.text.as_str())
        .collect();
    // The long id is shortened in its lane (whole in the tooltip); alice is written whole.
    assert!(labels.contains(&"alice"));
    assert!(!labels.contains(&LONG_ID));
    assert!(
        labels
            .iter()
            .any(|l| l.ends_with('…') && LONG_ID.starts_with(l.trim_end_matches('…'))),
        "{labels:?}"
    );
    assert!(els.iter().any(|e| e.name == "title" && e.text == LONG_ID));
    // The path is shortened in the middle: it keeps its file name.
    assert!(
        labels.iter().any(
            |l| l.contains('…') && l.contains("for-the-timeline.md · now STOPPED · elapsed 1h")
        ),
        "{labels:?}"
    );
    // Ticks at round times since the first write, to the hour's end.
    for tick in ["0", "10m", "30m", "1h"] {
        assert!(labels.contains(&tick), "no tick {tick}: {labels:?}");
    }
    // Each band is named where its name fits: in the band, else above it beside a stroke down
    // to its middle; else by its number. The phases of a second or two are named above, in
    // rows where the strokes of their neighbours pass clear of them; the first minute's DRAFT,
    // whose name above would take their room, keeps its number, in its band.
    assert_eq!(
        band_names(&els),
        [
            Some("1"),
            Some("PLANNING"),
            Some("PLANNING_SUBMITTED"),
            Some("REVIEWING_PLAN"),
            Some("PLAN_CHANGES_REQUESTED"),
            Some("PLANNING_SUBMITTED"),
            Some("REVIEWING_PLAN"),
            Some("PLAN_CHANGES_REQUESTED"),
            Some("PLANNING_SUBMITTED"),
            Some("REVIEWING_PLAN"),
            Some("PLAN_APPROVED"),
            Some("STOPPED"),
        ]
        .map(|n| n.map(String::from)),
        "{labels:?}"
    );
    assert_eq!(
        els.iter().filter(|e| e.class() == "callout").count(),
        els.iter().filter(|e| e.class() == "band-callout").count()
    );
    // Every verdict is a mark: three approvals of alice's, a request for changes, a comment and
    // an approval of the long id's.
    let verdicts = els.iter().filter(|e| e.class() == "verdict").count();
    assert_eq!(verdicts, 6);
}

#[test]
fn the_timeline_draws_milliseconds_and_several_boards_without_collisions() {
    let dir = tempfile::tempdir().unwrap();
    let quick = quick_board(dir.path());
    let long = long_board(dir.path());
    let svg = dir.path().join("timeline.svg");
    let els = drawn(&[&quick], &svg);
    let band = |phase: &str| {
        els.iter()
            .find(|e| e.class() == "band" && e.attr("data-phase") == phase)
            .unwrap_or_else(|| panic!("no band of {phase}"))
            .num("width")
    };
    // PLANNING_SUBMITTED lasted 550 ms and REVIEWING_PLAN 1200 ms: drawn to the millisecond.
    let ratio = band("REVIEWING_PLAN") / band("PLANNING_SUBMITTED");
    assert!((ratio - 1200.0 / 550.0).abs() < 0.02, "{ratio}");
    let labels: Vec<&str> = els
        .iter()
        .filter(|e| e.name == "text")
        .map(|e| e.text.as_str())
        .collect();
    assert!(
        labels.iter().any(|l| l.ends_with("ms")),
        "ticks under a second: {labels:?}"
    );
    assert!(
        labels.iter().any(|l| l.ends_with("elapsed 2.5s")),
        "{labels:?}"
    );
    // Two boards on one axis, one legend and key for both.
    let els = drawn(&[&quick, &long], &svg);
    let legends = els
        .iter()
        .filter(|e| e.name == "text" && e.text == "Legend")
        .count();
    assert_eq!(legends, 1);
    let stats: Value = pair(["stats", &quick, &long, "--json"]).json();
    assert_eq!(stats["boards"].as_array().unwrap().len(), 2);
}

/// An analysis gate of two rounds and a plan gate with a dissent stage, a minute or more
/// between the writes: alice raises BLK-1 and BLK-2; the doer resolves BLK-1 (alice accepts it
/// later) and challenges BLK-2, which the user overrules; alice raises REG-1 against BLK-1's
/// fix, the round cap sends the gate to a decision, and the user accepts REG-1 as a risk; the
/// plan passes, dana raises ADV-1 (left open) and dissents advisory. The gates the user
/// approved are recorded, the board stops at 40 minutes.
fn ledger_board(dir: &std::path::Path) -> String {
    let b = dir.join("ledger.md").to_str().unwrap().to_string();
    let p = b.as_str();
    let object = |time: &str, who: &str, severity: &str, title: &str, extra: &[&str]| {
        let mut args = vec![
            "object",
            p,
            "--agent",
            who,
            "--severity",
            severity,
            "--anchor",
            "## Goal",
            "--title",
            title,
            "--evidence",
            "e",
            "--fix",
            "f",
        ];
        args.extend_from_slice(extra);
        at(&t(time), &args);
    };
    let verdict = |time: &str, who: &str, v: &str, rev: &str, ids: &[&str]| {
        let joined = ids.join(",");
        let mut args = vec![
            "verdict",
            p,
            v,
            "--revision",
            rev,
            "--note",
            "n",
            "--agent",
            who,
        ];
        if !ids.is_empty() {
            args.extend(["--objections", &joined]);
        }
        at(&t(time), &args);
    };
    let doer = |time: &str, args: &[&str]| {
        let mut all = vec![args[0], p];
        all.extend_from_slice(&args[1..]);
        all.extend(["--agent", "doer"]);
        at(&t(time), &all);
    };
    at(
        &t("00:00:00"),
        &[
            "init",
            p,
            "--reviewers",
            "alice,bob",
            "--goal",
            "g",
            "--work-type",
            "debugging",
            "--max-rounds",
            "2",
            "--dissent",
            "plan",
        ],
    );
    for (time, who) in [
        ("00:00:05", "alice"),
        ("00:00:06", "bob"),
        ("00:00:07", "dana"),
    ] {
        at(&t(time), &["register", p, "--agent", who]);
    }
    doer("00:01:00", &["advance", "ANALYZING", "--user-approved"]);
    doer(
        "00:02:00",
        &["submit", "analysis", "--note", "v1", "--user-approved"],
    );
    at(&t("00:02:30"), &["claim", p, "--agent", "alice"]);
    object("00:03:00", "alice", "blocking", "Zero is not covered", &[]);
    object("00:03:30", "alice", "blocking", "Callers add one", &[]);
    verdict("00:04:00", "bob", "APPROVED", "1", &[]);
    verdict(
        "00:05:00",
        "alice",
        "CHANGES_REQUESTED",
        "1",
        &["BLK-1", "BLK-2"],
    );
    doer(
        "00:10:00",
        &[
            "resolve",
            "BLK-1",
            "--resolution",
            "fixed",
            "--surfaces",
            "analysis",
        ],
    );
    doer("00:11:00", &["challenge", "BLK-2", "--grounds", "already"]);
    doer(
        "00:12:00",
        &[
            "rule",
            "BLK-2",
            "overrule",
            "--user-approved",
            "--reason",
            "the user agrees",
        ],
    );
    doer(
        "00:15:00",
        &["submit", "analysis", "--note", "v2", "--user-approved"],
    );
    verdict("00:16:00", "bob", "APPROVED", "2", &[]);
    at(&t("00:17:00"), &["accept", p, "BLK-1", "--agent", "alice"]);
    object(
        "00:18:00",
        "alice",
        "blocking",
        "Pager says 1 of 0",
        &["--regression-of", "BLK-1"],
    );
    verdict("00:19:00", "alice", "CHANGES_REQUESTED", "2", &["REG-1"]);
    doer(
        "00:25:00",
        &[
            "decide",
            "accept",
            "--user-approved",
            "--reason",
            "risk taken",
        ],
    );
    doer("00:26:00", &["advance", "PLANNING", "--user-approved"]);
    doer(
        "00:27:00",
        &["submit", "plan", "--note", "p1", "--user-approved"],
    );
    verdict("00:28:00", "bob", "APPROVED", "1", &[]);
    verdict("00:29:00", "alice", "APPROVED", "1", &[]);
    object("00:31:00", "dana", "advisory", "Backoff is linear", &[]);
    at(
        &t("00:32:00"),
        &[
            "dissent",
            p,
            "advisory",
            "--revision",
            "1",
            "--note",
            "as read",
            "--agent",
            "dana",
        ],
    );
    doer("00:40:00", &["stop", "--reason", "done"]);
    b
}

#[test]
fn an_objection_accepted_as_a_risk_is_settled_by_the_decision_not_by_the_need_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let board = ledger_board(dir.path());
    let stats = pair(["stats", &board, "--json"]).json();
    let list = stats["boards"][0]["objections"]["list"].as_array().unwrap();
    let settled: Vec<(&str, &str, &str)> = list
        .iter()
        .map(|o| {
            (
                o["id"].as_str().unwrap(),
                o["raised"].as_str().unwrap(),
                o["settled"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    // REG-1 became a decision to make at 00:19 (`Decision needed` names it); the user decided at
    // 00:25.
    assert_eq!(
        settled,
        [
            ("BLK-1", t("00:03:00").as_str(), t("00:17:00").as_str()),
            ("BLK-2", &t("00:03:30"), &t("00:12:00")),
            ("REG-1", &t("00:18:00"), &t("00:25:00")),
            ("ADV-1", &t("00:31:00"), "-"),
        ]
    );
}

/// Where a time falls on a one-board picture whose last write entered its last phase: its
/// bands run from its first write to that last one.
fn x_at(els: &[Element], start: &str, end: &str, time: &str) -> f64 {
    let bands: Vec<&Element> = els.iter().filter(|e| e.class() == "band").collect();
    let (x0, x1) = (bands[0].num("x"), bands.last().unwrap().num("x"));
    let ts = |s: &str| pair::board::frontmatter::Timestamp::parse(s).expect("a time");
    let (start, end, time) = (ts(start), ts(end), ts(time));
    x0 + start.millis_until(time) as f64 / start.millis_until(end) as f64 * (x1 - x0)
}

/// The lane a height is in: the name in the margin of the lane that starts above it.
fn lane_at(els: &[Element], y: f64) -> String {
    els.iter()
        .filter(|e| e.class().starts_with("gutter") && e.text != "phase")
        // A lane starts 16 above its name's baseline (its first row is 24 high, the name 4
        // under its middle).
        .filter(|e| e.num("y") - 16.0 <= y)
        .max_by(|a, b| a.num("y").total_cmp(&b.num("y")))
        .map(|e| e.text.clone())
        .unwrap_or_default()
}

/// The objections, decisions and dissents of a picture as `(class, id or kind, lane, x)`.
fn marked(els: &[Element]) -> Vec<(String, String, String, f64)> {
    els.iter()
        .filter(|e| MARKS.contains(&e.class()) && e.class() != "objection-span")
        .map(|e| {
            let what = match e.class() {
                "decision" => e.attr("data-kind"),
                "dissent" => e.attr("data-outcome"),
                _ => e.attr("data-id"),
            };
            let (x, y) = centre(e);
            (e.class().to_string(), what.to_string(), lane_at(els, y), x)
        })
        .collect()
}

#[test]
fn the_timeline_marks_each_objection_decision_and_dissent_on_its_lane_at_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let board = ledger_board(dir.path());
    let svg = dir.path().join("timeline.svg");
    let els = drawn(&[&board], &svg);
    let x = |time: &str| x_at(&els, &t("00:00:00"), &t("00:40:00"), &t(time));
    let near = |a: f64, b: f64| (a - b).abs() < 0.02;
    let found = marked(&els);
    let one = |class: &str, what: &str| -> (String, f64) {
        let all: Vec<&(String, String, String, f64)> = found
            .iter()
            .filter(|(c, w, _, _)| c == class && w == what)
            .collect();
        assert_eq!(all.len(), 1, "{class} {what}: {found:?}");
        (all[0].2.clone(), all[0].3)
    };
    // Each objection on its raiser's lane, from the write that raised it to the one that
    // settled it: BLK-1 accepted by alice, BLK-2 overruled by the user (through the doer),
    // REG-1 accepted as a risk by the user's decision, ADV-1 still open.
    for (id, raised, settled) in [
        ("BLK-1", "00:03:00", Some("00:17:00")),
        ("BLK-2", "00:03:30", Some("00:12:00")),
        ("REG-1", "00:18:00", Some("00:25:00")),
        ("ADV-1", "00:31:00", None),
    ] {
        let raiser = if id == "ADV-1" { "dana" } else { "alice" };
        let (lane, at) = one("objection-raised", id);
        assert_eq!(lane, raiser, "{id}");
        assert!(
            near(at, x(raised)),
            "{id} raised at {at}, not {}",
            x(raised)
        );
        match settled {
            Some(s) => {
                let (lane, at) = one("objection-settled", id);
                assert_eq!(lane, raiser, "{id}");
                assert!(near(at, x(s)), "{id} settled at {at}, not {}", x(s));
            }
            None => assert!(
                !found
                    .iter()
                    .any(|(c, w, _, _)| c == "objection-settled" && w == id)
            ),
        }
        // Its line runs from raised to settled, dashed to the end while it is open.
        let span = els
            .iter()
            .find(|e| e.class() == "objection-span" && e.attr("data-id") == id)
            .unwrap();
        assert!(near(span.num("x1"), x(raised)), "{span:?}");
        assert!(
            near(span.num("x2"), x(settled.unwrap_or("00:40:00"))),
            "{span:?}"
        );
        assert_eq!(
            settled.is_none(),
            span.attrs.contains_key("stroke-dasharray")
        );
    }
    let states: Vec<(&str, &str)> = els
        .iter()
        .filter(|e| e.class() == "objection-settled")
        .map(|e| (e.attr("data-id"), e.attr("data-state")))
        .collect();
    assert_eq!(
        states,
        [
            ("BLK-1", "accepted"),
            ("BLK-2", "overruled"),
            ("REG-1", "risk_accepted")
        ]
    );
    // Labelled with its id and how it ended.
    let texts: Vec<&str> = els
        .iter()
        .filter(|e| e.class() == "objection-label")
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "BLK-1 accepted",
            "BLK-2 overruled",
            "REG-1 risk accepted",
            "ADV-1 open"
        ]
    );
    // Its tooltip tells its history.
    let tip = els
        .iter()
        .find(|e| e.name == "title" && e.text.starts_with("BLK-2: Callers add one"))
        .expect("BLK-2's tooltip");
    for step in [
        "blocking objection on the analysis (round 1) raised by alice; now overruled",
        "Challenge BLK-2 by doer at 2026-01-01T00:11:00Z",
        "Ruling BLK-2 — overruled by doer at 2026-01-01T00:12:00Z",
    ] {
        assert!(tip.text.contains(step), "{step:?} in {:?}", tip.text);
    }
    // The user's decisions on the user's lane, one square per write that recorded any: the
    // gates approved, the ruling on BLK-2 and the decision at the cap.
    let decisions: Vec<(&str, String, f64)> = found
        .iter()
        .filter(|(c, _, _, _)| c == "decision")
        .map(|(_, w, lane, at)| (w.as_str(), lane.clone(), *at))
        .collect();
    let want = [
        ("approval", "00:01:00"),
        ("approval", "00:02:00"),
        ("ruling", "00:12:00"),
        ("approval", "00:15:00"),
        ("ruling", "00:25:00"),
        ("approval", "00:27:00"),
    ];
    assert_eq!(decisions.len(), want.len(), "{decisions:?}");
    for ((kind, lane, at), (k, time)) in decisions.iter().zip(want) {
        assert_eq!((*kind, lane.as_str()), (k, "the user"), "{decisions:?}");
        assert!(near(*at, x(time)), "{k} at {at}, not {}", x(time));
    }
    let texts: Vec<&str> = els
        .iter()
        .filter(|e| e.class() == "decision-label")
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(texts, ["overruled BLK-2", "analysis: accept"]);
    let tip = els
        .iter()
        .find(|e| e.name == "title" && e.text.contains("Decision — analysis — accept"))
        .expect("the decision's tooltip");
    assert!(
        tip.text
            .starts_with("the user's decision, recorded by doer at 2026-01-01T00:25:00Z"),
        "{:?}",
        tip.text
    );
    assert!(
        tip.text
            .contains("User's ruling — REG-1, decision on the analysis")
    );
    assert!(
        tip.text
            .contains("Gate approved — AWAITING_DECISION → ANALYSIS_APPROVED")
    );
    // dana's dissent on her lane, in place of the dot of its write.
    let (lane, dx) = one("dissent", "advisory");
    assert_eq!(lane, "dana");
    assert!(near(dx, x("00:32:00")), "{dx}");
    assert!(!els.iter().any(|e| e.class() == "write"
        && near(e.num("cx"), x("00:32:00"))
        && lane_at(&els, e.num("cy")) == "dana"));
    // The user's lane comes first; the objections take rows under alice's first row.
    let lanes: Vec<&str> = els
        .iter()
        .filter(|e| e.class().starts_with("gutter") && e.text != "phase")
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(lanes, ["the user", "alice", "bob", "dana", "doer"]);
}

/// A board that starts half an hour after [`long_board`] and ends at 00:45.
fn late_board(dir: &std::path::Path) -> String {
    let b = dir.join("late.md").to_str().unwrap().to_string();
    let p = b.as_str();
    at(
        &t("00:30:00"),
        &["init", p, "--reviewers", "bob", "--goal", "g"],
    );
    at(&t("00:30:10"), &["register", p, "--agent", "bob"]);
    at(
        &t("00:31:00"),
        &[
            "advance",
            p,
            "PLANNING",
            "--agent",
            "doer",
            "--user-approved",
        ],
    );
    at(
        &t("00:33:00"),
        &[
            "submit",
            p,
            "plan",
            "--note",
            "v1",
            "--agent",
            "doer",
            "--user-approved",
        ],
    );
    at(
        &t("00:40:00"),
        &[
            "verdict",
            p,
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
            "--agent",
            "bob",
        ],
    );
    at(
        &t("00:45:00"),
        &["stop", p, "--agent", "doer", "--reason", "done"],
    );
    b
}

#[test]
fn boards_drawn_together_share_one_time_axis() {
    let dir = tempfile::tempdir().unwrap();
    let long = long_board(dir.path());
    let late = late_board(dir.path());
    let svg = dir.path().join("timeline.svg");
    let els = drawn(&[&long, &late], &svg);
    let near = |a: f64, b: f64| (a - b).abs() < 0.02;
    // The bands of each board, in order, with where they start and end.
    let bands: Vec<(&str, f64, f64, f64)> = els
        .iter()
        .filter(|e| e.class() == "band")
        .map(|e| {
            (
                e.attr("data-phase"),
                e.num("x"),
                e.num("x") + e.num("width"),
                e.num("y"),
            )
        })
        .collect();
    type Band<'a> = &'a (&'a str, f64, f64, f64);
    let (first, second): (Vec<Band>, Vec<Band>) = bands.iter().partition(|b| b.3 == bands[0].3);
    // The long board spans the whole axis, an hour; the late one starts at its half and ends at
    // three quarters.
    let (x0, x1) = (first[0].1, first.last().unwrap().1);
    let at = |minutes: f64| x0 + minutes / 60.0 * (x1 - x0);
    assert!(near(second[0].1, at(30.0)), "{second:?}");
    assert!(near(second.last().unwrap().1, at(45.0)), "{second:?}");
    // The same time is at the same place on both: the long board's second plan submission and
    // the late board's first write, both at 00:30:00.
    let resubmitted = first
        .iter()
        .filter(|b| b.0 == "PLANNING_SUBMITTED")
        .nth(1)
        .unwrap();
    assert!(
        near(resubmitted.1, second[0].1),
        "{resubmitted:?} {second:?}"
    );
    let approved = second.iter().find(|b| b.0 == "PLAN_APPROVED").unwrap();
    assert!(near(approved.1, at(40.0)), "{approved:?}");
    // Both axes have the same ticks, at the same places, and say whose first write they count
    // from.
    let ticks = |top: f64, bottom: f64| -> Vec<(String, f64)> {
        els.iter()
            .filter(|e| e.class() == "tick-label" && e.num("y") > top && e.num("y") < bottom)
            .map(|e| (e.text.clone(), e.num("x")))
            .collect()
    };
    let (y1, y2) = (first[0].3, second[0].3);
    let (a, b) = (ticks(y1, y2), ticks(y2, f64::MAX));
    assert!(a.len() >= 4 && a.iter().any(|(l, _)| l == "1h"), "{a:?}");
    assert_eq!(a, b);
    let captions: Vec<&str> = els
        .iter()
        .filter(|e| e.class() == "caption")
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(captions.len(), 2);
    for c in captions {
        assert!(
            c.starts_with("ticks: time since the boards' first write (2026-01-01T00:00:00Z)"),
            "{c}"
        );
    }
}

#[test]
fn the_demos_timeline_marks_its_objections_decisions_and_dissent_at_the_times_of_their_writes() {
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().join("demo");
    let keep_s = keep.to_str().unwrap();
    pair(["demo", "--keep", keep_s, "--timeout", "240", "--json"]).code(0);
    let board = keep.join("task.md").to_str().unwrap().to_string();
    let svg = dir.path().join("timeline.svg");
    let els = drawn(&[&board], &svg);
    // The writes the marks stand for, to the millisecond, from the journal.
    let log = pair(["log", &board, "--json"]).json();
    let records = log["records"].as_array().unwrap().clone();
    let time = |r: &Value| r["at"].as_str().unwrap().to_string();
    let (start, end) = (time(&records[0]), time(records.last().unwrap()));
    let x = |at: &str| x_at(&els, &start, &end, at);
    let writes = |who: &str, command: &str| -> Vec<String> {
        records
            .iter()
            .filter(|r| r["by"] == who && r["command"] == command)
            .map(time)
            .collect()
    };
    let near = |a: f64, b: f64| (a - b).abs() < 0.02;
    let found = marked(&els);
    let at_of = |class: &str, what: &str| -> (String, f64) {
        let f = found
            .iter()
            .find(|(c, w, _, _)| c == class && w == what)
            .unwrap_or_else(|| panic!("no {class} {what}: {found:?}"));
        (f.2.clone(), f.3)
    };
    // alice raised BLK-1 and BLK-2 in the plan's first round, REG-1 in its second, writes a few
    // milliseconds apart; BLK-1 was settled by her acceptance, BLK-2 by the user's ruling, REG-1
    // by the user's decision at the cap; dana raised ADV-1, left open.
    let objects = writes("alice", "object");
    let expected = [
        (
            "BLK-1",
            "alice",
            &objects[0],
            writes("alice", "accept").first().cloned(),
        ),
        (
            "BLK-2",
            "alice",
            &objects[1],
            writes("doer", "rule").first().cloned(),
        ),
        (
            "REG-1",
            "alice",
            &objects[2],
            writes("doer", "decide").first().cloned(),
        ),
        ("ADV-1", "dana", &writes("dana", "object")[0], None),
    ];
    let mut raised_xs = Vec::new();
    for (id, raiser, raised, settled) in &expected {
        let (lane, rx) = at_of("objection-raised", id);
        assert_eq!(&lane, raiser, "{id}");
        assert!(
            near(rx, x(raised)),
            "{id} raised at {rx}, its write at {}",
            x(raised)
        );
        raised_xs.push(rx);
        match settled {
            Some(s) => {
                let (lane, sx) = at_of("objection-settled", id);
                assert_eq!(&lane, raiser, "{id}");
                assert!(
                    near(sx, x(s)),
                    "{id} settled at {sx}, its write at {}",
                    x(s)
                );
                assert!(rx < sx, "{id}");
            }
            None => assert!(
                !found
                    .iter()
                    .any(|(c, w, _, _)| c == "objection-settled" && w == id)
            ),
        }
    }
    assert!(raised_xs.windows(2).all(|w| w[0] < w[1]), "{raised_xs:?}");
    // dana's advisory dissent at its write.
    let (lane, dx) = at_of("dissent", "advisory");
    assert_eq!(lane, "dana");
    assert!(near(dx, x(&writes("dana", "dissent")[0])));
    // The user's decisions: each gate the user approved at the write that moved the phase past
    // it, the ruling on BLK-2 and the decision at the cap, on the user's lane.
    let body = std::fs::read_to_string(&board).unwrap();
    let mut want: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        let Some(rest) = line.strip_prefix("### Gate approved — ") else {
            continue;
        };
        let (from, to) = rest.split(" — ").next().unwrap().split_once(" → ").unwrap();
        let r = records
            .iter()
            .find(|r| r["from"] == from && r["to"] == to)
            .unwrap();
        let kind = if r["command"] == "decide" {
            "ruling"
        } else {
            "approval"
        };
        want.push((kind.to_string(), time(r)));
    }
    want.push(("ruling".to_string(), writes("doer", "rule")[0].clone()));
    want.sort_by(|a, b| a.1.cmp(&b.1));
    let decisions: Vec<(String, String, f64)> = found
        .iter()
        .filter(|(c, _, _, _)| c == "decision")
        .map(|(_, w, lane, at)| (w.clone(), lane.clone(), *at))
        .collect();
    assert_eq!(decisions.len(), want.len(), "{decisions:?} {want:?}");
    // Each decision is drawn once, on the user's lane, at its own write: matched by kind and
    // place, whatever order the drawing lists them in (two writes may be drawn close).
    let mut unmatched: Vec<&(String, String, f64)> = decisions.iter().collect();
    for (k, time) in &want {
        let at = unmatched
            .iter()
            .position(|(kind, lane, at)| kind == k && lane == "the user" && near(*at, x(time)))
            .unwrap_or_else(|| {
                panic!(
                    "no {k} on the user's lane at its write at {}: {decisions:?}",
                    x(time)
                )
            });
        unmatched.remove(at);
    }
}
