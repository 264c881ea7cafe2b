//! Pinned artifacts: the exact bytes a submission puts under review, their SHA-256, and finding
//! those bytes again — for the verdict that checks nothing drifted, and for `pair diff`.
//!
//! The canonical bytes of each kind of artifact ([`PinKind`]):
//!
//! * `text` — the submitted text (the note, from `--note` or `--note-file`) as the body records
//!   it: line endings normalized to `\n`, trailing blank space removed, one final newline;
//! * `files` — a red test's text followed, for each file named with `--files`, by a header line
//!   `==> PATH (N bytes) <==` and the file's N bytes and a newline;
//! * `staged` — the staged diff of the recorded worktree (against `base_sha`, or `HEAD` when none
//!   is recorded), in the canonical form of [`crate::repo::git`];
//! * `unstaged` — the unstaged diff of the worktree (the follow-up over the staged baseline).
//!
//! A text lives in the append-only body and cannot change; files and diffs live outside the
//! blackboard and can. Only reads happen here: the law holds verdicts to the pins, and commands
//! call these functions before their locked write.

use std::path::{Path, PathBuf};

use crate::board::entry::artifact_section;
use crate::board::entry::target_noun;
use crate::board::frontmatter::{Frontmatter, Observed, Pin, PinKind, Sha256, Target};
use crate::error::{Error, Result};
use crate::law::protocol::{Artifact, DiffScope};
use crate::repo::artifact::{Made, Readable};
use crate::repo::git;

/// The canonical bytes of a submitted text.
pub fn text_bytes(note: &str) -> Vec<u8> {
    let text = crate::board::document::normalize_newlines(note);
    let text = text.trim_end_matches(['\n', '\r', ' ']);
    if text.is_empty() {
        Vec::new()
    } else {
        format!("{text}\n").into_bytes()
    }
}

/// What a text submission pins.
pub fn text(note: &str) -> Observed {
    Observed {
        kind: PinKind::Text,
        sha256: Sha256::of(&text_bytes(note)),
        files: Vec::new(),
        tree: None,
        published: None,
    }
}

fn bundle(text: &[u8], files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = text.to_vec();
    for (path, content) in files {
        out.extend_from_slice(format!("==> {path} ({} bytes) <==\n", content.len()).as_bytes());
        out.extend_from_slice(content);
        out.push(b'\n');
    }
    out
}

/// Read the files a pin names, through the one reader of agents' files ([`crate::input`]):
/// each a regular file of at most the input limit, inside the recorded `worktree` when the
/// board records one. `Err` says which one could not be read and why.
fn read_files(
    paths: &[String],
    worktree: Option<&Path>,
) -> std::result::Result<Vec<(String, Vec<u8>)>, String> {
    let places: Vec<PathBuf> = worktree.map(Path::to_path_buf).into_iter().collect();
    let limit = crate::law::validate::MAX_BOARD_BYTES;
    let rules = match worktree {
        Some(_) => crate::input::Rules::inside(&places, limit),
        None => crate::input::Rules::given(limit),
    };
    paths
        .iter()
        .map(
            |p| match crate::input::read(Path::new(p), "the file", &rules) {
                Ok(bytes) => Ok((p.clone(), bytes)),
                Err(e) => Err(e.to_string()),
            },
        )
        .collect()
}

/// Where a relative `--files` path is taken from: the working directory when it is inside the
/// recorded worktree `worktree` (or none is recorded), else the worktree, where the doer writes
/// the test; `None` when the working directory cannot be read.
fn relative_base(worktree: Option<&Path>) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let Some(wt) = worktree else {
        return Some(cwd);
    };
    let real_cwd = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
    let real_wt = std::fs::canonicalize(wt).unwrap_or_else(|_| wt.to_path_buf());
    if real_cwd.starts_with(&real_wt) {
        Some(cwd)
    } else {
        Some(wt.to_path_buf())
    }
}

/// The files named with `--files`, as absolute paths (a relative one is taken from the recorded
/// worktree, or from the working directory when it is inside that worktree or none is recorded),
/// each a regular file, UTF-8, named once.
fn resolve_files(paths: &[PathBuf], worktree: Option<&Path>) -> Result<Vec<String>> {
    let mut names = Vec::with_capacity(paths.len());
    let base = relative_base(worktree);
    for given in paths {
        let joined = match &base {
            Some(b) if given.is_relative() => b.join(given),
            _ => given.clone(),
        };
        let p = &joined;
        let meta = std::fs::metadata(p).map_err(|_| {
            Error::Usage(format!(
                "--files {}: no such file (looked for {}{})",
                given.display(),
                p.display(),
                match worktree {
                    Some(w) if !p.starts_with(w) => format!(
                        "; the recorded worktree is {}: name the test file in it, by its path \
                         from there or by its absolute path",
                        w.display()
                    ),
                    Some(w) => format!(
                        "; a relative path is taken from the recorded worktree {} (or the \
                         working directory when it is inside it)",
                        w.display()
                    ),
                    None => "; a relative path is taken from the working directory".into(),
                }
            ))
        })?;
        if !meta.is_file() {
            return Err(Error::Usage(format!(
                "--files {}: not a regular file",
                given.display()
            )));
        }
        let abs = std::fs::canonicalize(p).map_err(|e| Error::io(p, "resolve", e))?;
        let Some(name) = abs.to_str().filter(|s| !s.chars().any(char::is_control)) else {
            return Err(Error::Usage(format!(
                "--files {}: the path must be UTF-8 without control characters",
                given.display()
            )));
        };
        if names.iter().any(|n| n == name) {
            return Err(Error::Usage(format!(
                "--files {}: named twice",
                given.display()
            )));
        }
        names.push(name.to_string());
    }
    Ok(names)
}

/// What a red test submitted with `--files` pins: the text and the files, named by absolute
/// path (relative ones as [`resolve_files`] takes them, from the recorded `worktree`).
pub fn files(note: &str, paths: &[PathBuf], worktree: Option<&Path>) -> Result<Observed> {
    let names = resolve_files(paths, worktree)?;
    let read = read_files(&names, worktree).map_err(|e| Error::Usage(format!("--files {e}")))?;
    Ok(Observed {
        kind: PinKind::Files,
        sha256: Sha256::of(&bundle(&text_bytes(note), &read)),
        files: names,
        tree: None,
        published: None,
    })
}

/// A red test's files published: the pin of [`files`] (the same bytes, so a pin is read the
/// same way by every release) and the commit of the base with the files at their paths in the
/// repository they are in, with each file's path in it. All the files must be in one git
/// worktree.
pub fn publish_files(
    note: &str,
    paths: &[PathBuf],
    worktree: Option<&Path>,
    base: Option<&str>,
    message: &str,
    agent: &str,
) -> Result<(Observed, Made, Vec<String>)> {
    let names = resolve_files(paths, worktree)?;
    let read = read_files(&names, worktree).map_err(|e| Error::Usage(format!("--files {e}")))?;
    let first = Path::new(&names[0]);
    let dir = first.parent().unwrap_or(Path::new("/"));
    let top = crate::repo::toplevel_of(dir)?.ok_or_else(|| {
        Error::Usage(format!(
            "--files {}: not in a git worktree; on a git board the test files are published \
             as a commit of their repository, so reviewers on other machines can read them: \
             name files inside the repository",
            names[0]
        ))
    })?;
    let top = std::fs::canonicalize(&top).unwrap_or(top);
    let mut rel = Vec::with_capacity(names.len());
    for n in &names {
        let r = Path::new(n).strip_prefix(&top).map_err(|_| {
            Error::Usage(format!(
                "--files {n}: outside the repository {} the other test files are in; the files \
                 of one red test are published as one commit, so they must all be in one \
                 repository",
                top.display()
            ))
        })?;
        rel.push(r.to_string_lossy().into_owned());
    }
    let base = base.filter(|b| crate::repo::commit(&top, b).ok().flatten().is_some());
    let in_tree: Vec<(String, Vec<u8>)> = rel
        .iter()
        .cloned()
        .zip(read.iter().map(|(_, b)| b.clone()))
        .collect();
    let made = crate::repo::artifact::files(&top, base, &in_tree, message, agent)?;
    Ok((
        Observed {
            kind: PinKind::Files,
            sha256: Sha256::of(&bundle(&text_bytes(note), &read)),
            files: names,
            tree: None,
            published: None,
        },
        made,
        rel,
    ))
}

/// Where a diff comes from: the recorded worktree and base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffSource {
    pub worktree: Option<String>,
    pub base: Option<String>,
}

impl DiffSource {
    pub fn of(fm: &Frontmatter) -> DiffSource {
        DiffSource {
            worktree: fm.worktree.clone(),
            base: fm.audit.base_sha.clone(),
        }
    }

    /// "the staged diff of /wt against HEAD".
    pub fn describe(&self, kind: PinKind) -> String {
        let wt = self.worktree.as_deref().unwrap_or("(no worktree)");
        match kind {
            PinKind::Staged => format!(
                "the staged diff of {wt} against {}",
                self.base.as_deref().unwrap_or("HEAD")
            ),
            PinKind::Unstaged => format!("the unstaged diff of {wt}"),
            k => format!("the {}", k.describe()),
        }
    }
}

/// The canonical bytes of a diff of the board's worktree.
pub fn diff_bytes(src: &DiffSource, kind: PinKind) -> Result<Vec<u8>> {
    let Some(wt) = src.worktree.as_deref() else {
        return Err(Error::Usage(
            "the blackboard records no worktree, so there is no diff to read".into(),
        ));
    };
    match kind {
        PinKind::Unstaged => git::unstaged_diff(Path::new(wt)),
        _ => git::staged_diff(Path::new(wt), src.base.as_deref()),
    }
}

/// What a code or follow-up submission pins: the diff as it is now. An empty diff is refused:
/// there would be nothing to review.
pub fn observe_diff(fm: &Frontmatter, artifact: Artifact) -> Result<Observed> {
    let kind = match artifact {
        Artifact::Followup => PinKind::Unstaged,
        _ => PinKind::Staged,
    };
    let src = DiffSource::of(fm);
    let bytes = diff_bytes(&src, kind)?;
    if bytes.is_empty() {
        return Err(Error::protocol(format!(
            "{} is empty: there is nothing to review. {}",
            capitalized(&src.describe(kind)),
            match kind {
                PinKind::Unstaged => {
                    "A follow-up is reviewed as the unstaged diff over the staged baseline: make \
                     the changes in the worktree without staging them (`git add --intent-to-add` \
                     for a new file), then submit"
                }
                _ => "Stage the change (`git add`), then submit",
            }
        )));
    }
    Ok(Observed {
        kind,
        sha256: Sha256::of(&bytes),
        files: Vec::new(),
        tree: Some(diff_tree(&src, kind)?),
        published: None,
    })
}

/// What a code or follow-up submission pins when it is published: the commit of the content
/// under review (see [`crate::repo::artifact`]) and its canonical diff against its parent. An
/// empty diff is refused, as for [`observe_diff`].
pub fn publish_diff(
    fm: &Frontmatter,
    artifact: Artifact,
    message: &str,
    agent: &str,
) -> Result<(Observed, Made)> {
    let kind = match artifact {
        Artifact::Followup => PinKind::Unstaged,
        _ => PinKind::Staged,
    };
    let src = DiffSource::of(fm);
    let Some(wt) = src.worktree.as_deref() else {
        return Err(Error::Usage(
            "the blackboard records no worktree, so there is no diff to publish".into(),
        ));
    };
    let wt = Path::new(wt);
    git::recorded(wt)?;
    let made = match kind {
        PinKind::Unstaged => {
            crate::repo::artifact::followup(wt, src.base.as_deref(), message, agent)?
        }
        _ => crate::repo::artifact::staged(wt, src.base.as_deref(), message, agent)?,
    };
    let bytes = crate::repo::artifact::diff(&Readable {
        git_dir: wt.to_path_buf(),
        commit: made.commit.clone(),
    })?;
    if bytes.is_empty() {
        // The same refusal, in the same words, as an unpublished submission.
        observe_diff(fm, artifact)?;
        return Err(Error::protocol(format!(
            "{} is empty: there is nothing to review",
            capitalized(&src.describe(kind))
        )));
    }
    Ok((
        Observed {
            kind,
            sha256: Sha256::of(&bytes),
            files: Vec::new(),
            tree: Some(made.tree.clone()),
            published: None,
        },
        made,
    ))
}

/// The git tree id of the content a diff pin covers: the index for a staged diff, the index
/// plus the unstaged changes for a follow-up (see [`crate::repo::content_tree`]).
pub fn diff_tree(src: &DiffSource, kind: PinKind) -> Result<String> {
    let Some(wt) = src.worktree.as_deref() else {
        return Err(Error::Usage(
            "the blackboard records no worktree, so there is no tree to read".into(),
        ));
    };
    crate::repo::content_tree(Path::new(wt), kind == PinKind::Unstaged)
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The heading prefix of a text submission's entry: `### Plan revision 2 — `.
fn entry_prefix(target: Target, counter: u32) -> String {
    let (noun, unit) = target_noun(target);
    format!("### {noun} {unit} {counter} — ")
}

/// The texts an entry could hold, shortest first: from the line after its heading (and the
/// blank line after it) up to each later heading line, or the end of the body. A note may hold
/// `###` headings of its own, so every such end is a candidate.
fn entry_texts<'a>(body: &'a str, prefix: &'a str) -> impl Iterator<Item = Vec<u8>> + 'a {
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let starts: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_end_matches(['\n', '\r']).starts_with(prefix))
        .map(|(i, _)| i)
        .collect();
    starts.into_iter().flat_map(move |start| {
        let lines = lines.clone();
        let mut first = start + 1;
        if lines
            .get(first)
            .is_some_and(|l| l.trim_end_matches(['\n', '\r']).is_empty())
        {
            first += 1;
        }
        let ends: Vec<usize> = (first..lines.len())
            .filter(|i| {
                crate::board::document::atx_level(lines[*i].trim_end_matches(['\n', '\r']))
                    .is_some_and(|l| l <= 3)
            })
            .chain(std::iter::once(lines.len()))
            .collect();
        ends.into_iter().map(move |end| {
            let text: String = lines[first.min(end)..end].concat();
            text_bytes(&text)
        })
    })
}

/// The artifact of a target as it stands now, in the form its pin covers.
#[derive(Debug, Clone)]
pub struct Current {
    pub target: Target,
    pub counter: u32,
    pub kind: PinKind,
    /// The pin of this counter, if its submission made one.
    pub pin: Option<Pin>,
    pub bytes: Vec<u8>,
    pub sha256: Sha256,
    /// Where the bytes come from, in words.
    pub source: String,
}

impl Current {
    /// Whether the bytes are what the pin covers (`None`: not pinned).
    pub fn matches_pin(&self) -> Option<bool> {
        self.pin.as_ref().map(|p| p.sha256 == self.sha256)
    }
}

/// An artifact that cannot be read on this machine: not stale, and never to be retried as if it
/// were.
fn unavailable(what: &str, why: impl std::fmt::Display, published: bool) -> Error {
    Error::ArtifactUnavailable {
        message: format!(
            "{what} cannot be read here ({why}). {}",
            if published {
                "Its published commit could not be fetched from the board's remote: check that \
                 the remote is reachable (`git ls-remote URL`), then run the command again"
            } else {
                "It was not published (its worktree or files are on the doer's machine): review \
                 it where it can be read, or keep the board in a git ref (`git+URL#REF:PATH`), \
                 where every submission publishes what it pins for reviewers on any machine"
            }
        ),
    }
}

/// Read the artifact of `target` as it is now. A published artifact is read from its commit
/// (`published` says where it can be read; without it, from where the doer made it). A text is
/// found in `body`: for a pinned one, the entry whose text hashes to the pin (with the files, for
/// a `files` pin, as they are now); for one that is not pinned, the latest entry. A diff is read
/// from the worktree.
pub fn current(
    fm: &Frontmatter,
    target: Target,
    body: &str,
    published: Option<&Readable>,
) -> Result<Current> {
    let counter = fm.counter(target);
    let pin = fm.pin(target).cloned();
    let kind = match (&pin, target) {
        (Some(p), _) => p.kind,
        (None, Target::Code) => match fm.phase.diff_scope() {
            Some(DiffScope::Unstaged) => PinKind::Unstaged,
            _ => PinKind::Staged,
        },
        (None, _) => PinKind::Text,
    };
    let publication = pin.as_ref().and_then(|p| p.published.clone());
    let readable = published.filter(|_| publication.is_some());
    let src = DiffSource::of(fm);
    let (bytes, source) = match (kind, readable) {
        (PinKind::Staged | PinKind::Unstaged, Some(r)) => (
            crate::repo::artifact::diff(r)?,
            format!(
                "the published commit {} ({}) against its parent",
                r.commit,
                publication
                    .as_ref()
                    .map(|p| p.refname.as_str())
                    .unwrap_or("")
            ),
        ),
        (PinKind::Staged | PinKind::Unstaged, None) => {
            if let Some(wt) = src.worktree.as_deref()
                && let Err(e) = git::recorded(Path::new(wt))
            {
                return Err(unavailable(&capitalized(&src.describe(kind)), e, false));
            }
            (diff_bytes(&src, kind)?, src.describe(kind))
        }
        (PinKind::Text | PinKind::Files, _) => {
            let files = match (&pin, readable, &publication) {
                (Some(p), Some(r), Some(publ)) if p.kind == PinKind::Files => Some(
                    p.files
                        .iter()
                        .zip(&publ.paths)
                        .map(|(name, path)| {
                            crate::repo::artifact::file(r, path)
                                .map(|b| (name.clone(), b))
                                .map_err(|e| format!("{path} in commit {}: {e}", r.commit))
                        })
                        .collect::<std::result::Result<Vec<_>, String>>(),
                ),
                (Some(p), _, _) if p.kind == PinKind::Files => {
                    Some(read_files(&p.files, fm.worktree.as_deref().map(Path::new)))
                }
                _ => None,
            };
            let section = artifact_section(target, false);
            let prefix = entry_prefix(target, counter);
            let what = format!("the entry `{prefix}…` in `## {section}`");
            let texts: Vec<Vec<u8>> = entry_texts(body, &prefix).collect();
            let render = |text: &[u8]| -> std::result::Result<Vec<u8>, String> {
                match &files {
                    Some(Ok(read)) => Ok(bundle(text, read)),
                    Some(Err(e)) => Err(e.clone()),
                    None => Ok(text.to_vec()),
                }
            };
            let found = match &pin {
                Some(p) => texts
                    .iter()
                    .filter_map(|t| render(t).ok())
                    .find(|b| Sha256::of(b) == p.sha256),
                None => None,
            };
            let bytes = match (found, &pin) {
                (Some(b), _) => b,
                // Not pinned (or no longer matching): the entry up to the next heading.
                (None, _) => match texts_latest(body, &prefix) {
                    Some(t) => render(&t).map_err(|e| {
                        unavailable(
                            &format!("{} {counter}: a test file it pinned", target_noun(target).0),
                            e,
                            readable.is_some(),
                        )
                    })?,
                    None => {
                        return Err(Error::stale_artifact(
                            format!(
                                "{what} was not found in the blackboard's body, so the \
                                 submitted text cannot be read"
                            ),
                            None,
                        ));
                    }
                },
            };
            let source = match (kind, readable) {
                (PinKind::Files, Some(r)) => {
                    format!("{what} and the test files published in commit {}", r.commit)
                }
                (PinKind::Files, None) => format!(
                    "{what} and the test files {}",
                    pin.as_ref().map(|p| p.files.join(", ")).unwrap_or_default()
                ),
                _ => what,
            };
            (bytes, source)
        }
    };
    Ok(Current {
        target,
        counter,
        kind,
        sha256: Sha256::of(&bytes),
        pin,
        bytes,
        source,
    })
}

/// The text of the latest entry with this heading prefix, up to the next heading.
fn texts_latest(body: &str, prefix: &str) -> Option<Vec<u8>> {
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let start = lines
        .iter()
        .rposition(|l| l.trim_end_matches(['\n', '\r']).starts_with(prefix))?;
    entry_texts(&lines[start..].concat(), prefix).next()
}

/// What a verdict judged: the pinned artifact, checked against what it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// The round is pinned and the artifact still is what was pinned.
    Pinned(Sha256),
    /// The round's submission pinned nothing (a blackboard from before pins): not checked.
    NotPinned,
}

/// Check a verdict's artifact before it is written: the reviewer's `--artifact-sha256` (what it
/// read) must be the pin, and the artifact as it is now must still hash to the pin (for a text,
/// it always does: the body is append-only). `body` is needed only for a `files` pin. When the
/// artifact changed after it was pinned, the refusal names the doer's resubmission
/// (`doer_submit`, a command line) and carries the caller's own step as its hint (`after_drift`).
pub fn check_verdict(
    fm: &Frontmatter,
    target: Target,
    body: Option<&str>,
    read: Option<Sha256>,
    doer_submit: &str,
    after_drift: &crate::error::Hint,
    published: Option<&Readable>,
) -> Result<Judged> {
    let Some(pin) = fm.pin(target) else {
        return Ok(Judged::NotPinned);
    };
    let counter = fm.counter(target);
    let (noun, unit) = target_noun(target);
    let noun = noun.to_lowercase();
    if let Some(h) = read
        && h != pin.sha256
    {
        return Err(Error::stale_artifact(
            format!(
                "stale verdict: you read an artifact with sha256 {h}, but {noun} {unit} {counter} \
                 is pinned at {} ({}). What you read is not what was submitted for review: read \
                 the pinned artifact with `pair diff` and give your verdict on it",
                pin.sha256,
                pin.kind.describe()
            ),
            Some(crate::error::Hint::Run {
                command: "diff",
                args: vec![],
            }),
        ));
    }
    if !pin.kind.can_drift() {
        return Ok(Judged::Pinned(pin.sha256));
    }
    if let (Some(r), Some(publ)) = (published, &pin.published) {
        // A commit cannot change: what is checked is that the commit read is the one pinned and
        // that it holds what the pin covers.
        let tree = match &pin.tree {
            Some(_) => Some(crate::repo::artifact::tree(r)?),
            None => None,
        };
        let now = current(fm, target, body.unwrap_or_default(), published)?;
        if r.commit != publ.commit || tree.as_ref() != pin.tree.as_ref() || now.sha256 != pin.sha256
        {
            return Err(Error::ArtifactMismatch {
                message: format!(
                    "the published artifact of {noun} {unit} {counter} is not what was pinned: \
                     commit {} (tree {}) hashes to {}, the pin is {} (commit {}, tree {}). The \
                     verdict was not recorded. Tell the user: the ref {} on the remote was \
                     changed after the submission; the doer resubmits (`{doer_submit}`)",
                    r.commit,
                    tree.as_deref().unwrap_or("-"),
                    now.sha256,
                    pin.sha256,
                    publ.commit,
                    pin.tree.as_deref().unwrap_or("-"),
                    publ.refname
                ),
            });
        }
        return Ok(Judged::Pinned(pin.sha256));
    }
    let now = current(fm, target, body.unwrap_or_default(), None)?;
    // The same diff over a different index is different content: the tree says so.
    let tree_now = match &pin.tree {
        Some(_) => Some(diff_tree(&DiffSource::of(fm), pin.kind)?),
        None => None,
    };
    if now.sha256 == pin.sha256
        && let (Some(was), Some(is)) = (&pin.tree, &tree_now)
        && was != is
    {
        return Err(Error::stale_artifact(
            format!(
                "stale artifact: the content under review in {} changed after {noun} {unit} \
                 {counter} was submitted (its diff is the same, but the tree it stands for was \
                 pinned at {was} and is now {is}: the index changed under it). The verdict was \
                 not recorded. The doer must resubmit it (`{doer_submit}`) or restore it",
                DiffSource::of(fm).worktree.as_deref().unwrap_or_default()
            ),
            Some(after_drift.clone()),
        ));
    }
    if now.sha256 != pin.sha256 {
        return Err(Error::stale_artifact(
            format!(
                "stale artifact: {} changed after {noun} {unit} {counter} was submitted (pinned \
                 sha256 {}, now {}). The verdict was not recorded: a verdict would not be about \
                 what was submitted. The doer must resubmit it (`{doer_submit}`) or restore it; \
                 then review the new pin",
                now.source, pin.sha256, now.sha256
            ),
            Some(after_drift.clone()),
        ));
    }
    Ok(Judged::Pinned(pin.sha256))
}

/// A unified diff's size, file by file.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FileStat {
    pub path: String,
    pub insertions: u64,
    pub deletions: u64,
    pub binary: bool,
}

/// Count what a canonical diff changes, file by file (hunk line counts are read from the hunk
/// headers, so a removed line that starts with `--` is never taken for a header).
pub fn diff_stat(diff: &[u8]) -> Vec<FileStat> {
    let mut out: Vec<FileStat> = Vec::new();
    let (mut old_left, mut new_left) = (0u64, 0u64);
    for line in diff.split(|b| *b == b'\n') {
        if old_left > 0 || new_left > 0 {
            let Some(f) = out.last_mut() else { break };
            match line.first() {
                Some(b'+') => {
                    f.insertions += 1;
                    new_left = new_left.saturating_sub(1);
                }
                Some(b'-') => {
                    f.deletions += 1;
                    old_left = old_left.saturating_sub(1);
                }
                Some(b'\\') => {}
                _ => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"diff --git ") {
            let rest = String::from_utf8_lossy(rest);
            let path = rest
                .rsplit_once(" b/")
                .map(|(_, b)| b.to_string())
                .unwrap_or_else(|| rest.to_string());
            out.push(FileStat {
                path,
                ..FileStat::default()
            });
        } else if line.starts_with(b"GIT binary patch") || line.starts_with(b"Binary files ") {
            if let Some(f) = out.last_mut() {
                f.binary = true;
            }
        } else if let Some(rest) = line.strip_prefix(b"@@ -") {
            let header = String::from_utf8_lossy(rest);
            let mut parts = header.split_whitespace();
            let count = |s: Option<&str>| -> u64 {
                s.map(|r| r.trim_start_matches('+'))
                    .map(|r| r.split_once(',').map_or(Some(1), |(_, n)| n.parse().ok()))
                    .and_then(|n| n)
                    .unwrap_or(0)
            };
            old_left = count(parts.next());
            new_left = count(parts.next());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_pinned_as_the_body_records_it() {
        assert_eq!(text_bytes("a\r\nb  \n\n"), b"a\nb\n");
        assert_eq!(text_bytes("\n\n"), b"");
        assert_eq!(text("x\n").sha256, text("x").sha256);
    }

    #[test]
    fn an_entry_is_found_by_its_pin_even_with_headings_inside_the_note() {
        let note = "Plan:\n\n### Step one\n\nDo it.\n";
        let body = format!(
            "## Plan Revisions\n\n### Plan revision 1 — doer — 2026-01-01T00:00:00Z\n\n{note}\n\
             ### Plan revision 2 — doer — 2026-01-02T00:00:00Z\n\nOther.\n\n## Plan Reviews\n"
        );
        let prefix = entry_prefix(Target::Plan, 1);
        let want = Sha256::of(&text_bytes(note));
        assert!(entry_texts(&body, &prefix).any(|t| Sha256::of(&t) == want));
        assert_eq!(
            texts_latest(&body, &entry_prefix(Target::Plan, 2)).unwrap(),
            b"Other.\n"
        );
    }

    #[test]
    fn the_stat_counts_hunk_lines_by_their_headers() {
        let diff = b"diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n\
                     ---x\n+++y\n same\ndiff --git a/y b/y\nGIT binary patch\nliteral 1\n";
        let stat = diff_stat(diff);
        assert_eq!(stat.len(), 2);
        assert_eq!((stat[0].insertions, stat[0].deletions), (1, 1));
        assert!(stat[1].binary);
    }
}
