//! Regressions: each test pins a defect found by attacking `pair`, so it cannot come back.

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn pair_in(dir: &Path, args: &[&str]) -> Run {
    let out = crate::common::output_in(dir, args);
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

struct Env {
    dir: TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn run(&self, args: &[&str]) -> Run {
        pair_in(self.dir.path(), args)
    }
    /// Run and require an exit code, showing the output otherwise.
    fn ok(&self, code: i32, args: &[&str]) -> Run {
        let r = self.run(args);
        assert_eq!(
            r.code, code,
            "pair {args:?}\nstdout: {}\nstderr: {}",
            r.stdout, r.stderr
        );
        r
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.path(name)).unwrap()
    }
    fn sha(&self, name: &str) -> String {
        let v: serde_json::Value =
            serde_json::from_str(&self.ok(0, &["status", name, "--json"]).stdout).unwrap();
        v["sha256"].as_str().unwrap().to_string()
    }
    /// Raw write of `content` over `name`, with extra flags; returns the run.
    fn write(&self, name: &str, content: &str, extra: &[&str]) -> Run {
        let f = self.path("content.tmp");
        fs::write(&f, content).unwrap();
        let sha = self.sha(name);
        let mut args = vec![
            "write",
            name,
            "--content-file",
            f.to_str().unwrap(),
            "--expect-sha256",
            &sha,
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }
}

#[test]
fn a_section_name_that_would_not_parse_back_is_refused_not_silently_dropped() {
    let e = Env::new();
    e.ok(0, &["init", "b.md", "--goal", "g"]);
    let before = e.read("b.md");
    for name in ["Foo #", "Evidence ##", "`code`", "a\nb", "~~~"] {
        let r = e.run(&[
            "note",
            "b.md",
            "--agent",
            "doer",
            "--section",
            name,
            "--note",
            "lost?",
        ]);
        assert_eq!(r.code, 4, "section {name:?}: {}", r.stderr);
        assert_eq!(e.read("b.md"), before, "section {name:?} changed the file");
    }
}

#[test]
fn an_unclosed_fence_in_the_body_is_invalid_so_entries_cannot_vanish_into_it() {
    let e = Env::new();
    e.ok(0, &["init", "u.md", "--goal", "g"]);
    let text = e
        .read("u.md")
        .replacen("\ng\n", "\ng\n\n```\nunclosed\n", 1);
    fs::write(e.path("u.md"), &text).unwrap();
    let r = e.ok(5, &["validate", "u.md"]);
    assert!(r.stdout.contains("fence"), "{}", r.stdout);
    e.ok(
        5,
        &["block", "u.md", "--agent", "doer", "--reason", "db down"],
    );
    assert_eq!(e.read("u.md"), text);
}

#[test]
fn keys_that_differ_only_in_yaml_type_are_duplicates() {
    let e = Env::new();
    e.ok(0, &["init", "c.md"]);
    let text = e
        .read("c.md")
        .replacen("yolo: false\n", "yolo: false\nmeta: {1: a, \"1\": b}\n", 1);
    fs::write(e.path("c.md"), &text).unwrap();
    let r = e.ok(5, &["validate", "c.md"]);
    assert!(r.stdout.contains("duplicate key `1`"), "{}", r.stdout);
}

fn planning_submitted_with_alice_approved(e: &Env) {
    e.ok(
        0,
        &[
            "init",
            "w.md",
            "--goal",
            "g",
            "--reviewers",
            "alice,bob",
            "--yolo",
        ],
    );
    e.ok(0, &["register", "w.md", "--agent", "alice"]);
    e.ok(0, &["register", "w.md", "--agent", "bob"]);
    e.ok(0, &["advance", "w.md", "--agent", "doer", "PLANNING"]);
    e.ok(
        0,
        &["submit", "w.md", "--agent", "doer", "plan", "--note", "p"],
    );
    e.ok(
        0,
        &[
            "verdict",
            "w.md",
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
    );
}

#[test]
fn a_raw_verdict_written_while_blocked_is_refused_so_unblock_still_works() {
    let e = Env::new();
    planning_submitted_with_alice_approved(&e);
    e.ok(
        0,
        &["block", "w.md", "--agent", "bob", "--reason", "need info"],
    );
    let blocked = e.read("w.md");
    let forged = blocked.replacen(
        "  bob:\n    role: reviewer\n    status: BLOCKED\n",
        "  bob:\n    role: reviewer\n    status: APPROVED\n",
        1,
    );
    let forged = forged.replacen(
        "reviewed_plan_revision: null\n    plan_verdict: null\n    reviewed_red_test_round: null\n    red_test_verdict: null\n    reviewed_code_round: null\n    code_verdict: null\n---",
        "reviewed_plan_revision: 1\n    plan_verdict: APPROVED\n    reviewed_red_test_round: null\n    red_test_verdict: null\n    reviewed_code_round: null\n    code_verdict: null\n---",
        1,
    );
    assert_ne!(forged, blocked, "the test must forge something");
    let r = e.write("w.md", &forged, &["--as", "bob"]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(e.read("w.md"), blocked);
    e.ok(
        0,
        &["unblock", "w.md", "--agent", "doer", "--reason", "resume"],
    );
}

#[test]
fn a_reviewer_added_after_an_approved_analysis_joins_from_the_next_round() {
    let e = Env::new();
    e.ok(
        0,
        &[
            "init",
            "ra.md",
            "--goal",
            "g",
            "--rca",
            "--yolo",
            "--reviewers",
            "alice",
        ],
    );
    e.ok(0, &["register", "ra.md", "--agent", "alice"]);
    e.ok(0, &["advance", "ra.md", "--agent", "doer", "ANALYZING"]);
    e.ok(
        0,
        &[
            "submit", "ra.md", "--agent", "doer", "analysis", "--note", "a",
        ],
    );
    e.ok(
        0,
        &[
            "verdict",
            "ra.md",
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
    );
    e.ok(0, &["advance", "ra.md", "--agent", "doer", "PLANNING"]);
    e.ok(0, &["register", "ra.md", "--agent", "bob", "--required"]);
    e.ok(
        0,
        &["submit", "ra.md", "--agent", "doer", "plan", "--note", "p"],
    );
    let r = e.ok(0, &["poll", "ra.md", "--agent", "bob", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["review"]["pending"], serde_json::json!(["alice", "bob"]));
}

#[test]
fn a_reviewer_required_after_a_no_review_approval_can_be_recorded() {
    let e = Env::new();
    e.ok(0, &["init", "nr.md", "--goal", "g", "--yolo"]);
    e.ok(0, &["advance", "nr.md", "--agent", "doer", "PLANNING"]);
    e.ok(
        0,
        &[
            "submit",
            "nr.md",
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--no-review",
        ],
    );
    assert!(e.read("nr.md").contains("phase: PLAN_APPROVED"));
    e.ok(0, &["register", "nr.md", "--agent", "dave", "--required"]);
    e.ok(0, &["validate", "nr.md"]);
}

#[test]
fn an_optional_reviewer_registering_in_a_no_review_workflow_is_not_made_required() {
    let e = Env::new();
    e.ok(0, &["init", "nr.md", "--goal", "g", "--yolo"]);
    e.ok(0, &["advance", "nr.md", "--agent", "doer", "PLANNING"]);
    e.ok(
        0,
        &[
            "submit",
            "nr.md",
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--no-review",
        ],
    );
    e.ok(0, &["register", "nr.md", "--agent", "carol"]);
    // The worktree is a git worktree with a staged change (what the code submission pins).
    let wt = e.path("wt");
    crate::common::git_worktree(&wt);
    e.ok(
        0,
        &[
            "advance",
            "nr.md",
            "--agent",
            "doer",
            "CODING",
            "--worktree",
            wt.to_str().unwrap(),
        ],
    );
    e.ok(
        0,
        &["submit", "nr.md", "--agent", "doer", "code", "--note", "c"],
    );
    let text = e.read("nr.md");
    assert!(text.contains("required_reviewers: []"), "{text}");
    assert!(text.contains("phase: READY_TO_COMMIT"), "{text}");
}

#[test]
fn the_doer_cannot_switch_to_no_review_while_reviewers_are_registered() {
    let e = Env::new();
    e.ok(0, &["init", "s.md", "--goal", "g"]);
    e.ok(0, &["register", "s.md", "--agent", "alice"]);
    e.ok(
        0,
        &[
            "advance",
            "s.md",
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ],
    );
    let text = e.read("s.md");
    let forged = text
        .replacen("phase: PLANNING\n", "phase: PLANNING_SUBMITTED\n", 1)
        .replacen("plan_revision: 0", "plan_revision: 1", 1)
        .replacen("no_review: false", "no_review: true", 1);
    let r = e.write("s.md", &forged, &["--as", "doer", "--user-approved"]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert!(r.stderr.contains("no_review"), "{}", r.stderr);
    // Skipping the snapshot of registered reviewers is refused too.
    let forged = text
        .replacen("phase: PLANNING\n", "phase: PLANNING_SUBMITTED\n", 1)
        .replacen("plan_revision: 0", "plan_revision: 1", 1)
        .replacen("required_reviewers: []", "required_reviewers: [zed]", 1);
    let r = e.write("s.md", &forged, &["--as", "doer", "--user-approved"]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert!(r.stderr.contains("required_reviewers"), "{}", r.stderr);
    assert_eq!(e.read("s.md"), text);
}

#[test]
fn a_plain_write_naming_its_agent_is_checked_for_ownership() {
    let e = Env::new();
    planning_submitted_with_alice_approved(&e);
    let text = e.read("w.md");
    // The doer writes bob's approval for him.
    let at = text.find("  bob:\n").unwrap();
    let forged = format!(
        "{}{}",
        &text[..at],
        text[at..].replacen(
            "reviewed_plan_revision: null\n    plan_verdict: null",
            "reviewed_plan_revision: 1\n    plan_verdict: APPROVED",
            1
        )
    )
    .replacen("phase: PLANNING_SUBMITTED\n", "phase: PLAN_APPROVED\n", 1);
    assert_ne!(forged, text);
    let r = e.write("w.md", &forged, &["--agent", "doer"]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(e.read("w.md"), text);
}

#[test]
fn a_plain_anonymous_write_cannot_rewrite_the_body() {
    let e = Env::new();
    e.ok(0, &["init", "b.md", "--goal", "the goal"]);
    let text = e.read("b.md");
    let gone = format!("{}---\ngone\n", &text[..text.rfind("\n---\n").unwrap() + 1]);
    let r = e.write("b.md", &gone, &[]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert!(r.stderr.contains("append-only"), "{}", r.stderr);
    assert_eq!(e.read("b.md"), text);
}

#[test]
fn a_closing_delimiter_with_many_trailing_spaces_is_accepted() {
    let e = Env::new();
    e.ok(0, &["init", "d.md"]);
    let text = e.read("d.md");
    let pos = text[4..].find("\n---\n").unwrap() + 4;
    let padded = format!(
        "{}\n---{}\n{}",
        &text[..pos],
        " ".repeat(100),
        &text[pos + 5..]
    );
    fs::write(e.path("d.md"), padded).unwrap();
    e.ok(0, &["validate", "d.md"]);
}

#[test]
fn notes_with_other_line_endings_take_the_files_style() {
    let e = Env::new();
    e.ok(0, &["init", "n.md"]);
    e.ok(
        0,
        &[
            "note",
            "n.md",
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "a\r\nb\rc",
        ],
    );
    let text = e.read("n.md");
    assert!(!text.contains('\r'), "an LF file must stay LF: {text:?}");
    assert!(text.contains("a\nb\nc\n"), "{text}");
}

#[test]
fn a_lone_carriage_return_cannot_smuggle_a_heading_into_a_note() {
    let e = Env::new();
    e.ok(0, &["init", "n.md"]);
    let before = e.read("n.md");
    let r = e.run(&[
        "note",
        "n.md",
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "x\r## Injected",
    ]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert_eq!(e.read("n.md"), before);
}

#[test]
fn unknown_top_level_keys_survive_a_semantic_write_byte_for_byte() {
    let e = Env::new();
    e.ok(0, &["init", "k.md"]);
    let extra = "# why blob is here\nblob: !!binary aGVsbG8=\ncustom: !foo bar\nbig: 18446744073709551615\n0x10: hex key\noctal: 0o17\ninf: .inf\nnotes: |\n  multi\n  line\nnested:\n- a\n- {b: 1}\n";
    let text = e
        .read("k.md")
        .replacen("agents:\n", &format!("{extra}agents:\n"), 1);
    fs::write(e.path("k.md"), &text).unwrap();
    e.ok(0, &["validate", "k.md"]);
    e.ok(
        0,
        &[
            "note",
            "k.md",
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
        ],
    );
    e.ok(
        0,
        &[
            "note",
            "k.md",
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "y",
        ],
    );
    let after = e.read("k.md");
    assert!(after.contains(extra), "unknown entries changed:\n{after}");
    e.ok(0, &["validate", "k.md"]);
}

/// Raw write of `content` over `name` as `writer` (or anonymously with `None`).
fn write_as(e: &Env, name: &str, content: &str, writer: Option<&str>, extra: &[&str]) -> Run {
    let mut args: Vec<&str> = Vec::new();
    if let Some(w) = writer {
        args.extend(["--as", w]);
    }
    args.extend_from_slice(extra);
    e.write(name, content, &args)
}

#[test]
fn strings_yaml_cannot_hold_raw_are_escaped_so_every_command_still_works() {
    let e = Env::new();
    e.ok(0, &["init", "b.md", "--reviewers", "alice"]);
    let text = e.read("b.md").replacen(
        "blocked_from: null\n",
        "blocked_from: null\ntopic_branch: \"feat\\u007f\\u0085\\u009f\\uFFFE\"\n",
        1,
    );
    fs::write(e.path("b.md"), &text).unwrap();
    e.ok(0, &["validate", "b.md"]);
    e.ok(0, &["register", "b.md", "--agent", "alice"]);
    e.ok(
        0,
        &["stop", "b.md", "--agent", "doer", "--reason", "user asked"],
    );
    e.ok(0, &["validate", "b.md"]);
    // The value did not change, so it is written back as the file spelled it.
    assert!(
        e.read("b.md")
            .contains("topic_branch: \"feat\\u007f\\u0085\\u009f\\uFFFE\"\n"),
        "{}",
        e.read("b.md")
    );
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

#[test]
fn the_doer_cannot_fill_required_reviewers_outside_the_first_submission() {
    let e = Env::new();
    e.ok(0, &["init", "c.md"]);
    e.ok(0, &["register", "c.md", "--agent", "alice"]);
    e.ok(0, &["register", "c.md", "--agent", "bob"]);
    let text = e.read("c.md");
    for list in ["[bob]", "[ghost]"] {
        let forged = text.replacen(
            "required_reviewers: []",
            &format!("required_reviewers: {list}"),
            1,
        );
        let r = write_as(&e, "c.md", &forged, Some("doer"), &[]);
        assert_eq!(r.code, 6, "{list}: {}", r.stderr);
        assert_eq!(e.read("c.md"), text);
    }
}

#[test]
fn a_reviewer_cannot_rewrite_its_verdict_after_the_round_closed() {
    let e = Env::new();
    e.ok(0, &["init", "d.md", "--rca", "--reviewers", "alice"]);
    e.ok(0, &["register", "d.md", "--agent", "alice"]);
    e.ok(
        0,
        &[
            "advance",
            "d.md",
            "--agent",
            "doer",
            "ANALYZING",
            "--user-approved",
        ],
    );
    e.ok(
        0,
        &[
            "submit",
            "d.md",
            "--agent",
            "doer",
            "analysis",
            "--note",
            "a",
            "--user-approved",
        ],
    );
    e.ok(
        0,
        &[
            "verdict",
            "d.md",
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
    );
    e.ok(0, &["advance", "d.md", "--agent", "doer", "PLANNING"]);
    let text = e.read("d.md");
    let forged = text.replacen(
        "    analysis_verdict: APPROVED\n",
        "    analysis_verdict: CHANGES_REQUESTED\n",
        1,
    );
    assert_ne!(forged, text);
    for writer in [Some("alice"), None] {
        let r = write_as(&e, "d.md", &forged, writer, &[]);
        assert_eq!(r.code, 6, "{writer:?}: {}", r.stderr);
    }
    assert_eq!(e.read("d.md"), text);
}

#[test]
fn an_anonymous_write_cannot_drop_a_reviewer_and_approve_without_review() {
    let e = Env::new();
    e.ok(0, &["init", "e.md", "--reviewers", "alice"]);
    e.ok(0, &["register", "e.md", "--agent", "alice"]);
    e.ok(
        0,
        &[
            "advance",
            "e.md",
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ],
    );
    e.ok(
        0,
        &[
            "submit",
            "e.md",
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--user-approved",
        ],
    );
    let text = e.read("e.md");
    let mut forged = text
        .replacen(
            "required_reviewers:\n  - alice\n",
            "required_reviewers: []\n",
            1,
        )
        .replacen("no_review: false", "no_review: true", 1)
        .replacen("phase: PLANNING_SUBMITTED", "phase: PLAN_APPROVED", 1);
    let i = forged.find("  alice:\n").unwrap();
    let j = forged.find("\n---\n").unwrap();
    forged.replace_range(i..j + 1, "");
    e.ok(0, &["validate", "e.md"]);
    let r = write_as(&e, "e.md", &forged, None, &[]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(e.read("e.md"), text);
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
fn gate_settings_change_only_by_a_recorded_repair() {
    let e = Env::new();
    e.ok(
        0,
        &[
            "init",
            "y.md",
            "--work-type",
            "debugging",
            "--reviewers",
            "alice",
        ],
    );
    let text = e.read("y.md");
    let forged = text.replacen("yolo: false", "yolo: true", 1).replacen(
        "rca_required: true",
        "rca_required: false",
        1,
    );
    let r = write_as(&e, "y.md", &forged, Some("doer"), &[]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert_eq!(e.read("y.md"), text);
    let f = e.path("forged.md");
    fs::write(&f, &forged).unwrap();
    let sha = e.sha("y.md");
    e.ok(
        0,
        &[
            "write",
            "y.md",
            "--content-file",
            f.to_str().unwrap(),
            "--expect-sha256",
            &sha,
            "--repair",
            "--reason",
            "user turned gates off",
        ],
    );
    assert!(e.read("y.md").contains("user turned gates off"));
}

#[test]
fn a_gate_passed_by_a_raw_write_is_recorded_in_decisions() {
    let e = Env::new();
    e.ok(0, &["init", "g.md"]);
    let text = e.read("g.md");
    let forged = text.replacen("phase: DRAFT", "phase: PLANNING", 1);
    let r = write_as(&e, "g.md", &forged, Some("doer"), &[]);
    assert_eq!(r.code, 6, "a gate needs --user-approved: {}", r.stderr);
    let r = write_as(&e, "g.md", &forged, Some("doer"), &["--user-approved"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = e.read("g.md");
    assert!(
        after.contains("Gate approved — DRAFT → PLANNING"),
        "{after}"
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

#[test]
fn a_write_to_a_directory_leaves_no_lock_file_beside_it() {
    let e = Env::new();
    fs::create_dir(e.path("dir")).unwrap();
    let r = e.run(&["init", "dir/"]);
    assert_ne!(r.code, 0);
    let r = e.run(&["init", "dir"]);
    assert_ne!(r.code, 0);
    let names: Vec<String> = fs::read_dir(e.dir.path())
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["dir"], "stray files: {names:?}");
    assert_eq!(fs::read_dir(e.path("dir")).unwrap().count(), 0);
}
