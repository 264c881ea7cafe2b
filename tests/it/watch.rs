//! Time on the board: SLAs (`init --sla`, `extend`), planned absences (`away`), removing a
//! required reviewer that never registered (`unrequire`), presence beside the board, and the
//! watchdog (`watch`), all on a clock the tests set with PAIR_NOW.

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

fn t(hms: &str) -> String {
    format!("2026-01-01T{hms}Z")
}

/// `pair ARGS` at `hms` (PAIR_NOW), expecting `code`.
#[track_caller]
fn at(hms: &str, args: &[&str], code: i32) -> Out {
    let out = pair_env(args, &[("PAIR_NOW", &t(hms))]);
    out.code(code);
    out
}

/// A board with required reviewers alice (registered) and carol (never registered), the plan
/// submitted at 00:10 and under review.
fn plan_under_review(sla: &str) -> Board {
    let b = Board::absent();
    let p = b.p();
    let mut init = vec!["init", p, "--reviewers", "alice,carol", "--yolo"];
    if !sla.is_empty() {
        init.extend(["--sla", sla]);
    }
    at("00:00:00", &init, 0);
    at(
        "00:01:00",
        &["advance", p, "PLANNING", "--agent", "doer"],
        0,
    );
    at("00:02:00", &["register", p, "--agent", "alice"], 0);
    at(
        "00:10:00",
        &["submit", p, "plan", "--note", "v1", "--agent", "doer"],
        0,
    );
    b
}

/// The events a `watch --once --json` printed (the last line is the summary).
fn events(out: &Out) -> Vec<Value> {
    let mut lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let summary = lines.pop().expect("a summary line");
    assert_eq!(summary["ended"], "once", "{}", out.report());
    assert_eq!(summary["reported"].as_u64(), Some(lines.len() as u64));
    lines
}

fn kinds(ev: &[Value]) -> Vec<String> {
    ev.iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e["event"].as_str().unwrap(),
                e["agent"],
                e["nudge"]
            )
        })
        .collect()
}

/// `watch BOARD --once --json` at `hms` with a hook appending its PAIR_* variables to `log`.
fn watch_at(hms: &str, board: &str, log: &Path) -> Out {
    let hook = format!(
        "{{ env | grep '^PAIR_' | grep -v '^PAIR_EVENT=' | grep -v '^PAIR_NOW=' | sort; echo --; }} >> '{}'",
        log.display()
    );
    pair_env(
        [
            "watch",
            board,
            "--once",
            "--json",
            "--on-stall",
            &hook,
            "--on-breach",
            &hook,
        ],
        &[("PAIR_NOW", &t(hms))],
    )
}

/// The hook runs of a log: each a sorted list of `PAIR_*=…` lines.
fn hook_runs(log: &Path) -> Vec<Vec<String>> {
    let text = fs::read_to_string(log).unwrap_or_default();
    text.split("--\n")
        .filter(|r| !r.trim().is_empty())
        .map(|r| r.lines().map(str::to_string).collect())
        .collect()
}

#[test]
fn sla_durations_are_recorded_and_bad_ones_refused_naming_the_part() {
    let b = Board::absent();
    at(
        "00:00:00",
        &["init", b.p(), "--sla", "review=2h,revision=1h30m"],
        0,
    );
    let text = b.read_string();
    assert!(
        text.contains("sla:\n  review: 2h\n  revision: 1h30m\n"),
        "{text}"
    );
    pair(["status", b.p()])
        .code(0)
        .mentions(&["sla         review: 2h, revision: 1h30m"]);
    let j = pair(["status", b.p(), "--json"]).json();
    assert_eq!(
        j["frontmatter"]["sla"],
        serde_json::json!({"review": "2h", "revision": "1h30m"})
    );
    for (bad, part) in [
        ("review=2x", "`2x`"),
        ("review=90", "`90`"),
        ("nope=2h", "`nope`"),
        ("review=30m1h", "`1h`"),
        ("review", "`review`"),
    ] {
        let c = Board::absent();
        let out = at("00:00:00", &["init", c.p(), "--sla", bad], 4);
        out.mentions(&["--sla", part]);
        assert!(!c.path.exists(), "{bad}: nothing is created");
    }
}

#[test]
fn extend_needs_the_users_approval_and_records_the_reason() {
    let b = plan_under_review("review=2h");
    let before = b.read();
    at(
        "00:20:00",
        &[
            "extend",
            b.p(),
            "--agent",
            "doer",
            "--sla",
            "review=4h",
            "--reason",
            "slow",
        ],
        6,
    )
    .mentions(&["--user-approved"]);
    b.assert_untouched(&before);
    at(
        "00:20:00",
        &[
            "extend",
            b.p(),
            "--agent",
            "doer",
            "--sla",
            "review=4h",
            "--reason",
            "reviewer out",
            "--user-approved",
        ],
        0,
    );
    let text = b.read_string();
    assert!(text.contains("  review: 4h\n"), "{text}");
    assert!(
        text.contains("### SLA changed — doer — 2026-01-01T00:20:00Z"),
        "{text}"
    );
    assert!(text.contains("Reason: reviewer out"), "{text}");
    assert!(text.contains(" cmd=extend "), "journaled: {text}");
    pair(["validate", b.p()]).code(0);
}

#[test]
fn a_raw_write_may_not_change_the_sla_without_the_users_approval() {
    let b = plan_under_review("review=2h");
    let before = b.read();
    let new = String::from_utf8(b.content())
        .unwrap()
        .replace("  review: 2h\n", "  review: 9h\n");
    let out = b.write_expect(&new, &b.sha(), &["--as", "doer"]);
    out.code(6).mentions(&["sla", "--user-approved"]);
    b.assert_untouched(&before);
}

#[test]
fn watch_reports_each_stall_kind_once_with_the_documented_hook_variables() {
    let b = plan_under_review("review=2h");
    let log = b.aux.path().join("hook.log");
    // 00:30: nothing is late yet.
    assert!(events(watch_at("00:30:00", b.p(), &log).code(0)).is_empty());
    // 01:30: carol never registered, an hour (the default stall time) after the gate opened.
    let ev = events(watch_at("01:30:00", b.p(), &log).code(13));
    assert_eq!(kinds(&ev), ["unregistered \"carol\" 1"]);
    // 02:11: alice's turn is past the review SLA, and so is the phase.
    let ev = events(watch_at("02:11:00", b.p(), &log).code(13));
    assert_eq!(kinds(&ev), ["stall \"alice\" 1", "breach null 1"]);
    assert_eq!(ev[0]["over"], 60);
    assert_eq!(ev[1]["sla"], "review");
    let runs = hook_runs(&log);
    assert_eq!(runs.len(), 3, "{runs:?}");
    let board = b.p().to_string();
    let expected = |kind: &str, agent: &str, nudge: &str, secs: &str, limit: &str, sla: &str| {
        vec![
            format!("PAIR_AGENT={agent}"),
            format!("PAIR_BOARD={board}"),
            format!("PAIR_KIND={kind}"),
            format!("PAIR_LIMIT={limit}"),
            format!("PAIR_NUDGE={nudge}"),
            "PAIR_PHASE=PLANNING_SUBMITTED".to_string(),
        ]
        .into_iter()
        .chain([
            String::new(), // PAIR_REASON, checked apart
            format!("PAIR_SECONDS={secs}"),
            "PAIR_SINCE=2026-01-01T00:10:00Z".to_string(),
            format!("PAIR_SLA={sla}"),
            "PAIR_TURN=alice,carol".to_string(),
        ])
        .collect::<Vec<_>>()
    };
    for (run, want) in runs.iter().zip([
        expected("unregistered", "carol", "1", "4800", "3600", ""),
        expected("stall", "alice", "1", "7260", "7200", "review"),
        expected("breach", "", "1", "7260", "7200", "review"),
    ]) {
        assert_eq!(run.len(), want.len(), "{run:?}");
        for (got, want) in run.iter().zip(&want) {
            if want.is_empty() {
                assert!(got.starts_with("PAIR_REASON=") && got.len() > 20, "{got}");
            } else {
                assert_eq!(got, want);
            }
        }
    }
}

/// The watchdog reads its clock to the millisecond, as the journal does: a limit is passed as
/// soon as the time is over it, not at the next whole second.
#[test]
fn a_stall_and_a_breach_are_reported_as_soon_as_their_limit_is_passed() {
    let b = plan_under_review("review=2h");
    let log = b.aux.path().join("hook.log");
    // 300 ms before the review SLA (2 h since the submission at 00:10) runs out: only carol,
    // unregistered for more than the default hour.
    let ev = events(watch_at("02:09:59.700", b.p(), &log).code(13));
    assert_eq!(kinds(&ev), ["unregistered \"carol\" 1"]);
    // At the limit itself, nothing is over it yet.
    assert!(events(watch_at("02:10:00", b.p(), &log).code(0)).is_empty());
    // 300 ms after: alice's turn and the phase are both over it.
    let ev = events(watch_at("02:10:00.300", b.p(), &log).code(13));
    assert_eq!(kinds(&ev), ["stall \"alice\" 1", "breach null 1"]);
    assert_eq!(
        (&ev[0]["seconds"], &ev[0]["limit"], &ev[0]["over"]),
        (&7200.into(), &7200.into(), &0.into())
    );
    assert_eq!(ev[0]["at"], "2026-01-01T02:10:00.300Z");
}

#[test]
fn a_nudge_is_not_repeated_within_a_phase_escalates_once_and_a_new_phase_resets() {
    let b = plan_under_review("");
    let log = b.aux.path().join("hook.log");
    let p = b.p();
    assert_eq!(
        kinds(&events(watch_at("01:11:00", p, &log).code(13))),
        ["stall \"alice\" 1", "unregistered \"carol\" 1"]
    );
    // The same check again, and again before the limit passed once more: nothing new.
    assert!(events(watch_at("01:11:00", p, &log).code(0)).is_empty());
    assert!(events(watch_at("02:10:00", p, &log).code(0)).is_empty());
    // A full stall time after the nudge: the escalation, once.
    assert_eq!(
        kinds(&events(watch_at("02:11:00", p, &log).code(13))),
        ["stall \"alice\" 2", "unregistered \"carol\" 2"]
    );
    assert!(events(watch_at("05:00:00", p, &log).code(0)).is_empty());
    let nudges: Vec<String> = hook_runs(&log)
        .iter()
        .map(|r| {
            r.iter()
                .find(|l| l.starts_with("PAIR_NUDGE="))
                .unwrap()
                .clone()
        })
        .collect();
    assert_eq!(
        nudges,
        ["PAIR_NUDGE=1"; 2]
            .iter()
            .chain(&["PAIR_NUDGE=2"; 2])
            .copied()
            .collect::<Vec<_>>()
    );
    // A new phase: alice claims, the clock and the nudges start over.
    // (carol is still missing: a fresh nudge; alice's claim came from a process that has
    // ended and she has not been seen since: a dead writer, after its grace.)
    at("05:00:00", &["claim", p, "--agent", "alice"], 0);
    assert_eq!(
        kinds(&events(watch_at("05:01:00", p, &log).code(13))),
        ["unregistered \"carol\" 1"]
    );
    assert_eq!(
        kinds(&events(watch_at("05:30:00", p, &log).code(13))),
        ["dead \"alice\" 1"]
    );
    assert_eq!(
        kinds(&events(watch_at("06:01:00", p, &log).code(13))),
        [
            "stall \"alice\" 1",
            "unregistered \"carol\" 2",
            "dead \"alice\" 2"
        ]
    );
}

#[test]
fn an_away_agent_is_not_reported_until_its_absence_ends() {
    let b = plan_under_review("");
    let log = b.aux.path().join("hook.log");
    let p = b.p();
    at(
        "00:20:00",
        &[
            "away",
            p,
            "--agent",
            "alice",
            "--until",
            "3h",
            "--reason",
            "usage limit",
        ],
        0,
    );
    let text = b.read_string();
    assert!(
        text.contains(
            "    away_until: \"2026-01-01T03:20:00Z\"\n    away_reason: \"usage limit\"\n"
        ),
        "{text}"
    );
    pair(["status", p])
        .code(0)
        .mentions(&["away        alice until 2026-01-01T03:20:00Z: usage limit"]);
    let j = pair(["status", p, "--json"]).json();
    assert_eq!(
        j["agents"]["alice"]["away"],
        serde_json::json!({"until": "2026-01-01T03:20:00Z", "reason": "usage limit"})
    );
    // The away write is alice's: her turn restarted at 00:20, and she is away until 03:20.
    assert_eq!(
        kinds(&events(watch_at("02:00:00", p, &log).code(13))),
        ["unregistered \"carol\" 1"]
    );
    // Until 03:20 inclusive she is away (carol's escalation is not hers).
    assert_eq!(
        kinds(&events(watch_at("03:20:00", p, &log).code(13))),
        ["unregistered \"carol\" 2"]
    );
    assert_eq!(
        kinds(&events(watch_at("03:21:00", p, &log).code(13))),
        ["stall \"alice\" 1", "dead \"alice\" 1"]
    );
    // Her next write ends the absence; --clear with none left is a usage error.
    at(
        "03:30:00",
        &[
            "verdict",
            p,
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
        0,
    );
    assert!(!b.read_string().contains("away_until"));
    at("03:31:00", &["away", p, "--agent", "alice", "--clear"], 4);
    // An --until in the past, or neither a time nor a duration, is refused.
    at(
        "03:31:00",
        &[
            "away",
            p,
            "--agent",
            "alice",
            "--until",
            "2026-01-01T01:00:00Z",
            "--reason",
            "x",
        ],
        4,
    );
    at(
        "03:31:00",
        &[
            "away", p, "--agent", "alice", "--until", "soon", "--reason", "x",
        ],
        4,
    )
    .mentions(&["soon"]);
}

#[test]
fn an_sla_breach_is_cleared_by_an_extension() {
    let b = plan_under_review("review=2h");
    let log = b.aux.path().join("hook.log");
    let p = b.p();
    let ev = events(watch_at("02:11:00", p, &log).code(13));
    assert!(kinds(&ev).contains(&"breach null 1".to_string()), "{ev:?}");
    at(
        "02:12:00",
        &[
            "extend",
            p,
            "--agent",
            "doer",
            "--sla",
            "review=4h",
            "--reason",
            "holiday",
            "--user-approved",
        ],
        0,
    );
    // 02:30: within the 4h review SLA (alice's stall limit follows it too); carol was nudged.
    assert!(events(watch_at("02:30:00", p, &log).code(0)).is_empty());
    pair_env(["stats", p, "--json"], &[("PAIR_NOW", &t("02:30:00"))]).code(0);
    // Past the new limit: a new breach and a new stall (a new limit is a new finding), and
    // carol's escalation.
    let ev = events(watch_at("04:11:00", p, &log).code(13));
    assert_eq!(
        kinds(&ev),
        [
            "stall \"alice\" 1",
            "unregistered \"carol\" 2",
            "breach null 1"
        ]
    );
    assert_eq!(ev[2]["limit"], 4 * 3600);
}

#[test]
fn unrequire_of_an_unregistered_reviewer_completes_the_round() {
    let b = plan_under_review("");
    let p = b.p();
    at(
        "00:20:00",
        &[
            "verdict",
            p,
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
        0,
    );
    let out = at(
        "00:30:00",
        &[
            "unrequire",
            p,
            "carol",
            "--agent",
            "doer",
            "--user-approved",
            "--reason",
            "carol is not coming",
            "--json",
        ],
        0,
    );
    let j = out.json();
    assert_eq!(j["old_phase"], "PLANNING_SUBMITTED");
    assert_eq!(j["phase"], "PLAN_APPROVED");
    let text = b.read_string();
    assert!(text.contains("required_reviewers:\n  - alice\n"), "{text}");
    assert!(
        text.contains("### Required reviewer removed — carol — doer — 2026-01-01T00:30:00Z"),
        "{text}"
    );
    assert!(text.contains("Reason: carol is not coming"), "{text}");
    assert!(
        text.contains(" cmd=unrequire phase=PLANNING_SUBMITTED>PLAN_APPROVED "),
        "{text}"
    );
    pair(["validate", p]).code(0);
}

#[test]
fn unrequire_with_changes_requested_takes_the_rounds_other_outcome() {
    let b = plan_under_review("");
    let p = b.p();
    at(
        "00:20:00",
        &[
            "verdict",
            p,
            "--agent",
            "alice",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "no",
        ],
        0,
    );
    at(
        "00:30:00",
        &[
            "unrequire",
            p,
            "carol",
            "--agent",
            "doer",
            "--user-approved",
            "--reason",
            "gone",
        ],
        0,
    );
    assert!(b.read_string().contains("phase: PLAN_CHANGES_REQUESTED\n"));
}

#[test]
fn unrequire_of_a_registered_reviewer_or_without_consent_is_refused_untouched() {
    let b = plan_under_review("");
    let p = b.p();
    let before = b.read();
    at(
        "00:20:00",
        &[
            "unrequire",
            p,
            "alice",
            "--agent",
            "doer",
            "--user-approved",
            "--reason",
            "x",
        ],
        6,
    )
    .mentions(&["alice is registered", "verdict"]);
    b.assert_untouched(&before);
    at(
        "00:20:00",
        &["unrequire", p, "carol", "--agent", "doer", "--reason", "x"],
        6,
    )
    .mentions(&["--user-approved"]);
    b.assert_untouched(&before);
    at(
        "00:20:00",
        &[
            "unrequire",
            p,
            "dave",
            "--agent",
            "doer",
            "--user-approved",
            "--reason",
            "x",
        ],
        4,
    )
    .mentions(&["dave", "not a required reviewer"]);
    b.assert_untouched(&before);
}

#[test]
fn a_dead_last_writer_holding_the_turn_is_reported_after_the_grace() {
    let b = Board::absent();
    let p = b.p();
    let log = b.aux.path().join("hook.log");
    at("00:00:00", &["init", p, "--yolo"], 0);
    // The doer's last write came from a `pair` process on this host that has ended, and the
    // doer holds the turn (PLANNING).
    at(
        "00:01:00",
        &["advance", p, "PLANNING", "--agent", "doer"],
        0,
    );
    assert!(events(watch_at("00:02:00", p, &log).code(0)).is_empty());
    let ev = events(watch_at("00:04:00", p, &log).code(13));
    assert_eq!(kinds(&ev), ["dead \"doer\" 1"]);
    assert!(ev[0]["reason"].as_str().unwrap().contains("pid "), "{ev:?}");
    // A later write, then a poll whose parent (this test) still runs: the doer is seen alive
    // since its last write, so it is not reported, even past the grace.
    at(
        "00:05:00",
        &[
            "note",
            p,
            "--agent",
            "doer",
            "--section",
            "Implementation Notes",
            "--note",
            "n",
        ],
        0,
    );
    at("00:05:30", &["poll", p, "--agent", "doer"], 0);
    assert!(events(watch_at("00:08:00", p, &log).code(0)).is_empty());
}

#[test]
fn presence_from_poll_does_not_touch_the_board_and_an_unwritable_place_does_not_fail_poll() {
    let b = plan_under_review("");
    let p = b.p();
    let before = b.read();
    let out = pair_env(
        [
            "poll",
            p,
            "--agent",
            "doer",
            "--wait",
            "--timeout",
            "0.3",
            "--interval",
            "0.1",
        ],
        &[("PAIR_NOW", &t("00:40:00"))],
    );
    out.code(10);
    b.assert_untouched(&before);
    let presence = b.dir.path().join(".board.md.pair/presence/doer.json");
    let rec: Value = serde_json::from_slice(&fs::read(&presence).unwrap()).unwrap();
    assert_eq!(rec["agent"], "doer");
    assert_eq!(rec["at"], "2026-01-01T00:40:00Z");
    // The wait is over: the record says so.
    assert_eq!(rec["waiting"], false);
    assert!(
        rec["pid"].as_u64().unwrap() > 0 && rec["host"].is_string(),
        "{rec}"
    );
    // A plain poll soon after leaves the record as it is (a stat, not a write).
    pair_env(
        ["poll", p, "--agent", "doer"],
        &[("PAIR_NOW", &t("00:40:05"))],
    )
    .code(10);
    let again: Value = serde_json::from_slice(&fs::read(&presence).unwrap()).unwrap();
    assert_eq!(again, rec);
    // Where the record cannot be written (the side directory's place is taken by a file, which
    // stops even root), poll still answers and the board is untouched.
    fs::remove_dir_all(b.dir.path().join(SIDE_DIR)).unwrap();
    fs::write(b.dir.path().join(SIDE_DIR), "not a directory").unwrap();
    pair(["poll", p, "--agent", "alice"]).code(0);
    pair_env(
        [
            "poll",
            p,
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "0.2",
            "--interval",
            "0.1",
        ],
        &[],
    )
    .code(0);
    b.assert_untouched(&before);
}

#[test]
fn watch_on_a_directory_watches_every_blackboard_in_it() {
    let b = plan_under_review("");
    let other = b.dir.path().join("other.md");
    at("00:00:00", &["init", other.to_str().unwrap(), "--yolo"], 0);
    let log = b.aux.path().join("hook.log");
    let out = watch_at("01:30:00", b.dir.path().to_str().unwrap(), &log);
    out.code(13);
    let ev = events(&out);
    let boards: Vec<&str> = ev.iter().map(|e| e["board"].as_str().unwrap()).collect();
    assert!(boards.iter().any(|x| x.ends_with("board.md")), "{boards:?}");
    assert!(boards.iter().any(|x| x.ends_with("other.md")), "{boards:?}");
}

#[test]
fn a_failing_or_slow_hook_is_reported_but_not_fatal() {
    let b = plan_under_review("");
    let out = pair_env(
        [
            "watch",
            b.p(),
            "--once",
            "--on-stall",
            "sleep 5; exit 3",
            "--hook-timeout",
            "0.2",
        ],
        &[("PAIR_NOW", &t("01:30:00"))],
    );
    out.code(13).mentions(&["killed"]);
    let out = pair_env(
        ["watch", b.p(), "--once", "--on-stall", "exit 3"],
        &[("PAIR_NOW", &t("09:30:00"))],
    );
    out.code(13).mentions(&["exited 3"]);
    // A hook's output goes to stderr: stdout stays the events.
    let c = plan_under_review("");
    let out = pair_env(
        [
            "watch",
            c.p(),
            "--once",
            "--json",
            "--on-stall",
            "echo hook-said-this",
        ],
        &[("PAIR_NOW", &t("01:30:00"))],
    );
    out.code(13);
    assert_eq!(
        kinds(&events(&out)),
        ["stall \"alice\" 1", "unregistered \"carol\" 1"]
    );
    assert!(out.stderr.contains("hook-said-this"), "{}", out.report());
}

#[test]
fn watch_without_once_exits_cleanly_on_sigterm() {
    let b = plan_under_review("");
    let child = std::process::Command::new(pair_bin())
        .args(["watch", b.p(), "--interval", "0.2"])
        .env("PAIR_NOW", t("00:20:00"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    // SAFETY: signalling the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn stats_reports_sla_breaches_exactly_against_the_clock() {
    let b = plan_under_review("review=2h,plan=5m");
    let out = pair_env(["stats", b.p(), "--json"], &[("PAIR_NOW", &t("02:40:00"))]);
    out.code(0);
    let j = out.json();
    let breaches = &j["boards"][0]["sla_breaches"];
    assert_eq!(
        breaches,
        &serde_json::json!([
            {"sla": "plan", "phase": "PLANNING", "agent": "doer", "turn": ["doer"],
             "started": "2026-01-01T00:01:00Z", "seconds": 540, "limit": 300, "seconds_over": 240},
            {"sla": "review", "phase": "PLANNING_SUBMITTED", "agent": null,
             "turn": ["alice", "carol"], "started": "2026-01-01T00:10:00Z", "seconds": 9000,
             "limit": 7200, "seconds_over": 1800},
        ]),
        "{j}"
    );
    assert_eq!(
        j["total"]["sla_breaches"],
        serde_json::json!({"review": {"breaches": 1, "seconds_over": 1800},
                           "plan": {"breaches": 1, "seconds_over": 240}})
    );
    let text = pair_env(["stats", b.p()], &[("PAIR_NOW", &t("02:40:00"))]);
    text.code(0)
        .mentions(&["SLA breaches:", "review PLANNING_SUBMITTED", "30m00s over"]);
    // A board without SLAs says nothing about them, rather than a made-up zero.
    let plain = plan_under_review("");
    let j = pair_env(
        ["stats", plain.p(), "--json"],
        &[("PAIR_NOW", &t("02:40:00"))],
    )
    .json();
    assert!(j["boards"][0]["sla_breaches"].is_null(), "{j}");
    assert!(j["total"]["sla_breaches"].is_null(), "{j}");
}

#[test]
fn the_last_required_reviewer_is_removed_only_outside_an_open_round() {
    let b = Board::absent();
    let p = b.p();
    at(
        "00:00:00",
        &["init", p, "--reviewers", "carol,dave", "--yolo"],
        0,
    );
    at(
        "00:01:00",
        &["advance", p, "PLANNING", "--agent", "doer"],
        0,
    );
    at(
        "00:10:00",
        &["submit", p, "plan", "--note", "v1", "--agent", "doer"],
        0,
    );
    at(
        "00:20:00",
        &[
            "unrequire",
            p,
            "carol",
            "--agent",
            "doer",
            "--user-approved",
            "--reason",
            "gone",
        ],
        0,
    );
    assert!(b.read_string().contains("phase: PLANNING_SUBMITTED\n"));
    let before = b.read();
    at(
        "00:21:00",
        &[
            "unrequire",
            p,
            "dave",
            "--agent",
            "doer",
            "--user-approved",
            "--reason",
            "x",
        ],
        6,
    )
    .mentions(&[
        "last required reviewer of the open round",
        "pair register --required",
    ]);
    b.assert_untouched(&before);
    // In a work phase the list may be emptied: the next submission snapshots it again.
    let c = Board::absent();
    let q = c.p();
    at(
        "00:00:00",
        &["init", q, "--reviewers", "carol", "--yolo"],
        0,
    );
    at(
        "00:01:00",
        &[
            "unrequire",
            q,
            "carol",
            "--agent",
            "doer",
            "--user-approved",
            "--reason",
            "gone",
        ],
        0,
    );
    assert!(
        c.read_string().contains("required_reviewers: []\n"),
        "{}",
        c.read_string()
    );
    pair(["validate", q]).code(0);
}

#[test]
fn watch_finds_a_board_created_in_its_directory_after_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(pair_bin())
        .args([
            "watch",
            dir.path().to_str().unwrap(),
            "--interval",
            "0.2",
            "--json",
        ])
        .env("PAIR_NOW", t("00:00:10"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let board = dir.path().join("late.md");
    at(
        "00:00:00",
        &["init", board.to_str().unwrap(), "--sla", "advance=1s"],
        0,
    );
    std::thread::sleep(std::time::Duration::from_millis(800));
    // SAFETY: signalling the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let breaches: Vec<&Value> = lines.iter().filter(|l| l["event"] == "breach").collect();
    assert_eq!(breaches.len(), 1, "{stdout}");
    assert_eq!(breaches[0]["sla"], "advance");
    assert!(breaches[0]["board"].as_str().unwrap().ends_with("late.md"));
    assert_eq!(lines.last().unwrap()["ended"], "signal", "{stdout}");
}

#[test]
fn a_review_rounds_sla_runs_from_the_submission_through_the_claim() {
    // The review SLA bounds a round from its submission until the verdicts: a claim, which
    // moves PLANNING_SUBMITTED to REVIEWING_PLAN, does not restart the clock.
    let b = Board::absent();
    let p = b.p();
    at(
        "00:00:00",
        &[
            "init",
            p,
            "--reviewers",
            "alice,bob",
            "--yolo",
            "--sla",
            "review=1h",
        ],
        0,
    );
    at(
        "00:01:00",
        &["advance", p, "PLANNING", "--agent", "doer"],
        0,
    );
    at("00:02:00", &["register", p, "--agent", "alice"], 0);
    at("00:02:00", &["register", p, "--agent", "bob"], 0);
    at(
        "00:10:00",
        &["submit", p, "plan", "--note", "v1", "--agent", "doer"],
        0,
    );
    at("00:59:00", &["claim", p, "--agent", "alice"], 0);
    let log = b.aux.path().join("hook.log");
    let ev = events(watch_at("01:50:00", p, &log).code(13));
    let breach: Vec<&Value> = ev.iter().filter(|e| e["event"] == "breach").collect();
    assert_eq!(breach.len(), 1, "{ev:?}");
    assert_eq!(breach[0]["since"], t("00:10:00"));
    assert_eq!(breach[0]["seconds"], 6000);
    assert_eq!(breach[0]["over"], 2400);
    let out = pair_env(["stats", p, "--json"], &[("PAIR_NOW", &t("01:50:00"))]);
    out.code(0);
    let j = out.json();
    assert_eq!(
        j["boards"][0]["sla_breaches"],
        serde_json::json!([
            {"sla": "review", "phase": "REVIEWING_PLAN", "agent": null,
             "turn": ["alice", "bob"], "started": "2026-01-01T00:10:00Z", "seconds": 6000,
             "limit": 3600, "seconds_over": 2400},
        ]),
        "{j}"
    );
}

#[test]
fn a_resubmission_that_keeps_the_phase_is_a_new_round_for_the_nudges() {
    // A red test resubmitted under review stays RED_TEST_SUBMITTED (phase_updated_at does not
    // move), but it is a new round: its breach and stall are reported again.
    let b = Board::absent();
    let p = b.p();
    let test = b.aux.path().join("t.rs");
    let test = test.to_str().unwrap();
    fs::write(test, "#[test] fn a() { panic!() }\n").unwrap();
    at(
        "00:00:00",
        &[
            "init",
            p,
            "--reviewers",
            "alice",
            "--yolo",
            "--red-test",
            "--sla",
            "review=1h",
        ],
        0,
    );
    at(
        "00:01:00",
        &["advance", p, "PLANNING", "--agent", "doer"],
        0,
    );
    at("00:02:00", &["register", p, "--agent", "alice"], 0);
    at(
        "00:10:00",
        &["submit", p, "plan", "--note", "v1", "--agent", "doer"],
        0,
    );
    at(
        "00:11:00",
        &[
            "verdict",
            p,
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
            "--agent",
            "alice",
        ],
        0,
    );
    at(
        "00:12:00",
        &["advance", p, "RED_TESTING", "--agent", "doer"],
        0,
    );
    let submit = [
        "submit", p, "red-test", "--note", "t", "--agent", "doer", "--files", test,
    ];
    at("00:20:00", &submit, 0);
    let log = b.aux.path().join("hook.log");
    let ev = events(watch_at("01:21:00", p, &log).code(13));
    assert_eq!(kinds(&ev), ["stall \"alice\" 1", "breach null 1"]);
    let ev = events(watch_at("02:22:00", p, &log).code(13));
    assert_eq!(kinds(&ev), ["stall \"alice\" 2", "breach null 2"]);
    fs::write(test, "#[test] fn a() { assert!(false) }\n").unwrap();
    at("02:30:00", &submit, 0);
    assert!(
        b.read_string()
            .contains("phase_updated_at: \"2026-01-01T00:20:00Z\"")
    );
    assert!(events(watch_at("03:00:00", p, &log).code(0)).is_empty());
    let ev = events(watch_at("03:31:00", p, &log).code(13));
    assert_eq!(kinds(&ev), ["stall \"alice\" 1", "breach null 1"], "{ev:?}");
    assert_eq!(ev[0]["since"], t("02:30:00"));
    assert_eq!(ev[1]["since"], t("02:30:00"));
    assert!(events(watch_at("03:32:00", p, &log).code(0)).is_empty());
}

#[test]
fn a_bad_watch_interval_or_hook_timeout_is_named_as_itself() {
    let b = plan_under_review("");
    for flag in ["--interval", "--hook-timeout"] {
        for value in ["1e300", "-1", "nan"] {
            let arg = format!("{flag}={value}");
            let out = pair(["watch", b.p(), "--once", &arg]);
            out.code(4)
                .mentions(&[&format!("{flag} must be a number of seconds")]);
            assert!(!out.stderr.contains("--timeout must"), "{}", out.report());
        }
    }
}

#[test]
fn watchers_racing_on_one_board_report_each_finding_once() {
    // Several `watch --once` at the same moment (cron on two machines, a loop and a person):
    // the nudge memory is read and written under a lock, so one of them reports each finding.
    let b = plan_under_review("");
    let p = b.p().to_string();
    let side = b.path.with_file_name(format!(
        ".{}.pair",
        b.path.file_name().unwrap().to_string_lossy()
    ));
    for round in 0..25 {
        let _ = fs::remove_dir_all(&side);
        let outs: Vec<Out> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        pair_env(
                            ["watch", &p, "--once", "--json"],
                            &[("PAIR_NOW", &t("05:00:00"))],
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let reported: Vec<String> = outs.iter().flat_map(|o| kinds(&events(o))).collect();
        let mut unique = reported.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(
            reported.len(),
            unique.len(),
            "round {round}: a finding was reported twice: {reported:?}"
        );
        assert_eq!(unique, ["stall \"alice\" 1", "unregistered \"carol\" 1"]);
    }
}

#[test]
fn an_absence_is_at_most_as_long_as_the_longest_limit_whether_a_time_or_a_duration() {
    let b = plan_under_review("");
    let p = b.p();
    let before = b.read_string();
    for until in ["9999-12-31T23:59:59Z", "2027-01-03T00:00:00Z", "367d"] {
        at(
            "00:20:00",
            &[
                "away", p, "--agent", "alice", "--until", until, "--reason", "r",
            ],
            4,
        )
        .mentions(&["366d"]);
        assert_eq!(b.read_string(), before, "{until}");
    }
    at(
        "00:20:00",
        &[
            "away",
            p,
            "--agent",
            "alice",
            "--until",
            "2027-01-02T00:20:00Z",
            "--reason",
            "r",
        ],
        0,
    );
}

#[test]
fn an_unreadable_nudge_memory_is_said_and_replaced() {
    let b = plan_under_review("");
    let p = b.p();
    let side = b.path.with_file_name(format!(
        ".{}.pair",
        b.path.file_name().unwrap().to_string_lossy()
    ));
    fs::create_dir_all(&side).unwrap();
    fs::write(side.join("watch.json"), "{half a file").unwrap();
    let log = b.aux.path().join("hook.log");
    let out = watch_at("05:00:00", p, &log);
    out.code(13);
    assert!(
        out.stderr.contains("watch.json") && out.stderr.contains("cannot be read"),
        "{}",
        out.report()
    );
    let state: Value = serde_json::from_slice(&fs::read(side.join("watch.json")).unwrap()).unwrap();
    assert_eq!(state["schema"], 1);
    // The memory is whole again: the next check is quiet.
    let again = watch_at("05:00:00", p, &log);
    again.code(0);
    assert!(
        !again.stderr.contains("cannot be read"),
        "{}",
        again.report()
    );
}

#[test]
fn sigterm_stops_watch_at_once_even_while_hooks_run() {
    // Two boards, each with findings whose hook would take 30 s: SIGTERM kills the hook that
    // runs, starts no other, and still prints the events already noted.
    let b = plan_under_review("");
    let c = plan_under_review("");
    let mut child = std::process::Command::new(pair_bin())
        .args([
            "watch",
            b.p(),
            c.p(),
            "--interval",
            "0.2",
            "--hook-timeout",
            "60",
            "--on-stall",
            "sleep 30",
        ])
        .env("PAIR_NOW", t("05:00:00"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first event is out, so its hook is running.
    let mut first = String::new();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut reader, &mut first).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let sent = std::time::Instant::now();
    // SAFETY: signalling the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let stdout = first + &rest;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(took.as_secs() < 5, "took {took:?} to stop: {stderr}");
    // The first board's events are all printed (their nudges are noted); the second board was
    // not checked.
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(
        stdout.contains("stall alice") && stdout.contains("unregistered carol"),
        "{stdout}"
    );
    assert!(stderr.contains("asked to stop"), "{stderr}");
}

#[test]
fn a_board_reached_through_a_symlink_keeps_presence_and_nudges_beside_its_target() {
    // The lock of a symlinked board is its target's; so are its presence records and the
    // watchdog's memory: watching the link and the file reports each finding once, and a poll
    // through the link is seen by a watch of the file.
    let b = plan_under_review("");
    let link = b.aux.path().join("link.md");
    std::os::unix::fs::symlink(&b.path, &link).unwrap();
    let link = link.to_str().unwrap();
    let out = pair_env(
        ["watch", link, b.p(), "--once", "--json"],
        &[("PAIR_NOW", &t("05:00:00"))],
    );
    let ev = events(out.code(13));
    assert_eq!(
        kinds(&ev),
        ["stall \"alice\" 1", "unregistered \"carol\" 1"],
        "{ev:?}"
    );
    pair(["poll", link, "--agent", "alice"]).code(0);
    let side = b.path.with_file_name(format!(
        ".{}.pair",
        b.path.file_name().unwrap().to_string_lossy()
    ));
    assert!(side.join("presence").join("alice.json").is_file());
    assert!(!b.aux.path().join(".link.md.pair").exists());
}

#[test]
fn a_fifo_beside_the_board_does_not_hang_the_watchdog() {
    // A FIFO where a presence record or the watchdog's memory should be (or any file that is
    // not a small regular one) is skipped, not waited on.
    let b = plan_under_review("");
    let side = b.path.with_file_name(format!(
        ".{}.pair",
        b.path.file_name().unwrap().to_string_lossy()
    ));
    fs::create_dir_all(side.join("presence")).unwrap();
    for fifo in [
        side.join("presence").join("alice.json"),
        side.join("watch.json"),
    ] {
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a plain mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    let out = pair_timeout(
        ["watch", b.p(), "--once", "--json"],
        std::time::Duration::from_secs(10),
    );
    out.code(13);
}

/// A FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a plain mkfifo on a path of the test's own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Whatever stands in a directory, by name.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn links_planted_beside_the_board_are_never_followed_and_a_fifo_never_waited_on() {
    // Another user's planted links must not make `poll` or `watch` write through them (into a
    // victim's private directory, or a file at any path), and a FIFO must not hang `watch`.
    let b = plan_under_review("");
    let p = b.p();
    let side = b.dir.path().join(SIDE_DIR);
    let victim = tempfile::tempdir().unwrap();
    let v = victim.path();
    let poll_and_watch = |hms: &str| {
        at(hms, &["poll", p, "--agent", "alice"], 0);
        at(
            hms,
            &[
                "poll",
                p,
                "--agent",
                "doer",
                "--wait",
                "--timeout",
                "0.2",
                "--interval",
                "0.1",
            ],
            10,
        );
        let out = pair_timeout(
            ["watch", p, "--once", "--json"],
            std::time::Duration::from_secs(10),
        );
        out.not_timed_out();
        out
    };

    // The side directory itself a symlink to the victim's directory.
    std::os::unix::fs::symlink(v, &side).unwrap();
    let out = poll_and_watch("05:00:00");
    out.code(13);
    assert_eq!(names_in(v), Vec::<String>::new(), "{}", out.report());
    out.mentions(&["symlink"]);
    fs::remove_file(&side).unwrap();

    // `presence` a symlink to it.
    fs::create_dir(&side).unwrap();
    std::os::unix::fs::symlink(v, side.join("presence")).unwrap();
    poll_and_watch("05:00:00");
    assert_eq!(names_in(v), Vec::<String>::new());
    fs::remove_file(side.join("presence")).unwrap();

    // The lock and the memory symlinks to a path that does not exist, and to a file.
    fs::write(v.join("kept"), "the victim's own\n").unwrap();
    for made in ["watch.lock", "watch.json"] {
        let _ = fs::remove_file(side.join(made));
    }
    std::os::unix::fs::symlink(v.join("made-by-watch"), side.join("watch.lock")).unwrap();
    std::os::unix::fs::symlink(v.join("kept"), side.join("watch.json")).unwrap();
    let out = poll_and_watch("06:00:00");
    out.code_in(&[0, 13]);
    assert_eq!(names_in(v), ["kept"], "{}", out.report());
    assert_eq!(
        fs::read_to_string(v.join("kept")).unwrap(),
        "the victim's own\n"
    );
    fs::remove_file(side.join("watch.lock")).unwrap();
    fs::remove_file(side.join("watch.json")).unwrap();

    // FIFOs where the lock, the memory and a presence record are: nothing waits on them.
    for fifo in ["watch.lock", "watch.json"] {
        mkfifo(&side.join(fifo));
    }
    let out = poll_and_watch("07:00:00");
    out.code_in(&[0, 13]);
    assert!(
        side.join("watch.lock").exists() && names_in(v) == ["kept"],
        "{}",
        out.report()
    );
}

#[test]
fn a_wait_ended_by_a_signal_leaves_its_presence_saying_it_no_longer_waits() {
    use std::process::{Command, Stdio};
    let b = plan_under_review("");
    let presence = b.dir.path().join(".board.md.pair/presence/doer.json");
    let read = || -> Option<Value> { serde_json::from_slice(&fs::read(&presence).ok()?).ok() };
    for (sig, name) in [
        (libc::SIGINT, "INT"),
        (libc::SIGTERM, "TERM"),
        (libc::SIGHUP, "HUP"),
    ] {
        let _ = fs::remove_file(&presence);
        // Through `env --default-signal`: a test run started in the background of a shell
        // inherits SIGINT ignored, which pair keeps ignoring (as it should), so the signals are
        // given their default action first.
        let mut child = Command::new("env")
            .arg("--default-signal=INT,TERM,HUP")
            .arg(pair_bin())
            .args([
                "poll",
                b.p(),
                "--agent",
                "doer",
                "--wait",
                "--timeout",
                "120",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        // Until the wait has said it waits.
        let waiting = (0..600).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            read().is_some_and(|r| r["waiting"] == true && r["pid"] == pid)
        });
        assert!(waiting, "the wait recorded itself: {:?}", read());
        let sent = Command::new("kill")
            .args(["-s", name, &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(sig), "ended by the signal, as before");
        let rec = read().expect("a record");
        assert_eq!(rec["waiting"], false, "signal {sig}: {rec}");
        assert_eq!(rec["pid"], pid, "{rec}");
        // Nothing else left in the presence directory (no temporary file).
        let names: Vec<String> = fs::read_dir(presence.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["doer.json".to_string()], "{names:?}");
    }
    b.assert_untouched(&b.read());
}
