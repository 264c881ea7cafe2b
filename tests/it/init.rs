//! `pair init`: the board it makes (doer, gates, goal, reviewers, work type, template), its JSON,
//! its refusals (never overwriting, bad ids and templates) and its `.gitignore` advice.

use crate::common::prereq::{GIT, on_path, require};
use crate::common::reads::{names, section_names};
use crate::common::*;
use std::fs;
use std::process::Command as StdCommand;

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
    if !require(&GIT, on_path("git")) {
        return;
    }
    assert!(git(&["init", "-q"]).is_some(), "git init failed");
    let board = dir.path().join("docs").join("task.md");
    fs::create_dir_all(board.parent().unwrap()).unwrap();
    let out = pair(["init", board.to_str().unwrap()]);
    out.code(0);
    assert!(
        out.stdout.contains("the blackboard task.md itself"),
        "{}",
        out.report()
    );
    for line in [
        "*.md.lock",
        "*.md.lock.owner.json",
        ".*.md.pair-tmp-*",
        ".*.md.lock.owner.json.pair-tmp-*",
        ".*.md.pair/",
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
        "*.md.lock\n*.md.lock.owner.json\n.*.md.pair-tmp-*\n.*.md.lock.owner.json.pair-tmp-*\n\
         .*.md.pair/\n.worktrees/\n",
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

#[test]
fn a_new_board_takes_the_mode_the_creators_umask_allows() {
    // A new file's read/write bits less the umask, as any program's new file: 0640 under 027,
    // 0600 under 077, 0666 under 0.
    let dir = tempfile::tempdir().unwrap();
    for (umask, mode) in [("027", 0o640), ("077", 0o600), ("0", 0o666)] {
        let board = dir.path().join(format!("u{umask}.md"));
        let out = StdCommand::new("sh")
            .arg("-c")
            .arg(format!("umask {umask} && exec \"$0\" init \"$1\""))
            .arg(pair_bin())
            .arg(&board)
            .env_remove("PAIR_AGENT")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        use std::os::unix::fs::PermissionsExt;
        let got = fs::metadata(&board).unwrap().permissions().mode() & 0o7777;
        assert_eq!(got, mode, "umask {umask}: {got:o}");
        // So do the lock file and the owner record made with it (there is no board yet to
        // take them from).
        for sidecar in ["lock", "lock.owner.json"] {
            let path = dir.path().join(format!("u{umask}.md.{sidecar}"));
            let got = fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(got, mode, "umask {umask}: {sidecar} {got:o}");
        }
    }
}

#[test]
fn a_file_that_appears_at_the_path_while_init_writes_is_not_clobbered() {
    // Something that ignores the lock creates the board between init's read (nothing there)
    // and its rename: the rename never replaces a file, so init is refused as for any board
    // that exists (exit 7) and the other file stays as it was.
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("b.md");
    let go = dir.path().join("go-on");
    let child = StdCommand::new(pair_bin())
        .arg("init")
        .arg(&board)
        .env_remove("PAIR_AGENT")
        .env("PAIR_FAULT", format!("before-rename:wait={}", go.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::common::files::await_entry(
        dir.path(),
        ".b.md.pair-tmp-",
        "the paused init never wrote its temporary file",
    );
    fs::write(&board, "someone else's file\n").unwrap();
    fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(stderr.contains("exists"), "{stderr}");
    assert_eq!(fs::read_to_string(&board).unwrap(), "someone else's file\n");
    assert_eq!(
        crate::common::files::temp_files(dir.path()),
        Vec::<String>::new()
    );
}
