//! What some tests need from the machine (root, `git daemon`, ACLs, …), and [`require`], which
//! every such test asks before it starts.
//!
//! Under CI (the environment variable `CI` set, as `.ci/run` runs: root, with everything
//! installed) a missing prerequisite fails the test, naming what is missing and how to get it.
//! Elsewhere the test is skipped, and the skip is recorded: one line `TEST: WHAT` appended to
//! `pair-skipped-tests.txt` in the target directory, which `.ci/run` lists after the tests.

use std::io::Write;
use std::path::PathBuf;

/// Something a test needs from the machine, and how to get it.
pub struct Need {
    /// What is needed, as a message names it.
    pub what: &'static str,
    /// How to get it on a Debian machine.
    pub how: &'static str,
}

pub const ROOT: Need = Need {
    what: "root",
    how: "run the tests as root (CI does)",
};

pub const STRACE: Need = Need {
    what: "strace",
    how: "apt-get install strace",
};

pub const GIT: Need = Need {
    what: "git on PATH",
    how: "apt-get install git",
};

pub const GIT_DAEMON: Need = Need {
    what: "`git daemon` (git-daemon in `git --exec-path`)",
    how: "apt-get install git (it ships /usr/lib/git-core/git-daemon)",
};

pub const SSH: Need = Need {
    what: "the OpenSSH server and client (/usr/sbin/sshd, ssh, ssh-keygen, ssh-agent, ssh-add) \
           and /usr/bin/git-shell",
    how: "apt-get install openssh-server openssh-client git",
};

pub const LIGHTTPD: Need = Need {
    what: "lighttpd with mod_cgi and mod_authn_file, and `git http-backend`",
    how: "apt-get install lighttpd git",
};

pub const SCRIPT: Need = Need {
    what: "`script`, to run a command in a terminal",
    how: "apt-get install bsdutils",
};

pub const USERS_AND_GROUPS: Need = Need {
    what: "root with /usr/sbin/useradd, /usr/sbin/groupadd and /usr/bin/setpriv",
    how: "run as root; apt-get install passwd util-linux",
};

pub const SETPRIV: Need = Need {
    what: "root with /usr/bin/setpriv, to run pair as another user",
    how: "run as root; apt-get install util-linux",
};

pub const ACLS: Need = Need {
    what: "POSIX ACLs and user extended attributes on the test directory's filesystem",
    how: "use a filesystem with ACLs and user xattrs (ext4, xfs, btrfs) for /var/tmp and TMPDIR",
};

pub const BINDFS: Need = Need {
    what: "root with bindfs and /dev/fuse, to mount a filesystem without extended attributes",
    how: "run as root; apt-get install bindfs",
};

pub const MKNOD: Need = Need {
    what: "permission to make a device node (CAP_MKNOD)",
    how: "run as root outside a user namespace that forbids mknod",
};

/// Whether the running test may go on: `true` when `available`. Otherwise, under CI, the test
/// fails naming what is missing and how to get it; elsewhere this prints and records the skip
/// and returns `false`, and the test returns at once.
#[track_caller]
pub fn require(need: &Need, available: bool) -> bool {
    if available {
        return true;
    }
    let test = current_test();
    if in_ci() {
        panic!(
            "{test}: needs {}, which is missing on this machine ({}); under CI every test runs, \
             none is skipped",
            need.what, need.how
        );
    }
    eprintln!("{test}: skipped: needs {} ({})", need.what, need.how);
    record_skip(&format!("{test}: {}\n", need.what));
    false
}

/// Whether the tests run under CI: `CI` set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// The running test's name (the test harness names each test's thread after it), and where the
/// requirement was asked.
#[track_caller]
fn current_test() -> String {
    let at = std::panic::Location::caller();
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_string(),
        _ => format!("{}:{}", at.file(), at.line()),
    }
}

/// The file the skips are recorded in: `pair-skipped-tests.txt` in `CARGO_TARGET_DIR` (relative
/// to the package, as cargo reads it) or in the package's `target`.
pub fn skip_file() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => manifest.join(dir),
        _ => manifest.join("target"),
    };
    target.join("pair-skipped-tests.txt")
}

/// Appends one line to the skip file in one write, so lines of tests running at once do not
/// mix.
fn record_skip(line: &str) {
    let path = skip_file();
    let written = std::fs::create_dir_all(path.parent().unwrap()).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?
            .write_all(line.as_bytes())
    });
    if let Err(e) = written {
        eprintln!("could not record the skip in {}: {e}", path.display());
    }
}

/// Whether `program` is an executable file in one of the directories of `PATH`.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}
