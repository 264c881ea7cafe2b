//! A project worked through by separate agent processes, one process each: 12 boards,
//! 2 doers and a pool of 3 reviewers, some boards waiting for others (`init --after`), one
//! doer's role handed over mid-stream. Each agent is a loop that runs
//! `pair next --agent ID PROJECT --wait --json` and then the command it returns, as given (its
//! own work filling the placeholders: the file the doer writes before it submits, the
//! reviewer's verdict), each call a process of its own. Afterwards the journals must show every
//! review taken exactly once, dependencies released in order, the handoff acknowledged before
//! the new doer wrote in the role, every board COMMITTED, and `stats PROJECT` totals equal to
//! the sum of the boards' own. The same on a git remote's namespace, the doers on one clone and
//! the reviewers on another.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::daemon::{Daemon, daemon_installed};
use crate::common::prereq::{GIT_DAEMON, require};
use crate::common::{git, pair_bin};

/// How long the whole run may take before it is called hung: far above what a loaded 2-core
/// machine needs (a bound against hanging, not a timing).
const RUN_LIMIT: Duration = Duration::from_secs(900);

const BOARDS: usize = 12;
const DOERS: [&str; 2] = ["d1", "d2"];
const POOL: [&str; 3] = ["r1", "r2", "r3"];
/// The board whose doer hands the role over, mid-stream: d1's, to d2.
const HANDED: &str = "b07";
/// Each board with the boards it waits for.
const AFTER: &[(&str, &str)] = &[
    ("b05", "b01"),
    ("b06", "b02"),
    ("b09", "b05"),
    ("b11", "b03"),
];
/// Boards whose plan the first reviewer sends back once (a second round).
const SENT_BACK: &[&str] = &["b03", "b10"];

fn name(i: usize) -> String {
    format!("b{:02}", i + 1)
}

fn doer_of(i: usize) -> &'static str {
    DOERS[i % 2]
}

/// Where the run's boards are and how each agent reaches them.
pub(crate) struct Setup {
    /// The project as agents name it.
    pub(crate) project: String,
    /// Each board's address by name.
    pub(crate) boards: BTreeMap<String, String>,
    /// The environment of each agent's processes (its clone of a remote).
    pub(crate) env: BTreeMap<String, Vec<(String, String)>>,
    /// Scratch space for the agents' own files.
    pub(crate) home: PathBuf,
    /// Reads a board's whole text (for the checks).
    pub(crate) read: Box<dyn Fn(&str) -> String + Send + Sync>,
}

impl Setup {
    pub(crate) fn pair(&self, who: &str, args: &[String]) -> std::process::Output {
        let mut c = Command::new(pair_bin());
        c.args(args)
            .current_dir(&self.home)
            .env_remove("PAIR_AGENT")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::null());
        for (k, v) in self.env.get(who).into_iter().flatten() {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    pub(crate) fn ok(&self, who: &str, args: &[&str]) -> std::process::Output {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let out = self.pair(who, &args);
        assert!(
            out.status.success(),
            "{who}: pair {}\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// What the agents did that the journals cannot tell: the refused write of the incoming doer
/// before its acknowledgement, and each refusal an agent met running a command `next` gave.
#[derive(Default)]
pub(crate) struct Log {
    pub(crate) trail: Vec<String>,
    refused_before_ack: Option<(i32, String)>,
    /// Commands refused because another agent's write came first (the step `next` gave was
    /// gone by the time it ran): (agent, board, command).
    lost_races: Vec<(String, String, String)>,
    /// Commands refused while `next` still offered them: a bug.
    refused: Vec<String>,
}

pub(crate) fn words(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("a command: {v:#}"))
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

fn worktree(setup: &Setup, board: &str) -> PathBuf {
    setup.home.join("worktrees").join(board)
}

/// The agent's own work for a step: fill each placeholder of the command (and, before a code
/// submission, write and stage the code in the worktree).
pub(crate) fn fill(setup: &Setup, who: &str, step: &Value, log: &Mutex<Log>) -> Vec<String> {
    let next = &step["next"];
    let board = step["step"]["name"].as_str().unwrap().to_string();
    let command = words(&next["command"]);
    if command[1] == "submit" && command.iter().any(|w| w == "code" || w == "followup") {
        let w = worktree(setup, &board);
        let round = log.lock().unwrap().trail.len();
        std::fs::write(
            w.join("code.txt"),
            format!("{who}: {board} round {round}\n"),
        )
        .unwrap();
        git(&w, &["add", "code.txt"]);
    }
    let placeholders = next["placeholders"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let round = log.lock().unwrap().trail.len();
    words(&next["command"])
        .into_iter()
        .skip(1)
        .map(|w| {
            if !placeholders.contains_key(&w) {
                return w;
            }
            match w.as_str() {
                "FILE" => {
                    // The doer's work, or the reviewer's review: a file written first.
                    let f = setup.home.join(format!("{who}-{board}-{round}.md"));
                    std::fs::write(&f, format!("{who} on {board}: done, step {round}.\n")).unwrap();
                    f.display().to_string()
                }
                "VERDICT" => {
                    let plan_round_one = next["command"]
                        .as_array()
                        .unwrap()
                        .windows(2)
                        .any(|p| p[0] == "--revision" && p[1] == "1")
                        && step["step"]["phase"]
                            .as_str()
                            .is_some_and(|p| p.contains("PLAN"));
                    if plan_round_one && SENT_BACK.contains(&board.as_str()) {
                        "CHANGES_REQUESTED".into()
                    } else {
                        "APPROVED".into()
                    }
                }
                "WORKTREE" => {
                    // The doer's worktree: a repository of its own with a first commit.
                    let w = worktree(setup, &board);
                    if w.join(".git").exists() {
                        // Made by the doer before it handed the board over.
                        return w.display().to_string();
                    }
                    std::fs::create_dir_all(&w).unwrap();
                    git(&w, &["init", "-q"]);
                    std::fs::write(w.join("README"), format!("{board}\n")).unwrap();
                    git(&w, &["add", "README"]);
                    git(&w, &["commit", "-q", "-m", "start"]);
                    w.display().to_string()
                }
                "SHA" => {
                    // The doer commits what was reviewed (once: when an earlier `advance`
                    // with this commit did not land, the commit is made already).
                    let w = worktree(setup, &board);
                    let staged = Command::new("git")
                        .arg("-C")
                        .arg(&w)
                        .args(["diff", "--cached", "--quiet"])
                        .status()
                        .unwrap();
                    if !staged.success() {
                        git(&w, &["commit", "-q", "-m", &format!("{board}: the change")]);
                    }
                    let head = Command::new("git")
                        .arg("-C")
                        .arg(&w)
                        .args(["rev-parse", "HEAD"])
                        .output()
                        .unwrap();
                    String::from_utf8_lossy(&head.stdout).trim().to_string()
                }
                other => panic!("{who}: no way to fill {other} in {next:#}"),
            }
        })
        .collect()
}

/// Whether `next` still gives the agent this same command on this board (then a refusal of it
/// was no lost race).
pub(crate) fn still_offered(setup: &Setup, who: &str, board: &str, command: &[String]) -> bool {
    let out = setup.pair(
        who,
        &[
            "poll".into(),
            setup.boards[board].clone(),
            "--agent".into(),
            who.into(),
            "--json".into(),
        ],
    );
    let Ok(v) = serde_json::from_slice::<Value>(&out.stdout) else {
        return false;
    };
    v["your_turn"] == true
        && v["next"]["command"].as_array().is_some_and(|c| {
            c.iter()
                .map(|w| w.as_str().unwrap_or(""))
                .collect::<Vec<_>>()
                == command.iter().map(String::as_str).collect::<Vec<_>>()
        })
}

/// One agent: `next --wait`, then the command as given, until the run is over.
fn agent(setup: Arc<Setup>, who: &'static str, stop: Arc<AtomicBool>, log: Arc<Mutex<Log>>) {
    let mut handed = false;
    while !stop.load(Ordering::SeqCst) {
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
        match out.status.code() {
            Some(0) => {}
            Some(10) => continue,
            // Done in the project: every board of its own is finished or handed over. It stays
            // until the run stops (an agent gone before that would read as one that failed).
            Some(11) => {
                while !stop.load(Ordering::SeqCst) {
                    std::thread::park_timeout(std::time::Duration::from_millis(50));
                }
                return;
            }
            _ => {
                log.lock().unwrap().refused.push(format!(
                    "{who}: next failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
                return;
            }
        }
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let board = v["step"]["name"].as_str().unwrap().to_string();
        let phase = v["step"]["phase"].as_str().unwrap().to_string();
        let command = words(&v["next"]["command"]);
        // The rotation: d1 hands its board over once its plan is approved.
        if who == "d1" && board == HANDED && phase == "PLAN_APPROVED" && !handed {
            handed = true;
            let summary = format!("{HANDED}: plan approved; code it next");
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
                    &summary,
                ],
            );
            log.lock()
                .unwrap()
                .trail
                .push(format!("{who}: handoff {HANDED} to d2"));
            continue;
        }
        if command[1] == "acknowledge" {
            // Before it acknowledges, the incoming doer tries a write in the role: refused.
            let f = setup.home.join(format!("{who}-early.md"));
            std::fs::write(&f, "too early\n").unwrap();
            let early = setup.pair(
                who,
                &[
                    "submit".into(),
                    setup.boards[&board].clone(),
                    "--agent".into(),
                    who.into(),
                    "code".into(),
                    "--note-file".into(),
                    f.display().to_string(),
                ],
            );
            log.lock().unwrap().refused_before_ack = Some((
                early.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&early.stderr).to_string(),
            ));
        }
        let argv = fill(&setup, who, &v, &log);
        let done = setup.pair(who, &argv);
        let mut l = log.lock().unwrap();
        l.trail
            .push(format!("{who}: [{board} {phase}] pair {}", argv.join(" ")));
        if done.status.success() {
            continue;
        }
        drop(l);
        let why = String::from_utf8_lossy(&done.stderr).to_string();
        let offered = still_offered(&setup, who, &board, &command);
        let mut l = log.lock().unwrap();
        if offered {
            l.refused
                .push(format!("{who}: pair {}: {why}", argv.join(" ")));
        } else {
            l.lost_races.push((who.into(), board, command[1].clone()));
        }
    }
}

/// One journal record, as the checks need it.
#[derive(Debug, Clone)]
pub(crate) struct Rec {
    pub(crate) at: String,
    pub(crate) by: String,
    pub(crate) cmd: String,
    pub(crate) phase: String,
    pub(crate) verdict: String,
}

pub(crate) fn journal(text: &str) -> Vec<Rec> {
    let start = text.find("\n## Journal").expect("a journal");
    text[start..]
        .lines()
        .filter(|l| l.starts_with("- at="))
        .map(|l| {
            let field = |k: &str| {
                l.split(' ')
                    .find_map(|w| w.strip_prefix(&format!("{k}=")))
                    .unwrap_or("")
                    .to_string()
            };
            Rec {
                at: field("at"),
                by: field("by"),
                cmd: field("cmd"),
                phase: field("phase"),
                verdict: field("verdict"),
            }
        })
        .collect()
}

/// Run the agents on the setup's 12 boards and check what the journals say.
fn work_through(setup: Setup) {
    let setup = Arc::new(setup);
    let stop = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(Log::default()));
    let agents: Vec<_> = DOERS
        .iter()
        .chain(POOL.iter())
        .map(|who| {
            let (s, st, l) = (setup.clone(), stop.clone(), log.clone());
            std::thread::spawn(move || agent(s, who, st, l))
        })
        .collect();
    let start = Instant::now();
    let states = || -> (bool, String) {
        let out = setup.pair("d1", &["ls".into(), setup.project.clone(), "--json".into()]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let rows = v["boards"].as_array().cloned().unwrap_or_default();
        let done = rows.len() == BOARDS && rows.iter().all(|r| r["phase"] == "COMMITTED");
        (done, String::from_utf8_lossy(&out.stdout).to_string())
    };
    // The run is watched with a project's cursor: each record of every board once, woken by
    // any new record; `ls` after each.
    let mut cursor = "0".to_string();
    let mut watched: Vec<(String, u64)> = Vec::new();
    let mut watch = |wait: bool| {
        let mut args: Vec<String> = ["poll", &setup.project, "--agent", "watcher", "--after"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        args.push(cursor.clone());
        if wait {
            args.extend(["--wait".into(), "--timeout".into(), "5".into()]);
        }
        args.push("--json".into());
        let out = setup.pair("watcher", &args);
        assert_eq!(out.status.code(), Some(10), "{out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        for r in v["records"].as_array().unwrap() {
            watched.push((
                r["name"].as_str().unwrap().into(),
                r["seq"].as_u64().unwrap(),
            ));
        }
        cursor = v["cursor"].as_str().unwrap().to_string();
    };
    let finished = loop {
        let (done, _) = states();
        if done {
            break true;
        }
        let gone = agents.iter().any(|a| a.is_finished());
        if gone || start.elapsed() > RUN_LIMIT || !log.lock().unwrap().refused.is_empty() {
            break false;
        }
        watch(true);
    };
    watch(false);
    stop.store(true, Ordering::SeqCst);
    let panicked = agents.into_iter().filter_map(|a| a.join().err()).count();
    let log = log.lock().unwrap();
    assert_eq!(
        panicked,
        0,
        "an agent failed\n--- trail ---\n{}",
        log.trail.join("\n")
    );
    let trail = log.trail.join("\n");
    assert!(
        log.refused.is_empty(),
        "a command next gave was refused:\n{}\n--- trail ---\n{trail}",
        log.refused.join("\n")
    );
    assert!(
        finished,
        "not every board reached COMMITTED within {RUN_LIMIT:?}:\n{}\n--- trail ---\n{trail}",
        states().1
    );
    let journals: BTreeMap<String, Vec<Rec>> = setup
        .boards
        .keys()
        .map(|n| (n.clone(), journal(&(setup.read)(n))))
        .collect();
    // The watcher's cursor gave every record of every board exactly once, in order.
    for (n, recs) in &journals {
        let seqs: Vec<u64> = watched.iter().filter(|w| &w.0 == n).map(|w| w.1).collect();
        assert_eq!(
            seqs,
            (1..=recs.len() as u64).collect::<Vec<_>>(),
            "{n}: watched through the cursor"
        );
    }
    // Every review taken exactly once: each round's claim and verdict by one pool member.
    for (n, recs) in &journals {
        let mut rounds: BTreeMap<usize, Vec<&Rec>> = BTreeMap::new();
        let mut round = 0;
        for r in recs {
            if r.cmd.starts_with("submit") {
                round += 1;
            }
            if r.cmd == "claim" || r.cmd == "verdict" {
                rounds.entry(round).or_default().push(r);
            }
        }
        let submits = recs.iter().filter(|r| r.cmd.starts_with("submit")).count();
        assert_eq!(
            rounds.len(),
            submits,
            "{n}: a review per submission: {recs:#?}"
        );
        for (k, rs) in &rounds {
            let claims: Vec<&str> = rs
                .iter()
                .filter(|r| r.cmd == "claim")
                .map(|r| r.by.as_str())
                .collect();
            let verdicts: Vec<&str> = rs
                .iter()
                .filter(|r| r.cmd == "verdict")
                .map(|r| r.by.as_str())
                .collect();
            assert_eq!(claims.len(), 1, "{n} round {k}: one claim: {rs:#?}");
            assert_eq!(
                verdicts, claims,
                "{n} round {k}: the verdict by the claimer: {rs:#?}"
            );
            assert!(POOL.contains(&claims[0]), "{n} round {k}: {rs:#?}");
        }
        let committed = recs.last().unwrap();
        assert_eq!(
            committed.phase.split('>').nth(1),
            Some("COMMITTED"),
            "{n}: {recs:#?}"
        );
    }
    // A board sent back had two plan rounds.
    for n in SENT_BACK {
        let verdicts: Vec<&str> = journals[*n]
            .iter()
            .filter(|r| r.cmd == "verdict")
            .map(|r| r.verdict.as_str())
            .collect();
        assert_eq!(
            verdicts.first(),
            Some(&"plan:CHANGES_REQUESTED"),
            "{n}: {verdicts:?}"
        );
    }
    // Dependencies release in order: a dependant's first submission after its dependency's
    // COMMITTED (the journals' times are those of one machine's clock).
    for (dependant, on) in AFTER {
        let committed = journals[*on]
            .iter()
            .find(|r| r.phase.ends_with(">COMMITTED"))
            .unwrap()
            .at
            .clone();
        let first = journals[*dependant]
            .iter()
            .find(|r| r.cmd.starts_with("submit"))
            .unwrap()
            .at
            .clone();
        assert!(
            first >= committed,
            "{dependant} submitted at {first}, before {on} was committed at {committed}"
        );
    }
    // The handoff: offered by d1, acknowledged by d2 before any write of d2's, and d2's write
    // before it refused.
    let recs = &journals[HANDED];
    let offered = recs.iter().position(|r| r.cmd == "handoff" && r.by == "d1");
    let acked = recs
        .iter()
        .position(|r| r.cmd == "acknowledge" && r.by == "d2");
    let first_d2 = recs.iter().position(|r| r.by == "d2");
    assert!(offered.is_some() && offered < acked, "{recs:#?}");
    assert_eq!(
        first_d2, acked,
        "d2's first write is its acknowledgement: {recs:#?}"
    );
    assert!(
        recs[acked.unwrap()..].iter().all(|r| r.by != "d1"),
        "{recs:#?}"
    );
    let (code, said) = log
        .refused_before_ack
        .clone()
        .expect("d2 tried a write first");
    assert_eq!(code, 6, "{said}");
    // The refusal left no record of d2's (asserted above: d2's first record is its
    // acknowledgement); the board itself may have moved meanwhile, by d1, who holds the role
    // until then.
    assert!(said.contains("not acknowledged"), "{said}");
    // `stats PROJECT` totals equal the sum of the boards' own.
    let stats = |args: &[String]| -> Value {
        let out = setup.pair("d1", args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let total = stats(&["stats".into(), setup.project.clone(), "--json".into()]);
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    for b in setup.boards.values() {
        let one = stats(&["stats".into(), b.clone(), "--json".into()]);
        add_numbers("", &one["total"], &mut sums);
    }
    let mut want: BTreeMap<String, f64> = BTreeMap::new();
    add_numbers("", &total["total"], &mut want);
    let additive: Vec<&String> = want.keys().filter(|k| adds_up(k)).collect();
    for k in &additive {
        let (w, got) = (want[*k], sums.get(*k).copied().unwrap_or(0.0));
        assert!(
            (w - got).abs() <= 1e-6 * w.abs().max(1.0),
            "stats PROJECT total {k} = {w}, the boards' own add up to {got}"
        );
    }
    for k in ["boards", "records", "seconds"] {
        assert!(additive.iter().any(|a| a.as_str() == k), "{k}: {want:#?}");
    }
    assert!(
        additive.iter().any(|k| k.starts_with("gates.")),
        "{want:#?}"
    );
    assert_eq!(want["boards"], BOARDS as f64);
    // The only steps two agents are given at once: a pool's claim (exclusive: one takes it,
    // the others are told who did) and a member's `register` before it (late once the board is
    // committed), and the handed board's, which its outgoing doer holds until the incoming one
    // acknowledges.
    for (who, board, command) in &log.lost_races {
        assert!(
            command == "claim" || command == "register" || (who == "d1" && board == HANDED),
            "{who} lost a race for {command} on {board}\n--- trail ---\n{trail}"
        );
    }
    let mut races: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, _, c) in &log.lost_races {
        *races.entry(c.as_str()).or_default() += 1;
    }
    eprintln!(
        "lost races by command: {races:?}; totals compared: {}",
        additive.len()
    );
    eprintln!(
        "{BOARDS} boards, {} agents, {} reviews taken once, {} lost races, {:?}",
        DOERS.len() + POOL.len(),
        journals
            .values()
            .flatten()
            .filter(|r| r.cmd == "verdict")
            .count(),
        log.lost_races.len(),
        start.elapsed()
    );
}

/// Whether a total of `stats` adds up across boards: every count, time and usage but the
/// largest, averages and shares.
fn adds_up(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    ![
        "max", "mean", "median", "avg", "average", "share", "ratio", "rate", "p50", "p90", "since",
    ]
    .iter()
    .any(|w| last.contains(w))
}

fn add_numbers(prefix: &str, v: &Value, out: &mut BTreeMap<String, f64>) {
    match v {
        Value::Number(n) => *out.entry(prefix.to_string()).or_default() += n.as_f64().unwrap(),
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                add_numbers(&key, x, out);
            }
        }
        _ => {}
    }
}

/// Create the 12 boards through the doers (yolo on every other board: the rest pass the human
/// gates with --user-approved, as next.command says).
fn create(setup: &Setup) {
    for i in 0..BOARDS {
        let n = name(i);
        let b = &setup.boards[&n];
        let mut args: Vec<String> = vec![
            "init".into(),
            b.clone(),
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
        if let Some((_, on)) = AFTER.iter().find(|(d, _)| *d == n) {
            args.extend(["--after".into(), on.to_string()]);
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
fn twelve_boards_two_doers_and_a_pool_of_three_work_a_directory_project_through() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let boards: BTreeMap<String, String> = (0..BOARDS)
        .map(|i| {
            let n = name(i);
            let p = project.join(format!("{n}.md"));
            (n, p.display().to_string())
        })
        .collect();
    let files = boards.clone();
    let setup = Setup {
        project: project.display().to_string(),
        boards,
        env: BTreeMap::new(),
        home: dir.path().to_path_buf(),
        read: Box::new(move |n| std::fs::read_to_string(&files[n]).unwrap()),
    };
    create(&setup);
    work_through(setup);
}

#[test]
fn twelve_boards_on_a_git_remote_worked_from_two_clones() {
    if !require(&GIT_DAEMON, daemon_installed()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "--bare", "remote.git"]);
    let daemon = Daemon::start(dir.path(), None);
    let boards: BTreeMap<String, String> = (0..BOARDS)
        .map(|i| (name(i), daemon.board(&format!("refs/pair/{}", name(i)))))
        .collect();
    let clone = |c: &str| {
        vec![(
            "PAIR_CACHE_DIR".to_string(),
            dir.path().join(c).display().to_string(),
        )]
    };
    let mut env = BTreeMap::new();
    for d in DOERS {
        env.insert(d.to_string(), clone("clone-doers"));
    }
    for r in POOL {
        env.insert(r.to_string(), clone("clone-reviewers"));
    }
    let bare: PathBuf = dir.path().join("remote.git");
    let setup = Setup {
        project: format!(
            "git+git://127.0.0.1:{}/remote.git#refs/pair/:task.md",
            daemon.port
        ),
        boards,
        env,
        home: dir.path().to_path_buf(),
        read: Box::new(move |n| read_ref(&bare, n)),
    };
    create(&setup);
    work_through(setup);
    drop(daemon);
}

pub(crate) fn read_ref(bare: &Path, n: &str) -> String {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(bare)
        .args(["show", &format!("refs/pair/{n}:task.md")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Found by the run: the incoming agent of a handoff, not yet on the board, was never offered
/// its acknowledgement by `next`, so an agent serving a project with `next` never took the role.
#[test]
fn next_offers_the_incoming_agent_of_a_handoff_its_acknowledgement() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b.md");
    let b = b.to_str().unwrap();
    let project = dir.path().to_str().unwrap();
    crate::common::pair(["init", b, "--goal", "g", "--yolo", "--doer", "d1"]).code(0);
    crate::common::pair([
        "handoff",
        b,
        "--agent",
        "d1",
        "--to",
        "d2",
        "--summary",
        "yours",
    ])
    .code(0);
    let v = crate::common::pair(["next", "--agent", "d2", project, "--json"])
        .code(0)
        .json();
    assert_eq!(
        v["next"]["command"],
        serde_json::json!(["pair", "acknowledge", b, "--agent", "d2"]),
        "{v:#}"
    );
}

/// Found by the run: agents sharing a clone (one cache) read a git project at once while its
/// boards move; each read fetches the namespace into the cache, and git refused a fetch whose
/// ref another fetch had just moved ("cannot lock ref"), failing `next` and `ls` with exit 1.
#[test]
fn agents_sharing_a_clone_read_a_moving_git_project_at_once() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "--bare", "remote.git"]);
    let url = format!("file://{}/remote.git", dir.path().display());
    let cache = dir.path().join("clone");
    let board = |n: usize| format!("git+{url}#refs/pair/b{n}:task.md");
    let project = format!("git+{url}#refs/pair/:task.md");
    let run = |args: &[&str]| {
        Command::new(pair_bin())
            .args(args)
            .env("PAIR_CACHE_DIR", &cache)
            .env_remove("PAIR_AGENT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    for n in 0..8 {
        let out = run(&["init", &board(n), "--goal", "g"])
            .wait_with_output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    for round in 0..4 {
        // Every board moves (on another clone), then several agents of this clone read.
        for n in 0..8 {
            let out = Command::new(pair_bin())
                .args([
                    "note",
                    &board(n),
                    "--agent",
                    "doer",
                    "--section",
                    "Evidence",
                ])
                .args(["--note", &format!("round {round}")])
                .env("PAIR_CACHE_DIR", dir.path().join("other"))
                .env_remove("PAIR_AGENT")
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        }
        let readers: Vec<_> = (0..6).map(|_| run(&["ls", &project, "--json"])).collect();
        for r in readers {
            let out = r.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
