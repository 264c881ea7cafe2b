//! Concurrency (SPEC §6): many real `pair` processes — semantic notes from several agents,
//! registrations and raw compare-and-swap loops — on one blackboard at once, under the default
//! lock timeout. Every acknowledged change is present exactly once, nothing refused is present,
//! nothing times out. Throughput and the worst lock wait are measured and printed (not asserted).
//!
//! And deleting the lock file while a writer holds it must not let two writers commit.
//!
//! Larger runs: `PAIR_CONCURRENCY_SCALE=5 cargo test --release --test concurrency -- --nocapture`.

use crate::common::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
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

#[test]
fn deleting_the_held_lock_file_does_not_let_a_second_raw_writer_commit_over_the_first() {
    // A holds the lock and pauses between its read and its rename; the lock file is deleted;
    // B takes a fresh lock and commits. A must then refuse: renaming would undo B's write.
    let b = Board::minimal();
    let a_new = format!("{MINIMAL}\n(A)\n");
    let b_new = format!("{MINIMAL}\n(B)\n");
    let a = spawn(
        &raw_write_args(&b, "a.md", &a_new, MINIMAL),
        &[("PAIR_FAULT", "before-rename:sleep=1500")],
    );
    wait_for_holder(&b, a.id());
    fs::remove_file(b.dir.path().join("board.md.lock")).unwrap();
    let bo = finish(spawn(&raw_write_args(&b, "b.md", &b_new, MINIMAL), &[]));
    let ao = finish(a);
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
    let a = spawn(&note("doer"), &[("PAIR_FAULT", "before-rename:sleep=1500")]);
    wait_for_holder(&b, a.id());
    fs::remove_file(b.dir.path().join("board.md.lock")).unwrap();
    let bo = finish(spawn(&note("alice"), &[]));
    let ao = finish(a);
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
    let a = spawn(
        &raw_write_args(&b, "a.md", &format!("{MINIMAL}\n(A)\n"), MINIMAL),
        &[("PAIR_FAULT", "before-rename:sleep=1000")],
    );
    wait_for_holder(&b, a.id());
    let edited = format!("{MINIMAL}\n(edited by hand)\n");
    let tmp = b.dir.path().join("editor.swp");
    fs::write(&tmp, &edited).unwrap();
    fs::rename(&tmp, &b.path).unwrap();
    let ao = finish(a);
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
