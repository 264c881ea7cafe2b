//! The journal: one record per write in the board's last section, chained by hashes and held
//! to the law; `pair log`, `pair stats` (exact figures from an injected clock), the SVG
//! timeline and `report-usage`.

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::time::Duration;

/// Run `pair ARGS` as if it were `time` (PAIR_NOW), expecting success.
#[track_caller]
fn at(time: &str, args: &[&str]) -> Out {
    let out = pair_env(args, &[("PAIR_NOW", time)]);
    out.code(0);
    out
}

fn t(hms: &str) -> String {
    format!("2026-01-01T{hms}Z")
}

/// The lifecycle whose figures the stats test checks: a plan gate of two rounds (changes
/// requested, then approved), tokens and costs on some writes, a usage-only record, a stop.
fn lifecycle() -> Board {
    let b = Board::absent();
    let p = b.p();
    at(&t("00:00:00"), &["init", p, "--reviewers", "alice"]);
    at(&t("00:01:00"), &["register", p, "--agent", "alice"]);
    at(
        &t("00:02:00"),
        &[
            "advance",
            p,
            "PLANNING",
            "--agent",
            "doer",
            "--user-approved",
            "--tokens",
            "100",
        ],
    );
    at(
        &t("00:10:00"),
        &[
            "submit",
            p,
            "plan",
            "--note",
            "v1",
            "--agent",
            "doer",
            "--user-approved",
            "--tokens",
            "1000",
            "--cost",
            "0.25",
        ],
    );
    at(&t("00:15:00"), &["claim", p, "--agent", "alice"]);
    at(
        &t("00:25:00"),
        &[
            "verdict",
            p,
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "fix it",
            "--agent",
            "alice",
            "--tokens",
            "500",
            "--cost",
            "0.5",
        ],
    );
    at(
        &t("00:40:00"),
        &[
            "submit",
            p,
            "plan",
            "--note",
            "v2",
            "--agent",
            "doer",
            "--user-approved",
            "--tokens",
            "300",
        ],
    );
    at(&t("00:45:00"), &["claim", p, "--agent", "alice"]);
    at(
        &t("01:00:00"),
        &[
            "verdict",
            p,
            "APPROVED",
            "--revision",
            "2",
            "--note",
            "ok",
            "--agent",
            "alice",
            "--tokens",
            "200",
            "--cost",
            "0.125",
        ],
    );
    at(
        &t("01:05:00"),
        &[
            "report-usage",
            p,
            "--agent",
            "alice",
            "--tokens",
            "50",
            "--phase",
            "REVIEWING_PLAN",
        ],
    );
    at(
        &t("01:30:00"),
        &["stop", p, "--agent", "doer", "--reason", "enough for today"],
    );
    b
}

#[test]
fn every_write_appends_exactly_one_record_and_validate_accepts_the_chain() {
    let b = lifecycle();
    let lines = journal_lines(&b.read());
    assert_eq!(lines.len(), 11, "{lines:#?}");
    // The record is the last line of the file, and the journal the last section.
    let text = b.read_string();
    assert!(text.trim_end().ends_with(lines.last().unwrap().as_str()));
    let first = &lines[0];
    assert!(
        first.starts_with("- at=2026-01-01T00:00:00.000Z by=doer cmd=init phase=->DRAFT "),
        "{first}"
    );
    assert!(
        first.contains(" before=- ") && first.ends_with(" prev=-"),
        "{first}"
    );
    let submit = &lines[3];
    assert!(
        submit.contains(
            "cmd=submit-plan phase=PLANNING>PLANNING_SUBMITTED counters=plan_revision:0>1"
        ) && submit.contains(" tokens=1000 cost=0.25 "),
        "{submit}"
    );
    assert!(
        lines[5].contains(" verdict=plan:CHANGES_REQUESTED "),
        "{}",
        lines[5]
    );
    assert!(lines[8].contains(" verdict=plan:APPROVED "), "{}", lines[8]);
    for l in &lines {
        assert!(
            l.contains(" pid=") && l.contains(" uid=") && l.contains(" wait_us="),
            "{l}"
        );
    }
    pair(["validate", b.p()]).code(0);
}

#[test]
fn a_board_without_a_journal_starts_one_on_its_first_write() {
    let b = Board::minimal();
    assert!(journal_lines(&b.read()).is_empty());
    note(&b, "x").code(0);
    let lines = journal_lines(&b.read());
    assert_eq!(lines.len(), 1, "{}", b.read_string());
    assert!(
        lines[0].contains(&format!(" before={} ", sha256_hex(MINIMAL))),
        "{}",
        lines[0]
    );
    pair(["validate", b.p()]).code(0);
    // The entry went to its section, before the journal.
    let text = b.read_string();
    assert!(text.find("## Evidence").unwrap() < text.find("## Journal").unwrap());
}

#[test]
fn a_raw_write_may_not_drop_alter_or_forge_a_journal_record() {
    let b = init_board(&[]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    let old = b.read_string();
    let lines = journal_lines(old.as_bytes());
    assert_eq!(lines.len(), 2);
    // dropped
    let dropped = old.replace(&format!("{}\n", lines[0]), "");
    b.write_expect(&dropped, &sha256_hex(&old), &["--as", "doer"])
        .code(6)
        .mentions(&["append-only"]);
    b.assert_untouched(old.as_bytes());
    // altered
    let altered = old.replace("by=alice", "by=doer");
    b.write_expect(&altered, &sha256_hex(&old), &["--as", "doer"])
        .code(6)
        .mentions(&["append-only"]);
    b.assert_untouched(old.as_bytes());
    // reordered: every line kept, the chain's order not
    let reordered = old.replace(
        &format!("{}\n{}\n", lines[0], lines[1]),
        &format!("{}\n{}\n", lines[1], lines[0]),
    );
    b.write_expect(&reordered, &sha256_hex(&old), &["--as", "doer"])
        .code(6)
        .mentions_any(&["journal", "append-only"]);
    b.assert_untouched(old.as_bytes());
    // forged: a record nobody's write added
    let forged = format!("{old}{}\n", lines[1]);
    b.write_expect(&forged, &sha256_hex(&old), &[])
        .code(6)
        .mentions(&["record"]);
    b.assert_untouched(old.as_bytes());
    // and a note cannot be put into the journal either
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Journal",
        "--note",
        "x",
    ])
    .code(4)
    .mentions(&["journal"]);
    b.assert_untouched(old.as_bytes());
}

#[test]
fn a_raw_write_records_the_agent_it_names_by_either_flag() {
    // `--as ID` and `--agent ID` both name the writer (its ownership is checked), so both are
    // recorded as `by=ID`; only a raw write that names nobody is recorded as `by=-`.
    let b = init_board(&[]);
    for (flags, by) in [
        (&["--as", "doer"][..], "by=doer"),
        (&["--agent", "doer"][..], "by=doer"),
        (&["--as", "doer", "--agent", "alice"][..], "by=doer"),
        (&[][..], "by=-"),
    ] {
        let old = b.read_string();
        let new = old.replace(
            "## Journal",
            &format!("## Notes\n\n{flags:?}\n\n## Journal"),
        );
        b.write_expect(&new, &sha256_hex(&old), flags).code(0);
        let last = journal_lines(&b.read()).pop().unwrap();
        assert!(
            last.contains(&format!(" {by} cmd=write ")),
            "{flags:?}: {last}"
        );
        let j = pair(["log", b.p(), "--json"]).json();
        let rec = j["records"].as_array().unwrap().last().unwrap().clone();
        let want = by.strip_prefix("by=").filter(|b| *b != "-");
        assert_eq!(rec["by"].as_str(), want, "{flags:?}: {rec}");
    }
    pair(["validate", b.p()]).code(0);
}

#[test]
fn text_a_raw_write_appends_after_the_journal_lands_before_it() {
    let b = init_board(&[]);
    let old = b.read_string();
    let new = format!("{old}\nA line appended at the end.\n");
    b.write_expect(&new, &sha256_hex(&old), &[]).code(0);
    let text = b.read_string();
    let journal = text.find("## Journal").unwrap();
    assert!(
        text.find("A line appended at the end.").unwrap() < journal,
        "{text}"
    );
    assert_eq!(journal_lines(text.as_bytes()).len(), 2);
    pair(["validate", b.p()]).code(0);
}

#[test]
fn validate_names_the_line_of_a_broken_chain() {
    let b = lifecycle();
    let text = b.read_string();
    let lines = journal_lines(text.as_bytes());
    // Drop the third record behind pair's back: the fourth no longer links to its predecessor.
    let edited = text.replace(&format!("{}\n", lines[2]), "");
    fs::write(&b.path, &edited).unwrap();
    let line = line_no(&edited, &lines[3]);
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    let errors = out.json()["files"][0]["errors"].to_string();
    assert!(errors.contains("chain is broken"), "{errors}");
    assert!(errors.contains(&format!("\"line\":{line}")), "{errors}");
}

#[test]
fn a_write_checks_the_whole_chain_of_a_board_changed_since_its_last_record() {
    let b = lifecycle();
    let text = b.read_string();
    // As the last write left it: the store can tell, from one hash of the file.
    let as_found = |bytes: &[u8]| pair::store::Current::new(bytes.to_vec(), vec![]).as_recorded();
    assert!(as_found(text.as_bytes()));
    // A record in the middle edited behind pair's back: the last record and the seal are as
    // they were, so only the chain tells, and a write checks it because the file is no longer
    // the one the last record describes.
    let lines = journal_lines(text.as_bytes());
    let edited = text.replacen(&lines[2], &lines[2].replacen(" uid=", " uid=1", 1), 1);
    assert_ne!(edited, text);
    assert!(!as_found(edited.as_bytes()));
    fs::write(&b.path, &edited).unwrap();
    let before = b.read();
    let out = pair(crate::common::files::note_args(b.p(), "x"));
    out.code(5).mentions(&["chain is broken", "--repair"]);
    b.assert_untouched(&before);
    // Any one byte changed anywhere, body or frontmatter, is seen.
    for at in [10, text.len() / 2, text.len() - 3] {
        let mut bytes = text.clone().into_bytes();
        bytes[at] = if bytes[at] == b'x' { b'y' } else { b'x' };
        assert!(!as_found(&bytes), "byte {at}");
    }
}

#[test]
fn validate_refuses_a_phase_the_last_record_does_not_end_in() {
    let b = init_board(&[]);
    let text = b.read_string();
    let edited = text.replacen("\nphase: DRAFT\n", "\nphase: PLANNING\n", 1);
    fs::write(&b.path, &edited).unwrap();
    let line = line_no(&edited, &journal_lines(edited.as_bytes())[0]);
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    let errors = out.json()["files"][0]["errors"].to_string();
    assert!(
        errors.contains("leaves the board in DRAFT but the frontmatter's phase is PLANNING"),
        "{errors}"
    );
    assert!(errors.contains(&format!("\"line\":{line}")), "{errors}");
}

#[test]
fn a_malformed_record_is_an_error_naming_its_line() {
    let b = init_board(&[]);
    let text = b.read_string();
    let rec = &journal_lines(text.as_bytes())[0];
    let edited = text.replace(rec.as_str(), &rec.replace("phase=->DRAFT", "phase=DRAFT"));
    fs::write(&b.path, &edited).unwrap();
    let out = pair(["validate", b.p(), "--json"]);
    out.code(5);
    let errors = out.json()["files"][0]["errors"].to_string();
    let line = line_no(&edited, &journal_lines(edited.as_bytes())[0]);
    assert!(errors.contains("BEFORE>AFTER"), "{errors}");
    assert!(errors.contains(&format!("\"line\":{line}")), "{errors}");
}

#[test]
fn log_lists_the_history_filtered_by_agent_and_time() {
    let b = lifecycle();
    let all = pair(["log", b.p(), "--json"]);
    all.code(0);
    let j = all.json();
    assert_eq!(j["records"].as_array().unwrap().len(), 11, "{j:#}");
    assert_eq!(j["records"][0]["command"], "init");
    assert_eq!(j["records"][10]["command"], "stop");
    let alice = pair(["log", b.p(), "--agent", "alice", "--json"]).json();
    let by: Vec<&str> = alice["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        by,
        [
            "register",
            "claim",
            "verdict",
            "claim",
            "verdict",
            "report-usage"
        ]
    );
    let since = pair(["log", b.p(), "--since", &t("00:45:00"), "--json"]).json();
    let times: Vec<&str> = since["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["at"].as_str().unwrap())
        .collect();
    assert_eq!(
        times,
        [t("00:45:00"), t("01:00:00"), t("01:05:00"), t("01:30:00")]
    );
    assert_eq!(since["records"][1]["tokens"], 200);
    assert_eq!(since["records"][1]["cost"], 0.125);
    let text = pair(["log", b.p(), "--agent", "alice"]);
    text.code(0)
        .mentions(&["verdict", "REVIEWING_PLAN → PLAN_APPROVED"]);
    pair(["log", b.p(), "--since", "yesterday"]).code(4);
}

#[test]
fn log_prints_nothing_of_a_board_that_fails_its_checks() {
    // The history is streamed, but checked whole before a line is printed: a malformed record
    // late in the journal, or a fence left open before it, is an error naming its line, and
    // stdout stays empty (for `--json` too).
    let b = lifecycle();
    let text = b.read_string();
    let last = journal_lines(text.as_bytes()).pop().unwrap();
    let malformed = text.replace(&last, &last.replace(" turn=", " turn"));
    let fence = text.replace("## Journal", "```\nunclosed\n\n## Journal");
    for (bad, says) in [(&malformed, "journal"), (&fence, "code fence")] {
        fs::write(&b.path, bad).unwrap();
        for json in [false, true] {
            let mut args = vec!["log", b.p()];
            if json {
                args.push("--json");
            }
            let out = pair(&args);
            out.code(5).mentions(&[says]);
            assert!(out.stdout.is_empty(), "{}", out.report());
        }
        pair(["stats", b.p()]).code(5).mentions(&[says]);
    }
}

#[test]
fn log_follow_prints_a_write_made_while_it_waits() {
    let b = init_board(&[]);
    let child = std::process::Command::new(pair_bin())
        .args(["log", b.p(), "--follow", "--json", "--timeout", "60"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Give it time to print the history and wait; the write below must be seen either way.
    std::thread::sleep(Duration::from_millis(300));
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    pair(["stop", b.p(), "--agent", "doer", "--reason", "done"]).code(0);
    let out = wait_with_timeout(child, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let commands: Vec<&str> = lines.iter().filter_map(|l| l["command"].as_str()).collect();
    assert_eq!(commands, ["init", "register", "stop"], "{stdout}");
    assert_eq!(lines.last().unwrap()["ended"], "terminal", "{stdout}");
    assert_eq!(out.status.code(), Some(0));
}

/// The child's output once it exits; killed (and the test failed) after `limit`.
fn wait_with_timeout(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "log --follow did not end: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn report_usage_records_tokens_only_for_an_agent_of_the_board() {
    let b = init_board(&[]);
    let before = b.read();
    pair(["report-usage", b.p(), "--agent", "doer"]).code(4);
    pair(["report-usage", b.p(), "--agent", "mallory", "--tokens", "5"]).code(6);
    pair([
        "report-usage",
        b.p(),
        "--agent",
        "doer",
        "--cost",
        "1.2345678",
    ])
    .code(4);
    b.assert_untouched(&before);
    let out = pair([
        "report-usage",
        b.p(),
        "--agent",
        "doer",
        "--tokens",
        "7",
        "--json",
    ]);
    out.code(0);
    assert_eq!(out.json()["tokens"], 7);
    // Only the journal changed, and its seal.
    assert_eq!(
        remove_top(&String::from_utf8(b.content()).unwrap(), "journal"),
        remove_top(&String::from_utf8(unjournaled(&before)).unwrap(), "journal")
    );
    let lines = journal_lines(&b.read());
    assert!(
        lines[1].contains("cmd=report-usage phase=DRAFT>DRAFT"),
        "{}",
        lines[1]
    );
    pair(["validate", b.p()]).code(0);
}

#[test]
fn stats_figures_match_the_times_and_usage_the_writes_recorded() {
    let b = lifecycle();
    // The board is terminal: its figures end with its last write, whatever the clock says.
    let out = pair_env(["stats", b.p(), "--json"], &[("PAIR_NOW", &t("09:00:00"))]);
    out.code(0);
    let j = out.json();
    let s = &j["boards"][0];
    assert_eq!(s["records"], 11);
    assert_eq!(s["seconds"], 5400);
    let phase = |p: &str| s["phases"][p]["seconds"].as_i64().unwrap();
    assert_eq!(phase("DRAFT"), 120);
    assert_eq!(phase("PLANNING"), 480);
    assert_eq!(phase("PLANNING_SUBMITTED"), 600);
    assert_eq!(phase("REVIEWING_PLAN"), 1500);
    assert_eq!(phase("PLAN_CHANGES_REQUESTED"), 900);
    assert_eq!(phase("PLAN_APPROVED"), 1800);
    assert_eq!(phase("STOPPED"), 0);
    let plan = &s["gates"]["plan"];
    assert_eq!(plan["seconds"], 480 + 600 + 1500 + 900 + 1800);
    let rounds = plan["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{plan:#}");
    assert_eq!(rounds[0]["number"], 1);
    assert_eq!(rounds[0]["outcome"], "PLAN_CHANGES_REQUESTED");
    assert_eq!(rounds[0]["seconds"], 900);
    assert_eq!(rounds[1]["number"], 2);
    assert_eq!(rounds[1]["outcome"], "PLAN_APPROVED");
    assert_eq!(rounds[1]["seconds"], 1200);
    // Tokens and cost, in the phase the work was done in, and per gate.
    assert_eq!(s["phases"]["DRAFT"]["tokens"], 100);
    assert_eq!(s["phases"]["DRAFT"]["cost"], Value::Null);
    assert_eq!(s["phases"]["PLANNING"]["tokens"], 1000);
    assert_eq!(s["phases"]["PLANNING"]["cost"], 0.25);
    assert_eq!(s["phases"]["REVIEWING_PLAN"]["tokens"], 500 + 200 + 50);
    assert_eq!(s["phases"]["REVIEWING_PLAN"]["cost"], 0.625);
    assert_eq!(s["phases"]["PLAN_CHANGES_REQUESTED"]["tokens"], 300);
    assert_eq!(plan["tokens"], 1000 + 750 + 300);
    assert_eq!(plan["cost"], 0.875);
    assert_eq!(s["usage"]["tokens"], 2150);
    assert_eq!(s["usage"]["cost"], 0.875);
    // Turns and handoffs.
    let doer = &s["agents"]["doer"];
    assert_eq!(doer["writes"], 5);
    assert_eq!(doer["turn_seconds"], 120 + 480 + 900 + 1800);
    assert_eq!(doer["handoffs"], 2);
    assert_eq!(doer["handoff_seconds"], 900 + 1800);
    assert_eq!(doer["max_handoff_seconds"], 1800);
    assert_eq!(doer["waiting_since"], Value::Null);
    let alice = &s["agents"]["alice"];
    assert_eq!(alice["writes"], 6);
    assert_eq!(alice["turn_seconds"], 600 + 1500);
    assert_eq!(alice["handoffs"], 2);
    assert_eq!(alice["handoff_seconds"], 300 + 300);
    assert_eq!(alice["max_handoff_seconds"], 300);
    assert_eq!(alice["tokens"], 750);
    // No SLAs yet: no figure rather than a made-up zero.
    assert_eq!(s["sla_breaches"], Value::Null);
    // In total (two boards: the figures double, the rounds add up).
    let two = pair_env(
        ["stats", b.p(), b.p(), "--json"],
        &[("PAIR_NOW", &t("09:00:00"))],
    )
    .json();
    let total = &two["total"];
    assert_eq!(total["boards"], 2);
    assert_eq!(total["seconds"], 10800);
    assert_eq!(total["gates"]["plan"]["rounds"], 4);
    assert_eq!(total["gates"]["plan"]["outcomes"]["PLAN_APPROVED"], 2);
    assert_eq!(
        total["gates"]["plan"]["outcomes"]["PLAN_CHANGES_REQUESTED"],
        2
    );
    assert_eq!(total["usage"]["tokens"], 4300);
    assert_eq!(total["agents"]["alice"]["handoffs"], 4);
    // And as a table for a person.
    pair(["stats", b.p()])
        .code(0)
        .mentions(&["PLAN_CHANGES_REQUESTED", "alice", "2150 tokens"]);
}

/// Runs of whitespace as one space: help text is wrapped to the terminal.
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_stats_figure_is_named_for_what_it_measures_and_defined_in_the_help() {
    // `stats --help` defines each figure the way docs/stats.md does (one table in the code).
    let help = pair(["stats", "--help"]);
    help.code(0);
    let help = words(&help.stdout);
    for f in pair::stats::FIGURES {
        assert!(
            help.contains(&words(&format!("{} ({}): {}", f.name, f.json, f.means))),
            "stats --help does not define {:?}:\n{help}",
            f.name
        );
    }
    // The response time says what it spans and what it is not.
    assert!(
        help.contains("from the write that handed the agent the turn to the agent's next write")
    );
    assert!(help.contains("not the wake-up of `poll --wait`"));
    // The table a person reads uses the same names, and no undefined one.
    let b = lifecycle();
    let out = pair(["stats", b.p()]);
    out.code(0);
    for name in [
        "records",
        "elapsed 1h30m00s",
        "time in phase",
        "time in gate",
        "rounds (#N outcome duration)",
        "writes",
        "turn time",
        "responses (response time total / longest)",
        "usage",
        "what each figure measures: pair stats --help",
    ] {
        assert!(out.stdout.contains(name), "{name:?}\n{}", out.report());
    }
    for undefined in ["latency", "handoff", "in all", "turn held"] {
        assert!(
            !out.stdout.contains(undefined),
            "{undefined:?}\n{}",
            out.report()
        );
    }
    // alice responded twice, in 5 min each: the row says so under those names.
    let alice = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("alice"))
        .unwrap();
    assert!(alice.contains("2 (10m00s / 5m00s)"), "{alice}");
}

#[test]
fn stats_of_an_open_board_counts_up_to_now_and_names_who_is_waited_on() {
    let b = Board::absent();
    at(&t("00:00:00"), &["init", b.p(), "--yolo"]);
    at(
        &t("00:00:30"),
        &["advance", b.p(), "PLANNING", "--agent", "doer"],
    );
    let j = pair_env(["stats", b.p(), "--json"], &[("PAIR_NOW", &t("00:10:30"))]).json();
    let s = &j["boards"][0];
    assert_eq!(s["seconds"], 630);
    assert_eq!(s["phases"]["PLANNING"]["seconds"], 600);
    assert_eq!(s["agents"]["doer"]["turn_seconds"], 630);
}

#[test]
fn the_svg_timeline_is_well_formed_and_names_every_agent_and_phase() {
    let b = lifecycle();
    let svg = b.aux.path().join("timeline.svg");
    pair(["stats", b.p(), "--svg", svg.to_str().unwrap()]).code(0);
    let text = fs::read_to_string(&svg).unwrap();
    check_well_formed_xml(&text);
    for name in [
        "doer",
        "alice",
        "DRAFT",
        "PLANNING",
        "PLANNING_SUBMITTED",
        "REVIEWING_PLAN",
        "PLAN_CHANGES_REQUESTED",
        "PLAN_APPROVED",
        "STOPPED",
        "verdict plan:APPROVED",
    ] {
        assert!(
            text.contains(&format!(">{name}<")) || text.contains(name),
            "{name}"
        );
    }
    // A board path with markup in it is escaped, not injected.
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("a<b>&'\".md");
    at(&t("00:00:00"), &["init", odd.to_str().unwrap()]);
    pair([
        "stats",
        odd.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ])
    .code(0);
    let text = fs::read_to_string(&svg).unwrap();
    check_well_formed_xml(&text);
    assert!(text.contains("a&lt;b&gt;&amp;&apos;&quot;.md"), "{text}");
}

/// A strict well-formedness check of the XML `pair` writes: one root element, every tag
/// closed in order, attributes quoted, and only the five predefined entities in text.
#[track_caller]
fn check_well_formed_xml(text: &str) {
    let body = text
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("an XML declaration");
    let mut stack: Vec<String> = Vec::new();
    let mut roots = 0;
    let mut rest = body;
    let entity_ok = |s: &str| {
        let mut parts = s.split('&');
        parts.next();
        parts.all(|p| {
            ["amp;", "lt;", "gt;", "quot;", "apos;"]
                .iter()
                .any(|e| p.starts_with(e))
        })
    };
    while let Some(open) = rest.find('<') {
        let chars = &rest[..open];
        assert!(
            !chars.contains('>') && entity_ok(chars),
            "bad text {chars:?}"
        );
        assert!(
            !stack.is_empty() || chars.trim().is_empty(),
            "text outside the root: {chars:?}"
        );
        let close = rest[open..].find('>').expect("an unclosed tag") + open;
        let tag = &rest[open + 1..close];
        rest = &rest[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, mut attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()),
            "bad tag name {name:?}"
        );
        loop {
            attrs = attrs.trim_start();
            if attrs.is_empty() {
                break;
            }
            let (key, value) = attrs.split_once("=\"").expect("a quoted attribute");
            assert!(
                key.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-:".contains(c)),
                "bad attribute {key:?}"
            );
            let end = value.find('"').expect("a closed attribute value");
            let v = &value[..end];
            assert!(
                !v.contains('<') && entity_ok(v),
                "bad attribute value {v:?}"
            );
            attrs = &value[end + 1..];
        }
        if stack.is_empty() {
            roots += 1;
        }
        if !self_closing {
            stack.push(name.to_string());
        }
    }
    assert!(rest.trim().is_empty(), "text after the root");
    assert!(stack.is_empty(), "unclosed elements {stack:?}");
    assert_eq!(roots, 1, "one root element");
}

#[test]
fn journal_times_are_milliseconds_and_stats_counts_the_time_between_writes_within_a_second() {
    let b = Board::absent();
    let p = b.p();
    at("2026-01-01T00:00:00.100Z", &["init", p]);
    at(
        "2026-01-01T00:00:00.350Z",
        &[
            "note",
            p,
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
        ],
    );
    at(
        "2026-01-01T00:00:00.600Z",
        &["stop", p, "--agent", "doer", "--reason", "done"],
    );
    let lines = journal_lines(&b.read());
    for (l, t) in lines
        .iter()
        .zip(["00:00:00.100", "00:00:00.350", "00:00:00.600"])
    {
        assert!(l.starts_with(&format!("- at=2026-01-01T{t}Z ")), "{l}");
    }
    let j = pair(["stats", p, "--json"]).json();
    let board = &j["boards"][0];
    assert_eq!(board["seconds"].as_f64(), Some(0.5), "{board:#}");
    assert_eq!(
        board["phases"]["DRAFT"]["seconds"].as_f64(),
        Some(0.5),
        "{board:#}"
    );
    assert_eq!(
        board["agents"]["doer"]["turn_seconds"].as_f64(),
        Some(0.5),
        "{board:#}"
    );
    assert_eq!(j["total"]["seconds"].as_f64(), Some(0.5), "{j:#}");
    let log = pair(["log", p, "--json"]).json();
    assert_eq!(log["records"][1]["at"], "2026-01-01T00:00:00.350Z");
    pair(["stats", p]).code(0).mentions(&["0.5s"]);
    // Without an injected clock, a record's time has its milliseconds (three digits), even when
    // they are zero.
    let c = init_board(&[]);
    let first = journal_lines(&c.read()).remove(0);
    let at = first.split(' ').nth(1).unwrap();
    assert!(
        at.len() == "at=2026-01-01T00:00:00.000Z".len()
            && at.ends_with('Z')
            && at.as_bytes()[22] == b'.',
        "{at}"
    );
}

/// A board of format 1 carries no seal, so its last record is pinned by nothing but the chain
/// and its phase: a hand edit of either word leaves the `after` of the record (the hash of
/// everything before it) as it was. `validate` rejects such a board; every write must too.
#[test]
fn a_write_refuses_a_format_1_board_whose_last_record_was_edited_by_hand() {
    for (word, edited_word) in [
        ("phase=DRAFT>DRAFT", "phase=DRAFT>PLANNING"),
        ("prev=", "prev=00"),
    ] {
        let b = init_board(&["--format", "1"]);
        for n in ["n1", "n2"] {
            note(&b, n).code(0);
        }
        let text = b.read_string();
        let last = journal_lines(text.as_bytes()).last().unwrap().clone();
        assert!(last.contains(word), "{last}");
        let edited = text.replacen(&last, &last.replacen(word, edited_word, 1), 1);
        assert_ne!(edited, text);
        fs::write(&b.path, &edited).unwrap();
        pair(["validate", b.p()]).code(5);
        let before = b.read();
        let out = note(&b, "x");
        out.code(5).mentions(&["--repair"]);
        b.assert_untouched(&before);
    }
}

/// A phase set by hand in the frontmatter is refused by every write, as by `validate`, even
/// when the last record's `after` was set to the hash of the edited file: `after` is not
/// sealed, so it cannot vouch that the journal needs no check (else the write records the
/// hand-set phase as its own, and the board passes `validate` from then on).
#[test]
fn a_write_refuses_a_hand_set_phase_whose_last_record_after_was_recomputed() {
    let b = init_board(&[]);
    note(&b, "n1").code(0);
    let text = b.read_string();
    let edited = text.replacen("\nphase: DRAFT\n", "\nphase: PLANNING\n", 1);
    assert_ne!(edited, text);
    let start = edited.trim_end_matches('\n').rfind('\n').unwrap() + 1;
    let last = &edited[start..];
    let at = last.find("after=").unwrap() + "after=".len();
    let forged = format!(
        "{}{}{}{}",
        &edited[..start],
        &last[..at],
        sha256_hex(&edited.as_bytes()[..start]),
        &last[at + 64..]
    );
    fs::write(&b.path, &forged).unwrap();
    pair(["validate", b.p()])
        .code(5)
        .mentions(&["frontmatter's phase is PLANNING"]);
    let before = b.read();
    note(&b, "x").code(5);
    b.assert_untouched(&before);
}

/// A board's text with its `## Journal` repeated (its records copied into a second section
/// after the first), as a raw write could ask for it.
fn repeated_journal(b: &Board) -> String {
    note(b, "n1").code(0);
    let text = b.read_string();
    let at = text.find("\n## Journal\n").unwrap();
    let journal = &text[at..];
    format!("{}{journal}\n## Extra\n\ntext\n{journal}", &text[..at])
}

/// No write leaves a board `validate` rejects: a raw write that repeats the journal is refused.
#[test]
fn a_raw_write_repeating_the_journal_section_is_refused() {
    let b = init_board(&[]);
    let new = repeated_journal(&b);
    let before = b.read();
    b.write_expect(&new, &b.sha(), &["--agent", "doer"])
        .code(6)
        .mentions(&["`## Journal` 2 times"]);
    b.assert_untouched(&before);
    pair(["validate", b.p()]).code(0);
}

/// On a board whose journal is repeated by hand, the first copy short of the last record, and
/// whose last record's `after` was made to match, the seal read from the end of the file (the
/// second journal) agrees with the last record, but `validate` reads the first: a write must
/// not skip the check it fails.
#[test]
fn a_write_refuses_a_board_whose_journal_is_repeated() {
    let b = init_board(&[]);
    let new = repeated_journal(&b);
    let last = journal_lines(new.as_bytes()).pop().unwrap();
    let first = new.replacen(&format!("{last}\n"), "", 1);
    let start = first.trim_end_matches('\n').rfind('\n').unwrap() + 1;
    let at = start + first[start..].find("after=").unwrap() + "after=".len();
    let forged = format!(
        "{}{}{}",
        &first[..at],
        sha256_hex(&first.as_bytes()[..start]),
        &first[at + 64..]
    );
    fs::write(&b.path, &forged).unwrap();
    pair(["validate", b.p()]).code(5);
    let before = b.read();
    note(&b, "x").code(5);
    b.assert_untouched(&before);
}

/// `pair note BOARD` as the doer, into Evidence.
fn note(b: &Board, text: &str) -> Out {
    pair(crate::common::files::note_args(b.p(), text))
}
