//! What git says about the lifecycle step a board is about to record (a commit, a merge, a
//! cleanup), gathered before the locked write and held against the board by the pure
//! [`crate::law::lifecycle::verify`].

use std::path::Path;

use crate::board::frontmatter::{Frontmatter, Phase};
use crate::error::{Error, Result};
use crate::law::lifecycle::{
    Basis, CleanupFacts, CommitFacts, Facts, MergeFacts, Step, approved_tree,
};
use crate::repo::{self as repo, git};

fn repo_root(fm: &Frontmatter) -> Option<&Path> {
    fm.audit.repo_root.as_deref().map(Path::new)
}

/// The commit `advance COMMITTED` records when `--commit-sha` is left out: `HEAD` of the
/// recorded worktree.
pub fn default_commit(fm: &Frontmatter) -> Result<Option<String>> {
    let Some(wt) = fm.worktree.as_deref() else {
        return Ok(None);
    };
    git::recorded(Path::new(wt))?;
    repo::head(Path::new(wt))
}

/// Ask git what the step to `to` needs to know (nothing when the lifecycle is not verified for
/// this board or the step has no checks).
pub fn observe(
    fm: &Frontmatter,
    to: Phase,
    commit_sha: Option<&str>,
    merged_into: Option<&str>,
) -> Result<Facts> {
    let basis = Basis::of(fm);
    let Some(root) = repo_root(fm) else {
        return Ok(Facts {
            basis,
            step: Step::None,
        });
    };
    if !root.is_dir() {
        return Err(Error::protocol(format!(
            "repo_root {} on the blackboard is not a directory; the lifecycle checks read the \
             repository there",
            root.display()
        )));
    }
    let step = match to {
        Phase::Committed => {
            let asked = commit_sha.unwrap_or_default().to_string();
            let sha = if git::commit_id(&asked) {
                repo::commit(root, &asked)?
            } else {
                None
            };
            let mut f = CommitFacts {
                asked,
                sha: sha.clone(),
                ..CommitFacts::default()
            };
            if let Some(sha) = &sha {
                if let Some(topic) = fm.audit.topic_branch.as_deref() {
                    let tip = repo::branch(root, topic)?;
                    f.topic_exists = tip.is_some();
                    f.on_branch = Some(match tip {
                        Some(tip) => repo::is_ancestor(root, sha, &tip)?,
                        None => false,
                    });
                }
                if let Some(base) = fm.audit.base_sha.as_deref() {
                    f.descends = Some(
                        git::commit_id(base)
                            && repo::commit(root, base)?.is_some()
                            && repo::is_ancestor(root, base, sha)?,
                    );
                }
                let tree = repo::tree_of(root, sha)?;
                if let Some(approved) = approved_tree(fm)
                    && approved != tree
                {
                    f.differs = repo::changed_files(root, approved, &tree)?;
                }
                f.tree = Some(tree);
            }
            Step::Commit(f)
        }
        Phase::Merged => {
            let branch = merged_into.unwrap_or_default().to_string();
            let tip = match repo::branch_name(&branch) {
                Ok(()) => repo::branch(root, &branch)?,
                Err(_) => None,
            };
            let contains = match (&tip, fm.audit.commit_sha.as_deref()) {
                (Some(tip), Some(c)) if git::commit_id(c) && repo::commit(root, c)?.is_some() => {
                    repo::is_ancestor(root, c, tip)?
                }
                _ => false,
            };
            // Topic commits after the verified one that the merge brought along: on the topic
            // branch, not in the commit, and in the merged-into branch.
            let mut beyond = Vec::new();
            if let (true, Some(tip), Some(c), Some(topic)) = (
                contains,
                &tip,
                fm.audit.commit_sha.as_deref(),
                fm.audit.topic_branch.as_deref(),
            ) && let Some(topic_tip) = repo::branch(root, topic)?
            {
                let after = repo::commits_between(root, &topic_tip, &[c])?;
                if !after.is_empty() {
                    let outside = repo::commits_between(root, &topic_tip, &[c, tip])?;
                    beyond = after.into_iter().filter(|x| !outside.contains(x)).collect();
                }
            }
            Step::Merge(MergeFacts {
                branch,
                exists: tip.is_some(),
                contains,
                beyond,
            })
        }
        Phase::CleanedUp => {
            let wt = fm.worktree.as_deref().map(Path::new);
            let worktree_exists = wt.is_some_and(|w| std::fs::symlink_metadata(w).is_ok());
            let worktree_listed = match wt {
                Some(w) => repo::lists_worktree(root, w)?,
                None => false,
            };
            Step::Cleanup(CleanupFacts {
                worktree_exists,
                worktree_listed,
                // Only to explain a refusal, and only of a worktree git still knows (in a bare
                // directory left behind git would answer for the repository around it).
                uncommitted: match wt {
                    Some(w) if worktree_exists && worktree_listed => {
                        repo::uncommitted(w).unwrap_or_default()
                    }
                    _ => Vec::new(),
                },
                branch_exists: match fm.audit.topic_branch.as_deref() {
                    Some(t) => repo::branch(root, t)?.is_some(),
                    None => false,
                },
            })
        }
        _ => Step::None,
    };
    Ok(Facts { basis, step })
}
