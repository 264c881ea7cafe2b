//! Reading a board: `status` (human, coloured on a terminal, and JSON), `show` and `brief`.

use crate::common::flow::{planning, submit_plan};
use crate::common::handmade::board_in;
use crate::common::prereq::{SCRIPT, on_path, require};
use crate::common::reads::{section_names, text};
use crate::common::*;
use crate::proto::Proto;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

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

#[test]
fn show_prints_the_artifact_under_review_and_the_reviews_of_its_round() {
    let p = planning();
    submit_plan(&p);
    let before = pair(["show", p.p(), "--json"]).code(0).json();
    assert_eq!(before["target"], "plan");
    assert_eq!(before["counter"], 1);
    assert_eq!(before["artifact"]["agent"], p.doer.as_str());
    assert_eq!(before["artifact"]["counter"], 1);
    assert_eq!(before["artifact"]["section"], "Plan Revisions");
    assert!(before["artifact"]["time"].as_str().unwrap().ends_with('Z'));
    assert!(
        before["artifact"]["text"]
            .as_str()
            .unwrap()
            .contains("#### Root cause")
    );
    assert_eq!(before["reviews"].as_array().unwrap().len(), 0);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok(
        "bob",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "retry needs a backoff",
        ],
    );
    let after = pair(["show", p.p(), "--json"]).code(0).json();
    let reviews = after["reviews"].as_array().unwrap();
    let verdicts: Vec<(&str, &str)> = reviews
        .iter()
        .map(|r| (r["agent"].as_str().unwrap(), r["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [("alice", "APPROVED"), ("bob", "CHANGES_REQUESTED")]
    );
    let latest = pair(["show", p.p(), "--latest", "--json"]).code(0).json();
    assert_eq!(latest["artifact"], after["artifact"]);
    assert_eq!(latest["reviews"].as_array().unwrap().len(), 0);
    // Text form: the artifact's entry as Markdown, with where it is.
    let text = pair(["show", p.p(), "--latest"]).code(0).stdout.clone();
    assert!(text.contains("### Plan revision 1 — "), "{text}");
    assert!(text.contains("Plan Revisions, line "), "{text}");
    // A named section, and its newest entry.
    let decisions = pair(["show", p.p(), "Decisions", "--latest", "--json"])
        .code(0)
        .json();
    assert_eq!(decisions["entry"]["label"], "Gate approved");
    let section = pair(["show", p.p(), "Plan Reviews"]).code(0).stdout.clone();
    assert!(section.starts_with("## Plan Reviews\n"), "{section}");
    assert!(section.contains("retry needs a backoff"), "{section}");
    // A misspelt section is refused with the closest name.
    pair(["show", p.p(), "plan reviews"])
        .code(4)
        .mentions(&["did you mean", "Plan Reviews"]);
}

#[test]
fn show_before_anything_was_submitted_says_so() {
    let b = init_board(&[]);
    let out = pair(["show", b.p(), "--json"]).code(0).json();
    assert_eq!(out["artifact"], serde_json::Value::Null);
    pair(["show", b.p()])
        .code(0)
        .mentions(&["Nothing has been submitted yet"]);
}

#[test]
fn a_reviewers_brief_has_the_task_artifact_and_reviews_but_not_the_doers_notes() {
    let p = planning();
    let doer = p.doer.clone();
    p.ok(
        &doer,
        &[
            "note",
            "--section",
            "Implementation Notes",
            "--note",
            "I suspect the SECRET-REASONING path",
        ],
    );
    p.ok(
        &doer,
        &[
            "note",
            "--section",
            "Evidence",
            "--note",
            "Fails 3 of 10 runs",
        ],
    );
    submit_plan(&p);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok(
        "bob",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "retry needs a backoff",
        ],
    );
    let file = p.b.aux_file("plan2.md", "Retry 3 times with backoff.\n");
    p.ok(
        &doer,
        &[
            "submit",
            "plan",
            "--note-file",
            file.to_str().unwrap(),
            "--user-approved",
        ],
    );
    let brief = pair(["brief", p.p(), "--for", "reviewer", "--agent", "bob"])
        .code(0)
        .stdout
        .clone();
    for part in [
        "## Task",
        "Make uploads retry",
        "Fails 3 of 10 runs",
        "## Under review",
        "Retry 3 times with backoff.",
        "## Reviews so far",
        "retry needs a backoff",
        "pair diff",
        "--artifact-sha256",
        "## Next step",
        "pair verdict",
    ] {
        assert!(brief.contains(part), "missing {part:?} in\n{brief}");
    }
    assert!(!brief.contains("SECRET-REASONING"), "{brief}");
    let json = pair([
        "brief",
        p.p(),
        "--for",
        "reviewer",
        "--agent",
        "bob",
        "--json",
    ])
    .code(0)
    .json();
    assert_eq!(json["for"], "reviewer");
    assert_eq!(json["markdown"].as_str().unwrap(), brief);
    assert_eq!(json["next"]["command"][1], "verdict");
}

#[test]
fn a_doers_brief_has_the_goal_approved_plan_open_points_gates_and_next_step() {
    let p = planning();
    let doer = p.doer.clone();
    submit_plan(&p);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok(
        "bob",
        &[
            "verdict",
            "COMMENT",
            "--revision",
            "1",
            "--note",
            "name the backoff constant",
        ],
    );
    let brief = pair(["brief", p.p(), "--for", "doer"])
        .code(0)
        .stdout
        .clone();
    for part in [
        "## Goal",
        "Make uploads retry",
        "## Phase",
        "PLAN_CHANGES_REQUESTED",
        "## Approved plan",
        "No plan is approved yet",
        "## Open review points",
        "name the backoff constant",
        "## Gates",
        "required reviewers: alice, bob",
        "## Next step",
        "pair submit",
    ] {
        assert!(brief.contains(part), "missing {part:?} in\n{brief}");
    }
    // Once approved, the plan is the approved one and nothing is open.
    let file = p.b.aux_file("plan2.md", "Retry with a named backoff.\n");
    p.ok(
        &doer,
        &[
            "submit",
            "plan",
            "--note-file",
            file.to_str().unwrap(),
            "--user-approved",
        ],
    );
    for r in ["alice", "bob"] {
        p.ok(
            r,
            &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
        );
    }
    let brief = pair(["brief", p.p(), "--for", "doer"])
        .code(0)
        .stdout
        .clone();
    assert!(brief.contains("Retry with a named backoff."), "{brief}");
    assert!(!brief.contains("No plan is approved yet"), "{brief}");
    assert!(brief.contains("None: no current verdict"), "{brief}");
}

#[test]
fn show_and_brief_follow_code_rounds_and_follow_ups() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note the-plan --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
        "DOER advance CODING --worktree {wt} --user-approved",
        "DOER submit code --note staged-change",
    ]);
    let v = pair(["show", p.p(), "--json"]).code(0).json();
    assert_eq!(v["target"], "code");
    assert_eq!(v["artifact"]["label"], "Code review round 1");
    assert_eq!(v["artifact"]["followup"], false);
    assert!(
        v["artifact"]["text"]
            .as_str()
            .unwrap()
            .starts_with("staged-change")
    );
    pair(["show", p.p()]).code(0).mentions(&[
        "### Code review round 1 — submitted (staged diff)",
        "pair diff",
    ]);
    p.steps(&[
        "alice verdict CHANGES_REQUESTED --revision 1 --note fix-it",
        "DOER submit followup --note unstaged-fix",
    ]);
    let v = pair(["show", p.p(), "--json"]).code(0).json();
    assert_eq!(v["counter"], 2);
    assert_eq!(v["artifact"]["followup"], true);
    let brief = pair(["brief", p.p(), "--for", "reviewer", "--agent", "alice"])
        .code(0)
        .stdout
        .clone();
    for part in [
        "Follow-up review round 2",
        "unstaged-fix",
        "fix-it",
        "Pinned: ",
        "git -C ",
        "## Approved plan",
        "the-plan",
    ] {
        assert!(brief.contains(part), "missing {part:?} in\n{brief}");
    }
    // The submission's entry states its pin; the brief does not say it a second time.
    assert_eq!(brief.matches("Pinned: ").count(), 1, "{brief}");
    pair(["validate", p.p()]).code(0);
}

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
fn status_shows_phase_turn_reviewer_table_and_counters_without_colour_in_a_pipe() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let ok = |args: &[&str]| {
        let out = output_in(d, args);
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

    let out = output_in(d, &["status", "t.md"]);
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

/// Run `pair ARGS` under `script`, so that its stdout is a terminal. None if `script` fails.
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
    let out = output_in(d, &["init", "t.md", "--reviewers", "alice"]);
    assert_eq!(out.status.code(), Some(0));
    if !require(&SCRIPT, on_path("script")) {
        return;
    }
    let coloured =
        in_a_terminal(d, "status t.md", false).expect("`script` runs pair in a terminal");
    assert!(coloured.contains("\x1b["), "{coloured}");
    assert!(coloured.contains("DRAFT"), "{coloured}");
    let plain = in_a_terminal(d, "status t.md", true).expect("script ran once already");
    assert!(!plain.contains('\x1b'), "{plain}");
    assert!(plain.contains("phase       DRAFT"), "{plain}");
}

#[test]
fn status_without_agent_speaks_of_the_doers_turn_in_the_third_person() {
    let p = planning();
    // Whoever runs it without --agent reads the doer's point of view, not "your turn".
    let anyone = pair(["status", p.p()]);
    anyone.code(0);
    assert!(!anyone.stdout.contains("your turn"), "{}", anyone.report());
    anyone.mentions(&["via doer (doer's turn)"]);
    // Named as the doer, it is the reader's own turn.
    pair(["status", p.p(), "--agent", "doer"]).mentions(&["(your turn, doer)"]);
}

#[test]
fn status_counts_the_journals_records_as_log_lists_them() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    for i in 0..3 {
        pair([
            "note",
            b.p(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            &format!("note {i}"),
        ])
        .code(0);
    }
    let records = pair(["log", b.p(), "--json"]).json()["records"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(records, 5);
    let j = pair(["status", b.p(), "--json"]).json();
    let journal = j["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Journal")
        .unwrap()
        .clone();
    assert_eq!(journal["entries"], 5, "{journal}");
    let out = pair(["status", b.p()]);
    let line = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("Journal "))
        .unwrap();
    assert!(line.ends_with("5 entries"), "{line}");
}
