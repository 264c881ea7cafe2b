//! What an agent is told: a `next` that is a runnable command for every phase and role, refusals
//! that name the phase before the caller's standing with hints that keep every flag, typos caught,
//! the embedded skill whose every command parses, and whole lifecycles with objections (on a file
//! board and on a git board) whose every step is the `next` an agent was given, run as given.

use crate::common::env::Env;
use crate::common::handmade::{board_in, poll_json};
use crate::common::prereq::{GIT, on_path, require};
use crate::common::reads::text;
use crate::common::*;
use crate::proto::*;
use clap::Parser;
use pair::cli::Cli;
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// `next.command`: a runnable argument vector

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
                "VERDICT" | "DECISION" | "RULING" => choice.clone(),
                "ROUND" => "code:1".to_string(),
                "ESCALATION" => "human".to_string(),
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
    if !require(&GIT, on_path("git")) {
        return;
    }
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(repo.path())
        .status();
    assert!(git.is_ok_and(|s| s.success()), "git init failed");
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
                // The red test, written in the worktree and named from there.
                if w == "TEST_FILES" {
                    let wt = std::path::Path::new(&expected_worktree);
                    std::fs::write(wt.join("red_test.txt"), "fails\n").unwrap();
                    *w = "red_test.txt".to_string();
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
// typos

#[test]
fn a_mistyped_agent_id_is_asked_about_warned_on_register_and_can_withdraw() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    // Not its turn (an agent reading the exit code must not act): its next command is the poll
    // under the id it probably meant.
    let (out, v) = poll_json(b.p(), "alcie");
    out.code(10);
    assert_eq!(v["your_turn"], false, "{v:#}");
    let action = v["next"]["action"].as_str().unwrap();
    assert!(action.contains("did you mean `alice`?"), "{action}");
    assert!(action.contains("pair register"), "{action}");
    assert_eq!(v["next"]["command"][1], "poll", "{v:#}");
    assert_eq!(v["next"]["command"][4], "alice", "{v:#}");
    let text = pair(["poll", b.p(), "--agent", "alcie"]);
    text.code(10);
    assert!(!text.stdout.contains("(your turn"), "{}", text.report());
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
fn a_wait_under_a_mistyped_agent_id_is_refused_at_once_with_the_id_it_meant() {
    // Its turn would never come: an agent's loop of `poll --wait` would wait out every timeout.
    let b = init_board(&["--reviewers", "alice"]);
    for registered in [false, true] {
        if registered {
            pair(["register", b.p(), "--agent", "alice"]).code(0);
        }
        let before = b.read();
        let started = std::time::Instant::now();
        let out = pair([
            "poll",
            b.p(),
            "--agent",
            "alcie",
            "--wait",
            "--timeout",
            "600",
            "--json",
        ]);
        let e = out.json_error(4);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(25),
            "answered at once, not at the timeout: {}",
            out.report()
        );
        let message = e["message"].as_str().unwrap_or_default();
        for part in [
            "did you mean `alice`?",
            "--agent alice --wait",
            "pair register",
            "--agent alcie",
        ] {
            assert!(message.contains(part), "{part:?} in {message}");
        }
        pair(["poll", b.p(), "--agent", "alcie", "--through-blocked"]).code(4);
        assert_eq!(b.read(), before, "the board is untouched");
    }
    // A plain poll still answers (exit 10, the same suggestion), and an id close to nobody
    // waits as before: here, for its timeout.
    pair(["poll", b.p(), "--agent", "alcie"]).code(10);
    pair([
        "poll",
        b.p(),
        "--agent",
        "zed",
        "--wait",
        "--timeout",
        "0.2",
    ])
    .code(0);
}

#[test]
fn a_board_named_without_its_md_is_suggested_by_the_name_that_exists() {
    let b = init_board(&["--reviewers", "alice"]);
    let bare = b.p().strip_suffix(".md").unwrap().to_string();
    for args in [
        vec![
            "verdict",
            &bare,
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
        vec!["status", &bare],
        vec!["poll", &bare, "--agent", "doer"],
    ] {
        let out = pair(&args);
        out.code(7);
        assert!(
            out.stderr.contains(&format!("did you mean {}", b.p()))
                && !out.stderr.contains("pair init"),
            "{}",
            out.report()
        );
        let mut json = args.clone();
        json.push("--json");
        let out = pair(&json);
        let e = out.json_error(7);
        assert!(e["message"].to_string().contains(b.p()), "{}", out.report());
        assert!(!std::path::Path::new(&bare).exists(), "nothing made");
    }
    // A name with no board beside it keeps the advice to create it.
    let missing = format!("{bare}-other");
    let out = pair(["status", &missing]);
    out.code(7);
    assert!(out.stderr.contains("pair init"), "{}", out.report());
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
// refusals: the phase first, then the caller's standing; never a step the caller may not take

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
    // A copy of the board in PLANNING, for the advances below.
    let planning = b.read_string();
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
    let c = Board::new(planning);
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

#[test]
fn refusal_hints_name_the_real_doer_id() {
    let p = Proto::init(&["--doer", "builder", "--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    p.ok("alice", &["block", "--reason", "q"]);
    let out = p.refused("alice", &["advance", "PLANNING", "--user-approved"], 6);
    let all = out.all();
    assert!(
        !all.contains("--agent DOER"),
        "a hint naming a command must use the doer's id (builder), not a placeholder:\n{}",
        out.report()
    );
}

/// The first backticked `pair ...` command in an action, with its placeholders filled in.
fn command_in(action: &str, me: &str, p: &Proto, note: &str) -> Option<Vec<String>> {
    let start = action.find("`pair ")? + 1;
    let end = action[start..].find('`')? + start;
    let cmd = &action[start..end];
    let mut out = Vec::new();
    for w in cmd.split_whitespace().skip(1) {
        let w = match w {
            "FILE" => note.to_string(),
            "ABSOLUTE_PATH" | "ABS_PATH" | "PATH" | "WORKTREE" => p.wt.clone(),
            "SHA" | "COMMIT_SHA" => SHA_A.to_string(),
            "BRANCH" => "main".to_string(),
            "YOUR_ID" | "ID" | "AGENT" => me.to_string(),
            "TEXT" | "REASON" => "following-the-action".to_string(),
            "APPROVED|CHANGES_REQUESTED|COMMENT" | "VERDICT" => "APPROVED".to_string(),
            other => other.to_string(),
        };
        out.push(w);
    }
    Some(out)
}

#[test]
fn following_next_action_literally_drives_a_board_to_committed() {
    let p = Proto::init(&["--reviewers", "alice,bob", "--red-test"]);
    let note = p.b.aux_file("note.md", "Following the action\n");
    let note = note.to_str().unwrap().to_string();
    let mut trail = Vec::new();
    for _ in 0..40 {
        let phase = p.phase();
        if phase == "COMMITTED" {
            break;
        }
        let mut acted = false;
        for who in ["doer", "alice", "bob"] {
            let (o, v) = p.poll(who);
            if o.code != Some(0) {
                continue;
            }
            let action = v["next"]["action"].as_str().unwrap_or_default().to_string();
            let words = command_in(&action, who, &p, &note).unwrap_or_else(|| {
                panic!("next.action must name a `pair` command: {action:?}\n{v:#}")
            });
            trail.push(format!("[{phase}] {who}: pair {}", words.join(" ")));
            let out = pair(&words);
            assert_eq!(
                out.code,
                Some(0),
                "the command named by next.action for {who} must work as given\naction: {action}\ntrail:\n{}\n{}",
                trail.join("\n"),
                out.report()
            );
            p.assert_valid();
            acted = true;
            break;
        }
        assert!(acted, "nobody has a move in {phase}\n{}", trail.join("\n"));
    }
    p.assert_phase("COMMITTED");
}

#[test]
fn refusal_hints_keep_every_flag_the_step_needs() {
    let e = Env::new();
    e.ok(
        0,
        &[
            "init",
            "w.md",
            "--work-type",
            "debugging",
            "--reviewers",
            "alice",
        ],
    );
    let r = e.ok(
        6,
        &[
            "advance",
            "w.md",
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ],
    );
    assert!(
        r.stderr.contains("--user-approved --waive REASON"),
        "{}",
        r.stderr
    );
    let r = e.ok(
        6,
        &[
            "advance",
            "w.md",
            "--agent",
            "doer",
            "PLANNING",
            "--waive",
            "the user said so",
        ],
    );
    assert!(
        r.stderr
            .contains("--user-approved --waive 'the user said so'"),
        "{}",
        r.stderr
    );
    e.ok(
        0,
        &[
            "advance",
            "w.md",
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
            "--waive",
            "the user said so",
        ],
    );
}

#[test]
fn suggested_commands_for_a_board_named_with_a_leading_dash_work() {
    let e = Env::new();
    e.ok(0, &["init", "--", "-x.md"]);
    let r = e.ok(0, &["poll", "./-x.md", "--agent", "doer", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let action = v["next"]["action"].as_str().unwrap();
    // The suggested command names the board by its absolute path, which cannot start with `-`.
    let absolute = format!("{}/-x.md", e.dir.path().display());
    assert!(
        action.contains(&format!("pair advance {absolute}")),
        "{action}"
    );
    assert_eq!(v["next"]["command"][2], absolute.as_str(), "{v:#}");
}

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
        "| 0 |", "| 2 |", "| 3 |", "| 5 |", "| 6 |", "| 7 |", "| 10 |", "| 11 |", "| 12 |",
        "| 14 |", "| 15 |",
    ] {
        assert!(skill.contains(code), "the skill lacks exit code {code}");
    }
}

#[test]
fn pair_skill_prints_the_embedded_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let out = output_in(tmp.path(), &["skill"]);
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

#[test]
fn a_terminal_phase_has_no_next_command_and_reports_the_optional_record_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("board.md");
    let board = path.to_str().unwrap().to_string();
    for (phase, to) in [("COMMITTED", "MERGED"), ("MERGED", "CLEANED_UP")] {
        std::fs::write(&path, board_in(phase, false, "/srv/repo/.worktrees/board")).unwrap();
        for agent in ["doer", "alice"] {
            let (out, v) = poll_json(&board, agent);
            let what = format!("{phase} as {agent}");
            // Exit code, your_turn and next say the same: nobody's turn, nothing to run.
            assert_eq!(out.code, Some(11), "{what}\n{}", out.report());
            assert_eq!(v["your_turn"], false, "{what}");
            assert_eq!(v["next"]["actor"], "none", "{what}");
            assert_eq!(v["next"]["command"], Value::Null, "{what}: {:#}", v["next"]);
            assert_eq!(v["next"]["choices"], Value::Null, "{what}");
            if agent != "doer" {
                // Anyone else may wait on for the end of the lifecycle, which the doer records.
                let argv: Vec<&str> = v["next"]["optional"]["command"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{what}: an optional wait: {:#}", v["next"]))
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                assert_eq!(argv[..3], ["pair", "poll", board.as_str()], "{what}");
                assert!(
                    argv.windows(2).any(|w| w == ["--until", "CLEANED_UP"]),
                    "{what}: {argv:?}"
                );
                continue;
            }
            // The doer's later record is optional, under a key of its own, and runs as given.
            let optional = &v["next"]["optional"];
            let argv: Vec<String> = optional["command"]
                .as_array()
                .unwrap_or_else(|| panic!("{what}: an optional command: {optional:#}"))
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            assert_eq!(argv[..3], ["pair", "advance", board.as_str()], "{what}");
            assert!(argv.contains(&to.to_string()), "{what}: {argv:?}");
            let placeholders = optional["placeholders"].as_object().unwrap();
            let filled: Vec<String> = argv[1..]
                .iter()
                .map(|w| match w.as_str() {
                    "BRANCH" => "main".to_string(),
                    w => {
                        assert!(!placeholders.contains_key(w), "{what}: unfilled {w}");
                        w.to_string()
                    }
                })
                .collect();
            pair(&filled).code(0);
            assert_eq!(pair(["status", &board, "--json"]).json()["phase"], to);
            // A human reading poll sees the optional step too.
            std::fs::write(&path, board_in(phase, false, "/srv/repo/.worktrees/board")).unwrap();
            let text = pair(["poll", &board, "--agent", "doer"]);
            assert!(text.stdout.contains("optional"), "{}", text.report());
        }
    }
}

/// The skill's command lines, run as given (placeholders filled in) in the directory the
/// skill's `task.md` names a board in; each run is checked against the exit code it should have
/// at that point of the work, and every line the skill prints must be run at least once.
struct SkillRun {
    lines: std::collections::BTreeSet<String>,
    ran: std::cell::RefCell<std::collections::BTreeSet<String>>,
    wrong: std::cell::RefCell<Vec<String>>,
    path: std::ffi::OsString,
    /// What the last line run printed on standard output.
    printed: std::cell::RefCell<String>,
}

impl SkillRun {
    /// Run `line` (exactly as the skill prints it) in `dir`; `fill` replaces whole words
    /// (a placeholder mapped to "" is dropped); `want` is the exit code it must end with.
    fn run(&self, dir: &std::path::Path, line: &str, fill: &[(&str, &str)], want: i32) -> Value {
        assert!(
            self.lines.contains(line),
            "test bug: the skill does not print `{line}`"
        );
        self.ran.borrow_mut().insert(line.to_string());
        let mut words = Vec::new();
        for w in shell_words(line).into_iter().skip(1) {
            match fill.iter().find(|(k, _)| *k == w) {
                Some((_, "")) => {}
                Some((_, v)) => words.push(v.to_string()),
                None => words.push(w),
            }
        }
        // "Always say who you are: `--agent ID` on every command": where a line names nobody,
        // it runs as the doer says it, with `--agent doer` added.
        if !words.iter().any(|w| w == "--agent") {
            words.extend(["--agent".to_string(), "doer".to_string()]);
        }
        let out = assert_cmd::Command::new(pair_bin())
            .args(&words)
            .current_dir(dir)
            .env_remove("PAIR_AGENT")
            .env_remove("PAIR_BOARD")
            .env("PATH", &self.path)
            .timeout(PROCESS_TIMEOUT)
            .output()
            .expect("run pair");
        let code = out.status.code().unwrap_or(-1);
        if code != want {
            self.wrong.borrow_mut().push(format!(
                "`{line}` as {words:?}: exit {code}, want {want}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        *self.printed.borrow_mut() = String::from_utf8_lossy(&out.stdout).into_owned();
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    /// Run a read-only `line` (exit 0) and check what it prints: every one of `texts`, each a
    /// fact of the board at that point of the work.
    fn shows(&self, dir: &std::path::Path, line: &str, texts: &[&str]) {
        self.run(dir, line, &[], 0);
        let printed = self.printed.borrow();
        for t in texts {
            if !printed.contains(t) {
                self.wrong
                    .borrow_mut()
                    .push(format!("`{line}` does not print {t:?}:\n{printed}"));
            }
        }
    }
}

#[test]
fn every_command_line_of_the_skill_runs_as_given_through_a_whole_lifecycle() {
    if !require(&GIT, on_path("git")) {
        return;
    }
    let skill = pair::commands::skill::SKILL;
    let tmp = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(tmp.path()).unwrap();
    // `cargo test`, as the skill's check runs it, is a stand-in that passes.
    let bin = top.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("cargo"),
        "#!/bin/sh\necho 'test result: ok. 1 passed'\n",
    )
    .unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(bin.join("cargo")).unwrap().permissions(),
        0o755,
    );
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("cargo"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    let mut path = bin.clone().into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let s = SkillRun {
        lines: skill_commands(skill).into_iter().collect(),
        ran: Default::default(),
        wrong: Default::default(),
        path,
        printed: Default::default(),
    };
    // The repository, its board `task.md`, and the files the skill's commands name.
    let root = top.join("repo");
    std::fs::create_dir_all(root.join("tests")).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("lib.txt"), "one\n").unwrap();
    std::fs::write(
        root.join(".gitignore"),
        "task.md\n*.lock\n*.json\n.*.pair\n.worktrees/\n*.md\nfixed.md\nrepro.txt\ntests/\n",
    )
    .unwrap();
    git(&root, &["add", "lib.txt", ".gitignore"]);
    git(
        &root,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "-m",
            "base",
        ],
    );
    for dir in [&root, &top.join("side")] {
        std::fs::create_dir_all(dir).unwrap();
        for f in [
            "goal.md",
            "analysis.md",
            "plan.md",
            "red-test.md",
            "code.md",
            "followup.md",
            "review.md",
            "repro.txt",
            "ev.md",
            "fix.md",
            "fix-blk-1.md",
            "grounds-blk-2.md",
            "correction.md",
        ] {
            std::fs::write(dir.join(f), format!("What {f} says.\n")).unwrap();
        }
    }
    std::fs::write(
        root.join("tests/upload_test.rs"),
        "#[test]\nfn retries_end() {}\n",
    )
    .unwrap();
    let side = top.join("side");
    // A step the test takes itself; what went wrong before it is said first.
    let git = |dir: &std::path::Path, args: &[&str]| {
        assert!(
            s.wrong.borrow().is_empty(),
            "not as expected:\n{}",
            s.wrong.borrow().join("\n")
        );
        git(dir, args)
    };
    let r = &root;
    let poll = |who: &str| {
        pair([
            "poll",
            r.join("task.md").to_str().unwrap(),
            "--agent",
            who,
            "--json",
        ])
        .json()
    };
    let hash = || {
        poll("doer")["review"]["artifact"]["sha256"]
            .as_str()
            .unwrap_or("none")
            .to_string()
    };
    let counter = || poll("doer")["review"]["counter"].to_string();
    let board = root.join("task.md").display().to_string();
    let other = |who: &str, words: &[&str]| {
        let mut v = vec![
            words[0].to_string(),
            board.clone(),
            "--agent".into(),
            who.into(),
        ];
        v.extend(words[1..].iter().map(|w| w.to_string()));
        let out = pair(&v);
        assert!(
            out.code == Some(0),
            "{}\nnot as expected before it:\n{}",
            out.report(),
            s.wrong.borrow().join("\n")
        );
    };
    let verdict = "pair verdict task.md --agent alice APPROVED --revision 2 --artifact-sha256 HASH --note-file review.md";
    let approve = |who: &str| {
        let (h, c) = (hash(), counter());
        other(
            who,
            &[
                "verdict",
                "APPROVED",
                "--revision",
                &c,
                "--artifact-sha256",
                &h,
                "--note",
                "ok",
            ],
        );
    };
    let filled = || -> Vec<(&'static str, String)> { vec![("HASH", hash()), ("2", counter())] };
    let run_filled = |line: &str, want: i32| {
        let f = filled();
        let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
        s.run(r, line, &f, want)
    };

    // Setting up, and what a newcomer reads first.
    s.run(
        &side,
        "pair init task.md --goal-file goal.md --reviewers alice,bob",
        &[],
        0,
    );
    s.run(
        r,
        "pair init task.md --goal-file goal.md --work-type debugging --reviewers alice,bob",
        &[],
        0,
    );
    s.shows(r, "pair status task.md", &["DRAFT", "alice", "bob"]);
    s.shows(r, "pair brief task.md --for doer", &["What goal.md says."]);
    s.run(
        r,
        "pair poll task.md --agent alice --wait --timeout 600",
        &[],
        0,
    );
    s.run(r, "pair register task.md --agent alice", &[], 0);
    other("bob", &["register"]);
    other("alcie", &["register"]);
    s.run(
        r,
        "pair unregister task.md --agent WRONG_ID",
        &[("WRONG_ID", "alcie")],
        0,
    );
    s.run(
        r,
        "pair report-usage task.md --agent alice --tokens 1200",
        &[],
        0,
    );
    s.run(
        r,
        "pair away task.md --agent alice --until 2h --reason 'usage limit; back after the reset'",
        &[],
        0,
    );
    s.run(r, "pair away task.md --agent alice --clear", &[], 0);
    s.run(r, "pair COMMAND --help", &[("COMMAND", "poll")], 0);
    // The analysis.
    s.run(
        r,
        "pair advance task.md --agent doer ANALYZING --user-approved",
        &[],
        0,
    );
    s.run(
        r,
        "pair submit task.md --agent doer analysis --note-file analysis.md --user-approved",
        &[],
        0,
    );
    s.run(
        r,
        "pair poll task.md --agent alice --wait --timeout 600 --json --through-blocked",
        &[],
        0,
    );
    s.run(r, "pair claim task.md --agent alice", &[], 0);
    s.shows(r, "pair show task.md --latest", &["What analysis.md says."]);
    s.shows(
        r,
        "pair show task.md",
        &[
            "Analysis revision 1",
            "What analysis.md says.",
            "No reviews of analysis revision 1 yet.",
        ],
    );
    s.shows(
        r,
        "pair brief task.md --for reviewer --agent alice",
        &["What analysis.md says."],
    );
    s.shows(r, "pair diff task.md", &["What analysis.md says."]);
    // One line of 23 bytes: "What analysis.md says.\n".
    s.shows(r, "pair diff task.md --stat", &["1 line, 23 bytes"]);
    s.shows(
        r,
        "pair diff task.md --json",
        &["What analysis.md says.", "\"sha256\""],
    );
    run_filled(verdict, 0);
    approve("bob");
    // The plan: a comment first, then approved.
    s.run(r, "pair advance task.md --agent doer PLANNING", &[], 0);
    s.run(
        r,
        "pair submit task.md --agent doer plan --note-file plan.md --user-approved",
        &[],
        0,
    );
    // A reviewer that could not review says so; its verdict, on the same revision, follows.
    run_filled(
        "pair verdict task.md --agent alice UNABLE --revision 2 --reason 'cargo test could not start: disk full'",
        0,
    );
    run_filled(
        "pair verdict task.md --agent alice COMMENT --revision 2 --artifact-sha256 HASH --note-file review.md",
        0,
    );
    approve("bob");
    s.shows(
        r,
        "pair show task.md 'Plan Reviews'",
        &[
            "Unable to review",
            "disk full",
            "What review.md says.",
            "COMMENT",
        ],
    );
    s.run(
        r,
        "pair submit task.md --agent doer plan --note-file plan.md --user-approved",
        &[],
        0,
    );
    run_filled(verdict, 0);
    approve("bob");
    // The red test, in the worktree `worktree create` makes.
    s.run(
        r,
        "pair worktree create task.md --agent doer --user-approved",
        &[],
        0,
    );
    s.run(r, "pair worktree-path task.md", &[], 0);
    // The other way out of PLAN_APPROVED, which `worktree create` has taken.
    s.run(r, "pair advance task.md --agent doer RED_TESTING", &[], 6);
    s.run(
        r,
        "pair submit task.md --agent doer red-test --note-file red-test.md",
        &[],
        0,
    );
    run_filled(
        "pair verdict task.md --agent alice CHANGES_REQUESTED --revision 2 --artifact-sha256 HASH --note-file review.md",
        0,
    );
    approve("bob");
    // The test is written in the worktree, as the skill says; a relative `--files` path is
    // taken from there.
    let red_wt = root.join(".worktrees/task");
    std::fs::create_dir_all(red_wt.join("tests")).unwrap();
    std::fs::copy(
        root.join("tests/upload_test.rs"),
        red_wt.join("tests/upload_test.rs"),
    )
    .unwrap();
    s.run(r, "pair submit task.md --agent doer red-test --note-file red-test.md --files tests/upload_test.rs", &[], 0);
    run_filled(verdict, 0);
    approve("bob");
    // The code.
    s.run(r, "pair advance task.md --agent doer CODING", &[], 0);
    let wt = root.join(".worktrees/task");
    let upload: String = (1..=60)
        .map(|i| match i {
            10 => "fn retry_budget() -> u32 { 5 }\n".to_string(),
            i => format!("// line {i}\n"),
        })
        .collect();
    std::fs::create_dir_all(wt.join("src")).unwrap();
    std::fs::write(wt.join("src/upload.rs"), &upload).unwrap();
    git(&wt, &["add", "src/upload.rs"]);
    s.run(
        r,
        "pair submit task.md --agent doer code --note-file code.md",
        &[],
        0,
    );
    s.run(
        r,
        "pair check task.md --agent doer --name tests -- cargo test",
        &[],
        0,
    );
    s.run(
        r,
        "pair check task.md --agent ID --name NAME -- CMD ARGS…",
        &[
            ("ID", "doer"),
            ("NAME", "lint"),
            ("CMD", "true"),
            ("ARGS…", ""),
        ],
        0,
    );
    s.run(
        r,
        "pair check task.md --agent doer --name NAME",
        &[("NAME", "tests")],
        4,
    );
    s.run(
        r,
        "pair check task.md --agent alice --reproduce tests",
        &[],
        6,
    );
    s.run(
        r,
        "pair check task.md --agent alice --reproduce tests --yes",
        &[],
        0,
    );
    s.run(
        r,
        "pair note task.md --agent doer --section Evidence --note-file repro.txt --code",
        &[],
        0,
    );
    // Objections on the code.
    s.run(r, "pair object task.md --agent alice --severity blocking --anchor src/upload.rs:42 --title 'Retry loop never ends' --evidence-file ev.md --fix 'Cap retries at 5'", &[], 0);
    s.run(r, "pair object task.md --agent alice --severity advisory --anchor 'src/upload.rs#retry_budget' --title 'Name the budget' --evidence 'A magic number' --fix 'A named constant'", &[], 0);
    other(
        "bob",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "src/upload.rs:7",
            "--title",
            "Seven",
            "--evidence",
            "e",
            "--fix",
            "f",
        ],
    );
    // bob found BLK-1 too: he seconds it rather than raise it again.
    s.run(r, "pair second task.md BLK-1 --agent bob", &[], 0);
    let (h, c) = (hash(), counter());
    other(
        "bob",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            &c,
            "--artifact-sha256",
            &h,
            "--note",
            "no",
            "--objections",
            "BLK-2",
        ],
    );
    run_filled(
        "pair verdict task.md --agent alice CHANGES_REQUESTED --revision 2 --artifact-sha256 HASH --note-file review.md",
        4,
    );
    let (h, c) = (hash(), counter());
    other(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            &c,
            "--artifact-sha256",
            &h,
            "--note",
            "no",
            "--objections",
            "BLK-1",
        ],
    );
    s.shows(r, "pair objections task.md", &["BLK-1"]);
    s.shows(r, "pair objections task.md --open", &["BLK-1"]);
    s.run(r, "pair resolve task.md BLK-1 --agent doer --resolution-file fix-blk-1.md --surfaces src/upload.rs,tests/upload_test.rs", &[], 0);
    s.run(
        r,
        "pair challenge task.md BLK-2 --agent doer --grounds-file grounds-blk-2.md",
        &[],
        0,
    );
    git(&wt, &["add", "-u"]);
    std::fs::write(
        wt.join("src/upload.rs"),
        upload.replace("// line 50\n", "// line 50, capped\n"),
    )
    .unwrap();
    s.run(
        r,
        "pair submit task.md --agent doer followup --note-file followup.md",
        &[],
        0,
    );
    s.run(r, "pair object task.md --agent alice --severity blocking --regression-of BLK-1 --anchor src/upload.rs:50 --title 'The cap drops the error' --evidence-file ev.md --fix-file fix.md", &[], 0);
    s.run(r, "pair reopen task.md BLK-1 --agent alice --reason 'Still loops when the server returns 503'", &[], 0);
    run_filled(
        "pair verdict task.md --agent alice CHANGES_REQUESTED --revision 2 --artifact-sha256 HASH --objections BLK-1,REG-1 --note-file review.md",
        0,
    );
    s.run(r, "pair rule task.md BLK-2 uphold --agent alice --reason 'The lock is not held on the error path'", &[], 6);
    s.run(r, "pair rule task.md rework reject-rework --agent alice --reason 'BLK-1 needed a one-line fix'", &[], 6);
    s.run(
        r,
        "pair decide task.md accept --agent alice --reason 'BLK-4 is a known limitation'",
        &[],
        6,
    );
    let (h, c) = (hash(), counter());
    other(
        "bob",
        &[
            "verdict",
            "COMMENT",
            "--revision",
            &c,
            "--artifact-sha256",
            &h,
            "--note",
            "waiting for the ruling",
        ],
    );
    other(
        "doer",
        &[
            "rule",
            "BLK-2",
            "overrule",
            "--user-approved",
            "--reason",
            "the user agrees",
        ],
    );
    other(
        "doer",
        &[
            "resolve",
            "BLK-1",
            "--resolution",
            "fixed",
            "--surfaces",
            "src/upload.rs",
        ],
    );
    other(
        "doer",
        &[
            "resolve",
            "REG-1",
            "--resolution",
            "fixed",
            "--surfaces",
            "src/upload.rs",
        ],
    );
    git(&wt, &["add", "-u"]);
    std::fs::write(
        wt.join("src/upload.rs"),
        upload.replace("// line 50\n", "// line 50, capped, kept\n"),
    )
    .unwrap();
    other("doer", &["submit", "followup", "--note", "again"]);
    s.run(r, "pair accept task.md BLK-1 --agent alice", &[], 0);
    other("alice", &["accept", "REG-1"]);
    approve("alice");
    approve("bob");
    // The code gate has closed with alice's advisory still open: the doer names the round that
    // fixed it, alice takes it back; and she corrects her review, whose round has closed.
    s.run(
        r,
        "pair resolve task.md ADV-1 --agent doer --fixed-in code:2 --resolution 'The constant is named now'",
        &[],
        0,
    );
    s.run(
        r,
        "pair withdraw task.md ADV-1 --agent alice --reason 'Covered by BLK-1'",
        &[],
        0,
    );
    s.run(
        r,
        "pair correct task.md --agent alice --note-file correction.md",
        &[],
        0,
    );
    s.run(
        r,
        "pair block task.md --agent alice --reason 'Cannot reach the staging database'",
        &[],
        0,
    );
    s.run(
        r,
        "pair unblock task.md --agent doer --reason 'Database is back'",
        &[],
        0,
    );
    git(&wt, &["add", "-u"]);
    git(
        &wt,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "-m",
            "the fix",
        ],
    );
    s.run(
        r,
        "pair advance task.md --agent doer COMMITTED --user-approved",
        &[],
        0,
    );
    git(
        r,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "merge",
            "-q",
            "--no-edit",
            "pair/task",
        ],
    );
    s.run(
        r,
        "pair advance task.md --agent doer MERGED --merged-into main --user-approved",
        &[],
        0,
    );
    git(r, &["worktree", "remove", ".worktrees/task"]);
    git(r, &["branch", "-d", "pair/task"]);
    s.run(r, "pair advance task.md --agent doer CLEANED_UP", &[], 0);
    // The reviewer that waited on for the end of the lifecycle is there: exit 11 at once.
    s.run(
        r,
        "pair poll task.md --agent alice --wait --until CLEANED_UP",
        &[],
        11,
    );
    s.shows(r, "pair status task.md", &["CLEANED_UP"]);
    s.shows(r, "pair log task.md", &["init", "CLEANED_UP", "alice"]);
    s.shows(r, "pair stats task.md", &["CLEANED_UP"]);
    // Everything else the skill shows, on the other board, where it applies or is refused.
    s.run(&side, "pair advance task.md --agent doer PLANNING", &[], 6);
    s.run(
        &side,
        "pair submit task.md --agent doer plan --note-file plan.md --user-approved --no-review",
        &[],
        6,
    );
    s.run(&side, "pair submit task.md --agent doer plan --note-file plan.md --user-approved --waive 'User: skip the RCA, the cause is known'", &[], 6);
    // A rework restarts a gate's rounds on a board that uses the ledger; this one does not.
    s.run(&side, "pair submit task.md --agent doer plan --note-file plan.md --user-approved --rework --reason 'The design cannot meet the latency goal'", &[], 4);
    s.run(&side, "pair decide task.md defer --agent doer --user-approved --reason 'Needs the schema change' --escalation blocked-pending:schema-v2", &[], 6);
    s.run(&side, "pair decide task.md reject --agent doer --user-approved --reason 'The approach cannot work'", &[], 6);
    s.run(&side, "pair extend task.md --agent doer --sla review=4h --reason 'User: the reviewer is out today' --user-approved", &[], 0);
    // Nobody named carol here.
    s.run(&side, "pair unrequire task.md carol --agent doer --user-approved --reason 'User: carol is not coming'", &[], 4);
    let text = std::fs::read(side.join("task.md")).unwrap();
    std::fs::write(side.join("fixed.md"), &text).unwrap();
    let sha = sha256_hex(&text);
    s.run(
        &side,
        "pair write task.md --content-file fixed.md --expect-sha256 HEX --repair --reason TEXT",
        &[("HEX", sha.as_str()), ("TEXT", "a repair")],
        0,
    );
    s.run(
        &side,
        "pair stop task.md --agent doer --reason 'User cancelled the task'",
        &[],
        0,
    );
    s.run(&side, "pair poll", &[], 4);
    // The watchdog runs until it is stopped: stopped once it has checked, it ends cleanly.
    s.ran.borrow_mut().insert("pair watch task.md".to_string());
    let mut watch = std::process::Command::new(pair_bin())
        .args(["watch", "task.md", "--agent", "doer"])
        .current_dir(&side)
        .env("PATH", &s.path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The lock of its state is taken in its first check, after it listens for the signal.
    let state = side.join(".task.md.pair/watch.lock");
    let deadline = std::time::Instant::now() + PROCESS_TIMEOUT;
    while !state.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(state.exists(), "the watchdog never checked");
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &watch.id().to_string()])
        .status();
    let ended = watch.wait().unwrap();
    assert_eq!(ended.code(), Some(0), "watch ended with {ended:?}");
    // A review-only debate, in a directory of its own: the skill's lines, then a second round
    // with no finding, which stops it, so that its findings can seed a doer's board.
    let deb = top.join("debate");
    std::fs::create_dir_all(&deb).unwrap();
    std::fs::write(deb.join("lib.rs"), "fn a() {}\nloop {}\nfn c() {}\n").unwrap();
    for (line, want) in [
        ("pair init debate.md --review lib.rs", 0),
        ("pair poll debate.md --agent enthusiast", 0),
        (
            "pair object debate.md --agent enthusiast --severity blocking --anchor lib.rs:2 --title 'Loop never ends' --evidence 'No exit condition'",
            0,
        ),
        (
            "pair verdict debate.md --agent enthusiast COMMENT --revision 1 --note 'Read all of lib.rs'",
            0,
        ),
        (
            "pair challenge debate.md BLK-1 --agent adversary --grounds 'The caller bounds it'",
            0,
        ),
        (
            "pair verdict debate.md --agent adversary COMMENT --revision 1 --note 'Lines 1 and 3 are safe'",
            0,
        ),
        (
            "pair rule debate.md BLK-1 confirm --agent judge --reason 'No caller bounds it'",
            0,
        ),
    ] {
        s.run(&deb, line, &[], want);
    }
    let deb_board = deb.join("debate.md").display().to_string();
    for who in ["enthusiast", "adversary"] {
        pair([
            "verdict",
            &deb_board,
            "--agent",
            who,
            "COMMENT",
            "--revision",
            "2",
        ])
        .code(0);
    }
    s.run(&deb, "pair show debate.md", &[], 0);
    s.run(&deb, "pair init fixes.md --from-review debate.md", &[], 0);
    // The dissenter's lines, on a board whose plan gate has a dissent stage: a first dissenter
    // blocks, the doer revises, and the next cycle's fresh dissenter passes the revision.
    let dis = top.join("dissent");
    std::fs::create_dir_all(&dis).unwrap();
    let dis_board = dis.join("task.md").display().to_string();
    let dis_pair = |args: &[&str]| {
        let mut argv = vec![args[0], dis_board.as_str()];
        argv.extend(&args[1..]);
        pair(&argv).code(0);
    };
    pair([
        "init",
        &dis_board,
        "--goal",
        "Add retries",
        "--yolo",
        "--reviewers",
        "alice",
        "--dissent",
        "plan",
    ])
    .code(0);
    dis_pair(&["register", "--agent", "alice"]);
    dis_pair(&["advance", "--agent", "doer", "PLANNING"]);
    let approve = |rev: &str| {
        dis_pair(&[
            "verdict",
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            rev,
            "--note",
            "ok",
        ])
    };
    dis_pair(&[
        "submit",
        "--agent",
        "doer",
        "plan",
        "--note",
        "Step 1: retry.",
    ]);
    approve("1");
    for line in [
        "pair register task.md --agent dissenter-1",
        "pair brief task.md --for dissenter --agent dissenter-1",
        "pair poll task.md --agent dissenter-1",
        "pair object task.md --agent dissenter-1 --severity blocking --anchor '## Goal' --title 'Retries never stop' --evidence 'Offline, step 1 loops forever' --fix 'Cap the retries'",
        "pair dissent task.md --agent dissenter-1 blocking --revision 1 --objections BLK-1 --note 'Step 1 has no cap'",
    ] {
        s.run(&dis, line, &[], 0);
    }
    dis_pair(&[
        "resolve",
        "BLK-1",
        "--agent",
        "doer",
        "--resolution",
        "capped at 5",
    ]);
    dis_pair(&[
        "submit",
        "--agent",
        "doer",
        "plan",
        "--note",
        "Step 1: retry 5 times.",
    ]);
    approve("2");
    for line in [
        "pair register task.md --agent dissenter-2",
        "pair accept task.md BLK-1 --agent dissenter-2",
        "pair dissent task.md --agent dissenter-2 none --revision 2 --note 'The cap holds; nothing else found'",
    ] {
        s.run(&dis, line, &[], 0);
    }
    assert_eq!(
        pair(["status", &dis_board, "--json"]).json()["phase"],
        "PLAN_APPROVED"
    );
    // Rotation: a reviewer's place handed over mid-round and taken, a doer's offer withdrawn.
    let rot = top.join("rotation");
    std::fs::create_dir_all(&rot).unwrap();
    let rot_board = rot.join("task.md").display().to_string();
    let rot_pair = |words: &[&str]| {
        let mut v = vec![words[0].to_string(), rot_board.clone()];
        v.extend(words[1..].iter().map(|w| w.to_string()));
        pair(&v).code(0);
    };
    rot_pair(&["init", "--goal", "G", "--yolo", "--reviewers", "alice,bob"]);
    rot_pair(&["register", "--agent", "alice"]);
    rot_pair(&["register", "--agent", "bob"]);
    rot_pair(&["advance", "--agent", "doer", "PLANNING"]);
    rot_pair(&[
        "submit",
        "--agent",
        "doer",
        "plan",
        "--note",
        "Step 1, step 2.",
    ]);
    for line in [
        "pair handoff task.md --agent bob --to dave --summary 'Plan 1 waits for my verdict; check step 2' --user-approved",
        "pair brief task.md --for reviewer --agent dave",
        "pair acknowledge task.md --agent dave",
    ] {
        s.run(&rot, line, &[], 0);
    }
    rot_pair(&[
        "handoff",
        "--agent",
        "doer",
        "--to",
        "erin",
        "--user-approved",
    ]);
    s.run(&rot, "pair handoff task.md --agent doer --withdraw", &[], 0);
    for who in ["alice", "dave"] {
        rot_pair(&[
            "verdict",
            "--agent",
            who,
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ]);
    }
    assert_eq!(
        pair(["status", &rot_board, "--json"]).json()["phase"],
        "PLAN_APPROVED"
    );
    // An agent serving a project of boards: a board that names alice gives her a step.
    let proj = top.join("project");
    std::fs::create_dir_all(proj.join("boards")).unwrap();
    pair([
        "init",
        &proj.join("boards/t.md").display().to_string(),
        "--goal",
        "T",
        "--reviewers",
        "alice",
    ])
    .code(0);
    s.run(&proj, "pair next boards/ --agent alice --json", &[], 0);
    s.run(
        &proj,
        "pair next boards/ --agent alice --wait --timeout 600 --json",
        &[],
        0,
    );
    // The same agent catching up on every board's journal with a project's cursor.
    s.run(
        &proj,
        "pair poll boards/ --agent alice --after 0 --json",
        &[],
        0,
    );
    let missing: Vec<&String> = s
        .lines
        .iter()
        .filter(|l| !s.ran.borrow().contains(*l))
        .collect();
    let wrong = s.wrong.borrow();
    assert!(
        missing.is_empty() && wrong.is_empty(),
        "not run: {missing:#?}\nnot as expected:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_required_reviewer_is_not_told_to_consider_required_when_registering() {
    let b = init_board(&["--reviewers", "alice"]);
    let (_, v) = poll_json(b.p(), "alice");
    let action = v["next"]["action"].as_str().unwrap();
    assert!(!action.contains("add --required"), "{action}");
    assert!(action.contains("already a required reviewer"), "{action}");
    // Anyone else still is.
    let (_, v) = poll_json(b.p(), "bob");
    let action = v["next"]["action"].as_str().unwrap();
    assert!(action.contains("add --required only if"), "{action}");
}

// ---------------------------------------------------------------------------------------------
// A whole lifecycle with objections, every step as `next` gives it

/// Where one agent runs `pair`: its directory (its clone, on a git board) and its environment.
struct Seat {
    dir: std::path::PathBuf,
    env: Vec<(String, std::ffi::OsString)>,
}

/// A lifecycle driven by `next`: every step an agent takes on its turn is its `next.command`
/// (or `next.optional.command`), run as given from its own directory with only the
/// placeholders filled in. What the scenario does of its own (raising an objection, challenging
/// one, blocking) is marked as such.
struct Walk {
    board: String,
    seats: std::collections::BTreeMap<&'static str, Seat>,
    /// A file board can be put back after a choice is tried, so every offered choice runs.
    restorable: Option<std::path::PathBuf>,
    note: std::path::PathBuf,
    trail: std::cell::RefCell<Vec<String>>,
}

impl Walk {
    fn pair(&self, who: &str, args: &[String]) -> Out {
        let seat = &self.seats[who];
        let mut c = assert_cmd::Command::new(pair_bin());
        c.args(args)
            .current_dir(&seat.dir)
            .env_remove("PAIR_AGENT")
            .env_remove("PAIR_BOARD")
            .timeout(PROCESS_TIMEOUT);
        for (k, v) in &seat.env {
            c.env(k, v);
        }
        run(&mut c, format!("(as {who}) pair {}", args.join(" ")))
    }

    fn trail(&self) -> String {
        self.trail.borrow().join("\n")
    }

    /// `who`'s poll, with every agent's `next` checked as a runnable command.
    #[track_caller]
    fn poll(&self, who: &str, code: i32) -> Value {
        let out = self.pair(
            who,
            &[
                "poll".into(),
                self.board.clone(),
                "--agent".into(),
                who.into(),
                "--json".into(),
            ],
        );
        assert_eq!(
            out.code,
            Some(code),
            "{}\n--- so far ---\n{}",
            out.report(),
            self.trail()
        );
        let v = out.json();
        check_next(&v, &self.board, &format!("{who} in {}", v["phase"]));
        v
    }

    /// Fill a command's placeholders: `fill` names each, `choice` is the value of the one
    /// `next.choices` lists. Every placeholder must be filled.
    #[track_caller]
    fn filled(&self, step: &Value, choice: Option<&str>, fill: &[(&str, &str)]) -> Vec<String> {
        let placeholders = step["placeholders"].as_object().expect("placeholders");
        step["command"]
            .as_array()
            .unwrap_or_else(|| panic!("a command: {step:#}\n{}", self.trail()))
            .iter()
            .skip(1)
            .map(|w| {
                let w = w.as_str().unwrap();
                if !placeholders.contains_key(w) {
                    return w.to_string();
                }
                match w {
                    "VERDICT" | "DECISION" | "RULING" => choice.expect("a choice").to_string(),
                    "FILE" => self.note.display().to_string(),
                    "REASON" => "As the user said.".to_string(),
                    _ => fill
                        .iter()
                        .find(|(k, _)| *k == w)
                        .unwrap_or_else(|| panic!("{w} is not filled: {step:#}"))
                        .1
                        .to_string(),
                }
            })
            .collect()
    }

    #[track_caller]
    fn run_as_given(&self, who: &str, argv: Vec<String>) {
        self.trail
            .borrow_mut()
            .push(format!("{who}: pair {}", argv.join(" ")));
        let out = self.pair(who, &argv);
        assert_eq!(
            out.code,
            Some(0),
            "ran as given: {}\n--- so far ---\n{}",
            out.report(),
            self.trail()
        );
    }

    /// `who`'s turn: its `next.command`, which runs `verb`, run as given with `choice` (one of
    /// `next.choices`); on a file board every other choice is run first and the board put back.
    #[track_caller]
    fn next(&self, who: &str, verb: &str, choice: Option<&str>, fill: &[(&str, &str)]) -> Value {
        let v = self.poll(who, 0);
        assert_eq!(v["your_turn"], true, "{v:#}");
        let next = &v["next"];
        assert_eq!(
            next["command"][1],
            verb,
            "{who}: {next:#}\n{}",
            self.trail()
        );
        let choices: Vec<String> = next["choices"]
            .as_array()
            .map(|c| c.iter().map(|c| c.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        if let Some(c) = choice {
            assert!(choices.iter().any(|x| x == c), "{c} not offered: {next:#}");
        }
        if let Some(path) = &self.restorable {
            for other in choices.iter().filter(|c| Some(c.as_str()) != choice) {
                let before = std::fs::read(path).unwrap();
                let argv = self.filled(next, Some(other), fill);
                self.run_as_given(who, argv);
                std::fs::write(path, &before).unwrap();
                self.trail.borrow_mut().push("(put back)".to_string());
            }
        }
        let argv = self.filled(next, choice, fill);
        self.run_as_given(who, argv);
        v
    }

    /// `who`'s optional step, which runs `verb`, run as given (polled with exit `code`).
    #[track_caller]
    fn optional(&self, who: &str, code: i32, verb: &str, fill: &[(&str, &str)]) {
        let v = self.poll(who, code);
        let optional = &v["next"]["optional"];
        assert_eq!(optional["command"][1], verb, "{who}: {:#}", v["next"]);
        let argv = self.filled(optional, None, fill);
        self.run_as_given(who, argv);
    }

    /// A step of the scenario's own, not offered by `next`: `pair WORD BOARD --agent WHO REST`.
    #[track_caller]
    fn own(&self, who: &str, words: &[&str]) -> Out {
        let mut argv = vec![words[0].to_string(), self.board.clone()];
        argv.extend(["--agent".to_string(), who.to_string()]);
        argv.extend(words[1..].iter().map(|w| w.to_string()));
        self.trail
            .borrow_mut()
            .push(format!("{who} (own): pair {}", argv.join(" ")));
        let out = self.pair(who, &argv);
        assert_eq!(out.code, Some(0), "{}\n{}", out.report(), self.trail());
        out
    }

    fn phase(&self) -> String {
        self.poll("doer", self.poll_code("doer"))["phase"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn poll_code(&self, who: &str) -> i32 {
        self.pair(
            who,
            &[
                "poll".into(),
                self.board.clone(),
                "--agent".into(),
                who.into(),
            ],
        )
        .code
        .unwrap_or(-1)
    }

    fn frontmatter(&self) -> Value {
        let out = self.pair(
            "doer",
            &["status".into(), self.board.clone(), "--json".into()],
        );
        out.json()["frontmatter"].clone()
    }
}

/// The whole lifecycle with objections, on `w` (the doer's repository is `repo`, where the
/// worktree is made and the merge done): an advisory left open on the approved plan and settled
/// later, objections raised, resolved, challenged and ruled on, the round cap reached, the
/// decision deferred (BLOCKED) and then taken, a block and its unblock, the commit, the merge
/// and the clean-up — every step of an agent's turn its `next.command` or `next.optional`.
fn walk_with_objections(w: &Walk, repo: &std::path::Path) {
    w.own(
        "doer",
        &[
            "init",
            "--reviewers",
            "alice",
            "--max-rounds",
            "2",
            "--goal",
            "Fix the retry loop",
        ],
    );
    w.next("alice", "register", None, &[]);
    w.next("doer", "advance", None, &[]);
    std::fs::write(&w.note, "The plan.\n\n#### Step one\n\nEdit lib.txt.\n").unwrap();
    w.next("doer", "submit", None, &[]);
    std::fs::write(&w.note, "As the step says.\n").unwrap();
    // An advisory on the plan, which the plan is approved with: its gate closes with it open.
    w.own(
        "alice",
        &[
            "object",
            "--severity",
            "advisory",
            "--anchor",
            "## Goal",
            "--title",
            "Name the retry budget",
            "--evidence",
            "A bare 5",
            "--fix",
            "A named constant",
        ],
    );
    w.next("alice", "verdict", Some("APPROVED"), &[]);
    assert_eq!(w.phase(), "PLAN_APPROVED");
    w.next("doer", "worktree", None, &[]);
    let wt = std::path::PathBuf::from(
        w.frontmatter()["worktree"]
            .as_str()
            .expect("the worktree is recorded"),
    );
    std::fs::write(wt.join("lib.txt"), "one\ntwo\n").unwrap();
    git(&wt, &["add", "lib.txt"]);
    w.next("doer", "submit", None, &[]);
    // Two blocking objections on the code, then the request for changes that names them.
    for (anchor, title) in [
        ("lib.txt:2", "Two never ends"),
        ("lib.txt:1", "One is wrong"),
    ] {
        w.own(
            "alice",
            &[
                "object",
                "--severity",
                "blocking",
                "--anchor",
                anchor,
                "--title",
                title,
                "--evidence",
                "It loops.",
                "--fix",
                "Bound it.",
            ],
        );
    }
    let v = w.next("alice", "verdict", Some("CHANGES_REQUESTED"), &[]);
    assert!(
        v["next"]["command"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "BLK-1,BLK-2"),
        "{v:#}"
    );
    assert_eq!(w.phase(), "CODE_CHANGES_REQUESTED");
    w.next("doer", "resolve", None, &[]);
    // BLK-2 is disputed instead: the action names the challenge beside the resolution.
    let v = w.poll("doer", 0);
    assert_eq!(v["next"]["command"][3], "BLK-2", "{v:#}");
    assert!(
        v["next"]["action"]
            .as_str()
            .unwrap()
            .contains("pair challenge"),
        "{v:#}"
    );
    w.own(
        "doer",
        &[
            "challenge",
            "BLK-2",
            "--grounds",
            "Line one is as specified.",
        ],
    );
    // The plan's advisory: the code fixed it, which the doer records naming the round.
    w.optional("doer", 0, "resolve", &[("ROUND", "code:1")]);
    git(&wt, &["add", "-u"]);
    std::fs::write(wt.join("lib.txt"), "one\ntwo\nthree\n").unwrap();
    w.next("doer", "submit", None, &[]);
    assert_eq!(w.phase(), "FOLLOWUP_REVIEW");
    // Alice accepts both resolutions (the plan's, whose gate has closed, first), then rules on
    // the challenge as the arbiter: upheld, it stands open, and the last round asks for changes.
    w.next("alice", "accept", None, &[]);
    w.next("alice", "accept", None, &[]);
    w.next("alice", "rule", Some("uphold"), &[]);
    w.next("alice", "verdict", Some("CHANGES_REQUESTED"), &[]);
    assert_eq!(w.phase(), "AWAITING_DECISION");
    // The cap is reached: the arbiter defers the decision (optional), which blocks the work;
    // the doer resumes it when the user says so (optional too), and the arbiter decides.
    w.optional("alice", 0, "decide", &[("ESCALATION", "human")]);
    assert_eq!(w.phase(), "BLOCKED");
    let v = w.poll("doer", 12);
    assert_eq!(v["your_turn"], false, "{v:#}");
    assert_eq!(v["next"]["command"], Value::Null, "{v:#}");
    let v = w.poll("alice", 12);
    assert_eq!(v["next"]["command"][1], "poll", "{v:#}");
    w.optional("doer", 12, "unblock", &[]);
    assert_eq!(w.phase(), "AWAITING_DECISION");
    w.next("alice", "decide", Some("accept"), &[]);
    assert_eq!(w.phase(), "READY_TO_COMMIT");
    // A block, and its way out.
    w.own(
        "alice",
        &["block", "--reason", "The staging database is down"],
    );
    w.poll("alice", 12);
    w.optional("doer", 12, "unblock", &[]);
    let s = w.pair("doer", &["status".into(), w.board.clone(), "--json".into()]);
    assert_eq!(
        s.json()["agents"]["alice"]["status"],
        "IDLE",
        "{}",
        s.report()
    );
    // Commit exactly what was reviewed, as the action says (with a message: no editor opens in
    // an agent's shell), then record it.
    let v = w.poll("doer", 0);
    let action = v["next"]["action"].as_str().unwrap();
    assert!(action.contains("commit -m 'MESSAGE'"), "{action}");
    git(&wt, &["add", "-u"]);
    git(&wt, &["commit", "-q", "-m", "the fix"]);
    w.next("doer", "advance", None, &[]);
    assert_eq!(w.phase(), "COMMITTED");
    // Terminal: what is left is optional.
    let branch = w.frontmatter()["topic_branch"]
        .as_str()
        .expect("the topic branch")
        .to_string();
    git(repo, &["merge", "-q", "--no-edit", &branch]);
    w.optional("doer", 11, "advance", &[("BRANCH", "main")]);
    // MERGED: the clean-up needs both the worktree and the branch gone, as the step says.
    let v = w.poll("doer", 11);
    let optional = v["next"]["optional"]["action"].as_str().unwrap();
    assert!(
        optional.contains("git worktree remove") && optional.contains("git branch -d"),
        "{optional}"
    );
    git(repo, &["worktree", "remove", wt.to_str().unwrap()]);
    git(repo, &["branch", "-d", &branch]);
    w.optional("doer", 11, "advance", &[]);
    assert_eq!(w.phase(), "CLEANED_UP");
    // After the clean-up: no `pair diff` (refused now), the worktree named as removed, and
    // every record of the log with its milliseconds, in aligned columns.
    let show = w.pair("doer", &["show".into(), w.board.clone()]);
    assert_eq!(show.code, Some(0), "{}", show.report());
    assert!(!show.stdout.contains("pair diff"), "{}", show.report());
    let status = w.pair("doer", &["status".into(), w.board.clone()]);
    assert!(
        status.stdout.contains("(removed at the clean-up)"),
        "{}",
        status.report()
    );
    let log = w.pair("doer", &["log".into(), w.board.clone()]);
    assert_eq!(log.code, Some(0), "{}", log.report());
    for line in log.stdout.lines().filter(|l| l.starts_with("20")) {
        let time = line.split_whitespace().next().unwrap();
        assert_eq!(time.len(), "2026-01-01T00:00:00.000Z".len(), "{line}");
        assert_eq!(&line[24..26], "  ", "{line}");
    }
    // Nothing was left unsettled, and the board is valid.
    let open = w.pair(
        "doer",
        &[
            "objections".into(),
            w.board.clone(),
            "--open".into(),
            "--json".into(),
        ],
    );
    assert_eq!(
        open.json()["objections"],
        serde_json::json!([]),
        "{}",
        w.trail()
    );
    let states: Vec<(String, String)> = w
        .pair(
            "doer",
            &["objections".into(), w.board.clone(), "--json".into()],
        )
        .json()["objections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["id"].as_str().unwrap().to_string(),
                o["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("ADV-1".to_string(), "accepted".to_string()),
            ("BLK-1".to_string(), "accepted".to_string()),
            ("BLK-2".to_string(), "risk_accepted".to_string()),
        ],
        "{}",
        w.trail()
    );
    assert_eq!(
        w.pair("doer", &["validate".into(), w.board.clone()]).code,
        Some(0)
    );
}

/// A repository with `lib.txt` on `main`, ignoring what pair keeps beside a file board.
fn seeded(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("lib.txt"), "one\n").unwrap();
    std::fs::write(
        dir.join(".gitignore"),
        "task.md\n*.lock\n*.json\n.*.pair\n.worktrees/\nnote.md\n",
    )
    .unwrap();
    git(dir, &["add", "lib.txt", ".gitignore"]);
    git(dir, &["commit", "-q", "-m", "base"]);
}

/// A seeded repository in `tmp` with a file board `task.md` at its top, and a walk of it by
/// the doer and alice, both running in the repository.
fn seeded_file_walk(tmp: &tempfile::TempDir) -> (std::path::PathBuf, Walk) {
    let root = std::fs::canonicalize(tmp.path()).unwrap().join("repo");
    seeded(&root);
    let board = root.join("task.md");
    let seat = || Seat {
        dir: root.clone(),
        env: vec![],
    };
    let w = Walk {
        board: board.display().to_string(),
        seats: [("doer", seat()), ("alice", seat())].into_iter().collect(),
        restorable: Some(board),
        note: tmp.path().join("note.md"),
        trail: Default::default(),
    };
    (root, w)
}

#[test]
fn every_next_command_of_a_lifecycle_with_objections_runs_as_given_on_a_file_board() {
    if !require(&GIT, on_path("git")) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (root, w) = seeded_file_walk(&tmp);
    walk_with_objections(&w, &root);
}

#[test]
fn every_next_command_of_a_lifecycle_with_objections_runs_as_given_on_a_git_board() {
    if !require(&GIT, on_path("git")) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(tmp.path()).unwrap();
    // The remote, with the project on main; each agent works in its own clone, with its own
    // cache: they meet only at the remote.
    git(&top, &["init", "-q", "--bare", "remote.git"]);
    let url = format!("file://{}", top.join("remote.git").display());
    seeded(&top.join("seed"));
    git(&top.join("seed"), &["push", "-q", &url, "main"]);
    let seat = |who: &str| {
        git(&top, &["clone", "-q", &url, who]);
        Seat {
            dir: top.join(who),
            env: vec![
                (
                    "PAIR_CACHE_DIR".to_string(),
                    top.join(format!("{who}-cache")).into_os_string(),
                ),
                ("GIT_CONFIG_NOSYSTEM".to_string(), "1".into()),
            ],
        }
    };
    let w = Walk {
        board: format!("git+{url}#refs/pair/task:task.md"),
        seats: [("doer", seat("doer")), ("alice", seat("alice"))]
            .into_iter()
            .collect(),
        restorable: None,
        note: top.join("note.md"),
        trail: Default::default(),
    };
    let repo = top.join("doer");
    walk_with_objections(&w, &repo);
}

/// A debugging task with a red test, every step of an agent's turn its `next.command`: at
/// PLAN_APPROVED the step is `worktree create` (the red test is written in the worktree), and in
/// RED_TESTING the submission pins the test file, named by its path in the worktree from the
/// repository's top, where the doer runs.
#[test]
fn a_red_test_is_written_in_the_worktree_next_makes_and_pinned_with_its_files() {
    if !require(&GIT, on_path("git")) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (_, w) = seeded_file_walk(&tmp);
    w.own(
        "doer",
        &[
            "init",
            "--work-type",
            "debugging",
            "--reviewers",
            "alice",
            "--max-rounds",
            "3",
            "--require-check",
            "tests=sh test_lib.sh",
            "--goal",
            "Fix the missing line",
        ],
    );
    w.next("alice", "register", None, &[]);
    w.next("doer", "advance", None, &[]);
    std::fs::write(&w.note, "The cause.\n").unwrap();
    w.next("doer", "submit", None, &[]);
    w.next("alice", "verdict", Some("APPROVED"), &[]);
    w.next("doer", "advance", None, &[]);
    w.next("doer", "submit", None, &[]);
    w.next("alice", "verdict", Some("APPROVED"), &[]);
    assert_eq!(w.phase(), "PLAN_APPROVED");
    // The worktree is the step out of PLAN_APPROVED, a human gate.
    let v = w.next("doer", "worktree", None, &[]);
    assert_eq!(v["next"]["actor"], "user", "{v:#}");
    assert_eq!(w.phase(), "RED_TESTING");
    let wt = std::path::PathBuf::from(
        w.frontmatter()["worktree"]
            .as_str()
            .expect("the worktree is recorded"),
    );
    std::fs::write(wt.join("test_lib.sh"), "grep -q two lib.txt\n").unwrap();
    // The submission names the test file; relative, it is taken from the worktree.
    let v = w.next("doer", "submit", None, &[("TEST_FILES", "test_lib.sh")]);
    assert!(
        v["next"]["placeholders"]["TEST_FILES"]
            .as_str()
            .unwrap()
            .contains(wt.to_str().unwrap()),
        "{v:#}"
    );
    let fm = w.frontmatter();
    assert_eq!(w.phase(), "RED_TEST_SUBMITTED");
    assert!(
        fm.to_string()
            .contains(&wt.join("test_lib.sh").display().to_string()),
        "the worktree's file is pinned: {fm:#}"
    );
    w.next("alice", "verdict", Some("APPROVED"), &[]);
    w.next("doer", "advance", None, &[]);
    assert_eq!(w.phase(), "CODING");
    // The check runs in the worktree, on the test.
    let out = w.own("doer", &["check", "--name", "tests"]);
    assert!(out.stdout.contains("failed (exit 1)"), "{}", out.report());
}

/// A board moved to RED_TESTING by `advance` (no worktree): `worktree create` and `check` say
/// what to do instead of pointing at a step that is refused.
#[test]
fn without_a_worktree_in_red_testing_the_refusals_say_what_to_do() {
    if !require(&GIT, on_path("git")) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap().join("repo");
    seeded(&root);
    let b = root.join("task.md");
    let b = b.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut c = assert_cmd::Command::new(pair_bin());
        c.args(args)
            .current_dir(&root)
            .env_remove("PAIR_AGENT")
            .env_remove("PAIR_BOARD")
            .timeout(PROCESS_TIMEOUT);
        run(&mut c, format!("pair {}", args.join(" ")))
    };
    for args in [
        vec!["init", b, "--red-test", "--yolo", "--reviewers", "alice"],
        vec!["register", b, "--agent", "alice"],
        vec!["advance", b, "--agent", "doer", "PLANNING"],
        vec!["submit", b, "--agent", "doer", "plan", "--note", "p"],
        vec![
            "verdict",
            b,
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
        vec!["advance", b, "--agent", "doer", "RED_TESTING"],
    ] {
        let out = run(&args);
        assert_eq!(out.code, Some(0), "{}", out.report());
    }
    let out = run(&["worktree", "create", b, "--agent", "doer"]);
    assert_eq!(out.code, Some(6), "{}", out.report());
    assert!(
        out.stderr.contains("--files") && out.stderr.contains("RED_TEST_APPROVED"),
        "{}",
        out.report()
    );
    let out = run(&["check", b, "--agent", "doer", "--name", "t", "--", "true"]);
    assert_eq!(out.code, Some(6), "{}", out.report());
    assert!(
        out.stderr.contains("in RED_TESTING there is none to make"),
        "{}",
        out.report()
    );
    // A test file that is not there: the error says where it looked.
    let out = run(&[
        "submit", b, "--agent", "doer", "red-test", "--note", "t", "--files", "nope.sh",
    ]);
    assert_eq!(out.code, Some(4), "{}", out.report());
    assert!(
        out.stderr
            .contains(&format!("looked for {}", root.join("nope.sh").display())),
        "{}",
        out.report()
    );
}

/// A reviewer running `submit` during a review is told its role, not the phase; a verdict for a
/// revision that does not exist yet is a usage error naming the current one, an older one is
/// stale.
#[test]
fn a_role_refusal_comes_before_the_phase_and_a_future_revision_is_a_usage_error() {
    let p = Proto::init(&["--reviewers", "rev", "--rca", "--yolo"]);
    p.ok("rev", &["register"]);
    p.ok("doer", &["advance", "ANALYZING"]);
    p.ok("doer", &["submit", "analysis", "--note", "The cause."]);
    let out = p.refused("rev", &["submit", "analysis", "--note", "x"], 6);
    let message = out.stderr.clone();
    assert!(
        message.contains("only the doer") && message.contains("is a reviewer"),
        "{message}"
    );
    let out = p.refused(
        "rev",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
        4,
    );
    assert!(
        out.stderr.contains("does not exist") && out.stderr.contains("--revision 1"),
        "{}",
        out.report()
    );
    p.refused(
        "rev",
        &["verdict", "APPROVED", "--revision", "0", "--note", "ok"],
        3,
    );
}

/// In PLAN_CHANGES_REQUESTED with a blocking objection open, the step is a resolution, which
/// needs no approval: `next.actor` is the doer, as the command says.
#[test]
fn the_actor_of_a_resolution_step_is_the_doer() {
    let p = Proto::init(&["--reviewers", "alice", "--max-rounds", "3"]);
    p.ok("alice", &["register"]);
    p.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    p.ok(
        "doer",
        &["submit", "plan", "--note", "The plan.", "--user-approved"],
    );
    p.ok(
        "alice",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "## Goal",
            "--title",
            "Unbounded",
            "--evidence",
            "It loops.",
            "--fix",
            "Bound it.",
        ],
    );
    p.ok(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--objections",
            "BLK-1",
            "--note",
            "See BLK-1.",
        ],
    );
    let (_, v) = poll_json(p.p(), "doer");
    assert_eq!(v["phase"], "PLAN_CHANGES_REQUESTED", "{v:#}");
    assert_eq!(v["next"]["command"][1], "resolve", "{v:#}");
    assert_eq!(v["next"]["actor"], "doer", "{v:#}");
}

// ---------------------------------------------------------------------------------------------
// a reviewer pool

#[test]
fn every_next_command_through_a_pool_claim_runs_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let note = dir.path().join("note.md");
    std::fs::write(&note, "As the action says.\n").unwrap();
    let board = dir.path().join("board.md").display().to_string();
    pair([
        "init",
        &board,
        "--yolo",
        "--reviewer-pool",
        "alice,bob,carol",
        "--reviews",
        "2",
    ])
    .code(0);
    let mut trail = Vec::new();
    let mut claims = 0;
    for _ in 0..30 {
        if pair(["status", &board, "--json"]).json()["phase"] == "PLAN_APPROVED" {
            break;
        }
        let mut acted = false;
        for who in ["alice", "bob", "carol", "doer"] {
            let out = pair(["poll", &board, "--agent", who, "--json"]);
            if out.code != Some(0) {
                continue;
            }
            let v: Value = serde_json::from_str(&out.stdout).unwrap();
            let mut argv = check_next(&v, &board, who).expect("a command on one's turn");
            for w in argv.iter_mut() {
                if w == "/tmp/note.md" {
                    *w = note.display().to_string();
                }
            }
            claims += usize::from(argv[1] == "claim");
            trail.push(format!("[{}] {}", v["phase"], argv.join(" ")));
            let run = pair(&argv[1..]);
            assert_eq!(run.code, Some(0), "{}\n{}", run.report(), trail.join("\n"));
            acted = true;
            break;
        }
        assert!(acted, "nobody has a move\n{}", trail.join("\n"));
    }
    let status = pair(["status", &board, "--json"]).json();
    assert_eq!(status["phase"], "PLAN_APPROVED", "{}", trail.join("\n"));
    assert_eq!(
        claims,
        2,
        "two pool reviews, each claimed once\n{}",
        trail.join("\n")
    );
    // The member left out was never offered a verdict: it was told to wait.
    let v = pair(["poll", &board, "--agent", "carol", "--json"]).json();
    assert_eq!(v["your_turn"], false, "{v:#}");
}

/// A review-only debate in which each role runs, to the letter, the `next.command` (and, for the
/// enthusiast's findings and the adversary's disputes, the `next.optional`) its `poll` gives,
/// placeholders filled in: nothing is refused, and the debate stops by itself.
#[test]
fn each_debate_role_following_next_command_to_the_letter_is_never_refused() {
    let e = crate::debate::target("lib.rs", 60);
    e.ok(0, &["init", "review.md", "--review", "lib.rs"]);
    let board = e.path("review.md").display().to_string();
    let fill = |argv: &Value, v: &Value, round: u64| -> Vec<String> {
        argv.as_array()
            .unwrap()
            .iter()
            .skip(1)
            .map(|w| match w.as_str().unwrap() {
                "SEVERITY" => "blocking".to_string(),
                "ANCHOR" => format!("lib.rs:{}", round * 20),
                "TITLE" | "EVIDENCE" | "GROUNDS" | "TEXT" | "REASON" => "as read".to_string(),
                "RULING" => v["next"]["choices"][0].as_str().unwrap().to_string(),
                w => w.to_string(),
            })
            .collect()
    };
    let mut steps = 0;
    'debate: loop {
        steps += 1;
        assert!(steps < 50, "the debate never stopped");
        for agent in ["enthusiast", "adversary", "judge"] {
            let out = pair(["poll", &board, "--agent", agent, "--json"]);
            if out.code == Some(11) {
                break 'debate;
            }
            let v = out.json();
            if out.code == Some(10) {
                assert_eq!(v["next"]["command"][1], "poll", "{v:#}");
                continue;
            }
            assert_eq!(out.code, Some(0), "{}", out.report());
            let round = v["review"]["round"].as_u64().unwrap();
            let optional = &v["next"]["optional"]["command"];
            if optional.is_array() && round <= 2 {
                pair(fill(optional, &v, round)).code(0);
            }
            // The adversary's optional names the finding: poll again for the judge's view.
            let v = pair(["poll", &board, "--agent", agent, "--json"]).json();
            pair(fill(&v["next"]["command"], &v, round)).code(0);
        }
    }
    let shown = pair(["show", &board, "--json"]).json();
    assert_eq!(
        shown["review"]["stop"]["reason"], "zero-findings",
        "{shown:#}"
    );
    assert_eq!(shown["confirmed"].as_array().unwrap().len(), 2);
}

// ---------------------------------------------------------------------------------------------
// a dissent stage

/// A plan gate with a dissent stage, every agent running the `next.command` its `poll` gives,
/// placeholders filled in: when the gate waits for a fresh dissenter, a new id polls (told to
/// register), registers, and answers as told; nothing is refused and the gate is approved.
#[test]
fn every_next_command_through_a_dissent_stage_runs_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let note = dir.path().join("note.md");
    std::fs::write(&note, "As the action says.\n").unwrap();
    let board = dir.path().join("board.md").display().to_string();
    pair([
        "init",
        &board,
        "--yolo",
        "--reviewers",
        "alice",
        "--dissent",
        "plan",
    ])
    .code(0);
    pair(["register", &board, "--agent", "alice"]).code(0);
    let mut trail = Vec::new();
    let mut dissents = 0;
    for _ in 0..30 {
        if pair(["status", &board, "--json"]).json()["phase"] == "PLAN_APPROVED" {
            break;
        }
        let mut acted = false;
        for who in ["doer", "alice", "dissenter-1"] {
            let out = pair(["poll", &board, "--agent", who, "--json"]);
            let v: Value = serde_json::from_str(&out.stdout).unwrap();
            if v["your_turn"] != true {
                continue;
            }
            let Some(mut argv) = check_next(&v, &board, who) else {
                // The reviewers are told the gate waits for a fresh dissenter: not theirs.
                assert!(
                    v["next"]["action"]
                        .as_str()
                        .unwrap()
                        .contains("fresh dissenter"),
                    "{v:#}"
                );
                continue;
            };
            for w in argv.iter_mut() {
                if w == "/tmp/note.md" {
                    *w = note.display().to_string();
                }
            }
            dissents += usize::from(argv[1] == "dissent");
            trail.push(format!("[{}] {}", v["phase"], argv.join(" ")));
            let run = pair(&argv[1..]);
            assert_eq!(run.code, Some(0), "{}\n{}", run.report(), trail.join("\n"));
            acted = true;
            break;
        }
        assert!(acted, "nobody has a move\n{}", trail.join("\n"));
    }
    let status = pair(["status", &board, "--json"]).json();
    assert_eq!(status["phase"], "PLAN_APPROVED", "{}", trail.join("\n"));
    assert_eq!(dissents, 1, "{}", trail.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// rotation with a handoff

/// A lifecycle in which a reviewer's place and the doer's role change hands mid-stream: the
/// outgoing agents run the skill's handoff line, and every agent, outgoing and incoming, runs
/// only the `next.command` its `poll` (or a project's `next`) gives, placeholders filled in.
/// Nothing is refused; the incoming agents acknowledge before they act; the outgoing ones are
/// told nothing is theirs any more; the work reaches PLAN_APPROVED and then CODING's step.
#[test]
fn every_next_command_through_a_doer_and_a_reviewer_handoff_runs_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let note = dir.path().join("note.md");
    std::fs::write(&note, "As the action says.\n").unwrap();
    let board = project.join("board.md").display().to_string();
    pair(["init", &board, "--yolo", "--reviewers", "alice,bob"]).code(0);
    let mut trail = Vec::new();
    // Only agents on the board poll before a handoff names a newcomer (an unknown id is told
    // to register); a newcomer is asked before the agent it replaces, which could otherwise go
    // on working until the acknowledgement.
    let before = ["alice", "bob", "doer"];
    let after_bob = ["doer", "alice", "dave", "bob"];
    // One move of the first agent in `order` whose turn it is, as its poll gives it; the agent
    // that moved.
    let step = |trail: &mut Vec<String>, order: &[&str]| -> Option<String> {
        for &who in order {
            let out = pair(["poll", &board, "--agent", who, "--json"]);
            if out.code != Some(0) {
                continue;
            }
            let v: Value = serde_json::from_str(&out.stdout).unwrap();
            let mut argv = check_next(&v, &board, who).expect("a command on one's turn");
            for w in argv.iter_mut() {
                if w == "/tmp/note.md" {
                    *w = note.display().to_string();
                }
            }
            trail.push(format!("[{}] {who}: {}", v["phase"], argv.join(" ")));
            let run = pair(&argv[1..]);
            assert_eq!(run.code, Some(0), "{}\n{}", run.report(), trail.join("\n"));
            return Some(who.to_string());
        }
        None
    };
    let phase = || pair(["status", &board, "--json"]).json()["phase"].clone();
    // Up to the open plan round.
    while phase() != "PLANNING_SUBMITTED" {
        assert!(
            step(&mut trail, &before).is_some(),
            "stuck\n{}",
            trail.join("\n")
        );
        assert!(trail.len() < 20, "{}", trail.join("\n"));
    }
    // bob hands his place over mid-round, as the skill says (the user agreed).
    pair([
        "handoff",
        &board,
        "--agent",
        "bob",
        "--to",
        "dave",
        "--summary",
        "Plan 1 waits for my verdict; check step 2.",
        "--user-approved",
    ])
    .code(0);
    // dave, new to the board, learns of it from a project's `next` as well as from `poll`.
    let v = pair([
        "next",
        project.to_str().unwrap(),
        "--agent",
        "dave",
        "--json",
    ])
    .json();
    assert_eq!(v["next"]["command"][1], "acknowledge", "{v:#}");
    // The round goes on: dave acknowledges and votes, bob is told nothing is his.
    let mut movers = Vec::new();
    while phase() != "PLAN_APPROVED" {
        movers.push(step(&mut trail, &after_bob).expect("somebody moves"));
        assert!(trail.len() < 30, "{}", trail.join("\n"));
    }
    assert!(movers.contains(&"dave".to_string()), "{}", trail.join("\n"));
    assert!(!movers.contains(&"bob".to_string()), "{}", trail.join("\n"));
    let v = pair(["poll", &board, "--agent", "bob", "--json"]).json();
    assert_eq!(v["next"]["command"], Value::Null, "{v:#}");
    assert!(
        v["next"]["action"].as_str().unwrap().contains("handed"),
        "{v:#}"
    );
    // The doer hands its role over between gates (not mid-cycle: no approval needed).
    pair([
        "handoff",
        &board,
        "--agent",
        "doer",
        "--to",
        "carol",
        "--summary",
        "The plan is approved; code it.",
    ])
    .code(0);
    // The incoming doer's first move is its acknowledgement; then the doer's step is its.
    // (The outgoing doer could go on working until then; the newcomer is asked first here.)
    let newcomer_first = ["carol", "doer", "alice", "dave", "bob"];
    assert_eq!(
        step(&mut trail, &newcomer_first).as_deref(),
        Some("carol"),
        "{}",
        trail.join("\n")
    );
    assert!(
        trail.last().unwrap().contains("pair acknowledge"),
        "{}",
        trail.join("\n")
    );
    let v = pair(["poll", &board, "--agent", "carol", "--json"]).json();
    assert_eq!(v["your_turn"], true, "{v:#}");
    assert_eq!(v["agent"]["role"], "doer", "{v:#}");
    check_next(&v, &board, "carol").expect("the doer's step");
    let v = pair(["poll", &board, "--agent", "doer", "--json"]).json();
    assert_eq!(v["next"]["command"], Value::Null, "{v:#}");
    pair(["validate", &board]).code(0);
}
