//! The journal's seal (format 2): records removed from the journal, the journal deleted, or a
//! record added or replaced outside `pair` are errors on a file board, which `validate` reports
//! and every write refuses until a recorded repair; what an editor rewriting the whole chain
//! consistently can still forge; boards of format 1 kept as they are until `pair migrate`
//! upgrades them. (The git board's check against its ref's history is in `gitstore`.)

use crate::common::*;
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::fs;

/// A board of the newest format with a few records: init, a registration, two notes.
fn board() -> Board {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    for text in ["First finding.", "Second finding."] {
        note(&b, text).code(0);
    }
    assert_eq!(journal_lines(&b.read()).len(), 4);
    assert!(
        b.read_string()
            .starts_with("---\nformat: 2\njournal: {records: 4, head: \"")
    );
    b
}

#[track_caller]
fn note(b: &Board, text: &str) -> Out {
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        text,
    ])
}

/// The board's text with these record lines taken out.
fn without(text: &str, records: &[&String]) -> String {
    let mut out = text.to_string();
    for r in records {
        out = out.replacen(&format!("{r}\n"), "", 1);
    }
    out
}

/// `validate --json` of an edited board: exit 5, and the errors as one string.
#[track_caller]
fn invalid(b: &Board) -> String {
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    out.json()["files"][0]["errors"].to_string()
}

/// Every write on a board `validate` rejects is refused with exit 5 and the repair command, the
/// file untouched.
#[track_caller]
fn writes_refused(b: &Board) {
    let before = b.read();
    let out = note(b, "On a broken journal.");
    out.code(5).mentions(&["--repair", "journal"]);
    b.assert_untouched(&before);
    let out = pair(["register", b.p(), "--agent", "bob", "--json"]);
    let err = out.json_error(5);
    assert!(
        err["repair"]
            .as_str()
            .unwrap()
            .contains("--repair --reason"),
        "{}",
        out.report()
    );
    b.assert_untouched(&before);
    let out = pair(["report-usage", b.p(), "--agent", "doer", "--tokens", "5"]);
    out.code(5);
    b.assert_untouched(&before);
    let text = String::from_utf8(before.clone()).unwrap();
    let with_notes = text.replace("## Journal", "## Notes\n\nA raw note.\n\n## Journal");
    let out = b.write_expect(&with_notes, &b.sha(), &["--as", "doer"]);
    out.code(5);
    b.assert_untouched(&before);
}

/// A human's repair of the board as it is: exit 0, the board valid again, the repair recorded
/// (in Decisions, with what was wrong with the journal, and as the journal's newest record) and
/// sealed; the next write is accepted.
#[track_caller]
fn repair_as_is(b: &Board, said: &str) {
    let text = b.read_string();
    let out = b.write_expect(&text, &b.sha(), &["--repair", "--reason", "journal mended"]);
    out.code(0);
    pair(["validate", b.p()]).code(0);
    let after = b.read_string();
    let decisions = section_text(&after, "Decisions").unwrap();
    assert!(decisions.contains("### Repair"), "{decisions}");
    assert!(decisions.contains("The journal as found"), "{decisions}");
    assert!(decisions.contains(said), "{decisions}");
    let last = journal_lines(after.as_bytes()).pop().unwrap();
    assert!(last.contains(" cmd=repair "), "{last}");
    let records = journal_lines(after.as_bytes()).len();
    assert!(
        after.contains(&format!("journal: {{records: {records}, head: \"")),
        "{after}"
    );
    note(b, "After the repair.").code(0);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn deleting_every_record_is_an_error_until_a_recorded_repair() {
    let b = board();
    let text = b.read_string();
    let records = journal_lines(text.as_bytes());
    let edited = without(&text, &records.iter().collect::<Vec<_>>());
    assert!(edited.contains("## Journal"));
    fs::write(&b.path, &edited).unwrap();
    let errors = invalid(&b);
    assert!(
        errors.contains("the last write left 4 journal records")
            && errors.contains("holds no record")
            && errors.contains("4 were removed outside pair"),
        "{errors}"
    );
    assert!(errors.contains("\"line\":3"), "the seal's line: {errors}");
    writes_refused(&b);
    repair_as_is(&b, "4 were removed");
}

#[test]
fn deleting_the_journal_section_is_an_error_until_a_recorded_repair() {
    let b = board();
    let text = b.read_string();
    let cut = text.find("## Journal").unwrap();
    fs::write(&b.path, &text[..cut]).unwrap();
    let errors = invalid(&b);
    assert!(
        errors.contains("`## Journal` is gone") && errors.contains("4 were removed"),
        "{errors}"
    );
    writes_refused(&b);
    repair_as_is(&b, "is gone");
}

#[test]
fn deleting_the_last_record_or_one_in_the_middle_is_an_error() {
    let b = board();
    let text = b.read_string();
    let records = journal_lines(text.as_bytes());
    // The last one: the chain before it is intact, the seal is not.
    fs::write(&b.path, without(&text, &[&records[3]])).unwrap();
    let errors = invalid(&b);
    assert!(
        errors.contains("holds 3") && errors.contains("1 was removed outside pair"),
        "{errors}"
    );
    writes_refused(&b);
    // One in the middle: the chain breaks at the record after it, and the seal counts one less.
    fs::write(&b.path, without(&text, &[&records[1]])).unwrap();
    let edited = b.read_string();
    let errors = invalid(&b);
    assert!(errors.contains("chain is broken"), "{errors}");
    let line = line_no(&edited, &records[2]);
    assert!(errors.contains(&format!("\"line\":{line}")), "{errors}");
    assert!(errors.contains("1 was removed"), "{errors}");
    writes_refused(&b);
    repair_as_is(&b, "1 was removed");
    // The repair's record names the break it found; validate says it, as a warning.
    let text = b.read_string();
    let records = journal_lines(text.as_bytes());
    assert!(
        records[3].contains(" cmd=repair ") && records[3].contains(" mended=2 "),
        "{}",
        records[3]
    );
    pair(["validate", b.p()]).code(0).mentions(&[
        "warning",
        "chain is broken",
        "recorded the journal as it stood",
    ]);
    // Any other break is still an error: a record before the repair edited afterwards.
    let edited = text.replacen(
        &records[2],
        &records[2].replacen("by=doer", "by=alice", 1),
        1,
    );
    assert_ne!(edited, text);
    fs::write(&b.path, &edited).unwrap();
    let errors = invalid(&b);
    let line = line_no(&edited, &records[3]);
    assert!(errors.contains(&format!("\"line\":{line}")), "{errors}");
}

/// A record as `pair` would write it after the last one: chained to it, its `after` the hash of
/// the file before it, so that only the seal can tell it was not written by `pair`.
fn forged_after(text: &str, words: &str) -> String {
    let last = journal_lines(text.as_bytes()).pop().unwrap();
    let prev = &sha256_hex(last.as_bytes())[..16];
    let after = sha256_hex(text.as_bytes());
    format!(
        "- at=2026-01-01T00:00:00.000Z {words} turn=doer wait_us=1 uid=0 host=box pid=1 \
         before=- after={after} prev={prev}"
    )
}

#[test]
fn a_forged_well_formed_record_appended_or_put_in_place_of_the_last_is_an_error() {
    let b = board();
    let text = b.read_string();
    // Appended: a verdict nobody gave.
    let forged = forged_after(
        &text,
        "by=alice cmd=verdict phase=DRAFT>DRAFT verdict=plan:APPROVED",
    );
    let appended = format!("{text}{forged}\n");
    fs::write(&b.path, &appended).unwrap();
    let errors = invalid(&b);
    assert!(
        errors.contains("holds 5") && errors.contains("1 was added outside pair"),
        "{errors}"
    );
    let line = line_no(&appended, &forged);
    assert!(errors.contains(&format!("\"line\":{line}")), "{errors}");
    writes_refused(&b);
    // In place of the last record: one word changed, everything else as it was.
    let records = journal_lines(text.as_bytes());
    let last = &records[3];
    let replaced = text.replace(last.as_str(), &last.replacen("by=doer", "by=alice", 1));
    assert_ne!(replaced, text);
    fs::write(&b.path, &replaced).unwrap();
    let errors = invalid(&b);
    assert!(
        errors.contains("not the one the last write sealed"),
        "{errors}"
    );
    writes_refused(&b);
    repair_as_is(&b, "not the one the last write sealed");
}

#[test]
fn a_raw_write_cannot_change_the_seal_the_write_seals_it_itself() {
    // The seal is pair's: whatever a raw write's content says, the write's own seal replaces it.
    let b = board();
    let text = b.read_string();
    let bogus = set_top(
        &text,
        "journal",
        "{records: 99, head: \"0000000000000000\"}",
    );
    let new = bogus.replace("## Journal", "## Notes\n\nA raw note.\n\n## Journal");
    b.write_expect(&new, &b.sha(), &["--as", "doer"]).code(0);
    let after = b.read_string();
    assert!(after.contains("journal: {records: 5, head: \""), "{after}");
    pair(["validate", b.p()]).code(0);
}

#[test]
fn an_editor_who_rewrites_the_journal_and_its_seal_consistently_is_not_detected_on_a_file() {
    // What GUARANTEES.md says a file board cannot tell: the last record dropped and the seal
    // set to match the journal that is left, as `pair` would have. (On a git board the ref's
    // history tells it: `gitstore`.)
    let b = board();
    let text = b.read_string();
    let records = journal_lines(text.as_bytes());
    let edited = reseal(&without(&text, &[&records[3]]));
    fs::write(&b.path, &edited).unwrap();
    let out = pair(["validate", b.p()]);
    out.code(0);
    // Only that the file changed after its last recorded write is said, as a warning.
    out.mentions(&["warning", "changed after its last recorded write"]);
}

#[test]
fn a_seal_that_does_not_read_is_an_invalid_board_naming_its_line() {
    let b = board();
    let text = b.read_string();
    for bad in [
        "{records: 0, head: \"0123456789abcdef\"}",
        "{records: 4}",
        "{records: 4, head: \"xyz\"}",
        "{records: 4, head: \"0123456789abcdef\", extra: 1}",
        "4",
        "null",
    ] {
        let edited = set_top(&text, "journal", bad);
        fs::write(&b.path, &edited).unwrap();
        let out = pair(["validate", b.p()]);
        out.code(5).mentions(&["`journal`", "seal"]);
        out.mentions_line_any(&[3]);
    }
    // A board of format 2 without its seal: edited outside pair.
    fs::write(&b.path, remove_top(&text, "journal")).unwrap();
    let errors = invalid(&b);
    assert!(errors.contains("has none"), "{errors}");
}

#[test]
fn a_board_of_format_1_stays_format_1_through_every_write_until_migrate_seals_it() {
    let b = init_board(&["--reviewers", "alice", "--format", "1"]);
    let text = b.read_string();
    assert!(text.starts_with("---\nphase: DRAFT\n"), "{text}");
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    note(&b, "On a format 1 board.").code(0);
    let text = b.read_string();
    assert!(
        !text.contains("\nformat:") && !text.contains("\njournal:"),
        "{text}"
    );
    // Format 1 carries no seal: the last record removed is not told (GUARANTEES.md).
    let records = journal_lines(text.as_bytes());
    let truncated = without(&text, &[&records[2]]);
    fs::write(&b.path, &truncated).unwrap();
    pair(["validate", b.p()]).code(0);
    fs::write(&b.path, &text).unwrap();

    // `pair migrate BOARD` upgrades it, a recorded write.
    let out = pair(["migrate", b.p(), "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["from_format"], 1);
    assert_eq!(j["to_format"], 2);
    assert_eq!(j["upgraded"], true);
    let upgraded = b.read_string();
    assert!(
        upgraded.starts_with("---\nformat: 2\njournal: {records: 4, head: \""),
        "{upgraded}"
    );
    assert!(
        section_text(&upgraded, "Decisions")
            .unwrap()
            .contains("upgraded from format 1 to format 2"),
        "{upgraded}"
    );
    let last = journal_lines(upgraded.as_bytes()).pop().unwrap();
    assert!(last.contains(" cmd=migrate "), "{last}");
    pair(["validate", b.p()]).code(0);
    // Sealed from now on.
    let records = journal_lines(upgraded.as_bytes());
    fs::write(&b.path, without(&upgraded, &[&records[3]])).unwrap();
    invalid(&b);
    fs::write(&b.path, &upgraded).unwrap();
    // Again: nothing to do, nothing written.
    let out = pair(["migrate", b.p()]);
    out.code(0)
        .mentions(&["already format 2", "nothing was written"]);
    b.assert_untouched(upgraded.as_bytes());
}

#[test]
fn migrate_refuses_a_board_validate_rejects() {
    let b = init_board(&["--format", "1"]);
    let text = b.read_string();
    let edited = text.replacen("\nphase: DRAFT\n", "\nphase: PLANNING\n", 1);
    fs::write(&b.path, &edited).unwrap();
    pair(["migrate", b.p()]).code(5).mentions(&["--repair"]);
    b.assert_untouched(edited.as_bytes());
}

#[test]
fn every_board_of_format_1_is_upgraded_by_migrate_and_then_sealed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/1");
    for name in dir_entries(&dir) {
        let b = Board::new(fs::read(dir.join(&name)).unwrap());
        let out = pair(["migrate", b.p()]);
        out.code(0);
        pair(["validate", b.p()]).code(0);
        let text = b.read_string();
        assert!(text.contains("\nformat: 2\n"), "{name}: {text}");
        let records = journal_lines(text.as_bytes());
        let cut = without(&text, &[records.last().unwrap()]);
        fs::write(&b.path, cut).unwrap();
        let out = pair(["validate", b.p()]);
        assert_eq!(out.code, Some(5), "{name}: {}", out.report());
    }
}

/// A sealed board and where its frontmatter ends: the property below cuts it anywhere after.
fn sealed_board() -> &'static (String, usize) {
    static BOARD: std::sync::OnceLock<(String, usize)> = std::sync::OnceLock::new();
    BOARD.get_or_init(|| {
        let b = board();
        let text = b.read_string();
        let body = text[4..].find("\n---\n").unwrap() + 4 + 5;
        (text, body)
    })
}

proptest! {
    #![proptest_config(Config { cases: 256, ..Config::default() })]

    /// The board cut short anywhere after its frontmatter (whole records, part of one, the
    /// whole journal, sections before it): `validate` rejects it, unless only the last line's
    /// end was cut.
    #[test]
    fn any_truncation_after_the_frontmatter_is_detected(at in 0.0f64..1.0) {
        let (text, body) = sealed_board();
        let end = text.trim_end().len();
        let cut = body + ((end - body) as f64 * at) as usize;
        let cut = (0..=cut).rev().find(|c| text.is_char_boundary(*c)).unwrap();
        let report = pair::law::validate::check_board(&text.as_bytes()[..cut]);
        prop_assert!(report.is_err(), "cut at {cut} of {} was accepted", text.len());
    }

    /// Any number of the journal's records kept, in order, from the first (a truncation of the
    /// journal): rejected, whichever records are kept.
    #[test]
    fn any_prefix_of_the_records_is_detected(keep in 0usize..4) {
        let (text, _) = sealed_board();
        let records = journal_lines(text.as_bytes());
        let dropped: Vec<&String> = records[keep..].iter().collect();
        let edited = without(text, &dropped);
        prop_assert!(pair::law::validate::check_board(edited.as_bytes()).is_err());
    }
}
