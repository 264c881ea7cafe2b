//! Format versions (SPEC §2.1): boards written by every format this `pair` knows are read and
//! written by it, and a board of a newer format is read with a warning but never written.
//!
//! The corpus is `tests/fixtures/formats/N/`, one directory per format: boards written by the
//! `pair` of that format through real flows (`scripts/format_fixtures.sh`: a fresh board, a
//! plan half reviewed, objections in the ledger, a blocked board, SLAs with a required check's
//! run and an absence, the demo's whole lifecycle), and a few by hand (`explicit_format_1.md`
//! names its format and carries hand comments; `tolerant.md` holds what a later version may add:
//! fractional seconds, unknown top-level, agent and pin keys, unknown journal words). Every
//! directory from 1 to [`pair::board::format::CURRENT`] is checked, so the boards of a format keep
//! being read and written by every later release: a release that adds a format adds
//! `formats/N/` and this test takes it up. Format 2 (the journal's seal) came with the release
//! that wrote `formats/2/` through the same flows; its `tolerant.md` is `formats/1/tolerant.md`
//! upgraded by `pair migrate`. `formats/newer/` holds boards of a format newer than this `pair`
//! knows.

use crate::common::signing::Signers;
use crate::common::*;
use pair::board::format::CURRENT;
use std::fs;
use std::path::{Path, PathBuf};

fn formats_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats")
}

/// The boards of one directory, by name.
fn boards_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let boards: Vec<(String, Vec<u8>)> = dir_entries(dir)
        .into_iter()
        .map(|name| {
            assert!(
                name.ends_with(".md"),
                "{}: only boards (`*.md`) belong here, not {name}",
                dir.display()
            );
            let bytes = fs::read(dir.join(&name)).unwrap();
            (name, bytes)
        })
        .collect();
    assert!(!boards.is_empty(), "{} holds no board", dir.display());
    boards
}

/// Every board of every format this `pair` knows: (format, name, bytes).
fn known_boards() -> Vec<(u32, String, Vec<u8>)> {
    let dir = formats_dir();
    let mut formats = Vec::new();
    for name in dir_entries(&dir) {
        if name == "newer" {
            continue;
        }
        let n: u32 = name
            .parse()
            .unwrap_or_else(|_| panic!("tests/fixtures/formats/{name}: a directory is a format"));
        assert!(
            (1..=CURRENT).contains(&n),
            "tests/fixtures/formats/{n}: this pair knows formats 1 to {CURRENT}; a format's \
             boards come with the release that knows it"
        );
        formats.push(n);
    }
    formats.sort();
    assert_eq!(
        formats,
        (1..=CURRENT).collect::<Vec<_>>(),
        "the boards of every format up to {CURRENT} are kept"
    );
    formats
        .into_iter()
        .flat_map(|n| {
            boards_in(&dir.join(n.to_string()))
                .into_iter()
                .map(move |(name, bytes)| (n, name, bytes))
        })
        .collect()
}

/// The board's fields as `status --json` reads them, and its warnings' fields.
#[track_caller]
fn status(b: &Board, ctx: &str) -> (serde_json::Value, Vec<String>) {
    let out = pair(["status", b.p(), "--json"]);
    assert_eq!(out.code, Some(0), "{ctx}: status\n{}", out.report());
    let json = out.json();
    let warnings = json["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("{ctx}: status has no warnings list\n{}", out.report()))
        .iter()
        .map(|w| w["field"].as_str().unwrap().to_string())
        .collect();
    (json, warnings)
}

/// A human's raw write of the board as it is, with a line added: the writer every board takes,
/// terminal ones included.
#[track_caller]
fn repair(b: &Board, line: &str) -> Out {
    repair_signed(b, line, &[])
}

/// [`repair`] with `flags` (on a signed board: the doer's, who signs it).
#[track_caller]
fn repair_signed(b: &Board, line: &str, flags: &[String]) -> Out {
    let mut content = b.read();
    content.extend_from_slice(format!("\n{line}\n").as_bytes());
    let mut extra = vec!["--repair", "--reason", "format check"];
    if !flags.is_empty() {
        extra.extend(["--agent", "doer"]);
    }
    extra.extend(flags.iter().map(String::as_str));
    b.write_expect(content, &b.sha(), &extra)
}

#[track_caller]
fn note(b: &Board, text: &str) -> Out {
    note_signed(b, text, &[])
}

#[track_caller]
fn note_signed(b: &Board, text: &str, flags: &[String]) -> Out {
    let mut args: Vec<String> = [
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        text,
    ]
    .map(String::from)
    .to_vec();
    args.extend(flags.iter().cloned());
    pair(args)
}

/// The trust root of the signed fixtures (`tests/fixtures/signing/allowed_signers`: the public
/// keys their writers signed with, the private ones thrown away), with a new key of the doer's
/// vouched for beside its old one: the flags that write a fixture as the doer.
fn fixture_signers() -> (Signers, Vec<String>) {
    let signers = Signers::new(&["doer"]);
    let fixed = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/signing/allowed_signers"),
    )
    .unwrap();
    for line in fixed.lines() {
        signers.vouch_line(line);
    }
    let flags = signers.flags("doer");
    (signers, flags)
}

#[test]
fn every_board_of_every_known_format_is_read_and_written() {
    for (format, name, bytes) in known_boards() {
        let ctx = format!("formats/{format}/{name}");
        let b = Board::new(&bytes);
        // A signed board is written with a key its trust root vouches for.
        let (_signers, flags) = fixture_signers();
        let flags = if format >= 3 { flags } else { vec![] };
        let validate = || {
            let mut args = vec!["validate".to_string(), b.p().to_string()];
            args.extend(flags.iter().cloned());
            pair(args)
        };

        let out = validate();
        assert_eq!(out.code, Some(0), "{ctx}: validate\n{}", out.report());
        let (json, warnings) = status(&b, &ctx);
        let found = json["frontmatter"]["format"].as_u64().unwrap_or(1);
        assert_eq!(found, u64::from(format), "{ctx}: a board of format {found}");
        let out = pair(["poll", b.p(), "--agent", "doer", "--json"]);
        out.code_in(&[0, 10, 11, 12]);
        assert_eq!(out.json()["phase"], json["phase"], "{ctx}: poll");
        assert!(!out.stderr.contains("upgrade"), "{ctx}\n{}", out.report());

        // A semantic write, where the phase takes one (a finished board takes none).
        let terminal = json["terminal"].as_bool().unwrap() && json["phase"] != "BLOCKED";
        if !terminal {
            let out = note_signed(&b, "Read and written by this release.", &flags);
            assert_eq!(out.code, Some(0), "{ctx}: note\n{}", out.report());
            let out = validate();
            assert_eq!(
                out.code,
                Some(0),
                "{ctx}: validate after note\n{}",
                out.report()
            );
            assert!(
                b.read_string()
                    .contains("Read and written by this release.")
            );
        }
        // A raw write.
        let out = repair_signed(&b, "Repaired by hand with this release.", &flags);
        assert_eq!(out.code, Some(0), "{ctx}: write --repair\n{}", out.report());
        let out = validate();
        assert_eq!(
            out.code,
            Some(0),
            "{ctx}: validate after write\n{}",
            out.report()
        );
        assert!(
            b.read_string()
                .contains("Repaired by hand with this release.")
        );

        // What this release does not know is still there.
        let (after, warnings_after) = status(&b, &ctx);
        assert_eq!(warnings_after, warnings, "{ctx}: unknown fields are kept");
        assert_eq!(
            after["frontmatter"]["format"],
            json["frontmatter"]["format"]
        );
        b.assert_clean_dir(&[]);
    }
}

/// The board with its format set to `n`: its `format` line, if any, dropped, and one added first.
fn with_format(bytes: &[u8], n: u32) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let rest = text
        .strip_prefix("---\n")
        .expect("a board starts with `---`");
    let (fm, body) = rest.split_once("\n---\n").expect("a closed frontmatter");
    let fm: Vec<&str> = fm.lines().filter(|l| !l.starts_with("format:")).collect();
    format!("---\nformat: {n}\n{}\n---\n{body}", fm.join("\n")).into_bytes()
}

/// Every way to write a board, on a board of a newer format: refused with exit 14 (`format`),
/// naming both formats and telling the user to upgrade, the file untouched.
#[track_caller]
fn assert_writes_refused(bytes: &[u8], found: u64, ctx: &str) {
    let b = Board::new(bytes);
    let sha = b.sha();
    let writes: Vec<Vec<String>> = vec![
        vec![
            "note",
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
        ],
        vec!["register", "--agent", "carol"],
        vec!["report-usage", "--agent", "doer", "--tokens", "10"],
        vec!["block", "--agent", "doer", "--reason", "x"],
        vec!["stop", "--agent", "doer", "--reason", "x"],
    ]
    .into_iter()
    .map(|args| {
        let mut v = vec![args[0].to_string(), b.p().to_string()];
        v.extend(args[1..].iter().map(|s| s.to_string()));
        v
    })
    .collect();
    for args in writes {
        let mut args = args;
        args.push("--json".into());
        let out = pair(&args);
        let err = out.json_error(14);
        assert_eq!(err["kind"], "format", "{ctx}\n{}", out.report());
        let message = err["message"].as_str().unwrap();
        for needle in [
            format!("format {found}"),
            format!("up to {CURRENT}"),
            "upgrade pair".to_string(),
        ] {
            assert!(message.contains(&needle), "{ctx}: {message}");
        }
        b.assert_untouched(bytes);
    }
    let out = repair(&b, "x");
    out.code(14)
        .mentions(&["upgrade pair", "nothing was written"]);
    let out = b.write_expect(bytes, &sha, &["--as", "doer"]);
    out.code(14);
    b.assert_untouched(bytes);
    b.assert_clean_dir(&[]);

    // New content of a newer format is refused too, and nothing is created.
    let absent = Board::absent();
    absent.write_create(bytes, &[]).code(14);
    assert!(!absent.path.exists(), "{ctx}: created");
}

#[test]
fn a_board_of_a_newer_format_is_read_with_a_warning_and_never_written() {
    let boards = boards_in(&formats_dir().join("newer"));
    for (name, bytes) in boards {
        let ctx = format!("formats/newer/{name}");
        let b = Board::new(&bytes);
        let (json, warnings) = status(&b, &ctx);
        let found = json["frontmatter"]["format"].as_u64().unwrap_or(1);
        assert!(
            found > u64::from(CURRENT),
            "{ctx} is format {found}, which this pair knows: move it to formats/{found}/"
        );
        assert!(
            warnings.contains(&"format".to_string()),
            "{ctx}: {warnings:?}"
        );

        // Reads go on, with a warning.
        let out = pair(["poll", b.p(), "--agent", "doer"]);
        out.code_in(&[0, 10, 11, 12]);
        assert!(
            out.stderr.contains("upgrade pair"),
            "{ctx}: poll warns\n{}",
            out.report()
        );
        let out = pair(["poll", b.p(), "--agent", "doer", "--json"]);
        out.code_in(&[0, 10, 11, 12]);
        assert_eq!(out.json()["phase"], json["phase"]);
        let out = pair(["status", b.p()]);
        out.code(0).mentions(&["format 4", "upgrade pair"]);
        let out = pair(["validate", b.p(), "--json"]);
        out.code(0);
        for cmd in ["show", "log"] {
            let out = pair([cmd, b.p()]);
            out.code(0);
            assert!(
                out.stderr.contains("upgrade pair"),
                "{ctx}: {cmd}\n{}",
                out.report()
            );
        }

        assert_writes_refused(&bytes, found, &ctx);
    }
}

#[test]
fn every_known_board_made_newer_is_refused_by_every_writer() {
    let newer = CURRENT + 1;
    for (format, name, bytes) in known_boards() {
        let ctx = format!("formats/{format}/{name} as format {newer}");
        let bytes = with_format(&bytes, newer);
        let b = Board::new(&bytes);
        let out = pair(["validate", b.p()]);
        assert_eq!(out.code, Some(0), "{ctx}: validate\n{}", out.report());
        out.mentions(&["warning", "upgrade pair"]);
        assert_writes_refused(&bytes, u64::from(newer), &ctx);
    }
}

#[test]
fn what_a_later_version_adds_survives_a_write() {
    let bytes = fs::read(formats_dir().join("1/tolerant.md")).unwrap();
    let b = Board::new(&bytes);
    let records = journal_lines(&bytes);
    note(&b, "A note.").code(0);
    let text = b.read_string();
    for kept in [
        // Unchanged fractional seconds keep their spelling; the doer's own `last_seen` is now.
        "phase_updated_at: \"2026-05-04T09:31:00.250Z\"\n",
        "### Note — doer — 2026-05-04T09:37:00.125Z\n",
        "    signed_by: doer\n",
        "review_policy:\n  min_approvals: 2\n  quorum: all\n",
        "    model: opus-5\n",
    ] {
        assert!(text.contains(kept), "lost {kept:?}:\n{text}");
    }
    // The records with a later version's words are kept as they were, and chained on.
    let after = journal_lines(&b.read());
    assert_eq!(after[..records.len()], records[..]);
    assert_eq!(after.len(), records.len() + 1);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn a_bad_format_is_an_invalid_board_naming_the_field_and_line() {
    for bad in ["0", "-1", "two", "1.5", "\"1\"", "null", "[1]"] {
        let content = MINIMAL.replacen("---\n", &format!("---\nformat: {bad}\n"), 1);
        let b = Board::new(&content);
        let out = pair(["validate", b.p()]);
        out.code(5).mentions(&["`format`", "format version"]);
        out.mentions_line_any(&[2]);
        note(&b, "x").code(5);
        b.assert_untouched(content.as_bytes());
    }
    // `format: 1` is the format of a board without the key, and stays as it is written.
    let content = MINIMAL.replacen("---\n", "---\nformat: 1\n", 1);
    let b = Board::new(&content);
    pair(["validate", b.p()]).code(0);
    note(&b, "x").code(0);
    assert!(
        b.read_string()
            .starts_with("---\nformat: 1\nphase: DRAFT\n")
    );
}

/// A second (`seconds`, a top-level key) reads in a `pair` that does not know it as any key a
/// later version adds: this `pair` reads the fixture with the key renamed to one it does not know
/// as such a `pair` reads the fixture itself. The board is valid, with a warning naming the key;
/// the ledger reads the same; a write keeps the key's lines as they were, and the doer works on.
#[test]
fn a_seconded_board_reads_where_seconds_are_unknown_as_a_board_with_a_later_key() {
    let bytes = fs::read(formats_dir().join("2/seconded.md")).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let block = "seconds:\n  - \"BLK-1 bob\"\n";
    assert!(text.contains(block), "the fixture seconds BLK-1:\n{text}");
    let unknown = "seconds_unknown:\n  - \"BLK-1 bob\"\n";
    let b = Board::new(text.replace(block, unknown));
    let (_, warnings) = status(&b, "seconded.md, seconds unknown");
    assert!(
        warnings.contains(&"seconds_unknown".to_string()),
        "{warnings:?}"
    );
    let objections = |b: &Board| pair(["objections", b.p(), "--json"]).code(0).json();
    let read = objections(&b);
    let known = objections(&Board::new(&text));
    assert_eq!(read["objections"][0]["id"], "BLK-1");
    assert_eq!(
        read["objections"][0]["state"],
        known["objections"][0]["state"]
    );
    assert_eq!(known["objections"][0]["seconded_by"][0], "bob");
    assert_eq!(read["open_blocking"], known["open_blocking"]);
    note(&b, "Read where seconds are unknown.").code(0);
    assert!(b.read_string().contains(unknown), "{}", b.read_string());
    pair([
        "resolve",
        b.p(),
        "BLK-1",
        "--agent",
        "doer",
        "--resolution",
        "Each stage drops its own read.",
    ])
    .code(0);
    assert!(b.read_string().contains(unknown));
    pair(["validate", b.p()]).code(0);
}
