//! `pair mcp` against a raw client: a JSON-RPC error for every line the server cannot take
//! (not JSON, over its bound, no message, ill-typed params), the calls it runs at once bounded
//! (the others wait their turn, a cancelled one gives its place up), its memory under many
//! calls on a large board, its exit when its input ends with calls in flight, and the key it
//! signs with on a signed board (given when it starts, never by a tool).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use pair::commands::mcp::RUNNING;
use serde_json::{Value as Json, json};

use crate::common::prereq::{self, Need};
use crate::common::{minimal_with_reviewer, pair_bin};

const PROC_STATUS: Need = Need {
    what: "/proc/PID/status (the server's peak memory, VmHWM)",
    how: "run the tests on Linux with /proc mounted",
};

/// How long a test waits for an answer or an exit before it fails: a guard against a hang,
/// far above what any answer here needs, not a measure of it.
const GUARD: Duration = Duration::from_secs(60);

/// A server for alice on `board`, spoken to line by line.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The lines the server writes, read by a thread of their own.
    lines: Receiver<String>,
}

impl Server {
    fn start(board: &Path) -> Server {
        Server::start_with(board, &[])
    }

    fn start_with(board: &Path, extra: &[&str]) -> Server {
        Server::start_in(board, extra, &[])
    }

    /// A server started with `env` besides the test's environment.
    fn start_in(board: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(pair_bin())
            .args(["mcp", board.to_str().unwrap(), "--agent", "alice"])
            .args(extra)
            .envs(env.iter().copied())
            .env_remove("PAIR_AGENT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
        }
    }

    /// A server that has been through the protocol's initialisation.
    fn ready(board: &Path) -> Server {
        Server::ready_with(board, &[])
    }

    fn ready_with(board: &Path, extra: &[&str]) -> Server {
        Server::ready_in(board, extra, &[])
    }

    fn ready_in(board: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut s = Server::start_in(board, extra, env);
        let init = s.call(
            0,
            "initialize",
            json!({"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}),
        );
        assert!(init["result"].is_object(), "{init:#}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Json) {
        self.raw(format!("{message}\n").as_bytes());
    }

    fn request(&mut self, id: u64, method: &str, params: Json) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    fn tool(&mut self, id: u64, name: &str, arguments: Json) {
        self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
    }

    /// The next message the server writes that is not a notification.
    fn answer(&mut self) -> Json {
        loop {
            let line = match self.lines.recv_timeout(GUARD) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!("no answer from the server"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
            };
            let v: Json = serde_json::from_str(&line).unwrap();
            if v.get("method").is_none() {
                return v;
            }
        }
    }

    fn call(&mut self, id: u64, method: &str, params: Json) -> Json {
        self.request(id, method, params);
        self.answer()
    }

    /// The server's peak resident memory so far, in bytes.
    fn peak(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap();
        kib * 1024
    }

    /// Close the server's input and return its exit code.
    fn close(mut self) -> i32 {
        drop(self.stdin.take());
        let end = Instant::now() + GUARD;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!("the server did not exit after its input closed");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A board with reviewer alice, its Evidence padded to about `size` bytes.
fn board(dir: &Path, size: usize) -> std::path::PathBuf {
    let mut s = format!("{}\n## Evidence\n\n", minimal_with_reviewer("alice"));
    let mut i = 0usize;
    while s.len() < size {
        s.push_str(&format!(
            "- evidence line {i:07}: the quick brown fox jumps over the lazy dog; `code`\n"
        ));
        i += 1;
    }
    let path = dir.join("board.md");
    std::fs::write(&path, s).unwrap();
    path
}

fn error_of(answer: &Json) -> (i64, String) {
    (
        answer["error"]["code"].as_i64().unwrap_or_default(),
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[test]
fn a_line_that_is_not_json_is_answered_with_a_parse_error_and_a_null_id() {
    let dir = tempfile::tempdir().unwrap();
    let b = board(dir.path(), 0);
    // Before the initialisation, and after it.
    let mut s = Server::start(&b);
    s.raw(b"this is not json\n");
    let a = s.answer();
    assert_eq!(a["id"], Json::Null, "{a:#}");
    assert!(a.as_object().unwrap().contains_key("id"), "{a:#}");
    assert_eq!(error_of(&a).0, -32700, "{a:#}");
    drop(s);
    let mut s = Server::ready(&b);
    for line in [
        &b"{\"jsonrpc\": \"2.0\", \"id\": 4, \n"[..],
        b"\xff\xfe{}\n",
    ] {
        s.raw(line);
        let a = s.answer();
        assert_eq!(a["id"], Json::Null, "{a:#}");
        assert_eq!(error_of(&a).0, -32700, "{a:#}");
        assert!(error_of(&a).1.contains("not JSON"), "{a:#}");
    }
    // JSON that is no message: an invalid request, with the id when it has one.
    s.raw(b"{\"jsonrpc\": \"2.0\", \"id\": 7}\n");
    let a = s.answer();
    assert_eq!(
        (a["id"].clone(), error_of(&a).0),
        (json!(7), -32600),
        "{a:#}"
    );
    s.raw(b"[1, 2]\n");
    let a = s.answer();
    assert_eq!(
        (a["id"].clone(), error_of(&a).0),
        (Json::Null, -32600),
        "{a:#}"
    );
    // An ill-typed notification is not answered: the next answer is the next request's.
    s.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": {"no": "id"}}}),
    );
    let a = s.call(8, "ping", json!({}));
    assert_eq!(a["id"], json!(8), "{a:#}");
    assert!(a["result"].is_object(), "{a:#}");
    assert_eq!(s.close(), 0);
}

#[test]
fn a_line_over_the_bound_is_answered_thrown_away_and_the_next_one_served() {
    let dir = tempfile::tempdir().unwrap();
    let b = board(dir.path(), 0);
    let mut s = Server::ready(&b);
    let before = s.peak();
    // 64 MiB on one line: a note far over the bound, as a client would send it.
    let note = "x".repeat(64 << 20);
    s.tool(1, "note", json!({"section": "Evidence", "note": note}));
    let a = s.answer();
    assert_eq!(a["id"], Json::Null, "{a:#}");
    let (code, message) = error_of(&a);
    assert_eq!(code, -32700, "{a:#}");
    assert!(
        message.contains("4 MiB") && message.contains("note_file"),
        "{a:#}"
    );
    // The rest of that line was thrown away as it came: the next request is served.
    let a = s.call(2, "tools/call", json!({"name": "status", "arguments": {}}));
    assert_eq!(a["id"], json!(2), "{a:#}");
    assert_ne!(a["result"]["isError"], json!(true), "{a:#}");
    // It was never held: the server's peak grew by far less than the line.
    if prereq::require(&PROC_STATUS, Path::new("/proc/self/status").exists()) {
        let grew = s.peak().saturating_sub(before);
        assert!(grew < 32 << 20, "the server's peak grew by {grew} bytes");
    }
    // A line just under the bound is read as any other.
    let note = "y".repeat((4 << 20) - 1024);
    let a = s.call(
        3,
        "tools/call",
        json!({"name": "note", "arguments": {"section": "Evidence", "note": note}}),
    );
    assert_eq!(a["id"], json!(3), "{a:#}");
    assert!(a["result"].is_object(), "{a:#}");
    assert_eq!(s.close(), 0);
}

#[test]
fn ill_typed_params_of_a_method_the_server_serves_are_invalid_params_in_the_readers_words() {
    let dir = tempfile::tempdir().unwrap();
    let b = board(dir.path(), 0);
    let mut s = Server::ready(&b);
    for (id, method, params, words) in [
        (1, "tools/call", json!({"name": 5}), "expected a string"),
        (
            2,
            "tools/call",
            json!({"name": "status", "arguments": "all"}),
            "expected a map",
        ),
        (3, "tools/call", Json::Null, "none"),
        (4, "prompts/get", json!({}), "missing field `name`"),
    ] {
        let msg = if params.is_null() {
            json!({"jsonrpc": "2.0", "id": id, "method": method})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        };
        s.send(&msg);
        let a = s.answer();
        assert_eq!(a["id"], json!(id), "{a:#}");
        let (code, message) = error_of(&a);
        assert_eq!(code, -32602, "{method}: {a:#}");
        assert!(
            message.contains(method) && message.contains(words),
            "{method}: {a:#}"
        );
    }
    // A method the server does not serve is still not found.
    let a = s.call(5, "resources/unheard-of", json!({}));
    assert_eq!(error_of(&a).0, -32601, "{a:#}");
    assert_eq!(s.close(), 0);
}

#[test]
fn calls_beyond_the_bound_wait_their_turn_and_a_cancelled_one_gives_its_place_up() {
    let dir = tempfile::tempdir().unwrap();
    let b = board(dir.path(), 0);
    let mut s = Server::ready(&b);
    let wait = json!({"wait": true, "timeout": 600});
    // Every place taken by a wait (not alice's turn: each waits its 600 s).
    for id in 1..=RUNNING as u64 {
        s.tool(id, "poll", wait.clone());
    }
    // A wait more, and a status: both wait their turn, while a ping (no call) is answered.
    s.tool(100, "poll", wait.clone());
    s.tool(101, "status", json!({}));
    let a = s.call(102, "ping", json!({}));
    assert_eq!(
        a["id"],
        json!(102),
        "the status ran beyond the bound: {a:#}"
    );
    // The waiting wait is cancelled: it gives its place up without taking one.
    s.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 100}}),
    );
    let a = s.call(103, "ping", json!({}));
    assert_eq!(a["id"], json!(103), "{a:#}");
    // A running wait is cancelled: its place goes to the status, which is answered next.
    s.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 1}}),
    );
    let a = s.answer();
    assert_eq!(a["id"], json!(101), "{a:#}");
    assert!(a["result"]["content"].is_array(), "{a:#}");
    assert_ne!(a["result"]["isError"], json!(true), "{a:#}");
    // The input ends with waits in flight: they end, and so does the server.
    assert_eq!(s.close(), 0);
}

#[test]
fn many_calls_on_a_large_board_hold_the_memory_of_the_bound_not_of_the_calls() {
    if !prereq::require(&PROC_STATUS, Path::new("/proc/self/status").exists()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let b = board(dir.path(), 15 << 20);
    // What one call costs the server, all told.
    let mut one = Server::ready(&b);
    let a = one.call(1, "tools/call", json!({"name": "status", "arguments": {}}));
    assert!(a["result"]["content"].is_array(), "{a:#}");
    assert_ne!(a["result"]["isError"], json!(true), "{a:#}");
    let single = one.peak();
    assert_eq!(one.close(), 0);
    // 256 at once.
    let mut many = Server::ready(&b);
    let calls = 256;
    for id in 1..=calls {
        many.tool(id, "status", json!({}));
    }
    let mut answered = 0;
    while answered < calls {
        let a = many.answer();
        assert!(a["result"]["content"].is_array(), "{a:#}");
        assert_ne!(a["result"]["isError"], json!(true), "{a:#}");
        answered += 1;
    }
    let peak = many.peak();
    assert_eq!(many.close(), 0);
    // Bounded, at most RUNNING calls' worth at once; twice that as the margin.
    let bound = 2 * RUNNING as u64 * single;
    assert!(
        peak < bound,
        "256 status calls on a 15 MiB board peaked at {} MiB; one call at {} MiB; the bound \
         is {} MiB",
        peak >> 20,
        single >> 20,
        bound >> 20
    );
}

#[test]
fn a_file_argument_is_read_only_inside_the_boards_places() {
    let dir = tempfile::tempdir().unwrap();
    let b = board(dir.path(), 1000);
    let elsewhere = tempfile::tempdir().unwrap();
    let secret = elsewhere.path().join("secret.txt");
    std::fs::write(&secret, "SECRET-4242\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.path().join("link.txt")).unwrap();
    std::fs::write(dir.path().join("mine.txt"), "INSIDE-1717\n").unwrap();
    let mut s = Server::ready(&b);
    let mut id = 0;
    for file in [
        secret.to_str().unwrap().to_string(),
        dir.path().join("link.txt").to_str().unwrap().to_string(),
        dir.path()
            .join("../")
            .join(elsewhere.path().file_name().unwrap())
            .join("secret.txt")
            .to_str()
            .unwrap()
            .to_string(),
        "/proc/self/environ".to_string(),
    ] {
        id += 1;
        s.tool(
            id,
            "note",
            json!({"section": "Evidence", "note_file": file}),
        );
        let a = s.answer();
        assert_eq!(a["result"]["isError"], json!(true), "{file}: {a:#}");
        assert!(
            a.to_string().contains("outside the places"),
            "{file}: {a:#}"
        );
    }
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(!text.contains("SECRET-4242"));
    // A file in the board's directory is read.
    s.tool(
        9,
        "note",
        json!({"section": "Evidence", "note_file": dir.path().join("mine.txt")}),
    );
    let a = s.answer();
    assert_ne!(a["result"]["isError"], json!(true), "{a:#}");
    assert!(std::fs::read_to_string(&b).unwrap().contains("INSIDE-1717"));
    drop(s);
    // The server's user may widen the places.
    let root = elsewhere.path().to_str().unwrap().to_string();
    let mut s = Server::ready_with(&b, &["--read-root", &root]);
    s.tool(
        1,
        "note",
        json!({"section": "Evidence", "note_file": secret}),
    );
    let a = s.answer();
    assert_ne!(a["result"]["isError"], json!(true), "{a:#}");
    assert!(std::fs::read_to_string(&b).unwrap().contains("SECRET-4242"));
}

/// The result of a tool call, as JSON (its text), and whether it is an error.
fn result_of(answer: &Json) -> (Json, bool) {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no result: {answer:#}"));
    (
        serde_json::from_str(text).unwrap(),
        answer["result"]["isError"] == json!(true),
    )
}

/// A project of two boards in directories of their own, `a/task.md` (doer d1) and `b/task.md`
/// (doer d2), each with alice as its reviewer.
fn project(dir: &Path) -> (std::path::PathBuf, [std::path::PathBuf; 2]) {
    let project = dir.join("boards");
    let boards = ["a", "b"].map(|name| {
        let board = project.join(name).join("task.md");
        std::fs::create_dir_all(board.parent().unwrap()).unwrap();
        let out = crate::common::pair([
            "init",
            board.to_str().unwrap(),
            "--goal",
            &format!("Task {name}"),
            "--doer",
            &format!("d-{name}"),
            "--reviewers",
            "alice",
        ]);
        assert_eq!(out.code, Some(0), "{}", out.report());
        board
    });
    (project, boards)
}

#[test]
fn a_project_server_acts_on_the_board_the_last_next_named() {
    let dir = tempfile::tempdir().unwrap();
    let (project, [a, b]) = project(dir.path());
    let registered = |board: &Path| {
        std::fs::read_to_string(board)
            .unwrap()
            .contains("by=alice cmd=register")
    };
    let mut s = Server::ready(&project);
    // A tool that takes no board runs before any `next`.
    s.tool(100, "skill", json!({}));
    let a0 = s.answer();
    assert_ne!(a0["result"]["isError"], json!(true), "{a0:#}");
    // Before any `next`, a board tool has no board: it says to call `next`, as a call.
    s.tool(1, "status", json!({}));
    let (refusal, is_error) = result_of(&s.answer());
    assert!(is_error, "{refusal:#}");
    assert_eq!(refusal["error"]["code"], json!(4), "{refusal:#}");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Call `next`"),
        "{refusal:#}"
    );
    assert_eq!(
        refusal["error"]["hint"]["tool"],
        json!({"name": "next", "arguments": {}}),
        "{refusal:#}"
    );
    // `next` answers as `pair next` does, and names board a: `register` acts on it, not on b.
    s.tool(2, "next", json!({}));
    let (step, is_error) = result_of(&s.answer());
    assert!(!is_error, "{step:#}");
    let cli = crate::common::pair([
        "next",
        "--agent",
        "alice",
        project.to_str().unwrap(),
        "--json",
    ]);
    let cli: Json = serde_json::from_str(&cli.stdout).unwrap();
    assert_eq!(step["step"]["board"], cli["step"]["board"], "{step:#}");
    assert_eq!(step["steps"].as_array().unwrap().len(), 2, "{step:#}");
    assert_eq!(
        step["step"]["board"],
        json!(a.to_str().unwrap()),
        "{step:#}"
    );
    assert_eq!(step["exit"], json!(0), "{step:#}");
    assert_eq!(
        step["next"]["tool"],
        json!({"name": "register", "arguments": {}}),
        "{step:#}"
    );
    // The step on the other board is no call here: `next` names it when it comes first.
    assert_eq!(step["steps"][1]["next"]["tool"], Json::Null, "{step:#}");
    s.tool(3, "register", json!({}));
    let (done, is_error) = result_of(&s.answer());
    assert!(!is_error, "{done:#}");
    assert!(registered(&a) && !registered(&b));
    // A file argument is read only inside the current board's places: b's directory is not
    // one of a's.
    let elsewhere = b.parent().unwrap().join("note.txt");
    std::fs::write(&elsewhere, "SECRET-OF-B\n").unwrap();
    let before = std::fs::read(&a).unwrap();
    s.tool(
        4,
        "note",
        json!({"section": "Evidence", "note_file": elsewhere}),
    );
    let (refusal, is_error) = result_of(&s.answer());
    assert!(is_error, "{refusal:#}");
    assert!(
        refusal.to_string().contains("outside the places"),
        "{refusal:#}"
    );
    assert_eq!(std::fs::read(&a).unwrap(), before);
    // The next `next` names b.
    s.tool(5, "next", json!({}));
    let (step, _) = result_of(&s.answer());
    assert_eq!(
        step["step"]["board"],
        json!(b.to_str().unwrap()),
        "{step:#}"
    );
    s.tool(6, "register", json!({}));
    let (_, is_error) = result_of(&s.answer());
    assert!(!is_error);
    assert!(registered(&b));
    // Nothing left for alice: `next` names no board, and the current board is cleared.
    s.tool(7, "next", json!({}));
    let (nothing, _) = result_of(&s.answer());
    assert_eq!(nothing["exit"], json!(10), "{nothing:#}");
    assert_eq!(nothing["step"], Json::Null, "{nothing:#}");
    assert_eq!(
        nothing["next"]["tool"],
        json!({"name": "next", "arguments": {"wait": true}}),
        "{nothing:#}"
    );
    s.tool(8, "status", json!({}));
    let (refusal, is_error) = result_of(&s.answer());
    assert!(is_error, "{refusal:#}");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no board to act on"),
        "{refusal:#}"
    );
    // The waiting `next` is the project's poll from the server's cursor: the first starts at
    // the boards' ends, so it holds no record from before; each later one gives what others
    // wrote since the last, once.
    s.tool(9, "next", json!({"wait": true, "timeout": 1}));
    let (quiet, _) = result_of(&s.answer());
    assert_eq!(quiet["exit"], json!(10), "{quiet:#}");
    assert_eq!(quiet["records"], json!([]), "{quiet:#}");
    assert!(quiet["cursor"].is_string(), "{quiet:#}");
    assert!(quiet["waited_ms"].as_u64().unwrap() >= 1000, "{quiet:#}");
    let out = crate::common::pair([
        "advance",
        a.to_str().unwrap(),
        "--agent",
        "d-a",
        "PLANNING",
        "--user-approved",
    ]);
    assert_eq!(out.code, Some(0), "{}", out.report());
    s.tool(10, "next", json!({"wait": true, "timeout": 30}));
    let (news, _) = result_of(&s.answer());
    let records = news["records"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{news:#}");
    assert_eq!(records[0]["by"], json!("d-a"), "{news:#}");
    assert_eq!(records[0]["board"], json!(a.to_str().unwrap()), "{news:#}");
    s.tool(11, "next", json!({"wait": true, "timeout": 1}));
    let (quiet, _) = result_of(&s.answer());
    assert_eq!(quiet["records"], json!([]), "{quiet:#}");
    assert_eq!(s.close(), 0);
}

#[test]
fn a_project_server_serves_a_git_remotes_namespace_as_it_serves_a_directory() {
    if !prereq::require(&prereq::GIT, prereq::on_path("git")) {
        return;
    }
    let remote = tempfile::tempdir().unwrap();
    crate::common::git(remote.path(), &["init", "-q", "--bare", "remote.git"]);
    let cache = tempfile::tempdir().unwrap();
    let env = [("PAIR_CACHE_DIR", cache.path().to_str().unwrap())];
    let url = format!("file://{}/remote.git", remote.path().display());
    let board = |r: &str| format!("git+{url}#refs/pair/{r}:task.md");
    for name in ["a", "b"] {
        let out = crate::common::pair_env(
            [
                "init",
                &board(name),
                "--goal",
                "Task",
                "--doer",
                "d",
                "--reviewers",
                "alice",
            ],
            &env,
        );
        assert_eq!(out.code, Some(0), "{}", out.report());
    }
    // Where each board's ref stands in the remote: a write moves it.
    let tip = |name: &str| {
        crate::common::git(
            &remote.path().join("remote.git"),
            &["rev-parse", &format!("refs/pair/{name}")],
        )
    };
    let project = format!("git+{url}#refs/pair/:task.md");
    let mut s = Server::ready_in(Path::new(&project), &[], &env);
    s.tool(1, "next", json!({}));
    let (step, is_error) = result_of(&s.answer());
    assert!(!is_error, "{step:#}");
    assert_eq!(step["step"]["board"], json!(board("a")), "{step:#}");
    assert_eq!(
        step["next"]["tool"],
        json!({"name": "register", "arguments": {}}),
        "{step:#}"
    );
    assert_eq!(step["steps"][1]["next"]["tool"], Json::Null, "{step:#}");
    let (a, b) = (tip("a"), tip("b"));
    s.tool(2, "register", json!({}));
    let (done, is_error) = result_of(&s.answer());
    assert!(!is_error, "{done:#}");
    assert_eq!(done["exit"], json!(0), "{done:#}");
    assert_ne!(tip("a"), a, "register wrote board a");
    assert_eq!(tip("b"), b, "and not board b");
    s.tool(3, "next", json!({}));
    let (step, _) = result_of(&s.answer());
    assert_eq!(step["step"]["board"], json!(board("b")), "{step:#}");
    s.tool(4, "register", json!({}));
    let (_, is_error) = result_of(&s.answer());
    assert!(!is_error);
    // Nothing left: a waiting `next` returns at its timeout with a cursor, and no board is
    // current.
    s.tool(5, "next", json!({"wait": true, "timeout": 1}));
    let (quiet, _) = result_of(&s.answer());
    assert_eq!(quiet["exit"], json!(10), "{quiet:#}");
    assert!(quiet["cursor"].is_string(), "{quiet:#}");
    assert_eq!(
        quiet["next"]["tool"],
        json!({"name": "next", "arguments": {"wait": true}}),
        "{quiet:#}"
    );
    s.tool(6, "status", json!({}));
    let (_, is_error) = result_of(&s.answer());
    assert!(is_error);
    assert_eq!(s.close(), 0);
}

#[test]
fn a_project_server_has_no_board_once_next_says_the_agent_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("boards");
    std::fs::create_dir_all(&project).unwrap();
    let board = project.join("a.md");
    let board_arg = board.to_str().unwrap();
    let out = crate::common::pair([
        "init",
        board_arg,
        "--goal",
        "Task",
        "--doer",
        "d",
        "--reviewers",
        "alice",
    ]);
    assert_eq!(out.code, Some(0), "{}", out.report());
    let mut s = Server::ready(&project);
    s.tool(1, "next", json!({}));
    let (step, _) = result_of(&s.answer());
    assert_eq!(step["step"]["board"], json!(board_arg), "{step:#}");
    s.tool(2, "register", json!({}));
    let (_, is_error) = result_of(&s.answer());
    assert!(!is_error);
    // alice hands her role over on the board `next` named; carol takes it.
    s.tool(3, "handoff", json!({"to": "carol", "user_approved": true}));
    let (handed, is_error) = result_of(&s.answer());
    assert!(!is_error, "{handed:#}");
    let out = crate::common::pair(["acknowledge", board_arg, "--agent", "carol"]);
    assert_eq!(out.code, Some(0), "{}", out.report());
    // Done in the project (exit 11): no board is current any more.
    s.tool(4, "next", json!({}));
    let (done, _) = result_of(&s.answer());
    assert_eq!(done["exit"], json!(11), "{done:#}");
    assert_eq!(done["finished"], json!(true), "{done:#}");
    assert_eq!(done["step"], Json::Null, "{done:#}");
    s.tool(5, "status", json!({}));
    let (refusal, is_error) = result_of(&s.answer());
    assert!(is_error, "{refusal:#}");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no board to act on"),
        "{refusal:#}"
    );
    assert_eq!(s.close(), 0);
}

#[test]
fn a_server_started_with_a_key_signs_its_writes_and_no_tool_takes_one() {
    // The key is the server's user's, given when it starts; no tool argument names a key, so
    // an agent behind the server cannot sign as someone else.
    let keys = crate::common::signing::Signers::new(&["doer", "alice", "bob"]);
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("task.md");
    let bs = b.to_str().unwrap();
    let with = |args: &[&str], key: &str| {
        let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        v.extend(keys.flags(key));
        crate::common::pair(v)
    };
    let init = with(
        &[
            "init",
            bs,
            "--goal",
            "g",
            "--reviewers",
            "alice",
            "--signed",
        ],
        "doer",
    );
    assert_eq!(init.code, Some(0), "{}", init.report());
    let reg = with(&["register", bs, "--agent", "alice"], "alice");
    assert_eq!(reg.code, Some(0), "{}", reg.report());
    let key = |name: &str| keys.key(name).display().to_string();
    let allowed = keys.allowed().display().to_string();

    let mut s = Server::ready_with(
        &b,
        &[
            "--signing-key",
            &key("alice"),
            "--allowed-signers",
            &allowed,
        ],
    );
    let tools = s.call(1, "tools/list", json!({}));
    let listed = tools.to_string();
    assert!(listed.contains("\"note\""), "{tools:#}");
    for word in ["signing", "allowed_signers", "signed"] {
        assert!(!listed.contains(word), "a tool takes {word}: {tools:#}");
    }
    s.tool(
        2,
        "note",
        json!({"section": "Evidence", "note": "read through the MCP server"}),
    );
    let a = s.answer();
    assert_ne!(a["result"]["isError"], json!(true), "{a:#}");
    drop(s);
    let text = std::fs::read_to_string(&b).unwrap();
    let last = text
        .lines()
        .rfind(|l| l.starts_with("- at="))
        .unwrap()
        .to_string();
    assert!(
        last.contains("by=alice") && last.contains(" sig="),
        "the note's record is alice's and signed: {last}"
    );
    assert!(!text.contains("PRIVATE KEY"), "no key reaches the board");
    let mut v = vec!["validate".to_string(), bs.to_string(), "--json".into()];
    v.extend(keys.trust());
    let out = crate::common::pair(v);
    assert_eq!(out.code, Some(0), "{}", out.report());
    let sigs = &out.json()["files"][0]["signatures"];
    assert_eq!(sigs["unvouched"], json!([]), "{sigs:#}");

    // Started with bob's key for alice, the server's writes are refused (exit 6 in the
    // tool's error) and the board is left as it was.
    let before = std::fs::read(&b).unwrap();
    let mut s = Server::ready_with(
        &b,
        &["--signing-key", &key("bob"), "--allowed-signers", &allowed],
    );
    s.tool(
        1,
        "note",
        json!({"section": "Evidence", "note": "under alice's name with bob's key"}),
    );
    let a = s.answer();
    assert_eq!(a["result"]["isError"], json!(true), "{a:#}");
    let (err, _) = result_of(&a);
    assert_eq!(err["error"]["code"], json!(6), "{a:#}");
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nothing was written")),
        "{a:#}"
    );
    drop(s);
    assert_eq!(std::fs::read(&b).unwrap(), before);
}
