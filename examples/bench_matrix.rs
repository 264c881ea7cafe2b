//! The cost sweep: `poll --json` and `note` over board size × ledger size × store, against the
//! floors measured in the same run. Run it with `scripts/bench.sh --matrix [--quick]`, which
//! builds everything in release first.
//!
//! * Board sizes: 4 KB, 100 KB, 1.3 MB, 10 MB, 50 MB. Ledger sizes: 0, 30, 300 and 1,000
//!   objections. A cell whose ledger alone makes the board larger than its size is left out
//!   (1,000 objections are ~650 KB of frontmatter and records).
//! * Stores: a file, and a git board (`git+file://` on a local bare repository).
//! * Floors: `examples/floor_read.rs` (exec + read the file + print) for `poll`, and
//!   `examples/floor_write.rs` (exec + flock + read + write temp + fsync + rename + fsync dir) for
//!   `note`, each run on a copy of the same board, interleaved with `pair` so both see the same
//!   machine state. A git board's figures are against the same file floors.
//! * The floors a command meets whatever it does, in a table of their own: pair's start-up
//!   (`pair --version`) for `poll`, and for `note` the durable write that also takes the SHA-256
//!   of the old content and of the new (`floor_write FILE --sha256`), which a write whose journal
//!   records both (`before`, `after`) must.
//! * Wall: the median of the paired runs of each cell, and the ratio of the medians.
//! * When `valgrind` is on the PATH, the instructions of `pair` and of the floor (callgrind,
//!   the process itself, not the git processes it starts) along the two axes: every board size
//!   at 0 objections and every ledger size on the smallest board that holds it. `--quick` stops
//!   at 1.3 MB. When `strace` is on the PATH, the git processes a git board's command starts.
//!
//! The boards with a ledger are made by `pair` itself (init, register, advance, submit a plan,
//! then `object` 1,000 times, a copy at 0, 30, 300 and 1,000), which takes minutes: they are kept
//! in `PAIR_BENCH_BOARDS` (default `target/bench-boards`) and made again only when `pair validate`
//! refuses one. The body is then filled to the cell's size with plain lines in a section of its
//! own.
//!
//! Options: `--quick` (3 pairs a cell; git boards and callgrind up to 1.3 MB; about three minutes
//! once the ledger boards are made), `--reps N` (pairs
//! a cell, default 9 at 4 KB down to 5 at 50 MB), `--no-git`, `--no-callgrind`, `--keep`.
//! `PAIR_BENCH_PAIR` names another `pair` binary to measure (the floors stay).
//! A benchmark: it reports and never fails on a missed goal.

// Children are reaped with `wait4`, not `Child::wait`.
#![allow(clippy::zombie_processes)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SIZES: [(&str, usize); 5] = [
    ("4 KB", 4 << 10),
    ("100 KB", 100 << 10),
    ("1.3 MB", 1300 << 10),
    ("10 MB", 10 << 20),
    ("50 MB", 50 << 20),
];
const LEDGERS: [usize; 4] = [0, 30, 300, 1000];

struct Bins {
    pair: PathBuf,
    floor_read: PathBuf,
    floor_write: PathBuf,
}

fn reap(pid: u32) -> i32 {
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        if r == pid as libc::pid_t {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            panic!("waitpid: {}", std::io::Error::last_os_error());
        }
    }
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    }
}

/// Run a command to completion; its wall time in ms. Panics on an exit code not in `ok`.
fn timed(cmd: &mut Command, ok: &[i32]) -> f64 {
    match try_timed(cmd, ok) {
        Ok(ms) => ms,
        Err(e) => panic!("{e}"),
    }
}

/// [`timed`], saying why when the exit code is not in `ok`.
fn try_timed(cmd: &mut Command, ok: &[i32]) -> Result<f64, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove("PAIR_AGENT");
    let t0 = Instant::now();
    let child = cmd.spawn().expect("spawn");
    let code = reap(child.id());
    let wall = t0.elapsed();
    if !ok.contains(&code) {
        let out = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).output();
        return Err(format!("{cmd:?} exited {code} (expected {ok:?}): {out:?}"));
    }
    Ok(wall.as_secs_f64() * 1e3)
}

fn argv(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn on_path(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Instructions of one run under callgrind (the process and its threads, not its children).
fn instructions(cmd: &Command) -> Option<u64> {
    let mut c = Command::new("valgrind");
    c.args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_remove("PAIR_AGENT")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    let out = c.output().ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|n| n.trim().parse().ok())
}

/// The git processes one run starts (`strace -f`), counted by their successful `execve` of a
/// program named `git*`.
fn git_processes(cmd: &Command, dir: &Path) -> Option<usize> {
    let prefix = dir.join("strace");
    let _ = fs::remove_dir_all(&prefix);
    fs::create_dir_all(&prefix).ok()?;
    let mut c = Command::new("strace");
    c.args([
        "-f",
        "-ff",
        "-qq",
        "-e",
        "trace=execve",
        "-e",
        "signal=none",
        "-o",
    ])
    .arg(prefix.join("t"))
    .arg(cmd.get_program())
    .args(cmd.get_args())
    .env_remove("PAIR_AGENT")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.status().ok()?;
    let mut n = 0;
    for e in fs::read_dir(&prefix).ok()?.flatten() {
        let text = fs::read_to_string(e.path()).unwrap_or_default();
        let git = text.lines().any(|l| {
            l.starts_with("execve(\"")
                && l.ends_with("= 0")
                && l.split('"')
                    .nth(1)
                    .and_then(|p| p.rsplit('/').next())
                    .is_some_and(|b| b.starts_with("git"))
        });
        n += usize::from(git);
    }
    Some(n)
}

/// Make (or reuse) the ledger boards: one per ledger size, made by `pair` itself.
fn ledger_boards(pair: &Path, cache: &Path) -> Vec<PathBuf> {
    let boards: Vec<PathBuf> = LEDGERS
        .iter()
        .map(|n| cache.join(format!("ledger-{n}.md")))
        .collect();
    let valid = boards.iter().all(|b| {
        b.exists()
            && Command::new(pair)
                .args(["validate", "-q"])
                .arg(b)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
    });
    if valid {
        eprintln!("ledger boards: reusing {}", cache.display());
        return boards;
    }
    fs::create_dir_all(cache).unwrap();
    let work = cache.join("making.md");
    let _ = fs::remove_file(&work);
    let w = work.to_str().unwrap();
    let run = |args: &[&str]| {
        timed(Command::new(pair).args(args).current_dir(cache), &[0]);
    };
    eprintln!(
        "ledger boards: making them in {} (1,000 `pair object`, minutes)",
        cache.display()
    );
    run(&["init", w, "--reviewers", "alice", "--max-rounds", "3", "-q"]);
    run(&["register", w, "--agent", "alice", "-q"]);
    run(&[
        "advance",
        w,
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
        "-q",
    ]);
    run(&[
        "submit",
        w,
        "--agent",
        "doer",
        "plan",
        "--note",
        "the plan",
        "--user-approved",
        "-q",
    ]);
    let mut made = 0;
    for (n, board) in LEDGERS.iter().zip(&boards) {
        while made < *n {
            made += 1;
            let (title, evidence, fix) = (
                format!("objection {made}"),
                format!("evidence {made}"),
                format!("fix {made}"),
            );
            run(&[
                "object",
                w,
                "--agent",
                "alice",
                "--severity",
                "blocking",
                "--anchor",
                "## Plan Revisions",
                "--title",
                &title,
                "--evidence",
                &evidence,
                "--fix",
                &fix,
                "-q",
            ]);
            if made % 100 == 0 {
                eprintln!("  {made} objections");
            }
        }
        fs::copy(&work, board).unwrap();
    }
    for suffix in ["", ".lock", ".lock.owner.json"] {
        let _ = fs::remove_file(cache.join(format!("making.md{suffix}")));
    }
    boards
}

/// A board of about `size` bytes: the ledger board, its body filled with plain lines in a
/// section of its own. `None` when the ledger board alone is larger.
fn filled(ledger: &[u8], size: usize) -> Option<Vec<u8>> {
    if ledger.len() > size {
        return None;
    }
    let mut out = Vec::with_capacity(size + 128);
    out.extend_from_slice(ledger);
    out.extend_from_slice(b"\n## Validation\n\n");
    let line = b"A long record of everything that happened, line after line of it.\n";
    while out.len() < size {
        out.extend_from_slice(line);
    }
    Some(out)
}

fn fmt_ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn fmt_instr(n: Option<u64>) -> String {
    match n {
        None => "".into(),
        Some(n) if n >= 1_000_000_000 => format!("{:.2} G", n as f64 / 1e9),
        Some(n) => format!("{:.2} M", n as f64 / 1e6),
    }
}

struct Cell {
    store: &'static str,
    size: &'static str,
    ledger: usize,
    bytes: usize,
    poll: f64,
    floor_read: f64,
    note: f64,
    floor_write: f64,
    /// `floor_write --sha256`: the floor with the two hashes a recorded write must take.
    floor_hashed: f64,
    /// `pair --version`: pair's own start-up, the floor of any of its commands.
    startup: f64,
    instr: Option<[Option<u64>; 4]>,
    git: Option<(usize, usize)>,
    /// Why a git cell has no figures.
    refused: Option<&'static str>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |a: &str| args.iter().any(|x| x == a);
    let quick = has("--quick");
    let reps_opt: Option<usize> = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok());
    let callgrind = !has("--no-callgrind") && on_path("valgrind");
    let strace = on_path("strace");
    let git = !has("--no-git") && on_path("git");

    let me = std::env::current_exe().unwrap();
    let examples = me.parent().unwrap().to_path_buf();
    let release = examples.parent().unwrap().to_path_buf();
    let bins = Bins {
        pair: std::env::var_os("PAIR_BENCH_PAIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| release.join("pair")),
        floor_read: examples.join("floor_read"),
        floor_write: examples.join("floor_write"),
    };
    let pair = fs::canonicalize(&bins.pair).expect("the pair binary");
    let version = Command::new(&pair)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    // Built together with the examples, `pair` gets the test-only fault injection (the
    // examples' dev-dependency turns it on): say so, its writes are split in two.
    let faults = fs::read(&pair)
        .map(|b| memchr::memmem::find(&b, b"PAIR_FAULT").is_some())
        .unwrap_or(false);
    let version = if faults {
        eprintln!(
            "warning: {} has fault injection compiled in",
            pair.display()
        );
        format!("{version} (with the test-only fault injection: build it alone)")
    } else {
        version
    };
    let cache = std::env::var_os("PAIR_BENCH_BOARDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| release.parent().unwrap().join("bench-boards"));
    let ledgers: Vec<Vec<u8>> = ledger_boards(&pair, &cache)
        .iter()
        .map(|b| fs::read(b).unwrap())
        .collect();

    let root = match std::env::var_os("PAIR_BENCH_DIR") {
        Some(d) => tempfile::Builder::new()
            .prefix("pair-matrix-")
            .tempdir_in(d)
            .unwrap(),
        None => tempfile::Builder::new()
            .prefix("pair-matrix-")
            .tempdir()
            .unwrap(),
    };
    let dir = root.path().to_path_buf();
    eprintln!("bench dir: {}", dir.display());
    let remote = dir.join("remote.git");
    if git {
        let ok = Command::new("git")
            .args(["init", "-q", "--bare"])
            .arg(&remote)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init --bare");
    }
    let pair_cmd = |args: &[&str]| {
        let mut c = Command::new(&pair);
        c.args(args)
            .current_dir(&dir)
            .env("PAIR_CACHE_DIR", dir.join("cache"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        c
    };
    let t_start = Instant::now();
    let mut cells: Vec<Cell> = Vec::new();
    for (size_label, size) in SIZES {
        for (li, ledger) in LEDGERS.iter().enumerate() {
            let Some(content) = filled(&ledgers[li], size) else {
                continue;
            };
            let n = reps_opt.unwrap_or(match (quick, size) {
                (true, _) => 3,
                (false, s) if s >= 50 << 20 => 5,
                (false, s) if s >= 10 << 20 => 7,
                _ => 9,
            });
            let name = format!("c{size}-{ledger}");
            let path = |what: &str| dir.join(format!("{name}-{what}.md"));
            let (read_p, write_p, hashed_p, poll_p, note_p) = (
                path("fr"),
                path("fw"),
                path("fh"),
                path("poll"),
                path("note"),
            );
            for p in [&read_p, &write_p, &hashed_p, &poll_p, &note_p] {
                fs::write(p, &content).unwrap();
            }
            let git_board = format!("git+file://{}#refs/pair/{name}:task.md", remote.display());
            // A git board of 10 MB and more takes seconds a write (git compresses every blob):
            // the quick run leaves those cells to the full one.
            let mut git = git && !(quick && size > 1300 << 10);
            // A git board this large may be more than the remote accepts within pair's limit
            // for one git process: the cell then says so instead of a figure.
            let mut git_refused = None;
            if git
                && let Err(e) = try_timed(
                    &mut pair_cmd(&["migrate", poll_p.to_str().unwrap(), &git_board]),
                    &[0],
                )
            {
                eprintln!("git board refused: {e}");
                git_refused = Some(e);
                git = false;
            }
            drop(content);
            let poll_args = |b: &str| -> Vec<String> {
                ["poll", b, "--agent", "alice", "--json"]
                    .map(String::from)
                    .to_vec()
            };
            let note_args = |b: &str, i: usize| -> Vec<String> {
                vec![
                    "note".into(),
                    b.into(),
                    "--agent".into(),
                    "doer".into(),
                    "--section".into(),
                    "Evidence".into(),
                    "--note".into(),
                    format!("note {i} of the sweep"),
                ]
            };
            let poll_ok = [0, 10, 11, 12];
            // Warm the page cache and the git board's local cache.
            timed(
                &mut pair_cmd(&argv(&poll_args(poll_p.to_str().unwrap()))),
                &poll_ok,
            );
            if git && let Err(e) = try_timed(&mut pair_cmd(&argv(&poll_args(&git_board))), &poll_ok)
            {
                eprintln!("git poll failed: {e}");
                git_refused = Some(e);
                git = false;
            }
            let (mut fr, mut po, mut gpo, mut fw, mut no, mut gno) =
                (vec![], vec![], vec![], vec![], vec![], vec![]);
            let (mut fh, mut up) = (vec![], vec![]);
            for i in 0..n {
                up.push(timed(&mut pair_cmd(&["--version"]), &[0]));
                fr.push(timed(Command::new(&bins.floor_read).arg(&read_p), &[0]));
                po.push(timed(
                    &mut pair_cmd(&argv(&poll_args(poll_p.to_str().unwrap()))),
                    &poll_ok,
                ));
                if git {
                    match try_timed(&mut pair_cmd(&argv(&poll_args(&git_board))), &poll_ok) {
                        Ok(ms) => gpo.push(ms),
                        Err(e) => {
                            eprintln!("git poll failed: {e}");
                            git_refused = Some(e);
                            git = false;
                        }
                    }
                }
                fw.push(timed(Command::new(&bins.floor_write).arg(&write_p), &[0]));
                fh.push(timed(
                    Command::new(&bins.floor_write)
                        .arg(&hashed_p)
                        .arg("--sha256"),
                    &[0],
                ));
                no.push(timed(
                    &mut pair_cmd(&argv(&note_args(note_p.to_str().unwrap(), i))),
                    &[0],
                ));
                if git {
                    match try_timed(&mut pair_cmd(&argv(&note_args(&git_board, i))), &[0]) {
                        Ok(ms) => gno.push(ms),
                        Err(e) => {
                            eprintln!("git note failed: {e}");
                            git_refused = Some(e);
                            git = false;
                        }
                    }
                }
            }
            let on_axis = *ledger == 0 || cells.iter().all(|c| c.ledger != *ledger);
            let instr = (callgrind && on_axis && (!quick || size <= 1300 << 10)).then(|| {
                let mut fr_c = Command::new(&bins.floor_read);
                fr_c.arg(&read_p);
                let mut fw_c = Command::new(&bins.floor_write);
                fw_c.arg(&write_p);
                [
                    instructions(&pair_cmd(&argv(&poll_args(poll_p.to_str().unwrap())))),
                    instructions(&fr_c),
                    instructions(&pair_cmd(&argv(&note_args(note_p.to_str().unwrap(), n)))),
                    instructions(&fw_c),
                ]
            });
            let bytes = fs::metadata(&poll_p).map(|m| m.len() as usize).unwrap_or(0);
            let (mfr, mfw) = (median(&fr), median(&fw));
            cells.push(Cell {
                store: "file",
                size: size_label,
                ledger: *ledger,
                bytes,
                poll: median(&po),
                floor_read: mfr,
                note: median(&no),
                floor_write: mfw,
                floor_hashed: median(&fh),
                startup: median(&up),
                instr,
                git: None,
                refused: None,
            });
            if let Some(e) = &git_refused {
                let why = if e.contains("pair stopped git") {
                    "git stopped at pair's time limit"
                } else {
                    "the git write failed"
                };
                cells.push(Cell {
                    store: "git",
                    size: size_label,
                    ledger: *ledger,
                    bytes: 0,
                    poll: f64::NAN,
                    floor_read: mfr,
                    note: f64::NAN,
                    floor_write: mfw,
                    floor_hashed: f64::NAN,
                    startup: f64::NAN,
                    instr: None,
                    git: None,
                    refused: Some(why),
                });
            } else if git {
                let counts = strace.then(|| {
                    let p = git_processes(&pair_cmd(&argv(&poll_args(&git_board))), &dir);
                    let w = git_processes(&pair_cmd(&argv(&note_args(&git_board, n))), &dir);
                    (p.unwrap_or(0), w.unwrap_or(0))
                });
                cells.push(Cell {
                    store: "git",
                    size: size_label,
                    ledger: *ledger,
                    bytes,
                    poll: median(&gpo),
                    floor_read: mfr,
                    note: median(&gno),
                    floor_write: mfw,
                    floor_hashed: f64::NAN,
                    startup: f64::NAN,
                    instr: None,
                    git: counts,
                    refused: None,
                });
            }
            for p in [&read_p, &write_p, &hashed_p, &poll_p, &note_p] {
                let _ = fs::remove_file(p);
            }
            eprintln!(
                "{size_label:>7} {ledger:>5} objections: {n} pairs, {:.0} s so far",
                t_start.elapsed().as_secs_f64()
            );
        }
    }
    print_table(&cells, &version, quick, t_start.elapsed());
    if has("--keep") {
        let kept = root.keep();
        eprintln!("kept {}", kept.display());
    }
}

fn print_table(cells: &[Cell], version: &str, quick: bool, took: Duration) {
    println!();
    println!(
        "{version}; {} CPUs; {}; {:.0} s",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if quick { "--quick" } else { "full" },
        took.as_secs_f64()
    );
    println!();
    println!(
        "| store | board | objections | `poll --json` ms | floor ms | × floor | × 0 obj. | `note` ms | \
         floor ms | × floor | × 0 obj. | git processes poll / note |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for c in cells {
        if let Some(why) = c.refused {
            println!(
                "| {} | {} | {} | {why} | | | | | | | | |",
                c.store, c.size, c.ledger
            );
            continue;
        }
        let base = cells
            .iter()
            .find(|b| b.store == c.store && b.size == c.size && b.ledger == 0)
            .unwrap_or(c);
        let vs0 = |a: f64, b: f64| {
            if c.ledger == 0 {
                "-".to_string()
            } else {
                format!("{:.2}", a / b)
            }
        };
        println!(
            "| {} | {} ({:.0} KB) | {} | {} | {} | {:.2} | {} | {} | {} | {:.2} | {} | {} |",
            c.store,
            c.size,
            c.bytes as f64 / 1024.0,
            c.ledger,
            fmt_ms(c.poll),
            fmt_ms(c.floor_read),
            c.poll / c.floor_read,
            vs0(c.poll, base.poll),
            fmt_ms(c.note),
            fmt_ms(c.floor_write),
            c.note / c.floor_write,
            vs0(c.note, base.note),
            c.git.map_or("-".to_string(), |(p, w)| format!("{p} / {w}")),
        );
    }
    println!();
    println!(
        "The floors a command meets whatever it does: `poll --json` against pair's own start-up \
         (`pair --version`), `note` against the durable write that also takes the SHA-256 of the \
         old content and of the new (`floor_write --sha256`), as a write whose journal records \
         both must."
    );
    println!();
    println!(
        "| board | objections | `poll --json` ms | `pair --version` ms | × | `note` ms | \
         hashed floor ms | × |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for c in cells.iter().filter(|c| c.store == "file") {
        println!(
            "| {} | {} | {} | {} | {:.2} | {} | {} | {:.2} |",
            c.size,
            c.ledger,
            fmt_ms(c.poll),
            fmt_ms(c.startup),
            c.poll / c.startup,
            fmt_ms(c.note),
            fmt_ms(c.floor_hashed),
            c.note / c.floor_hashed,
        );
    }
    if cells.iter().any(|c| c.instr.is_some()) {
        println!();
        println!(
            "| board | objections | `poll --json` instr. | floor | × floor | `note` instr. | \
             floor | × floor |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for c in cells {
            let Some([p, fr, w, fw]) = c.instr else {
                continue;
            };
            let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
                (Some(a), Some(b)) if b > 0 => format!("{:.1}", a as f64 / b as f64),
                _ => "".into(),
            };
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                c.size,
                c.ledger,
                fmt_instr(p),
                fmt_instr(fr),
                ratio(p, fr),
                fmt_instr(w),
                fmt_instr(fw),
                ratio(w, fw),
            );
        }
    }
}
