//! A command's time with its remotes: the one deadline by which the whole command is done with
//! them, and how long one exchange with a remote (a read, or a write with its retries) may take
//! within it. The edge sets it once for the command ([`Clock::enter`]); every [`Session`] made on
//! that thread while the command runs starts from it (the command's own, and those made to read
//! other boards beside it), and every git call they make is bounded by it
//! ([`crate::store::gitref::remote::Until`]).
//!
//! [`Session`]: crate::store::Session

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::store::gitref::remote::Until;

/// The default limit of one exchange with a remote, and of a command's whole time with its
/// remotes when it gives none.
pub const DEFAULT_LIMIT: Duration = crate::store::DEFAULT_TIMEOUT;

/// The least time left before its deadline for which a wait asks a remote again. With less,
/// it sleeps out the rest and answers with what it read last: an ask cut short at the deadline
/// would report the remote as failing when it only had no time to answer.
pub const ASK_MARGIN: Duration = Duration::from_secs(1);

/// The last moment a wait ending at `deadline` may ask a remote again ([`ASK_MARGIN`] before).
pub fn ask_by(deadline: Instant) -> Instant {
    deadline.checked_sub(ASK_MARGIN).unwrap_or(deadline)
}

/// A command's deadline and the limit of one exchange.
#[derive(Debug, Clone)]
pub struct Clock {
    /// When the command must be done with its remotes; `None` for a command that runs until
    /// it is stopped (`watch`, `top`, a server), whose exchanges are bounded one by one.
    deadline: Option<Instant>,
    /// How long one exchange with a remote may take at most.
    limit: Duration,
    /// Whether a call to a remote was stopped at its deadline, shared by every deadline made
    /// from this clock.
    spent: Arc<AtomicBool>,
}

thread_local! {
    /// The clock of the command running on this thread, while the edge's [`Entered`] lasts.
    static CURRENT: RefCell<Option<Clock>> = const { RefCell::new(None) };
}

impl Default for Clock {
    /// The clock of the command running on this thread, or one with no deadline and the
    /// default limit.
    fn default() -> Clock {
        CURRENT
            .with(|c| c.borrow().clone())
            .unwrap_or_else(|| Clock::new(None, DEFAULT_LIMIT))
    }
}

/// The command's clock stays this thread's until this is dropped.
#[must_use]
pub struct Entered(Option<Clock>);

impl Drop for Entered {
    fn drop(&mut self) {
        let before = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = before);
    }
}

impl Clock {
    /// A clock ending at `deadline` (none: a command that runs until stopped), each exchange
    /// with a remote given `limit` at most.
    pub fn new(deadline: Option<Instant>, limit: Duration) -> Clock {
        Clock {
            deadline,
            limit,
            spent: Arc::default(),
        }
    }

    /// Make this the clock of the command running on this thread, until the result is dropped.
    pub fn enter(&self) -> Entered {
        Entered(CURRENT.with(|c| c.borrow_mut().replace(self.clone())))
    }

    /// When the command must be done with its remotes.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The deadline of an exchange with a remote starting now: after the limit, and never
    /// later than the command's deadline.
    pub fn until(&self) -> Until {
        let mut at = Instant::now() + self.limit;
        if let Some(end) = self.deadline {
            at = at.min(end);
        }
        Until::with(at, self.spent.clone())
    }

    /// [`Clock::until`] of the command running on this thread (for code that is given no
    /// session: what it asks a remote is bounded all the same).
    pub fn current_until() -> Until {
        Clock::default().until()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_made_while_a_command_runs_share_its_deadline() {
        let end = Instant::now() + Duration::from_secs(3);
        let clock = Clock::new(Some(end), Duration::from_secs(10));
        {
            let _entered = clock.enter();
            assert_eq!(Clock::default().deadline(), Some(end));
            assert!(Clock::current_until().at() <= end);
        }
        assert_eq!(Clock::default().deadline(), None);
        let free = Clock::current_until().at();
        assert!(
            free > end,
            "no command: an exchange is given the default limit"
        );
    }
}
