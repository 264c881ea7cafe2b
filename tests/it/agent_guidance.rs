//! What an agent is told: everything it needs for its step in `poll`/`status --json`, a `next`
//! that is a runnable command, absolute paths, BLOCKED handled on its own, typos caught and
//! refusals in the order phase first, then standing.

use crate::common::*;
use clap::Parser;
use serde_json::Value;

/// A valid blackboard in `phase`: doer `doer`, required reviewer `alice`, every counter high
/// enough for the phase, alice's verdicts agreeing with an outcome phase, a worktree from
/// CODING on, and `blocked_from: PLANNING` when BLOCKED.
pub fn board_in(phase: &str, red_test_required: bool, worktree: &str) -> String {
    let outcome = |p: &str| -> Option<(&'static str, &'static str)> {
        match p {
            "ANALYSIS_APPROVED" => Some(("analysis", "APPROVED")),
            "ANALYSIS_CHANGES_REQUESTED" => Some(("analysis", "CHANGES_REQUESTED")),
            "PLAN_APPROVED" => Some(("plan", "APPROVED")),
            "PLAN_CHANGES_REQUESTED" => Some(("plan", "CHANGES_REQUESTED")),
            "RED_TEST_APPROVED" => Some(("red_test", "APPROVED")),
            "RED_TEST_CHANGES_REQUESTED" => Some(("red_test", "CHANGES_REQUESTED")),
            "READY_TO_COMMIT" => Some(("code", "APPROVED")),
            "CODE_CHANGES_REQUESTED" => Some(("code", "CHANGES_REQUESTED")),
            _ => None,
        }
    };
    let needs_worktree = [
        "CODING",
        "CODE_SUBMITTED",
        "REVIEWING_CODE",
        "CODE_CHANGES_REQUESTED",
        "FOLLOWUP_REVIEW",
        "READY_TO_COMMIT",
        "COMMITTED",
        "MERGED",
        "CLEANED_UP",
    ]
    .contains(&phase);
    let mut overrides: Vec<(&str, &str)> = Vec::new();
    if let Some((target, verdict)) = outcome(phase) {
        let (reviewed, field) = match target {
            "analysis" => ("reviewed_analysis_revision", "analysis_verdict"),
            "plan" => ("reviewed_plan_revision", "plan_verdict"),
            "red_test" => ("reviewed_red_test_round", "red_test_verdict"),
            _ => ("reviewed_code_round", "code_verdict"),
        };
        let n = if target == "code" { "2" } else { "1" };
        overrides.push((reviewed, n));
        overrides.push((field, verdict));
    }
    let mut text = set_top(MINIMAL, "phase", phase);
    text = set_top(&text, "required_reviewers", "[alice]");
    text = set_top(
        &text,
        "red_test_required",
        if red_test_required { "true" } else { "false" },
    );
    text = set_top(&text, "analysis_revision", "1");
    text = set_top(&text, "plan_revision", "1");
    text = set_top(&text, "red_test_round", "1");
    text = set_top(&text, "code_review_round", "2");
    if needs_worktree {
        text = set_top(&text, "worktree", worktree);
    }
    if phase == "BLOCKED" {
        text = set_top(&text, "blocked_from", "PLANNING");
    }
    if phase == "CLEANED_UP" {
        text = text.replace(
            "blocked_from: null\n",
            "blocked_from: null\nworktree_removed: true\n",
        );
    }
    agreeing(&insert_before_closing(
        &text,
        &agent_block("alice", "reviewer", "IDLE", &overrides),
    ))
}

fn poll_json(board: &str, agent: &str) -> (Out, Value) {
    let out = pair(["poll", board, "--agent", agent, "--json"]);
    let v = out.json();
    (out, v)
}

// ---------------------------------------------------------------------------------------------
// 1. what a reviewer needs to find the code

#[test]
fn poll_json_gives_a_code_reviewer_the_worktree_and_the_exact_diff_command() {
    for (phase, diff) in [
        ("CODE_SUBMITTED", vec!["diff", "--cached"]),
        ("REVIEWING_CODE", vec!["diff", "--cached"]),
        ("FOLLOWUP_REVIEW", vec!["diff"]),
    ] {
        let b = Board::new(board_in(phase, false, "/srv/repo/.worktrees/board"));
        pair(["validate", b.p()]).code(0);
        let (out, v) = poll_json(b.p(), "alice");
        out.code(0);
        assert_eq!(v["worktree"], "/srv/repo/.worktrees/board", "{v:#}");
        let mut expected = vec!["git", "-C", "/srv/repo/.worktrees/board"];
        expected.extend(diff.iter().copied());
        assert_eq!(
            v["review"]["diff_command"],
            serde_json::json!(expected),
            "{v:#}"
        );
        let action = v["next"]["action"].as_str().unwrap();
        assert!(
            action.contains(&expected.join(" ")),
            "the action names the diff command: {action}"
        );
        for key in [
            "rca_required",
            "red_test_required",
            "no_review",
            "yolo",
            "blocked_from",
        ] {
            assert!(v.get(key).is_some(), "poll --json lacks `{key}`: {v:#}");
        }
        let text = pair(["poll", b.p(), "--agent", "alice"]);
        assert!(
            text.stdout.contains(&expected.join(" ")),
            "{}",
            text.report()
        );
    }
    // Outside a code review there is no diff to read.
    let b = Board::new(board_in("PLANNING_SUBMITTED", false, "/w"));
    let (_, v) = poll_json(b.p(), "alice");
    assert_eq!(v["review"]["diff_command"], Value::Null, "{v:#}");
    assert_eq!(v["worktree"], Value::Null, "{v:#}");
}

#[test]
fn status_json_carries_every_frontmatter_field_of_the_registry() {
    let mut text = board_in("COMMITTED", false, "/srv/repo/.worktrees/board");
    text = text.replace(
        "blocked_from: null\n",
        "blocked_from: null\nrepo_root: /srv/repo\nbase_branch: main\nbase_sha: 0123abcd\n\
         topic_branch: pair/board\ncommit_sha: 89abcdef\n",
    );
    let b = Board::new(&text);
    pair(["validate", b.p()]).code(0);
    let out = pair(["status", b.p(), "--json"]);
    out.code(0);
    let v = out.json();
    let fm = v["frontmatter"].as_object().expect("frontmatter object");
    let names: Vec<&str> = pair::board::field::Field::ALL
        .iter()
        .map(|f| f.name())
        .filter(|n| *n != "agents")
        .collect();
    let keys: Vec<&str> = fm.keys().map(String::as_str).collect();
    let mut sorted_names = names.clone();
    sorted_names.sort();
    let mut sorted_keys = keys.clone();
    sorted_keys.sort();
    assert_eq!(sorted_keys, sorted_names, "{v:#}");
    assert_eq!(fm["worktree"], "/srv/repo/.worktrees/board");
    assert_eq!(fm["repo_root"], "/srv/repo");
    assert_eq!(fm["base_branch"], "main");
    assert_eq!(fm["base_sha"], "0123abcd");
    assert_eq!(fm["topic_branch"], "pair/board");
    assert_eq!(fm["commit_sha"], "89abcdef");
    assert_eq!(fm["merged_into"], Value::Null);
    assert_eq!(fm["worktree_removed"], Value::Null);
    assert_eq!(fm["required_reviewers"], serde_json::json!(["alice"]));
    assert_eq!(fm["code_review_round"], 2);
    assert_eq!(fm["phase"], "COMMITTED");
    assert_eq!(v["worktree"], "/srv/repo/.worktrees/board");
    // The text shows them too.
    let human = pair(["status", b.p()]);
    for needle in [
        "worktree    /srv/repo/.worktrees/board",
        "commit_sha 89abcdef",
        "topic_branch pair/board",
    ] {
        assert!(
            human.stdout.contains(needle),
            "{needle}\n{}",
            human.report()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 2. `next.command`: a runnable argument vector

/// The placeholder words an action used to leave, and the alternation of verdicts.
const OLD_PLACEHOLDERS: [&str; 7] = [
    "FILE",
    "ABSOLUTE_PATH",
    "SHA",
    "BRANCH",
    "TEXT",
    "REASON",
    "APPROVED|CHANGES_REQUESTED|COMMENT",
];

/// Check `next` of one poll: the command starts with `pair` and the absolute board path, each
/// placeholder is a whole argument listed in `placeholders`, and once filled in (every choice
/// in turn) the real parser accepts it. Returns the command as filled with the first choice.
#[track_caller]
fn check_next(v: &Value, board: &str, what: &str) -> Option<Vec<String>> {
    let next = &v["next"];
    let placeholders = next["placeholders"]
        .as_object()
        .expect("placeholders object");
    let Some(command) = next["command"].as_array() else {
        assert!(
            placeholders.is_empty(),
            "{what}: placeholders without a command: {next:#}"
        );
        assert_eq!(next["choices"], Value::Null, "{what}: {next:#}");
        return None;
    };
    let argv: Vec<String> = command
        .iter()
        .map(|a| a.as_str().expect("string argument").to_string())
        .collect();
    assert_eq!(argv[0], "pair", "{what}: {next:#}");
    // `pair worktree create BOARD`: the board follows the subcommand.
    let at = if argv[1] == "worktree" { 3 } else { 2 };
    assert_eq!(
        argv[at], board,
        "{what}: the board by its absolute path: {next:#}"
    );
    let action = next["action"].as_str().unwrap();
    assert!(
        action.contains(board),
        "{what}: the action names {board}: {action}"
    );
    for word in &argv {
        if OLD_PLACEHOLDERS.contains(&word.as_str()) || placeholders.contains_key(word) {
            assert!(
                placeholders.contains_key(word),
                "{what}: `{word}` is a placeholder missing from next.placeholders: {next:#}"
            );
        }
    }
    for key in placeholders.keys() {
        assert!(
            argv.contains(key),
            "{what}: placeholder {key} not in the command: {next:#}"
        );
    }
    let choices: Vec<String> = match next["choices"].as_array() {
        Some(c) => c.iter().map(|c| c.as_str().unwrap().to_string()).collect(),
        None => vec![String::new()],
    };
    let mut first = None;
    for choice in &choices {
        let filled: Vec<String> = argv
            .iter()
            .map(|w| match w.as_str() {
                "FILE" => "/tmp/note.md".to_string(),
                "VERDICT" => choice.clone(),
                "REASON" => "the user said so".to_string(),
                "SHA" => "0123abc".to_string(),
                "BRANCH" => "main".to_string(),
                "WORKTREE" => "/srv/repo/.worktrees/board".to_string(),
                "PHASE" => "PLANNING".to_string(),
                _ => w.clone(),
            })
            .collect();
        if let Err(e) = pair::cli::Cli::try_parse_from(&filled) {
            panic!("{what}: next.command does not parse: {e}\n{filled:?}\n{next:#}");
        }
        first.get_or_insert(filled);
    }
    first
}

#[test]
fn every_next_command_parses_for_every_phase_and_role() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("board.md");
    let board = path.to_str().unwrap().to_string();
    let mut commands = 0;
    for phase in crate::proto::all_phases() {
        for red_test in [false, true] {
            std::fs::write(
                &path,
                board_in(phase, red_test, "/srv/repo/.worktrees/board"),
            )
            .unwrap();
            let valid = pair(["validate", &board]);
            assert_eq!(valid.code, Some(0), "test bug: {phase}\n{}", valid.report());
            for agent in ["doer", "alice", "stranger"] {
                let (out, v) = poll_json(&board, agent);
                let what = format!("{phase} (red test {red_test}) as {agent}");
                assert!(
                    matches!(out.code, Some(0 | 10 | 11 | 12)),
                    "{what}\n{}",
                    out.report()
                );
                if check_next(&v, &board, &what).is_some() {
                    commands += 1;
                }
                // Status reports the same `next` for the same agent.
                let s = pair(["status", &board, "--agent", agent, "--json"]).json();
                assert_eq!(s["next"], v["next"], "{what}");
            }
        }
    }
    assert!(commands > 100, "only {commands} commands checked");
}

#[test]
fn next_is_runnable_as_given_from_another_directory_until_committed() {
    // A git repository, so that the default worktree is known and filled in.
    let repo = tempfile::tempdir().unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(repo.path())
        .status();
    if !git.is_ok_and(|s| s.success()) {
        eprintln!("git is not available; skipped");
        return;
    }
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let git_in = |dir: &std::path::Path, args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?} in {}", dir.display());
    };
    git_in(&root, &["commit", "-q", "--allow-empty", "-m", "base"]);
    let elsewhere = tempfile::tempdir().unwrap();
    let note = elsewhere.path().join("note.md");
    std::fs::write(&note, "As the action says.\n").unwrap();
    let init = output_in(
        &root,
        &["init", "board.md", "--reviewers", "alice,bob", "--red-test"],
    );
    assert!(init.status.success(), "{init:?}");
    let board = root.join("board.md").display().to_string();
    let expected_worktree = root.join(".worktrees/board").display().to_string();
    for agent in ["alice", "bob"] {
        // Relative to the repository, polled from there: the command names the absolute path.
        let out = output_in(&root, &["poll", "board.md", "--agent", agent, "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let argv = check_next(&v, &board, agent).expect("register");
        let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
        assert!(output_in(elsewhere.path(), &args).status.success());
    }
    let mut trail = Vec::new();
    let mut saw_default_worktree = false;
    for _ in 0..40 {
        let status = pair(["status", &board, "--json"]).json();
        if status["phase"] == "COMMITTED" {
            break;
        }
        let mut acted = false;
        for who in ["doer", "alice", "bob"] {
            let out = output_in(
                elsewhere.path(),
                &["poll", &board, "--agent", who, "--json"],
            );
            if out.status.code() != Some(0) {
                continue;
            }
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut argv = check_next(&v, &board, who).expect("a command on one's turn");
            for w in argv.iter_mut() {
                if w == "/tmp/note.md" {
                    *w = note.display().to_string();
                }
            }
            let creates = argv.get(1).is_some_and(|w| w == "worktree");
            if argv.iter().any(|w| w == "COMMITTED") {
                // What the doer does before recording the commit: commit the approved content.
                git_in(
                    std::path::Path::new(&expected_worktree),
                    &["commit", "-q", "-m", "the fix"],
                );
            }
            trail.push(format!("[{}] {}", v["phase"], argv.join(" ")));
            let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
            let run = output_in(elsewhere.path(), &args);
            assert!(
                run.status.success(),
                "next.command failed as given: {}\n{}",
                String::from_utf8_lossy(&run.stderr),
                trail.join("\n")
            );
            if creates {
                saw_default_worktree = true;
                // `pair worktree create` made it at the default path; the doer writes and
                // stages code there.
                let wt = std::path::Path::new(&expected_worktree);
                assert!(wt.join(".git").exists(), "{}", trail.join("\n"));
                std::fs::write(wt.join("code.txt"), "the fix\n").unwrap();
                git_in(wt, &["add", "code.txt"]);
            }
            acted = true;
            break;
        }
        assert!(acted, "nobody has a move\n{}", trail.join("\n"));
    }
    let status = pair(["status", &board, "--json"]).json();
    assert_eq!(status["phase"], "COMMITTED", "{}", trail.join("\n"));
    assert!(
        saw_default_worktree,
        "next.command creates the default worktree {expected_worktree}\n{}",
        trail.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// 3. absolute paths

#[test]
fn poll_wait_for_a_missing_board_names_its_absolute_path_once_and_advises_init_only_generically() {
    let dir = tempfile::tempdir().unwrap();
    let out = output_in(
        dir.path(),
        &[
            "poll",
            "later.md",
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "0.3",
            "--interval",
            "0.05",
        ],
    );
    assert_eq!(out.status.code(), Some(7));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let absolute = dir.path().join("later.md").display().to_string();
    assert_eq!(
        stderr.matches(&format!("waiting for {absolute}")).count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("the doer creates it"), "{stderr}");
    assert!(!stderr.contains("create it with"), "{stderr}");
    // With --json, stderr holds only the error envelope.
    let out = output_in(
        dir.path(),
        &[
            "poll",
            "later.md",
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "0.1",
            "--json",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stderr).expect("one JSON object");
    assert_eq!(v["error"]["kind"], "missing");
}

// ---------------------------------------------------------------------------------------------
// 5. BLOCKED

#[test]
fn blocked_has_exit_12_shows_who_and_why_and_through_blocked_waits_for_the_unblock() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    pair([
        "block",
        b.p(),
        "--agent",
        "alice",
        "--reason",
        "The staging database is down",
    ])
    .code(0);
    // Everyone polling gets 12, not the 11 of finished work.
    for agent in ["doer", "alice", "stranger"] {
        let out = pair(["poll", b.p(), "--agent", agent, "--json"]);
        out.code(12);
        let v = out.json();
        assert_eq!(v["blocked_from"], "DRAFT", "{v:#}");
        let action = v["next"]["action"].as_str().unwrap();
        assert!(action.contains("pair status"), "{action}");
        let command = v["next"]["command"].as_array().unwrap();
        let words: Vec<&str> = command.iter().map(|w| w.as_str().unwrap()).collect();
        if agent == "doer" {
            assert_eq!(words[1], "unblock", "{v:#}");
        } else {
            assert_eq!(words[1], "poll", "{v:#}");
            assert!(words.contains(&"--through-blocked"), "{v:#}");
        }
    }
    let text = pair(["poll", b.p(), "--agent", "alice"]);
    text.code(12);
    assert!(
        text.stdout.contains("blocked     from DRAFT"),
        "{}",
        text.report()
    );
    // status names the blocker, the reason and blocked_from.
    let s = pair(["status", b.p(), "--json"]).json();
    assert_eq!(s["blocked"]["by"], "alice", "{s:#}");
    assert_eq!(s["blocked"]["from"], "DRAFT", "{s:#}");
    assert_eq!(s["blocked"]["reason"], "The staging database is down");
    assert!(s["blocked"]["at"].as_str().is_some());
    let human = pair(["status", b.p()]);
    assert!(
        human.stdout.contains("blocked     from DRAFT by alice at "),
        "{}",
        human.report()
    );
    assert!(human.stdout.contains("The staging database is down"));
    // Without --through-blocked, --wait returns at once with 12.
    let quick = pair([
        "poll",
        b.p(),
        "--agent",
        "alice",
        "--wait",
        "--timeout",
        "5",
    ]);
    quick.code(12);
    assert!(quick.elapsed < std::time::Duration::from_secs(4));
    // With it, the wait sleeps through the block: still blocked when the timeout runs out (12),
    // and woken by the unblock, on to the next turn (here: alice's, once the plan is submitted).
    pair([
        "poll",
        b.p(),
        "--agent",
        "alice",
        "--wait",
        "--through-blocked",
        "--timeout",
        "0.3",
    ])
    .code(12);
    let path = b.p().to_string();
    let waiter = std::thread::spawn(move || {
        pair([
            "poll",
            &path,
            "--agent",
            "alice",
            "--wait",
            "--through-blocked",
            "--timeout",
            "20",
            "--json",
        ])
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    pair([
        "unblock",
        b.p(),
        "--agent",
        "doer",
        "--reason",
        "It is back",
    ])
    .code(0);
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    pair([
        "submit",
        b.p(),
        "--agent",
        "doer",
        "plan",
        "--note",
        "p",
        "--user-approved",
    ])
    .code(0);
    let woke = waiter.join().unwrap();
    woke.code(0);
    assert_eq!(woke.json()["phase"], "PLANNING_SUBMITTED");
    assert_eq!(
        pair(["status", b.p(), "--json"]).json()["blocked"],
        Value::Null
    );
}

// ---------------------------------------------------------------------------------------------
// 6. typos

#[test]
fn a_mistyped_agent_id_is_asked_about_warned_on_register_and_can_withdraw() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    let (_, v) = poll_json(b.p(), "alcie");
    let action = v["next"]["action"].as_str().unwrap();
    assert!(action.contains("did you mean `alice`?"), "{action}");
    assert_eq!(v["next"]["command"], Value::Null, "{v:#}");
    // Registering anyway works, but says what it may be and how to take it back.
    let out = pair(["register", b.p(), "--agent", "alcie", "--json"]);
    out.code(0);
    let warnings = out.json()["warnings"].to_string();
    assert!(
        warnings.contains("alice") && warnings.contains("pair unregister"),
        "{warnings}"
    );
    let out = pair(["unregister", b.p(), "--agent", "alcie"]);
    out.code(0);
    assert!(!b.read_string().contains("alcie:"), "{}", b.read_string());
    // Nothing to withdraw, with the closest id named.
    let out = pair(["unregister", b.p(), "--agent", "alcie"]);
    out.code(6);
    assert!(
        out.stderr.contains("did you mean `alice`?"),
        "{}",
        out.report()
    );
}

#[test]
fn unregister_is_refused_for_a_required_reviewer_one_with_verdicts_the_doer_and_others() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    // Required: only the user changes that.
    let out = pair(["unregister", b.p(), "--agent", "alice"]);
    out.code(6);
    assert!(out.stderr.contains("required reviewer"), "{}", out.report());
    // The doer is never removed.
    pair(["unregister", b.p(), "--agent", "doer"]).code(6);
    // Someone else's entry, through a raw write: the law refuses it too.
    pair(["register", b.p(), "--agent", "bob"]).code(0);
    let without_bob = {
        let text = b.read_string();
        let start = text.find("  bob:\n").unwrap();
        let end = text[start..]
            .find("\n---\n")
            .map(|e| start + e + 1)
            .unwrap();
        format!("{}{}", &text[..start], &text[end..])
    };
    let out = b.write_expect(&without_bob, &b.sha(), &["--as", "alice"]);
    out.code(6);
    assert!(
        out.stderr.contains("only bob may withdraw"),
        "{}",
        out.report()
    );
    // bob itself may, by a raw write as well as by the command.
    b.write_expect(&without_bob, &b.sha(), &["--as", "bob"])
        .code(0);
    pair(["validate", b.p()]).code(0);
    // With a verdict on the record, a registration stays.
    let mut text = set_top(
        &String::from_utf8(b.content()).unwrap(),
        "phase",
        "PLANNING_SUBMITTED",
    );
    text = set_top(&text, "plan_revision", "1");
    text = insert_before_closing(
        &text,
        &agent_block(
            "carol",
            "reviewer",
            "COMMENT",
            &[("reviewed_plan_revision", "1"), ("plan_verdict", "COMMENT")],
        ),
    );
    let c = Board::new(agreeing(
        &text.replace("status: COMMENT", "status: WAITING"),
    ));
    pair(["validate", c.p()]).code(0);
    let out = pair(["unregister", c.p(), "--agent", "carol"]);
    out.code(6);
    assert!(out.stderr.contains("verdicts"), "{}", out.report());
}

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

#[test]
fn a_mistyped_phase_gets_the_closest_one_and_words_match_in_any_case() {
    let b = init_board(&["--reviewers", "alice"]);
    let out = pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANING",
        "--user-approved",
    ]);
    out.code(4);
    assert!(
        out.stderr.contains("did you mean PLANNING?"),
        "{}",
        out.report()
    );
    assert!(
        !out.stderr.contains("CLEANED_UP"),
        "no list of every phase: {}",
        out.report()
    );
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "planning",
        "--user-approved",
    ])
    .code(0);
    pair([
        "submit",
        b.p(),
        "--agent",
        "doer",
        "PLAN",
        "--note",
        "p",
        "--user-approved",
    ])
    .code(0);
    pair([
        "verdict",
        b.p(),
        "--agent",
        "alice",
        "approved",
        "--revision",
        "1",
        "--note",
        "ok",
    ])
    .code(0);
    assert_eq!(
        pair(["status", b.p(), "--json"]).json()["phase"],
        "PLAN_APPROVED"
    );
}

// ---------------------------------------------------------------------------------------------
// 7. refusals: the phase first, then the caller's standing; never a step the caller may not take

#[test]
fn refusals_name_the_phase_before_the_callers_standing_and_suggest_only_its_own_steps() {
    let b = init_board(&["--reviewers", "alice"]);
    // claim/verdict in DRAFT by an unregistered agent: the phase is the reason.
    for words in [
        vec!["claim"],
        vec!["verdict", "APPROVED", "--revision", "1", "--note", "x"],
    ] {
        let mut args = vec![words[0], b.p(), "--agent", "stranger", "--json"];
        args.extend(&words[1..]);
        let err = pair(&args).json_error(6);
        let message = err["message"].as_str().unwrap();
        assert!(message.contains("not a review phase"), "{message}");
        assert!(!message.contains("--required"), "{message}");
        if let Some(argv) = err["hint"]["argv"].as_array() {
            assert_eq!(argv[1], "poll", "only a step the caller may take: {err:#}");
        }
    }
    // submit/unblock/advance by an unregistered agent: the phase first, no hint to register.
    let err = pair([
        "unblock",
        b.p(),
        "--agent",
        "stranger",
        "--reason",
        "r",
        "--json",
    ])
    .json_error(6);
    assert!(
        err["message"].as_str().unwrap().contains("not BLOCKED"),
        "{err:#}"
    );
    let err = pair([
        "advance",
        b.p(),
        "--agent",
        "stranger",
        "PLANNING",
        "--json",
    ])
    .json_error(6);
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("only the doer"), "{message}");
    assert_eq!(
        err.get("hint"),
        None,
        "no registration makes one the doer: {err:#}"
    );
    let err = pair([
        "submit",
        b.p(),
        "--agent",
        "stranger",
        "plan",
        "--note",
        "p",
        "--json",
    ])
    .json_error(6);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("not allowed in phase DRAFT"),
        "{err:#}"
    );
    // A registered reviewer that is not required, in a review phase: no runnable hint to make
    // itself required.
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    pair(["register", b.p(), "--agent", "bob"]).code(0);
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    pair([
        "submit",
        b.p(),
        "--agent",
        "doer",
        "plan",
        "--note",
        "p",
        "--user-approved",
    ])
    .code(0);
    let err = pair(["claim", b.p(), "--agent", "bob", "--json"]).json_error(6);
    assert!(
        err["message"].as_str().unwrap().contains("only the user"),
        "{err:#}"
    );
    assert_eq!(err.get("hint"), None, "{err:#}");
    // The doer, advancing to a phase a submission reaches, is pointed to submit; a reviewer is not.
    let text = set_top(&b.read_string(), "phase", "PLANNING");
    let c = Board::new(text);
    let err = pair([
        "advance",
        c.p(),
        "--agent",
        "doer",
        "PLANNING_SUBMITTED",
        "--json",
    ])
    .json_error(6);
    assert_eq!(err["hint"]["argv"][1], "submit", "{err:#}");
    let err = pair([
        "advance",
        c.p(),
        "--agent",
        "alice",
        "PLANNING_SUBMITTED",
        "--json",
    ])
    .json_error(6);
    assert_eq!(err.get("hint"), None, "{err:#}");
    // BLOCKED: only the doer is told to unblock.
    pair(["block", b.p(), "--agent", "alice", "--reason", "q"]).code(0);
    let err = pair(["claim", b.p(), "--agent", "alice", "--json"]).json_error(6);
    assert_eq!(err.get("hint"), None, "{err:#}");
    let err = pair([
        "submit",
        b.p(),
        "--agent",
        "doer",
        "plan",
        "--note",
        "p",
        "--json",
    ])
    .json_error(6);
    assert_eq!(err["hint"]["argv"][1], "unblock", "{err:#}");
}
