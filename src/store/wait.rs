//! Waiting for a blackboard to change, for `poll --wait`.
//!
//! The watch is on the blackboard's *directory*, not the file: every write replaces the file by
//! renaming a temporary file over it, so a watch on the old inode would never fire again. Events
//! are filtered to the blackboard's own name, so lock and owner files and unrelated files in the
//! same directory do not wake the waiter. Where no watch can be set up (no inotify, a directory
//! that does not exist yet), the waiter falls back to sleeping for the poll interval.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};

/// What wakes a waiter: the watcher's report, or an [`Interrupt`].
enum Wake {
    Fs(notify::Result<Event>),
    Interrupt,
}

/// Wakes up when the blackboard may have changed.
pub struct Waiter {
    /// The watcher (kept alive while it reports), or none: the waiter polls.
    watcher: Option<RecommendedWatcher>,
    rx: Receiver<Wake>,
    /// Kept so that the channel never closes: a polling waiter's wait on it is a sleep that an
    /// interrupt can end.
    tx: Sender<Wake>,
    name: OsString,
    /// Other boards watched too ([`Waiter::also`]): their names, and the directories watched.
    also: Vec<OsString>,
    dirs: Vec<PathBuf>,
    /// Watching a directory tree ([`Waiter::tree`]): any `.md` file under it counts.
    tree: bool,
}

impl Waiter {
    /// Start watching the directory of `board` (of its target, for a symlinked blackboard).
    /// Create the waiter *before* reading the blackboard, so no change can slip in between.
    pub fn new(board: &Path) -> Waiter {
        let target = crate::store::resolve(board).unwrap_or_else(|_| board.to_path_buf());
        let name = target.file_name().map(OsString::from).unwrap_or_default();
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let (tx, rx) = channel();
        let events = tx.clone();
        let watcher = (|| {
            let mut watcher =
                notify::recommended_watcher(move |e| drop(events.send(Wake::Fs(e)))).ok()?;
            watcher.watch(&dir, RecursiveMode::NonRecursive).ok()?;
            Some(watcher)
        })();
        Waiter {
            watcher,
            rx,
            tx,
            name,
            also: Vec::new(),
            dirs: vec![dir],
            tree: false,
        }
    }

    /// Wake on a change of `board` too (a board the watched one waits for): its directory is
    /// watched, its name counts. Nothing changes for a waiter that polls, or a git board.
    /// Returns whether the watch is new: the caller reads again before it sleeps, as a change
    /// before the watch was set would not wake it.
    pub fn also(&mut self, board: &Path) -> bool {
        if crate::store::location::is_git(board) {
            return false;
        }
        let Some(watcher) = self.watcher.as_mut() else {
            return false;
        };
        let target = crate::store::resolve(board).unwrap_or_else(|_| board.to_path_buf());
        let Some(name) = target.file_name().map(OsString::from) else {
            return false;
        };
        let mut new = false;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !self.dirs.contains(&dir) && watcher.watch(&dir, RecursiveMode::NonRecursive).is_ok() {
            self.dirs.push(dir);
            new = true;
        }
        if !self.also.contains(&name) && name != self.name {
            self.also.push(name);
            new = true;
        }
        new
    }

    /// Watch every blackboard under `dir`, recursively (a project): a change to any `.md` file
    /// under it wakes the waiter.
    pub fn tree(dir: &Path) -> Waiter {
        let (tx, rx) = channel();
        let events = tx.clone();
        let watcher = watch_tree(dir, move |e| drop(events.send(Wake::Fs(e))));
        Waiter {
            watcher,
            rx,
            tx,
            name: OsString::new(),
            also: Vec::new(),
            dirs: Vec::new(),
            tree: true,
        }
    }

    /// A waiter that only sleeps for the interval (a git board, whose changes are on a remote).
    pub fn polling() -> Waiter {
        let (tx, rx) = channel();
        Waiter {
            watcher: None,
            rx,
            tx,
            name: OsString::new(),
            also: Vec::new(),
            dirs: Vec::new(),
            tree: false,
        }
    }

    /// Whether changes are seen as they happen (otherwise the waiter polls).
    pub fn is_notified(&self) -> bool {
        self.watcher.is_some()
    }

    /// Let `interrupt` end this waiter's waits: at once if it has fired already.
    pub fn interrupted_by(&self, interrupt: &Interrupt) {
        interrupt.attach(self.tx.clone());
    }

    fn relevant(&self, event: &notify::Result<Event>) -> bool {
        use notify::EventKind;
        use notify::event::{AccessKind, AccessMode};
        match event {
            Ok(e) => {
                // Reads (our own included) raise open/close events; reacting to them would
                // re-read in a loop. Only events that can change the content count.
                let may_change = match e.kind {
                    EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
                    EventKind::Access(_) => false,
                    _ => true,
                };
                e.need_rescan()
                    || (may_change
                        && e.paths.iter().any(|p| match self.tree {
                            true => p.extension().is_some_and(|x| x == "md"),
                            false => p.file_name().is_some_and(|n| {
                                n == self.name || self.also.iter().any(|a| a == n)
                            }),
                        }))
            }
            // An error from the watcher: re-check rather than miss a change.
            Err(_) => true,
        }
    }

    /// Block until the blackboard may have changed, `timeout` passed or an interrupt fired.
    /// Returns whether a relevant change was seen (always true in polling mode, which cannot
    /// tell, and after an interrupt).
    pub fn wait(&mut self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let now = std::time::Instant::now();
            if now >= deadline {
                return self.watcher.is_none();
            }
            match self.rx.recv_timeout(deadline - now) {
                Ok(Wake::Interrupt) => return true,
                Ok(Wake::Fs(event)) => {
                    if self.relevant(&event) {
                        // Coalesce a burst (temp create, rename) into one re-check.
                        while let Ok(Wake::Fs(_)) = self.rx.try_recv() {}
                        return true;
                    }
                }
                Err(RecvTimeoutError::Timeout) => return self.watcher.is_none(),
                // Never: the waiter holds a sender.
                Err(RecvTimeoutError::Disconnected) => {
                    self.watcher = None;
                    std::thread::sleep(deadline.saturating_duration_since(now));
                    return true;
                }
            }
        }
    }
}

/// A way for another thread to end a wait early (a client cancelled the request that waits),
/// and to hear each time the wait goes to sleep. Cloned, it is the same interrupt.
#[derive(Clone, Default)]
pub struct Interrupt(Arc<Inner>);

/// What a wait calls each time it goes to sleep, with what it waits for.
type OnWait = Box<dyn Fn(&str) + Send + Sync>;

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    on_wait: Option<OnWait>,
}

#[derive(Default)]
struct State {
    fired: bool,
    wakers: Vec<Sender<Wake>>,
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupt")
            .field("fired", &self.fired())
            .finish()
    }
}

impl Interrupt {
    /// An interrupt whose waits call `on_wait` with what they wait for each time they sleep.
    pub fn new(on_wait: impl Fn(&str) + Send + Sync + 'static) -> Interrupt {
        Interrupt(Arc::new(Inner {
            state: Mutex::default(),
            on_wait: Some(Box::new(on_wait)),
        }))
    }

    /// End the waits this interrupt was given to, now and from now on.
    pub fn fire(&self) {
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        state.fired = true;
        for waker in state.wakers.drain(..) {
            let _ = waker.send(Wake::Interrupt);
        }
    }

    /// Whether [`Interrupt::fire`] was called.
    pub fn fired(&self) -> bool {
        self.0.state.lock().unwrap_or_else(|e| e.into_inner()).fired
    }

    /// Say that a wait goes to sleep, waiting for `what`.
    pub fn waiting(&self, what: &str) {
        if let Some(f) = &self.0.on_wait {
            f(what);
        }
    }

    fn attach(&self, waker: Sender<Wake>) {
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.fired {
            let _ = waker.send(Wake::Interrupt);
        } else {
            state.wakers.push(waker);
        }
    }
}

/// A watch of every directory under `dir`, recursively, that never follows a link: the link
/// policy of a project's walk ([`crate::project::walk`] lists no board through a link), so a
/// link to `/` or to a large tree costs no watch and wakes nobody. `None` where no watch can be
/// set up.
pub fn watch_tree<F>(dir: &Path, handler: F) -> Option<RecommendedWatcher>
where
    F: Fn(notify::Result<Event>) + Send + 'static,
{
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut watcher = RecommendedWatcher::new(handler, config).ok()?;
    watcher.watch(dir, RecursiveMode::Recursive).ok()?;
    Some(watcher)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn an_interrupt_ends_a_wait_at_once_and_every_later_one() {
        let dir = tempfile::tempdir().unwrap();
        let board = dir.path().join("t.md");
        for mut waiter in [Waiter::new(&board), Waiter::polling()] {
            let heard = std::sync::Arc::new(Mutex::new(Vec::new()));
            let said = heard.clone();
            let interrupt = Interrupt::new(move |what| said.lock().unwrap().push(what.to_string()));
            waiter.interrupted_by(&interrupt);
            interrupt.waiting("the doer");
            let firing = interrupt.clone();
            let fired = std::thread::spawn(move || firing.fire());
            let started = Instant::now();
            assert!(waiter.wait(Duration::from_secs(60)));
            assert!(started.elapsed() < Duration::from_secs(30));
            fired.join().unwrap();
            assert!(interrupt.fired());
            assert_eq!(*heard.lock().unwrap(), ["the doer"]);
            // A waiter given a fired interrupt does not sleep at all.
            let mut later = Waiter::polling();
            later.interrupted_by(&interrupt);
            let started = Instant::now();
            assert!(later.wait(Duration::from_secs(60)));
            assert!(started.elapsed() < Duration::from_secs(30));
        }
    }

    #[test]
    fn without_an_interrupt_a_wait_lasts_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut waiter = Waiter::new(&dir.path().join("t.md"));
        let started = Instant::now();
        // Nothing changed: false when notified (a polling waiter cannot tell, and says true).
        let notified = waiter.is_notified();
        assert_eq!(waiter.wait(Duration::from_millis(50)), !notified);
        assert!(started.elapsed() >= Duration::from_millis(50));
        let mut polling = Waiter::polling();
        assert!(polling.wait(Duration::from_millis(50)));
    }
}
