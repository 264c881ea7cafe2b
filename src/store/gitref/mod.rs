//! A blackboard kept in the tree of a git ref on a remote (`git+<url>#<ref>:<path>`).
//!
//! The remote is the compare-and-swap: a write reads the board at the ref's tip, runs the same
//! transaction as a write to a file ([`crate::store::update`]: the op, the law, the journal
//! seal), commits the new board with the tip as its only parent, and pushes it with an explicit
//! lease on that tip (`--force-with-lease=<ref>:<tip>`; never `--force`). The remote updates the
//! ref only if it still points at the tip, atomically per ref. When it moved, the write reads
//! the new tip and builds again, a bounded number of times with jittered backoff; a write that
//! expects a SHA-256 then finds the board changed and is refused as stale. A write is reported
//! only once the push was accepted. Creation pushes with a lease on "absent", so it never
//! clobbers an existing ref.
//!
//! Reads ask the remote for the tip (`git ls-remote`), fetch only when it changed from the
//! cached one, and read the board's blob from the cache ([`remote`]).

pub mod remote;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{Error, FieldError, Result};
use crate::store::location::GitBoard;
use crate::store::{Current, Expect, Session, WriteOptions, Written};
use remote::{Cache, Until, command};

/// The most times a write reads the tip, applies itself and pushes, when the ref keeps moving
/// under its pushes (it also stops once the write's `--timeout` has passed).
pub const MAX_ATTEMPTS: u32 = 16;

/// The first pause between attempts; it doubles each time (with jitter), up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(40);
const MAX_PAUSE: Duration = Duration::from_millis(1500);

/// The domain of the e-mail address a commit's author is given: `<agent-id>@pair.invalid`
/// (`.invalid` is reserved, so it never names a real mailbox).
pub const EMAIL_DOMAIN: &str = "pair.invalid";

/// What the last read or write of a git board learned about the remote, for the command's
/// output (the `remote` object of `poll`, `status` and writes).
#[derive(Debug, Clone, Serialize)]
pub struct Observed {
    /// The commit the board was read at (or written as); `None` when the ref does not exist.
    pub tip: Option<String>,
    /// Whether the cache had to fetch (the tip changed since the cache last saw it).
    pub fetched: bool,
    /// The cached tip the new one does not descend from, when the ref was rewritten by force
    /// outside `pair`.
    pub rewritten_from: Option<String>,
    /// Whether the remote could not be reached and the board was read from the cache.
    pub offline: bool,
    /// Seconds since the remote was last reached (0 when it was reached now).
    pub cache_age_s: Option<u64>,
    /// How many times the write re-read and re-applied itself because the ref moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
}

impl Observed {
    /// The `remote` line of `status`: the tip read, and the cache's age when the remote could
    /// not be reached.
    pub fn status_line(&self) -> String {
        let tip = self.tip.as_deref().unwrap_or("(no ref)");
        if self.offline {
            format!(
                "remote      OFFLINE: from the cache at {tip}, last synced {} s ago\n",
                self.cache_age_s
                    .map_or_else(|| "?".to_string(), |a| a.to_string())
            )
        } else {
            format!("remote      at {tip}\n")
        }
    }
}

fn warn(message: &str) {
    let s = crate::text::settings();
    if !s.json && !s.quiet {
        eprintln!("pair: warning: {message}");
    }
}

/// Bring the cache up to the remote's tip: ask where the ref points and fetch only when the
/// cache does not hold that commit, no git call running past `until`. Returns the cache and the
/// tip (`None`: no such ref).
fn sync(g: &GitBoard, shown: &Path, s: &Session, until: Until) -> Result<(Cache, Option<String>)> {
    let cache = Cache::open(g, until)?;
    let before = cache.cached_tip();
    sync_from(cache, before, g, shown, s)
}

/// [`sync`] with the cache open and the tip it last saw (`before`) already read.
fn sync_from(
    cache: Cache,
    before: Option<String>,
    g: &GitBoard,
    shown: &Path,
    s: &Session,
) -> Result<(Cache, Option<String>)> {
    // A read that may show the cache (`status`) shows it when the remote cannot be reached,
    // or its tip cannot be fetched (it does not answer in time, or breaks the connection).
    let offline = |cache: Cache, e: Error| -> Result<(Cache, Option<String>)> {
        if !(s.offline_reads && before.is_some()) {
            return Err(e);
        }
        let age = cache.age().map(|d| d.as_secs());
        warn(&format!(
            "{}: the remote cannot be reached ({e}); showing the cached board, last synced {} s \
             ago",
            shown.display(),
            age.map_or_else(|| "?".to_string(), |a| a.to_string())
        ));
        s.observe(Observed {
            tip: before.clone(),
            fetched: false,
            rewritten_from: cache.rewrite().map(|r| r.from),
            offline: true,
            cache_age_s: age,
            retries: None,
        });
        Ok((cache, before.clone()))
    };
    let tip = match remote::ls_remote(&cache, g) {
        Ok(t) => t,
        Err(e) => return offline(cache, e),
    };
    let mut fetched = false;
    // The cache holds the tip only when its ref points there. That a commit is in its object
    // store says nothing of the commit's tree and blob: another process sharing the cache may
    // be fetching it right now, and git writes what it fetches first (a pack, whose objects
    // may be found before all are checked; a small fetch without a filter, one loose object
    // at a time, the commit first), then checks they are all there, and only then moves the
    // ref. A read that took the commit alone for the tip read the board's blob before it was
    // written ("the cache lacks the board's object"), and could not rebuild the cache from
    // under the process still fetching into it.
    let tip = match tip {
        None => None,
        Some(t) if before.as_deref() == Some(t.as_str()) => Some(t),
        // Another process's fetch of the tip may have ended since `before` was read.
        Some(t) if cache.cached_tip().as_deref() == Some(t.as_str()) => Some(t),
        Some(_) => {
            fetched = true;
            match remote::fetch(&cache, g) {
                Ok(t) => Some(t),
                Err(e) => return offline(cache, e),
            }
        }
    };
    let rewritten_from = rewrite_seen(&cache, g, before.as_deref(), tip.as_deref(), shown);
    cache.touch();
    s.observe(Observed {
        tip: tip.clone(),
        fetched,
        rewritten_from,
        offline: false,
        cache_age_s: Some(0),
        retries: None,
    });
    Ok((cache, tip))
}

/// The tip this cache had seen before a rewrite of the ref that no recorded repair has accepted
/// yet, said on stderr: a rewrite found now (`tip` does not follow `before`, the tip the cache
/// last saw, as `pair` writes a ref: [`Cache::descends`]), kept in the cache
/// ([`remote::Rewrite`]); or one found by an earlier read. Every read from the cache reports
/// it, not the first alone (an agent's `poll --json` must not consume the only signal), until
/// the board at the tip records a repair made after the rewrite.
fn rewrite_seen(
    cache: &Cache,
    g: &GitBoard,
    before: Option<&str>,
    tip: Option<&str>,
    shown: &Path,
) -> Option<String> {
    let tip = tip?;
    let kept = cache.rewrite();
    let (rewrite, now) = match before {
        Some(old) if old != tip && !cache.descends(old, tip) => {
            let r = remote::Rewrite {
                from: kept.map_or_else(|| old.to_string(), |k| k.from),
                at: tip.to_string(),
            };
            cache.keep_rewrite(&r);
            (r, true)
        }
        _ => {
            let r = kept?;
            if repaired_since(cache, g, &r.at, tip) {
                cache.forget_rewrite();
                return None;
            }
            (r, false)
        }
    };
    warn_rewrite(shown, g, &rewrite, now);
    Some(rewrite.from)
}

fn warn_rewrite(shown: &Path, g: &GitBoard, r: &remote::Rewrite, now: bool) {
    let (from, at) = (&r.from, &r.at);
    let what = if now {
        format!(
            "its tip {at} does not descend from {from}, the tip this cache last saw, through \
             commits of one parent each as pair makes them (a force push, or a merge commit \
             pushed by plain git); reading the board at the new tip"
        )
    } else {
        format!(
            "its tip then, {at}, does not descend from {from}, the tip this cache had seen, and \
             no repair has been recorded on the board since"
        )
    };
    warn(&format!(
        "{}: the ref {} was rewritten outside pair: {what}. Every read from this cache says so \
         until a repair is recorded: check the board's history (`pair validate`), then record \
         the board as it should stand with `pair write --repair`",
        shown.display(),
        g.refname
    ));
}

/// Whether the board at `tip` records a repair that the board at `at` does not hold: a repair
/// recorded after the rewrite that left the ref at `at`.
fn repaired_since(cache: &Cache, g: &GitBoard, at: &str, tip: &str) -> bool {
    if at == tip {
        return false;
    }
    let specs = [format!("{at}:{}", g.path), format!("{tip}:{}", g.path)];
    let Ok(blobs) = remote::read_blobs(cache, &specs, 2 * crate::law::validate::MAX_BOARD_BYTES)
    else {
        return false;
    };
    let lines = |i: usize| {
        blobs
            .get(i)
            .and_then(Option::as_deref)
            .and_then(crate::board::journal::record_lines)
    };
    match (lines(0), lines(1)) {
        (earlier, Some(later)) => {
            crate::board::journal::repaired_after(&earlier.unwrap_or_default(), &later)
        }
        _ => false,
    }
}

/// A git board read once, at one commit ([`crate::store::snapshot`]).
pub(crate) struct Read {
    pub cache: Cache,
    pub tip: String,
    pub current: Current,
    /// Read at the remote's tip, not at the tip the cache last saw.
    pub fresh: bool,
}

/// Read the board at one commit, to `depth`: at the remote's tip, giving the remote the
/// session's limit; or, for a write that derives nothing from the board first, at the tip the
/// cache last saw (no round trip: the push's lease checks it), with the previous version for
/// the journal's history check.
pub(crate) fn snapshot(
    g: &GitBoard,
    shown: &Path,
    depth: crate::store::Depth,
    s: &Session,
) -> Result<Read> {
    let until = s.remote_until();
    let edit = matches!(depth, crate::store::Depth::Edit { .. });
    if depth == (crate::store::Depth::Edit { fresh: false }) {
        let cache = Cache::open(g, until.clone())?;
        if let Some(tip) = cache.cached_tip() {
            // Whatever goes wrong reading what the cache holds, the remote is asked.
            if let Ok(remote::BoardRead {
                board: Some(bytes),
                parent,
                merge,
            }) = remote::read_board(&cache, &tip, &g.path, true, shown)
            {
                let history = tip_history(&tip, parent.as_deref(), merge, &bytes);
                return Ok(Read {
                    cache,
                    tip,
                    current: Current::new(bytes, history),
                    fresh: false,
                });
            }
        }
        let before = cache.cached_tip();
        let (cache, tip) = sync_from(cache, before, g, shown, s)?;
        return read_at_tip(g, shown, s, until, cache, tip, edit);
    }
    let (cache, tip) = sync(g, shown, s, until.clone())?;
    read_at_tip(g, shown, s, until, cache, tip, edit)
}

/// The board at `tip`, read from the cache (its previous version too for an `edit`); the cache
/// is rebuilt from the remote once when it cannot give back what it fetched.
fn read_at_tip(
    g: &GitBoard,
    shown: &Path,
    s: &Session,
    until: Until,
    cache: Cache,
    tip: Option<String>,
    edit: bool,
) -> Result<Read> {
    let missing = || Error::Missing {
        path: shown.to_path_buf(),
    };
    let tip = tip.ok_or_else(missing)?;
    // A board is the same bytes at the same commit: a waiting poll whose remote has not moved
    // costs one `ls-remote`.
    let address = g.address();
    if !edit && let Some(bytes) = s.read_at(&address, &tip) {
        return Ok(Read {
            cache,
            tip,
            current: Current::new(bytes, Vec::new()),
            fresh: true,
        });
    }
    let (cache, tip, read) = match remote::read_board(&cache, &tip, &g.path, edit, shown) {
        // The cache cannot give back what it fetched: rebuild it from the remote, once.
        Err(e @ Error::Git { .. }) if !s.remote().is_some_and(|o| o.offline) => {
            cache.rebuild(g).map_err(|_| e)?;
            let (cache, tip) = sync(g, shown, s, until)?;
            let tip = tip.ok_or_else(missing)?;
            let read = remote::read_board(&cache, &tip, &g.path, edit, shown)?;
            (cache, tip, read)
        }
        read => (cache, tip, read?),
    };
    let remote::BoardRead {
        board,
        parent,
        merge,
    } = read;
    let bytes = board.ok_or_else(missing)?;
    let history = if edit {
        tip_history(&tip, parent.as_deref(), merge, &bytes)
    } else {
        Vec::new()
    };
    if !edit {
        s.remember_read(&address, &tip, &bytes);
    }
    Ok(Read {
        cache,
        tip,
        current: Current::new(bytes, history),
        fresh: true,
    })
}

/// The name the board's remote is given for a push (on the command line, for that push alone).
const PUSH_REMOTE: &str = "pair-board";

/// Whether the push was accepted, or the ref had moved.
enum Pushed {
    Accepted,
    /// The ref moved; the push failed, and may have landed all the same (a connection that
    /// broke after the remote took it).
    Moved,
    /// The ref moved, and the push was refused before anything was sent: it did not land.
    Stale,
}

/// Whether git refused to push the board's ref because the remote's ref no longer points at
/// the leased tip (`[rejected] (stale info)` in the porcelain output): git decides that from
/// the ref the remote advertised, before it sends anything, so the push did not land.
fn stale_lease(stdout: &[u8], refname: &str) -> bool {
    let target = format!(":{refname}");
    String::from_utf8_lossy(stdout).lines().any(|l| {
        let mut f = l.split('\t');
        f.next() == Some("!")
            && f.next().is_some_and(|r| r.ends_with(&target))
            && f.next()
                .is_some_and(|s| s.trim() == "[rejected] (stale info)")
    })
}

/// Where the commit `git fast-import` builds is kept while it builds it: the stream resets it
/// before it ends, so the ref is never written (the commit is named by its mark).
const BUILD_REF: &str = "refs/pair-build/commit";

/// A name or address for a commit's identity line: without the characters that delimit one
/// (git drops them from an identity as well).
fn ident_part(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '<' | '>' | '\n'))
        .collect()
}

/// A path of the tree as a `fast-import` path: C-quoted (a board's path has no control
/// character, [`crate::store::location`]).
fn quoted_path(path: &str) -> String {
    format!("\"{}\"", path.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Commit `bytes` as the board's file on top of `tip` (keeping the rest of the tree): one
/// `git fast-import`, which stores the blob, the trees on its path and the commit, and names
/// the commit (`get-mark`).
fn commit(
    cache: &Cache,
    g: &GitBoard,
    tip: Option<&str>,
    bytes: &[u8],
    opts: &WriteOptions,
) -> Result<String> {
    let who = ident_part(opts.agent.as_deref().unwrap_or("pair"));
    let who = if who.trim().is_empty() {
        "pair".to_string()
    } else {
        who
    };
    let email = ident_part(&format!("{who}@{EMAIL_DOMAIN}"));
    let message = format!("{}\n", opts.description);
    let mut stream = Vec::with_capacity(bytes.len() + message.len() + 512);
    stream.extend_from_slice(
        format!(
            "commit {BUILD_REF}\nmark :1\nauthor {who} <{email}> now\ncommitter {who} <{email}> now\n\
             data {}\n",
            message.len()
        )
        .as_bytes(),
    );
    stream.extend_from_slice(message.as_bytes());
    stream.push(b'\n');
    if let Some(t) = tip {
        stream.extend_from_slice(format!("from {t}\n").as_bytes());
    }
    stream.extend_from_slice(
        format!(
            "M 100644 inline {}\ndata {}\n",
            quoted_path(&g.path),
            bytes.len()
        )
        .as_bytes(),
    );
    stream.extend_from_slice(bytes);
    stream.extend_from_slice(format!("\n\nreset {BUILD_REF}\n\nget-mark :1\ndone\n").as_bytes());
    let mut cmd = command(&cache.dir);
    // Small imports are stored as loose objects, as `hash-object` and `commit-tree` store
    // theirs, not as one pack per write.
    cmd.args([
        "-c",
        "fastimport.unpackLimit=100",
        "fast-import",
        "--quiet",
        "--done",
        "--date-format=now",
    ]);
    let r = cache.run_cmd(cmd, Some(&stream), "make the commit")?;
    let oid = String::from_utf8_lossy(&r.stdout).trim().to_string();
    if !r.ok || !remote::oid(&oid) {
        return Err(Error::Git {
            message: format!("cannot make the commit: git said: {}", r.said()),
        });
    }
    Ok(oid)
}

/// Push `new` to the ref with a lease on `tip` (on "absent" when `None`), and with it, in one
/// atomic push, each commit to publish (never forced: a ref named after its commit is either
/// absent or already that commit; its objects are read from the repository that made it, as an
/// alternate object directory).
fn push(
    cache: &Cache,
    g: &GitBoard,
    new: &str,
    tip: Option<&str>,
    shown: &Path,
    publish: &[crate::store::Publish],
) -> Result<Pushed> {
    let lease = format!("--force-with-lease={}:{}", g.refname, tip.unwrap_or(""));
    let refspec = format!("{new}:{}", g.refname);
    // The remote is named for this push alone, with the cache's ref as where its board ref is
    // tracked: an accepted push moves the cache's ref itself, and no `update-ref` follows.
    let url = format!("remote.{PUSH_REMOTE}.url={}", g.url);
    let tracking = format!(
        "remote.{PUSH_REMOTE}.fetch=+{}:{}",
        g.refname, cache.cache_ref
    );
    let mut cmd = command(&cache.dir);
    cmd.args([
        "-c",
        "push.gpgSign=false",
        "-c",
        url.as_str(),
        "-c",
        tracking.as_str(),
        "push",
        "--porcelain",
        "--no-verify",
        "--no-recurse-submodules",
    ]);
    if !publish.is_empty() {
        cmd.arg("--atomic");
        let dirs: Vec<std::ffi::OsString> = publish
            .iter()
            .map(|p| p.objects.clone().into_os_string())
            .collect();
        if let Ok(joined) = std::env::join_paths(dirs) {
            cmd.env("GIT_ALTERNATE_OBJECT_DIRECTORIES", joined);
        }
    }
    cmd.args([lease.as_str(), "--", PUSH_REMOTE, refspec.as_str()]);
    for p in publish {
        cmd.arg(format!("{}:{}", p.commit, p.refname));
    }
    let r = remote::run_remote_cmd(cache, cmd, "push the board")?;
    if r.ok {
        return Ok(Pushed::Accepted);
    }
    if stale_lease(&r.stdout, &g.refname) {
        return Ok(Pushed::Stale);
    }
    // Refused or failed: the ref moved if it no longer points at the tip read.
    match remote::ls_remote(cache, g) {
        Ok(now) if now.as_deref() == Some(new) => Ok(Pushed::Accepted),
        Ok(now) if now.as_deref() != tip => Ok(Pushed::Moved),
        Err(_) if r.auth_failed() => Err(Error::Git {
            message: format!(
                "{}: the remote {} refused the push; nothing was written. git said: {}",
                shown.display(),
                g.url,
                r.said()
            ),
        }),
        Err(_) => Err(Error::Git {
            message: format!(
                "{}: cannot reach the remote {} to push the write. git said: {}. If the \
                 connection broke during the push it may have landed: check with `pair poll` \
                 before writing again",
                shown.display(),
                g.url,
                r.said()
            ),
        }),
        Ok(_) => Err(Error::Git {
            message: format!(
                "{}: the remote did not accept the write; nothing was written. git said: {}",
                shown.display(),
                r.said()
            ),
        }),
    }
}

/// A pause before the next attempt: exponential, with jitter so that writers that collided do
/// not collide again in step.
fn backoff(attempt: u32) -> Duration {
    let base = FIRST_PAUSE
        .saturating_mul(1 << attempt.min(10))
        .min(MAX_PAUSE);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
        ^ std::process::id().wrapping_mul(2_654_435_761);
    // Between half and all of the base.
    base / 2 + base.mul_f64(f64::from(nanos % 1000) / 2000.0)
}

/// One write to a git board: read at the tip, build and seal through the store's shared
/// [`crate::store::compose`], commit, push with a lease; re-read and rebuild when the ref moved.
/// No call to the remote runs past the write's `--timeout` (see [`remote::Until`]), which
/// bounds the whole command.
pub(crate) fn update<F, B>(
    g: &GitBoard,
    shown: &Path,
    expect: Expect,
    opts: &WriteOptions,
    s: &Session,
    first: Option<Read>,
    mut build: F,
) -> Result<Written>
where
    F: FnMut(Option<&Current>) -> Result<B>,
    B: Into<crate::store::Built>,
{
    let mut first = first;
    let started = Instant::now();
    let until = s.remote_until().sooner(started + opts.timeout);
    let mut attempt = 0;
    // The first attempt builds on the tip this cache last saw (an agent writes right after the
    // `poll` that told it its turn), saving a round trip to the remote; the lease makes it
    // safe. Whatever it finds (a refusal, a stale hash, a moved ref) may be the cache's age
    // speaking, so it is never reported: the write asks the remote and starts again.
    let mut optimistic = first.as_ref().is_none_or(|f| !f.fresh);
    // Whether a push of this write was refused because the ref had moved: a write that then
    // runs out of time reading the new tip lost the race, as one out of attempts did.
    let mut lost_once = false;
    let mut repaired = false;
    // The commits of pushes that failed with the ref moved: one may have landed all the same.
    let mut unsure: Vec<(String, crate::store::Composed)> = vec![];
    // Given up: the ref moved under each push until the time or the attempts ran out. Busy,
    // like a lock, unless a push may have landed and the remote could not be asked whether it
    // did: then retrying could write twice.
    let lost = |attempt: u32, unsure: bool| {
        if unsure {
            return Error::Git {
                message: format!(
                    "{}: the ref {} moved under each of {attempt} pushes and the write gave up; \
                     one push may have landed all the same, and there was no time left to ask \
                     the remote: check with `pair poll` before writing again",
                    shown.display(),
                    g.refname
                ),
            };
        }
        Error::LockTimeout {
            lock: shown.to_path_buf(),
            timeout: started.elapsed(),
            holder: Some(format!(
                "other writers: the ref {} moved under each of {attempt} pushes",
                g.refname
            )),
        }
    };
    loop {
        // The journal's `wait_us`: the time lost to attempts that found the ref moved.
        let waited = started.elapsed();
        let attempt_started = Instant::now();
        // The snapshot the command started from is the first attempt's board: no second read.
        let mut found = None;
        let (cache, tip) = if let Some(f) = first.take() {
            found = Some(Some(f.current));
            (f.cache, Some(f.tip))
        } else if optimistic {
            let cache = Cache::open(g, until.clone())?;
            match cache.cached_tip() {
                Some(t) => (cache, Some(t)),
                // Nothing cached: the remote is asked, with the cache just opened.
                None => {
                    optimistic = false;
                    sync_from(cache, None, g, shown, s)?
                }
            }
        } else {
            match sync(g, shown, s, until.clone()) {
                Ok(found) => found,
                // A write that lost the race to other writers and then ran out of time reading
                // the new tip gives up as one out of attempts does.
                Err(Error::Git { .. }) if (attempt > 0 || lost_once) && until.passed() => {
                    return Err(lost(attempt, !unsure.is_empty()));
                }
                Err(e) => return Err(e),
            }
        };
        // A push that failed may still have landed (the connection broke after the remote
        // took it) and been built on since: then the write has happened, and must not be
        // applied again.
        if let Some(t) = tip.as_deref()
            && let Some(i) = unsure.iter().position(|(c, _)| cache.descends(c, t))
        {
            let (new, composed) = unsure.swap_remove(i);
            return Ok(accepted(
                &cache,
                g,
                shown,
                &expect,
                new,
                composed,
                attempt,
                opts.repair,
                s,
            ));
        }
        let built = build_commit(
            &cache,
            g,
            tip.as_deref(),
            found,
            shown,
            &expect,
            opts,
            waited,
            &mut build,
        );
        let (composed, new) = match built {
            Ok(b) => b,
            Err(_) if optimistic => {
                optimistic = false;
                continue;
            }
            // The cache could not give back the board: rebuilt from the remote if damaged, once.
            Err(Error::Git { .. }) if !repaired && cache.rebuild(g).is_ok() => {
                repaired = true;
                continue;
            }
            Err(e) => return Err(e),
        };
        let pushed = push(&cache, g, &new, tip.as_deref(), shown, &opts.publish)?;
        match pushed {
            Pushed::Accepted => {
                return Ok(accepted(
                    &cache,
                    g,
                    shown,
                    &expect,
                    new,
                    composed,
                    attempt,
                    opts.repair,
                    s,
                ));
            }
            // The cache was behind: read the remote's tip and build again, at once.
            Pushed::Moved | Pushed::Stale if optimistic => {
                if matches!(pushed, Pushed::Moved) {
                    unsure.push((new, composed));
                }
                optimistic = false;
                lost_once = true;
            }
            Pushed::Moved | Pushed::Stale => {
                if matches!(pushed, Pushed::Moved) {
                    unsure.push((new, composed));
                }
                attempt += 1;
                let pause = backoff(attempt);
                // Another attempt only when it can end in time, taking as long as this one: one
                // cut at the deadline would end the write not knowing what it did.
                let room = Instant::now() + pause + attempt_started.elapsed() <= until.at();
                if attempt >= MAX_ATTEMPTS || !room {
                    // Before giving up, look once more: a push reported refused may have
                    // landed, and then the write has happened.
                    let look = sync(g, shown, s, until.clone());
                    if let Ok((cache, Some(t))) = &look
                        && let Some(i) = unsure.iter().position(|(c, _)| cache.descends(c, t))
                    {
                        let (new, composed) = unsure.swap_remove(i);
                        return Ok(accepted(
                            cache,
                            g,
                            shown,
                            &expect,
                            new,
                            composed,
                            attempt,
                            opts.repair,
                            s,
                        ));
                    }
                    return Err(lost(attempt, look.is_err() && !unsure.is_empty()));
                }
                std::thread::sleep(pause);
            }
        }
    }
}

/// The write whose commit `new` the remote took: recorded in the cache (only a shortcut for the
/// next read, which fetches if this failed, never a reason to report failure) and reported.
///
/// A rewrite the cache keeps is reported by the write as by a read, unless the write is the
/// repair that accepts it.
#[allow(clippy::too_many_arguments)]
fn accepted(
    cache: &Cache,
    g: &GitBoard,
    shown: &Path,
    expect: &Expect,
    new: String,
    composed: crate::store::Composed,
    attempt: u32,
    repair: bool,
    s: &Session,
) -> Written {
    // An accepted push moved the cache's ref already; one that was found landed did not.
    if cache.cached_tip().as_deref() != Some(new.as_str()) {
        let _ = cache.set_tip(&new);
    }
    cache.touch();
    let rewritten_from = if repair {
        cache.forget_rewrite();
        None
    } else {
        let kept = cache.rewrite();
        if let Some(r) = &kept
            && s.remote().is_none_or(|o| o.rewritten_from.is_none())
        {
            warn_rewrite(shown, g, r, false);
        }
        kept.map(|r| r.from)
    };
    s.observe(Observed {
        tip: Some(new),
        fetched: false,
        rewritten_from,
        offline: false,
        cache_age_s: Some(0),
        retries: Some(attempt),
    });
    Written {
        target: PathBuf::from(shown),
        old_sha256: composed.old_sha256,
        new_sha256: composed.sha256,
        created: matches!(expect, Expect::Absent),
        parsed: composed.parsed,
        warnings: composed.warnings,
    }
}

/// Read the board at `tip`, build the new content through the store's shared
/// [`crate::store::compose`], and commit it on top of `tip`.
#[allow(clippy::too_many_arguments)]
fn build_commit<F, B>(
    cache: &Cache,
    g: &GitBoard,
    tip: Option<&str>,
    found: Option<Option<Current>>,
    shown: &Path,
    expect: &Expect,
    opts: &WriteOptions,
    waited: Duration,
    build: &mut F,
) -> Result<(crate::store::Composed, String)>
where
    F: FnMut(Option<&Current>) -> Result<B>,
    B: Into<crate::store::Built>,
{
    if matches!(expect, Expect::Absent) && tip.is_some() {
        // Creation makes the ref; it never writes into one that exists.
        return Err(Error::Exists {
            path: shown.to_path_buf(),
        });
    }
    let current = match (found, tip) {
        (Some(current), _) => current,
        (None, Some(t)) => match remote::read_board(cache, t, &g.path, true, shown)? {
            remote::BoardRead {
                board: Some(bytes),
                parent,
                merge,
            } => {
                let history = tip_history(t, parent.as_deref(), merge, &bytes);
                Some(Current::new(bytes, history))
            }
            _ => None,
        },
        (None, None) => None,
    };
    let composed = crate::store::compose(shown, expect, current, opts, waited, build)?;
    let new = commit(cache, g, tip, &composed.bytes, opts)?;
    Ok((composed, new))
}

/// How far `validate` walks a git board's history: at most this many commits back from the tip,
/// and at most this many bytes of earlier versions read.
pub const HISTORY_COMMITS: usize = 1000;
pub const HISTORY_BYTES: u64 = 256 * 1024 * 1024;

fn history_error(message: String) -> FieldError {
    FieldError {
        field: "journal".into(),
        line: None,
        message,
    }
}

fn lost_message(later: &str, earlier: &str, what: &str) -> String {
    format!(
        "the ref's history shows journal records lost: the board at commit {later} does not \
         keep the journal of commit {earlier} before it ({what}). Each commit of the ref is one \
         write, and pair only appends to the journal: the commit was made outside pair (a plain \
         `git push`?). Restore the records, or repair the board (`pair write --repair`), which \
         is recorded"
    )
}

fn merge_message(commit: &str) -> String {
    format!(
        "the ref's history holds a merge commit, {commit}: pair never makes one (each commit of \
         the ref is one write on top of the one before), so it was pushed outside pair. A plain \
         `git push` of a merge whose second parent is the old tip is a fast-forward to git, yet \
         the board it holds may be any earlier one, its newer records gone; pair reads the ref \
         by first parents, as it writes it. Restore the ref, or repair the board (`pair write \
         --repair`), which is recorded"
    )
}

/// A write's check of the board at the tip against the ref's history (the previous commit's
/// board is read with the tip's, [`remote::read_board`]): the errors when the tip is a merge
/// commit, or its journal lost records the tip's first parent held. `validate` walks further
/// back ([`history`]).
fn tip_history(tip: &str, parent: Option<&[u8]>, merge: bool, bytes: &[u8]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if merge {
        errors.push(history_error(merge_message(tip)));
    }
    let Some(parent) = parent else {
        return errors;
    };
    let (Some(earlier), Some(later)) = (
        crate::board::journal::record_lines(parent),
        crate::board::journal::record_lines(bytes),
    ) else {
        return errors;
    };
    // A repair may have mended the journal: its record and Decisions entry say so.
    if crate::board::journal::is_repair(&later) {
        return errors;
    }
    errors.extend(
        crate::board::journal::lost(&earlier, &later)
            .map(|what| history_error(lost_message(tip, &format!("{tip}^1"), &what))),
    );
    errors
}

/// `validate`'s check of a git board's journal against the ref's own history, which a writer of
/// the board's file cannot rewrite unseen (a rewritten ref is reported by every read): walking
/// the first parents back from the tip `validate` read, no commit may be a merge and each
/// commit's board must keep the journal of the commit before it, until a repair (which may
/// mend the journal) or the limits ([`HISTORY_COMMITS`], [`HISTORY_BYTES`]), which a warning
/// names. (Errors, warnings.)
pub fn history(g: &GitBoard, s: &Session) -> Result<(Vec<FieldError>, Vec<FieldError>)> {
    let Some(tip) = s.remote().and_then(|o| o.tip) else {
        return Ok((vec![], vec![]));
    };
    let cache = Cache::open(g, s.remote_until())?;
    let commits = remote::first_parents(&cache, &tip, HISTORY_COMMITS + 1)?;
    let specs: Vec<String> = commits
        .iter()
        .map(|(c, _)| format!("{c}:{}", g.path))
        .collect();
    let blobs = remote::read_blobs(&cache, &specs, HISTORY_BYTES)?;
    let mut errors = vec![];
    let mut warnings = vec![];
    let mut later: Option<(usize, Vec<String>)> = None;
    let mut ended = false;
    for (i, blob) in blobs.iter().enumerate() {
        // A commit without the board (before it was made) ends the history; one whose board
        // does not read is not compared.
        let Some(blob) = blob else {
            ended = true;
            break;
        };
        let lines = crate::board::journal::record_lines(blob);
        // What a repair recorded after it accepted is not judged again.
        if let Some((_, newer)) = &later
            && crate::board::journal::is_repair(newer)
        {
            ended = true;
            break;
        }
        let (commit, parents) = &commits[i];
        if *parents > 1 {
            errors.push(history_error(merge_message(commit)));
        }
        let Some(lines) = lines else {
            later = None;
            continue;
        };
        if let Some((j, newer)) = &later
            && let Some(what) = crate::board::journal::lost(&lines, newer)
        {
            errors.push(history_error(lost_message(&commits[*j].0, commit, &what)));
        }
        later = Some((i, lines));
    }
    if !ended && (blobs.len() < commits.len() || commits.len() > HISTORY_COMMITS) {
        warnings.push(history_error(format!(
            "the journal was checked against the last {} commits of the ref's history only \
             (at most {HISTORY_COMMITS} commits, {} MiB of earlier versions)",
            blobs.len().min(HISTORY_COMMITS),
            HISTORY_BYTES / (1024 * 1024)
        )));
    }
    Ok((errors, warnings))
}

/// Make a published commit readable from the cache of the board's remote: fetched by its ref
/// when the cache does not hold it, and then refused unless the ref names the pinned commit.
/// The cache's directory, which holds it.
pub fn artifact(g: &GitBoard, refname: &str, commit: &str) -> Result<PathBuf> {
    let cache = Cache::open(g, crate::store::clock::Clock::current_until())?;
    let local = format!(
        "refs/pair-cache-artifacts/{}",
        refname.trim_start_matches("refs/")
    );
    // Whole in the cache only once a fetch moved the cache's ref to it (as for a board's tip,
    // see `sync_from`): the commit alone may be half of a fetch still being written.
    if cache.ref_tip(&local).as_deref() == Some(commit) {
        return Ok(cache.dir);
    }
    let spec = format!("+{refname}:{local}");
    let what = format!("fetch the published artifact {refname} from {}", g.url);
    let fetched = remote::fetch_spec(&cache, &g.url, &spec, &what, remote::Fetch::Whole);
    if let Err(e) = fetched {
        return Err(Error::ArtifactUnavailable {
            message: format!(
                "the published artifact {refname} (commit {commit}) cannot be fetched from {}: \
                 {e}. If the remote answers and the ref is gone, it was deleted after the \
                 submission: the doer resubmits, which publishes it again",
                g.url
            ),
        });
    }
    let at = cache
        .run(
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{local}^{{commit}}"),
            ],
            None,
            "read the fetched artifact",
        )
        .map(|o| String::from_utf8_lossy(&o).trim().to_string())
        .unwrap_or_default();
    if at != commit {
        return Err(Error::ArtifactMismatch {
            message: format!(
                "the published artifact {refname} on {} is commit {at}, but the board pinned \
                 commit {commit}: the ref was changed after the submission, so what it holds is \
                 not what was submitted. Nothing was recorded. Tell the user; the doer \
                 resubmits, which publishes the artifact again",
                g.url
            ),
        });
    }
    Ok(cache.dir)
}

/// What the board's remote says of a branch and a commit: whether the branch `refs/heads/NAME`
/// there contains the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnRemote {
    /// The remote has no such branch.
    NoBranch,
    /// The branch's tip, and whether the commit is it or one of its ancestors.
    Tip { tip: String, contains: bool },
}

/// Whether the branch `branch` of the board's remote contains `commit`, a commit the cache
/// holds whole (a published artifact fetched by [`artifact`]): one `ls-remote` of the branch,
/// then, unless its tip is the commit itself, one fetch of the branch into the cache (under
/// `refs/pair-cache-branches/`), which sends only what the cache lacks; both bounded by the
/// command's deadline for the remote.
pub fn branch_contains(g: &GitBoard, branch: &str, commit: &str) -> Result<OnRemote> {
    crate::repo::branch_name(branch)?;
    let cache = Cache::open(g, crate::store::clock::Clock::current_until())?;
    let full = format!("refs/heads/{branch}");
    let on_branch = GitBoard {
        refname: full.clone(),
        ..g.clone()
    };
    let Some(listed) = remote::ls_remote(&cache, &on_branch)? else {
        return Ok(OnRemote::NoBranch);
    };
    // A fast-forward merge leaves the branch at the commit itself: nothing to fetch.
    if listed == commit {
        return Ok(OnRemote::Tip {
            tip: listed,
            contains: true,
        });
    }
    let local = format!("refs/pair-cache-branches/{branch}");
    let spec = format!("+{full}:{local}");
    let what = format!("fetch the branch {branch} from {}", g.url);
    remote::fetch_spec(&cache, &g.url, &spec, &what, remote::Fetch::Whole)?;
    let tip = cache.ref_tip(&local).ok_or_else(|| Error::Git {
        message: format!(
            "the fetch of the branch {branch} from {} left no tip",
            g.url
        ),
    })?;
    let contains = crate::repo::is_ancestor(&cache.dir, commit, &tip)?;
    Ok(OnRemote::Tip { tip, contains })
}

/// Create the board with exactly these bytes (no journal record: a copy, byte for byte),
/// making the ref; refused when the ref exists.
pub fn create_copy(
    g: &GitBoard,
    shown: &Path,
    bytes: &[u8],
    opts: &WriteOptions,
    s: &Session,
) -> Result<()> {
    let (cache, tip) = sync(
        g,
        shown,
        s,
        s.remote_until().sooner(Instant::now() + opts.timeout),
    )?;
    if tip.is_some() {
        return Err(Error::Exists {
            path: shown.to_path_buf(),
        });
    }
    let new = commit(&cache, g, None, bytes, opts)?;
    match push(&cache, g, &new, None, shown, &[])? {
        Pushed::Accepted => {
            if cache.cached_tip().as_deref() != Some(new.as_str()) {
                let _ = cache.set_tip(&new);
            }
            Ok(())
        }
        Pushed::Moved | Pushed::Stale => Err(Error::Exists {
            path: shown.to_path_buf(),
        }),
    }
}
