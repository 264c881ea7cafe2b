//! `pair demo --project`: a small project of boards worked through by several agent processes.
//!
//! A scripted user (`pair demo-agent --role project-user`) makes a throwaway git repository and
//! four boards under `boards/`: `parser` and `exporter`, `cli` waiting for `parser` and `docs`
//! waiting for `exporter` (`init --after`), each asking one review a round from the pool `rex,sam`
//! (`--reviewer-pool`), `yolo` (the user approved the human gates up front). Then two doers (`ada`,
//! `ben`) and the two pool members start, each a `pair demo-agent --role project-agent` process
//! running the same loop: `pair next --agent ME boards --wait`, then the `next.command` it gives,
//! its placeholders filled in (a note file, `APPROVED`), the code written and staged in the
//! board's worktree before `submit code` and committed before `advance COMMITTED`. Pool members
//! race for each review with `claim`; the loser is told who took it and moves on. While `cli`
//! still waits for `parser` (nobody's turn on it), `ada` hands its doer role to `ben` (`pair
//! handoff`) and waits on the board's journal (`poll --after N --wait`) until `ben`, whose `next`
//! offers `acknowledge`, takes it; `cli` is `ben`'s once `parser` is committed.
//! An agent stops when `pair ls` shows every board finished. The demo prints the story, then
//! `pair ls` and `pair stats` of the finished project, and checks it with `pair validate`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::Outcome;
use super::demo::{
    Agent, Event, catch_interrupts, die_of, exe, failure, interrupted, now_ms, render_event,
    run_crew, run_pair,
};
use crate::cli::DemoArgs;
use crate::error::{Error, Result, exit};
use crate::render::report::{SCHEMA, Style};

/// The project's directory, under the demo's.
pub const PROJECT: &str = "boards";
/// The doers and the pool members.
const DOERS: [&str; 2] = ["ada", "ben"];
const POOL: [&str; 2] = ["rex", "sam"];
/// Each board: its name, its first doer, the board it waits for, its goal.
pub const BOARDS: [(&str, &str, Option<&str>, &str); 4] = [
    ("parser", "ada", None, "Parse the CSV input of the report"),
    ("exporter", "ben", None, "Export the report as JSON"),
    (
        "cli",
        "ada",
        Some("parser"),
        "A command line over the parser",
    ),
    (
        "docs",
        "ben",
        Some("exporter"),
        "Document the export format",
    ),
];
/// The scripted rotation: this board's first doer hands its role to the other doer while the
/// board still waits for its dependency.
pub const HANDOFF: (&str, &str, &str) = ("cli", "ada", "ben");
/// How long one `next --wait` waits before the agent looks whether the project is finished.
const SLICE: &str = "1";
/// What the throwaway repository ignores: the boards, the worktrees, the agents' notes.
const GITIGNORE: &str = "boards/\n.worktrees/\nnotes/\n";

fn board_path(name: &str) -> String {
    format!("{PROJECT}/{name}.md")
}

// ---------------------------------------------------------------------------------------------
// the demo

pub fn run(a: DemoArgs) -> Result<Outcome> {
    let limit = super::timeout(a.timeout)?;
    catch_interrupts();
    let (dir, temp) = super::demo::demo_dir(a.keep.as_deref())?;
    let exe = exe()?;
    let started = Instant::now();
    let epoch = now_ms();
    let agent_timeout = format!("{}", a.timeout.max(1.0));
    let args = |role: &str, id: &str| -> Vec<String> {
        ["--role", role, "--id", id, "--board", PROJECT]
            .iter()
            .map(|w| w.to_string())
            .collect()
    };

    // The user sets the project up, then the agents work it through.
    let mut crews = vec![run_crew(
        &exe,
        &dir,
        epoch,
        &agent_timeout,
        &[("user".to_string(), args("project-user", "user"))],
        started + limit,
    )?];
    if crews[0].statuses.iter().all(|s| *s == Some(0)) && interrupted().is_none() {
        let members: Vec<(String, Vec<String>)> = DOERS
            .iter()
            .chain(POOL.iter())
            .map(|id| (id.to_string(), args("project-agent", id)))
            .collect();
        crews.push(run_crew(
            &exe,
            &dir,
            epoch,
            &agent_timeout,
            &members,
            started + limit,
        )?);
    }
    if let Some(sig) = interrupted() {
        die_of(sig, &dir, temp);
    }
    let timed_out = crews.iter().any(|c| c.timed_out);
    let agents_ok = crews.len() == 2
        && crews
            .iter()
            .all(|c| c.statuses.iter().all(|s| *s == Some(0)));
    let mut events: Vec<Event> = crews.iter().flat_map(|c| c.events.clone()).collect();
    events.sort_by_key(|e| e.ms);

    // Check the result with the real commands.
    let validate = run_pair(&exe, &dir, None, &["validate", PROJECT])?;
    let valid = validate.code == 0 && validate.json["valid"] == json!(true);
    let ls = run_pair(&exe, &dir, None, &["ls", PROJECT])?;
    let phases: Vec<(String, String)> = ls.json["boards"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            (
                b["name"].as_str().unwrap_or("?").to_string(),
                b["phase"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    let committed =
        phases.len() == BOARDS.len() && phases.iter().all(|(_, p)| p.as_str() == "COMMITTED");
    let reviews = reviews_taken(&exe, &dir)?;
    let once = reviews
        .iter()
        .all(|r| r.rounds >= 1 && r.takers.len() as u64 == r.rounds);
    let handoff = handoff_state(&dir);
    let acknowledged = handoff.as_deref() == Some("acknowledged");
    let ls_text = text_of(&exe, &dir, &["ls", PROJECT])?;
    let stats_text = text_of(&exe, &dir, &["stats", PROJECT])?;
    let stats = run_pair(&exe, &dir, None, &["stats", PROJECT])?.json;
    let ok = agents_ok && valid && committed && once && acknowledged && !timed_out;
    let elapsed = started.elapsed();

    let style = Style::for_stdout();
    let mut text = String::new();
    text.push_str(&style.bold(&format!(
        "pair demo --project: {} boards, two doers ({}) and a pool of two reviewers ({})\n",
        BOARDS.len(),
        DOERS.join(", "),
        POOL.join(", ")
    )));
    text.push_str(&format!(
        "Each agent is a separate `pair demo-agent` process looping on `pair next --agent ME {PROJECT} \
         --wait` and running the `next.command` it gives.\ncli waits for parser and docs for \
         exporter; every round asks one review of the pool, taken by `claim`; ada hands cli \
         over to ben.\nWorking directory: {}\n\n",
        dir.display()
    ));
    text.push_str(&style.dim("   elapsed  agent   what"));
    text.push('\n');
    for e in &events {
        text.push_str(&render_event(e, &style));
    }
    text.push('\n');
    text.push_str(&format!("$ pair ls {PROJECT}\n{ls_text}\n"));
    text.push_str(&format!("$ pair stats {PROJECT}\n{stats_text}\n"));
    let taken: Vec<String> = reviews
        .iter()
        .map(|r| format!("{} {} by {}", r.board, r.gate, r.takers.join(", ")))
        .collect();
    text.push_str(&format!(
        "Reviews taken ({}, each once: {}): {}\n",
        reviews.iter().map(|r| r.takers.len()).sum::<usize>(),
        if once { "yes" } else { "NO" },
        taken.join("; ")
    ));
    text.push_str(&format!(
        "Result: {} of {} boards COMMITTED · handoff {} · {} · {:.2} s\n",
        phases
            .iter()
            .filter(|(_, p)| p.as_str() == "COMMITTED")
            .count(),
        BOARDS.len(),
        handoff.as_deref().unwrap_or("missing"),
        if valid {
            style.green("`pair validate`: valid")
        } else {
            style.red("`pair validate`: INVALID")
        },
        elapsed.as_secs_f64()
    ));
    if timed_out {
        text.push_str(&style.red(&format!(
            "The demo did not finish within {:.0} s; its agents were ended.\n",
            limit.as_secs_f64()
        )));
    }
    for c in &crews {
        for (st, (id, err)) in c.statuses.iter().zip(&c.stderrs) {
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
    }
    let project = dir.join(PROJECT);
    let kept = a.keep.is_some();
    if kept {
        text.push_str(&format!(
            "The project is kept: {}\n  pair ls {}\n",
            project.display(),
            crate::text::shell_word(&project.display().to_string())
        ));
    } else {
        text.push_str(&format!(
            "The demo directory {} is removed now; run `pair demo --project --keep DIR` to keep it.\n",
            dir.display()
        ));
    }
    let json = json!({
        "schema": SCHEMA,
        "ok": ok,
        "dir": dir.display().to_string(),
        "project": project.display().to_string(),
        "kept": kept,
        "elapsed_ms": elapsed.as_millis() as u64,
        "agents": DOERS.iter().map(|id| json!({"id": id, "role": "doer"}))
            .chain(POOL.iter().map(|id| json!({"id": id, "role": "pool reviewer"})))
            .collect::<Vec<_>>(),
        "events": events,
        "boards": ls.json["boards"],
        "reviews": reviews.iter().map(|r| json!({
            "board": r.board, "gate": r.gate, "rounds": r.rounds, "taken_by": r.takers,
        })).collect::<Vec<_>>(),
        "handoff": {"board": HANDOFF.0, "from": HANDOFF.1, "to": HANDOFF.2, "state": handoff},
        "valid": valid,
        "stats": stats,
    });
    drop(temp);
    Ok(Outcome {
        json,
        text,
        code: if ok { 0 } else { 1 },
        warnings: vec![],
        printed: false,
    })
}

/// `pair ARGS` as a person would run it (no `--json`): its standard output.
fn text_of(exe: &Path, dir: &Path, args: &[&str]) -> Result<String> {
    let out = std::process::Command::new(exe)
        .args(args)
        .args(["--color", "never"])
        .current_dir(dir)
        .env_remove("PAIR_AGENT")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| Error::io(exe, "run", e))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The reviews of one gate of a pool board: how many rounds the gate had and who took each
/// (the journal's `claim` records).
pub struct Taken {
    pub board: String,
    pub gate: String,
    pub rounds: u64,
    pub takers: Vec<String>,
}

/// Every gate the pool reviewed on the project's boards, with its rounds (the board's counter)
/// and who took each round's review: the successful `claim`s of the board's journal
/// (`pair log --json`), a refused claim writing nothing.
fn reviews_taken(exe: &Path, dir: &Path) -> Result<Vec<Taken>> {
    let mut out: Vec<Taken> = Vec::new();
    for (name, ..) in BOARDS {
        let board = board_path(name);
        let log = run_pair(exe, dir, None, &["log", &board])?;
        let status = run_pair(exe, dir, None, &["status", &board])?;
        for (gate, submitted, counter) in [
            ("plan", "PLANNING_SUBMITTED", "plan_revision"),
            ("code", "CODE_SUBMITTED", "code_review_round"),
        ] {
            let takers = log.json["records"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| r["command"] == "claim" && r["from"] == submitted)
                .filter_map(|r| r["by"].as_str().map(str::to_string))
                .collect();
            out.push(Taken {
                board: name.to_string(),
                gate: gate.to_string(),
                rounds: status.json["counters"][counter].as_u64().unwrap_or(0),
                takers,
            });
        }
    }
    Ok(out)
}

/// The state of the scripted handoff on its board (`pending`, `acknowledged`), if offered.
fn handoff_state(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(board_path(HANDOFF.0))).ok()?;
    let prefix = format!("doer {} {} ", HANDOFF.1, HANDOFF.2);
    text.lines()
        .map(|l| l.trim().trim_start_matches("- ").trim_matches('"'))
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

// ---------------------------------------------------------------------------------------------
// the agents

/// The scripted user: a throwaway repository for the code, and the four boards.
pub fn user(me: &Agent) -> Result<()> {
    me.git(
        &me.dir,
        &["init", "-q"],
        "a throwaway git repository for the code",
    )?;
    me.write_file(&me.dir, ".gitignore", GITIGNORE)?;
    me.write_file(&me.dir, "README", "The report tool.\n")?;
    me.git(&me.dir, &["add", ".gitignore", "README"], "")?;
    me.git(&me.dir, &["commit", "-q", "-m", "the report tool"], "")?;
    let boards = me.dir.join(PROJECT);
    std::fs::create_dir_all(&boards).map_err(|e| Error::io(&boards, "create", e))?;
    let pool = POOL.join(",");
    for (name, doer, after, goal) in BOARDS {
        let board = board_path(name);
        let mut args = vec![
            "init",
            &board,
            "--goal",
            goal,
            "--doer",
            doer,
            "--reviewer-pool",
            &pool,
            "--reviews",
            "1",
            "--yolo",
        ];
        if let Some(after) = after {
            args.extend(["--after", after]);
        }
        let say = match after {
            Some(a) => {
                format!("{doer} does it once {a} is committed; one review a round from the pool")
            }
            None => format!("{doer} does it; one review a round from the pool"),
        };
        me.pair(&args, &[0], &say)?;
    }
    Ok(())
}

/// A doer or a pool member: `next --wait` across the project, then the step it gives.
pub fn agent(me: &Agent, project: &Path) -> Result<()> {
    let project_s = project.display().to_string();
    let deadline = Instant::now() + Duration::from_secs_f64(me.timeout.parse().unwrap_or(60.0));
    // The scripted rotation: the board waits for another, so it is nobody's turn; its doer
    // hands it over and waits for the acknowledgement before it starts its other work.
    let (hb, from, to) = HANDOFF;
    if me.id == from {
        hand_over(me, &board_path(hb), to)?;
    }
    loop {
        if Instant::now() >= deadline {
            me.emit(me.event("fail", "the project did not finish in time"));
            return Err(failure(format!("{}: timed out", me.id)));
        }
        let started = Instant::now();
        let next = me.quiet(&[
            "next",
            "--agent",
            &me.id,
            &project_s,
            "--wait",
            "--timeout",
            SLICE,
        ])?;
        if next.code == exit::TERMINAL {
            me.emit(me.event(
                "done",
                "every board of mine is finished or handed over; stopping",
            ));
            return Ok(());
        }
        if next.code == exit::NOT_YOUR_TURN {
            if finished(me, &project_s)? {
                me.emit(me.event("done", "every board of the project is finished; stopping"));
                return Ok(());
            }
            continue;
        }
        if next.code != 0 {
            let message = next.json["error"]["message"]
                .as_str()
                .unwrap_or("")
                .to_string();
            me.emit(me.event(
                "fail",
                format!("`pair next` exited {}: {message}", next.code),
            ));
            return Err(failure(format!("{}: next failed", me.id)));
        }
        let step = &next.json["step"];
        let board = step["board"].as_str().unwrap_or("").to_string();
        let name = step["name"].as_str().unwrap_or("").to_string();
        let phase = step["phase"].as_str().unwrap_or("").to_string();
        let Some(argv) = next.json["next"]["command"].as_array() else {
            me.emit(me.event("fail", format!("`pair next` gave no command on {name}")));
            return Err(failure(format!("{}: no command", me.id)));
        };
        let mut argv: Vec<String> = argv
            .iter()
            .filter_map(|w| w.as_str().map(str::to_string))
            .collect();
        me.emit(me.event(
            "woke",
            format!(
                "next: {} on {name} in {phase} (waited {:.2} s)",
                step["kind"].as_str().unwrap_or("?"),
                started.elapsed().as_secs_f64()
            ),
        ));
        let holes: Vec<String> = next.json["next"]["placeholders"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        fill(me, &mut argv, &holes, &name)?;
        if argv.get(1).map(String::as_str) == Some("submit") && argv.iter().any(|w| w == "code") {
            write_code(me, &board, &name)?;
        }
        if argv.iter().any(|w| w == "COMMITTED") {
            let wt = worktree(me, &board)?;
            me.git(
                Path::new(&wt),
                &[
                    "commit",
                    "-q",
                    "-m",
                    &format!("{name}: the approved change"),
                ],
                "commits the approved content",
            )?;
        }
        let args: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
        let claim = args.first() == Some(&"claim");
        let run = me.pair(&args, &[0, 3, 6], &say(&args, &name))?;
        if run.code != 0 {
            let message = run.json["error"]["message"].as_str().unwrap_or("");
            if claim && message.contains("already taken") {
                me.emit(me.event(
                    "woke",
                    format!(
                        "lost the race for {name}'s review: {}",
                        first_sentence(message)
                    ),
                ));
                continue;
            }
            // Stale: the board moved on since the agent read it (another member's review of
            // the round may have ended it already). As the skill says: read it again.
            if run.code == 3 {
                me.emit(me.event(
                    "woke",
                    format!("{name} moved on since read: {}", first_sentence(message)),
                ));
                continue;
            }
            me.emit(me.event("fail", format!("refused: {message}")));
            return Err(failure(format!("{}: refused", me.id)));
        }
    }
}

fn first_sentence(s: &str) -> &str {
    s.split_once(". ").map_or(s, |(a, _)| a)
}

/// A few words on what a step does, for the story.
fn say(args: &[&str], name: &str) -> String {
    match args.first().copied() {
        Some("register") => format!("joins {name} as a member of its pool"),
        Some("claim") => format!("takes {name}'s review from the pool"),
        Some("verdict") => format!("approves {name}"),
        Some("submit") => format!("submits {name}'s {}", artifact(args).unwrap_or("work")),
        Some("acknowledge") => format!("takes over {name}: the role is now its"),
        Some("worktree") => format!("a real git worktree for {name}'s code"),
        Some("advance") => format!("{name} moves on"),
        _ => String::new(),
    }
}

/// Whether every board of the project is finished.
fn finished(me: &Agent, project: &str) -> Result<bool> {
    let ls = me.quiet(&["ls", project])?;
    let boards = ls.json["boards"].as_array().cloned().unwrap_or_default();
    Ok(!boards.is_empty() && boards.iter().all(|b| b["terminal"] == json!(true)))
}

/// The artifact a `submit` names (`plan`, `code`, …), if any.
fn artifact(args: &[&str]) -> Option<&'static str> {
    ["analysis", "plan", "red-test", "code", "followup"]
        .into_iter()
        .find(|a| args.contains(a))
}

/// Fill the placeholders of a `next.command` (`holes`, from `next.placeholders`): a note
/// file, the verdict; the script has no answer for any other.
fn fill(me: &Agent, argv: &mut [String], holes: &[String], name: &str) -> Result<()> {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let verb = words.get(1).copied().unwrap_or("").to_string();
    let what = artifact(&words).unwrap_or("note");
    let (note_name, note) = match verb.as_str() {
        "verdict" => (
            format!("{}-{name}-review-{}", me.id, now_ms()),
            format!("{}: read the pinned artifact of {name}; approved.\n", me.id),
        ),
        _ => (
            format!("{}-{name}-{what}-{}", me.id, now_ms()),
            format!("The {what} for {name}.\n"),
        ),
    };
    for w in argv.iter_mut() {
        match w.as_str() {
            "FILE" => *w = me.note_file(&note_name, &note)?,
            "VERDICT" => *w = "APPROVED".into(),
            hole if holes.iter().any(|h| h == hole) => {
                me.emit(me.event("fail", format!("no scripted value for {hole}")));
                return Err(failure(format!("{}: placeholder {hole}", me.id)));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The board's worktree (recorded by `worktree create`).
fn worktree(me: &Agent, board: &str) -> Result<String> {
    let st = me.quiet(&["status", board])?;
    st.json["frontmatter"]["worktree"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| failure(format!("{}: {board} has no worktree", me.id)))
}

/// The doer's code for a board, written in its worktree and staged: what reviewers read.
fn write_code(me: &Agent, board: &str, name: &str) -> Result<()> {
    let wt = worktree(me, board)?;
    let file = format!("{name}.rs");
    me.write_file(
        Path::new(&wt),
        &file,
        &format!("//! {name}\npub fn {name}() -> &'static str {{\n    \"{name}\"\n}}\n"),
    )?;
    me.git(
        Path::new(&wt),
        &["add", &file],
        "stages the code: the diff reviewers read",
    )?;
    Ok(())
}

/// The scripted rotation: offer the doer's role, then wait on the board's journal (the cursor)
/// until the incoming doer acknowledges it.
fn hand_over(me: &Agent, board: &str, to: &str) -> Result<()> {
    let offered = me.pair(
        &[
            "handoff",
            board,
            "--to",
            to,
            "--summary",
            "It waits for parser; nothing is planned or open yet.",
        ],
        &[0],
        &format!(
            "hands cli (waiting for parser) over to {to}; the role stays mine until {to} \
             acknowledges"
        ),
    )?;
    drop(offered);
    // The journal past a position: the records and the new position come from one read, so an
    // acknowledgement is either among the records or past the position, where it wakes the wait.
    let mut after = 0;
    let mut wait = false;
    loop {
        let pos = after.to_string();
        let mut args = vec!["poll", board, "--after", &pos];
        if wait {
            args.extend(["--wait", "--timeout", &me.timeout]);
        }
        let run = me.quiet(&args)?;
        let moved = run.json["position"].as_u64().unwrap_or(after);
        let acknowledged = run.json["records"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["command"] == "acknowledge" && r["by"] == to);
        if acknowledged {
            me.emit(me.event(
                "woke",
                format!("poll --after {after} --wait: {to} acknowledged; the board is {to}'s now"),
            ));
            return Ok(());
        }
        if wait && moved == after {
            me.emit(me.event("fail", format!("{to} never acknowledged the handoff")));
            return Err(failure(format!("{}: handoff not acknowledged", me.id)));
        }
        after = moved;
        wait = true;
    }
}

impl Agent {
    /// Run `pair ARGS --json` as this agent without telling the story (reads and waits).
    pub(super) fn quiet(&self, args: &[&str]) -> Result<super::demo::Run> {
        run_pair(&self.exe, &self.dir, Some(&self.id), args)
    }
}
