//! Every `--json` output: `"schema": 1`, exactly the keys docs/json.md documents, and the error
//! envelope on stderr for refusals and usage errors.

use crate::common::phases::board_in;
use crate::common::*;
use crate::proto::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Output;

#[test]
fn version_json_is_an_object_like_every_other_command() {
    for args in [
        vec!["--version", "--json"],
        vec!["--json", "-V"],
        vec!["poll", "--version", "--json"],
    ] {
        let out = pair(&args);
        out.code(0);
        let j = out.json();
        assert_eq!(j["schema"], 1);
        assert_eq!(j["name"], "pair");
        assert_eq!(j["version"], env!("CARGO_PKG_VERSION"));
    }
    let out = pair(["--version"]);
    out.code(0);
    assert_eq!(
        out.stdout.trim(),
        format!("pair {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn usage_error_with_json_gives_the_error_envelope_with_code_4() {
    let b = Board::minimal();
    let c = b.aux_file("c.md", MINIMAL);
    let sha = sha256_hex(MINIMAL);
    let out = pair([
        "write",
        b.p(),
        "--json",
        "--content-file",
        c.to_str().unwrap(),
        "--expect-sha256",
        sha.as_str(),
        "--create-if-missing",
    ]);
    out.json_error(4);
    let out = pair(["poll", b.p(), "--json"]);
    out.json_error(4);
    b.assert_untouched(MINIMAL.as_bytes());
}

#[test]
fn json_error_envelope_has_code_kind_message_and_empty_stdout() {
    let b = Board::minimal();
    // stale write
    let e = b
        .write_expect(
            MINIMAL.replace("Do the thing.", "x"),
            &"0".repeat(64),
            &["--json"],
        )
        .json_error(3);
    assert!(e["kind"].is_string());
    // invalid content
    b.write_expect(
        set_top(MINIMAL, "phase", "DONE"),
        &sha256_hex(MINIMAL),
        &["--json"],
    )
    .json_error(5);
    // invalid board on read
    let bad = Board::new(set_top(MINIMAL, "yolo", "\"yes please\""));
    pair(["status", bad.p(), "--json"]).json_error(5);
    pair(["poll", bad.p(), "--agent", "doer", "--json"]).json_error(5);
    b.assert_untouched(MINIMAL.as_bytes());
}

/// docs/json.md, as section heading → [(key, always printed)].
fn documented() -> BTreeMap<String, Vec<(String, bool)>> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json.md"))
        .expect("docs/json.md");
    let mut out: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    let mut heading = String::new();
    for line in doc.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            heading = h.to_string();
        } else if let Some(row) = line.strip_prefix("| `") {
            let key = row.split('`').next().unwrap_or_default().to_string();
            let cells: Vec<&str> = line.split(" | ").collect();
            let always = cells.get(2).map(|c| c.trim() == "always").unwrap_or(false);
            out.entry(heading.clone()).or_default().push((key, always));
        }
    }
    out
}

fn section<'a>(
    docs: &'a BTreeMap<String, Vec<(String, bool)>>,
    command: &str,
) -> &'a [(String, bool)] {
    let needle = if command == "error" {
        "Error envelope".to_string()
    } else {
        format!("`pair {command}`")
    };
    docs.iter()
        .find(|(h, _)| h.contains(&needle))
        .map(|(_, v)| v.as_slice())
        .unwrap_or_else(|| panic!("docs/json.md has no section for {command}"))
}

/// Check one printed object against its section.
fn check(docs: &BTreeMap<String, Vec<(String, bool)>>, command: &str, v: &Value) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("{command}: not a JSON object: {v}"));
    assert_eq!(obj.get("schema"), Some(&Value::from(1)), "{command}: {v}");
    let keys = section(docs, command);
    for k in obj.keys() {
        assert!(
            keys.iter().any(|(d, _)| d == k),
            "{command} prints `{k}`, which docs/json.md does not document"
        );
    }
    for (k, always) in keys {
        if *always {
            assert!(
                obj.contains_key(k),
                "docs/json.md says {command} always prints `{k}`, but it did not: {v}"
            );
        }
    }
}

fn stdout_json(command: &str, out: &Output, codes: &[i32]) -> Value {
    let code = out.status.code().unwrap_or(-1);
    assert!(
        codes.contains(&code),
        "{command}: exit {code}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{command}: stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn every_command_prints_documented_keys_with_schema_1() {
    let docs = documented();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let run = |command: &str, args: &[&str], codes: &[i32]| {
        let mut all = args.to_vec();
        all.push("--json");
        let v = stdout_json(command, &output_in(d, &all), codes);
        check(&docs, command, &v);
        v
    };

    run(
        "init",
        &["init", "t.md", "--goal", "g", "--reviewers", "alice"],
        &[0],
    );
    run("poll", &["poll", "t.md", "--agent", "doer"], &[0]);
    let waited = run(
        "poll",
        &[
            "poll",
            "t.md",
            "--agent",
            "doer",
            "--wait",
            "--timeout",
            "1",
        ],
        &[0],
    );
    assert!(waited.get("waited_ms").is_some());
    run("poll", &["poll", "t.md", "--agent", "alice"], &[0]);
    let status = run("status", &["status", "t.md"], &[0]);
    let sem = [
        ("register", vec!["register", "t.md", "--agent", "alice"]),
        (
            "advance",
            vec![
                "advance",
                "t.md",
                "--agent",
                "doer",
                "PLANNING",
                "--user-approved",
            ],
        ),
        (
            "submit",
            vec![
                "submit",
                "t.md",
                "--agent",
                "doer",
                "plan",
                "--note",
                "p",
                "--user-approved",
            ],
        ),
        ("diff", vec!["diff", "t.md"]),
        ("diff", vec!["diff", "t.md", "--stat"]),
        ("claim", vec!["claim", "t.md", "--agent", "alice"]),
        (
            "verdict",
            vec![
                "verdict",
                "t.md",
                "--agent",
                "alice",
                "APPROVED",
                "--revision",
                "1",
                "--note",
                "ok",
            ],
        ),
        (
            "note",
            vec![
                "note",
                "t.md",
                "--agent",
                "doer",
                "--section",
                "Evidence",
                "--note",
                "e",
            ],
        ),
        (
            "block",
            vec!["block", "t.md", "--agent", "alice", "--reason", "r"],
        ),
        (
            "unblock",
            vec!["unblock", "t.md", "--agent", "doer", "--reason", "r"],
        ),
    ];
    for (name, args) in &sem {
        run(name, args, &[0]);
    }
    run("show", &["show", "t.md"], &[0]);
    run("show", &["show", "t.md", "--latest"], &[0]);
    run("show", &["show", "t.md", "Evidence"], &[0]);
    run("show", &["show", "t.md", "Evidence", "--latest"], &[0]);
    run("brief", &["brief", "t.md", "--for", "doer"], &[0]);
    run("brief", &["brief", "t.md", "--for", "reviewer"], &[0]);
    run(
        "block",
        &["block", "t.md", "--agent", "alice", "--reason", "again"],
        &[0],
    );
    let blocked = run("status", &["status", "t.md"], &[0]);
    assert_eq!(blocked["blocked"]["by"], "alice");
    run("poll", &["poll", "t.md", "--agent", "alice"], &[12]);
    run(
        "unblock",
        &["unblock", "t.md", "--agent", "doer", "--reason", "r"],
        &[0],
    );
    let status2 = run("status", &["status", "t.md", "--agent", "alice"], &[0]);
    assert_ne!(status["sha256"], status2["sha256"]);
    let sha = status2["sha256"].as_str().unwrap().to_string();
    std::fs::copy(d.join("t.md"), d.join("copy.md")).unwrap();
    run(
        "write",
        &[
            "write",
            "t.md",
            "--content-file",
            "copy.md",
            "--expect-sha256",
            &sha,
        ],
        &[0],
    );
    let created = run(
        "write",
        &[
            "write",
            "--path",
            "new.md",
            "--content-file",
            "copy.md",
            "--create-if-missing",
        ],
        &[0],
    );
    assert_eq!(created["created"], Value::Bool(true));
    run(
        "report-usage",
        &["report-usage", "t.md", "--agent", "alice", "--tokens", "9"],
        &[0],
    );
    run("log", &["log", "t.md"], &[0]);
    // Nothing is late yet: the one line is the summary.
    run("watch", &["watch", "t.md", "--once"], &[0]);
    run(
        "stop",
        &["stop", "t.md", "--agent", "doer", "--reason", "done"],
        &[0],
    );
    run("stats", &["stats", "t.md", "new.md"], &[0]);
    run("migrate", &["migrate", "t.md", "moved.md"], &[0]);
    run("migrate", &["migrate", "moved.md"], &[0]);
    run("poll", &["poll", "t.md", "--agent", "alice"], &[11]);
    run("validate", &["validate", "t.md", "new.md"], &[0]);
    std::fs::write(d.join("bad.md"), "---\nphase: NOPE\n---\n").unwrap();
    run("validate", &["validate", "bad.md"], &[5]);
    let as_format = stdout_json(
        "validate",
        &output_in(d, &["validate", "--format", "json", "t.md"]),
        &[0],
    );
    check(&docs, "validate", &as_format);
    let root = d.display().to_string();
    run(
        "worktree-path",
        &["worktree-path", "t.md", "--repo-root", &root],
        &[0],
    );
    run("skill", &["skill"], &[0]);
    run("completions", &["completions", "zsh"], &[0]);
    run("man", &["man"], &[0]);

    // Errors: the envelope on stderr, stdout empty.
    for args in [
        vec!["status", "missing.md", "--json"],
        vec!["poll", "t.md", "--json"],
        vec![
            "verdict",
            "t.md",
            "--agent",
            "alice",
            "MAYBE",
            "--revision",
            "1",
            "--json",
        ],
        vec!["advance", "t.md", "--agent", "doer", "CODING", "--json"],
    ] {
        let out = output_in(d, &args);
        assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
        let v: Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|e| {
            panic!(
                "{args:?}: stderr not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        check(&docs, "error", &v);
        assert_eq!(v["error"]["code"], Value::from(out.status.code().unwrap()));
    }
}

#[test]
fn docs_json_covers_every_visible_command() {
    use clap::CommandFactory;
    let docs = documented();
    for sub in pair::cli::Cli::command().get_subcommands() {
        if sub.is_hide_set() {
            continue;
        }
        section(&docs, sub.get_name());
    }
}

#[test]
fn worktree_create_and_check_print_documented_keys_with_schema_1() {
    let docs = documented();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    crate::common::git(d, &["init", "-q", "-b", "main"]);
    std::fs::write(d.join(".gitignore"), "t.md*\n.worktrees/\n").unwrap();
    crate::common::git(d, &["add", ".gitignore"]);
    crate::common::git(d, &["commit", "-q", "-m", "base"]);
    let run = |command: &str, args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--json");
        let v = stdout_json(command, &output_in(d, &all), &[0]);
        check(&docs, command, &v);
        v
    };
    let init = run(
        "init",
        &[
            "init",
            "t.md",
            "--reviewers",
            "alice",
            "--require-check",
            "ok=true",
        ],
    );
    assert_eq!(init["required_checks"][0]["name"], "ok");
    for args in [
        vec!["register", "t.md", "--agent", "alice"],
        vec![
            "advance",
            "t.md",
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ],
        vec![
            "submit",
            "t.md",
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--user-approved",
        ],
        vec![
            "verdict",
            "t.md",
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
    ] {
        assert!(output_in(d, &args).status.success(), "{args:?}");
    }
    let created = run(
        "worktree",
        &[
            "worktree",
            "create",
            "t.md",
            "--agent",
            "doer",
            "--user-approved",
        ],
    );
    assert_eq!(created["worktree"]["topic_branch"], "pair/t");
    let checked = run(
        "check",
        &["check", "t.md", "--agent", "alice", "--name", "ok"],
    );
    assert_eq!(checked["check"]["passed"], true);
    let v = stdout_json(
        "validate",
        &output_in(d, &["validate", "t.md", "--json"]),
        &[0],
    );
    check(&docs, "validate", &v);
    assert_eq!(v["files"][0]["lifecycle"]["verified"], true);
}

#[test]
fn semantic_commands_print_schema_1_json_and_honour_a_matching_expect_sha256() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.ok("alice", &["register"]);
    let h = p.b.sha();
    let out = p.ok(
        "doer",
        &[
            "advance",
            "PLANNING",
            "--user-approved",
            "--expect-sha256",
            &h,
            "--json",
        ],
    );
    let v = out.json();
    assert_eq!(v["schema"], 1, "{}", out.report());
    assert_eq!(
        v["phase"],
        "PLANNING",
        "the result reports the new phase: {}",
        out.report()
    );
    let text = out.stdout.clone();
    assert!(
        text.contains(&p.b.sha()),
        "the result reports the new SHA-256: {}",
        out.report()
    );
}

#[test]
fn refusals_with_json_print_the_error_envelope_only_on_stderr() {
    let p = board_in("DRAFT", &["--reviewers", "alice,bob"]);
    let err = p
        .refused("doer", &["advance", "ANALYZING", "--json"], 6)
        .json_error(6);
    assert!(
        norm(err["message"].as_str().unwrap()).contains("user approved"),
        "the message names the gate / --user-approved: {err}"
    );
    p.refused(
        "alice",
        &["advance", "PLANNING", "--user-approved", "--json"],
        6,
    )
    .json_error(6);
}
