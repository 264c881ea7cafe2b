//! The surfaces around the protocol: the demo, the agent skill, completions, the man page, help
//! examples, CI annotations and the human `status` view.

use std::path::Path;
use std::process::{Command, Output};

use clap::{CommandFactory, Parser};
use pair::cli::Cli;
use serde_json::Value;

fn pair(dir: &Path, args: &[&str]) -> Output {
    crate::common::output_in(dir, args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// ---------------------------------------------------------------------------------------------
// the demo

#[test]
fn demo_runs_three_agents_to_a_valid_committed_blackboard() {
    let tmp = tempfile::tempdir().unwrap();
    let keep = tmp.path().join("demo");
    let keep_s = keep.display().to_string();
    let started = std::time::Instant::now();
    let out = pair(tmp.path(), &["demo", "--keep", &keep_s, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(started.elapsed().as_secs() < 30, "the demo took too long");
    let v: Value = serde_json::from_slice(&out.stdout).expect("demo --json");
    assert_eq!(v["ok"], Value::Bool(true));
    assert_eq!(v["user_approval"], "--user-approved");

    // The blackboard left behind is valid, CLEANED_UP, with the scripted counters.
    let board = keep.join("task.md");
    let board_s = board.display().to_string();
    let validate = pair(tmp.path(), &["validate", &board_s]);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}",
        text(&validate.stdout)
    );
    let status = pair(tmp.path(), &["status", &board_s, "--json"]);
    let s: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(s["phase"], "CLEANED_UP");
    // The commit is real, on main, and the worktree is gone.
    let sha = s["frontmatter"]["commit_sha"].as_str().unwrap().to_string();
    assert_eq!(v["commit_sha"], sha.as_str());
    let git_out = std::process::Command::new("git")
        .arg("-C")
        .arg(&keep)
        .args(["merge-base", "--is-ancestor", &sha, "main"])
        .env_remove("GIT_DIR")
        .status()
        .unwrap();
    assert!(git_out.success(), "main contains the demo's commit {sha}");
    assert!(!keep.join(".worktrees").join("task").exists());
    assert_eq!(s["frontmatter"]["topic_branch"], "pair/task");
    assert_eq!(s["counters"]["analysis_revision"], 1);
    assert_eq!(
        s["counters"]["plan_revision"], 2,
        "one CHANGES_REQUESTED plan round"
    );
    assert_eq!(s["counters"]["red_test_round"], 1);
    assert_eq!(
        s["counters"]["code_review_round"], 2,
        "code, then a follow-up"
    );
    assert_eq!(s["yolo"], false);
    let agents = s["agents"].as_object().unwrap();
    assert_eq!(agents.len(), 3);
    assert_eq!(s["agents"]["alice"]["reviews"]["plan"]["reviewed"], 2);
    assert_eq!(s["agents"]["bob"]["reviews"]["code"]["verdict"], "APPROVED");
    let body = std::fs::read_to_string(&board).unwrap();
    assert!(
        body.contains("CHANGES_REQUESTED"),
        "the plan round is recorded"
    );
    assert!(body.contains("COMMENT"), "the code comment is recorded");
    assert!(body.contains("commit_sha: "), "{body}");

    // The timeline shows each agent acting through real commands, and every handoff.
    let events = v["events"].as_array().unwrap();
    let by = |agent: &str, needle: &str| {
        events.iter().any(|e| {
            e["agent"] == agent && e["command"].as_str().is_some_and(|c| c.contains(needle))
        })
    };
    assert!(by("doer", "pair init task.md"));
    assert!(by("alice", "pair register task.md"));
    assert!(by("bob", "pair register task.md"));
    assert!(by(
        "alice",
        "pair verdict task.md CHANGES_REQUESTED --revision 1"
    ));
    assert!(by("bob", "pair verdict task.md COMMENT --revision 1"));
    assert!(by("doer", "pair submit task.md followup"));
    assert!(by("doer", "pair worktree create task.md"));
    assert!(by("doer", "pair advance task.md COMMITTED --commit-sha"));
    assert!(by("doer", "pair advance task.md CLEANED_UP"));
    assert!(events.iter().any(|e| e["kind"] == "woke"));
    for agent in ["doer", "alice", "bob"] {
        assert!(
            events
                .iter()
                .any(|e| e["agent"] == agent && e["kind"] == "done"),
            "{agent} stops on the terminal phase"
        );
    }
    assert!(!events.iter().any(|e| e["kind"] == "fail"));
}

#[test]
fn demo_text_is_a_timeline_and_cleans_up_without_keep() {
    let tmp = tempfile::tempdir().unwrap();
    let out = pair(tmp.path(), &["demo"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{t}\n{}", text(&out.stderr));
    assert!(t.contains("--user-approved"), "{t}");
    assert!(
        t.contains("PLANNING_SUBMITTED → PLAN_CHANGES_REQUESTED")
            || t.contains("REVIEWING_PLAN → PLAN_CHANGES_REQUESTED"),
        "{t}"
    );
    assert!(t.contains("READY_TO_COMMIT → COMMITTED"), "{t}");
    assert!(t.contains("removed"), "{t}");
    assert!(
        !t.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
    let dir = t
        .lines()
        .find_map(|l| l.strip_prefix("The demo directory "))
        .and_then(|l| l.split(" is removed").next())
        .expect("says where it ran");
    assert!(!Path::new(dir).exists(), "{dir} should be removed");
}

#[test]
fn demo_refuses_a_non_empty_keep_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("x"), "x").unwrap();
    let dir = tmp.path().display().to_string();
    let out = pair(tmp.path(), &["demo", "--keep", &dir]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// the agent skill

/// Split a command line like a POSIX shell would for the simple quoting the skill uses.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    cur.push(c);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Every `pair …` command line in the skill: in code blocks, and in `backticks` in tables.
fn skill_commands(skill: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in skill.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            if trimmed.starts_with("pair ") {
                out.push(trimmed.to_string());
            }
        } else {
            for (i, part) in line.split('`').enumerate() {
                if i % 2 == 1 && part.starts_with("pair ") {
                    out.push(part.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn every_command_in_the_skill_parses() {
    let skill = pair::commands::skill::SKILL;
    let commands = skill_commands(skill);
    assert!(
        commands.len() >= 25,
        "found only {} commands",
        commands.len()
    );
    for line in &commands {
        // Placeholders a reader fills in.
        let line = line.replace(" N ", " 1 ").replace("COMMAND", "poll");
        let words = shell_words(&line);
        if words.len() == 2 && words[1] == "poll" {
            continue; // `pair COMMAND --help` in prose
        }
        if let Err(e) = Cli::try_parse_from(&words)
            && !matches!(e.kind(), clap::error::ErrorKind::DisplayHelp)
        {
            panic!("the skill's `{line}` does not parse: {e}");
        }
    }
    // The startup and loop commands are all there.
    for needle in [
        "pair init task.md",
        "pair register task.md",
        "pair poll task.md --agent alice --wait",
        "pair verdict task.md --agent alice CHANGES_REQUESTED",
        "pair submit task.md --agent doer followup",
        "--user-approved",
        "--no-review",
        "--waive",
        "pair show task.md --latest",
        "pair brief task.md --for reviewer",
        "add -u",
    ] {
        assert!(skill.contains(needle), "the skill lacks {needle}");
    }
    for code in [
        "| 0 |", "| 2 |", "| 3 |", "| 5 |", "| 6 |", "| 7 |", "| 10 |", "| 11 |",
    ] {
        assert!(skill.contains(code), "the skill lacks exit code {code}");
    }
}

#[test]
fn pair_skill_prints_the_embedded_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let out = pair(tmp.path(), &["skill"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), pair::commands::skill::SKILL);
    let file = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/templates/skill/SKILL.md"
    ))
    .unwrap();
    assert_eq!(file, pair::commands::skill::SKILL);
    assert!(file.starts_with("---\nname: pair\ndescription: "));
}

// ---------------------------------------------------------------------------------------------
// completions, man page, help

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
        let out = pair(tmp.path(), &["completions", shell]);
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
    let bad = pair(tmp.path(), &["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(4));
}

#[test]
fn man_page_is_roff_with_every_subcommand_and_examples() {
    let tmp = tempfile::tempdir().unwrap();
    let out = pair(tmp.path(), &["man"]);
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

// ---------------------------------------------------------------------------------------------
// CI: validate --format github, pre-commit hook

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

    let out = pair(
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

    let ok = pair(d, &["validate", "--format", "github", "ok.md"]);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(text(&ok.stdout), "1 blackboard checked, 0 invalid\n");

    let missing = pair(d, &["validate", "--format", "github", "nope.md"]);
    assert_eq!(missing.status.code(), Some(7));
    assert!(text(&missing.stdout).starts_with("::error file=nope.md,title="));

    let both = pair(d, &["validate", "--format", "github", "--json", "ok.md"]);
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

// ---------------------------------------------------------------------------------------------
// status for humans

#[test]
fn status_shows_phase_turn_reviewer_table_and_counters_without_colour_in_a_pipe() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let ok = |args: &[&str]| {
        let out = pair(d, args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
    };
    ok(&["init", "t.md", "--reviewers", "alice,bob", "--yolo"]);
    ok(&["register", "t.md", "--agent", "alice"]);
    ok(&["register", "t.md", "--agent", "carol"]);
    ok(&["advance", "t.md", "--agent", "doer", "PLANNING"]);
    ok(&["submit", "t.md", "--agent", "doer", "plan", "--note", "p"]);
    ok(&[
        "verdict",
        "t.md",
        "--agent",
        "alice",
        "CHANGES_REQUESTED",
        "--revision",
        "1",
        "--note",
        "n",
    ]);

    let out = pair(d, &["status", "t.md"]);
    let t = text(&out.stdout);
    assert!(!t.contains('\x1b'), "{t}");
    assert!(t.contains("phase       PLANNING_SUBMITTED"), "{t}");
    assert!(t.contains("next        bob"), "{t}");
    assert!(
        t.contains("counters    analysis 0 · plan 1 · red test 0 · code 0"),
        "{t}"
    );
    assert!(t.contains("reviewers   verdicts on plan 1"), "{t}");
    let row = |id: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no row for {id}\n{t}"))
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("alice"),
        ["alice", "yes", "CHANGES_REQUESTED", "CHANGES_REQUESTED"]
    );
    assert_eq!(row("bob"), ["bob", "yes", "not", "registered", "—"]);
    assert_eq!(row("carol"), ["carol", "no", "IDLE", "—"]);

    // NO_COLOR is honoured too (and stdout is not a terminal here anyway).
    let out = Command::new(env!("CARGO_BIN_EXE_pair"))
        .args(["status", "t.md"])
        .current_dir(d)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!text(&out.stdout).contains('\x1b'));
}

/// Run `pair ARGS` under `script`, so that its stdout is a terminal. None if `script` is missing.
fn in_a_terminal(dir: &Path, args: &str, no_color: bool) -> Option<String> {
    let mut cmd = Command::new("script");
    cmd.args([
        "-qec",
        &format!("{} {args}", env!("CARGO_BIN_EXE_pair")),
        "/dev/null",
    ])
    .current_dir(dir)
    .stdin(std::process::Stdio::null())
    .env_remove("NO_COLOR");
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let out = cmd.output().ok()?;
    out.status.success().then(|| text(&out.stdout))
}

#[test]
fn status_is_coloured_on_a_terminal_unless_no_color_is_set() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = pair(d, &["init", "t.md", "--reviewers", "alice"]);
    assert_eq!(out.status.code(), Some(0));
    let Some(coloured) = in_a_terminal(d, "status t.md", false) else {
        eprintln!("`script` is not available; skipping the terminal check");
        return;
    };
    assert!(coloured.contains("\x1b["), "{coloured}");
    assert!(coloured.contains("DRAFT"), "{coloured}");
    let plain = in_a_terminal(d, "status t.md", true).expect("script ran once already");
    assert!(!plain.contains('\x1b'), "{plain}");
    assert!(plain.contains("phase       DRAFT"), "{plain}");
}
