//! The fairness run: a project on a git remote worked by 4 doers and a pool of 6 reviewers,
//! each agent an OS process of its own (this test binary run again, as that agent: see
//! [`agent_process`]) looping on `pair next --agent ID PROJECT --wait --json` and then the
//! command it returns (each call a process of its own), the agents spread over three clones of
//! the remote ("three machines": a cache each), some boards waiting for others (`init
//! --after`) and one doer's role handed over mid-run. Each agent writes what it did (its waits,
//! the commands it ran, the races it lost, any refusal) as JSON lines to a file of its own,
//! which the run reads afterwards. Then, from those and the boards' journals: every board
//! COMMITTED, no pool member ever held two unfinished claims at once, no review waited
//! unclaimed while a pool member sat idle in `next --wait` (beyond what noticing it takes),
//! and each member's share of the reviews within a factor of 2 of the mean.
//!
//! By default the project has 24 boards; `PAIR_FAIR_BOARDS=50` runs the full size (minutes):
//!
//! ```sh
//! PAIR_FAIR_BOARDS=50 cargo test --test it -- project_fair:: --nocapture
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::common::daemon::{Daemon, daemon_installed};
use crate::common::git;
use crate::common::prereq::{GIT_DAEMON, require};
use crate::project_run::{Log, Rec, Setup, fill, journal, read_ref, still_offered, words};

const DOERS: [&str; 4] = ["d1", "d2", "d3", "d4"];
const POOL: [&str; 6] = ["r1", "r2", "r3", "r4", "r5", "r6"];
/// The clones the agents work from, one cache each; agent `k` (doers first) works from
/// `MACHINES[k % 3]`.
const MACHINES: [&str; 3] = ["m1", "m2", "m3"];
/// The board whose doer (d1) hands the role over to d2 once its plan is approved.
const HANDED: &str = "b09";
/// How many boards by default; `PAIR_FAIR_BOARDS` sets another number (50: the full run).
const DEFAULT_BOARDS: usize = 24;

/// How long a run may take before it is called hung: a bound against hanging, not a timing.
fn run_limit(boards: usize) -> Duration {
    Duration::from_secs(600 + 30 * boards as u64)
}

fn boards() -> usize {
    std::env::var("PAIR_FAIR_BOARDS")
        .ok()
        .map(|v| {
            v.parse::<usize>()
                .ok()
                .filter(|n| *n >= 10)
                .unwrap_or_else(|| panic!("PAIR_FAIR_BOARDS={v}: a number of boards, 10 or more"))
        })
        .unwrap_or(DEFAULT_BOARDS)
}

fn name(i: usize) -> String {
    format!("b{:02}", i + 1)
}

fn doer_of(i: usize) -> &'static str {
    DOERS[i % DOERS.len()]
}

/// The board board `i` waits for: every fifth board waits for the one four before it, and b12
/// for b05, which waits for b01 (a chain of two).
fn after(i: usize) -> Option<usize> {
    if i % 5 == 4 {
        Some(i - 4)
    } else if i == 11 {
        Some(4)
    } else {
        None
    }
}

fn machine_of(who: &str) -> &'static str {
    let k = DOERS
        .iter()
        .chain(POOL.iter())
        .position(|a| *a == who)
        .unwrap();
    MACHINES[k % MACHINES.len()]
}

/// Milliseconds since the epoch, on the clock the journals' times are written with.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn ms_of(at: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(at)
        .unwrap_or_else(|e| panic!("a journal time {at:?}: {e}"))
        .timestamp_millis()
}

/// One `next --wait` of an agent: when it started and ended, its exit code, and the step it
/// gave (board and whether it is a new pool claim).
#[derive(Debug, Clone)]
struct Wait {
    who: &'static str,
    start: i64,
    end: i64,
    code: Option<i32>,
    board: Option<String>,
    /// The step's command (`claim`, `verdict`, …).
    command: Option<String>,
}

/// One command an agent ran as `next` gave it.
#[derive(Debug, Clone)]
struct Ran {
    who: &'static str,
    board: String,
    command: String,
    start: i64,
    end: i64,
}

#[derive(Default)]
struct Events {
    waits: Vec<Wait>,
    ran: Vec<Ran>,
    /// Commands refused while `next` still offered them: a bug.
    refused: Vec<String>,
    /// Steps that failed because the board moved on since `next` read it: agent, board,
    /// command, exit code and what it printed.
    lost_races: Vec<(String, String, String, Option<i32>, String)>,
    /// Steps the machine could not finish in time (exit 2, or a remote's time limit), asked
    /// for again.
    busy: Vec<String>,
}

/// Whether a command ended because the machine could not finish it in time, which the exit
/// table says to retry: exit 2 (the lock, or the ref, stayed busy) or exit 1 with an exchange
/// with the remote stopped at its time limit (a write may have landed).
fn busy(code: Option<i32>, why: &str) -> bool {
    code == Some(2)
        || (code == Some(1) && (why.contains("time limit") || why.contains("had not finished")))
}

/// The test that runs the fairness run; run again as one agent when [`AGENT_ENV`] is set.
const TEST: &str =
    "project_fair::four_doers_and_a_pool_of_six_on_three_clones_share_the_reviews_fairly";
/// The agent a run of this test binary is (set by the run for each agent's process).
const AGENT_ENV: &str = "PAIR_FAIR_AGENT";
/// The run's setup, as JSON (project, boards, each agent's environment, scratch directory).
const SETUP_ENV: &str = "PAIR_FAIR_SETUP";
/// The file the agent appends its events to, one JSON object a line.
const EVENTS_ENV: &str = "PAIR_FAIR_EVENTS";
/// A file whose existence tells the agents the run is over.
const STOP_ENV: &str = "PAIR_FAIR_STOP";

fn static_name(who: &str) -> &'static str {
    DOERS
        .iter()
        .chain(POOL.iter())
        .find(|a| **a == who)
        .unwrap_or_else(|| panic!("no agent {who}"))
}

fn env_path(k: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(k).unwrap_or_else(|| panic!("{k} is not set")))
}

/// One agent's process: read the setup, then `next --wait` and the command as given, until the
/// stop file appears; every event appended to the events file as it happens.
fn agent_process(who: &str) {
    let who = static_name(who);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(env_path(SETUP_ENV)).unwrap()).unwrap();
    let map = |v: &Value| -> BTreeMap<String, String> {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect()
    };
    let setup = Setup {
        project: v["project"].as_str().unwrap().to_string(),
        boards: map(&v["boards"]),
        env: v["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, e)| (k.clone(), map(e).into_iter().collect()))
            .collect(),
        home: PathBuf::from(v["home"].as_str().unwrap()),
        read: Box::new(|_| String::new()),
    };
    let stop = env_path(STOP_ENV);
    let mut events = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(env_path(EVENTS_ENV))
        .unwrap();
    let mut emit = |e: Value| {
        events
            .write_all(format!("{e}\n").as_bytes())
            .and_then(|()| events.flush())
            .unwrap();
    };
    let log = Mutex::new(Log::default());
    let mut handed = false;
    while !stop.exists() {
        let start = now_ms();
        let out = setup.pair(
            who,
            &[
                "next".into(),
                "--agent".into(),
                who.into(),
                setup.project.clone(),
                "--wait".into(),
                "--timeout".into(),
                "5".into(),
                "--json".into(),
            ],
        );
        let end = now_ms();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        emit(json!({
            "wait": {
                "start": start,
                "end": end,
                "code": out.status.code(),
                "board": v["step"]["name"],
                "command": v["next"]["command"][1],
            }
        }));
        match out.status.code() {
            Some(0) => {}
            Some(10) => continue,
            // Done in the project: it stays until the run stops.
            Some(11) => {
                while !stop.exists() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                return;
            }
            // Its read of the remote could not finish in time: the agent asks again.
            code if busy(code, &String::from_utf8_lossy(&out.stderr)) => {
                emit(json!({
                    "busy": format!("{who}: next: {}", String::from_utf8_lossy(&out.stderr))
                }));
                continue;
            }
            _ => {
                emit(json!({
                    "refused": format!("{who}: next failed: {}", String::from_utf8_lossy(&out.stderr))
                }));
                return;
            }
        }
        let board = v["step"]["name"].as_str().unwrap().to_string();
        let phase = v["step"]["phase"].as_str().unwrap().to_string();
        let command = words(&v["next"]["command"]);
        if who == "d1" && board == HANDED && phase == "PLAN_APPROVED" && !handed {
            handed = true;
            setup.ok(
                who,
                &[
                    "handoff",
                    &setup.boards[HANDED],
                    "--agent",
                    who,
                    "--to",
                    "d2",
                    "--summary",
                    "plan approved; code it next",
                ],
            );
            continue;
        }
        let argv = fill(&setup, who, &v, &log);
        let start = now_ms();
        let done = setup.pair(who, &argv);
        let end = now_ms();
        log.lock().unwrap().trail.push(argv.join(" "));
        emit(json!({
            "ran": {"board": board, "command": command[1], "start": start, "end": end}
        }));
        if done.status.success() {
            continue;
        }
        let why = String::from_utf8_lossy(&done.stderr).to_string();
        // A write the machine could not finish in time is no refusal: the agent asks `next`
        // again, as one following the exit table does.
        if busy(done.status.code(), &why) {
            emit(json!({"busy": format!("{who}: pair {}: {why}", argv.join(" "))}));
            continue;
        }
        if still_offered(&setup, who, &board, &command) {
            emit(json!({"refused": format!("{who}: pair {}: {why}", argv.join(" "))}));
        } else {
            emit(json!({
                "lost": {
                    "board": board,
                    "command": command[1],
                    "code": done.status.code(),
                    "why": why,
                }
            }));
        }
    }
}

/// What the agents' processes wrote, read back into one record of the run.
fn collect(files: &[(&'static str, PathBuf)]) -> Events {
    let mut ev = Events::default();
    let num = |v: &Value| v.as_i64().unwrap();
    let text = |v: &Value| v.as_str().map(str::to_string);
    for (who, file) in files {
        let lines = std::fs::read_to_string(file).unwrap_or_default();
        for line in lines.lines() {
            let e: Value = serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("{who}'s events: {line:?}: {err}"));
            if let Some(w) = e.get("wait") {
                ev.waits.push(Wait {
                    who,
                    start: num(&w["start"]),
                    end: num(&w["end"]),
                    code: w["code"].as_i64().map(|c| c as i32),
                    board: text(&w["board"]),
                    command: text(&w["command"]),
                });
            } else if let Some(r) = e.get("ran") {
                ev.ran.push(Ran {
                    who,
                    board: text(&r["board"]).unwrap(),
                    command: text(&r["command"]).unwrap(),
                    start: num(&r["start"]),
                    end: num(&r["end"]),
                });
            } else if let Some(l) = e.get("lost") {
                ev.lost_races.push((
                    who.to_string(),
                    text(&l["board"]).unwrap(),
                    text(&l["command"]).unwrap(),
                    l["code"].as_i64().map(|c| c as i32),
                    text(&l["why"]).unwrap(),
                ));
            } else if let Some(r) = e.get("refused") {
                ev.refused.push(text(r).unwrap());
            } else if let Some(b) = e.get("busy") {
                ev.busy.push(text(b).unwrap());
            }
        }
    }
    ev
}

/// Start one agent's process: this test binary, running this test alone as `who`.
fn spawn_agent(who: &'static str, dir: &Path, setup_file: &Path, stop: &Path) -> (Child, PathBuf) {
    let events = dir.join(format!("events-{who}.jsonl"));
    let out = std::fs::File::create(dir.join(format!("agent-{who}.log"))).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(AGENT_ENV, who)
        .env(SETUP_ENV, setup_file)
        .env(EVENTS_ENV, &events)
        .env(STOP_ENV, stop)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    (child, events)
}

/// One pool review as the journals tell it: submitted, claimed and judged.
#[derive(Debug, Clone)]
struct Review {
    board: String,
    submitted: i64,
    claimed: i64,
    by: String,
    /// When the claimer's verdict was recorded (`None`: never).
    judged: Option<i64>,
}

fn reviews(journals: &BTreeMap<String, Vec<Rec>>) -> Vec<Review> {
    let mut out = Vec::new();
    for (n, recs) in journals {
        for (i, r) in recs.iter().enumerate() {
            if !r.cmd.starts_with("submit") {
                continue;
            }
            let round = recs[i + 1..]
                .iter()
                .take_while(|x| !x.cmd.starts_with("submit"));
            let claim = round
                .clone()
                .find(|x| x.cmd == "claim")
                .unwrap_or_else(|| panic!("{n}: a submission never claimed: {recs:#?}"));
            let judged = round
                .clone()
                .find(|x| x.cmd == "verdict" && x.by == claim.by)
                .map(|x| ms_of(&x.at));
            out.push(Review {
                board: n.clone(),
                submitted: ms_of(&r.at),
                claimed: ms_of(&claim.at),
                by: claim.by.clone(),
                judged,
            });
        }
    }
    out
}

/// How long `[a, b]` and `[c, d]` overlap, in ms.
fn overlap(a: i64, b: i64, c: i64, d: i64) -> i64 {
    (b.min(d) - a.max(c)).max(0)
}

fn percentile(mut xs: Vec<i64>, p: f64) -> i64 {
    if xs.is_empty() {
        return 0;
    }
    xs.sort_unstable();
    xs[((xs.len() - 1) as f64 * p).round() as usize]
}

fn create(setup: &Setup, boards: usize) {
    for i in 0..boards {
        let n = name(i);
        let mut args: Vec<String> = vec![
            "init".into(),
            setup.boards[&n].clone(),
            "--goal".into(),
            format!("Task {n}"),
            "--doer".into(),
            doer_of(i).into(),
            "--reviewer-pool".into(),
            POOL.join(","),
            "--reviews".into(),
            "1".into(),
        ];
        if i % 2 == 0 {
            args.push("--yolo".into());
        }
        if let Some(on) = after(i) {
            args.extend(["--after".into(), name(on)]);
        }
        let out = setup.pair(doer_of(i), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn four_doers_and_a_pool_of_six_on_three_clones_share_the_reviews_fairly() {
    if let Ok(who) = std::env::var(AGENT_ENV) {
        return agent_process(&who);
    }
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let count = boards();
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "--bare", "remote.git"]);
    let daemon = Daemon::start(dir.path(), None);
    let board_refs: BTreeMap<String, String> = (0..count)
        .map(|i| (name(i), daemon.board(&format!("refs/pair/{}", name(i)))))
        .collect();
    let env: BTreeMap<String, Vec<(String, String)>> = DOERS
        .iter()
        .chain(POOL.iter())
        .map(|who| {
            let cache = dir.path().join(format!("cache-{}", machine_of(who)));
            (
                who.to_string(),
                vec![("PAIR_CACHE_DIR".to_string(), cache.display().to_string())],
            )
        })
        .collect();
    let bare: PathBuf = dir.path().join("remote.git");
    let setup = Setup {
        project: format!(
            "git+git://127.0.0.1:{}/remote.git#refs/pair/:task.md",
            daemon.port
        ),
        boards: board_refs,
        env,
        home: dir.path().to_path_buf(),
        read: Box::new(move |n| read_ref(&bare, n)),
    };
    create(&setup, count);
    let setup_file = dir.path().join("setup.json");
    let described = json!({
        "project": setup.project,
        "boards": setup.boards,
        "env": setup
            .env
            .iter()
            .map(|(k, e)| (k.clone(), e.iter().cloned().collect::<BTreeMap<_, _>>()))
            .collect::<BTreeMap<_, _>>(),
        "home": setup.home.display().to_string(),
    });
    std::fs::write(&setup_file, described.to_string()).unwrap();

    let stop = dir.path().join("stop");
    let start = Instant::now();
    let mut agents: Vec<(&'static str, Child, PathBuf)> = DOERS
        .iter()
        .chain(POOL.iter())
        .map(|who| {
            let (child, events) = spawn_agent(who, dir.path(), &setup_file, &stop);
            (*who, child, events)
        })
        .collect();
    let refused = |agents: &[(&'static str, Child, PathBuf)]| {
        let files: Vec<_> = agents.iter().map(|(w, _, f)| (*w, f.clone())).collect();
        !collect(&files).refused.is_empty()
    };
    // How long one read of the whole project takes now (an `ls`): the machine's pace, which
    // noticing a new review cannot beat.
    let mut reads: Vec<i64> = Vec::new();
    let limit = run_limit(count);
    let finished = loop {
        std::thread::sleep(Duration::from_secs(2));
        let t = now_ms();
        let out = setup.pair("d1", &["ls".into(), setup.project.clone(), "--json".into()]);
        reads.push(now_ms() - t);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let rows = v["boards"].as_array().cloned().unwrap_or_default();
        if rows.len() == count && rows.iter().all(|r| r["phase"] == "COMMITTED") {
            break true;
        }
        let gone = agents
            .iter_mut()
            .any(|(_, c, _)| c.try_wait().ok().flatten().is_some());
        if gone || start.elapsed() > limit || refused(&agents) {
            break false;
        }
    };
    let wall = start.elapsed();
    std::fs::write(&stop, b"").unwrap();
    // Each agent ends within one `next --wait` (5 s) and the command it runs after it.
    let mut failed = Vec::new();
    for (who, child, _) in &mut agents {
        let until = Instant::now() + Duration::from_secs(120);
        let status = loop {
            match child.try_wait().unwrap() {
                Some(status) => break Some(status),
                None if Instant::now() > until => break None,
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        if status.is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !status.is_some_and(|s| s.success()) {
            let log = std::fs::read_to_string(dir.path().join(format!("agent-{who}.log")))
                .unwrap_or_default();
            failed.push(format!("{who} ({status:?}):\n{log}"));
        }
    }
    let files: Vec<_> = agents.iter().map(|(w, _, f)| (*w, f.clone())).collect();
    let ev = collect(&files);
    assert!(failed.is_empty(), "an agent failed: {}", failed.join("\n"));
    assert!(
        ev.refused.is_empty(),
        "a command next gave was refused:\n{}",
        ev.refused.join("\n")
    );
    let journals: BTreeMap<String, Vec<Rec>> = setup
        .boards
        .keys()
        .map(|n| (n.clone(), journal(&(setup.read)(n))))
        .collect();
    // Every board COMMITTED.
    let unfinished: Vec<&String> = journals
        .iter()
        .filter(|(_, recs)| {
            recs.last()
                .is_none_or(|r| r.phase.split('>').nth(1) != Some("COMMITTED"))
        })
        .map(|(n, _)| n)
        .collect();
    assert!(
        finished && unfinished.is_empty(),
        "not every board reached COMMITTED within {limit:?}: {unfinished:?}"
    );
    // The only steps two agents are given at once: a pool's claim (and a member's `register`
    // before it, which a board that moved on answers the same way: re-read, exit 3), and the
    // handed board's.
    for (who, board, command, code, why) in &ev.lost_races {
        assert!(
            (["claim", "register"].contains(&command.as_str()) && *code == Some(3))
                || (who == "d1" && board == HANDED),
            "{who} lost a race for {command} on {board} (exit {code:?}): {why}"
        );
    }
    // The handoff happened: offered by d1, acknowledged by d2, who finished the board.
    let handed = &journals[HANDED];
    let acked = handed
        .iter()
        .position(|r| r.cmd == "acknowledge" && r.by == "d2")
        .unwrap_or_else(|| panic!("{HANDED}: d2 acknowledged: {handed:#?}"));
    assert!(
        handed[..acked]
            .iter()
            .any(|r| r.cmd == "handoff" && r.by == "d1")
    );
    assert!(handed[acked..].iter().all(|r| r.by != "d1"), "{handed:#?}");
    // Dependencies released in order.
    for i in 0..count {
        let Some(on) = after(i) else { continue };
        let committed = journals[&name(on)]
            .iter()
            .find(|r| r.phase.ends_with(">COMMITTED"))
            .map(|r| ms_of(&r.at))
            .unwrap();
        let first = journals[&name(i)]
            .iter()
            .find(|r| r.cmd.starts_with("submit"))
            .map(|r| ms_of(&r.at))
            .unwrap();
        assert!(
            first >= committed,
            "{} submitted before {} was committed",
            name(i),
            name(on)
        );
    }

    let reviews = reviews(&journals);
    // No pool member ever held two unfinished claims: its claims, each until its verdict, do
    // not overlap.
    for m in POOL {
        let mut held: Vec<&Review> = reviews.iter().filter(|r| r.by == m).collect();
        held.sort_by_key(|r| r.claimed);
        for w in held.windows(2) {
            let until = w[0].judged.unwrap_or(i64::MAX);
            assert!(
                w[1].claimed >= until,
                "{m} claimed {} while its claim of {} was unfinished: {:#?}",
                w[1].board,
                w[0].board,
                w
            );
        }
    }
    // When each submission could be seen on the remote: once the doer's `submit` (which pushes
    // it) returned.
    let visible = |r: &Review| -> i64 {
        ev.ran
            .iter()
            .find(|c| {
                c.board == r.board
                    && DOERS.contains(&c.who)
                    && c.command == "submit"
                    && c.start <= r.submitted
                    && r.submitted <= c.end
            })
            .map_or(r.submitted, |c| c.end)
            .min(r.claimed)
    };
    let seen: Vec<i64> = reviews.iter().map(visible).collect();
    // Idle, on a loaded machine, is not "inside a `next --wait` process": such a process may
    // not have run yet, or may be reading the project still, and one that hands its agent a
    // review that was waiting when it started is the agent going from one review to the next,
    // however long its read took. A pool member is idle through a `next --wait` that had
    // nothing for it when it started: one that ended with nothing (exit 10), or with a review
    // to take that reached the remote after it started.
    let idle_through = |w: &Wait| -> bool {
        match (w.code, &w.board, w.command.as_deref()) {
            (Some(10), _, _) => true,
            (Some(0), Some(b), Some("register" | "claim")) => reviews
                .iter()
                .zip(&seen)
                .filter(|(r, v)| &r.board == b && **v <= w.end)
                .map(|(_, v)| *v)
                .max()
                .is_some_and(|v| v > w.start),
            _ => false,
        }
    };
    // Two measures of the time a review waited unclaimed while a member was idle:
    // * a `next --wait` of a pool member that began after a review was on the remote and
    //   ended, before it was claimed, with nothing for the member (exit 10) had read the
    //   project with the review in it and offered it nothing: unfair whatever the machine's
    //   pace, and none is allowed;
    // * the time a review waited unclaimed while one member was idle is held to a few seconds
    //   plus what noticing it costs at the machine's pace now: the interval at which a wait
    //   asks the remote (1 s) and twice a slow read of the project as the run measured it (its
    //   90th percentile).
    let mut longest: (i64, String, String) = (0, String::new(), String::new());
    let mut idle_waits: Vec<i64> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    for (r, seen) in reviews.iter().zip(&seen) {
        let seen = *seen;
        let mut worst = 0;
        for m in POOL {
            let mut idle = 0;
            for w in ev.waits.iter().filter(|w| w.who == m && idle_through(w)) {
                idle += overlap(seen, r.claimed, w.start, w.end);
                if w.code == Some(10) && w.start >= seen && w.end <= r.claimed {
                    ignored.push(format!(
                        "{m}: next --wait from {} to {} gave nothing while {} waited to be \
                         claimed (on the remote at {seen}, claimed at {} by {})",
                        w.start, w.end, r.board, r.claimed, r.by
                    ));
                }
            }
            worst = worst.max(idle);
            if idle > longest.0 {
                longest = (idle, m.to_string(), r.board.clone());
            }
        }
        idle_waits.push(worst);
    }
    let reviewed: BTreeMap<&str, usize> = POOL
        .iter()
        .map(|m| (*m, reviews.iter().filter(|r| r.by == *m).count()))
        .collect();
    let mean = reviews.len() as f64 / POOL.len() as f64;
    let read_p90 = percentile(reads.clone(), 0.9);
    let allowed = 3_000 + 1_000 + 2 * read_p90;
    let claims_lost = ev.lost_races.iter().filter(|l| l.2 == "claim").count();
    eprintln!(
        "{count} boards, {} doers, a pool of {} on {} clones: {:.1} s of wall time; {} reviews, \
         per member {reviewed:?} (mean {mean:.1}); longest unclaimed wait while a member was \
         idle {} ms ({} on {}), p50 {} ms, p90 {} ms, allowed {} ms (a read of the project: \
         p50 {} ms, p90 {read_p90} ms); claims lost to another member {claims_lost}; steps \
         the machine could not finish in time, asked for again {}",
        DOERS.len(),
        POOL.len(),
        MACHINES.len(),
        wall.as_secs_f64(),
        reviews.len(),
        longest.0,
        longest.1,
        longest.2,
        percentile(idle_waits.clone(), 0.5),
        percentile(idle_waits.clone(), 0.9),
        allowed,
        percentile(reads.clone(), 0.5),
        ev.busy.len(),
    );
    assert!(
        ignored.is_empty(),
        "next offered an idle pool member nothing while a review waited:\n{}",
        ignored.join("\n")
    );
    assert!(
        longest.0 <= allowed,
        "{} waited {} ms unclaimed while {} was idle in next --wait (allowed {allowed} ms)",
        longest.2,
        longest.0,
        longest.1
    );
    // Each member's share within a factor of 2 of the mean.
    for (m, n) in &reviewed {
        let n = *n as f64;
        assert!(
            n >= mean / 2.0 && n <= mean * 2.0,
            "{m} took {n} of {} reviews, the mean being {mean:.1}: {reviewed:?}",
            reviews.len()
        );
    }
    drop(daemon);
}
