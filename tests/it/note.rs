//! `pair note`: where an entry lands, sections created in template order, headings a note may not
//! open, notes from files and stdin, and the bytes around an append left alone.

use crate::common::env::Env;
use crate::common::files::note_args;
use crate::common::flow::{PLAN, PLAN_REVIEWS, planning, submit_plan};
use crate::common::phases::board_in;
use crate::common::*;
use crate::proto::{Proto, *};
use std::fs;

#[test]
fn note_refuses_unknown_and_miscased_sections_unless_asked_to_create_one() {
    let b = init_board(&[]);
    let before = b.read();
    let out = pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidnce",
        "--note",
        "x",
    ]);
    out.code(4);
    assert!(
        out.stderr.contains("did you mean \"Evidence\"?"),
        "{}",
        out.report()
    );
    let out = pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "evidence",
        "--note",
        "x",
    ]);
    out.code(4);
    assert!(
        out.stderr.contains("spelled \"Evidence\""),
        "{}",
        out.report()
    );
    // Even with --new-section: a section differing only in case would look like the same one.
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "evidence",
        "--note",
        "x",
        "--new-section",
    ])
    .code(4);
    b.assert_untouched(&before);
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Benchmarks",
        "--note",
        "x",
    ])
    .code(4);
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Benchmarks",
        "--note",
        "x",
        "--new-section",
    ])
    .code(0);
    // Once in the body, it is a known section.
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Benchmarks",
        "--note",
        "y",
    ])
    .code(0);
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "z",
    ])
    .code(0);
}

fn section_entries(status: &serde_json::Value, name: &str) -> u64 {
    status["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no section {name} in {status}"))["entries"]
        .as_u64()
        .unwrap()
}

#[test]
fn level_3_headings_in_a_note_are_demoted_so_each_entry_counts_once() {
    let p = planning();
    let out = submit_plan(&p);
    out.mentions(&["####", "moved one level down"]);
    let text = p.text();
    assert!(text.contains("\n#### Root cause\n"), "{text}");
    assert!(text.contains("\n##### Detail\n"), "{text}");
    assert!(text.contains("\n#### Fix\n"), "{text}");
    assert!(!text.contains("\n### Root cause"), "{text}");
    assert_eq!(section_entries(&p.status(), "Plan Revisions"), 1);
    // What was pinned is what the entry holds: the reviewers' verdicts are held to it.
    let poll = p.poll_expect("alice", 0);
    let sha = poll["review"]["artifact"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let diff = pair(["diff", p.p()]);
    diff.code(0);
    assert_eq!(sha256_hex(&diff.stdout_bytes), sha);
    p.ok(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            &sha,
            "--note",
            "fine",
        ],
    );
}

#[test]
fn old_boards_whose_notes_hold_level_3_headings_count_entries_by_their_form() {
    let b = init_board(&[]);
    let text = b.read_string().replace(
        "## Evidence\n",
        "## Evidence\n\n### Note — doer — 2026-01-01T00:00:00Z\n\nRepro:\n\n### Step 1\n\nupload twice\n\n### Step 2\n\nsee the error\n",
    );
    fs::write(&b.path, &text).unwrap();
    pair(["validate", b.p()]).code(0);
    let status = pair(["status", b.p(), "--json"]).code(0).json();
    assert_eq!(section_entries(&status, "Evidence"), 1);
    let latest = pair(["show", b.p(), "Evidence", "--latest", "--json"])
        .code(0)
        .json();
    let entry = &latest["entry"];
    assert_eq!(entry["agent"], "doer");
    assert_eq!(entry["kind"], "record");
    assert_eq!(
        entry["text"],
        "Repro:\n\n### Step 1\n\nupload twice\n\n### Step 2\n\nsee the error"
    );
}

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
fn a_note_with_a_plan_reviews_heading_in_goal_is_refused_so_reviews_still_land_in_plan_reviews() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    let before = p.b.read();
    let out = p.run(
        "doer",
        &[
            "note",
            "--section",
            "Goal",
            "--note",
            "Context\n## Plan Reviews\nthis would capture reviews",
        ],
    );
    assert!(
        matches!(out.code, Some(c) if c != 0),
        "must be refused\n{}",
        out.report()
    );
    p.b.assert_untouched(&before);
    let out = p.run_stdin(
        "doer",
        &["note", "--section", "Goal", "--note-file", "-"],
        "Context\n## Plan Reviews\n",
    );
    assert!(
        matches!(out.code, Some(c) if c != 0),
        "must be refused\n{}",
        out.report()
    );
    p.b.assert_untouched(&before);

    p.ok(
        "doer",
        &["submit", "plan", "--note", "p1", "--user-approved"],
    );
    p.ok_entry(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        "Plan Reviews",
        Some(1),
        Some("APPROVED"),
    );
    let t = p.text();
    assert_eq!(
        section_names(&t)
            .iter()
            .filter(|s| *s == "Plan Reviews")
            .count(),
        1,
        "{t}"
    );
    assert!(
        entry_headings(&t, "Goal").is_empty(),
        "no review landed in Goal:\n{t}"
    );
    assert_eq!(entry_headings(&t, "Plan Reviews").len(), 1, "{t}");
}

#[test]
fn a_note_lands_at_the_end_of_its_section_and_creates_a_missing_one_in_template_order() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    p.ok_entry(
        "alice",
        &["note", "--section", "Evidence", "--note", "first"],
        "Evidence",
        None,
        None,
    );
    p.ok_entry(
        "doer",
        &["note", "--section", "Evidence", "--note", "second"],
        "Evidence",
        None,
        None,
    );
    let e = sect(&p.text(), "Evidence").unwrap();
    assert!(e.find("first").unwrap() < e.find("second").unwrap(), "{e}");
    // Root Cause Analysis is not in a feature board's template: it is created in place
    assert!(!section_names(&p.text()).contains(&"Root Cause Analysis".to_string()));
    p.ok_entry(
        "doer",
        &[
            "note",
            "--section",
            "Root Cause Analysis",
            "--note",
            "aside",
        ],
        "Root Cause Analysis",
        None,
        None,
    );
    let names = section_names(&p.text());
    let rca = names
        .iter()
        .position(|n| n == "Root Cause Analysis")
        .unwrap();
    let plan = names.iter().position(|n| n == "Plan Revisions").unwrap();
    let ev = names.iter().position(|n| n == "Evidence").unwrap();
    assert!(
        ev < rca && rca < plan,
        "created at its template position: {names:?}"
    );
}

#[test]
fn notes_come_from_text_files_and_stdin_into_the_entry() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    p.ok_entry_stdin(
        "doer",
        &["submit", "plan", "--note-file", "-", "--user-approved"],
        "Plan from stdin\n- step one\n",
        PLAN,
        Some(1),
    );
    assert!(
        sect(&p.text(), PLAN).unwrap().contains("- step one"),
        "{}",
        p.text()
    );
    let f = p.b.aux_file("review.md", "Review from a file\nline two\n");
    p.ok_entry(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note-file",
            f.to_str().unwrap(),
        ],
        PLAN_REVIEWS,
        Some(1),
        Some("CHANGES_REQUESTED"),
    );
    let reviews = sect(&p.text(), PLAN_REVIEWS).unwrap();
    assert!(
        reviews.contains("Review from a file") && reviews.contains("line two"),
        "{reviews}"
    );
}

#[test]
fn a_note_append_preserves_every_other_byte_of_the_body() {
    let p = Proto::init(&["--reviewers", "alice"]);
    // odd but valid body bytes: trailing spaces, tabs, a fence holding a heading-like line,
    // and no newline at the very end
    let text = p.text();
    let odd = text.replacen(
        "## Evidence\n",
        "## Evidence\n\nsome  trailing spaces   \n\tTabbed line\n```text\n## not a section\n```\n",
        1,
    );
    let odd = odd.trim_end_matches('\n').to_string() + "\nlast line without newline";
    let h = p.b.sha();
    p.b.write_expect(&odd, &h, &["--repair", "--reason", "setup"])
        .code(0);
    p.ok("alice", &["register"]);
    let before = p.text();
    p.ok_entry(
        "alice",
        &["note", "--section", "Evidence", "--note", "appended"],
        "Evidence",
        None,
        None,
    );
    let after = p.text();
    // (the journal, at the end, gains the write's record; the rest is compared)
    let unj = |t: &str| String::from_utf8(unjournaled(t.as_bytes())).unwrap();
    let (before_c, after_c) = (unj(&before), unj(&after));
    let (ob, nb) = (body_of(&before_c).as_bytes(), body_of(&after_c).as_bytes());
    let prefix = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    let suffix = ob
        .iter()
        .rev()
        .zip(nb.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        prefix + suffix >= ob.len() && nb.len() > ob.len(),
        "the note must be one insertion; every other body byte preserved exactly\n--- before ---\n{before}\n--- after ---\n{after}"
    );
    let ev = sect(&after, "Evidence").unwrap();
    assert!(
        ev.contains("\tTabbed line") && ev.contains("some  trailing spaces   \n"),
        "{ev:?}"
    );
    assert!(
        after.ends_with("last line without newline") || after.contains("last line without newline"),
        "{after}"
    );
}

#[test]
fn notes_that_would_open_a_level_1_or_2_heading_are_refused() {
    let p = board_in("PLANNING", &["--reviewers", "alice,bob"]);
    for text in [
        "harmless\n## Plan Reviews\nsneaky",
        "# Title\nbody",
        "## Decisions",
        "```\nunclosed fence\n",
    ] {
        let f = p.b.aux_file("note.md", text);
        let out = p.refused_any(
            "alice",
            &[
                "note",
                "--section",
                "Goal",
                "--note-file",
                f.to_str().unwrap(),
            ],
            &[4, 6],
        );
        assert!(!out.all().trim().is_empty(), "a refusal says why");
        p.refused_any(
            "doer",
            &["submit", "plan", "--note", text, "--user-approved"],
            &[4, 6],
        );
        let before = p.b.read();
        let out = p.run_stdin(
            "bob",
            &["note", "--section", "Evidence", "--note-file", "-"],
            text,
        );
        out.code_in(&[4, 6]);
        p.b.assert_untouched(&before);
    }
    // the same text inside a closed fence is fine
    p.ok_entry(
        "alice",
        &[
            "note",
            "--section",
            "Goal",
            "--note",
            "```\n## not a heading\n```",
        ],
        "Goal",
        None,
        None,
    );
    assert_eq!(
        section_names(&p.text())
            .iter()
            .filter(|s| *s == "Plan Reviews")
            .count(),
        1
    );
}

#[test]
fn a_section_name_that_would_not_parse_back_is_refused_not_silently_dropped() {
    let e = Env::new();
    e.ok(0, &["init", "b.md", "--goal", "g"]);
    let before = e.read("b.md");
    for name in ["Foo #", "Evidence ##", "`code`", "a\nb", "~~~"] {
        let r = e.run(&[
            "note",
            "b.md",
            "--agent",
            "doer",
            "--section",
            name,
            "--note",
            "lost?",
        ]);
        assert_eq!(r.code, 4, "section {name:?}: {}", r.stderr);
        assert_eq!(e.read("b.md"), before, "section {name:?} changed the file");
    }
}

#[test]
fn a_text_over_the_limit_of_one_entry_is_refused_with_the_limit_and_the_board_untouched() {
    let b = init_board(&[]);
    let dir = tempfile::tempdir().unwrap();
    let limit = pair::law::validate::MAX_ENTRY_BYTES;
    let long = dir.path().join("long.md");
    fs::write(&long, "a".repeat(limit + 1)).unwrap();
    let before = b.read();
    let file = long.to_str().unwrap();
    let args = |from: &str, json: bool| {
        let mut args = vec![
            "note",
            b.p(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note-file",
        ];
        args.push(if from == "-" { "-" } else { file });
        if json {
            args.push("--json");
        }
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let e = pair(args(file, true)).json_error(5);
    assert!(e["errors"].to_string().contains("1 MiB"), "{e:#}");
    assert_eq!(b.read(), before, "the board is untouched");
    let out = pair(args(file, false));
    out.code(5);
    assert!(
        out.stderr.contains("over the 1 MiB limit of one entry")
            && out.stderr.contains(&limit.to_string()),
        "{}",
        out.report()
    );
    assert_eq!(b.read(), before, "the board is untouched");
    // The same text through stdin is bounded alike; a text at the limit goes in.
    pair_stdin(args("-", false), "b".repeat(limit + 1)).code(5);
    assert_eq!(b.read(), before);
    fs::write(&long, "c".repeat(limit)).unwrap();
    pair(args(file, false)).code(0);
    assert!(b.read().len() > limit);
}
