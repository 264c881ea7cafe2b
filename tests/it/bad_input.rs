//! Bad input: every malformed blackboard is rejected by every command with a useful message,
//! nothing hangs or panics, and no file is ever modified by a failed command.

use crate::common::*;
use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
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

// ------------------------------------------------------------------------------------------
// files that are not blackboards at all

#[test]
fn missing_board_exits_7_for_every_command_and_creates_no_board() {
    let b = Board::absent();
    pair(["validate", b.p()]).code(7).mentions(&["board.md"]);
    pair(["status", b.p()]).code(7);
    pair(["poll", b.p(), "--agent", "doer"]).code(7);
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &[]).code(7);
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &["--json"])
        .json_error(7);
    assert!(
        !b.path.exists(),
        "nothing may create the board without --create-if-missing"
    );
    b.assert_clean_dir(&[]);
}

#[test]
fn a_directory_as_board_fails_without_hanging_and_is_left_alone() {
    let b = Board::absent();
    fs::create_dir(&b.path).unwrap();
    let t = Duration::from_secs(10);
    pair_timeout(["status", b.p()], t).failed_without_hanging();
    pair_timeout(["poll", b.p(), "--agent", "doer"], t).failed_without_hanging();
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &[])
        .failed_without_hanging();
    b.write_create(MINIMAL, &[]).failed_without_hanging();
    // validate treats a directory as a tree to search; it must at least terminate
    pair_timeout(["validate", b.p()], t).not_timed_out();
    assert!(b.path.is_dir(), "the directory must still be a directory");
    assert!(
        dir_entries(&b.path).is_empty(),
        "nothing may be written inside the directory"
    );
    b.assert_clean_dir(&[]);
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo failed: {}", std::io::Error::last_os_error());
}

#[test]
fn a_fifo_as_board_is_refused_by_every_command_without_hanging() {
    let b = Board::absent();
    mkfifo(&b.path);
    let t = Duration::from_secs(10);
    let content = b.aux_file("c.md", MINIMAL);
    let c = content.to_str().unwrap();
    let sha = sha256_hex(MINIMAL);
    pair_timeout(["validate", b.p()], t).failed_without_hanging();
    pair_timeout(["status", b.p()], t).failed_without_hanging();
    pair_timeout(["poll", b.p(), "--agent", "doer"], t).failed_without_hanging();
    pair_timeout(
        [
            "write",
            b.p(),
            "--content-file",
            c,
            "--expect-sha256",
            sha.as_str(),
        ],
        t,
    )
    .failed_without_hanging();
    pair_timeout(
        ["write", b.p(), "--content-file", c, "--create-if-missing"],
        t,
    )
    .failed_without_hanging();
    let ft = fs::symlink_metadata(&b.path).unwrap().file_type();
    assert!(ft.is_fifo(), "the FIFO must not be replaced");
    b.assert_clean_dir(&[]);
}

#[test]
fn a_fifo_inside_a_validated_directory_does_not_hang_validate() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("good.md"), MINIMAL).unwrap();
    mkfifo(&dir.path().join("pipe.md"));
    let out = pair_timeout(
        ["validate", dir.path().to_str().unwrap()],
        Duration::from_secs(10),
    );
    out.not_timed_out();
    assert!(dir.path().join("pipe.md").exists());
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
// hostile lock sidecars and directories

#[test]
fn write_refuses_a_lock_file_that_is_a_symlink_and_touches_neither_target_nor_board() {
    let b = Board::minimal();
    let target = b.dir.path().join("target.txt");
    fs::write(&target, "precious lock target\n").unwrap();
    let lock = b.dir.path().join("board.md.lock");
    std::os::unix::fs::symlink("target.txt", &lock).unwrap();

    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    out.failed_without_hanging()
        .mentions_any(&["symlink", "symbolic"]);
    b.assert_untouched(MINIMAL.as_bytes());
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "precious lock target\n"
    );
    assert!(
        fs::symlink_metadata(&lock)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the symlink stays"
    );
    b.assert_clean_dir(&["target.txt"]);
}

#[test]
fn write_refuses_a_dangling_lock_symlink_and_does_not_create_its_target() {
    let b = Board::minimal();
    let lock = b.dir.path().join("board.md.lock");
    std::os::unix::fs::symlink("nowhere.txt", &lock).unwrap();
    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    out.failed_without_hanging();
    b.assert_untouched(MINIMAL.as_bytes());
    assert!(
        !b.dir.path().join("nowhere.txt").exists(),
        "the symlink target must not be created"
    );
    b.assert_clean_dir(&[]);
}

#[test]
fn write_refuses_an_owner_file_that_is_a_symlink_and_leaves_its_target_untouched() {
    let b = Board::minimal();
    let target = b.dir.path().join("owner-target.txt");
    fs::write(&target, "precious owner target\n").unwrap();
    let owner = b.dir.path().join("board.md.lock.owner.json");
    std::os::unix::fs::symlink("owner-target.txt", &owner).unwrap();

    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    out.failed_without_hanging();
    b.assert_untouched(MINIMAL.as_bytes());
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "precious owner target\n"
    );
    b.assert_clean_dir(&["owner-target.txt"]);
}

#[test]
fn write_fails_cleanly_when_the_lock_path_is_a_directory() {
    let b = Board::minimal();
    fs::create_dir(b.dir.path().join("board.md.lock")).unwrap();
    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    out.failed_without_hanging();
    assert_ne!(
        out.code,
        Some(2),
        "this is not lock contention\n{}",
        out.report()
    );
    b.assert_untouched(MINIMAL.as_bytes());
    b.assert_clean_dir(&[]);
}

/// Restores write permission on drop so the temp dir can be removed.
struct RestorePerms<'a>(&'a Path);
impl Drop for RestorePerms<'_> {
    fn drop(&mut self) {
        let _ = fs::set_permissions(self.0, fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn write_in_an_unwritable_directory_fails_cleanly_or_as_root_succeeds_cleanly() {
    let b = Board::minimal();
    let _restore = RestorePerms(b.dir.path());
    fs::set_permissions(b.dir.path(), fs::Permissions::from_mode(0o555)).unwrap();

    // reads work in a read-only directory, for everyone
    pair(["validate", b.p()]).code(0);
    pair(["status", b.p()]).code(0);
    pair(["poll", b.p(), "--agent", "doer"]).code(0);

    let new = format!("{MINIMAL}\nAppended.\n");
    let out = b.write_expect(&new, &sha256_hex(MINIMAL), &["--timeout", "2"]);
    if is_root() {
        // root ignores directory permissions: the write must then fully succeed
        out.code(0);
        assert_bytes_eq(
            &b.content(),
            new.as_bytes(),
            "root's write must store the content",
        );
    } else {
        out.failed_without_hanging();
        assert_ne!(
            out.code,
            Some(2),
            "permission denied is not lock contention\n{}",
            out.report()
        );
        b.assert_untouched(MINIMAL.as_bytes());
    }
    // in both cases: no temporary file left behind
    b.assert_clean_dir(&[]);
}

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

#[test]
fn a_symlink_loop_as_board_fails_without_hanging() {
    let b = Board::absent();
    std::os::unix::fs::symlink("board.md", &b.path).unwrap();
    let t = Duration::from_secs(10);
    pair_timeout(["validate", b.p()], t).failed_without_hanging();
    pair_timeout(["status", b.p()], t).failed_without_hanging();
    pair_timeout(["poll", b.p(), "--agent", "doer"], t).failed_without_hanging();
    b.write_expect(MINIMAL, &sha256_hex(MINIMAL), &["--timeout", "2"])
        .failed_without_hanging();
    b.write_create(MINIMAL, &["--timeout", "2"])
        .failed_without_hanging();
    assert!(
        fs::symlink_metadata(&b.path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_link(&b.path).unwrap(), Path::new("board.md"));
}
