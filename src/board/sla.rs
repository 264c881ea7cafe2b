//! Service levels as data: which phases each SLA name covers, how long a phase or a turn may
//! last before the watchdog reports it, and the `sla` frontmatter field that records the limits
//! the user set (`init --sla review=2h,revision=4h`, changed by `pair extend`).
//!
//! ```yaml
//! sla:
//!   review: 2h
//!   revision: 4h
//! ```
//!
//! An SLA never moves the board: a breach is reported by `pair watch` and `pair stats`, and the
//! user (or an orchestrator) decides what to do.

use std::fmt::{self, Write as _};
use std::str::FromStr;

use serde::Serialize;

use crate::board::frontmatter::{Phase, word_enum};
use crate::board::yaml::{Node, Value};
use crate::error::FieldError;

word_enum!(
    /// An SLA name: a group of phases that share a limit.
    SlaName {
        Review => "review",
        Revision => "revision",
        Analysis => "analysis",
        Plan => "plan",
        RedTest => "red_test",
        Code => "code",
        Decision => "decision",
        Advance => "advance",
        Stall => "stall",
    }
);

/// One row of the SLA table: a name, the phases it covers (empty: every phase without a limit
/// of its own) and what it bounds.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub name: SlaName,
    pub phases: &'static [Phase],
    pub bounds: &'static str,
}

use Phase as P;

/// The SLA names and the phases they cover. A phase belongs to at most one name.
#[rustfmt::skip]
pub const TABLE: &[Row] = &[
    Row { name: SlaName::Review,   phases: &[P::AnalysisSubmitted, P::ReviewingAnalysis, P::PlanningSubmitted, P::ReviewingPlan, P::RedTestSubmitted, P::ReviewingRedTest, P::CodeSubmitted, P::ReviewingCode, P::FollowupReview], bounds: "a review round: from the submission until every required reviewer has given a verdict" },
    Row { name: SlaName::Revision, phases: &[P::AnalysisChangesRequested, P::PlanChangesRequested, P::RedTestChangesRequested, P::CodeChangesRequested], bounds: "the doer's revision after changes were requested" },
    Row { name: SlaName::Analysis, phases: &[P::Analyzing], bounds: "writing the root cause analysis" },
    Row { name: SlaName::Plan,     phases: &[P::Planning], bounds: "writing the plan" },
    Row { name: SlaName::RedTest,  phases: &[P::RedTesting], bounds: "writing the failing test" },
    Row { name: SlaName::Code,     phases: &[P::Coding], bounds: "writing the code" },
    Row { name: SlaName::Decision, phases: &[P::AwaitingDecision], bounds: "the decision a gate awaits after its round cap" },
    Row { name: SlaName::Advance,  phases: &[P::Draft, P::AnalysisApproved, P::PlanApproved, P::RedTestApproved, P::ReadyToCommit], bounds: "the doer's next step after an approval (up to the commit)" },
    Row { name: SlaName::Stall,    phases: &[], bounds: "how long an agent may hold its turn in a phase without an SLA of its own before the watchdog calls it stalled (default 1h)" },
];

/// The stall time when no SLA applies: an hour.
pub const DEFAULT_STALL_SECONDS: u64 = 3600;

/// The longest limit accepted: a year.
pub const MAX_SECONDS: u64 = 366 * 86_400;

/// A limit the user set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub name: SlaName,
    pub seconds: u64,
}

/// The SLA name that covers a phase (`None`: terminal phases, which nothing bounds).
pub fn name_of(phase: Phase) -> Option<SlaName> {
    TABLE
        .iter()
        .find(|r| r.phases.contains(&phase))
        .map(|r| r.name)
}

/// The limit set for a phase's own SLA name, if the user set one.
pub fn phase_limit(limits: &[Limit], phase: Phase) -> Option<Limit> {
    let name = name_of(phase)?;
    limits.iter().copied().find(|l| l.name == name)
}

/// A stretch of one SLA in a board's history: the journal's writes `first..end`, one after
/// another, whose phases the SLA covers. Phases of one SLA entered in a row are one stretch (a
/// review round runs from its submission through the claim to the verdicts); a write that
/// raises a review counter (a submission, or a resubmission that keeps the phase) starts a new
/// one. An SLA is timed from the first write of its stretch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stretch {
    pub name: SlaName,
    pub first: usize,
    pub end: usize,
}

/// The SLA stretches of a journal, oldest first (writes into a terminal phase belong to none).
pub fn stretches(records: &[crate::board::journal::Record]) -> Vec<Stretch> {
    let mut out: Vec<Stretch> = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let Some(name) = name_of(r.to) else {
            continue;
        };
        let raises = r.counters.iter().any(|c| c.to > c.from);
        match out.last_mut() {
            Some(s) if s.name == name && s.end == i && !raises => s.end = i + 1,
            _ => out.push(Stretch {
                name,
                first: i,
                end: i + 1,
            }),
        }
    }
    out
}

/// When the SLA clock of the board's current phase started: the first write of the journal's
/// last stretch, when the journal ends in `phase`; else (no journal, or one that does not match
/// the frontmatter) `phase_updated_at`.
pub fn clock_start(
    records: &[crate::board::journal::Record],
    phase: Phase,
    phase_updated_at: crate::board::frontmatter::Timestamp,
) -> crate::board::frontmatter::Timestamp {
    match (records.last(), stretches(records).last()) {
        (Some(last), Some(s)) if last.to == phase && s.end == records.len() => records[s.first].at,
        _ => phase_updated_at,
    }
}

/// Where a stall limit came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The phase's own SLA.
    Phase(SlaName),
    /// The `stall` SLA.
    Stall,
    /// [`DEFAULT_STALL_SECONDS`].
    Default,
}

impl Source {
    pub fn describe(self) -> String {
        match self {
            Source::Phase(n) => format!("the {n} SLA"),
            Source::Stall => "the stall SLA".into(),
            Source::Default => "the default stall time".into(),
        }
    }
}

/// How long an agent may hold its turn in `phase`: the phase's SLA, else the `stall` SLA, else
/// the default.
pub fn stall_limit(limits: &[Limit], phase: Phase) -> (u64, Source) {
    if let Some(l) = phase_limit(limits, phase) {
        return (l.seconds, Source::Phase(l.name));
    }
    match limits.iter().find(|l| l.name == SlaName::Stall) {
        Some(l) => (l.seconds, Source::Stall),
        None => (DEFAULT_STALL_SECONDS, Source::Default),
    }
}

/// A duration: one or more `<number><unit>` parts, units `d`, `h`, `m`, `s`, largest first, each
/// at most once (`90s`, `30m`, `2h`, `1d`, `1h30m`).
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let order = ['d', 'h', 'm', 's'];
    let mut total: u64 = 0;
    let mut last: Option<usize> = None;
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err("an empty duration; write one like 90s, 30m, 2h, 1d or 1h30m".into());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let part_end = (digits + rest[digits..].chars().next().map_or(0, char::len_utf8)).max(1);
        let part = &rest[..part_end.min(rest.len())];
        if digits == 0 {
            return Err(format!(
                "`{part}` in `{s}` is not a number followed by a unit (d, h, m or s)"
            ));
        }
        let Some(unit) = rest[digits..].chars().next() else {
            return Err(format!(
                "`{part}` in `{s}` has no unit; add d, h, m or s (e.g. {part}m)"
            ));
        };
        let Some(k) = order.iter().position(|u| *u == unit) else {
            return Err(format!(
                "`{part}` in `{s}`: `{unit}` is not a unit; use d, h, m or s"
            ));
        };
        if last.is_some_and(|l| k <= l) {
            return Err(format!(
                "`{part}` in `{s}`: units go largest first, each once (like 1h30m)"
            ));
        }
        last = Some(k);
        let n: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("`{part}` in `{s}` is too large"))?;
        let unit_secs = [86_400, 3600, 60, 1][k];
        total = n
            .checked_mul(unit_secs)
            .and_then(|x| total.checked_add(x))
            .filter(|t| *t <= MAX_SECONDS)
            .ok_or_else(|| format!("`{s}` is longer than the longest limit (366d)"))?;
        rest = &rest[part_end..];
    }
    if total == 0 {
        return Err(format!(
            "`{s}` is no time at all; a limit must be at least 1s"
        ));
    }
    Ok(total)
}

/// A duration in the form [`parse_duration`] reads, largest units first (`1h30m`).
pub fn format_duration(seconds: u64) -> String {
    if seconds == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    let mut rest = seconds;
    for (unit, size) in [('d', 86_400), ('h', 3600), ('m', 60), ('s', 1)] {
        if rest >= size {
            let _ = write!(out, "{}{unit}", rest / size);
            rest %= size;
        }
    }
    out
}

fn parse_name(name: &str) -> Result<SlaName, String> {
    name.trim().parse::<SlaName>().map_err(|_| {
        let names: Vec<&str> = SlaName::ALL.iter().map(|n| n.as_str()).collect();
        format!(
            "`{}` is not an SLA name; the names are {}",
            name.trim(),
            names.join(", ")
        )
    })
}

/// `NAME=DURATION[,NAME=DURATION…]` (the flag may also be repeated): each name once.
pub fn parse_assignments(items: &[String]) -> Result<Vec<Limit>, String> {
    let mut out: Vec<Limit> = Vec::new();
    for item in items.iter().flat_map(|s| s.split(',')) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let Some((name, value)) = item.split_once('=') else {
            return Err(format!("`{item}` is not NAME=DURATION (e.g. review=2h)"));
        };
        let name = parse_name(name)?;
        let seconds = parse_duration(value).map_err(|e| format!("{name}: {e}"))?;
        if out.iter().any(|l| l.name == name) {
            return Err(format!("the SLA `{name}` is named twice"));
        }
        out.push(Limit { name, seconds });
    }
    Ok(out)
}

/// Limits in table order (the order they are written in).
pub fn sorted(mut limits: Vec<Limit>) -> Vec<Limit> {
    limits.sort_by_key(|l| l.name);
    limits
}

/// `sla`: a mapping of SLA name to duration.
pub fn from_node(node: &Node, errors: &mut Vec<FieldError>) -> Vec<Limit> {
    let line = |n: &Node| (n.line > 0).then_some(n.line);
    let entries = match &node.value {
        Value::Null => return Vec::new(),
        Value::Map(e) => e,
        _ => {
            errors.push(FieldError {
                field: "sla".into(),
                line: line(node),
                message: "expected a mapping of SLA name to duration (`review: 2h`)".into(),
            });
            return Vec::new();
        }
    };
    let mut out: Vec<Limit> = Vec::new();
    for (name, n) in entries {
        let field = format!("sla.{name}");
        let parsed = parse_name(name).and_then(|name| {
            let text = match &n.value {
                Value::Str(s) => s.clone(),
                Value::Int(i) => i.to_string(),
                other => {
                    return Err(format!(
                        "expected a duration like 2h, found {}",
                        other.describe()
                    ));
                }
            };
            parse_duration(&text).map(|seconds| Limit { name, seconds })
        });
        match parsed {
            Ok(l) if out.iter().any(|o| o.name == l.name) => errors.push(FieldError {
                field,
                line: line(n),
                message: "named twice".into(),
            }),
            Ok(l) => out.push(l),
            Err(message) => errors.push(FieldError {
                field,
                line: line(n),
                message,
            }),
        }
    }
    sorted(out)
}

/// The one-line value (for messages and change detection), `None` when no SLA is set.
pub fn value(limits: &[Limit]) -> Option<String> {
    (!limits.is_empty()).then(|| {
        format!(
            "{{{}}}",
            limits
                .iter()
                .map(|l| format!("{}: {}", l.name, format_duration(l.seconds)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Emit the `sla` block (nothing when no SLA is set).
pub fn emit(out: &mut String, limits: &[Limit]) {
    if limits.is_empty() {
        return;
    }
    out.push_str("sla:\n");
    for l in limits {
        let _ = writeln!(out, "  {}: {}", l.name, format_duration(l.seconds));
    }
}

/// The SLA table in Markdown, for docs/protocol.md (checked against it by a test).
pub fn markdown_table() -> String {
    let mut t = String::from("| SLA | phases | bounds |\n|---|---|---|\n");
    for r in TABLE {
        let phases = if r.phases.is_empty() {
            "every phase without its own SLA".to_string()
        } else {
            r.phases
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(t, "| `{}` | {phases} | {} |", r.name, r.bounds);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_their_documented_forms_only() {
        assert_eq!(parse_duration("90s"), Ok(90));
        assert_eq!(parse_duration("30m"), Ok(1800));
        assert_eq!(parse_duration("2h"), Ok(7200));
        assert_eq!(parse_duration("1d"), Ok(86_400));
        assert_eq!(parse_duration("1h30m"), Ok(5400));
        assert_eq!(parse_duration("1d2h3m4s"), Ok(93_784));
        for bad in [
            "", "2", "h", "2x", "30m1h", "1h1h", "0s", "-1h", "1.5h", "400d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad} accepted");
        }
        assert!(parse_duration("2x").unwrap_err().contains("`2x`"));
        for s in [90, 1800, 5400, 93_784, 86_400] {
            assert_eq!(parse_duration(&format_duration(s)), Ok(s));
        }
    }

    fn rec(at: &str, to: Phase, raises: bool) -> crate::board::journal::Record {
        crate::board::journal::Record {
            at: crate::board::frontmatter::Timestamp::parse(at).unwrap(),
            by: Some("doer".into()),
            command: "x".into(),
            from: None,
            to,
            counters: if raises {
                vec![crate::board::journal::Counter {
                    name: "red_test_round".into(),
                    from: 1,
                    to: 2,
                }]
            } else {
                vec![]
            },
            verdict: None,
            turn: vec![],
            wait_us: 0,
            uid: 0,
            host: "h".into(),
            pid: 1,
            tokens: None,
            cost_micros: None,
            usage_phase: None,
            mended: vec![],
            session: None,
            model: None,
            transcript: None,
            content: None,
            sig: None,
            before: None,
            after: String::new(),
            prev: None,
            line: 0,
        }
    }

    #[test]
    fn a_review_stretch_runs_through_the_claim_and_a_resubmission_starts_a_new_one() {
        let r = [
            rec("2026-01-01T00:00:00Z", Phase::RedTesting, false),
            rec("2026-01-01T00:10:00Z", Phase::RedTestSubmitted, true),
            rec("2026-01-01T00:20:00Z", Phase::ReviewingRedTest, false),
            rec("2026-01-01T00:30:00Z", Phase::ReviewingRedTest, false),
            rec("2026-01-01T00:40:00Z", Phase::RedTestSubmitted, true),
            rec("2026-01-01T00:50:00Z", Phase::Stopped, false),
            rec("2026-01-01T01:00:00Z", Phase::RedTestSubmitted, false),
        ];
        let got: Vec<(SlaName, usize, usize)> = stretches(&r)
            .iter()
            .map(|s| (s.name, s.first, s.end))
            .collect();
        assert_eq!(
            got,
            [
                (SlaName::RedTest, 0, 1),
                (SlaName::Review, 1, 4),
                (SlaName::Review, 4, 5),
                (SlaName::Review, 6, 7),
            ]
        );
        let later = crate::board::frontmatter::Timestamp::parse("2026-01-01T02:00:00Z").unwrap();
        assert_eq!(
            clock_start(&r[..4], Phase::ReviewingRedTest, later),
            r[1].at
        );
        assert_eq!(
            clock_start(&r[..5], Phase::RedTestSubmitted, later),
            r[4].at
        );
        // A journal that does not end in the board's phase: the frontmatter's time.
        assert_eq!(clock_start(&r[..4], Phase::Coding, later), later);
    }

    #[test]
    fn every_non_terminal_phase_has_exactly_one_sla_name() {
        for p in Phase::ALL {
            let n = TABLE.iter().filter(|r| r.phases.contains(p)).count();
            assert_eq!(n, usize::from(!p.is_terminal()), "{p}");
        }
    }
}
