//! Published artifacts: the content under review stored as a git commit, so that a reviewer on
//! another machine reads exactly what was pinned from any clone of the board's remote.
//!
//! A submission on a git board makes, in the doer's repository, a commit whose tree is the
//! content under review and whose parent is the base it is judged against:
//!
//! * code (`staged`): the index's tree, on top of the base (`base_sha`, else `HEAD`);
//! * a follow-up (`unstaged`): the index's tree on top of the base, then the index plus the
//!   unstaged changes on top of that, so the follow-up is its commit against its parent;
//! * a red test (`files`): the base's tree with the test files at their paths in the
//!   repository.
//!
//! The commit is pushed with the board's write (see [`crate::store::gitref`]) to a ref under
//! [`ARTIFACT_REF_PREFIX`]. A diff pin of a published artifact covers the commit against its
//! parent, in the canonical form of [`crate::repo::git`], which [`published_diff_command`]
//! reproduces with nothing but git and sed. Commits are made with fixed dates, so the same
//! content on the same base always makes the same commit.

use super::HOOKS_OFF;
use std::path::{Path, PathBuf};

use crate::board::frontmatter::ARTIFACT_REF_PREFIX;
use crate::error::{Error, Result};
use crate::repo::git::{self, command, run};

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes)
        .trim_end_matches(['\n', '\r'])
        .to_string()
}

/// A commit made for publication, and the object directory that holds it (for the push).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub commit: String,
    pub tree: String,
    pub objects: PathBuf,
}

/// Where a published commit can be read: a git directory holding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readable {
    pub git_dir: PathBuf,
    pub commit: String,
}

/// The ref an artifact is published to: `refs/pair-artifacts/<board>/<kind>-<id>`, where
/// `<board>` names the board (its file's stem and a hash of its ref and path, so two boards
/// never share it), `<kind>` is what was submitted (`code`, `followup`, `red-test`) and `<id>`
/// the commit's first 12 digits: the same content submitted again is the same commit at the
/// same ref.
pub fn ref_name(board_key: &str, stem: &str, kind: &str, commit: &str) -> String {
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let stem = stem.trim_matches('-');
    let stem = if stem.is_empty() { "board" } else { stem };
    let key = &crate::text::sha256_hex(board_key.as_bytes())[..10];
    let id = &commit[..commit.len().min(12)];
    format!("{ARTIFACT_REF_PREFIX}{stem}-{key}/{kind}-{id}")
}

/// The object directory of the repository `dir` is in (shared by its worktrees).
pub fn objects_dir(dir: &Path) -> Result<PathBuf> {
    Ok(crate::repo::common_dir(dir)?.join("objects"))
}

/// `git commit-tree TREE -p PARENT` with a fixed identity and date: the same content on the same
/// parent makes the same commit.
fn commit_tree(dir: &Path, tree: &str, parent: &str, message: &str, agent: &str) -> Result<String> {
    let email = format!("{agent}@pair.invalid");
    let mut cmd = command(dir);
    cmd.env("GIT_AUTHOR_NAME", agent)
        .env("GIT_AUTHOR_EMAIL", &email)
        .env("GIT_COMMITTER_NAME", agent)
        .env("GIT_COMMITTER_EMAIL", &email)
        .env("GIT_AUTHOR_DATE", "1970-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "1970-01-01T00:00:00Z");
    let args = ["commit-tree", tree, "-p", parent, "-m", message];
    Ok(text(git::output(
        cmd.args(args),
        dir,
        &args,
        "make the commit of the artifact",
    )?))
}

/// The base a published diff is taken against: the recorded base, else `HEAD`.
fn base_commit(worktree: &Path, base: Option<&str>) -> Result<String> {
    let rev = base.unwrap_or("HEAD");
    if base.is_some_and(|b| !git::commit_id(b)) {
        return Err(Error::Git {
            message: format!("base_sha {rev:?} on the blackboard is not a commit id"),
        });
    }
    crate::repo::commit(worktree, rev)?.ok_or_else(|| Error::Git {
        message: format!(
            "{} has no commit {rev} to publish the artifact on top of",
            worktree.display()
        ),
    })
}

/// Publish the staged content of a worktree: one commit, the index's tree on the base.
pub fn staged(worktree: &Path, base: Option<&str>, message: &str, agent: &str) -> Result<Made> {
    let parent = base_commit(worktree, base)?;
    let tree = crate::repo::content_tree(worktree, false)?;
    Ok(Made {
        commit: commit_tree(worktree, &tree, &parent, message, agent)?,
        tree,
        objects: objects_dir(worktree)?,
    })
}

/// Publish a follow-up: the staged commit, then the index plus the unstaged changes on it.
pub fn followup(worktree: &Path, base: Option<&str>, message: &str, agent: &str) -> Result<Made> {
    let staged = staged(worktree, base, message, agent)?;
    let tree = crate::repo::content_tree(worktree, true)?;
    Ok(Made {
        commit: commit_tree(worktree, &tree, &staged.commit, message, agent)?,
        tree,
        objects: staged.objects,
    })
}

/// Publish a red test's files: the base's tree with each file (its bytes as read) at its path in
/// the repository whose top is `root`.
pub fn files(
    root: &Path,
    base: Option<&str>,
    files: &[(String, Vec<u8>)],
    message: &str,
    agent: &str,
) -> Result<Made> {
    let parent = base_commit(root, base)?;
    let dir = tempfile::tempdir()
        .map_err(|e| Error::io(&std::env::temp_dir(), "create a temporary index in", e))?;
    let index = dir.path().join("index");
    let with_index = |args: &[&str], input: Option<&[u8]>, what: &str| -> Result<Vec<u8>> {
        let mut cmd = command(root);
        cmd.env("GIT_INDEX_FILE", &index).args(args);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let f = git::run_piped(cmd, input, deadline, |e| Error::Git {
            message: format!("cannot {what}: running git failed: {e}"),
        })?;
        if f.ok {
            Ok(f.stdout)
        } else {
            Err(Error::Git {
                message: format!("cannot {what}: git said: {}", f.stderr.trim()),
            })
        }
    };
    with_index(&["read-tree", &parent], None, "read the base's tree")?;
    for (path, bytes) in files {
        let blob = text(with_index(
            &["hash-object", "-w", "--stdin"],
            Some(bytes),
            "store a test file",
        )?);
        let info = format!("100644,{blob},{path}");
        with_index(
            &["update-index", "--add", "--cacheinfo", &info],
            None,
            "put a test file in the tree",
        )?;
    }
    let tree = text(with_index(&["write-tree"], None, "write the tree")?);
    Ok(Made {
        commit: commit_tree(root, &tree, &parent, message, agent)?,
        tree,
        objects: objects_dir(root)?,
    })
}

/// Whether the repository at `git_dir` holds the commit.
pub fn has_commit(git_dir: &Path, commit: &str) -> bool {
    git::commit_id(commit)
        && command(git_dir)
            .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// The first parent of a commit.
pub fn parent(r: &Readable) -> Result<String> {
    Ok(text(run(
        &r.git_dir,
        &["rev-parse", "--verify", &format!("{}^1", r.commit)],
        "find the published commit's parent",
    )?))
}

/// The canonical diff of a published commit against its parent: the pinned bytes of a diff.
pub fn diff(r: &Readable) -> Result<Vec<u8>> {
    let parent = parent(r)?;
    git::tree_diff(&r.git_dir, &parent, &r.commit)
}

/// The bytes of a file in a published commit.
pub fn file(r: &Readable, path: &str) -> Result<Vec<u8>> {
    if path.starts_with('-') || path.contains(['\n', '\0']) {
        return Err(Error::Git {
            message: format!("{path:?} cannot be read from a commit"),
        });
    }
    run(
        &r.git_dir,
        &["cat-file", "blob", &format!("{}:{path}", r.commit)],
        "read a file of the published commit",
    )
}

/// The tree of a published commit.
pub fn tree(r: &Readable) -> Result<String> {
    crate::repo::tree_of(&r.git_dir, &r.commit)
}

/// A temporary checkout of a published commit (or of a pinned tree), removed when dropped.
pub struct Checkout {
    pub path: PathBuf,
    /// The repository whose worktree it is (`None`: a plain copy of a tree's files).
    git_dir: Option<PathBuf>,
    _dir: tempfile::TempDir,
}

impl Checkout {
    /// The files of a tree of the repository at `repo`, written into a new temporary directory
    /// with a temporary index (nothing in the repository is written).
    pub fn of_tree(repo: &Path, tree: &str) -> Result<Checkout> {
        if !git::commit_id(tree) {
            return Err(Error::Git {
                message: format!("{tree:?} is not a tree id"),
            });
        }
        let dir = tempfile::Builder::new()
            .prefix("pair-checkout-")
            .tempdir()
            .map_err(|e| Error::io(&std::env::temp_dir(), "make a temporary checkout in", e))?;
        let path = dir.path().join("tree");
        std::fs::create_dir(&path).map_err(|e| Error::io(&path, "create", e))?;
        let index = dir.path().join("index");
        let prefix = format!("{}/", path.to_string_lossy());
        for args in [
            vec!["read-tree", tree],
            vec!["checkout-index", "--all", "--force", "--prefix", &prefix],
        ] {
            let mut cmd = command(repo);
            cmd.env("GIT_INDEX_FILE", &index).args(&args);
            git::output(&mut cmd, repo, &args, "check out the pinned tree")?;
        }
        Ok(Checkout {
            path,
            git_dir: None,
            _dir: dir,
        })
    }

    /// `git worktree add --detach` of the commit in a new temporary directory.
    pub fn of(r: &Readable) -> Result<Checkout> {
        let dir = tempfile::Builder::new()
            .prefix("pair-checkout-")
            .tempdir()
            .map_err(|e| Error::io(&std::env::temp_dir(), "make a temporary checkout in", e))?;
        let path = dir.path().join("tree");
        let p = path.to_string_lossy().into_owned();
        run(
            &r.git_dir,
            &[
                "-c", HOOKS_OFF, "worktree", "add", "--quiet", "--detach", &p, &r.commit,
            ],
            "check out the published commit",
        )?;
        Ok(Checkout {
            path,
            git_dir: Some(r.git_dir.clone()),
            _dir: dir,
        })
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        let Some(git_dir) = &self.git_dir else {
            return;
        };
        let p = self.path.to_string_lossy().into_owned();
        let _ = run(
            git_dir,
            &["worktree", "remove", "--force", "--force", &p],
            "remove the temporary checkout",
        );
        let _ = run(git_dir, &["worktree", "prune"], "prune worktrees");
    }
}

/// The pinned settings and diff options, as the arguments of a `git … diff` in a shell script.
fn pinned_diff_words() -> String {
    let mut script = String::from("git --no-pager");
    for c in git::CONFIG {
        script.push_str(" -c ");
        script.push_str(c);
    }
    script.push_str(" diff");
    for o in git::DIFF_OPTIONS {
        script.push(' ');
        script.push_str(o);
    }
    script
}

/// What drops the function names git writes after hunk headers, as the pin does.
const STRIP_FUNCTION_NAMES: &str = " | sed -E 's/^(@@ -[0-9,]+ [+][0-9,]+ @@).*$/\\1/'";

/// The shell command that prints a diff under review exactly as pinned, with nothing but git and
/// sed: the published commit against its parent (fetched from `url`, run in any clone), else the
/// staged (`--cached`, against `base` when recorded) or unstaged diff of the worktree.
pub fn review_diff_command(
    published: Option<(&str, &str, &str)>,
    worktree: Option<&str>,
    staged: bool,
    base: Option<&str>,
) -> Option<Vec<String>> {
    if let Some((url, refname, commit)) = published {
        return Some(published_diff_command(url, refname, commit));
    }
    let wt = worktree?;
    let mut script = pinned_diff_words().replacen("git ", "git -C \"$1\" ", 1);
    if staged {
        script.push_str(" --cached");
        if let Some(b) = base.filter(|b| git::commit_id(b)) {
            script.push(' ');
            script.push_str(b);
        }
    }
    script.push_str(" --");
    script.push_str(STRIP_FUNCTION_NAMES);
    Some(vec![
        "sh".into(),
        "-c".into(),
        script,
        "pair".into(),
        wt.into(),
    ])
}

/// The shell command that prints a published diff's pinned bytes with nothing but git and sed,
/// run in any clone of the repository: fetch the artifact's ref from the remote, diff the commit
/// against its parent with the pinned settings, drop the function names git writes after hunk
/// headers. `sh -c SCRIPT pair URL REF COMMIT`.
pub fn published_diff_command(url: &str, refname: &str, commit: &str) -> Vec<String> {
    let mut script = String::from("git fetch --quiet --no-tags \"$1\" \"$2\" && ");
    script.push_str(&pinned_diff_words());
    script.push_str(" \"$3^\" \"$3\" --");
    script.push_str(STRIP_FUNCTION_NAMES);
    vec![
        "sh".into(),
        "-c".into(),
        script,
        "pair".into(),
        url.into(),
        refname.into(),
        commit.into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_refs_are_named_by_board_kind_and_commit() {
        let r = ref_name("refs/pair/x:board.md", "board", "code", &"a".repeat(40));
        assert!(r.starts_with("refs/pair-artifacts/board-"));
        assert!(r.ends_with("/code-aaaaaaaaaaaa"));
        assert!(crate::repo::branch_name(r.trim_start_matches("refs/")).is_ok());
        let other = ref_name("refs/pair/y:board.md", "board", "code", &"a".repeat(40));
        assert_ne!(r, other, "two boards named board.md never share a ref");
        assert!(ref_name("k", "../weird name", "code", "ab12").contains("/weird-name-"));
    }
}
