//! Review-only boards (`pair init BOARD --review TARGET`): debates that converge for each stop
//! reason `pair` computes, a finding outside the pinned target discarded, the pin re-verified
//! when the target changed mid-debate, confirmed findings seeding a doer's board, the mode a
//! target's size selects, and a debate on a git board. Each role is a process of its own.

use crate::common::env::{Env, Run};
use crate::common::git;
use serde_json::Value;
use std::fs;
use std::path::Path;

const B: &str = "review.md";

/// A scratch directory holding a target file of `lines` lines named `name`.
pub fn target(name: &str, lines: usize) -> Env {
    let e = Env::new();
    let text: String = (1..=lines).map(|i| format!("line {i}\n")).collect();
    fs::write(e.path(name), text).unwrap();
    e
}

fn json(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("not JSON: {}", r.stdout))
}

/// The enthusiast's findings (anchor, severity) for this round, then the end of its stage.
pub fn find(e: &Env, round: u32, anchors: &[&str]) -> Vec<String> {
    let mut ids = vec![];
    for a in anchors {
        let r = e.ok(
            0,
            &[
                "object",
                B,
                "--agent",
                "enthusiast",
                "--severity",
                "blocking",
                "--anchor",
                a,
                "--title",
                "a finding",
                "--evidence",
                "it fails",
                "--json",
            ],
        );
        ids.push(json(&r)["id"].as_str().unwrap().to_string());
    }
    let round = round.to_string();
    e.ok(
        0,
        &[
            "verdict",
            B,
            "--agent",
            "enthusiast",
            "COMMENT",
            "--revision",
            &round,
            "--note",
            "read it",
        ],
    );
    ids
}

/// The adversary disputes `disputed`, maps what is safe, and ends its stage.
fn dispute(e: &Env, round: u32, disputed: &[&str]) {
    for id in disputed {
        e.ok(
            0,
            &[
                "challenge",
                B,
                id,
                "--agent",
                "adversary",
                "--grounds",
                "it cannot happen",
            ],
        );
    }
    let round = round.to_string();
    e.ok(
        0,
        &[
            "verdict",
            B,
            "--agent",
            "adversary",
            "COMMENT",
            "--revision",
            &round,
            "--note",
            "the rest is safe",
        ],
    );
}

/// The judge rules on each finding.
fn judge(e: &Env, rulings: &[(&str, &str)]) -> Run {
    let mut last = None;
    for (id, ruling) in rulings {
        last = Some(e.ok(
            0,
            &[
                "rule",
                B,
                id,
                ruling,
                "--agent",
                "judge",
                "--reason",
                "read the line",
                "--json",
            ],
        ));
    }
    last.expect("a ruling")
}

/// One round: findings at `anchors`, the first disputed, all confirmed.
pub fn round_confirmed(e: &Env, round: u32, anchors: &[&str]) -> Run {
    let ids = find(e, round, anchors);
    dispute(e, round, &[ids[0].as_str()]);
    let rulings: Vec<(&str, &str)> = ids.iter().map(|i| (i.as_str(), "confirm")).collect();
    judge(e, &rulings)
}

fn review(e: &Env) -> Value {
    json(&e.ok(0, &["show", B, "--json"]))["review"].clone()
}

fn stopped(e: &Env, reason: &str) {
    let r = review(e);
    assert_eq!(r["stop"]["reason"], reason, "{r:#}");
    assert_eq!(r["stage"], "done");
    for agent in ["enthusiast", "adversary", "judge"] {
        let p = e.ok(11, &["poll", B, "--agent", agent, "--json"]);
        assert_eq!(json(&p)["review"]["stop_reason"], reason);
        assert_eq!(json(&p)["next"]["command"], Value::Null);
    }
    e.ok(0, &["validate", B]);
}

#[test]
fn a_debate_stops_on_zero_findings_and_discards_a_finding_outside_the_target() {
    let e = target("lib.rs", 20);
    let r = e.ok(0, &["init", B, "--review", "lib.rs", "--json"]);
    assert_eq!(json(&r)["review"]["mode"], "lightweight");
    assert_eq!(json(&r)["review"]["max_rounds"], 3);
    // Only the enthusiast acts in the find stage.
    e.ok(0, &["poll", B, "--agent", "enthusiast"]);
    e.ok(10, &["poll", B, "--agent", "judge"]);
    let refused = e.run(&[
        "object",
        B,
        "--agent",
        "judge",
        "--severity",
        "blocking",
        "--anchor",
        "lib.rs:1",
        "--title",
        "t",
    ]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("enthusiast"), "{}", refused.stderr);

    let out = e.ok(
        0,
        &[
            "object",
            B,
            "--agent",
            "enthusiast",
            "--severity",
            "advisory",
            "--anchor",
            "other.rs:3",
            "--title",
            "elsewhere",
            "--json",
        ],
    );
    assert_eq!(json(&out)["discarded"], true, "{}", out.stdout);
    assert!(
        out.stderr.contains("outside the pinned target"),
        "{}",
        out.stderr
    );
    let ids = find(&e, 1, &["lib.rs:4"]);
    dispute(&e, 1, &[]);
    // The judge is offered the finding in the target only.
    let p = json(&e.ok(0, &["poll", B, "--agent", "judge", "--json"]));
    assert_eq!(p["next"]["command"][3], ids[0].as_str(), "{p:#}");
    judge(&e, &[(ids[0].as_str(), "confirm")]);
    let r = review(&e);
    assert_eq!(r["yields"][0]["discarded"], 1, "{r:#}");
    assert_eq!(r["yields"][0]["confirmed"], 1);
    assert_eq!(r["round"], 2);
    assert!(e.read(B).contains("### Discarded finding ADV-1"));

    // Round 2: nothing found, so nothing to rule on: the round closes with the adversary's
    // verdict and `pair` stops the debate.
    find(&e, 2, &[]);
    dispute(&e, 2, &[]);
    stopped(&e, "zero-findings");
    let show = e.ok(0, &["show", B]);
    assert!(show.stdout.contains("BLK-1"), "{}", show.stdout);
    assert!(!show.stdout.contains("ADV-1"), "{}", show.stdout);
    // After the stop every role's command is refused.
    assert_ne!(
        e.run(&[
            "verdict",
            B,
            "--agent",
            "enthusiast",
            "COMMENT",
            "--revision",
            "2"
        ])
        .code,
        0
    );
}

#[test]
fn a_debate_stops_when_every_confirmed_finding_is_self_reference() {
    let e = target("lib.rs", 40);
    e.ok(0, &["init", B, "--review", "lib.rs"]);
    round_confirmed(&e, 1, &["lib.rs:10"]);
    // Three lines from a confirmed location: the same place again.
    let last = round_confirmed(&e, 2, &["lib.rs:13"]);
    assert_eq!(json(&last)["stop_reason"], "all-self-reference");
    stopped(&e, "all-self-reference");
    assert_eq!(review(&e)["yields"][1]["self_reference"], 1);
}

#[test]
fn a_debate_halts_when_substantive_findings_grow_two_rounds_running() {
    let e = target("spec.md", 200);
    let r = e.ok(0, &["init", B, "--review", "spec.md", "--json"]);
    assert_eq!(json(&r)["review"]["mode"], "full");
    assert_eq!(json(&r)["review"]["max_rounds"], 10);
    round_confirmed(&e, 1, &["spec.md:1"]);
    round_confirmed(&e, 2, &["spec.md:20", "spec.md:40"]);
    round_confirmed(&e, 3, &["spec.md:60", "spec.md:80", "spec.md:100"]);
    stopped(&e, "anti-divergence-halt");
}

#[test]
fn a_debate_stops_at_its_round_limit_and_the_judge_never_declares_a_stop() {
    let e = target("lib.rs", 100);
    e.ok(0, &["init", B, "--review", "lib.rs"]);
    round_confirmed(&e, 1, &["lib.rs:1"]);
    // A dismissed finding beside a confirmed one: the yield counts only the confirmed.
    let ids = find(&e, 2, &["lib.rs:30", "lib.rs:50"]);
    dispute(&e, 2, &[ids[1].as_str()]);
    judge(
        &e,
        &[(ids[0].as_str(), "confirm"), (ids[1].as_str(), "dismiss")],
    );
    assert_eq!(review(&e)["stop"], Value::Null);
    round_confirmed(&e, 3, &["lib.rs:80"]);
    stopped(&e, "max-rounds");
    let show = json(&e.ok(0, &["show", B, "--json"]));
    assert_eq!(show["confirmed"].as_array().unwrap().len(), 3, "{show:#}");
}

#[test]
fn a_target_changed_mid_debate_is_recorded_when_the_result_is_written() {
    let e = target("lib.rs", 20);
    e.ok(0, &["init", B, "--review", "lib.rs"]);
    let pinned = review(&e)["sha256"].as_str().unwrap().to_string();
    round_confirmed(&e, 1, &["lib.rs:2"]);
    fs::write(e.path("lib.rs"), "changed\n").unwrap();
    find(&e, 2, &[]);
    let out = e.ok(
        0,
        &[
            "verdict",
            B,
            "--agent",
            "adversary",
            "COMMENT",
            "--revision",
            "2",
            "--note",
            "safe",
        ],
    );
    assert!(out.stderr.contains("target changed"), "{}", out.stderr);
    let stop = &review(&e)["stop"];
    assert_eq!(stop["drift"], true, "{stop:#}");
    assert_ne!(stop["target_sha256"], pinned.as_str());
    let show = e.ok(0, &["show", B]);
    assert!(show.stdout.contains("CHANGED"), "{}", show.stdout);
    assert!(e.read(B).contains("CHANGED during the debate"));
}

#[test]
fn confirmed_findings_seed_a_doers_board_with_them_as_evidence() {
    let e = target("lib.rs", 20);
    e.ok(0, &["init", B, "--review", "lib.rs"]);
    // Not before the debate stops.
    assert_ne!(e.run(&["init", "fix.md", "--from-review", B]).code, 0);
    assert!(!e.path("fix.md").exists());
    let ids = find(&e, 1, &["lib.rs:3", "lib.rs:15"]);
    dispute(&e, 1, &[]);
    judge(
        &e,
        &[(ids[0].as_str(), "confirm"), (ids[1].as_str(), "dismiss")],
    );
    find(&e, 2, &[]);
    dispute(&e, 2, &[]);
    stopped(&e, "zero-findings");
    e.ok(0, &["init", "fix.md", "--from-review", B]);
    let fix = e.read("fix.md");
    assert!(fix.contains("BLK-1"), "{fix}");
    assert!(fix.contains("lib.rs:3"), "{fix}");
    assert!(fix.contains("it fails"), "{fix}");
    assert!(
        !fix.contains("BLK-2"),
        "a dismissed finding is no evidence: {fix}"
    );
    e.ok(0, &["poll", "fix.md", "--agent", "doer"]);
    e.ok(0, &["validate", "fix.md"]);
}

#[test]
fn a_long_commit_range_is_a_full_debate_and_its_files_are_the_target() {
    let e = Env::new();
    let d = e.dir.path();
    git(d, &["init", "-q"]);
    fs::write(d.join("a.rs"), "fn a() {}\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "one"]);
    let many: String = (0..200).map(|i| format!("// {i}\n")).collect();
    fs::write(d.join("a.rs"), &many).unwrap();
    fs::write(d.join("b.rs"), "fn b() {}\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "two"]);
    let r = json(&e.ok(0, &["init", B, "--review", "HEAD~1..HEAD", "--json"]));
    assert_eq!(r["review"]["mode"], "full", "{r:#}");
    assert_eq!(r["review"]["kind"], "range");
    assert_eq!(r["review"]["files"], serde_json::json!(["a.rs", "b.rs"]));
    let out = json(&e.ok(
        0,
        &[
            "object",
            B,
            "--agent",
            "enthusiast",
            "--severity",
            "blocking",
            "--anchor",
            "c.rs:1",
            "--title",
            "t",
            "--json",
        ],
    ));
    assert_eq!(out["discarded"], true);
    let out = json(&e.ok(
        0,
        &[
            "object",
            B,
            "--agent",
            "enthusiast",
            "--severity",
            "blocking",
            "--anchor",
            "b.rs:1",
            "--title",
            "t",
            "--json",
        ],
    ));
    assert_eq!(out["discarded"], false);
}

#[test]
fn a_debate_on_a_git_board_of_the_staged_diff() {
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "r.git"]);
    let board = format!(
        "git+file://{}#refs/pair/review:review.md",
        remote.path().join("r.git").display()
    );
    let e = Env::new();
    let d = e.dir.path();
    git(d, &["init", "-q"]);
    fs::write(d.join("a.rs"), "fn a() {}\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "one"]);
    fs::write(d.join("a.rs"), "fn a() { todo!() }\n").unwrap();
    git(d, &["add", "."]);
    let cache = tempfile::tempdir().unwrap();
    let run = |args: &[&str], code: i32| -> Run {
        let out = std::process::Command::new(crate::common::pair_bin())
            .args(args)
            .current_dir(d)
            .env("PAIR_CACHE_DIR", cache.path())
            .output()
            .unwrap();
        let r = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert_eq!(r.code, code, "pair {args:?}: {} {}", r.stdout, r.stderr);
        r
    };
    let r = run(&["init", &board, "--review", "staged", "--json"], 0);
    assert_eq!(json(&r)["review"]["kind"], "staged");
    run(
        &[
            "object",
            &board,
            "--agent",
            "enthusiast",
            "--severity",
            "blocking",
            "--anchor",
            "a.rs:1",
            "--title",
            "panics",
        ],
        0,
    );
    run(
        &[
            "verdict",
            &board,
            "--agent",
            "enthusiast",
            "COMMENT",
            "--revision",
            "1",
        ],
        0,
    );
    run(
        &[
            "verdict",
            &board,
            "--agent",
            "adversary",
            "COMMENT",
            "--revision",
            "1",
            "--note",
            "safe",
        ],
        0,
    );
    run(
        &[
            "rule",
            &board,
            "BLK-1",
            "confirm",
            "--agent",
            "judge",
            "--reason",
            "it panics",
        ],
        0,
    );
    run(
        &[
            "verdict",
            &board,
            "--agent",
            "enthusiast",
            "COMMENT",
            "--revision",
            "2",
        ],
        0,
    );
    run(
        &[
            "verdict",
            &board,
            "--agent",
            "adversary",
            "COMMENT",
            "--revision",
            "2",
        ],
        0,
    );
    let p = run(&["poll", &board, "--agent", "judge", "--json"], 11);
    assert_eq!(json(&p)["review"]["stop_reason"], "zero-findings");
    let show = run(&["show", &board], 0);
    assert!(show.stdout.contains("BLK-1"), "{}", show.stdout);
    assert!(Path::new(d).join("a.rs").exists());
}

#[test]
fn the_docs_show_the_stage_and_mode_tables_the_code_runs_on() {
    let doc = include_str!("../../docs/protocol.md");
    for (name, table) in [
        ("debate-table", pair::law::debate::stage_table()),
        ("debate-modes", pair::law::debate::mode_table()),
    ] {
        let start = format!("<!-- {name}:start -->\n");
        let end = format!("<!-- {name}:end -->");
        let from = doc.find(&start).expect("start marker") + start.len();
        let to = doc.find(&end).expect("end marker");
        assert_eq!(doc[from..to], table, "docs/protocol.md's {name}");
    }
    for reason in pair::board::debate::StopReason::ALL {
        assert!(
            doc.contains(&format!("| `{}` |", reason.as_str())),
            "{reason:?}"
        );
    }
}

#[test]
fn poll_after_is_refused_on_a_review_only_board_rather_than_ignored() {
    let e = target("lib.rs", 20);
    e.ok(0, &["init", B, "--review", "lib.rs"]);
    let r = e.ok(4, &["poll", B, "--agent", "judge", "--after", "0"]);
    assert!(
        r.stderr.contains("--after") && r.stderr.contains("review-only"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_review_only_board_refuses_a_pairing_boards_settings_instead_of_dropping_them() {
    let e = target("lib.rs", 3);
    for extra in [
        &["--independent-review"][..],
        &["--dissent"],
        &["--max-rounds", "2"],
        &["--yolo"],
        &["--reviewer-pool", "a,b"],
        &["--sla", "review=2h"],
        &["--goal", "G"],
    ] {
        let mut args = vec!["init", B, "--review", "lib.rs"];
        args.extend_from_slice(extra);
        let r = e.ok(4, &args);
        assert!(
            r.stderr.contains("cannot be used with") && r.stderr.contains(extra[0]),
            "{extra:?}: {}",
            r.stderr
        );
        assert!(!e.path(B).exists(), "{extra:?} made a board");
    }
    e.ok(0, &["init", B, "--review", "lib.rs"]);
}

/// The review state `status --json` and `poll --json` print, with the pin being the target's
/// SHA-256, before and after the stop.
fn review_state(e: &Env, pin: &str, round: u32, stage: &str, stop: Option<(&str, u32)>, code: i32) {
    let want = serde_json::json!({
        "target": "lib.rs",
        "kind": "file",
        "sha256": pin,
        "lines": 20,
        "mode": "lightweight",
        "max_rounds": 3,
        "roles": ["enthusiast", "adversary", "judge"],
        "round": round,
        "stage": stage,
        "stop_reason": stop.map(|s| s.0),
        "stop": stop.map(|(reason, round)| serde_json::json!({
            "reason": reason,
            "round": round,
            "target_sha256": pin,
            "drift": false,
        })),
    });
    let status = json(&e.ok(0, &["status", B, "--json"]));
    assert_eq!(status["review"], want, "{status:#}");
    // Without --agent, a review-only board is read from the side of the role whose stage it
    // is: its next step is that role's, never a registration of nobody.
    let acting = match stage {
        "find" => Some("enthusiast"),
        "dispute" => Some("adversary"),
        "rule" => Some("judge"),
        _ => None,
    };
    let command = status["next"]["command"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let words: Vec<&str> = command.iter().filter_map(Value::as_str).collect();
    match acting {
        Some(role) => {
            assert_eq!(words.get(1), Some(&"verdict"), "{status:#}");
            assert_eq!(words.get(3..5), Some(&["--agent", role][..]), "{status:#}");
            assert_eq!(status["your_turn"], true, "{status:#}");
            // Any other role is told to wait, with its own id.
            let other = if role == "judge" {
                "enthusiast"
            } else {
                "judge"
            };
            let theirs = json(&e.ok(0, &["status", B, "--agent", other, "--json"]));
            assert_eq!(theirs["your_turn"], false, "{theirs:#}");
            let action = theirs["next"]["action"].as_str().unwrap_or_default();
            assert!(
                action.contains(&format!("--agent {other} --wait")),
                "{theirs:#}"
            );
        }
        None => assert!(!words.contains(&"register"), "{status:#}"),
    }
    let poll = json(&e.ok(code, &["poll", B, "--agent", "enthusiast", "--json"]));
    assert_eq!(poll["review"], want, "{poll:#}");
    let text = e.ok(0, &["status", B]).stdout;
    let line = format!(
        "review      `lib.rs` pinned {pin} · lightweight mode · round {round} of at most 3 · stage \
         {stage}{}",
        stop.map_or(String::new(), |s| format!(" · stopped: {}", s.0))
    );
    assert!(text.contains(&format!("{line}\n")), "{text}");
}

#[test]
fn status_and_poll_show_a_review_only_boards_whole_review_state_with_its_pin() {
    let e = target("lib.rs", 20);
    let pin = crate::common::sha256_hex(fs::read(e.path("lib.rs")).unwrap());
    e.ok(0, &["init", B, "--review", "lib.rs"]);
    // The enthusiast's poll: its turn, then the adversary's, then the end.
    review_state(&e, &pin, 1, "find", None, 0);
    find(&e, 1, &[]);
    review_state(&e, &pin, 1, "dispute", None, 10);
    dispute(&e, 1, &[]);
    // Round 1 never stops the debate; an empty round 2 does.
    review_state(&e, &pin, 2, "find", None, 0);
    find(&e, 2, &[]);
    dispute(&e, 2, &[]);
    review_state(&e, &pin, 2, "done", Some(("zero-findings", 2)), 11);
}
