//! The rules of a review-only debate, as data and pure functions: the stage table (who acts in
//! which stage, with which command, and what ends the stage), the mode a target's size selects,
//! membership of a finding's anchor in the pinned target, and the stop reason `pair` computes
//! when a round closes. The judge rules on findings; it never declares a stop.

use crate::board::debate::{
    DebateRole, Finding, FindingState, Mode, Review, RoundYield, Stage, StopReason,
};
use crate::board::ledger::anchor::{self, Anchor};

/// One row of the stage table.
#[derive(Debug, Clone, Copy)]
pub struct StageRule {
    pub stage: Stage,
    pub role: DebateRole,
    /// The commands the role runs in the stage.
    pub commands: &'static str,
    /// What ends the stage, and where the debate goes.
    pub ends: &'static str,
}

/// Who acts in which stage of a round (read by `poll`, the commands, the docs and the tests).
pub const STAGES: &[StageRule] = &[
    StageRule {
        stage: Stage::Find,
        role: DebateRole::Enthusiast,
        commands: "`object` (one finding, anchored in the target), then `verdict COMMENT --revision ROUND`",
        ends: "the enthusiast's `verdict`: to `dispute`",
    },
    StageRule {
        stage: Stage::Dispute,
        role: DebateRole::Adversary,
        commands: "`challenge ID` (disputes a finding), then `verdict COMMENT --revision ROUND` with the map of what is safe",
        ends: "the adversary's `verdict`: to `rule`, or, with no finding to rule on, the round closes",
    },
    StageRule {
        stage: Stage::Rule,
        role: DebateRole::Judge,
        commands: "`rule ID confirm` or `rule ID dismiss`, once per finding of the round",
        ends: "the ruling on the round's last finding: the round closes",
    },
];

/// The role that acts in a stage.
pub fn role_of(stage: Stage) -> Option<DebateRole> {
    STAGES.iter().find(|r| r.stage == stage).map(|r| r.role)
}

/// The stage a role acts in.
pub fn stage_of(role: DebateRole) -> Stage {
    STAGES
        .iter()
        .find(|r| r.role == role)
        .map_or(Stage::Done, |r| r.stage)
}

/// How many lines apart two anchors may be and still name one location.
pub const NEAR_LINES: u32 = 5;

/// How many rounds running the substantive findings may grow before the debate halts.
pub const DIVERGING_ROUNDS: u32 = 2;

/// The mode and round limit a target selects: a `.md` file is full (10), one file or a diff of
/// at most 150 lines lightweight (3), a longer diff full (10).
pub const MODES: &[(&str, Mode, u32)] = &[
    ("a `.md` file", Mode::Full, 10),
    (
        "one file, or a diff of at most 150 lines",
        Mode::Lightweight,
        3,
    ),
    ("a diff of more than 150 lines", Mode::Full, 10),
];

/// The largest diff a lightweight debate takes.
pub const LIGHT_DIFF_LINES: u32 = 150;

/// The mode and round limit of a target.
pub fn mode(is_file: bool, markdown: bool, lines: u32) -> (Mode, u32) {
    let row = if is_file && markdown {
        0
    } else if is_file || lines <= LIGHT_DIFF_LINES {
        1
    } else {
        2
    };
    (MODES[row].1, MODES[row].2)
}

/// The file an anchor names, if it names one.
pub fn anchor_file(a: &Anchor) -> Option<&str> {
    match a {
        Anchor::Line { path, .. } | Anchor::Symbol { path, .. } => Some(path),
        _ => None,
    }
}

/// Whether a finding's anchor is inside the pinned target: a file anchor names one of its files
/// (`names` tells whether a file of the target is the path written); the other forms (a heading,
/// a commit, a hash) are inside by construction.
pub fn inside(a: &Anchor, review: &Review, names: impl Fn(&str, &str) -> bool) -> bool {
    match anchor_file(a) {
        Some(p) => review.files.iter().any(|f| names(f, p)),
        None => true,
    }
}

/// Whether two anchors name the same location: the same file within [`NEAR_LINES`] lines, or
/// the same symbol, heading, commit or hash.
fn same_place(a: &str, b: &str) -> bool {
    match (anchor::parse(a), anchor::parse(b)) {
        (Ok(Anchor::Line { path: p, line: x }), Ok(Anchor::Line { path: q, line: y })) => {
            p == q && x.abs_diff(y) <= NEAR_LINES
        }
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Close the current round: its yield, then the stop reason, if one holds (the debate moves to
/// [`Stage::Done`]); else the next round begins in [`Stage::Find`]. Pure: the caller re-verifies
/// the pin before writing a stop.
pub fn close_round(r: &mut Review) -> Option<StopReason> {
    let round = r.round;
    let of_round: Vec<&Finding> = r.findings.iter().filter(|f| f.round == round).collect();
    let confirmed: Vec<&&Finding> = of_round
        .iter()
        .filter(|f| f.state == FindingState::Confirmed)
        .collect();
    let earlier: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.round < round && f.state == FindingState::Confirmed)
        .collect();
    let self_reference = confirmed
        .iter()
        .filter(|f| earlier.iter().any(|e| same_place(&e.anchor, &f.anchor)))
        .count() as u32;
    let y = RoundYield {
        round,
        findings: of_round
            .iter()
            .filter(|f| f.state != FindingState::Discarded)
            .count() as u32,
        discarded: of_round
            .iter()
            .filter(|f| f.state == FindingState::Discarded)
            .count() as u32,
        confirmed: confirmed.len() as u32,
        substantive: confirmed.len() as u32 - self_reference,
        self_reference,
    };
    r.yields.push(y);
    let stop = stop_reason(&r.yields, r.max_rounds);
    if stop.is_some() {
        r.stage = Stage::Done;
    } else {
        r.round += 1;
        r.stage = Stage::Find;
    }
    stop
}

/// The stop reason the recorded yields give, in this order: after the first round, no finding
/// confirmed (`zero-findings`) or every confirmed finding at a location an earlier round
/// confirmed (`all-self-reference`); the substantive findings grew [`DIVERGING_ROUNDS`] rounds
/// running (`anti-divergence-halt`); the round limit reached (`max-rounds`).
pub fn stop_reason(yields: &[RoundYield], max_rounds: u32) -> Option<StopReason> {
    let last = yields.last()?;
    if last.round > 1 && last.confirmed == 0 {
        return Some(StopReason::ZeroFindings);
    }
    if last.round > 1 && last.substantive == 0 {
        return Some(StopReason::AllSelfReference);
    }
    let n = DIVERGING_ROUNDS as usize;
    if yields.len() > n
        && yields[yields.len() - n - 1..]
            .windows(2)
            .all(|w| w[1].substantive > w[0].substantive)
    {
        return Some(StopReason::AntiDivergenceHalt);
    }
    (last.round >= max_rounds).then_some(StopReason::MaxRounds)
}

/// The stage table as Markdown, as docs/protocol.md shows it.
pub fn stage_table() -> String {
    let mut out = String::from("| stage | role | commands | ends |\n|---|---|---|---|\n");
    for r in STAGES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            stage_word(r.stage),
            r.role.as_str(),
            r.commands,
            r.ends
        ));
    }
    out
}

/// The mode table as Markdown, as docs/protocol.md shows it.
pub fn mode_table() -> String {
    let mut out = String::from("| target | mode | rounds at most |\n|---|---|---|\n");
    for (what, mode, rounds) in MODES {
        let m = match mode {
            Mode::Full => "full",
            Mode::Lightweight => "lightweight",
        };
        out.push_str(&format!("| {what} | {m} | {rounds} |\n"));
    }
    out
}

fn stage_word(s: Stage) -> &'static str {
    match s {
        Stage::Find => "find",
        Stage::Dispute => "dispute",
        Stage::Rule => "rule",
        Stage::Done => "done",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y(round: u32, confirmed: u32, substantive: u32) -> RoundYield {
        RoundYield {
            round,
            findings: confirmed,
            discarded: 0,
            confirmed,
            substantive,
            self_reference: confirmed - substantive,
        }
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(stop_reason(&[y(1, 0, 0)], 3), None);
        assert_eq!(
            stop_reason(&[y(1, 2, 2), y(2, 0, 0)], 3),
            Some(StopReason::ZeroFindings)
        );
        assert_eq!(
            stop_reason(&[y(1, 2, 2), y(2, 1, 0)], 3),
            Some(StopReason::AllSelfReference)
        );
        assert_eq!(
            stop_reason(&[y(1, 1, 1), y(2, 2, 2), y(3, 3, 3)], 10),
            Some(StopReason::AntiDivergenceHalt)
        );
        assert_eq!(
            stop_reason(&[y(1, 2, 2), y(2, 1, 1), y(3, 1, 1)], 3),
            Some(StopReason::MaxRounds)
        );
        assert_eq!(mode(true, true, 3), (Mode::Full, 10));
        assert_eq!(mode(true, false, 900), (Mode::Lightweight, 3));
        assert_eq!(mode(false, false, 150), (Mode::Lightweight, 3));
        assert_eq!(mode(false, false, 151), (Mode::Full, 10));
    }
}
