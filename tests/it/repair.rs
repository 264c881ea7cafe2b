//! Repairing an invalid blackboard: the repair command every error ends with, what `status` still
//! shows and the hash a repair needs, and `write --repair`, which skips ownership but still
//! validates and records what it changed.

use crate::common::env::{Env, write_as};
use crate::common::phases::{board_in, raw_write_as};
use crate::common::repair::repair;
use crate::common::*;
use crate::proto::*;
use pair::board::frontmatter::Timestamp;
use serde_json::Value;
use std::fs;

/// The last non-empty line of a text.
fn last_line(s: &str) -> &str {
    s.trim_end().lines().last().unwrap_or_default()
}

#[test]
fn status_of_an_invalid_board_shows_what_it_can_and_the_hash_a_repair_needs() {
    let content = set_top(MINIMAL, "phase", "PLANING");
    let b = Board::new(&content);
    let sha = b.sha();

    // Text: what can be read on stdout, the errors and the repair command on stderr, exit 5.
    let out = pair(["status", b.p()]);
    out.code(5);
    assert!(
        out.stdout.contains("phase       PLANING (as written)"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains(&format!("sha256      {sha}")),
        "{}",
        out.report()
    );
    assert!(out.stdout.contains("## Goal") || out.stdout.contains("Goal"));
    assert!(out.stderr.contains("`phase`"), "{}", out.report());
    assert_eq!(
        last_line(&out.stderr).trim(),
        repair(b.p(), &sha),
        "{}",
        out.report()
    );

    // JSON: the error envelope (stdout empty) carries the path, errors, hash and command.
    let err = pair(["status", b.p(), "--json"]).json_error(5);
    assert_eq!(err["kind"], "invalid");
    assert_eq!(err["sha256"], Value::from(sha.clone()));
    assert_eq!(err["path"], Value::from(b.p()));
    assert_eq!(err["repair"], Value::from(repair(b.p(), &sha)));
    assert_eq!(err["errors"][0]["field"], "phase");
    b.assert_untouched(content.as_bytes());

    // The command works as printed, with a fixed copy.
    let fixed = b.aux_file("FIXED.md", MINIMAL);
    let out = pair([
        "write",
        b.p(),
        "--content-file",
        fixed.to_str().unwrap(),
        "--expect-sha256",
        &sha,
        "--repair",
        "--reason",
        "fix the phase typo",
    ]);
    out.code(0);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn every_invalid_board_error_ends_with_the_repair_command() {
    let content = set_top(MINIMAL, "yolo", "\"yes please\"");
    let b = Board::new(&content);
    let expected = repair(b.p(), &b.sha());
    for args in [
        vec!["status", b.p()],
        vec!["poll", b.p(), "--agent", "doer"],
        vec![
            "note",
            b.p(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "n",
        ],
        vec!["register", b.p(), "--agent", "alice"],
    ] {
        let out = pair(&args);
        out.code(5);
        assert_eq!(last_line(&out.stderr).trim(), expected, "{}", out.report());
        let err = pair(args.iter().chain(&["--json"])).json_error(5);
        assert!(
            err["message"].as_str().unwrap().ends_with(&expected),
            "{err}"
        );
    }
    b.assert_untouched(content.as_bytes());

    // Content a write refuses is not the board: no repair command for it.
    let ok = Board::minimal();
    let out = ok.write_expect(&content, &ok.sha(), &[]);
    out.code(5).mentions(&["nothing was written"]);
    assert!(!out.stderr.contains("--repair"), "{}", out.report());
}

#[test]
fn the_repair_command_quotes_a_path_a_shell_would_split() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my task.md");
    fs::write(&path, set_top(MINIMAL, "phase", "NOPE")).unwrap();
    let out = pair(["status", path.to_str().unwrap()]);
    out.code(5);
    let line = last_line(&out.stderr).trim().to_string();
    assert!(
        line.starts_with(&format!("pair write '{}' ", path.display())),
        "{line}"
    );
}

#[test]
fn a_repair_records_what_it_changed_and_dates_a_phase_move() {
    let b = Board::minimal();
    let old = b.read_string();
    let mut fixed = set_top(&old, "phase", "PLANNING");
    fixed = insert_before_closing(&fixed, &agent_block("alice", "reviewer", "IDLE", &[]));
    let before = chrono::Utc::now().timestamp();
    b.write_expect(
        &fixed,
        &sha256_hex(&old),
        &["--repair", "--reason", "the user moved it"],
    )
    .code(0);
    let text = b.read_string();
    assert!(text.contains("- `phase`: DRAFT → PLANNING"), "{text}");
    assert!(text.contains("- `agents.alice`: added"), "{text}");
    assert!(text.contains("Reason: the user moved it"), "{text}");
    let stamp = text
        .lines()
        .find_map(|l| l.strip_prefix("phase_updated_at: "))
        .map(|v| v.trim_matches('"'))
        .and_then(Timestamp::parse)
        .expect("phase_updated_at");
    assert!(
        stamp.0.timestamp() >= before - 1,
        "phase_updated_at {stamp} was not moved with the phase"
    );
    pair(["validate", b.p()]).code(0);
}

#[test]
fn raw_repair_skips_ownership_but_still_validates_and_is_recorded() {
    let p = board_in("PLANNING_SUBMITTED", &["--reviewers", "alice,bob"]);
    let text = p.text();
    let before = p.b.read();
    // invalid: a string counter
    let invalid = set_top(&text, "plan_revision", "'1'");
    raw_write_as(&p, &invalid, &["--repair", "--reason", "fix"]).code(5);
    p.b.assert_untouched(&before);
    // valid repair that no agent could do: back to PLANNING
    let fixed = set_top(&text, "phase", "PLANNING");
    raw_write_as(
        &p,
        &fixed,
        &["--repair", "--reason", "human-reset-to-planning"],
    )
    .code(0);
    p.assert_phase("PLANNING");
    p.assert_valid();
    let d = sect(&p.text(), "Decisions").unwrap_or_default();
    assert!(
        d.contains("human-reset-to-planning"),
        "the repair is recorded in Decisions:\n{}",
        p.text()
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
