//! Test-only fault injection (cargo feature `fault-injection`; never in a normal build).
//!
//! `PAIR_FAULT=POINT[:ACTION][,POINT[:ACTION]...]` makes the write fail, crash or pause at a
//! step of [`super::update`], so the tests can check the documented outcome of a failure at each
//! step. The points, in the order a write to a file passes them ([`POINTS`]):
//!
//! | point | where |
//! |---|---|
//! | `owner-write` | the lock is held; half of the owner record is in its temporary file |
//! | `owner-written` | the owner record is written in its temporary file, not yet renamed |
//! | `locked` | the owner record is in place, the blackboard not yet read under the lock |
//! | `temp-write` | half of the new content is in the temporary file |
//! | `temp-written` | the whole new content is written (and flushed), its mode not yet set |
//! | `temp-fsync` | the temporary file is written, not yet fsynced |
//! | `before-rename` | the temporary file is written and fsynced, not yet renamed |
//! | `after-rename` | the rename happened, the directory is not yet fsynced |
//! | `dir-fsync` | the directory fsync itself |
//! | `dir-synced` | the directory is fsynced; the lock is still held |
//!
//! Actions: `eio` (the default) or `enospc` fail the step with that OS error; `kill` sends the
//! process SIGKILL (a crash); `abort` aborts it (SIGABRT, as a panic that aborts would);
//! `sleep=MS` pauses; `wait=PATH` pauses until PATH exists (at most a minute), so a test decides
//! exactly when the write goes on. A failure at an owner point is not the write's: the record
//! only names the holder, so the write goes on without it. `PAIR_TRACE_LOCK_WAIT=1` prints how long the
//! lock took to acquire (`pair: trace: lock-wait-us N`) on stderr.

use std::io;
use std::time::Duration;

/// Every point, in the order a write to a file passes them.
pub const POINTS: &[&str] = &[
    "owner-write",
    "owner-written",
    "locked",
    "temp-write",
    "temp-written",
    "temp-fsync",
    "before-rename",
    "after-rename",
    "dir-fsync",
    "dir-synced",
];

/// Apply the fault configured for `point`, if any.
pub fn hit(point: &str) -> io::Result<()> {
    let Ok(spec) = std::env::var("PAIR_FAULT") else {
        return Ok(());
    };
    for item in spec.split(',') {
        let (p, action) = item.split_once(':').unwrap_or((item, "eio"));
        if p.trim() != point {
            continue;
        }
        match action.trim() {
            "kill" => {
                let _ = crate::sys::kill(std::process::id() as libc::pid_t, libc::SIGKILL);
                loop {
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
            "abort" => std::process::abort(),
            "enospc" => return Err(io::Error::from_raw_os_error(libc::ENOSPC)),
            a => {
                if let Some(ms) = a.strip_prefix("sleep=").and_then(|m| m.parse().ok()) {
                    std::thread::sleep(Duration::from_millis(ms));
                } else if let Some(path) = a.strip_prefix("wait=") {
                    let until = std::time::Instant::now() + Duration::from_secs(60);
                    while !std::path::Path::new(path).exists() && std::time::Instant::now() < until
                    {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                } else {
                    return Err(io::Error::from_raw_os_error(libc::EIO));
                }
            }
        }
    }
    Ok(())
}

pub fn trace_lock_wait(waited: Duration) {
    if std::env::var_os("PAIR_TRACE_LOCK_WAIT").is_some() {
        eprintln!("pair: trace: lock-wait-us {}", waited.as_micros());
    }
}
