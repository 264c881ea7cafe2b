//! What the journal costs a write, measured in one run.
//!
//! Every write journals, so "a write without the journal" cannot be run; instead this measures,
//! interleaved on the same board, (a) a whole `pair note` process (spawn to exit, the journal
//! included) and (b) in this process, all the work the journal adds to a write: parsing the old
//! frontmatter for the record and [`pair::board::journal::seal`] (finding the section, hashing the file
//! without the record, asking `next` whose turn it is, rendering the line). The ratio is
//! `note / (note - journal)`: how much slower a write is than it would be without the journal.
//! It is measured on a fresh board and on one whose journal already holds 5,000 records.
//!
//! Run it with `scripts/bench.sh` (which builds it in release), or
//! `cargo build --release --bin pair --example bench_journal && target/release/examples/bench_journal`.
//! Options: `--reps N` (notes per board, default 200).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use pair::board::frontmatter::Timestamp;
use pair::board::journal::{Facts, Intent, seal};
use pair::law::validate;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Milliseconds the in-process journal work takes on these bytes.
fn journal_ms(bytes: &[u8]) -> f64 {
    let start = Instant::now();
    let old = validate::check_frontmatter_bytes(bytes).expect("a valid board");
    let intent = Intent {
        agent: Some("r1".into()),
        command: "note".into(),
        usage: Default::default(),
        repair: false,
        origin: Default::default(),
        transcript: None,
    };
    let facts = Facts {
        intent: &intent,
        old: Some(&old.parsed.fm),
        old_sha256: None,
        new: &old.parsed.fm,
        turn: pair::law::protocol::turn(&old.parsed.fm),
        wait_us: 0,
        now: Timestamp::now(),
        sign: None,
    };
    let sealed = seal(bytes.to_vec(), &facts).expect("sealed");
    let took = start.elapsed().as_secs_f64() * 1000.0;
    assert!(sealed.bytes.len() > bytes.len());
    took
}

fn run(pair: &Path, args: &[&str]) -> f64 {
    let start = Instant::now();
    let status = Command::new(pair)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run pair");
    let took = start.elapsed().as_secs_f64() * 1000.0;
    assert!(status.success(), "pair {args:?} failed");
    took
}

fn measure(pair: &Path, board: &Path, reps: usize, label: &str) {
    let b = board.to_str().unwrap();
    let (mut notes, mut journal) = (Vec::new(), Vec::new());
    for i in 0..reps {
        let bytes = std::fs::read(board).unwrap();
        journal.push(journal_ms(&bytes));
        let note = format!("note {i}");
        notes.push(run(
            pair,
            &[
                "note",
                b,
                "--agent",
                "r1",
                "--section",
                "Evidence",
                "--note",
                &note,
            ],
        ));
    }
    let (n, j) = (median(notes), median(journal));
    let size = std::fs::metadata(board).unwrap().len();
    println!(
        "{label:<38} note {n:>7.3} ms   journal work {j:>6.3} ms   with/without {:>5.3}   \
         (n={reps}, board {} KiB at the end)",
        n / (n - j),
        size / 1024
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(200usize);
    let me = std::env::current_exe().unwrap();
    let pair = me.parent().unwrap().parent().unwrap().join("pair");
    assert!(
        pair.exists(),
        "build pair in release first (scripts/bench.sh)"
    );
    let dir = tempfile::Builder::new()
        .prefix("pair-bench-journal-")
        .tempdir()
        .unwrap();
    let fresh = dir.path().join("fresh.md");
    let f = fresh.to_str().unwrap();
    run(&pair, &["init", f, "--reviewers", "r1", "--yolo"]);
    run(&pair, &["register", f, "--agent", "r1"]);
    measure(&pair, &fresh, reps, "fresh board");

    // A board whose journal holds 5,000 records, sealed in process like the store seals them.
    let long = dir.path().join("long.md");
    let mut bytes = std::fs::read(&fresh).unwrap();
    let mut old = validate::check_frontmatter_bytes(&bytes).unwrap().parsed.fm;
    let intent = Intent {
        agent: Some("r1".into()),
        command: "note".into(),
        usage: Default::default(),
        repair: false,
        origin: Default::default(),
        transcript: None,
    };
    for _ in 0..5000 {
        let facts = Facts {
            intent: &intent,
            old: Some(&old),
            old_sha256: None,
            new: &old,
            turn: pair::law::protocol::turn(&old),
            wait_us: 0,
            now: Timestamp::now(),
            sign: None,
        };
        let sealed = seal(bytes, &facts).unwrap();
        bytes = sealed.bytes;
        // The frontmatter now holds this write's seal, as the store's next write would read it.
        old.journal = sealed.seal;
    }
    std::fs::write(&long, &bytes).unwrap();
    measure(&pair, &long, reps, "journal of 5,000 records");
}
