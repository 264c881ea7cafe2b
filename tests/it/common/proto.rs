//! Helpers for the tests that drive a board through the protocol (`Proto`): phases, sections,
//! entries and the checks on what a write appended.
//!
//! A module of the integration-test binary (`tests/it/main.rs`), beside [`crate::common`].
//! Everything runs the real `pair` binary on real files in temp dirs; nothing here knows how
//! `src/` is built: expectations come from SPEC.md only.
#![allow(dead_code)]

use crate::common::*;
use predicates::prelude::*;
use serde_json::Value;
use std::fs;

pub const SHA_A: &str = "0123456789abcdef0123456789abcdef01234567";

/// SPEC §2.3 template order of the body sections.
pub const TEMPLATE_ORDER: [&str; 10] = [
    "Goal",
    "Evidence",
    "Root Cause Analysis",
    "Plan Revisions",
    "Plan Reviews",
    "Red Tests",
    "Implementation Notes",
    "Code Review Rounds",
    "Validation",
    "Decisions",
];

pub const TERMINAL: [&str; 5] = ["COMMITTED", "MERGED", "CLEANED_UP", "BLOCKED", "STOPPED"];

pub const REVIEWABLE: [&str; 9] = [
    "ANALYSIS_SUBMITTED",
    "REVIEWING_ANALYSIS",
    "PLANNING_SUBMITTED",
    "REVIEWING_PLAN",
    "RED_TEST_SUBMITTED",
    "REVIEWING_RED_TEST",
    "CODE_SUBMITTED",
    "REVIEWING_CODE",
    "FOLLOWUP_REVIEW",
];

pub const WORK: [&str; 13] = [
    "DRAFT",
    "ANALYZING",
    "ANALYSIS_CHANGES_REQUESTED",
    "ANALYSIS_APPROVED",
    "PLANNING",
    "PLAN_CHANGES_REQUESTED",
    "PLAN_APPROVED",
    "RED_TESTING",
    "RED_TEST_CHANGES_REQUESTED",
    "RED_TEST_APPROVED",
    "CODING",
    "CODE_CHANGES_REQUESTED",
    "READY_TO_COMMIT",
];

pub fn all_phases() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    v.extend(WORK);
    v.extend(REVIEWABLE);
    v.extend(TERMINAL);
    v
}

pub fn is_terminal(phase: &str) -> bool {
    TERMINAL.contains(&phase)
}

pub fn is_reviewable(phase: &str) -> bool {
    REVIEWABLE.contains(&phase)
}

/// The review target of a reviewable phase, as (poll `review.target`, counter key).
pub fn target_of(phase: &str) -> Option<(&'static str, &'static str)> {
    match phase {
        "ANALYSIS_SUBMITTED" | "REVIEWING_ANALYSIS" => Some(("analysis", "analysis_revision")),
        "PLANNING_SUBMITTED" | "REVIEWING_PLAN" => Some(("plan", "plan_revision")),
        "RED_TEST_SUBMITTED" | "REVIEWING_RED_TEST" => Some(("red_test", "red_test_round")),
        "CODE_SUBMITTED" | "REVIEWING_CODE" | "FOLLOWUP_REVIEW" => {
            Some(("code", "code_review_round"))
        }
        _ => None,
    }
}

/// The body section that receives a target's reviews (SPEC §2.3).
pub fn review_section(counter_key: &str) -> &'static str {
    match counter_key {
        "analysis_revision" => "Root Cause Analysis",
        "plan_revision" => "Plan Reviews",
        "red_test_round" => "Red Tests",
        _ => "Code Review Rounds",
    }
}

/// A blackboard driven by the real binary, with its doer id and an absolute path to a git
/// worktree with a staged and an unstaged change ([`git_worktree`]).
pub struct Proto {
    pub b: Board,
    pub doer: String,
    pub wt: String,
}

impl Proto {
    /// `pair init board.md ARGS...`; the doer is taken from `--doer` (default `doer`).
    #[track_caller]
    pub fn init(extra: &[&str]) -> Proto {
        let b = init_board(extra);
        let doer = extra
            .iter()
            .position(|a| *a == "--doer")
            .map(|i| extra[i + 1].to_string())
            .unwrap_or_else(|| "doer".to_string());
        // A real git worktree: `advance CODING --worktree` checks it, and code submissions pin
        // its staged and unstaged diffs.
        let wt_dir = b.aux.path().join("worktree");
        git_worktree(&wt_dir);
        let wt = wt_dir.to_str().unwrap().to_string();
        Proto { b, doer, wt }
    }

    pub fn p(&self) -> &str {
        self.b.p()
    }

    pub fn text(&self) -> String {
        self.b.read_string()
    }

    /// Builds `pair WORD BOARD --agent ACTOR REST...`; `{wt}` in REST is the absolute worktree.
    pub fn args(&self, actor: &str, words: &[&str]) -> Vec<String> {
        let mut v = vec![words[0].to_string(), self.p().to_string()];
        if !actor.is_empty() {
            v.push("--agent".into());
            v.push(actor.into());
        }
        for w in &words[1..] {
            v.push(w.replace("{wt}", &self.wt));
        }
        v
    }

    /// Runs a semantic command, whatever its outcome.
    #[track_caller]
    pub fn run(&self, actor: &str, words: &[&str]) -> Out {
        pair(self.args(actor, words))
    }

    /// Runs a semantic command with stdin.
    #[track_caller]
    pub fn run_stdin(&self, actor: &str, words: &[&str], stdin: &str) -> Out {
        pair_stdin(self.args(actor, words), stdin.as_bytes().to_vec())
    }

    /// A successful semantic write: exit 0, the file changed, `validate` accepts it, the actor's
    /// `last_seen` was set (and did not go backwards) and the old body survives (append-only).
    #[track_caller]
    pub fn ok(&self, actor: &str, words: &[&str]) -> Out {
        let before = self.text();
        let seen_before = self.last_seen(actor);
        let out = self.run(actor, words);
        out.code(0);
        self.after_success(actor, &before, seen_before, &out);
        out
    }

    #[track_caller]
    pub fn ok_stdin(&self, actor: &str, words: &[&str], stdin: &str) -> Out {
        let before = self.text();
        let seen_before = self.last_seen(actor);
        let out = self.run_stdin(actor, words, stdin);
        out.code(0);
        self.after_success(actor, &before, seen_before, &out);
        out
    }

    #[track_caller]
    fn after_success(&self, actor: &str, before: &str, seen_before: Option<String>, out: &Out) {
        let after = self.text();
        assert_ne!(
            before,
            after,
            "a successful semantic write must change the file\n{}",
            out.report()
        );
        self.assert_valid();
        let seen = self.last_seen(actor);
        assert!(
            seen.is_some(),
            "a successful write must set the acting agent's last_seen ({actor})\n{}\n{after}",
            out.report()
        );
        if let (Some(a), Some(b)) = (&seen_before, &seen) {
            assert!(
                b >= a,
                "last_seen of {actor} went backwards: {a} -> {b}\n{}",
                out.report()
            );
        }
        assert_body_append_only(before, &after, &out.report());
        assert_template_order(&after);
    }

    /// A successful write that must append one entry to the end of `section`, whose `###`
    /// heading names the actor, the counter (if given), the verdict (if given) and a UTC time.
    #[track_caller]
    pub fn ok_entry(
        &self,
        actor: &str,
        words: &[&str],
        section: &str,
        counter: Option<u64>,
        verdict: Option<&str>,
    ) -> Out {
        let before = self.text();
        let out = self.ok(actor, words);
        let after = self.text();
        assert_appended_entry(
            &before,
            &after,
            section,
            actor,
            counter,
            verdict,
            &out.report(),
        );
        out
    }

    #[track_caller]
    pub fn ok_entry_stdin(
        &self,
        actor: &str,
        words: &[&str],
        stdin: &str,
        section: &str,
        counter: Option<u64>,
    ) -> Out {
        let before = self.text();
        let out = self.ok_stdin(actor, words, stdin);
        let after = self.text();
        assert_appended_entry(
            &before,
            &after,
            section,
            actor,
            counter,
            None,
            &out.report(),
        );
        out
    }

    /// A refused command: the given exit code and the file byte-for-byte unchanged.
    #[track_caller]
    pub fn refused(&self, actor: &str, words: &[&str], code: i32) -> Out {
        let before = self.b.read();
        let out = self.run(actor, words);
        out.code(code);
        self.b.assert_untouched(&before);
        out
    }

    /// A refused command with any of the given exit codes, file unchanged.
    #[track_caller]
    pub fn refused_any(&self, actor: &str, words: &[&str], codes: &[i32]) -> Out {
        let before = self.b.read();
        let out = self.run(actor, words);
        out.code_in(codes);
        self.b.assert_untouched(&before);
        out
    }

    #[track_caller]
    pub fn assert_valid(&self) {
        let v = pair(["validate", self.p()]);
        assert_eq!(
            v.code,
            Some(0),
            "`pair validate` must accept the blackboard after every successful write\n{}\n--- file ---\n{}",
            v.report(),
            self.text()
        );
    }

    /// `pair status BOARD --json` (exit 0).
    #[track_caller]
    pub fn status(&self) -> Value {
        let s = pair(["status", self.p(), "--json"]);
        s.code(0);
        let v = s.json();
        assert_eq!(v["schema"], 1, "{}", s.report());
        v
    }

    #[track_caller]
    pub fn phase(&self) -> String {
        self.status()["phase"]
            .as_str()
            .expect("status.phase must be a string")
            .to_string()
    }

    #[track_caller]
    pub fn assert_phase(&self, expected: &str) {
        let got = self.phase();
        assert_eq!(got, expected, "phase\n--- file ---\n{}", self.text());
    }

    /// (analysis_revision, plan_revision, red_test_round, code_review_round) from status JSON.
    #[track_caller]
    pub fn counters(&self) -> [u64; 4] {
        let s = self.status();
        let c = &s["counters"];
        let g = |k: &str| {
            c[k].as_u64()
                .unwrap_or_else(|| panic!("counters.{k} must be an integer: {s}"))
        };
        [
            g("analysis_revision"),
            g("plan_revision"),
            g("red_test_round"),
            g("code_review_round"),
        ]
    }

    #[track_caller]
    pub fn counter(&self, key: &str) -> u64 {
        let s = self.status();
        s["counters"][key]
            .as_u64()
            .unwrap_or_else(|| panic!("counters.{key} must be an integer: {s}"))
    }

    /// Phase and counters together.
    #[track_caller]
    pub fn assert_state(&self, phase: &str, counters: [u64; 4]) {
        self.assert_phase(phase);
        assert_eq!(
            self.counters(),
            counters,
            "counters [analysis, plan, red_test, code] in {phase}\n--- file ---\n{}",
            self.text()
        );
    }

    pub fn last_seen(&self, agent: &str) -> Option<String> {
        let s = pair(["status", self.p(), "--json"]);
        if s.code != Some(0) {
            return None;
        }
        s.json()["agents"][agent]["last_seen"]
            .as_str()
            .map(|x| x.to_string())
    }

    /// `pair poll BOARD --agent ID --json` → (process result, JSON).
    #[track_caller]
    pub fn poll(&self, agent: &str) -> (Out, Value) {
        let o = pair(["poll", self.p(), "--agent", agent, "--json"]);
        o.not_timed_out();
        let v = o.json();
        assert_eq!(v["schema"], 1, "{}", o.report());
        (o, v)
    }

    /// Poll and assert the exit code and `your_turn`.
    #[track_caller]
    pub fn poll_expect(&self, agent: &str, code: i32) -> Value {
        let (o, v) = self.poll(agent);
        o.code(code);
        let turn = v["your_turn"].as_bool();
        assert_eq!(
            turn,
            Some(code == 0),
            "your_turn must agree with the exit code\n{}",
            o.report()
        );
        v
    }

    /// The raw frontmatter text (between the delimiters).
    pub fn frontmatter(&self) -> String {
        let t = self.text();
        let t = t.trim_start_matches('\u{feff}');
        let rest = &t[4..];
        let end = rest.find("\n---").unwrap();
        rest[..end].to_string()
    }

    /// The value text of a top-level frontmatter scalar line `key: value` (unquoted).
    pub fn top(&self, key: &str) -> Option<String> {
        let prefix = format!("{key}:");
        self.frontmatter()
            .lines()
            .find(|l| l.starts_with(&prefix))
            .map(|l| {
                l[prefix.len()..]
                    .trim()
                    .trim_matches('"')
                    .trim_matches('\'')
                    .to_string()
            })
    }

    /// Drives the board through a list of steps `"ACTOR WORD ARGS..."` (whitespace-split; `_`
    /// inside a word becomes a space is NOT done, keep args single words), each must succeed.
    #[track_caller]
    pub fn steps(&self, steps: &[&str]) {
        for s in steps {
            let parts: Vec<&str> = s.split_whitespace().collect();
            let actor = if parts[0] == "DOER" {
                self.doer.as_str()
            } else {
                parts[0]
            };
            self.ok(actor, &parts[1..]);
        }
    }

    /// Writes the bytes back (test fixture reset after an unexpected success).
    pub fn restore(&self, bytes: &[u8]) {
        fs::write(&self.b.path, bytes).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// body checks

/// The body (after the closing frontmatter delimiter).
pub fn body_of(content: &str) -> &str {
    let t = content.trim_start_matches('\u{feff}');
    let off = content.len() - t.len();
    let rest = &t[4..];
    match rest.find("\n---") {
        Some(e) => {
            let after = &rest[e + 4..];
            let nl = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
            &content[off + 4 + e + 4 + nl..]
        }
        None => "",
    }
}

/// Every line of the old body is still in the new body, in order.
#[track_caller]
pub fn assert_body_append_only(old: &str, new: &str, ctx: &str) {
    let ob: Vec<&str> = body_of(old).lines().collect();
    let nb: Vec<&str> = body_of(new).lines().collect();
    let mut j = 0;
    for (i, l) in ob.iter().enumerate() {
        while j < nb.len() && nb[j] != *l {
            j += 1;
        }
        assert!(
            j < nb.len(),
            "the body must be append-only: old body line {} ({l:?}) is missing or out of order\n{ctx}\n--- old ---\n{old}\n--- new ---\n{new}",
            i + 1
        );
        j += 1;
    }
}

/// The sections that exist appear in SPEC §2.3 template order.
#[track_caller]
pub fn assert_template_order(content: &str) {
    let names = section_names(content);
    let known: Vec<usize> = names
        .iter()
        .filter_map(|n| TEMPLATE_ORDER.iter().position(|t| t == n))
        .collect();
    let mut sorted = known.clone();
    sorted.sort();
    assert_eq!(
        known, sorted,
        "body sections must stay in template order, got {names:?}\n{content}"
    );
    let mut dedup = names.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(
        dedup.len(),
        names.len(),
        "a section must not be duplicated: {names:?}\n{content}"
    );
}

/// Names of the level-2 sections outside fences, in order.
pub fn section_names(content: &str) -> Vec<String> {
    let mut fence = false;
    let mut out = Vec::new();
    for l in body_of(content).lines() {
        let t = l.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if !fence && l.starts_with("## ") {
            out.push(l[3..].trim().to_string());
        }
    }
    out
}

/// The `### ` heading lines of a section, in order.
pub fn entry_headings(content: &str, section: &str) -> Vec<String> {
    sect(content, section)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("### "))
        .map(|l| l.to_string())
        .collect()
}

pub fn has_utc_time(s: &str) -> bool {
    predicate::str::is_match(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?( ?UTC|Z)")
        .unwrap()
        .eval(s)
}

fn strip_times(s: &str) -> String {
    // remove digits belonging to date-times, so the counter check does not match them
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        // a date YYYY-MM-DD starts a time run: skip until whitespace after the time part
        if i + 10 <= chars.len()
            && chars[i..i + 4].iter().all(|c| c.is_ascii_digit())
            && chars[i + 4] == '-'
            && chars[i + 5..i + 7].iter().all(|c| c.is_ascii_digit())
            && chars[i + 7] == '-'
        {
            let mut j = i + 10;
            while j < chars.len() && (chars[j].is_ascii_digit() || ":TZ".contains(chars[j])) {
                j += 1;
            }
            if j < chars.len() && chars[j] == ' ' && j + 3 <= chars.len() {
                // "2026-01-01 12:00:00 UTC"
                let mut k = j + 1;
                while k < chars.len() && (chars[k].is_ascii_digit() || chars[k] == ':') {
                    k += 1;
                }
                if k > j + 1 {
                    j = k;
                }
            }
            out.push(' ');
            i = j;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// The heading names the number `n` (digits not adjacent to other digits, outside the time).
pub fn names_number(heading: &str, n: u64) -> bool {
    let s = strip_times(heading);
    let needle = n.to_string();
    let b = s.as_bytes();
    let mut start = 0;
    while let Some(pos) = s[start..].find(&needle) {
        let a = start + pos;
        let e = a + needle.len();
        let before_ok = a == 0 || !b[a - 1].is_ascii_digit();
        let after_ok = e >= b.len() || !b[e].is_ascii_digit();
        if before_ok && after_ok {
            return true;
        }
        start = a + 1;
    }
    false
}

pub fn norm(s: &str) -> String {
    s.to_lowercase().replace(['_', '-'], " ")
}

/// The new text of `section` is the old text plus one appended entry (at the end), whose
/// first line is a `### ` heading naming the agent, counter, verdict and UTC time.
#[track_caller]
pub fn assert_appended_entry(
    before: &str,
    after: &str,
    section: &str,
    agent: &str,
    counter: Option<u64>,
    verdict: Option<&str>,
    ctx: &str,
) {
    let old = sect(before, section).unwrap_or_default();
    let new = sect(after, section).unwrap_or_else(|| {
        panic!("section `## {section}` must exist after the write\n{ctx}\n--- file ---\n{after}")
    });
    let old_t = old.trim_end();
    assert!(
        new.starts_with(old_t),
        "the entry must be appended at the END of `## {section}` (old section text kept as a prefix)\n{ctx}\n--- old section ---\n{old}\n--- new section ---\n{new}"
    );
    let added = &new[old_t.len()..];
    let first = added
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_else(|| {
            panic!("nothing was appended to `## {section}`\n{ctx}\n--- file ---\n{after}")
        });
    assert!(
        first.starts_with("### "),
        "an entry must start with a level-3 heading, got {first:?} in `## {section}`\n{ctx}\n--- file ---\n{after}"
    );
    assert!(
        first.contains(agent),
        "the entry heading must name the agent {agent:?}: {first:?}\n{ctx}"
    );
    assert!(
        has_utc_time(first),
        "the entry heading must carry the UTC time: {first:?}\n{ctx}"
    );
    if let Some(n) = counter {
        assert!(
            names_number(first, n),
            "the entry heading must name the counter {n}: {first:?}\n{ctx}"
        );
    }
    if let Some(v) = verdict {
        assert!(
            norm(first).contains(&norm(v)),
            "the entry heading must name the verdict {v}: {first:?}\n{ctx}"
        );
        if v == "APPROVED" {
            assert!(
                !norm(first).contains("changes requested"),
                "an APPROVED entry must not say changes requested: {first:?}"
            );
        }
    }
}

/// The part of `section` added between two versions of the file.
pub fn section_added(before: &str, after: &str, section: &str) -> String {
    let old = sect(before, section).unwrap_or_default();
    let new = sect(after, section).unwrap_or_default();
    let old_t = old.trim_end();
    match new.strip_prefix(old_t) {
        Some(rest) => rest.to_string(),
        None => new,
    }
}

/// JSON array of strings → sorted Vec.
#[track_caller]
pub fn strs(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("expected strings in {v}"))
                .to_string()
        })
        .collect();
    out.sort();
    out
}

pub fn sv(xs: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = xs.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// The text of the body section `## name` up to the next level-1/2 heading outside a fenced
/// code block (fence-aware, unlike `common::section_text`), if present.
pub fn sect(content: &str, name: &str) -> Option<String> {
    let heading = format!("## {name}");
    let mut fence = false;
    let mut inside = false;
    let mut found = false;
    let mut out = String::new();
    for l in body_of(content).lines() {
        let t = l.trim_start();
        let is_fence = t.starts_with("```") || t.starts_with("~~~");
        if !fence && !is_fence && (l.starts_with("## ") || l.starts_with("# ")) {
            if inside {
                break;
            }
            if l.trim_end() == heading {
                inside = true;
                found = true;
                continue;
            }
        }
        if is_fence {
            fence = !fence;
        }
        if inside {
            out.push_str(l);
            out.push('\n');
        }
    }
    found.then_some(out)
}
