//! Stable anchors: where in the artifact an objection points, in a form that does not shift
//! between revisions. [`parse`] checks the form (every write does); [`check`] checks, when an
//! objection is raised, that the anchor points at something that exists inside the artifact
//! under review.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::board::frontmatter::{Frontmatter, PinKind, Target};

/// The accepted forms, for messages.
pub const FORMS: &str = "`path:line` (a file of the artifact and a line it has, e.g. \
    `src/upload.rs:42`), `path#symbol` (a file of the artifact and a name in it, e.g. \
    `src/upload.rs#retry_budget`), `## Heading` (a heading of the body or the artifact, written at its own level: \
    `#### Step 2` too), \
    `commit SHA` (7-40 hex digits of a commit in the worktree) or `sha256:HASH` (an artifact's \
    pinned hash, 64 hex digits)";

/// An anchor, by form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    Line { path: String, line: u32 },
    Symbol { path: String, symbol: String },
    Heading(String),
    Commit(String),
    Hash(String),
}

/// Why an anchor was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorError(pub String);

impl fmt::Display for AnchorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn vague(a: &str, why: &str) -> AnchorError {
    AnchorError(format!(
        "{a:?} is not a stable anchor ({why}); the accepted forms are {FORMS}"
    ))
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn good_path(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('-')
        && !p.chars().any(|c| c.is_whitespace() || c.is_control())
        && !p.split('/').any(|part| part == "..")
}

fn good_symbol(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '(' | ')' | '<' | '>' | '-')
        })
}

/// The form of an anchor; anything else ("near the top", "around line 50") is refused with
/// the accepted forms.
pub fn parse(a: &str) -> Result<Anchor, AnchorError> {
    let t = a.trim();
    if t.is_empty() {
        return Err(vague(a, "it is empty"));
    }
    if t.contains('\n') {
        return Err(vague(a, "it spans several lines"));
    }
    // A heading at any level, as it is written (`## Plan`, `#### Step 2`): the level does not
    // matter to which heading it names.
    let level = t.bytes().take_while(|b| *b == b'#').count();
    if let Some(h) = (1..=6)
        .contains(&level)
        .then(|| t[level..].strip_prefix(' '))
        .flatten()
    {
        let h = h.trim();
        if h.is_empty() {
            return Err(vague(a, "the heading is empty"));
        }
        return Ok(Anchor::Heading(h.to_string()));
    }
    if let Some(c) = t.strip_prefix("commit ") {
        let c = c.trim();
        if is_hex(c) && (7..=40).contains(&c.len()) {
            return Ok(Anchor::Commit(c.to_lowercase()));
        }
        return Err(vague(a, "a commit is 7-40 hex digits"));
    }
    if let Some(h) = t.strip_prefix("sha256:") {
        if is_hex(h) && h.len() == 64 {
            return Ok(Anchor::Hash(h.to_lowercase()));
        }
        return Err(vague(a, "a SHA-256 is 64 hex digits"));
    }
    if is_hex(t) && (7..=40).contains(&t.len()) {
        return Ok(Anchor::Commit(t.to_lowercase()));
    }
    if is_hex(t) && t.len() == 64 {
        return Ok(Anchor::Hash(t.to_lowercase()));
    }
    if let Some((path, sym)) = t.split_once('#') {
        if good_path(path) && good_symbol(sym) {
            return Ok(Anchor::Symbol {
                path: path.to_string(),
                symbol: sym.to_string(),
            });
        }
        return Err(vague(
            a,
            "`path#symbol` needs a file path and a name without spaces",
        ));
    }
    if let Some((path, line)) = t.rsplit_once(':')
        && good_path(path)
    {
        return match line.parse::<u32>() {
            Ok(n) if n > 0 && !line.starts_with('0') => Ok(Anchor::Line {
                path: path.to_string(),
                line: n,
            }),
            _ => Err(vague(a, "`path:line` needs a line number from 1")),
        };
    }
    Err(vague(a, "it names no file, heading, commit or hash"))
}

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
                    art.base.display()
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
    if inside && art.staged {
        return crate::repo::git::staged_file(&art.base, path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| AnchorError(format!("{path}: the staged file cannot be read ({e})")));
    }
    let full = art.base.join(path);
    std::fs::read(&full)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| {
            AnchorError(format!(
                "{path}: cannot read {} ({e}); a file anchor names a file of the worktree",
                full.display()
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
            crate::board::pin::diff_stat(d)
                .into_iter()
                .map(|f| f.path)
                .collect(),
        );
    }
    let pin = fm.pin(target)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accepted_forms_parse_and_vague_ones_are_refused() {
        assert_eq!(
            parse("src/a.rs:12"),
            Ok(Anchor::Line {
                path: "src/a.rs".into(),
                line: 12
            })
        );
        assert!(matches!(
            parse("src/a.rs#Escrow::refund()"),
            Ok(Anchor::Symbol { .. })
        ));
        assert_eq!(
            parse("## Dispute Resolution"),
            Ok(Anchor::Heading("Dispute Resolution".into()))
        );
        assert_eq!(
            parse("#### Step 2: the retry"),
            Ok(Anchor::Heading("Step 2: the retry".into()))
        );
        assert_eq!(
            parse("commit a1b2c3d"),
            Ok(Anchor::Commit("a1b2c3d".into()))
        );
        assert!(matches!(parse(&"ab".repeat(32)), Ok(Anchor::Hash(_))));
        for bad in [
            "near the top of the file",
            "the part where it handles errors",
            "around line 50",
            "src/a.rs:0",
            "src/a.rs:x",
            "../etc/passwd:1",
            "",
            "## ",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.0.contains("accepted forms"), "{bad}: {e}");
        }
    }
}
