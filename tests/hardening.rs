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
