//! Where the boards a board waits for are, and their phases: the reading behind
//! [`crate::law::depend`], which judges from what is read here.
//!
//! A dependency is named relative to the board that waits:
//!
//! * on a file board, by its path relative to the board's directory (`../api/schema.md`; an
//!   absolute path is taken as it is), `.md` added when the name does not end in it, so the
//!   names `ls` gives (`schema`) work as they are;
//! * on a git board, by its ref relative to the board's own ref's namespace (`schema` next to
//!   `refs/pair/task` is `refs/pair/schema`), or by a full ref name (`refs/pair/api/schema`),
//!   the board at the same path in the ref's tree, on the same remote.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use crate::board::depend::{By, Named};
use crate::board::frontmatter::Frontmatter;
use crate::error::{Error, Result};
use crate::law::depend::{Dep, State};
use crate::store::Session;
use crate::store::location::{self, GitBoard};

/// The address of the board `name` names, for the board at `board`.
pub fn resolve(board: &Path, name: &str) -> Result<PathBuf> {
    crate::board::depend::check_name(name).map_err(Error::Usage)?;
    if let Some(g) = location::Location::git(board)? {
        let refname = if name.starts_with("refs/") {
            name.to_string()
        } else {
            let ns = g.refname.rsplit_once('/').map_or("", |(ns, _)| ns);
            format!("{ns}/{name}")
        };
        let address = GitBoard {
            url: g.url,
            refname,
            path: g.path,
        }
        .address();
        // The same checks as any board address (a ref name git takes).
        location::parse(&address)?;
        return Ok(PathBuf::from(address));
    }
    let dir = match board.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut p = dir.join(name);
    if !name.ends_with(".md") {
        let mut s = p.into_os_string();
        s.push(".md");
        p = PathBuf::from(s);
    }
    Ok(normal(&p))
}

/// A path made absolute and without `.` or `..` parts, read as written (no symlink is
/// followed): two names of one file compare equal.
pub fn normal(p: &Path) -> PathBuf {
    if location::is_git(p) {
        return p.to_path_buf();
    }
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where a dependency stands, from what reading it gave: `None` when a deferral's name is not
/// a board (free text, no dependency).
pub fn dep(named: &Named, address: &Path, read: Result<Option<Frontmatter>>) -> Option<Dep> {
    let by = match named.by {
        By::After => "after".to_string(),
        By::Deferral(t) => format!("deferral:{t}"),
    };
    let (phase, state) = match read {
        Ok(Some(fm)) => (Some(fm.phase), State::of(fm.phase)),
        Ok(None) | Err(Error::Missing { .. }) => match named.by {
            By::After => (None, State::Missing),
            By::Deferral(_) => return None,
        },
        Err(_) => (None, State::Unreadable),
    };
    Some(Dep {
        board: named.name.clone(),
        address: address.display().to_string(),
        by,
        phase,
        state,
    })
}

/// The boards the board at `board` waits for, each read where it is kept (a session of its
/// own, so the command's report of what it met stays its own board's). Nothing is read for a
/// board that waits for none.
pub fn read(board: &Path, fm: &Frontmatter) -> Vec<Dep> {
    let named = fm.dependencies();
    if named.is_empty() {
        return Vec::new();
    }
    let s = Session::new(false);
    named
        .iter()
        .filter_map(|n| match resolve(board, &n.name) {
            Ok(address) => {
                let read = crate::store::load_frontmatter(&address, &s).map(|v| Some(v.parsed.fm));
                dep(n, &address, read)
            }
            // A deferral's text that names no board is free text.
            Err(_) if n.by != By::After => None,
            Err(e) => dep(n, Path::new(&n.name), Err(e)),
        })
        .collect()
}

/// The boards reachable from `start` by what they wait for, each with the addresses it waits
/// for (boards that cannot be read wait for nothing): the graph a new board's dependencies
/// join, to find the cycle one would close.
pub fn graph(start: &[PathBuf]) -> BTreeMap<String, Vec<String>> {
    let s = Session::new(false);
    let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut todo: Vec<PathBuf> = start.to_vec();
    while let Some(board) = todo.pop() {
        let key = board.display().to_string();
        if edges.contains_key(&key) {
            continue;
        }
        let Ok(valid) = crate::store::load_frontmatter(&board, &s) else {
            edges.insert(key, Vec::new());
            continue;
        };
        let mut out = Vec::new();
        for n in valid.parsed.fm.dependencies() {
            let Ok(address) = resolve(&board, &n.name) else {
                continue;
            };
            // A deferral's text is a dependency only when it names a board.
            if n.by != By::After && crate::store::load_frontmatter(&address, &s).is_err() {
                continue;
            }
            out.push(address.display().to_string());
            todo.push(address);
        }
        edges.insert(key, out);
    }
    edges
}

/// Check the dependencies `names` a board about to be made at `board` would wait for: each must
/// be a board that exists, and none may close a cycle. Their addresses, or the refusal.
pub fn check_new(board: &Path, names: &[String]) -> Result<Vec<PathBuf>> {
    let s = Session::new(false);
    let mut addresses = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(Error::Usage(format!("--after {name:?} is named twice")));
        }
        let address =
            resolve(board, name).map_err(|e| Error::Usage(format!("--after {name:?}: {e}")))?;
        if let Err(e) = crate::store::load_frontmatter(&address, &s) {
            return Err(Error::Usage(format!(
                "--after {name:?}: there is no readable board at {} ({}); a board waits only \
                 for a board that exists: create it first, or name it as `pair ls` does",
                crate::text::escape(&address.display().to_string()),
                match e {
                    Error::Missing { .. } => "no such board".to_string(),
                    e => e.to_string().lines().next().unwrap_or("").to_string(),
                }
            )));
        }
        addresses.push(address);
    }
    let me = normal(board).display().to_string();
    let mut edges = graph(&addresses);
    edges.insert(
        me.clone(),
        addresses.iter().map(|a| a.display().to_string()).collect(),
    );
    if let Some(c) = crate::law::depend::cycle(&edges).filter(|c| c.contains(&me)) {
        return Err(Error::Usage(format!(
            "--after: waiting for {} would close a dependency cycle: {}; a board cannot wait \
             for itself, even through others",
            names.join(", "),
            c.iter()
                .map(|a| crate::text::escape(a).into_owned())
                .collect::<Vec<_>>()
                .join(" waits for ")
        )));
    }
    Ok(addresses)
}
