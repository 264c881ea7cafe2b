//! `pair migrate FROM TO`: copy a blackboard between a file and a git board, byte for byte;
//! `pair migrate BOARD`: upgrade a board to the newest format this `pair` writes.

use serde_json::json;

use super::{Outcome, shown};
use crate::board::entry::DECISIONS;
use crate::board::format::{self, SIGNED, UNSIGNED};
use crate::board::frontmatter::Timestamp;
use crate::cli::migrate::MigrateArgs;
use crate::error::{Error, Result};
use crate::law::validate;
use crate::ops::Entry;
use crate::render::output;
use crate::render::report::SCHEMA;
use crate::store::Session;
use crate::store::location::Location;
use crate::store::{self, Built, Expect, WriteOptions};

/// Copy the board: read it whole, check it is a valid blackboard, and create the copy
/// (never clobbering). Nothing is added to the copy, not even a journal record, so its bytes
/// and SHA-256 are the original's.
pub fn run(a: MigrateArgs, s: &Session) -> Result<Outcome> {
    let Some(to_path) = a.to.clone() else {
        return upgrade(&a, s);
    };
    let (from, to) = (Location::of(&a.from)?, Location::of(&to_path)?);
    if from == to {
        return Err(Error::Usage(format!(
            "FROM and TO are the same blackboard ({}); name a git board and a file",
            output::path(&a.from)
        )));
    }
    let bytes = store::snapshot(&a.from, store::Depth::Whole, s)?.into_bytes();
    let opts = options(a.timeout)?;
    store::create_copy(&to_path, &bytes, &opts, s)?;
    let sha256 = crate::text::sha256_hex(&bytes);
    let json = json!({
        "schema": SCHEMA,
        "from": shown(&a.from),
        "to": shown(&to_path),
        "sha256": sha256,
        "size": bytes.len(),
    });
    let text = format!(
        "copied {} to {} ({} bytes, sha256 {sha256})\n",
        output::path(&a.from),
        output::path(&to_path),
        bytes.len()
    );
    Ok(Outcome::ok(json, text))
}

/// Upgrade a board in place to [`UNSIGNED`] (with `--signed`, to [`SIGNED`]): one recorded write (a Decisions entry and a
/// journal record) that sets `format`, on a board `validate` accepts; on a board of format 2 and
/// later the write also seals the journal as it stands. A board already of the newest format is
/// left as it is.
fn upgrade(a: &MigrateArgs, s: &Session) -> Result<Outcome> {
    let board = &a.from;
    let target = if a.signed { SIGNED } else { UNSIGNED };
    let found =
        format::declared(&store::snapshot(board, store::Depth::Head, s)?.into_bytes()).unwrap_or(1);
    let unchanged = |found: u32| {
        let json = json!({
            "schema": SCHEMA,
            "path": shown(board),
            "from_format": found,
            "to_format": found,
            "upgraded": false,
            "old_sha256": null,
            "new_sha256": null,
        });
        let text = format!(
            "{} is already format {found}{}: nothing was written\n",
            output::path(board),
            if a.signed {
                ""
            } else {
                ", the newest unsigned format (--signed turns it signed)"
            }
        );
        Outcome::ok(json, text)
    };
    if found >= target {
        return Ok(unchanged(found));
    }
    let mut opts = options(a.timeout)?;
    opts.agent = a.agent.clone();
    let mut from_format = found;
    let written = store::update(board, Expect::Present, &opts, s, |current| {
        let Some(current) = current else {
            return Err(Error::Missing {
                path: board.to_path_buf(),
            });
        };
        // A board `validate` rejects is repaired first: sealing it would seal what is wrong.
        let valid = validate::check_found(&current.bytes)
            .map_err(|r| Error::invalid(board, r.errors, false))?;
        let old = valid.parsed.fm;
        from_format = format::of(&old);
        if from_format >= target {
            return Err(Error::Usage(format!(
                "{} became format {from_format} meanwhile; nothing to upgrade",
                output::path(board)
            )));
        }
        let mut new = old.clone();
        new.format = Some(target);
        new.journal = None;
        let rendered = crate::board::rewrite::render(&valid.doc.fm_text, &old, &new);
        let bytes = valid.doc.into_rendered(&rendered.text).into_bytes();
        let now = Timestamp::now();
        let what = if target >= SIGNED {
            "From this write on every record carries its writer's SSH signature of the board it \
             leaves (`sig=`), checked against the trust root (an allowed-signers file), and the \
             journal is sealed in the frontmatter"
        } else {
            "From this write on every write seals the journal in the frontmatter (`journal`: how \
             many records it holds and a digest of the last one), so that a record removed or \
             added outside pair is an error"
        };
        let bytes = crate::transaction::append_records(
            board,
            &bytes,
            [Entry::new(
                DECISIONS,
                format!("Format upgrade — pair migrate — {now}"),
                format!(
                    "The board was upgraded from format {from_format} to format {target} \
                     (`pair migrate`). {what}; a pair that knows only format {from_format} \
                     reads the board but no longer writes it."
                ),
            )],
        )?;
        Ok(Built::from(bytes))
    })?;
    let json = json!({
        "schema": SCHEMA,
        "path": shown(board),
        "from_format": from_format,
        "to_format": target,
        "upgraded": true,
        "old_sha256": written.old_sha256,
        "new_sha256": written.new_sha256,
    });
    let text = format!(
        "upgraded {} from format {from_format} to format {target} (sha256 {})\n",
        output::path(board),
        written.new_sha256
    );
    Ok(Outcome::ok(json, text))
}

/// How `migrate` writes, copying or upgrading: a recorded `migrate` by nobody in particular.
fn options(seconds: f64) -> Result<WriteOptions> {
    super::write_options("migrate", seconds, None, Default::default())
}
