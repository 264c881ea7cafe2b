//! Hardening of the store and the inputs: what other programs and other users do to a
//! blackboard and its sidecar files, and inputs that could hang `pair` or exhaust its memory.
//! Every check runs the real binary on real files. Checks about users and groups create them
//! (`groupadd`/`useradd`, unique names, removed afterwards) and run `pair` as them through
//! `setpriv`; without root or those tools they are skipped with a printed reason.

mod common;

use common::*;
use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

const QUICK: Duration = Duration::from_secs(20);

/// A temporary directory on the real disk (`/var/tmp`), where inode numbers are reused and user
/// extended attributes work, readable and searchable by every user.
fn disk_dir() -> tempfile::TempDir {
    let base = Path::new("/var/tmp");
    let dir = if base.is_dir() {
        tempfile::tempdir_in(base).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn note_args(board: &str, text: &str) -> Vec<String> {
    [
        "note",
        board,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        text,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn temp_files(dir: &Path) -> Vec<String> {
    dir_entries(dir)
        .into_iter()
        .filter(|e| e.contains(".pair-tmp-"))
        .collect()
}

/// `pair ARGS` with its address space capped (so that reading a huge input fails fast instead
/// of taking the machine's memory) and stdin from a file (or empty). Killed after `timeout`.
fn pair_capped(args: &[&str], stdin: Option<&Path>, timeout: Duration) -> Out {
    let mut cmd = StdCommand::new(pair_bin());
    cmd.args(args)
        .env_remove("PAIR_AGENT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(fs::File::open(p).unwrap()),
        None => cmd.stdin(Stdio::null()),
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    let desc = format!("(memory capped) pair {}", args.join(" "));
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut pipes = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let _ = std::io::Read::read_to_end(&mut pipes.0, &mut o);
        let _ = std::io::Read::read_to_end(&mut pipes.1, &mut e);
        (o, e)
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (stdout, stderr) = reader.join().unwrap();
    use std::os::unix::process::ExitStatusExt;
    let out = Out {
        desc,
        code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        stdout_bytes: stdout,
        elapsed: start.elapsed(),
    };
    assert!(
        out.code != Some(101) && !out.stderr.contains("panicked at"),
        "`pair` panicked\n{}",
        out.report()
    );
    out
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a plain syscall on a C string we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

// ---------------------------------------------------------------------------------------------
// 1. a hand edit during a write

/// Starts `pair note` paused (by fault injection) after its temporary file is written and
/// fsynced, and returns once that temporary file exists.
fn paused_note(board: &Path, text: &str, pause_ms: u64) -> std::process::Child {
    let child = StdCommand::new(pair_bin())
        .args(note_args(board.to_str().unwrap(), text))
        .env_remove("PAIR_AGENT")
        .env("PAIR_FAULT", format!("before-rename:sleep={pause_ms}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let dir = board.parent().unwrap();
    let start = Instant::now();
    while temp_files(dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the paused write never wrote its temporary file"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child
}

fn finish(child: std::process::Child) -> (Option<i32>, String) {
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
        let child = paused_note(&board, "from pair", 1500);
        for edit in ["first-edit", "second-edit"] {
            let ok = StdCommand::new("sed")
                .args(["-i", &format!("$a {edit}")])
                .arg(&board)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let (code, stderr) = finish(child);
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
    let child = paused_note(&board, "from pair", 800);
    // `>>` keeps the inode: only the size and the times tell
    fs::OpenOptions::new()
        .append(true)
        .open(&board)
        .unwrap()
        .write_all(b"appended by hand\n")
        .unwrap();
    let (code, stderr) = finish(child);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(
        fs::read_to_string(&board).unwrap(),
        format!("{MINIMAL}appended by hand\n")
    );
}

// ---------------------------------------------------------------------------------------------
// 2. hard links

#[test]
fn a_hard_linked_board_is_refused_by_every_write() {
    let b = Board::minimal();
    let other = b.dir.path().join("other.md");
    fs::hard_link(&b.path, &other).unwrap();
    pair(note_args(b.p(), "hello"))
        .code(1)
        .mentions(&["2 hard links", "nothing was written"]);
    let content = b.aux_file("new.md", format!("{MINIMAL}\nmore\n"));
    pair([
        "write",
        other.to_str().unwrap(),
        "--content-file",
        content.to_str().unwrap(),
        "--expect-sha256",
        &sha256_hex(MINIMAL),
    ])
    .code(1)
    .mentions(&["hard links"]);
    b.assert_untouched(MINIMAL.as_bytes());
    assert_eq!(fs::read(&other).unwrap(), MINIMAL.as_bytes());
    assert_eq!(
        fs::metadata(&other).unwrap().ino(),
        fs::metadata(&b.path).unwrap().ino(),
        "still one file"
    );
    // reads are unaffected
    pair(["validate", b.p()]).code(0);
    pair(["status", b.p()]).code(0);
    // with one name again, writes go through
    fs::remove_file(&other).unwrap();
    pair(note_args(b.p(), "hello")).code(0);
}

// ---------------------------------------------------------------------------------------------
// 8. input files

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

// ---------------------------------------------------------------------------------------------
// 9. the size of the board

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
    // a search of the directory finds it, and reports it
    pair_capped(&["validate", b.dir.path().to_str().unwrap()], None, QUICK)
        .code(5)
        .mentions(&["board.md", "over the 64 MiB limit"]);
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

// ---------------------------------------------------------------------------------------------
// 11. validation agrees with writing

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

// ---------------------------------------------------------------------------------------------
// 14. HTML that hides the sections after it

#[test]
fn notes_that_open_an_html_comment_or_details_without_closing_are_refused() {
    let b = Board::minimal();
    for (note, words) in [
        (
            "before\n<!-- a comment never closed\nafter",
            vec!["html comment", "line 2"],
        ),
        ("x <!-- inline and open", vec!["html comment", "line 1"]),
        ("<!-- a --> then <!-- b", vec!["html comment"]),
        (
            "<details>\n<summary>log</summary>\n\nlines",
            vec!["<details>", "line 1"],
        ),
        (
            "<DETAILS open>\n<details>\n</details>",
            vec!["<details>", "line 1"],
        ),
    ] {
        pair(note_args(b.p(), note))
            .code(4)
            .mentions(&words)
            .mentions(&["never closed", "hide"]);
        b.assert_untouched(MINIMAL.as_bytes());
    }
    // closed, or quoted as code, they are fine
    for note in [
        "<!-- closed -->\ntext",
        "<!--\nmultiline\n-->",
        "<!---->",
        "<details><summary>s</summary>\n\nbody\n\n</details>",
        "write `<!--` to open a comment and ``<details>`` for a fold",
        "```\n<!-- in a fence\n<details>\n```",
    ] {
        pair(note_args(b.p(), note)).code(0);
    }
    pair(["validate", b.p()]).code(0);
}

#[test]
fn validate_refuses_a_body_with_an_unclosed_html_comment_or_details() {
    for (tail, words) in [
        (
            "\n## Evidence\n\n<!-- hidden\n\n## Decisions\n",
            "html comment",
        ),
        ("\n## Evidence\n\n<details>\n\n## Decisions\n", "<details>"),
    ] {
        let bad = format!("{MINIMAL}{tail}");
        let line = bad.lines().position(|l| l.starts_with('<')).unwrap() + 1;
        let b = Board::new(&bad);
        pair(["validate", b.p()])
            .code(5)
            .mentions(&[words, "never closed"])
            .mentions_line_any(&[line]);
        // no write is accepted onto it, and no raw write can create it
        pair(note_args(b.p(), "x")).code(5);
        b.assert_untouched(bad.as_bytes());
        let good = Board::minimal();
        good.write_expect(&bad, &sha256_hex(MINIMAL), &[])
            .code(5)
            .mentions(&["never closed", "nothing was written"]);
        good.assert_untouched(MINIMAL.as_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// 16. messages

#[test]
fn a_doubled_carriage_return_is_named() {
    for text in [
        MINIMAL.replace('\n', "\r\r\n"),
        // only the closing delimiter
        MINIMAL.replacen("\n---\n", "\n---\r\r\n", 1),
    ] {
        let b = Board::new(&text);
        let out = pair(["validate", b.p()]);
        out.code(5).mentions(&["\\r\\r\\n", "carriage return"]);
        assert!(!out.all().contains("found \"---\""), "{}", out.report());
        pair(["poll", b.p(), "--agent", "doer"])
            .code(5)
            .mentions(&["carriage return"]);
    }
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
