//! Crash safety (SPEC §6): a write killed at any moment leaves the blackboard byte-identical to
//! either the old or the new version, valid, and at most one orphaned temporary file that the
//! next writer removes under the lock. And a failure injected at each step of the store has the
//! documented outcome: before the rename, the old file untouched, no temporary file, an error
//! exit; after the rename, success with a warning. Temporary files of killed creations are
//! removed by the next write.
//!
//! Two kinds of kill. At every step of a write: the store's fault points, each a `SIGKILL` (or an
//! abort) the writer sends itself there, so each step is hit on every run and a replace that is
//! not atomic fails every time (the file a reader holds open is written into, or the board is
//! torn). And at random moments: a short run of 100 kills in every `cargo test`; for the long
//! run:
//!
//! ```sh
//! PAIR_CRASH_KILLS=1000 cargo test --release --test it -- crash:: --ignored --nocapture
//! ```
//!
//! The fault-injection tests need the `fault-injection` feature, which the self dev-dependency in
//! Cargo.toml turns on for the test build only.

use crate::common::files::{note_args, temp_files};
use crate::common::*;
use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TEMP_PREFIX: &str = ".board.md.pair-tmp-";

const OWNER_TEMP_PREFIX: &str = ".board.md.lock.owner.json.pair-tmp-";

// ------------------------------------------------------------------------------------------
// helpers

/// A small deterministic PRNG (xorshift64*), seeded from `PAIR_CRASH_SEED` or the clock; the
/// seed is printed so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn from_env() -> Rng {
        let seed = std::env::var("PAIR_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("crash: PAIR_CRASH_SEED={seed}");
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, max).
    fn below(&mut self, max: u64) -> u64 {
        if max == 0 { 0 } else { self.next() % max }
    }
}

/// MINIMAL with a registered reviewer and an Evidence section padded to about `size` bytes.
fn big_board(size: usize) -> String {
    let mut s = format!("{}\n## Evidence\n\n", minimal_with_reviewer("alice"));
    let mut i = 0usize;
    while s.len() < size {
        s.push_str(&format!(
            "- evidence line {i:07}: the quick brown fox jumps over the lazy dog; `code` and *emphasis*\n"
        ));
        i += 1;
    }
    s
}

/// Replace every `YYYY-MM-DDTHH:MM:SSZ` with a fixed placeholder, so a semantic write can be
/// compared byte for byte with a reference run made at another second.
fn normalize_times(bytes: &[u8]) -> Vec<u8> {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:ddZ";
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let is_ts = bytes.len() - i >= SHAPE.len()
            && SHAPE.iter().zip(&bytes[i..]).all(|(p, b)| match p {
                b'd' => b.is_ascii_digit(),
                _ => p == b,
            });
        if is_ts {
            out.extend_from_slice(b"<TIME>");
            i += SHAPE.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

fn entries_with_prefix(dir: &Path, prefix: &str) -> Vec<String> {
    dir_entries(dir)
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// Runs `pair` to completion with the given environment (no kill).
fn run_pair(args: &[String], env: &[(&str, &str)]) -> (Option<i32>, Duration, String) {
    let start = Instant::now();
    let mut c = Command::new(pair_bin());
    c.args(args)
        .env_remove("PAIR_AGENT")
        .env_remove("PAIR_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.code() != Some(101) && !stderr.contains("panicked"),
        "pair panicked: {stderr}"
    );
    (out.status.code(), start.elapsed(), stderr)
}

/// Spawns `pair ARGS`, SIGKILLs it after `delay` (if it is still running) and reports how it
/// ended: `Some(code)` if it exited by itself, `None` if the kill took it.
fn run_and_kill(args: &[String], delay: Duration) -> Option<i32> {
    let mut child = Command::new(pair_bin())
        .args(args)
        .env_remove("PAIR_AGENT")
        .env_remove("PAIR_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let _ = child.kill();
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(101), "pair panicked");
    match status.signal() {
        Some(libc::SIGKILL) => None,
        Some(s) => panic!("pair died of signal {s}"),
        None => status.code(),
    }
}

#[derive(Debug, Default)]
struct Campaign {
    runs: usize,
    killed: usize,
    finished: usize,
    left_old: usize,
    left_new: usize,
    orphans_seen: usize,
    bytes: usize,
    mean_write_ms: f64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// `pair write --expect-sha256`: the new bytes are known exactly.
    Raw,
    /// `pair note`: the new bytes are those of an unkilled reference run (times normalised).
    Note,
}

/// Kill `runs` writes of `kind` at uniformly random moments on a blackboard of about `size`
/// bytes, checking after each kill that the file is the old or the new version, valid, with at
/// most one orphaned temporary file.
fn campaign(kind: Kind, runs: usize, size: usize) -> Campaign {
    let mut rng = Rng::from_env();
    let b = Board::new(big_board(size));
    // Of the newest format, as `init` makes them: every write also seals the journal in the
    // frontmatter.
    let (code, _, err) = run_pair(&["migrate".into(), b.p().into()], &[]);
    assert_eq!(code, Some(0), "migrate failed: {err}");
    assert!(String::from_utf8_lossy(&b.read()).starts_with("---\nformat: 2\njournal: {"));
    let refdir = tempfile::tempdir().unwrap();
    let ref_board = refdir.path().join("board.md");
    let dir = b.dir.path().to_path_buf();
    let mut st = Campaign {
        runs,
        bytes: b.read().len(),
        ..Campaign::default()
    };

    let args_for = |i: usize, old: &[u8], board: &Path, b: &Board| -> (Vec<String>, Vec<u8>) {
        match kind {
            Kind::Raw => {
                // The line goes before the journal, which a raw write keeps as it found it.
                let base = String::from_utf8(unjournaled(old)).unwrap();
                let new = keep_journal(&format!("{base}- raw write {i}\n"), old).into_bytes();
                let f = b.aux_file("content.md", &new);
                (
                    vec![
                        "write".into(),
                        board.to_str().unwrap().into(),
                        "--content-file".into(),
                        f.to_str().unwrap().into(),
                        "--expect-sha256".into(),
                        sha256_hex(old),
                        "--operation".into(),
                        "crash-test".into(),
                    ],
                    new,
                )
            }
            Kind::Note => (
                vec![
                    "note".into(),
                    board.to_str().unwrap().into(),
                    "--agent".into(),
                    if i.is_multiple_of(2) { "doer" } else { "alice" }.into(),
                    "--section".into(),
                    "Validation".into(),
                    "--note".into(),
                    format!("note number {i}"),
                ],
                Vec::new(),
            ),
        }
    };

    // Calibrate: how long an unkilled write takes on this board.
    let mut total = Duration::ZERO;
    for i in 0..3 {
        let old = b.read();
        let (args, _) = args_for(1_000_000 + i, &old, &b.path, &b);
        let (code, took, err) = run_pair(&args, &[]);
        assert_eq!(code, Some(0), "calibration write failed: {err}");
        total += took;
    }
    let typical = total / 3;
    st.mean_write_ms = typical.as_secs_f64() * 1000.0;

    let base_records = journal_lines(&b.read()).len();
    for i in 0..runs {
        let old = b.read();
        let (args, mut new) = args_for(i, &old, &b.path, &b);
        if kind == Kind::Note {
            fs::write(&ref_board, &old).unwrap();
            let (ref_args, _) = args_for(i, &old, &ref_board, &b);
            let (code, _, err) = run_pair(&ref_args, &[]);
            assert_eq!(code, Some(0), "reference note failed: {err}");
            new = fs::read(&ref_board).unwrap();
        }
        // A reader that opened the board before the write: a replace never writes into it.
        let mut held = fs::File::open(&b.path).unwrap();
        let held_id = inode(&held.metadata().unwrap());
        // Uniform over the life of a typical write (spawn to exit), a little past it.
        let delay = Duration::from_micros(rng.below(typical.as_micros() as u64 * 11 / 10));
        let ended = run_and_kill(&args, delay);
        {
            use std::io::{Read, Seek};
            let mut seen = Vec::new();
            held.rewind().unwrap();
            held.read_to_end(&mut seen).unwrap();
            same(
                &seen,
                &old,
                &format!(
                    "run {i} (killed after {delay:?}): the file a reader held open was written into"
                ),
            );
        }
        match ended {
            None => st.killed += 1,
            Some(0) => st.finished += 1,
            Some(c) => panic!("run {i}: the unkilled write exited {c}"),
        }
        let now = b.read();
        let is_old = now == old;
        // The new version: the content as expected, and the old journal with exactly one more
        // record (its time, pid and lock wait are this run's own).
        let (old_records, now_records) = (journal_lines(&old), journal_lines(&now));
        let one_more_record =
            now_records.len() == old_records.len() + 1 && now_records.starts_with(&old_records);
        // The seal differs with each run's record (its time and pid); `validate` checks it.
        let unsealed = |b: &[u8]| {
            remove_top(&String::from_utf8(unjournaled(b)).unwrap(), "journal").into_bytes()
        };
        let is_new = one_more_record
            && match kind {
                Kind::Raw => unsealed(&now) == unsealed(&new),
                Kind::Note => normalize_times(&unsealed(&now)) == normalize_times(&unsealed(&new)),
            };
        assert!(
            is_old || is_new,
            "run {i} (killed after {delay:?}): the blackboard is neither the old nor the new \
             version ({} bytes; old {} bytes, new {} bytes)",
            now.len(),
            old.len(),
            new.len()
        );
        if ended == Some(0) {
            assert!(
                is_new,
                "run {i}: a write that reported success must have landed"
            );
        }
        if is_new && !is_old {
            assert_ne!(
                inode(&fs::metadata(&b.path).unwrap()),
                held_id,
                "run {i}: the new version must arrive by a rename, as a new file"
            );
            st.left_new += 1;
        } else {
            st.left_old += 1;
        }
        // Exactly one record per write that landed: one per calibration write, then one per
        // acknowledged or landed write.
        assert_eq!(
            journal_lines(&now).len(),
            base_records + st.left_new,
            "run {i}: the journal must hold one record per write that landed"
        );
        let temps = entries_with_prefix(&dir, TEMP_PREFIX);
        let owner_temps = entries_with_prefix(&dir, OWNER_TEMP_PREFIX);
        assert!(
            temps.len() <= 1 && owner_temps.len() <= 1,
            "run {i}: orphaned temporary files pile up: {temps:?} {owner_temps:?}"
        );
        if !temps.is_empty() {
            st.orphans_seen += 1;
        }
        if i.is_multiple_of(5) || !temps.is_empty() {
            let (code, _, err) = run_pair(&["validate".into(), b.p().into()], &[]);
            assert_eq!(code, Some(0), "run {i}: validate refused the file: {err}");
        }
    }
    // The next writer removes whatever a killed one left behind.
    let old = b.read();
    let (args, _) = args_for(runs, &old, &b.path, &b);
    let (code, _, err) = run_pair(&args, &[]);
    assert_eq!(code, Some(0), "final write failed: {err}");
    b.assert_clean_dir(&[]);
    assert_eq!(
        journal_lines(&b.read()).len(),
        base_records + st.left_new + 1,
        "one record per write"
    );
    let (code, _, err) = run_pair(&["validate".into(), b.p().into()], &[]);
    assert_eq!(code, Some(0), "validate refused the final file: {err}");
    eprintln!(
        "crash: {kind:?} on {} bytes: {} runs, {} killed mid-write, {} finished first; left old \
         {}, left new {}, orphaned temp seen {} times (all removed); unkilled write {:.1} ms",
        st.bytes,
        st.runs,
        st.killed,
        st.finished,
        st.left_old,
        st.left_new,
        st.orphans_seen,
        st.mean_write_ms
    );
    st
}

fn runs_from_env(default: usize) -> usize {
    std::env::var("PAIR_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The short run, in every `cargo test`: 60 raw writes and 40 notes killed at random moments
/// (100 kills, a few seconds on a busy machine), each on a board of 256 KiB.
#[test]
fn raw_writes_killed_at_random_moments_leave_the_old_or_the_new_file() {
    let st = campaign(Kind::Raw, 60, 256 << 10);
    assert!(
        st.killed > 0,
        "no kill landed while a write ran, the test proved nothing: {st:?}"
    );
}

#[test]
fn notes_killed_at_random_moments_leave_the_old_or_the_new_file() {
    let st = campaign(Kind::Note, 40, 256 << 10);
    assert!(
        st.killed > 0,
        "no kill landed while a write ran, the test proved nothing: {st:?}"
    );
}

#[test]
#[ignore = "long run (minutes); PAIR_CRASH_KILLS sets the number of kills per kind"]
fn long_run_of_random_kills() {
    let n = runs_from_env(1000);
    let raw = campaign(Kind::Raw, n, 4 << 20);
    let note = campaign(Kind::Note, n, 4 << 20);
    println!("long run: raw {raw:?}\nlong run: note {note:?}");
}

// ------------------------------------------------------------------------------------------
// fault injection at each step of the store

fn raw_args(b: &Board, new: &[u8]) -> Vec<String> {
    let f = b.aux_file("content.md", new);
    vec![
        "write".into(),
        b.p().into(),
        "--content-file".into(),
        f.to_str().unwrap().into(),
        "--expect-sha256".into(),
        b.sha(),
        "--operation".into(),
        "fault-test".into(),
    ]
}

fn checked_note_args(b: &Board) -> Vec<String> {
    vec![
        "note".into(),
        b.p().into(),
        "--agent".into(),
        "doer".into(),
        "--section".into(),
        "Validation".into(),
        "--note".into(),
        "checked".into(),
    ]
}

fn with_fault(args: &[String], fault: &str) -> Out {
    pair_env(args, &[("PAIR_FAULT", fault)])
}

const BEFORE_RENAME: [&str; 4] = ["locked", "temp-write", "temp-fsync", "before-rename"];

#[test]
fn an_error_at_any_step_before_the_rename_leaves_the_old_file_and_no_temporary_file() {
    for point in BEFORE_RENAME {
        for (action, phrase) in [
            ("eio", "input/output error"),
            ("enospc", "no space left on device"),
        ] {
            let fault = format!("{point}:{action}");
            // raw write
            let b = Board::minimal();
            let out = with_fault(
                &raw_args(&b, format!("{MINIMAL}\nnew\n").as_bytes()),
                &fault,
            );
            out.code(1).mentions(&[phrase]);
            b.assert_untouched(MINIMAL.as_bytes());
            b.assert_clean_dir(&[]);
            // semantic write, with a JSON error
            let mut args = checked_note_args(&b);
            args.push("--json".into());
            let err = with_fault(&args, &fault).json_error(1);
            assert!(
                err["message"]
                    .as_str()
                    .unwrap()
                    .to_lowercase()
                    .contains(phrase),
                "{fault}: {err}"
            );
            b.assert_untouched(MINIMAL.as_bytes());
            b.assert_clean_dir(&[]);
            // and the board still takes a normal write
            pair(checked_note_args(&b)).code(0);
            pair(["validate", b.p()]).code(0);
        }
    }
}

#[test]
fn an_error_before_the_rename_of_a_creation_creates_nothing() {
    for point in ["temp-write", "temp-fsync", "before-rename"] {
        let b = Board::absent();
        with_fault(
            &[
                "init".to_string(),
                b.p().to_string(),
                "--goal".to_string(),
                "g".to_string(),
            ],
            &format!("{point}:enospc"),
        )
        .code(1)
        .mentions(&["no space left"]);
        assert!(!b.path.exists(), "{point}: no board may be created");
        assert_only_entries(b.dir.path(), &LOCK_SIDECARS);
    }
}

#[test]
fn a_crash_before_the_rename_leaves_the_old_file_and_the_next_writer_removes_the_orphan() {
    for point in BEFORE_RENAME {
        let b = Board::minimal();
        let new = format!("{MINIMAL}\nnew\n");
        let out = with_fault(&raw_args(&b, new.as_bytes()), &format!("{point}:kill"));
        assert_eq!(out.signal, Some(libc::SIGKILL), "{}", out.report());
        b.assert_untouched(MINIMAL.as_bytes());
        let orphans = entries_with_prefix(b.dir.path(), TEMP_PREFIX);
        let expected = usize::from(point != "locked");
        assert_eq!(
            orphans.len(),
            expected,
            "{point}: a crash leaves exactly the temporary file it was writing: {orphans:?}"
        );
        if let Some(name) = orphans.first() {
            // a partial or complete copy of the new content, never the board itself
            // (the new content, then this write's journal)
            let bytes = fs::read(b.dir.path().join(name)).unwrap();
            let shared = bytes.len().min(new.len());
            assert_eq!(bytes[..shared], new.as_bytes()[..shared], "{point}: {name}");
        }
        pair(["validate", b.p()]).code(0);
        // a reader is not confused by the orphan, and the next writer removes it
        pair(["status", b.p()]).code(0);
        pair(checked_note_args(&b)).code(0);
        b.assert_clean_dir(&[]);
        pair(["validate", b.p()]).code(0);
    }
}

#[test]
fn a_crash_after_the_rename_leaves_the_new_file_and_nothing_else() {
    for point in ["after-rename", "dir-fsync"] {
        let b = Board::minimal();
        let new = format!("{MINIMAL}\nnew\n");
        let out = with_fault(&raw_args(&b, new.as_bytes()), &format!("{point}:kill"));
        assert_eq!(out.signal, Some(libc::SIGKILL), "{}", out.report());
        assert_bytes_eq(&b.content(), new.as_bytes(), "the rename happened");
        assert_eq!(
            journal_lines(&b.read()).len(),
            1,
            "the write and its record"
        );
        b.assert_clean_dir(&[]);
        pair(["validate", b.p()]).code(0);
    }
}

#[test]
fn a_failure_after_the_rename_reports_success_with_a_warning() {
    for point in ["after-rename", "dir-fsync"] {
        let b = Board::minimal();
        let new = format!("{MINIMAL}\nnew\n");
        let mut args = raw_args(&b, new.as_bytes());
        args.push("--json".into());
        let out = with_fault(&args, &format!("{point}:eio"));
        out.code(0).mentions(&["warning", "input/output error"]);
        assert_eq!(out.json()["new_sha256"], b.sha(), "{}", out.report());
        assert_bytes_eq(&b.content(), new.as_bytes(), "the rename happened");
        assert_eq!(
            journal_lines(&b.read()).len(),
            1,
            "the write and its record"
        );
        b.assert_clean_dir(&[]);
        // a retrying caller that trusts the exit code does not apply it twice: the hash moved
        with_fault(
            &raw_args_with_hash(&b, &new, MINIMAL),
            &format!("{point}:eio"),
        )
        .code(3);
        // semantic write: the note is there exactly once
        let out = with_fault(&checked_note_args(&b), &format!("{point}:eio"));
        out.code(0).mentions(&["warning"]);
        assert_eq!(b.read_string().matches("\nchecked\n").count(), 1);
        pair(["validate", b.p()]).code(0);
    }
}

fn raw_args_with_hash(b: &Board, new: &str, expected_old: &str) -> Vec<String> {
    let mut args = raw_args(b, new.as_bytes());
    let i = args.iter().position(|a| a == "--expect-sha256").unwrap();
    args[i + 1] = sha256_hex(expected_old);
    args
}

#[test]
fn orphans_of_other_blackboards_and_non_files_with_the_prefix_are_left_alone() {
    let b = Board::minimal();
    let dir = b.dir.path();
    // another board's orphan, a directory and a symlink that look like ours
    fs::write(dir.join(".other.md.pair-tmp-abc"), "x").unwrap();
    fs::create_dir(dir.join(format!("{TEMP_PREFIX}dir"))).unwrap();
    let outside = b.aux_file("outside.txt", "keep me");
    std::os::unix::fs::symlink(&outside, dir.join(format!("{TEMP_PREFIX}link"))).unwrap();
    fs::write(dir.join(format!("{TEMP_PREFIX}real")), "orphan").unwrap();
    pair(checked_note_args(&b)).code(0);
    let entries = dir_entries(dir);
    assert!(
        !entries.contains(&format!("{TEMP_PREFIX}real")),
        "{entries:?}"
    );
    assert!(entries.contains(".other.md.pair-tmp-abc"), "{entries:?}");
    assert!(
        entries.contains(&format!("{TEMP_PREFIX}dir")),
        "{entries:?}"
    );
    assert!(
        entries.contains(&format!("{TEMP_PREFIX}link")),
        "{entries:?}"
    );
    assert_eq!(fs::read_to_string(&outside).unwrap(), "keep me");
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

/// Only a writer that may follow a crash lists the directory for orphans: a write marks the lock
/// file busy before it makes its temporary file and empties it when it is done, so a lock file
/// left marked (a writer killed), or last written before the machine booted (a power loss), is
/// what sends the next writer looking. Any other write leaves the directory as it found it.
#[test]
fn only_a_write_after_a_crash_looks_for_orphaned_temporary_files() {
    let b = Board::minimal();
    let dir = b.dir.path();
    let lock = dir.join("board.md.lock");
    let decoy = dir.join(format!("{TEMP_PREFIX}decoy"));
    // the first write finds no lock file (nothing is known of the writers before): it looks
    fs::write(&decoy, "x").unwrap();
    pair(checked_note_args(&b)).code(0);
    assert!(
        !decoy.exists(),
        "a new lock file tells nothing: the first write looks"
    );
    assert_eq!(
        fs::metadata(&lock).unwrap().len(),
        0,
        "a finished write clears its mark"
    );
    // after a clean write, the next one does not list the directory
    fs::write(&decoy, "x").unwrap();
    pair(checked_note_args(&b)).code(0);
    assert!(
        decoy.exists(),
        "no crash since the last write: no look for orphans"
    );
    // a killed writer leaves its mark and its temporary file; the next writer removes both
    let new = format!("{}\nnew\n", b.read_string());
    let out = with_fault(&raw_args(&b, new.as_bytes()), "before-rename:kill");
    assert_eq!(out.signal, Some(libc::SIGKILL), "{}", out.report());
    assert!(
        fs::metadata(&lock).unwrap().len() > 0,
        "the killed writer's mark"
    );
    assert_eq!(entries_with_prefix(dir, TEMP_PREFIX).len(), 2);
    pair(checked_note_args(&b)).code(0);
    assert!(entries_with_prefix(dir, TEMP_PREFIX).is_empty());
    assert_eq!(fs::metadata(&lock).unwrap().len(), 0);
    // a lock file last written before the machine booted (an hour before), or in the minute
    // after (the slack for the clock's own steps): a power loss may have left orphans
    let up = fs::read_to_string("/proc/uptime").unwrap();
    let up: f64 = up.split_whitespace().next().unwrap().parse().unwrap();
    let boot = std::time::SystemTime::now() - Duration::from_secs_f64(up);
    for (when, what) in [
        (boot - Duration::from_secs(3600), "an hour before the boot"),
        (boot + Duration::from_secs(30), "30 s after the boot"),
    ] {
        fs::write(&decoy, "x").unwrap();
        fs::File::options()
            .write(true)
            .open(&lock)
            .unwrap()
            .set_modified(when)
            .unwrap();
        pair(checked_note_args(&b)).code(0);
        assert!(
            !decoy.exists(),
            "a write after a lock file last written {what} looks for orphans"
        );
    }
    pair(["validate", b.p()]).code(0);
}

// ------------------------------------------------------------------------------------------
// a kill at every step of a write

/// The store's fault points, in the order a write to a file passes them (`store::fault::POINTS`),
/// and whether the board is replaced once the writer has passed each.
const STEPS: [(&str, bool); 10] = [
    ("owner-write", false),
    ("owner-written", false),
    ("locked", false),
    ("temp-write", false),
    ("temp-written", false),
    ("temp-fsync", false),
    ("before-rename", false),
    ("after-rename", true),
    ("dir-fsync", true),
    ("dir-synced", true),
];

/// Every point named in the store's code (`fault!("…"`, `fault::hit("…")`) is one of
/// [`STEPS`], and the fault module lists the same points in the same order: a new step of the
/// write is killed at by [`a_write_killed_at_each_step_leaves_the_old_or_the_new_board_whole`]
/// as soon as it exists.
#[test]
fn every_fault_point_of_the_store_is_a_step_the_crash_test_kills_at() {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let mut named = std::collections::BTreeSet::new();
    let mut stack = vec![store.clone()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let text = fs::read_to_string(&p).unwrap();
            for opener in ["fault!(\"", "fault::hit(\""] {
                for (i, _) in text.match_indices(opener) {
                    let rest = &text[i + opener.len()..];
                    named.insert(rest[..rest.find('"').unwrap()].to_string());
                }
            }
        }
    }
    let steps: std::collections::BTreeSet<String> =
        STEPS.iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(
        named, steps,
        "the store's fault points and the crash test's steps"
    );
    let fault = fs::read_to_string(store.join("fault.rs")).unwrap();
    let list = &fault[fault.find("pub const POINTS").unwrap()..];
    let list = &list[..list.find("];").unwrap()];
    let listed: Vec<&str> = list.split('"').skip(1).step_by(2).collect();
    let ordered: Vec<&str> = STEPS.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        listed, ordered,
        "store::fault::POINTS, in the order of a write"
    );
}

/// The identity of a file: device and inode.
fn inode(meta: &fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Two versions of a board are the same, or the first byte where they differ is named.
#[track_caller]
fn same(actual: &[u8], expected: &[u8], what: &str) {
    if actual != expected {
        let at = actual
            .iter()
            .zip(expected)
            .take_while(|(a, e)| a == e)
            .count();
        panic!(
            "{what}: {} bytes, expected {}; they differ from byte {at}",
            actual.len(),
            expected.len()
        );
    }
}

/// A write killed at a step (the process ends itself there with `SIGKILL`, or aborts): what it
/// must have left, checked against the board as it was before.
fn kill_at(
    b: &Board,
    args: &[String],
    step: (&str, bool),
    action: &str,
    new_holds: &dyn Fn(&[u8]) -> bool,
) {
    use std::io::{Read, Seek};
    let (point, replaced) = step;
    let old = b.read();
    let old_records = journal_lines(&old).len();
    // A reader that opened the board before the write: an atomic replace never writes into the
    // file it holds, so it reads the old version to its end, whatever happened since.
    let mut held = fs::File::open(&b.path).unwrap();
    let held_id = inode(&held.metadata().unwrap());
    let out = with_fault(args, &format!("{point}:{action}"));
    let signal = if action == "abort" {
        libc::SIGABRT
    } else {
        libc::SIGKILL
    };
    assert_eq!(
        out.signal,
        Some(signal),
        "{point}:{action}: {}",
        out.report()
    );
    let now = b.read();
    if replaced {
        assert!(
            new_holds(&now) && journal_lines(&now).len() == old_records + 1,
            "{point}:{action}: the board is not the new version"
        );
        assert_ne!(
            inode(&fs::metadata(&b.path).unwrap()),
            held_id,
            "{point}:{action}: the new version must arrive by a rename, as a new file"
        );
    } else {
        same(
            &now,
            &old,
            &format!("{point}:{action}: the board is not the old version"),
        );
    }
    let mut seen = Vec::new();
    held.rewind().unwrap();
    held.read_to_end(&mut seen).unwrap();
    same(
        &seen,
        &old,
        &format!("{point}:{action}: the file a reader held open was written into"),
    );
    // The owner record is whole: this writer's or the one before it, never a mix.
    let owner = fs::read_to_string(b.dir.path().join("board.md.lock.owner.json")).unwrap();
    let record: serde_json::Value = serde_json::from_str(&owner)
        .unwrap_or_else(|e| panic!("{point}:{action}: a torn owner record ({e}): {owner:?}"));
    assert!(record["pid"].is_u64(), "{point}:{action}: {owner}");
    pair(["validate", b.p()]).code(0);
    let orphans = entries_with_prefix(b.dir.path(), TEMP_PREFIX).len()
        + entries_with_prefix(b.dir.path(), OWNER_TEMP_PREFIX).len();
    assert!(
        orphans <= 1,
        "{point}:{action}: {orphans} temporary files left"
    );
    // The next write goes through and leaves nothing behind.
    pair(checked_note_args(b)).code(0);
    b.assert_clean_dir(&[]);
    pair(["validate", b.p()]).code(0);
}

/// A write killed at each step of the store leaves the board byte for byte the old version (up
/// to the rename) or the new one (from it on), valid, and never written into: the file a reader
/// held open still reads the old version whole, and the new version is a new file. The owner
/// record is whole, and the next write removes whatever temporary file the killed one left.
#[test]
fn a_write_killed_at_each_step_leaves_the_old_or_the_new_board_whole() {
    for step in STEPS {
        for action in ["kill", "abort"] {
            // A raw write: the new content is known exactly.
            let b = Board::new(big_board(64 << 10));
            pair(checked_note_args(&b)).code(0);
            let new = format!(
                "{}- one more line\n",
                String::from_utf8(b.content()).unwrap()
            );
            let new = keep_journal(&new, &b.read());
            let content = unjournaled(new.as_bytes());
            kill_at(&b, &raw_args(&b, new.as_bytes()), step, action, &|now| {
                unjournaled(now) == content
            });
            // A semantic write: the note is there once.
            let b = Board::new(big_board(64 << 10));
            pair(checked_note_args(&b)).code(0);
            let args = note_args(b.p(), "the killed note");
            kill_at(&b, &args, step, action, &|now| {
                String::from_utf8_lossy(now)
                    .matches("the killed note")
                    .count()
                    == 1
            });
        }
    }
}

/// A creation (`init`) killed at each step leaves no board or the whole new one, and a retried
/// `init` removes what it left.
#[test]
fn an_init_killed_at_each_step_leaves_no_board_or_a_whole_one() {
    for (point, replaced) in STEPS {
        let b = Board::absent();
        let out = with_fault(
            &[
                "init".to_string(),
                b.p().to_string(),
                "--goal".into(),
                "g".into(),
            ],
            &format!("{point}:kill"),
        );
        assert_eq!(out.signal, Some(libc::SIGKILL), "{point}: {}", out.report());
        assert_eq!(b.path.exists(), replaced, "{point}");
        if replaced {
            pair(["validate", b.p()]).code(0);
        }
        pair(["init", b.p(), "--goal", "g"]).code(if replaced { 7 } else { 0 });
        b.assert_clean_dir(&[]);
        pair(["validate", b.p()]).code(0);
    }
}
