//! Waiting for a blackboard to change, for `poll --wait`.
//!
//! The watch is on the blackboard's *directory*, not the file: every write replaces the file by
//! renaming a temporary file over it, so a watch on the old inode would never fire again. Events
//! are filtered to the blackboard's own name, so lock and owner files and unrelated files in the
//! same directory do not wake the waiter. Where no watch can be set up (no inotify, a directory
//! that does not exist yet), the waiter falls back to sleeping for the poll interval.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};

/// Wakes up when the blackboard may have changed.
pub struct Waiter {
    watch: Option<(RecommendedWatcher, Receiver<notify::Result<Event>>)>,
    name: OsString,
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
        let watch = (|| {
            let (tx, rx) = channel();
            let mut watcher = notify::recommended_watcher(tx).ok()?;
            watcher.watch(&dir, RecursiveMode::NonRecursive).ok()?;
            Some((watcher, rx))
        })();
        Waiter { watch, name }
    }

    /// A waiter that only sleeps for the interval (a git board, whose changes are on a remote).
    pub fn polling() -> Waiter {
        Waiter {
            watch: None,
            name: OsString::new(),
        }
    }

    /// Whether changes are seen as they happen (otherwise the waiter polls).
    pub fn is_notified(&self) -> bool {
        self.watch.is_some()
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
                        && e.paths
                            .iter()
                            .any(|p| p.file_name().is_some_and(|n| n == self.name)))
            }
            // An error from the watcher: re-check rather than miss a change.
            Err(_) => true,
        }
    }

    /// Block until the blackboard may have changed or `timeout` passed. Returns whether a
    /// relevant change was seen (always true in polling mode, which cannot tell).
    pub fn wait(&mut self, timeout: Duration) -> bool {
        let Some((_, rx)) = &self.watch else {
            std::thread::sleep(timeout);
            return true;
        };
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            match rx.recv_timeout(deadline - now) {
                Ok(event) => {
                    if self.relevant(&event) {
                        // Coalesce a burst (temp create, rename) into one re-check.
                        while rx.try_recv().is_ok() {}
                        return true;
                    }
                }
                Err(RecvTimeoutError::Timeout) => return false,
                Err(RecvTimeoutError::Disconnected) => {
                    self.watch = None;
                    std::thread::sleep(deadline.saturating_duration_since(now));
                    return true;
                }
            }
        }
    }
}
