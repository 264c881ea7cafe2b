//! A cursor, not an inbox: `poll --after SEQ` returns the journal records after a position
//! (counted from 1, so `--after 0` is the whole journal) and the new position; an agent that
//! keeps the position and passes it back sees every record exactly once, across restarts and
//! however many records arrived while it was away. `poll --wait --after SEQ` wakes on any new
//! record another agent wrote, a note included, and the wait it names next keeps the position.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{journal_lines, pair, pair_bin};
use crate::proto::Proto;

/// One `poll --after` by a fresh process; the records' (seq, cmd, by) and the new position.
fn read_after(p: &Proto, agent: &str, after: u64) -> (Vec<(u64, String, String)>, u64) {
    let out = pair([
        "poll",
        p.p(),
        "--agent",
        agent,
        "--after",
        &after.to_string(),
        "--json",
    ]);
    out.code_in(&[0, 10]);
    let v: Value = out.json();
    let records = v["records"]
        .as_array()
        .unwrap_or_else(|| panic!("records: {v:#}"))
        .iter()
        .map(|r| {
            (
                r["seq"].as_u64().unwrap(),
                r["command"].as_str().unwrap().to_string(),
                r["by"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    (records, v["position"].as_u64().unwrap())
}

#[test]
fn an_agent_reading_with_after_sees_every_record_exactly_once_across_restarts() {
    let p = Proto::init(&["--reviewers", "alice"]);
    // The agent's position lives in a file, as it would across a restart or a compaction.
    let kept = p.b.aux_file("position", "0");
    let mut seen: Vec<(u64, String, String)> = Vec::new();
    let mut catch_up = || {
        let after: u64 = std::fs::read_to_string(&kept)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let (records, position) = read_after(&p, "alice", after);
        seen.extend(records);
        std::fs::write(&kept, position.to_string()).unwrap();
    };
    catch_up();
    p.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    catch_up();
    // Nothing new: an empty answer, the same position.
    catch_up();
    // Several records while the agent is away, a note among them.
    p.steps(&[
        "DOER note --section Evidence --note first",
        "DOER submit plan --note p --user-approved",
        "DOER note --section Evidence --note second",
    ]);
    catch_up();
    p.steps(&["alice verdict APPROVED --revision 1 --note ok"]);
    catch_up();
    catch_up();
    let journal = journal_lines(&p.b.read());
    let seqs: Vec<u64> = seen.iter().map(|r| r.0).collect();
    let want: Vec<u64> = (1..=journal.len() as u64).collect();
    assert_eq!(seqs, want, "every position once, in order: {seen:?}");
    for ((_, cmd, by), line) in seen.iter().zip(&journal) {
        assert!(
            line.contains(&format!(" by={by} cmd={cmd} ")),
            "{cmd} by {by} is not {line}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        journal.len().to_string()
    );
}

#[test]
fn a_waiting_poll_after_a_position_wakes_on_a_note_written_to_someone_else() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    let (_, position) = read_after(&p, "doer", 0);
    // Alice waits for her turn, which a note does not give her: without --after she would
    // sleep through the note until her timeout.
    let child = Command::new(pair_bin())
        .args([
            "poll",
            p.p(),
            "--agent",
            "alice",
            "--wait",
            "--timeout",
            "120",
            "--after",
            &position.to_string(),
            "--json",
        ])
        .env_remove("PAIR_AGENT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    p.steps(&["DOER note --section Evidence --note for-alice"]);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"][0]["command"], "note", "{v:#}");
    assert_eq!(v["records"][0]["seq"], position + 1, "{v:#}");
    assert_eq!(v["position"], position + 1, "{v:#}");
    assert!(
        v["waited_ms"].as_u64().unwrap() < 120_000,
        "woken by the note, not the timeout: {v:#}"
    );
}

#[test]
fn the_wait_to_run_next_keeps_the_position_and_an_agent_s_own_writes_do_not_wake_it() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    let poll = |words: &[String]| -> Value {
        let out = pair(words.iter().skip(1).map(String::as_str));
        out.code(10);
        out.json()
    };
    let command = |v: &Value| -> Vec<String> {
        v["next"]["command"]
            .as_array()
            .unwrap_or_else(|| panic!("{v:#}"))
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    };
    let first = poll(
        &[
            "pair",
            "poll",
            p.p(),
            "--agent",
            "alice",
            "--after",
            "0",
            "--json",
        ]
        .map(String::from),
    );
    let position = first["position"].as_u64().unwrap();
    let next = command(&first);
    let at = next.iter().position(|w| w == "--after").expect("--after");
    assert_eq!(next[at + 1], position.to_string(), "{next:?}");
    assert_eq!(next.iter().filter(|w| *w == "--after").count(), 1);
    // Her own note is no news to her: a wait from the position sleeps through it, to its end,
    // and lists it then.
    p.steps(&["alice note --section Evidence --note mine"]);
    let mut short = next.clone();
    let t = short
        .iter()
        .position(|w| w == "--timeout")
        .expect("--timeout");
    short[t + 1] = "1".into();
    let mine = poll(&short);
    assert!(mine["waited_ms"].as_u64().unwrap() >= 1000, "{mine:#}");
    assert_eq!(mine["records"][0]["by"], "alice", "{mine:#}");
    assert_eq!(mine["position"], position + 1);
    // The doer's note is: the wait it names, run as given, returns with it at once.
    p.steps(&["DOER note --section Evidence --note yours"]);
    let yours = poll(&command(&mine));
    assert_eq!(yours["records"][0]["by"], "doer", "{yours:#}");
    assert_eq!(yours["position"], position + 2);
    assert!(command(&yours).contains(&(position + 2).to_string()));
}

#[test]
fn a_position_below_zero_or_beyond_the_end_is_refused_and_the_end_is_an_empty_answer() {
    let p = Proto::init(&["--reviewers", "alice"]);
    let n = journal_lines(&p.b.read()).len() as u64;
    let bad = |after: &str| {
        pair(["poll", p.p(), "--agent", "alice", "--after", after])
            .code(4)
            .clone()
    };
    bad("-1").mentions(&["--after -1", "0 or more"]);
    bad(&(n + 1).to_string()).mentions(&["beyond the end", &format!("{n} records")]);
    bad("x");
    let (records, position) = read_after(&p, "alice", n);
    assert!(records.is_empty());
    assert_eq!(position, n);
    // `--after 0` is the whole journal.
    let (records, _) = read_after(&p, "alice", 0);
    assert_eq!(records.len() as u64, n);
    assert_eq!(records[0].1, "init");
}

#[test]
fn a_repair_that_keeps_the_journal_keeps_every_position_and_is_itself_the_next_record() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&["alice register"]);
    let (before, position) = read_after(&p, "alice", 0);
    let text = p.text().replace("## Goal\n", "## Goal\n\nRepaired.\n");
    let fixed = p.b.aux_file("fixed.md", text);
    pair([
        "write",
        p.p(),
        "--content-file",
        fixed.to_str().unwrap(),
        "--expect-sha256",
        &p.b.sha(),
        "--repair",
        "--reason",
        "a goal line",
    ])
    .code(0);
    let (after, _) = read_after(&p, "alice", 0);
    assert_eq!(&after[..before.len()], &before[..], "positions kept");
    let (new, _) = read_after(&p, "alice", position);
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].0, position + 1);
    assert_eq!(new[0].1, "repair");
}
