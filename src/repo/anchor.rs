//! Checking an objection's anchor against the artifact under review: the file, line or name it
//! points at must exist in the worktree (the index for a staged diff), the commit in the
//! repository. Run by the command before its locked write; the law checks only the form.

use std::path::{Path, PathBuf};

use crate::board::frontmatter::{Frontmatter, PinKind, Target};
use crate::board::ledger::anchor::{Anchor, AnchorError};

/// What an anchor is checked against: the board and the artifact under review.
pub struct Artifact<'a> {
    pub fm: &'a Frontmatter,
    pub target: Target,
    /// The body of the blackboard (the texts submitted, the headings).
    pub body: &'a str,
    /// The directory path anchors are relative to: the recorded worktree, else the
    /// blackboard's directory.
    pub base: PathBuf,
    /// The files the artifact touches (a code diff's files, a red test's pinned files), as
    /// paths relative to `base` where they are inside it; `None` for a text artifact.
    pub files: Option<Vec<String>>,
    /// The artifact is a staged diff: its files' new side is the index, not the working tree.
    pub staged: bool,
    /// Where the published commit can be read, when the artifact was published: every file is
    /// read from it, on any machine.
    pub published: Option<crate::repo::artifact::Readable>,
}

/// Check that an anchor points at something that exists inside the artifact: a file the diff
/// touches (or, with `undeclared`, any file in the worktree), a line its new side has (the index
/// for a staged diff, the working tree otherwise), a name in it, a
/// heading of the body, a commit of the worktree, a pinned hash. A refusal says what is wrong.
pub fn check(a: &Anchor, art: &Artifact<'_>, undeclared: bool) -> Result<(), AnchorError> {
    match a {
        Anchor::Line { path, line } => {
            let text = file_of(art, path, undeclared)?;
            let lines = text.lines().count() as u32;
            if *line > lines {
                return Err(AnchorError(format!(
                    "`{path}:{line}`: {path} has {lines} line(s) in {}",
                    match &art.published {
                        Some(r) => format!("the published commit {}", r.commit),
                        None => art.base.display().to_string(),
                    }
                )));
            }
            Ok(())
        }
        Anchor::Symbol { path, symbol } => {
            let text = file_of(art, path, undeclared)?;
            let name = symbol.rsplit("::").next().unwrap_or(symbol);
            let name = name.trim_end_matches("()");
            if !text.contains(name) {
                return Err(AnchorError(format!(
                    "`{path}#{symbol}`: {path} does not contain `{name}`"
                )));
            }
            Ok(())
        }
        Anchor::Heading(h) => {
            let found = crate::board::document::lines(art.body).any(|(_, l, kind)| {
                matches!(kind, crate::board::document::LineKind::Heading(_))
                    && l.trim_end_matches(['\n', '\r'])
                        .trim_start_matches('#')
                        .trim()
                        == h.as_str()
            });
            if found {
                Ok(())
            } else {
                Err(AnchorError(format!(
                    "`## {h}`: the body has no heading {h:?} (the sections and the headings of \
                     the submitted texts are what a heading anchor can name)"
                )))
            }
        }
        Anchor::Commit(c) => {
            let Some(wt) = art.fm.worktree.as_deref() else {
                return Err(AnchorError(format!(
                    "`commit {c}`: the blackboard records no worktree to find the commit in"
                )));
            };
            match crate::repo::commit(Path::new(wt), c) {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err(AnchorError(format!(
                    "`commit {c}`: no such commit in the worktree {wt}"
                ))),
                Err(e) => Err(AnchorError(format!("`commit {c}`: {e}"))),
            }
        }
        Anchor::Hash(h) => {
            if art.fm.pins.iter().any(|(_, p)| p.sha256.to_string() == *h) {
                Ok(())
            } else {
                Err(AnchorError(format!(
                    "`sha256:{h}`: no artifact of this blackboard is pinned at that hash (`pair \
                     diff` prints the pinned one)"
                )))
            }
        }
    }
}

/// The text of a file an anchor names: it must be a file of the artifact (unless the reviewer
/// declares undeclared impact), and exist under the base directory.
fn file_of(art: &Artifact<'_>, path: &str, undeclared: bool) -> Result<String, AnchorError> {
    let inside = art
        .files
        .as_ref()
        .is_some_and(|files| files.iter().any(|f| f == path));
    if !inside && !undeclared {
        return Err(AnchorError(match &art.files {
            Some(files) if !files.is_empty() => format!(
                "{path} is not a file of the artifact under review (it touches {}); an objection \
                 about impact outside it names the coupling with --undeclared-impact TEXT",
                files.join(", ")
            ),
            _ => format!(
                "the {} under review is a text that names no files, so {path} is outside it; an \
                 objection about impact outside it names the coupling with --undeclared-impact \
                 TEXT",
                art.target.as_str().replace('_', " ")
            ),
        }));
    }
    if let Some(r) = &art.published {
        return crate::repo::artifact::file(r, path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|_| {
                AnchorError(format!(
                    "{path}: no such file in the published commit {} of the artifact",
                    r.commit
                ))
            });
    }
    if inside && art.staged {
        return crate::repo::git::staged_file(&art.base, path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| AnchorError(format!("{path}: the staged file cannot be read ({e})")));
    }
    // Read through the one reader of agents' files, inside the base directory only: an
    // anchor cannot tell whether a file elsewhere exists, how long it is or what it holds.
    // A path that leaves it by its words is refused before anything is looked up.
    let words = Path::new(path);
    if words.is_absolute()
        || words
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(AnchorError(format!(
            "{path}: a file anchor names a file of the worktree by its path from there, without \
             `/` at its start or `..`"
        )));
    }
    let full = art.base.join(path);
    let base = [art.base.to_path_buf()];
    let rules = crate::input::Rules::inside(&base, crate::law::validate::MAX_BOARD_BYTES);
    crate::input::read(&full, "the anchor's file", &rules)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| {
            AnchorError(format!(
                "{path}: cannot be read ({e}); a file anchor names a file of the worktree, \
                 relative to it"
            ))
        })
}

/// The files an artifact touches, relative to `base`: a code diff's files, a red test's pinned
/// files; `None` for a text.
pub fn artifact_files(
    fm: &Frontmatter,
    target: Target,
    diff: Option<&[u8]>,
    base: &Path,
) -> Option<Vec<String>> {
    if let Some(d) = diff {
        return Some(
            crate::repo::pin::diff_stat(d)
                .into_iter()
                .map(|f| f.path)
                .collect(),
        );
    }
    let pin = fm.pin(target)?;
    if let Some(p) = pin.published.as_ref().filter(|p| !p.paths.is_empty()) {
        return Some(p.paths.clone());
    }
    (pin.kind == PinKind::Files).then(|| {
        pin.files
            .iter()
            .map(|f| {
                Path::new(f)
                    .strip_prefix(base)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| f.clone())
            })
            .collect()
    })
}
