//! `pair worktree create` and `pair check`: the commands that make something in the repository
//! (a worktree, a validation run) and record it in one write.
//!
//! `worktree create` goes in this order, so that a refusal leaves nothing half made:
//!
//! 1. read the blackboard and judge the move as if the worktree existed: the same operation and
//!    law the write runs, on the bytes read (phase, standing, human gate), before git makes
//!    anything;
//! 2. `git worktree add -b TOPIC PATH BASE` in the repository;
//! 3. the locked write that records the worktree, repository, base and branch with the phase
//!    move. If that write is refused (the blackboard changed meanwhile), step 2 is undone:
//!    `git worktree remove --force PATH` and `git branch -D TOPIC`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Outcome, semantic, worktree};
use crate::board::checks::{self, CheckRun, Needs};
use crate::board::frontmatter::{Frontmatter, Timestamp};
use crate::cli::{CheckArgs, WorktreeCreateArgs};
use crate::error::{Error, Flag, Hint, Result};
use crate::law;
use crate::law::protocol::Command;
use crate::ops::{self, Created, Ctx};
use crate::repo;
use crate::repo::git;
use crate::store;
use crate::store::Session;
use crate::text::shell_arg;
use crate::transaction;

fn text_of(p: &Path) -> Result<String> {
    p.to_str().map(str::to_string).ok_or_else(|| {
        Error::Usage(format!(
            "{}: the path must be UTF-8 to be recorded on the blackboard",
            crate::render::output::path(p)
        ))
    })
}

pub fn worktree_create(a: WorktreeCreateArgs, s: &Session) -> Result<Outcome> {
    // A refusal's hint is rendered against the command as it was run (its `--path` or
    // `--branch` replaced), and through the MCP server as the call that stands for it.
    let board = super::shown(&a.board);
    create_worktree(a, s).map_err(|e| e.suggest(&super::argv(), Some(&board)))
}

fn create_worktree(a: WorktreeCreateArgs, s: &Session) -> Result<Outcome> {
    super::agent_arg("--agent", &a.common.agent)?;
    super::semantic::check_common(&a.common)?;
    // What git makes is derived from the board read now, and the write edits that read.
    let snap = store::snapshot(&a.board, store::Depth::Edit { fresh: true }, s)?;
    let loaded = snap.load_to_edit()?;
    let fm = &loaded.valid.parsed.fm;
    let consent = semantic::consent(a.user_approved, None);
    let ctx = Ctx {
        agent: a.common.agent.clone(),
        now: Timestamp::now(),
        consent: consent.clone(),
        sections: vec![],
    };
    ops::admit_create(fm, &ctx)?;
    // The default path and branch come from the board's name; with both given, none is needed.
    let default = match (&a.path, &a.branch) {
        (Some(_), Some(_)) => None,
        _ => Some(worktree::default_worktree(
            &a.board,
            a.repo_root.as_deref(),
        )?),
    };
    let root = match (&a.repo_root, &default) {
        // The top of the repository named, as git knows it.
        (Some(r), _) => crate::repo::git::worktree_top(r)?,
        (None, Some(d)) => d.root.clone(),
        (None, None) => worktree::repo_root(&a.board)?,
    };
    let path = match (&a.path, &default) {
        (Some(p), _) => std::path::absolute(p).map_err(|e| Error::io(p, "resolve", e))?,
        (None, Some(d)) => d.path.clone(),
        (None, None) => worktree::default_worktree(&a.board, a.repo_root.as_deref())?.path,
    };
    if path.components().any(|c| c.as_os_str() == ".git") {
        return Err(Error::Usage(format!(
            "--path {}: a worktree may not be made inside a `.git` directory (git keeps the \
             repository there); leave --path out for the default `.worktrees/` of the \
             repository, or name a directory outside `.git`",
            crate::render::output::path(&path)
        )));
    }
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(Error::refused(
            format!(
                "{} already exists; `pair worktree create` makes a new worktree (choose another \
                 path, or remove what is there)",
                crate::render::output::path(&path)
            ),
            Hint::Rerun {
                add: vec![Flag::with("--path", "PATH")],
            },
        ));
    }
    let branch = match (&a.branch, &default) {
        (Some(b), _) => b.clone(),
        (None, Some(d)) => format!("pair/{}", d.stem),
        (None, None) => format!(
            "pair/{}",
            worktree::default_worktree(&a.board, a.repo_root.as_deref())?.stem
        ),
    };
    if let Some(short) = branch.strip_prefix("refs/") {
        return Err(Error::Usage(format!(
            "--branch {branch}: give the branch's name, not its ref (`--branch {}`); git would \
             make a branch literally named {branch}",
            short.strip_prefix("heads/").unwrap_or(short)
        )));
    }
    repo::branch_name(&branch)?;
    if repo::branch(&root, &branch)?.is_some() {
        return Err(Error::refused(
            format!(
                "the branch {branch} already exists in {}; `pair worktree create` makes a new \
                 topic branch (choose another name for it)",
                crate::render::output::path(&root)
            ),
            Hint::Rerun {
                add: vec![Flag::with("--branch", "BRANCH")],
            },
        ));
    }
    let Some(base_sha) = repo::head(&root)? else {
        return Err(Error::protocol(format!(
            "{} has no commit to branch from; commit something first",
            crate::render::output::path(&root)
        )));
    };
    let base_branch = repo::current_branch(&root)?;
    let mut created = Created {
        repo_root: text_of(&root)?,
        base_branch,
        base_sha: base_sha.clone(),
        topic_branch: branch.clone(),
        worktree: text_of(&path)?,
    };
    // 1. The same operation and law, on the bytes read, before git makes anything.
    transaction::apply_with(
        &a.board,
        loaded.bytes[..].into(),
        &ctx.agent,
        &consent,
        s.origin(),
        ctx.now,
        &|fm| crate::store::depend::read(&a.board, fm),
        |fm: &mut Frontmatter, ctx: &Ctx| ops::create_worktree(fm, ctx, &created),
    )?;
    // 2. The worktree.
    repo::add_worktree(&root, &path, &branch, &base_sha)?;
    let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    created.worktree = text_of(&real)?;
    // 3. The write; undo 2 if it is refused.
    let recorded = created.clone();
    let result = semantic::apply_on(
        snap,
        &a.common,
        "worktree-create",
        consent,
        s,
        Vec::new(),
        move |fm, ctx| ops::create_worktree(fm, ctx, &recorded),
    );
    let mut out = match result {
        Ok(out) => out,
        Err(e) => {
            return Err(
                match repo::remove_worktree_and_branch(&root, &real, &branch) {
                    Ok(()) => {
                        worktree::remove_empty_base(&root, &real);
                        e
                    }
                    Err(undo) => Error::Git {
                        message: format!(
                            "{e}\nThe worktree {} and branch {branch} that were made for it could \
                         not be removed ({undo}); remove them by hand",
                            crate::render::output::path(&real)
                        ),
                    },
                },
            );
        }
    };
    // The default worktrees' directory kept out of the main checkout's untracked files.
    let mut notes = String::new();
    let mut excluded = None;
    if worktree::in_base(&root, &real) {
        match repo::exclude_worktrees(&root) {
            Ok(Some(file)) => {
                notes.push_str(&format!(
                    "added /.worktrees/ to {} so that the checkout does not list it as \
                     untracked\n",
                    crate::text::escape(&file.display().to_string())
                ));
                excluded = Some(file.display().to_string());
            }
            Ok(None) => {}
            Err(e) => out.warnings.push(format!(
                "could not keep .worktrees/ out of the untracked files ({e}): add `.worktrees/` \
                 to the repository's .gitignore"
            )),
        }
    }
    // What the checkout has that the new worktree has not: files the repository ignores.
    // The board itself, when the repository ignores it, is not the work's.
    let board_rel = std::fs::canonicalize(&a.board).ok().and_then(|b| {
        let r = std::fs::canonicalize(&root).ok()?;
        Some(b.strip_prefix(r).ok()?.to_string_lossy().into_owned())
    });
    let ignored = match repo::ignored_untracked(&root) {
        Ok(list) => list
            .into_iter()
            .filter(|p| Some(p) != board_rel.as_ref())
            .collect(),
        Err(e) => {
            out.warnings.push(format!(
                "could not list the ignored files of {} ({e})",
                crate::render::output::path(&root)
            ));
            Vec::new()
        }
    };
    if !ignored.is_empty() {
        notes.push_str(&ignored_note(&root, &real, &ignored));
    }
    let info = json!({
        "repo_root": created.repo_root,
        "base_branch": created.base_branch,
        "base_sha": created.base_sha,
        "topic_branch": created.topic_branch,
        "worktree": created.worktree,
        "excluded": excluded,
        "ignored_not_copied": {
            "count": ignored.len(),
            "paths": ignored.iter().take(IGNORED_SHOWN).collect::<Vec<_>>(),
        },
    });
    if let Some(o) = out.json.as_object_mut() {
        o.insert("worktree".into(), info);
    }
    out.text = format!(
        "worktree {} on {} (from {} {})\n{notes}{}",
        crate::text::escape(&created.worktree),
        crate::text::escape(&created.topic_branch),
        created.base_branch.as_deref().unwrap_or("HEAD"),
        &created.base_sha[..created.base_sha.len().min(12)],
        out.text
    );
    Ok(out)
}

/// How many of the ignored files `worktree create` names.
const IGNORED_SHOWN: usize = 10;

/// The ignored, untracked files of the checkout that the new worktree lacks, bounded, and how
/// to copy one.
fn ignored_note(root: &Path, wt: &Path, ignored: &[String]) -> String {
    let shown: Vec<String> = ignored
        .iter()
        .take(IGNORED_SHOWN)
        .map(|p| crate::text::escape(p).into_owned())
        .collect();
    let more = ignored.len().saturating_sub(IGNORED_SHOWN);
    let first = ignored[0].trim_end_matches('/');
    format!(
        "not in the new worktree: {} {} that {} ignores (a generated file its tests need may be \
         among them): {}{}; copy what the work needs, e.g. `cp -a {} {}`\n",
        ignored.len(),
        if ignored.len() == 1 {
            "file or directory"
        } else {
            "files and directories"
        },
        crate::text::escape(&root.display().to_string()),
        shown.join(", "),
        if more > 0 {
            format!(
                " and {more} more (`git -C {} status --ignored`)",
                shell_arg(&root.display().to_string())
            )
        } else {
            String::new()
        },
        shell_arg(&root.join(first).display().to_string()),
        shell_arg(&wt.join(first).parent().unwrap_or(wt).display().to_string()),
    )
}

/// Which check to run, and how.
struct Plan {
    name: String,
    argv: Vec<String>,
    previous: Option<CheckRun>,
    reproduce: bool,
    /// What it needs besides its command: declared now, or the previous run's for a
    /// reproduction.
    needs: Option<Needs>,
    /// The command is a required check's, as the user set it at `init`.
    required: bool,
}

/// The needs `--needs` and `--setup` declare (`None`: neither given).
fn declared_needs(a: &CheckArgs) -> Result<Option<Needs>> {
    if a.needs.is_empty() && a.setup.is_none() {
        return Ok(None);
    }
    if let Some(bad) = a.needs.iter().find(|p| !checks::is_needed_path(p)) {
        return Err(Error::Usage(format!(
            "--needs {:?}: a needed file is a path relative to the worktree, inside it (no \
             `..`, not absolute, not `~`), on one line",
            bad
        )));
    }
    if let Some(s) = &a.setup
        && !checks::is_setup(s)
    {
        return Err(Error::Usage(
            "--setup: the setup is one non-empty command line, run as `sh -c CMD` in the \
             checkout"
                .into(),
        ));
    }
    let mut files: Vec<String> = Vec::new();
    for f in &a.needs {
        let f = f.trim_end_matches('/').to_string();
        if !files.contains(&f) {
            files.push(f);
        }
    }
    Ok(Some(Needs {
        files,
        setup: a.setup.clone(),
    }))
}

fn plan(a: &CheckArgs, fm: &Frontmatter) -> Result<Plan> {
    let required = |n: &str| fm.required_checks.iter().find(|c| c.name == n);
    let last = |n: &str| fm.check_runs.iter().find(|r| r.name == n).cloned();
    if let Some(n) = &a.reproduce {
        if !a.command.is_empty() {
            return Err(Error::Usage(
                "--reproduce re-runs the recorded command of the check; give no command after `--`"
                    .into(),
            ));
        }
        let previous = last(n);
        let argv = match (required(n), &previous) {
            (Some(r), _) => r.argv(),
            (None, Some(p)) => p.command.clone(),
            (None, None) => {
                return Err(Error::protocol(format!(
                    "no check named {n:?} is required or has run on this blackboard; nothing to \
                     reproduce{}",
                    names(fm)
                )));
            }
        };
        // The previous run's needs, when it ran the same command.
        let needs = previous
            .as_ref()
            .filter(|p| p.command == argv)
            .and_then(|p| p.needs.clone());
        return Ok(Plan {
            name: n.clone(),
            required: required(n).is_some(),
            argv,
            previous,
            reproduce: true,
            needs,
        });
    }
    let name = match (&a.name, a.command.first()) {
        (Some(n), _) => n.clone(),
        (None, Some(program)) => Path::new(program)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| program.clone()),
        (None, None) => {
            return Err(Error::Usage(format!(
                "give the command to run after `--` (`pair check BOARD --name tests -- cargo \
                 test`), or --name of a required check{}",
                names(fm)
            )));
        }
    };
    if !checks::is_check_name(&name) {
        return Err(Error::Usage(format!(
            "the check name {name:?} must use letters, digits, `.`, `_` and `-` (give one with \
             --name)"
        )));
    }
    let argv = match (required(&name), a.command.is_empty()) {
        (Some(r), true) => r.argv(),
        (Some(r), false) if a.command == r.argv() => r.argv(),
        (Some(r), false) => {
            return Err(Error::Usage(format!(
                "{name} is a required check and its command is recorded ({:?}); run it with \
                 `pair check BOARD --name {name}` and no command",
                r.command
            )));
        }
        (None, true) => {
            return Err(Error::Usage(format!(
                "{name} is not a required check; give the command to run after `--`{}",
                names(fm)
            )));
        }
        (None, false) => a.command.clone(),
    };
    Ok(Plan {
        required: required(&name).is_some(),
        name: name.clone(),
        argv,
        previous: last(&name),
        reproduce: false,
        needs: declared_needs(a)?,
    })
}

fn names(fm: &Frontmatter) -> String {
    if fm.required_checks.is_empty() {
        String::new()
    } else {
        format!(
            " (required checks: {})",
            fm.required_checks
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// How a check's command ended.
struct Ran {
    /// The exit code (`None`: ended by a signal).
    code: Option<i32>,
    duration_ms: u64,
    /// Its output's tail, with the summary lines from earlier ([`super::check_output`]).
    output: String,
    /// The lines of its output that say what passed or failed.
    summary: Vec<String>,
    /// It was stopped by `--time-limit`.
    timed_out: bool,
}

/// Run the command in the worktree, its standard output and error together, in a process group
/// of its own so that a time limit stops everything it started (a test runner's children too),
/// not just the first process.
/// A check whose command exited 126 or 127: it could not run here, which says nothing of the
/// code. The error carries the tail of what it printed, which names what is missing.
fn cannot_run(argv: &[String], code: i32, output: &str) -> Error {
    let why = if code == 127 {
        "a program it runs was not found here"
    } else {
        "a program it runs could not be executed here"
    };
    let line = argv
        .iter()
        .map(|w| shell_arg(w))
        .collect::<Vec<_>>()
        .join(" ");
    let tail = last_lines(output);
    Error::CannotRun {
        message: format!(
            "`{}` could not run here (exit {code}: {why}). That is no result of the code: \
             install what it needs here (a tool on PATH, a file outside the checkout), or run \
             the check where it can run; nothing was recorded{}",
            crate::text::escape(&line),
            if tail.is_empty() {
                String::new()
            } else {
                format!(". Its last lines:\n{tail}")
            }
        ),
    }
}

/// Run a check's command in `worktree`; `scratch`: a temporary checkout, where git's hooks are
/// off for whatever git the command runs.
fn run_command(
    worktree: &Path,
    argv: &[String],
    limit: Option<Duration>,
    scratch: bool,
) -> Result<Ran> {
    use std::os::unix::process::CommandExt;
    let (mut reader, writer) =
        std::io::pipe().map_err(|e| Error::io(worktree, "make a pipe for the check in", e))?;
    let writer2 = writer
        .try_clone()
        .map_err(|e| Error::io(worktree, "make a pipe for the check in", e))?;
    let start = Instant::now();
    let mut cmd = Process::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(worktree)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer2)
        .process_group(0);
    if scratch {
        crate::repo::hooks_off(&mut cmd);
    }
    let mut child = cmd.spawn().map_err(|e| Error::CannotRun {
        message: format!(
            "{} could not run here: {e}. That is no result of the code: install what it needs \
             here, or run the check where it can run; nothing was recorded",
            shell_arg(&argv[0])
        ),
    })?;
    // The command holds the writing ends; dropping it lets the read see the end.
    drop(cmd);
    // The watchdog: when the limit passes before the command is done, kill its process group.
    // Killing the group closes every writing end, so the read below ends too.
    let (done, done_rx) = std::sync::mpsc::channel::<()>();
    let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = limit.map(|limit| {
        let pgid = child.id();
        let flag = std::sync::Arc::clone(&timed_out);
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(limit) {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                // The process group the child leads.
                crate::sys::kill_group(pgid);
            }
        })
    });
    let mut kept = super::check_output::Collector::default();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => kept.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let status = child
        .wait()
        .map_err(|e| Error::io(worktree, "wait for the check in", e))?;
    drop(done);
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    let (output, summary) = kept.finish();
    Ok(Ran {
        code: status.code(),
        duration_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
        output,
        summary,
        timed_out: timed_out.load(std::sync::atomic::Ordering::SeqCst),
    })
}

fn short(s: &str) -> &str {
    &s[..s.len().min(12)]
}

fn result_word(code: Option<i32>) -> String {
    match code {
        Some(0) => "passed (exit 0)".into(),
        Some(c) => format!("failed (exit {c})"),
        None => "failed (ended by a signal)".into(),
    }
}

pub fn check(a: CheckArgs, s: &Session) -> Result<Outcome> {
    super::agent_arg("--agent", &a.common.agent)?;
    // What to run is read from the board now; the run is recorded on the board as it is after
    // the run (a second read: the command may take minutes), refused only when what it ran on
    // moved.
    let valid = store::snapshot(&a.board, store::Depth::Head, s)?.frontmatter()?;
    let fm = &valid.parsed.fm;
    law::admit(fm, &a.common.agent, Command::Check)?;
    let Some(wt) = fm.worktree.clone() else {
        let doer = fm.doer().unwrap_or("DOER");
        return Err(Error::protocol(match law::protocol::worktree_step(fm) {
            Some(to) => format!(
                "the blackboard records no worktree, and `pair check` runs the command in \
                     it; the doer makes it now, with the user's approval, moving to {to}: `pair \
                     worktree create {} --agent {} --user-approved`",
                shell_arg(&super::shown(&a.board)),
                shell_arg(doer)
            ),
            None => format!(
                "the blackboard records no worktree, and `pair check` runs the command in \
                     it; in {} there is none to make: the doer makes it with `pair worktree \
                     create` out of PLAN_APPROVED or RED_TEST_APPROVED, and checks run from then \
                     on",
                fm.phase
            ),
        }));
    };
    let plan = plan(&a, fm)?;
    if plan.reproduce && !a.yes {
        confirmation(&plan)
            .map_err(|e| e.suggest(&super::argv(), Some(&super::shown(&a.board))))?;
    }
    // A reproduction, and any check a reviewer runs, runs in a temporary checkout of the pinned
    // tree when a tree is pinned; a check of the doer's, and one on a red test pinned as files
    // (no tree: the files are in the worktree), runs in the worktree, as its record says.
    let by_doer = fm.doer() == Some(a.common.agent.as_str());
    let checkout = if plan.reproduce || !by_doer {
        pinned_checkout(&a.board, fm)?
    } else {
        None
    };
    let (run_dir, tree, where_) = match &checkout {
        Some((c, tree, words)) => (c.path.clone(), tree.clone(), words.clone()),
        None => {
            let wt_path = PathBuf::from(&wt);
            if let Err(e) = git::recorded(&wt_path) {
                return Err(Error::ArtifactUnavailable {
                    message: format!(
                        "the worktree {} cannot be used here ({e}); a reviewer reproduces a \
                         check in a temporary checkout of the pinned tree: `pair check {} \
                         --agent {} --reproduce NAME`",
                        crate::text::escape(&wt),
                        shell_arg(&super::shown(&a.board)),
                        shell_arg(&a.common.agent)
                    ),
                });
            }
            let tree = repo::worktree_tree(&wt_path)?;
            (
                wt_path,
                tree,
                format!(
                    "Ran in {} on tree `{{tree}}` (the index plus unstaged changes and untracked \
                     files not ignored)",
                    crate::text::escape(&wt)
                ),
            )
        }
    };
    let limit = (a.time_limit > 0).then(|| Duration::from_secs(a.time_limit));
    // What the check needs besides its command: made by its setup in a temporary checkout
    // (the worktree already has it), then looked for.
    if let Some(needs) = &plan.needs {
        if let (Some(setup), Some(_)) = (&needs.setup, &checkout) {
            let setup_argv = vec!["sh".to_string(), "-c".to_string(), setup.clone()];
            let done = run_command(&run_dir, &setup_argv, limit, true)?;
            if done.code != Some(0) || done.timed_out {
                return Err(setup_failed(setup, &done));
            }
        }
        // A needed file reached through a symbolic link that leads out of the checkout is not
        // the checkout's: another machine would not have what it points to.
        let inside = std::fs::canonicalize(&run_dir).ok();
        let escapes = |f: &str| {
            std::fs::canonicalize(run_dir.join(f))
                .ok()
                .zip(inside.as_ref())
                .is_some_and(|(p, root)| !p.starts_with(root))
        };
        let outside: Vec<&str> = needs
            .files
            .iter()
            .map(String::as_str)
            .filter(|f| escapes(f))
            .collect();
        if !outside.is_empty() {
            let list = path_list(&outside);
            let message = format!(
                "--needs {list}: a symbolic link in the {} leads out of it, so another machine's \
                 checkout would not have what it points to; nothing was run or recorded. Need a \
                 file inside the checkout, made by --setup if git does not track it",
                if checkout.is_some() {
                    "temporary checkout"
                } else {
                    "worktree"
                }
            );
            return Err(if checkout.is_some() {
                Error::CannotRun { message }
            } else {
                Error::Usage(message)
            });
        }
        let missing: Vec<&str> = needs
            .files
            .iter()
            .map(String::as_str)
            .filter(|f| !run_dir.join(f).exists())
            .collect();
        if !missing.is_empty() {
            return Err(missing_needs(&plan, needs, &missing, checkout.is_some()));
        }
    }
    // At record time, what the command names that a fresh checkout elsewhere may not have.
    let outside = if plan.reproduce {
        Vec::new()
    } else {
        checks::outside_paths(&plan.argv)
    };
    let ran = run_command(&run_dir, &plan.argv, limit, checkout.is_some())?;
    // The shell's "cannot execute" and "not found": the command never ran the code.
    if let Some(code @ (126 | 127)) = ran.code
        && !ran.timed_out
    {
        return Err(cannot_run(&plan.argv, code, &ran.output));
    }
    let (exit_code, duration_ms, output) = (ran.code, ran.duration_ms, ran.output);
    let tree_after = match &checkout {
        Some(_) => tree.clone(),
        None => repo::worktree_tree(&run_dir)?,
    };
    let scratch = checkout.is_some();
    drop(checkout);
    let run = CheckRun {
        name: plan.name.clone(),
        command: plan.argv.clone(),
        exit_code,
        tree: tree.clone(),
        duration_ms,
        agent: a.common.agent.clone(),
        at: Timestamp::now(),
        needs: plan.needs.clone(),
    };
    let command_line = plan
        .argv
        .iter()
        .map(|w| shell_arg(w))
        .collect::<Vec<_>>()
        .join(" ");
    let mut text = format!(
        "Command: `{}`\n\n{}; {} in {:.1} s.",
        command_line
            .chars()
            .map(|c| match c {
                '`' => '\'',
                c if c.is_control() => '?',
                c => c,
            })
            .collect::<String>(),
        where_.replace("{tree}", &tree),
        result_word(exit_code),
        duration_ms as f64 / 1000.0
    );
    if let Some(n) = &plan.needs {
        text.push_str(&format!("\n\n{}", needs_sentence(n, scratch)));
    }
    if ran.timed_out {
        text.push_str(&format!(
            "\n\nStopped by the time limit of {} s (`--time-limit`): its process group was \
             killed, so the run failed.",
            a.time_limit
        ));
    }
    if tree_after != tree {
        text.push_str(&format!(
            "\n\nThe content changed while the command ran (tree `{tree_after}` after it): this \
             run counts for tree `{tree}` only."
        ));
    }
    let comparison = plan.previous.as_ref().map(|p| {
        let same_tree = p.tree == tree;
        let same_result = p.exit_code == exit_code;
        json!({
            "previous": p,
            "same_tree": same_tree,
            "same_result": same_result,
            "reproduced": plan.reproduce && same_tree && same_result,
        })
    });
    if let Some(p) = &plan.previous {
        let same_tree = p.tree == tree;
        let same_result = p.exit_code == exit_code;
        text.push_str(&format!(
            "\n\n{} the previous run of {} by {} at {}: that one {} on tree `{}`. {}, {}{}.",
            if plan.reproduce {
                "Reproduces"
            } else {
                "Replaces, as the latest run,"
            },
            p.name,
            p.agent,
            p.at,
            result_word(p.exit_code),
            short(&p.tree),
            if same_tree {
                "Same tree"
            } else {
                "Different tree"
            },
            if same_result {
                "same result"
            } else {
                "different result"
            },
            match (plan.reproduce, same_tree && same_result) {
                (true, true) => ": reproduced",
                (true, false) => ": NOT reproduced",
                _ => "",
            }
        ));
    }
    if !output.is_empty() {
        text.push_str(&format!(
            "\n\nLast lines of its output:\n\n{}",
            semantic::fenced(&output)
        ));
    }
    let out_tail = output.clone();
    let recorded = run.clone();
    let mut out = semantic::apply(
        &a.board,
        &a.common,
        "check",
        semantic::consent(false, None),
        s,
        move |fm, ctx| ops::record_check(fm, ctx, recorded.clone(), &wt, text.clone()),
    )?;
    let info = json!({
        "name": run.name,
        "command": run.command,
        "exit_code": run.exit_code,
        "passed": run.passed(),
        "tree": run.tree,
        "tree_after": tree_after,
        "duration_ms": run.duration_ms,
        "timed_out": ran.timed_out,
        "output_tail": out_tail,
        "summary": ran.summary,
        "required": fm.required_checks.iter().any(|c| c.name == run.name),
        "reproduce": plan.reproduce,
        "comparison": comparison,
        "needs": run.needs,
    });
    if let Some(o) = out.json.as_object_mut() {
        o.insert("check".into(), info);
    }
    if !outside.is_empty() {
        semantic::add_warnings(
            &mut out,
            vec![format!(
                "check {} names {} outside the checkout: a reproduction runs in a fresh \
                 checkout, perhaps on another machine, where {} may not be; declare a file the \
                 check needs inside the checkout with --needs PATH (and --setup CMD to make it)",
                run.name,
                outside
                    .iter()
                    .map(|p| crate::text::escape(p).into_owned())
                    .collect::<Vec<_>>()
                    .join(", "),
                if outside.len() == 1 { "it" } else { "they" }
            )],
        );
    }
    // What happened, once: the write's own summary line says the same in fewer words.
    let rest = match out.text.split_once('\n') {
        Some((first, rest)) if first.starts_with(&format!("check {}:", run.name)) => rest,
        _ => out.text.as_str(),
    };
    out.text = format!(
        "check {}: {} on tree {} in {:.1} s{}\n{}{}{}{}",
        run.name,
        result_word(run.exit_code),
        short(&run.tree),
        run.duration_ms as f64 / 1000.0,
        match (&plan.previous, plan.reproduce) {
            (Some(p), true) if p.tree == run.tree && p.exit_code == run.exit_code =>
                " (reproduced the previous run)".to_string(),
            (Some(_), true) => " (did NOT reproduce the previous run)".to_string(),
            _ => String::new(),
        },
        if plan.reproduce {
            format!("{}\n", shown_command(&plan))
        } else {
            String::new()
        },
        if tree_after == run.tree {
            String::new()
        } else {
            format!(
                "warning: the worktree changed while the check ran (tree {} after it): this run \
                 counts for tree {} only\n",
                short(&tree_after),
                short(&run.tree)
            )
        },
        rest,
        // A failing run shows why, as the record keeps it: the last lines of its output.
        if run.passed() || out_tail.is_empty() {
            String::new()
        } else {
            format!("last lines of its output:\n{}\n", last_lines(&out_tail))
        }
    );
    Ok(out)
}

/// A command line as the shell would take it, each word quoted where it needs to be.
fn line_of(argv: &[String]) -> String {
    argv.iter()
        .map(|w| shell_arg(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a reproduction runs, for the reviewer to read: the command, and the setup first.
fn shown_command(plan: &Plan) -> String {
    let cmd = crate::text::escape(&line_of(&plan.argv)).into_owned();
    match plan.needs.as_ref().and_then(|n| n.setup.as_ref()) {
        Some(setup) => format!(
            "ran: `sh -c {}`, then `{cmd}`",
            crate::text::escape(&shell_arg(setup))
        ),
        None => format!("ran: `{cmd}`"),
    }
}

/// A reproduction runs another agent's command on this machine: without `--yes` it prints the
/// command (and setup) and runs nothing, unless it is a required check the user set at `init`
/// and no setup comes with it.
fn confirmation(plan: &Plan) -> Result<()> {
    let setup = plan.needs.as_ref().and_then(|n| n.setup.as_ref());
    if plan.required && setup.is_none() {
        return Ok(());
    }
    let by = plan
        .previous
        .as_ref()
        .map(|p| p.agent.as_str())
        .unwrap_or("another agent");
    let cmd = crate::text::escape(&line_of(&plan.argv)).into_owned();
    let what = match setup {
        Some(s) => format!(
            "the setup `sh -c {}` recorded by {by}, then {} `{cmd}`",
            crate::text::escape(&shell_arg(s)),
            if plan.required {
                "the required check"
            } else {
                "the command"
            }
        ),
        None => format!("the command `{cmd}` recorded by {by}"),
    };
    let files = plan
        .needs
        .as_ref()
        .filter(|n| !n.files.is_empty())
        .map(|n| format!(" (it needs {})", path_list(&n.files)))
        .unwrap_or_default();
    Err(Error::refused(
        format!(
            "reproducing {} runs on this machine, in a temporary checkout: {what}{files}. Nothing \
             was run: read it, and if it is safe to run here, confirm with --yes",
            plan.name
        ),
        Hint::Rerun {
            add: vec![Flag::bare("--yes")],
        },
    ))
}

/// The setup of a check failed in the temporary checkout: the check could not run here.
fn setup_failed(setup: &str, done: &Ran) -> Error {
    let tail = last_lines(&done.output);
    Error::CannotRun {
        message: format!(
            "the setup `sh -c {}` {} in the temporary checkout, so the check could not run \
             here; nothing was recorded{}",
            crate::text::escape(&shell_arg(setup)),
            match (done.timed_out, done.code) {
                (true, _) => "was stopped by the time limit".to_string(),
                (false, Some(c)) => format!("exited {c}"),
                (false, None) => "was ended by a signal".to_string(),
            },
            if tail.is_empty() {
                String::new()
            } else {
                format!(". Its last lines:\n{tail}")
            }
        ),
    }
}

/// Files the check declared are not in the checkout (after its setup, in a temporary one).
fn missing_needs(plan: &Plan, needs: &Needs, missing: &[&str], scratch: bool) -> Error {
    let list = path_list(missing);
    Error::CannotRun {
        message: if scratch {
            format!(
                "check {} could not run here: it needs {list}, which {} not in the temporary \
                 checkout{}; nothing was run or recorded. The doer records a setup that makes \
                 {}: `pair check BOARD --name {} --needs PATH --setup CMD`",
                plan.name,
                if missing.len() == 1 { "is" } else { "are" },
                if needs.setup.is_some() {
                    " after its setup"
                } else {
                    " (no setup is recorded)"
                },
                if missing.len() == 1 { "it" } else { "them" },
                plan.name
            )
        } else {
            format!(
                "check {} could not run here: it declares that it needs {list}, which {} not in \
                 the worktree; make {} there, or leave {} out of --needs; nothing was run or \
                 recorded",
                plan.name,
                if missing.len() == 1 { "is" } else { "are" },
                if missing.len() == 1 { "it" } else { "them" },
                if missing.len() == 1 { "it" } else { "them" },
            )
        },
    }
}

/// The Validation entry's sentence on what the check needs.
fn needs_sentence(n: &Needs, scratch: bool) -> String {
    let files = if n.files.is_empty() {
        "no file git does not track".to_string()
    } else {
        n.files
            .iter()
            .map(|f| format!("`{}`", crate::text::escape(f).replace('`', "'")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &n.setup {
        Some(s) => format!(
            "Needs {files}, made by the setup `{}`{}.",
            crate::text::escape(s).replace('`', "'"),
            if scratch {
                ", run first in the temporary checkout"
            } else {
                " (run in a temporary checkout; the worktree has them)"
            }
        ),
        None => format!("Needs {files} (no setup)."),
    }
}

/// How many lines of a failing check's output `check` prints (the record keeps its whole tail).
const TAIL_SHOWN: usize = 20;

/// The last [`TAIL_SHOWN`] lines of a command's output, in order, each escaped and indented
/// on a line of its own (empty when it printed nothing).
fn last_lines(output: &str) -> String {
    let mut tail: Vec<&str> = output.lines().rev().take(TAIL_SHOWN).collect();
    tail.reverse();
    tail.iter()
        .map(|l| format!("  {}", crate::text::escape(l)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Paths for a message: each escaped, separated by commas.
fn path_list<S: AsRef<str>>(paths: &[S]) -> String {
    paths
        .iter()
        .map(|f| crate::text::escape(f.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A temporary checkout of the pinned tree a reproduction runs in: the published commit (from
/// the board's remote, on any machine), else the pinned tree from the worktree's repository.
/// With it, the tree and a sentence for the record. `None` when nothing with a tree is pinned
/// (a text, or a board from before pins): the check then runs in the worktree.
fn pinned_checkout(
    board: &Path,
    fm: &Frontmatter,
) -> Result<Option<(repo::artifact::Checkout, String, String)>> {
    use crate::board::frontmatter::Target;
    let target = fm
        .phase
        .review_target()
        .filter(|t| {
            fm.pin(*t)
                .is_some_and(|p| p.published.is_some() || p.tree.is_some())
        })
        .unwrap_or(Target::Code);
    let Some(pin) = fm.pins.get(target) else {
        return Ok(None);
    };
    if let Some(publ) = &pin.published {
        let Some(r) = super::published::readable(board, fm, target)? else {
            return Err(Error::ArtifactUnavailable {
                message: format!(
                    "the published commit {} of the pinned {} is not in the worktree's \
                     repository here; fetch {} from the repository's remote, or reproduce it \
                     where the board's remote is",
                    publ.commit,
                    pin.kind.describe(),
                    publ.refname
                ),
            });
        };
        let tree = repo::artifact::tree(&r)?;
        let c = repo::artifact::Checkout::of(&r)?;
        return Ok(Some((
            c,
            tree,
            format!(
                "Ran in a temporary checkout of the published commit `{}` ({}), removed \
                 afterwards, on tree `{{tree}}`",
                publ.commit, publ.refname
            ),
        )));
    }
    let (Some(tree), Some(wt)) = (&pin.tree, fm.worktree.as_deref()) else {
        return Ok(None);
    };
    let c = repo::artifact::Checkout::of_tree(Path::new(wt), tree).map_err(|e| {
        Error::ArtifactUnavailable {
            message: format!(
                "the pinned tree {tree} cannot be read from the worktree {} here ({e}); it \
                 was not published: reproduce the check where the worktree can be read",
                crate::text::escape(wt)
            ),
        }
    })?;
    Ok(Some((
        c,
        tree.clone(),
        "Ran in a temporary checkout of the pinned tree, removed afterwards, on tree `{tree}`"
            .to_string(),
    )))
}
