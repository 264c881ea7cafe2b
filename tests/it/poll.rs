//! `pair poll`: whose turn it is and its exit codes, the action it names, its JSON, the agent from
//! `--agent` or `PAIR_AGENT`, `--wait` and its interval.

use crate::common::handmade::{board_in, poll_json};
use crate::common::reads::names;
use crate::common::*;
use crate::proto::*;
use serde_json::Value;

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
        // The command that gives the pinned bytes: the pinned settings, then the function names
        // dropped from hunk headers, as the pin does (run for real in `pins::`).
        let cmd: Vec<&str> = v["review"]["diff_command"]
            .as_array()
            .unwrap_or_else(|| panic!("{v:#}"))
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(&cmd[..2], ["sh", "-c"], "{v:#}");
        assert_eq!(cmd.last(), Some(&"/srv/repo/.worktrees/board"), "{v:#}");
        assert!(cmd[2].starts_with("git -C \"$1\" --no-pager -c "), "{v:#}");
        assert_eq!(
            cmd[2].contains(" --cached "),
            diff.contains(&"--cached"),
            "{v:#}"
        );
        assert!(cmd[2].contains("| sed -E "), "{v:#}");
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
fn poll_wait_for_a_missing_board_names_its_absolute_path_once_and_advises_init_only_generically() {
    let dir = tempfile::tempdir().unwrap();
    // Each ends within its --timeout and 2 s.
    let in_dir = |args: &[&str], limit_ms: u64| {
        let mut c = crate::common::bounded::pair_command(args);
        c.current_dir(dir.path()).env_remove("NO_COLOR");
        crate::common::bounded::within(c, std::time::Duration::from_millis(limit_ms))
    };
    let out = in_dir(
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
        300,
    );
    assert_eq!(out.code, Some(7));
    let stderr = &out.stderr;
    let absolute = dir.path().join("later.md").display().to_string();
    assert_eq!(
        stderr.matches(&format!("waiting for {absolute}")).count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("the doer creates it"), "{stderr}");
    assert!(!stderr.contains("create it with"), "{stderr}");
    // With --json, stderr holds only the error envelope.
    let out = in_dir(
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
        100,
    );
    let v: Value = serde_json::from_str(&out.stderr).expect("one JSON object");
    assert_eq!(v["error"]["kind"], "missing");
}

#[test]
fn poll_in_draft_exits_0_for_the_doer_and_10_for_a_registered_reviewer() {
    let b = Board::new(minimal_with_reviewer("alice"));
    let d = pair(["poll", b.p(), "--agent", "doer", "--json"]);
    d.code(0);
    let dj = d.json();
    assert_eq!(dj["your_turn"], true, "{}", d.report());
    assert_eq!(
        dj["next"]["actor"],
        "user",
        "DRAFT's next step is a human gate\n{}",
        d.report()
    );
    assert_eq!(
        names(&dj["next"]["handoff_to"]),
        vec!["doer"],
        "{}",
        d.report()
    );

    let r = pair(["poll", b.p(), "--agent", "alice", "--json"]);
    r.code(10);
    let rj = r.json();
    assert_eq!(rj["your_turn"], false, "{}", r.report());
    assert_eq!(rj["agent"]["role"], "reviewer", "{}", r.report());
    assert_eq!(rj["agent"]["registered"], true, "{}", r.report());
    assert!(
        names(&rj["registered_reviewers"]).contains(&"alice".to_string()),
        "{}",
        r.report()
    );

    // human mode gives the same exit codes
    pair(["poll", b.p(), "--agent", "doer"]).code(0);
    pair(["poll", b.p(), "--agent", "alice"]).code(10);
}

#[test]
fn poll_json_has_every_key_of_spec_section_8() {
    let b = Board::minimal();
    let out = pair(["poll", b.p(), "--agent", "doer", "--json"]);
    out.code(0);
    let j = out.json();
    for key in [
        "phase",
        "terminal",
        "counters",
        "required_reviewers",
        "registered_reviewers",
        "agent",
        "next",
        "your_turn",
    ] {
        assert!(
            j.get(key).is_some(),
            "poll JSON lacks `{key}`\n{}",
            out.report()
        );
    }
    assert!(j["counters"].is_object(), "{}", out.report());
    assert!(j["required_reviewers"].is_array(), "{}", out.report());
    assert!(j["registered_reviewers"].is_array(), "{}", out.report());
    assert_eq!(j["agent"]["id"], "doer", "{}", out.report());
    assert_eq!(j["agent"]["role"], "doer", "{}", out.report());
    assert_eq!(j["agent"]["status"], "DRAFT", "{}", out.report());
    assert_eq!(j["agent"]["registered"], true, "{}", out.report());
    assert!(j["agent"].get("required").is_some(), "{}", out.report());
    assert!(j["next"]["actor"].is_string(), "{}", out.report());
    assert!(j["next"]["handoff_to"].is_array(), "{}", out.report());
    let action = j["next"]["action"].as_str().unwrap_or_default();
    assert!(
        !action.is_empty(),
        "next.action must be a sentence\n{}",
        out.report()
    );
    assert_eq!(j["terminal"], false, "{}", out.report());
}

#[test]
fn poll_tells_an_unknown_agent_to_register() {
    // SPEC §8: an agent id not on the blackboard is an unregistered reviewer, whose next step
    // is to register.
    let b = Board::minimal();
    let out = pair(["poll", b.p(), "--agent", "zed", "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["agent"]["registered"], false, "{}", out.report());
    assert_eq!(j["your_turn"], true, "{}", out.report());
    assert!(
        names(&j["next"]["handoff_to"]).contains(&"zed".to_string()),
        "{}",
        out.report()
    );
    assert!(
        j["next"]["action"]
            .as_str()
            .unwrap_or_default()
            .contains("register"),
        "{}",
        out.report()
    );
}

#[test]
fn poll_takes_the_agent_from_pair_agent_env_var() {
    let b = Board::new(minimal_with_reviewer("alice"));
    pair_env(["poll", b.p()], &[("PAIR_AGENT", "doer")]).code(0);
    pair_env(["poll", b.p()], &[("PAIR_AGENT", "alice")]).code(10);
    // an explicit --agent wins over the env var
    pair_env(
        ["poll", b.p(), "--agent", "doer"],
        &[("PAIR_AGENT", "alice")],
    )
    .code(0);
}

#[test]
fn poll_without_an_agent_is_a_usage_error_exit_4() {
    let b = Board::minimal();
    pair(["poll", b.p()]).code(4);
}

/// BLOCKED is terminal too, but has its own exit code, 12, so that an agent can tell "wait for
/// the doer to unblock" from "the work is over".
#[test]
fn poll_on_a_terminal_phase_exits_11_for_everyone_and_12_when_blocked() {
    let stopped = set_top(&minimal_with_reviewer("alice"), "phase", "STOPPED");
    let blocked = set_top(
        &set_top(&minimal_with_reviewer("alice"), "phase", "BLOCKED"),
        "blocked_from",
        "DRAFT",
    );
    for (content, code) in [(stopped, 11), (blocked, 12)] {
        let b = Board::new(&content);
        pair(["validate", b.p()]).code(0);
        for agent in ["doer", "alice", "stranger"] {
            let out = pair(["poll", b.p(), "--agent", agent, "--json"]);
            out.code(code);
            let j = out.json();
            assert_eq!(j["terminal"], true, "{}", out.report());
            assert_eq!(j["your_turn"], false, "{}", out.report());
            assert_eq!(j["next"]["actor"], "none", "{}", out.report());
            pair(["poll", b.p(), "--agent", agent]).code(code);
        }
    }
}

#[test]
fn raw_write_to_stopped_makes_poll_exit_11() {
    let b = init_board(&[]);
    let old = b.read_string();
    let new = old.replacen("\nphase: DRAFT\n", "\nphase: STOPPED\n", 1);
    assert_ne!(
        old, new,
        "test bug: init output must contain `phase: DRAFT`"
    );
    // Naming nobody, a phase change is not attributable and is refused.
    b.write_expect(&new, &sha256_hex(&old), &["--operation", "stop"])
        .code(6);
    assert_bytes_eq(&b.read(), old.as_bytes(), "a refused write leaves the file");
    b.write_expect(
        &new,
        &sha256_hex(&old),
        &["--operation", "stop", "--as", "doer"],
    )
    .code(0);
    // The content as given, with the journal's seal of the write.
    let sealed = |bytes: &[u8]| remove_top(std::str::from_utf8(bytes).unwrap(), "journal");
    assert_bytes_eq(
        sealed(&b.content()).as_bytes(),
        sealed(&unjournaled(new.as_bytes())).as_bytes(),
        "write must store the content",
    );
    pair(["poll", b.p(), "--agent", "doer"]).code(11);
}

#[test]
fn poll_on_a_missing_board_exits_7() {
    let b = Board::absent();
    pair(["poll", b.p(), "--agent", "doer"]).code(7);
    pair(["poll", b.p(), "--agent", "doer", "--json"]).json_error(7);
    assert!(!b.path.exists(), "poll must not create the board");
}

#[test]
fn poll_with_an_invalid_agent_id_is_a_usage_error_exit_4() {
    // Agent ids match [A-Za-z0-9][A-Za-z0-9._-]{0,63} (SPEC §2.1); an id that can never
    // register must not be told "your turn: register".
    let b = Board::minimal();
    for bad in ["bad id!", "-leading-dash", "", &"a".repeat(65)] {
        let out = pair(["poll", b.p(), "--agent", bad]);
        out.code(4);
    }
    pair(["poll", b.p(), "--agent", "bad id!", "--json"]).json_error(4);
    b.assert_untouched(MINIMAL.as_bytes());
}

#[test]
fn a_bad_poll_interval_is_named_as_the_interval() {
    let b = Board::minimal();
    for value in ["1e300", "-1", "nan"] {
        let flag = format!("--interval={value}");
        let out = pair(["poll", b.p(), "--agent", "doer", "--wait", &flag]);
        out.code(4)
            .mentions(&["--interval must be a number of seconds"]);
        assert!(!out.stderr.contains("--timeout"), "{}", out.report());
    }
}

#[test]
fn poll_action_for_a_pending_reviewer_names_its_own_agent_id() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let v = p.poll_expect("alice", 0);
    let action = v["next"]["action"].as_str().unwrap_or_default();
    assert!(
        action.contains("pair verdict") && action.contains("--agent alice"),
        "SPEC §8: the action names the exact command for the polling agent (alice): {action:?}"
    );
}

#[test]
fn poll_reports_required_reviewers_without_an_entry_as_missing() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let v = p.poll_expect("alice", 0);
    assert_eq!(strs(&v["review"]["missing"]), sv(&["bob"]), "{v:#}");
    assert_eq!(strs(&v["registered_reviewers"]), sv(&["alice"]), "{v:#}");
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    // bob has not voted: the round stays open
    p.assert_phase("PLANNING_SUBMITTED");
    let v = p.poll_expect("bob", 0);
    assert!(
        v["next"]["action"]
            .as_str()
            .unwrap_or_default()
            .contains("pair register"),
        "{v:#}"
    );
    p.ok("bob", &["register"]);
    let v = p.poll_expect("bob", 0);
    assert_eq!(strs(&v["review"]["pending"]), sv(&["bob"]), "{v:#}");
    assert_eq!(strs(&v["review"]["missing"]), Vec::<String>::new(), "{v:#}");
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn poll_in_a_reviewable_phase_with_no_required_reviewers_hands_to_the_doer() {
    let p = Proto::init(&[]);
    let text = set_top(
        &set_top(&p.text(), "phase", "PLANNING_SUBMITTED"),
        "plan_revision",
        "1",
    );
    let text = agreeing(&set_top(&text, "no_review", "true"));
    let h = p.b.sha();
    p.b.write_expect(&text, &h, &["--repair", "--reason", "setup"])
        .code(0);
    p.assert_phase("PLANNING_SUBMITTED");
    let v = p.poll_expect("doer", 0);
    assert_eq!(v["next"]["actor"], "doer", "{v:#}");
    assert_eq!(strs(&v["next"]["handoff_to"]), sv(&["doer"]), "{v:#}");
}

/// The text a person reads names no JSON key: a step it points to is the one shown beside it
/// (COMMITTED's, in `advance::`).
#[test]
fn poll_text_names_no_json_key_on_a_blocked_board() {
    let blocked = set_top(
        &set_top(&minimal_with_reviewer("alice"), "phase", "BLOCKED"),
        "blocked_from",
        "DRAFT",
    );
    let b = Board::new(&blocked);
    let out = pair(["poll", b.p(), "--agent", "doer"]);
    out.code(12);
    assert!(
        out.stdout.contains("optional    "),
        "the optional step is shown: {}",
        out.report()
    );
    assert!(!out.stdout.contains("next."), "{}", out.report());
    let j = pair(["poll", b.p(), "--agent", "doer", "--json"]).json();
    assert!(
        j["next"]["action"]
            .as_str()
            .unwrap_or_default()
            .contains("the optional step"),
        "{j:#}"
    );
}

/// SPEC §3 stops every poll at COMMITTED; `--until` lets a reviewer wait on for the end of the
/// lifecycle, which only the doer records. A wait until CLEANED_UP goes on through MERGED and
/// ends at CLEANED_UP (exit 11, `until.reached`); a board short of it at the timeout is exit 10,
/// whose `next.command` is the same wait again; a phase that is no end of the lifecycle is a
/// usage error.
#[test]
fn a_reviewer_waits_past_committed_until_the_board_is_cleaned_up() {
    let p = crate::common::phases::board_in("COMMITTED", &["--reviewers", "alice,bob"]);
    let b = p.p().to_string();
    // Without --until, COMMITTED ends every poll; the reviewer is shown the wait as optional.
    let out = pair(["poll", &b, "--agent", "alice", "--json"]);
    out.code(11);
    let v = out.json();
    let optional = v["next"]["optional"]["command"].clone();
    let words: Vec<&str> = optional
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        words.get(1..),
        Some(
            &[
                "poll",
                b.as_str(),
                "--agent",
                "alice",
                "--wait",
                "--timeout",
                "600",
                "--until",
                "CLEANED_UP",
                "--json"
            ][..]
        ),
        "{v:#}"
    );
    assert!(v.get("until").is_none(), "{v:#}");
    // Asked at once: short of it, exit 10, and the step is the wait again.
    let out = pair([
        "poll",
        &b,
        "--agent",
        "alice",
        "--until",
        "CLEANED_UP",
        "--json",
    ]);
    out.code(10);
    let v = out.json();
    assert_eq!(
        v["until"],
        serde_json::json!({"phase": "CLEANED_UP", "reached": false})
    );
    assert_eq!(v["terminal"], true, "{v:#}");
    assert_eq!(v["next"]["command"], optional, "{v:#}");
    // A wait that times out on a board still short of it: exit 10, within its limit.
    let started = std::time::Instant::now();
    let out = pair([
        "poll",
        &b,
        "--agent",
        "bob",
        "--wait",
        "--timeout",
        "1",
        "--until",
        "MERGED",
    ]);
    out.code(10);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains("Keep waiting for MERGED"),
        "{}",
        out.report()
    );
    // A phase that is no end of the lifecycle, or a project or a review-only board: usage.
    for phase in ["COMMITTED", "PLANNING"] {
        let out = pair(["poll", &b, "--agent", "alice", "--until", phase]);
        out.code(4);
        assert!(
            out.stderr.contains("MERGED or CLEANED_UP"),
            "{}",
            out.report()
        );
    }
    pair(["poll", &b, "--agent", "alice", "--until", "planned"]).code(4);
    // The wait goes on through MERGED and ends at CLEANED_UP.
    let mut waiter = std::process::Command::new(pair_bin())
        .args([
            "poll",
            &b,
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "60",
            "--until",
            "CLEANED_UP",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    p.ok(
        &p.doer,
        &[
            "advance",
            "MERGED",
            "--merged-into",
            "main",
            "--user-approved",
        ],
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        waiter.try_wait().unwrap().is_none(),
        "the wait ended at MERGED, short of CLEANED_UP"
    );
    p.ok(&p.doer, &["advance", "CLEANED_UP"]);
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(11), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["phase"], "CLEANED_UP", "{v:#}");
    assert_eq!(
        v["until"],
        serde_json::json!({"phase": "CLEANED_UP", "reached": true})
    );
    // Past it, an --until MERGED is reached too.
    let out = pair(["poll", &b, "--agent", "bob", "--until", "MERGED", "--json"]);
    out.code(11);
    assert_eq!(out.json()["until"]["reached"], true);
}
