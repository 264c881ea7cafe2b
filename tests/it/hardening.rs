//! Hardening of the store and the inputs: what other programs and other users do to a
//! blackboard and its sidecar files, and inputs that could hang `pair` or exhaust its memory.
//! Every check runs the real binary on real files. Checks about users and groups create them
//! (`groupadd`/`useradd`, unique names, removed afterwards) and run `pair` as them through
//! `setpriv`; without root or those tools they are skipped with a printed reason.

use crate::common::*;
use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const QUICK: Duration = Duration::from_secs(20);

/// A temporary directory on the real disk (`/var/tmp`), where inode numbers are reused and user
/// extended attributes work, readable and searchable by every user.
fn disk_dir() -> tempfile::TempDir {
    let base = Path::new("/var/tmp");
    let dir = if base.is_dir() {
        tempfile::tempdir_in(base).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn note_args(board: &str, text: &str) -> Vec<String> {
    [
        "note",
        board,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        text,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn temp_files(dir: &Path) -> Vec<String> {
    dir_entries(dir)
        .into_iter()
        .filter(|e| e.contains(".pair-tmp-"))
        .collect()
}

/// `pair ARGS` with its address space capped (so that reading a huge input fails fast instead
/// of taking the machine's memory) and stdin from a file (or empty). Killed after `timeout`.
fn pair_capped(args: &[&str], stdin: Option<&Path>, timeout: Duration) -> Out {
    let mut cmd = StdCommand::new(pair_bin());
    cmd.args(args)
        .env_remove("PAIR_AGENT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(fs::File::open(p).unwrap()),
        None => cmd.stdin(Stdio::null()),
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    let desc = format!("(memory capped) pair {}", args.join(" "));
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut pipes = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let _ = std::io::Read::read_to_end(&mut pipes.0, &mut o);
        let _ = std::io::Read::read_to_end(&mut pipes.1, &mut e);
        (o, e)
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (stdout, stderr) = reader.join().unwrap();
    use std::os::unix::process::ExitStatusExt;
    let out = Out {
        desc,
        code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        stdout_bytes: stdout,
        elapsed: start.elapsed(),
    };
    assert!(
        out.code != Some(101) && !out.stderr.contains("panicked at"),
        "`pair` panicked\n{}",
        out.report()
    );
    out
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a plain syscall on a C string we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

// ---------------------------------------------------------------------------------------------
// users and groups

/// Users and a group made for one test, removed when dropped.
struct Users {
    group: String,
    users: Vec<String>,
}

static NEXT_USER: AtomicUsize = AtomicUsize::new(0);

/// `useradd` and friends lock /etc/passwd and give up when another holds it: the tests of this
/// file run them one at a time, and retry a busy one.
static ACCOUNTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs an account tool (`groupadd`, `useradd`, `userdel`, `groupdel`); whether it succeeded.
fn account_tool(tool: &str, args: &[&str]) -> bool {
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

fn tools_present() -> bool {
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
    /// with `out`, in `team`. `None` (with the reason printed) when not root or the tools are
    /// missing.
    fn new(test: &str, names: &[&str]) -> Option<Users> {
        if !is_root() {
            eprintln!("{test}: skipped: needs root to create users and groups");
            return None;
        }
        if !tools_present() {
            eprintln!("{test}: skipped: needs useradd, groupadd and setpriv");
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

    fn name(&self, short: &str) -> &str {
        self.users
            .iter()
            .find(|u| u.ends_with(short))
            .expect("a user of this test")
    }

    fn uid(&self, short: &str) -> u32 {
        id_of("-u", self.name(short))
    }

    /// The gid of a user's own group.
    fn own_gid(&self, short: &str) -> u32 {
        id_of("-g", self.name(short))
    }

    fn team_gid(&self) -> u32 {
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
    fn pair(&self, short: &str, args: &[&str]) -> Out {
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

fn id_of(flag: &str, user: &str) -> u32 {
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

fn chown(path: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn owner_group_mode(path: &Path) -> (u32, u32, u32) {
    let m = fs::metadata(path).unwrap();
    (m.uid(), m.gid(), m.mode() & 0o7777)
}

// ---------------------------------------------------------------------------------------------
// 1. a hand edit during a write

/// Starts `pair note` paused (by fault injection) after its temporary file is written and
/// fsynced, and returns once that temporary file exists.
fn paused_note(board: &Path, text: &str, pause_ms: u64) -> std::process::Child {
    let child = StdCommand::new(pair_bin())
        .args(note_args(board.to_str().unwrap(), text))
        .env_remove("PAIR_AGENT")
        .env("PAIR_FAULT", format!("before-rename:sleep={pause_ms}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let dir = board.parent().unwrap();
    let start = Instant::now();
    while temp_files(dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the paused write never wrote its temporary file"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child
}

fn finish(child: std::process::Child) -> (Option<i32>, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_editor_saving_twice_during_a_write_is_not_overwritten() {
    // `sed -i` saves by writing a new file and renaming it over the board. Twice in a row, on
    // ext4, the second file used to get the inode number the board had when it was read.
    for round in 0..3 {
        let dir = disk_dir();
        let board = dir.path().join("board.md");
        fs::write(&board, MINIMAL).unwrap();
        let child = paused_note(&board, "from pair", 1500);
        for edit in ["first-edit", "second-edit"] {
            let ok = StdCommand::new("sed")
                .args(["-i", &format!("$a {edit}")])
                .arg(&board)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let (code, stderr) = finish(child);
        assert_eq!(
            code,
            Some(3),
            "round {round}: must refuse as stale\n{stderr}"
        );
        assert!(stderr.contains("stale"), "{stderr}");
        let text = fs::read_to_string(&board).unwrap();
        assert!(
            text.contains("first-edit\nsecond-edit\n") && !text.contains("from pair"),
            "round {round}: both hand edits kept, nothing of the refused write\n{text}"
        );
        assert!(temp_files(dir.path()).is_empty());
    }
}

#[test]
fn an_edit_in_place_during_a_write_is_not_overwritten() {
    let dir = disk_dir();
    let board = dir.path().join("board.md");
    fs::write(&board, MINIMAL).unwrap();
    // The pause must outlast this process's append even on a loaded machine: if the rename came
    // first, the append would land in the new file and the test would prove nothing.
    let child = paused_note(&board, "from pair", 3000);
    // `>>` keeps the inode: only the size and the times tell
    fs::OpenOptions::new()
        .append(true)
        .open(&board)
        .unwrap()
        .write_all(b"appended by hand\n")
        .unwrap();
    let (code, stderr) = finish(child);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(
        fs::read_to_string(&board).unwrap(),
        format!("{MINIMAL}appended by hand\n")
    );
}

// ---------------------------------------------------------------------------------------------
// 2. hard links

#[test]
fn a_hard_linked_board_is_refused_by_every_write() {
    let b = Board::minimal();
    let other = b.dir.path().join("other.md");
    fs::hard_link(&b.path, &other).unwrap();
    pair(note_args(b.p(), "hello"))
        .code(1)
        .mentions(&["2 hard links", "nothing was written"]);
    let content = b.aux_file("new.md", format!("{MINIMAL}\nmore\n"));
    pair([
        "write",
        other.to_str().unwrap(),
        "--content-file",
        content.to_str().unwrap(),
        "--expect-sha256",
        &sha256_hex(MINIMAL),
    ])
    .code(1)
    .mentions(&["hard links"]);
    b.assert_untouched(MINIMAL.as_bytes());
    assert_eq!(fs::read(&other).unwrap(), MINIMAL.as_bytes());
    assert_eq!(
        fs::metadata(&other).unwrap().ino(),
        fs::metadata(&b.path).unwrap().ino(),
        "still one file"
    );
    // reads are unaffected
    pair(["validate", b.p()]).code(0);
    pair(["status", b.p()]).code(0);
    // with one name again, writes go through
    fs::remove_file(&other).unwrap();
    pair(note_args(b.p(), "hello")).code(0);
}

// ---------------------------------------------------------------------------------------------
// 3. and 4. other users, groups

#[test]
fn a_user_who_may_not_write_the_board_cannot_replace_it() {
    let Some(u) = Users::new(
        "a_user_who_may_not_write_the_board_cannot_replace_it",
        &["alice", "bob", "outcarol"],
    ) else {
        return;
    };
    let dir = disk_dir();
    let team = u.team_gid();
    // a shared team directory; alice's board is readable by the team, writable by her only
    chown(dir.path(), 0, team);
    chmod(dir.path(), 0o2775);
    let board = dir.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chown(&board, u.uid("alice"), team);
    chmod(&board, 0o644);
    let p = board.to_str().unwrap();
    for args in [
        vec!["stop", p, "--agent", "doer", "--reason", "bob says so"],
        note_args(p, "bob was here")
            .iter()
            .map(|s| s.as_str())
            .collect(),
    ] {
        u.pair("bob", &args)
            .code(1)
            .mentions(&["read-only", "chmod", "permission denied"]);
        assert_bytes_eq(&fs::read(&board).unwrap(), MINIMAL.as_bytes(), "untouched");
        assert_eq!(
            owner_group_mode(&board),
            (u.uid("alice"), team, 0o644),
            "still alice's"
        );
        assert!(temp_files(dir.path()).is_empty());
    }
    // bob still reads it; alice still writes it
    u.pair("bob", &["validate", p]).code(0);
    u.pair(
        "alice",
        &note_args(p, "alice")
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    )
    .code(0);
    assert_eq!(owner_group_mode(&board), (u.uid("alice"), team, 0o644));

    // access is what the ACL says: the group may only read, carol (outside it) may write
    let carol = u.uid("outcarol");
    if let Err(e) = set_xattr(&board, "system.posix_acl_access", &acl(carol, 4, 4)) {
        eprintln!("no ACLs here ({e}); the rest of this test is skipped");
        return;
    }
    chmod(&board, 0o2664); // the group bits show the ACL mask (rw)
    let before = fs::read(&board).unwrap();
    u.pair(
        "bob",
        &note_args(p, "bob")
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    )
    .code(1)
    .mentions(&["read-only"]);
    assert_bytes_eq(&fs::read(&board).unwrap(), &before, "untouched");
    chmod(dir.path(), 0o777); // carol may create files beside it
    u.pair(
        "outcarol",
        &note_args(p, "carol")
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    )
    .code(0);
    // carol is not in the team: the file becomes hers, group and all, and the set-group-id bit
    // (which would name her group) goes; the ACL stays
    assert_eq!(
        owner_group_mode(&board),
        (carol, u.own_gid("outcarol"), 0o664)
    );
    assert_eq!(
        get_xattr(&board, "system.posix_acl_access"),
        Some(acl(carol, 4, 4))
    );
}

#[test]
fn a_group_member_keeps_the_group_of_the_board() {
    let Some(u) = Users::new(
        "a_group_member_keeps_the_group_of_the_board",
        &["alice", "bob", "carol"],
    ) else {
        return;
    };
    let dir = disk_dir();
    let team = u.team_gid();
    // no set-group-id bit on the directory: a new file would get its writer's own group
    chown(dir.path(), 0, team);
    chmod(dir.path(), 0o775);
    let board = dir.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chown(&board, u.uid("alice"), team);
    chmod(&board, 0o660);
    let p = board.to_str().unwrap();
    let note = |who: &str| {
        u.pair(
            who,
            &note_args(p, who)
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>(),
        )
    };
    note("bob").code(0);
    // the owner becomes the writer (only root could keep alice), the group and mode stay
    assert_eq!(owner_group_mode(&board), (u.uid("bob"), team, 0o660));
    assert_ne!(u.own_gid("bob"), team);
    note("carol").code(0);
    note("alice").code(0);
    let text = fs::read_to_string(&board).unwrap();
    for who in ["bob", "carol", "alice"] {
        assert!(text.contains(&format!("\n{who}\n")), "{text}");
    }
    assert_eq!(owner_group_mode(&board).1, team);
}

// ---------------------------------------------------------------------------------------------
// 5. sidecar files made by another user

#[test]
fn a_lock_file_made_by_root_does_not_lock_the_owner_out() {
    let Some(u) = Users::new(
        "a_lock_file_made_by_root_does_not_lock_the_owner_out",
        &["alice"],
    ) else {
        return;
    };
    let team = u.team_gid();
    let alice = u.uid("alice");

    // root writes alice's board once: the sidecars it makes are hers
    let dir = disk_dir();
    chown(dir.path(), alice, team);
    let board = dir.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chown(&board, alice, team);
    chmod(&board, 0o640);
    let p = board.to_str().unwrap();
    pair(note_args(p, "root")).code(0);
    assert_eq!(owner_group_mode(&board), (alice, team, 0o640));
    for sidecar in ["b.md.lock", "b.md.lock.owner.json"] {
        assert_eq!(
            owner_group_mode(&dir.path().join(sidecar)),
            (alice, team, 0o640),
            "{sidecar} takes the board's owner, group and mode"
        );
    }
    u.pair(
        "alice",
        &note_args(p, "alice")
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    )
    .code(0);

    // sidecars left by an older writer as root:root 0644, in a sticky world-writable directory
    // (like /tmp) where alice can neither write nor replace them
    let dir = disk_dir();
    chmod(dir.path(), 0o1777);
    let board = dir.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chown(&board, alice, team);
    chmod(&board, 0o644);
    let lock = dir.path().join("b.md.lock");
    let owner = dir.path().join("b.md.lock.owner.json");
    fs::write(&lock, "").unwrap();
    fs::write(&owner, "{}").unwrap();
    for f in [&lock, &owner] {
        chmod(f, 0o644);
    }
    let p = board.to_str().unwrap();
    u.pair(
        "alice",
        &note_args(p, "alice")
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    )
    .code(0);
    assert!(fs::read_to_string(&board).unwrap().contains("\nalice\n"));
    assert_eq!(owner_group_mode(&lock), (0, 0, 0o644), "left as it was");
    assert!(temp_files(dir.path()).is_empty());
}

// ---------------------------------------------------------------------------------------------
// 6. mode bits, ACL, extended attributes

/// A POSIX access ACL in the kernel's xattr format: `user::rw-`, `user:UID:rw-`,
/// `group::rw-`, `mask::rw-`, `other::---`.
fn acl_with_user(uid: u32) -> Vec<u8> {
    acl(uid, 6, 0)
}

/// `user::rw-`, `user:UID:rw-`, `group::GROUP`, `mask::rw-`, `other::OTHER`.
fn acl(uid: u32, group: u16, other: u16) -> Vec<u8> {
    let mut v = 2u32.to_le_bytes().to_vec();
    let undefined = u32::MAX;
    for (tag, perm, id) in [
        (0x01u16, 6u16, undefined),
        (0x02, 6, uid),
        (0x04, group, undefined),
        (0x10, 6, undefined),
        (0x20, other, undefined),
    ] {
        v.extend_from_slice(&tag.to_le_bytes());
        v.extend_from_slice(&perm.to_le_bytes());
        v.extend_from_slice(&id.to_le_bytes());
    }
    v
}

fn set_xattr(path: &Path, name: &str, value: &[u8]) -> std::io::Result<()> {
    let p = CString::new(path.to_str().unwrap()).unwrap();
    let n = CString::new(name).unwrap();
    // SAFETY: plain syscall on buffers we own.
    let rc = unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn get_xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let p = CString::new(path.to_str().unwrap()).unwrap();
    let n = CString::new(name).unwrap();
    let mut buf = vec![0u8; 4096];
    // SAFETY: plain syscall on buffers we own.
    let rc = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if rc < 0 {
        return None;
    }
    buf.truncate(rc as usize);
    Some(buf)
}

/// A board with mode `mode`, an ACL granting uid 4242 read-write and `user.label`; `None`
/// when this filesystem has no ACLs or user attributes.
fn decorated_board(dir: &Path, mode: u32) -> Option<PathBuf> {
    let board = dir.join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    if let Err(e) = set_xattr(&board, "system.posix_acl_access", &acl_with_user(4242))
        .and_then(|_| set_xattr(&board, "user.label", b"blue"))
    {
        eprintln!(
            "skipped: no ACL or user extended attributes on {}: {e}",
            dir.display()
        );
        return None;
    }
    // after the ACL, which sets the group bits from its mask
    chmod(&board, mode);
    Some(board)
}

#[track_caller]
fn assert_decorations_kept(board: &Path, mode: u32) {
    assert_eq!(
        fs::metadata(board).unwrap().mode() & 0o7777,
        mode,
        "mode kept"
    );
    assert_eq!(
        get_xattr(board, "system.posix_acl_access"),
        Some(acl_with_user(4242)),
        "ACL kept"
    );
    assert_eq!(
        get_xattr(board, "user.label"),
        Some(b"blue".to_vec()),
        "xattr kept"
    );
}

#[test]
fn mode_bits_acl_and_extended_attributes_survive_a_write() {
    let dir = disk_dir();
    let Some(board) = decorated_board(dir.path(), 0o4660) else {
        return;
    };
    let before = fs::metadata(&board).unwrap().ino();
    let p = board.to_str().unwrap();
    pair(note_args(p, "one")).code(0);
    assert_ne!(fs::metadata(&board).unwrap().ino(), before, "replaced");
    assert_decorations_kept(&board, 0o4660);
    let sha = sha256_hex(fs::read(&board).unwrap());
    let aux = tempfile::tempdir().unwrap();
    let content = aux.path().join("content.md");
    fs::write(
        &content,
        format!("{}\nraw\n", fs::read_to_string(&board).unwrap()),
    )
    .unwrap();
    pair([
        "write",
        p,
        "--content-file",
        content.to_str().unwrap(),
        "--expect-sha256",
        &sha,
    ])
    .code(0);
    assert_decorations_kept(&board, 0o4660);
}

#[test]
fn an_acl_inherited_from_the_directory_is_not_added_to_the_board() {
    if !is_root() {
        // a default ACL can be set by the directory's owner too, but keep to one setup
        eprintln!(
            "an_acl_inherited_from_the_directory_is_not_added_to_the_board: skipped: not root"
        );
        return;
    }
    let dir = disk_dir();
    let board = dir.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chmod(&board, 0o640);
    // new files in the directory now get an ACL; the board has none
    if let Err(e) = set_xattr(dir.path(), "system.posix_acl_default", &acl_with_user(4242)) {
        eprintln!("skipped: no default ACLs on {}: {e}", dir.path().display());
        return;
    }
    assert_eq!(get_xattr(&board, "system.posix_acl_access"), None);
    pair(note_args(board.to_str().unwrap(), "one")).code(0);
    assert_eq!(
        get_xattr(&board, "system.posix_acl_access"),
        None,
        "no ACL added"
    );
    assert_eq!(fs::metadata(&board).unwrap().mode() & 0o7777, 0o640);
}

#[test]
fn the_owner_writing_keeps_the_set_id_bits_acl_and_attributes() {
    let Some(u) = Users::new(
        "the_owner_writing_keeps_the_set_id_bits_acl_and_attributes",
        &["alice", "bob"],
    ) else {
        return;
    };
    let dir = disk_dir();
    let team = u.team_gid();
    chown(dir.path(), 0, team);
    chmod(dir.path(), 0o775);
    let Some(board) = decorated_board(dir.path(), 0o6660) else {
        return;
    };
    chown(&board, u.uid("alice"), team);
    chmod(&board, 0o6660); // chown cleared the set-id bits
    let p = board.to_str().unwrap();
    u.pair(
        "alice",
        &note_args(p, "alice")
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    )
    .code(0);
    assert_eq!(owner_group_mode(&board), (u.uid("alice"), team, 0o6660));
    assert_decorations_kept(&board, 0o6660);
    // another member of the group: the file becomes bob's, so the set-user-id bit (which
    // would now name bob) goes; the group, its set-group-id bit, the ACL and attributes stay
    u.pair(
        "bob",
        &note_args(p, "bob")
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    )
    .code(0);
    assert_eq!(owner_group_mode(&board), (u.uid("bob"), team, 0o2660));
    assert_decorations_kept(&board, 0o2660);
}

// ---------------------------------------------------------------------------------------------
// 7. the lock owner file

/// Holds `board.lock` from this process.
fn hold_lock(board: &Path) -> fs::File {
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(format!("{}.lock", board.display()))
        .unwrap();
    f.lock().unwrap();
    f
}

fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

fn timed_out_write(b: &Board) -> Out {
    let content = b.aux_file("c.md", format!("{MINIMAL}\nx\n"));
    pair_timeout(
        [
            "write",
            b.p(),
            "--content-file",
            content.to_str().unwrap(),
            "--expect-sha256",
            &sha256_hex(MINIMAL),
            "--timeout",
            "0.2",
        ],
        Duration::from_secs(10),
    )
}

#[test]
fn a_lock_timeout_names_a_live_holder_and_does_not_blame_a_dead_one() {
    let b = Board::minimal();
    let owner = b.dir.path().join("board.md.lock.owner.json");
    let record = |pid: u32| {
        format!(
            r#"{{"pid": {pid}, "hostname": "{}", "agent": "ghost", "operation": "note", "acquired_at": "2020-01-01T00:00:00Z"}}"#,
            hostname()
        )
    };
    let _lock = hold_lock(&b.path);

    // a live process: named
    fs::write(&owner, record(std::process::id())).unwrap();
    timed_out_write(&b)
        .code(2)
        .mentions(&[&format!("held by pid {}", std::process::id()), "ghost"]);

    // a process that exited long ago: the holder is unknown
    let mut child = StdCommand::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    fs::write(&owner, record(dead)).unwrap();
    let out = timed_out_write(&b);
    out.code(2).mentions(&["unknown", "no longer running"]);
    assert!(
        !out.all().contains(&format!("held by pid {dead}")),
        "{}",
        out.report()
    );
    b.assert_untouched(MINIMAL.as_bytes());
}

#[test]
fn a_lock_timeout_never_follows_or_blocks_on_a_swapped_owner_file() {
    // The owner path flips between a small regular file and a symlink to a FIFO that nobody
    // writes: checking the path and then opening it by name would, sooner or later, open the
    // FIFO and block for ever.
    let b = Board::minimal();
    let dir = b.dir.path().to_path_buf();
    let owner = dir.join("board.md.lock.owner.json");
    let fifo = b.aux.path().join("fifo");
    mkfifo(&fifo);
    let _lock = hold_lock(&b.path);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (stop, dir, owner, fifo) = (stop.clone(), dir.clone(), owner.clone(), fifo.clone());
        std::thread::spawn(move || {
            let (reg, link) = (dir.join("flip-reg"), dir.join("flip-link"));
            while !stop.load(Ordering::Relaxed) {
                fs::write(&reg, r#"{"pid": 1, "hostname": "elsewhere"}"#).unwrap();
                fs::rename(&reg, &owner).unwrap();
                std::os::unix::fs::symlink(&fifo, &link).unwrap();
                fs::rename(&link, &owner).unwrap();
            }
        })
    };
    let start = Instant::now();
    let mut runs = 0;
    while start.elapsed() < Duration::from_secs(4) {
        let content = b.aux_file("c.md", format!("{MINIMAL}\nx\n"));
        let out = pair_timeout(
            [
                "write",
                b.p(),
                "--content-file",
                content.to_str().unwrap(),
                "--expect-sha256",
                &sha256_hex(MINIMAL),
                "--timeout",
                "0",
            ],
            Duration::from_secs(5),
        );
        out.not_timed_out().code(2);
        runs += 1;
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    assert!(runs > 10, "{runs}");
    b.assert_untouched(MINIMAL.as_bytes());
}

#[test]
fn a_lock_timeout_reads_a_bounded_owner_file() {
    // a regular owner file that keeps growing: only the first 64 KiB are ever read
    let b = Board::minimal();
    let owner = b.dir.path().join("board.md.lock.owner.json");
    let f = fs::File::create(&owner).unwrap();
    f.set_len(8 << 30).unwrap();
    let _lock = hold_lock(&b.path);
    let content = b.aux_file("c.md", format!("{MINIMAL}\nx\n"));
    pair_capped(
        &[
            "write",
            b.p(),
            "--content-file",
            content.to_str().unwrap(),
            "--expect-sha256",
            &sha256_hex(MINIMAL),
            "--timeout",
            "0",
        ],
        None,
        QUICK,
    )
    .code(2);
}

// ---------------------------------------------------------------------------------------------
// 8. input files

#[test]
fn input_files_must_be_regular_files_of_bounded_size() {
    let b = Board::minimal();
    let fifo = b.aux.path().join("fifo");
    mkfifo(&fifo);
    let huge = b.aux.path().join("huge.md");
    fs::File::create(&huge)
        .unwrap()
        .set_len(64 * 1024 * 1024 + 1)
        .unwrap();
    let new_board = b.aux.path().join("new.md");
    let nb = new_board.to_str().unwrap();
    let sha = sha256_hex(MINIMAL);
    let calls = |file: &str| -> Vec<Vec<String>> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        vec![
            s(&[
                "note",
                b.p(),
                "--agent",
                "doer",
                "--section",
                "Evidence",
                "--note-file",
                file,
            ]),
            s(&[
                "write",
                b.p(),
                "--content-file",
                file,
                "--expect-sha256",
                &sha,
            ]),
            s(&["init", nb, "--goal-file", file]),
            s(&["init", nb, "--template", file]),
        ]
    };
    for (file, words) in [
        (fifo.to_str().unwrap(), vec!["fifo", "regular file"]),
        ("/dev/zero", vec!["device", "regular file"]),
        (huge.to_str().unwrap(), vec!["64 MiB"]),
    ] {
        for args in calls(file) {
            let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            pair_capped(&args, None, Duration::from_secs(10))
                .code(4)
                .mentions(&words);
            b.assert_untouched(MINIMAL.as_bytes());
            assert!(!new_board.exists());
        }
    }
    // standard input is allowed, and capped the same way
    for args in calls("-") {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        pair_capped(&args, Some(&huge), Duration::from_secs(20))
            .code(4)
            .mentions(&["standard input", "64 MiB"]);
        b.assert_untouched(MINIMAL.as_bytes());
        assert!(!new_board.exists());
    }
    b.assert_clean_dir(&[]);
}

// ---------------------------------------------------------------------------------------------
// 9. the size of the board

#[test]
fn a_board_over_the_size_limit_is_refused_before_it_is_read() {
    let b = Board::minimal();
    // sparse: 3 GiB on paper, nothing on disk
    fs::OpenOptions::new()
        .write(true)
        .open(&b.path)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let content = b.aux_file("c.md", MINIMAL);
    let sha = sha256_hex(MINIMAL);
    for args in [
        vec!["validate", b.p()],
        vec!["status", b.p()],
        vec!["poll", b.p(), "--agent", "doer"],
        vec![
            "note",
            b.p(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
        ],
        vec!["register", b.p(), "--agent", "rev"],
        vec![
            "write",
            b.p(),
            "--content-file",
            content.to_str().unwrap(),
            "--expect-sha256",
            &sha,
        ],
    ] {
        pair_capped(&args, None, QUICK)
            .code(5)
            .mentions(&["over the 64 MiB limit"]);
    }
    // a search of the directory finds it, and reports it, once, not nested in another error
    let out = pair_capped(&["validate", b.dir.path().to_str().unwrap()], None, QUICK);
    out.code(5).mentions(&["board.md", "over the 64 MiB limit"]);
    assert!(
        !out.stdout.contains("invalid blackboard:"),
        "the size error is reported as itself:\n{}",
        out.stdout
    );
    assert_eq!(fs::metadata(&b.path).unwrap().len(), 3 << 30, "untouched");
    b.assert_clean_dir(&[]);
}

#[test]
fn no_write_makes_a_board_larger_than_the_limit() {
    // a valid board just under the limit; one note more would take it over
    let limit = 64 * 1024 * 1024;
    let mut text = String::from(MINIMAL);
    text.push_str("\n## Evidence\n\n");
    let line = "- evidence that fills the board up to its limit, line after line\n";
    while text.len() + line.len() < limit - 1000 {
        text.push_str(line);
    }
    let b = Board::new(&text);
    pair(["validate", b.p()]).code(0);
    pair(note_args(b.p(), &"y".repeat(2000)))
        .code(5)
        .mentions(&["over the 64 MiB limit", "nothing was written"]);
    b.assert_untouched(text.as_bytes());
    pair(note_args(b.p(), "short")).code(0);
}

// ---------------------------------------------------------------------------------------------
// 11. validation agrees with writing

fn with_flow_agents(n: usize) -> String {
    let agents: String = (0..n)
        .map(|i| format!("  r{i:05}: {{role: reviewer, status: IDLE}}\n"))
        .collect();
    insert_before_closing(MINIMAL, &agents)
}

#[test]
fn validate_refuses_a_board_that_no_write_could_emit() {
    // 4,000 agents written short are over 1 MiB once every write spells them out
    let big = with_flow_agents(4000);
    assert!(big.len() < 1 << 20);
    let b = Board::new(&big);
    pair(["validate", b.p()])
        .code(5)
        .mentions(&["1 MiB", "as every write would emit it"]);
    pair(["poll", b.p(), "--agent", "doer"]).code(5);
    pair(["register", b.p(), "--agent", "newcomer"])
        .code(5)
        .mentions(&["1 MiB"]);
    b.assert_untouched(big.as_bytes());

    // 3,000 are under the limit: valid, and writable
    let b = Board::new(with_flow_agents(3000));
    pair(["validate", b.p()]).code(0);
    pair(["register", b.p(), "--agent", "newcomer"]).code(0);
    pair(["validate", b.p()]).code(0);
}

// ---------------------------------------------------------------------------------------------
// 14. HTML that hides the sections after it

#[test]
fn notes_that_open_an_html_comment_or_details_without_closing_are_refused() {
    let b = Board::minimal();
    for (note, words) in [
        (
            "before\n<!-- a comment never closed\nafter",
            vec!["html comment", "line 2"],
        ),
        ("x <!-- inline and open", vec!["html comment", "line 1"]),
        ("<!-- a --> then <!-- b", vec!["html comment"]),
        (
            "<details>\n<summary>log</summary>\n\nlines",
            vec!["<details>", "line 1"],
        ),
        (
            "<DETAILS open>\n<details>\n</details>",
            vec!["<details>", "line 1"],
        ),
    ] {
        pair(note_args(b.p(), note))
            .code(4)
            .mentions(&words)
            .mentions(&["never closed", "hide"]);
        b.assert_untouched(MINIMAL.as_bytes());
    }
    // closed, or quoted as code, they are fine
    for note in [
        "<!-- closed -->\ntext",
        "<!--\nmultiline\n-->",
        "<!---->",
        "<details><summary>s</summary>\n\nbody\n\n</details>",
        "write `<!--` to open a comment and ``<details>`` for a fold",
        "```\n<!-- in a fence\n<details>\n```",
    ] {
        pair(note_args(b.p(), note)).code(0);
    }
    pair(["validate", b.p()]).code(0);
}

#[test]
fn validate_refuses_a_body_with_an_unclosed_html_comment_or_details() {
    for (tail, words) in [
        (
            "\n## Evidence\n\n<!-- hidden\n\n## Decisions\n",
            "html comment",
        ),
        ("\n## Evidence\n\n<details>\n\n## Decisions\n", "<details>"),
    ] {
        let bad = format!("{MINIMAL}{tail}");
        let line = bad.lines().position(|l| l.starts_with('<')).unwrap() + 1;
        let b = Board::new(&bad);
        pair(["validate", b.p()])
            .code(5)
            .mentions(&[words, "never closed"])
            .mentions_line_any(&[line]);
        // no write is accepted onto it, and no raw write can create it
        pair(note_args(b.p(), "x")).code(5);
        b.assert_untouched(bad.as_bytes());
        let good = Board::minimal();
        good.write_expect(&bad, &sha256_hex(MINIMAL), &[])
            .code(5)
            .mentions(&["never closed", "nothing was written"]);
        good.assert_untouched(MINIMAL.as_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// 15. litter

#[test]
fn a_write_to_a_missing_board_leaves_nothing_behind() {
    let b = Board::absent();
    let sha = sha256_hex(MINIMAL);
    let content = b.aux_file("c.md", MINIMAL);
    for args in [
        note_args(b.p(), "x"),
        vec![
            "write".into(),
            b.p().into(),
            "--content-file".into(),
            content.to_str().unwrap().into(),
            "--expect-sha256".into(),
            sha.clone(),
        ],
        vec![
            "register".into(),
            b.p().into(),
            "--agent".into(),
            "rev".into(),
        ],
        vec![
            "stop".into(),
            b.p().into(),
            "--agent".into(),
            "doer".into(),
            "--reason".into(),
            "r".into(),
        ],
    ] {
        pair(&args).code(7);
        assert_only_entries(b.dir.path(), &[]);
    }
    // a lock file that already exists stays, and nothing is added
    fs::write(b.dir.path().join("board.md.lock"), "").unwrap();
    pair(note_args(b.p(), "x")).code(7);
    assert_only_entries(b.dir.path(), &["board.md.lock"]);
}

#[test]
fn temporary_files_of_killed_creations_are_removed_by_the_next_write() {
    let kill = |args: &[&str], point: &str| {
        let out = pair_env(args, &[("PAIR_FAULT", &format!("{point}:kill"))]);
        assert_eq!(out.signal, Some(libc::SIGKILL), "{}", out.report());
    };
    for point in ["temp-write", "temp-fsync", "before-rename"] {
        // a killed `init`, retried
        let b = Board::absent();
        kill(&["init", b.p()], point);
        assert_eq!(temp_files(b.dir.path()).len(), 1, "{point}");
        pair(["init", b.p()]).code(0);
        b.assert_clean_dir(&[]);

        // a killed `write --create-if-missing`, then a write that finds no board
        let b = Board::absent();
        let content = b.aux_file("c.md", MINIMAL);
        let c = content.to_str().unwrap();
        kill(
            &["write", b.p(), "--content-file", c, "--create-if-missing"],
            point,
        );
        assert_eq!(temp_files(b.dir.path()).len(), 1, "{point}");
        pair(note_args(b.p(), "x")).code(7);
        assert!(temp_files(b.dir.path()).is_empty(), "{point}");
        assert!(!b.path.exists());
        pair(["write", b.p(), "--content-file", c, "--create-if-missing"]).code(0);
        b.assert_clean_dir(&[]);
    }
}

/// Processes whose working directory is inside `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        // a removed directory reads as `PATH (deleted)`
        if let Ok(cwd) = fs::read_link(entry.path().join("cwd"))
            && cwd.to_string_lossy().starts_with(&*dir.to_string_lossy())
        {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

#[test]
fn an_interrupted_demo_ends_its_agents_and_removes_its_directory() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = StdCommand::new(pair_bin())
            .arg("demo")
            .env("TMPDIR", tmp.path())
            .env_remove("PAIR_AGENT")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let demo_dir = loop {
            if let Some(d) = dir_entries(tmp.path()).into_iter().next() {
                break tmp.path().join(d);
            }
            assert!(start.elapsed() < QUICK, "the demo never made its directory");
            std::thread::sleep(Duration::from_millis(2));
        };
        // let the agents start
        while !demo_dir.join("task.md").exists() && start.elapsed() < QUICK {
            std::thread::sleep(Duration::from_millis(2));
        }
        // SAFETY: a plain syscall on our own child.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let deadline = Instant::now() + QUICK;
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "the demo did not end");
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(sig), "dies of the signal\n{stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
        assert!(
            !demo_dir.exists(),
            "the demo directory must be removed: {:?}",
            dir_entries(&demo_dir)
        );
        assert!(dir_entries(tmp.path()).is_empty());
        // the agents were sent SIGKILL; give the kernel a moment to reap them
        let deadline = Instant::now() + Duration::from_secs(5);
        while !processes_in(&demo_dir).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            processes_in(&demo_dir),
            Vec::<String>::new(),
            "agents left running"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 16. messages

#[test]
fn a_doubled_carriage_return_is_named() {
    for text in [
        MINIMAL.replace('\n', "\r\r\n"),
        // only the closing delimiter
        MINIMAL.replacen("\n---\n", "\n---\r\r\n", 1),
    ] {
        let b = Board::new(&text);
        let out = pair(["validate", b.p()]);
        out.code(5).mentions(&["\\r\\r\\n", "carriage return"]);
        assert!(!out.all().contains("found \"---\""), "{}", out.report());
        pair(["poll", b.p(), "--agent", "doer"])
            .code(5)
            .mentions(&["carriage return"]);
    }
}

#[test]
fn poll_and_validate_agree_about_a_frontmatter_over_the_limit() {
    for size in [1100 * 1024, 3 << 20] {
        let pad = format!("pad: \"{}\"\n", "x".repeat(size));
        let b = Board::new(insert_before_closing(MINIMAL, &pad));
        for args in [
            vec!["validate", b.p()],
            vec!["poll", b.p(), "--agent", "doer"],
            vec!["status", b.p()],
        ] {
            let out = pair(&args);
            out.code(5).mentions(&["over the 1 MiB limit"]);
            assert!(!out.all().contains("YAML error"), "{}", out.report());
        }
    }
}

#[test]
fn a_huge_timeout_is_shown_as_written() {
    let b = Board::minimal();
    for (value, shown) in [("1e300", "1e300"), ("86401", "86401"), ("inf", "inf")] {
        let out = pair([
            "note",
            b.p(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
            "--timeout",
            value,
        ]);
        out.code(4).mentions(&[&format!("got {shown}")]);
        assert!(out.stderr.len() < 200, "{}", out.report());
    }
}

#[test]
fn a_bad_poll_interval_is_named_as_the_interval() {
    let b = Board::minimal();
    for value in ["1e300", "-1", "nan"] {
        let flag = format!("--interval={value}");
        let out = pair(["poll", b.p(), "--agent", "doer", "--wait", &flag]);
        out.code(4)
            .mentions(&["--interval must be a number of seconds"]);
        assert!(!out.stderr.contains("--timeout"), "{}", out.report());
    }
}
