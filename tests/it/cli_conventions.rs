//! Command-line conventions, checked through the real binary: colour and verbosity flags and `pair
//! help`, terminal escapes, `--version --json`, a default blackboard and `-`, what `validate`
//! checks and says, the repair path of an invalid blackboard, man pages and install and git advice.

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command as StdCommand;

// ---------------------------------------------------------------------------------------------
// C. colour, quiet, verbose, help

/// `pair status BOARD` with extra arguments and environment, stdout a pipe.
fn status_colour(b: &Board, extra: &[&str], env: &[(&str, &str)]) -> bool {
    let mut cmd = pair_cmd();
    cmd.env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("TERM")
        .arg("status")
        .arg(b.p())
        .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(&mut cmd, format!("status {extra:?} {env:?}"));
    out.code(0);
    out.stdout.contains("\x1b[")
}

#[test]
fn color_flag_and_environment_decide_colour() {
    let b = Board::minimal();
    assert!(!status_colour(&b, &[], &[]), "a pipe is not coloured");
    assert!(status_colour(&b, &["--color", "always"], &[]));
    assert!(status_colour(&b, &["--color=always"], &[("NO_COLOR", "1")]));
    assert!(!status_colour(
        &b,
        &["--color", "never"],
        &[("CLICOLOR_FORCE", "1")]
    ));
    assert!(status_colour(&b, &[], &[("CLICOLOR_FORCE", "1")]));
    assert!(!status_colour(&b, &[], &[("CLICOLOR_FORCE", "0")]));
    assert!(!status_colour(
        &b,
        &[],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]
    ));
    assert!(!status_colour(
        &b,
        &["--color", "auto"],
        &[("TERM", "dumb")]
    ));
    let bad = pair(["status", b.p(), "--color", "sometimes"]);
    bad.code(4);
}

#[test]
fn term_dumb_turns_colour_off_on_a_terminal() {
    let b = Board::minimal();
    let in_terminal = |term: &str| {
        StdCommand::new("script")
            .args([
                "-qec",
                &format!("{} status {}", pair_bin().display(), b.p()),
                "/dev/null",
            ])
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env("TERM", term)
            .stdin(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let Some(coloured) = in_terminal("xterm") else {
        eprintln!("`script` is not available; skipping the terminal check");
        return;
    };
    assert!(coloured.contains("\x1b["), "{coloured}");
    let dumb = in_terminal("dumb").expect("script ran once already");
    assert!(!dumb.contains("\x1b["), "{dumb}");
    assert!(dumb.contains("phase       DRAFT"), "{dumb}");
}

#[test]
fn quiet_prints_only_errors() {
    let b = Board::new(insert_before_closing(MINIMAL, "mood: cheerful\n"));
    let out = pair(["status", b.p(), "-q"]);
    out.code(0);
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        out.report()
    );
    pair([
        "--quiet",
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "n",
    ])
    .code(0);
    let out = pair(["-q", "poll", b.p(), "--agent", "doer"]);
    out.code(0);
    assert!(out.all().trim().is_empty(), "{}", out.report());

    // validate -q lists only the invalid files and their errors: no ok lines, no warnings,
    // no summary.
    let bad = Board::new(set_top(MINIMAL, "phase", "NOPE"));
    let out = pair(["validate", "-q", b.p(), bad.p()]);
    out.code(5);
    assert!(!out.stdout.contains("ok "), "{}", out.report());
    assert!(!out.all().contains("warning"), "{}", out.report());
    assert!(!out.stdout.contains("checked"), "{}", out.report());
    assert!(out.stdout.contains(&format!("invalid  {}", bad.p())));
    assert!(out.stdout.contains("`phase`"));
    let out = pair(["validate", "-q", b.p()]);
    out.code(0);
    assert!(out.all().trim().is_empty(), "{}", out.report());

    // Errors are still said; --json output is unchanged.
    let out = pair(["-q", "status", "/nonexistent/board.md"]);
    out.code(7);
    assert!(
        out.stderr.contains("no such blackboard"),
        "{}",
        out.report()
    );
    let out = pair(["-q", "status", b.p(), "--json"]);
    out.code(0);
    assert_eq!(out.json()["phase"], "DRAFT");
    pair(["-q", "-v", "status", b.p()]).code(4);
}

#[test]
fn verbose_says_what_was_locked_read_checked_and_written_with_timings() {
    let b = Board::minimal();
    let old = b.sha();
    let out = pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "n",
        "-v",
    ]);
    out.code(0);
    let new = b.sha();
    let err = &out.stderr;
    assert!(
        err.contains(&format!("pair: verbose: locked {}.lock", b.p())),
        "{}",
        out.report()
    );
    assert!(
        err.contains(&format!("read {}: sha256 {old}", b.p())),
        "{err}"
    );
    assert!(
        err.contains("checked the new content: valid, phase DRAFT"),
        "{err}"
    );
    assert!(
        err.contains(&format!("wrote {}: sha256 {new}", b.p())),
        "{err}"
    );
    assert!(
        err.contains("note took ") && err.contains(" ms (exit 0)"),
        "{err}"
    );
    assert!(
        out.stdout.contains("appended"),
        "the result is still printed"
    );

    let out = pair(["--verbose", "status", b.p()]);
    out.code(0);
    assert!(
        out.stderr.contains(&format!(
            "read {}: {} bytes, sha256 {new}; checked: valid",
            b.p(),
            b.read().len()
        )),
        "{}",
        out.report()
    );
    let out = pair(["-v", "status", "/nonexistent/board.md"]);
    out.code(7);
    assert!(
        out.stderr.contains("status failed after ") && out.stderr.contains("with exit 7"),
        "{}",
        out.report()
    );
}

#[test]
fn pair_help_command_works_and_exits_0() {
    let out = pair(["help"]);
    out.code(0);
    assert!(out.stdout.contains("Usage: pair"), "{}", out.report());
    assert!(out.stdout.contains("Examples:"));
    for command in ["poll", "advance", "validate", "help"] {
        let out = pair(["help", command]);
        out.code(0);
        assert!(
            out.stdout.contains(&format!("Usage: pair {command}")),
            "{}",
            out.report()
        );
        assert!(out.stdout.contains("Examples:"), "{}", out.report());
    }
    assert_eq!(
        pair(["help", "poll"]).stdout,
        pair(["poll", "--help"]).stdout
    );
    let j = pair(["help", "poll", "--json"]).json();
    assert_eq!(j["command"], "poll");
    assert!(j["help"].as_str().unwrap().contains("--wait"));
    pair(["help", "no-such-command"]).code(4);
}

#[test]
fn the_commands_list_matches_the_visible_commands() {
    use clap::CommandFactory;
    let visible: Vec<String> = pair::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    assert_eq!(pair::cli::commands(), visible);
    // `help` and `man` accept each of them, and nothing else.
    for c in &visible {
        pair(["help", c.as_str()]).code(0);
    }
}

// ---------------------------------------------------------------------------------------------
// J. terminal escapes

/// A valid board whose heading, unknown key and worktree try to drive the terminal.
fn hostile_board() -> String {
    let content = set_top(MINIMAL, "worktree", "\"/tmp/wt\\nphase       COMMITTED\"");
    let content = insert_before_closing(&content, "\"mood\\e]0;pwned\\a\\nforged\": 1\n");
    format!("{content}\n## Evil \x1b]0;owned\x07\x1b[2J heading \u{202e}txt.exe\n\ntext\n")
}

#[track_caller]
fn assert_tame(what: &str, text: &str, coloured: bool) {
    for bad in ['\x07', '\u{202e}', '\r'] {
        assert!(!text.contains(bad), "{what}: raw {bad:?} in\n{text}");
    }
    let escapes: Vec<&str> = text.split('\x1b').skip(1).collect();
    if coloured {
        for e in &escapes {
            let params: String = e.chars().take_while(|c| *c != 'm').collect();
            assert!(
                e.starts_with('[') && params[1..].chars().all(|c| c.is_ascii_digit() || c == ';'),
                "{what}: an escape other than a colour: {e:?}"
            );
        }
    } else {
        assert!(escapes.is_empty(), "{what}: raw ESC in\n{text}");
    }
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("phase       COMMITTED") || l.starts_with("forged")),
        "{what}: a forged line in\n{text}"
    );
}

#[test]
fn control_characters_from_a_board_are_escaped_in_every_human_output() {
    let b = Board::new(hostile_board());
    pair(["validate", b.p()]).code(0);

    let out = pair(["status", b.p()]);
    out.code(0);
    assert_tame("status", &out.stdout, false);
    assert!(
        out.stdout
            .contains("worktree    /tmp/wt\\nphase       COMMITTED"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout
            .contains("Evil \\x1b]0;owned\\x07\\x1b[2J heading \\u{202e}txt.exe"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains("mood\\x1b]0;pwned\\x07\\nforged"),
        "{}",
        out.report()
    );

    let out = pair(["status", b.p(), "--color", "always"]);
    assert_tame("status --color always", &out.stdout, true);
    assert!(out.stdout.contains("\x1b[1m"), "still coloured");

    for format in ["text", "github"] {
        let out = pair(["validate", b.p(), "--format", format]);
        out.code(0);
        assert_tame(format, &out.stdout, false);
    }

    // The same board, invalid: the partial status, the error and its field names.
    let broken = Board::new(set_top(&hostile_board(), "phase", "\"X\\e[2J\""));
    let out = pair(["status", broken.p()]);
    out.code(5);
    assert_tame("invalid status stdout", &out.stdout, false);
    assert_tame("invalid status stderr", &out.stderr, false);
    let out = pair(["validate", broken.p()]);
    assert_tame("invalid validate", &out.all(), false);

    // JSON keeps the exact value (escaped by JSON).
    let j = pair(["status", b.p(), "--json"]).json();
    assert_eq!(
        j["sections"].as_array().unwrap().last().unwrap()["name"],
        "Evil \x1b]0;owned\x07\x1b[2J heading \u{202e}txt.exe"
    );

    // worktree-path prints a path built from what it is given, escaped too.
    let out = pair(["worktree-path", b.p(), "--repo-root", "/tmp/x\x1b[2J\ny"]);
    out.code(0);
    assert_tame("worktree-path", &out.stdout, false);
    assert_eq!(out.stdout, "/tmp/x\\x1b[2J\\ny/.worktrees/board\n");
}

// ---------------------------------------------------------------------------------------------
// H. --version --json

#[test]
fn version_json_is_an_object_like_every_other_command() {
    for args in [
        vec!["--version", "--json"],
        vec!["--json", "-V"],
        vec!["poll", "--version", "--json"],
    ] {
        let out = pair(&args);
        out.code(0);
        let j = out.json();
        assert_eq!(j["schema"], 1);
        assert_eq!(j["name"], "pair");
        assert_eq!(j["version"], env!("CARGO_PKG_VERSION"));
    }
    let out = pair(["--version"]);
    out.code(0);
    assert_eq!(
        out.stdout.trim(),
        format!("pair {}", env!("CARGO_PKG_VERSION"))
    );
}

// ---------------------------------------------------------------------------------------------
// F. a default blackboard; E. `-` is not a blackboard

#[test]
fn pair_board_and_board_flag_stand_in_for_a_left_out_board() {
    let b = Board::absent();
    let env = [("PAIR_BOARD", b.p())];
    pair_env(["init", "--reviewers", "alice", "--yolo"], &env).code(0);
    assert!(b.path.is_file());
    pair_env(["register", "--agent", "alice"], &env).code(0);
    pair(["--board", b.p(), "advance", "--agent", "doer", "PLANNING"]).code(0);
    pair([
        "submit",
        "--agent",
        "doer",
        "plan",
        "--note",
        "p",
        "--board",
        b.p(),
    ])
    .code(0);
    let out = pair_env(["poll", "--agent", "alice", "--json"], &env);
    out.code(0);
    assert_eq!(out.json()["path"], Value::from(b.p()));
    // The verdict is read as the verdict, not as the board.
    pair_env(
        [
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--agent",
            "alice",
            "--note",
            "ok",
        ],
        &env,
    )
    .code(0);
    let status = pair_env(["status", "--json"], &env);
    assert_eq!(status.json()["phase"], "PLAN_APPROVED");
    pair_env(["validate"], &env).code(0);
    let sha = b.sha();
    let copy = b.aux_file("copy.md", b.read());
    pair_env(
        [
            "write",
            "--content-file",
            copy.to_str().unwrap(),
            "--expect-sha256",
            &sha,
        ],
        &env,
    )
    .code(0);

    // A BOARD on the command line wins over the default.
    let other = Board::minimal();
    let out = pair_env(["status", other.p(), "--json"], &env);
    assert_eq!(out.json()["phase"], "DRAFT");

    // Neither: a usage error that says how to give one.
    let without_default = |args: &[&str]| {
        let mut cmd = pair_cmd();
        cmd.env_remove("PAIR_BOARD").args(args);
        run(&mut cmd, format!("pair {}", args.join(" ")))
    };
    for args in [
        vec!["status"],
        vec!["poll", "--agent", "doer"],
        vec!["validate"],
        vec!["init"],
    ] {
        let out = without_default(&args);
        out.code(4).mentions(&["PAIR_BOARD", "--board"]);
        let mut with_json = args.clone();
        with_json.push("--json");
        without_default(&with_json).json_error(4);
    }
}

#[test]
fn completions_offer_phases_verdicts_artifacts_and_work_types() {
    // (fish completes flags and their values, not positional arguments.)
    for (shell, positionals) in [("bash", true), ("zsh", true), ("fish", false)] {
        let out = pair(["completions", shell]);
        out.code(0);
        let mut words = vec!["debugging", "board", "color", "quiet", "always"];
        if positionals {
            words.extend([
                "CHANGES_REQUESTED",
                "PLANNING_SUBMITTED",
                "READY_TO_COMMIT",
                "red-test",
                "followup",
            ]);
        }
        for word in words {
            assert!(out.stdout.contains(word), "{shell} completion lacks {word}");
        }
    }
    // Every phase of the model is offered to completion.
    let bash = pair(["completions", "bash"]);
    for phase in pair::board::frontmatter::Phase::ALL {
        assert!(
            bash.stdout.contains(phase.as_str()),
            "bash completion lacks {phase}"
        );
    }
    // A phase is still checked by pair itself, with its own message.
    let b = Board::minimal();
    pair(["advance", b.p(), "--agent", "doer", "SOMEWHERE"]).code_in(&[4, 6]);
}

#[test]
fn init_dash_is_refused_with_a_hint_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = pair_cmd();
    cmd.current_dir(dir.path()).args(["init", "-"]);
    let out = run(&mut cmd, "pair init -".into());
    out.code(4).mentions(&["./-"]);
    assert!(!dir.path().join("-").exists());
    let mut cmd = pair_cmd();
    cmd.current_dir(dir.path()).args(["init", "-", "--json"]);
    run(&mut cmd, "pair init - --json".into()).json_error(4);
    for args in [
        vec!["status", "-"],
        vec![
            "note",
            "-",
            "--agent",
            "doer",
            "--section",
            "Goal",
            "--note",
            "n",
        ],
    ] {
        let mut cmd = pair_cmd();
        cmd.current_dir(dir.path()).args(&args);
        run(&mut cmd, format!("{args:?}"))
            .code(4)
            .mentions(&["./-"]);
    }
    // Meaning it: ./- is a file named `-`.
    let mut cmd = pair_cmd();
    cmd.current_dir(dir.path()).args(["init", "./-"]);
    run(&mut cmd, "pair init ./-".into()).code(0);
    assert!(dir.path().join("-").is_file());
}

// ---------------------------------------------------------------------------------------------
// A. the hash in validate

/// The repair command for `path` at `sha`, as every message spells it.
fn repair(path: &str, sha: &str) -> String {
    format!(
        "pair write {path} --content-file FIXED.md --expect-sha256 {sha} --repair --reason TEXT"
    )
}

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
// B. conflict markers

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

// ---------------------------------------------------------------------------------------------
// E. standard input

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

// ---------------------------------------------------------------------------------------------
// G. an empty directory in CI

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

// ---------------------------------------------------------------------------------------------
// K. what counts as a blackboard in a directory

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

// ---------------------------------------------------------------------------------------------
// A. the repair path

/// The last non-empty line of a text.
fn last_line(s: &str) -> &str {
    s.trim_end().lines().last().unwrap_or_default()
}

#[test]
fn status_of_an_invalid_board_shows_what_it_can_and_the_hash_a_repair_needs() {
    let content = set_top(MINIMAL, "phase", "PLANING");
    let b = Board::new(&content);
    let sha = b.sha();

    // Text: what can be read on stdout, the errors and the repair command on stderr, exit 5.
    let out = pair(["status", b.p()]);
    out.code(5);
    assert!(
        out.stdout.contains("phase       PLANING (as written)"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains(&format!("sha256      {sha}")),
        "{}",
        out.report()
    );
    assert!(out.stdout.contains("## Goal") || out.stdout.contains("Goal"));
    assert!(out.stderr.contains("`phase`"), "{}", out.report());
    assert_eq!(
        last_line(&out.stderr).trim(),
        repair(b.p(), &sha),
        "{}",
        out.report()
    );

    // JSON: the error envelope (stdout empty) carries the path, errors, hash and command.
    let err = pair(["status", b.p(), "--json"]).json_error(5);
    assert_eq!(err["kind"], "invalid");
    assert_eq!(err["sha256"], Value::from(sha.clone()));
    assert_eq!(err["path"], Value::from(b.p()));
    assert_eq!(err["repair"], Value::from(repair(b.p(), &sha)));
    assert_eq!(err["errors"][0]["field"], "phase");
    b.assert_untouched(content.as_bytes());

    // The command works as printed, with a fixed copy.
    let fixed = b.aux_file("FIXED.md", MINIMAL);
    let out = pair([
        "write",
        b.p(),
        "--content-file",
        fixed.to_str().unwrap(),
        "--expect-sha256",
        &sha,
        "--repair",
        "--reason",
        "fix the phase typo",
    ]);
    out.code(0);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn every_invalid_board_error_ends_with_the_repair_command() {
    let content = set_top(MINIMAL, "yolo", "\"yes please\"");
    let b = Board::new(&content);
    let expected = repair(b.p(), &b.sha());
    for args in [
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
            "n",
        ],
        vec!["register", b.p(), "--agent", "alice"],
    ] {
        let out = pair(&args);
        out.code(5);
        assert_eq!(last_line(&out.stderr).trim(), expected, "{}", out.report());
        let err = pair(args.iter().chain(&["--json"])).json_error(5);
        assert!(
            err["message"].as_str().unwrap().ends_with(&expected),
            "{err}"
        );
    }
    b.assert_untouched(content.as_bytes());

    // Content a write refuses is not the board: no repair command for it.
    let ok = Board::minimal();
    let out = ok.write_expect(&content, &ok.sha(), &[]);
    out.code(5).mentions(&["nothing was written"]);
    assert!(!out.stderr.contains("--repair"), "{}", out.report());
}

#[test]
fn the_repair_command_quotes_a_path_a_shell_would_split() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my task.md");
    fs::write(&path, set_top(MINIMAL, "phase", "NOPE")).unwrap();
    let out = pair(["status", path.to_str().unwrap()]);
    out.code(5);
    let line = last_line(&out.stderr).trim().to_string();
    assert!(
        line.starts_with(&format!("pair write '{}' ", path.display())),
        "{line}"
    );
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

// ---------------------------------------------------------------------------------------------
// D. man pages

#[test]
fn man_writes_one_page_per_command_and_documents_environment_and_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("man1");
    let out = pair(["man", "--dir", out_dir.to_str().unwrap()]);
    out.code(0);
    let top = fs::read_to_string(out_dir.join("pair.1")).unwrap();
    // Every page pair(1) names exists.
    let named: Vec<String> = top
        .lines()
        .filter_map(|l| l.strip_prefix("pair\\-"))
        .filter_map(|l| l.strip_suffix("(1)"))
        .map(|c| c.replace("\\-", "-"))
        .collect();
    assert!(named.len() >= 19, "{named:?}");
    for command in &named {
        let page = fs::read_to_string(out_dir.join(format!("pair-{command}.1")))
            .unwrap_or_else(|e| panic!("pair-{command}.1: {e}"));
        assert!(page.contains(&format!(".TH pair-{command} 1")), "{page}");
        assert!(page.contains(".SH \"EXIT STATUS\""), "{command}");
        assert!(page.contains(".SH ENVIRONMENT"), "{command}");
        assert!(page.contains("\\fBpair\\fR(1)"), "{command}: SEE ALSO");
    }
    let files = fs::read_dir(&out_dir).unwrap().count();
    assert_eq!(files, named.len() + 1, "only pair.1 and the pages it names");
    for section in [".SH ENVIRONMENT", ".SH \"EXIT STATUS\"", ".SH FILES"] {
        assert!(top.contains(section), "pair.1 lacks {section}");
    }
    for var in [
        "PAIR_AGENT",
        "PAIR_BOARD",
        "NO_COLOR",
        "CLICOLOR_FORCE",
        "TERM",
    ] {
        assert!(
            top.contains(&format!("\\fB{var}\\fR")),
            "ENVIRONMENT lacks {var}"
        );
    }
    for code in ["0", "1", "2", "3", "4", "5", "6", "7", "10", "11"] {
        assert!(
            top.contains(&format!(".TP\n\\fB{code}\\fR\n")),
            "EXIT STATUS lacks {code}"
        );
    }

    // `pair man COMMAND` prints that page; the plain `pair man` is pair.1.
    let one = pair(["man", "verdict"]);
    one.code(0);
    assert_eq!(
        one.stdout,
        fs::read_to_string(out_dir.join("pair-verdict.1")).unwrap()
    );
    assert_eq!(pair(["man"]).stdout, top);
    let j = pair(["man", "--dir", out_dir.to_str().unwrap(), "--json"]).json();
    assert_eq!(j["files"].as_array().unwrap().len(), named.len() + 1);
    pair(["man", "nope"]).code(4);
}

// ---------------------------------------------------------------------------------------------
// I. install and git advice

#[test]
fn init_suggests_gitignore_lines_inside_a_git_work_tree_until_they_are_there() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        StdCommand::new("git")
            .arg("-C")
            .arg(dir.path())
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    if git(&["init", "-q"]).is_none() {
        eprintln!("git is not available; skipping");
        return;
    }
    let board = dir.path().join("docs").join("task.md");
    fs::create_dir_all(board.parent().unwrap()).unwrap();
    let out = pair(["init", board.to_str().unwrap()]);
    out.code(0);
    for line in [
        "*.md.lock",
        "*.md.lock.owner.json",
        ".*.md.pair-tmp-*",
        ".worktrees/",
    ] {
        assert!(
            out.stdout.lines().any(|l| l.trim() == line),
            "init does not suggest {line}\n{}",
            out.report()
        );
    }
    // Not in JSON, and not once .gitignore has them.
    fs::remove_file(&board).unwrap();
    let out = pair(["init", board.to_str().unwrap(), "--json"]);
    out.code(0);
    out.json();
    fs::remove_file(&board).unwrap();
    fs::write(
        dir.path().join(".gitignore"),
        "*.md.lock\n*.md.lock.owner.json\n.*.md.pair-tmp-*\n.worktrees/\n",
    )
    .unwrap();
    let out = pair(["init", board.to_str().unwrap()]);
    out.code(0);
    assert!(!out.stdout.contains("gitignore"), "{}", out.report());
    // Outside a work tree: nothing to say.
    let elsewhere = Board::absent();
    let out = pair(["init", elsewhere.p()]);
    out.code(0);
    assert!(!out.stdout.contains("gitignore"), "{}", out.report());
}

#[test]
fn readme_and_manifest_say_only_true_things_about_installing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("rust-version = \"1.89\""));
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let hooks = fs::read_to_string(root.join(".pre-commit-hooks.yaml")).unwrap();
    for (name, text) in [("README.md", &readme), (".pre-commit-hooks.yaml", &hooks)] {
        assert!(
            !text.contains("this repository's URL"),
            "{name} still has a placeholder URL"
        );
    }
    assert!(readme.contains("repo: local"));
    assert!(readme.contains("*.md.lock.owner.json"));
    // Installing is explained before the first `pair` command of the walkthrough.
    let install = readme.find("cargo install --locked --path .").unwrap();
    let walkthrough = readme.find("## Walkthrough").unwrap();
    let demo = readme.find("`pair demo`").unwrap();
    assert!(install < walkthrough && install < demo);
}
