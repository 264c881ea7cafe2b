//! A board's journal read record by record: what `log` and `stats` read, however long the
//! history. A file board is read one line at a time from one open descriptor, so the reader
//! holds its frontmatter, one line and one record, never the board; a git board's blob is read
//! whole (as every read of a git board is) and walked the same way.
//!
//! The board is checked as it is read, as [`crate::law::validate::check_bytes`] checks it whole:
//! the frontmatter (its split, types and invariants), each line of the body (UTF-8, no conflict
//! marker), and at its end no code fence, HTML comment or `<details>` element left open; every
//! journal record must parse. A reader that wants nothing printed of a board that fails reads it
//! through once ([`History::check`]) and then again from the start ([`History::rewind`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::board::document::{BodyScan, LineKind, Section, SplitError};
use crate::board::frontmatter::Parsed;
use crate::board::journal::{self, Record};
use crate::error::{Error, FieldError, Result};
use crate::law::validate;
use crate::store::Session;
use crate::store::location::Location;

/// Where the lines come from.
enum Source {
    File(BufReader<File>),
    Bytes(Cursor<Vec<u8>>),
}

impl Source {
    fn reader(&mut self) -> &mut dyn BufRead {
        match self {
            Source::File(r) => r,
            Source::Bytes(c) => c,
        }
    }

    fn seek(&mut self, to: u64) -> std::io::Result<()> {
        match self {
            Source::File(r) => r.seek(SeekFrom::Start(to)).map(|_| ()),
            Source::Bytes(c) => {
                c.set_position(to);
                Ok(())
            }
        }
    }
}

/// Where the reader is in the body.
#[derive(Default)]
struct Walk {
    scan: BodyScan,
    /// The file line of the line last read.
    line: u32,
    /// In the journal section (the first `## Journal`).
    in_journal: bool,
    /// The journal section was met and has ended.
    journal_done: bool,
    /// The whole body was read and checked.
    ended: bool,
}

/// A board's journal, read one record at a time.
pub struct History {
    path: PathBuf,
    source: Source,
    /// The frontmatter, checked.
    pub parsed: Parsed,
    /// Where the body starts: its byte offset and its file line.
    body_offset: u64,
    body_first_line: u32,
    walk: Walk,
    buf: Vec<u8>,
}

/// Open a board's history: the frontmatter is read and checked now, the body as the records
/// are asked for.
pub fn history(path: &Path, s: &Session) -> Result<History> {
    let mut source = match Location::of(path)? {
        Location::Local(_) => Source::File(BufReader::with_capacity(
            64 * 1024,
            super::file::open_board(path)?,
        )),
        Location::Git(_) => Source::Bytes(Cursor::new(super::read(path, s)?)),
    };
    let (head, cut) = read_head(path, source.reader())?;
    let valid = validate::check_frontmatter_bytes(&head).map_err(|mut r| {
        if cut {
            r.errors = vec![super::file::head_cut_error()];
        }
        Error::invalid(path, r.errors, false)
    })?;
    s.saw_format(valid.parsed.fm.format);
    Ok(History {
        path: path.to_path_buf(),
        source,
        parsed: valid.parsed,
        body_offset: head.len() as u64,
        body_first_line: valid.doc.body_first_line,
        walk: Walk {
            line: valid.doc.body_first_line - 1,
            ..Walk::default()
        },
        buf: Vec::new(),
    })
}

/// The lines of a board up to and with its closing delimiter (or as far as the first line when
/// that is not a delimiter, or [`super::file::HEAD_LIMIT`] bytes), and whether the limit cut it.
fn read_head(path: &Path, r: &mut dyn BufRead) -> Result<(Vec<u8>, bool)> {
    let mut head = Vec::with_capacity(8192);
    let mut first = true;
    loop {
        let start = head.len();
        let n = r
            .read_until(b'\n', &mut head)
            .map_err(|e| Error::io(path, "read the blackboard", e))?;
        if n == 0 {
            return Ok((head, false));
        }
        let line = &head[start..];
        let text = line
            .strip_prefix(crate::board::document::BOM.as_bytes())
            .unwrap_or(line);
        let delimiter = crate::board::document::is_delimiter_line(text);
        if first != delimiter {
            // Not a blackboard (the parser says so), or the end of the frontmatter.
            return Ok((head, false));
        }
        first = false;
        if head.len() > super::file::HEAD_LIMIT {
            return Ok((head, true));
        }
    }
}

impl History {
    fn invalid(&self, error: FieldError) -> Error {
        Error::invalid(&self.path, vec![error], false)
    }

    /// The next record of the journal, checking every line read on the way; `None` once the
    /// whole board was read and checked.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        while !self.walk.ended {
            self.buf.clear();
            let n = self
                .source
                .reader()
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::io(&self.path, "read the blackboard", e))?;
            if n == 0 {
                self.walk.ended = true;
                let unclosed = self.walk.scan.unclosed();
                if let Some(e) = validate::unclosed_error(unclosed, self.body_first_line) {
                    return Err(self.invalid(e));
                }
                return Ok(None);
            }
            self.walk.line += 1;
            let number = self.walk.line;
            let Ok(line) = std::str::from_utf8(&self.buf) else {
                let e = SplitError::NotUtf8 {
                    line: number,
                    part: "body",
                };
                return Err(self.invalid(validate::split_error(&e)));
            };
            if matches!(line.as_bytes().first(), Some(b'<' | b'=' | b'>'))
                && let Some(marker) = crate::board::document::conflict_marker(line)
            {
                let e = SplitError::ConflictMarkers {
                    line: number,
                    marker: marker.to_string(),
                };
                return Err(Error::invalid(
                    &self.path,
                    vec![validate::split_error(&e)],
                    false,
                ));
            }
            match self.walk.scan.line(line) {
                LineKind::Heading(level) if level <= 2 => {
                    if self.walk.in_journal {
                        self.walk.in_journal = false;
                        self.walk.journal_done = true;
                    } else if level == 2
                        && !self.walk.journal_done
                        && Section::name_of(line) == journal::SECTION
                    {
                        self.walk.in_journal = true;
                    }
                }
                _ if self.walk.in_journal => {
                    let text = line.trim_end_matches(['\n', '\r']);
                    if !text.trim().is_empty() {
                        return journal::parse_line(text, number)
                            .map(Some)
                            .map_err(|e| self.invalid(e));
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// Read the whole board, checking it; how many records its journal holds, and how many of
    /// them `keep` keeps.
    pub fn check(&mut self, keep: &dyn Fn(&Record) -> bool) -> Result<(usize, usize)> {
        let (mut total, mut kept) = (0, 0);
        while let Some(r) = self.next_record()? {
            total += 1;
            if keep(&r) {
                kept += 1;
            }
        }
        Ok((total, kept))
    }

    /// Start again at the beginning of the body, from the same open file.
    pub fn rewind(&mut self) -> Result<()> {
        self.source
            .seek(self.body_offset)
            .map_err(|e| Error::io(&self.path, "read the blackboard", e))?;
        self.walk = Walk {
            line: self.body_first_line - 1,
            ..Walk::default()
        };
        Ok(())
    }
}
