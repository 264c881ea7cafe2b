//! The remote and the local cache of a git board: running git for it, asking the remote for
//! the ref's tip, fetching it into a private bare repository, and reading the board's blob.
//!
//! The cache is `$PAIR_CACHE_DIR`, else `$XDG_CACHE_HOME/pair`, else `$HOME/.cache/pair`; each
//! remote has its own bare repository there, named by a hash of its URL, and each ref is
//! fetched into `refs/pair-cache/<ref>` of it. The cache holds only objects fetched from the
//! remote and commits `pair` made; it is never pushed from except to the board's own ref.
//!
//! Every git call is bounded by the command's one deadline ([`Until`]): one that reaches the
//! remote is stopped at it, one on the cache alone after [`LOCAL_LIMIT`] and never later than
//! [`LATE`] past it; at that time git is killed with everything it started, and reaped
//! (`crate::repo::git::run_piped`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crate::error::{Error, Result};
use crate::store::location::GitBoard;

/// The oldest git whose features this module uses (`fetch --no-write-fetch-head`).
pub const MIN_GIT: (u32, u32) = (2, 29);

/// Variables that configure git's transport (ssh command, proxy, certificates): passed on to
/// the git `pair` runs, unlike the rest of the `GIT_*` environment. None of them holds a secret
/// that `pair` reads; git uses them as it would for the user.
const TRANSPORT_ENV: &[&str] = &[
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "GIT_SSL_NO_VERIFY",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_NOSYSTEM",
];

/// The most settings taken from `GIT_CONFIG_COUNT`.
const MAX_CONFIG_ENV: usize = 64;

/// Git configuration given through the environment (`GIT_CONFIG_COUNT`, then
/// `GIT_CONFIG_KEY_n` and `GIT_CONFIG_VALUE_n` for each `n` below it): passed on to a remote
/// git as given, so that a credential header, a URL rewrite or a proxy set that way reaches the
/// transport. It cannot change what `pair` pins: a `-c` on the command line wins over it. A
/// count that is not a number, or a key or value missing below it, passes nothing (git would
/// refuse to run).
fn config_env() -> Vec<(String, OsString)> {
    let Some(count) = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c <= MAX_CONFIG_ENV)
    else {
        return vec![];
    };
    let mut out = vec![(
        "GIT_CONFIG_COUNT".to_string(),
        OsString::from(count.to_string()),
    )];
    for n in 0..count {
        for name in [
            format!("GIT_CONFIG_KEY_{n}"),
            format!("GIT_CONFIG_VALUE_{n}"),
        ] {
            match std::env::var_os(&name) {
                Some(v) => out.push((name, v)),
                None => return vec![],
            }
        }
    }
    out
}

/// How long one git call that works on the cache alone (reading the board's blob, making a
/// commit, checking the cache) may take at most, and never past [`LATE`] after the command's
/// deadline. Such a call takes milliseconds: this only keeps a wedged one (a cache on a hung
/// network file system) from hanging the command.
pub const LOCAL_LIMIT: Duration = Duration::from_secs(30);

/// How far past the command's deadline the calls it makes after it may run, all of them
/// together: a write with `--timeout 0` still makes its attempt, one that gives up still looks
/// whether its last push landed, and a board read from the remote just in time is still read
/// from the cache. None of them runs once a call to the remote was stopped at the deadline (the
/// remote had its time, and did not answer). With the time git takes to die (milliseconds;
/// `crate::repo::git`'s grace for a process stuck in the kernel at most), a command ends within
/// a second of its deadline.
pub const LATE: Duration = Duration::from_millis(800);

/// The time by which a command is done with its remotes: the one deadline every git call it
/// makes is bounded by, from the edge that set it down to each call ([`crate::store::Session`]
/// gives each exchange with a remote one, never later than the command's). Cloned, it shares
/// what its calls met: once one call to a remote was stopped at its deadline, no call to a
/// remote runs past it any more.
#[derive(Debug, Clone)]
pub struct Until {
    at: Instant,
    /// Set when a call to a remote was stopped at its deadline.
    spent: Arc<AtomicBool>,
}

impl Until {
    /// A deadline of its own, sharing nothing.
    pub fn new(at: Instant) -> Until {
        Until {
            at,
            spent: Arc::default(),
        }
    }

    /// `at`, sharing what the calls of `spent` met (see [`Until::spent`]).
    pub fn with(at: Instant, spent: Arc<AtomicBool>) -> Until {
        Until { at, spent }
    }

    /// The flag that says a call to a remote was stopped at its deadline, for the deadlines
    /// that share it.
    pub fn spent(&self) -> Arc<AtomicBool> {
        self.spent.clone()
    }

    /// The deadline itself.
    pub fn at(&self) -> Instant {
        self.at
    }

    /// This deadline, or `at` when that comes first.
    pub fn sooner(&self, at: Instant) -> Until {
        Until {
            at: self.at.min(at),
            spent: self.spent.clone(),
        }
    }

    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.at
    }

    /// When a call to the remote starting now is stopped: at the deadline; a call made after
    /// it, within [`LATE`] of it, unless a call was already stopped there (then at once: it is
    /// not started).
    pub fn remote_call(&self) -> Instant {
        let now = Instant::now();
        if now < self.at {
            self.at
        } else if self.spent.load(Ordering::SeqCst) {
            now
        } else {
            self.at + LATE
        }
    }

    /// When a call on the cache alone starting now is stopped: after [`LOCAL_LIMIT`], and
    /// within [`LATE`] of the deadline.
    pub fn local_call(&self) -> Instant {
        (Instant::now() + LOCAL_LIMIT).min(self.at + LATE)
    }

    /// Note that a call to the remote was stopped at its deadline.
    fn spend(&self) {
        self.spent.store(true, Ordering::SeqCst);
    }
}

/// What one git run printed.
pub struct Ran {
    pub ok: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
    /// How long git had run when it was stopped at its deadline (its output is then what it
    /// had printed, after a first line on stderr saying so).
    pub stopped: Option<Duration>,
    /// Whether the watch of [`run_watched`] stopped it.
    pub cut: bool,
}

impl Ran {
    /// The lines git printed on stderr (and `!` lines of a porcelain push on stdout), for an
    /// error message: the first few non-empty ones, trimmed. Lines the remote printed
    /// (`remote: …`, what its hooks and its host say) are not repeated: they are the server's
    /// free text, which may carry a token a hook echoes, and they would go into an agent's
    /// transcript; git's own lines say what happened (`[remote rejected] … (pre-receive hook
    /// declined)`), and how many of the remote's were left out is said. When git failed to
    /// authenticate, what to configure follows ([`auth_hint`]).
    pub fn said(&self) -> String {
        let out = String::from_utf8_lossy(&self.stdout);
        let all: Vec<&str> = self
            .stderr
            .lines()
            .chain(out.lines().filter(|l| l.starts_with('!')))
            .map(str::trim)
            .filter(|l| !l.is_empty() && *l != "Done" && !l.starts_with("To "))
            .collect();
        let from_remote = all.iter().filter(|l| l.starts_with("remote:")).count();
        let lines: Vec<&str> = all
            .iter()
            .copied()
            .filter(|l| !l.starts_with("remote:"))
            .take(6)
            .collect();
        let mut said = if lines.is_empty() {
            "git printed nothing".to_string()
        } else {
            lines.join(" | ")
        };
        if from_remote > 0 {
            said.push_str(&format!(
                " ({from_remote} line{} the remote printed not repeated: run the git command \
                 by hand to read {})",
                if from_remote == 1 { "" } else { "s" },
                if from_remote == 1 { "it" } else { "them" },
            ));
        }
        if let Some(hint) = auth_hint(&self.stderr) {
            said.push_str(". ");
            said.push_str(hint);
        }
        said
    }

    /// Whether git failed because the remote refused this machine's credentials, or this
    /// machine refused the remote's host key ([`auth_hint`]).
    pub fn auth_failed(&self) -> bool {
        auth_hint(&self.stderr).is_some()
    }
}

/// What to configure when git's stderr shows that authentication failed: the ssh host key
/// not trusted, the ssh key refused, or no (valid) credential for HTTP. `pair` never prompts,
/// and git and ssh run with no terminal, so these fail at once instead of asking. Only git's and
/// ssh's own lines are read: what the remote printed (`remote: …`, a hook's text) comes after
/// authentication, so it says nothing of it.
pub fn auth_hint(stderr: &str) -> Option<&'static str> {
    let own: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim_start().starts_with("remote:"))
        .collect();
    let has = |words: &[&str]| words.iter().any(|w| own.iter().any(|l| l.contains(w)));
    if has(&[
        "Host key verification failed",
        "REMOTE HOST IDENTIFICATION HAS CHANGED",
        "No ED25519 host key is known",
        "No RSA host key is known",
        "No ECDSA host key is known",
    ]) {
        Some(
            "Authentication failed: this machine does not trust the ssh server's host key; add \
             it to ~/.ssh/known_hosts (for example with ssh-keyscan, after checking its \
             fingerprint). pair never prompts (see docs/git-boards.md)",
        )
    } else if has(&[
        "Permission denied (publickey",
        "Permission denied, please try again",
    ]) {
        Some(
            "Authentication failed: the ssh server accepted none of this machine's keys; \
             configure a key the server accepts for this user (in ~/.ssh, `IdentityFile` in \
             ~/.ssh/config, or an ssh agent reached through SSH_AUTH_SOCK, passphrase already \
             given). pair never prompts (see docs/git-boards.md)",
        )
    } else if has(&[
        "Authentication failed for",
        "could not read Username",
        "could not read Password",
        "The requested URL returned error: 401",
        "The requested URL returned error: 403",
    ]) {
        Some(
            "Authentication failed: the server refused this machine's credentials, or none \
             were configured; configure a credential helper that holds a valid token for this \
             host (`git config --global credential.helper …`, see `git help credentials`) or \
             an `http.extraHeader` through GIT_CONFIG_COUNT, never the address. pair never \
             prompts (see docs/git-boards.md)",
        )
    } else {
        None
    }
}

/// A git command in `dir` with the pinned configuration of [`crate::repo::git::command`], the
/// transport environment passed on, and never a prompt for a password. No hook runs in the
/// private cache: a `core.hooksPath` in the user's configuration (a `reference-transaction`
/// or `pre-push` hook meant for their own repositories) must not refuse or change its writes.
pub fn command(dir: &Path) -> Command {
    let mut cmd = crate::repo::git::command(dir);
    for k in TRANSPORT_ENV {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    for (k, v) in config_env() {
        cmd.env(k, v);
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GCM_INTERACTIVE", "never")
        .env("SSH_ASKPASS_REQUIRE", "never")
        .arg("-c")
        .arg("gc.auto=0")
        .arg("-c")
        .arg("maintenance.auto=false")
        .arg("-c")
        .arg("core.hooksPath=/dev/null");
    cmd
}

/// Run a prepared git command, feeding it `input`, until `deadline` at the latest (the process
/// is started, and stopped at the deadline, by [`crate::repo::git::run_piped`], the one place
/// git runs).
pub fn run_until(cmd: Command, input: Option<&[u8]>, deadline: Instant, what: &str) -> Result<Ran> {
    run_watched(cmd, input, deadline, None, what)
}

/// [`run_until`], with its stdout shown to `watch` as it arrives, which may stop git
/// ([`crate::repo::git::run_watched`]).
fn run_watched(
    cmd: Command,
    input: Option<&[u8]>,
    deadline: Instant,
    watch: Option<crate::repo::git::Watch>,
    what: &str,
) -> Result<Ran> {
    let f = crate::repo::git::run_watched(cmd, input, deadline, |e| missing_git(what, e), watch)?;
    Ok(Ran {
        ok: f.ok,
        stdout: f.stdout,
        stderr: f.stderr,
        stopped: f.stopped,
        cut: f.cut,
    })
}

/// Run a prepared git command that works on the cache alone, feeding it `input`, until
/// `deadline` at the latest ([`Until::local_call`]).
pub fn run_cmd(cmd: Command, input: Option<&[u8]>, deadline: Instant, what: &str) -> Result<Ran> {
    run_until(cmd, input, deadline, what)
}

fn missing_git(what: &str, e: std::io::Error) -> Error {
    Error::Git {
        message: match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "cannot {what}: `git` was not found on PATH; a git board is read and written \
                 with the git command line (install git {}.{} or later, or put it on PATH)",
                MIN_GIT.0, MIN_GIT.1
            ),
            _ => format!("cannot {what}: running git failed: {e}"),
        },
    }
}

/// Run git in `dir` until `deadline` at the latest; its stdout, or an error quoting what git
/// said, or saying that it was stopped. Cache work passes [`Until::local_call`].
pub fn run(
    dir: &Path,
    args: &[&str],
    input: Option<&[u8]>,
    deadline: Instant,
    what: &str,
) -> Result<Vec<u8>> {
    let mut cmd = command(dir);
    cmd.args(args);
    stdout_of(run_until(cmd, input, deadline, what)?, what)
}

/// Run git in the cache to reach the remote; its stdout, or an error ([`run_remote_cmd`]).
fn run_remote(cache: &Cache, args: &[&str], what: &str) -> Result<Vec<u8>> {
    let mut cmd = command(&cache.dir);
    cmd.args(args);
    remote_output(run_remote_cmd(cache, cmd, what)?, what)
}

/// What a git call to the remote printed on stdout, or an error quoting what git said, or
/// saying that it was stopped, or not started.
fn remote_output(r: Ran, what: &str) -> Result<Vec<u8>> {
    if r.stopped.is_some_and(|ran| ran.is_zero()) {
        return Err(Error::Git {
            message: format!(
                "cannot {what}: the remote did not answer within the command's time limit (git \
                 was stopped at it, and not started again; {})",
                limit_words()
            ),
        });
    }
    stdout_of(r, what)
}

/// Run a prepared git command that reaches the remote, until the command's deadline
/// ([`Until::remote_call`]); a call stopped there stops the command asking the remote anything
/// more.
pub fn run_remote_cmd(cache: &Cache, cmd: Command, what: &str) -> Result<Ran> {
    let r = run_until(cmd, None, cache.until.remote_call(), what)?;
    if r.stopped.is_some_and(|ran| !ran.is_zero()) {
        cache.until.spend();
    }
    Ok(r)
}

/// What git printed on stdout, or an error quoting what it said, or saying that it was stopped.
fn stdout_of(r: Ran, what: &str) -> Result<Vec<u8>> {
    if r.ok {
        Ok(r.stdout)
    } else if let Some(ran) = r.stopped {
        Err(Error::Git {
            message: stopped_message(what, ran),
        })
    } else {
        Err(Error::Git {
            message: format!("cannot {what}: git said: {}", r.said()),
        })
    }
}

/// Why a git call stopped at its deadline failed: it ran out of time, or never started (the
/// command's time was up).
fn stopped_message(what: &str, ran: Duration) -> String {
    if ran.is_zero() {
        format!(
            "cannot {what}: the command's time limit had passed, so git was not started ({})",
            limit_words()
        )
    } else {
        format!(
            "cannot {what}: git had not finished after {:.1} s and was stopped ({})",
            ran.as_secs_f64(),
            limit_words()
        )
    }
}

/// What bounds a command's git calls, for a message about one that was stopped.
fn limit_words() -> String {
    format!(
        "a command's --timeout bounds the whole command, {} s when it has none",
        crate::store::DEFAULT_TIMEOUT.as_secs()
    )
}

/// The git on `PATH`, as a key that changes when it does: its path, size and modification time.
fn git_identity() -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let p = dir.join("git");
        let m = std::fs::metadata(&p).ok()?;
        if !m.is_file() || m.permissions().mode() & 0o111 == 0 {
            return None;
        }
        let mtime = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(format!("{}\0{}\0{mtime}", p.display(), m.len()))
    })
}

/// The file that records that this git passed [`check_version`], so that a command does not
/// start one more git to ask again (`None`: no cache directory, or no git on `PATH`).
fn version_marker() -> Option<PathBuf> {
    let id = git_identity()?;
    let key = &crate::text::sha256_hex(id.as_bytes())[..24];
    Some(cache_root().ok()?.join("git-checked").join(key))
}

/// Refuse, once per process, a git that is older than [`MIN_GIT`]. A git that passed is
/// remembered in the cache directory (by its path, size and modification time), so later
/// commands skip the check.
pub fn check_version(deadline: Instant) -> Result<()> {
    static CHECKED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    let result = CHECKED.get_or_init(|| {
        let marker = version_marker();
        if marker.as_ref().is_some_and(|m| m.is_file()) {
            return Ok(());
        }
        let mut cmd = command(Path::new("/"));
        cmd.arg("--version");
        let r = run_cmd(cmd, None, deadline, "run git").map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&r.stdout).into_owned();
        let version = text
            .split_whitespace()
            .nth(2)
            .map(|v| {
                v.split('.')
                    .take(2)
                    .map(|n| n.parse::<u32>().unwrap_or(0))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let found = (
            version.first().copied().unwrap_or(0),
            version.get(1).copied().unwrap_or(0),
        );
        if found < MIN_GIT {
            return Err(format!(
                "git {}.{} or later is needed for a git board, found {:?}; upgrade git",
                MIN_GIT.0,
                MIN_GIT.1,
                text.trim()
            ));
        }
        if let Some(m) = marker {
            let _ = m
                .parent()
                .map(std::fs::create_dir_all)
                .map(|_| std::fs::write(&m, b""));
        }
        Ok(())
    });
    result.clone().map_err(|message| Error::Git { message })
}

/// Where the caches live.
pub fn cache_root() -> Result<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = nonempty("PAIR_CACHE_DIR") {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = nonempty("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(d).join("pair"));
    }
    if let Some(d) = nonempty("HOME") {
        return Ok(PathBuf::from(d).join(".cache").join("pair"));
    }
    Err(Error::Usage(
        "a git board needs a cache directory: set PAIR_CACHE_DIR (or XDG_CACHE_HOME or HOME)"
            .into(),
    ))
}

/// The local cache of one remote: a private bare repository.
pub struct Cache {
    pub dir: PathBuf,
    /// The private ref the board's ref is fetched into.
    pub cache_ref: String,
    /// Touched on every successful exchange with the remote, for the cache's age.
    pub synced_marker: PathBuf,
    /// When the calls that reach the remote (`ls-remote`, `fetch`, `push`) are stopped, and
    /// those on the cache alone at the latest ([`Until`]): the deadline of the exchange with the
    /// remote this cache was opened for, never later than the command's.
    pub until: Until,
    /// A shared lock on the cache's lock file (`KEY.lock` beside it), held while this process
    /// uses the cache: [`Cache::rebuild`] moves a cache aside only when it can take the lock
    /// exclusively, so a cache is never moved from under a process using it. `None` when the
    /// lock file cannot be opened (a read-only cache directory): the cache is then never rebuilt.
    user: Option<std::fs::File>,
}

impl Cache {
    /// Open (creating if needed) the cache of a board's remote; no git call made with it runs
    /// past `until` (see [`Until`]).
    pub fn open(g: &GitBoard, until: Until) -> Result<Cache> {
        check_version(until.local_call())?;
        let root = cache_root()?;
        let key = &crate::text::sha256_hex(g.url.as_bytes())[..24];
        let dir = root.join(format!("{key}.git"));
        if !dir.join("HEAD").is_file() {
            init(&root, &dir, g, until.local_call())?;
        }
        let user = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(root.join(format!("{key}.lock")))
            .ok()
            .filter(|f| f.lock_shared().is_ok());
        // A rebuild may have moved the cache between the check above and the lock.
        if !dir.join("HEAD").is_file() {
            init(&root, &dir, g, until.local_call())?;
        }
        let marker_dir = dir.join("pair-synced");
        let _ = std::fs::create_dir_all(&marker_dir);
        let ref_key = &crate::text::sha256_hex(g.refname.as_bytes())[..24];
        Ok(Cache {
            cache_ref: format!("refs/pair-cache/{}", g.refname),
            synced_marker: marker_dir.join(ref_key),
            dir,
            until,
            user,
        })
    }

    /// Replace a damaged cache (objects deleted or garbled, as `git fsck` finds) with an empty
    /// one, which the next fetch fills from the remote; an undamaged one is left alone (an
    /// error): the cache only ever holds copies of what the remote has
    /// and commits already pushed, so nothing is lost. It is left alone too (an error) while
    /// another process uses it: a fetch that failed because of that process is no damage, and
    /// moving the cache would pull it from under that process.
    pub fn rebuild(&self, g: &GitBoard) -> Result<()> {
        let alone = self
            .user
            .as_ref()
            .is_some_and(|f| matches!(f.try_lock(), Ok(())));
        let done = if alone {
            self.rebuild_alone(g)
        } else {
            Err(Error::Git {
                message: "the cache is in use by another process".into(),
            })
        };
        if let Some(f) = &self.user {
            let _ = f.lock_shared();
        }
        done
    }

    fn rebuild_alone(&self, g: &GitBoard) -> Result<()> {
        if !self.damaged() {
            return Err(Error::Git {
                message: "the cache is not damaged".into(),
            });
        }
        let root = self.dir.parent().unwrap_or(Path::new("."));
        let aside = tempfile::Builder::new()
            .prefix("pair-damaged-")
            .tempdir_in(root)
            .map_err(|e| Error::io(root, "move the damaged git board cache aside", e))?;
        std::fs::rename(&self.dir, aside.path().join("cache"))
            .map_err(|e| Error::io(&self.dir, "move the damaged git board cache aside", e))?;
        init(root, &self.dir, g, self.until.local_call())?;
        let _ = std::fs::create_dir_all(self.synced_marker.parent().unwrap_or(root));
        Ok(())
    }

    /// Keep the cache's objects in few packs, so that reading a thousand boards from it is a
    /// thousand lookups in a few indexes, not a thousand files opened and inflated or a search
    /// through hundreds of packs: once a fetch leaves [`TIDY_PACKS`] packs or more, or
    /// [`TIDY_LOOSE`] loose objects or more (a write's commits), `git repack -d
    /// --geometric=2` rolls the small packs and the loose objects into one (each pack left at
    /// least twice the size of the next, so the work done over many fetches stays in proportion
    /// to what they fetched). Git keeps the cache readable throughout (a reader that misses a
    /// pack rolled up finds its objects in the new one), so no other process waits for it; one
    /// process tidies a cache at a time (the others skip it, as does a command with less than
    /// [`TIDY_SPARE`] left before its deadline: a later fetch does it). A roll-up of packs a
    /// fetch of boards left (which may lack the blobs over the size limit: a promisor pack,
    /// `.promisor` beside it) is marked so too, so that [`Cache::damaged`] does not take those
    /// blobs for lost; and the temporary packs of a fetch stopped at its deadline, an hour old
    /// or more, are removed.
    pub fn tidy(&self) {
        if Instant::now() + TIDY_SPARE > self.until.at() {
            return;
        }
        let pack_dir = self.dir.join("objects").join("pack");
        let packs = count_entries(&pack_dir, |n| n.ends_with(".pack"));
        let loose = loose_objects(&self.dir.join("objects"));
        if packs < TIDY_PACKS && loose < TIDY_LOOSE {
            return;
        }
        let tidier = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.dir.join("pair-tidy.lock"));
        if let Ok(f) = tidier
            && matches!(f.try_lock(), Ok(()))
        {
            self.repack(&pack_dir);
        }
    }

    fn repack(&self, pack_dir: &Path) {
        let promisor = count_entries(pack_dir, |n| n.ends_with(".promisor")) > 0;
        let repacked = self.run(
            &["repack", "-d", "-q", "-n", "--geometric=2"],
            None,
            "pack the cache's objects",
        );
        let Ok(entries) = std::fs::read_dir(pack_dir) else {
            return;
        };
        let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("tmp_") {
                let old = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t < hour_ago);
                if old {
                    let _ = std::fs::remove_file(&path);
                }
            } else if promisor && repacked.is_ok() && name.ends_with(".pack") {
                let marker = path.with_extension("promisor");
                if !marker.exists() {
                    let _ = std::fs::write(&marker, b"");
                }
            }
        }
    }

    /// Whether `git fsck` finds objects missing or corrupt in the cache (a failure for any
    /// other reason, such as another process's lock, is not damage).
    pub fn damaged(&self) -> bool {
        let mut cmd = command(&self.dir);
        // A blob a fetch of boards left out (over the size limit) is no damage.
        let promised = format!("remote.{FETCH_REMOTE}.promisor=true");
        cmd.args(["-c", &promised, "fsck", "--no-dangling", "--no-progress"]);
        run_cmd(cmd, None, self.until.local_call(), "check the cache")
            .is_ok_and(|r| !r.ok && r.stopped.is_none())
    }

    /// Run git on the cache alone, bounded by [`Until::local_call`]; its stdout, or an error
    /// quoting what git said.
    pub fn run(&self, args: &[&str], input: Option<&[u8]>, what: &str) -> Result<Vec<u8>> {
        run(&self.dir, args, input, self.until.local_call(), what)
    }

    /// Run a prepared git command on the cache alone, bounded by [`Until::local_call`].
    pub fn run_cmd(&self, cmd: Command, input: Option<&[u8]>, what: &str) -> Result<Ran> {
        run_cmd(cmd, input, self.until.local_call(), what)
    }

    /// Record a successful exchange with the remote.
    pub fn touch(&self) {
        let _ = std::fs::write(&self.synced_marker, b"");
    }

    /// How long ago the remote was last reached.
    pub fn age(&self) -> Option<Duration> {
        let m = std::fs::metadata(&self.synced_marker)
            .ok()?
            .modified()
            .ok()?;
        SystemTime::now().duration_since(m).ok()
    }

    /// The commit the cache last saw at the ref ([`Cache::ref_tip`] of its ref): the one
    /// commit of the board's ref whose objects are all in the cache.
    pub fn cached_tip(&self) -> Option<String> {
        self.ref_tip(&self.cache_ref)
    }

    /// The commit a ref of the cache points at: read from the ref's own file when git keeps it
    /// as one (a loose ref, which git reads before any packed one; `fetch` and `push` write the
    /// cache's refs so), else asked of git (`rev-parse`). A fetch moves the ref only once every
    /// object it fetched is in place, so the commit a ref names is whole in the cache, unlike
    /// one merely found in its object store (another process may be fetching it).
    pub fn ref_tip(&self, refname: &str) -> Option<String> {
        match std::fs::read_to_string(self.dir.join(refname)) {
            Ok(text) => {
                let found = text.trim_end_matches('\n');
                if oid(found) {
                    return Some(found.to_string());
                }
            }
            // Neither a loose ref nor a packed one (nor another ref store): no such ref.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && !self.dir.join("packed-refs").exists()
                    && !self.dir.join("reftable").exists() =>
            {
                return None;
            }
            Err(_) => {}
        }
        let spec = format!("{refname}^{{commit}}");
        self.run(
            &["rev-parse", "--verify", "--quiet", &spec],
            None,
            "read a ref of the cache",
        )
        .ok()
        .map(|o| String::from_utf8_lossy(&o).trim().to_string())
        .filter(|s| !s.is_empty())
    }

    /// Point the cache's ref at a commit the cache holds.
    pub fn set_tip(&self, oid: &str) -> Result<()> {
        self.run(
            &["update-ref", &self.cache_ref, oid],
            None,
            "record the tip in the cache",
        )
        .map(|_| ())
    }

    /// Whether `new` is `old` or follows it as `pair` writes a ref: `old` on the first-parent
    /// line of `new`, and every commit after it there of one parent. A merge commit (which
    /// `pair` never makes) does not follow the commits it merged: a plain `git push` of one
    /// whose second parent is the old tip is a fast-forward to git, and may take the board back
    /// to any earlier version; nor does a commit on top of one.
    pub fn descends(&self, old: &str, new: &str) -> bool {
        if old == new {
            return true;
        }
        // The first-parent line of `new` down to the first commit `old` reaches: `old` itself
        // when it is on that line.
        let mut cmd = command(&self.dir);
        cmd.args([
            "rev-list",
            "--first-parent",
            "--parents",
            new,
            &format!("^{old}"),
            "--",
        ]);
        let Ok(r) = self.run_cmd(cmd, None, "compare commits") else {
            return false;
        };
        if !r.ok {
            return false;
        }
        let text = String::from_utf8_lossy(&r.stdout);
        let lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .filter(|f: &Vec<&str>| !f.is_empty())
            .collect();
        lines.iter().all(|f| f.len() == 2) && lines.last().is_some_and(|f| f[1] == old)
    }

    /// What this cache keeps of a rewrite of the ref it saw ([`Rewrite`]), until a recorded
    /// repair accepts it.
    fn rewrite_file(&self) -> PathBuf {
        let name = self
            .synced_marker
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        self.dir.join("pair-rewritten").join(name)
    }

    /// The rewrite of the ref this cache saw and no recorded repair has accepted yet.
    pub fn rewrite(&self) -> Option<Rewrite> {
        let text = read_note(&self.rewrite_file())?;
        let mut from = None;
        let mut at = None;
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("from", v)) if oid(v) => from = Some(v.to_string()),
                Some(("at", v)) if oid(v) => at = Some(v.to_string()),
                _ => {}
            }
        }
        Some(Rewrite {
            from: from?,
            at: at?,
        })
    }

    /// Keep a rewrite until a recorded repair accepts it (best effort: a cache that cannot be
    /// written reports the rewrite once, as it sees it).
    pub fn keep_rewrite(&self, r: &Rewrite) {
        let file = self.rewrite_file();
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(&file, format!("from {}\nat {}\n", r.from, r.at));
    }

    /// Forget the rewrite: a recorded repair accepted it.
    pub fn forget_rewrite(&self) {
        let _ = std::fs::remove_file(self.rewrite_file());
    }
}

/// A rewrite of the board's ref that a cache saw: the tip it had seen (`from`) and the tip
/// that did not follow it (`at`). Kept in the cache (`pair-rewritten/`) and reported by every
/// read from it until a repair is recorded on the board after `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pub from: String,
    pub at: String,
}

/// A small note the cache keeps for itself: not followed through a link, not waited on, a
/// regular file of at most 4 KiB.
fn read_note(path: &Path) -> Option<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(4096).read_to_string(&mut text).ok()?;
    Some(text)
}

/// How many packs a cache may hold before [`Cache::tidy`] rolls the small ones up.
pub const TIDY_PACKS: usize = 16;

/// How many loose objects a cache may hold before [`Cache::tidy`] packs them.
pub const TIDY_LOOSE: usize = 256;

/// How much time a command must have left for [`Cache::tidy`] to run in it.
pub const TIDY_SPARE: Duration = Duration::from_secs(2);

/// How many entries of `dir` have a name `keep` takes (none when it cannot be read).
fn count_entries(dir: &Path, keep: impl Fn(&str) -> bool) -> usize {
    std::fs::read_dir(dir).map_or(0, |it| {
        it.flatten()
            .filter(|e| keep(&e.file_name().to_string_lossy()))
            .count()
    })
}

/// How many loose objects a repository's object directory holds (its `xx/` directories).
fn loose_objects(objects: &Path) -> usize {
    std::fs::read_dir(objects).map_or(0, |it| {
        it.flatten()
            .filter(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n.len() == 2 && n.bytes().all(|b| b.is_ascii_hexdigit())
            })
            .map(|e| count_entries(&e.path(), |n| !n.starts_with("tmp_")))
            .sum()
    })
}

/// Whether `s` is a full object id as git prints it.
pub fn oid(s: &str) -> bool {
    matches!(s.len(), 40 | 64)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Create the cache of a board's remote at `dir`: made whole in a temporary directory beside
/// it and renamed into place, so that processes creating it at once never see (or make) half a
/// repository; the one that comes second uses the first one's.
fn init(root: &Path, dir: &Path, g: &GitBoard, deadline: Instant) -> Result<()> {
    let what = "create the git board cache";
    std::fs::create_dir_all(root)
        .map_err(|e| Error::io(root, "create the git board cache directory", e))?;
    let fresh = tempfile::Builder::new()
        .prefix("pair-new-")
        .tempdir_in(root)
        .map_err(|e| Error::io(root, what, e))?;
    let made = fresh.path().join("cache.git");
    let path = made.to_string_lossy().into_owned();
    run(
        root,
        &["init", "--bare", "--quiet", "--template=", &path],
        None,
        deadline,
        what,
    )?;
    // Say whose cache it is, for a human looking in the directory.
    let _ = std::fs::write(
        made.join("description"),
        format!("pair cache of {}\n", g.url),
    );
    if std::fs::rename(&made, dir).is_ok() || dir.join("HEAD").is_file() {
        return Ok(());
    }
    // A leftover that is no repository (an interrupted older `pair`): move it aside.
    let aside = tempfile::Builder::new()
        .prefix("pair-damaged-")
        .tempdir_in(root)
        .map_err(|e| Error::io(root, what, e))?;
    let _ = std::fs::rename(dir, aside.path().join("cache"));
    match std::fs::rename(&made, dir) {
        Ok(()) => Ok(()),
        Err(_) if dir.join("HEAD").is_file() => Ok(()),
        Err(e) => Err(Error::io(dir, what, e)),
    }
}

/// Ask the remote where the ref points (`git ls-remote`); `None` when it does not exist.
pub fn ls_remote(cache: &Cache, g: &GitBoard) -> Result<Option<String>> {
    let out = run_remote(
        cache,
        &["ls-remote", "--refs", "--", &g.url, &g.refname],
        &format!("reach the remote {}", g.url),
    )?;
    let text = String::from_utf8_lossy(&out);
    Ok(text.lines().find_map(|l| {
        let (oid, name) = l.split_once('\t')?;
        (name.trim() == g.refname).then(|| oid.trim().to_string())
    }))
}

/// Every ref under `prefix` (ending in `/`) on the remote and its tip, in name order: one
/// `git ls-remote`.
pub fn list_refs(cache: &Cache, url: &str, prefix: &str) -> Result<Vec<(String, String)>> {
    let pattern = format!("{prefix}*");
    let out = run_remote(
        cache,
        &["ls-remote", "--refs", "--", url, &pattern],
        &format!("reach the remote {url}"),
    )?;
    let text = String::from_utf8_lossy(&out);
    let mut refs: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| {
            let (oid, name) = l.split_once('\t')?;
            let name = name.trim();
            name.starts_with(prefix)
                .then(|| (name.to_string(), oid.trim().to_string()))
        })
        .collect();
    refs.sort();
    Ok(refs)
}

/// Fetch the ref into the cache; the commit it now points at there. When the fetch fails
/// though the remote answers (in time), the cache is taken for damaged: it is rebuilt and
/// fetched again.
pub fn fetch(cache: &Cache, g: &GitBoard) -> Result<String> {
    match fetch_into(cache, g) {
        Err(e) if !cache.until.passed() && ls_remote(cache, g).is_ok() => {
            cache.rebuild(g).map_err(|_| e)?;
            fetch_into(cache, g)
        }
        done => done,
    }
}

/// The name a fetch of boards gives the remote, for that fetch alone (`-c remote.NAME.url=…`):
/// its settings as a promisor remote are given on the command line and never written to the
/// cache's configuration.
const FETCH_REMOTE: &str = "pair-fetch";

/// The filter of a fetch of boards: `blob:limit=N` leaves out every blob of N bytes or more,
/// so a blob over [`crate::law::validate::MAX_BOARD_BYTES`] is never downloaded from a remote
/// that filters (`uploadpack.allowFilter`; every common host does).
fn board_filter() -> String {
    format!("blob:limit={}", crate::law::validate::MAX_BOARD_BYTES + 1)
}

/// What a fetch of boards from a remote that does not filter prints (git's words), which the
/// message of a fetch stopped at its deadline then explains.
const NOT_FILTERED: &str = "filtering not recognized by server";

/// What [`fetch_spec`] fetches: boards, without any blob larger than a board may be, or a
/// published artifact, whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    Boards,
    Whole,
}

/// `git fetch URL REFSPEC` into the cache (no tags, no FETCH_HEAD, no submodules), bounded by
/// the cache's deadline for the remote. A fetch of [`Fetch::Boards`] asks the remote to leave
/// out every blob over the board size limit ([`board_filter`]); the remote is then a promisor
/// remote for that fetch alone (named [`FETCH_REMOTE`] on the command line), so git records
/// nothing in the cache's configuration and no later git in the cache can fetch a left-out
/// blob lazily: reading it finds it missing, which [`read_board`] takes for a board over the
/// limit. A remote that does not filter sends it whole, within the deadline.
pub fn fetch_spec(
    cache: &Cache,
    url: &str,
    refspec: &str,
    what: &str,
    kind: Fetch,
) -> Result<Vec<u8>> {
    let mut cmd = command(&cache.dir);
    let filter = board_filter();
    let filter_arg = format!("--filter={filter}");
    let source = match kind {
        Fetch::Boards => {
            for c in [
                format!("remote.{FETCH_REMOTE}.url={url}"),
                format!("remote.{FETCH_REMOTE}.promisor=true"),
                format!("remote.{FETCH_REMOTE}.partialCloneFilter={filter}"),
            ] {
                cmd.arg("-c").arg(c);
            }
            FETCH_REMOTE
        }
        Fetch::Whole => url,
    };
    cmd.args([
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--no-recurse-submodules",
    ]);
    if kind == Fetch::Boards {
        cmd.arg(&filter_arg);
    }
    cmd.args(["--", source, refspec]);
    let r = run_remote_cmd(cache, cmd, what)?;
    if r.stopped.is_some_and(|ran| !ran.is_zero()) && r.stderr.contains(NOT_FILTERED) {
        return Err(Error::Git {
            message: format!(
                "{}; the remote does not filter what it sends (git said: {NOT_FILTERED}), so a \
                 board over the size limit would be downloaded whole before it is refused, and \
                 only the time limit bounds the download",
                stopped_message(what, r.stopped.unwrap_or_default())
            ),
        });
    }
    let out = remote_output(r, what)?;
    cache.tidy();
    Ok(out)
}

fn fetch_into(cache: &Cache, g: &GitBoard) -> Result<String> {
    let refspec = format!("+{}:{}", g.refname, cache.cache_ref);
    let what = format!("fetch {} from {}", g.refname, g.url);
    let mut last = None;
    // Fetches into one cache at once may collide on the cache's ref lock: try again, waiting
    // longer each time (20 ms doubling, at most six tries, never past the deadline).
    let mut pause = Duration::from_millis(20);
    for _ in 0..6 {
        match fetch_spec(cache, &g.url, &refspec, &what, Fetch::Boards) {
            Ok(_) => {
                return cache.cached_tip().ok_or_else(|| Error::Git {
                    message: format!("cannot {what}: the cache has no commit at the ref after it"),
                });
            }
            Err(e) => last = Some(e),
        }
        if Instant::now() + pause >= cache.until.at() {
            break;
        }
        std::thread::sleep(pause);
        pause *= 2;
    }
    Err(last.unwrap_or(Error::Git { message: what }))
}

/// One answer of `git cat-file --batch`.
#[derive(Debug, PartialEq)]
enum Answer {
    Blob(Vec<u8>),
    /// No such object (a missing file, a parentless commit's `^1`, or an object the cache
    /// lacks).
    Missing,
    /// An object that is no blob: its type.
    Other(String),
    /// A blob larger than the reader takes: its size, as git announced it before its content.
    TooLarge(u64),
}

/// Where the answer starting at `pos` of a `cat-file --batch` output ends, and whether it
/// announces an object larger than `max` (its size): `None` while the answer is incomplete.
/// `Err` when its header is not one `cat-file` writes.
fn answer_end(
    out: &[u8],
    pos: usize,
    max: u64,
) -> std::result::Result<Option<(usize, Option<u64>)>, String> {
    let Some(nl) = out[pos..].iter().position(|b| *b == b'\n').map(|n| pos + n) else {
        return Ok(None);
    };
    let header = String::from_utf8_lossy(&out[pos..nl]);
    if header.ends_with(" missing") {
        return Ok(Some((nl + 1, None)));
    }
    let f: Vec<&str> = header.split(' ').collect();
    let size = match f.as_slice() {
        [oid, _, size] if oid.bytes().all(|b| b.is_ascii_hexdigit()) => size.parse::<u64>().ok(),
        _ => None,
    }
    .ok_or_else(|| header.to_string())?;
    if size > max {
        return Ok(Some((nl + 1, Some(size))));
    }
    let end = nl + 1 + size as usize + 1;
    Ok((end <= out.len()).then_some((end, None)))
}

/// The objects named by `specs` (`<rev>:<path>`), in order, in one `git cat-file --batch`
/// whose answers are read header first: a blob over `max` bytes is refused before a byte of it
/// is read (git is stopped at its header; the answers after it are not given).
fn read_batch(cache: &Cache, specs: &[String], max: u64, what: &str) -> Result<Vec<Answer>> {
    let input: String = specs.iter().map(|s| format!("{s}\n")).collect();
    let mut pos = 0;
    let watch: crate::repo::git::Watch = Box::new(move |out: &[u8]| {
        loop {
            match answer_end(out, pos, max) {
                Ok(Some((_, Some(_)))) => return false,
                Ok(Some((end, None))) => pos = end,
                Ok(None) | Err(_) => return true,
            }
        }
    });
    let mut cmd = command(&cache.dir);
    cmd.args(["cat-file", "--batch"]);
    let r = run_watched(
        cmd,
        Some(input.as_bytes()),
        cache.until.local_call(),
        Some(watch),
        what,
    )?;
    if !r.ok && !r.cut {
        return Err(Error::Git {
            message: format!("cannot {what}: git said: {}", r.said()),
        });
    }
    let out = &r.stdout;
    let mut answers = Vec::with_capacity(specs.len());
    let mut pos = 0;
    while answers.len() < specs.len() && pos < out.len() {
        let bad = |h: String| Error::Git {
            message: format!("cannot {what}: git answered {h:?}"),
        };
        let Some((end, large)) = answer_end(out, pos, max).map_err(bad)? else {
            return Err(Error::Git {
                message: format!("cannot {what}: git's answer ends early"),
            });
        };
        let nl = out[pos..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(pos, |n| pos + n);
        let header = String::from_utf8_lossy(&out[pos..nl]).into_owned();
        if let Some(size) = large {
            answers.push(Answer::TooLarge(size));
            break;
        }
        let answer = if header.ends_with(" missing") {
            Answer::Missing
        } else {
            match header.split(' ').nth(1) {
                Some("blob") => Answer::Blob(out[nl + 1..end - 1].to_vec()),
                Some(kind) => Answer::Other(kind.to_string()),
                None => Answer::Missing,
            }
        };
        answers.push(answer);
        pos = end;
    }
    if answers.len() < specs.len() && !r.cut {
        return Err(Error::Git {
            message: format!(
                "cannot {what}: git gave {} answers to {} questions",
                answers.len(),
                specs.len()
            ),
        });
    }
    Ok(answers)
}

/// The board's bytes at a commit, and what a write checks of the commit's history
/// ([`read_board`]).
#[derive(Debug, Default)]
pub struct BoardRead {
    /// The board in the commit's tree (`None` when the tree has no such file).
    pub board: Option<Vec<u8>>,
    /// The board in the commit's first parent (`None` when there is none, or it is larger than
    /// a board may be).
    pub parent: Option<Vec<u8>>,
    /// The commit has a second parent: a merge commit, which `pair` never makes.
    pub merge: bool,
}

/// The board's bytes in a commit's tree, and with `parent`, the bytes of the board in the
/// commit's first parent and whether the commit has a second one: one `git cat-file --batch`,
/// read header first, so a board over [`crate::law::validate::MAX_BOARD_BYTES`] is refused
/// (exit 5) before a byte of it is read, as a file is.
pub fn read_board(
    cache: &Cache,
    commit: &str,
    path: &str,
    parent: bool,
    shown: &Path,
) -> Result<BoardRead> {
    let mut specs = vec![format!("{commit}:{path}")];
    if parent {
        specs.push(format!("{commit}^1:{path}"));
        specs.push(format!("{commit}^2"));
    }
    let max = crate::law::validate::MAX_BOARD_BYTES;
    let mut answers = read_batch(cache, &specs, max, "read the board from the cache")?.into_iter();
    let board = match answers.next() {
        Some(Answer::Blob(bytes)) => bytes,
        Some(Answer::TooLarge(size)) => {
            return Err(crate::store::too_large_content(shown, size, false));
        }
        Some(Answer::Other(kind)) => {
            return Err(Error::NotAFile {
                path: shown.to_path_buf(),
                kind: if kind == "tree" {
                    "a directory"
                } else {
                    "not a regular file"
                },
            });
        }
        Some(Answer::Missing) | None => {
            // No such file in the tree, or a tree or blob the cache lacks: only the first is a
            // missing board.
            let listed = cache.run(
                &["ls-tree", "--name-only", commit, "--", path],
                None,
                "read the board's tree from the cache",
            )?;
            if listed.is_empty() {
                return Ok(BoardRead::default());
            }
            // A blob the fetch left out is one over the limit (a fetch of boards takes none
            // larger): refused as the file it is, unless the cache lost it (then it is rebuilt).
            if !cache.damaged() {
                return Err(crate::store::too_large_unfetched(shown));
            }
            return Err(Error::Git {
                message: format!(
                    "{}: the cache lacks the board's object at {commit}:{path}",
                    shown.display()
                ),
            });
        }
    };
    let earlier = match answers.next() {
        Some(Answer::Blob(bytes)) => Some(bytes),
        _ => None,
    };
    let merge = matches!(answers.next(), Some(Answer::Other(kind)) if kind == "commit");
    Ok(BoardRead {
        board: Some(board),
        parent: earlier,
        merge,
    })
}

/// The first-parent history of a commit in the cache, newest first, at most `max` commits:
/// each commit and how many parents it has.
pub fn first_parents(cache: &Cache, tip: &str, max: usize) -> Result<Vec<(String, usize)>> {
    let count = format!("--max-count={max}");
    let out = cache.run(
        &["rev-list", "--first-parent", "--parents", &count, tip, "--"],
        None,
        "read the ref's history from the cache",
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let commit = f.next()?.to_string();
            Some((commit, f.count()))
        })
        .collect())
}

/// The blobs named by `specs` (`<rev>:<path>`), in order, each `None` when there is no such
/// blob (no such commit or file, a parentless commit's `^1`) or it is larger than a board may
/// be. Reading stops before the blob that would bring the bytes read past `budget`: the result
/// is then shorter than `specs`.
pub fn read_blobs(cache: &Cache, specs: &[String], budget: u64) -> Result<Vec<Option<Vec<u8>>>> {
    if specs.is_empty() {
        return Ok(vec![]);
    }
    let what = "read earlier versions of the board from the cache";
    let input: String = specs.iter().map(|s| format!("{s}\n")).collect();
    let out = cache.run(&["cat-file", "--batch-check"], Some(input.as_bytes()), what)?;
    let text = String::from_utf8_lossy(&out);
    // (oid, size) of each spec that names a blob a board may be.
    let mut found: Vec<Option<(String, u64)>> = Vec::with_capacity(specs.len());
    for line in text.lines().take(specs.len()) {
        let f: Vec<&str> = line.split(' ').collect();
        let blob = match f.as_slice() {
            [oid, "blob", size] if oid.bytes().all(|b| b.is_ascii_hexdigit()) => size
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= crate::law::validate::MAX_BOARD_BYTES)
                .map(|n| (oid.to_string(), n)),
            _ => None,
        };
        found.push(blob);
    }
    let mut spent = 0u64;
    let mut take = 0;
    for f in &found {
        let size = f.as_ref().map_or(0, |(_, n)| *n);
        if spent + size > budget {
            break;
        }
        spent += size;
        take += 1;
    }
    let wanted: String = found[..take]
        .iter()
        .flatten()
        .map(|(oid, _)| format!("{oid}\n"))
        .collect();
    let mut blobs = std::collections::VecDeque::new();
    if !wanted.is_empty() {
        let out = cache.run(&["cat-file", "--batch"], Some(wanted.as_bytes()), what)?;
        let mut rest = &out[..];
        while !rest.is_empty() {
            let nl = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
            let header = String::from_utf8_lossy(&rest[..nl]).to_string();
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .filter(|_| header.split(' ').nth(1) == Some("blob"))
                .ok_or_else(|| Error::Git {
                    message: format!("cannot {what}: git answered {header:?}"),
                })?;
            let body = rest.get(nl + 1..nl + 1 + size).ok_or_else(|| Error::Git {
                message: format!("cannot {what}: git's answer ends early"),
            })?;
            blobs.push_back(body.to_vec());
            rest = rest.get(nl + 2 + size..).unwrap_or_default();
        }
    }
    Ok(found[..take]
        .iter()
        .map(|f| f.as_ref().and_then(|_| blobs.pop_front()))
        .collect())
}

/// The commit the cache holds for each ref under `prefix` (as the remote names it, ending in
/// `/`), from its last fetch of them, in name order: one `git for-each-ref`.
pub fn cached_refs(cache: &Cache, prefix: &str) -> Result<Vec<(String, String)>> {
    let local = format!("refs/pair-cache/{prefix}");
    let out = cache.run(
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "--",
            &local,
        ],
        None,
        "list the boards the cache holds",
    )?;
    let text = String::from_utf8_lossy(&out);
    let mut refs: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| {
            let (oid, name) = l.split_once(' ')?;
            let name = name.strip_prefix("refs/pair-cache/")?;
            (name.starts_with(prefix) && self::oid(oid))
                .then(|| (name.to_string(), oid.to_string()))
        })
        .collect();
    refs.sort();
    Ok(refs)
}

/// The boards named by `specs` (`<rev>:<path>`), in order, each `None` when there is no such
/// blob (no such commit or file, an object the cache lacks) or it is larger than a board may
/// be: one `git cat-file --batch` read header first, so a blob over the limit is never read
/// (git is stopped at its header, and asked again for the boards after it).
pub fn read_boards(cache: &Cache, specs: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
    let max = crate::law::validate::MAX_BOARD_BYTES;
    let mut out = Vec::with_capacity(specs.len());
    while out.len() < specs.len() {
        let answers = read_batch(
            cache,
            &specs[out.len()..],
            max,
            "read the boards from the cache",
        )?;
        if answers.is_empty() {
            return Err(Error::Git {
                message: "cannot read the boards from the cache: git gave no answer".into(),
            });
        }
        out.extend(answers.into_iter().map(|a| match a {
            Answer::Blob(bytes) => Some(bytes),
            Answer::Missing | Answer::Other(_) | Answer::TooLarge(_) => None,
        }));
    }
    Ok(out)
}

/// `OsStr` of a string, for environment values.
pub fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(stderr: &str, stdout: &str) -> Ran {
        Ran {
            ok: false,
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.to_string(),
            stopped: None,
            cut: false,
        }
    }

    #[test]
    fn what_the_remote_printed_is_counted_not_quoted() {
        let r = ran(
            "remote: frozen; ask with token s3cr3t\nremote: second line\nerror: failed to push \
             some refs to 'https://host/repo.git'\n",
            "To https://host/repo.git\n!\tabc:refs/pair/x\t[remote rejected] (pre-receive hook \
             declined)\nDone\n",
        );
        let said = r.said();
        assert!(!said.contains("s3cr3t"), "{said}");
        assert!(said.contains("pre-receive hook declined"), "{said}");
        assert!(said.contains("error: failed to push"), "{said}");
        assert!(
            said.contains("(2 lines the remote printed not repeated"),
            "{said}"
        );
        assert!(!r.auth_failed());
    }

    #[test]
    fn an_authentication_failure_says_what_to_configure() {
        let key = ran(
            "git@host: Permission denied (publickey).\nfatal: Could not read from remote \
             repository.\n",
            "",
        );
        assert!(key.auth_failed());
        assert!(key.said().contains("ssh agent"), "{}", key.said());
        let host = ran("Host key verification failed.\nfatal: Could not read\n", "");
        assert!(host.said().contains("known_hosts"), "{}", host.said());
        let token = ran(
            "fatal: Authentication failed for 'https://host/repo.git/'\n",
            "",
        );
        assert!(
            token.said().contains("credential helper"),
            "{}",
            token.said()
        );
        let none = ran(
            "fatal: could not read Username for 'https://host': terminal prompts disabled\n",
            "",
        );
        assert!(none.said().contains("credential helper"), "{}", none.said());
        // A hook's text is not git's: it says nothing of authentication.
        let hook = ran("remote: Permission denied (publickey) for the deploy\n", "");
        assert!(!hook.auth_failed());
        assert!(!ran("fatal: unable to access: Connection refused\n", "").auth_failed());
    }
}
