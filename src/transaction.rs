//! One transaction: every change to a blackboard, semantic or raw, is one pass through here.
//!
//! A [`Transaction`] starts from the snapshot the command read; under the
//! store's lock (or at the leased tip of a git board) it parses that board once, takes the time
//! (so every entry's timestamp is the moment of the write, never of the wait for the lock), lets
//! the command edit a typed board, asks the [`law`] whether the change is allowed, appends the
//! command's entries and the records the law requires, renders, and hands the new bytes to the
//! store's durable replace. Commands never see bytes.
//!
//! [`apply`] and [`replace`] are the pure cores (old bytes in, new bytes out) that a
//! [`Transaction`] and `pair write` run under the lock; tests call them directly to replay lifecycles in memory.

use std::path::Path;

use crate::board::document::Document;
use crate::board::entry::DECISIONS;
use crate::board::frontmatter::{Frontmatter, Parsed, Phase, Timestamp};
use crate::board::journal::Origin;
use crate::error::{Error, Result};
use crate::law::validate;
use crate::law::{self, Body, Consent, Record, Writer};
use crate::ops::{Ctx, Edit, Entry};
use crate::store::{self, Built, Expect, WriteOptions, Written};

/// The result of an applied change, before it is written.
#[derive(Debug, Clone)]
pub struct Applied {
    pub bytes: Vec<u8>,
    pub parsed: Parsed,
    pub old_phase: Phase,
    /// The frontmatter of the board found.
    pub old: Frontmatter,
    pub summary: String,
    /// Hand comments of the frontmatter that the write could not keep.
    pub warnings: Vec<String>,
}

/// A committed semantic write.
#[derive(Debug, Clone)]
pub struct Committed {
    pub written: Written,
    pub old_phase: Phase,
    pub summary: String,
    /// As [`Applied::warnings`].
    pub warnings: Vec<String>,
}

fn invalid(path: &Path, errors: Vec<crate::error::FieldError>, new_content: bool) -> Error {
    Error::invalid(path, errors, new_content)
}

/// Content about to be written that cannot even be split into frontmatter and body.
pub fn unsplittable(path: &Path, field: &str, e: &crate::board::document::SplitError) -> Error {
    let error = crate::error::FieldError {
        field: field.into(),
        line: None,
        message: e.to_string(),
    };
    invalid(path, vec![error], true)
}

/// The board a write found: bytes its caller read, or the store's [`store::Current`], which can
/// tell whether they are exactly what the last recorded write left (and so need no second
/// check of their journal: [`validate::check_found_as`]).
#[derive(Debug, Clone, Copy)]
pub enum Found<'a> {
    Bytes(&'a [u8]),
    Current(&'a store::Current),
}

impl<'a> From<&'a [u8]> for Found<'a> {
    fn from(bytes: &'a [u8]) -> Found<'a> {
        Found::Bytes(bytes)
    }
}

impl<'a> From<&'a store::Current> for Found<'a> {
    fn from(current: &'a store::Current) -> Found<'a> {
        Found::Current(current)
    }
}

impl Found<'_> {
    /// Every check `validate` makes of the board found ([`validate::check_found`]).
    fn check(self) -> std::result::Result<validate::Valid, validate::Report> {
        match self {
            Found::Bytes(bytes) => validate::check_found(bytes),
            Found::Current(c) => validate::check_found_as(&c.bytes, || c.as_recorded()),
        }
    }
}

/// Append an entry, or refuse when its section cannot be found or made.
fn append(doc: &mut Document, section: &str, text: &str) -> Result<()> {
    if doc.append(section, text) {
        Ok(())
    } else {
        Err(Error::protocol(format!(
            "cannot append to section {section:?}: the name cannot be used as a `## ` heading, or \
             the body hides it (run `pair validate` on the blackboard)"
        )))
    }
}

fn record_entry(r: Record) -> Entry {
    Entry::new(DECISIONS, r.heading, r.text)
}

/// Apply a semantic operation to the content of a blackboard: parse once, edit the typed board,
/// judge the change, append the entries, render, and check the new frontmatter. The old board
/// must pass every check `validate` makes ([`validate::check_found`]: no write proceeds on a
/// board it rejects); the body needs no second check: it was valid, and only checked entries
/// were appended to it.
pub fn apply<F>(
    path: &Path,
    old: &[u8],
    agent: &str,
    consent: &Consent,
    origin: &Origin,
    now: Timestamp,
    op: F,
) -> Result<Applied>
where
    F: FnOnce(&mut Frontmatter, &Ctx) -> Result<Edit>,
{
    apply_with(
        path,
        old.into(),
        agent,
        consent,
        origin,
        now,
        &|_| Vec::new(),
        op,
    )
}

/// [`apply`], with what reads the boards the board waits for ([`Waits`]).
#[allow(clippy::too_many_arguments)]
pub fn apply_with<F>(
    path: &Path,
    old: Found<'_>,
    agent: &str,
    consent: &Consent,
    origin: &Origin,
    now: Timestamp,
    waits: Waits<'_>,
    op: F,
) -> Result<Applied>
where
    F: FnOnce(&mut Frontmatter, &Ctx) -> Result<Edit>,
{
    let valid = old.check().map_err(|r| invalid(path, r.errors, false))?;
    let mut doc = valid.doc;
    let old_fm = valid.parsed.fm;
    let mut fm = old_fm.clone();
    let ctx = Ctx {
        agent: agent.to_string(),
        now,
        consent: consent.clone(),
        sections: doc.sections().into_iter().map(|s| s.name).collect(),
    };
    let edit = op(&mut fm, &ctx)?;
    // The gates' bookkeeping follows the phase change the edit made.
    crate::law::ledger::settle(&old_fm, &mut fm);
    let ruling = law::judge(
        &old_fm,
        &fm,
        Body::Appended,
        Writer::Agent(agent),
        consent,
        now,
    )?;
    if let Some(e) = edit
        .entries
        .iter()
        .find_map(|e| validate::entry_too_large(&e.section, e.text.len()))
    {
        return Err(invalid(path, vec![e], true));
    }
    independent(&old_fm, &fm, agent, origin, &doc)?;
    gate(&old_fm, &ruling, agent, waits)?;
    // The law's records (a passed gate, a waiver) come before the step they allowed.
    for e in ruling
        .records
        .into_iter()
        .map(record_entry)
        .chain(edit.entries)
    {
        append(&mut doc, &e.section, &e.render())?;
    }
    // The frontmatter in the file's own words: hand comments and unchanged spellings kept.
    let rendered = crate::board::rewrite::render(&doc.fm_text, &old_fm, &fm);
    let bytes = doc.into_rendered(&rendered.text).into_bytes();
    let head = Document::parse_frontmatter_only(&bytes)
        .map_err(|e| unsplittable(path, "frontmatter", &e))?;
    let parsed = validate::check_frontmatter(&head).map_err(|r| invalid(path, r.errors, true))?;
    Ok(Applied {
        bytes,
        parsed,
        old_phase: old_fm.phase,
        old: old_fm,
        summary: edit.summary,
        warnings: rendered.dropped,
    })
}

/// The board's independence policy on an agent's write ([`law::independence`]): the author of
/// a gate's artifact is read from the old board's journal only when a verdict needs it.
fn independent(
    old: &Frontmatter,
    new: &Frontmatter,
    agent: &str,
    origin: &Origin,
    doc: &Document,
) -> Result<()> {
    law::independence::judge(old, new, agent, origin.session.as_deref(), |t| {
        let records = crate::board::journal::records(doc).ok()?;
        law::independence::authors(&records).remove(&t).flatten()
    })
}

/// What reads the boards a board waits for ([`crate::store::depend::read`]), asked only when a
/// write takes a step a waiting board refuses.
pub type Waits<'a> = &'a dyn Fn(&Frontmatter) -> Vec<crate::law::depend::Dep>;

/// A board's dependencies on a write ([`law::depend`]): a gated step is refused while any
/// board it waits for is not released.
fn gate(old: &Frontmatter, ruling: &law::Ruling, agent: &str, waits: Waits<'_>) -> Result<()> {
    match ruling.transition {
        Some(t) if !old.dependencies().is_empty() => {
            law::depend::judge(t.command.name(), old.phase, agent, || waits(old))
        }
        _ => Ok(()),
    }
}

/// How a raw write is judged.
#[derive(Debug, Clone)]
pub enum RawMode {
    /// Nobody named: only appends to the body.
    Anonymous,
    /// As an agent: the law, with this consent.
    As(String),
}

/// Judge a raw write of a complete new file against the old one; the new content, with the
/// records the law requires appended to its `## Decisions`, and its checked frontmatter. The old
/// board must pass every check `validate` makes, the new content [`validate::check_content`].
pub fn replace(
    path: &Path,
    old: &[u8],
    new: Vec<u8>,
    mode: &RawMode,
    consent: &Consent,
    origin: &Origin,
    now: Timestamp,
) -> Result<Built> {
    replace_with(path, old.into(), new, mode, consent, origin, now, &|_| {
        Vec::new()
    })
}

/// [`replace`], with what reads the boards the board waits for ([`Waits`]).
#[allow(clippy::too_many_arguments)]
pub fn replace_with(
    path: &Path,
    old: Found<'_>,
    new: Vec<u8>,
    mode: &RawMode,
    consent: &Consent,
    origin: &Origin,
    now: Timestamp,
    waits: Waits<'_>,
) -> Result<Built> {
    let old = old.check().map_err(|r| invalid(path, r.errors, false))?;
    let parsed = validate::check_bytes(&new).map_err(|r| invalid(path, r.errors, true))?;
    let writer = match mode {
        RawMode::Anonymous => Writer::Anonymous,
        RawMode::As(id) => Writer::Agent(id),
    };
    let ruling = law::judge(
        &old.parsed.fm,
        &parsed.parsed.fm,
        Body::Replaced {
            old: &old.doc.body,
            new: &parsed.doc.body,
        },
        writer,
        consent,
        now,
    )?;
    if let RawMode::As(id) = mode {
        independent(&old.parsed.fm, &parsed.parsed.fm, id, origin, &old.doc)?;
        gate(&old.parsed.fm, &ruling, id, waits)?;
    }
    // What the law allowed must also tell one story, body and frontmatter (the law's refusal,
    // when there is one, is the better answer, so it is asked first).
    let parsed =
        validate::check_rest_of_content(parsed).map_err(|r| invalid(path, r.errors, true))?;
    // The new content was validated above, and the records append generated entries to its body
    // without touching its frontmatter: the store need not check it again.
    let parsed = Some(parsed.parsed);
    let old = Some(old.parsed.fm);
    if ruling.records.is_empty() {
        return Ok(Built {
            bytes: new,
            parsed,
            old,
        });
    }
    let bytes = append_records(path, &new, ruling.records.into_iter().map(record_entry))?;
    Ok(Built { bytes, parsed, old })
}

/// Append entries to the `## Decisions` of content about to be written, keeping its frontmatter
/// text, line endings and BOM as they are.
pub fn append_records(
    path: &Path,
    content: &[u8],
    entries: impl IntoIterator<Item = Entry>,
) -> Result<Vec<u8>> {
    let mut doc = Document::parse(content).map_err(|e| unsplittable(path, "file", &e))?;
    for e in entries {
        if !doc.append(&e.section, &e.render()) {
            return Err(Error::Usage(format!(
                "the new content has no usable `## {}` section to record this in",
                e.section
            )));
        }
    }
    let fm_text = doc.fm_text.replace("\r\n", "\n");
    Ok(doc.render(&fm_text).into_bytes())
}

/// One write of one agent, opened on the snapshot its command read: the edit is made on the
/// snapshot's typed board, judged by the law, rendered and committed once with the
/// description of [`WriteOptions`] — one replace under the lock, or one push with a lease that
/// carries any published artifacts in the same atomic push — without reading the board again
/// while it is unchanged. When another write moved the board first, the edit runs again on the
/// board as that write left it; with [`Expect::Sha256`] it is refused as stale instead.
pub struct Transaction<'s> {
    snap: store::Snapshot,
    agent: String,
    consent: Consent,
    expect: Expect,
    session: &'s store::Session,
}

impl<'s> Transaction<'s> {
    /// A transaction of `agent`, with the user's `consent`, on the board `snap` read.
    pub fn open(
        snap: store::Snapshot,
        agent: &str,
        consent: Consent,
        session: &'s store::Session,
    ) -> Transaction<'s> {
        Transaction {
            snap,
            agent: agent.to_string(),
            consent,
            expect: Expect::Present,
            session,
        }
    }

    /// What the write expects to find: a board with this SHA-256 (a compare-and-swap), or any.
    pub fn expect(mut self, expect: Expect) -> Transaction<'s> {
        self.expect = expect;
        self
    }

    /// Make the edit `op`, judge it and commit it once.
    pub fn commit<F>(self, opts: &WriteOptions, mut op: F) -> Result<Committed>
    where
        F: FnMut(&mut Frontmatter, &Ctx) -> Result<Edit>,
    {
        let Transaction {
            snap,
            agent,
            consent,
            expect,
            session: s,
        } = self;
        let path = &snap.path().to_path_buf();
        let mut outcome = None;
        let written = store::update_on(snap, expect, opts, s, |current| {
            let Some(current) = current else {
                return Err(Error::Missing {
                    path: path.to_path_buf(),
                });
            };
            let applied = apply_with(
                path,
                current.into(),
                &agent,
                &consent,
                s.origin(),
                Timestamp::now(),
                &|fm| store::depend::read(path, fm),
                &mut op,
            )?;
            outcome = Some((applied.old_phase, applied.summary, applied.warnings));
            Ok(Built {
                bytes: applied.bytes,
                parsed: Some(applied.parsed),
                old: Some(applied.old),
            })
        })?;
        let (old_phase, summary, warnings) =
            outcome.ok_or_else(|| Error::protocol("internal error: no edit"))?;
        Ok(Committed {
            written,
            old_phase,
            summary,
            warnings,
        })
    }
}
