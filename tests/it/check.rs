//! `pair check`: recorded runs of the required checks on the tree they ran on, their time limit,
//! `--reproduce` (confirmed, with the setup a check recorded), what a check needs besides its
//! command, and a failing check that blocks the commit unless it is waived.

use crate::common::repo::Lc;
use crate::common::*;
use std::fs;

/// A raw write of `content` over the lifecycle board, as `who`.
fn raw_write(lc: &Lc, content: String, who: &str) -> Out {
    let b = Board::new(b"");
    let file = b.aux_file("new.md", content);
    let sha = sha256_hex(fs::read(&lc.board).unwrap());
    pair([
        "write",
        lc.board.as_str(),
        "--content-file",
        file.to_str().unwrap(),
        "--expect-sha256",
        &sha,
        "--as",
        who,
    ])
}

#[test]
fn a_raw_write_cannot_record_a_check_run_that_pair_check_did_not_run() {
    let lc = Lc::approved(&["--require-check", "tests=false"]);
    lc.g(&["commit", "-q", "-m", "fix"]);
    let forged = format!(
        "check_runs:\n  tests:\n    command: [\"sh\", \"-c\", \"false\"]\n    exit_code: 0\n    \
         tree: \"{}\"\n    duration_ms: 2\n    agent: doer\n    at: \"2026-01-01T00:00:00Z\"\n\
         agents:\n",
        lc.code_tree()
    );
    let content = lc.text().replacen("agents:\n", &forged, 1);
    let before = fs::read(&lc.board).unwrap();
    raw_write(&lc, content, "doer")
        .code(6)
        .mentions(&["check_runs", "pair check"]);
    assert_eq!(before, fs::read(&lc.board).unwrap());
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6)
        .mentions(&["tests"]);
}

#[test]
fn a_check_that_ran_with_untracked_files_present_does_not_count_for_the_approved_tree() {
    let lc = Lc::approved(&["--require-check", "tests=test -e ok.flag"]);
    // The approved content fails the check; a file that is neither staged nor committed
    // makes it pass.
    lc.write("ok.flag", "");
    lc.ok("doer", &["check", "--name", "tests"]);
    fs::remove_file(lc.wt().join("ok.flag")).unwrap();
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6)
        .mentions(&["required-checks-passed", "tests"]);
}

#[test]
fn a_waiver_overrides_a_failed_check_and_is_recorded_in_decisions() {
    let lc = Lc::approved(&[]);
    lc.write("lib.txt", "one\ntwo\nextra\n");
    lc.g(&["commit", "-q", "-am", "fix plus extra"]);
    lc.ok(
        "doer",
        &[
            "advance",
            "COMMITTED",
            "--user-approved",
            "--waive",
            "the user accepts the extra line",
        ],
    );
    let decisions = section_text(&lc.text(), "Decisions").unwrap();
    assert!(decisions.contains("Lifecycle check waived"), "{decisions}");
    assert!(decisions.contains("commit-tree-approved"), "{decisions}");
    assert!(
        decisions.contains("the user accepts the extra line"),
        "{decisions}"
    );
}

#[test]
fn a_failing_required_check_blocks_the_commit_and_a_pass_on_another_tree_does_not_count() {
    let lc = Lc::new(&["--require-check", "tests=grep -q three lib.txt"]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    // The required check fails on round 1's content.
    let out = lc.ok("doer", &["check", "--name", "tests", "--json"]);
    let j = out.json();
    assert_eq!(j["check"]["passed"], false);
    assert_eq!(j["check"]["exit_code"], 1);
    assert_eq!(j["check"]["tree"], lc.code_tree().as_str());
    // A required check runs its recorded command only.
    lc.refused("doer", &["check", "--name", "tests", "--", "true"], 4)
        .mentions(&["required check", "grep -q three lib.txt"]);
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6)
        .mentions(&["required-checks-passed", "tests", "failed"]);

    // A pass on a different tree does not count.
    lc.write("lib.txt", "one\ntwo\nthree\n");
    let out = lc.ok("doer", &["check", "--name", "tests", "--json"]);
    assert_eq!(out.json()["check"]["passed"], true);
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6)
        .mentions(&["required-checks-passed", "not on the approved tree"]);

    // Back to the approved content: a pass there counts.
    lc.write("lib.txt", "one\ntwo\n");
    lc.ok("alice", &["check", "--reproduce", "tests"]);
    lc.refused("doer", &["advance", "COMMITTED", "--user-approved"], 6);
    let status = lc.status();
    assert_eq!(status["frontmatter"]["check_runs"]["tests"]["exit_code"], 1);
}

#[test]
fn reproduce_reruns_the_recorded_command_and_records_both_runs_compared() {
    let lc = Lc::new(&["--require-check", "tests=grep -q two lib.txt"]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    lc.ok("doer", &["check", "--name", "tests"]);
    let out = lc.ok("alice", &["check", "--reproduce", "tests", "--json"]);
    let j = out.json();
    assert_eq!(j["check"]["reproduce"], true);
    assert_eq!(j["check"]["comparison"]["reproduced"], true);
    assert_eq!(j["check"]["comparison"]["previous"]["agent"], "doer");
    let validation = section_text(&lc.text(), "Validation").unwrap();
    assert_eq!(
        validation.matches("### Check tests — passed").count(),
        2,
        "{validation}"
    );
    assert!(validation.contains("Reproduces the previous run of tests by doer"));
    assert!(validation.contains("Same tree, same result: reproduced"));
    pair(["status", lc.board.as_str()]).code(0).mentions(&[
        "checks",
        "tests: passed on",
        "the code round's tree",
        "[required]",
    ]);
    // A reproduction needs a check to reproduce.
    lc.refused("alice", &["check", "--reproduce", "lint"], 6)
        .mentions(&["nothing to reproduce"]);

    // The approved tree with a passing run: the commit goes through.
    lc.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    lc.g(&["commit", "-q", "-m", "fix"]);
    lc.ok("doer", &["advance", "COMMITTED", "--user-approved"]);
    assert!(
        lc.text()
            .contains("required check tests passed on the approved tree")
    );
}

#[test]
fn any_output_is_recorded_safely_and_a_failing_command_is_a_recorded_failure() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    let out = lc.ok(
        "alice",
        &[
            "check",
            "--name",
            "hostile",
            "--json",
            "--",
            "sh",
            "-c",
            "printf '<<<<<<< HEAD\\n## not a heading\\n=======\\n```\\n\\033[2J'; echo err >&2; exit 3",
            "line\nbreak",
        ],
    );
    let j = out.json();
    assert_eq!(j["check"]["exit_code"], 3);
    assert_eq!(j["check"]["passed"], false);
    assert!(j["check"]["output_tail"].as_str().unwrap().contains("err"));
    let validation = section_text(&lc.text(), "Validation").unwrap();
    assert!(
        validation.contains("### Check hostile — failed (exit 3)"),
        "{validation}"
    );
    assert_eq!(
        lc.status()["frontmatter"]["check_runs"]["hostile"]["agent"],
        "alice"
    );
    // A program that cannot be started could not run here (exit 16): it records nothing.
    lc.refused("doer", &["check", "--", "/no/such/program"], 16)
        .mentions(&["could not run here", "nothing was recorded"]);
    // Someone not on the blackboard may not record a run.
    lc.refused("mallory", &["check", "--", "true"], 6);
}

#[test]
fn a_check_past_its_time_limit_is_killed_with_everything_it_started_and_recorded_as_failed() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    // A background child keeps the output pipe open: killing the first process alone would
    // leave `pair check` waiting for it. `pair check` ends within its limit and 2 s, and a
    // second after it exits nothing it started (the shell, both sleeps) is alive.
    let out = crate::common::bounded::pair_within(
        &[
            "check",
            lc.board.as_str(),
            "--agent",
            "doer",
            "--name",
            "hang",
            "--time-limit",
            "1",
            "--json",
            "--",
            "sh",
            "-c",
            "echo started; sleep 120 & sleep 120",
        ],
        std::time::Duration::from_secs(1),
    );
    out.code(0);
    let j = out.json();
    assert_eq!(j["check"]["timed_out"], true);
    assert_eq!(j["check"]["passed"], false);
    assert_eq!(j["check"]["exit_code"], serde_json::Value::Null);
    assert!(
        j["check"]["output_tail"]
            .as_str()
            .unwrap()
            .contains("started")
    );
    let validation = section_text(&lc.text(), "Validation").unwrap();
    assert!(
        validation.contains("Stopped by the time limit of 1 s"),
        "{validation}"
    );
    pair(["validate", lc.board.as_str()]).code(0);
}

#[test]
fn the_record_is_plain_text_and_keeps_the_test_runners_summary_printed_before_the_noise() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    // A runner's coloured output, its summary line, then more than a tail of noise that moves
    // the cursor, sets the terminal's title and redraws a progress line.
    let script = "printf 'running 3 tests\\n\\033[1mtest a ... \\033[32mok\\033[0m\\n\\n'; \
         printf 'test result: \\033[32mok\\033[0m. 3 passed; 0 failed; 0 ignored\\n\\n'; \
         i=0; while [ $i -lt 40 ]; do i=$((i+1)); \
         printf '\\033]0;building\\007\\033[2K  50%%\\r\\033[1m\\033[36mDoc-tests\\033[0m noise %s\\n' $i; \
         done";
    let out = lc.ok(
        "doer",
        &[
            "check", "--name", "tests", "--json", "--", "sh", "-c", script,
        ],
    );
    let j = out.json();
    assert_eq!(j["check"]["passed"], true);
    assert_eq!(
        j["check"]["summary"],
        serde_json::json!(["test result: ok. 3 passed; 0 failed; 0 ignored"])
    );
    let tail = j["check"]["output_tail"].as_str().unwrap();
    assert!(
        tail.starts_with("test result: ok. 3 passed; 0 failed; 0 ignored\n[… "),
        "{tail}"
    );
    assert!(tail.ends_with("Doc-tests noise 40"), "{tail}");
    assert!(
        !tail.contains("50%") && !tail.contains("building"),
        "{tail}"
    );
    let validation = section_text(&lc.text(), "Validation").unwrap();
    // (The command line itself is recorded as it was given, escapes and all.)
    let output = &validation[validation.find("Last lines of its output").unwrap()..];
    for bad in ["\x1b", "?[", "[1m", "[0m", "\x07", "\r", "building"] {
        assert!(!output.contains(bad), "{bad:?} in {validation}");
    }
    assert!(
        validation.contains("test result: ok. 3 passed; 0 failed; 0 ignored"),
        "{validation}"
    );
    assert!(validation.contains("Doc-tests noise 40"), "{validation}");
    // pytest's closing line, in colour, before a teardown log; and a summary in the tail.
    let script = "printf '\\033[32m============ \\033[32m\\033[1m3 passed\\033[0m\\033[32m in 0.12s \
         ============\\033[0m\\n'; i=0; while [ $i -lt 35 ]; do i=$((i+1)); \
         echo teardown $i; done; printf 'Tests:       \\033[1m\\033[32m3 passed\\033[0m, 3 total\\n'";
    let j = lc
        .ok(
            "doer",
            &[
                "check", "--name", "pytest", "--json", "--", "sh", "-c", script,
            ],
        )
        .json();
    assert_eq!(
        j["check"]["summary"],
        serde_json::json!([
            "============ 3 passed in 0.12s ============",
            "Tests:       3 passed, 3 total"
        ])
    );
    let tail = j["check"]["output_tail"].as_str().unwrap();
    assert!(
        tail.starts_with("============ 3 passed in 0.12s ============\n[… 7 lines"),
        "{tail}"
    );
    pair(["validate", lc.board.as_str()]).code(0);
}

#[test]
fn check_says_once_what_happened_and_that_the_worktree_changed_while_it_ran() {
    // Each run adds a line to a file of the worktree.
    let lc = Lc::approved(&[
        "--require-check",
        "tests=sh -c 'echo run >> made-by-the-check.txt'",
    ]);
    let out = lc.ok("doer", &["check", "--name", "tests"]);
    let said = out.stdout.to_lowercase();
    assert_eq!(
        said.matches("passed").count(),
        1,
        "the result once: {}",
        out.report()
    );
    assert!(
        said.contains("the worktree changed while the check ran")
            && said.contains("counts for tree"),
        "{}",
        out.report()
    );
    // The same in JSON: the tree before and after.
    let out = lc.ok("doer", &["check", "--name", "tests", "--json"]);
    let j = out.json();
    assert_ne!(j["check"]["tree"], j["check"]["tree_after"], "{j:#}");
    // A run that changes nothing says nothing of it.
    let lc = Lc::approved(&["--require-check", "tests=true"]);
    let out = lc.ok("doer", &["check", "--name", "tests"]);
    assert!(
        !out.stdout.to_lowercase().contains("changed while"),
        "{}",
        out.report()
    );
}

/// A check whose tool is missing here (the shell's exit 127) or cannot be executed (126) could
/// not run here: exit 16, the tail of what it printed, nothing recorded — never a failure of
/// the code. A failing check prints the last lines of its output; a reproduction in a scratch
/// checkout runs no git hook, not even one the user's global `core.hooksPath` names.
#[test]
fn a_check_that_could_not_run_here_records_nothing_and_a_scratch_checkout_runs_no_hook() {
    let lc = Lc::new(&["--require-check", "tests=grep -q two lib.txt"]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    for (script, code) in [
        ("no-such-linter --strict .", "127"),
        ("f=$(mktemp); printf 'x' > \"$f\"; \"$f\"", "126"),
    ] {
        let before = lc.text();
        let out = lc.run(
            "alice",
            &[
                "check", "--name", "lint", "--json", "--", "sh", "-c", script,
            ],
        );
        out.code(16);
        let e = out.json_error(16);
        assert_eq!(e["kind"], "cannot_run", "{}", out.report());
        let message = e["message"].as_str().unwrap_or_default();
        assert!(message.contains(&format!("exit {code}")), "{message}");
        assert!(message.contains("could not run here"), "{message}");
        if code == "127" {
            assert!(message.contains("no-such-linter"), "{message}");
        }
        assert_eq!(lc.text(), before, "nothing is recorded");
    }
    // A failing run is recorded, and its output's last lines are printed.
    let out = lc.run(
        "alice",
        &[
            "check",
            "--name",
            "red",
            "--",
            "sh",
            "-c",
            "echo first; echo 'E501 line too long'; exit 1",
        ],
    );
    out.code(0);
    assert!(
        out.stdout.contains("last lines of its output:"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains("  E501 line too long"),
        "{}",
        out.report()
    );
    // A global hooks directory whose post-commit hook leaves a mark: a git the reproduction
    // runs in its scratch checkout runs no hook, while the same git elsewhere does.
    let home = tempfile::tempdir().unwrap();
    let hooks = home.path().join("hooks");
    std::fs::create_dir(&hooks).unwrap();
    let mark = home.path().join("hook-ran");
    let hook = hooks.join("post-commit");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", mark.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        format!(
            "[core]\n\thooksPath = {}\n[user]\n\tname = t\n\temail = t@example.invalid\n",
            hooks.display()
        ),
    )
    .unwrap();
    let home_s = home.path().to_str().unwrap();
    let commit = "git init -q . && git commit -q --allow-empty -m probe && grep -q two lib.txt";
    let out = pair_env(
        [
            "check", &lc.board, "--agent", "alice", "--name", "hooks", "--", "sh", "-c", commit,
        ],
        &[("HOME", home_s), ("XDG_CONFIG_HOME", home_s)],
    );
    out.code(0);
    assert!(out.stdout.contains("passed"), "{}", out.report());
    assert!(!mark.exists(), "a hook ran in the scratch checkout");
    // Its reproduction, confirmed, runs in a scratch checkout too: still no hook.
    let out = pair_env(
        [
            "check",
            &lc.board,
            "--agent",
            "alice",
            "--reproduce",
            "hooks",
            "--yes",
        ],
        &[("HOME", home_s), ("XDG_CONFIG_HOME", home_s)],
    );
    out.code(0);
    assert!(out.stdout.contains("reproduced"), "{}", out.report());
    assert!(!mark.exists(), "a hook ran in the reproduction's checkout");
    // The same git outside pair does run it: the mark is a real one.
    let probe = tempfile::tempdir().unwrap();
    let ran = std::process::Command::new("sh")
        .args(["-c", commit.replace(" && grep -q two lib.txt", "").as_str()])
        .current_dir(probe.path())
        .env("HOME", home_s)
        .env("XDG_CONFIG_HOME", home_s)
        .env_remove("GIT_CONFIG_COUNT")
        .status()
        .unwrap();
    assert!(ran.success());
    assert!(
        mark.exists(),
        "the probe's hook did not run: the test proves nothing"
    );
}

/// The code round of a board whose repository ignores `gen/`, with `gen/config.txt` made in the
/// worktree by hand, as a generated file is.
fn with_generated_file() -> Lc {
    let lc = Lc::new_ignoring(
        "*.md.lock\n*.md.lock.owner.json\n.worktrees/\ntask.md\ngen/\n",
        &[],
    );
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    fs::create_dir_all(lc.wt().join("gen")).unwrap();
    lc.write("gen/config.txt", "ok\n");
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    lc
}

/// A check records what it needs besides its command; a reproduction runs the recorded setup
/// in its temporary checkout first, then looks for each file: one missing is "could not run
/// here" (exit 16) naming it, with nothing recorded.
#[test]
fn a_checks_setup_makes_an_ignored_file_in_the_temporary_checkout_and_a_missing_one_cannot_run() {
    let lc = with_generated_file();
    let test = [
        "--",
        "sh",
        "-c",
        "grep -q ok gen/config.txt && grep -q two lib.txt",
    ];
    let mut args = vec![
        "check",
        "--name",
        "gen",
        "--needs",
        "gen/config.txt",
        "--setup",
        "mkdir -p gen && echo ok > gen/config.txt",
        "--json",
    ];
    args.extend(test);
    let out = lc.ok("doer", &args);
    let j = out.json();
    assert_eq!(j["check"]["passed"], true, "{}", out.report());
    assert_eq!(j["check"]["needs"]["files"][0], "gen/config.txt", "{j:#}");
    assert_eq!(j["warnings"].as_array().map(Vec::len), Some(0), "{j:#}");
    let needs = lc.field("check_needs");
    assert_eq!(needs["gen"]["files"][0], "gen/config.txt", "{needs:#}");
    assert_eq!(
        needs["gen"]["setup"], "mkdir -p gen && echo ok > gen/config.txt",
        "{needs:#}"
    );
    let validation = section_text(&lc.text(), "Validation").unwrap();
    assert!(
        validation.contains("Needs `gen/config.txt`, made by the setup"),
        "{validation}"
    );
    // The reviewer's reproduction: the pinned tree has no gen/; the setup makes it.
    let out = lc.ok("alice", &["check", "--reproduce", "gen", "--yes", "--json"]);
    let j = out.json();
    assert_eq!(j["check"]["passed"], true, "{}", out.report());
    assert_eq!(j["check"]["comparison"]["reproduced"], true, "{j:#}");
    assert_eq!(
        j["check"]["needs"]["setup"],
        "mkdir -p gen && echo ok > gen/config.txt"
    );
    // Without the setup, the reproduction's checkout lacks the file: could not run here.
    let mut args = vec!["check", "--name", "gen", "--needs", "gen/config.txt"];
    args.extend(test);
    lc.ok("doer", &args);
    assert!(lc.field("check_needs")["gen"]["setup"].is_null());
    let before = lc.text();
    let out = lc.run("alice", &["check", "--reproduce", "gen", "--yes", "--json"]);
    let e = out.json_error(16);
    assert_eq!(e["kind"], "cannot_run", "{}", out.report());
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.contains("gen/config.txt"), "{message}");
    assert!(message.contains("no setup is recorded"), "{message}");
    assert_eq!(lc.text(), before, "nothing is recorded");
    // A setup that fails is no result of the code either.
    let mut args = vec![
        "check",
        "--name",
        "gen",
        "--needs",
        "gen/config.txt",
        "--setup",
        "echo no generator; exit 3",
    ];
    args.extend(test);
    lc.ok("doer", &args);
    let before = lc.text();
    let out = lc.run("alice", &["check", "--reproduce", "gen", "--yes"]);
    out.code(16)
        .mentions(&["exited 3", "no generator", "nothing was recorded"]);
    assert_eq!(lc.text(), before, "nothing is recorded");
    // The doer's declared file must be in the worktree: a typo is caught when it is recorded.
    let mut args = vec!["check", "--name", "gen", "--needs", "gen/typo.txt"];
    args.extend(test);
    lc.refused("doer", &args, 16)
        .mentions(&["gen/typo.txt", "not in the worktree"]);
    // A needed file is inside the checkout.
    for bad in ["../outside.txt", "/etc/hostname"] {
        let mut args = vec!["check", "--name", "gen", "--needs", bad];
        args.extend(test);
        lc.refused("doer", &args, 4).mentions(&["--needs", bad]);
    }
    // So is one reached through a symbolic link: a link to a file or a directory outside the
    // worktree is refused when it is recorded, and nothing is recorded.
    let elsewhere = tempfile::tempdir().unwrap();
    fs::write(elsewhere.path().join("outside.txt"), "ok\n").unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("outside.txt"),
        lc.wt().join("gen/link.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), lc.wt().join("gen/linkdir")).unwrap();
    let before = lc.text();
    for bad in ["gen/link.txt", "gen/linkdir/outside.txt"] {
        let mut args = vec!["check", "--name", "gen", "--needs", bad];
        args.extend(test);
        lc.refused("doer", &args, 4)
            .mentions(&["--needs", bad, "leads out of it"]);
    }
    assert_eq!(lc.text(), before, "nothing is recorded");
    // A raw write cannot declare needs for a run either.
    let forged = lc
        .text()
        .replace("files: [\"gen/config.txt\"]", "files: []");
    assert_ne!(forged, lc.text());
    let before = fs::read(&lc.board).unwrap();
    raw_write(&lc, forged, "doer")
        .code(6)
        .mentions(&["check_runs"]);
    assert_eq!(before, fs::read(&lc.board).unwrap());
}

/// At record time, a check whose command names a path a fresh checkout elsewhere may not have
/// — `$HOME` inside an `sh -c` string, `~`, an absolute path — gets a warning (stderr and the
/// JSON `warnings`); tools under /bin or /usr/bin and /dev/null do not.
#[test]
fn a_check_whose_shell_string_names_home_is_warned_when_it_is_recorded() {
    let lc = with_generated_file();
    let out = lc.ok(
        "doer",
        &[
            "check",
            "--name",
            "cfg",
            "--json",
            "--",
            "sh",
            "-c",
            "test -n \"$HOME\" && ls ~/ > /dev/null",
        ],
    );
    let j = out.json();
    let warnings = j["warnings"].to_string();
    assert!(
        warnings.contains("$HOME") && warnings.contains("~/"),
        "{}",
        out.report()
    );
    assert!(warnings.contains("--needs"), "{warnings}");
    assert!(out.stderr.contains("$HOME"), "{}", out.report());
    // An absolute path in an argument, without a shell.
    let out = lc.ok(
        "doer",
        &["check", "--name", "abs", "--", "test", "-d", "/opt"],
    );
    assert!(out.stderr.contains("/opt"), "{}", out.report());
    // Tools and /dev/null are no file of the checkout.
    let out = lc.ok(
        "doer",
        &[
            "check",
            "--name",
            "tools",
            "--json",
            "--",
            "/bin/sh",
            "-c",
            "/usr/bin/env true > /dev/null && grep -q two lib.txt",
        ],
    );
    assert_eq!(
        out.json()["warnings"].as_array().map(Vec::len),
        Some(0),
        "{}",
        out.report()
    );
}

/// `--reproduce` prints the command it would run and runs nothing without `--yes`; a required
/// check the user set at init runs without it, unless the doer recorded a setup for it. A
/// reproduction where its tool is missing could not run here: exit 16, nothing recorded as
/// failed.
#[test]
fn a_reproduction_runs_nothing_unconfirmed_and_a_missing_tool_is_not_a_failure() {
    let lc = Lc::new(&["--require-check", "tests=grep -q two lib.txt"]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    // A tool the doer has on its PATH and the reviewer does not; it leaves a mark when it runs.
    let tools = tempfile::tempdir().unwrap();
    let mark = tools.path().join("ran");
    let tool = tools.path().join("mylint");
    fs::write(
        &tool,
        format!("#!/bin/sh\ntouch '{}'\nexit 0\n", mark.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&tool, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    pair_env(
        [
            "check", &lc.board, "--agent", "doer", "--name", "lint", "--", "sh", "-c", "mylint .",
        ],
        &[("PATH", path.as_str())],
    )
    .code(0);
    assert!(mark.exists(), "the doer's run ran the tool");
    fs::remove_file(&mark).unwrap();
    // Unconfirmed: the command is printed, nothing runs, nothing is written.
    let before = lc.text();
    let out = pair_env(
        [
            "check",
            &lc.board,
            "--agent",
            "alice",
            "--reproduce",
            "lint",
            "--json",
        ],
        &[("PATH", path.as_str())],
    );
    let e = out.json_error(6);
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.contains("mylint ."), "{message}");
    assert!(message.contains("--yes"), "{message}");
    assert_eq!(
        e["hint"]["argv"]
            .as_array()
            .map(|a| a.iter().any(|w| w == "--yes")),
        Some(true),
        "{e:#}"
    );
    assert!(
        !mark.exists(),
        "an unconfirmed reproduction ran the command"
    );
    assert_eq!(lc.text(), before);
    // Confirmed, with the tool: it runs and reproduces.
    let out = pair_env(
        [
            "check",
            &lc.board,
            "--agent",
            "alice",
            "--reproduce",
            "lint",
            "--yes",
        ],
        &[("PATH", path.as_str())],
    );
    out.code(0)
        .mentions(&["ran: `sh -c 'mylint .'`", "reproduced the previous run"]);
    assert!(mark.exists(), "the confirmed reproduction ran the tool");
    // Where the tool is missing: could not run here, the run the doer recorded stays a pass.
    let before = lc.text();
    let out = lc.run(
        "alice",
        &["check", "--reproduce", "lint", "--yes", "--json"],
    );
    let e = out.json_error(16);
    assert_eq!(e["kind"], "cannot_run", "{}", out.report());
    let message = e["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("exit 127") && message.contains("mylint"),
        "{message}"
    );
    assert_eq!(lc.text(), before, "nothing is recorded as failed");
    assert_eq!(lc.field("check_runs")["lint"]["exit_code"], 0);
    // The user's required check runs unconfirmed...
    lc.ok("doer", &["check", "--name", "tests"]);
    lc.ok("alice", &["check", "--reproduce", "tests"])
        .mentions(&["ran: `sh -c 'grep -q two lib.txt'`"]);
    // ...but not once the doer recorded a setup for it: that is the doer's command.
    lc.ok("doer", &["check", "--name", "tests", "--setup", "true"]);
    lc.refused("alice", &["check", "--reproduce", "tests"], 6)
        .mentions(&["the setup `sh -c true`", "--yes"]);
    lc.ok("alice", &["check", "--reproduce", "tests", "--yes"]);
}
