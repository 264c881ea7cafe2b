//! The bad-input catalogue: every malformed blackboard under `tests/fixtures/` (each `NAME.md`
//! with a sidecar `NAME.expect` giving the exit code of `pair validate` and a key phrase of its
//! message) is run through `pair validate`, `pair poll`, a semantic write (`pair note` onto it)
//! and a raw write (`pair write` of it as the new content of a valid board). None may panic or
//! hang; every refusal leaves the file untouched and no temporary file behind. A few more are
//! generated here because they are too big to keep in the repository.

use crate::common::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

struct Fixture {
    name: String,
    bytes: Vec<u8>,
    exit: i32,
    phrase: Option<String>,
    /// The problem is in the body (`part: body`), which `poll` does not read.
    body_only: bool,
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn load_fixtures() -> Vec<Fixture> {
    let dir = fixtures_dir();
    let mut out = Vec::new();
    let mut names: Vec<String> = dir_entries(&dir).into_iter().collect();
    names.sort();
    for n in &names {
        // `formats/`: boards of every format, checked by `formats.rs`.
        if dir.join(n).is_dir() {
            continue;
        }
        if let Some(stem) = n.strip_suffix(".expect") {
            assert!(
                names.contains(&format!("{stem}.md")),
                "{n} has no fixture {stem}.md"
            );
            continue;
        }
        let stem = n
            .strip_suffix(".md")
            .unwrap_or_else(|| panic!("unexpected file in tests/fixtures: {n}"));
        let expect = fs::read_to_string(dir.join(format!("{stem}.expect")))
            .unwrap_or_else(|e| panic!("{stem}.md needs a {stem}.expect: {e}"));
        let mut exit = None;
        let mut phrase = None;
        let mut body_only = false;
        for line in expect.lines() {
            if let Some(v) = line.strip_prefix("exit: ") {
                exit = Some(v.trim().parse().unwrap());
            } else if let Some(v) = line.strip_prefix("phrase: ") {
                phrase = Some(v.trim().to_string());
            } else if line.trim() == "part: body" {
                body_only = true;
            } else {
                assert!(
                    line.starts_with('#') || line.trim().is_empty(),
                    "{stem}.expect: unknown line {line:?}"
                );
            }
        }
        let exit = exit.unwrap_or_else(|| panic!("{stem}.expect has no `exit:` line"));
        assert!(
            exit == 0 || phrase.is_some(),
            "{stem}.expect: a refusal needs a `phrase:`"
        );
        out.push(Fixture {
            name: stem.to_string(),
            bytes: fs::read(dir.join(n)).unwrap(),
            exit,
            phrase,
            body_only,
        });
    }
    out
}

/// Runs the four commands on one fixture and checks the documented outcome.
#[track_caller]
fn check(f: &Fixture) {
    let ctx = format!("fixture {}", f.name);

    // validate: the expected exit code and key phrase
    let b = Board::new(&f.bytes);
    let out = pair_timeout(["validate", b.p()], T);
    out.not_timed_out();
    assert_eq!(out.code, Some(f.exit), "{ctx}: validate\n{}", out.report());
    if let Some(p) = &f.phrase {
        out.mentions(&[p]);
    }

    // poll reads only the frontmatter: no panic, no hang, and never "your turn" on a board
    // whose frontmatter is broken (a broken body is for validate and the writers to find)
    let out = pair_timeout(["poll", b.p(), "--agent", "doer"], T);
    out.not_timed_out();
    if f.exit != 0 && !f.body_only {
        assert_eq!(out.code, Some(f.exit), "{ctx}: poll\n{}", out.report());
    }

    // a semantic write onto it
    let out = pair_timeout(
        [
            "note",
            b.p(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "a note",
        ],
        T,
    );
    out.not_timed_out();
    if f.exit == 0 {
        out.code(0);
        pair(["validate", b.p()]).code(0);
    } else {
        assert_eq!(out.code, Some(f.exit), "{ctx}: note\n{}", out.report());
        out.mentions(&[f.phrase.as_deref().unwrap()]);
        b.assert_untouched(&f.bytes);
    }
    b.assert_clean_dir(&[]);

    // a raw write of it as the new content of a valid board
    let v = Board::minimal();
    let out = v.write_expect(&f.bytes, &sha256_hex(MINIMAL), &["--timeout", "10"]);
    out.not_timed_out();
    if f.exit == 0 {
        out.code(0);
        assert_bytes_eq(
            &v.content(),
            &f.bytes,
            "a raw write stores the bytes as given",
        );
    } else {
        assert_eq!(out.code, Some(f.exit), "{ctx}: write\n{}", out.report());
        out.mentions(&[f.phrase.as_deref().unwrap(), "nothing was written"]);
        v.assert_untouched(MINIMAL.as_bytes());
    }
    v.assert_clean_dir(&[]);
}

#[test]
fn every_fixture_in_the_catalogue_is_refused_as_documented_by_every_command() {
    let all = load_fixtures();
    assert!(
        all.len() >= 40,
        "the catalogue must hold at least 40 fixtures"
    );
    assert!(
        all.iter().filter(|f| f.exit != 0).count() >= 40,
        "at least 40 malformed ones"
    );
    for f in &all {
        check(f);
    }
    eprintln!("fixtures: {} checked", all.len());
}

#[test]
fn generated_frontmatter_over_one_mib_is_refused_by_every_command() {
    for (name, pad) in [
        (
            "one long value",
            format!("pad: \"{}\"\n", "x".repeat(1 << 20)),
        ),
        (
            "many short keys",
            (0..80_000).map(|i| format!("k{i:06}: 1234\n")).collect(),
        ),
    ] {
        let bytes = insert_before_closing(MINIMAL, &pad).into_bytes();
        assert!(bytes.len() > 1 << 20);
        check(&Fixture {
            name: format!("huge frontmatter ({name})"),
            bytes,
            exit: 5,
            phrase: Some("1 MiB".into()),
            body_only: false,
        });
    }
}

#[test]
fn generated_multi_megabyte_body_with_an_unclosed_fence_at_the_end_is_refused() {
    let mut body = String::from("\n## Evidence\n\n");
    while body.len() < 3 << 20 {
        body.push_str("- a long evidence line that fills the body of the blackboard\n");
    }
    body.push_str("```\nnever closed\n");
    check(&Fixture {
        name: "3 MiB body, fence unclosed at the end".into(),
        bytes: format!("{MINIMAL}{body}").into_bytes(),
        exit: 5,
        phrase: Some("code fence".into()),
        body_only: true,
    });
}

#[test]
fn a_valid_board_truncated_anywhere_inside_its_frontmatter_is_refused() {
    let board = minimal_with_reviewer("alice");
    let close = board.find("\n---\n").unwrap() + 1;
    let mut checked = 0;
    for cut in (0..close + 3).step_by(7) {
        let b = Board::new(&board.as_bytes()[..cut]);
        let out = pair_timeout(["validate", b.p()], T);
        out.code(5)
            .mentions_any(&["frontmatter", "not closed", "empty"]);
        checked += 1;
    }
    assert!(checked > 50);
}
