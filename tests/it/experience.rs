//! What an agent or a human reads and keeps: entries that can be told apart from the notes in
//! them (`status`, `show`), a brief that rebuilds an agent's context, gate records that name the
//! command that ran, body/frontmatter agreement in `validate`, and hand comments that survive
//! writes.

use std::fs;

use crate::common::*;
use crate::proto::Proto;

/// A board with two required reviewers, in PLANNING.
fn planning() -> Proto {
    let p = Proto::init(&["--goal", "Make uploads retry", "--reviewers", "alice,bob"]);
    p.ok("alice", &["register"]);
    p.ok("bob", &["register"]);
    p.ok(&p.doer.clone(), &["advance", "PLANNING", "--user-approved"]);
    p
}

const PLAN_WITH_HEADINGS: &str = "The plan.\n\n### Root cause\n\nNo retry.\n\n#### Detail\n\nSee upload.rs.\n\n### Fix\n\nRetry 3 times.\n";

fn submit_plan(p: &Proto) -> Out {
    let file = p.b.aux_file("plan.md", PLAN_WITH_HEADINGS);
    p.ok(
        &p.doer.clone(),
        &[
            "submit",
            "plan",
            "--note-file",
            file.to_str().unwrap(),
            "--user-approved",
        ],
    )
}

fn section_entries(status: &serde_json::Value, name: &str) -> u64 {
    status["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no section {name} in {status}"))["entries"]
        .as_u64()
        .unwrap()
}

#[test]
fn level_3_headings_in_a_note_are_demoted_so_each_entry_counts_once() {
    let p = planning();
    let out = submit_plan(&p);
    out.mentions(&["####", "moved one level down"]);
    let text = p.text();
    assert!(text.contains("\n#### Root cause\n"), "{text}");
    assert!(text.contains("\n##### Detail\n"), "{text}");
    assert!(text.contains("\n#### Fix\n"), "{text}");
    assert!(!text.contains("\n### Root cause"), "{text}");
    assert_eq!(section_entries(&p.status(), "Plan Revisions"), 1);
    // What was pinned is what the entry holds: the reviewers' verdicts are held to it.
    let poll = p.poll_expect("alice", 0);
    let sha = poll["review"]["artifact"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let diff = pair(["diff", p.p()]);
    diff.code(0);
    assert_eq!(sha256_hex(&diff.stdout_bytes), sha);
    p.ok(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            &sha,
            "--note",
            "fine",
        ],
    );
}

#[test]
fn old_boards_whose_notes_hold_level_3_headings_count_entries_by_their_form() {
    let b = init_board(&[]);
    let text = b.read_string().replace(
        "## Evidence\n",
        "## Evidence\n\n### Note — doer — 2026-01-01T00:00:00Z\n\nRepro:\n\n### Step 1\n\nupload twice\n\n### Step 2\n\nsee the error\n",
    );
    fs::write(&b.path, &text).unwrap();
    pair(["validate", b.p()]).code(0);
    let status = pair(["status", b.p(), "--json"]).code(0).json();
    assert_eq!(section_entries(&status, "Evidence"), 1);
    let latest = pair(["show", b.p(), "Evidence", "--latest", "--json"])
        .code(0)
        .json();
    let entry = &latest["entry"];
    assert_eq!(entry["agent"], "doer");
    assert_eq!(entry["kind"], "record");
    assert_eq!(
        entry["text"],
        "Repro:\n\n### Step 1\n\nupload twice\n\n### Step 2\n\nsee the error"
    );
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
fn a_gate_record_names_the_command_that_ran() {
    let p = planning();
    submit_plan(&p);
    let decisions = section_text(&p.text(), "Decisions").unwrap();
    let file = p.b.aux.path().join("plan.md");
    let ran = format!("--note-file {} --user-approved", file.to_str().unwrap());
    assert!(decisions.contains(&ran), "{decisions}");
    assert!(!decisions.contains("--note-file FILE"), "{decisions}");
    // A short inline note is copied as it was given.
    let q = planning();
    q.ok(
        &q.doer.clone(),
        &[
            "submit",
            "plan",
            "--note",
            "Retry three times",
            "--user-approved",
        ],
    );
    let decisions = section_text(&q.text(), "Decisions").unwrap();
    assert!(
        decisions.contains("--agent doer plan --note 'Retry three times' --user-approved"),
        "{decisions}"
    );
}

#[test]
fn hand_comments_on_known_keys_survive_a_write() {
    let b = init_board(&["--reviewers", "alice"]);
    let text = b
        .read_string()
        .replace("yolo: false\n", "yolo: false  # ask me first\n")
        .replace(
            "work_type: feature\n",
            "# the user chose this\nwork_type: feature\n",
        )
        .replace("phase: DRAFT\n", "phase: DRAFT # where we are\n")
        .replace(
            "required_reviewers:\n  - alice\n",
            "required_reviewers: [alice]  # named by the user\n",
        );
    fs::write(&b.path, &text).unwrap();
    pair(["validate", b.p()]).code(0);
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "x",
    ])
    .code(0);
    let after = b.read_string();
    for kept in [
        "yolo: false  # ask me first\n",
        "# the user chose this\nwork_type: feature\n",
        "phase: DRAFT # where we are\n",
        "required_reviewers: [alice]  # named by the user\n",
    ] {
        assert!(after.contains(kept), "lost {kept:?}:\n{after}");
    }
    // A value that changes keeps the comment at the end of its line.
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    let after = b.read_string();
    assert!(
        after.contains("phase: PLANNING # where we are\n"),
        "{after}"
    );
    assert!(after.contains("yolo: false  # ask me first\n"), "{after}");
    pair(["validate", b.p()]).code(0);
}

#[test]
fn a_comment_on_a_line_that_goes_away_is_named_on_stderr() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alcie"]).code(0);
    let text = b.read_string();
    let at = text.find("  alcie:\n").expect("alcie's entry");
    let mut edited = text.clone();
    let status_at = at + edited[at..].find("    status: IDLE\n").unwrap();
    edited.replace_range(
        status_at..status_at + "    status: IDLE\n".len(),
        "    status: IDLE  # typo?\n",
    );
    fs::write(&b.path, &edited).unwrap();
    pair(["validate", b.p()]).code(0);
    let out = pair(["unregister", b.p(), "--agent", "alcie"]);
    out.code(0);
    assert!(
        out.stderr.contains("# typo?") && out.stderr.contains("could not be kept"),
        "{}",
        out.report()
    );
    assert!(!String::from_utf8(b.content()).unwrap().contains("alcie"));
}

#[test]
fn validate_finds_a_counter_with_no_entry_and_names_both_lines() {
    let p = planning();
    submit_plan(&p);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    let text = p.text();
    let edited = text.replacen("plan_revision: 1\n", "plan_revision: 2\n", 1);
    fs::write(&p.b.path, &edited).unwrap();
    let key_line = line_no(&edited, "plan_revision: 2");
    let section_line = line_no(&edited, "## Plan Revisions");
    let entry_line = edited
        .lines()
        .position(|l| l.starts_with("### Plan revision 1 — "))
        .unwrap()
        + 1;
    let out = pair(["validate", p.p()]);
    out.code(5);
    let first = format!("line {key_line}: `plan_revision`");
    let section = format!("`## Plan Revisions` (line {section_line})");
    let entry = format!("plan revision 1, line {entry_line}");
    out.mentions(&[&first, &section, &entry, "no entry for plan revision 2"]);
    let json = pair(["validate", p.p(), "--json"]).code(5).json();
    let error = &json["files"][0]["errors"][0];
    assert_eq!(error["field"], "plan_revision", "{json:#}");
    assert_eq!(error["line"], key_line, "{json:#}");
    // status says the same, with what it can still show.
    pair(["status", p.p()])
        .code(5)
        .mentions(&["no entry for plan revision 2"]);
}

#[test]
fn validate_finds_a_verdict_its_entry_does_not_give() {
    let p = planning();
    submit_plan(&p);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    pair(["validate", p.p()]).code(0);
    let text = p.text();
    let at = text.find("\n  alice:\n").unwrap();
    let (head, tail) = text.split_at(at);
    let edited = format!(
        "{head}{}",
        tail.replacen("plan_verdict: APPROVED", "plan_verdict: COMMENT", 1)
    );
    fs::write(&p.b.path, &edited).unwrap();
    let verdict_line = edited
        .lines()
        .position(|l| l == "    plan_verdict: COMMENT")
        .unwrap()
        + 1;
    let entry_line = edited
        .lines()
        .position(|l| l.starts_with("### Plan review — revision 1 — alice — APPROVED"))
        .unwrap()
        + 1;
    pair(["validate", p.p()]).code(5).mentions(&[
        &format!("line {verdict_line}: `agents.alice.plan_verdict`"),
        &format!("(line {entry_line}) says APPROVED"),
    ]);
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
    pair(["validate", p.p()]).code(0);
}
