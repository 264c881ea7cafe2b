//! The questions `pair` asks a repository about its lifecycle: the tree of the content under
//! review, commits, ancestry, branches, and making or finding worktrees.
//!
//! Every call goes through [`crate::repo::git::command`] (pinned configuration, no inherited `GIT_*`
//! variables, fixed locale). Revisions given by a user reach git only as full names it cannot
//! read as an option: commit ids are checked to be hex ([`crate::repo::git::commit_id`]), branches are
//! passed as `refs/heads/NAME` after [`branch_name`] accepted them.

pub mod anchor;
pub mod artifact;
pub mod git;
pub mod lifecycle;
pub mod pin;
pub mod review;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::repo::git::{command, run};

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes)
        .trim_end_matches(['\n', '\r'])
        .to_string()
}

/// Whether `name` can be used as a branch name here: what `git check-ref-format --branch`
/// accepts, less anything that could be read as an option or a revision expression.
pub fn branch_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name.starts_with('-')
        || name.starts_with('/')
        || name.ends_with('/')
        || name.ends_with('.')
        || name.ends_with(".lock")
        || name.contains("..")
        || name.contains("//")
        || name.contains("@{")
        || name == "@"
        || name
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c));
    if bad {
        return Err(Error::Usage(format!(
            "{name:?} is not a usable branch name (no spaces, control characters, `..`, `~^:?*[\\`, \
             and not starting with `-` or `/`)"
        )));
    }
    Ok(())
}

/// The tree id of the content under review in a worktree: its index (`with_unstaged`: plus the
/// changes to tracked files it has not staged, as `git add -u` would stage them), written with
/// a temporary copy of the index so the worktree's own index is never touched.
pub fn content_tree(worktree: &Path, with_unstaged: bool) -> Result<String> {
    tree_with(worktree, if with_unstaged { &["-u"] } else { &[] })
}

/// The tree of everything a command run in the worktree can read that git would keep: the
/// index, the unstaged changes and the untracked files that are not ignored (as `git add -A`
/// would stage them), with a temporary index. A check's run counts for this tree, so a file
/// that is neither staged nor committed cannot make a run count for the approved tree.
pub fn worktree_tree(worktree: &Path) -> Result<String> {
    tree_with(worktree, &["-A"])
}

/// The tree of the worktree's index after `git add ADD -- .` (nothing added when `add` is
/// empty), written with a temporary copy of the index.
fn tree_with(worktree: &Path, add: &[&str]) -> Result<String> {
    git::recorded(worktree)?;
    let index = match index_path(worktree) {
        Some(p) => p,
        None => PathBuf::from(text(run(
            worktree,
            &["rev-parse", "--path-format=absolute", "--git-path", "index"],
            "find the worktree's index",
        )?)),
    };
    let dir = tempfile::tempdir()
        .map_err(|e| Error::io(&std::env::temp_dir(), "create a temporary index in", e))?;
    let temp = dir.path().join("index");
    if index.exists() {
        std::fs::copy(&index, &temp).map_err(|e| Error::io(&index, "copy the index", e))?;
    }
    let with_index = |args: &[&str], what: &str| -> Result<Vec<u8>> {
        let mut cmd = command(worktree);
        cmd.env("GIT_INDEX_FILE", &temp).args(args);
        git::output(&mut cmd, worktree, args, what)
    };
    if !add.is_empty() {
        let mut args = vec!["add"];
        args.extend_from_slice(add);
        args.extend_from_slice(&["--", "."]);
        with_index(&args, "stage the unstaged changes in a temporary index")?;
    }
    match with_index(
        &["write-tree"],
        "write the tree of the content under review",
    ) {
        Ok(tree) => Ok(text(tree)),
        // The usual cause is a conflict left in the index: say which paths, and what to do,
        // rather than git's own message.
        Err(e) => {
            let unmerged = with_index(&["ls-files", "--unmerged", "-z"], "list unmerged paths")
                .unwrap_or_default();
            let mut paths: Vec<String> = unmerged
                .split(|b| *b == 0)
                .filter_map(|entry| {
                    let entry = String::from_utf8_lossy(entry);
                    entry.split_once('\t').map(|(_, path)| path.to_string())
                })
                .collect();
            paths.dedup();
            if paths.is_empty() {
                return Err(e);
            }
            Err(Error::protocol(format!(
                "the index of {} has unmerged paths (a merge, rebase or cherry-pick conflict): \
                 {}; resolve them and stage the result (`git add`), then run the command again",
                worktree.display(),
                paths.join(", ")
            )))
        }
    }
}

/// The index file of a worktree without asking git (one process less per pin): `.git/index`
/// for a main worktree, `<gitdir>/index` for a linked one whose `.git` file says `gitdir:
/// <gitdir>`. `None` when `.git` is anything else; then git is asked.
fn index_path(worktree: &Path) -> Option<PathBuf> {
    let dot_git = worktree.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.join("index"));
    }
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    let content = std::fs::read_to_string(&dot_git).ok()?;
    let dir = content
        .strip_prefix("gitdir: ")?
        .trim_end_matches(['\n', '\r']);
    if dir.is_empty() || dir.contains('\n') {
        return None;
    }
    let dir = Path::new(dir);
    let dir = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        worktree.join(dir)
    };
    dir.is_dir().then(|| dir.join("index"))
}

/// The full id of a commit, or `None` when the repository has no such commit.
pub fn commit(dir: &Path, rev: &str) -> Result<Option<String>> {
    let spec = format!("{rev}^{{commit}}");
    let out = command(dir)
        .args(["rev-parse", "--verify", "--quiet", &spec])
        .output()
        .map_err(|e| Error::Git {
            message: format!("cannot look up {rev}: running git failed: {e}"),
        })?;
    Ok(out
        .status
        .success()
        .then(|| text(out.stdout))
        .filter(|s| !s.is_empty()))
}

/// The commit a local branch points at, or `None` when there is no such branch.
pub fn branch(dir: &Path, name: &str) -> Result<Option<String>> {
    branch_name(name)?;
    commit(dir, &format!("refs/heads/{name}"))
}

/// The tree id of a commit.
pub fn tree_of(dir: &Path, commit_id: &str) -> Result<String> {
    Ok(text(run(
        dir,
        &["rev-parse", "--verify", &format!("{commit_id}^{{tree}}")],
        "read the commit's tree",
    )?))
}

/// Whether commit `a` is an ancestor of (or the same as) commit `b`.
pub fn is_ancestor(dir: &Path, a: &str, b: &str) -> Result<bool> {
    let out = command(dir)
        .args(["merge-base", "--is-ancestor", a, b])
        .output()
        .map_err(|e| Error::Git {
            message: format!("cannot compare commits: running git failed: {e}"),
        })?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(Error::Git {
            message: format!(
                "cannot tell whether {a} is an ancestor of {b}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }),
    }
}

/// The files that differ between two trees, one `STATUS\tPATH` line each (`git diff-tree -r
/// --name-status --no-renames`, paths quoted as `core.quotePath` quotes them).
pub fn changed_files(dir: &Path, from: &str, to: &str) -> Result<Vec<String>> {
    let out = run(
        dir,
        &[
            "diff-tree",
            "-r",
            "--no-renames",
            "--name-status",
            from,
            to,
            "--",
        ],
        "list the files that differ",
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// The commits reachable from `from` but from none of `not` (`git rev-list`), newest first.
pub fn commits_between(dir: &Path, from: &str, not: &[&str]) -> Result<Vec<String>> {
    let excluded: Vec<String> = not.iter().map(|n| format!("^{n}")).collect();
    let mut args = vec!["rev-list", from];
    args.extend(excluded.iter().map(String::as_str));
    args.push("--");
    let out = run(dir, &args, "list the commits between two revisions")?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// The top of the git work tree `dir` is in (`git rev-parse --show-toplevel` with the pinned
/// settings); `None` when it is in none.
pub fn toplevel_of(dir: &Path) -> Result<Option<PathBuf>> {
    let out = command(dir)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .map_err(|e| Error::Git {
            message: format!("cannot find the repository of {}: {e}", dir.display()),
        })?;
    Ok(out
        .status
        .success()
        .then(|| PathBuf::from(text(out.stdout)))
        .filter(|p| !p.as_os_str().is_empty()))
}

/// The commit `HEAD` of a worktree is at.
pub fn head(dir: &Path) -> Result<Option<String>> {
    commit(dir, "HEAD")
}

/// The branch `HEAD` of a worktree is on, or `None` when it is detached.
pub fn current_branch(dir: &Path) -> Result<Option<String>> {
    let out = command(dir)
        .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
        .output()
        .map_err(|e| Error::Git {
            message: format!("cannot read the current branch: running git failed: {e}"),
        })?;
    Ok(out
        .status
        .success()
        .then(|| text(out.stdout))
        .filter(|s| !s.is_empty()))
}

/// The repository's common git directory (shared by all its worktrees), resolved.
pub fn common_dir(dir: &Path) -> Result<PathBuf> {
    let raw = text(run(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        "find the repository",
    )?);
    Ok(std::fs::canonicalize(&raw).unwrap_or_else(|_| PathBuf::from(raw)))
}

/// The worktrees git lists for a repository (`git worktree list --porcelain`), as recorded.
pub fn worktrees(dir: &Path) -> Result<Vec<PathBuf>> {
    let out = run(
        dir,
        &["worktree", "list", "--porcelain"],
        "list the worktrees",
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect())
}

/// The files of a worktree that no commit holds as they are (`git status`: modified, added,
/// deleted, or untracked and not ignored), as git names them; `git worktree remove` refuses a
/// worktree that has any.
pub fn uncommitted(worktree: &Path) -> Result<Vec<String>> {
    let out = run(
        worktree,
        &["status", "--porcelain", "-z", "--untracked-files=normal"],
        "list the worktree's uncommitted files",
    )?;
    let mut files = Vec::new();
    let mut entries = out.split(|b| *b == 0).filter(|e| !e.is_empty());
    while let Some(entry) = entries.next() {
        // `XY PATH`; a rename or copy is followed by its source, which is not listed.
        let (status, path) = entry.split_at(entry.len().min(3));
        if matches!(status.first(), Some(b'R' | b'C')) {
            entries.next();
        }
        files.push(String::from_utf8_lossy(path).into_owned());
    }
    Ok(files)
}

/// Whether `path` is one of the worktrees git lists for the repository at `dir`.
pub fn lists_worktree(dir: &Path, path: &Path) -> Result<bool> {
    let want = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(worktrees(dir)?
        .iter()
        .any(|w| w == path || std::fs::canonicalize(w).is_ok_and(|c| c == want) || *w == want))
}

/// `git worktree add -b BRANCH PATH BASE`: a new worktree on a new branch at `base`.
pub fn add_worktree(repo: &Path, path: &Path, branch: &str, base: &str) -> Result<()> {
    branch_name(branch)?;
    let p = path.to_string_lossy();
    run(
        repo,
        &["worktree", "add", "--quiet", "-b", branch, &p, base],
        "create the worktree",
    )?;
    Ok(())
}

/// Undo [`add_worktree`]: remove the worktree (even with changes) and delete its branch.
pub fn remove_worktree_and_branch(repo: &Path, path: &Path, branch: &str) -> Result<()> {
    let p = path.to_string_lossy();
    run(
        repo,
        &["worktree", "remove", "--force", "--force", &p],
        "remove the worktree",
    )?;
    run(
        repo,
        &["branch", "-D", "--quiet", branch],
        "delete the branch",
    )?;
    Ok(())
}

/// Keep the default worktrees' directory out of the main checkout's untracked files: unless git,
/// as the user runs it in `root`, already ignores `.worktrees/`, add `/.worktrees/` to the
/// repository's `info/exclude` (in its common git directory, shared by its worktrees and never
/// committed). Returns the file changed, `None` when nothing needed to change.
pub fn exclude_worktrees(root: &Path) -> Result<Option<PathBuf>> {
    let ignored = git::as_user(root, &["check-ignore", "-q", "--", ".worktrees/"])
        .map_err(|e| Error::io(root, "ask git whether .worktrees/ is ignored in", e))?;
    if ignored.status.success() {
        return Ok(None);
    }
    let info = common_dir(root)?.join("info");
    let file = info.join("exclude");
    let old = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(&file, "read", e)),
    };
    const LINE: &str = "/.worktrees/";
    if old.lines().any(|l| l.trim() == LINE) {
        return Ok(None);
    }
    std::fs::create_dir_all(&info).map_err(|e| Error::io(&info, "create", e))?;
    let mut new = old;
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str("# pair's default coding worktrees\n");
    new.push_str(LINE);
    new.push('\n');
    std::fs::write(&file, new).map_err(|e| Error::io(&file, "write", e))?;
    Ok(Some(file))
}

/// The files and directories of the checkout at `root` that git, as the user runs it there,
/// ignores and does not track (`git ls-files --others --ignored --exclude-standard
/// --directory`: an ignored directory is one entry): a new worktree has none of them. `pair`'s
/// own files (the default worktrees, a board's lock files and state) are left out.
pub fn ignored_untracked(root: &Path) -> Result<Vec<String>> {
    let out = git::as_user(
        root,
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ],
    )
    .map_err(|e| Error::io(root, "list the ignored files of", e))?;
    if !out.status.success() {
        return Err(Error::Git {
            message: format!("cannot list the ignored files of {}", root.display()),
        });
    }
    let pairs_own = |p: &str| {
        let name = p.trim_end_matches('/').rsplit('/').next().unwrap_or(p);
        p.starts_with(".worktrees/")
            || name.ends_with(".md.lock")
            || name.ends_with(".md.lock.owner.json")
            || (name.starts_with('.')
                && (name.ends_with(".md.pair")
                    || name.contains(".md.pair-tmp-")
                    || name.contains(".md.lock.owner.json.pair-tmp-")))
    };
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| !pairs_own(p))
        .collect())
}

/// The setting that turns git's hooks off: a scratch checkout runs no hook of the repository's
/// or the user's (`core.hooksPath` in their configuration included).
pub(crate) const HOOKS_OFF: &str = "core.hooksPath=/dev/null";

/// Turn git's hooks off for whatever git `cmd` runs (a check in a scratch checkout): the
/// setting is added to the configuration given through the environment (`GIT_CONFIG_COUNT`,
/// `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`), which comes after every file's, so no
/// repository's or user's `core.hooksPath` overrides it; settings already given there stay.
pub fn hooks_off(cmd: &mut std::process::Command) {
    let given = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let (key, value) = HOOKS_OFF.split_once('=').unwrap_or((HOOKS_OFF, ""));
    cmd.env("GIT_CONFIG_COUNT", (given + 1).to_string())
        .env(format!("GIT_CONFIG_KEY_{given}"), key)
        .env(format!("GIT_CONFIG_VALUE_{given}"), value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_that_git_could_misread_are_refused() {
        assert!(branch_name("pair/task").is_ok());
        for bad in ["", "-x", "a..b", "a b", "a~1", "HEAD@{1}", "x.lock", "a/"] {
            assert!(branch_name(bad).is_err(), "{bad}");
        }
    }
}
