//! `pair validate`: one file, several files, directories and stdin; the JSON and text reports and
//! every error in them; body/frontmatter agreement; conflict markers; CI annotations and the
//! pre-commit hook.

use crate::common::files::note_args;
use crate::common::flow::{planning, submit_plan};
use crate::common::reads::text;
use crate::common::repair::repair;
use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

#[test]
fn validate_prints_the_sha256_of_each_file_in_text_and_json() {
    let ok = Board::minimal();
    let bad = Board::new(set_top(MINIMAL, "phase", "NOWHERE"));
    let out = pair(["validate", ok.p(), bad.p()]);
    out.code(5);
    assert!(
        out.stdout
            .contains(&format!("ok       {}  sha256 {}", ok.p(), ok.sha())),
        "{}",
        out.report()
    );
    assert!(
        out.stdout
            .contains(&format!("invalid  {}  sha256 {}", bad.p(), bad.sha())),
        "{}",
        out.report()
    );
    assert!(
        out.stdout
            .contains(&format!("  repair: {}", repair(bad.p(), &bad.sha()))),
        "{}",
        out.report()
    );

    let out = pair(["validate", ok.p(), bad.p(), "--json"]);
    out.code(5);
    let j = out.json();
    assert_eq!(j["files"][0]["sha256"], Value::from(ok.sha()));
    assert_eq!(j["files"][1]["sha256"], Value::from(bad.sha()));
}

// ---------------------------------------------------------------------------------------------
// conflict markers

/// The body-conflict fixture with a broken phase besides: the markers must not hide it.
fn conflicted_with_bad_phase() -> String {
    let body = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/conflict_markers_body.md"
    ))
    .unwrap();
    body.replacen("phase: DRAFT", "phase: PLANING", 1)
}

#[test]
fn validate_reports_every_conflict_marker_and_what_else_is_wrong() {
    let content = conflicted_with_bad_phase();
    let b = Board::new(&content);
    let markers: Vec<usize> = ["<<<<<<< HEAD", "=======", ">>>>>>> branch"]
        .iter()
        .map(|m| line_no(&content, m))
        .collect();

    let out = pair(["validate", b.p()]);
    out.code(5);
    for line in &markers {
        assert!(
            out.stdout.contains(&format!(
                "line {line}: `file`: unresolved git conflict marker"
            )),
            "marker on line {line} not reported\n{}",
            out.report()
        );
    }
    out.mentions(&["line 2: `phase`", "PLANING"]);

    let j = pair(["validate", b.p(), "--json"]).json();
    let errors = j["files"][0]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 4, "{j}");
    let lines: Vec<u64> = errors.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(
        lines,
        [markers[0] as u64, markers[1] as u64, markers[2] as u64, 2]
    );
    b.assert_untouched(content.as_bytes());
}

#[test]
fn a_frontmatter_conflict_reports_what_is_wrong_on_both_sides_only() {
    // Each side is fine alone; the counter below the conflict is wrong whichever is kept.
    let content = replace_line(
        MINIMAL,
        "yolo: false",
        "<<<<<<< HEAD\nyolo: false\n||||||| base\nyolo: maybe\n=======\nyolo: true\n>>>>>>> other",
    );
    let content = set_top(&content, "plan_revision", "-1");
    let b = Board::new(&content);
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    let j = out.json();
    let errors = j["files"][0]["errors"].as_array().unwrap();
    let fields: Vec<&str> = errors
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["file", "file", "file", "plan_revision"],
        "{}",
        out.report()
    );
    assert!(
        !out.stdout.contains("yolo"),
        "a side's value is not an error: {}",
        out.report()
    );
}

#[test]
fn validate_dash_reads_the_blackboard_from_stdin() {
    let out = pair_stdin(["validate", "-"], MINIMAL);
    out.code(0);
    assert!(
        out.stdout
            .contains(&format!("ok       <stdin>  sha256 {}", sha256_hex(MINIMAL))),
        "{}",
        out.report()
    );
    let out = pair_stdin(["validate", "-", "--json"], set_top(MINIMAL, "phase", "X"));
    out.code(5);
    let j = out.json();
    assert_eq!(j["files"][0]["path"], "<stdin>");
    assert_eq!(j["files"][0]["errors"][0]["field"], "phase");
    pair_stdin(
        ["validate", "--format", "github", "-"],
        set_top(MINIMAL, "phase", "X"),
    )
    .code(5)
    .mentions(&["::error file=<stdin>,line=2"]);
    pair_stdin(["validate", "-", "-"], MINIMAL).code(4);
}

#[test]
fn validate_warns_on_a_directory_without_blackboards_and_require_some_fails() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("blackboards");
    fs::create_dir(&empty).unwrap();
    fs::write(empty.join("README.md"), "# not a blackboard\n").unwrap();
    let e = empty.to_str().unwrap();

    let out = pair(["validate", e]);
    out.code(0);
    assert!(
        out.stderr
            .contains(&format!("pair: warning: {e}: no blackboard found")),
        "{}",
        out.report()
    );
    let j = pair(["validate", e, "--json"]).json();
    assert_eq!(j["empty_dirs"], serde_json::json!([e]));

    let out = pair(["validate", "--require-some", e]);
    out.code(5);
    assert!(
        out.stdout.contains(&format!("invalid  {e}")),
        "{}",
        out.report()
    );
    let out = pair(["validate", "--require-some", "--format", "github", e]);
    out.code(5).mentions(&["::error file="]);

    // Boards in one directory do not excuse another that has none.
    let full = dir.path().join("full");
    fs::create_dir(&full).unwrap();
    fs::write(full.join("t.md"), MINIMAL).unwrap();
    pair(["validate", "--require-some", full.to_str().unwrap()]).code(0);
    pair(["validate", "--require-some", full.to_str().unwrap(), e]).code(5);
}

#[test]
fn validate_dir_checks_a_board_that_lost_its_phase_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("ok.md"), MINIMAL).unwrap();
    fs::write(d.join("no-phase.md"), remove_top(MINIMAL, "phase")).unwrap();
    fs::write(
        d.join("only-agents.md"),
        "---\nagents:\n  doer:\n    role: doer\n---\n# x\n",
    )
    .unwrap();
    // Other Markdown, with or without frontmatter, is not ours.
    fs::write(
        d.join("post.md"),
        "---\ntitle: Hello\ntags: [a]\n---\n# Post\n",
    )
    .unwrap();
    fs::write(d.join("plain.md"), "# Notes\n\nphase: not frontmatter\n").unwrap();
    fs::write(
        d.join("nested.md"),
        "---\nsettings:\n  phase: DRAFT\n---\n# Nested keys do not count\n",
    )
    .unwrap();

    pair(["validate", d.to_str().unwrap()]).code(5);
    let j = pair(["validate", d.to_str().unwrap(), "--json"]).json();
    let mut paths: Vec<String> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            Path::new(f["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    paths.sort();
    assert_eq!(paths, ["no-phase.md", "ok.md", "only-agents.md"], "{j}");
    assert_eq!(j["invalid"], 2);
    // The same answer as naming the file.
    let lone = d.join("no-phase.md");
    pair(["validate", lone.to_str().unwrap()]).code(5);
}

#[test]
fn status_reports_every_conflict_marker_too() {
    let content = conflicted_with_bad_phase();
    let b = Board::new(&content);
    let out = pair(["status", b.p()]);
    out.code(5);
    for marker in ["<<<<<<< HEAD", "=======", ">>>>>>> branch"] {
        out.mentions_line_any(&[line_no(&content, marker)]);
    }
    out.mentions(&["line 2: `phase`", "PLANING"]);
    b.assert_untouched(content.as_bytes());
}

#[test]
fn validate_finds_a_counter_with_no_entry_and_names_both_lines() {
    let p = planning();
    submit_plan(&p);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    let text = p.text();
    let edited = text.replacen("plan_revision: 1\n", "plan_revision: 2\n", 1);
    fs::write(&p.b.path, &edited).unwrap();
    let key_line = line_no(&edited, "plan_revision: 2");
    let section_line = line_no(&edited, "## Plan Revisions");
    let entry_line = edited
        .lines()
        .position(|l| l.starts_with("### Plan revision 1 — "))
        .unwrap()
        + 1;
    let out = pair(["validate", p.p()]);
    out.code(5);
    let first = format!("line {key_line}: `plan_revision`");
    let section = format!("`## Plan Revisions` (line {section_line})");
    let entry = format!("plan revision 1, line {entry_line}");
    out.mentions(&[&first, &section, &entry, "no entry for plan revision 2"]);
    let json = pair(["validate", p.p(), "--json"]).code(5).json();
    let error = &json["files"][0]["errors"][0];
    assert_eq!(error["field"], "plan_revision", "{json:#}");
    assert_eq!(error["line"], key_line, "{json:#}");
    // status says the same, with what it can still show.
    pair(["status", p.p()])
        .code(5)
        .mentions(&["no entry for plan revision 2"]);
}

#[test]
fn no_write_proceeds_on_a_board_validate_rejects_and_a_repair_must_leave_one_it_accepts() {
    // Every write refuses (exit 5, untouched) the board `validate` rejects: a counter with no
    // entry, a hand-edited phase the journal does not end in, a journal whose chain is broken.
    let p = planning();
    submit_plan(&p);
    let good = p.text();
    let counter = good.replacen("plan_revision: 1\n", "plan_revision: 3\n", 1);
    let phase = good.replacen("\nphase: PLANNING_SUBMITTED\n", "\nphase: PLANNING\n", 1);
    let records = journal_lines(good.as_bytes());
    let chain = good.replacen(&format!("{}\n", records[1]), "", 1);
    for (what, bad, says) in [
        ("counter", &counter, "no entry for plan revision 3"),
        (
            "phase",
            &phase,
            "the phase changed without a recorded write",
        ),
        ("chain", &chain, "chain is broken"),
    ] {
        fs::write(&p.b.path, bad).unwrap();
        pair(["validate", p.p()]).code(5).mentions(&[says]);
        let copy = p.b.aux_file("copy.md", bad.as_bytes());
        let copy = copy.to_str().unwrap();
        let sha = sha256_hex(bad);
        for args in [
            note_args(p.p(), "doer"),
            p.args("carol", &["register"]),
            p.args("alice", &["claim"]),
            p.args(
                "alice",
                &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
            ),
            p.args("bob", &["block", "--reason", "wait"]),
            p.args("doer", &["report-usage", "--tokens", "5"]),
            vec![
                "write".into(),
                p.p().into(),
                "--content-file".into(),
                copy.into(),
                "--expect-sha256".into(),
                sha.clone(),
            ],
            vec![
                "write".into(),
                p.p().into(),
                "--content-file".into(),
                copy.into(),
                "--expect-sha256".into(),
                sha.clone(),
                "--as".into(),
                "doer".into(),
            ],
        ] {
            let out = pair(&args);
            out.code(5);
            out.mentions(&[says]);
            assert!(
                out.stderr.contains("--repair"),
                "{what}: the repair is named\n{}",
                out.report()
            );
            p.b.assert_untouched(bad.as_bytes());
        }
        // Nor is such a board copied.
        let to = p.b.aux.path().join(format!("{what}-copy.md"));
        pair(["migrate", p.p(), to.to_str().unwrap()])
            .code(5)
            .mentions(&[says]);
        assert!(!to.exists(), "{what}: migrate made a copy");
    }
    // A repair may start from such a board, but must leave one that validate accepts.
    fs::write(&p.b.path, &counter).unwrap();
    let still = p.b.aux_file("still.md", counter.as_bytes());
    let out = pair([
        "write",
        p.p(),
        "--content-file",
        still.to_str().unwrap(),
        "--expect-sha256",
        &sha256_hex(&counter),
        "--repair",
        "--reason",
        "try",
    ]);
    out.code(5).mentions(&["no entry for plan revision 3"]);
    p.b.assert_untouched(counter.as_bytes());
    let fixed = p.b.aux_file("fixed.md", good.as_bytes());
    pair([
        "write",
        p.p(),
        "--content-file",
        fixed.to_str().unwrap(),
        "--expect-sha256",
        &sha256_hex(&counter),
        "--repair",
        "--reason",
        "set the counter back",
    ])
    .code(0);
    pair(["validate", p.p()]).code(0);
    pair(note_args(p.p(), "doer")).code(0);
    pair(["validate", p.p()]).code(0);
}

#[test]
fn a_section_after_the_journal_is_a_warning_the_next_write_puts_right() {
    // A hand edit that appends a section after `## Journal` hides nothing and loses nothing:
    // `validate` warns, and a write goes ahead and moves the journal back to the end.
    let p = planning();
    let text = format!("{}\n## Afterthoughts\n\nAppended by hand.\n", p.text());
    fs::write(&p.b.path, &text).unwrap();
    let out = pair(["validate", p.p()]);
    out.code(0)
        .mentions(&["follows `## Journal`", "moves it back"]);
    pair(note_args(p.p(), "doer")).code(0);
    let after = p.text();
    assert!(
        after.find("## Afterthoughts").unwrap() < after.find("## Journal").unwrap(),
        "{after}"
    );
    let out = pair(["validate", p.p()]);
    out.code(0);
    assert!(!out.all().contains("follows"), "{}", out.report());
}

#[test]
fn validate_finds_a_verdict_its_entry_does_not_give() {
    let p = planning();
    submit_plan(&p);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    pair(["validate", p.p()]).code(0);
    let text = p.text();
    let at = text.find("\n  alice:\n").unwrap();
    let (head, tail) = text.split_at(at);
    let edited = format!(
        "{head}{}",
        tail.replacen("plan_verdict: APPROVED", "plan_verdict: COMMENT", 1)
    );
    fs::write(&p.b.path, &edited).unwrap();
    let verdict_line = edited
        .lines()
        .position(|l| l == "    plan_verdict: COMMENT")
        .unwrap()
        + 1;
    let entry_line = edited
        .lines()
        .position(|l| l.starts_with("### Plan review — revision 1 — alice — APPROVED"))
        .unwrap()
        + 1;
    pair(["validate", p.p()]).code(5).mentions(&[
        &format!("line {verdict_line}: `agents.alice.plan_verdict`"),
        &format!("(line {entry_line}) says APPROVED"),
    ]);
}

#[test]
fn validate_json_for_a_valid_file_has_the_documented_shape() {
    let b = Board::minimal();
    let out = pair(["validate", b.p(), "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["schema"], 1, "{}", out.report());
    assert_eq!(j["valid"], true, "{}", out.report());
    let files = j["files"]
        .as_array()
        .unwrap_or_else(|| panic!("files array\n{}", out.report()));
    assert_eq!(files.len(), 1, "{}", out.report());
    assert!(
        files[0]["path"]
            .as_str()
            .unwrap_or_default()
            .ends_with("board.md"),
        "{}",
        out.report()
    );
    assert_eq!(files[0]["valid"], true, "{}", out.report());
    assert_eq!(
        files[0]["errors"].as_array().map(|a| a.len()),
        Some(0),
        "{}",
        out.report()
    );
    assert!(files[0]["warnings"].is_array(), "{}", out.report());
}

#[test]
fn validate_several_files_exits_5_and_names_only_the_invalid_one() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.md");
    let bad = dir.path().join("bad-one.md");
    fs::write(&good, MINIMAL).unwrap();
    fs::write(&bad, set_top(MINIMAL, "phase", "DONE")).unwrap();
    let out = pair(["validate", good.to_str().unwrap(), bad.to_str().unwrap()]);
    out.code(5).mentions(&["bad-one.md", "phase"]);

    let out = pair([
        "validate",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
        "--json",
    ]);
    out.code(5);
    let j = out.json();
    assert_eq!(j["valid"], false, "{}", out.report());
    let files = j["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", out.report()));
    assert_eq!(files.len(), 2, "{}", out.report());
    for f in files {
        let path = f["path"].as_str().unwrap_or_default();
        let expect_valid = path.ends_with("good.md");
        assert_eq!(f["valid"], expect_valid, "{}", out.report());
        let errors = f["errors"]
            .as_array()
            .unwrap_or_else(|| panic!("{}", out.report()));
        assert_eq!(errors.is_empty(), expect_valid, "{}", out.report());
        for e in errors {
            assert!(e.get("field").is_some(), "{}", out.report());
            assert!(e.get("line").is_some(), "{}", out.report());
            assert!(e["message"].is_string(), "{}", out.report());
        }
    }
}

#[test]
fn validate_searches_directories_recursively_for_md_blackboards() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("a/b")).unwrap();
    fs::write(dir.path().join("top.md"), MINIMAL).unwrap();
    fs::write(
        dir.path().join("a/b/deep-bad.md"),
        set_top(MINIMAL, "plan_revision", "-3"),
    )
    .unwrap();
    fs::write(dir.path().join("a/notes.txt"), "not markdown, ignored\n").unwrap();
    let out = pair(["validate", dir.path().to_str().unwrap(), "--json"]);
    out.code(5);
    let j = out.json();
    let files = j["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", out.report()));
    let paths: Vec<&str> = files
        .iter()
        .map(|f| f["path"].as_str().unwrap_or_default())
        .collect();
    assert!(
        paths.iter().any(|p| p.ends_with("top.md")),
        "{}",
        out.report()
    );
    assert!(
        paths.iter().any(|p| p.ends_with("deep-bad.md")),
        "{}",
        out.report()
    );
    assert!(
        !paths.iter().any(|p| p.ends_with("notes.txt")),
        "{}",
        out.report()
    );
    for f in files {
        let p = f["path"].as_str().unwrap_or_default();
        assert_eq!(f["valid"], !p.ends_with("deep-bad.md"), "{}", out.report());
    }
    pair(["validate", dir.path().to_str().unwrap()])
        .code(5)
        .mentions(&["deep-bad.md", "plan_revision"]);

    // once the bad one is fixed, the whole tree is valid
    fs::write(dir.path().join("a/b/deep-bad.md"), MINIMAL).unwrap();
    pair(["validate", dir.path().to_str().unwrap()]).code(0);
}

#[test]
fn validate_reports_every_error_in_a_file_not_just_the_first() {
    let content = set_top(
        &set_top(&set_top(MINIMAL, "phase", "DONE"), "yolo", "\"yes please\""),
        "red_test_round",
        "-2",
    );
    let b = Board::new(&content);
    pair(["validate", b.p()])
        .code(5)
        .mentions(&["phase", "yolo", "red_test_round"]);
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    let errors = out.json()["files"][0]["errors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let fields: Vec<String> = errors
        .iter()
        .map(|e| e["field"].as_str().unwrap_or_default().to_string())
        .collect();
    for f in ["phase", "yolo", "red_test_round"] {
        assert!(
            fields.iter().any(|x| x == f),
            "missing error for `{f}`: {fields:?}\n{}",
            out.report()
        );
    }
    let lines: Vec<u64> = errors.iter().filter_map(|e| e["line"].as_u64()).collect();
    for l in [2u64, 4, line_no(&content, "red_test_round: -2") as u64] {
        assert!(
            lines.contains(&l),
            "missing error at line {l}: {lines:?}\n{}",
            out.report()
        );
    }
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

const VALID: &str = include_str!("../../templates/blackboard.md");

#[test]
fn validate_format_github_prints_workflow_annotations() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("ok.md"), VALID).unwrap();
    let bad = VALID.replacen("phase: DRAFT", "phase: SOMEWHERE", 1);
    assert_ne!(bad, VALID);
    std::fs::write(d.join("bad.md"), &bad).unwrap();
    let warn = VALID.replacen("yolo: false", "yolo: false\nmood: cheerful", 1);
    std::fs::write(d.join("warn.md"), &warn).unwrap();

    let out = output_in(
        d,
        &[
            "validate", "--format", "github", "ok.md", "bad.md", "warn.md",
        ],
    );
    assert_eq!(out.status.code(), Some(5), "invalid → exit 5");
    let t = text(&out.stdout);
    let line = bad.lines().position(|l| l.starts_with("phase:")).unwrap() + 1;
    let error = t
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("no ::error in\n{t}"));
    assert!(
        error.starts_with(&format!(
            "::error file=bad.md,line={line},title=pair validate%3A phase::"
        )),
        "{error}"
    );
    assert!(error.contains("SOMEWHERE"), "{error}");
    let warning = t
        .lines()
        .find(|l| l.starts_with("::warning "))
        .unwrap_or_else(|| panic!("no ::warning in\n{t}"));
    assert!(
        warning.starts_with("::warning file=warn.md,line="),
        "{warning}"
    );
    assert!(warning.contains("mood"), "{warning}");
    assert!(!t.contains("file=ok.md"), "{t}");
    assert!(t.ends_with("3 blackboards checked, 1 invalid\n"), "{t}");

    let ok = output_in(d, &["validate", "--format", "github", "ok.md"]);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(text(&ok.stdout), "1 blackboard checked, 0 invalid\n");

    let missing = output_in(d, &["validate", "--format", "github", "nope.md"]);
    assert_eq!(missing.status.code(), Some(7));
    assert!(text(&missing.stdout).starts_with("::error file=nope.md,title="));

    let both = output_in(d, &["validate", "--format", "github", "--json", "ok.md"]);
    assert_eq!(both.status.code(), Some(4));
}

#[test]
fn pre_commit_hook_runs_pair_validate_on_blackboards() {
    let hooks = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.pre-commit-hooks.yaml"
    ))
    .unwrap();
    assert!(hooks.contains("- id: pair-validate"));
    assert!(hooks.contains("entry: pair validate"));
    assert!(hooks.contains("files: "));
}
