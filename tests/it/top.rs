//! `pair top`: the live dashboard, run in a real terminal — a detached tmux session of 80×24,
//! driven with `send-keys` and read with `capture-pane`. It shows every board of the project,
//! redraws after another process writes a board, moves the selection, and quits with the
//! terminal restored (the shell's screen back, no raw mode).

use crate::common::prereq::on_path;
use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

/// A tmux server of its own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
    _dir: tempfile::TempDir,
}

impl Tmux {
    fn start(width: u16, height: u16, command: &str) -> Tmux {
        assert!(
            on_path("tmux"),
            "this test runs `pair top` in a real terminal and needs tmux on PATH: \
             apt-get install tmux (.ci/run installs it)"
        );
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("tmux.sock").display().to_string();
        let t = Tmux { socket, _dir: dir };
        let ok = t
            .cmd()
            .args([
                "new-session",
                "-d",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
                "sh",
            ])
            .env("TERM", "xterm")
            .status()
            .expect("tmux runs");
        assert!(ok.success(), "tmux new-session failed");
        // A plain shell line to come back to, then the dashboard.
        t.keys(&["clear; echo shell-before-top", "Enter"]);
        t.wait_for("shell-before-top", |s| s.contains("shell-before-top"));
        t.keys(&[command, "Enter"]);
        t
    }

    fn cmd(&self) -> StdCommand {
        let mut c = StdCommand::new("tmux");
        c.args(["-S", &self.socket, "-f", "/dev/null"]);
        c
    }

    fn keys(&self, keys: &[&str]) {
        let mut c = self.cmd();
        c.args(["send-keys", "-t", "0"]);
        c.args(keys);
        assert!(c.status().unwrap().success(), "send-keys {keys:?}");
    }

    fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-J", "-t", "0"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the screen satisfies `ok` (reading it again as it changes); fail with the
    /// last screen after 20 s.
    #[track_caller]
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "the terminal never showed {what}; it shows:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

fn init(dir: &Path, name: &str, reviewers: &str) -> PathBuf {
    let path = dir.join(format!("{name}.md"));
    let p = path.to_str().unwrap().to_string();
    pair([
        "init",
        &p,
        "--goal",
        &format!("Task {name}"),
        "--reviewers",
        reviewers,
    ])
    .code(0);
    path
}

/// The line of the screen that names `board`.
fn row<'a>(screen: &'a str, board: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == board))
        .unwrap_or_else(|| panic!("no row for {board} in:\n{screen}"))
}

#[test]
fn top_shows_every_board_redraws_on_a_write_moves_and_quits_restoring_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let projects = dir.path().join("boards");
    std::fs::create_dir_all(projects.join("team")).unwrap();
    let alpha = init(&projects, "alpha", "alice");
    init(&projects, "beta", "bob");
    init(&projects.join("team"), "gamma", "alice,bob");
    let command = format!("{} top {}", pair_bin().display(), projects.display());
    let t = Tmux::start(80, 24, &command);
    let s = t.wait_for("the three boards", |s| {
        s.contains("alpha") && s.contains("beta") && s.contains("team/gamma")
    });
    assert!(s.contains("3 boards"), "{s}");
    assert!(row(&s, "alpha").contains("DRAFT"), "{s}");
    // The first board is selected, and its entries are shown.
    assert!(row(&s, "alpha").trim_start().starts_with('>'), "{s}");
    assert!(s.contains("alpha: latest entries"), "{s}");

    // Another process writes a board: the dashboard redraws by itself.
    let a = alpha.to_str().unwrap();
    pair(["register", a, "--agent", "alice"]).code(0);
    pair([
        "advance",
        a,
        "PLANNING",
        "--agent",
        "doer",
        "--user-approved",
    ])
    .code(0);
    let s = t.wait_for("alpha in PLANNING", |s| {
        s.lines()
            .any(|l| l.contains("alpha") && l.contains("PLANNING"))
    });
    assert!(row(&s, "alpha").contains("doer"), "whose turn: {s}");

    // Down moves the selection to the next board, and the entries pane follows.
    t.keys(&["Down"]);
    let s = t.wait_for("beta selected", |s| s.contains("beta: latest entries"));
    assert!(row(&s, "beta").trim_start().starts_with('>'), "{s}");
    t.keys(&["j"]);
    t.wait_for("gamma selected", |s| {
        s.contains("team/gamma: latest entries")
    });
    t.keys(&["k"]);
    t.wait_for("beta selected again", |s| {
        s.contains("beta: latest entries")
    });

    // q quits: the shell's screen is back and the terminal answers like a terminal again
    // (a line typed now is echoed and run: raw mode is off).
    t.keys(&["q"]);
    let s = t.wait_for("the shell again", |s| s.contains("shell-before-top"));
    assert!(!s.contains("latest entries"), "{s}");
    t.keys(&["echo typed-after-$((40+2))", "Enter"]);
    t.wait_for("the shell running a command", |s| {
        s.contains("typed-after-42")
    });
}

/// A redraw reads only the boards that changed, and of the list only their frontmatter: with
/// five boards and a write to one that is not selected, the dashboard redraws (its clocks tick
/// every second, a notification comes) and its row updates, yet over its whole run it read each
/// board once (its head, whether it is a board and its frontmatter from one read), the selected
/// one whole once, and the written one again: `reads` in the summary `--json` prints when it
/// quits.
#[test]
fn top_rereads_only_the_board_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["a1", "b2", "c3", "d4", "e5"];
    for n in names {
        init(dir.path(), n, "alice");
    }
    let command = format!(
        "{} top {} --json",
        pair_bin().display(),
        dir.path().display()
    );
    let t = Tmux::start(80, 24, &command);
    t.wait_for("the five boards", |s| names.iter().all(|n| s.contains(n)));
    let e5 = dir.path().join("e5.md");
    pair([
        "advance",
        e5.to_str().unwrap(),
        "PLANNING",
        "--agent",
        "doer",
        "--user-approved",
    ])
    .code(0);
    t.wait_for("e5 in PLANNING", |s| {
        s.lines()
            .any(|l| l.contains("e5") && l.contains("PLANNING"))
    });
    t.keys(&["q"]);
    // The summary is printed on the shell's screen once the terminal is back.
    let s = t.wait_for("the summary", |s| s.contains("\"reads\""));
    // (The shell's prompt may stand before it on its line.)
    let line = s
        .lines()
        .find_map(|l| {
            l.find("{\"")
                .filter(|_| l.contains("\"reads\""))
                .map(|i| &l[i..])
        })
        .unwrap_or_else(|| panic!("no summary line in:\n{s}"));
    let v: serde_json::Value =
        serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(v["boards"], 5, "{v:#}");
    // Five heads, a1 whole for its entries, e5's head again (a second time at most): never the
    // unchanged boards again, however many redraws there were.
    let reads = v["reads"].as_u64().unwrap();
    assert!((5 + 1 + 1..=5 + 1 + 2).contains(&reads), "{v:#}");
    assert!(v["redraws"].as_u64().unwrap() >= 2, "{v:#}");
}

#[test]
fn top_degrades_on_a_small_terminal_and_refuses_a_missing_project() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path(), "alpha", "alice");
    init(dir.path(), "beta", "bob");
    let command = format!("{} top {}", pair_bin().display(), dir.path().display());
    let t = Tmux::start(40, 8, &command);
    let s = t.wait_for("both boards in 40×8", |s| {
        s.contains("alpha") && s.contains("beta")
    });
    // No entries pane at this height; each line fits the width.
    assert!(!s.contains("latest entries"), "{s}");
    assert!(s.lines().all(|l| l.chars().count() <= 40), "{s}");
    t.keys(&["q"]);
    t.wait_for("the shell again", |s| s.contains("shell-before-top"));

    let missing = dir.path().join("nowhere");
    let out = pair(["top", missing.to_str().unwrap()]);
    out.code(7);
    // Outside a terminal it says what to run instead.
    let out = pair(["top", dir.path().to_str().unwrap()]);
    out.code(4).mentions(&["pair stats"]);
}

#[test]
fn top_and_stats_read_a_git_remotes_board_namespace_and_top_sees_a_push() {
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "remote.git"]);
    let cache = tempfile::tempdir().unwrap();
    let env = [("PAIR_CACHE_DIR", cache.path().to_str().unwrap())];
    let url = format!("file://{}/remote.git", remote.path().display());
    let board = |r: &str| format!("git+{url}#refs/pair/{r}:task.md");
    for (name, who) in [("alpha", "alice"), ("beta", "bob")] {
        pair_env(
            ["init", &board(name), "--goal", "A task", "--reviewers", who],
            &env,
        )
        .code(0);
    }
    let project = format!("git+{url}#refs/pair/:task.md");
    // stats takes the namespace as it takes a directory: both boards.
    let v = pair_env(["stats", &project, "--json"], &env).code(0).json();
    assert_eq!(v["total"]["boards"], 2, "{v:#}");

    // top, in its own cache (another machine), shows both and redraws after a push elsewhere.
    let other = tempfile::tempdir().unwrap();
    let command = format!(
        "PAIR_CACHE_DIR={} {} top '{}'",
        other.path().display(),
        pair_bin().display(),
        project
    );
    let t = Tmux::start(100, 24, &command);
    let s = t.wait_for("both boards of the remote", |s| {
        s.contains("alpha") && s.contains("beta")
    });
    assert!(row(&s, "alpha").contains("DRAFT"), "{s}");
    pair_env(
        [
            "advance",
            &board("alpha"),
            "PLANNING",
            "--agent",
            "doer",
            "--user-approved",
        ],
        &env,
    )
    .code(0);
    t.wait_for("alpha in PLANNING after the push", |s| {
        s.lines()
            .any(|l| l.contains("alpha") && l.contains("PLANNING"))
    });
    t.keys(&["q"]);
    t.wait_for("the shell again", |s| s.contains("shell-before-top"));
}

/// A board whose file name carries escape sequences — a colour (`ESC[31m`), an OSC window
/// title, a right-to-left override — is drawn by `top` escaped, as `ls` prints it: the screen
/// shows the escapes as text, the colour and the title never reach the terminal.
#[test]
fn top_escapes_a_board_name_made_of_escape_sequences_as_ls_does() {
    let dir = tempfile::tempdir().unwrap();
    let name = "a\x1b[31mb\x1b]2;PWNED\x07\u{202e}c";
    init(dir.path(), name, "alice");
    let shown = r"a\x1b[31mb\x1b]2;PWNED\x07\u{202e}c";
    let ls = pair(["ls", dir.path().to_str().unwrap()])
        .code(0)
        .stdout
        .clone();
    assert!(ls.contains(shown), "{ls}");
    let command = format!("{} top {}", pair_bin().display(), dir.path().display());
    let t = Tmux::start(200, 24, &command);
    let s = t.wait_for("the board's entries", |s| s.contains("latest entries"));
    assert!(row(&s, shown).contains("DRAFT"), "{s}");
    assert!(s.contains(&format!("{shown}: latest entries")), "{s}");
    // Nothing of the name was taken as a sequence: no colour on the screen, no title set.
    let coloured = t
        .cmd()
        .args(["capture-pane", "-p", "-e", "-t", "0"])
        .output()
        .unwrap();
    let coloured = String::from_utf8_lossy(&coloured.stdout);
    assert!(!coloured.contains("\x1b[31m"), "{coloured:?}");
    let title = t
        .cmd()
        .args(["display-message", "-p", "-t", "0", "#{pane_title}"])
        .output()
        .unwrap();
    let title = String::from_utf8_lossy(&title.stdout);
    assert!(!title.contains("PWNED"), "{title}");
    t.keys(&["q"]);
    t.wait_for("the shell again", |s| s.contains("shell-before-top"));
}

#[test]
fn top_keeps_time_once_every_board_is_finished_and_lists_entries_by_time() {
    let dir = tempfile::tempdir().unwrap();
    let projects = dir.path().join("boards");
    std::fs::create_dir_all(&projects).unwrap();
    let done = init(&projects, "done", "alice");
    let d = done.to_str().unwrap();
    // An entry in a later section first, then one in an earlier section a second after: by
    // time, the later section's comes first.
    pair([
        "note",
        d,
        "--agent",
        "doer",
        "--section",
        "Validation",
        "--note",
        "older-in-validation",
    ])
    .code(0);
    std::thread::sleep(Duration::from_millis(1100));
    pair([
        "note",
        d,
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "newer-in-evidence",
    ])
    .code(0);
    pair(["stop", d, "--agent", "doer", "--reason", "finished here"]).code(0);
    let command = format!("{} top {}", pair_bin().display(), projects.display());
    let t = Tmux::start(100, 30, &command);
    let s = t.wait_for("the finished board", |s| {
        s.contains("STOPPED") && s.contains("newer-in-evidence")
    });
    let older = s
        .find("older-in-validation")
        .expect("the older entry shown");
    let newer = s.find("newer-in-evidence").unwrap();
    assert!(older < newer, "oldest first, by time:\n{s}");
    // The clock in the header: the time of day, to the second.
    let clock = |s: &str| -> Option<String> {
        s.split_whitespace()
            .find(|w| w.len() >= 20 && w.as_bytes()[10] == b'T' && w.contains('Z'))
            .map(str::to_string)
    };
    let first = clock(&s).unwrap_or_else(|| panic!("a clock in:\n{s}"));
    let later = t.wait_for("the clock moving on", |s| {
        clock(s).is_some_and(|c| c > first)
    });
    assert!(later.contains("STOPPED"), "{later}");
    t.keys(&["q"]);
    t.wait_for("the shell again", |s| s.contains("shell-before-top"));
}
