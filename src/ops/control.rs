//! Anyone's moves: blocking, unblocking, stopping, and notes.

use super::{Ctx, Edit, Entry, admit, checked_note, set_phase, touch};
use crate::board::document::{SECTION_ORDER, valid_section_name};
use crate::board::entry::DECISIONS;
use crate::board::frontmatter::{Frontmatter, Phase, Status};
use crate::error::{Error, Result};
use crate::law::protocol::Command;

fn reason_text(reason: &str) -> Result<String> {
    let r = reason.trim();
    if r.is_empty() {
        return Err(Error::Usage("--reason must not be empty".into()));
    }
    checked_note(r)
}

/// `block`: any agent stops the work until the doer unblocks it.
pub fn block(fm: &mut Frontmatter, ctx: &Ctx, reason: &str) -> Result<Edit> {
    admit(fm, ctx, Command::Block)?;
    let reason = reason_text(reason)?;
    let from = fm.phase;
    fm.blocked_from = Some(from);
    set_phase(fm, ctx, Phase::Blocked);
    touch(fm, ctx, Some(Status::Blocked));
    Ok(Edit {
        command: Command::Block,
        summary: format!("{from} → BLOCKED"),
        entries: vec![Entry::new(
            DECISIONS,
            format!("Blocked — from {from} — {} — {}", ctx.agent, ctx.now),
            reason,
        )],
    })
}

/// `unblock`: the doer resumes where the work was blocked.
pub fn unblock(fm: &mut Frontmatter, ctx: &Ctx, reason: &str) -> Result<Edit> {
    admit(fm, ctx, Command::Unblock)?;
    let reason = reason_text(reason)?;
    let Some(to) = fm.blocked_from else {
        return Err(Error::protocol(
            "blocked_from is not set; repair the blackboard with `pair write --repair`",
        ));
    };
    fm.blocked_from = None;
    set_phase(fm, ctx, to);
    touch(fm, ctx, Some(Status::Working));
    // The block is over for everyone: whoever it left BLOCKED is no longer.
    for (id, a) in fm.agents.iter_mut() {
        if *id != ctx.agent && a.status == Status::Blocked {
            a.status = crate::law::RESUMED;
        }
    }
    Ok(Edit {
        command: Command::Unblock,
        summary: format!("BLOCKED → {to}"),
        entries: vec![Entry::new(
            DECISIONS,
            format!("Unblocked — back to {to} — {} — {}", ctx.agent, ctx.now),
            reason,
        )],
    })
}

/// `stop`: the user asked to stop; any agent records it.
pub fn stop(fm: &mut Frontmatter, ctx: &Ctx, reason: &str) -> Result<Edit> {
    admit(fm, ctx, Command::Stop)?;
    let reason = reason_text(reason)?;
    let from = fm.phase;
    fm.blocked_from = None;
    set_phase(fm, ctx, Phase::Stopped);
    touch(fm, ctx, Some(Status::Stopped));
    Ok(Edit {
        command: Command::Stop,
        summary: format!("{from} → STOPPED"),
        entries: vec![Entry::new(
            DECISIONS,
            format!("Stopped — from {from} — {} — {}", ctx.agent, ctx.now),
            reason,
        )],
    })
}

/// `note`: append a free entry to a section the template or the body knows.
pub fn note(fm: &mut Frontmatter, ctx: &Ctx, section: &str, text: &str) -> Result<Edit> {
    note_in(fm, ctx, section, text, false)
}

/// `note`, creating a section neither the template nor the body has when `new_section`.
pub fn note_in(
    fm: &mut Frontmatter,
    ctx: &Ctx,
    section: &str,
    text: &str,
    new_section: bool,
) -> Result<Edit> {
    admit(fm, ctx, Command::Note)?;
    let name = section.trim();
    if !valid_section_name(name) {
        return Err(Error::Usage(format!(
            "--section {section:?} is not a usable section name: give a plain name such as \
             Evidence or Validation (no `#`, backticks, tildes or line breaks)"
        )));
    }
    known_section(ctx, name, new_section)?;
    let text = checked_note(text)?;
    touch(fm, ctx, None);
    Ok(Edit {
        command: Command::Note,
        summary: format!("appended a note to {name}"),
        entries: vec![Entry::new(
            name,
            format!("Note — {} — {}", ctx.agent, ctx.now),
            text,
        )],
    })
}

/// A note goes to a section the template or the body has; a new one only with
/// `--new-section`, and never one that differs from a known one only in case.
fn known_section(ctx: &Ctx, name: &str, new_section: bool) -> Result<()> {
    if name == crate::board::journal::SECTION {
        return Err(Error::Usage(format!(
            "--section {name:?}: the journal is written by pair only, one record per write; \
             put the note in another section"
        )));
    }
    let known: Vec<&str> = SECTION_ORDER
        .iter()
        .copied()
        .chain(ctx.sections.iter().map(String::as_str))
        .collect();
    if known.contains(&name) {
        return Ok(());
    }
    if let Some(k) = known.iter().find(|k| k.eq_ignore_ascii_case(name)) {
        return Err(Error::Usage(format!(
            "--section {name:?}: the section is spelled {k:?} (section names match case)"
        )));
    }
    if new_section {
        return Ok(());
    }
    let mut unique: Vec<&str> = Vec::new();
    for k in known {
        if !unique.contains(&k) {
            unique.push(k);
        }
    }
    Err(Error::Usage(
        match crate::board::suggest::closest(name, unique.iter().copied()) {
            Some(k) => format!(
                "--section {name:?} is not a section of this blackboard; did you mean {k:?}? (to \
             create a new section, add --new-section)"
            ),
            None => format!(
                "--section {name:?} is not a section of this blackboard (known: {}); to create a new \
             section, add --new-section",
                unique.join(", ")
            ),
        },
    ))
}
