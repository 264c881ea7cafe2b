//! Malformed and borderline blackboards: every malformed board is rejected by every command with a
//! useful message, nothing hangs or panics, and no file is modified by a failed command; the
//! catalogue under `tests/fixtures/` and a few generated boards too big to keep.

use crate::common::env::Env;
use crate::common::reads::assert_accepted_by_all_readers;
use crate::common::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What an invalid blackboard must produce.
struct Bad {
    content: Vec<u8>,
    /// every word must appear in the output (case-insensitive)
    all: &'static [&'static str],
    /// at least one of these must appear (when non-empty)
    any: &'static [&'static str],
    /// when non-empty, the output must say `line N` for one of these
    lines: Vec<usize>,
    /// the problem is in the frontmatter, so `poll` (which reads only the frontmatter) sees it
    in_frontmatter: bool,
}

impl Bad {
    fn new(content: impl Into<Vec<u8>>, all: &'static [&'static str]) -> Bad {
        Bad {
            content: content.into(),
            all,
            any: &[],
            lines: vec![],
            in_frontmatter: true,
        }
    }
    fn any(mut self, any: &'static [&'static str]) -> Bad {
        self.any = any;
        self
    }
    fn lines(mut self, lines: Vec<usize>) -> Bad {
        self.lines = lines;
        self
    }
    fn body_only(mut self) -> Bad {
        self.in_frontmatter = false;
        self
    }

    #[track_caller]
    fn check_message(&self, out: &Out, with_lines: bool) {
        out.mentions(self.all);
        if !self.any.is_empty() {
            out.mentions_any(self.any);
        }
        if with_lines && !self.lines.is_empty() {
            out.mentions_line_any(&self.lines);
        }
    }
}

/// Runs validate (human + JSON), status (human + JSON), poll, and three kinds of raw write
/// against the bad content, asserting exit 5 (3 allowed for a stale write onto a bad file),
/// useful messages, and that no file is ever touched.
#[track_caller]
fn check_invalid(bad: Bad) {
    let content = bad.content.clone();
    let b = Board::new(&content);

    // validate, human
    let out = pair(["validate", b.p()]);
    out.code(5).mentions(&["board.md"]);
    bad.check_message(&out, true);
    b.assert_untouched(&content);

    // validate, JSON
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    let j = out.json();
    assert_eq!(j["schema"], 1, "{}", out.report());
    assert_eq!(j["valid"], false, "{}", out.report());
    let f = &j["files"][0];
    assert_eq!(f["valid"], false, "{}", out.report());
    assert!(
        f["path"].as_str().unwrap_or_default().ends_with("board.md"),
        "{}",
        out.report()
    );
    let errors = f["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("errors array\n{}", out.report()));
    assert!(!errors.is_empty(), "{}", out.report());
    for e in errors {
        assert!(
            e.get("field").is_some(),
            "each error has `field`\n{}",
            out.report()
        );
        assert!(
            e.get("line").is_some(),
            "each error has `line`\n{}",
            out.report()
        );
        assert!(
            e["message"].is_string(),
            "each error has a `message`\n{}",
            out.report()
        );
    }
    let errors_text = serde_json::to_string(errors).unwrap().to_lowercase();
    for w in bad.all {
        assert!(
            errors_text.contains(&w.to_lowercase()),
            "JSON errors must mention {w:?}\n{}",
            out.report()
        );
    }
    if !bad.any.is_empty() {
        assert!(
            bad.any
                .iter()
                .any(|w| errors_text.contains(&w.to_lowercase())),
            "JSON errors must mention one of {:?}\n{}",
            bad.any,
            out.report()
        );
    }
    if !bad.lines.is_empty() {
        assert!(
            errors.iter().any(|e| e["line"]
                .as_u64()
                .is_some_and(|l| bad.lines.contains(&(l as usize)))),
            "some JSON error must carry `line` in {:?}\n{}",
            bad.lines,
            out.report()
        );
    }
    b.assert_untouched(&content);

    // status
    let out = pair(["status", b.p()]);
    out.code(5);
    bad.check_message(&out, true);
    pair(["status", b.p(), "--json"]).json_error(5);
    b.assert_untouched(&content);

    // poll reads the frontmatter only
    if bad.in_frontmatter {
        let out = pair(["poll", b.p(), "--agent", "doer"]);
        out.code(5);
        bad.check_message(&out, true);
        pair(["poll", b.p(), "--agent", "doer", "--json"]).json_error(5);
        b.assert_untouched(&content);
    }

    // a raw write onto the bad file with a stale hash: refused, untouched
    let out = b.write_expect(MINIMAL, &sha256_hex(b"something else"), &[]);
    out.code_in(&[3, 5]);
    b.assert_untouched(&content);
    b.assert_clean_dir(&[]);

    // a raw write of bad content onto the bad file with its right hash: refused, untouched
    let out = b.write_expect(&content, &sha256_hex(&content), &[]);
    out.code(5);
    b.assert_untouched(&content);
    b.assert_clean_dir(&[]);

    // a raw write whose content is the bad input, onto a valid board: 5, untouched
    let good = Board::minimal();
    let out = good.write_expect(&content, &sha256_hex(MINIMAL), &[]);
    out.code(5);
    bad.check_message(&out, false);
    good.assert_untouched(MINIMAL.as_bytes());
    good.assert_clean_dir(&[]);
    let out = good.write_expect(&content, &sha256_hex(MINIMAL), &["--json"]);
    out.json_error(5);
    good.assert_untouched(MINIMAL.as_bytes());
    good.assert_clean_dir(&[]);

    // --create-if-missing with bad content creates nothing
    let none = Board::absent();
    let out = none.write_create(&content, &[]);
    out.code(5);
    assert!(
        !none.path.exists(),
        "invalid content must not create the board\n{}",
        out.report()
    );
    none.assert_clean_dir(&[]);
}

/// The valid variant of a broken board: the same frontmatter with the body entries it implies
/// ([`agreeing`]), so only the change under test makes the other variant invalid.
#[track_caller]
fn assert_valid(content: &str) {
    let content = &agreeing(content);
    let b = Board::new(content);
    let out = pair(["validate", b.p()]);
    assert_eq!(
        out.code,
        Some(0),
        "test control: this variant is expected to be VALID\n{}\n{content}",
        out.report()
    );
}

/// A reviewer `alice` (required) plus the given top-level settings and alice overrides.
fn with_alice(top: &[(&str, &str)], alice: &[(&str, &str)]) -> String {
    let mut s = insert_before_closing(MINIMAL, &agent_block("alice", "reviewer", "IDLE", alice));
    s = set_top(&s, "required_reviewers", "[alice]");
    for (k, v) in top {
        s = set_top(&s, k, v);
    }
    s
}

#[test]
fn non_utf8_frontmatter_is_invalid_and_says_utf8() {
    let mut bytes = Vec::new();
    for line in MINIMAL.split_inclusive('\n') {
        if line == "work_type: feature\n" {
            bytes.extend_from_slice(b"work_type: feat\xff\xfeure\n");
        } else {
            bytes.extend_from_slice(line.as_bytes());
        }
    }
    check_invalid(Bad::new(bytes, &[]).any(&["utf-8", "utf8"]));
}

#[test]
fn binary_garbage_is_invalid_and_names_the_problem() {
    let mut x: u32 = 0x1234_5678;
    let garbage: Vec<u8> = (0..4096)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i % 97 == 0 { 0 } else { (x >> 24) as u8 }
        })
        .collect();
    assert_ne!(&garbage[..3], b"---");
    check_invalid(Bad::new(garbage, &[]).any(&["frontmatter", "utf-8", "utf8"]));
}

#[test]
fn file_without_frontmatter_is_invalid_and_says_frontmatter() {
    check_invalid(Bad::new(
        "# Blackboard\n\n## Goal\n\nDo the thing.\n",
        &["frontmatter"],
    ));
}

#[test]
fn empty_file_is_invalid_and_says_frontmatter() {
    check_invalid(Bad::new("", &["frontmatter"]));
}

#[test]
fn frontmatter_without_closing_delimiter_is_invalid() {
    let content = MINIMAL.replacen("\n---\n# Blackboard", "\n# Blackboard", 1);
    // only the opening delimiter is left
    assert_eq!(content.matches("---").count(), 1);
    check_invalid(Bad::new(content, &["frontmatter"]));
}

#[test]
fn yaml_list_instead_of_mapping_is_invalid_and_says_mapping() {
    check_invalid(Bad::new(
        "---\n- phase\n- DRAFT\n---\n# Blackboard\n",
        &["mapping"],
    ));
}

#[test]
fn yaml_scalar_instead_of_mapping_is_invalid_and_says_mapping() {
    check_invalid(Bad::new(
        "---\njust a string\n---\n# Blackboard\n",
        &["mapping"],
    ));
}

#[test]
fn yaml_syntax_error_is_invalid_and_names_its_line() {
    let content = replace_line(MINIMAL, "work_type: feature", "work_type: feature: oops");
    let line = line_no(&content, "work_type: feature: oops");
    check_invalid(
        Bad::new(content, &[])
            .any(&["yaml", "syntax", "parse", "mapping values"])
            .lines(vec![line]),
    );
}

#[test]
fn yaml_alias_bomb_is_refused_quickly_and_says_alias() {
    let mut bomb = String::from(
        "lol0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10 {
        let p = i - 1;
        bomb.push_str(&format!(
            "lol{i}: &a{i} [*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p}]\n"
        ));
    }
    let content = insert_before_closing(MINIMAL, &bomb);
    check_invalid(Bad::new(content, &[]).any(&["alias", "anchor"]));
}

#[test]
fn duplicate_top_level_key_is_invalid_and_says_duplicate() {
    let content = replace_line(
        MINIMAL,
        "work_type: feature",
        "work_type: feature\nyolo: true",
    );
    let lines = line_nos(&content, "yolo: false")
        .into_iter()
        .chain(line_nos(&content, "yolo: true"))
        .collect();
    check_invalid(Bad::new(content, &["duplicate", "yolo"]).lines(lines));
}

#[test]
fn duplicate_agent_key_is_invalid_and_says_duplicate() {
    let content = replace_line(
        MINIMAL,
        "    role: doer",
        "    role: doer\n    role: reviewer",
    );
    check_invalid(Bad::new(content, &["duplicate", "role"]));
}

#[test]
fn frontmatter_over_one_mib_is_invalid() {
    let padding = format!("padding: \"{}\"\n", "x".repeat(1024 * 1024 + 100));
    let content = insert_before_closing(MINIMAL, &padding);
    check_invalid(Bad::new(content, &[]).any(&[
        "mib", "large", "size", "limit", "too big", "too long", "bytes", "exceeds",
    ]));
}

// ------------------------------------------------------------------------------------------
// wrong types and values

#[test]
fn yolo_as_a_string_is_invalid_and_names_yolo_and_its_line() {
    let content = set_top(MINIMAL, "yolo", "\"yes please\"");
    let line = line_no(&content, "yolo: \"yes please\"");
    check_invalid(Bad::new(content, &["yolo"]).lines(vec![line]));
}

#[test]
fn required_reviewers_as_a_number_is_invalid_and_names_the_field_and_line() {
    let content = set_top(MINIMAL, "required_reviewers", "5");
    let line = line_no(&content, "required_reviewers: 5");
    check_invalid(Bad::new(content, &["required_reviewers"]).lines(vec![line]));
}

#[test]
fn required_reviewers_with_duplicates_is_invalid() {
    let content = insert_before_closing(MINIMAL, &agent_block("alice", "reviewer", "IDLE", &[]));
    let content = set_top(&content, "required_reviewers", "[alice, alice]");
    check_invalid(Bad::new(content, &["required_reviewers"]));
}

#[test]
fn unknown_phase_is_invalid_and_names_phase_and_line_2() {
    let content = set_top(MINIMAL, "phase", "DONE");
    assert_eq!(line_no(&content, "phase: DONE"), 2);
    check_invalid(Bad::new(content, &["phase"]).lines(vec![2]));
}

#[test]
fn missing_phase_field_is_invalid_and_names_phase() {
    check_invalid(Bad::new(remove_top(MINIMAL, "phase"), &["phase"]));
}

#[test]
fn unknown_agent_status_is_invalid_and_names_agents_doer_status_and_line() {
    let content = replace_line(MINIMAL, "    status: DRAFT", "    status: SLEEPING");
    let line = line_no(&content, "    status: SLEEPING");
    check_invalid(Bad::new(content, &["agents.doer.status"]).lines(vec![line]));
}

#[test]
fn unknown_agent_status_of_a_reviewer_names_agents_alice_status() {
    let content = insert_before_closing(MINIMAL, &agent_block("alice", "reviewer", "NAPPING", &[]));
    let line = line_no(&content, "    status: NAPPING");
    check_invalid(Bad::new(content, &["agents.alice.status"]).lines(vec![line]));
}

#[test]
fn unknown_agent_role_is_invalid_and_names_agents_alice_role() {
    let content = insert_before_closing(MINIMAL, &agent_block("alice", "boss", "IDLE", &[]));
    check_invalid(Bad::new(content, &["agents.alice.role"]));
}

#[test]
fn unknown_verdict_value_is_invalid_and_names_the_verdict_field() {
    let content = with_alice(
        &[("phase", "PLANNING"), ("plan_revision", "1")],
        &[("reviewed_plan_revision", "1"), ("plan_verdict", "MAYBE")],
    );
    check_invalid(Bad::new(content, &["agents.alice.plan_verdict"]));
}

#[test]
fn negative_counter_is_invalid_and_names_it_and_its_line() {
    let content = set_top(MINIMAL, "plan_revision", "-1");
    let line = line_no(&content, "plan_revision: -1");
    check_invalid(Bad::new(content, &["plan_revision"]).lines(vec![line]));
}

#[test]
fn string_counter_is_invalid_and_names_it_and_its_line() {
    let content = set_top(MINIMAL, "plan_revision", "'1'");
    let line = line_no(&content, "plan_revision: '1'");
    check_invalid(Bad::new(content, &["plan_revision"]).lines(vec![line]));
}

#[test]
fn analysis_revision_as_float_is_invalid_and_names_it() {
    let content = set_top(MINIMAL, "analysis_revision", "1.5");
    let line = line_no(&content, "analysis_revision: 1.5");
    check_invalid(Bad::new(content, &["analysis_revision"]).lines(vec![line]));
}

#[test]
fn bad_timestamp_is_invalid_and_names_phase_updated_at_and_line() {
    let content = set_top(MINIMAL, "phase_updated_at", "\"yesterday\"");
    let line = line_no(&content, "phase_updated_at: \"yesterday\"");
    check_invalid(Bad::new(content, &["phase_updated_at"]).lines(vec![line]));
}

#[test]
fn non_utc_timestamp_is_invalid_and_names_phase_updated_at() {
    let content = set_top(MINIMAL, "phase_updated_at", "\"2026-01-01T02:00:00+02:00\"");
    check_invalid(Bad::new(content, &["phase_updated_at"]));
}

#[test]
fn bad_last_seen_timestamp_names_agents_doer_last_seen() {
    let content = replace_line(
        MINIMAL,
        "    last_seen: null",
        "    last_seen: \"noon-ish\"",
    );
    check_invalid(Bad::new(content, &["agents.doer.last_seen"]));
}

#[test]
fn relative_worktree_in_coding_is_invalid_and_names_worktree() {
    let base = set_top(&set_top(MINIMAL, "phase", "CODING"), "plan_revision", "1");
    assert_valid(&set_top(&base, "worktree", "/abs/path/wt"));
    let content = set_top(&base, "worktree", "rel/path");
    let line = line_no(&content, "worktree: rel/path");
    check_invalid(Bad::new(content, &["worktree"]).lines(vec![line]));
}

#[test]
fn coding_without_worktree_is_invalid_and_names_worktree() {
    let content = set_top(&set_top(MINIMAL, "phase", "CODING"), "plan_revision", "1");
    check_invalid(Bad::new(content, &["worktree"]));
}

#[test]
fn conflict_markers_in_the_body_are_invalid_and_say_conflict() {
    let content = MINIMAL.replace(
        "Do the thing.\n",
        "<<<<<<< HEAD\nDo the thing.\n=======\nDo another thing.\n>>>>>>> other-branch\n",
    );
    let line = line_no(&content, "<<<<<<< HEAD");
    check_invalid(
        Bad::new(content, &["conflict"])
            .lines(vec![line])
            .body_only(),
    );
}

#[test]
fn conflict_markers_in_the_frontmatter_are_invalid_and_say_conflict() {
    let content = replace_line(
        MINIMAL,
        "plan_revision: 0",
        "<<<<<<< HEAD\nplan_revision: 0\n=======\nplan_revision: 1\n>>>>>>> other-branch",
    );
    check_invalid(Bad::new(content, &["conflict"]));
}

// ------------------------------------------------------------------------------------------
// invariants (SPEC §2.2)

#[test]
fn two_doers_are_invalid_and_the_error_says_doer() {
    let one = replace_line(MINIMAL, "  doer:", "  alice:");
    assert_valid(&one);
    let content = insert_before_closing(&one, &agent_block("bob", "doer", "IDLE", &[]));
    check_invalid(Bad::new(content, &["doer"]));
}

#[test]
fn zero_doers_are_invalid_and_the_error_says_doer() {
    let content = replace_line(
        &replace_line(MINIMAL, "  doer:", "  alice:"),
        "    role: doer",
        "    role: reviewer",
    );
    check_invalid(Bad::new(content, &["doer"]));
}

#[test]
fn reviewed_plan_revision_above_plan_revision_is_invalid() {
    let top = [("phase", "PLANNING"), ("plan_revision", "1")];
    assert_valid(&with_alice(
        &top,
        &[
            ("reviewed_plan_revision", "1"),
            ("plan_verdict", "CHANGES_REQUESTED"),
        ],
    ));
    let content = with_alice(
        &top,
        &[
            ("reviewed_plan_revision", "2"),
            ("plan_verdict", "CHANGES_REQUESTED"),
        ],
    );
    let lines = vec![
        line_no(&content, "    reviewed_plan_revision: 2"),
        line_no(&content, "plan_revision: 1"),
    ];
    check_invalid(Bad::new(content, &["reviewed_plan_revision"]).lines(lines));
}

#[test]
fn verdict_without_its_reviewed_counter_is_invalid() {
    let content = with_alice(
        &[("phase", "PLANNING"), ("plan_revision", "1")],
        &[
            ("reviewed_plan_revision", "null"),
            ("plan_verdict", "APPROVED"),
        ],
    );
    check_invalid(Bad::new(content, &[]).any(&["plan_verdict", "reviewed_plan_revision"]));
}

#[test]
fn reviewed_counter_without_its_verdict_is_invalid() {
    let content = with_alice(
        &[("phase", "PLANNING"), ("plan_revision", "1")],
        &[("reviewed_plan_revision", "1"), ("plan_verdict", "null")],
    );
    check_invalid(Bad::new(content, &[]).any(&["plan_verdict", "reviewed_plan_revision"]));
}

#[test]
fn planning_submitted_with_plan_revision_0_is_invalid() {
    assert_valid(&with_alice(
        &[("phase", "PLANNING_SUBMITTED"), ("plan_revision", "1")],
        &[],
    ));
    let content = with_alice(&[("phase", "PLANNING_SUBMITTED")], &[]);
    let lines = vec![2, line_no(&content, "plan_revision: 0")];
    check_invalid(Bad::new(content, &["plan_revision"]).lines(lines));
}

#[test]
fn followup_review_with_code_review_round_1_is_invalid() {
    let top = [
        ("phase", "FOLLOWUP_REVIEW"),
        ("plan_revision", "1"),
        ("worktree", "/abs/wt"),
    ];
    let mut ok_top = top.to_vec();
    ok_top.push(("code_review_round", "2"));
    assert_valid(&with_alice(&ok_top, &[]));
    let mut bad_top = top.to_vec();
    bad_top.push(("code_review_round", "1"));
    check_invalid(Bad::new(with_alice(&bad_top, &[]), &["code_review_round"]));
}

#[test]
fn reviewable_phase_without_required_reviewers_needs_no_review() {
    let base = set_top(
        &set_top(MINIMAL, "phase", "PLANNING_SUBMITTED"),
        "plan_revision",
        "1",
    );
    assert_valid(&set_top(&base, "no_review", "true"));
    check_invalid(Bad::new(base, &[]).any(&["no_review", "required_reviewers"]));
}

#[test]
fn blocked_without_blocked_from_is_invalid_and_names_blocked_from() {
    let base = set_top(MINIMAL, "phase", "BLOCKED");
    assert_valid(&set_top(&base, "blocked_from", "DRAFT"));
    check_invalid(Bad::new(base, &["blocked_from"]));
}

#[test]
fn blocked_from_that_is_not_a_phase_is_invalid() {
    let content = set_top(
        &set_top(MINIMAL, "phase", "BLOCKED"),
        "blocked_from",
        "NOWHERE",
    );
    check_invalid(Bad::new(content, &["blocked_from"]));
}

#[test]
fn invalid_agent_id_is_invalid_and_names_the_id_and_its_line() {
    let content = insert_before_closing(
        MINIMAL,
        &agent_block("\"bad id!\"", "reviewer", "IDLE", &[]),
    );
    let line = line_no(&content, "  \"bad id!\":");
    check_invalid(Bad::new(content, &["bad id!"]).lines(vec![line]));
}

#[test]
fn agent_id_longer_than_64_chars_is_invalid() {
    let id: &'static str = Box::leak("a".repeat(65).into_boxed_str());
    let content = insert_before_closing(MINIMAL, &agent_block(id, "reviewer", "IDLE", &[]));
    assert_valid(&insert_before_closing(
        MINIMAL,
        &agent_block(&"a".repeat(64), "reviewer", "IDLE", &[]),
    ));
    let ids: &'static [&'static str] = Box::leak(vec![id].into_boxed_slice());
    check_invalid(Bad::new(content, ids));
}

// ------------------------------------------------------------------------------------------
// unknown keys are kept and only warned about

#[test]
fn unknown_keys_are_warnings_not_errors_and_survive_a_raw_write() {
    let content = insert_before_closing(
        &replace_line(
            MINIMAL,
            "    code_verdict: null",
            "    code_verdict: null\n    mood: cheerful",
        ),
        "future_field: 42\n",
    );
    let b = Board::new(&content);
    let out = pair(["validate", b.p()]);
    out.code(0).mentions(&["future_field", "mood"]);
    let out = pair(["validate", b.p(), "--json"]);
    out.code(0);
    let j = out.json();
    assert_eq!(j["valid"], true, "{}", out.report());
    assert_eq!(j["files"][0]["valid"], true, "{}", out.report());
    assert_eq!(
        j["files"][0]["errors"].as_array().map(|a| a.len()),
        Some(0),
        "{}",
        out.report()
    );
    let warnings = serde_json::to_string(&j["files"][0]["warnings"]).unwrap();
    assert!(
        warnings.contains("future_field"),
        "unknown key must be warned about\n{}",
        out.report()
    );
    assert!(
        warnings.contains("mood"),
        "unknown agent key must be warned about\n{}",
        out.report()
    );
    pair(["status", b.p()]).code(0);
    pair(["poll", b.p(), "--agent", "doer"]).code(0);

    // the body is append-only, even for a plain raw write
    let rewritten = content.replace("Do the thing.", "Do the thing, carefully.");
    b.write_expect(&rewritten, &sha256_hex(&content), &[])
        .code(6);
    b.assert_untouched(content.as_bytes());

    // a raw write round trip keeps the unknown keys
    let new = format!("{content}\nMore detail.\n");
    b.write_expect(&new, &sha256_hex(&content), &[]).code(0);
    let stored = b.read_string();
    assert_eq!(String::from_utf8(b.content()).unwrap(), new);
    assert!(stored.contains("future_field: 42") && stored.contains("mood: cheerful"));
    pair(["validate", b.p()]).code(0);
}

// ------------------------------------------------------------------------------------------
// resource exhaustion and odd files

#[test]
fn deeply_nested_yaml_sequence_is_refused_without_crashing() {
    let n = 100_000;
    let deep = format!("deep: {}{}\n", "[".repeat(n), "]".repeat(n));
    check_invalid(Bad::new(insert_before_closing(MINIMAL, &deep), &[]));
}

#[test]
fn deeply_nested_yaml_mapping_is_refused_without_crashing() {
    let n = 50_000;
    let deep = format!("deepmap: {}1{}\n", "{a: ".repeat(n), "}".repeat(n));
    check_invalid(Bad::new(insert_before_closing(MINIMAL, &deep), &[]));
}

#[test]
fn a_small_alias_within_budget_is_accepted() {
    let content = insert_before_closing(MINIMAL, "x_note: &n hello\ny_note: *n\n");
    let b = Board::new(&content);
    pair(["validate", b.p()]).code(0);
    pair(["status", b.p()]).code(0);
    pair(["poll", b.p(), "--agent", "doer"]).code(0);
}

const T: Duration = Duration::from_secs(30);

struct Fixture {
    name: String,
    bytes: Vec<u8>,
    exit: i32,
    phrase: Option<String>,
    /// The problem is in the body (`part: body`), which `poll` does not read.
    body_only: bool,
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn load_fixtures() -> Vec<Fixture> {
    let dir = fixtures_dir();
    let mut out = Vec::new();
    let mut names: Vec<String> = dir_entries(&dir).into_iter().collect();
    names.sort();
    for n in &names {
        // `formats/`: boards of every format, checked by `formats.rs`.
        if dir.join(n).is_dir() {
            continue;
        }
        if let Some(stem) = n.strip_suffix(".expect") {
            assert!(
                names.contains(&format!("{stem}.md")),
                "{n} has no fixture {stem}.md"
            );
            continue;
        }
        let stem = n
            .strip_suffix(".md")
            .unwrap_or_else(|| panic!("unexpected file in tests/fixtures: {n}"));
        let expect = fs::read_to_string(dir.join(format!("{stem}.expect")))
            .unwrap_or_else(|e| panic!("{stem}.md needs a {stem}.expect: {e}"));
        let mut exit = None;
        let mut phrase = None;
        let mut body_only = false;
        for line in expect.lines() {
            if let Some(v) = line.strip_prefix("exit: ") {
                exit = Some(v.trim().parse().unwrap());
            } else if let Some(v) = line.strip_prefix("phrase: ") {
                phrase = Some(v.trim().to_string());
            } else if line.trim() == "part: body" {
                body_only = true;
            } else {
                assert!(
                    line.starts_with('#') || line.trim().is_empty(),
                    "{stem}.expect: unknown line {line:?}"
                );
            }
        }
        let exit = exit.unwrap_or_else(|| panic!("{stem}.expect has no `exit:` line"));
        assert!(
            exit == 0 || phrase.is_some(),
            "{stem}.expect: a refusal needs a `phrase:`"
        );
        out.push(Fixture {
            name: stem.to_string(),
            bytes: fs::read(dir.join(n)).unwrap(),
            exit,
            phrase,
            body_only,
        });
    }
    out
}

/// Runs the four commands on one fixture and checks the documented outcome.
#[track_caller]
fn check(f: &Fixture) {
    let ctx = format!("fixture {}", f.name);

    // validate: the expected exit code and key phrase
    let b = Board::new(&f.bytes);
    let out = pair_timeout(["validate", b.p()], T);
    out.not_timed_out();
    assert_eq!(out.code, Some(f.exit), "{ctx}: validate\n{}", out.report());
    if let Some(p) = &f.phrase {
        out.mentions(&[p]);
    }

    // poll reads only the frontmatter: no panic, no hang, and never "your turn" on a board
    // whose frontmatter is broken (a broken body is for validate and the writers to find)
    let out = pair_timeout(["poll", b.p(), "--agent", "doer"], T);
    out.not_timed_out();
    if f.exit != 0 && !f.body_only {
        assert_eq!(out.code, Some(f.exit), "{ctx}: poll\n{}", out.report());
    }

    // a semantic write onto it
    let out = pair_timeout(
        [
            "note",
            b.p(),
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "a note",
        ],
        T,
    );
    out.not_timed_out();
    if f.exit == 0 {
        out.code(0);
        pair(["validate", b.p()]).code(0);
    } else {
        assert_eq!(out.code, Some(f.exit), "{ctx}: note\n{}", out.report());
        out.mentions(&[f.phrase.as_deref().unwrap()]);
        b.assert_untouched(&f.bytes);
    }
    b.assert_clean_dir(&[]);

    // a raw write of it as the new content of a valid board
    let v = Board::minimal();
    let out = v.write_expect(&f.bytes, &sha256_hex(MINIMAL), &["--timeout", "10"]);
    out.not_timed_out();
    if f.exit == 0 {
        out.code(0);
        assert_bytes_eq(
            &v.content(),
            &f.bytes,
            "a raw write stores the bytes as given",
        );
    } else {
        assert_eq!(out.code, Some(f.exit), "{ctx}: write\n{}", out.report());
        out.mentions(&[f.phrase.as_deref().unwrap(), "nothing was written"]);
        v.assert_untouched(MINIMAL.as_bytes());
    }
    v.assert_clean_dir(&[]);
}

#[test]
fn every_fixture_in_the_catalogue_is_refused_as_documented_by_every_command() {
    let all = load_fixtures();
    assert!(
        all.len() >= 40,
        "the catalogue must hold at least 40 fixtures"
    );
    assert!(
        all.iter().filter(|f| f.exit != 0).count() >= 40,
        "at least 40 malformed ones"
    );
    for f in &all {
        check(f);
    }
    eprintln!("fixtures: {} checked", all.len());
}

#[test]
fn generated_frontmatter_over_one_mib_is_refused_by_every_command() {
    for (name, pad) in [
        (
            "one long value",
            format!("pad: \"{}\"\n", "x".repeat(1 << 20)),
        ),
        (
            "many short keys",
            (0..80_000).map(|i| format!("k{i:06}: 1234\n")).collect(),
        ),
    ] {
        let bytes = insert_before_closing(MINIMAL, &pad).into_bytes();
        assert!(bytes.len() > 1 << 20);
        check(&Fixture {
            name: format!("huge frontmatter ({name})"),
            bytes,
            exit: 5,
            phrase: Some("1 MiB".into()),
            body_only: false,
        });
    }
}

#[test]
fn generated_multi_megabyte_body_with_an_unclosed_fence_at_the_end_is_refused() {
    let mut body = String::from("\n## Evidence\n\n");
    while body.len() < 3 << 20 {
        body.push_str("- a long evidence line that fills the body of the blackboard\n");
    }
    body.push_str("```\nnever closed\n");
    check(&Fixture {
        name: "3 MiB body, fence unclosed at the end".into(),
        bytes: format!("{MINIMAL}{body}").into_bytes(),
        exit: 5,
        phrase: Some("code fence".into()),
        body_only: true,
    });
}

#[test]
fn a_valid_board_truncated_anywhere_inside_its_frontmatter_is_refused() {
    let board = minimal_with_reviewer("alice");
    let close = board.find("\n---\n").unwrap() + 1;
    let mut checked = 0;
    for cut in (0..close + 3).step_by(7) {
        let b = Board::new(&board.as_bytes()[..cut]);
        let out = pair_timeout(["validate", b.p()], T);
        out.code(5)
            .mentions_any(&["frontmatter", "not closed", "empty"]);
        checked += 1;
    }
    assert!(checked > 50);
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
