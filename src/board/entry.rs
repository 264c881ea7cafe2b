//! The body's entries, read back: each starts with a level-3 heading that `pair` wrote, naming
//! what it is, the counter, the agent, the verdict where there is one, and the UTC time
//! (SPEC §2.3), e.g. `### Plan revision 2 — doer — 2026-05-01T10:00:00Z`.
//!
//! An entry heading is recognised by its form — parts separated by ` — ` and a timestamp last —
//! not by its level alone, so a `###` heading that a note wrote on an older blackboard is part of
//! the entry it sits in, not an entry of its own. Notes appended now cannot produce level-3
//! headings at all ([`crate::board::document::demote_note_headings`]).

use serde::Serialize;

use crate::board::document::{Document, LineKind, lines};
use crate::board::frontmatter::{Target, Timestamp, Verdict};

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A submitted artifact (analysis, plan, red test, code or follow-up round).
    Submission,
    /// A reviewer's verdict on one counter.
    Review,
    /// A reviewer's correction of its own review, made after the review's round closed
    /// (`pair correct`): shown beside that review.
    Correction,
    /// Anything else `pair` writes: notes, gate records, block/unblock/stop, audit steps.
    Record,
}

/// A parsed entry heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub kind: Kind,
    /// For a record, its first part (`Note`, `Gate approved`, …); for the others, what the
    /// heading names (`Plan revision 2`, `Code review — round 3`).
    pub label: String,
    pub target: Option<Target>,
    /// A code submission or review made during a follow-up (unstaged diff) round.
    pub followup: bool,
    pub counter: Option<u32>,
    pub agent: Option<String>,
    pub verdict: Option<Verdict>,
    pub time: Timestamp,
}

/// One entry of the body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The level-2 section it is in.
    pub section: String,
    /// The 1-based file line of its heading.
    pub line: u32,
    /// The heading text, without the `###`.
    pub heading: String,
    pub kind: Kind,
    pub label: String,
    pub target: Option<Target>,
    pub followup: bool,
    pub counter: Option<u32>,
    pub agent: Option<String>,
    pub verdict: Option<Verdict>,
    pub time: Timestamp,
    /// The entry's text: the lines after the heading up to the next entry or the end of the
    /// section, without the blank lines around them.
    pub text: String,
}

const SEP: &str = " — ";

/// The first word of a correction's heading.
const CORRECTION: &str = "Correction";

/// The heading of `agent`'s correction of its review of `target`'s `counter`, written at `time`.
pub fn correction_heading(target: Target, counter: u32, agent: &str, time: Timestamp) -> String {
    let (noun, unit) = target_noun(target);
    format!("{CORRECTION}{SEP}{noun} review{SEP}{unit} {counter}{SEP}{agent}{SEP}{time}")
}
const REPLACES: &str = " (replaces earlier verdict)";

/// The text of a level-3 ATX heading line (`### X` → `X`), if the line is one.
fn level3_text(line: &str) -> Option<&str> {
    let content = line.trim_end_matches(['\n', '\r']);
    let s = content.trim_start_matches(' ');
    if content.len() - s.len() > 3 {
        return None;
    }
    let rest = s.strip_prefix("###")?;
    if !(rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let rest = rest.trim();
    // An optional closing sequence of `#`s.
    let trimmed = rest.trim_end_matches('#');
    Some(if trimmed.len() != rest.len() && trimmed.ends_with(' ') {
        trimmed.trim_end()
    } else {
        rest
    })
}

/// Whether a line (outside a fence) is an entry heading.
pub fn is_entry_heading(line: &str) -> bool {
    level3_text(line).is_some_and(|t| parse_heading(t).is_some())
}

/// `{unit} {n}` → n.
fn numbered(s: &str, unit: &str) -> Option<u32> {
    let n = s.strip_prefix(unit)?.strip_prefix(' ')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// Parse the text of a level-3 heading as an entry heading: `None` when it is not one.
pub fn parse_heading(text: &str) -> Option<Heading> {
    let parts: Vec<&str> = text.split(SEP).collect();
    if parts.len() < 2 {
        return None;
    }
    let time = Timestamp::parse(parts[parts.len() - 1].trim())?;
    let first = parts[0];
    let agent_at = |i: usize| parts.get(i).map(|s| s.to_string());
    for t in Target::ALL {
        let (noun, unit) = target_noun(*t);
        // A submission: `Plan revision 2 — [resubmitted —] doer — T`, `Code review round 3 —
        // submitted (staged diff) — doer — T`, `Follow-up review round 4 — …`.
        let submitted = match t {
            Target::Code => numbered(first, "Code review round")
                .map(|n| (n, false))
                .or_else(|| numbered(first, "Follow-up review round").map(|n| (n, true))),
            _ => numbered(first, &format!("{noun} {unit}")).map(|n| (n, false)),
        };
        if let Some((n, followup)) = submitted
            && parts.len() >= 3
        {
            return Some(Heading {
                kind: Kind::Submission,
                label: first.to_string(),
                target: Some(*t),
                followup,
                counter: Some(n),
                agent: agent_at(parts.len() - 2),
                verdict: None,
                time,
            });
        }
        // A review: `Plan review — revision 2 — alice — APPROVED — T`.
        let followup = *t == Target::Code && first == "Follow-up review";
        if (first == format!("{noun} review") || followup)
            && parts.len() >= 5
            && let Some(n) = numbered(parts[1], unit)
        {
            let verdict = parts[3].strip_suffix(REPLACES).unwrap_or(parts[3]);
            return Some(Heading {
                kind: Kind::Review,
                label: format!("{first}{SEP}{}", parts[1]),
                target: Some(*t),
                followup,
                counter: Some(n),
                agent: agent_at(2),
                verdict: verdict.parse().ok(),
                time,
            });
        }
    }
    // A correction: `Correction — Plan review — revision 2 — alice — T`.
    if first == CORRECTION && parts.len() >= 5 {
        for t in Target::ALL {
            let (noun, unit) = target_noun(*t);
            if parts[1] == format!("{noun} review")
                && let Some(n) = numbered(parts[2], unit)
            {
                return Some(Heading {
                    kind: Kind::Correction,
                    label: format!("{first}{SEP}{}{SEP}{}", parts[1], parts[2]),
                    target: Some(*t),
                    followup: false,
                    counter: Some(n),
                    agent: agent_at(3),
                    verdict: None,
                    time,
                });
            }
        }
    }
    Some(Heading {
        kind: Kind::Record,
        label: first.to_string(),
        target: None,
        followup: false,
        counter: None,
        agent: (parts.len() >= 3).then(|| parts[parts.len() - 2].to_string()),
        verdict: None,
        time,
    })
}

/// An entry heading found in the body, without its text (what checks need).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The level-2 section it is in, and that section's heading line.
    pub section: String,
    pub section_line: u32,
    /// The 1-based file line of the entry's heading.
    pub line: u32,
    pub heading: Heading,
}

/// Every entry heading of the body, in one pass over its lines (an entry heading before the
/// first section belongs to none and is not listed).
pub fn heads(doc: &Document) -> Vec<Head> {
    let mut out = Vec::new();
    let mut section: Option<(String, u32)> = None;
    for (_, line, n, level) in doc.heading_lines() {
        match level {
            1 => section = None,
            2 => section = Some((heading_text(line), n)),
            3 => {
                if let (Some((name, at)), Some(h)) =
                    (&section, level3_text(line).and_then(parse_heading))
                {
                    out.push(Head {
                        section: name.clone(),
                        section_line: *at,
                        line: n,
                        heading: h,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// The text of a level-1/2 heading line, as [`Document::sections`] names sections.
fn heading_text(line: &str) -> String {
    crate::board::document::Section::name_of(line)
}

/// Every entry of the body, in order, with the section each is in.
pub fn entries(doc: &Document) -> Vec<Entry> {
    let sections = doc.sections();
    let mut out: Vec<Entry> = Vec::new();
    // The byte offset where the text of the entry being read ends (exclusive) is found when the
    // next entry or section starts.
    let mut open: Option<(usize, usize)> = None; // (index in out, text start offset)
    let close = |out: &mut Vec<Entry>, open: &mut Option<(usize, usize)>, end: usize| {
        if let Some((i, start)) = open.take() {
            out[i].text = trim_blank_lines(&doc.body[start..end.max(start)]);
        }
    };
    for (i, (offset, line, kind)) in lines(&doc.body).enumerate() {
        match kind {
            LineKind::Heading(l) if l <= 2 => close(&mut out, &mut open, offset),
            LineKind::Heading(3) => {
                let Some(h) = level3_text(line).and_then(parse_heading) else {
                    continue;
                };
                let Some(section) = sections
                    .iter()
                    .find(|s| s.start <= offset && offset < s.end)
                else {
                    continue;
                };
                close(&mut out, &mut open, offset);
                out.push(Entry {
                    section: section.name.clone(),
                    line: doc.body_first_line + i as u32,
                    heading: level3_text(line).unwrap_or_default().to_string(),
                    kind: h.kind,
                    label: h.label,
                    target: h.target,
                    followup: h.followup,
                    counter: h.counter,
                    agent: h.agent,
                    verdict: h.verdict,
                    time: h.time,
                    text: String::new(),
                });
                open = Some((out.len() - 1, offset + line.len()));
            }
            _ => {}
        }
    }
    close(&mut out, &mut open, doc.body.len());
    out
}

/// Text without its leading and trailing blank lines, with `\n` line endings.
fn trim_blank_lines(text: &str) -> String {
    let text = crate::board::document::normalize_newlines(text);
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].join("\n"),
        _ => String::new(),
    }
}

impl Entry {
    /// The entry as Markdown, as the body has it.
    pub fn markdown(&self) -> String {
        if self.text.is_empty() {
            format!("### {}\n", self.heading)
        } else {
            format!("### {}\n\n{}\n", self.heading, self.text)
        }
    }

    /// Whether this is the submission of a target's counter.
    pub fn submits(&self, target: Target, counter: u32) -> bool {
        self.kind == Kind::Submission
            && self.target == Some(target)
            && self.counter == Some(counter)
    }

    /// Whether this is a review of a target's counter.
    pub fn reviews(&self, target: Target, counter: u32) -> bool {
        self.kind == Kind::Review && self.target == Some(target) && self.counter == Some(counter)
    }

    /// Whether this is a correction of `review` (the same reviewer, target and counter).
    pub fn corrects(&self, review: &Entry) -> bool {
        self.kind == Kind::Correction
            && review.kind == Kind::Review
            && self.target == review.target
            && self.counter == review.counter
            && self.agent == review.agent
    }
}

/// The corrections of `review` among `entries`, in body order.
pub fn corrections_of<'a>(entries: &'a [Entry], review: &Entry) -> Vec<&'a Entry> {
    entries.iter().filter(|e| e.corrects(review)).collect()
}

/// Reviews in body order, each followed by its reviewer's corrections after the last review
/// that reviewer gave of that counter: what `show` and `brief` print, a correction beside the
/// review it corrects.
pub fn with_corrections<'a>(all: &'a [Entry], reviews: &[&'a Entry]) -> Vec<&'a Entry> {
    let mut out = Vec::new();
    for (i, r) in reviews.iter().enumerate() {
        out.push(*r);
        let later = reviews[i + 1..]
            .iter()
            .any(|x| x.agent == r.agent && x.target == r.target && x.counter == r.counter);
        if !later {
            out.extend(corrections_of(all, r));
        }
    }
    out
}

/// The entries of one round of a target: the submission of `counter` (the latest, if it was
/// written twice) and the reviews of that counter, in body order.
pub fn round(entries: &[Entry], target: Target, counter: u32) -> (Option<&Entry>, Vec<&Entry>) {
    let submissions = artifact_section(target, false);
    let review_section = artifact_section(target, true);
    let artifact = entries
        .iter()
        .rev()
        .find(|e| e.section == submissions && e.submits(target, counter));
    let reviews = entries
        .iter()
        .filter(|e| e.section == review_section && e.reviews(target, counter))
        .collect();
    (artifact, reviews)
}

/// The entries about objection `id` raised on `gate`: its raising (with the evidence and the
/// suggested fix) and every later move recorded on it (resolution, challenge, ruling,
/// acceptance, reopening, withdrawal), in body order. Each is a record of the gate's review
/// section whose heading starts `WORD ID — `.
pub fn of_objection<'a>(entries: &'a [Entry], gate: Target, id: &str) -> Vec<&'a Entry> {
    let section = artifact_section(gate, true);
    entries
        .iter()
        .filter(|e| e.kind == Kind::Record && e.section == section)
        .filter(|e| {
            let mut words = e.label.split(' ');
            words.next().is_some() && words.next() == Some(id) && words.next().is_none()
        })
        .collect()
}

/// The section of `sections` a mistyped or guessed name most likely means: the same name in
/// another case or within a few edits; else the section that holds the entries it names
/// ("Analysis Reviews" are in "Root Cause Analysis", "Code reviews" in "Code Review Rounds");
/// else the one sharing the most words with it. `None` when nothing is near.
pub fn nearest_section<'a>(name: &str, sections: &[&'a str]) -> Option<&'a str> {
    if let Some(s) = crate::board::suggest::closest(name, sections.iter().copied()) {
        return Some(s);
    }
    let lower = name.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // A word of the name, in the singular or the plural.
    let names = |w: &str| {
        words
            .iter()
            .any(|x| *x == w || x.strip_suffix('s') == Some(w) || w.strip_suffix('s') == Some(x))
    };
    for t in Target::ALL {
        let (noun, _) = target_noun(*t);
        let noun_words: Vec<String> = noun.to_lowercase().split(' ').map(str::to_string).collect();
        let review = names("review") || names("verdict") || names("objection");
        if noun_words.iter().all(|w| names(w)) {
            let wanted = artifact_section(*t, review);
            if let Some(s) = sections.iter().find(|s| **s == wanted) {
                return Some(s);
            }
        }
    }
    let shared = |s: &str| s.to_lowercase().split(' ').filter(|w| names(w)).count();
    sections
        .iter()
        .map(|s| (shared(s), *s))
        .filter(|(n, _)| *n > 0)
        .max_by_key(|(n, _)| *n)
        .map(|(_, s)| s)
}

pub const DECISIONS: &str = "Decisions";

/// The first parts of the headings of the `## Decisions` records that hold a decision
/// ([`DECIDED`] says of which kind), and of a rework and its refusal.
pub const GATE_APPROVED: &str = "Gate approved";
pub const GATE_WAIVED: &str = "Gate waived";
pub const OBJECTIONS_WAIVED: &str = "Open objections waived";
pub const NO_REVIEW_APPROVED: &str = "No-review workflow approved";
pub const REVIEWER_ADDED: &str = "Required reviewer added";
pub const REVIEWER_REMOVED: &str = "Required reviewer removed";
pub const SLA_CHANGED: &str = "SLA changed";
pub const USERS_RULING: &str = "User's ruling";
pub const DECISION: &str = "Decision";
pub const REWORK: &str = "Rework";
pub const REWORK_REJECTED: &str = "Rework rejected";
/// The first part of a dissenter's answer's heading (in the gate's review section).
pub const DISSENT: &str = "Dissent";

/// What a decision recorded in `## Decisions` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Decided {
    /// The user approved a step: a human gate, working without reviewers, a required reviewer
    /// added or removed, a changed SLA.
    Approval,
    /// The user waived a check: a gate's predicate, or the open objections of a submission.
    Waiver,
    /// A ruling of the arbiter's: the user's on objections, a rework or a gate's decision, or
    /// the decision that ends a gate at its round cap (`pair decide`; the arbiter is the user,
    /// or the only required reviewer).
    Ruling,
}

/// The records of `## Decisions` that hold a decision, by the first part of their heading.
pub const DECIDED: &[(&str, Decided)] = &[
    (GATE_APPROVED, Decided::Approval),
    (NO_REVIEW_APPROVED, Decided::Approval),
    (REVIEWER_ADDED, Decided::Approval),
    (REVIEWER_REMOVED, Decided::Approval),
    (SLA_CHANGED, Decided::Approval),
    (GATE_WAIVED, Decided::Waiver),
    (OBJECTIONS_WAIVED, Decided::Waiver),
    (USERS_RULING, Decided::Ruling),
    (DECISION, Decided::Ruling),
];

/// The decision a record of `## Decisions` holds, if it holds one.
pub fn decided(e: &Entry) -> Option<Decided> {
    (e.section == DECISIONS && e.kind == Kind::Record)
        .then(|| DECIDED.iter().find(|(l, _)| *l == e.label))
        .flatten()
        .map(|(_, d)| *d)
}

/// Who wrote an entry: its heading's agent, or for an objection or a dissent (whose heading
/// puts the severity or the outcome where the others put the agent) the part before it.
pub fn writer(e: &Entry) -> Option<String> {
    if e.label.starts_with("Objection ") || e.label == DISSENT {
        let parts: Vec<&str> = e.heading.split(SEP).collect();
        parts
            .len()
            .checked_sub(3)
            .filter(|i| *i > 0)
            .map(|i| parts[i].to_string())
    } else {
        e.agent.clone()
    }
}

/// The parts of an entry's heading between its first part and its agent and time: `["plan
/// round 1"]` of `Objection BLK-1 — plan round 1 — alice — blocking — T`, `["DRAFT →
/// PLANNING"]` of `Gate approved — DRAFT → PLANNING — doer — T`.
pub fn middle(e: &Entry) -> Vec<&str> {
    let parts: Vec<&str> = e.heading.split(SEP).collect();
    let tail = if e.label.starts_with("Objection ") || e.label == DISSENT {
        3
    } else if e.agent.is_some() {
        2
    } else {
        1
    };
    parts
        .get(1..parts.len().saturating_sub(tail))
        .map(<[&str]>::to_vec)
        .unwrap_or_default()
}

/// The body section an artifact's submissions and reviews go to (SPEC §2.3).
pub fn artifact_section(target: Target, review: bool) -> &'static str {
    match (target, review) {
        (Target::Analysis, _) => "Root Cause Analysis",
        (Target::Plan, false) => "Plan Revisions",
        (Target::Plan, true) => "Plan Reviews",
        (Target::RedTest, _) => "Red Tests",
        (Target::Code, _) => "Code Review Rounds",
    }
}

pub fn target_noun(t: Target) -> (&'static str, &'static str) {
    match t {
        Target::Analysis => ("Analysis", "revision"),
        Target::Plan => ("Plan", "revision"),
        Target::RedTest => ("Red test", "round"),
        Target::Code => ("Code", "round"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_pair_writes_are_read_back() {
        let h = parse_heading("Plan revision 2 — doer — 2026-01-01T00:00:00Z").expect("entry");
        assert_eq!(
            (h.kind, h.target, h.counter, h.agent.as_deref()),
            (Kind::Submission, Some(Target::Plan), Some(2), Some("doer"))
        );
        let h = parse_heading("Red test round 3 — resubmitted — doer — 2026-01-01T00:00:00Z")
            .expect("entry");
        assert_eq!((h.target, h.counter), (Some(Target::RedTest), Some(3)));
        let h = parse_heading(
            "Follow-up review round 2 — submitted (unstaged diff) — d — 2026-01-01T00:00:00Z",
        )
        .expect("entry");
        assert_eq!((h.target, h.followup), (Some(Target::Code), true));
        let h = parse_heading(
            "Code review — round 4 — bob — CHANGES_REQUESTED (replaces earlier verdict) — 2026-01-01T00:00:00Z",
        )
        .expect("entry");
        assert_eq!(
            (h.kind, h.counter, h.agent.as_deref(), h.verdict),
            (
                Kind::Review,
                Some(4),
                Some("bob"),
                Some(Verdict::ChangesRequested)
            )
        );
        let h = parse_heading("Gate approved — DRAFT → PLANNING — doer — 2026-01-01T00:00:00Z")
            .expect("entry");
        assert_eq!(
            (h.kind, h.label.as_str(), h.agent.as_deref()),
            (Kind::Record, "Gate approved", Some("doer"))
        );
    }

    #[test]
    fn a_guessed_section_name_gets_the_section_that_holds_what_it_names() {
        let sections = [
            "Goal",
            "Evidence",
            "Root Cause Analysis",
            "Plan Revisions",
            "Plan Reviews",
            "Code Review Rounds",
            "Decisions",
        ];
        for (name, want) in [
            ("Analysis Reviews", "Root Cause Analysis"),
            ("analysis", "Root Cause Analysis"),
            ("Code reviews", "Code Review Rounds"),
            ("plan review", "Plan Reviews"),
            ("Plan", "Plan Revisions"),
            ("Decision", "Decisions"),
            ("evidence", "Evidence"),
        ] {
            assert_eq!(nearest_section(name, &sections), Some(want), "{name}");
        }
        assert_eq!(nearest_section("Zebra", &sections), None);
    }

    #[test]
    fn a_heading_without_the_time_is_not_an_entry() {
        assert!(parse_heading("Root cause").is_none());
        assert!(parse_heading("Step 1 — parse — later").is_none());
        assert!(!is_entry_heading("### Root cause\n"));
        assert!(is_entry_heading("### Note — doer — 2026-01-01T00:00:00Z\n"));
        assert!(!is_entry_heading(
            "#### Note — doer — 2026-01-01T00:00:00Z\n"
        ));
    }

    #[test]
    fn entries_hold_their_text_and_notes_headings() {
        let doc = Document::parse(
            b"---\nphase: DRAFT\n---\n## Plan Revisions\n\n### Plan revision 1 \xe2\x80\x94 doer \xe2\x80\x94 2026-01-01T00:00:00Z\n\nthe plan\n\n### Step one\n\ndo it\n\n## Decisions\n",
        )
        .expect("doc");
        let e = entries(&doc);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].section, "Plan Revisions");
        assert_eq!(e[0].line, 6);
        assert_eq!(e[0].text, "the plan\n\n### Step one\n\ndo it");
    }
}
