//! Stable anchors: where in the artifact an objection points, in a form that does not shift
//! between revisions. [`parse`] checks the form (every write does); [`check`] checks, when an
//! objection is raised, that the anchor points at something that exists inside the artifact
//! under review.

use std::fmt;

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
