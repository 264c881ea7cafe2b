//! Hardening of the store and the inputs: what other programs and other users do to a
//! blackboard and its sidecar files, and inputs that could hang `pair` or exhaust its memory.
//! Every check runs the real binary on real files. Checks about users and groups create them
//! (`groupadd`/`useradd`, unique names, removed afterwards) and run `pair` as them through
//! `setpriv`; without root or those tools they are skipped with a printed reason.

mod common;

use common::*;

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
