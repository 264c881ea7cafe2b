//! The README's walkthroughs run as written, on a fresh repository whose one branch is `trunk`
//! (not `main`), with this build's `pair` first on PATH.
//!
//! Each walkthrough's ```` ```sh ```` blocks are read from README.md when the test runs, so the
//! test follows the text. Their commands run as the README gives them, each terminal (or machine)
//! as one `sh` of its own, all at once, started in the order the README first names them: they
//! hand over to each other only through the `pair poll --wait` the README gives them, as two
//! people in two terminals would. Every command must exit as the README says: 0, or `N` where
//! its comment starts with `exit N`; and every `pair check` it runs must pass (a failed run is
//! recorded, and exits 0).
//!
//! Whose a command is:
//! * a comment line of its own, at the start of the line, that names `terminal N` or `machine N`
//!   gives the commands after it, in its block, to that terminal;
//! * before any such line, a block is the terminal's named last in the prose before it;
//! * a block before every terminal's, in whose prose none is named, runs first, alone, to its end
//!   (the remote the machines share).
//!
//! Any other comment line of its own at the start of a line would stand for steps the test
//! cannot run, and fails it: the README writes its steps as commands. An indented comment line
//! goes on with the comment above it.
//!
//! What the test fills in for the reader, and nothing else:
//! * [`FILLED`]: the hash a reviewer copies from `pair diff`'s stderr into a verdict;
//! * in the second walkthrough, `/tmp/`: a temporary directory of the test's (the bare
//!   repository and both machines' caches);
//! * the environment: `EDITOR`, a script that writes a CSV exporter into the file it is given;
//!   a `HOME` whose git configuration names the committer and makes `trunk` the first branch of
//!   a new repository (one `HOME` per machine in the second walkthrough).

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::common::bounded::alive_in_session;
use crate::common::{git, pair, pair_bin};

/// The placeholders a reader replaces by hand, and the shell text the test replaces them with:
/// `BOARD` is the verdict's board as the line names it (its third word), and `diff_sha` a shell
/// function every terminal has, which prints the sha256 `pair diff BOARD` reports on stderr.
const FILLED: &[(&str, &str)] = &[
    (
        "--artifact-sha256 <that sha256>",
        "--artifact-sha256 \"$(diff_sha BOARD)\"",
    ),
    (
        "--artifact-sha256 SHA ",
        "--artifact-sha256 \"$(diff_sha BOARD)\" ",
    ),
];

/// The shell function behind [`FILLED`]: `pair diff` prints `pair diff: sha256 <hex> · …` on
/// stderr.
const DIFF_SHA: &str = "diff_sha() {\n  pair diff \"$1\" 2>&1 >/dev/null | sed -n \
                        's/^pair diff: sha256 \\([0-9a-f]\\{64\\}\\) .*/\\1/p'\n}\n";

/// What `$EDITOR` does to the file it is given: the change a reader would make.
const EDITOR: &str = "#!/bin/sh\nprintf 'import csv\\n\\n\\ndef export(rows, out):\\n    \
                      csv.writer(out).writerows(rows)\\n' >> \"$1\"\n";

/// How long the terminals of one walkthrough may run together before the test takes them for
/// hung (a wait the README gives that nothing ends): they need a few seconds.
const HANG: Duration = Duration::from_secs(300);

/// One command of a walkthrough: its first line's number in README.md, its lines as written,
/// and the exit code the README gives it.
#[derive(Debug)]
struct Step {
    line: usize,
    text: String,
    exit: i32,
}

/// The commands of one terminal (`None`: the ones run first, alone), in the README's order.
#[derive(Debug)]
struct Part {
    who: Option<String>,
    steps: Vec<Step>,
}

fn readme() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The lines of the section under `heading` (up to the next `## `), each with its number.
fn section<'a>(readme: &'a str, heading: &str) -> Vec<(usize, &'a str)> {
    let mut lines = readme.lines().enumerate().map(|(i, l)| (i + 1, l));
    lines
        .by_ref()
        .find(|(_, l)| *l == heading)
        .unwrap_or_else(|| panic!("README.md has no heading {heading:?}"));
    lines.take_while(|(_, l)| !l.starts_with("## ")).collect()
}

/// The terminal a text names: the first (or last) `terminal N` or `machine N` in it.
fn named(text: &str, last: bool) -> Option<String> {
    let lower = text.to_lowercase();
    let mut found = Vec::new();
    for word in ["terminal ", "machine "] {
        for (i, _) in lower.match_indices(word) {
            let rest = &lower[i + word.len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() {
                found.push((i, format!("{word}{digits}")));
            }
        }
    }
    found.sort();
    if last {
        found.pop()
    } else {
        found.into_iter().next()
    }
    .map(|(_, w)| w)
}

/// Where a shell line's comment starts: a `#` at the start or after a blank, outside quotes.
fn comment_at(line: &str) -> Option<usize> {
    let (mut single, mut double, mut prev) = (false, false, ' ');
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return Some(i),
            _ => {}
        }
        prev = c;
    }
    None
}

/// The exit code a command's comment gives it: `# exit N…`, else 0.
fn exit_of(comment: &str) -> i32 {
    let words = comment.trim_start_matches('#').trim_start();
    words
        .strip_prefix("exit ")
        .and_then(|r| {
            r.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// A walkthrough's commands, terminal by terminal, in the order the README first names them.
fn parts(heading: &str) -> Vec<Part> {
    let readme = readme();
    let lines = section(&readme, heading);
    let mut parts: Vec<Part> = Vec::new();
    let mut prose = String::new();
    let mut i = 0;
    while i < lines.len() {
        let (_, line) = lines[i];
        i += 1;
        if !line.starts_with("```") {
            prose.push_str(line);
            prose.push('\n');
            continue;
        }
        let sh = line == "```sh";
        let mut who = named(&prose, true);
        prose.clear();
        let mut step: Option<Step> = None;
        while i < lines.len() && !lines[i].1.starts_with("```") {
            let (n, line) = lines[i];
            i += 1;
            if !sh {
                continue;
            }
            let body = &line[..comment_at(line).unwrap_or(line.len())];
            if let Some(s) = step.as_mut() {
                // A line after one that ends in `\` goes on with it.
                s.text.push('\n');
                s.text.push_str(line);
                if let Some(c) = comment_at(line) {
                    s.exit = exit_of(&line[c..]);
                }
                if !body.trim_end().ends_with('\\') {
                    push(&mut parts, &who, step.take().unwrap(), n);
                }
                continue;
            }
            if body.trim().is_empty() {
                if line.trim().is_empty() || line.starts_with(char::is_whitespace) {
                    continue;
                }
                who = Some(named(line, false).unwrap_or_else(|| {
                    panic!(
                        "README.md:{n}: the comment line {line:?} names no terminal or machine: \
                         a step a walkthrough leaves to its reader cannot be run; write it as \
                         commands"
                    )
                }));
                continue;
            }
            let s = Step {
                line: n,
                text: line.to_string(),
                exit: comment_at(line).map_or(0, |c| exit_of(&line[c..])),
            };
            if body.trim_end().ends_with('\\') {
                step = Some(s);
            } else {
                push(&mut parts, &who, s, n);
            }
        }
        assert!(
            step.is_none(),
            "{heading}: a block ends in a line ending in `\\`"
        );
        i += 1;
    }
    parts
}

/// Add a step to its terminal's part; a step of no terminal's only before every terminal's.
fn push(parts: &mut Vec<Part>, who: &Option<String>, step: Step, n: usize) {
    if who.is_none() {
        assert!(
            parts.iter().all(|p| p.who.is_none()),
            "README.md:{n}: a command that no prose or comment gives to a terminal or a machine, \
             after commands that are: whose is it?"
        );
    }
    match parts.iter_mut().find(|p| &p.who == who) {
        Some(p) => p.steps.push(step),
        None => parts.push(Part {
            who: who.clone(),
            steps: vec![step],
        }),
    }
}

/// A step as the shell runs it: the placeholders filled ([`FILLED`], and `/tmp/` when `tmp` is
/// given).
fn filled(step: &Step, tmp: Option<&Path>) -> String {
    let mut text = step.text.clone();
    let board = text
        .split_whitespace()
        .nth(2)
        .unwrap_or_default()
        .to_string();
    for (placeholder, with) in FILLED {
        text = text.replace(placeholder, &with.replace("BOARD", &board));
    }
    if let Some(tmp) = tmp {
        text = text.replace("/tmp/", &format!("{}/", tmp.display()));
    }
    text
}

/// One terminal's commands as a shell script: each command as written, then a check of its exit
/// code; on the first that exits otherwise, the script says which and stops.
fn script(part: &Part, tmp: Option<&Path>) -> String {
    let mut s = String::from(DIFF_SHA);
    for step in &part.steps {
        s.push_str(&format!("echo '>>> README.md:{}' >&2\n", step.line));
        s.push_str(&filled(step, tmp));
        s.push_str(&format!(
            "\nrc=$?; if [ \"$rc\" -ne {e} ]; then echo \"README.md:{n}: exit $rc, where the \
             README says {e}\" >&2; exit 1; fi\n",
            e = step.exit,
            n = step.line
        ));
    }
    s
}

/// A `HOME` whose git configuration names the committer and starts new repositories on `trunk`.
fn home(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join(".gitconfig"),
        "[user]\n\tname = Walk Through\n\temail = walk@example.invalid\n\
         [init]\n\tdefaultBranch = trunk\n",
    )
    .unwrap();
    dir.to_path_buf()
}

/// A fresh repository with one commit, on the branch `trunk`.
fn repository(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "trunk"]);
    fs::write(dir.join("report.txt"), "the report page\n").unwrap();
    git(dir, &["add", "report.txt"]);
    git(dir, &["commit", "-q", "-m", "The report page"]);
    dir.to_path_buf()
}

/// A terminal: its shell, where its output goes, and its session (so that whatever it started
/// goes with it).
struct Terminal {
    who: String,
    child: Child,
    log: PathBuf,
    sid: i32,
    /// Its shell has exited and been waited for.
    ended: bool,
}

impl Terminal {
    fn output(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Ends every terminal still running, with everything it started, when the test ends however
/// it ends.
struct Terminals(Vec<Terminal>);

impl Drop for Terminals {
    fn drop(&mut self) {
        for t in &mut self.0 {
            // A shell not yet waited for still holds its id, so the group is this test's; once
            // it was, what is left of its session is found by the session's id.
            let pids: Vec<i32> = if t.ended {
                alive_in_session(t.sid as u32)
                    .iter()
                    .filter_map(|p| p.split_whitespace().next()?.parse().ok())
                    .collect()
            } else {
                vec![-t.sid]
            };
            for pid in pids {
                // SAFETY: kill(2) of processes this test started, by their ids.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            let _ = t.child.wait();
        }
    }
}

/// Where each terminal runs and with which `HOME`.
struct Place {
    dir: PathBuf,
    home: PathBuf,
}

fn start(who: &str, script_text: &str, place: &Place, scratch: &Path, editor: &Path) -> Terminal {
    let name = who.replace(' ', "-");
    let script_path = scratch.join(format!("{name}.sh"));
    fs::write(&script_path, script_text).unwrap();
    let log = scratch.join(format!("{name}.log"));
    let out = fs::File::create(&log).unwrap();
    let bin_dir = pair_bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmpdir = scratch.join("tmpdir");
    fs::create_dir_all(&tmpdir).unwrap();
    let mut c = Command::new("sh");
    c.arg(&script_path)
        .current_dir(&place.dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &place.home)
        .env("EDITOR", editor)
        .env("TMPDIR", &tmpdir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent's.
    unsafe {
        c.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = c.spawn().unwrap();
    Terminal {
        who: who.to_string(),
        sid: child.id() as i32,
        child,
        log,
        ended: false,
    }
}

/// Wait for the terminals: each must end by itself with every command as the README says;
/// the first that does not ends them all.
fn finish(terminals: &mut Terminals) {
    let started = Instant::now();
    let mut done = vec![false; terminals.0.len()];
    while done.iter().any(|d| !d) {
        for (i, t) in terminals.0.iter_mut().enumerate() {
            if done[i] {
                continue;
            }
            if let Some(status) = t.child.try_wait().unwrap() {
                done[i] = true;
                t.ended = true;
                if !status.success() {
                    let report = report(&terminals.0);
                    panic!("{} stopped ({status}):\n{report}", terminals.0[i].who);
                }
            }
        }
        if started.elapsed() > HANG {
            panic!(
                "the terminals still ran after {HANG:?}: a wait the README gives never \
                 ended\n{}",
                report(&terminals.0)
            );
        }
        sleep(Duration::from_millis(20));
    }
}

fn report(terminals: &[Terminal]) -> String {
    terminals
        .iter()
        .map(|t| format!("===== {} =====\n{}", t.who, t.output()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Run a walkthrough: its part of no terminal first, to its end, then every terminal at once.
fn run(heading: &str, places: &dyn Fn(&str) -> Place, scratch: &Path, tmp: Option<&Path>) {
    let parts = parts(heading);
    assert!(
        parts.iter().filter(|p| p.who.is_some()).count() >= 2,
        "{heading}: the walkthrough names fewer than two terminals: {parts:?}"
    );
    let editor = scratch.join("editor");
    fs::write(&editor, EDITOR).unwrap();
    let mut perms = fs::metadata(&editor).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&editor, perms).unwrap();
    if let Some(first) = parts.iter().find(|p| p.who.is_none()) {
        let place = places("");
        let mut alone = Terminals(vec![start(
            "before the terminals",
            &script(first, tmp),
            &place,
            scratch,
            &editor,
        )]);
        finish(&mut alone);
    }
    let mut terminals = Terminals(Vec::new());
    for part in parts.iter().filter(|p| p.who.is_some()) {
        let who = part.who.as_deref().unwrap();
        terminals.0.push(start(
            who,
            &script(part, tmp),
            &places(who),
            scratch,
            &editor,
        ));
    }
    finish(&mut terminals);
    // `pair check` records a run that failed and exits 0: what it prints says how it went.
    for t in &terminals.0 {
        let out = t.output();
        if let Some(failed) = out
            .lines()
            .find(|l| l.starts_with("check ") && l.contains(": failed ("))
        {
            panic!(
                "a check the README runs failed: {failed}\n{}",
                report(&terminals.0)
            );
        }
    }
}

#[test]
fn the_readme_parses_into_terminals_and_fills_only_its_placeholders() {
    let whose = |heading: &str| -> Vec<Option<String>> {
        parts(heading).into_iter().map(|p| p.who).collect()
    };
    assert_eq!(
        whose("## Walkthrough: a doer and a reviewer in two terminals"),
        [Some("terminal 2".into()), Some("terminal 1".into())]
    );
    assert_eq!(
        whose("## Walkthrough: a reviewer on another machine"),
        [None, Some("machine 2".into()), Some("machine 1".into())]
    );
    // What is filled in is the hash of the diff, nothing else.
    let verdict = Step {
        line: 1,
        text: "pair verdict \"$B\" APPROVED --revision 1 --artifact-sha256 SHA --note x".into(),
        exit: 0,
    };
    assert_eq!(
        filled(&verdict, Some(Path::new("/scratch"))),
        "pair verdict \"$B\" APPROVED --revision 1 --artifact-sha256 \"$(diff_sha \"$B\")\" \
         --note x"
    );
    assert_eq!(exit_of("# exit 0: your turn"), 0);
    assert_eq!(exit_of("# exit 3 until it resubmits"), 3);
    assert_eq!(exit_of("# waits"), 0);
    let line = "B='git+file:///tmp/p.git#refs/x'   # note";
    assert_eq!(comment_at(line).map(|c| &line[c..]), Some("# note"));
}

/// The first walkthrough: a doer and a reviewer in two terminals of one repository, from
/// `pair init` to `CLEANED_UP`, on a branch that is not `main`.
#[test]
fn the_two_terminal_walkthrough_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = fs::canonicalize(dir.path()).unwrap();
    let repo = repository(&scratch.join("repo"));
    let home = home(&scratch.join("home"));
    run(
        "## Walkthrough: a doer and a reviewer in two terminals",
        &|_| Place {
            dir: repo.clone(),
            home: home.clone(),
        },
        &scratch,
        None,
    );
    let status = pair(["status", repo.join("task.md").to_str().unwrap(), "--json"]);
    status.code(0);
    assert_eq!(status.json()["phase"], "CLEANED_UP", "{}", status.report());
    assert_eq!(
        git(&repo, &["branch", "--format=%(refname:short)"]).trim(),
        "trunk"
    );
}

/// The second walkthrough: the board in a ref of a bare repository that stands in for a remote;
/// the doer (machine 1) in a repository of its own, the reviewer (machine 2) in a directory that
/// is no repository, each with its own `HOME` and cache.
#[test]
fn the_two_machine_walkthrough_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = fs::canonicalize(dir.path()).unwrap();
    let tmp = scratch.join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let repo = repository(&scratch.join("doer"));
    let reviewer = scratch.join("reviewer");
    fs::create_dir_all(&reviewer).unwrap();
    let homes = [
        home(&scratch.join("home-1")),
        home(&scratch.join("home-2")),
        home(&scratch.join("home-0")),
    ];
    run(
        "## Walkthrough: a reviewer on another machine",
        &|who| match who {
            "machine 1" => Place {
                dir: repo.clone(),
                home: homes[0].clone(),
            },
            "machine 2" => Place {
                dir: reviewer.clone(),
                home: homes[1].clone(),
            },
            _ => Place {
                dir: scratch.clone(),
                home: homes[2].clone(),
            },
        },
        &scratch,
        Some(&tmp),
    );
    assert!(
        fs::read_dir(&reviewer).unwrap().next().is_none(),
        "the reviewer's commands wrote into the directory they ran in"
    );
}
