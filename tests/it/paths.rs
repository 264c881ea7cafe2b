//! What stands where a blackboard, its lock or its owner file should be: FIFOs, sockets, devices,
//! directories, symlinks and hard links, unreadable and read-only boards and directories. Every
//! refusal comes without blocking and leaves the file alone.

use crate::common::env::Env;
use crate::common::files::{changed, note, note_args};
use crate::common::prereq::{MKNOD, SETPRIV, require};
use crate::common::*;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[test]
fn a_directory_as_board_fails_without_hanging_and_is_left_alone() {
    let b = Board::absent();
    fs::create_dir(&b.path).unwrap();
    let t = Duration::from_secs(10);
    pair_timeout(["status", b.p()], t).failed_without_hanging();
    pair_timeout(["poll", b.p(), "--agent", "doer"], t).failed_without_hanging();
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &[])
        .failed_without_hanging();
    b.write_create(MINIMAL, &[]).failed_without_hanging();
    // validate treats a directory as a tree to search; it must at least terminate
    pair_timeout(["validate", b.p()], t).not_timed_out();
    assert!(b.path.is_dir(), "the directory must still be a directory");
    assert!(
        dir_entries(&b.path).is_empty(),
        "nothing may be written inside the directory"
    );
    b.assert_clean_dir(&[]);
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo failed: {}", std::io::Error::last_os_error());
}

#[test]
fn a_fifo_as_board_is_refused_by_every_command_without_hanging() {
    let b = Board::absent();
    mkfifo(&b.path);
    let t = Duration::from_secs(10);
    let content = b.aux_file("c.md", MINIMAL);
    let c = content.to_str().unwrap();
    let sha = sha256_hex(MINIMAL);
    pair_timeout(["validate", b.p()], t).failed_without_hanging();
    pair_timeout(["status", b.p()], t).failed_without_hanging();
    pair_timeout(["poll", b.p(), "--agent", "doer"], t).failed_without_hanging();
    pair_timeout(
        [
            "write",
            b.p(),
            "--content-file",
            c,
            "--expect-sha256",
            sha.as_str(),
        ],
        t,
    )
    .failed_without_hanging();
    pair_timeout(
        ["write", b.p(), "--content-file", c, "--create-if-missing"],
        t,
    )
    .failed_without_hanging();
    let ft = fs::symlink_metadata(&b.path).unwrap().file_type();
    assert!(ft.is_fifo(), "the FIFO must not be replaced");
    b.assert_clean_dir(&[]);
}

#[test]
fn a_fifo_inside_a_validated_directory_does_not_hang_validate() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("good.md"), MINIMAL).unwrap();
    mkfifo(&dir.path().join("pipe.md"));
    let out = pair_timeout(
        ["validate", dir.path().to_str().unwrap()],
        Duration::from_secs(10),
    );
    out.not_timed_out();
    assert!(dir.path().join("pipe.md").exists());
}

#[test]
fn write_refuses_a_lock_file_that_is_a_symlink_and_touches_neither_target_nor_board() {
    let b = Board::minimal();
    let target = b.dir.path().join("target.txt");
    fs::write(&target, "precious lock target\n").unwrap();
    let lock = b.dir.path().join("board.md.lock");
    std::os::unix::fs::symlink("target.txt", &lock).unwrap();

    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    out.failed_without_hanging()
        .mentions_any(&["symlink", "symbolic"]);
    b.assert_untouched(MINIMAL.as_bytes());
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "precious lock target\n"
    );
    assert!(
        fs::symlink_metadata(&lock)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the symlink stays"
    );
    b.assert_clean_dir(&["target.txt"]);
}

#[test]
fn write_refuses_a_dangling_lock_symlink_and_does_not_create_its_target() {
    let b = Board::minimal();
    let lock = b.dir.path().join("board.md.lock");
    std::os::unix::fs::symlink("nowhere.txt", &lock).unwrap();
    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    out.failed_without_hanging();
    b.assert_untouched(MINIMAL.as_bytes());
    assert!(
        !b.dir.path().join("nowhere.txt").exists(),
        "the symlink target must not be created"
    );
    b.assert_clean_dir(&[]);
}

#[test]
fn write_refuses_an_owner_file_that_is_a_symlink_and_leaves_its_target_untouched() {
    let b = Board::minimal();
    let target = b.dir.path().join("owner-target.txt");
    fs::write(&target, "precious owner target\n").unwrap();
    let owner = b.dir.path().join("board.md.lock.owner.json");
    std::os::unix::fs::symlink("owner-target.txt", &owner).unwrap();

    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    out.failed_without_hanging();
    b.assert_untouched(MINIMAL.as_bytes());
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "precious owner target\n"
    );
    b.assert_clean_dir(&["owner-target.txt"]);
}

#[test]
fn write_fails_cleanly_when_the_lock_path_is_a_directory() {
    let b = Board::minimal();
    fs::create_dir(b.dir.path().join("board.md.lock")).unwrap();
    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    out.failed_without_hanging();
    assert_ne!(
        out.code,
        Some(2),
        "this is not lock contention\n{}",
        out.report()
    );
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

/// Restores write permission on drop so the temp dir can be removed.
struct RestorePerms<'a>(&'a Path);

impl Drop for RestorePerms<'_> {
    fn drop(&mut self) {
        let _ = fs::set_permissions(self.0, fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn write_in_an_unwritable_directory_fails_cleanly_or_as_root_succeeds_cleanly() {
    let b = Board::minimal();
    let _restore = RestorePerms(b.dir.path());
    fs::set_permissions(b.dir.path(), fs::Permissions::from_mode(0o555)).unwrap();

    // reads work in a read-only directory, for everyone
    pair(["validate", b.p()]).code(0);
    pair(["status", b.p()]).code(0);
    pair(["poll", b.p(), "--agent", "doer"]).code(0);

    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    if is_root() {
        // root ignores directory permissions: the write must then fully succeed
        out.code(0);
        assert_bytes_eq(
            &b.content(),
            new.as_bytes(),
            "root's write must store the content",
        );
    } else {
        out.failed_without_hanging();
        assert_ne!(
            out.code,
            Some(2),
            "permission denied is not lock contention\n{}",
            out.report()
        );
        b.assert_untouched(MINIMAL.as_bytes());
    }
    // in both cases: no temporary file left behind
    b.assert_clean_dir(&[]);
}

#[test]
fn a_symlink_loop_as_board_fails_without_hanging() {
    let b = Board::absent();
    std::os::unix::fs::symlink("board.md", &b.path).unwrap();
    let t = Duration::from_secs(10);
    pair_timeout(["validate", b.p()], t).failed_without_hanging();
    pair_timeout(["status", b.p()], t).failed_without_hanging();
    pair_timeout(["poll", b.p(), "--agent", "doer"], t).failed_without_hanging();
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &["--timeout", "2"])
        .failed_without_hanging();
    b.write_create(MINIMAL, &["--timeout", "2"])
        .failed_without_hanging();
    assert!(
        fs::symlink_metadata(&b.path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_link(&b.path).unwrap(), Path::new("board.md"));
}

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

const QUICK: Duration = Duration::from_secs(15);

/// Every command that reads or writes `board` refuses it quickly with exit 1 and names it as
/// not a regular file; nothing is created beside it but the lock sidecars.
#[track_caller]
fn refused_everywhere(board: &Path, kind_words: &[&str]) {
    let p = board.to_str().unwrap();
    let content = tempfile::NamedTempFile::new().unwrap();
    fs::write(content.path(), MINIMAL).unwrap();
    let calls: Vec<Vec<String>> = vec![
        vec!["validate".into(), p.into()],
        vec!["status".into(), p.into()],
        vec!["poll".into(), p.into(), "--agent".into(), "doer".into()],
        note(p),
        vec![
            "write".into(),
            p.into(),
            "--content-file".into(),
            content.path().to_str().unwrap().into(),
            "--expect-sha256".into(),
            sha256_hex(MINIMAL),
        ],
    ];
    for args in calls {
        let out = pair_timeout(&args, QUICK);
        // validate reports a bad file among its results (exit 5, like any invalid file);
        // every other command fails with an I/O-class error (exit 1)
        let code = if args[0] == "validate" { 5 } else { 1 };
        out.failed_without_hanging()
            .code(code)
            .mentions(&["not a regular file"])
            .mentions_any(kind_words);
    }
}

#[test]
fn a_socket_as_the_board_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board.md");
    let _listener = UnixListener::bind(&board).unwrap();
    refused_everywhere(&board, &["socket"]);
    assert!(
        fs::symlink_metadata(&board)
            .unwrap()
            .file_type()
            .is_socket(),
        "the socket is left in place"
    );
}

#[test]
fn a_board_symlinked_to_a_device_is_refused_without_reading_it() {
    // /dev/zero would never end and /dev/null would look empty: neither may be read or written.
    for dev in ["/dev/zero", "/dev/null", "/dev/urandom"] {
        let dir = tempfile::tempdir().unwrap();
        let board = dir.path().join("board.md");
        std::os::unix::fs::symlink(dev, &board).unwrap();
        refused_everywhere(&board, &["device"]);
        assert!(
            fs::symlink_metadata(&board)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}

#[test]
fn a_device_node_as_the_board_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board.md");
    let c = std::ffi::CString::new(board.to_str().unwrap()).unwrap();
    // The same device as /dev/null (1, 3); creating it needs CAP_MKNOD.
    // SAFETY: a plain syscall on a C string we own.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if rc != 0 {
        // Unprivileged: the symlinked-device test above covers the same refusal.
        eprintln!("mknod: {}", std::io::Error::last_os_error());
    }
    if !require(&MKNOD, rc == 0) {
        return;
    }
    refused_everywhere(&board, &["device"]);
}

#[test]
fn a_fifo_or_directory_as_the_lock_file_is_refused_without_blocking() {
    for make in ["fifo", "dir"] {
        let b = Board::minimal();
        let lock = b.dir.path().join("board.md.lock");
        match make {
            "fifo" => {
                let c = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
                // SAFETY: a plain syscall on a C string we own.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }
            _ => fs::create_dir(&lock).unwrap(),
        }
        let out = pair_timeout(note(b.p()), QUICK);
        out.failed_without_hanging().code(1).mentions(&["lock"]);
        b.assert_untouched(MINIMAL.as_bytes());
        // reads take no lock and still work
        pair(["validate", b.p()]).code(0);
    }
}

#[test]
fn a_fifo_or_directory_as_the_owner_file_is_refused_and_left_alone() {
    for make in ["fifo", "dir"] {
        let b = Board::minimal();
        let owner = b.dir.path().join("board.md.lock.owner.json");
        match make {
            "fifo" => {
                let c = std::ffi::CString::new(owner.to_str().unwrap()).unwrap();
                // SAFETY: a plain syscall on a C string we own.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }
            _ => fs::create_dir(&owner).unwrap(),
        }
        let out = pair_timeout(note(b.p()), QUICK);
        out.failed_without_hanging()
            .code(1)
            .mentions(&["owner file"]);
        b.assert_untouched(MINIMAL.as_bytes());
        let ft = fs::symlink_metadata(&owner).unwrap().file_type();
        assert!(!ft.is_file(), "the {make} is left in place");
    }
}

#[test]
fn a_chain_of_relative_symlinks_is_written_at_the_final_target() {
    let root = tempfile::tempdir().unwrap();
    let real_dir = root.path().join("real");
    let link_dir = root.path().join("links");
    fs::create_dir(&real_dir).unwrap();
    fs::create_dir(&link_dir).unwrap();
    let target = real_dir.join("task.md");
    fs::write(&target, MINIMAL).unwrap();
    std::os::unix::fs::symlink("../real/task.md", link_dir.join("hop.md")).unwrap();
    std::os::unix::fs::symlink("hop.md", link_dir.join("board.md")).unwrap();
    let board = link_dir.join("board.md");
    pair(note(board.to_str().unwrap())).code(0);
    assert!(fs::read_to_string(&target).unwrap().contains("\nhello\n"));
    for l in ["hop.md", "board.md"] {
        assert!(
            fs::symlink_metadata(link_dir.join(l))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{l} is still a symlink"
        );
    }
    // locked and written beside the target only
    assert_only_entries(&link_dir, &["hop.md", "board.md"]);
    assert_only_entries(
        &real_dir,
        &["task.md", "task.md.lock", "task.md.lock.owner.json"],
    );
}

#[test]
fn a_read_only_board_is_refused_with_a_clear_error_and_still_reads() {
    let b = Board::minimal();
    fs::set_permissions(&b.path, fs::Permissions::from_mode(0o444)).unwrap();
    pair(note(b.p())).code(1).mentions(&["read-only", "chmod"]);
    b.write_expect(format!("{MINIMAL}\nx\n"), &sha256_hex(MINIMAL), &[])
        .code(1)
        .mentions(&["read-only"]);
    b.assert_untouched(MINIMAL.as_bytes());
    assert_eq!(
        fs::metadata(&b.path).unwrap().mode() & 0o7777,
        0o444,
        "mode untouched"
    );
    b.assert_clean_dir(&[]);
    pair(["validate", b.p()]).code(0);
    pair(["status", b.p()]).code(0);
}

/// Whether [`as_nobody`] can run: as root, with `setpriv`.
fn can_run_as_nobody() -> bool {
    is_root() && Path::new("/usr/bin/setpriv").exists()
}

/// Runs `pair ARGS` as the unprivileged user `nobody`, when we are root and `setpriv` exists.
fn as_nobody(args: &[&str]) -> Option<Out> {
    if !can_run_as_nobody() {
        return None;
    }
    let mut c = assert_cmd::Command::new("/usr/bin/setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(pair_bin())
        .args(args)
        .env_remove("PAIR_AGENT")
        .timeout(QUICK);
    Some(run(&mut c, format!("(as nobody) pair {}", args.join(" "))))
}

#[test]
fn an_unreadable_board_gets_a_clear_permission_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let board = dir.path().join("board.md");
    fs::write(&board, MINIMAL).unwrap();
    fs::set_permissions(&board, fs::Permissions::from_mode(0o600)).unwrap();
    let p = board.to_str().unwrap();
    // SAFETY: plain syscall.
    if unsafe { libc::geteuid() } != 0 {
        // Not root: make it unreadable for ourselves.
        fs::set_permissions(&board, fs::Permissions::from_mode(0o000)).unwrap();
        pair(["validate", p])
            .code(5)
            .mentions(&["permission denied"]);
        pair(["status", p]).code(1).mentions(&["permission denied"]);
    }
    // Root reads everything: the board must be unreadable to another user, `nobody`.
    if !require(&SETPRIV, can_run_as_nobody()) {
        return;
    }
    if as_nobody(&["--version"]).is_none_or(|o| o.code != Some(0)) {
        panic!("setpriv cannot run pair as nobody here");
    }
    for args in [
        vec!["validate", p],
        vec!["status", p],
        vec!["poll", p, "--agent", "doer"],
    ] {
        let out = as_nobody(&args).unwrap();
        let code = if args[0] == "validate" { 5 } else { 1 };
        out.code(code).mentions(&["permission denied", "board.md"]);
    }
    // a write by nobody: the lock file can be created (the directory is 0777) but the board
    // cannot be read under the lock
    let out = as_nobody(&note(p).iter().map(|s| s.as_str()).collect::<Vec<_>>()).unwrap();
    out.code(1).mentions(&["permission denied"]);
    assert_bytes_eq(&fs::read(&board).unwrap(), MINIMAL.as_bytes(), "untouched");
    let stray: Vec<String> = dir_entries(dir.path())
        .into_iter()
        .filter(|e| e.contains("pair-tmp"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn a_board_in_a_directory_the_writer_cannot_write_is_refused_cleanly() {
    // nobody may read the board (0644) but not create files in the root-owned 0755 directory
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let board = dir.path().join("board.md");
    fs::write(&board, MINIMAL).unwrap();
    fs::set_permissions(&board, fs::Permissions::from_mode(0o666)).unwrap();
    let p = board.to_str().unwrap();
    // covered for the unprivileged case by
    // `write_in_an_unwritable_directory_fails_cleanly_or_as_root_succeeds_cleanly`
    if !require(&SETPRIV, can_run_as_nobody()) {
        return;
    }
    let out = as_nobody(&note(p).iter().map(|s| s.as_str()).collect::<Vec<_>>()).unwrap();
    out.code(1).mentions(&["permission denied"]);
    assert_bytes_eq(&fs::read(&board).unwrap(), MINIMAL.as_bytes(), "untouched");
    assert_only_entries(dir.path(), &["board.md"]);
    as_nobody(&["validate", p]).unwrap().code(0);
}

#[test]
fn a_write_to_a_directory_leaves_no_lock_file_beside_it() {
    let e = Env::new();
    fs::create_dir(e.path("dir")).unwrap();
    let r = e.run(&["init", "dir/"]);
    assert_ne!(r.code, 0);
    let r = e.run(&["init", "dir"]);
    assert_ne!(r.code, 0);
    let names: Vec<String> = fs::read_dir(e.dir.path())
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["dir"], "stray files: {names:?}");
    assert_eq!(fs::read_dir(e.path("dir")).unwrap().count(), 0);
}

#[test]
fn write_through_a_symlink_updates_the_target_keeps_the_link_and_locks_the_target_path() {
    let root = tempfile::tempdir().unwrap();
    let aux = tempfile::tempdir().unwrap();
    let real_dir = root.path().join("real");
    fs::create_dir(&real_dir).unwrap();
    let real = real_dir.join("board.md");
    fs::write(&real, MINIMAL).unwrap();
    let link = root.path().join("link.md");
    std::os::unix::fs::symlink("real/board.md", &link).unwrap();

    // reads through the link see the target
    let s = pair(["status", link.to_str().unwrap(), "--json"]);
    s.code(0);
    assert_eq!(s.json()["sha256"], sha256_hex(MINIMAL), "{}", s.report());

    let new = changed("through the link");
    let f = aux.path().join("c.md");
    fs::write(&f, &new).unwrap();
    let out = pair([
        "write",
        link.to_str().unwrap(),
        "--content-file",
        f.to_str().unwrap(),
        "--expect-sha256",
        sha256_hex(MINIMAL).as_str(),
    ]);
    out.code(0);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link must still be a symlink"
    );
    assert_eq!(
        fs::read_link(&link).unwrap(),
        PathBuf::from("real/board.md")
    );
    assert_bytes_eq(
        &unjournaled(&fs::read(&real).unwrap()),
        new.as_bytes(),
        "the target has the new content",
    );
    assert!(
        real_dir.join("board.md.lock").is_file(),
        "the lock is taken by the target's path"
    );
    assert!(
        !root.path().join("link.md.lock").exists(),
        "no lock beside the link"
    );
    assert_only_entries(root.path(), &["real", "link.md"]);
    assert_only_entries(
        &real_dir,
        &["board.md", "board.md.lock", "board.md.lock.owner.json"],
    );
}

#[test]
fn a_board_named_without_a_directory_is_written_beside_the_working_directory_and_synced() {
    // `board.md`, not `./board.md`: the directory to sync, and to clear of what a killed writer
    // left, is `.`, which the bare name's empty parent stands for.
    let e = Env::new();
    e.ok(0, &["init", "board.md"]);
    let args = note_args("board.md", "hello");
    let mut killed = crate::common::bounded::pair_command(&args);
    killed
        .current_dir(e.dir.path())
        .env("PAIR_FAULT", "temp-written:kill");
    let out = crate::common::bounded::within(killed, Duration::from_secs(30));
    assert_eq!(out.signal, Some(9), "{}", out.report());
    let left = crate::common::files::temp_files(e.dir.path());
    assert_eq!(
        left.len(),
        1,
        "the killed writer left its temporary file: {left:?}"
    );
    let r = e.ok(0, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        !r.stderr.contains("fsync"),
        "the directory was synced without a word: {}",
        r.stderr
    );
    let left = crate::common::files::temp_files(e.dir.path());
    assert!(
        left.is_empty(),
        "the next write removed the orphan: {left:?}"
    );
    assert!(
        fs::read_to_string(e.path("board.md"))
            .unwrap()
            .contains("hello")
    );
    e.ok(0, &["validate", "board.md"]);
}
