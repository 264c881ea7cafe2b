//! Independence on record: every write carries the writer's session and model when given
//! (`--session`/`PAIR_SESSION`, `--model`/`PAIR_MODEL`); a board with `independent_review`
//! refuses a verdict from the session that wrote the artifact; `stats` says per gate whether
//! the reviewers were independent of the author; `pair mcp` records the session it started with.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{journal_lines, pair, pair_bin, pair_env};
use crate::proto::Proto;

/// A board with reviewer alice, its plan submitted by the doer from session `doer-1`.
fn submitted(extra: &[&str]) -> Proto {
    let mut args = vec!["--reviewers", "alice"];
    args.extend_from_slice(extra);
    let p = Proto::init(&args);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved --session doer-1 --model model-a",
    ]);
    p
}

fn approve(session: Option<&str>) -> Vec<&str> {
    let mut v = vec!["verdict", "APPROVED", "--revision", "1", "--note", "ok"];
    if let Some(s) = session {
        v.extend(["--session", s]);
    }
    v
}

fn stats(p: &Proto) -> Value {
    let out = pair(["stats", p.p(), "--json"]);
    out.code(0);
    out.json()
}

#[test]
fn a_verdict_from_the_authors_session_is_refused_under_the_policy_and_taken_from_another() {
    let p = submitted(&["--independent-review"]);
    assert_eq!(p.top("independent_review").as_deref(), Some("true"));
    // The submission's record names its session and model.
    let last = journal_lines(&p.b.read()).pop().unwrap();
    assert!(
        last.contains(" session=doer-1 model=model-a "),
        "the submission's record: {last}"
    );
    // The author's own session: refused, with what to do.
    let e = p
        .refused("alice", &approve(Some("doer-1")), 6)
        .mentions(&["fresh session", "doer-1", "plan"])
        .clone();
    assert!(e.stderr.contains("independent review"), "{}", e.report());
    let mut words = p.args("alice", &approve(Some("doer-1")));
    words.push("--json".into());
    let before = p.b.read();
    let v = pair(&words).json_error(6);
    assert_eq!(v["kind"], "not_independent", "{v:#}");
    p.b.assert_untouched(&before);
    // No session named: nothing shows it is independent, refused too.
    p.refused("alice", &approve(None), 6)
        .mentions(&["--session", "PAIR_SESSION"]);
    // Another session, from the environment: accepted and recorded.
    let out = pair_env(
        p.args("alice", &approve(None)),
        &[("PAIR_SESSION", "alice-7")],
    );
    out.code(0);
    p.assert_phase("PLAN_APPROVED");
    let last = journal_lines(&p.b.read()).pop().unwrap();
    assert!(last.contains(" session=alice-7 "), "{last}");
    assert!(!last.contains(" model="), "no model given: {last}");
    pair(["log", p.p()])
        .code(0)
        .mentions(&["session doer-1  model model-a", "session alice-7"]);
    let log = pair(["log", p.p(), "--json"]).json();
    let records = log["records"].as_array().unwrap();
    assert_eq!(records[records.len() - 1]["session"], "alice-7", "{log:#}");
    assert!(records[0]["session"].is_null(), "{log:#}");
    assert_eq!(
        stats(&p)["boards"][0]["gates"]["plan"]["independence"],
        "independent"
    );
    p.assert_valid();
}

#[test]
fn a_dissent_from_the_authors_session_is_refused_under_the_policy_and_taken_from_another() {
    let p = submitted(&["--independent-review", "--dissent", "plan"]);
    p.ok("alice", &approve(Some("alice-7")));
    p.assert_phase("PLANNING_SUBMITTED");
    p.ok("d1", &["register"]);
    // The bundle says which session wrote what it judges, and what the policy asks.
    pair(["brief", p.p(), "--for", "dissenter", "--agent", "d1"])
        .code(0)
        .mentions(&[
            "independent review",
            "written from session doer-1",
            "--session",
        ]);
    let before = p.b.read();
    fn answer(session: &str) -> Vec<&str> {
        vec![
            "dissent",
            "none",
            "--revision",
            "1",
            "--note",
            "nothing found",
            "--session",
            session,
        ]
    }
    // The dissenter writing from the doer's session is no fresh context: refused, untouched.
    p.refused("d1", &answer("doer-1"), 6)
        .mentions(&["doer-1", "wrote plan 1", "fresh session"]);
    p.b.assert_untouched(&before);
    // From a session of its own: accepted, and the gate is approved.
    p.ok("d1", &answer("d1-1"));
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn without_the_policy_the_authors_session_may_review_and_stats_say_same_session() {
    let p = submitted(&[]);
    assert_eq!(p.top("independent_review"), None, "absent when unused");
    p.ok("alice", &approve(Some("doer-1")));
    p.assert_phase("PLAN_APPROVED");
    let s = stats(&p);
    assert_eq!(
        s["boards"][0]["gates"]["plan"]["independence"], "same_session",
        "{s:#}"
    );
    let text = pair(["stats", p.p()]);
    text.code(0).mentions(&["reviews", "same session"]);
}

#[test]
fn stats_say_unknown_when_a_session_was_not_given_and_nothing_before_a_verdict() {
    let p = submitted(&[]);
    let s = stats(&p);
    assert!(
        s["boards"][0]["gates"]["plan"]["independence"].is_null(),
        "no verdict yet: {s:#}"
    );
    p.ok("alice", &approve(None));
    let s = stats(&p);
    assert_eq!(s["boards"][0]["gates"]["plan"]["independence"], "unknown");
    assert_eq!(s["total"]["gates"]["plan"]["independence"]["unknown"], 1);
}

#[test]
fn a_session_or_model_that_is_not_one_word_is_a_usage_error_and_nothing_is_written() {
    let p = submitted(&[]);
    p.refused("alice", &approve(Some("two words")), 4)
        .mentions(&["--session"]);
    let before = p.b.read();
    let out = pair_env(p.args("alice", &approve(None)), &[("PAIR_MODEL", "a b")]);
    out.code(4).mentions(&["PAIR_MODEL"]);
    p.b.assert_untouched(&before);
    // An empty variable is none, as if unset.
    let out = pair_env(p.args("alice", &approve(None)), &[("PAIR_SESSION", "")]);
    out.code(0);
}

#[test]
fn a_waiting_reviewer_is_offered_unable_as_a_complete_command_that_runs() {
    let p = submitted(&[]);
    let v = p.poll_expect("alice", 0);
    let unable = &v["next"]["unable"];
    let command: Vec<String> = unable["command"]
        .as_array()
        .unwrap_or_else(|| panic!("next.unable.command: {v:#}"))
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert!(unable["placeholders"]["REASON"].is_string(), "{v:#}");
    assert!(command.contains(&"--reason".to_string()), "{command:?}");
    // Run as given, REASON filled in: accepted, no round counted.
    let filled: Vec<String> = command[1..]
        .iter()
        .map(|w| {
            if w == "REASON" {
                "the tests could not run".to_string()
            } else {
                w.clone()
            }
        })
        .collect();
    pair(&filled).code(0).mentions(&["UNABLE"]);
    p.assert_phase("PLANNING_SUBMITTED");
    // The doer, whose turn it is not to review, is offered no UNABLE.
    let d = p.poll_expect("doer", 10);
    assert!(d["next"]["unable"].is_null(), "{d:#}");
}

/// One JSON-RPC message on a line, and the answer with the same id.
fn rpc(
    stdin: &mut impl Write,
    stdout: &mut impl BufRead,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    writeln!(stdin, "{msg}").unwrap();
    stdin.flush().unwrap();
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the server closed"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == json!(id) {
            return v;
        }
    }
}

#[test]
fn the_mcp_server_records_the_session_it_started_with_on_every_write() {
    let p = submitted(&[]);
    let mut child = Command::new(pair_bin())
        .args(["mcp", p.p(), "--agent", "alice", "--session", "mcp-start"])
        .env_remove("PAIR_AGENT")
        .env("PAIR_MODEL", "model-m")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    rpc(
        &mut stdin,
        &mut stdout,
        1,
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    );
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    // A call cannot name another session: it is no argument of any tool.
    let refused = rpc(
        &mut stdin,
        &mut stdout,
        2,
        "tools/call",
        json!({"name": "verdict", "arguments": {"verdict": "APPROVED", "revision": 1,
               "note": "ok", "session": "other"}}),
    );
    assert!(
        refused.to_string().contains("not an argument"),
        "{refused:#}"
    );
    // A verdict's note is required, and the refusal says so in the tools' words.
    let missing = rpc(
        &mut stdin,
        &mut stdout,
        3,
        "tools/call",
        json!({"name": "verdict", "arguments": {"verdict": "APPROVED", "revision": 1}}),
    );
    assert_eq!(missing["result"]["isError"], json!(true), "{missing:#}");
    let said = missing["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let said: Value = serde_json::from_str(said).unwrap_or_default();
    let message = said["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`note`")
            && message.contains("`note_file`")
            && !message.contains("--note")
            && !message.contains("stdin"),
        "{missing:#}"
    );
    assert_eq!(said["error"]["code"], json!(4), "{missing:#}");
    let done = rpc(
        &mut stdin,
        &mut stdout,
        4,
        "tools/call",
        json!({"name": "verdict", "arguments": {"verdict": "APPROVED", "revision": 1,
               "note": "ok"}}),
    );
    assert_ne!(done["result"]["isError"], json!(true), "{done:#}");
    drop(stdin);
    child.wait().unwrap();
    let last = journal_lines(&p.b.read()).pop().unwrap();
    assert!(
        last.contains(" by=alice cmd=verdict ")
            && last.contains(" session=mcp-start model=model-m "),
        "{last}"
    );
    assert_eq!(
        stats(&p)["boards"][0]["gates"]["plan"]["independence"],
        "independent"
    );
}

/// Under the policy, agents that name their own sessions (`PAIR_SESSION`, as the skill says)
/// and run each `next.command` as given, placeholders filled in, are never refused, from
/// `init` to the plan's approval.
#[test]
fn agents_with_their_own_sessions_following_next_command_are_never_refused_under_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board.md").display().to_string();
    let note = dir.path().join("note.md");
    std::fs::write(&note, "As asked.\n").unwrap();
    pair_env(
        [
            "init",
            &board,
            "--reviewers",
            "alice",
            "--independent-review",
        ],
        &[("PAIR_SESSION", "doer-session")],
    )
    .code(0);
    let mut trail = Vec::new();
    for _ in 0..12 {
        if pair(["status", &board, "--json"]).json()["phase"] == "PLAN_APPROVED" {
            break;
        }
        let mut acted = false;
        for who in ["doer", "alice"] {
            let session = format!("{who}-session");
            let env = [("PAIR_SESSION", session.as_str())];
            let out = pair_env(["poll", &board, "--agent", who, "--json"], &env);
            if out.code != Some(0) {
                continue;
            }
            let v = out.json();
            let choice = v["next"]["choices"][0].as_str().unwrap_or("").to_string();
            let argv: Vec<String> = v["next"]["command"]
                .as_array()
                .unwrap()
                .iter()
                .skip(1)
                .map(|w| match w.as_str().unwrap() {
                    "FILE" => note.display().to_string(),
                    "VERDICT" => choice.clone(),
                    w => w.to_string(),
                })
                .collect();
            trail.push(format!("{who}: {}", argv.join(" ")));
            let run = pair_env(&argv, &env);
            assert_eq!(run.code, Some(0), "{}\n{}", run.report(), trail.join("\n"));
            acted = true;
            break;
        }
        assert!(acted, "nobody has a move\n{}", trail.join("\n"));
    }
    assert_eq!(
        pair(["status", &board, "--json"]).json()["phase"],
        "PLAN_APPROVED",
        "{}",
        trail.join("\n")
    );
    let s = pair(["stats", &board, "--json"]).json();
    assert_eq!(
        s["boards"][0]["gates"]["plan"]["independence"],
        "independent"
    );
}
