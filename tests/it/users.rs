//! Other users and groups on one blackboard: modes, owners and groups kept by every write, set-id
//! bits, ACLs and extended attributes, a root-made lock file, and a user who may not write the
//! board. Checks about users and groups create them (`groupadd`/`useradd`, unique names, removed
//! afterwards) and run `pair` as them through `setpriv`; without root, those tools or ACLs they
//! fail under CI and are skipped and recorded elsewhere (`common::prereq`).

use crate::common::accounts::Users;
use crate::common::files::{changed, disk_dir, note, note_args, temp_files};
use crate::common::prereq::{self, ACLS, ROOT, require};
use crate::common::*;
use std::ffi::CString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

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

#[test]
fn a_user_who_may_not_write_the_board_cannot_replace_it() {
    let Some(u) = Users::new(&["alice", "bob", "outcarol"]) else {
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
    let acl_set = set_xattr(&board, "system.posix_acl_access", &acl(carol, 4, 4))
        .inspect_err(|e| eprintln!("no ACL on {}: {e}", board.display()));
    if !require(&ACLS, acl_set.is_ok()) {
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
fn a_user_who_may_write_the_board_but_not_its_directory_is_told_what_access_a_write_needs() {
    let Some(u) = Users::new(&["alice", "bob"]) else {
        return;
    };
    let dir = disk_dir();
    let team = u.team_gid();
    // alice's directory, which the team may read but not write; the board itself the team may
    // write: a write still needs the directory, for its lock file and its temporary file
    let sub = dir.path().join("alices");
    fs::create_dir(&sub).unwrap();
    chown(&sub, u.uid("alice"), team);
    chmod(&sub, 0o755);
    chmod(dir.path(), 0o755);
    let board = sub.join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chown(&board, u.uid("alice"), team);
    chmod(&board, 0o664);
    let p = board.to_str().unwrap();
    let args = note_args(p, "bob was here");
    let out = u.pair("bob", &args.iter().map(|s| s.as_str()).collect::<Vec<_>>());
    out.code(1).mentions(&[
        "permission denied",
        "write access to the directory",
        "chmod g+w",
        sub.to_str().unwrap(),
        "pair status",
    ]);
    assert_bytes_eq(&fs::read(&board).unwrap(), MINIMAL.as_bytes(), "untouched");
    assert!(temp_files(&sub).is_empty());
    // what it says works: with the directory the team's to write, bob's note goes in
    chmod(&sub, 0o775);
    u.pair("bob", &args.iter().map(|s| s.as_str()).collect::<Vec<_>>())
        .code(0);
    assert!(fs::read_to_string(&board).unwrap().contains("bob was here"));
}

#[test]
fn a_group_member_keeps_the_group_of_the_board() {
    let Some(u) = Users::new(&["alice", "bob", "carol"]) else {
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

#[test]
fn a_lock_file_made_by_root_does_not_lock_the_owner_out() {
    let Some(u) = Users::new(&["alice"]) else {
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
/// when this filesystem has no ACLs or user attributes and the test may not run (see
/// [`require`]).
fn decorated_board(dir: &Path, mode: u32) -> Option<PathBuf> {
    let board = dir.join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    let decorated = set_xattr(&board, "system.posix_acl_access", &acl_with_user(4242))
        .and_then(|_| set_xattr(&board, "user.label", b"blue"))
        .inspect_err(|e| {
            eprintln!(
                "no ACL or user extended attributes on {}: {e}",
                dir.display()
            )
        });
    if !require(&ACLS, decorated.is_ok()) {
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
    // a default ACL can be set by the directory's owner too, but keep to one setup
    if !require(&ROOT, is_root()) {
        return;
    }
    let dir = disk_dir();
    let board = dir.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chmod(&board, 0o640);
    // new files in the directory now get an ACL; the board has none
    let acl_set = set_xattr(dir.path(), "system.posix_acl_default", &acl_with_user(4242))
        .inspect_err(|e| eprintln!("no default ACL on {}: {e}", dir.path().display()));
    if !require(&ACLS, acl_set.is_ok()) {
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
    let Some(u) = Users::new(&["alice", "bob"]) else {
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

#[test]
fn an_attribute_the_writer_may_not_set_is_left_behind_and_the_write_goes_on() {
    // `security.*` attributes are listed to everyone but set only with a privilege the board's
    // owner lacks: root gave alice's board a file capability, and her write keeps what she may
    // set (the ACL, `user.label`) and leaves that one behind instead of failing.
    let Some(u) = Users::new(&["alice"]) else {
        return;
    };
    let dir = disk_dir();
    chown(dir.path(), u.uid("alice"), u.team_gid());
    let Some(board) = decorated_board(dir.path(), 0o660) else {
        return;
    };
    chown(&board, u.uid("alice"), u.team_gid());
    // struct vfs_cap_data, revision 2: CAP_NET_RAW permitted
    let mut caps = 0x0200_0000u32.to_le_bytes().to_vec();
    for word in [1u32 << 13, 0, 0, 0] {
        caps.extend_from_slice(&word.to_le_bytes());
    }
    set_xattr(&board, "security.capability", &caps).unwrap();
    let p = board.to_str().unwrap();
    let args = note_args(p, "alice");
    u.pair(
        "alice",
        &args.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    )
    .code(0);
    assert!(
        fs::read_to_string(&board).unwrap().contains("alice"),
        "written"
    );
    assert_decorations_kept(&board, 0o660);
    assert_eq!(
        get_xattr(&board, "security.capability"),
        None,
        "an attribute the writer may not set is not carried over"
    );
}

/// A directory mounted again through bindfs with extended attributes switched off: every
/// attribute call there fails with ENOTSUP, as on a filesystem that has none. Unmounted on drop.
struct NoXattrMount {
    _src: tempfile::TempDir,
    mnt: tempfile::TempDir,
}

impl NoXattrMount {
    fn new() -> Option<Self> {
        let possible = is_root() && prereq::on_path("bindfs") && Path::new("/dev/fuse").exists();
        if !require(&prereq::BINDFS, possible) {
            return None;
        }
        let src = disk_dir();
        let mnt = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("bindfs")
            .arg("--xattr-none")
            .arg(src.path())
            .arg(mnt.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "bindfs: {out:?}");
        Some(NoXattrMount { _src: src, mnt })
    }
}

impl Drop for NoXattrMount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.mnt.path())
            .status();
    }
}

#[test]
fn a_board_on_a_filesystem_without_extended_attributes_is_written() {
    let Some(m) = NoXattrMount::new() else {
        return;
    };
    let board = m.mnt.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    assert_eq!(
        set_xattr(&board, "user.label", b"blue")
            .unwrap_err()
            .raw_os_error(),
        Some(libc::ENOTSUP),
        "no extended attributes here"
    );
    let p = board.to_str().unwrap();
    pair(note_args(p, "one")).code(0);
    pair(note_args(p, "two")).code(0);
    let text = fs::read_to_string(&board).unwrap();
    assert!(text.contains("one") && text.contains("two"), "{text}");
    pair(["validate", p]).code(0);
    assert_eq!(temp_files(m.mnt.path()), Vec::<String>::new());
}

#[test]
fn semantic_writes_keep_the_mode_owner_and_group() {
    for mode in [0o600, 0o640, 0o660, 0o644] {
        let b = Board::minimal();
        fs::set_permissions(&b.path, fs::Permissions::from_mode(mode)).unwrap();
        // SAFETY: plain syscall.
        let root = unsafe { libc::geteuid() } == 0;
        if root {
            std::os::unix::fs::chown(&b.path, Some(4321), Some(4322)).unwrap();
        }
        let before = fs::metadata(&b.path).unwrap();
        pair(note(b.p())).code(0);
        let after = fs::metadata(&b.path).unwrap();
        assert_ne!(before.ino(), after.ino(), "the file was replaced");
        assert_eq!(after.mode() & 0o7777, mode, "mode kept");
        assert_eq!(
            (after.uid(), after.gid()),
            (before.uid(), before.gid()),
            "owner and group kept"
        );
        if root {
            assert_eq!((after.uid(), after.gid()), (4321, 4322));
        }
    }
}

#[test]
fn write_preserves_the_file_permissions() {
    for mode in [0o640, 0o600, 0o664] {
        let b = Board::minimal();
        fs::set_permissions(&b.path, fs::Permissions::from_mode(mode)).unwrap();
        let new = changed("perm");
        b.write_expect(&new, &sha256_hex(MINIMAL), &[]).code(0);
        assert_bytes_eq(
            &b.content(),
            new.as_bytes(),
            "the file must equal the content",
        );
        let got = fs::metadata(&b.path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(
            got, mode,
            "permissions must be preserved: expected {mode:o}, got {got:o}"
        );
        b.assert_clean_dir(&[]);
    }
}

#[test]
fn a_side_directory_planted_by_another_user_is_neither_trusted_nor_written() {
    // In a sticky shared directory (like /tmp) outmallory, who may not write alice's board,
    // makes the board's side directory first: a nudge memory saying every finding was given
    // already (which would silence alice's watchdog) and a `presence` link to alice's private
    // directory. alice's poll must write nothing through it and her watchdog must not believe
    // it, and say so.
    let Some(u) = Users::new(&["alice", "outmallory"]) else {
        return;
    };
    let (alice, mallory) = (u.uid("alice"), u.uid("outmallory"));
    let team = u.team_gid();
    let now = "2026-01-02T00:00:00Z";
    // What a watchdog remembers after reporting this board's stall: made on a copy elsewhere.
    let elsewhere = disk_dir();
    let copy = elsewhere.path().join("b.md");
    fs::write(&copy, MINIMAL).unwrap();
    let out = pair_env(
        ["watch", copy.to_str().unwrap(), "--once"],
        &[("PAIR_NOW", now)],
    );
    out.code(13);
    let remembered = fs::read(elsewhere.path().join(".b.md.pair/watch.json")).unwrap();
    let out = pair_env(
        ["watch", copy.to_str().unwrap(), "--once"],
        &[("PAIR_NOW", now)],
    );
    out.code(0);

    let dir = disk_dir();
    chmod(dir.path(), 0o1777);
    let board = dir.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chown(&board, alice, team);
    chmod(&board, 0o644);
    let private = dir.path().join("alice-private");
    fs::create_dir(&private).unwrap();
    chown(&private, alice, team);
    chmod(&private, 0o700);
    let side = dir.path().join(".b.md.pair");
    fs::create_dir(&side).unwrap();
    fs::write(side.join("watch.json"), &remembered).unwrap();
    std::os::unix::fs::symlink(&private, side.join("presence")).unwrap();
    for planted in [&side, &side.join("watch.json")] {
        chown(planted, mallory, u.own_gid("outmallory"));
    }
    std::os::unix::fs::lchown(side.join("presence"), Some(mallory), None).unwrap();

    let p = board.to_str().unwrap();
    u.pair("alice", &["poll", p, "--agent", "doer"]).code(0);
    assert!(
        fs::read_dir(&private).unwrap().next().is_none(),
        "poll wrote into alice's private directory"
    );
    let mut c = assert_cmd::Command::new("/usr/bin/setpriv");
    c.arg(format!("--reuid={}", u.name("alice")))
        .arg(format!("--regid={}", u.name("alice")))
        .arg("--init-groups")
        .arg(pair_bin())
        .args(["watch", p, "--once"])
        .env("PAIR_NOW", now)
        .env_remove("PAIR_AGENT")
        .timeout(crate::common::files::QUICK);
    let out = run(&mut c, "(as alice) pair watch b.md --once".into());
    // The finding the planted memory would have hidden is reported, and the memory named.
    out.code(13);
    assert!(out.stdout.contains("stall doer"), "{}", out.report());
    out.mentions(&[".b.md.pair", "owned by"]);
    assert_eq!(fs::read(side.join("watch.json")).unwrap(), remembered);
    assert!(fs::read_dir(&private).unwrap().next().is_none());
    // Root's watchdog does not trust it either.
    let out = pair_env(["watch", p, "--once"], &[("PAIR_NOW", now)]);
    out.code(13);
    assert!(fs::read_dir(&private).unwrap().next().is_none());
}

/// A FIFO at the lock path that the writer may only read (root's, mode 0444): the read-only
/// open it falls back to does not block either, and the write is refused as an unsafe path,
/// the board as it was.
#[test]
fn a_fifo_at_the_lock_path_the_writer_may_only_read_is_refused_without_blocking() {
    let Some(u) = Users::new(&["alice"]) else {
        return;
    };
    let (alice, team) = (u.uid("alice"), u.team_gid());
    let dir = disk_dir();
    chown(dir.path(), alice, team);
    let board = dir.path().join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    chown(&board, alice, team);
    let lock = dir.path().join("b.md.lock");
    crate::common::files::mkfifo(&lock);
    chmod(&lock, 0o444);
    let mut args = note_args(board.to_str().unwrap(), "alice");
    args.push("--json".into());
    let out = u.pair(
        "alice",
        &args.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    );
    out.code(1);
    assert!(
        out.stderr.contains("\"kind\":\"unsafe_path\"")
            && out.stderr.contains("not a regular file"),
        "{}",
        out.report()
    );
    assert_eq!(fs::read_to_string(&board).unwrap(), MINIMAL);
}
