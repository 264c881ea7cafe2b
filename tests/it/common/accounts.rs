//! Unix users and a group made for one test (`groupadd`/`useradd`, unique names, removed
//! afterwards), and running `pair` as one of them through `setpriv`. Without root or the tools
//! a test that needs them fails under CI and is skipped and recorded elsewhere
//! ([`crate::common::prereq`]).

use crate::common::files::QUICK;
use crate::common::prereq::{USERS_AND_GROUPS, require};
use crate::common::*;
use std::path::Path;
use std::process::Command as StdCommand;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Users and a group made for one test, removed when dropped.
pub struct Users {
    pub group: String,
    pub users: Vec<String>,
}

static NEXT_USER: AtomicUsize = AtomicUsize::new(0);

/// `useradd` and friends lock /etc/passwd and give up when another holds it: the tests of this
/// file run them one at a time, and retry a busy one.
static ACCOUNTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs an account tool (`groupadd`, `useradd`, `userdel`, `groupdel`); whether it succeeded.
pub fn account_tool(tool: &str, args: &[&str]) -> bool {
    let _one = ACCOUNTS.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..20 {
        let status = StdCommand::new(tool).args(args).status().unwrap();
        // exit 1 or 10: the password or group file could not be locked (or updated)
        if !matches!(status.code(), Some(1 | 10)) {
            return status.success();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

pub fn tools_present() -> bool {
    [
        "/usr/sbin/useradd",
        "/usr/sbin/groupadd",
        "/usr/bin/setpriv",
    ]
    .iter()
    .all(|t| Path::new(t).exists())
}

impl Users {
    /// A group `team` and users who are each in their own group and, unless their name starts
    /// with `out`, in `team`. `None` when the test may not run for want of root or the tools
    /// (see [`require`]).
    pub fn new(names: &[&str]) -> Option<Users> {
        if !require(&USERS_AND_GROUPS, is_root() && tools_present()) {
            return None;
        }
        let n = NEXT_USER.fetch_add(1, Ordering::SeqCst);
        let tag = format!("ph{}x{n}", std::process::id());
        let group = format!("{tag}team");
        assert!(account_tool("groupadd", &[&group]), "groupadd {group}");
        let mut made = Users {
            group,
            users: Vec::new(),
        };
        for name in names {
            let user = format!("{tag}{name}");
            let mut args = vec!["-M", "-U", "-s", "/usr/sbin/nologin"];
            if !name.starts_with("out") {
                args.extend(["-G", made.group.as_str()]);
            }
            args.push(&user);
            let ok = account_tool("useradd", &args);
            assert!(ok, "useradd {user}");
            made.users.push(user);
        }
        Some(made)
    }

    pub fn name(&self, short: &str) -> &str {
        self.users
            .iter()
            .find(|u| u.ends_with(short))
            .expect("a user of this test")
    }

    pub fn uid(&self, short: &str) -> u32 {
        id_of("-u", self.name(short))
    }

    /// The gid of a user's own group.
    pub fn own_gid(&self, short: &str) -> u32 {
        id_of("-g", self.name(short))
    }

    pub fn team_gid(&self) -> u32 {
        let out = StdCommand::new("getent")
            .args(["group", &self.group])
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .split(':')
            .nth(2)
            .unwrap()
            .parse()
            .unwrap()
    }

    /// Runs `pair ARGS` as the user, with their groups.
    pub fn pair(&self, short: &str, args: &[&str]) -> Out {
        let user = self.name(short);
        let mut c = assert_cmd::Command::new("/usr/bin/setpriv");
        c.arg(format!("--reuid={user}"))
            .arg(format!("--regid={user}"))
            .arg("--init-groups")
            .arg(pair_bin())
            .args(args)
            .env_remove("PAIR_AGENT")
            .timeout(QUICK);
        run(&mut c, format!("(as {short}) pair {}", args.join(" ")))
    }
}

pub fn id_of(flag: &str, user: &str) -> u32 {
    let out = StdCommand::new("id").args([flag, user]).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

impl Drop for Users {
    fn drop(&mut self) {
        for u in &self.users {
            account_tool("userdel", &[u]);
        }
        account_tool("groupdel", &[&self.group]);
    }
}
