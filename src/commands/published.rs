//! Published artifacts, for the commands: where a board's pinned commit can be read here, and
//! what a submission publishes with its write.

use std::path::Path;

use crate::board::frontmatter::{Frontmatter, Publication, Target};
use crate::error::Result;
use crate::law::protocol::Artifact;
use crate::repo::artifact::{Made, Readable};
use crate::store::Publish;
use crate::store::location::Location;

/// Where the published commit of `target`'s pin can be read on this machine: the cache of the
/// board's remote (fetched when it lacks the commit, and refused when the remote's ref names
/// another commit). `None` when the pin was not published. A pin published on a file board's
/// repository is read from the recorded worktree's repository when it holds the commit.
pub fn readable(board: &Path, fm: &Frontmatter, target: Target) -> Result<Option<Readable>> {
    let Some(p) = fm.pin(target).and_then(|p| p.published.clone()) else {
        return Ok(None);
    };
    let git_dir = match Location::of(board)? {
        Location::Git(g) => crate::store::gitref::artifact(&g, &p.refname, &p.commit)?,
        Location::Local(_) => match fm.worktree.as_deref().map(Path::new) {
            Some(wt) if crate::repo::artifact::has_commit(wt, &p.commit) => wt.to_path_buf(),
            _ => return Ok(None),
        },
    };
    Ok(Some(Readable {
        git_dir,
        commit: p.commit,
    }))
}

/// The key that names a board among the others of its remote (its ref and path), and its
/// file's stem, for the artifact refs it publishes to; `None` for a file board, which does not
/// publish.
pub fn board_key(board: &Path) -> Option<(String, String)> {
    match Location::of(board).ok()? {
        Location::Git(g) => {
            let stem = Path::new(&g.path)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "board".into());
            Some((format!("{}:{}", g.refname, g.path), stem))
        }
        Location::Local(_) => None,
    }
}

/// The ref the commit `advance COMMITTED` recorded on a git board is published to: the board's
/// artifact namespace, `committed-<id>`. Every clone derives it from the board's ref and path
/// and the recorded `commit_sha`, so nothing more is recorded on the board.
pub fn committed_ref(key: &(String, String), commit: &str) -> String {
    crate::repo::artifact::ref_name(&key.0, &key.1, "committed", commit)
}

/// The word an artifact ref names a submission by.
pub fn kind_word(artifact: Artifact) -> &'static str {
    match artifact {
        Artifact::Followup => "followup",
        Artifact::RedTest => "red-test",
        _ => "code",
    }
}

/// The publication of a commit made for a submission: the pin's record of it, and the push.
pub fn publication(
    key: &(String, String),
    artifact: Artifact,
    made: &Made,
    paths: Vec<String>,
) -> (Publication, Publish) {
    let refname =
        crate::repo::artifact::ref_name(&key.0, &key.1, kind_word(artifact), &made.commit);
    (
        Publication {
            commit: made.commit.clone(),
            refname: refname.clone(),
            paths,
        },
        Publish {
            refname,
            commit: made.commit.clone(),
            objects: made.objects.clone(),
        },
    )
}
