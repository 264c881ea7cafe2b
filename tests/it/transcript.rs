//! Tokens without asking the agent: a writer that names its transcript (`--transcript FILE`,
//! `PAIR_TRANSCRIPT`: a Claude Code session log or a Codex rollout file) has every write record
//! the tokens the transcript gained since its previous write on the board, and `stats` counts
//! them per phase, gate and objection; a rotated, truncated, malformed or missing transcript is
//! a warning and the write lands.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{journal_lines, pair, pair_env};
use crate::proto::Proto;

/// Append lines to a transcript (created when missing).
fn append(path: &Path, lines: &[Value]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

/// A Claude Code session log's assistant line (`~/.claude/projects/<dir>/<session>.jsonl`):
/// message `id` with its usage so far.
fn claude(id: &str, input: u64, created: u64, read: u64, output: u64) -> Value {
    json!({
        "parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": "/work/project", "sessionId": "0b8f6f5e-5c1d-4a7e-9d53-2f0c1d7f9e11",
        "version": "2.1.63", "gitBranch": "main", "type": "assistant",
        "uuid": format!("u-{id}-{output}"), "timestamp": "2026-03-08T12:00:00.000Z",
        "requestId": format!("req_{id}"),
        "message": {
            "model": "claude-opus-4-6", "id": id, "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "Working on it; the usage is below."}],
            "stop_reason": null, "stop_sequence": null,
            "usage": {
                "input_tokens": input, "cache_creation_input_tokens": created,
                "cache_read_input_tokens": read, "output_tokens": output,
                "service_tier": "standard",
                "cache_creation": {"ephemeral_1h_input_tokens": created, "ephemeral_5m_input_tokens": 0}
            }
        }
    })
}

/// A Claude Code user line (a tool result: no usage).
fn claude_user(text: &str) -> Value {
    json!({
        "type": "user", "sessionId": "0b8f6f5e-5c1d-4a7e-9d53-2f0c1d7f9e11",
        "message": {"role": "user", "content": [{"type": "tool_result", "content": text}]}
    })
}

/// The first line of a Codex rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
fn codex_meta(id: &str) -> Value {
    json!({
        "timestamp": "2026-03-08T12:00:00.000Z", "type": "session_meta",
        "payload": {"id": id, "timestamp": "2026-03-08T12:00:00.000Z", "cwd": "/work/project",
                    "cli_version": "0.58.0", "model_provider": "openai"}
    })
}

/// A Codex `token_count` event: the turn's usage and the session's total so far.
fn codex(last_in: u64, last_out: u64, total: u64) -> Value {
    json!({
        "timestamp": "2026-03-08T12:00:01.000Z", "type": "event_msg",
        "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": total - last_out, "cached_input_tokens": 0,
                                  "output_tokens": last_out, "reasoning_output_tokens": 0,
                                  "total_tokens": total},
            "last_token_usage": {"input_tokens": last_in, "cached_input_tokens": last_in / 2,
                                 "output_tokens": last_out, "reasoning_output_tokens": 0,
                                 "total_tokens": last_in + last_out},
            "model_context_window": 272000
        }, "rate_limits": {"primary": {"used_percent": 7.0, "window_minutes": 300}}}
    })
}

/// A Codex `token_count` event with no usage yet (rate limits only).
fn codex_no_info() -> Value {
    json!({"timestamp": "2026-03-08T12:00:00.500Z", "type": "event_msg",
           "payload": {"type": "token_count", "info": null,
                       "rate_limits": {"primary": {"used_percent": 7.0}}}})
}

/// A Codex line that is not a token count.
fn codex_item() -> Value {
    json!({"timestamp": "2026-03-08T12:00:00.700Z", "type": "response_item",
           "payload": {"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": "done"}]}})
}

struct Setup {
    p: Proto,
    _dir: tempfile::TempDir,
    doer: PathBuf,
    alice: PathBuf,
}

fn setup(extra: &[&str]) -> Setup {
    let mut args = vec!["--reviewers", "alice"];
    args.extend_from_slice(extra);
    let p = Proto::init(&args);
    let dir = tempfile::tempdir().unwrap();
    let doer = dir.path().join("0b8f6f5e.jsonl");
    let alice = dir.path().join("rollout-2026-03-08T12-00-00-a1.jsonl");
    // What each transcript held before the agent's first write on the board: not counted.
    append(
        &doer,
        &[claude_user("the task"), claude("msg_000", 5, 20000, 0, 300)],
    );
    append(&alice, &[codex_meta("a1"), codex(9000, 100, 9100)]);
    Setup {
        p,
        _dir: dir,
        doer,
        alice,
    }
}

impl Setup {
    /// A write by `agent` naming its transcript with `--transcript`.
    fn ok(&self, agent: &str, words: &[&str]) -> crate::common::Out {
        let file = if agent == "alice" {
            &self.alice
        } else {
            &self.doer
        };
        let mut w: Vec<&str> = words.to_vec();
        w.push("--transcript");
        w.push(file.to_str().unwrap());
        self.p.ok(agent, &w)
    }

    fn last(&self) -> String {
        journal_lines(&self.p.b.read()).pop().unwrap()
    }

    fn tokens(&self) -> Option<u64> {
        let last = self.last();
        last.split(' ')
            .find_map(|w| w.strip_prefix("tokens="))
            .map(|t| t.parse().unwrap())
    }
}

const OBJECT: &[&str] = &[
    "object",
    "--severity",
    "blocking",
    "--anchor",
    "## Plan Revisions",
    "--title",
    "t",
    "--evidence",
    "e",
    "--fix",
    "f",
];

#[test]
fn two_agents_transcripts_in_both_formats_are_counted_per_write_and_stats_sum_them() {
    let s = setup(&["--max-rounds", "3"]);
    // First writes: the position is recorded, nothing is counted.
    s.ok("alice", &["register"]);
    assert_eq!(s.tokens(), None, "{}", s.last());
    assert!(s.last().contains(" transcript="), "{}", s.last());
    s.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    assert_eq!(s.tokens(), None);
    // The doer's message is written over three lines (its output growing): counted once.
    append(
        &s.doer,
        &[
            claude("msg_001", 2, 100, 1000, 1),
            claude("msg_001", 2, 100, 1000, 20),
            claude("msg_001", 2, 100, 1000, 40),
            claude_user("cargo test: ok; the usage of the parser"),
        ],
    );
    s.ok(
        "doer",
        &["submit", "plan", "--note", "p", "--user-approved"],
    );
    assert_eq!(s.tokens(), Some(2 + 100 + 1000 + 40));
    // The reviewer's rollout: an event with no usage, an event repeated, another line.
    append(
        &s.alice,
        &[
            codex_no_info(),
            codex(400, 100, 9600),
            codex(400, 100, 9600),
            codex_item(),
        ],
    );
    s.ok("alice", OBJECT);
    assert_eq!(s.tokens(), Some(500));
    append(&s.alice, &[codex(250, 50, 9900)]);
    s.ok(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "no",
            "--objections",
            "BLK-1",
        ],
    );
    assert_eq!(s.tokens(), Some(300));
    append(&s.doer, &[claude("msg_002", 0, 0, 1500, 500)]);
    s.ok("doer", &["resolve", "BLK-1", "--resolution", "fixed"]);
    assert_eq!(s.tokens(), Some(2000));
    append(&s.doer, &[claude("msg_003", 100, 0, 0, 600)]);
    s.ok(
        "doer",
        &["submit", "plan", "--note", "p2", "--user-approved"],
    );
    assert_eq!(s.tokens(), Some(700));
    append(&s.alice, &[codex(200, 50, 10150)]);
    s.ok("alice", &["accept", "BLK-1"]);
    assert_eq!(s.tokens(), Some(250));
    // No new line since: a write that counts nothing records 0.
    s.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    assert_eq!(s.tokens(), Some(0));
    s.p.assert_phase("PLAN_APPROVED");
    s.p.assert_valid();
    // Nothing of the transcripts' content or paths is on the board.
    let text = s.p.text();
    assert!(
        !text.contains("0b8f6f5e") && !text.contains("rollout"),
        "{text}"
    );

    let doer = 1142 + 2000 + 700;
    let alice = 500 + 300 + 250;
    let st = pair(["stats", s.p.p(), "--json"]).json();
    let b = &st["boards"][0];
    assert_eq!(b["usage"]["tokens"], doer + alice, "{b:#}");
    assert_eq!(b["agents"]["doer"]["tokens"], doer);
    assert_eq!(b["agents"]["alice"]["tokens"], alice);
    assert_eq!(b["gates"]["plan"]["tokens"], doer + alice);
    assert_eq!(b["phases"]["PLANNING"]["tokens"], 1142);
    assert_eq!(b["phases"]["PLANNING_SUBMITTED"]["tokens"], 500 + 300 + 250);
    assert_eq!(b["phases"]["PLAN_CHANGES_REQUESTED"]["tokens"], 2000 + 700);
    // Across the project (the board's directory): the objection's tokens from raised to
    // settled are those of its raising, its resolution and its acceptance.
    let dir = Path::new(s.p.p()).parent().unwrap().to_str().unwrap();
    let project = pair(["stats", dir, "--json"]).json();
    assert_eq!(project["total"]["usage"]["tokens"], doer + alice);
    let list = &project["boards"][0]["objections"]["list"];
    assert_eq!(list[0]["id"], "BLK-1", "{project:#}");
    assert_eq!(list[0]["tokens"], 500 + 2000 + 250, "{list:#}");
}

#[test]
fn an_appended_transcript_counts_only_what_was_added_and_tokens_given_win() {
    let s = setup(&[]);
    s.ok("alice", &["register"]);
    append(&s.alice, &[codex(100, 10, 9210)]);
    s.ok("alice", &["note", "--section", "Evidence", "--note", "one"]);
    assert_eq!(s.tokens(), Some(110));
    append(&s.alice, &[codex(200, 20, 9430)]);
    s.ok("alice", &["note", "--section", "Evidence", "--note", "two"]);
    assert_eq!(s.tokens(), Some(220));
    // An explicit --tokens wins; the transcript's position moves all the same, so the stretch
    // is not counted again by the next write.
    append(&s.alice, &[codex(300, 30, 9760)]);
    s.ok(
        "alice",
        &[
            "note",
            "--section",
            "Evidence",
            "--note",
            "three",
            "--tokens",
            "7",
        ],
    );
    assert_eq!(s.tokens(), Some(7));
    s.ok(
        "alice",
        &["note", "--section", "Evidence", "--note", "four"],
    );
    assert_eq!(s.tokens(), Some(0));
    // A line still being written (no line ending yet) waits for the next write.
    let partial = codex(40, 4, 9804).to_string();
    let (head, tail) = partial.split_at(partial.len() / 2);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&s.alice)
        .unwrap()
        .write_all(head.as_bytes())
        .unwrap();
    s.ok(
        "alice",
        &["note", "--section", "Evidence", "--note", "five"],
    );
    assert_eq!(s.tokens(), Some(0));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&s.alice)
        .unwrap();
    writeln!(f, "{tail}").unwrap();
    s.ok("alice", &["note", "--section", "Evidence", "--note", "six"]);
    assert_eq!(s.tokens(), Some(44));
    // The environment names it as well as the flag.
    append(&s.alice, &[codex(1, 1, 9806)]);
    let out = pair_env(
        s.p.args(
            "alice",
            &["note", "--section", "Evidence", "--note", "seven"],
        ),
        &[("PAIR_TRANSCRIPT", s.alice.to_str().unwrap())],
    );
    out.code(0);
    assert_eq!(s.tokens(), Some(2));
    s.p.assert_valid();
}

#[test]
fn a_rotated_or_truncated_transcript_is_counted_from_its_start_and_says_so() {
    let s = setup(&[]);
    s.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    // Rotated: replaced by a new file of about the same length (another session).
    let old_len = std::fs::metadata(&s.doer).unwrap().len();
    std::fs::remove_file(&s.doer).unwrap();
    append(
        &s.doer,
        &[
            claude("msg_new1", 1, 2, 3, 4),
            claude_user(&"x".repeat(old_len as usize)),
        ],
    );
    let out = s.ok(
        "doer",
        &["note", "--section", "Evidence", "--note", "after rotation"],
    );
    assert_eq!(s.tokens(), Some(10));
    out.mentions(&["transcript", "replaced"]);
    // Truncated: shorter than the position the last write recorded.
    std::fs::write(&s.doer, format!("{}\n", claude("msg_t", 0, 0, 0, 9))).unwrap();
    let out = s.ok(
        "doer",
        &[
            "note",
            "--section",
            "Evidence",
            "--note",
            "after truncation",
        ],
    );
    assert_eq!(s.tokens(), Some(9));
    out.mentions(&["transcript", "shorter"]);
    // And from there on, only what is appended.
    append(&s.doer, &[claude("msg_t2", 0, 0, 0, 5)]);
    s.ok(
        "doer",
        &["note", "--section", "Evidence", "--note", "after"],
    );
    assert_eq!(s.tokens(), Some(5));
    s.p.assert_valid();
}

#[test]
fn a_malformed_line_or_a_missing_file_is_a_warning_and_the_write_lands() {
    let s = setup(&[]);
    s.ok("doer", &["advance", "PLANNING", "--user-approved"]);
    // A malformed line among good ones: skipped, said, the rest counted.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&s.doer)
        .unwrap();
    writeln!(f, "{{\"type\":\"assistant\",\"message\":{{\"usage\": oops").unwrap();
    writeln!(f, "not json at all").unwrap();
    drop(f);
    append(&s.doer, &[claude("msg_ok", 1, 1, 1, 1)]);
    let out = s.ok(
        "doer",
        &["note", "--section", "Evidence", "--note", "one", "--json"],
    );
    assert_eq!(s.tokens(), Some(4));
    let v = out.json();
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("could not be read"), "{v:#}");
    // A missing file: said, no usage and no position recorded, the write lands.
    let missing = s._dir.path().join("gone.jsonl");
    let before = journal_lines(&s.p.b.read()).len();
    let out = s.p.ok(
        "doer",
        &[
            "note",
            "--section",
            "Evidence",
            "--note",
            "two",
            "--transcript",
            missing.to_str().unwrap(),
        ],
    );
    out.mentions(&["transcript", "cannot be read", "records no usage"]);
    assert_eq!(journal_lines(&s.p.b.read()).len(), before + 1);
    assert!(!s.last().contains(" tokens="), "{}", s.last());
    assert!(!s.last().contains(" transcript="), "{}", s.last());
    assert!(!s.p.text().contains("gone.jsonl"));
    // The next write with the transcript counts from the last recorded position.
    append(&s.doer, &[claude("msg_ok2", 0, 0, 0, 3)]);
    s.ok(
        "doer",
        &["note", "--section", "Evidence", "--note", "three"],
    );
    assert_eq!(s.tokens(), Some(3));
    s.p.assert_valid();
}

/// One JSON-RPC message on a line, and the answer with the same id.
fn rpc(
    stdin: &mut impl std::io::Write,
    stdout: &mut impl std::io::BufRead,
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
fn the_mcp_server_reads_the_transcript_it_started_with_on_every_write() {
    use std::process::{Command, Stdio};
    let s = setup(&[]);
    s.ok("alice", &["register"]);
    let mut child = Command::new(crate::common::pair_bin())
        .args(["mcp", s.p.p(), "--agent", "alice"])
        .env_remove("PAIR_AGENT")
        .env("PAIR_TRANSCRIPT", &s.alice)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
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
    for (id, (input, output, total)) in [(2, (600, 60, 9760)), (3, (70, 7, 9837))] {
        append(&s.alice, &[codex(input, output, total)]);
        let done = rpc(
            &mut stdin,
            &mut stdout,
            id,
            "tools/call",
            json!({"name": "note", "arguments": {"section": "Evidence", "note": format!("call {id}")}}),
        );
        assert_ne!(done["result"]["isError"], json!(true), "{done:#}");
        assert_eq!(s.tokens(), Some(input + output), "{}", s.last());
    }
    drop(stdin);
    child.wait().unwrap();
    s.p.assert_valid();
}
