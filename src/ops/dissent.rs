//! `dissent`: a fresh dissenter answers the gate its reviewers passed (none, advisory or
//! blocking), under the dissent stage's rules ([`crate::law::dissent`]).

use super::{Ctx, Edit, Entry, admit, checked_note, set_phase, touch};
use crate::board::dissent::{Outcome, Round};
use crate::board::entry::{DISSENT, artifact_section, target_noun};
use crate::board::frontmatter::{Frontmatter, Status};
use crate::error::{Error, Hint, Result};
use crate::law::dissent::{self as rules, MAX_ROUNDS};
use crate::law::protocol::Command;

fn poll_wait(id: &str) -> Hint {
    Hint::Run {
        command: "poll",
        args: vec!["--agent".into(), id.into(), "--wait".into()],
    }
}

/// `dissent OUTCOME --revision N [--objections IDS]`: record the answer and move the gate as
/// [`rules::OUTCOMES`] says.
pub fn dissent(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    outcome: Outcome,
    revision: u32,
    objections: &[String],
    note: &str,
) -> Result<Edit> {
    admit(fm, ctx, Command::Dissent)?;
    let id = ctx.agent.clone();
    let Some(t) = rules::stage_open(fm) else {
        return Err(Error::refused(
            format!(
                "no dissent is awaited in phase {}: a dissent answers a submission the required \
                 reviewers passed, on a gate that requires the stage (`init --dissent`)",
                fm.phase
            ),
            poll_wait(&id),
        ));
    };
    if fm.agent(&id).is_none() {
        return Err(crate::law::not_registered(&id));
    }
    if let Some(e) = rules::unfit_refusal(fm, &id, t, "") {
        return Err(e);
    }
    let counter = fm.counter(t);
    let (noun, unit) = target_noun(t);
    let noun_lc = noun.to_lowercase();
    if revision > counter {
        return Err(Error::Usage(format!(
            "--revision {revision}: {noun_lc} {unit} {revision} does not exist; the current is \
             {counter}"
        )));
    }
    if revision != counter {
        return Err(Error::StaleCounter {
            message: format!(
                "stale dissent: you evaluated {noun_lc} {unit} {revision}, but the reviewers \
                 passed {noun_lc} {unit} {counter}; evaluate it and answer with --revision \
                 {counter}"
            ),
        });
    }
    let note = checked_note(note)?;
    if let Some(why) = rules::outcome_refusal(fm, &id, t, outcome, objections) {
        return Err(Error::refused(
            format!("dissent {outcome} is refused: {why}"),
            Hint::Run {
                command: "objections",
                args: vec!["--open".into()],
            },
        ));
    }
    fm.dissent.rounds.push(Round {
        gate: t,
        counter,
        by: id.clone(),
        outcome,
        objections: objections.to_vec(),
    });
    let round = rules::rounds_on(fm, t);
    let from = fm.phase;
    let to = rules::phase_after(fm, t, outcome);
    set_phase(fm, ctx, to);
    touch(fm, ctx, Some(Status::Idle));
    let mut text =
        format!("Dissent round {round} of {MAX_ROUNDS} on {noun_lc} {unit} {counter}: {outcome}.");
    if !objections.is_empty() {
        text.push_str(&format!(" Blocking objections: {}.", objections.join(", ")));
    }
    let advisory: Vec<String> = fm
        .ledger
        .of_gate(t)
        .filter(|o| o.by == id && o.severity == crate::board::ledger::Severity::Advisory)
        .map(|o| o.id.clone())
        .collect();
    if !advisory.is_empty() {
        text.push_str(&format!(" Advisory notes: {}.", advisory.join(", ")));
    }
    if !note.trim().is_empty() {
        text.push_str(&format!("\n\n{}", note.trim_end()));
    }
    Ok(Edit {
        command: Command::Dissent,
        summary: format!(
            "{id}: dissent {outcome} on {noun_lc} {unit} {counter} (dissent round {round} of \
             {MAX_ROUNDS}): {from} → {to}"
        ),
        entries: vec![Entry::new(
            artifact_section(t, true),
            format!(
                "{DISSENT} — {noun_lc} {unit} {counter} — {id} — {outcome} — {}",
                ctx.now
            ),
            text,
        )],
    })
}
