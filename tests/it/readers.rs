//! Every file `pair` reads on an agent's behalf goes through one reader: a review target (at
//! `init` and again at the debate's stop), a writer's transcript, and the project watch's link
//! policy. A FIFO is refused, not waited on; a device is refused before a byte is read; a
//! file over the limit is refused by its size; a link in a transcript's place is not followed,
//! whoever planted it; a watch never follows a link out of the project. (Anchors: ledger.rs;
//! MCP `*_file` arguments: mcp_server.rs.)

use crate::common::accounts::Users;
use crate::common::bounded::{pair_command, within};
use crate::common::files::{disk_dir, mkfifo, note_args};
use crate::common::*;
use std::fs;
use std::path::Path;
use std::time::Duration;

/// The limit a command that reads a hostile file must end within: it refuses at once.
const AT_ONCE: Duration = Duration::from_secs(10);

fn pair_at(dir: &Path, args: &[&str]) -> Out {
    let mut c = pair_command(args);
    c.current_dir(dir);
    within(c, AT_ONCE)
}

#[test]
fn a_review_target_that_is_a_fifo_a_device_or_over_the_limit_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("pipe.md"));
    // Sparse: a gigabyte on the file's length, nothing on the disk.
    fs::File::create(d.join("huge.md"))
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    for (target, words) in [
        ("pipe.md", vec!["FIFO", "regular file"]),
        ("/dev/zero", vec!["device", "regular file"]),
        ("huge.md", vec!["64 MiB"]),
    ] {
        pair_at(d, &["init", "review.md", "--review", target])
            .code(4)
            .mentions(&words);
        assert!(!d.join("review.md").exists());
    }
    // A board that is there already is refused before its target is looked at.
    fs::write(d.join("plan.md"), "# Plan\n\nStep one.\n").unwrap();
    pair_at(d, &["init", "review.md", "--review", "plan.md"]).code(0);
    let before = fs::read(d.join("review.md")).unwrap();
    pair_at(d, &["init", "review.md", "--review", "pipe.md"])
        .code(7)
        .mentions(&["exists"]);
    assert_bytes_eq(
        &fs::read(d.join("review.md")).unwrap(),
        &before,
        "untouched",
    );
}

#[test]
fn a_target_replaced_by_a_fifo_mid_debate_is_recorded_unreadable_and_no_writer_waits() {
    let e = crate::debate::target("lib.rs", 20);
    e.ok(0, &["init", "review.md", "--review", "lib.rs"]);
    crate::debate::round_confirmed(&e, 1, &["lib.rs:2"]);
    fs::remove_file(e.path("lib.rs")).unwrap();
    mkfifo(&e.path("lib.rs"));
    crate::debate::find(&e, 2, &[]);
    // The adversary's answer ends a round with no findings: the stop, which reads the
    // target again under the board's lock.
    let out = pair_at(
        e.path("").as_path(),
        &[
            "verdict",
            "review.md",
            "--agent",
            "adversary",
            "COMMENT",
            "--revision",
            "2",
            "--note",
            "nothing found",
            "--json",
        ],
    );
    out.code(0);
    let show = pair_at(e.path("").as_path(), &["show", "review.md", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    let stop = &v["review"]["stop"];
    assert_eq!(stop["target_sha256"], "unreadable", "{stop:#}");
    assert_eq!(stop["drift"], true, "{stop:#}");
}

/// A Claude Code assistant line with its usage.
fn usage_line(id: &str, output: u64) -> String {
    format!(
        "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"usage\":{{\"input_tokens\":1,\
         \"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":{output}}}}}}}\n"
    )
}

/// The `transcript=` words of the board's journal records.
fn positions(board: &Path) -> Vec<String> {
    journal_lines(&fs::read(board).unwrap())
        .iter()
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|w| w.starts_with("transcript="))
        .collect()
}

#[test]
fn a_transcript_that_is_a_fifo_a_link_or_one_endless_line_never_holds_the_lock() {
    let b = Board::minimal();
    let aux = b.aux.path();
    let note = |transcript: &Path| {
        let mut c = pair_command(&note_args(b.p(), "a note"));
        c.arg("--transcript").arg(transcript);
        within(c, AT_ONCE)
    };
    // A FIFO nobody writes to: the write lands at once, with a warning and no usage.
    let fifo = aux.join("fifo.jsonl");
    mkfifo(&fifo);
    note(&fifo).code(0).mentions(&["transcript", "FIFO"]);
    // A link in the transcript's place, to a file the writer can read: not followed, so the
    // journal records neither that file's size nor its first bytes' fingerprint.
    let secret = aux.join("secret.jsonl");
    fs::write(&secret, usage_line("m1", 5).repeat(3)).unwrap();
    let link = aux.join("link.jsonl");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    note(&link).code(0).mentions(&["transcript", "symlink"]);
    assert!(positions(&b.path).is_empty(), "{:?}", positions(&b.path));
    // 200 MiB without a line end (sparse): the first write looks back a bounded way, says
    // so, and records no position.
    let endless = aux.join("endless.jsonl");
    fs::File::create(&endless)
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    note(&endless).code(0).mentions(&["no line end"]);
    assert!(positions(&b.path).is_empty(), "{:?}", positions(&b.path));
    // The same file with a line end near its end: a position is recorded.
    let mut f = fs::OpenOptions::new().append(true).open(&endless).unwrap();
    std::io::Write::write_all(&mut f, usage_line("m2", 7).as_bytes()).unwrap();
    note(&endless).code(0);
    let recorded = positions(&b.path);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert!(
        recorded[0].starts_with(&format!(
            "transcript={}:",
            (200u64 << 20) + usage_line("m2", 7).len() as u64
        )),
        "{recorded:?}"
    );
}

#[test]
fn a_transcript_link_planted_by_another_user_is_not_followed() {
    let Some(u) = Users::new(&["alice", "mallory"]) else {
        return;
    };
    let dir = disk_dir();
    let team = u.team_gid();
    // A directory the team shares (not sticky: the kernel's protection of links in sticky
    // directories does not apply), where alice keeps her transcript.
    std::os::unix::fs::chown(dir.path(), Some(0), Some(team)).unwrap();
    fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o2775),
    )
    .unwrap();
    let own = dir.path().join("alice");
    fs::create_dir(&own).unwrap();
    std::os::unix::fs::chown(&own, Some(u.uid("alice")), Some(team)).unwrap();
    let board = own.join("b.md");
    fs::write(&board, MINIMAL).unwrap();
    std::os::unix::fs::chown(&board, Some(u.uid("alice")), Some(team)).unwrap();
    let private = own.join("private.jsonl");
    fs::write(&private, usage_line("m1", 9).repeat(4)).unwrap();
    std::os::unix::fs::chown(&private, Some(u.uid("alice")), Some(team)).unwrap();
    fs::set_permissions(
        &private,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    // mallory plants the name alice's agent will use, pointing at alice's private file.
    let planted = dir.path().join("session.jsonl");
    let ln = std::process::Command::new("/usr/bin/setpriv")
        .arg(format!("--reuid={}", u.name("mallory")))
        .arg(format!("--regid={}", u.name("mallory")))
        .arg("--init-groups")
        .args(["ln", "-s"])
        .arg(&private)
        .arg(&planted)
        .status()
        .unwrap();
    assert!(ln.success());
    assert_eq!(
        fs::symlink_metadata(&planted).unwrap().uid(),
        u.uid("mallory")
    );
    let args: Vec<String> = note_args(board.to_str().unwrap(), "a note");
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    let t = planted.to_str().unwrap();
    args.extend(["--transcript", t]);
    u.pair("alice", &args)
        .code(0)
        .mentions(&["transcript", "symlink"]);
    assert!(positions(&board).is_empty(), "{:?}", positions(&board));
}

use std::os::unix::fs::MetadataExt as _;

/// The inotify watches a process holds.
fn watches(pid: u32) -> usize {
    let mut n = 0;
    for fd in fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .flatten()
    {
        if let Ok(info) = fs::read_to_string(fd.path()) {
            n += info
                .lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count();
        }
    }
    n
}

#[test]
fn a_projects_watch_never_follows_a_link_out_of_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    fs::create_dir_all(project.join("team")).unwrap();
    fs::write(project.join("team/a.md"), MINIMAL).unwrap();
    // A link to a large tree outside the project.
    std::os::unix::fs::symlink("/usr", project.join("usr")).unwrap();
    let mut c = pair_command(&[
        "next",
        project.to_str().unwrap(),
        "--agent",
        "nobody",
        "--wait",
        "--timeout",
        "60",
    ]);
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    // Wait until the watch is set up (its first watch appears), then a little for the rest.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while watches(child.id()) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let n = watches(child.id());
    let _ = child.kill();
    let _ = child.wait();
    // The project and its one directory; nothing under /usr.
    assert!(
        (1..=4).contains(&n),
        "{n} inotify watches for a project of two directories"
    );
}
