//! Line endings and the BOM: CRLF, BOM and BOM+CRLF boards read by every command with the right line
//! numbers and kept byte for byte by every write; lone and doubled carriage returns.

use crate::common::env::Env;
use crate::common::reads::assert_accepted_by_all_readers;
use crate::common::*;
use crate::proto::*;

#[test]
fn crlf_board_is_accepted_by_validate_status_and_poll() {
    assert_accepted_by_all_readers(to_crlf(MINIMAL).as_bytes());
}

#[test]
fn bom_board_is_accepted_by_validate_status_and_poll() {
    assert_accepted_by_all_readers(&with_bom(MINIMAL));
}

#[test]
fn bom_plus_crlf_board_is_accepted_by_validate_status_and_poll() {
    assert_accepted_by_all_readers(&with_bom(&to_crlf(MINIMAL)));
}

#[test]
fn raw_write_of_crlf_and_bom_content_stores_the_exact_bytes() {
    let b = Board::minimal();
    let crlf = with_bom(&to_crlf(&format!("{MINIMAL}\nDo the CRLF thing.\n")));
    b.write_expect(&crlf, &sha256_hex(MINIMAL), &[]).code(0);
    assert_bytes_eq(
        &b.content(),
        &crlf,
        "raw write must store the content bytes exactly",
    );
    pair(["validate", b.p()]).code(0);

    // and a raw write onto a CRLF/BOM file works with the hash of its exact bytes
    let crlf2 = with_bom(&to_crlf(&format!(
        "{MINIMAL}\nDo the CRLF thing.\nAnd one more line.\n"
    )));
    let kept = keep_journal(&String::from_utf8(crlf2.clone()).unwrap(), &b.read());
    b.write_expect(&kept, &b.sha(), &[]).code(0);
    assert_bytes_eq(
        &b.content(),
        &crlf2,
        "raw write must store the content bytes exactly",
    );
    b.assert_clean_dir(&[]);
}

#[test]
fn error_line_numbers_are_right_in_bom_and_crlf_files() {
    let content = with_bom(&to_crlf(&set_top(MINIMAL, "plan_revision", "-1")));
    let line = line_no(
        &set_top(MINIMAL, "plan_revision", "-1"),
        "plan_revision: -1",
    );
    let b = Board::new(&content);
    pair(["validate", b.p()])
        .code(5)
        .mentions(&["plan_revision"])
        .mentions_line_any(&[line]);
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    let errors = out.json()["files"][0]["errors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        errors
            .iter()
            .any(|e| e["field"] == "plan_revision" && e["line"].as_u64() == Some(line as u64)),
        "{}",
        out.report()
    );
    b.assert_untouched(&content);
}

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
fn semantic_writes_keep_crlf_line_endings_and_the_bom() {
    let p = Proto::init(&["--reviewers", "alice"]);
    let crlf = with_bom(&to_crlf(&p.text()));
    std::fs::write(&p.b.path, &crlf).unwrap();
    p.assert_valid();
    p.ok("alice", &["register"]);
    p.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    p.ok(
        "doer",
        &[
            "submit",
            "plan",
            "--note",
            "line one\nline two",
            "--user-approved",
        ],
    );
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok("alice", &["note", "--section", "Evidence", "--note", "e"]);
    p.assert_phase("PLAN_APPROVED");
    let bytes = p.b.read();
    assert!(bytes.starts_with(&[0xEF, 0xBB, 0xBF]), "the BOM is kept");
    let s = String::from_utf8(bytes[3..].to_vec()).unwrap();
    let bare_lf = s.replace("\r\n", "").matches('\n').count();
    assert_eq!(bare_lf, 0, "every line ending stays CRLF:\n{s:?}");
    assert!(s.contains("line two"), "{s}");
}

#[test]
fn notes_with_other_line_endings_take_the_files_style() {
    let e = Env::new();
    e.ok(0, &["init", "n.md"]);
    e.ok(
        0,
        &[
            "note",
            "n.md",
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "a\r\nb\rc",
        ],
    );
    let text = e.read("n.md");
    assert!(!text.contains('\r'), "an LF file must stay LF: {text:?}");
    assert!(text.contains("a\nb\nc\n"), "{text}");
}

#[test]
fn a_lone_carriage_return_cannot_smuggle_a_heading_into_a_note() {
    let e = Env::new();
    e.ok(0, &["init", "n.md"]);
    let before = e.read("n.md");
    let r = e.run(&[
        "note",
        "n.md",
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "x\r## Injected",
    ]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert_eq!(e.read("n.md"), before);
}
