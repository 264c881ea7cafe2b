//! Hostile paths (SPEC §6, §7): what stands where a blackboard, its lock or its owner file
//! should be, who owns it, who may read it, and where `worktree-path` may point. Complements
//! `bad_input.rs` (FIFO and directory boards, symlinked lock and owner files, symlink loops)
//! and `store.rs` (symlinked boards, permissions of raw writes).
//!
//! Every `pair` call runs under a hang timeout: "refused without blocking" is checked by the
//! process exiting by itself.

use crate::common::*;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const QUICK: Duration = Duration::from_secs(15);

fn note(board: &str) -> Vec<String> {
    [
        "note",
        board,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "hello",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

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
        eprintln!(
            "mknod not permitted here ({}); covered via symlinks",
            std::io::Error::last_os_error()
        );
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

/// Runs `pair ARGS` as the unprivileged user `nobody`, when we are root and `setpriv` exists.
fn as_nobody(args: &[&str]) -> Option<Out> {
    // SAFETY: plain syscall.
    if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/setpriv").exists() {
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
    let Some(out) = as_nobody(&note(p).iter().map(|s| s.as_str()).collect::<Vec<_>>()) else {
        // covered for the unprivileged case by bad_input.rs
        return;
    };
    out.code(1).mentions(&["permission denied"]);
    assert_bytes_eq(&fs::read(&board).unwrap(), MINIMAL.as_bytes(), "untouched");
    assert_only_entries(dir.path(), &["board.md"]);
    as_nobody(&["validate", p]).unwrap().code(0);
}

// ------------------------------------------------------------------------------------------
// worktree-path

struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("git")
            .args(["init", "-q"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init failed");
        fs::write(dir.path().join("task.md"), MINIMAL).unwrap();
        Repo { dir }
    }
    fn root(&self) -> &Path {
        self.dir.path()
    }
    fn board(&self) -> String {
        self.root().join("task.md").to_str().unwrap().to_string()
    }
}

#[test]
fn worktree_path_refuses_dot_dot_and_relative_repo_roots() {
    let r = Repo::new();
    let root = r.root().to_str().unwrap();
    for bad in [
        format!(
            "{root}/../{}",
            r.root().file_name().unwrap().to_string_lossy()
        ),
        format!("{root}/.."),
        "relative/root".to_string(),
        ".".to_string(),
    ] {
        pair(["worktree-path", &r.board(), "--repo-root", &bad])
            .code(4)
            .mentions_any(&["..", "absolute"]);
    }
}

#[test]
fn worktree_path_refuses_unsafe_stems() {
    let r = Repo::new();
    for name in [
        "..md",
        ".hidden.md",
        "-rf.md",
        "a b.md",
        "x;y.md",
        ".md",
        "..",
        "é.md",
    ] {
        let board = r.root().join(name);
        let out = pair([
            "worktree-path",
            board.to_str().unwrap(),
            "--repo-root",
            r.root().to_str().unwrap(),
        ]);
        out.code(6).mentions(&["unsafe"]);
    }
}

#[test]
fn worktree_path_refuses_a_symlinked_worktrees_dir_that_leads_outside() {
    let r = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), r.root().join(".worktrees")).unwrap();
    let board = r.board();
    for extra in [&[][..], &["--repo-root", r.root().to_str().unwrap()][..]] {
        let mut args = vec!["worktree-path", &board[..]];
        args.extend_from_slice(extra);
        pair(&args).code(6).mentions(&["outside"]);
    }
    assert!(
        dir_entries(outside.path()).is_empty(),
        "nothing created outside"
    );
}

#[test]
fn worktree_path_refuses_a_dangling_symlinked_worktrees_dir() {
    // .worktrees -> a directory that does not exist (yet): `git worktree add` would create the
    // worktree wherever the link points once someone creates it
    let r = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    let gone = outside.path().join("not-yet");
    std::os::unix::fs::symlink(&gone, r.root().join(".worktrees")).unwrap();
    pair(["worktree-path", &r.board()])
        .code(6)
        .mentions(&[".worktrees"]);
    assert!(!gone.exists());
}

#[test]
fn worktree_path_refuses_a_symlinked_worktree_that_leads_outside() {
    let r = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir(r.root().join(".worktrees")).unwrap();
    std::os::unix::fs::symlink(outside.path(), r.root().join(".worktrees/task")).unwrap();
    pair(["worktree-path", &r.board()])
        .code(6)
        .mentions(&["outside"]);
    // and a dangling one is not a worktree either
    let r2 = Repo::new();
    fs::create_dir(r2.root().join(".worktrees")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/elsewhere", r2.root().join(".worktrees/task"))
        .unwrap();
    pair(["worktree-path", &r2.board()]).code(6);
}

#[test]
fn worktree_path_inside_the_repo_is_accepted() {
    let r = Repo::new();
    let out = pair(["worktree-path", &r.board(), "--json"]);
    out.code(0);
    let real = fs::canonicalize(r.root()).unwrap();
    let path = out.json()["path"].as_str().unwrap().to_string();
    assert!(
        path.ends_with("/.worktrees/task"),
        "{path} under {}",
        real.display()
    );
}
