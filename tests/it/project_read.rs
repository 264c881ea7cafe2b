//! How a project is read: `ls` and `next` answer a fixed project exactly as recorded (every
//! byte: a faster read that changed an answer fails here), and a remote's namespace where
//! nothing moved is asked once (one `ls-remote`) and fetched from never again.

use crate::common::{Out, pair_env};
use std::fs;
use std::path::{Path, PathBuf};

/// The recorded project: the ten kinds of board of scripts/bench_project.sh twice (`g001/`,
/// `g002/`), a board the plain reader leaves to the YAML parser (a comment), one that is not
/// valid, one whose frontmatter is never closed, one waiting for a board that does not exist and
/// one for a board in another directory, and Markdown that is no board.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/project")
}

fn answers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/project-answers")
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `pair ARGS` at the recorded clock, its stdout with the project's directory written `DIR`.
fn answer(dir: &Path, args: &[&str]) -> (Out, String) {
    let out = pair_env(args, &[("PAIR_NOW", "2026-12-01T00:00:00Z")]);
    let text = out.stdout.replace(dir.to_str().unwrap(), "DIR");
    (out, text)
}

#[test]
fn ls_and_next_answer_a_fixed_project_byte_for_byte_as_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("project");
    copy_tree(&fixture(), &dir);
    // Boards where a walk never looks (kept out of the fixture itself: git and the build
    // ignore such directories).
    for skipped in [".git", "target", "node_modules", ".worktrees"] {
        fs::create_dir_all(dir.join(skipped)).unwrap();
        fs::copy(
            dir.join("g001/spec.md"),
            dir.join(skipped).join("hidden.md"),
        )
        .unwrap();
    }
    let d = dir.to_str().unwrap();
    let mut cases: Vec<(String, Vec<&str>, i32)> = vec![
        ("ls.json".into(), vec!["ls", d, "--json"], 0),
        ("ls.txt".into(), vec!["ls", d], 0),
        (
            "ls-open-phase.txt".into(),
            vec!["ls", d, "--sort", "phase", "--state", "open"],
            0,
        ),
        (
            "ls-r1.json".into(),
            vec!["ls", d, "--agent", "r1", "--json"],
            0,
        ),
        ("next-p2.txt".into(), vec!["next", "--agent", "p2", d], 0),
    ];
    for (agent, code) in [
        ("p1", 0),
        ("p2", 0),
        ("d1", 0),
        ("d2", 0),
        ("r1", 10),
        ("r2", 0),
        ("nobody", 10),
    ] {
        cases.push((
            format!("next-{agent}.json"),
            vec!["next", "--agent", agent, d, "--json"],
            code,
        ));
    }
    for (name, args, code) in cases {
        let (out, text) = answer(&dir, &args);
        out.code(code);
        // A deliberate change of an answer is recorded again with PAIR_RECORD_ANSWERS=1 (and
        // the difference read in the commit that makes it).
        if std::env::var_os("PAIR_RECORD_ANSWERS").is_some() {
            fs::write(answers().join(&name), &text).unwrap();
        }
        let recorded = fs::read_to_string(answers().join(&name)).unwrap();
        assert!(
            text == recorded,
            "`pair {}` no longer answers as tests/fixtures/project-answers/{name} records:\n\
             --- now\n{text}\n--- recorded\n{recorded}",
            args.join(" ")
        );
    }
}

/// A second `ls` (or `next`) of a remote's namespace where nothing moved lists the refs once
/// (one `ls-remote`) and fetches nothing: the boards are read from the cache at the tips
/// listed. Counted from outside the binary, by a logging `git` first on PATH.
#[test]
fn a_second_read_of_an_unmoved_namespace_lists_it_once_and_fetches_nothing() {
    use crate::gitstore::{Logged, Machine, Remote};
    let remote = Remote::new();
    let writer = Machine::new(&remote);
    for name in ["one", "two", "three"] {
        let board = remote.board(&format!("refs/pair/{name}"));
        writer
            .pair(&["init", &board, "--goal", "A task", "--reviewers", "r1"])
            .code(0);
    }
    let project = remote.board("refs/pair/");
    // Another machine, its cache empty.
    let reader = Machine::new(&remote);
    let logged = Logged::new(&reader);
    let count = |ran: &[String], what: &str| ran.iter().filter(|l| l.contains(what)).count();
    let first = logged.run(&["ls", &project, "--json"]);
    first.code(0);
    let ran = logged.runs();
    assert_eq!(count(&ran, "ls-remote "), 1, "{ran:#?}");
    assert_eq!(count(&ran, "fetch "), 1, "the first read fetches: {ran:#?}");
    let names = |out: &Out| {
        out.json()["boards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| (b["name"].clone(), b["phase"].clone(), b["error"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&first).len(), 3, "{}", first.stdout);
    for args in [
        vec!["ls", project.as_str(), "--json"],
        vec!["next", "--agent", "r1", project.as_str(), "--json"],
    ] {
        let again = logged.run(&args);
        again.code_in(&[0, 10]);
        let ran = logged.runs();
        assert_eq!(count(&ran, "ls-remote "), 1, "{args:?}: {ran:#?}");
        assert_eq!(count(&ran, "fetch "), 0, "{args:?}: {ran:#?}");
        assert!(
            ran.iter().all(|l| l.contains("ls-remote ")
                || l.contains("cat-file ")
                || l.contains("for-each-ref ")),
            "{args:?}: only the listing and reads of the cache: {ran:#?}"
        );
        if args[0] == "ls" {
            // The cache's copies, read while the remote is asked: one listing of them and one
            // read of every board.
            assert_eq!(count(&ran, "for-each-ref "), 1, "{ran:#?}");
            assert_eq!(count(&ran, "cat-file "), 1, "{ran:#?}");
            assert_eq!(names(&again), names(&first));
        } else {
            assert_eq!(again.json()["boards"], 3, "{}", again.stdout);
        }
    }
}

/// Every read of a moving namespace fetches, and every fetch leaves a pack in the cache: once
/// they pile up past 16, the small ones are rolled into one (`git repack --geometric=2`), the
/// roll-up marked as a pack of boards fetched without their large blobs, as the packs were; the
/// cache still answers every board, and git finds nothing damaged in it.
#[test]
fn the_packs_a_cache_s_fetches_leave_are_rolled_up_and_the_boards_read_the_same() {
    use crate::gitstore::{Machine, Remote};
    let remote = Remote::new();
    let writer = Machine::new(&remote);
    let reader = Machine::new(&remote);
    let project = remote.board("refs/pair/");
    let packs = || -> Vec<String> {
        let mut names = vec![];
        for cache in fs::read_dir(&reader.cache).unwrap().flatten() {
            let dir = cache.path().join("objects/pack");
            for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
                names.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        names
    };
    let mut most = 0;
    for i in 0..24 {
        let board = remote.board(&format!("refs/pair/b{i:02}"));
        writer
            .pair(&["init", &board, "--goal", "A task", "--reviewers", "r1"])
            .code(0);
        let out = reader.pair(&["ls", &project, "--json"]);
        out.code(0);
        let rows = out.json()["boards"].as_array().unwrap().clone();
        assert_eq!(rows.len(), i + 1, "{}", out.stdout);
        assert!(rows.iter().all(|r| r["error"].is_null()), "{}", out.stdout);
        let n = packs().iter().filter(|p| p.ends_with(".pack")).count();
        most = most.max(n);
    }
    let now = packs();
    let pack_files: Vec<&String> = now.iter().filter(|p| p.ends_with(".pack")).collect();
    assert!(most <= 16, "the packs piled up to {most}: {now:?}");
    assert!(pack_files.len() < 16, "{now:?}");
    for p in &pack_files {
        let marker = p.replace(".pack", ".promisor");
        assert!(now.contains(&marker), "{p} is not marked: {now:?}");
    }
    // Nothing damaged: git's check of the cache (the blobs a fetch of boards leaves out
    // allowed), and the boards read as before.
    for cache in fs::read_dir(&reader.cache).unwrap().flatten() {
        if !cache.path().join("HEAD").is_file() {
            continue;
        }
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(cache.path())
            .args([
                "-c",
                "remote.pair-fetch.promisor=true",
                "fsck",
                "--no-dangling",
            ])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let again = reader.pair(&["ls", &project, "--json"]);
    again.code(0);
    assert_eq!(again.json()["boards"].as_array().unwrap().len(), 24);
}
