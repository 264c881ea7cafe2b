//! Concurrency (SPEC §6): many real `pair` processes — semantic notes from several agents,
//! registrations and raw compare-and-swap loops — on one blackboard at once, under the default
//! lock timeout. Every acknowledged change is present exactly once, nothing refused is present,
//! nothing times out. Throughput and the worst lock wait are measured and printed (not asserted).
//!
//! And deleting the lock file while a writer holds it must not let two writers commit; creations
//! racing for one path have exactly one winner; an editor saving in place or twice (`sed -i`)
//! during a write is not overwritten.
//!
//! Larger runs: `PAIR_CONCURRENCY_SCALE=5 cargo test --release --test it -- concurrency::
//! --nocapture`.

use crate::common::files::{await_entry, changed, disk_dir, note_args, temp_files};
use crate::common::*;
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Command as StdCommand, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

fn scale() -> usize {
    std::env::var("PAIR_CONCURRENCY_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// Runs `pair ARGS` with lock-wait tracing; returns the output and the traced lock wait.
fn traced(args: &[String]) -> (Output, Option<Duration>) {
    let out = Command::new(pair_bin())
        .args(args)
        .env_remove("PAIR_AGENT")
        .env_remove("PAIR_FAULT")
        .env("PAIR_TRACE_LOCK_WAIT", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some_and(|c| c != 101) && !stderr.contains("panicked"),
        "pair crashed or panicked: {:?} {stderr}",
        out.status
    );
    let wait = stderr
        .lines()
        .find_map(|l| l.strip_prefix("pair: trace: lock-wait-us "))
        .and_then(|n| n.trim().parse().ok())
        .map(Duration::from_micros);
    (out, wait)
}

#[derive(Default)]
struct Tally {
    ops: usize,
    stale_retries: usize,
    timeouts: usize,
    worst_wait: Duration,
    failures: Vec<String>,
}

impl Tally {
    fn saw(&mut self, wait: Option<Duration>) {
        if let Some(w) = wait {
            self.worst_wait = self.worst_wait.max(w);
        }
    }
}

enum Job {
    /// `pair note` by this agent, `n` times, each with a unique text.
    Note(String, usize),
    /// `pair register` of `n` new reviewers named `<prefix>-<i>`.
    Register(String, usize),
    /// `n` raw compare-and-swap appends of `- cas <w> <i>`, retrying on exit 3.
    Cas(usize, usize),
}

fn run_job(board: &Path, aux: &Path, job: &Job) -> Tally {
    let mut t = Tally::default();
    let b = board.to_str().unwrap().to_string();
    match job {
        Job::Note(agent, n) => {
            for i in 0..*n {
                let args: Vec<String> = [
                    "note",
                    &b,
                    "--agent",
                    agent,
                    "--section",
                    if i.is_multiple_of(2) {
                        "Evidence"
                    } else {
                        "Validation"
                    },
                    "--note",
                    &format!("note {agent} {i} done"),
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                let (out, wait) = traced(&args);
                t.saw(wait);
                match out.status.code() {
                    Some(0) => t.ops += 1,
                    Some(2) => t.timeouts += 1,
                    c => t.failures.push(format!(
                        "note {agent} {i}: exit {c:?}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    )),
                }
            }
        }
        Job::Register(prefix, n) => {
            for i in 0..*n {
                let id = format!("{prefix}-{i}");
                let args: Vec<String> = ["register", &b, "--agent", &id]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                let (out, wait) = traced(&args);
                t.saw(wait);
                match out.status.code() {
                    Some(0) => t.ops += 1,
                    Some(2) => t.timeouts += 1,
                    c => t.failures.push(format!(
                        "register {id}: exit {c:?}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    )),
                }
            }
        }
        Job::Cas(w, n) => {
            let content = aux.join(format!("cas{w}.md"));
            let mut i = 0;
            while i < *n {
                let old = fs::read(board).unwrap();
                let mut new = old.clone();
                new.extend_from_slice(format!("- cas {w} {i}\n").as_bytes());
                fs::write(&content, &new).unwrap();
                let args: Vec<String> = [
                    "write",
                    &b,
                    "--content-file",
                    content.to_str().unwrap(),
                    "--expect-sha256",
                    &sha256_hex(&old),
                    "--operation",
                    "cas-append",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                let (out, wait) = traced(&args);
                t.saw(wait);
                match out.status.code() {
                    Some(0) => {
                        t.ops += 1;
                        i += 1;
                    }
                    Some(3) => t.stale_retries += 1,
                    Some(2) => {
                        t.timeouts += 1;
                        i += 1;
                    }
                    c => {
                        t.failures.push(format!(
                            "cas {w} {i}: exit {c:?}: {}",
                            String::from_utf8_lossy(&out.stderr)
                        ));
                        i += 1;
                    }
                }
            }
        }
    }
    t
}

#[test]
fn twelve_processes_of_notes_registrations_and_cas_loops_lose_and_duplicate_nothing() {
    let s = scale();
    let mut board = MINIMAL.to_string();
    for r in ["r0", "r1", "r2"] {
        board = insert_before_closing(&board, &agent_block(r, "reviewer", "IDLE", &[]));
    }
    let b = Board::new(format!("{board}\n## Evidence\n\n"));
    let mut jobs = vec![
        Job::Note("doer".into(), 6 * s),
        Job::Note("r0".into(), 6 * s),
        Job::Note("r1".into(), 6 * s),
        Job::Note("r2".into(), 6 * s),
        Job::Register("new-a".into(), 3 * s),
        Job::Register("new-b".into(), 3 * s),
    ];
    for w in 0..6 {
        jobs.push(Job::Cas(w, 5 * s));
    }
    let n = jobs.len();
    let barrier = Arc::new(Barrier::new(n));
    let started = Instant::now();
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|job| {
            let (board, aux, barrier) =
                (b.path.clone(), b.aux.path().to_path_buf(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                (run_job(&board, &aux, &job), job)
            })
        })
        .collect();
    let results: Vec<(Tally, Job)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let elapsed = started.elapsed();

    let failures: Vec<&String> = results.iter().flat_map(|(t, _)| &t.failures).collect();
    assert!(failures.is_empty(), "unexpected refusals: {failures:#?}");
    let timeouts: usize = results.iter().map(|(t, _)| t.timeouts).sum();
    assert_eq!(
        timeouts, 0,
        "no write may time out under the default timeout"
    );

    let text = b.read_string();
    for (_, job) in &results {
        match job {
            Job::Note(agent, n) => {
                for i in 0..*n {
                    let line = format!("\nnote {agent} {i} done\n");
                    assert_eq!(
                        text.matches(&line).count(),
                        1,
                        "acknowledged note {agent} {i} must be present exactly once"
                    );
                }
            }
            Job::Register(prefix, n) => {
                for i in 0..*n {
                    let key = format!("\n  {prefix}-{i}:\n    role: reviewer\n");
                    assert_eq!(
                        text.matches(&key).count(),
                        1,
                        "acknowledged registration {prefix}-{i} must be present exactly once"
                    );
                }
            }
            Job::Cas(w, n) => {
                for i in 0..*n {
                    let line = format!("\n- cas {w} {i}\n");
                    assert_eq!(
                        text.matches(&line).count(),
                        1,
                        "acknowledged CAS append {w} {i} must be present exactly once"
                    );
                }
            }
        }
    }
    // Nothing but acknowledged changes: count every marker in the file.
    let ops: usize = results.iter().map(|(t, _)| t.ops).sum();
    let markers = text.matches("\n- cas ").count()
        + text.lines().filter(|l| l.starts_with("note ")).count()
        + text.matches("\n  new-").count();
    assert_eq!(
        markers, ops,
        "the file holds exactly the acknowledged changes"
    );
    pair(["validate", b.p()]).code(0);
    b.assert_clean_dir(&[]);

    let stale: usize = results.iter().map(|(t, _)| t.stale_retries).sum();
    let worst = results
        .iter()
        .map(|(t, _)| t.worst_wait)
        .max()
        .unwrap_or_default();
    eprintln!(
        "concurrency: {n} processes, {ops} acknowledged writes ({stale} CAS retries on exit 3) in \
         {:.2} s = {:.1} writes/s; worst lock wait {:.1} ms; final file {} bytes",
        elapsed.as_secs_f64(),
        ops as f64 / elapsed.as_secs_f64(),
        worst.as_secs_f64() * 1000.0,
        text.len()
    );
}

// ------------------------------------------------------------------------------------------
// deleting the lock file while it is held

fn spawn(args: &[String], env: &[(&str, &str)]) -> Child {
    let mut c = Command::new(pair_bin());
    c.args(args)
        .env_remove("PAIR_AGENT")
        .env_remove("PAIR_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

fn raw_write_args(b: &Board, name: &str, new: &str, expect: &str) -> Vec<String> {
    let f = b.aux_file(name, new);
    vec![
        "write".into(),
        b.p().into(),
        "--content-file".into(),
        f.to_str().unwrap().into(),
        "--expect-sha256".into(),
        sha256_hex(expect),
        "--operation".into(),
        name.into(),
    ]
}

/// Waits until the owner file names `pid` (the process holds the lock).
fn wait_for_holder(b: &Board, pid: u32) {
    let owner = b.dir.path().join("board.md.lock.owner.json");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = fs::read_to_string(&owner)
            && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
            && v["pid"].as_u64() == Some(pid as u64)
        {
            return;
        }
        assert!(Instant::now() < deadline, "the writer never took the lock");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn finish(c: Child) -> Output {
    let out = c.wait_with_output().unwrap();
    assert!(
        out.status.code().is_some_and(|c| c != 101),
        "pair crashed: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A fault that pauses a write before its rename until the test says go (the returned file,
/// outside the board's directory): the order of what the test does meanwhile is certain.
fn wait_fault(b: &Board) -> (String, PathBuf) {
    let go = b.dir.path().with_extension("go-on");
    let _ = fs::remove_file(&go);
    (format!("before-rename:wait={}", go.display()), go)
}

/// Let the paused write go on, and wait for it.
fn go_on(child: std::process::Child, go: &Path) -> std::process::Output {
    fs::write(go, b"").unwrap();
    let out = finish(child);
    let _ = fs::remove_file(go);
    out
}

#[test]
fn deleting_the_held_lock_file_does_not_let_a_second_raw_writer_commit_over_the_first() {
    // A holds the lock and pauses between its read and its rename; the lock file is deleted;
    // B takes a fresh lock and commits. A must then refuse: renaming would undo B's write.
    let b = Board::minimal();
    let a_new = format!("{MINIMAL}\n(A)\n");
    let b_new = format!("{MINIMAL}\n(B)\n");
    let (fault, go) = wait_fault(&b);
    let a = spawn(
        &raw_write_args(&b, "a.md", &a_new, MINIMAL),
        &[("PAIR_FAULT", &fault)],
    );
    wait_for_holder(&b, a.id());
    fs::remove_file(b.dir.path().join("board.md.lock")).unwrap();
    let bo = finish(spawn(&raw_write_args(&b, "b.md", &b_new, MINIMAL), &[]));
    let ao = go_on(a, &go);
    assert_eq!(
        bo.status.code(),
        Some(0),
        "B found a free lock and the file it expected: {}",
        String::from_utf8_lossy(&bo.stderr)
    );
    let a_err = String::from_utf8_lossy(&ao.stderr).to_lowercase();
    assert_eq!(ao.status.code(), Some(1), "A must refuse: {a_err}");
    assert!(
        a_err.contains("lock file was deleted") && a_err.contains("nothing was written"),
        "A says why: {a_err}"
    );
    assert_bytes_eq(&b.content(), b_new.as_bytes(), "B's write survives");
    b.assert_clean_dir(&[]);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn deleting_the_held_lock_file_does_not_lose_a_semantic_write() {
    let b = Board::new(minimal_with_reviewer("alice"));
    let note = |agent: &str| -> Vec<String> {
        [
            "note",
            b.p(),
            "--agent",
            agent,
            "--section",
            "Evidence",
            "--note",
            &format!("from {agent}"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let (fault, go) = wait_fault(&b);
    let a = spawn(&note("doer"), &[("PAIR_FAULT", &fault)]);
    wait_for_holder(&b, a.id());
    fs::remove_file(b.dir.path().join("board.md.lock")).unwrap();
    let bo = finish(spawn(&note("alice"), &[]));
    let ao = go_on(a, &go);
    assert_eq!(bo.status.code(), Some(0));
    let a_err = String::from_utf8_lossy(&ao.stderr).to_lowercase();
    assert_eq!(ao.status.code(), Some(1), "{a_err}");
    assert!(
        a_err.contains("lock file was deleted"),
        "A says why: {a_err}"
    );
    let text = b.read_string();
    assert_eq!(text.matches("\nfrom alice\n").count(), 1, "{text}");
    assert_eq!(text.matches("\nfrom doer\n").count(), 0, "{text}");
    // the refused write can simply be retried
    pair(note("doer")).code(0);
    let text = b.read_string();
    assert_eq!(text.matches("\nfrom alice\n").count(), 1, "{text}");
    assert_eq!(text.matches("\nfrom doer\n").count(), 1, "{text}");
    pair(["validate", b.p()]).code(0);
}

#[test]
fn a_file_replaced_behind_the_lock_is_not_clobbered() {
    // Someone (an editor, a script) replaces the blackboard without taking the lock while a
    // writer is between its read and its rename: the writer refuses as stale (exit 3).
    let b = Board::minimal();
    let (fault, go) = wait_fault(&b);
    let a = spawn(
        &raw_write_args(&b, "a.md", &format!("{MINIMAL}\n(A)\n"), MINIMAL),
        &[("PAIR_FAULT", &fault)],
    );
    wait_for_holder(&b, a.id());
    let edited = format!("{MINIMAL}\n(edited by hand)\n");
    let tmp = b.dir.path().join("editor.swp");
    fs::write(&tmp, &edited).unwrap();
    fs::rename(&tmp, &b.path).unwrap();
    let ao = go_on(a, &go);
    assert_eq!(
        ao.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&ao.stderr)
    );
    assert_bytes_eq(&b.read(), edited.as_bytes(), "the hand edit survives");
    b.assert_clean_dir(&[]);
}

#[test]
fn cas_writers_racing_a_lock_deleter_never_commit_twice_or_lose_an_acknowledged_write() {
    let b = Board::new(format!("{MINIMAL}\n## Evidence\n\n"));
    let stop = Arc::new(AtomicBool::new(false));
    let deletions = Arc::new(AtomicUsize::new(0));
    let deleter = {
        let (lock, stop, deletions) = (
            b.dir.path().join("board.md.lock"),
            stop.clone(),
            deletions.clone(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if fs::remove_file(&lock).is_ok() {
                    deletions.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(25));
            }
        })
    };
    const W: usize = 8;
    const K: usize = 6;
    let handles: Vec<_> = (0..W)
        .map(|w| {
            let (board, aux): (PathBuf, PathBuf) = (b.path.clone(), b.aux.path().to_path_buf());
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut refused = Vec::new();
                for i in 0..K {
                    // each attempt is a distinct change; a refused attempt is never retried
                    // with the same marker, so presence proves it was applied
                    for attempt in 0.. {
                        let marker = format!("- cas {w} {i} {attempt}");
                        let old = fs::read(&board).unwrap();
                        let mut new = old.clone();
                        new.extend_from_slice(format!("{marker}\n").as_bytes());
                        let content = aux.join(format!("d{w}.md"));
                        fs::write(&content, &new).unwrap();
                        let args: Vec<String> = [
                            "write",
                            board.to_str().unwrap(),
                            "--content-file",
                            content.to_str().unwrap(),
                            "--expect-sha256",
                            &sha256_hex(&old),
                        ]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                        let (out, _) = traced(&args);
                        match out.status.code() {
                            Some(0) => {
                                acked.push(marker);
                                break;
                            }
                            Some(1 | 3) => refused.push(marker),
                            c => panic!(
                                "unexpected exit {c:?}: {}",
                                String::from_utf8_lossy(&out.stderr)
                            ),
                        }
                    }
                }
                (acked, refused)
            })
        })
        .collect();
    let results: Vec<(Vec<String>, Vec<String>)> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    stop.store(true, Ordering::Relaxed);
    deleter.join().unwrap();

    let text = b.read_string();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for l in text.lines().filter(|l| l.starts_with("- cas ")) {
        *counts.entry(l).or_default() += 1;
    }
    let (mut acked_n, mut refused_n) = (0, 0);
    for (acked, refused) in &results {
        for m in acked {
            acked_n += 1;
            assert_eq!(
                counts.get(m.as_str()),
                Some(&1),
                "acknowledged {m} exactly once"
            );
        }
        for m in refused {
            refused_n += 1;
            assert_eq!(
                counts.get(m.as_str()),
                None,
                "refused {m} must not be applied"
            );
        }
    }
    assert_eq!(acked_n, W * K);
    assert_eq!(
        counts.values().sum::<usize>(),
        acked_n,
        "only acknowledged changes"
    );
    pair(["validate", b.p()]).code(0);
    eprintln!(
        "lock deleter: {} lock deletions during {acked_n} acknowledged writes, {refused_n} refused \
         attempts (stale or lock lost), none lost or doubled",
        deletions.load(Ordering::Relaxed)
    );
}

/// Starts `pair note` paused (by fault injection) after its temporary file is written and
/// fsynced, and returns once that temporary file exists.
/// A `pair note` paused after it read the board and wrote its temporary file, before its rename,
/// until the test creates the returned file: the order of the test's edit and the rename is
/// certain, whatever the machine's load.
fn paused_note(board: &Path, text: &str) -> (std::process::Child, PathBuf) {
    let go = board.with_file_name("go-on");
    let child = StdCommand::new(pair_bin())
        .args(note_args(board.to_str().unwrap(), text))
        .env_remove("PAIR_AGENT")
        .env("PAIR_FAULT", format!("before-rename:wait={}", go.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The board's own temporary file (`.board.md.pair-tmp-…`) is written after the board is
    // read: once it exists, the write has read the board. The lock owner's record has a
    // temporary file too (`.board.md.lock.owner.json.pair-tmp-…`), written before the read, so
    // it must not count.
    let dir = board.parent().unwrap();
    let own = format!(
        ".{}.pair-tmp-",
        board.file_name().unwrap().to_str().unwrap()
    );
    await_entry(dir, &own, "the paused write never wrote its temporary file");
    (child, go)
}

fn exit_and_stderr(child: std::process::Child) -> (Option<i32>, String) {
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
        let (child, go) = paused_note(&board, "from pair");
        for edit in ["first-edit", "second-edit"] {
            let ok = StdCommand::new("sed")
                .args(["-i", &format!("$a {edit}")])
                .arg(&board)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        fs::write(&go, b"").unwrap();
        let (code, stderr) = exit_and_stderr(child);
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
    // The write waits until the append is done: if the rename came first, the append would
    // land in the new file and the test would prove nothing.
    let (child, go) = paused_note(&board, "from pair");
    // `>>` keeps the inode: only the size and the times tell
    fs::OpenOptions::new()
        .append(true)
        .open(&board)
        .unwrap()
        .write_all(b"appended by hand\n")
        .unwrap();
    fs::write(&go, b"").unwrap();
    let (code, stderr) = exit_and_stderr(child);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(
        fs::read_to_string(&board).unwrap(),
        format!("{MINIMAL}appended by hand\n")
    );
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
