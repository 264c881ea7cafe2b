//! `pair worktree-path`: the default coding worktree of a blackboard,
//! `<repo-root>/.worktrees/<stem>`, refusing anything unsafe (SPEC §7).

use std::path::{Component, Path, PathBuf};

use serde_json::json;

use super::Outcome;
use crate::cli::WorktreePathArgs;
use crate::error::{Error, Result};
use crate::render::report::SCHEMA;

/// The repository a board's worktree is made in: the one the board's file is in, or for a git
/// board (which has no directory of its own) the clone the command runs in.
pub(crate) fn repo_root(board: &Path) -> Result<PathBuf> {
    let git = crate::store::location::is_git(board);
    let dir = match board.parent() {
        _ if git => PathBuf::from("."),
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match crate::repo::git::toplevel(&dir)
        .map_err(|e| Error::io(&dir, "run `git rev-parse --show-toplevel` in", e))?
    {
        Some(top) => Ok(top),
        None if git => Err(Error::Usage(
            "a git board's worktree is made in the clone the command runs in, and the working \
             directory is in no git repository: run it inside your clone of the repository, or \
             pass --repo-root DIR"
                .into(),
        )),
        None => Err(Error::Usage(format!(
            "{} is not inside a git repository; pass --repo-root DIR",
            crate::render::output::path(&dir)
        ))),
    }
}

/// The stem of a blackboard file name: the name less one trailing `.md`, if it is safe to use as
/// a directory name.
pub fn stem(board: &Path) -> Result<String> {
    let name = board
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".md").unwrap_or(&name).to_string();
    let safe = !stem.is_empty()
        && !stem.starts_with('.')
        && !stem.starts_with('-')
        && stem
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !safe {
        return Err(Error::protocol(format!(
            "the blackboard name {name:?} gives the worktree stem {stem:?}, which is empty or \
             unsafe (use letters, digits, `.`, `_` and `-`, not starting with `.` or `-`); name \
             the worktree yourself: `pair worktree create BOARD --path PATH --branch NAME`, or \
             `pair advance … --worktree PATH`"
        )));
    }
    Ok(stem)
}

/// The worktree stem of a git board: the last part of its ref and its file's stem
/// (`refs/pair/median` and `board.md` give `median-board`), so that two boards whose file is
/// `board.md` get two worktrees; letters, digits, `.`, `_` and `-` only.
fn git_stem(g: &crate::store::location::GitBoard) -> String {
    let last = g.refname.rsplit('/').next().unwrap_or("board");
    let file = Path::new(&g.path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let joined = format!("{last}-{file}");
    let safe: String = joined
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let safe = safe.trim_start_matches(['.', '-']).to_string();
    if safe.is_empty() {
        "board".into()
    } else {
        safe
    }
}

/// Whether `path` is in the default worktrees' directory `<root>/.worktrees`.
pub(crate) fn in_base(root: &Path, path: &Path) -> bool {
    let base = std::fs::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .join(".worktrees");
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.parent() == Some(base.as_path())
        || path.parent() == Some(root.join(".worktrees").as_path())
}

/// Once the worktree `path` of `<root>/.worktrees` is gone, remove `.worktrees` if nothing else
/// is in it (never a directory with anything inside). Returns the directory removed.
pub(crate) fn remove_empty_base(root: &Path, path: &Path) -> Option<PathBuf> {
    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    let base = match path.parent() {
        Some(p) if p.file_name().is_some_and(|n| n == ".worktrees") => p.to_path_buf(),
        _ => return None,
    };
    let real_base = std::fs::canonicalize(&base).ok()?;
    let real_root = std::fs::canonicalize(root).ok()?;
    if real_base != real_root.join(".worktrees") {
        return None;
    }
    // remove_dir removes an empty directory only; a symlink is not one.
    if std::fs::symlink_metadata(&base).ok()?.is_dir() && std::fs::remove_dir(&base).is_ok() {
        Some(base)
    } else {
        None
    }
}

/// The default coding worktree of a blackboard, as `pair worktree-path` finds it.
#[derive(Debug, Clone)]
pub struct DefaultWorktree {
    pub path: PathBuf,
    pub root: PathBuf,
    pub stem: String,
    /// Something is already at `path` (a git worktree, or it would have been refused).
    pub exists: bool,
}

pub fn run(a: WorktreePathArgs) -> Result<Outcome> {
    let d = default_worktree(&a.board, a.repo_root.as_deref())?;
    let shown = d.path.display().to_string();
    Ok(Outcome::ok(
        json!({"schema": SCHEMA, "path": shown, "repo_root": d.root.display().to_string(), "stem": d.stem, "exists": d.exists}),
        format!("{}\n", crate::text::escape(&shown)),
    ))
}

/// `<repo-root>/.worktrees/<stem>` for `board` (the repository root from git when not given),
/// refusing an unsafe stem, an escape from `.worktrees/` and an unrelated path in the way.
pub fn default_worktree(board: &Path, repo_root_arg: Option<&Path>) -> Result<DefaultWorktree> {
    let git = crate::store::location::Location::git(board)?;
    let root = match repo_root_arg {
        Some(r) => r.to_path_buf(),
        None => repo_root(board)?,
    };
    if !root.is_absolute() {
        return Err(Error::Usage(format!(
            "--repo-root {} must be an absolute path",
            crate::render::output::path(&root)
        )));
    }
    if root.components().any(|c| c == Component::ParentDir) {
        return Err(Error::Usage("--repo-root must not contain `..`".into()));
    }
    let stem = match &git {
        Some(g) => git_stem(g),
        None => stem(board)?,
    };
    let base = root.join(".worktrees");
    let path = base.join(&stem);
    // A symlinked .worktrees (or worktree) that leads elsewhere is an escape; so is one whose
    // target does not exist yet (the worktree would be created wherever it points).
    if std::fs::symlink_metadata(&base).is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::canonicalize(&base).is_err()
    {
        return Err(Error::protocol(format!(
            "{} is a symlink to a path that does not exist; refusing (make .worktrees a \
             directory inside the repository)",
            crate::render::output::path(&base)
        )));
    }
    if let Ok(real_root) = std::fs::canonicalize(&root) {
        let real_base =
            std::fs::canonicalize(&base).unwrap_or_else(|_| real_root.join(".worktrees"));
        if !real_base.starts_with(&real_root) {
            return Err(Error::protocol(format!(
                "{} resolves to {}, outside the repository; refusing",
                crate::render::output::path(&base),
                crate::render::output::path(&real_base)
            )));
        }
        if let Ok(real) = std::fs::canonicalize(&path)
            && !real.starts_with(&real_base)
        {
            return Err(Error::protocol(format!(
                "{} resolves to {}, outside {}; refusing",
                crate::render::output::path(&path),
                crate::render::output::path(&real),
                crate::render::output::path(&base)
            )));
        }
    }
    // An existing path must be a git worktree (a `.git` file or directory inside).
    let existing = std::fs::symlink_metadata(&path).is_ok();
    if existing && !path.join(".git").exists() {
        return Err(Error::protocol(format!(
            "{} already exists and is not a git worktree; choose another path with \
             `pair advance … --worktree PATH`",
            crate::render::output::path(&path)
        )));
    }
    Ok(DefaultWorktree {
        path,
        root,
        stem,
        exists: existing,
    })
}
