//! End-to-end foundation flow: init, validate, status, poll; CRLF/BOM; usage errors; the JSON
//! error envelope.

use crate::common::*;
use serde_json::Value;
use std::fs;

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("expected strings in {v}"))
                .to_string()
        })
        .collect()
}

fn section_names(status: &Value) -> Vec<String> {
    status["sections"]
        .as_array()
        .unwrap_or_else(|| panic!("status JSON must have a `sections` array: {status}"))
        .iter()
        .map(|s| {
            s["name"]
                .as_str()
                .unwrap_or_else(|| panic!("each section needs a string `name`: {status}"))
                .to_string()
        })
        .collect()
}

// ------------------------------------------------------------------------------------------
// init

#[test]
fn init_then_validate_status_and_poll_work_end_to_end() {
    let b = Board::absent();
    let init = pair(["init", b.p(), "--goal", "Ship the blackboard CLI", "--json"]);
    init.code(0);
    let iv = init.json();
    let bytes = b.read();

    let v = pair(["validate", b.p(), "--json"]);
    v.code(0);
    let vj = v.json();
    assert_eq!(vj["schema"], 1, "{}", v.report());
    assert_eq!(vj["valid"], true, "{}", v.report());
    assert_eq!(vj["files"][0]["valid"], true, "{}", v.report());

    let s = pair(["status", b.p(), "--json"]);
    s.code(0);
    let sj = s.json();
    assert_eq!(sj["schema"], 1, "{}", s.report());
    assert_eq!(sj["phase"], "DRAFT", "{}", s.report());
    assert_eq!(sj["sha256"], sha256_hex(&bytes), "{}", s.report());
    assert_eq!(
        sj["sha256"], iv["sha256"],
        "status and init must agree on the hash"
    );
    assert!(
        section_names(&sj).contains(&"Goal".to_string()),
        "{}",
        s.report()
    );

    let p = pair(["poll", b.p(), "--agent", "doer", "--json"]);
    p.code(0);
    let pj = p.json();
    assert_eq!(pj["phase"], "DRAFT", "{}", p.report());
    assert_eq!(pj["your_turn"], true, "{}", p.report());
    assert_eq!(pj["terminal"], false, "{}", p.report());

    // none of the reads changed the file
    b.assert_untouched(&bytes);
}

#[test]
fn init_refuses_to_overwrite_an_existing_file_exit_7_and_leaves_it_untouched() {
    let b = Board::new("precious, not a blackboard\n");
    let before = b.read();
    pair(["init", b.p()]).code(7);
    b.assert_untouched(&before);
    pair(["init", b.p(), "--goal", "x", "--json"]).json_error(7);
    b.assert_untouched(&before);

    // also when the existing file is itself a valid blackboard
    let b2 = Board::minimal();
    pair(["init", b2.p(), "--yolo"]).code(7);
    b2.assert_untouched(MINIMAL.as_bytes());
    b2.assert_clean_dir(&[]);
}

#[test]
fn init_with_goal_puts_the_goal_text_in_the_goal_section() {
    let b = init_board(&["--goal", "Make the frobnicator 3x faster"]);
    let text = b.read_string();
    let goal = section_text(&text, "Goal").expect("init must write a `## Goal` section");
    assert!(
        goal.contains("Make the frobnicator 3x faster"),
        "goal text must be in the Goal section:\n{text}"
    );
}

#[test]
fn init_with_goal_file_puts_the_file_text_in_the_goal_section() {
    let b = Board::absent();
    let g = b.aux_file(
        "goal.txt",
        "Fix the flaky login test.\nIt fails one run in ten.\n",
    );
    pair(["init", b.p(), "--goal-file", g.to_str().unwrap()]).code(0);
    pair(["validate", b.p()]).code(0);
    let text = b.read_string();
    let goal = section_text(&text, "Goal").expect("init must write a `## Goal` section");
    assert!(goal.contains("Fix the flaky login test."), "{text}");
    assert!(goal.contains("It fails one run in ten."), "{text}");
}

#[test]
fn init_json_reports_schema_path_sha256_of_the_new_file_and_phase_draft() {
    let b = Board::absent();
    let out = pair(["init", b.p(), "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["schema"], 1, "{}", out.report());
    assert_eq!(j["phase"], "DRAFT", "{}", out.report());
    let path = j["path"]
        .as_str()
        .unwrap_or_else(|| panic!("`path` string\n{}", out.report()));
    assert!(path.ends_with("board.md"), "{}", out.report());
    let sha = j["sha256"]
        .as_str()
        .unwrap_or_else(|| panic!("`sha256` string\n{}", out.report()));
    assert!(is_lower_hex_sha256(sha), "{}", out.report());
    assert_eq!(
        sha,
        sha256_hex(b.read()),
        "init's sha256 must be the hash of the whole new file"
    );
}

#[test]
fn init_defaults_to_doer_id_doer_in_phase_draft_with_gates_off() {
    let b = init_board(&[]);
    let text = b.read_string();
    assert!(text.starts_with("---"), "{text}");
    assert!(text.contains("\nphase: DRAFT"), "{text}");
    assert!(text.contains("\nrca_required: false"), "{text}");
    assert!(text.contains("\nred_test_required: false"), "{text}");
    assert!(text.contains("\nyolo: false"), "{text}");
    let p = pair(["poll", b.p(), "--agent", "doer", "--json"]);
    p.code(0);
    let j = p.json();
    assert_eq!(j["agent"]["role"], "doer", "{}", p.report());
}

#[test]
fn init_work_type_debugging_turns_on_rca_and_red_test_gates() {
    let b = init_board(&["--work-type", "debugging"]);
    let text = b.read_string();
    assert!(text.contains("\nwork_type: debugging"), "{text}");
    assert!(text.contains("\nrca_required: true"), "{text}");
    assert!(text.contains("\nred_test_required: true"), "{text}");
}

#[test]
fn init_rca_and_red_test_flags_turn_on_their_gates_only() {
    let b = init_board(&["--rca"]);
    let text = b.read_string();
    assert!(text.contains("\nrca_required: true"), "{text}");
    assert!(text.contains("\nred_test_required: false"), "{text}");

    let b = init_board(&["--red-test"]);
    let text = b.read_string();
    assert!(text.contains("\nrca_required: false"), "{text}");
    assert!(text.contains("\nred_test_required: true"), "{text}");
}

#[test]
fn init_with_doer_id_makes_that_agent_the_doer() {
    let b = init_board(&["--doer", "alice"]);
    let p = pair(["poll", b.p(), "--agent", "alice", "--json"]);
    p.code(0);
    let j = p.json();
    assert_eq!(j["agent"]["role"], "doer", "{}", p.report());
    assert_eq!(j["your_turn"], true, "{}", p.report());
    assert!(
        names(&j["next"]["handoff_to"]).contains(&"alice".to_string()),
        "{}",
        p.report()
    );
}

#[test]
fn init_with_reviewers_makes_them_required_reviewers() {
    let b = init_board(&["--reviewers", "bob,carol"]);
    let p = pair(["poll", b.p(), "--agent", "doer", "--json"]);
    p.code(0);
    let mut req = names(&p.json()["required_reviewers"]);
    req.sort();
    assert_eq!(req, vec!["bob", "carol"], "{}", p.report());
}

#[test]
fn init_with_yolo_hands_draft_straight_to_the_doer_not_the_user() {
    let b = init_board(&["--yolo"]);
    assert!(b.read_string().contains("\nyolo: true"));
    let p = pair(["poll", b.p(), "--agent", "doer", "--json"]);
    p.code(0);
    let j = p.json();
    assert_eq!(j["next"]["actor"], "doer", "{}", p.report());
    assert_eq!(j["your_turn"], true, "{}", p.report());
}

#[test]
fn init_rejects_invalid_doer_id_with_nonzero_exit_and_creates_nothing() {
    let b = Board::absent();
    let out = pair(["init", b.p(), "--doer", "not a valid id!"]);
    out.failed_without_hanging();
    assert!(
        !b.path.exists(),
        "no blackboard may be created with an invalid doer id"
    );
}

// ------------------------------------------------------------------------------------------
// status

#[test]
fn status_sha256_is_the_lowercase_hex_sha256_of_the_exact_file_bytes() {
    for content in [
        MINIMAL.to_string(),
        to_crlf(MINIMAL),
        format!("{MINIMAL}\nTrailing text\n"),
    ] {
        let b = Board::new(&content);
        let out = pair(["status", b.p(), "--json"]);
        out.code(0);
        let sha = out.json()["sha256"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(is_lower_hex_sha256(&sha), "{}", out.report());
        assert_eq!(sha, sha256_hex(content.as_bytes()), "{}", out.report());
    }
}

#[test]
fn status_lists_level_2_sections_in_order_and_ignores_headings_inside_fences() {
    let content = format!(
        "{MINIMAL}\n## Evidence\n\n```\n## Not A Section\n```\n\n~~~md\n## Also Not\n~~~\n\n### Sub heading\n\n## Decisions\n\nNone yet.\n"
    );
    let b = Board::new(&content);
    let out = pair(["status", b.p(), "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(
        section_names(&j),
        vec!["Goal", "Evidence", "Decisions"],
        "{}",
        out.report()
    );
    // status also carries the poll fields
    assert_eq!(j["phase"], "DRAFT", "{}", out.report());
    assert!(
        j.get("counters").is_some(),
        "status must include poll's fields\n{}",
        out.report()
    );
}

#[test]
fn status_human_output_names_the_phase() {
    let b = Board::minimal();
    let out = pair(["status", b.p()]);
    out.code(0).mentions(&["DRAFT"]);
}

#[test]
fn status_on_a_missing_board_exits_7() {
    let b = Board::absent();
    pair(["status", b.p()]).code(7);
    pair(["status", b.p(), "--json"]).json_error(7);
    assert!(!b.path.exists());
}

// ------------------------------------------------------------------------------------------
// poll

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
    assert_bytes_eq(
        &b.content(),
        &unjournaled(new.as_bytes()),
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
fn reads_take_no_lock_and_leave_the_directory_and_file_as_they_were() {
    let b = Board::minimal();
    pair(["validate", b.p()]).code(0);
    pair(["status", b.p()]).code(0);
    pair(["status", b.p(), "--json"]).code(0);
    assert_only_entries(b.dir.path(), &["board.md"]);
    // poll leaves the agent's presence beside the board (never a lock, never the board).
    pair(["poll", b.p(), "--agent", "doer"]).code(0);
    b.assert_untouched(MINIMAL.as_bytes());
    assert_only_entries(b.dir.path(), &["board.md", SIDE_DIR]);
    assert_only_entries(
        &b.dir.path().join(SIDE_DIR).join("presence"),
        &["doer.json"],
    );
}

// ------------------------------------------------------------------------------------------
// CRLF, BOM, delimiter spaces

fn assert_accepted_by_all_readers(content: &[u8]) {
    let b = Board::new(content);
    pair(["validate", b.p()]).code(0);
    let s = pair(["status", b.p(), "--json"]);
    s.code(0);
    let sj = s.json();
    assert_eq!(sj["phase"], "DRAFT", "{}", s.report());
    assert_eq!(sj["sha256"], sha256_hex(content), "{}", s.report());
    assert!(
        section_names(&sj).contains(&"Goal".to_string()),
        "{}",
        s.report()
    );
    let p = pair(["poll", b.p(), "--agent", "doer", "--json"]);
    p.code(0);
    assert_eq!(p.json()["phase"], "DRAFT", "{}", p.report());
    b.assert_untouched(content);
}

#[test]
fn crlf_board_is_accepted_by_validate_status_and_poll() {
    assert_accepted_by_all_readers(to_crlf(MINIMAL).as_bytes());
}

#[test]
fn bom_board_is_accepted_by_validate_status_and_poll() {
    assert_accepted_by_all_readers(&with_bom(MINIMAL));
}

#[test]
fn bom_plus_crlf_board_is_accepted_by_validate_status_and_poll() {
    assert_accepted_by_all_readers(&with_bom(&to_crlf(MINIMAL)));
}

#[test]
fn trailing_spaces_on_delimiter_lines_are_accepted_by_validate_status_and_poll() {
    let content = MINIMAL
        .replacen("---\n", "---  \n", 1)
        .replacen("\n---\n", "\n--- \t\n", 1);
    assert!(content.starts_with("---  \n") && content.contains("\n--- \t\n"));
    assert_accepted_by_all_readers(content.as_bytes());
}

#[test]
fn raw_write_of_crlf_and_bom_content_stores_the_exact_bytes() {
    let b = Board::minimal();
    let crlf = with_bom(&to_crlf(&format!("{MINIMAL}\nDo the CRLF thing.\n")));
    b.write_expect(&crlf, &sha256_hex(MINIMAL), &[]).code(0);
    assert_bytes_eq(
        &b.content(),
        &crlf,
        "raw write must store the content bytes exactly",
    );
    pair(["validate", b.p()]).code(0);

    // and a raw write onto a CRLF/BOM file works with the hash of its exact bytes
    let crlf2 = with_bom(&to_crlf(&format!(
        "{MINIMAL}\nDo the CRLF thing.\nAnd one more line.\n"
    )));
    let kept = keep_journal(&String::from_utf8(crlf2.clone()).unwrap(), &b.read());
    b.write_expect(&kept, &b.sha(), &[]).code(0);
    assert_bytes_eq(
        &b.content(),
        &crlf2,
        "raw write must store the content bytes exactly",
    );
    b.assert_clean_dir(&[]);
}

// ------------------------------------------------------------------------------------------
// validate: many files, directories

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

// ------------------------------------------------------------------------------------------
// usage errors and the JSON error envelope

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
fn usage_error_with_json_gives_the_error_envelope_with_code_4() {
    let b = Board::minimal();
    let c = b.aux_file("c.md", MINIMAL);
    let sha = sha256_hex(MINIMAL);
    let out = pair([
        "write",
        b.p(),
        "--json",
        "--content-file",
        c.to_str().unwrap(),
        "--expect-sha256",
        sha.as_str(),
        "--create-if-missing",
    ]);
    out.json_error(4);
    let out = pair(["poll", b.p(), "--json"]);
    out.json_error(4);
    b.assert_untouched(MINIMAL.as_bytes());
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
fn json_error_envelope_has_code_kind_message_and_empty_stdout() {
    let b = Board::minimal();
    // stale write
    let e = b
        .write_expect(
            MINIMAL.replace("Do the thing.", "x"),
            &"0".repeat(64),
            &["--json"],
        )
        .json_error(3);
    assert!(e["kind"].is_string());
    // invalid content
    b.write_expect(
        set_top(MINIMAL, "phase", "DONE"),
        &sha256_hex(MINIMAL),
        &["--json"],
    )
    .json_error(5);
    // invalid board on read
    let bad = Board::new(set_top(MINIMAL, "yolo", "\"yes please\""));
    pair(["status", bad.p(), "--json"]).json_error(5);
    pair(["poll", bad.p(), "--agent", "doer", "--json"]).json_error(5);
    b.assert_untouched(MINIMAL.as_bytes());
}

// ------------------------------------------------------------------------------------------
// more init options

#[test]
fn init_with_goal_file_dash_reads_the_goal_from_stdin() {
    let b = Board::absent();
    pair_stdin(
        ["init", b.p(), "--goal-file", "-"],
        "Goal piped on stdin.\n",
    )
    .code(0);
    pair(["validate", b.p()]).code(0);
    let text = b.read_string();
    let goal = section_text(&text, "Goal").expect("Goal section");
    assert!(goal.contains("Goal piped on stdin."), "{text}");
}

#[test]
fn init_with_template_builds_the_board_from_the_template() {
    let b = Board::absent();
    let tpl = b.aux_file(
        "template.md",
        format!("{MINIMAL}\n## Team Conventions\n\nAlways run the linter.\n"),
    );
    pair([
        "init",
        b.p(),
        "--template",
        tpl.to_str().unwrap(),
        "--goal",
        "Templated goal",
    ])
    .code(0);
    pair(["validate", b.p()]).code(0);
    let text = b.read_string();
    assert!(
        text.contains("## Team Conventions"),
        "the template's sections are kept:\n{text}"
    );
    assert!(text.contains("Always run the linter."), "{text}");
    assert!(text.contains("Templated goal"), "{text}");
    assert!(text.contains("\nphase: DRAFT"), "{text}");
}

#[test]
fn init_with_an_invalid_template_fails_and_creates_nothing() {
    let b = Board::absent();
    let tpl = b.aux_file("template.md", "# just markdown, no frontmatter\n");
    let out = pair(["init", b.p(), "--template", tpl.to_str().unwrap()]);
    out.failed_without_hanging().mentions(&["frontmatter"]);
    assert!(
        !b.path.exists(),
        "no board may be created from an invalid template"
    );
}

#[test]
fn init_rejects_bad_work_type_and_bad_reviewer_ids_and_creates_nothing() {
    for args in [
        vec!["--work-type", "Not A Word"],
        vec!["--reviewers", "alice,bad id!"],
        vec!["--doer", ""],
    ] {
        let b = Board::absent();
        let mut all = vec!["init", b.p()];
        all.extend(args.iter());
        let out = pair(&all);
        out.failed_without_hanging();
        assert!(
            !b.path.exists(),
            "no board may be created\n{}",
            out.report()
        );
    }
}

// ------------------------------------------------------------------------------------------
// error reporting details

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
fn error_line_numbers_are_right_in_bom_and_crlf_files() {
    let content = with_bom(&to_crlf(&set_top(MINIMAL, "plan_revision", "-1")));
    let line = line_no(
        &set_top(MINIMAL, "plan_revision", "-1"),
        "plan_revision: -1",
    );
    let b = Board::new(&content);
    pair(["validate", b.p()])
        .code(5)
        .mentions(&["plan_revision"])
        .mentions_line_any(&[line]);
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    let errors = out.json()["files"][0]["errors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        errors
            .iter()
            .any(|e| e["field"] == "plan_revision" && e["line"].as_u64() == Some(line as u64)),
        "{}",
        out.report()
    );
    b.assert_untouched(&content);
}

#[test]
fn status_with_agent_reports_that_agents_turn() {
    let b = Board::new(minimal_with_reviewer("alice"));
    let out = pair(["status", b.p(), "--agent", "alice", "--json"]);
    out.code(0);
    assert_eq!(out.json()["your_turn"], false, "{}", out.report());
    assert_eq!(out.json()["agent"]["id"], "alice", "{}", out.report());
    let out = pair(["status", b.p(), "--agent", "doer", "--json"]);
    out.code(0);
    assert_eq!(out.json()["your_turn"], true, "{}", out.report());
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
