//! The ledger's commands: `object`, `resolve`, `challenge`, `rule`, `accept`, `reopen`,
//! `withdraw`, `decide` (each one locked write through the engine, frontmatter and body entry
//! together) and `objections` (a read, no lock).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{Outcome, read_text, shown};
use crate::board::frontmatter::{PinKind, Target};
use crate::board::ledger::anchor;
use crate::board::ledger::{Severity, State, round_of, terminal_stop_reason};
use crate::cli::ledger::{
    AcceptArgs, ChallengeArgs, DecideArgs, DecisionArg, ObjectArgs, ObjectionsArgs, ReopenArgs,
    ResolveArgs, RuleArgs, RulingArg, SecondArgs, SeverityArg,
};
use crate::error::{Error, Result};
use crate::law::protocol::Command;
use crate::law::{self, Consent};
use crate::ops::ledger::{self as ops, Decision, Raise, Ruling};
use crate::render::report::SCHEMA;
use crate::repo::anchor::{self as observed_anchor, Artifact};
use crate::store;
use crate::store::{Depth, Session, Snapshot};

/// A text given inline or in a file (`-` for stdin).
fn text(value: &Option<String>, file: &Option<PathBuf>, flag: &str) -> Result<Option<String>> {
    match (value, file) {
        (Some(v), _) => Ok(Some(v.clone())),
        (None, Some(f)) => read_text(f, &format!("{flag}-file")).map(Some),
        (None, None) => Ok(None),
    }
}

fn required(value: &Option<String>, file: &Option<PathBuf>, flag: &'static str) -> Result<String> {
    text(value, file, flag)?.ok_or_else(|| {
        let name = flag.trim_start_matches('-');
        Error::NoText {
            what: name,
            flag: name,
        }
    })
}

fn consent(user_approved: bool) -> Consent {
    Consent {
        user_approved,
        invocation: super::invocation(),
        ..Consent::default()
    }
}

/// Check an anchor before the lock: its form, and that it points inside the artifact under
/// review. The gate and counter it was checked against (the write refuses if they moved);
/// `None` when the objection will be refused anyway (the write says why).
fn check_anchor(
    snap: &Snapshot,
    agent: &str,
    a: &str,
    undeclared: bool,
) -> Result<Option<(Target, u32)>> {
    let board = snap.path();
    let parsed = anchor::parse(a).map_err(|e| Error::Usage(e.0))?;
    let Ok(loaded) = snap.load() else {
        return Ok(None);
    };
    let fm = &loaded.valid.parsed.fm;
    let Some(target) = fm.phase.review_target() else {
        return Ok(None);
    };
    if law::admit(fm, agent, Command::Object).is_err() {
        return Ok(None);
    }
    let base = match fm.worktree.as_deref() {
        Some(w) => PathBuf::from(w),
        None => std::path::absolute(board)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from(".")),
    };
    let body = &loaded.valid.doc.body;
    let readable = super::published::readable(board, fm, target)?;
    let diff = match fm.pin(target).map(|p| p.kind) {
        Some(PinKind::Staged | PinKind::Unstaged) => {
            Some(crate::repo::pin::current(fm, target, body, readable.as_ref())?.bytes)
        }
        None if target == Target::Code => {
            Some(crate::repo::pin::current(fm, target, body, None)?.bytes)
        }
        _ => None,
    };
    let files = observed_anchor::artifact_files(fm, target, diff.as_deref(), &base);
    let staged =
        diff.is_some() && fm.phase.diff_scope() == Some(crate::law::protocol::DiffScope::Staged);
    let art = Artifact {
        fm,
        target,
        body,
        base,
        files,
        staged,
        published: readable,
    };
    observed_anchor::check(&parsed, &art, undeclared).map_err(|e| {
        Error::Usage(format!(
            "anchor {a:?}: {e}. The accepted forms are {}",
            anchor::FORMS
        ))
    })?;
    Ok(Some((target, fm.counter(target))))
}

pub fn object(a: ObjectArgs, first: Result<Snapshot>, s: &Session) -> Result<Outcome> {
    super::agent_arg("--agent", &a.common.agent)?;
    let title = required(&a.title, &a.title_file, "--title")?;
    let evidence = required(&a.evidence, &a.evidence_file, "--evidence")?;
    let fix = required(&a.fix, &a.fix_file, "--fix")?;
    let undeclared = text(
        &a.undeclared_impact,
        &a.undeclared_impact_file,
        "--undeclared-impact",
    )?;
    anchor::parse(&a.anchor).map_err(|e| Error::Usage(e.0))?;
    super::semantic::check_common(&a.common)?;
    let snap = first?;
    let checked = check_anchor(&snap, &a.common.agent, &a.anchor, undeclared.is_some())?;
    let raise = Raise {
        severity: match a.severity {
            SeverityArg::Blocking => Severity::Blocking,
            SeverityArg::Advisory => Severity::Advisory,
        },
        regression_of: a.regression_of.clone(),
        anchor: a.anchor.clone(),
        title,
        evidence,
        fix,
        undeclared,
        checked,
    };
    // Open objections of others at the same place, as the board stood under the lock.
    let mut near: Vec<(String, String, String, String)> = Vec::new();
    let mut out = super::semantic::apply_on(
        snap,
        &a.common,
        "object",
        consent(false),
        s,
        Vec::new(),
        |fm, ctx| {
            near = fm
                .phase
                .review_target()
                .map(|t| crate::board::ledger::second::near(fm, t, &raise.anchor, &ctx.agent))
                .unwrap_or_default()
                .into_iter()
                .map(|o| {
                    (
                        o.id.clone(),
                        o.by.clone(),
                        o.anchor.clone(),
                        o.title.clone(),
                    )
                })
                .collect();
            ops::object(fm, ctx, &raise)
        },
    )?;
    // The new id, for the caller to name in its verdict.
    let id = out.json["summary"]
        .as_str()
        .and_then(|s| s.split(':').next())
        .unwrap_or_default()
        .to_string();
    out.json["id"] = json!(id);
    out.text = format!("{id}\n{}", out.text);
    // One finding, one objection: say where another reviewer's open objection is already there.
    for (other, by, anchor, title) in near {
        let board = crate::text::shell_word(&shown(&a.board));
        let agent = crate::text::shell_arg(&a.common.agent);
        let warning = format!(
            "{other} ({by}, open, `{anchor}`: {title}) is anchored where {id} is (the same \
             anchor, or a line of the same file within {}); if they are one finding, second it \
             instead of keeping both: `pair second {board} {other} --agent {agent}`, then `pair \
             withdraw {board} {id} --agent {agent} --reason 'Seconded {other}'`",
            crate::board::ledger::second::NEAR_LINES,
            anchor = crate::text::escape(&anchor),
            title = crate::text::escape(&title),
        );
        if let Some(w) = out.json.get_mut("warnings").and_then(|w| w.as_array_mut()) {
            w.push(json!(warning));
        }
        out.warnings.push(warning);
    }
    Ok(out)
}

pub fn resolve(a: ResolveArgs, s: &Session) -> Result<Outcome> {
    let resolution = required(&a.resolution, &a.resolution_file, "--resolution")?;
    let surfaces = a.surfaces.clone();
    super::semantic::apply(
        &a.board,
        &a.common,
        "resolve",
        consent(false),
        s,
        |fm, ctx| ops::resolve(fm, ctx, &a.id, &resolution, &surfaces, a.fixed_in),
    )
}

pub fn challenge(a: ChallengeArgs, first: Result<Snapshot>, s: &Session) -> Result<Outcome> {
    let grounds = required(&a.grounds, &a.grounds_file, "--grounds")?;
    super::semantic::apply_read(
        first,
        &a.common,
        "challenge",
        consent(false),
        s,
        |fm, ctx| ops::challenge(fm, ctx, &a.id, &grounds),
    )
}

pub fn rule(a: RuleArgs, first: Result<Snapshot>, s: &Session) -> Result<Outcome> {
    let reason = required(&a.reason.reason, &a.reason.reason_file, "--reason")?;
    let ruling = match a.ruling {
        RulingArg::Uphold => Ruling::Uphold,
        RulingArg::Overrule => Ruling::Overrule,
        RulingArg::RejectRework => Ruling::RejectRework,
        RulingArg::Confirm | RulingArg::Dismiss => {
            return Err(Error::Usage(
                "confirm and dismiss rule on a review-only board's findings; on this board a \
                 challenged objection is upheld or overruled"
                    .into(),
            ));
        }
    };
    super::semantic::apply_read(
        first,
        &a.common,
        "rule",
        consent(a.user_approved),
        s,
        |fm, ctx| ops::rule(fm, ctx, &a.id, ruling, &reason),
    )
}

pub fn accept(a: AcceptArgs, s: &Session) -> Result<Outcome> {
    super::semantic::apply(
        &a.board,
        &a.common,
        "accept",
        consent(false),
        s,
        |fm, ctx| ops::accept(fm, ctx, &a.id),
    )
}

pub fn reopen(a: ReopenArgs, s: &Session) -> Result<Outcome> {
    let reason = required(&a.reason.reason, &a.reason.reason_file, "--reason")?;
    super::semantic::apply(
        &a.board,
        &a.common,
        "reopen",
        consent(false),
        s,
        |fm, ctx| ops::reopen(fm, ctx, &a.id, &reason),
    )
}

pub fn withdraw(a: ReopenArgs, s: &Session) -> Result<Outcome> {
    let reason = required(&a.reason.reason, &a.reason.reason_file, "--reason")?;
    super::semantic::apply(
        &a.board,
        &a.common,
        "withdraw",
        consent(false),
        s,
        |fm, ctx| ops::withdraw(fm, ctx, &a.id, &reason),
    )
}

pub fn second(a: SecondArgs, s: &Session) -> Result<Outcome> {
    super::semantic::apply(
        &a.board,
        &a.common,
        "second",
        consent(false),
        s,
        |fm, ctx| ops::second(fm, ctx, &a.id, a.withdraw),
    )
}

pub fn decide(a: DecideArgs, s: &Session) -> Result<Outcome> {
    let reason = required(&a.reason.reason, &a.reason.reason_file, "--reason")?;
    let decision = match a.decision {
        DecisionArg::Accept => Decision::Accept,
        DecisionArg::Reject => Decision::Reject,
        DecisionArg::Defer => Decision::Defer,
    };
    let escalation = a.escalation.clone();
    super::semantic::apply(
        &a.board,
        &a.common,
        "decide",
        consent(a.user_approved),
        s,
        |fm, ctx| ops::decide(fm, ctx, decision, &reason, escalation.as_deref()),
    )
}

/// ` (seconded by bob, carol)` after an objection's title, or nothing.
pub(crate) fn seconded(fm: &crate::board::frontmatter::Frontmatter, id: &str) -> String {
    let who = crate::board::ledger::second::seconders(fm, id);
    if who.is_empty() {
        return String::new();
    }
    let who: Vec<String> = who
        .iter()
        .map(|w| crate::text::escape(w).into_owned())
        .collect();
    format!(" (seconded by {})", who.join(", "))
}

/// `objections`: the ledger as a table (no lock: a read).
pub fn objections(a: ObjectionsArgs, s: &Session) -> Result<Outcome> {
    let snap = store::snapshot(&a.board, Depth::Head, s)?;
    let valid = snap.frontmatter()?;
    let fm = &valid.parsed.fm;
    let l = &fm.ledger;
    let rows: Vec<_> = l
        .objections
        .iter()
        .filter(|o| !a.open || o.state.is_unsettled())
        .collect();
    let json_rows: Vec<_> = rows
        .iter()
        .map(|o| {
            json!({
                "id": o.id, "by": o.by, "gate": o.gate, "round": o.round,
                "severity": o.severity, "state": o.state, "anchor": o.anchor,
                "title": o.title, "cause": o.cause,
                "seconded_by": crate::board::ledger::second::seconders(fm, &o.id),
            })
        })
        .collect();
    // Every gate with a submission (its bookkeeping is left out of the frontmatter while it
    // has none to keep).
    let gates: serde_json::Map<String, serde_json::Value> = Target::ALL
        .iter()
        .filter(|t| fm.counter(**t) > 0 || l.gates.iter().any(|(g, _)| g == *t))
        .map(|t| (t, l.gate(*t)))
        .map(|(t, g)| {
            (
                t.as_str().to_string(),
                json!({
                    "since": g.since, "round": round_of(fm, *t), "stop_reason": g.stop_reason,
                    "escalation": g.escalation, "open": g.open, "reworked_from": g.reworked_from,
                }),
            )
        })
        .collect();
    let mut text = String::new();
    if rows.is_empty() {
        text.push_str(if a.open {
            "no objection is open\n"
        } else {
            "no objections\n"
        });
    } else {
        let w = |f: &dyn Fn(&&crate::board::ledger::Objection) -> usize| {
            rows.iter().map(f).max().unwrap_or(0)
        };
        let (wi, wb, wa) = (
            w(&|o| o.id.len()).max(2),
            w(&|o| o.by.len()).max(2),
            w(&|o| o.anchor.len()).max(6),
        );
        text.push_str(&format!(
            "{:<wi$}  {:<wb$}  {:<9}  {:>5}  {:<8}  {:<13}  {:<wa$}  title\n",
            "id", "by", "gate", "round", "severity", "state", "anchor"
        ));
        for o in &rows {
            text.push_str(&format!(
                "{:<wi$}  {:<wb$}  {:<9}  {:>5}  {:<8}  {:<13}  {:<wa$}  {}{}{}\n",
                o.id,
                crate::text::escape(&o.by),
                o.gate.as_str(),
                o.round,
                o.severity.as_str(),
                o.state.as_str(),
                crate::text::escape(&o.anchor),
                crate::text::escape(&o.title),
                o.cause
                    .as_ref()
                    .map(|c| format!(" (caused by {c})"))
                    .unwrap_or_default(),
                seconded(fm, &o.id)
            ));
        }
    }
    for (t, g) in &l.gates {
        text.push_str(&format!(
            "gate {t}: round {} of {}{}\n",
            round_of(fm, *t),
            l.max_rounds(),
            g.stop_reason
                .map(|r| format!(
                    ", stop_reason {r}{}",
                    g.escalation
                        .as_ref()
                        .map(|e| format!(" (escalation {e})"))
                        .unwrap_or_default()
                ))
                .unwrap_or_default()
        ));
    }
    let blocking_open = l
        .objections
        .iter()
        .filter(|o| o.severity == Severity::Blocking && o.state.is_open())
        .count();
    Ok(Outcome::ok(
        json!({
            "schema": SCHEMA,
            "path": shown(&a.board),
            "phase": fm.phase,
            "in_use": l.in_use(),
            "max_rounds": l.max_rounds(),
            "objections": json_rows,
            "gates": gates,
            "open_blocking": blocking_open,
            "stop_reason": terminal_stop_reason(fm),
            "superseded": l.objections.iter().filter(|o| o.state == State::Superseded).count(),
        }),
        text,
    ))
}
