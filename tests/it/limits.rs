//! Limits: boards and frontmatters over the size limit refused before they are read, inputs that
//! must be bounded regular files, and no write that makes a board larger than the limit.

use crate::common::files::{QUICK, mkfifo, note_args, pair_capped, pair_capped_at};
use crate::common::*;
use std::fs;
use std::time::Duration;

#[test]
fn input_files_must_be_regular_files_of_bounded_size() {
    let b = Board::minimal();
    let fifo = b.aux.path().join("fifo");
    mkfifo(&fifo);
    let huge = b.aux.path().join("huge.md");
    fs::File::create(&huge)
        .unwrap()
        .set_len(64 * 1024 * 1024 + 1)
        .unwrap();
    let new_board = b.aux.path().join("new.md");
    let nb = new_board.to_str().unwrap();
    let sha = sha256_hex(MINIMAL);
    let calls = |file: &str| -> Vec<Vec<String>> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        vec![
            s(&[
                "note",
                b.p(),
                "--agent",
                "doer",
                "--section",
                "Evidence",
                "--note-file",
                file,
            ]),
            s(&[
                "write",
                b.p(),
                "--content-file",
                file,
                "--expect-sha256",
                &sha,
            ]),
            s(&["init", nb, "--goal-file", file]),
            s(&["init", nb, "--template", file]),
        ]
    };
    for (file, words) in [
        (fifo.to_str().unwrap(), vec!["fifo", "regular file"]),
        ("/dev/zero", vec!["device", "regular file"]),
        (huge.to_str().unwrap(), vec!["64 MiB"]),
    ] {
        for args in calls(file) {
            let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            pair_capped(&args, None, Duration::from_secs(10))
                .code(4)
                .mentions(&words);
            b.assert_untouched(MINIMAL.as_bytes());
            assert!(!new_board.exists());
        }
    }
    // standard input is allowed, and capped the same way
    for args in calls("-") {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        pair_capped(&args, Some(&huge), Duration::from_secs(20))
            .code(4)
            .mentions(&["standard input", "64 MiB"]);
        b.assert_untouched(MINIMAL.as_bytes());
        assert!(!new_board.exists());
    }
    b.assert_clean_dir(&[]);
}

#[test]
fn a_board_over_the_size_limit_is_refused_before_it_is_read() {
    let b = Board::minimal();
    // sparse: 3 GiB on paper, nothing on disk
    fs::OpenOptions::new()
        .write(true)
        .open(&b.path)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let content = b.aux_file("c.md", MINIMAL);
    let sha = sha256_hex(MINIMAL);
    for args in [
        vec!["validate", b.p()],
        vec!["status", b.p()],
        vec!["poll", b.p(), "--agent", "doer"],
        vec![
            "note",
            b.p(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
        ],
        vec!["register", b.p(), "--agent", "rev"],
        vec![
            "write",
            b.p(),
            "--content-file",
            content.to_str().unwrap(),
            "--expect-sha256",
            &sha,
        ],
    ] {
        pair_capped(&args, None, QUICK)
            .code(5)
            .mentions(&["over the 64 MiB limit"]);
    }
    // a search of the directory finds it, and reports it, once, not nested in another error
    let out = pair_capped(&["validate", b.dir.path().to_str().unwrap()], None, QUICK);
    out.code(5).mentions(&["board.md", "over the 64 MiB limit"]);
    assert!(
        !out.stdout.contains("invalid blackboard:"),
        "the size error is reported as itself:\n{}",
        out.stdout
    );
    assert_eq!(fs::metadata(&b.path).unwrap().len(), 3 << 30, "untouched");
    b.assert_clean_dir(&[]);
}

#[test]
fn no_write_makes_a_board_larger_than_the_limit() {
    // a valid board just under the limit; one note more would take it over
    let limit = 64 * 1024 * 1024;
    let mut text = String::from(MINIMAL);
    text.push_str("\n## Evidence\n\n");
    let line = "- evidence that fills the board up to its limit, line after line\n";
    while text.len() + line.len() < limit - 1000 {
        text.push_str(line);
    }
    let b = Board::new(&text);
    pair(["validate", b.p()]).code(0);
    pair(note_args(b.p(), &"y".repeat(2000)))
        .code(5)
        .mentions(&["over the 64 MiB limit", "nothing was written"]);
    b.assert_untouched(text.as_bytes());
    pair(note_args(b.p(), "short")).code(0);
}

fn with_flow_agents(n: usize) -> String {
    let agents: String = (0..n)
        .map(|i| format!("  r{i:05}: {{role: reviewer, status: IDLE}}\n"))
        .collect();
    insert_before_closing(MINIMAL, &agents)
}

#[test]
fn validate_refuses_a_board_that_no_write_could_emit() {
    // 4,000 agents written short are over 1 MiB once every write spells them out
    let big = with_flow_agents(4000);
    assert!(big.len() < 1 << 20);
    let b = Board::new(&big);
    pair(["validate", b.p()])
        .code(5)
        .mentions(&["1 MiB", "as every write would emit it"]);
    pair(["poll", b.p(), "--agent", "doer"]).code(5);
    pair(["register", b.p(), "--agent", "newcomer"])
        .code(5)
        .mentions(&["1 MiB"]);
    b.assert_untouched(big.as_bytes());

    // 3,000 are under the limit: valid, and writable
    let b = Board::new(with_flow_agents(3000));
    pair(["validate", b.p()]).code(0);
    pair(["register", b.p(), "--agent", "newcomer"]).code(0);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn poll_and_validate_agree_about_a_frontmatter_over_the_limit() {
    for size in [1100 * 1024, 3 << 20] {
        let pad = format!("pad: \"{}\"\n", "x".repeat(size));
        let b = Board::new(insert_before_closing(MINIMAL, &pad));
        for args in [
            vec!["validate", b.p()],
            vec!["poll", b.p(), "--agent", "doer"],
            vec!["status", b.p()],
        ] {
            let out = pair(&args);
            out.code(5).mentions(&["over the 1 MiB limit"]);
            assert!(!out.all().contains("YAML error"), "{}", out.report());
        }
    }
}

/// A legal board of about `size` bytes that is nearly all journal: the board `init` made, then
/// records chained to it (alternately by doer and alice, each reporting tokens) until the file
/// is that large; the last one ends in the board's phase and hashes the file before it. Returns
/// how many records it holds.
fn board_with_a_long_journal(b: &Board, size: usize) -> usize {
    pair(["init", b.p(), "--yolo"]).code(0);
    let text = b.read_string();
    let mut records = journal_lines(text.as_bytes());
    let mut out = text;
    let mut prev = sha256_hex(records.last().unwrap())[..16].to_string();
    let mut i = 0usize;
    while out.len() < size {
        let by = if i.is_multiple_of(2) { "doer" } else { "alice" };
        let line = format!(
            "- at=2026-01-01T{:02}:{:02}:{:02}Z by={by} cmd=note phase=DRAFT>DRAFT turn=doer \
             wait_us=12 uid=0 host=box pid={} tokens={i} before={} after={} prev={prev}",
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60,
            1000 + i,
            "a".repeat(64),
            "b".repeat(64),
        );
        prev = sha256_hex(&line)[..16].to_string();
        out.push_str(&line);
        out.push('\n');
        records.push(line);
        i += 1;
    }
    // The board's seal describes the journal as the last write left it: set it as that write
    // would have.
    fs::write(&b.path, reseal(&out)).unwrap();
    records.len()
}

#[test]
fn log_and_stats_stream_a_long_journal_in_a_small_constant_memory() {
    // Legal boards of 12 MiB and 48 MiB, nearly all journal: `log` (text and JSON) and `stats`
    // read both under one address-space cap of 32 MiB, smaller than the larger board, so
    // neither may hold the board, let alone its records or their output, and what they hold
    // does not grow with the board: four times the journal, the same cap. Both give every
    // record.
    let cap = 32 << 20;
    for size in [12 << 20, 48 << 20] {
        let b = Board::absent();
        let total = board_with_a_long_journal(&b, size);
        pair(["validate", b.p()]).code(0);
        let p = b.p();
        let run = |args: &[&str]| {
            let out = pair_capped_at(args, None, Duration::from_secs(120), cap);
            out.code(0);
            out
        };
        let what = format!("a board of {} MiB", size >> 20);
        let out = run(&["log", p]);
        assert_eq!(out.stdout.lines().count(), total, "{what}");
        assert!(out.stdout.lines().all(|l| l.starts_with("2026-")), "{what}");
        let j: serde_json::Value =
            serde_json::from_str(&run(&["log", p, "--json"]).stdout).unwrap();
        assert_eq!(j["total"].as_u64(), Some(total as u64), "{what}");
        assert_eq!(j["records"].as_array().unwrap().len(), total, "{what}");
        assert_eq!(j["phase"], "DRAFT", "{what}");
        let alice: serde_json::Value =
            serde_json::from_str(&run(&["log", p, "--json", "--agent", "alice"]).stdout).unwrap();
        assert_eq!(
            alice["records"].as_array().unwrap().len(),
            (total - 1) / 2,
            "{what}"
        );
        let stats: serde_json::Value =
            serde_json::from_str(&run(&["stats", p, "--json"]).stdout).unwrap();
        let board = &stats["boards"][0];
        assert_eq!(board["records"].as_u64(), Some(total as u64), "{what}");
        assert_eq!(
            board["agents"]["alice"]["writes"].as_u64(),
            Some((total as u64 - 1) / 2),
            "{what}"
        );
    }
}
