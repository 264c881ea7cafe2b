//! `pair demo`: a scripted debugging task run by three real agents.
//!
//! The demo starts a doer, two reviewers and a dissenter as separate processes of this same binary
//! (`pair demo-agent`, hidden). Each agent acts only by running `pair` as a subprocess — `init`,
//! `register`, `poll --wait`, `claim`, `submit`, `verdict`, `advance`, `note` — exactly as an AI
//! agent would from its prompt, and reports what it did as one JSON line per event on stdout.
//! The demo collects those lines into a timeline, checks the result with `pair validate` and
//! `pair status`, and keeps or removes the directory it ran in.
//!
//! The script: in a throwaway git repository (the demo directory, with a local identity), a
//! debugging task goes through root cause analysis, a plan that one reviewer sends back once,
//! `pair worktree create` (a real worktree on the topic branch `pair/task`), a red test written
//! there, code that gets a `COMMENT` (so the doer submits a follow-up) and, once the reviewers pass
//! it, an advisory answer from a fresh dissenter (the code gate's dissent stage), a real commit that
//! `advance COMMITTED` holds to the approved tree, the merge into `main`, and the removal of the
//! worktree and branch that `CLEANED_UP` checks. The human gates are approved by a scripted
//! user: the doer passes `--user-approved` (the blackboard is not `yolo`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};

use super::Outcome;
use crate::cli::{DemoAgentArgs, DemoArgs, DemoRole};
use crate::error::{Error, Result, exit};
use crate::render::report::{SCHEMA, Style};

/// The blackboard's name inside the demo directory (agents run with that directory as cwd).
const BOARD: &str = "task.md";
const DOER: &str = "doer";
const REVIEWERS: [&str; 2] = ["alice", "bob"];
/// The fresh dissenter of the code gate's dissent stage: neither the doer nor a reviewer.
const DISSENTER: &str = "dana";
/// How often `poll --wait` re-checks where file notifications are unavailable.
const INTERVAL: &str = "0.25";

/// The file the demo's code change is in, and its three versions: as reported, fixed (staged for
/// the code review), and with the follow-up (unstaged, for the follow-up review).
const CODE_FILE: &str = "search.rs";
/// The red test, written in the worktree and pinned with `--files`.
const TEST_FILE: &str = "search_test.rs";
const TEST_CODE: &str = "#[test]
fn pages_for_exact_multiple() {
    assert_eq!(search_pages(20, 10), 2);
}

#[test]
fn pages_for_zero_results() {
    assert_eq!(search_pages(0, 10), 0);
}
";
/// What the throwaway repository ignores: pair's own files and the agents' notes.
const GITIGNORE: &str = "task.md\ntask.md.lock\ntask.md.lock.owner.json\n.task.md.pair-tmp-*\n.task.md.lock.owner.json.pair-tmp-*\n.worktrees/\nnotes/\n";
const CODE_BEFORE: &str = "pub fn search_pages(total: usize, per_page: usize) -> usize {
    total / per_page + 1
}
";
const CODE_FIXED: &str = "pub fn search_pages(total: usize, per_page: usize) -> usize {
    total.div_ceil(per_page)
}
";
const CODE_FOLLOWUP: &str =
    "pub fn search_pages(total: usize, per_page: usize) -> Result<usize, String> {
    if per_page == 0 {
        return Err(\"per_page must be at least 1\".into());
    }
    Ok(total.div_ceil(per_page))
}
";

fn code_dir(me: &Agent) -> PathBuf {
    me.dir.join(".worktrees").join("task")
}

const GOAL: &str = "Search results: the last page is empty when the number of results is an \
exact multiple of the page size (reported by support; 20 results at 10 per page show 3 pages).";

/// One line of an agent's report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    /// Milliseconds since the demo started.
    pub ms: u64,
    pub agent: String,
    /// `run` (a `pair` command), `woke` (a `poll --wait` returned), `done`, `fail`.
    pub kind: String,
    /// What happened, in words.
    pub text: String,
    /// The command line, as a user would type it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub(super) fn exe() -> Result<PathBuf> {
    std::env::current_exe().map_err(|e| Error::io(Path::new("pair"), "find the running binary", e))
}

pub(super) fn failure(message: String) -> Error {
    Error::Io {
        path: PathBuf::from(BOARD),
        op: "run the demo",
        source: std::io::Error::other(message),
    }
}

// ---------------------------------------------------------------------------------------------
// interruption

/// The signal (SIGINT, SIGTERM, SIGHUP) that interrupted the demo; 0 while none has.
static INTERRUPTED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_interrupt(sig: libc::c_int) {
    INTERRUPTED.store(sig, Ordering::SeqCst);
}

/// Catch the signals that end an interactive run, so the demo can end its agents and remove
/// its directory before it dies.
pub(super) fn catch_interrupts() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // The handler only stores into an atomic, which is async-signal-safe.
        crate::sys::on_signal(sig, on_interrupt, false);
    }
}

pub(super) fn interrupted() -> Option<libc::c_int> {
    match INTERRUPTED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// End an agent and every `pair` it started: each agent leads its own process group.
fn end_agent(child: &mut Child) {
    // The group is the agent's own (it was started as its leader).
    crate::sys::kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

/// After an interruption: remove the demo's temporary directory (not a `--keep` one), then die
/// of the signal that interrupted it, as if it had not been caught.
pub(super) fn die_of(sig: libc::c_int, dir: &Path, temp: Option<tempfile::TempDir>) -> ! {
    if let Some(temp) = temp {
        let path = temp.keep();
        // An agent's last `pair` may still be finishing a write (a lock file, a temporary
        // file) as it dies: try again until the directory is gone.
        for _ in 0..200 {
            match std::fs::remove_dir_all(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                _ => break,
            }
        }
    }
    let _ = std::io::stdout().flush();
    eprintln!(
        "pair demo: interrupted; {}",
        if dir.exists() {
            format!("the demo directory {} is kept", dir.display())
        } else {
            "its agents were ended and its directory removed".to_string()
        }
    );
    // Restore the default action and raise the signal again.
    crate::sys::raise_default(sig);
    std::process::exit(128 + sig);
}

// ---------------------------------------------------------------------------------------------
// the demo

/// The directory a demo runs in: `--keep DIR` (new or empty), else a temporary one, removed
/// when the demo ends.
pub(super) fn demo_dir(keep: Option<&Path>) -> Result<(PathBuf, Option<tempfile::TempDir>)> {
    Ok(match keep {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| Error::io(d, "create", e))?;
            let mut entries = std::fs::read_dir(d).map_err(|e| Error::io(d, "read", e))?;
            if entries.next().is_some() {
                return Err(Error::Usage(format!(
                    "--keep {}: the directory is not empty; give a new or empty directory",
                    d.display()
                )));
            }
            let abs = std::fs::canonicalize(d).map_err(|e| Error::io(d, "resolve", e))?;
            (abs, None)
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("pair-demo-")
                .tempdir()
                .map_err(|e| Error::io(&std::env::temp_dir(), "create a directory in", e))?;
            (t.path().to_path_buf(), Some(t))
        }
    })
}

pub fn run(a: DemoArgs) -> Result<Outcome> {
    if a.project {
        return super::demo_project::run(a);
    }
    let limit = super::timeout(a.timeout)?;
    catch_interrupts();
    let (dir, temp) = demo_dir(a.keep.as_deref())?;
    let exe = exe()?;
    let started = Instant::now();
    let epoch = now_ms();
    let agent_timeout = format!("{}", a.timeout.max(1.0));

    // Reviewers first: they wait for the doer to create the blackboard.
    let order: Vec<(&str, &str)> = REVIEWERS
        .iter()
        .map(|r| (*r, "reviewer"))
        .chain([(DISSENTER, "dissenter"), (DOER, "doer")])
        .collect();
    let members: Vec<(String, Vec<String>)> = order
        .iter()
        .map(|(id, role)| {
            let args = [
                "--role",
                role,
                "--id",
                id,
                "--board",
                BOARD,
                "--reviewers",
                &REVIEWERS.join(","),
            ]
            .iter()
            .map(|w| w.to_string())
            .collect();
            (id.to_string(), args)
        })
        .collect();
    let Crew {
        events,
        statuses,
        stderrs,
        timed_out,
    } = run_crew(&exe, &dir, epoch, &agent_timeout, &members, started + limit)?;
    if let Some(sig) = interrupted() {
        die_of(sig, &dir, temp);
    }

    // Check the result with the real commands.
    let board = dir.join(BOARD);
    let validate = run_pair(&exe, &dir, None, &["validate", BOARD])?;
    let status = run_pair(&exe, &dir, Some(DOER), &["status", BOARD])?;
    let phase = status.json["phase"].as_str().unwrap_or("?").to_string();
    let counters = status.json["counters"].clone();
    let valid = validate.code == 0 && validate.json["valid"] == json!(true);
    // Where the time went, from the journal the writes left.
    let stats = run_pair(&exe, &dir, None, &["stats", BOARD])?;
    let board_stats = stats.json["boards"][0].clone();
    let agents_ok = statuses.iter().all(|s| *s == Some(0));
    let commit = status.json["frontmatter"]["commit_sha"]
        .as_str()
        .map(str::to_string);
    let ok = agents_ok && valid && phase == "CLEANED_UP" && !timed_out;
    let elapsed = started.elapsed();

    let style = Style::for_stdout();
    let mut text = String::new();
    text.push_str(&style.bold(&format!(
        "pair demo: a debugging task, one doer ({DOER}), two reviewers ({}) and a dissenter \
         ({DISSENTER})\n",
        REVIEWERS.join(", ")
    )));
    text.push_str(&format!(
        "Each agent is a separate `pair demo-agent` process that acts only by running `pair` \
         commands\n(every call also passes --json, which the agent reads). Working directory: {}\n\
         Human gates: a scripted user approves each one, so the doer passes --user-approved \
         (the blackboard is not yolo).\n\n",
        dir.display()
    ));
    text.push_str(&style.dim("   elapsed  agent   what"));
    text.push('\n');
    for e in &events {
        text.push_str(&render_event(e, &style));
    }
    text.push('\n');
    let c = |k: &str| counters[k].as_u64().unwrap_or(0);
    text.push_str(&format!(
        "Result: {} · analysis {} · plan {} · red test {} · code {} · {} · {:.2} s\n",
        style.phase(&phase),
        c("analysis_revision"),
        c("plan_revision"),
        c("red_test_round"),
        c("code_review_round"),
        if valid {
            style.green("`pair validate`: valid")
        } else {
            style.red("`pair validate`: INVALID")
        },
        elapsed.as_secs_f64()
    ));
    text.push_str(&stats_text(&board_stats));
    if let Some(c) = &commit {
        text.push_str(&format!(
            "The commit {c} is real: `advance COMMITTED` checked that its tree is the approved \
             follow-up, `MERGED` that main contains it, `CLEANED_UP` that the worktree and the \
             topic branch are gone.\n"
        ));
    }
    if timed_out {
        text.push_str(&style.red(&format!(
            "The demo did not finish within {:.0} s; its agents were ended.\n",
            limit.as_secs_f64()
        )));
    }
    for ((id, st), (_, err)) in members
        .iter()
        .map(|(id, _)| id)
        .zip(&statuses)
        .zip(&stderrs)
    {
        if *st != Some(0) {
            text.push_str(&style.red(&format!(
                "agent {id} exited with {}\n",
                st.map(|c| c.to_string()).unwrap_or_else(|| "?".into())
            )));
        }
        for line in err.lines().filter(|l| !l.trim().is_empty()) {
            text.push_str(&format!("  {id}: {line}\n"));
        }
    }
    let kept = a.keep.is_some();
    if kept {
        text.push_str(&format!(
            "The blackboard is kept: {}\n  pair status {}\n",
            board.display(),
            crate::text::shell_word(&board.display().to_string())
        ));
    } else {
        text.push_str(&format!(
            "The demo directory {} is removed now; run `pair demo --keep DIR` to keep it.\n",
            dir.display()
        ));
    }
    let json = json!({
        "schema": SCHEMA,
        "ok": ok,
        "dir": dir.display().to_string(),
        "board": board.display().to_string(),
        "kept": kept,
        "elapsed_ms": elapsed.as_millis() as u64,
        "user_approval": "--user-approved",
        "agents": order.iter().map(|(id, role)| json!({"id": id, "role": role})).collect::<Vec<_>>(),
        "events": events,
        "phase": phase,
        "counters": counters,
        "valid": valid,
        "commit_sha": commit,
        "stats": board_stats,
    });
    Ok(Outcome {
        json,
        text,
        code: if ok { 0 } else { 1 },
        warnings: vec![],
        printed: false,
    })
}

/// What the agents of a demo did: each one's events, exit status and standard error, and
/// whether the demo's deadline ended them.
pub(super) struct Crew {
    pub events: Vec<Event>,
    pub statuses: Vec<Option<i32>>,
    pub stderrs: Vec<(String, String)>,
    pub timed_out: bool,
}

/// Start each agent (`pair demo-agent ARGS`, each in its own process group, in `dir`), collect
/// the events they report, and wait for all of them; one failing, the deadline or an
/// interruption ends the others. The caller dies of an interruption ([`interrupted`]).
pub(super) fn run_crew(
    exe: &Path,
    dir: &Path,
    epoch: u64,
    agent_timeout: &str,
    members: &[(String, Vec<String>)],
    deadline: Instant,
) -> Result<Crew> {
    let mut agents: Vec<(String, Child)> = Vec::new();
    let (tx, rx) = mpsc::channel::<Event>();
    let mut readers = Vec::new();
    let mut err_readers = Vec::new();
    for (id, args) in members {
        let mut child = Command::new(exe)
            .arg("demo-agent")
            .args(args)
            .arg("--epoch-ms")
            .arg(epoch.to_string())
            .arg("--timeout")
            .arg(agent_timeout)
            .current_dir(dir)
            .env("PAIR_AGENT", id)
            // Its own process group, so that the demo can end it with every `pair` it runs.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(exe, "start a demo agent with", e))?;
        let out = child.stdout.take();
        let err = child.stderr.take();
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            if let Some(out) = out {
                for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
                    if let Ok(ev) = serde_json::from_str::<Event>(&line) {
                        let _ = tx.send(ev);
                    }
                }
            }
        }));
        let who = id.to_string();
        err_readers.push(std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut err) = err {
                let _ = err.read_to_string(&mut s);
            }
            (who, s)
        }));
        agents.push((id.to_string(), child));
    }
    drop(tx);

    // Wait for every agent, or give up at the deadline and end them.
    let mut statuses: Vec<Option<i32>> = vec![None; agents.len()];
    let mut timed_out = false;
    loop {
        for (i, (_, child)) in agents.iter_mut().enumerate() {
            if statuses[i].is_none()
                && let Ok(Some(st)) = child.try_wait()
            {
                statuses[i] = Some(st.code().unwrap_or(1));
            }
        }
        if statuses.iter().all(Option::is_some) {
            break;
        }
        // One agent failing leaves the others waiting for a turn that never comes: end them.
        let failed = statuses.iter().any(|s| matches!(s, Some(c) if *c != 0));
        let late = Instant::now() >= deadline;
        if failed || late || interrupted().is_some() {
            timed_out = late;
            for (i, (_, child)) in agents.iter_mut().enumerate() {
                if statuses[i].is_none() {
                    end_agent(child);
                    statuses[i] = Some(1);
                }
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    for r in readers {
        let _ = r.join();
    }
    let stderrs: Vec<(String, String)> = err_readers
        .into_iter()
        .filter_map(|r| r.join().ok())
        .collect();
    let mut events: Vec<Event> = rx.into_iter().collect();
    events.sort_by_key(|e| e.ms);
    Ok(Crew {
        events,
        statuses,
        stderrs,
        timed_out,
    })
}

/// The demo's closing lines from `pair stats`: each gate's rounds and each agent's handoffs.
fn stats_text(s: &Json) -> String {
    if s.is_null() {
        return "`pair stats`: no figures (the board has no journal)\n".to_string();
    }
    let mut out = format!(
        "`pair stats`: {} journal records over {} s\n",
        s["records"], s["seconds"]
    );
    if let Some(gates) = s["gates"].as_object() {
        for (g, v) in gates {
            let rounds: Vec<String> = v["rounds"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .map(|r| r["outcome"].as_str().unwrap_or("?").to_string())
                        .collect()
                })
                .unwrap_or_default();
            let dissent: Vec<String> = v["dissent"]
                .as_array()
                .map(|d| {
                    d.iter()
                        .map(|d| {
                            format!(
                                "{} → {}",
                                d["by"].as_str().unwrap_or("?"),
                                d["outcome"].as_str().unwrap_or("?")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            out.push_str(&format!(
                "  gate {g:<9} {:>4} s, rounds: {}{}\n",
                v["seconds"],
                if rounds.is_empty() {
                    "-".to_string()
                } else {
                    rounds.join(", ")
                },
                if dissent.is_empty() {
                    String::new()
                } else {
                    format!("; dissent: {}", dissent.join(", "))
                }
            ));
        }
    }
    if let Some(agents) = s["agents"].as_object() {
        for (id, a) in agents {
            use crate::stats::figure::{RESPONSE_TIME, RESPONSES, TURN_TIME, WRITES};
            out.push_str(&format!(
                "  {id:<6} {} {}, {} {} s, {} {}, {} {} s in total\n",
                a["writes"],
                WRITES.name,
                TURN_TIME.name,
                a["turn_seconds"],
                a["handoffs"],
                RESPONSES.name,
                RESPONSE_TIME.name,
                a["handoff_seconds"]
            ));
        }
    }
    out
}

pub(super) fn render_event(e: &Event, style: &Style) -> String {
    let t = format!("{:>7.3}s", e.ms as f64 / 1000.0);
    let who = format!("{:<6}", e.agent);
    let mut line = format!("  {}  {}  ", style.dim(&t), style.agent(&who));
    let indent = " ".repeat(22);
    match e.kind.as_str() {
        "run" => {
            line.push_str(&format!("$ {}", e.command.as_deref().unwrap_or("")));
            match (&e.from, &e.to) {
                (Some(f), Some(t)) if f != t => line.push_str(&format!(
                    "\n{indent}{} → {}",
                    style.phase(f),
                    style.phase(t)
                )),
                (None, Some(t)) => line.push_str(&format!("\n{indent}{}", style.phase(t))),
                _ => {}
            }
            if !e.text.is_empty() {
                line.push_str(&format!("\n{indent}{}", style.dim(&e.text)));
            }
        }
        "fail" => line.push_str(&style.red(&e.text)),
        _ => line.push_str(&e.text),
    }
    line.push('\n');
    line
}

/// The result of one `pair` subprocess.
pub(super) struct Run {
    pub code: i32,
    pub json: Json,
    pub stderr: String,
}

pub(super) fn run_pair(exe: &Path, dir: &Path, agent: Option<&str>, args: &[&str]) -> Result<Run> {
    let mut cmd = Command::new(exe);
    cmd.args(args).arg("--json").current_dir(dir);
    match agent {
        Some(a) => cmd.env("PAIR_AGENT", a),
        None => cmd.env_remove("PAIR_AGENT"),
    };
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io(exe, "run", e))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(stdout.trim())
        .or_else(|_| serde_json::from_str(stderr.trim()))
        .unwrap_or(Json::Null);
    Ok(Run {
        code: out.status.code().unwrap_or(1),
        json,
        stderr,
    })
}

// ---------------------------------------------------------------------------------------------
// one agent

pub(super) struct Agent {
    pub id: String,
    pub exe: PathBuf,
    pub dir: PathBuf,
    pub epoch: u64,
    pub timeout: String,
}

impl Agent {
    pub(super) fn emit(&self, ev: Event) {
        let mut out = std::io::stdout().lock();
        if let Ok(line) = serde_json::to_string(&ev) {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }

    pub(super) fn event(&self, kind: &str, text: impl Into<String>) -> Event {
        Event {
            ms: now_ms().saturating_sub(self.epoch),
            agent: self.id.clone(),
            kind: kind.into(),
            text: text.into(),
            command: None,
            exit: None,
            from: None,
            to: None,
        }
    }

    /// Run `pair ARGS --json` as this agent; report it; fail on an unexpected exit code.
    pub(super) fn pair(&self, args: &[&str], expect: &[i32], say: &str) -> Result<Run> {
        // Stamped when the command starts: its write lands before anyone wakes on it.
        let mut ev = self.event("run", say);
        let run = run_pair(&self.exe, &self.dir, Some(&self.id), args)?;
        let shown = std::iter::once("pair".to_string())
            .chain(args.iter().map(|a| crate::text::shell_arg(a)))
            .collect::<Vec<_>>()
            .join(" ");
        if !expect.contains(&run.code) {
            let message = run.json["error"]["message"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| run.stderr.trim().to_string());
            let mut ev = self.event("fail", format!("`{shown}` exited {}: {message}", run.code));
            ev.exit = Some(run.code);
            self.emit(ev);
            return Err(failure(format!(
                "{}: `{shown}` exited {}",
                self.id, run.code
            )));
        }
        if args.first() != Some(&"poll") {
            ev.command = Some(shown);
            ev.exit = Some(run.code);
            ev.from = run.json["old_phase"].as_str().map(String::from);
            ev.to = run.json["phase"].as_str().map(String::from);
            self.emit(ev);
        }
        Ok(run)
    }

    /// Run `git ARGS` in the worktree, as the doer working on the code would; report it, and
    /// return what it printed.
    pub(super) fn git(&self, wt: &Path, args: &[&str], say: &str) -> Result<String> {
        let mut ev = self.event("run", say);
        let out = crate::repo::git::isolated(
            wt,
            &[
                "user.name=pair demo",
                "user.email=demo@pair.invalid",
                "commit.gpgsign=false",
                "init.defaultBranch=main",
            ],
            args,
        )
        .map_err(|e| Error::Git {
            message: format!("the demo runs git, which could not be started: {e}"),
        })?;
        let shown = std::iter::once("git".to_string())
            .chain(args.iter().map(|a| crate::text::shell_arg(a)))
            .collect::<Vec<_>>()
            .join(" ");
        let code = out.status.code().unwrap_or(1);
        if code != 0 {
            let message = String::from_utf8_lossy(&out.stderr).trim().to_string();
            self.emit(self.event("fail", format!("`{shown}` exited {code}: {message}")));
            return Err(failure(format!("{}: `{shown}` exited {code}", self.id)));
        }
        ev.command = Some(shown);
        ev.exit = Some(code);
        self.emit(ev);
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Write a file in the worktree (what the doer's editor would do).
    fn write_code(&self, wt: &Path, text: &str) -> Result<()> {
        self.write_file(wt, CODE_FILE, text)
    }

    pub(super) fn write_file(&self, dir: &Path, name: &str, text: &str) -> Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| Error::io(&path, "write", e))
    }

    /// `pair poll BOARD --wait`: block until it is this agent's turn or the phase is terminal.
    fn wait_turn(&self) -> Result<Run> {
        let started = Instant::now();
        let run = self.pair(
            &[
                "poll",
                BOARD,
                "--wait",
                "--timeout",
                &self.timeout,
                "--interval",
                INTERVAL,
            ],
            &[exit::OK, exit::NOT_YOUR_TURN, exit::TERMINAL],
            "",
        )?;
        let phase = run.json["phase"].as_str().unwrap_or("?");
        let waited = started.elapsed().as_secs_f64();
        match run.code {
            0 => self.emit(self.event(
                "woke",
                format!("poll --wait: my turn in {phase} (waited {waited:.2} s)"),
            )),
            exit::TERMINAL => self.emit(self.event(
                "done",
                format!("poll --wait: {phase} is terminal (exit 11); stopping"),
            )),
            _ => {
                self.emit(self.event(
                    "fail",
                    format!("poll --wait: still not my turn after {} s", self.timeout),
                ));
                return Err(failure(format!("{}: timed out waiting", self.id)));
            }
        }
        Ok(run)
    }

    /// Write a note file (what an agent would write before submitting) and return its path.
    pub(super) fn note_file(&self, name: &str, text: &str) -> Result<String> {
        let rel = format!("notes/{name}.md");
        let path = self.dir.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, "create", e))?;
        }
        std::fs::write(&path, text).map_err(|e| Error::io(&path, "write", e))?;
        Ok(rel)
    }
}

pub fn agent(a: DemoAgentArgs) -> Result<Outcome> {
    let me = Agent {
        id: a.id.clone(),
        exe: exe()?,
        dir: std::env::current_dir().map_err(|e| Error::io(Path::new("."), "find", e))?,
        epoch: if a.epoch_ms == 0 {
            now_ms()
        } else {
            a.epoch_ms
        },
        timeout: format!("{}", super::timeout(a.timeout)?.as_secs_f64()),
    };
    let project = matches!(a.role, DemoRole::ProjectUser | DemoRole::ProjectAgent);
    if project && a.board != Path::new(super::demo_project::PROJECT) {
        return Err(Error::Usage(format!(
            "the project demo's project is {}",
            super::demo_project::PROJECT
        )));
    }
    if !project && a.board != Path::new(BOARD) {
        return Err(Error::Usage(format!("the demo's blackboard is {BOARD}")));
    }
    let result = match a.role {
        DemoRole::Doer => doer(&me, &a.reviewers),
        DemoRole::Reviewer => reviewer(&me),
        DemoRole::Dissenter => dissenter(&me),
        DemoRole::ProjectUser => super::demo_project::user(&me),
        DemoRole::ProjectAgent => super::demo_project::agent(&me, &a.board),
    };
    let ok = result.is_ok();
    Ok(Outcome {
        json: json!({"schema": SCHEMA, "ok": ok, "agent": me.id}),
        text: String::new(),
        code: if ok { 0 } else { 1 },
        warnings: result.err().map(|e| e.to_string()).into_iter().collect(),
        printed: false,
    })
}

fn doer(me: &Agent, reviewers: &[String]) -> Result<()> {
    // A throwaway repository: the code as reported, committed on main.
    me.git(
        &me.dir,
        &["init", "-q"],
        "a throwaway git repository for the code",
    )?;
    me.write_file(&me.dir, ".gitignore", GITIGNORE)?;
    me.write_code(&me.dir, CODE_BEFORE)?;
    me.git(&me.dir, &["add", CODE_FILE, ".gitignore"], "")?;
    me.git(&me.dir, &["commit", "-q", "-m", "search: as reported"], "")?;
    let goal = me.note_file("goal", GOAL)?;
    me.pair(
        &[
            "init",
            BOARD,
            "--goal-file",
            &goal,
            "--work-type",
            "debugging",
            "--doer",
            &me.id,
            "--reviewers",
            &reviewers.join(","),
            "--max-rounds",
            "2",
            "--dissent",
            "code",
        ],
        &[0],
        "creates the blackboard (debugging: RCA and red test required; at most 2 review rounds per \
         gate; the code's approval waits for a fresh dissenter)",
    )?;
    loop {
        let turn = me.wait_turn()?;
        if turn.code == exit::TERMINAL {
            return Ok(());
        }
        let phase = turn.json["phase"].as_str().unwrap_or("").to_string();
        let counter = |k: &str| turn.json["counters"][k].as_u64().unwrap_or(0);
        match phase.as_str() {
            "DRAFT" => {
                me.pair(
                    &["advance", BOARD, "ANALYZING", "--user-approved"],
                    &[0],
                    "the user approved starting the analysis",
                )?;
            }
            "ANALYZING" => {
                let ev = me.note_file(
                    "evidence",
                    "search_pages(total=20, per_page=10) -> 3\nsearch_pages(total=21, per_page=10) -> 3\n",
                )?;
                me.pair(
                    &[
                        "note",
                        BOARD,
                        "--section",
                        "Evidence",
                        "--code",
                        "--note-file",
                        &ev,
                    ],
                    &[0],
                    "records the failing reproduction",
                )?;
                let f = me.note_file(
                    "analysis-1",
                    "Root cause: `search_pages` computes `total / per_page + 1`, which counts one \
                     page too many whenever `total` is an exact multiple of `per_page`. The UI \
                     then renders that extra page with no rows.\n",
                )?;
                me.pair(
                    &[
                        "submit",
                        BOARD,
                        "analysis",
                        "--note-file",
                        &f,
                        "--user-approved",
                    ],
                    &[0],
                    "the user approved submitting the analysis",
                )?;
            }
            "ANALYSIS_APPROVED" => {
                me.pair(&["advance", BOARD, "PLANNING"], &[0], "")?;
            }
            "PLANNING" | "PLAN_CHANGES_REQUESTED" => {
                answer_objections(me)?;
                let rev = counter("plan_revision") + 1;
                let text = if rev == 1 {
                    "1. Replace the page count with a ceiling division.\n2. Add a unit test for \
                     exact multiples.\n"
                } else {
                    "1. Replace the page count with a ceiling division.\n2. Add unit tests for \
                     exact multiples and for zero results (0 pages, not 1).\n3. Check the two \
                     callers that add 1 themselves.\n"
                };
                let f = me.note_file(&format!("plan-{rev}"), text)?;
                me.pair(
                    &[
                        "submit",
                        BOARD,
                        "plan",
                        "--note-file",
                        &f,
                        "--user-approved",
                    ],
                    &[0],
                    &format!("the user approved submitting plan revision {rev}"),
                )?;
            }
            "PLAN_APPROVED" => {
                // The code lives in a git worktree: reviewers read its diffs, pinned by hash.
                me.pair(
                    &["worktree", "create", BOARD, "--user-approved"],
                    &[0],
                    "the user approved the worktree: git worktree add on pair/task, recorded",
                )?;
            }
            "RED_TESTING" | "RED_TEST_CHANGES_REQUESTED" => {
                me.write_file(&code_dir(me), TEST_FILE, TEST_CODE)?;
                let test = code_dir(me).join(TEST_FILE).display().to_string();
                let f = me.note_file(
                    "red-test-1",
                    "`pages_for_exact_multiple` and `pages_for_zero_results` fail on the current \
                     code: expected 2, got 3; expected 0, got 1.\n",
                )?;
                me.pair(
                    &[
                        "submit",
                        BOARD,
                        "red-test",
                        "--note-file",
                        &f,
                        "--files",
                        &test,
                    ],
                    &[0],
                    "no human gate for a red test; the test file is pinned too",
                )?;
            }
            "RED_TEST_APPROVED" => {
                me.pair(&["advance", BOARD, "CODING"], &[0], "")?;
            }
            "CODING" => {
                me.write_code(&code_dir(me), CODE_FIXED)?;
                me.git(
                    &code_dir(me),
                    &["add", CODE_FILE, TEST_FILE],
                    "stages the fix and the test: the staged diff is what reviewers read",
                )?;
                let f = me.note_file(
                    "code-1",
                    "Staged: `search_pages` uses `total.div_ceil(per_page)`; both callers no \
                     longer add 1; the red tests pass.\n",
                )?;
                me.pair(
                    &["submit", BOARD, "code", "--note-file", &f],
                    &[0],
                    "reviewers read the staged diff",
                )?;
            }
            "CODE_CHANGES_REQUESTED" => {
                // Not staged: a follow-up is read as the unstaged diff over the staged baseline.
                me.write_code(&code_dir(me), CODE_FOLLOWUP)?;
                let round = counter("code_review_round") + 1;
                let f = me.note_file(
                    &format!("code-{round}"),
                    "Unstaged follow-up: `per_page == 0` is now rejected with an error instead \
                     of dividing by zero, with a test.\n",
                )?;
                me.pair(
                    &["submit", BOARD, "followup", "--note-file", &f],
                    &[0],
                    "answers the review comment; reviewers read the unstaged diff",
                )?;
            }
            "READY_TO_COMMIT" => {
                // Commit exactly what was approved: the staged fix plus the follow-up.
                let wt = code_dir(me);
                me.git(&wt, &["add", CODE_FILE], "")?;
                me.git(
                    &wt,
                    &[
                        "commit",
                        "-q",
                        "-m",
                        "search: count pages with a ceiling division",
                    ],
                    "commits the approved content",
                )?;
                let sha = me.git(&wt, &["rev-parse", "HEAD"], "")?;
                me.pair(
                    &[
                        "advance",
                        BOARD,
                        "COMMITTED",
                        "--commit-sha",
                        &sha,
                        "--user-approved",
                    ],
                    &[0],
                    "the user approved the commit; its tree is checked against the approved one",
                )?;
                me.git(
                    &me.dir,
                    &["merge", "-q", "--ff-only", "pair/task"],
                    "merges into main",
                )?;
                me.pair(
                    &[
                        "advance",
                        BOARD,
                        "MERGED",
                        "--merged-into",
                        "main",
                        "--user-approved",
                    ],
                    &[0],
                    "the user approved recording the merge; main must contain the commit",
                )?;
                let wt_s = wt.display().to_string();
                me.git(
                    &me.dir,
                    &["worktree", "remove", &wt_s],
                    "removes the worktree",
                )?;
                me.git(
                    &me.dir,
                    &["branch", "-d", "pair/task"],
                    "deletes the topic branch",
                )?;
                me.pair(
                    &["advance", BOARD, "CLEANED_UP"],
                    &[0],
                    "both must be gone for CLEANED_UP",
                )?;
            }
            "AWAITING_DECISION" => decide_for_the_user(me)?,
            other => {
                me.emit(me.event("fail", format!("no scripted step for {other}")));
                return Err(failure(format!("doer: no step for {other}")));
            }
        }
    }
}

/// The scripted reviews: who says what on which revision.
fn review_of(id: &str, target: &str, counter: u64) -> (&'static str, &'static str) {
    match (id, target, counter) {
        ("alice", "plan", 1) => (
            "CHANGES_REQUESTED",
            "What about zero results? The plan must say how many pages 0 results have, and \
             whether the callers that add 1 themselves change too.",
        ),
        ("bob", "code", 1) => (
            "COMMENT",
            "Looks right. One thing before it goes in: `per_page == 0` now divides by zero; \
             reject it explicitly.",
        ),
        (_, "analysis", _) => ("APPROVED", "The arithmetic explains both reports."),
        (_, "plan", _) => ("APPROVED", "The plan covers the edge cases."),
        (_, "red_test", _) => ("APPROVED", "Both tests fail for the stated reason."),
        _ => ("APPROVED", "Reviewed the diff; good to go."),
    }
}

fn reviewer(me: &Agent) -> Result<()> {
    loop {
        let turn = me.wait_turn()?;
        if turn.code == exit::TERMINAL {
            return Ok(());
        }
        if turn.json["agent"]["registered"] != json!(true) {
            me.pair(
                &["register", BOARD],
                &[0],
                "named with --reviewers, so required",
            )?;
            continue;
        }
        let Some(review) = turn.json["review"].as_object() else {
            me.emit(me.event("fail", "my turn, but nothing to review"));
            return Err(failure(format!("{}: nothing to review", me.id)));
        };
        let target = review["target"].as_str().unwrap_or("").to_string();
        let counter = review["counter"].as_u64().unwrap_or(0);
        let phase = turn.json["phase"].as_str().unwrap_or("");
        if phase.ends_with("_SUBMITTED") {
            me.pair(&["claim", BOARD], &[0], "")?;
        }
        // Read exactly what was pinned, and name its hash with the verdict.
        let read = me.pair(&["diff", BOARD], &[0], "reads the pinned artifact")?;
        let sha = read.json["sha256"].as_str().unwrap_or("").to_string();
        let (verdict, note) = review_of(&me.id, &target, counter);
        let (verdict, note, named) = raise_objections(me, &target, counter)?
            .map_or((verdict, note, None), |(v, n, ids)| (v, n, Some(ids)));
        let f = me.note_file(&format!("{}-{target}-{counter}", me.id), note)?;
        let rev = counter.to_string();
        let mut args = vec![
            "verdict",
            BOARD,
            verdict,
            "--revision",
            &rev,
            "--artifact-sha256",
            &sha,
            "--note-file",
            &f,
        ];
        if let Some(ids) = &named {
            args.extend(["--objections", ids.as_str()]);
        }
        me.pair(&args, &[0], &format!("on {target} {counter}"))?;
    }
}

/// The code gate's dissenter: registers (it is named nowhere, so it never becomes a required
/// reviewer), wakes when the reviewers have passed the code, reads only its bundle, and answers
/// advisory with one low-likelihood risk, which goes into the consensus record.
fn dissenter(me: &Agent) -> Result<()> {
    loop {
        let turn = me.wait_turn()?;
        if turn.code == exit::TERMINAL {
            return Ok(());
        }
        if turn.json["agent"]["registered"] != json!(true) {
            me.pair(
                &["register", BOARD],
                &[0],
                "a fresh agent, neither the doer nor a reviewer: the dissent stage's",
            )?;
            continue;
        }
        let counter = turn.json["review"]["counter"].as_u64().unwrap_or(0);
        me.pair(
            &["brief", BOARD, "--for", "dissenter"],
            &[0],
            "reads its bundle: the task spec and the artifact, nothing else of the board",
        )?;
        let raised = me.pair(
            &[
                "object",
                BOARD,
                "--severity",
                "advisory",
                "--anchor",
                "## Goal",
                "--title",
                "per_page 0 divides by zero",
                "--evidence",
                "search_pages(total, 0) panics; no caller passes 0 today",
                "--fix",
                "reject per_page 0 where the query is parsed",
            ],
            &[0],
            "a low-likelihood risk, not a blocker",
        )?;
        let id = raised.json["id"].as_str().unwrap_or("ADV-1").to_string();
        let f = me.note_file(
            &format!("{}-code-{counter}", me.id),
            "Read the task spec and the pinned fix: the last page is counted right. One \
             advisory risk for the consensus record.\n",
        )?;
        let rev = counter.to_string();
        me.pair(
            &[
                "dissent",
                BOARD,
                "advisory",
                "--revision",
                &rev,
                "--note-file",
                &f,
            ],
            &[0],
            &format!("on code {counter}: advisory {id}, the gate is approved"),
        )?;
    }
}

// ---------------------------------------------------------------------------------------------
// the objection ledger in the demo: a challenged objection, a regression, and the round cap

/// alice's objections on the plan, raised before her verdict: the verdict, its note and the ids
/// it names, when the script has objections for this round.
fn raise_objections(
    me: &Agent,
    target: &str,
    counter: u64,
) -> Result<Option<(&'static str, &'static str, String)>> {
    let object = |severity: &str, extra: &[&str], title: &str, evidence: &str, fix: &str| {
        let ev = me.note_file(
            &format!("{}-evidence-{title}", me.id).replace(' ', "-"),
            evidence,
        )?;
        let mut args = vec![
            "object",
            BOARD,
            "--severity",
            severity,
            "--anchor",
            "## Goal",
            "--title",
            title,
            "--evidence-file",
            &ev,
            "--fix",
            fix,
        ];
        args.extend_from_slice(extra);
        me.pair(&args, &[0], "raises an objection anchored at the goal")
    };
    match (me.id.as_str(), target, counter) {
        ("alice", "plan", 1) => {
            object(
                "blocking",
                &[],
                "Zero results are not covered",
                "With total = 0 the plan does not say how many pages there are.",
                "State that 0 results make 0 pages, with a test.",
            )?;
            object(
                "blocking",
                &[],
                "Callers that add 1 must change",
                "Two callers add 1 to the page count themselves; a ceiling division doubles it.",
                "Change both callers in the same commit.",
            )?;
            let (v, n) = review_of(&me.id, target, counter);
            Ok(Some((v, n, "BLK-1,BLK-2".to_string())))
        }
        ("alice", "plan", 2) => {
            me.pair(
                &["accept", BOARD, "BLK-1"],
                &[0],
                "the zero-results test settles BLK-1",
            )?;
            object(
                "blocking",
                &["--regression-of", "BLK-1"],
                "Zero pages leaves the pager saying page 1 of 0",
                "The fix for BLK-1 makes 0 pages; the pager assumes at least one.",
                "Hide the pager when there are no pages.",
            )?;
            Ok(Some((
                "CHANGES_REQUESTED",
                "The zero-results fix is right, but it breaks the pager (REG-1).",
                "REG-1".to_string(),
            )))
        }
        _ => Ok(None),
    }
}

/// The doer answers every open blocking objection before it submits again: resolves BLK-1,
/// challenges BLK-2 (the user, arbiter between two reviewers, overrules it).
fn answer_objections(me: &Agent) -> Result<()> {
    let open = me.pair(&["objections", BOARD, "--open"], &[0], "")?;
    let ids: Vec<String> = open.json["objections"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["severity"] == "blocking" && o["state"] == "open")
        .filter_map(|o| o["id"].as_str().map(String::from))
        .collect();
    for id in ids {
        if id == "BLK-2" {
            me.pair(
                &[
                    "challenge",
                    BOARD,
                    "BLK-2",
                    "--grounds",
                    "Plan step 3 already changes both callers.",
                ],
                &[0],
                "disputes BLK-2",
            )?;
            me.pair(
                &[
                    "rule",
                    BOARD,
                    "BLK-2",
                    "overrule",
                    "--user-approved",
                    "--reason",
                    "The user agrees: step 3 covers the callers.",
                ],
                &[0],
                "the user, arbiter between two reviewers, overrules BLK-2",
            )?;
        } else {
            me.pair(
                &[
                    "resolve",
                    BOARD,
                    &id,
                    "--resolution",
                    "Step 2 now tests zero results: 0 pages, not 1.",
                    "--surfaces",
                    "plan",
                ],
                &[0],
                "resolves the objection",
            )?;
        }
    }
    Ok(())
}

/// The plan gate reached its round cap with REG-1 open: the user decides, through the doer.
fn decide_for_the_user(me: &Agent) -> Result<()> {
    me.pair(
        &[
            "decide",
            BOARD,
            "accept",
            "--user-approved",
            "--reason",
            "The pager is fixed with the UI work; REG-1 is an accepted risk here.",
        ],
        &[0],
        "the user accepts the plan at the round cap",
    )?;
    Ok(())
}
