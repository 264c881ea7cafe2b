//! Where a blackboard is kept: a file (a plain path, the default) or a file in the tree of a git
//! ref on a remote, named `git+<remote-url>#<ref>:<path-in-tree>`.
//!
//! The ref must be a full ref name (`refs/pair/task`), checked with the rules of
//! `git check-ref-format`; `:<path-in-tree>` may be left out and defaults to [`DEFAULT_PATH`]. A
//! local file whose name starts with `git+` is named `./git+…`.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The prefix that makes a board name a git address.
pub const PREFIX: &str = "git+";

/// The file in the ref's tree when the address names none.
pub const DEFAULT_PATH: &str = "board.md";

/// A blackboard kept in the tree of a git ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitBoard {
    /// The remote, as git takes it (`file:///srv/repo.git`, `ssh://host/repo.git`, ...).
    pub url: String,
    /// The full ref name (`refs/pair/task`).
    pub refname: String,
    /// The file's path in the ref's tree (`board.md`, `boards/task.md`).
    pub path: String,
}

impl GitBoard {
    /// The address this board is named by.
    pub fn address(&self) -> String {
        format!("{PREFIX}{}#{}:{}", self.url, self.refname, self.path)
    }
}

/// Where a blackboard is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file on this machine.
    Local(PathBuf),
    /// A file in the tree of a git ref.
    Git(GitBoard),
}

/// Whether a board name is a git address (it may still be a malformed one).
pub fn is_git(board: &Path) -> bool {
    board
        .as_os_str()
        .as_encoded_bytes()
        .starts_with(PREFIX.as_bytes())
}

impl Location {
    /// Where the board named `board` is kept; a malformed git address is a usage error naming
    /// the part that is wrong.
    pub fn of(board: &Path) -> Result<Location> {
        if !is_git(board) {
            return Ok(Location::Local(board.to_path_buf()));
        }
        let Some(text) = board.to_str() else {
            return Err(bad(
                &board.to_string_lossy(),
                "it is not valid UTF-8",
                "write the address in UTF-8",
            ));
        };
        parse(text).map(Location::Git)
    }

    /// The git board, if the board is one.
    pub fn git(board: &Path) -> Result<Option<GitBoard>> {
        Ok(match Location::of(board)? {
            Location::Git(g) => Some(g),
            Location::Local(_) => None,
        })
    }
}

fn bad(address: &str, what: &str, fix: &str) -> Error {
    let address = redacted(address);
    Error::Usage(format!(
        "{address:?} is not a valid git board address: {what}; {fix}. The form is \
         git+<remote-url>#<ref>:<path-in-tree>, e.g. git+file:///srv/repo.git#refs/pair/task:task.md \
         (`:<path-in-tree>` defaults to {DEFAULT_PATH}; name a local file starting with `git+` as \
         ./git+…)"
    ))
}

/// Parse `git+<url>#<ref>[:<path>]`.
pub fn parse(address: &str) -> Result<GitBoard> {
    let rest = address.strip_prefix(PREFIX).unwrap_or(address);
    let Some((url, target)) = rest.rsplit_once('#') else {
        return Err(bad(
            address,
            "there is no `#<ref>` after the remote URL",
            "add the ref, e.g. #refs/pair/task",
        ));
    };
    check_url(address, url)?;
    let (refname, path) = match target.split_once(':') {
        Some((r, p)) => (r, p),
        None => (target, DEFAULT_PATH),
    };
    check_ref(address, refname)?;
    check_path(address, path)?;
    Ok(GitBoard {
        url: url.to_string(),
        refname: refname.to_string(),
        path: path.to_string(),
    })
}

fn check_url(address: &str, url: &str) -> Result<()> {
    if url.is_empty() {
        return Err(bad(
            address,
            "the remote URL is empty",
            "give the remote after `git+`, e.g. git+file:///srv/repo.git",
        ));
    }
    if url.starts_with('-') {
        return Err(bad(
            address,
            "the remote URL starts with `-`",
            "give a URL or a path that git cannot take for an option",
        ));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad(
            address,
            "the remote URL has a space or a control character",
            "percent-encode it",
        ));
    }
    if let Some(secret) = secret(url) {
        return Err(bad(
            address,
            &format!("the remote URL {}", secret.what),
            "take it out and let git's credential helpers supply it (`git config --global \
             credential.helper …`, see `git help credentials`), or use ssh keys: pair writes the \
             address into every commit message and Decisions entry it records and prints it in \
             its output, so it must carry no secret",
        ));
    }
    Ok(())
}

/// A part of a remote URL that may carry a secret: what it is, and where it is in the URL (byte
/// offsets), each shown as `***`.
struct Secret {
    what: &'static str,
    spans: Vec<(usize, usize)>,
}

/// The transports whose URLs are handed to curl, which takes a token in the user-name place
/// (`https://TOKEN@host/…`) as readily as in the password's.
const CURL_SCHEMES: &[&str] = &["http", "https", "ftp", "ftps"];

/// Whether a URL may carry a secret: a password (`user:password@`) always, any query (`?…`,
/// where `access_token=…` goes), and for the transports curl carries (http, https, ftp, ftps)
/// any user part at all. A bare user name elsewhere names an account (`ssh://git@host/…`,
/// `git@host:repo.git`) and is kept. A remote helper's `<transport>::<address>` is judged by
/// its address.
fn secret(url: &str) -> Option<Secret> {
    // `<transport>::<address>`: a transport name, then the address it is given.
    let offset = url
        .find("::")
        .filter(|&i| {
            i > 0
                && url[..i]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        })
        .map_or(0, |i| i + 2);
    let rest = &url[offset..];
    let shift = |spans: Vec<(usize, usize)>| -> Vec<(usize, usize)> {
        spans
            .into_iter()
            .map(|(a, b)| (a + offset, b + offset))
            .collect()
    };
    let Some(scheme_end) = rest.find("://") else {
        // `[user@]host:path` (git's scp-like form: a colon before any slash) or a local path.
        let head = &rest[..rest.find('/').unwrap_or(rest.len())];
        let colon = head.find(':')?;
        let at = head[..].rfind('@').filter(|&at| at > colon)?;
        return Some(Secret {
            what: "holds a password (`user:password@`)",
            spans: shift(vec![(colon + 1, at)]),
        });
    };
    let scheme = rest[..scheme_end].to_ascii_lowercase();
    let start = scheme_end + 3;
    let authority_end = rest[start..]
        .find(['/', '?', '#'])
        .map_or(rest.len(), |i| start + i);
    let user = rest[start..authority_end]
        .rfind('@')
        .map(|at| (start, start + at));
    if let Some(q) = rest[start..].find('?').map(|i| start + i) {
        let end = rest[q..].find('#').map_or(rest.len(), |i| q + i);
        let mut spans = vec![(q + 1, end)];
        if let Some((from, to)) = user {
            spans.insert(0, (from, to));
        }
        return Some(Secret {
            what: "has a query (`?…`), where a token may be passed",
            spans: shift(spans),
        });
    }
    let (from, to) = user?;
    if CURL_SCHEMES.contains(&scheme.as_str()) {
        return Some(Secret {
            what: "has a user part (`user@`, `TOKEN@` or `user:password@`), where an http(s) \
                   token is passed",
            spans: shift(vec![(from, to)]),
        });
    }
    let colon = rest[from..to].find(':')?;
    Some(Secret {
        what: "holds a password (`user:password@`)",
        spans: shift(vec![(from + colon + 1, to)]),
    })
}

/// The address with every part of its URL that may carry a secret (a password, an http(s)
/// user part, a query) replaced by `***`, for messages and for the command lines `pair`
/// records.
pub fn redacted(address: &str) -> String {
    let Some(rest) = address.strip_prefix(PREFIX) else {
        return address.to_string();
    };
    let url = rest.rsplit_once('#').map_or(rest, |(url, _)| url);
    let Some(found) = secret(url) else {
        return address.to_string();
    };
    let mut out = address.to_string();
    for (from, to) in found.spans.into_iter().rev() {
        let (from, to) = (PREFIX.len() + from, PREFIX.len() + to);
        out.replace_range(from..to, "***");
    }
    out
}

/// The rules of `git check-ref-format` for a full ref name (one that must start with `refs/`).
fn check_ref(address: &str, refname: &str) -> Result<()> {
    let wrong = |what: String| {
        Err(bad(
            address,
            &format!("the ref {refname:?} {what}"),
            "give a full ref name such as refs/pair/task",
        ))
    };
    if !refname.starts_with("refs/") || refname.len() <= "refs/".len() {
        return wrong("is not a full ref name under refs/".into());
    }
    if refname.ends_with('/') || refname.ends_with('.') {
        return wrong("ends with `/` or `.`".into());
    }
    if refname.contains("..") || refname.contains("@{") || refname.contains("//") {
        return wrong("contains `..`, `@{` or `//`".into());
    }
    if let Some(c) = refname
        .chars()
        .find(|c| c.is_control() || " ~^:?*[\\".contains(*c))
    {
        return wrong(format!("contains {c:?}, which a ref name may not"));
    }
    for part in refname.split('/') {
        if part.starts_with('.') || part.ends_with(".lock") {
            return wrong(format!(
                "has a component {part:?} starting with `.` or ending with `.lock`"
            ));
        }
    }
    Ok(())
}

fn check_path(address: &str, path: &str) -> Result<()> {
    let wrong = |what: &str| {
        Err(bad(
            address,
            &format!("the path in the tree {path:?} {what}"),
            "give a relative path such as board.md or boards/task.md",
        ))
    };
    if path.is_empty() {
        return wrong("is empty");
    }
    if path.starts_with('/') || path.ends_with('/') {
        return wrong("starts or ends with `/`");
    }
    if path.chars().any(|c| c.is_control()) {
        return wrong("has a control character");
    }
    if path
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == ".." || p == ".git")
    {
        return wrong("has an empty, `.`, `..` or `.git` component");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_remote_ref_and_path() {
        let g = parse("git+file:///srv/repo.git#refs/pair/task:task.md").unwrap();
        assert_eq!(g.url, "file:///srv/repo.git");
        assert_eq!(g.refname, "refs/pair/task");
        assert_eq!(g.path, "task.md");
        assert_eq!(
            g.address(),
            "git+file:///srv/repo.git#refs/pair/task:task.md"
        );
        let g = parse("git+ssh://host/repo.git#refs/pair/t").unwrap();
        assert_eq!(g.path, DEFAULT_PATH);
        let g = parse("git+git://127.0.0.1:9418/r.git#refs/pair/a:boards/x.md").unwrap();
        assert_eq!(g.url, "git://127.0.0.1:9418/r.git");
        assert_eq!(g.path, "boards/x.md");
    }

    #[test]
    fn a_bad_address_names_the_wrong_part() {
        for (address, part) in [
            ("git+file:///r.git", "no `#<ref>`"),
            ("git+#refs/pair/t", "URL is empty"),
            ("git+-oProxy#refs/pair/t", "starts with `-`"),
            ("git+file:///r.git#main", "not a full ref name"),
            ("git+file:///r.git#refs/pair/a..b", "contains `..`"),
            ("git+file:///r.git#refs/pair/x.lock", "`.lock`"),
            ("git+file:///r.git#refs/pair/a b", "contains ' '"),
            ("git+file:///r.git#refs/pair/t:", "is empty"),
            ("git+file:///r.git#refs/pair/t:../x", "`..`"),
            ("git+file:///r.git#refs/pair/t:/abs", "starts or ends"),
            (
                "git+ssh://bob:pw@host/r.git#refs/pair/t",
                "holds a password",
            ),
        ] {
            let e = parse(address).unwrap_err();
            assert_eq!(e.code(), crate::error::exit::USAGE, "{address}");
            assert!(e.to_string().contains(part), "{address}: {e}");
        }
    }

    #[test]
    fn a_password_in_the_url_is_refused_and_never_printed_back() {
        for (address, shown) in [
            (
                "git+ssh://bob:s3cret@host:22/r.git#refs/pair/t:a.md",
                "bob:***@host",
            ),
            (
                "git+file://bob:s3cret@/srv/r.git#refs/pair/t",
                "bob:***@/srv",
            ),
            (
                "git+bob:s3cret@host:r.git#refs/pair/t",
                "bob:***@host:r.git",
            ),
            (
                "git+https://bob:s3cret@host/r.git#refs/pair/t",
                "https://***@host",
            ),
            ("git+https://bob:s3cret@host/r.git#main", "https://***@host"),
        ] {
            let e = parse(address).unwrap_err();
            assert_eq!(e.code(), crate::error::exit::USAGE, "{address}");
            assert!(!e.to_string().contains("s3cret"), "{address}: {e}");
            assert!(e.to_string().contains(shown), "{address}: {e}");
            assert!(
                e.to_string().contains("credential helper"),
                "{address}: {e}"
            );
        }
        // A user name alone names an account, except where curl would send it as a token.
        assert!(parse("git+ssh://git@host/r.git#refs/pair/t").is_ok());
        assert!(parse("git+git@host:r.git#refs/pair/t").is_ok());
        assert!(parse("git+git@host:org/r@v2.git#refs/pair/t").is_ok());
        assert!(parse("git+https://host/a:b@c.git#refs/pair/t").is_ok());
        assert!(parse("git+https://host/r.git#refs/pair/t").is_ok());
    }

    #[test]
    fn a_token_in_the_user_part_or_a_query_is_refused_and_never_printed_back() {
        for (address, part, shown) in [
            (
                "git+https://T0KEN@host/r.git#refs/pair/t",
                "user part",
                "https://***@host/",
            ),
            (
                "git+HTTP://T0KEN@host/r.git#refs/pair/t",
                "user part",
                "HTTP://***@host/",
            ),
            (
                "git+ftps://T0KEN@host/r.git#refs/pair/t",
                "user part",
                "ftps://***@host/",
            ),
            (
                "git+https://T0KEN:x-oauth-basic@host/r.git#refs/pair/t",
                "user part",
                "https://***@host/",
            ),
            (
                "git+https://host/r.git?access_token=T0KEN#refs/pair/t",
                "query",
                "r.git?***#refs/pair/t",
            ),
            (
                "git+ssh://git@host/r.git?T0KEN#refs/pair/t",
                "query",
                "ssh://***@host/r.git?***#",
            ),
            (
                "git+persistent-https::https://T0KEN@host/r.git#refs/pair/t",
                "user part",
                "persistent-https::https://***@host/",
            ),
        ] {
            let e = parse(address).unwrap_err();
            assert_eq!(e.code(), crate::error::exit::USAGE, "{address}");
            let m = e.to_string();
            assert!(!m.contains("T0KEN"), "{address}: {m}");
            assert!(m.contains(part) && m.contains(shown), "{address}: {m}");
            assert!(m.contains("credential helper"), "{address}: {m}");
            assert!(!redacted(address).contains("T0KEN"), "{address}");
        }
        assert_eq!(
            redacted("git+ssh://git@host/r.git#refs/pair/t"),
            "git+ssh://git@host/r.git#refs/pair/t"
        );
        assert_eq!(redacted("board.md"), "board.md");
    }

    #[test]
    fn only_names_starting_with_git_plus_are_git_boards() {
        assert!(is_git(Path::new("git+file:///r#refs/pair/t")));
        assert!(!is_git(Path::new("./git+file")));
        assert!(!is_git(Path::new("board.md")));
    }
}
