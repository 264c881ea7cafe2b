//! Reading a blackboard file: opened without blocking, refused when not a regular file or over
//! the size limit, read whole or only as far as its frontmatter. Reads take no lock.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::board::yaml::MAX_FRONTMATTER_BYTES;
use crate::error::FieldError;
use crate::error::{Error, Result};
use crate::law::validate::{MAX_BOARD_BYTES, Valid};

/// Resolve the path a blackboard is really stored at: a symlinked blackboard is written at its
/// target (the link survives) and locked by the target's path.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match fs::canonicalize(path) {
            Ok(target) => Ok(target),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::UnsafePath {
                path: path.to_path_buf(),
                why: "is a symlink whose target does not exist; point it at a blackboard or \
                      remove it"
                    .to_string(),
            }),
            Err(e) => Err(Error::io(path, "resolve the symlink", e)),
        },
        _ => Ok(path.to_path_buf()),
    }
}

pub(crate) use crate::input::kind_of;

/// Open a blackboard for reading without ever blocking (a FIFO opened for reading would wait
/// for a writer) and refuse anything that is not a regular file.
pub(super) fn open_regular(path: &Path) -> Result<File> {
    open_regular_meta(path).map(|(file, _)| file)
}

/// [`open_regular`], with the metadata of the opened file.
pub(super) fn open_regular_meta(path: &Path) -> Result<(File, fs::Metadata)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound
                if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
            {
                Error::UnsafePath {
                    path: path.to_path_buf(),
                    why: "is a symlink whose target does not exist; point it at a blackboard \
                          or remove it"
                        .to_string(),
                }
            }
            io::ErrorKind::NotFound => Error::Missing {
                path: path.to_path_buf(),
            },
            // A socket cannot be opened at all (ENXIO): name what it is, not the errno.
            _ => match fs::metadata(path) {
                Ok(meta) if !meta.file_type().is_file() => Error::NotAFile {
                    path: path.to_path_buf(),
                    kind: kind_of(&meta.file_type()),
                },
                _ => Error::io(path, "open the blackboard", e),
            },
        })?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "stat the blackboard", e))?;
    if !meta.file_type().is_file() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
            kind: kind_of(&meta.file_type()),
        });
    }
    Ok((file, meta))
}

/// [`open_regular`], refusing a file over [`MAX_BOARD_BYTES`]. Checked from the size before a
/// byte is read: reading a huge (or sparse) file whole would exhaust memory long before
/// validation could refuse it.
pub(super) fn open_board(path: &Path) -> Result<File> {
    open_board_meta(path).map(|(file, _)| file)
}

/// [`open_board`], with the metadata of the opened file (taken before a byte is read).
pub(super) fn open_board_meta(path: &Path) -> Result<(File, fs::Metadata)> {
    let (file, meta) = open_regular_meta(path)?;
    if meta.len() > MAX_BOARD_BYTES {
        return Err(too_large(path, meta.len()));
    }
    Ok((file, meta))
}

/// The refusal of a blackboard over [`MAX_BOARD_BYTES`].
pub(super) fn too_large(path: &Path, size: u64) -> Error {
    too_large_content(path, size, false)
}

/// Read the rest of an opened blackboard, refusing it if it grew past the limit since it was
/// opened.
///
/// The buffer is sized from `size_hint` (the size the file was opened at) plus one byte, so that
/// a file that did not change is read by one `read` and its end seen by a second: a generic
/// `read_to_end` reads in chunks that double from 8 KiB (14 reads for 50 MiB). A zeroed
/// allocation this large comes straight from the kernel's zero pages, so it costs no pass over
/// the memory. A file that grew meanwhile is read on, in doubling steps, up to the limit.
pub(super) fn read_bounded(path: &Path, file: &mut File, size_hint: u64) -> Result<Vec<u8>> {
    let limit = MAX_BOARD_BYTES as usize + 1;
    let mut buf = vec![0u8; (size_hint as usize).saturating_add(1).min(limit)];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            if buf.len() >= limit {
                break;
            }
            let grown = buf.len().saturating_mul(2).clamp(8192, limit);
            buf.resize(grown, 0);
        }
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, "read the blackboard", e)),
        }
    }
    buf.truncate(filled);
    if buf.len() as u64 > MAX_BOARD_BYTES {
        return Err(too_large(path, buf.len() as u64));
    }
    Ok(buf)
}

/// Read a whole blackboard.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    let (mut file, meta) = open_board_meta(path)?;
    read_bounded(path, &mut file, meta.len())
}

/// Read a blackboard only as far as the end of its frontmatter, so the cost does not grow with
/// the body. Returns the bytes read; they end at a line boundary (or at end of file). The size
/// of the whole file is not checked (this read is bounded anyway), so that a search for
/// blackboards still finds one that is too large, and reports it.
pub fn read_head(path: &Path) -> Result<Vec<u8>> {
    read_head_cut(&mut open_regular(path)?, path).map(|(bytes, _)| bytes)
}

/// [`read_head`] of an opened file, also saying whether the read stopped at its limit before
/// the frontmatter was closed (the frontmatter is then over [`MAX_FRONTMATTER_BYTES`], or not
/// closed at all).
pub(super) fn read_head_cut(file: &mut File, path: &Path) -> Result<(Vec<u8>, bool)> {
    use crate::board::document::{BOM, is_delimiter_line};
    // Read straight into the buffer, a small first read (most heads are a few KiB: a directory
    // walk reads one of every Markdown file), each next one twice as large.
    let mut buf = Vec::new();
    let mut want = 4096;
    let limit = HEAD_LIMIT;
    // Where the search for the closing delimiter goes on: a `\n` followed by `---` at or after
    // it (`None` until the first line is read).
    let mut from: Option<usize> = None;
    loop {
        let len = buf.len();
        buf.resize(len + want, 0);
        let read = file.read(&mut buf[len..]);
        let n = read.map_err(|e| Error::io(path, "read the blackboard", e))?;
        buf.truncate(len + n);
        if n == 0 {
            return Ok((buf, false));
        }
        if from.is_none()
            && let Some(nl) = memchr::memchr(b'\n', &buf)
        {
            let first = &buf[..=nl];
            if !is_delimiter_line(first.strip_prefix(BOM.as_bytes()).unwrap_or(first)) {
                // Not a blackboard; the parser will say so.
                buf.truncate(nl + 1);
                return Ok((buf, false));
            }
            from = Some(nl);
        }
        // Only a line starting with `---` can close the frontmatter: look for those alone.
        while let Some(at) = from {
            let Some(off) = memchr::memmem::find(&buf[at..], b"\n---") else {
                // Keep the last bytes: a `\n---` may be split across two reads.
                from = Some(at.max(buf.len().saturating_sub(3)));
                break;
            };
            let start = at + off + 1;
            let Some(e) = memchr::memchr(b'\n', &buf[start..]) else {
                from = Some(start - 1);
                break;
            };
            let end = start + e + 1;
            if is_delimiter_line(&buf[start..end]) {
                buf.truncate(end);
                return Ok((buf, false));
            }
            from = Some(start);
        }
        if buf.len() > limit {
            return Ok((buf, true));
        }
        // A large frontmatter is read in a few calls, not one per 4 KiB.
        if want < 1024 * 1024 {
            want *= 2;
        }
    }
}

/// How far `poll` reads looking for the end of the frontmatter: the largest frontmatter
/// accepted, plus room for the delimiters and a few lines.
pub(super) const HEAD_LIMIT: usize = MAX_FRONTMATTER_BYTES + 64 * 1024;

/// A blackboard read and validated in full.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub sha256: String,
    pub valid: Valid,
}

/// What a read of the frontmatter that stopped at [`HEAD_LIMIT`] can say.
pub(super) fn head_cut_error() -> FieldError {
    FieldError {
        field: "frontmatter".to_string(),
        line: None,
        message: format!(
            "no closing `---` within the first {HEAD_LIMIT} bytes: the frontmatter is over the \
             1 MiB limit ({MAX_FRONTMATTER_BYTES} bytes), or not closed at all"
        ),
    }
}
