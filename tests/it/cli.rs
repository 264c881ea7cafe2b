//! Command-line conventions, through the real binary: exit codes and usage errors, colour,
//! verbosity and `--quiet`, terminal escapes, `PAIR_AGENT`, a left-out board, `pair help`,
//! completions and the man pages.

use crate::common::env::Env;
use crate::common::prereq::{SCRIPT, on_path, require};
use crate::common::reads::text;
use crate::common::*;
use crate::proto::Proto;
use clap::CommandFactory;
use pair::cli::Cli;
use serde_json::Value;
use std::fs;
use std::process::Command as StdCommand;

#[test]
fn missing_board_exits_7_for_every_command_and_creates_no_board() {
    let b = Board::absent();
    pair(["validate", b.p()]).code(7).mentions(&["board.md"]);
    pair(["status", b.p()]).code(7);
    pair(["poll", b.p(), "--agent", "doer"]).code(7);
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &[]).code(7);
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &["--json"])
        .json_error(7);
    assert!(
        !b.path.exists(),
        "nothing may create the board without --create-if-missing"
    );
    b.assert_clean_dir(&[]);
}

// ---------------------------------------------------------------------------------------------
// colour, quiet, verbose, help

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
    if !require(&SCRIPT, on_path("script")) {
        return;
    }
    let coloured = in_terminal("xterm").expect("`script` runs pair in a terminal");
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
// terminal escapes

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

/// The name the forged-line tests give a board: a newline and then what reads like one more
/// event of `pair watch`.
const FORGING_NAME: &str = "x\n2099-01-01T00:00:00Z forged.md: breach (nudge): FORGED.md";

/// No line of the output (stdout or stderr) is one a file name forged.
#[track_caller]
fn assert_no_forged_line(out: &Out) {
    for l in out.stdout.lines().chain(out.stderr.lines()) {
        assert!(
            !l.starts_with("2099-01-01T00:00:00Z forged"),
            "a file name forged a line: {l:?}\n{}",
            out.report()
        );
    }
}

#[test]
fn a_newline_in_a_file_name_never_starts_a_line_of_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join(FORGING_NAME);
    let p = board.to_str().unwrap();
    let now = [("PAIR_NOW", "2026-01-01T00:00:00Z")];
    let later = [("PAIR_NOW", "2026-01-02T00:00:00Z")];
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let out = pair_env(args, env);
        out.not_timed_out();
        assert_no_forged_line(&out);
        out
    };
    run(&["init", p, "--reviewers", "alice", "--yolo"], &now).code(0);
    run(&["init", p], &now).code(7);
    run(&["register", p, "--agent", "alice"], &now).code(0);
    run(
        &[
            "advance",
            p,
            "PLANNING",
            "--agent",
            "doer",
            "--user-approved",
        ],
        &now,
    )
    .code(0);
    run(
        &["submit", p, "plan", "--note", "v1", "--agent", "doer"],
        &now,
    )
    .code(0);
    run(
        &["submit", p, "plan", "--note", "v2", "--agent", "doer"],
        &now,
    )
    .code_in(&[6, 10]);
    run(
        &[
            "note",
            p,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
        ],
        &now,
    )
    .code(0);
    run(
        &["report-usage", p, "--agent", "doer", "--tokens", "5"],
        &now,
    )
    .code(0);
    for args in [
        &["status", p][..],
        &["poll", p, "--agent", "alice"],
        &["poll", p, "--agent", "doer"],
        &["show", p],
        &["brief", p, "--for", "reviewer", "--agent", "alice"],
        &["log", p],
        &["stats", p],
        &["objections", p],
        &["validate", p],
        &["validate", dir.path().to_str().unwrap()],
        &["diff", p],
    ] {
        run(args, &now).code_in(&[0, 10]);
    }
    run(&["worktree-path", p, "--repo-root", "/tmp"], &now).code(6);
    // The watchdog, on the board and on its directory (each finding is new to one of them).
    let out = run(&["watch", p, "--once"], &later);
    out.code(13);
    assert!(
        out.stdout.contains("x\\n2099-01-01T00:00:00Z forged.md"),
        "{}",
        out.report()
    );
    let other = dir.path().join("other.md");
    run(
        &["init", other.to_str().unwrap(), "--reviewers", "bob"],
        &now,
    )
    .code(0);
    let out = run(&["watch", dir.path().to_str().unwrap(), "--once"], &later);
    out.code(13);
    // Writes and their refusals.
    let copy = dir.path().join("copy");
    fs::write(&copy, fs::read(&board).unwrap()).unwrap();
    let sha = sha256_hex(fs::read(&board).unwrap());
    let c = copy.to_str().unwrap();
    run(
        &[
            "write",
            p,
            "--content-file",
            c,
            "--expect-sha256",
            &"0".repeat(64),
        ],
        &now,
    )
    .code(3);
    run(
        &["write", p, "--content-file", c, "--expect-sha256", &sha],
        &now,
    )
    .code(0);
    run(
        &[
            "verdict", p, "plan", "APPROVED", "--agent", "doer", "--note", "x",
        ],
        &now,
    )
    .code_in(&[4, 6]);
    run(
        &[
            "away", p, "--agent", "alice", "--until", "2h", "--reason", "x",
        ],
        &now,
    )
    .code(0);
    let moved = format!("{p}.moved");
    run(&["migrate", p, &moved], &now).code(0);
    let missing = format!("{p}.missing");
    run(&["status", &missing], &now).code(7);
    run(&["poll", &missing, "--agent", "doer"], &now).code(7);
    // An invalid board: the error, its repair command and the partial status.
    fs::write(&board, "---\nphase: NOPE\n---\n").unwrap();
    run(&["status", p], &now).code(5);
    run(
        &[
            "note",
            p,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
        ],
        &now,
    )
    .code(5);
}

// ---------------------------------------------------------------------------------------------
// a default blackboard; `-` is not a blackboard

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
fn an_empty_pair_board_is_no_board_and_a_nested_command_takes_the_default_too() {
    let b = init_board(&["--reviewers", "alice"]);
    // An empty $PAIR_BOARD (as `export PAIR_BOARD=` leaves it) is as if unset: a BOARD on the
    // command line works, and a left-out one is the usual usage error, not the parser's.
    let empty = [("PAIR_BOARD", "")];
    pair_env(["poll", b.p(), "--agent", "doer"], &empty).code(0);
    pair_env(["status", b.p()], &empty).code(0);
    let out = pair_env(["poll", "--agent", "doer"], &empty);
    out.code(4)
        .mentions(&["no blackboard given", "PAIR_BOARD", "--board"]);
    assert!(
        !out.stderr.contains("a value is required"),
        "{}",
        out.report()
    );
    // `worktree create` (a command of a command) takes the default board like the others: it
    // reaches the board, whose phase refuses the step, instead of a missing argument.
    let env = [("PAIR_BOARD", b.p())];
    pair_env(["worktree", "create", "--agent", "doer"], &env)
        .code(6)
        .mentions(&["`pair worktree create` is the step out of PLAN_APPROVED"]);
    pair(["--board", b.p(), "worktree", "create", "--agent", "doer"])
        .code(6)
        .mentions(&["the blackboard is DRAFT"]);
    let out = pair_env(["worktree", "create", "--agent", "doer"], &empty);
    out.code(4)
        .mentions(&["no blackboard given: name it (`pair worktree create BOARD …`)"]);
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

// ---------------------------------------------------------------------------------------------
// man pages

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

#[test]
fn the_version_printed_before_the_parser_is_built_is_the_parsers() {
    // `pair --version` alone is answered before the argument parser is built; with another
    // global flag it goes through the parser. Both print the same bytes.
    for (fast, parsed) in [
        (vec!["--version"], vec!["--color", "never", "--version"]),
        (
            vec!["-V", "--json"],
            vec!["--color", "never", "-V", "--json"],
        ),
    ] {
        let a = pair(&fast);
        let b = pair(&parsed);
        a.code(0);
        b.code(0);
        assert_eq!(a.stdout, b.stdout, "{}\n{}", a.report(), b.report());
        assert!(a.stderr.is_empty(), "{}", a.report());
    }
}

#[test]
fn usage_errors_exit_4_never_2() {
    let b = Board::minimal();
    let c = b.aux_file("c.md", MINIMAL);
    let c = c.to_str().unwrap();
    let sha = sha256_hex(MINIMAL);
    let cases: Vec<Vec<&str>> = vec![
        vec![],
        vec!["no-such-command", b.p()],
        vec!["poll"],
        vec!["poll", "--agent", "doer"],
        vec!["status"],
        vec!["status", b.p(), "--no-such-flag"],
        vec!["poll", b.p(), "--agent", "doer", "--bogus"],
        vec!["validate", b.p(), "--frobnicate"],
        vec![
            "write",
            b.p(),
            "--content-file",
            c,
            "--expect-sha256",
            sha.as_str(),
            "--create-if-missing",
        ],
        vec!["write", b.p(), "--content-file", c],
        vec!["write", b.p(), "--expect-sha256", sha.as_str()],
        vec![
            "write",
            "--content-file",
            c,
            "--expect-sha256",
            sha.as_str(),
        ],
        vec![
            "write",
            b.p(),
            "--content-file",
            c,
            "--expect-sha256",
            sha.as_str(),
            "--timeout",
            "soon",
        ],
        vec!["init"],
    ];
    for args in cases {
        let out = pair(&args);
        out.code(4);
        assert!(
            !out.stderr.trim().is_empty(),
            "a usage error must explain itself\n{}",
            out.report()
        );
    }
    b.assert_untouched(MINIMAL.as_bytes());
    assert_only_entries(b.dir.path(), &["board.md"]);
}

#[test]
fn errors_without_json_are_human_text_on_stderr() {
    let b = Board::absent();
    let out = pair(["poll", b.p(), "--agent", "doer"]);
    out.code(7);
    assert!(!out.stderr.trim().is_empty(), "{}", out.report());
    assert!(
        serde_json::from_str::<Value>(out.stderr.trim()).is_err(),
        "without --json the error must be human text, not JSON\n{}",
        out.report()
    );
}

#[test]
fn agent_defaults_to_pair_agent_env() {
    let p = Proto::init(&["--reviewers", "alice"]);
    let out = pair_env(["register", p.p()], &[("PAIR_AGENT", "alice")]);
    out.code(0);
    assert_eq!(p.status()["agents"]["alice"]["role"], "reviewer");
    let out = pair_env(
        ["advance", p.p(), "PLANNING", "--user-approved"],
        &[("PAIR_AGENT", "doer")],
    );
    out.code(0);
    p.assert_phase("PLANNING");
}

#[test]
fn control_characters_in_frontmatter_arguments_are_usage_errors() {
    let e = Env::new();
    e.ok(0, &["init", "b.md", "--yolo"]);
    e.ok(0, &["advance", "b.md", "--agent", "doer", "PLANNING"]);
    e.ok(
        0,
        &[
            "submit",
            "b.md",
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--no-review",
        ],
    );
    e.ok(
        4,
        &[
            "advance",
            "b.md",
            "--agent",
            "doer",
            "CODING",
            "--worktree",
            "/tmp/a\u{7f}b",
        ],
    );
}

const VISIBLE: [&str; 20] = [
    "init",
    "poll",
    "status",
    "validate",
    "register",
    "claim",
    "submit",
    "verdict",
    "advance",
    "block",
    "unblock",
    "stop",
    "note",
    "worktree-path",
    "write",
    "demo",
    "skill",
    "completions",
    "man",
    "--json",
];

#[test]
fn completions_cover_every_subcommand_in_every_shell() {
    let tmp = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = output_in(tmp.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        assert!(script.len() > 1000, "{shell}: too short");
        for word in VISIBLE {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
        assert!(
            !script.contains("demo-agent"),
            "{shell}: hidden command leaked"
        );
    }
    let bad = output_in(tmp.path(), &["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(4));
}

#[test]
fn man_page_is_roff_with_every_subcommand_and_examples() {
    let tmp = tempfile::tempdir().unwrap();
    let out = output_in(tmp.path(), &["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let man = text(&out.stdout);
    assert!(
        man.starts_with(".ie") || man.contains(".TH pair"),
        "{}",
        &man[..200]
    );
    for word in VISIBLE.iter().filter(|w| !w.starts_with('-')) {
        assert!(
            man.contains(&format!("PAIR {}", word.to_uppercase())),
            "man page lacks a section for {word}"
        );
    }
    assert!(man.contains("Examples:"));
    assert!(
        man.contains("pair validate \\-\\-format github")
            || man.contains("pair validate --format github")
    );
}

#[test]
fn every_command_help_has_examples() {
    let mut cmd = Cli::command();
    cmd.build();
    let top = cmd.render_long_help().to_string();
    assert!(top.contains("Examples:"), "top-level help");
    let mut n = 0;
    for sub in cmd.get_subcommands_mut() {
        let help = sub.render_long_help().to_string();
        assert!(
            help.contains("Examples:\n  pair "),
            "`pair {} --help` has no Examples: section",
            sub.get_name()
        );
        n += 1;
    }
    assert!(n >= 20, "only {n} subcommands");
}
