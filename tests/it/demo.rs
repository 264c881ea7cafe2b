//! `pair demo`: three agents driving a real task to a valid committed board, its timeline, and its
//! clean-up when it ends or is interrupted.

use crate::common::files::QUICK;
use crate::common::reads::text;
use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

/// Processes whose working directory is inside `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        // a removed directory reads as `PATH (deleted)`
        if let Ok(cwd) = fs::read_link(entry.path().join("cwd"))
            && cwd.to_string_lossy().starts_with(&*dir.to_string_lossy())
        {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

#[test]
fn an_interrupted_demo_ends_its_agents_and_removes_its_directory() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = StdCommand::new(pair_bin())
            .arg("demo")
            .env("TMPDIR", tmp.path())
            .env_remove("PAIR_AGENT")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let demo_dir = loop {
            if let Some(d) = dir_entries(tmp.path()).into_iter().next() {
                break tmp.path().join(d);
            }
            assert!(start.elapsed() < QUICK, "the demo never made its directory");
            std::thread::sleep(Duration::from_millis(2));
        };
        // let the agents start
        while !demo_dir.join("task.md").exists() && start.elapsed() < QUICK {
            std::thread::sleep(Duration::from_millis(2));
        }
        // SAFETY: a plain syscall on our own child.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let deadline = Instant::now() + QUICK;
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "the demo did not end");
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(sig), "dies of the signal\n{stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
        assert!(
            !demo_dir.exists(),
            "the demo directory must be removed: {:?}",
            dir_entries(&demo_dir)
        );
        assert!(dir_entries(tmp.path()).is_empty());
        // the agents were sent SIGKILL; give the kernel a moment to reap them
        let deadline = Instant::now() + Duration::from_secs(5);
        while !processes_in(&demo_dir).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            processes_in(&demo_dir),
            Vec::<String>::new(),
            "agents left running"
        );
    }
}

#[test]
fn demo_runs_four_agents_with_a_dissent_round_to_a_valid_committed_blackboard() {
    let tmp = tempfile::tempdir().unwrap();
    let keep = tmp.path().join("demo");
    let keep_s = keep.display().to_string();
    let out = output_in(tmp.path(), &["demo", "--keep", &keep_s, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("demo --json");
    assert_eq!(v["ok"], Value::Bool(true));
    assert_eq!(v["user_approval"], "--user-approved");

    // The blackboard left behind is valid, CLEANED_UP, with the scripted counters.
    let board = keep.join("task.md");
    let board_s = board.display().to_string();
    let validate = output_in(tmp.path(), &["validate", &board_s]);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}",
        text(&validate.stdout)
    );
    let status = output_in(tmp.path(), &["status", &board_s, "--json"]);
    let s: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(s["phase"], "CLEANED_UP");
    // The commit is real, on main, and the worktree is gone.
    let sha = s["frontmatter"]["commit_sha"].as_str().unwrap().to_string();
    assert_eq!(v["commit_sha"], sha.as_str());
    let git_out = std::process::Command::new("git")
        .arg("-C")
        .arg(&keep)
        .args(["merge-base", "--is-ancestor", &sha, "main"])
        .env_remove("GIT_DIR")
        .status()
        .unwrap();
    assert!(git_out.success(), "main contains the demo's commit {sha}");
    assert!(!keep.join(".worktrees").join("task").exists());
    assert_eq!(s["frontmatter"]["topic_branch"], "pair/task");
    assert_eq!(s["counters"]["analysis_revision"], 1);
    assert_eq!(
        s["counters"]["plan_revision"], 2,
        "one CHANGES_REQUESTED plan round"
    );
    assert_eq!(s["counters"]["red_test_round"], 1);
    assert_eq!(
        s["counters"]["code_review_round"], 2,
        "code, then a follow-up"
    );
    assert_eq!(s["yolo"], false);
    let agents = s["agents"].as_object().unwrap();
    assert_eq!(agents.len(), 4);
    assert_eq!(s["agents"]["alice"]["reviews"]["plan"]["reviewed"], 2);
    assert_eq!(s["agents"]["bob"]["reviews"]["code"]["verdict"], "APPROVED");
    let body = std::fs::read_to_string(&board).unwrap();
    assert!(
        body.contains("CHANGES_REQUESTED"),
        "the plan round is recorded"
    );
    assert!(body.contains("COMMENT"), "the code comment is recorded");
    assert!(body.contains("commit_sha: "), "{body}");
    // The code gate's dissent stage: dana, a fresh agent, answered advisory once; her ADV-1 is
    // in the consensus record and stats show the round.
    assert_eq!(
        s["frontmatter"]["dissent_gates"],
        serde_json::json!(["code"])
    );
    assert!(body.contains("Dissent rounds: 1."), "{body}");
    assert!(body.contains("ADV-1"), "{body}");
    let dissent = &v["stats"]["gates"]["code"]["dissent"];
    assert_eq!(dissent[0]["by"], "dana", "{dissent:#}");
    assert_eq!(dissent[0]["outcome"], "READY_TO_COMMIT", "{dissent:#}");
    assert_eq!(dissent.as_array().map(Vec::len), Some(1), "{dissent:#}");

    // The timeline shows each agent acting through real commands, and every handoff.
    let events = v["events"].as_array().unwrap();
    let by = |agent: &str, needle: &str| {
        events.iter().any(|e| {
            e["agent"] == agent && e["command"].as_str().is_some_and(|c| c.contains(needle))
        })
    };
    assert!(by("doer", "pair init task.md"));
    assert!(by("alice", "pair register task.md"));
    assert!(by("bob", "pair register task.md"));
    assert!(by(
        "alice",
        "pair verdict task.md CHANGES_REQUESTED --revision 1"
    ));
    assert!(by("bob", "pair verdict task.md COMMENT --revision 1"));
    assert!(by("doer", "pair submit task.md followup"));
    assert!(by("dana", "pair brief task.md --for dissenter"));
    assert!(by("dana", "pair dissent task.md advisory --revision 2"));
    assert!(by("doer", "pair worktree create task.md"));
    assert!(by("doer", "pair advance task.md COMMITTED --commit-sha"));
    assert!(by("doer", "pair advance task.md CLEANED_UP"));
    assert!(events.iter().any(|e| e["kind"] == "woke"));
    for agent in ["doer", "alice", "bob", "dana"] {
        assert!(
            events
                .iter()
                .any(|e| e["agent"] == agent && e["kind"] == "done"),
            "{agent} stops on the terminal phase"
        );
    }
    assert!(!events.iter().any(|e| e["kind"] == "fail"));
}

#[test]
fn demo_text_is_a_timeline_and_cleans_up_without_keep() {
    let tmp = tempfile::tempdir().unwrap();
    let out = output_in(tmp.path(), &["demo"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{t}\n{}", text(&out.stderr));
    assert!(t.contains("--user-approved"), "{t}");
    assert!(
        t.contains("PLANNING_SUBMITTED → PLAN_CHANGES_REQUESTED")
            || t.contains("REVIEWING_PLAN → PLAN_CHANGES_REQUESTED"),
        "{t}"
    );
    assert!(t.contains("READY_TO_COMMIT → COMMITTED"), "{t}");
    assert!(t.contains("removed"), "{t}");
    assert!(
        !t.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
    let dir = t
        .lines()
        .find_map(|l| l.strip_prefix("The demo directory "))
        .and_then(|l| l.split(" is removed").next())
        .expect("says where it ran");
    assert!(!Path::new(dir).exists(), "{dir} should be removed");
}

#[test]
fn demo_refuses_a_non_empty_keep_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("x"), "x").unwrap();
    let dir = tmp.path().display().to_string();
    let out = output_in(tmp.path(), &["demo", "--keep", &dir]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
}

#[test]
fn demo_project_works_four_boards_through_with_a_pool_a_dependency_and_a_handoff() {
    let tmp = tempfile::tempdir().unwrap();
    let keep = tmp.path().join("demo");
    let keep_s = keep.display().to_string();
    // The demo's own --timeout bounds it; nothing here is timed.
    let out = StdCommand::new(pair_bin())
        .args([
            "demo",
            "--project",
            "--keep",
            &keep_s,
            "--timeout",
            "240",
            "--json",
        ])
        .current_dir(tmp.path())
        .env_remove("PAIR_AGENT")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("demo --json");
    assert_eq!(v["ok"], Value::Bool(true));
    let project = keep.join("boards");
    let project_s = project.display().to_string();
    let json_of = |args: &[&str]| -> Value {
        serde_json::from_slice(&output_in(tmp.path(), args).stdout).unwrap()
    };

    // Every board is COMMITTED, and the project is valid.
    pair(["validate", &project_s]).code(0);
    // No objection was raised: the project's stats say so in words, not empty lists.
    pair(["stats", &project_s])
        .code(0)
        .mentions(&["objections: none raised"]);
    let ls = json_of(&["ls", &project_s, "--json"]);
    let boards = ls["boards"].as_array().unwrap();
    let names: Vec<&str> = boards.iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["cli", "docs", "exporter", "parser"], "{ls:#}");
    for b in boards {
        assert_eq!(b["phase"], "COMMITTED", "{b:#}");
    }

    // Each review round of each board was taken once (one successful claim), by a pool
    // member, who gave that round's one verdict.
    let mut taken = 0;
    for name in &names {
        let board = project.join(format!("{name}.md")).display().to_string();
        let log = json_of(&["log", &board, "--json"]);
        let records = log["records"].as_array().unwrap();
        for submitted in ["PLANNING_SUBMITTED", "CODE_SUBMITTED"] {
            let claims: Vec<&str> = records
                .iter()
                .filter(|r| r["command"] == "claim" && r["from"] == submitted)
                .map(|r| r["by"].as_str().unwrap())
                .collect();
            assert_eq!(claims.len(), 1, "{name} {submitted}: {claims:?}");
            assert!(["rex", "sam"].contains(&claims[0]), "{name}: {claims:?}");
            let review = submitted
                .replace("_SUBMITTED", "")
                .replace("PLANNING", "PLAN");
            let verdicts: Vec<&str> = records
                .iter()
                .filter(|r| {
                    r["command"] == "verdict"
                        && r["from"].as_str() == Some(&format!("REVIEWING_{review}"))
                })
                .map(|r| r["by"].as_str().unwrap())
                .collect();
            assert_eq!(
                verdicts, claims,
                "{name}: the taker gives the round's verdict"
            );
            taken += 1;
        }
        let s = json_of(&["status", &board, "--json"]);
        assert_eq!(s["counters"]["plan_revision"], 1, "{name}");
        assert_eq!(s["counters"]["code_review_round"], 1, "{name}");
        assert!(s["frontmatter"]["commit_sha"].is_string(), "{name}: {s:#}");
    }
    assert_eq!(taken, 8);
    let reported: usize = v["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["taken_by"].as_array().unwrap().len())
        .sum();
    assert_eq!(reported, 8, "{:#}", v["reviews"]);

    // The handoff: offered by ada, acknowledged by ben before he did any of cli's work.
    let cli = fs::read_to_string(project.join("cli.md")).unwrap();
    assert!(cli.contains("doer ada ben acknowledged"), "{cli}");
    assert_eq!(v["handoff"]["state"], "acknowledged");
    let events = v["events"].as_array().unwrap();
    assert!(!events.iter().any(|e| e["kind"] == "fail"), "{events:#?}");
    let ran = |agent: &str, needles: &[&str]| {
        events.iter().position(|e| {
            e["agent"] == agent
                && e["command"]
                    .as_str()
                    .is_some_and(|c| needles.iter().all(|n| c.contains(n)))
        })
    };
    let offered = ran("ada", &["pair handoff", "cli.md", "--to ben"]).expect("ada hands over");
    let ack = ran("ben", &["pair acknowledge", "cli.md"]).expect("ben acknowledges");
    let cli_start = ran("ben", &["pair advance", "cli.md", "PLANNING"]).expect("ben starts cli");
    assert!(offered < ack && ack < cli_start);
    assert!(
        ran("ada", &["cli.md", "PLANNING"]).is_none(),
        "ada left cli"
    );
    // The dependencies released in order: each waiting board began after its dependency
    // was committed.
    for (dep, doer, waiting, waiter) in [
        ("parser.md", "ada", "cli.md", "ben"),
        ("exporter.md", "ben", "docs.md", "ben"),
    ] {
        let committed = ran(doer, &["pair advance", dep, "COMMITTED"]).expect("committed");
        let began = ran(waiter, &["pair advance", waiting, "PLANNING"]).expect("began");
        assert!(
            committed < began,
            "{waiting} began before {dep} was committed"
        );
    }
    for agent in ["ada", "ben", "rex", "sam"] {
        assert!(
            events
                .iter()
                .any(|e| e["agent"] == agent && e["kind"] == "done"),
            "{agent} stops once the project is finished"
        );
    }
}
