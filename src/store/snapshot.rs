//! One version of one board, read once: everything a command answers or edits is derived from
//! a [`Snapshot`], and a write commits on the snapshot it started from ([`super::update_on`]).
//!
//! A file board is opened once and read to the depth the command needs (its frontmatter for a
//! plain `poll`, the whole board otherwise); the open file is kept, so a write that finds the
//! same file under its lock (same device, inode, size and times) edits these bytes without
//! opening the board again. A git board is read at one commit: the remote's tip (one
//! `ls-remote`, a fetch only when the tip moved, one `cat-file`), or for a write that derives
//! nothing from the board first, the tip the cache last saw, which the push's lease checks.

use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::location::Location;
use super::{Current, Loaded, Session};
use crate::error::{Error, Result};
use crate::law::validate::{self, Valid};

/// How much of a board a command reads, and what for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The frontmatter only (a file board is read up to its closing `---`; a git board whole).
    Head,
    /// The whole board, to answer from.
    Whole,
    /// The whole board, to edit: a git board is read with its previous version (the journal's
    /// history check) at the tip the cache last saw, or at the remote's tip when `fresh` (the
    /// command derives something from the board before its write: a pin judged, a diff read).
    Edit { fresh: bool },
}

/// Which file a file board's snapshot read, and its version: device, inode, size and the
/// modification and change times to the nanosecond. An edit in place changes the times; a
/// file saved over the board (every write of `pair` renames a new file into place) is another
/// inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    pub(super) fn of(m: &fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// The stamp of what is at `path` now (not following a symlink).
    pub(super) fn at(path: &Path) -> Option<Stamp> {
        fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.file_type().is_file())
            .map(|m| Stamp::of(&m))
    }
}

/// Where a snapshot's bytes came from.
pub(super) enum At {
    /// A file, kept open: its inode cannot be reused while the snapshot lives.
    File { file: File, meta: fs::Metadata },
    /// No file, where a write is about to lock it: a writer killed while creating it may have
    /// left a temporary file, which only a write under the lock may remove, and the write
    /// reports the board missing after that.
    Absent,
    /// A git board at a commit of its ref.
    Git {
        cache: super::gitref::remote::Cache,
        tip: String,
        /// Read at the remote's tip (not the cache's, which may be behind).
        fresh: bool,
    },
}

/// One version of one board, read once.
pub struct Snapshot {
    path: PathBuf,
    depth: Depth,
    /// The bytes read (up to the frontmatter's end for [`Depth::Head`] on a file), with what
    /// the store knows of the board's history beside them.
    current: Current,
    /// The head read stopped at its limit before the frontmatter was closed.
    cut: bool,
    pub(super) at: At,
}

/// The version an answer was derived from, for its JSON: the journal's seal as the
/// frontmatter holds it (records and the hash of the last), and on a git board the commit.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Version {
    pub records: Option<u64>,
    pub head: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// Read one version of the board at `path`, to `depth`.
pub fn snapshot(path: &Path, depth: Depth, s: &Session) -> Result<Snapshot> {
    let snap = match Location::of(path)? {
        Location::Local(_) => {
            let (file, meta) = match super::file::open_board_meta(path) {
                Err(Error::Missing { .. })
                    if matches!(depth, Depth::Edit { .. })
                        && super::file::resolve(path)
                            .is_ok_and(|t| super::lock_path(&t).exists()) =>
                {
                    return Ok(Snapshot {
                        path: path.to_path_buf(),
                        depth,
                        current: Current::new(Vec::new(), Vec::new()),
                        cut: false,
                        at: At::Absent,
                    });
                }
                opened => opened?,
            };
            let mut file = file;
            let (bytes, cut) = match depth {
                Depth::Head => super::file::read_head_cut(&mut file, path)?,
                _ => (
                    super::file::read_bounded(path, &mut file, meta.len())?,
                    false,
                ),
            };
            Snapshot {
                path: path.to_path_buf(),
                depth,
                current: Current::new(bytes, Vec::new()),
                cut,
                at: At::File { file, meta },
            }
        }
        Location::Git(g) => {
            let read = super::gitref::snapshot(&g, path, depth, s)?;
            Snapshot {
                path: path.to_path_buf(),
                depth,
                current: read.current,
                cut: false,
                at: At::Git {
                    cache: read.cache,
                    tip: read.tip,
                    fresh: read.fresh,
                },
            }
        }
    };
    s.read(&snap.current.bytes);
    Ok(snap)
}

/// A [`Depth::Head`] snapshot of the file at `path` for a directory walk, which asks of each
/// Markdown file whether it is a blackboard and reads the frontmatter of those that are from the
/// same bytes: one open and one read of each file. Unlike [`snapshot`], a file over the size
/// limit is not refused and its format not noted until [`Snapshot::walked_frontmatter`] is
/// asked: a file that is no blackboard is never judged.
pub fn peek(path: &Path) -> Result<Snapshot> {
    let (mut file, meta) = super::file::open_regular_meta(path)?;
    let (bytes, cut) = super::file::read_head_cut(&mut file, path)?;
    Ok(Snapshot {
        path: path.to_path_buf(),
        depth: Depth::Head,
        current: Current::new(bytes, Vec::new()),
        cut,
        at: At::File { file, meta },
    })
}

impl Snapshot {
    /// The board's address, as the command was given it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes read: the whole board, or for [`Depth::Head`] on a file, up to the end of its
    /// frontmatter.
    pub fn bytes(&self) -> &[u8] {
        &self.current.bytes
    }

    /// Whether the whole board was read.
    pub fn is_whole(&self) -> bool {
        self.depth != Depth::Head || matches!(self.at, At::Git { .. })
    }

    /// The commit a git board was read at.
    pub fn commit(&self) -> Option<&str> {
        match &self.at {
            At::Git { tip, .. } => Some(tip),
            At::File { .. } | At::Absent => None,
        }
    }

    /// Whether this is a review-only board: a line of its frontmatter starts with the review's
    /// key. Read from the head, without parsing it.
    pub fn is_review(&self) -> bool {
        let bytes = self.bytes();
        let end = crate::board::document::frontmatter_end(bytes).unwrap_or(bytes.len());
        let key = format!("\n{}:", crate::board::debate::KEY);
        memchr::memmem::find(&bytes[..end], key.as_bytes()).is_some()
    }

    /// Whether the file this snapshot read is still the board at its path, unchanged (its
    /// identity, size and times); a git board's snapshot says yes (its next read asks the
    /// remote).
    pub fn unchanged(&self) -> bool {
        match &self.at {
            At::File { meta, .. } => {
                fs::metadata(&self.path).is_ok_and(|now| Stamp::of(&now) == Stamp::of(meta))
            }
            At::Git { .. } => true,
            At::Absent => false,
        }
    }

    /// The frontmatter, parsed and checked.
    pub fn frontmatter(&self) -> Result<Valid> {
        self.present()?;
        validate::check_frontmatter_bytes(self.bytes()).map_err(|mut r| {
            // The read stopped at its limit with no closing delimiter in sight (the only error
            // the splitter can then find): "not closed" may only mean "closed further on", so
            // say what is certain.
            if self.cut {
                r.errors = vec![super::file::head_cut_error()];
            }
            Error::invalid(&self.path, r.errors, false)
        })
    }

    /// The frontmatter of a snapshot [`peek`] took, as [`super::load_frontmatter`] reads it
    /// (the same answer, the same errors): a file over the size limit refused, its format noted
    /// in `s`, then parsed and checked.
    pub fn walked_frontmatter(&self, s: &Session) -> Result<Valid> {
        if let At::File { meta, .. } = &self.at
            && meta.len() > crate::law::validate::MAX_BOARD_BYTES
        {
            return Err(super::file::too_large(&self.path, meta.len()));
        }
        s.read(self.bytes());
        self.frontmatter()
    }

    /// The metadata of the file read, taken when it was opened (a file board).
    pub fn file_meta(&self) -> Option<&fs::Metadata> {
        match &self.at {
            At::File { meta, .. } => Some(meta),
            At::Absent | At::Git { .. } => None,
        }
    }

    /// The whole board, parsed and checked.
    pub fn load(&self) -> Result<Loaded> {
        self.whole()?;
        let valid = validate::check_bytes(self.bytes())
            .map_err(|r| Error::invalid(&self.path, r.errors, false))?;
        Ok(Loaded {
            path: self.path.clone(),
            sha256: self.sha256()?,
            bytes: self.current.bytes.clone(),
            valid,
        })
    }

    /// [`Snapshot::load`] for a write that derives something from the board before its edit:
    /// where no board was found beside a lock file, the write takes the lock all the same (a
    /// writer killed while creating the board may have left a temporary file, which only a
    /// writer under the lock removes) and reports the board missing.
    pub fn load_to_edit(&self) -> Result<Loaded> {
        if matches!(self.at, At::Absent) {
            return Err(super::missing_under_lock(&self.path));
        }
        self.load()
    }

    /// The SHA-256 of the whole board (hex). A reader's plain hash: a write's, which also tells
    /// whether the board is as its last record left it, is the store's.
    pub fn sha256(&self) -> Result<String> {
        self.whole()?;
        Ok(crate::text::sha256_hex(self.bytes()))
    }

    /// Refuse to answer from a board that is not there.
    fn present(&self) -> Result<()> {
        match self.at {
            At::Absent => Err(Error::Missing {
                path: self.path.clone(),
            }),
            _ => Ok(()),
        }
    }

    fn whole(&self) -> Result<()> {
        self.present()?;
        if self.is_whole() {
            Ok(())
        } else {
            Err(Error::protocol(
                "internal error: the board was read to the end of its frontmatter only",
            ))
        }
    }

    /// The version this snapshot is, from its frontmatter (`fm`, parsed from it).
    pub fn version(&self, fm: &crate::board::frontmatter::Frontmatter) -> Version {
        Version {
            records: fm.journal.as_ref().map(|j| j.records),
            head: fm.journal.as_ref().map(|j| j.head.clone()),
            commit: self.commit().map(str::to_string),
        }
    }

    /// The board as a write finds it: the bytes and what the store knows of their history.
    pub(super) fn into_parts(self) -> (PathBuf, Current, At) {
        (self.path, self.current, self.at)
    }

    /// The bytes read, for a caller that needs nothing else.
    pub fn into_bytes(self) -> Vec<u8> {
        self.current.bytes
    }
}
