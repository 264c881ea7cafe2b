//! Whole-process benchmark of `pair` against floor programs, in one run, side by side.
//!
//! Run it with `scripts/bench.sh` (which builds everything in release first), or directly:
//! `cargo build --release --bin pair --examples && target/release/examples/bench_pair`.
//!
//! Every figure is a whole process as an agent sees it: spawn, run, exit, reaped by `wait4`
//! (which also gives the child's peak RSS and CPU time). The floors are
//! `examples/floor_read.rs` (exec + read the file) and `examples/floor_write.rs` (exec + flock +
//! read + write temp + fsync + rename + fsync dir), measured interleaved with `pair` so that
//! both see the same machine state. Results are medians and 90th percentiles of many
//! repetitions, and ratios of medians measured in this run. The harness reports; it never fails
//! on a missed target (machines are noisy).
//!
//! Options: `--quick` (few repetitions, short idle test; a smoke run), `--reps N` (scale of the
//! repetition counts, default 1.0), `--idle-secs S` (default 10), `--keep` (keep the temp dir),
//! `--startup` (only the start-up figures, for `target/release/pair` and the variants named in
//! `PAIR_BENCH_ALT=label=path:…`).
//! `PAIR_BENCH_DIR` chooses where the temporary blackboards go (default: the system temp dir).

// Children are reaped with `wait4` (for their rusage), not `Child::wait`.
#![allow(clippy::zombie_processes)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use pair::text::sha256_hex;

struct Bins {
    pair: PathBuf,
    floor_read: PathBuf,
    floor_write: PathBuf,
}

/// One reaped child process.
#[derive(Clone, Copy, Debug)]
struct Sample {
    wall: Duration,
    /// Peak resident set size, KiB.
    maxrss_kb: i64,
    cpu: Duration,
    code: i32,
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

/// Reap a child with `wait4`, returning its exit code and resource usage.
fn reap(pid: u32) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut ru) };
        if r == pid as libc::pid_t {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            panic!("wait4: {}", std::io::Error::last_os_error());
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, ru)
}

fn spawn(cmd: &mut Command) -> std::process::Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove("PAIR_AGENT")
        .spawn()
        .expect("spawn")
}

/// Run a command to completion and measure it.
fn run(cmd: &mut Command) -> Sample {
    let t0 = Instant::now();
    let child = spawn(cmd);
    let (code, ru) = reap(child.id());
    let wall = t0.elapsed();
    Sample {
        wall,
        maxrss_kb: ru.ru_maxrss,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        code,
    }
}

fn run_ok(cmd: &mut Command, ok: &[i32]) -> Sample {
    let s = run(cmd);
    if !ok.contains(&s.code) {
        let out = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).output();
        panic!("{cmd:?} exited {} (expected {ok:?}): {out:?}", s.code);
    }
    s
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}

fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

fn p90(v: &[f64]) -> f64 {
    quantile(v, 0.9)
}

/// Write a file durably and atomically (the harness's own writes, outside any timing).
fn replace(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("bench-tmp");
    fs::write(&tmp, bytes).unwrap();
    fs::File::open(&tmp).unwrap().sync_all().unwrap();
    fs::rename(&tmp, path).unwrap();
}

struct Row {
    figure: String,
    target: String,
    measured: String,
    ratio: String,
    verdict: &'static str,
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let keep = args.iter().any(|a| a == "--keep");
    let sweep_only = args.iter().any(|a| a == "--sweep-only");
    let opt = |name: &str| -> Option<f64> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
    };
    let scale = opt("--reps").unwrap_or(if quick { 0.1 } else { 1.0 });
    let idle_secs = opt("--idle-secs").unwrap_or(if quick { 1.0 } else { 10.0 });
    let reps = |n: usize| ((n as f64 * scale).round() as usize).max(3);

    let bins = find_bins();
    let root = match std::env::var_os("PAIR_BENCH_DIR") {
        Some(d) => tempfile::Builder::new()
            .prefix("pair-bench-")
            .tempdir_in(d)
            .unwrap(),
        None => tempfile::Builder::new()
            .prefix("pair-bench-")
            .tempdir()
            .unwrap(),
    };
    let dir = root.path().to_path_buf();
    eprintln!("bench dir: {}", dir.display());
    let pair = |args: &[&str]| {
        let mut c = Command::new(&bins.pair);
        c.args(args).current_dir(&dir);
        c
    };

    // A blackboard in PLANNING_SUBMITTED with two required reviewers: r1 has commented, r2 is
    // pending. r1 may replace its verdict while the round is open, so `verdict` can repeat.
    let base = dir.join("base.md");
    let b = base.to_str().unwrap();
    for a in [
        vec![
            "init",
            b,
            "--goal",
            "benchmark",
            "--reviewers",
            "r1,r2",
            "--yolo",
        ],
        vec!["register", b, "--agent", "r1"],
        vec!["register", b, "--agent", "r2"],
        vec!["advance", b, "--agent", "doer", "PLANNING"],
        vec!["submit", b, "--agent", "doer", "plan", "--note", "the plan"],
        vec![
            "verdict",
            b,
            "--agent",
            "r1",
            "COMMENT",
            "--revision",
            "1",
            "--note",
            "a comment",
        ],
    ] {
        run_ok(&mut pair(&a), &[0]);
    }
    let mut small = fs::read(&base).unwrap();
    // Pad the body to about 1 KiB.
    let pad = b"## Evidence\n\n".to_vec();
    let mut body_len = small.len() - frontmatter_len(&small);
    small.extend_from_slice(&pad);
    body_len += pad.len();
    while body_len < 1024 {
        small.extend_from_slice(b"Some evidence, one line of it.\n");
        body_len += 31;
    }
    let fm_len = frontmatter_len(&small);
    fs::write(&base, &small).unwrap();
    run_ok(&mut pair(&["validate", b]), &[0]);
    if args.iter().any(|a| a == "--startup") {
        startup(&bins, &dir, &base, reps(400));
        return;
    }

    // Streamed, so that the harness itself stays small: a child started by vfork/posix_spawn
    // inherits the parent's peak RSS into its own `ru_maxrss` at exec.
    let with_body = |name: &str, size: usize| -> PathBuf {
        use std::io::Write;
        let p = dir.join(name);
        let mut out = std::io::BufWriter::new(fs::File::create(&p).unwrap());
        out.write_all(&small).unwrap();
        out.write_all(b"\n## Validation\n\n").unwrap();
        let line = b"A long record of everything that happened, line after line of it.\n";
        let mut len = small.len() - fm_len;
        while len < size {
            out.write_all(line).unwrap();
            len += line.len();
        }
        out.flush().unwrap();
        p
    };
    let big = with_body("big50.md", 50 << 20);
    let ten = with_body("ten10.md", 10 << 20);
    let copy = |name: &str| -> PathBuf {
        let p = dir.join(name);
        fs::write(&p, &small).unwrap();
        p
    };

    let mut rows: Vec<Row> = Vec::new();
    let mut detail: Vec<String> = Vec::new();
    let line = |detail: &mut Vec<String>, name: &str, v: &[f64], unit: &str| {
        let s = format!(
            "{name:<44} median {:>9.3} {unit}  p90 {:>9.3} {unit}  (n={})",
            median(v),
            p90(v),
            v.len()
        );
        eprintln!("{s}");
        detail.push(s);
    };

    // --- Cost that grows with the board: note and raw write against the durable-write floor on
    // the same file, from 1 KiB to 50 MiB. Runs are interleaved so load spikes hit all three.
    let sizes: [(&str, usize, usize); 5] = [
        ("1 KiB", 1 << 10, 60),
        ("64 KiB", 64 << 10, 40),
        ("1 MiB", 1 << 20, 30),
        ("10 MiB", 10 << 20, 12),
        ("50 MiB", 50 << 20, 5),
    ];
    for (label, size, n) in sizes {
        let n = reps(n);
        let (fl, nt, rw) = (
            with_body(&format!("sweep-floor-{size}.md"), size),
            with_body(&format!("sweep-note-{size}.md"), size),
            with_body(&format!("sweep-raw-{size}.md"), size),
        );
        let content = dir.join(format!("sweep-content-{size}.md"));
        let (mut f, mut a, mut r) = (vec![], vec![], vec![]);
        for i in 0..n {
            let mut c = Command::new(&bins.floor_write);
            f.push(ms(run_ok(c.arg(&fl), &[0]).wall));
            let note = format!("sweep note {i}");
            a.push(ms(run_ok(
                &mut pair(&[
                    "note",
                    nt.to_str().unwrap(),
                    "--agent",
                    "r1",
                    "--section",
                    "Evidence",
                    "--note",
                    &note,
                ]),
                &[0],
            )
            .wall));
            let cur = fs::read(&rw).unwrap();
            let sha = sha256_hex(&cur);
            let mut new = cur;
            new.extend_from_slice(format!("raw line {i}\n").as_bytes());
            fs::write(&content, &new).unwrap();
            drop(new);
            r.push(ms(run_ok(
                &mut pair(&[
                    "write",
                    rw.to_str().unwrap(),
                    "--content-file",
                    content.to_str().unwrap(),
                    "--expect-sha256",
                    &sha,
                    "--operation",
                    "bench",
                ]),
                &[0],
            )
            .wall));
        }
        line(
            &mut detail,
            &format!("sweep {label}: floor write"),
            &f,
            "ms",
        );
        line(&mut detail, &format!("sweep {label}: pair note"), &a, "ms");
        line(
            &mut detail,
            &format!("sweep {label}: pair write (raw)"),
            &r,
            "ms",
        );
        for (name, v) in [("note", &a), ("write (raw)", &r)] {
            let ratio = median(v) / median(&f);
            rows.push(Row {
                figure: format!("{label} board: pair {name} vs durable-write floor"),
                target: "≤ 1.5×".into(),
                measured: format!("{:.2} ms vs {:.2} ms", median(v), median(&f)),
                ratio: format!("{ratio:.2}×"),
                verdict: verdict(ratio <= 1.5),
            });
        }
        for p in [&fl, &nt, &rw, &content] {
            let _ = fs::remove_file(p);
        }
    }
    if sweep_only {
        print_rows(&rows, &detail);
        return;
    }

    // --- Reads: poll against the exec+read floor; 1 KiB body against 50 MiB body. ---
    let n = reps(300);
    eprintln!("reads: {n} repetitions each");
    let (mut fr, mut po, mut fr_big, mut po_big) = (vec![], vec![], vec![], vec![]);
    for _ in 0..n {
        let mut c = Command::new(&bins.floor_read);
        fr.push(ms(run_ok(c.arg(&base), &[0]).wall));
        po.push(ms(
            run_ok(&mut pair(&["poll", b, "--agent", "r2"]), &[0]).wall
        ));
        let mut c = Command::new(&bins.floor_read);
        fr_big.push(ms(run_ok(c.arg(&big), &[0]).wall));
        po_big.push(ms(run_ok(
            &mut pair(&["poll", big.to_str().unwrap(), "--agent", "r2"]),
            &[0],
        )
        .wall));
    }
    line(&mut detail, "floor exec+read (1 KiB body)", &fr, "ms");
    line(&mut detail, "pair poll (1 KiB body)", &po, "ms");
    line(&mut detail, "floor exec+read (50 MiB body)", &fr_big, "ms");
    line(&mut detail, "pair poll (50 MiB body)", &po_big, "ms");
    let r = median(&po) / median(&fr);
    rows.push(Row {
        figure: "poll vs exec+read floor (1 KiB body)".into(),
        target: "≤ 1.5×".into(),
        measured: format!("{:.2} ms vs {:.2} ms", median(&po), median(&fr)),
        ratio: format!("{r:.2}×"),
        verdict: verdict(r <= 1.5),
    });
    let r = median(&po_big) / median(&po);
    rows.push(Row {
        figure: "poll, 50 MiB body vs 1 KiB body".into(),
        target: "≤ 1.2×".into(),
        measured: format!("{:.2} ms vs {:.2} ms", median(&po_big), median(&po)),
        ratio: format!("{r:.2}×"),
        verdict: verdict(r <= 1.2),
    });

    // --- Writes: note, verdict, raw write against the durable-write floor. ---
    let n = reps(100);
    eprintln!("writes: {n} repetitions each");
    let (fw_p, note_p, verdict_p, raw_p) = (
        copy("floor.md"),
        copy("note.md"),
        copy("verdict.md"),
        copy("raw.md"),
    );
    let content = dir.join("content.md");
    let (mut fw, mut nt, mut vd, mut rw) = (vec![], vec![], vec![], vec![]);
    for i in 0..n {
        let mut c = Command::new(&bins.floor_write);
        fw.push(ms(run_ok(c.arg(&fw_p), &[0]).wall));
        let note = format!("note {i}");
        nt.push(ms(run_ok(
            &mut pair(&[
                "note",
                note_p.to_str().unwrap(),
                "--agent",
                "r1",
                "--section",
                "Evidence",
                "--note",
                &note,
            ]),
            &[0],
        )
        .wall));
        let verdict = if i % 2 == 0 {
            "COMMENT"
        } else {
            "CHANGES_REQUESTED"
        };
        vd.push(ms(run_ok(
            &mut pair(&[
                "verdict",
                verdict_p.to_str().unwrap(),
                "--agent",
                "r1",
                verdict,
                "--revision",
                "1",
                "--note",
                &note,
            ]),
            &[0],
        )
        .wall));
        // Raw write: the current file plus one appended line, compare-and-swap on its hash.
        let cur = fs::read(&raw_p).unwrap();
        let sha = sha256_hex(&cur);
        let mut new = cur;
        new.extend_from_slice(format!("raw line {i}\n").as_bytes());
        fs::write(&content, &new).unwrap();
        rw.push(ms(run_ok(
            &mut pair(&[
                "write",
                raw_p.to_str().unwrap(),
                "--content-file",
                content.to_str().unwrap(),
                "--expect-sha256",
                &sha,
                "--operation",
                "bench",
            ]),
            &[0],
        )
        .wall));
    }
    line(
        &mut detail,
        "floor exec+flock+read+write+fsync+rename",
        &fw,
        "ms",
    );
    line(&mut detail, "pair note", &nt, "ms");
    line(&mut detail, "pair verdict", &vd, "ms");
    line(&mut detail, "pair write (raw)", &rw, "ms");
    for (name, v) in [("note", &nt), ("verdict", &vd), ("write (raw)", &rw)] {
        let r = median(v) / median(&fw);
        rows.push(Row {
            figure: format!("pair {name} vs durable-write floor"),
            target: if name == "write (raw)" {
                "(≤ 1.5×, informative)".into()
            } else {
                "≤ 1.5×".into()
            },
            measured: format!("{:.2} ms vs {:.2} ms", median(v), median(&fw)),
            ratio: format!("{r:.2}×"),
            verdict: verdict(r <= 1.5),
        });
    }

    // --- Throughput: 8 concurrent writers. ---
    let per = reps(25);
    let writers = 8;
    let conc = |floor: bool| -> f64 {
        let p = Arc::new(copy(if floor { "conc-floor.md" } else { "conc.md" }));
        let t0 = Instant::now();
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let p = p.clone();
                let pair_bin = bins.pair.clone();
                let floor_bin = bins.floor_write.clone();
                thread::spawn(move || {
                    let agent = ["doer", "r1", "r2"][w % 3];
                    for i in 0..per {
                        let mut c = if floor {
                            let mut c = Command::new(&floor_bin);
                            c.arg(&*p);
                            c
                        } else {
                            let mut c = Command::new(&pair_bin);
                            c.args(["note", p.to_str().unwrap(), "--agent", agent])
                                .args(["--section", "Evidence", "--note"])
                                .arg(format!("writer {w} note {i}"));
                            c
                        };
                        run_ok(&mut c, &[0]);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        (writers * per) as f64 / t0.elapsed().as_secs_f64()
    };
    let floor_tp = conc(true);
    let pair_tp = conc(false);
    let s = format!(
        "8 concurrent writers x {per}: floor {floor_tp:.1} writes/s, pair note {pair_tp:.1} writes/s"
    );
    eprintln!("{s}");
    detail.push(s);
    rows.push(Row {
        figure: "8 concurrent `pair note` writers, throughput".into(),
        target: "(informative)".into(),
        measured: format!("{pair_tp:.0} writes/s vs floor {floor_tp:.0} writes/s"),
        ratio: format!("{:.2}× floor", pair_tp / floor_tp),
        verdict: "-",
    });

    // --- Handoff: a committed write wakes a waiting `poll --wait`. ---
    // S0: r2 pending (the doer waits); S1: r2 has commented, the round is complete and the
    // phase is PLAN_CHANGES_REQUESTED (the doer's turn). S1 comes from a real `pair verdict`.
    let hand = copy("handoff.md");
    let s0 = small.clone();
    run_ok(
        &mut pair(&[
            "verdict",
            hand.to_str().unwrap(),
            "--agent",
            "r2",
            "COMMENT",
            "--revision",
            "1",
            "--note",
            "done",
        ]),
        &[0],
    );
    let s1 = fs::read(&hand).unwrap();
    let n = reps(30);
    eprintln!("handoff: {n} repetitions each");
    let settle = Duration::from_millis(150);
    let waiter = || {
        spawn(&mut pair(&[
            "poll",
            hand.to_str().unwrap(),
            "--agent",
            "doer",
            "--wait",
            "--timeout",
            "30",
        ]))
    };
    let (mut h_rename, mut h_proc) = (vec![], vec![]);
    for _ in 0..n {
        // From the rename (done here, in the harness) to the waiter's exit.
        replace(&hand, &s0);
        let w = waiter();
        thread::sleep(settle);
        let tmp = hand.with_extension("handoff-tmp");
        fs::write(&tmp, &s1).unwrap();
        fs::File::open(&tmp).unwrap().sync_all().unwrap();
        let t0 = Instant::now();
        fs::rename(&tmp, &hand).unwrap();
        let (code, _) = reap(w.id());
        h_rename.push(ms(t0.elapsed()));
        assert_eq!(code, 0, "the waiter should see its turn");

        // From just before a `pair verdict` process starts to the waiter's exit.
        replace(&hand, &s0);
        let w = waiter();
        thread::sleep(settle);
        let t0 = Instant::now();
        let writer = spawn(&mut pair(&[
            "verdict",
            hand.to_str().unwrap(),
            "--agent",
            "r2",
            "COMMENT",
            "--revision",
            "1",
            "--note",
            "done",
        ]));
        let (code, _) = reap(w.id());
        h_proc.push(ms(t0.elapsed()));
        assert_eq!(code, 0, "the waiter should see its turn");
        let (code, _) = reap(writer.id());
        assert_eq!(code, 0, "the verdict should succeed");
    }
    line(
        &mut detail,
        "handoff: rename -> waiter exit",
        &h_rename,
        "ms",
    );
    line(
        &mut detail,
        "handoff: writer start -> waiter exit",
        &h_proc,
        "ms",
    );
    rows.push(Row {
        figure: "handoff: rename → waiting `poll --wait` exits".into(),
        target: "≤ 20 ms".into(),
        measured: format!("{:.2} ms (p90 {:.2})", median(&h_rename), p90(&h_rename)),
        ratio: "-".into(),
        verdict: verdict(median(&h_rename) <= 20.0),
    });
    rows.push(Row {
        figure: "handoff: `pair verdict` starts → waiter exits".into(),
        target: "≤ 20 ms".into(),
        measured: format!("{:.2} ms (p90 {:.2})", median(&h_proc), p90(&h_proc)),
        ratio: "-".into(),
        verdict: verdict(median(&h_proc) <= 20.0),
    });

    // --- Peak RSS of a write on a 10 MiB blackboard. ---
    let n = reps(20).min(20);
    let size = fs::metadata(&ten).unwrap().len() as f64 / 1024.0;
    let (mut rss_note, mut rss_floor, mut rss_poll, mut rss_status) =
        (vec![], vec![], vec![], vec![]);
    let ten_floor = dir.join("ten10-floor.md");
    fs::copy(&ten, &ten_floor).unwrap();
    let t = ten.to_str().unwrap();
    for i in 0..n {
        let mut c = Command::new(&bins.floor_write);
        rss_floor.push(run_ok(c.arg(&ten_floor), &[0]).maxrss_kb as f64);
        let note = format!("note {i}");
        rss_note.push(
            run_ok(
                &mut pair(&[
                    "note",
                    t,
                    "--agent",
                    "r1",
                    "--section",
                    "Evidence",
                    "--note",
                    &note,
                ]),
                &[0],
            )
            .maxrss_kb as f64,
        );
        rss_poll.push(run_ok(&mut pair(&["poll", t, "--agent", "r2"]), &[0]).maxrss_kb as f64);
        rss_status.push(run_ok(&mut pair(&["status", t]), &[0]).maxrss_kb as f64);
    }
    line(
        &mut detail,
        "peak RSS, floor write (10 MiB file)",
        &rss_floor,
        "KiB",
    );
    line(
        &mut detail,
        "peak RSS, pair note (10 MiB file)",
        &rss_note,
        "KiB",
    );
    line(
        &mut detail,
        "peak RSS, pair poll (10 MiB file)",
        &rss_poll,
        "KiB",
    );
    line(
        &mut detail,
        "peak RSS, pair status (10 MiB file)",
        &rss_status,
        "KiB",
    );
    let own = {
        // SAFETY: getrusage fills in plain data.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        ru.ru_maxrss
    };
    let s =
        format!("peak RSS of this harness (a lower bound on every child's ru_maxrss): {own} KiB");
    eprintln!("{s}");
    detail.push(s);
    let limit = 3.0 * size + 4096.0;
    let worst = rss_note.iter().cloned().fold(0.0, f64::max);
    rows.push(Row {
        figure: "peak RSS of `pair note` on a 10 MiB blackboard".into(),
        target: format!("≤ 3 × size + 4 MiB = {:.1} MiB", limit / 1024.0),
        measured: format!(
            "{:.1} MiB (max {:.1}; floor {:.1})",
            median(&rss_note) / 1024.0,
            worst / 1024.0,
            median(&rss_floor) / 1024.0
        ),
        ratio: format!("{:.2}× size", median(&rss_note) / size),
        verdict: verdict(worst <= limit),
    });

    // --- Idle CPU of a waiting poll. ---
    let idle = copy("idle.md");
    let secs = format!("{idle_secs}");
    let s = run_ok(
        &mut pair(&[
            "poll",
            idle.to_str().unwrap(),
            "--agent",
            "doer",
            "--wait",
            "--timeout",
            &secs,
        ]),
        &[10],
    );
    let s_line = format!(
        "idle poll --wait for {idle_secs} s: user+sys {:.2} ms, wall {:.0} ms",
        ms(s.cpu),
        ms(s.wall)
    );
    eprintln!("{s_line}");
    detail.push(s_line);
    rows.push(Row {
        figure: format!("CPU of an idle `poll --wait` over {idle_secs} s"),
        target: "~0 (≤ 10 ms)".into(),
        measured: format!("{:.1} ms user+sys", ms(s.cpu)),
        ratio: format!("{:.4}% of a core", 100.0 * s.cpu.as_secs_f64() / idle_secs),
        verdict: verdict(ms(s.cpu) <= 10.0),
    });

    print_rows(&rows, &detail);
    if keep {
        let kept = root.keep();
        eprintln!("kept {}", kept.display());
    }
}

/// The results table (Markdown, for docs/PERFORMANCE.md) and the detail lines.
fn print_rows(rows: &[Row], detail: &[String]) {
    println!();
    println!("| figure | target | measured (median) | ratio | |");
    println!("|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            r.figure, r.target, r.measured, r.ratio, r.verdict
        );
    }
    println!();
    println!("```");
    for d in detail {
        println!("{d}");
    }
    println!("```");
}

/// Bytes up to and including the closing `---` line.
fn frontmatter_len(bytes: &[u8]) -> usize {
    let mut pos = 0;
    let mut first = true;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        pos += line.len();
        if !first && line == b"---\n" {
            return pos;
        }
        first = false;
    }
    pos
}

/// `--startup`: the fixed cost of starting `pair`, for `target/release/pair` and each variant
/// named in `PAIR_BENCH_ALT` (`label=path`, separated by `:`), interleaved with the exec+read
/// floor on the same 1 KiB blackboard: `pair --version` (no file) and `pair poll`.
fn startup(bins: &Bins, dir: &Path, board: &Path, n: usize) {
    let mut variants: Vec<(String, PathBuf)> = vec![("release".into(), bins.pair.clone())];
    if let Ok(alt) = std::env::var("PAIR_BENCH_ALT") {
        for item in alt.split(':').filter(|s| !s.is_empty()) {
            let (label, path) = item.split_once('=').expect("PAIR_BENCH_ALT: label=path");
            variants.push((label.to_string(), PathBuf::from(path)));
        }
    }
    let b = board.to_str().unwrap();
    let mut floor = Vec::new();
    let mut version: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    let mut poll: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..n {
        floor.push(ms(run_ok(
            Command::new(&bins.floor_read).arg(b).current_dir(dir),
            &[0],
        )
        .wall));
        for (i, (_, path)) in variants.iter().enumerate() {
            let mut v = Command::new(path);
            v.arg("--version").current_dir(dir);
            version[i].push(ms(run_ok(&mut v, &[0]).wall));
            let mut p = Command::new(path);
            p.args(["poll", b, "--agent", "r2"]).current_dir(dir);
            poll[i].push(ms(run_ok(&mut p, &[0, 10]).wall));
        }
    }
    let f = median(&floor);
    println!("startup, {n} interleaved runs each (medians; ratio to the exec+read floor):");
    println!(
        "{:<36} median {:>7.3} ms  p90 {:>7.3} ms",
        "floor exec+read (1 KiB)",
        f,
        p90(&floor)
    );
    for (i, (label, _)) in variants.iter().enumerate() {
        for (what, v) in [("--version", &version[i]), ("poll (1 KiB)", &poll[i])] {
            println!(
                "{:<36} median {:>7.3} ms  p90 {:>7.3} ms  {:.2}x floor",
                format!("{label}: pair {what}"),
                median(v),
                p90(v),
                median(v) / f
            );
        }
    }
}

/// The release binaries next to this one (`target/release/examples/bench_pair` →
/// `target/release/pair`), built with cargo if missing.
fn find_bins() -> Bins {
    let me = std::env::current_exe().unwrap();
    let examples = me.parent().unwrap().to_path_buf();
    let release = examples.parent().unwrap().to_path_buf();
    let bins = Bins {
        pair: release.join("pair"),
        floor_read: examples.join("floor_read"),
        floor_write: examples.join("floor_write"),
    };
    if !(bins.pair.exists() && bins.floor_read.exists() && bins.floor_write.exists()) {
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--release", "--bin", "pair"])
            .args(["--example", "floor_read", "--example", "floor_write"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build");
        assert!(status.success(), "cargo build failed");
    }
    eprintln!(
        "binaries: {}, {}, {}",
        bins.pair.display(),
        bins.floor_read.display(),
        bins.floor_write.display()
    );
    bins
}
