//! A project: a set of blackboards read as one, for the commands that answer across boards
//! (`ls`, `next`). A project is
//!
//! * a directory: the blackboards under it, recursively, as `validate DIR` finds them
//!   ([`walk`]); or
//! * a git remote's board namespace, `git+<remote-url>#<ref-prefix>/[:<path-in-tree>]`: every
//!   ref under the prefix (`refs/pair/`), each holding a board at `<path-in-tree>` (default
//!   [`crate::store::location::DEFAULT_PATH`]), listed by one `git ls-remote`.
//!
//! [`Project`] is the one type every project command uses: [`Project::read`] lists the boards
//! with their frontmatter, [`Project::waiter`] waits for a change in any of them (file
//! notifications on the directory tree; one `ls-remote` per interval for a remote).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::board::frontmatter::Frontmatter;
use crate::error::{Error, Result};
use crate::store::Session;
use crate::store::location::{self, GitBoard, PREFIX};
use crate::store::wait::Waiter;

pub mod cursor;

/// How many times a project's read fetches its namespace when another process's fetch into
/// the same cache got in the way.
const FETCH_TRIES: u32 = 8;

/// Directories never searched: version control, build output, dependencies.
pub const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "target",
    "node_modules",
    ".worktrees",
];

/// Top-level frontmatter keys that make a Markdown file a blackboard, even one so broken that
/// it lost its `phase:` line: a CI check must not skip it.
pub const BOARD_KEYS: &[&str] = &[
    "phase",
    "phase_updated_at",
    "agents",
    "required_reviewers",
    "no_review",
    "rca_required",
    "red_test_required",
    "analysis_revision",
    "plan_revision",
    "red_test_round",
    "code_review_round",
    "blocked_from",
    "yolo",
    "work_type",
];

/// Whether a file found in a directory walk is a blackboard: a `.md` file with frontmatter
/// that has any of [`BOARD_KEYS`] at the top level. Other Markdown (with or without
/// frontmatter) is not ours.
pub fn looks_like_board(path: &Path, s: &Session) -> bool {
    is_board_file(path, Some(s))
}

/// [`looks_like_board`]; with no session, the head is only looked at: its format is not noted
/// (which parses the frontmatter), for a walk whose every board is loaded next, noting it then.
fn is_board_file(path: &Path, s: Option<&Session>) -> bool {
    if path.extension().and_then(|e| e.to_str()) != Some("md") {
        return false;
    }
    let head = match s {
        Some(s) => crate::store::read_head(path, s),
        None => crate::store::peek_head(path),
    };
    head.is_ok_and(|head| head_is_board(&head))
}

fn head_is_board(head: &[u8]) -> bool {
    let head = head
        .strip_prefix(crate::board::document::BOM.as_bytes())
        .unwrap_or(head);
    if !head.starts_with(b"---") {
        return false;
    }
    head.split(|b| *b == b'\n').skip(1).any(|line| {
        BOARD_KEYS.iter().any(|k| {
            line.strip_prefix(k.as_bytes())
                .is_some_and(|rest| rest.starts_with(b":"))
        })
    })
}

/// The blackboards under `dir`, recursively, in name order (as `validate DIR` finds them), and
/// each directory that could not be read with why.
pub fn walk(dir: &Path, s: &Session) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    walk_by(dir, &|p| looks_like_board(p, s))
}

/// [`walk`] with `is_board` telling a blackboard from other files (a project remembers what
/// it read: [`Project::read`]).
fn walk_by(dir: &Path, is_board: &dyn Fn(&Path) -> bool) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    walk_into(dir, &mut out, &mut errors, is_board);
    (out, errors)
}

fn walk_into(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    errors: &mut Vec<(PathBuf, String)>,
    is_board: &dyn Fn(&Path) -> bool,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push((dir.to_path_buf(), format!("cannot read the directory: {e}")));
            return;
        }
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            let name = entry.file_name();
            if !SKIP_DIRS.contains(&name.to_string_lossy().as_ref()) {
                walk_into(&path, out, errors, is_board);
            }
        } else if ft.is_file() && is_board(&path) {
            out.push(path);
        }
    }
}

/// A git remote's board namespace: every ref under `prefix`, each holding a board at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    pub url: String,
    /// The ref prefix, ending in `/` (`refs/pair/`).
    pub prefix: String,
    pub path: String,
}

impl Namespace {
    /// The address of the board kept in `refname`.
    pub fn board(&self, refname: &str) -> GitBoard {
        GitBoard {
            url: self.url.clone(),
            refname: refname.to_string(),
            path: self.path.clone(),
        }
    }

    /// The address the namespace is named by.
    pub fn address(&self) -> String {
        format!("{PREFIX}{}#{}:{}", self.url, self.prefix, self.path)
    }
}

/// Where a project's boards are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Dir(PathBuf),
    Remote(Namespace),
}

/// One board of a project as last read.
#[derive(Debug, Clone)]
pub struct Member {
    /// How commands name the board: its path, or its git address.
    pub board: PathBuf,
    /// Its name in the project: the path under the directory without `.md`, or the ref under
    /// the prefix.
    pub name: String,
    /// Its frontmatter, when it could be read and is valid.
    pub fm: Option<Frontmatter>,
    /// Why it could not be read, when it could not.
    pub error: Option<String>,
    /// What identifies this version of the board: the file's modification time and size, or
    /// the ref's tip.
    pub stamp: String,
}

/// A set of blackboards read as one.
#[derive(Debug)]
pub struct Project {
    pub source: Source,
    /// The last read of each board, by stamp: unchanged boards are not parsed again.
    memo: RefCell<BTreeMap<PathBuf, Member>>,
    /// The remote's tips at the last read (a remote only).
    tips: RefCell<Option<Vec<(String, String)>>>,
    /// The Markdown files of a directory that are not blackboards, by stamp: not read again
    /// while unchanged.
    not_boards: RefCell<BTreeMap<PathBuf, String>>,
    /// How many boards (or Markdown files) were read since the project was opened: a read of
    /// the whole project reads only what changed since the last one.
    reads: std::cell::Cell<u64>,
}

/// Whether `spec` names a project rather than a board: a directory, or a git address whose ref
/// part ends in `/`.
pub fn is_project(spec: &Path) -> bool {
    if location::is_git(spec) {
        return spec
            .to_str()
            .and_then(|t| t.rsplit_once('#'))
            .is_some_and(|(_, target)| {
                target
                    .split_once(':')
                    .map_or(target, |(r, _)| r)
                    .ends_with('/')
            });
    }
    spec.is_dir()
}

fn bad(spec: &str, what: &str) -> Error {
    Error::Usage(format!(
        "{spec:?} is not a project: {what}. A project is a directory of blackboards, or a git \
         remote's board namespace git+<remote-url>#<ref-prefix>/[:<path-in-tree>], e.g. \
         git+file:///srv/repo.git#refs/pair/"
    ))
}

impl Project {
    /// The project named by `spec`: a directory, or `git+<url>#<prefix>/[:<path>]`.
    pub fn open(spec: &Path) -> Result<Project> {
        let source = if location::is_git(spec) {
            let text = spec
                .to_str()
                .ok_or_else(|| bad(&spec.to_string_lossy(), "it is not valid UTF-8"))?;
            let Some((head, target)) = text.rsplit_once('#') else {
                return Err(bad(
                    text,
                    "there is no `#<ref-prefix>/` after the remote URL",
                ));
            };
            let (prefix, path) = target
                .split_once(':')
                .map_or((target, None), |(r, p)| (r, Some(p)));
            if !prefix.ends_with('/') || !prefix.starts_with("refs/") {
                return Err(bad(
                    text,
                    "the ref part must be a prefix under refs/ ending in `/` (refs/pair/)",
                ));
            }
            // Check the URL and path as a board address would be checked.
            let sample = format!(
                "{head}#{prefix}x:{}",
                path.unwrap_or(location::DEFAULT_PATH)
            );
            let g = location::parse(&sample)?;
            Source::Remote(Namespace {
                url: g.url,
                prefix: prefix.to_string(),
                path: g.path,
            })
        } else {
            match std::fs::metadata(spec) {
                Ok(m) if m.is_dir() => Source::Dir(spec.to_path_buf()),
                Ok(_) => return Err(bad(&spec.display().to_string(), "it is a file")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(Error::Missing {
                        path: spec.to_path_buf(),
                    });
                }
                Err(e) => return Err(Error::io(spec, "read", e)),
            }
        };
        Ok(Project {
            source,
            memo: RefCell::default(),
            tips: RefCell::default(),
            not_boards: RefCell::default(),
            reads: std::cell::Cell::new(0),
        })
    }

    /// How the project is named.
    pub fn name(&self) -> String {
        match &self.source {
            Source::Dir(d) => d.display().to_string(),
            Source::Remote(ns) => ns.address(),
        }
    }

    /// Whether the project's boards are on a git remote.
    pub fn is_remote(&self) -> bool {
        matches!(self.source, Source::Remote(_))
    }

    /// The project's boards with their frontmatter, in name order; a board that cannot be read
    /// is listed with its error. A remote that cannot be reached is an error.
    pub fn read(&self, s: &Session) -> Result<Vec<Member>> {
        let members = match &self.source {
            Source::Dir(dir) => self.read_dir(dir, s),
            Source::Remote(ns) => self.read_remote(ns, s)?,
        };
        let mut memo = self.memo.borrow_mut();
        memo.clear();
        for m in &members {
            memo.insert(m.board.clone(), m.clone());
        }
        Ok(members)
    }

    /// How many boards (or other Markdown files of a directory) the project read since it was
    /// opened: each [`Project::read`] reads a board only when its stamp moved.
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }

    fn count_read(&self) {
        self.reads.set(self.reads.get() + 1);
    }

    /// The whole bytes of one board of the project (its journal included).
    pub fn read_whole(&self, board: &Path, s: &Session) -> Result<Vec<u8>> {
        crate::store::read(board, s)
    }

    /// The whole bytes of members as [`Project::read`] found them, in their order: on a
    /// remote, the versions at the tips that read listed (from the cache it filled, in one
    /// read, without asking the remote again); in a directory, the files as they are now.
    pub fn read_members(&self, ms: &[&Member], s: &Session) -> Vec<Result<Vec<u8>>> {
        let Source::Remote(ns) = &self.source else {
            return ms.iter().map(|m| crate::store::read(&m.board, s)).collect();
        };
        if ms.is_empty() {
            return vec![];
        }
        use crate::store::gitref::remote;
        let specs: Vec<String> = ms
            .iter()
            .map(|m| format!("{}:{}", m.stamp, ns.path))
            .collect();
        let g = ns.board(&format!("{}x", ns.prefix));
        let blobs = remote::Cache::open(&g, s.remote_until())
            .and_then(|cache| remote::read_boards(&cache, &specs));
        let blobs = blobs.unwrap_or_default();
        ms.iter()
            .enumerate()
            .map(|(i, m)| match blobs.get(i).cloned().flatten() {
                Some(bytes) => Ok(bytes),
                // Not in the cache after all: read the board where it is kept.
                None => crate::store::read(&m.board, s),
            })
            .collect()
    }

    fn remembered(&self, board: &Path, stamp: &str) -> Option<Member> {
        self.memo
            .borrow()
            .get(board)
            .filter(|m| m.stamp == stamp)
            .cloned()
    }

    fn read_dir(&self, dir: &Path, s: &Session) -> Vec<Member> {
        // The members in walk order: the walk asks of each file in name order whether it is a
        // board, and lists those that are in that order.
        let found = RefCell::new(Vec::new());
        let is_board = |p: &Path| {
            if p.extension().and_then(|e| e.to_str()) != Some("md") {
                return false;
            }
            // A file read before whose stamp has not moved is what it was: a board remembered,
            // or not a board. (A file never read before is not even looked at here: its stamp
            // is that of the file its one read opens.)
            let known =
                self.memo.borrow().contains_key(p) || self.not_boards.borrow().contains_key(p);
            if known {
                let stamp = file_stamp(p);
                if let Some(m) = self.remembered(p, &stamp) {
                    found.borrow_mut().push(m);
                    return true;
                }
                if self.not_boards.borrow().get(p) == Some(&stamp) {
                    return false;
                }
            }
            self.count_read();
            // One open and one read of the head: whether it is a board, and its frontmatter.
            let Ok(snap) = crate::store::peek(p) else {
                return false;
            };
            let stamp = snap.file_meta().map(stamp_of).unwrap_or_default();
            if !head_is_board(snap.bytes()) {
                self.not_boards.borrow_mut().insert(p.to_path_buf(), stamp);
                return false;
            }
            self.not_boards.borrow_mut().remove(p);
            let name = p
                .strip_prefix(dir)
                .unwrap_or(p)
                .with_extension("")
                .to_string_lossy()
                .replace('\\', "/");
            let read = snap.walked_frontmatter(s);
            found.borrow_mut().push(member(
                p.to_path_buf(),
                name,
                stamp,
                read.map(|v| v.parsed.fm),
            ));
            true
        };
        walk_by(dir, &is_board);
        found.into_inner()
    }

    /// The refs under the namespace's prefix and their tips: one `git ls-remote`.
    fn list(&self, ns: &Namespace, s: &Session) -> Result<Vec<(String, String)>> {
        let g = ns.board(&format!("{}x", ns.prefix));
        let cache = crate::store::gitref::remote::Cache::open(&g, s.remote_until())?;
        crate::store::gitref::remote::list_refs(&cache, &ns.url, &ns.prefix)
    }

    fn read_remote(&self, ns: &Namespace, s: &Session) -> Result<Vec<Member>> {
        use crate::store::gitref::remote;
        let g = ns.board(&format!("{}x", ns.prefix));
        let cache = remote::Cache::open(&g, s.remote_until())?;
        // While the remote is asked for its tips, the boards the cache already holds are read
        // (the first read of the process only: a later one knows the boards it read); those
        // whose tip the remote still has are not read again.
        let first = self.memo.borrow().is_empty();
        let (tips, held) = std::thread::scope(|scope| {
            let listing = scope.spawn(|| remote::list_refs(&cache, &ns.url, &ns.prefix));
            let held = if first {
                Self::read_cached(ns, &cache)
            } else {
                BTreeMap::new()
            };
            let tips = listing.join().unwrap_or_else(|_| {
                Err(Error::Git {
                    message: format!("cannot reach the remote {}", ns.url),
                })
            });
            (tips, held)
        });
        let tips = tips?;
        *self.tips.borrow_mut() = Some(tips.clone());
        let address = |r: &str| PathBuf::from(ns.board(r).address());
        let mut out: Vec<Option<Member>> = tips
            .iter()
            .map(|(r, tip)| {
                self.remembered(&address(r), tip).or_else(|| {
                    let m = held.get(r).filter(|m| &m.stamp == tip)?;
                    self.count_read();
                    Some(m.clone())
                })
            })
            .collect();
        let missing: Vec<usize> = (0..tips.len()).filter(|i| out[*i].is_none()).collect();
        if !missing.is_empty() {
            let specs: Vec<String> = missing
                .iter()
                .map(|&i| format!("{}:{}", tips[i].1, ns.path))
                .collect();
            let mut blobs = remote::read_boards(&cache, &specs)?;
            let lacking =
                |b: &Vec<Option<Vec<u8>>>| b.len() < specs.len() || b.iter().any(Option::is_none);
            // The cache lacks some tips: fetch the whole namespace, then read again. Another
            // process fetching into the same cache at once may take a ref's lock first (git
            // then refuses this fetch); what it fetched may be what this read needs, else the
            // fetch is tried again.
            let refspec = format!("+{p}*:refs/pair-cache/{p}*", p = ns.prefix);
            let mut tries = 0;
            while lacking(&blobs) {
                let fetched = remote::fetch_spec(
                    &cache,
                    &ns.url,
                    &refspec,
                    "fetch the project's boards",
                    remote::Fetch::Boards,
                );
                blobs = remote::read_boards(&cache, &specs)?;
                tries += 1;
                match fetched {
                    Ok(_) => break,
                    Err(e) if tries >= FETCH_TRIES || cache.until.passed() => {
                        if lacking(&blobs) {
                            return Err(e);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20 * tries as u64)),
                }
            }
            for (k, &i) in missing.iter().enumerate() {
                self.count_read();
                let (r, tip) = &tips[i];
                out[i] = Some(Self::member_at(ns, r, tip, blobs.get(k).cloned().flatten()));
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// The member of ref `r` at commit `tip`, from the board's bytes there (`None`: missing).
    fn member_at(ns: &Namespace, r: &str, tip: &str, bytes: Option<Vec<u8>>) -> Member {
        let name = r.strip_prefix(&ns.prefix).unwrap_or(r).to_string();
        let board = PathBuf::from(ns.board(r).address());
        let read = match bytes {
            Some(bytes) => crate::law::validate::check_frontmatter_bytes(&bytes)
                .map(|v| v.parsed.fm)
                .map_err(|rep| Error::invalid(&board, rep.errors, false)),
            None => Err(Error::Missing {
                path: board.clone(),
            }),
        };
        member(board, name, tip.to_string(), read)
    }

    /// The boards of the namespace the cache holds from its last fetch, by ref, each with the
    /// commit it was read at: one `for-each-ref` and one `cat-file`. What cannot be read here
    /// is left out (the read from the remote's tips reads it).
    fn read_cached(
        ns: &Namespace,
        cache: &crate::store::gitref::remote::Cache,
    ) -> BTreeMap<String, Member> {
        use crate::store::gitref::remote;
        let Ok(refs) = remote::cached_refs(cache, &ns.prefix) else {
            return BTreeMap::new();
        };
        let specs: Vec<String> = refs
            .iter()
            .map(|(_, tip)| format!("{tip}:{}", ns.path))
            .collect();
        let Ok(blobs) = remote::read_boards(cache, &specs) else {
            return BTreeMap::new();
        };
        refs.into_iter()
            .zip(blobs)
            .filter_map(|((r, tip), bytes)| {
                let m = Self::member_at(ns, &r, &tip, Some(bytes?));
                Some((r, m))
            })
            .collect()
    }

    /// A waiter that wakes when any board of the project may have changed.
    pub fn waiter(&self, interval: Duration) -> ProjectWaiter<'_> {
        let waiter = match &self.source {
            Source::Dir(d) => Waiter::tree(d),
            Source::Remote(_) => Waiter::polling(),
        };
        ProjectWaiter {
            project: self,
            waiter,
            interval,
        }
    }
}

/// What identifies a version of a file without reading it: its inode (every write of a board
/// renames a new file over it), modification time and size.
fn file_stamp(p: &Path) -> String {
    std::fs::metadata(p)
        .ok()
        .map(|m| stamp_of(&m))
        .unwrap_or_default()
}

/// [`file_stamp`] of a file's metadata.
fn stamp_of(m: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt as _;
    let t = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{}:{t}:{}", m.ino(), m.len())
}

fn member(board: PathBuf, name: String, stamp: String, read: Result<Frontmatter>) -> Member {
    let (fm, error) = match read {
        Ok(fm) => (Some(fm), None),
        Err(e) => (None, Some(e.to_string())),
    };
    Member {
        board,
        name,
        fm,
        error,
        stamp,
    }
}

/// Waits for a change in any board of a project (see [`Project::waiter`]).
pub struct ProjectWaiter<'a> {
    project: &'a Project,
    waiter: Waiter,
    interval: Duration,
}

impl ProjectWaiter<'_> {
    /// Let `interrupt` end the waits early.
    pub fn interrupted_by(&self, interrupt: &crate::store::wait::Interrupt) {
        self.waiter.interrupted_by(interrupt);
    }

    /// Sleep for `timeout`, or until interrupted, without asking a remote anything.
    pub fn sleep(&mut self, timeout: Duration) {
        self.waiter.wait(timeout);
    }

    /// Block until a board may have changed or `timeout` passed: on a directory, until a file
    /// notification about a `.md` file under it (or the interval, where notifications cannot be
    /// had); on a remote, every interval one `ls-remote`, until a tip moved (none once the time
    /// is up: the caller reads the project once more). Returns whether something may have
    /// changed.
    pub fn wait(&mut self, timeout: Duration, s: &Session) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let slice = if self.waiter.is_notified() {
                deadline - now
            } else {
                (deadline - now).min(self.interval)
            };
            let woke = self.waiter.wait(slice);
            if s.interrupt().is_some_and(|i| i.fired()) {
                return true;
            }
            match &self.project.source {
                Source::Dir(_) => {
                    if woke {
                        return true;
                    }
                }
                Source::Remote(_) if Instant::now() >= deadline => return false,
                Source::Remote(ns) => {
                    let before = self.project.tips.borrow().clone();
                    match self.project.list(ns, s) {
                        Ok(now) if Some(&now) != before.as_ref() => return true,
                        Ok(_) => {}
                        // A remote that cannot be reached now is asked again next interval.
                        Err(_) => {}
                    }
                }
            }
        }
    }
}

/// The boards each member waits for, in member order, with each one's phase: read from the
/// project's own boards where they are among them (no second read), else where they are kept
/// ([`crate::store::depend`]). A deferral's text that names no board is no dependency.
pub fn dependencies(members: &[Member]) -> Vec<Vec<crate::law::depend::Dep>> {
    use crate::board::depend::By;
    use crate::store::depend::{dep, normal, resolve};
    let index: BTreeMap<PathBuf, &Member> = members.iter().map(|m| (normal(&m.board), m)).collect();
    let s = Session::new(false);
    members
        .iter()
        .map(|m| {
            let Some(fm) = &m.fm else {
                return Vec::new();
            };
            fm.dependencies()
                .iter()
                .filter_map(|n| {
                    let address = match resolve(&m.board, &n.name) {
                        Ok(a) => a,
                        Err(_) if n.by != By::After => return None,
                        Err(e) => return dep(n, Path::new(&n.name), Err(e)),
                    };
                    let read = match index.get(&normal(&address)) {
                        Some(other) => match (&other.fm, &other.error) {
                            (Some(fm), _) => Ok(Some(fm.clone())),
                            (None, e) => Err(Error::Usage(e.clone().unwrap_or_default())),
                        },
                        None => {
                            crate::store::load_frontmatter(&address, &s).map(|v| Some(v.parsed.fm))
                        }
                    };
                    dep(n, &address, read)
                })
                .collect()
        })
        .collect()
}

/// The edges of the project's dependency graph, by board name: each board with the boards of
/// the project it waits for. Each board's address is made [`normal`](crate::store::depend::normal)
/// once, and each dependency found among them by that address ([`name_of`], for every one at
/// once): the cost grows with the boards and their dependencies, not with their product.
pub fn edges(
    members: &[Member],
    deps: &[Vec<crate::law::depend::Dep>],
) -> BTreeMap<String, Vec<String>> {
    let names = names_by_address(members);
    members
        .iter()
        .zip(deps)
        .map(|(m, d)| {
            let found = d
                .iter()
                .filter_map(|d| {
                    names
                        .get(&crate::store::depend::normal(Path::new(&d.address)))
                        .map(|n| n.to_string())
                })
                .collect();
            (m.name.clone(), found)
        })
        .collect()
}

/// Each member's name by its normal address; where two members have one address, the first's
/// (as [`name_of`] finds it).
fn names_by_address(members: &[Member]) -> std::collections::HashMap<PathBuf, &str> {
    let mut names = std::collections::HashMap::with_capacity(members.len());
    for m in members {
        names
            .entry(crate::store::depend::normal(&m.board))
            .or_insert(m.name.as_str());
    }
    names
}

/// A cycle among the project's boards (each waiting for the next, back to the first: none of
/// them can start; a board edited by hand can close one), refused by `ls` and `validate DIR`
/// alike: the first board of the cycle, and the error naming the boards
/// ([`crate::law::depend::cycle`]).
pub fn cycle(
    members: &[Member],
    deps: &[Vec<crate::law::depend::Dep>],
) -> Option<(PathBuf, Error)> {
    let c = crate::law::depend::cycle(&edges(members, deps))?;
    let first = members
        .iter()
        .find(|m| m.name == c[0])
        .map_or_else(|| PathBuf::from(&c[0]), |m| m.board.clone());
    let error = Error::invalid(
        &first,
        vec![crate::error::FieldError {
            field: crate::board::depend::FIELD.into(),
            line: None,
            message: format!(
                "the boards wait for each other in a cycle: {}; none of them can start. Remove \
                 one of these dependencies with `pair write --repair`",
                c.join(" waits for ")
            ),
        }],
        false,
    );
    Some((first, error))
}

/// The name in the project of the board at `address`, if it is one of the project's.
pub fn name_of(members: &[Member], address: &str) -> Option<String> {
    let wanted = crate::store::depend::normal(Path::new(address));
    members
        .iter()
        .find(|m| crate::store::depend::normal(&m.board) == wanted)
        .map(|m| m.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOARD: &str = "---\nphase: DRAFT\nphase_updated_at: \"2026-01-01T00:00:00Z\"\nwork_type: feature\nrca_required: false\nred_test_required: false\nrequired_reviewers: []\nanalysis_revision: 0\nplan_revision: 0\nred_test_round: 0\ncode_review_round: 0\nworktree: null\nagents:\n  doer:\n    role: doer\n    status: DRAFT\n    last_seen: null\n---\n# Task\n";

    /// Replace a file the way every write of a board does: a new file renamed over it.
    fn replace(path: &Path, text: &str) {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, path).unwrap();
    }

    #[test]
    fn a_second_read_reads_only_the_boards_that_changed() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["a", "b", "c"] {
            std::fs::write(dir.path().join(format!("{n}.md")), BOARD).unwrap();
        }
        std::fs::write(dir.path().join("notes.md"), "# not a board\n").unwrap();
        let s = Session::new(false);
        let p = Project::open(dir.path()).unwrap();
        let first = p.read(&s).unwrap();
        assert_eq!(first.len(), 3);
        let after_first = p.reads();
        assert!(after_first >= 4, "every file was read once: {after_first}");
        // Nothing changed: nothing is read, and the boards are the same.
        let again = p.read(&s).unwrap();
        assert_eq!(
            p.reads(),
            after_first,
            "an unchanged project is not read again"
        );
        assert_eq!(again.len(), 3);
        // One board changes: only it is read again, and its new frontmatter is seen.
        replace(
            &dir.path().join("b.md"),
            &BOARD.replace("phase: DRAFT", "phase: PLANNING"),
        );
        let third = p.read(&s).unwrap();
        let read = p.reads() - after_first;
        assert!(
            (1..=2).contains(&read),
            "only b.md is read (head, frontmatter): {read}"
        );
        let b = third.iter().find(|m| m.name == "b").unwrap();
        assert_eq!(
            b.fm.as_ref().map(|f| f.phase.as_str()),
            Some("PLANNING"),
            "{b:?}"
        );
        // A file that becomes a board is found.
        replace(&dir.path().join("notes.md"), BOARD);
        assert_eq!(p.read(&s).unwrap().len(), 4);
    }
}
