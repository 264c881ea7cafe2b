//! The store: raw compare-and-swap writes, creation races, the sidecar lock, permissions,
//! symlinked blackboards and concurrent read-modify-write loops with zero lost updates.

use crate::common::*;
use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// MINIMAL with a line appended (bodies are append-only, so edits append).
fn changed(tag: &str) -> String {
    format!("{MINIMAL}\n({tag})\n")
}

// ------------------------------------------------------------------------------------------
// compare-and-swap

#[test]
fn write_with_stale_hash_exits_3_and_leaves_file_untouched() {
    let b = Board::minimal();
    let stale = sha256_hex(changed("someone else's version"));
    let out = b.write_expect(changed("mine"), &stale, &["--operation", "test"]);
    out.code(3)
        .mentions_any(&["stale", "changed", "sha", "hash"]);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
    b.write_expect(changed("mine"), &stale, &["--json"])
        .json_error(3);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn write_with_current_hash_replaces_the_file_exactly_and_reports_both_hashes() {
    let b = Board::minimal();
    let new = changed("v2");
    let out = b.write_expect(
        &new,
        &sha256_hex(MINIMAL),
        &["--operation", "edit", "--agent", "doer", "--json"],
    );
    out.code(0);
    assert_bytes_eq(
        &b.content(),
        new.as_bytes(),
        "the file must equal the content",
    );
    let j = out.json();
    assert_eq!(j["schema"], 1, "{}", out.report());
    assert_eq!(j["old_sha256"], sha256_hex(MINIMAL), "{}", out.report());
    assert_eq!(j["new_sha256"], b.sha(), "{}", out.report());
    assert_eq!(j["phase"], "DRAFT", "{}", out.report());
    // the lock file is never deleted; nothing else is left behind
    assert!(
        b.dir.path().join("board.md.lock").is_file(),
        "the sidecar lock file stays"
    );
    b.assert_clean_dir(&[]);

    // chained: the new hash is what the next writer must present
    let newer = format!("{new}\n(v3)\n");
    let newer_kept = keep_journal(&newer, &b.read());
    b.write_expect(&newer_kept, &sha256_hex(MINIMAL), &[])
        .code(3);
    b.write_expect(&newer_kept, &b.sha(), &[]).code(0);
    assert_bytes_eq(
        &b.content(),
        newer.as_bytes(),
        "the file must equal the content",
    );
    pair(["validate", b.p()]).code(0);
}

#[test]
fn write_with_invalid_content_exits_5_and_leaves_file_untouched() {
    let b = Board::minimal();
    let bad = set_top(MINIMAL, "analysis_revision", "-7");
    let out = b.write_expect(&bad, &sha256_hex(MINIMAL), &[]);
    out.code(5).mentions(&["analysis_revision"]);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn write_checks_the_hash_before_accepting_even_identical_content() {
    // writing the same bytes with a wrong hash is still stale
    let b = Board::minimal();
    b.write_expect(MINIMAL, &"f".repeat(64), &[]).code(3);
    b.assert_untouched(MINIMAL.as_bytes());
    // and with the right hash it succeeds, leaving identical bytes
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &[]).code(0);
    assert_bytes_eq(
        &b.content(),
        MINIMAL.as_bytes(),
        "identical content, and its record",
    );
}

#[test]
fn write_accepts_path_flag_instead_of_the_positional_board() {
    let b = Board::minimal();
    let new = changed("via --path");
    let f = b.aux_file("c.md", &new);
    pair([
        "write",
        "--path",
        b.p(),
        "--content-file",
        f.to_str().unwrap(),
        "--expect-sha256",
        sha256_hex(MINIMAL).as_str(),
        "--operation",
        "legacy-helper",
    ])
    .code(0);
    assert_bytes_eq(
        &b.content(),
        new.as_bytes(),
        "the file must equal the content",
    );
}

#[test]
fn write_reads_the_content_from_stdin_when_content_file_is_dash() {
    let b = Board::minimal();
    let new = changed("from stdin");
    let out = pair_stdin(
        [
            "write",
            b.p(),
            "--content-file",
            "-",
            "--expect-sha256",
            sha256_hex(MINIMAL).as_str(),
            "--json",
        ],
        new.clone(),
    );
    out.code(0);
    assert_eq!(out.json()["new_sha256"], b.sha(), "{}", out.report());
    assert_bytes_eq(&b.content(), new.as_bytes(), "the file must equal stdin");
    b.assert_clean_dir(&[]);
}

#[test]
fn write_create_if_missing_creates_a_new_board_with_exactly_the_content() {
    let b = Board::absent();
    let out = b.write_create(MINIMAL, &["--operation", "create", "--json"]);
    out.code(0);
    assert_eq!(out.json()["new_sha256"], b.sha(), "{}", out.report());
    assert_eq!(out.json()["phase"], "DRAFT", "{}", out.report());
    assert_bytes_eq(
        &b.content(),
        MINIMAL.as_bytes(),
        "the new file must equal the content",
    );
    b.assert_clean_dir(&[]);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn write_create_if_missing_on_an_existing_file_exits_7_and_leaves_it_untouched() {
    let b = Board::minimal();
    b.write_create(changed("intruder"), &[]).code(7);
    b.assert_untouched(MINIMAL.as_bytes());
    b.write_create(changed("intruder"), &["--json"])
        .json_error(7);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn write_to_a_missing_file_without_create_if_missing_exits_7_and_creates_nothing() {
    let b = Board::absent();
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &[]).code(7);
    assert!(!b.path.exists(), "the board must not be created");
    b.assert_clean_dir(&[]);
}

fn spawn_write_create(board: &Path, content_file: &Path) -> std::process::Child {
    StdCommand::new(pair_bin())
        .env_remove("PAIR_AGENT")
        .args([
            "write",
            board.to_str().unwrap(),
            "--content-file",
            content_file.to_str().unwrap(),
        ])
        .args([
            "--create-if-missing",
            "--operation",
            "race",
            "--timeout",
            "20",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pair")
}

#[test]
fn create_if_missing_race_has_exactly_one_winner_and_the_others_exit_7() {
    for round in 0..3 {
        let b = Board::absent();
        let n = 8;
        let files: Vec<(PathBuf, String)> = (0..n)
            .map(|i| {
                let c = changed(&format!("contender {i} round {round}"));
                (b.aux_file(&format!("c{i}.md"), &c), c)
            })
            .collect();
        let barrier = Arc::new(Barrier::new(n));
        let handles: Vec<_> = files
            .iter()
            .map(|(f, _)| {
                let (f, board, barrier) = (f.clone(), b.path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let child = spawn_write_create(&board, &f);
                    child.wait_with_output().unwrap()
                })
            })
            .collect();
        let outputs: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let codes: Vec<Option<i32>> = outputs.iter().map(|o| o.status.code()).collect();
        let winners: Vec<usize> = (0..n).filter(|i| codes[*i] == Some(0)).collect();
        let report = outputs
            .iter()
            .map(|o| {
                format!(
                    "{:?}: {}",
                    o.status.code(),
                    String::from_utf8_lossy(&o.stderr)
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            winners.len(),
            1,
            "exactly one creator must win; codes {codes:?}\n{report}"
        );
        assert!(
            codes
                .iter()
                .filter(|c| **c != Some(0))
                .all(|c| *c == Some(7)),
            "every loser must exit 7 (already exists); codes {codes:?}\n{report}"
        );
        let winner = winners[0];
        assert_bytes_eq(
            &b.content(),
            files[winner].1.as_bytes(),
            "the file must equal the winner's content",
        );
        b.assert_clean_dir(&[]);
    }
}

// ------------------------------------------------------------------------------------------
// the lock

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
        elapsed < Duration::from_secs(6),
        "--timeout 1 must give up quickly, took {elapsed:?}"
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

// ------------------------------------------------------------------------------------------
// file attributes and symlinks

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

// ------------------------------------------------------------------------------------------
// concurrent compare-and-swap increments

const INC_PREFIX: &str = "- inc ";

fn count_incs(text: &str) -> usize {
    text.lines().filter(|l| l.starts_with(INC_PREFIX)).count()
}

struct WorkerStats {
    successes: usize,
    stale: usize,
    lock_timeouts: usize,
    torn_reads: usize,
}

/// One worker: K read-modify-write increments, each attempt a real `pair status --json` and
/// `pair write --expect-sha256` process, retrying on exit 3 (stale) and 2 (lock timeout).
fn cas_worker(board: PathBuf, aux: PathBuf, w: usize, k: usize, deadline: Instant) -> WorkerStats {
    let mut st = WorkerStats {
        successes: 0,
        stale: 0,
        lock_timeouts: 0,
        torn_reads: 0,
    };
    let content_file = aux.join(format!("w{w}.md"));
    while st.successes < k {
        assert!(
            Instant::now() < deadline,
            "worker {w} ran out of time after {} successes",
            st.successes
        );
        let status = StdCommand::new(pair_bin())
            .env_remove("PAIR_AGENT")
            .args(["status", board.to_str().unwrap(), "--json"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            status.status.code(),
            Some(0),
            "status must always see a complete valid file during concurrent writes: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        let sj: serde_json::Value = serde_json::from_slice(&status.stdout).expect("status JSON");
        let sha = sj["sha256"].as_str().expect("sha256").to_string();
        let bytes = fs::read(&board).unwrap();
        if sha256_hex(&bytes) != sha {
            // the file changed between status and our read: read again
            st.torn_reads += 1;
            continue;
        }
        let text = String::from_utf8(bytes).unwrap();
        let n = count_incs(&text);
        // The increment goes before the journal, which the write must keep as it is.
        let base = String::from_utf8(unjournaled(text.as_bytes())).unwrap();
        let new = keep_journal(
            &format!(
                "{base}{INC_PREFIX}{} by w{w} step {}\n",
                n + 1,
                st.successes
            ),
            text.as_bytes(),
        );
        fs::write(&content_file, &new).unwrap();
        let out = StdCommand::new(pair_bin())
            .env_remove("PAIR_AGENT")
            .args([
                "write",
                board.to_str().unwrap(),
                "--content-file",
                content_file.to_str().unwrap(),
            ])
            .args([
                "--expect-sha256",
                &sha,
                "--operation",
                "cas-increment",
                "--timeout",
                "20",
            ])
            .args(["--agent", "doer"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        match out.status.code() {
            Some(0) => st.successes += 1,
            Some(3) => st.stale += 1,
            Some(2) => st.lock_timeouts += 1,
            other => panic!(
                "worker {w}: unexpected write exit {other:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    st
}

#[test]
fn concurrent_cas_increments_from_8_processes_lose_no_updates() {
    const N: usize = 8;
    const K: usize = 15;
    let b = Board::new(format!("{MINIMAL}\n## Evidence\n\n"));
    let deadline = Instant::now() + Duration::from_secs(120);
    let handles: Vec<_> = (0..N)
        .map(|w| {
            let (board, aux) = (b.path.clone(), b.aux.path().to_path_buf());
            std::thread::spawn(move || cas_worker(board, aux, w, K, deadline))
        })
        .collect();
    let stats: Vec<WorkerStats> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let text = b.read_string();

    let incs: Vec<&str> = text.lines().filter(|l| l.starts_with(INC_PREFIX)).collect();
    assert_eq!(
        incs.len(),
        N * K,
        "lost updates: counter is {} not {}",
        incs.len(),
        N * K
    );
    let mut seen: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for (i, line) in incs.iter().enumerate() {
        // "- inc <n> by w<w> step <s>"
        let parts: Vec<&str> = line.split_whitespace().collect();
        let n: usize = parts[2].parse().unwrap();
        assert_eq!(
            n,
            i + 1,
            "increments must be sequential (each built on the previous one): {line}"
        );
        let w: usize = parts[4].trim_start_matches('w').parse().unwrap();
        let s: usize = parts[6].parse().unwrap();
        *seen.entry((w, s)).or_default() += 1;
    }
    for w in 0..N {
        for s in 0..K {
            assert_eq!(
                seen.get(&(w, s)),
                Some(&1),
                "increment w{w} step {s} must appear exactly once"
            );
        }
    }
    // One journal record per acknowledged write, and the chain unbroken.
    assert_eq!(
        journal_lines(&b.read()).len(),
        N * K,
        "one record per write"
    );
    pair(["validate", b.p()]).code(0);
    let stale: usize = stats.iter().map(|s| s.stale).sum();
    let timeouts: usize = stats.iter().map(|s| s.lock_timeouts).sum();
    let torn: usize = stats.iter().map(|s| s.torn_reads).sum();
    eprintln!(
        "CAS: {} successes, {stale} stale retries, {timeouts} lock timeouts, {torn} re-reads",
        N * K
    );
    assert_eq!(stats.iter().map(|s| s.successes).sum::<usize>(), N * K);
    pair(["validate", b.p()]).code(0);
    b.assert_clean_dir(&[]);
}

// ------------------------------------------------------------------------------------------
// stale sidecars and lock owner metadata

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

// ------------------------------------------------------------------------------------------
// protocol checks that apply to raw writes too (SPEC §3, §5, §6 step 5)

#[test]
fn raw_write_onto_a_stopped_board_is_refused_with_exit_6_and_leaves_it_untouched() {
    // SPEC §3: on a terminal blackboard every write is refused (exit 6) except unblock, stop
    // and note in BLOCKED and the doer's COMMITTED->MERGED->CLEANED_UP advances.
    let stopped = set_top(MINIMAL, "phase", "STOPPED");
    let b = Board::new(&stopped);
    // reviving it
    b.write_expect(MINIMAL, &sha256_hex(&stopped), &[]).code(6);
    b.assert_untouched(stopped.as_bytes());
    // editing its body
    let edited = format!("{stopped}\nDo the thing after all.\n");
    b.write_expect(&edited, &sha256_hex(&stopped), &["--json"])
        .json_error(6);
    b.assert_untouched(stopped.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn raw_write_that_jumps_phases_illegally_is_refused_with_exit_6() {
    // DRAFT -> CODE_SUBMITTED is not a transition of SPEC §3.1, even though the new content is
    // itself a valid blackboard; a raw write (no --repair) checks the transition (§6 step 5).
    let jump = set_top(
        &set_top(
            &set_top(
                &set_top(
                    &set_top(MINIMAL, "phase", "CODE_SUBMITTED"),
                    "no_review",
                    "true",
                ),
                "plan_revision",
                "1",
            ),
            "code_review_round",
            "1",
        ),
        "worktree",
        "/abs/wt",
    );
    let check = Board::new(agreeing(&jump));
    pair(["validate", check.p()]).code(0);

    let b = Board::minimal();
    let out = b.write_expect(&jump, &sha256_hex(MINIMAL), &[]);
    out.code(6).mentions(&["CODE_SUBMITTED"]);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
    // Named as the doer, the change is attributable but still not a transition.
    let out = b.write_expect(&jump, &sha256_hex(MINIMAL), &["--as", "doer"]);
    out.code(6).mentions(&["CODE_SUBMITTED", "no transition"]);
    b.assert_untouched(MINIMAL.as_bytes());
}
