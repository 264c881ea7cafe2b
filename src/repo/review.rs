//! What a review-only board pins: the target's bytes (a file's, or a diff's in the pinned form),
//! its files and its size, read again to re-verify the pin before the result is written.

use std::path::{Path, PathBuf};

use crate::board::debate::TargetKind;
use crate::error::{Error, Result};
use crate::repo::git;

/// A target as read now.
#[derive(Debug, Clone)]
pub struct Read {
    pub kind: TargetKind,
    /// The file's absolute path, or the repository's top level.
    pub root: PathBuf,
    pub files: Vec<String>,
    /// The SHA-256 of the target's bytes (a file's, or the diff's in the pinned form).
    pub sha256: String,
    pub lines: u32,
}

/// The most `init --review` reads of a file target: the limit of every file read on an
/// agent's behalf ([`crate::input`]); it is hashed as it is read, never held whole.
pub const MAX_TARGET_BYTES: u64 = crate::law::validate::MAX_BOARD_BYTES;

/// How a file target is read: a regular file, never blocking, at most [`MAX_TARGET_BYTES`]
/// (inside the call's places, when an edge confined it).
fn rules() -> crate::input::Rules<'static> {
    crate::input::Rules::given(MAX_TARGET_BYTES)
}

/// The word `init --review` takes for the staged diff.
pub const STAGED: &str = "staged";

/// Read a target as `init --review` names it: `staged`, a commit range `A..B`, or a file.
pub fn read(target: &str, cwd: &Path) -> Result<Read> {
    let path = cwd.join(target);
    if target == STAGED {
        let root = top(cwd)?;
        let bytes = git::staged_diff(&root, None)?;
        return diff(TargetKind::Staged, root, bytes, target);
    }
    if !path.exists()
        && let Some((a, b)) = target.split_once("..")
    {
        let root = top(cwd)?;
        let from = commit(&root, a)?;
        let to = commit(&root, b.trim_start_matches('.'))?;
        let bytes = git::tree_diff(&root, &from, &to)?;
        return diff(TargetKind::Range, root, bytes, target);
    }
    if !path.exists() {
        return Err(Error::Usage(format!(
            "--review {target:?}: no such file; the target is a file, a commit range A..B or \
             `staged`"
        )));
    }
    let d = crate::input::digest(&path, "--review", &rules())?;
    if d.len == 0 {
        return Err(Error::Usage(format!(
            "--review {target:?}: the file is empty; there is nothing to review"
        )));
    }
    Ok(Read {
        kind: TargetKind::File,
        files: vec![d.real.to_string_lossy().into_owned()],
        lines: u32::try_from(d.lines).unwrap_or(u32::MAX),
        sha256: d.sha256,
        root: d.real,
    })
}

/// The SHA-256 of the target read again, as pinned (`target` as given, from where it was
/// resolved).
pub fn reread(kind: TargetKind, target: &str, root: &Path) -> Result<String> {
    let bytes = match kind {
        TargetKind::File => {
            return crate::input::digest(root, "the review target", &rules()).map(|d| d.sha256);
        }
        TargetKind::Staged => git::staged_diff(root, None),
        TargetKind::Range => {
            let (a, b) = target.split_once("..").unwrap_or((target, "HEAD"));
            let from = commit(root, a)?;
            let to = commit(root, b.trim_start_matches('.'))?;
            git::tree_diff(root, &from, &to)
        }
    }?;
    Ok(crate::text::sha256_hex(&bytes))
}

fn top(cwd: &Path) -> Result<PathBuf> {
    crate::repo::toplevel_of(cwd)?.ok_or_else(|| {
        Error::Usage(format!(
            "{}: not inside a git repository; a diff target is read from one",
            cwd.display()
        ))
    })
}

fn commit(root: &Path, rev: &str) -> Result<String> {
    let rev = if rev.is_empty() { "HEAD" } else { rev };
    if rev.starts_with('-') {
        return Err(Error::Usage(format!("--review: {rev:?} is not a revision")));
    }
    crate::repo::commit(root, rev)?.ok_or_else(|| {
        Error::Usage(format!(
            "--review: {rev:?} names no commit of {}",
            root.display()
        ))
    })
}

fn diff(kind: TargetKind, root: PathBuf, bytes: Vec<u8>, target: &str) -> Result<Read> {
    if bytes.is_empty() {
        return Err(Error::Usage(format!(
            "--review {target:?}: the diff is empty; there is nothing to review"
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut files: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(p) = line
            .strip_prefix("+++ b/")
            .or_else(|| line.strip_prefix("--- a/"))
            && !files.iter().any(|f| f == p)
        {
            files.push(p.to_string());
        }
    }
    Ok(Read {
        kind,
        root,
        files,
        lines: count_lines(&bytes),
        sha256: crate::text::sha256_hex(&bytes),
    })
}

fn count_lines(bytes: &[u8]) -> u32 {
    let n = bytes.iter().filter(|b| **b == b'\n').count();
    let n = if bytes.last() == Some(&b'\n') {
        n
    } else {
        n + 1
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}
