//! The sidecar lock: waiting for it and timing out, the owner file and what a timeout says about
//! the holder, lock files left by dead processes or deleted while held, and reads that never take
//! it.

use crate::common::bounded::{SLACK, pair_within};
use crate::common::files::{QUICK, changed, mkfifo, pair_capped};
use crate::common::*;
use pair::board::frontmatter::Timestamp;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[test]
fn reads_take_no_lock_and_leave_the_directory_and_file_as_they_were() {
    let b = Board::minimal();
    pair(["validate", b.p()]).code(0);
    pair(["status", b.p()]).code(0);
    pair(["status", b.p(), "--json"]).code(0);
    assert_only_entries(b.dir.path(), &["board.md"]);
    // poll leaves the agent's presence beside the board (never a lock, never the board).
    pair(["poll", b.p(), "--agent", "doer"]).code(0);
    b.assert_untouched(MINIMAL.as_bytes());
    assert_only_entries(b.dir.path(), &["board.md", SIDE_DIR]);
    assert_only_entries(
        &b.dir.path().join(SIDE_DIR).join("presence"),
        &["doer.json"],
    );
}

fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// A write that gives up on a held lock: within its --timeout of 0.2 s and 2 s.
fn timed_out_write(b: &Board) -> Out {
    let content = b.aux_file("c.md", format!("{MINIMAL}\nx\n"));
    pair_within(
        &[
            "write",
            b.p(),
            "--content-file",
            content.to_str().unwrap(),
            "--expect-sha256",
            &sha256_hex(MINIMAL),
            "--timeout",
            "0.2",
        ],
        Duration::from_millis(200),
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
        // Within its --timeout of 0 and 2 s (a write starts no process).
        out.not_timed_out().code(2);
        assert!(out.elapsed <= SLACK, "{}", out.report());
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
fn an_entry_is_stamped_when_the_lock_is_held_not_when_the_command_started() {
    let b = init_board(&[]);
    let lock = b.path.with_file_name("board.md.lock");
    // Hold the lock for two seconds from another process, then let the note through.
    let mut holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["-c", "sleep 2"])
        .spawn()
        .expect("flock(1) is part of util-linux");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = chrono::Utc::now().timestamp();
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "waited",
    ])
    .code(0);
    holder.wait().expect("holder exits");
    let text = b.read_string();
    let stamp = text
        .lines()
        .find(|l| l.starts_with("### Note — doer — "))
        .and_then(|l| l.rsplit(" — ").next())
        .and_then(Timestamp::parse)
        .expect("a stamped note");
    assert!(
        stamp.0.timestamp() > started,
        "the note was stamped at {stamp}, before the lock was free ({} s after start)",
        stamp.0.timestamp() - started
    );
}

fn hold_lock(board: &Path) -> fs::File {
    let lock_path = PathBuf::from(format!("{}.lock", board.display()));
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    f.lock()
        .expect("flock the sidecar lock from the test process");
    f
}

#[test]
fn write_exits_2_after_the_timeout_when_another_process_holds_the_lock() {
    let b = Board::minimal();
    let lock = hold_lock(&b.path);
    let new = changed("blocked");

    let start = Instant::now();
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "1"]);
    let elapsed = start.elapsed();
    out.code(2);
    assert!(
        elapsed <= Duration::from_secs(1) + SLACK,
        "--timeout 1 must give up within 1 s and {SLACK:?}, took {elapsed:?}"
    );
    assert!(
        elapsed >= Duration::from_millis(800),
        "the writer must wait for the lock up to --timeout before giving up, took {elapsed:?}"
    );
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);

    b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "1", "--json"])
        .json_error(2);
    b.assert_untouched(MINIMAL.as_bytes());

    // a create attempt on an existing board under a held lock is never a success
    let out = b.write_create(&new, &["--timeout", "1"]);
    out.code_in(&[2, 7]);
    assert!(
        out.elapsed <= Duration::from_secs(1) + SLACK,
        "{}",
        out.report()
    );
    b.assert_untouched(MINIMAL.as_bytes());

    drop(lock);
    b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "5"])
        .code(0);
    assert_bytes_eq(
        &b.content(),
        new.as_bytes(),
        "after release the write goes through",
    );
    b.assert_clean_dir(&[]);
}

#[test]
fn write_waits_for_a_held_lock_and_succeeds_once_it_is_released() {
    let b = Board::minimal();
    let lock = hold_lock(&b.path);
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1200));
        drop(lock);
    });
    let new = changed("patient");
    let start = Instant::now();
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "10"]);
    let elapsed = start.elapsed();
    releaser.join().unwrap();
    out.code(0);
    assert!(
        elapsed >= Duration::from_millis(1000),
        "it must have waited for the lock ({elapsed:?})"
    );
    assert_bytes_eq(
        &b.content(),
        new.as_bytes(),
        "the file must equal the content",
    );
}

#[test]
fn write_retries_when_the_lock_file_was_deleted_while_it_waited() {
    let b = Board::minimal();
    let lock = hold_lock(&b.path);
    let lock_path = b.dir.path().join("board.md.lock");
    let content = b.aux_file("c.md", changed("after unlink"));
    let child = StdCommand::new(pair_bin())
        .env_remove("PAIR_AGENT")
        .args(["write", b.p(), "--content-file", content.to_str().unwrap()])
        .args([
            "--expect-sha256",
            sha256_hex(MINIMAL).as_str(),
            "--timeout",
            "10",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    // someone deletes the lock file while the writer waits on the old inode, then a new
    // holder takes the lock at the path: the writer must not run while it is held
    fs::remove_file(&lock_path).unwrap();
    let new_holder = hold_lock(&b.path);
    drop(lock);
    std::thread::sleep(Duration::from_millis(700));
    assert_bytes_eq(
        &b.content(),
        MINIMAL.as_bytes(),
        "the writer must not write while the lock at the path is held by someone else",
    );
    drop(new_holder);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_bytes_eq(
        &b.content(),
        changed("after unlink").as_bytes(),
        "the write went through",
    );
    assert!(
        lock_path.is_file(),
        "the lock file exists again at its path"
    );
}

#[test]
fn reads_do_not_take_the_lock_and_answer_while_a_writer_holds_it() {
    let b = Board::minimal();
    let _lock = hold_lock(&b.path);
    let t = Duration::from_secs(8);
    let out = pair_timeout(["status", b.p(), "--json"], t);
    out.code(0);
    assert!(out.elapsed < Duration::from_secs(5), "{}", out.report());
    let out = pair_timeout(["poll", b.p(), "--agent", "doer"], t);
    out.code(0);
    assert!(out.elapsed < Duration::from_secs(5), "{}", out.report());
    let out = pair_timeout(["validate", b.p()], t);
    out.code(0);
    assert!(out.elapsed < Duration::from_secs(5), "{}", out.report());
}

#[test]
fn a_lock_held_on_the_target_path_blocks_a_write_through_a_symlink() {
    let root = tempfile::tempdir().unwrap();
    let aux = tempfile::tempdir().unwrap();
    fs::create_dir(root.path().join("real")).unwrap();
    let real = root.path().join("real/board.md");
    fs::write(&real, MINIMAL).unwrap();
    let link = root.path().join("link.md");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let _lock = hold_lock(&real);
    let f = aux.path().join("c.md");
    fs::write(&f, changed("x")).unwrap();
    let out = pair([
        "write",
        link.to_str().unwrap(),
        "--content-file",
        f.to_str().unwrap(),
        "--expect-sha256",
        sha256_hex(MINIMAL).as_str(),
        "--timeout",
        "1",
    ]);
    out.code(2);
    assert_bytes_eq(&fs::read(&real).unwrap(), MINIMAL.as_bytes(), "untouched");
}

#[test]
fn a_lock_file_and_owner_file_left_by_a_dead_process_do_not_block_a_write() {
    let b = Board::minimal();
    fs::write(b.dir.path().join("board.md.lock"), "").unwrap();
    fs::write(
        b.dir.path().join("board.md.lock.owner.json"),
        r#"{"pid": 999999, "hostname": "gone", "agent": "ghost", "operation": "crash", "acquired_at": "2020-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    let new = changed("after crash");
    let out = pair_timeout(
        [
            "write",
            b.p(),
            "--content-file",
            b.aux_file("c.md", &new).to_str().unwrap(),
            "--expect-sha256",
            sha256_hex(MINIMAL).as_str(),
            "--timeout",
            "3",
        ],
        Duration::from_secs(10),
    );
    out.code(0);
    assert!(
        out.elapsed < Duration::from_secs(3),
        "an unheld lock must be taken at once\n{}",
        out.report()
    );
    assert_bytes_eq(
        &b.content(),
        new.as_bytes(),
        "the file must equal the content",
    );
    b.assert_clean_dir(&[]);
}

#[test]
fn the_lock_owner_file_when_present_records_pid_hostname_agent_operation_and_time() {
    let b = Board::minimal();
    b.write_expect(
        changed("owner"),
        &sha256_hex(MINIMAL),
        &["--agent", "doer", "--operation", "plan-review"],
    )
    .code(0);
    let owner = b.dir.path().join("board.md.lock.owner.json");
    if owner.exists() {
        let v: serde_json::Value =
            serde_json::from_slice(&fs::read(&owner).unwrap()).expect("owner file is JSON");
        assert!(v["pid"].is_u64(), "{v}");
        assert!(v["hostname"].is_string(), "{v}");
        assert_eq!(v["agent"], "doer", "{v}");
        assert_eq!(v["operation"], "plan-review", "{v}");
        assert!(
            v["acquired_at"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{v}"
        );
    } else {
        // an implementation may remove it on release; then only the lock file stays
        assert!(b.dir.path().join("board.md.lock").exists());
    }
}

/// The owner record is replaced by a rename: a writer stopped (or killed) while it writes its
/// record leaves the record before it whole, so a lock timeout meanwhile names that holder, and
/// the writer, once it goes on, leaves its own whole record.
#[test]
fn a_lock_timeout_while_the_holder_writes_its_record_names_a_whole_record() {
    let b = Board::minimal();
    let owner = b.dir.path().join("board.md.lock.owner.json");
    // A record longer than the next one, so that a record written over it in place would leave
    // its tail behind.
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "first",
    ])
    .code(0);
    for point in ["owner-write", "owner-written"] {
        let before: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&owner).unwrap()).unwrap();
        let go = b.aux.path().join(format!("go-{point}"));
        let new = keep_journal(
            &format!("{}- {point}\n", String::from_utf8(b.content()).unwrap()),
            &b.read(),
        );
        let holder = StdCommand::new(pair_bin())
            .args(["write", b.p(), "--content-file"])
            .arg(b.aux_file("c.md", new))
            .args(["--expect-sha256", &b.sha(), "--timeout", "20"])
            .env("PAIR_FAULT", format!("{point}:wait={}", go.display()))
            .env_remove("PAIR_AGENT")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The holder is at the point once its temporary record is there.
        crate::common::files::await_entry(
            b.dir.path(),
            ".board.md.lock.owner.json.pair-tmp-",
            &format!("{point}: never reached"),
        );
        let record: serde_json::Value = serde_json::from_str(&fs::read_to_string(&owner).unwrap())
            .unwrap_or_else(|e| panic!("{point}: a torn owner record ({e})"));
        assert_eq!(
            record["pid"], before["pid"],
            "{point}: the record before, whole"
        );
        // The holder that wrote it is gone: the timeout says so, naming its record.
        let content = b.aux_file("c2.md", "x");
        let out = pair_within(
            &[
                "write",
                b.p(),
                "--content-file",
                content.to_str().unwrap(),
                "--expect-sha256",
                &b.sha(),
                "--timeout",
                "0.3",
            ],
            Duration::from_millis(300),
        );
        out.code(2).mentions(&[
            "held by an unknown process",
            &format!("pid {}", before["pid"]),
            "no longer running",
        ]);
        fs::write(&go, "").unwrap();
        let done = holder.wait_with_output().unwrap();
        assert_eq!(
            done.status.code(),
            Some(0),
            "{point}: {}",
            String::from_utf8_lossy(&done.stderr)
        );
        let after: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&owner).unwrap()).unwrap();
        assert_eq!(
            after["operation"], "write",
            "{point}: the holder's own record"
        );
        b.assert_clean_dir(&[]);
    }
}

/// An owner record that is not one `pair` wrote whole (garbage, a record cut short) names no
/// holder it cannot read: the timeout says the holder is unknown.
#[test]
fn a_lock_timeout_with_an_unreadable_owner_record_calls_the_holder_unknown() {
    let b = Board::minimal();
    let owner = b.dir.path().join("board.md.lock.owner.json");
    let _lock = hold_lock(&b.path);
    for torn in ["{\n  \"pid\": 12", "", "not json", "[1, 2]"] {
        fs::write(&owner, torn).unwrap();
        timed_out_write(&b)
            .code(2)
            .mentions(&["held by an unknown process", "cannot be read"]);
    }
    b.assert_untouched(MINIMAL.as_bytes());
}

/// A FIFO standing at the owner record's path itself (no symlink to follow): a waiter opens it
/// without blocking, finds it is no record, and times out as it would without one.
#[test]
fn a_lock_timeout_does_not_block_on_a_fifo_at_the_owner_path() {
    let b = Board::minimal();
    mkfifo(&b.dir.path().join("board.md.lock.owner.json"));
    let _lock = hold_lock(&b.path);
    let out = timed_out_write(&b);
    out.code(2);
    assert!(!out.all().contains("held by pid"), "{}", out.report());
    b.assert_untouched(MINIMAL.as_bytes());
}

/// A record padded past a kilobyte (hand-formatted, say) is still read: the bound on what a
/// waiter reads is 64 KiB, not the size of a record `pair` writes.
#[test]
fn a_lock_timeout_names_the_holder_of_a_padded_owner_record() {
    let b = Board::minimal();
    let owner = b.dir.path().join("board.md.lock.owner.json");
    let record = format!(
        "{{{}\"pid\": {}, \"hostname\": \"{}\", \"agent\": \"padded\", \"operation\": \"note\", \
         \"acquired_at\": \"2020-01-01T00:00:00Z\"}}\n",
        " ".repeat(4096),
        std::process::id(),
        hostname()
    );
    fs::write(&owner, record).unwrap();
    let _lock = hold_lock(&b.path);
    timed_out_write(&b).code(2).mentions(&[
        &format!("held by pid {}", std::process::id()),
        "agent padded",
    ]);
}

/// A directory where the lock file goes is refused as an unsafe path, saying what to remove,
/// and the board is left as it was.
#[test]
fn a_directory_at_the_lock_path_is_refused_naming_it() {
    let b = Board::minimal();
    fs::create_dir(b.dir.path().join("board.md.lock")).unwrap();
    let content = b.aux_file("c.md", format!("{MINIMAL}\nx\n"));
    let e = pair([
        "write",
        b.p(),
        "--content-file",
        content.to_str().unwrap(),
        "--expect-sha256",
        &sha256_hex(MINIMAL),
        "--json",
    ])
    .json_error(1);
    assert_eq!(e["kind"], "unsafe_path", "{e:#}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("the lock file is a directory. Remove it (pair recreates the lock file)"),
        "{e:#}"
    );
    b.assert_untouched(MINIMAL.as_bytes());
}

/// The owner record's path becomes a directory while the holder writes its record: the rename
/// over it fails, and the write is refused as an unsafe path instead of going on unrecorded.
#[test]
fn an_owner_path_swapped_for_a_directory_while_it_is_written_refuses_the_write() {
    let b = Board::minimal();
    let owner = b.dir.path().join("board.md.lock.owner.json");
    let go = b.aux.path().join("go");
    let content = b.aux_file("c.md", format!("{MINIMAL}\nx\n"));
    let holder = StdCommand::new(pair_bin())
        .args(["write", b.p(), "--content-file"])
        .arg(&content)
        .args(["--expect-sha256", &sha256_hex(MINIMAL), "--json"])
        .env("PAIR_FAULT", format!("owner-written:wait={}", go.display()))
        .env_remove("PAIR_AGENT")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::common::files::await_entry(
        b.dir.path(),
        ".board.md.lock.owner.json.pair-tmp-",
        "owner-written: never reached",
    );
    let _ = fs::remove_file(&owner);
    fs::create_dir(&owner).unwrap();
    fs::write(&go, "").unwrap();
    let done = holder.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("\"kind\":\"unsafe_path\"")
            && stderr.contains("the lock owner file is not a regular file"),
        "{stderr}"
    );
    b.assert_untouched(MINIMAL.as_bytes());
}
