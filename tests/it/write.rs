//! `pair write`, the raw compare-and-swap write: hashes, `--create-if-missing`, stdin, and the law
//! holding a raw write to the writer's own fields and the legal moves.

use crate::common::env::{Env, planning_submitted_with_alice_approved, write_as};
use crate::common::files::{changed, note_args};
use crate::common::phases::{board_in, raw_write_as};
use crate::common::*;
use crate::proto::*;
use std::fs;

#[test]
fn write_with_an_unreadable_content_file_fails_and_leaves_the_board_untouched() {
    let b = Board::minimal();
    let missing = b.aux.path().join("no-such-content.md");
    let out = pair([
        "write",
        b.p(),
        "--content-file",
        missing.to_str().unwrap(),
        "--expect-sha256",
        sha256_hex(MINIMAL).as_str(),
    ]);
    out.failed_without_hanging()
        .mentions(&["no-such-content.md"]);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn a_write_to_a_missing_board_leaves_nothing_behind() {
    let b = Board::absent();
    let sha = sha256_hex(MINIMAL);
    let content = b.aux_file("c.md", MINIMAL);
    for args in [
        note_args(b.p(), "x"),
        vec![
            "write".into(),
            b.p().into(),
            "--content-file".into(),
            content.to_str().unwrap().into(),
            "--expect-sha256".into(),
            sha.clone(),
        ],
        vec![
            "register".into(),
            b.p().into(),
            "--agent".into(),
            "rev".into(),
        ],
        vec![
            "stop".into(),
            b.p().into(),
            "--agent".into(),
            "doer".into(),
            "--reason".into(),
            "r".into(),
        ],
    ] {
        pair(&args).code(7);
        assert_only_entries(b.dir.path(), &[]);
    }
    // a lock file that already exists stays, and nothing is added
    fs::write(b.dir.path().join("board.md.lock"), "").unwrap();
    pair(note_args(b.p(), "x")).code(7);
    assert_only_entries(b.dir.path(), &["board.md.lock"]);
}

#[test]
fn a_raw_write_as_a_reviewer_may_carry_the_automatic_transition_its_verdict_completes() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let text = p.text();
    // The plan's submission pinned it; a verdict on it records the pinned hash.
    let pinned = p.status()["review"]["artifact"]["sha256"]
        .as_str()
        .expect("the plan is pinned")
        .to_string();
    let at = text.find("\n  alice:\n").unwrap();
    let (head, tail) = text.split_at(at);
    let unsigned = tail
        .replacen(
            "reviewed_plan_revision: null",
            "reviewed_plan_revision: 1",
            1,
        )
        .replacen("plan_verdict: null", "plan_verdict: APPROVED", 1);
    let tail = unsigned.replacen(
        "plan_verdict: APPROVED\n",
        &format!("plan_verdict: APPROVED\n    reviewed_plan_sha256: \"{pinned}\"\n"),
        1,
    );
    let h = p.b.sha();
    // Without the hash of what it judged, the verdict is refused.
    let bare = set_top(&format!("{head}{unsigned}"), "phase", "PLAN_APPROVED");
    p.b.write_expect(&bare, &h, &["--as", "alice"])
        .code(6)
        .mentions(&["reviewed_plan_sha256", "pinned"]);
    let approved = agreeing(&set_top(&format!("{head}{tail}"), "phase", "PLAN_APPROVED"));
    p.b.write_expect(&approved, &h, &["--as", "alice"]).code(0);
    p.assert_phase("PLAN_APPROVED");
    p.assert_valid();

    // the same transition without the verdict that completes the round is refused
    let q = Proto::init(&["--reviewers", "alice"]);
    q.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let before = q.b.read();
    let jump = set_top(&q.text(), "phase", "PLAN_APPROVED");
    let h = q.b.sha();
    q.b.write_expect(&jump, &h, &["--as", "alice"])
        .code_in(&[5, 6]);
    q.b.assert_untouched(&before);
}

#[test]
fn raw_write_as_a_reviewer_changing_the_phase_is_refused_naming_phase() {
    let p = board_in("PLAN_APPROVED", &["--reviewers", "alice,bob"]);
    let before = p.b.read();
    let new = set_top(&p.text(), "phase", "RED_TESTING");
    let out = raw_write_as(&p, &new, &["--as", "alice"]);
    out.code(6).mentions(&["phase"]);
    p.b.assert_untouched(&before);
}

#[test]
fn raw_write_as_a_reviewer_may_carry_its_claim_transition() {
    let p = board_in("PLANNING_SUBMITTED", &["--reviewers", "alice,bob"]);
    let new = set_top(&p.text(), "phase", "REVIEWING_PLAN");
    raw_write_as(&p, &new, &["--as", "alice"]).code(0);
    p.assert_phase("REVIEWING_PLAN");
    p.assert_valid();
}

#[test]
fn raw_write_as_a_reviewer_editing_another_agents_entry_is_refused() {
    let p = board_in("REVIEWING_PLAN", &["--reviewers", "alice,bob"]);
    let text = p.text();
    // bob's status line (the agents are in a map: find bob's block)
    let bob_at = text.find("\n  bob:\n").expect("bob's entry");
    let st = text[bob_at..].find("    status: ").unwrap() + bob_at;
    let eol = text[st..].find('\n').unwrap() + st;
    let new = format!("{}    status: BLOCKED{}", &text[..st], &text[eol..]);
    let before = p.b.read();
    let out = raw_write_as(&p, &new, &["--as", "alice"]);
    out.code(6).mentions_any(&["bob", "status"]);
    p.b.assert_untouched(&before);
}

#[test]
fn raw_write_as_the_doer_changing_a_reviewers_verdict_is_refused() {
    let p = board_in("PLAN_CHANGES_REQUESTED", &["--reviewers", "alice,bob"]);
    let text = p.text();
    assert!(text.contains("plan_verdict: CHANGES_REQUESTED"), "{text}");
    let new = text.replacen(
        "plan_verdict: CHANGES_REQUESTED",
        "plan_verdict: APPROVED",
        1,
    );
    let new = set_top(&new, "phase", "PLAN_APPROVED");
    let before = p.b.read();
    let out = raw_write_as(&p, &new, &["--as", "doer"]);
    out.code(6).mentions_any(&["verdict", "alice"]);
    p.b.assert_untouched(&before);
}

#[test]
fn raw_write_removing_or_rewriting_a_body_line_is_refused() {
    let p = board_in("PLANNING_SUBMITTED", &["--reviewers", "alice,bob"]);
    let text = p.text();
    let before = p.b.read();
    // rewrite the plan artifact's note
    assert!(text.contains("p1"), "{text}");
    let idx = text.rfind("p1").unwrap();
    let rewritten = format!("{}P-ONE{}", &text[..idx], &text[idx + 2..]);
    raw_write_as(&p, &rewritten, &["--as", "doer"]).code(6);
    p.b.assert_untouched(&before);
    // remove the Goal heading line
    let removed = text.replacen("## Evidence\n", "", 1);
    assert_ne!(removed, text);
    raw_write_as(&p, &removed, &["--as", "alice"]).code(6);
    p.b.assert_untouched(&before);
    // appending is fine for the doer
    let appended = format!("{text}\nextra line\n");
    raw_write_as(&p, &appended, &["--as", "doer"]).code(0);
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
fn write_with_stale_hash_exits_3_and_leaves_file_untouched() {
    let b = Board::minimal();
    let stale = sha256_hex(changed("someone else's version"));
    let out = b.write_expect(changed("mine"), &stale, &["--operation", "test"]);
    out.code(3)
        .mentions_any(&["stale", "changed", "sha", "hash"]);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
    b.write_expect(changed("mine"), &stale, &["--json"])
        .json_error(3);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn write_with_current_hash_replaces_the_file_exactly_and_reports_both_hashes() {
    let b = Board::minimal();
    let new = changed("v2");
    let out = b.write_expect(
        &new,
        &sha256_hex(MINIMAL),
        &["--operation", "edit", "--agent", "doer", "--json"],
    );
    out.code(0);
    assert_bytes_eq(
        &b.content(),
        new.as_bytes(),
        "the file must equal the content",
    );
    let j = out.json();
    assert_eq!(j["schema"], 1, "{}", out.report());
    assert_eq!(j["old_sha256"], sha256_hex(MINIMAL), "{}", out.report());
    assert_eq!(j["new_sha256"], b.sha(), "{}", out.report());
    assert_eq!(j["phase"], "DRAFT", "{}", out.report());
    // the lock file is never deleted; nothing else is left behind
    assert!(
        b.dir.path().join("board.md.lock").is_file(),
        "the sidecar lock file stays"
    );
    b.assert_clean_dir(&[]);

    // chained: the new hash is what the next writer must present
    let newer = format!("{new}\n(v3)\n");
    let newer_kept = keep_journal(&newer, &b.read());
    b.write_expect(&newer_kept, &sha256_hex(MINIMAL), &[])
        .code(3);
    b.write_expect(&newer_kept, &b.sha(), &[]).code(0);
    assert_bytes_eq(
        &b.content(),
        newer.as_bytes(),
        "the file must equal the content",
    );
    pair(["validate", b.p()]).code(0);
}

#[test]
fn write_with_invalid_content_exits_5_and_leaves_file_untouched() {
    let b = Board::minimal();
    let bad = set_top(MINIMAL, "analysis_revision", "-7");
    let out = b.write_expect(&bad, &sha256_hex(MINIMAL), &[]);
    out.code(5).mentions(&["analysis_revision"]);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn write_checks_the_hash_before_accepting_even_identical_content() {
    // writing the same bytes with a wrong hash is still stale
    let b = Board::minimal();
    b.write_expect(MINIMAL, &"f".repeat(64), &[]).code(3);
    b.assert_untouched(MINIMAL.as_bytes());
    // and with the right hash it succeeds, leaving identical bytes
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &[]).code(0);
    assert_bytes_eq(
        &b.content(),
        MINIMAL.as_bytes(),
        "identical content, and its record",
    );
}

#[test]
fn write_accepts_path_flag_instead_of_the_positional_board() {
    let b = Board::minimal();
    let new = changed("via --path");
    let f = b.aux_file("c.md", &new);
    pair([
        "write",
        "--path",
        b.p(),
        "--content-file",
        f.to_str().unwrap(),
        "--expect-sha256",
        sha256_hex(MINIMAL).as_str(),
        "--operation",
        "legacy-helper",
    ])
    .code(0);
    assert_bytes_eq(
        &b.content(),
        new.as_bytes(),
        "the file must equal the content",
    );
}

#[test]
fn write_reads_the_content_from_stdin_when_content_file_is_dash() {
    let b = Board::minimal();
    let new = changed("from stdin");
    let out = pair_stdin(
        [
            "write",
            b.p(),
            "--content-file",
            "-",
            "--expect-sha256",
            sha256_hex(MINIMAL).as_str(),
            "--json",
        ],
        new.clone(),
    );
    out.code(0);
    assert_eq!(out.json()["new_sha256"], b.sha(), "{}", out.report());
    assert_bytes_eq(&b.content(), new.as_bytes(), "the file must equal stdin");
    b.assert_clean_dir(&[]);
}

#[test]
fn write_create_if_missing_creates_a_new_board_with_exactly_the_content() {
    let b = Board::absent();
    let out = b.write_create(MINIMAL, &["--operation", "create", "--json"]);
    out.code(0);
    assert_eq!(out.json()["new_sha256"], b.sha(), "{}", out.report());
    assert_eq!(out.json()["phase"], "DRAFT", "{}", out.report());
    assert_bytes_eq(
        &b.content(),
        MINIMAL.as_bytes(),
        "the new file must equal the content",
    );
    b.assert_clean_dir(&[]);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn write_create_if_missing_on_an_existing_file_exits_7_and_leaves_it_untouched() {
    let b = Board::minimal();
    b.write_create(changed("intruder"), &[]).code(7);
    b.assert_untouched(MINIMAL.as_bytes());
    b.write_create(changed("intruder"), &["--json"])
        .json_error(7);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn write_to_a_missing_file_without_create_if_missing_exits_7_and_creates_nothing() {
    let b = Board::absent();
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &[]).code(7);
    assert!(!b.path.exists(), "the board must not be created");
    b.assert_clean_dir(&[]);
}

#[test]
fn raw_write_onto_a_stopped_board_is_refused_with_exit_6_and_leaves_it_untouched() {
    // SPEC §3: on a terminal blackboard every write is refused (exit 6) except unblock, stop
    // and note in BLOCKED and the doer's COMMITTED->MERGED->CLEANED_UP advances.
    let stopped = set_top(MINIMAL, "phase", "STOPPED");
    let b = Board::new(&stopped);
    // reviving it
    b.write_expect(MINIMAL, &sha256_hex(&stopped), &[]).code(6);
    b.assert_untouched(stopped.as_bytes());
    // editing its body
    let edited = format!("{stopped}\nDo the thing after all.\n");
    b.write_expect(&edited, &sha256_hex(&stopped), &["--json"])
        .json_error(6);
    b.assert_untouched(stopped.as_bytes());
    b.assert_clean_dir(&[]);
}

#[test]
fn raw_write_that_jumps_phases_illegally_is_refused_with_exit_6() {
    // DRAFT -> CODE_SUBMITTED is not a transition of SPEC §3.1, even though the new content is
    // itself a valid blackboard; a raw write (no --repair) checks the transition (§6 step 5).
    let jump = set_top(
        &set_top(
            &set_top(
                &set_top(
                    &set_top(MINIMAL, "phase", "CODE_SUBMITTED"),
                    "no_review",
                    "true",
                ),
                "plan_revision",
                "1",
            ),
            "code_review_round",
            "1",
        ),
        "worktree",
        "/abs/wt",
    );
    let check = Board::new(agreeing(&jump));
    pair(["validate", check.p()]).code(0);

    let b = Board::minimal();
    let out = b.write_expect(&jump, &sha256_hex(MINIMAL), &[]);
    out.code(6).mentions(&["CODE_SUBMITTED"]);
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
    // Named as the doer, the change is attributable but still not a transition.
    let out = b.write_expect(&jump, &sha256_hex(MINIMAL), &["--as", "doer"]);
    out.code(6).mentions(&["CODE_SUBMITTED", "no transition"]);
    b.assert_untouched(MINIMAL.as_bytes());
}
