//! Pinned artifacts, against real git repositories in temporary directories: every submission
//! pins the SHA-256 of what it submits, every verdict records the hash it judged, and a verdict
//! on an artifact that changed after its submission is refused as stale (exit 3) until the doer
//! resubmits. `pair diff` prints exactly the pinned bytes; the hash does not depend on the
//! user's git configuration; boards without a worktree, or from before pins, keep working.

use crate::common::repo::{Lc, wt};
use crate::common::*;
use crate::proto::*;
use serde_json::Value;
use std::fs;

#[test]
fn the_tree_pin_is_the_same_whatever_the_git_configuration() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.write("lib.txt", "one\ntwo\nthree\n");
    let tree = |lc: &Lc| -> String {
        let out = lc.ok("doer", &["check", "--name", "noop", "--json", "--", "true"]);
        out.json()["check"]["tree"].as_str().unwrap().to_string()
    };
    let plain = tree(&lc);
    for (k, v) in [
        ("color.ui", "always"),
        ("diff.external", "false"),
        ("diff.noprefix", "true"),
        ("core.abbrev", "7"),
        ("diff.renames", "copies"),
    ] {
        git(&lc.root, &["config", k, v]);
    }
    assert_eq!(
        tree(&lc),
        plain,
        "the tree of index plus worktree ignores the configuration"
    );
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    let expected = lc.g(&["write-tree"]).trim().to_string();
    assert_eq!(lc.code_tree(), expected);
    assert_eq!(
        lc.g(&["diff", "--name-only"]).trim(),
        "lib.txt",
        "the unstaged change is still unstaged"
    );
}

#[test]
fn the_verdict_is_stale_when_the_index_changes_under_an_unchanged_unstaged_diff() {
    let lc = Lc::new(&[]);
    lc.ok("doer", &["worktree", "create", "--user-approved"]);
    lc.write("lib.txt", "one\ntwo\n");
    lc.g(&["add", "lib.txt"]);
    lc.ok("doer", &["submit", "code", "--note", "staged"]);
    lc.ok(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "x",
        ],
    );
    lc.write("lib.txt", "one\ntwo\nthree\n");
    lc.ok("doer", &["submit", "followup", "--note", "f"]);
    // Stage a new file and leave it in the worktree as staged: the unstaged diff is the same,
    // the content under review is not.
    lc.write("other.txt", "sneaky\n");
    lc.g(&["add", "other.txt"]);
    lc.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
        3,
    )
    .mentions(&["tree", "changed"]);
    // The reviewer cannot resubmit: its step is the wait for the doer's resubmission.
    let board = lc.board.as_str();
    let out = pair([
        "verdict",
        board,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "2",
        "--note",
        "ok",
        "--json",
    ]);
    assert_eq!(
        drift_hint(&out),
        ["pair", "poll", board, "--agent", "alice", "--wait"]
    );
}

/// The hint of a `stale_artifact` refusal (`--json`), as argv.
#[track_caller]
fn drift_hint(out: &Out) -> Vec<String> {
    let e = out.json_error(3);
    assert_eq!(e["kind"], "stale_artifact", "{e:#}");
    serde_json::from_value(e["hint"]["argv"].clone())
        .unwrap_or_else(|_| panic!("the refusal has no hint: {e:#}"))
}

/// A refusal because the artifact under review changed after it was pinned says what the caller
/// does next: the doer, the submission that pins it anew; anyone else, the wait for that
/// resubmission; as argv, in the message, and through the MCP server as the call of its tool.
#[test]
fn a_drifted_artifact_s_refusal_hints_the_doer_s_resubmission_and_anyone_else_s_wait() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    fs::write(wt(&p).join("lib.txt"), "one\ntwo\nsneaky\n").unwrap();
    git(wt(&p), &["add", "lib.txt"]);
    let board = p.p();
    let wait = |id: &str| -> Vec<String> {
        ["pair", "poll", board, "--agent", id, "--wait"]
            .map(String::from)
            .to_vec()
    };
    let resubmit: Vec<String> = [
        "pair",
        "submit",
        board,
        "--agent",
        "doer",
        "code",
        "--note-file",
        "FILE",
    ]
    .map(String::from)
    .to_vec();
    // A reviewer's verdict, and its read of the artifact.
    let verdict = pair([
        "verdict",
        board,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "x",
        "--json",
    ]);
    assert_eq!(drift_hint(&verdict), wait("alice"));
    let diff = pair(["diff", board, "--agent", "alice", "--json"]);
    assert_eq!(drift_hint(&diff), wait("alice"));
    // The doer, named by PAIR_AGENT, is told to resubmit.
    let diff = pair_env(["diff", board, "--json"], &[("PAIR_AGENT", "doer")]);
    assert_eq!(drift_hint(&diff), resubmit);
    // Whoever does not say who it is is told to wait, under its id.
    assert_eq!(drift_hint(&pair(["diff", board, "--json"])), wait("ID"));
    // Without --json the message ends with the command.
    pair(["diff", board, "--agent", "doer"])
        .code(3)
        .mentions(&[&format!(
            "Run `pair submit {board} --agent doer code --note-file FILE`"
        )]);
    pair([
        "verdict",
        board,
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "x",
    ])
    .code(3)
    .mentions(&[&format!("Run `pair poll {board} --agent alice --wait`")]);
    // Through the MCP server, each is the call of a tool.
    let tools = pair::cli::mcp::tools();
    for (argv, name) in [(wait("alice"), "poll"), (resubmit.clone(), "submit")] {
        let call = pair::cli::mcp::call_of(&tools, &argv).expect("a call");
        assert_eq!(call["name"], name, "{call}");
    }
    // The step the doer is given pins the new content: the verdict on it goes through.
    let notes = tempfile::tempdir().unwrap();
    let note = notes.path().join("note.md");
    fs::write(&note, "resubmitted\n").unwrap();
    let mut words: Vec<String> = resubmit[1..resubmit.len() - 1].to_vec();
    words.push(note.to_str().unwrap().to_string());
    pair(&words).code(0);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "lgtm"],
    );
}

/// A board with one required reviewer (alice), driven to CODING on the proto's git worktree.
fn coding() -> Proto {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note the-plan --user-approved",
    ]);
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    p
}

/// The pin of the round under review, from `status --json`.
fn pin(p: &Proto) -> Value {
    p.status()["review"]["artifact"].clone()
}

fn pin_sha(p: &Proto) -> String {
    pin(p)["sha256"]
        .as_str()
        .unwrap_or_else(|| panic!("the round is pinned\n{}", p.text()))
        .to_string()
}

/// `pair diff BOARD`: the raw stdout bytes.
fn diff_bytes(p: &Proto, env: &[(&str, &str)]) -> Vec<u8> {
    let out = pair_env(["diff", p.p()], env);
    out.code(0);
    out.stdout_bytes.clone()
}

#[test]
fn drift_a_staged_edit_after_submit_code_refuses_the_verdict_until_the_doer_resubmits() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    let pinned = pin_sha(&p);
    assert_eq!(pin(&p)["kind"], "staged", "{}", p.text());
    assert_eq!(pin(&p)["counter"], 1);

    // The doer changes the staged diff after submitting.
    fs::write(wt(&p).join("lib.txt"), "one\ntwo\nsneaky\n").unwrap();
    git(wt(&p), &["add", "lib.txt"]);

    let out = p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "lgtm"],
        3,
    );
    out.mentions(&["staged diff", "changed", "resubmit", &pinned]);
    pair(["diff", p.p()]).code(3).mentions(&["changed"]);
    let err = pair([
        "verdict",
        p.p(),
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--note",
        "x",
        "--json",
    ])
    .json_error(3);
    assert_eq!(err["kind"], "stale_artifact");

    // Resubmitting pins the new content as round 2; the verdict on it goes through.
    p.ok_entry(
        "doer",
        &["submit", "code", "--note", "resubmitted"],
        "Code Review Rounds",
        Some(2),
        None,
    );
    p.assert_state("CODE_SUBMITTED", [0, 1, 0, 2]);
    let repinned = pin_sha(&p);
    assert_ne!(repinned, pinned);
    assert!(
        p.text()
            .contains(&format!("round 1 was pinned at `{pinned}`")),
        "{}",
        p.text()
    );
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "old"],
        3,
    );
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "lgtm"],
    );
    p.assert_phase("READY_TO_COMMIT");
    let s = p.status();
    assert_eq!(
        s["agents"]["alice"]["reviews"]["code"]["sha256"], repinned,
        "the verdict records the hash it judged: {s:#}"
    );
}

#[test]
fn an_unstaged_edit_does_not_move_a_staged_pin() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    fs::write(wt(&p).join("lib.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    p.ok(
        "alice",
        &[
            "verdict",
            "COMMENT",
            "--revision",
            "1",
            "--note",
            "one remark",
        ],
    );
    p.assert_phase("CODE_CHANGES_REQUESTED");
}

#[test]
fn a_resubmission_without_drift_is_withdrawing_mid_review_and_refused() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    p.refused("doer", &["submit", "code", "--note", "again"], 6)
        .mentions(&["under review", "still matches its pin"]);
    p.ok("alice", &["claim"]);
    p.refused("doer", &["submit", "code", "--note", "again"], 6);
    // A text cannot drift: a plan under review is never resubmitted.
    let q = Proto::init(&["--reviewers", "alice"]);
    q.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p1 --user-approved",
    ]);
    q.refused(
        "doer",
        &["submit", "plan", "--note", "p2", "--user-approved"],
        6,
    )
    .mentions(&["under review"]);
}

#[test]
fn a_followup_pins_the_unstaged_diff_and_drift_there_is_caught_too() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    p.ok(
        "alice",
        &["verdict", "COMMENT", "--revision", "1", "--note", "remark"],
    );
    p.ok("doer", &["submit", "followup", "--note", "answered"]);
    assert_eq!(pin(&p)["kind"], "unstaged");
    assert_eq!(pin(&p)["counter"], 2);
    let out = diff_bytes(&p, &[]);
    assert!(
        String::from_utf8_lossy(&out).contains("+three"),
        "the follow-up is the unstaged diff: {}",
        String::from_utf8_lossy(&out)
    );
    // Staging the follow-up empties the unstaged diff: the pinned artifact is gone.
    git(wt(&p), &["add", "lib.txt"]);
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
        3,
    )
    .mentions(&["unstaged diff"]);
    // Undo it; the verdict goes through.
    git(wt(&p), &["reset", "-q", "--", "lib.txt"]);
    fs::write(wt(&p).join("lib.txt"), "one\ntwo\n").unwrap();
    git(wt(&p), &["add", "lib.txt"]);
    fs::write(wt(&p).join("lib.txt"), "one\ntwo\nthree\n").unwrap();
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    p.assert_phase("READY_TO_COMMIT");
}

#[test]
fn the_artifact_sha256_a_reviewer_read_must_be_the_pin() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    let pinned = pin_sha(&p);
    let other = sha256_hex(b"something else");
    p.refused(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            &other,
            "--note",
            "x",
        ],
        3,
    )
    .mentions(&[&other, &pinned]);
    // Its hint is the read of the pinned artifact: as argv, and through the MCP server as the
    // call of the `diff` tool.
    let e = pair([
        "verdict",
        p.p(),
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--artifact-sha256",
        &other,
        "--note",
        "x",
        "--json",
    ])
    .json_error(3);
    assert_eq!(e["kind"], "stale_artifact", "{e:#}");
    let argv: Vec<String> = serde_json::from_value(e["hint"]["argv"].clone()).unwrap();
    assert_eq!(argv, ["pair", "diff", p.p()], "{e:#}");
    let tools = pair::cli::mcp::tools();
    let call = pair::cli::mcp::call_of(&tools, &argv).expect("a call");
    assert_eq!(call["name"], "diff", "{call}");
    p.refused(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            "not-a-hash",
            "--note",
            "x",
        ],
        4,
    );
    // poll names the pin and the exact verdict command.
    let v = p.poll_expect("alice", 0);
    assert_eq!(v["review"]["artifact"]["sha256"], pinned, "{v:#}");
    let action = v["next"]["action"].as_str().unwrap_or_default();
    assert!(
        action.contains(&format!("--artifact-sha256 {pinned}")) && action.contains("pair diff"),
        "{action}"
    );
    p.ok(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            &pinned.to_uppercase(),
            "--note",
            "read it",
        ],
    );
    p.assert_phase("READY_TO_COMMIT");
}

#[test]
fn pair_diff_prints_exactly_the_bytes_the_pin_covers() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    let pinned = pin_sha(&p);
    let bytes = diff_bytes(&p, &[]);
    assert_eq!(sha256_hex(&bytes), pinned);
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.starts_with("diff --git a/lib.txt b/lib.txt\n"),
        "{text}"
    );
    assert!(text.contains("+two\n") && !text.contains("three"), "{text}");
    let j = pair(["diff", p.p(), "--json"]);
    j.code(0);
    let v = j.json();
    assert_eq!(v["sha256"], pinned);
    assert_eq!(v["pinned"], true);
    assert_eq!(v["kind"], "staged");
    assert_eq!(v["content"].as_str().unwrap().as_bytes(), &bytes[..]);
    assert_eq!(v["stat"]["insertions"], 1);
    let stat = pair(["diff", p.p(), "--stat"]);
    stat.code(0)
        .mentions(&["lib.txt", "1 file changed", &pinned]);

    // A text artifact too: the plan as submitted.
    let q = Proto::init(&["--reviewers", "alice"]);
    q.steps(&["alice register", "DOER advance PLANNING --user-approved"]);
    let note = "The plan\r\n\r\n### Step 1\n\nDo it.  \n\n\n";
    let f = q.b.aux_file("plan.md", note);
    q.ok(
        "doer",
        &[
            "submit",
            "plan",
            "--note-file",
            f.to_str().unwrap(),
            "--user-approved",
        ],
    );
    let text = diff_bytes(&q, &[]);
    // The note's `###` heading is moved below the entries' level, and the pin covers that.
    assert_eq!(text, b"The plan\n\n#### Step 1\n\nDo it.\n");
    assert_eq!(sha256_hex(&text), pin_sha(&q));
}

#[test]
fn hashing_is_canonical_whatever_the_git_configuration() {
    let p = coding();
    let w = wt(&p);
    // A change with everything a configuration could print differently: a rename, a binary
    // file, a non-ASCII name, a hunk with function context, a long run of context.
    fs::write(w.join("moved.txt"), "a\nb\nc\nd\ne\n").unwrap();
    fs::write(
        w.join("prog.c"),
        "int main(void)\n{\n\tint a = 1;\n\tint b = 2;\n\tint c = 3;\n\tint d = 4;\n\treturn a;\n}\n",
    )
    .unwrap();
    git(w, &["add", "moved.txt", "prog.c"]);
    git(w, &["commit", "-q", "-m", "more"]);
    git(w, &["mv", "moved.txt", "renamed.txt"]);
    fs::write(
        w.join("prog.c"),
        "int main(void)\n{\n\tint a = 1;\n\tint b = 2;\n\tint c = 3;\n\tint d = 4;\n\treturn d;\n}\n",
    )
    .unwrap();
    fs::write(w.join("blob.bin"), [0u8, 159, 146, 150, 0, 1, 2, 3]).unwrap();
    fs::write(w.join("naïve.txt"), "é\n").unwrap();
    git(w, &["add", "-A"]);
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    let pinned = pin_sha(&p);

    // Everything that changes what `git diff` prints, set where git reads it: the repository's
    // own configuration (which wins over the user's), its attributes, and the environment.
    for (k, v) in [
        ("color.ui", "always"),
        ("color.diff", "always"),
        ("diff.external", "/bin/echo"),
        ("diff.noprefix", "true"),
        ("diff.mnemonicPrefix", "true"),
        ("core.abbrev", "7"),
        ("diff.renames", "copies"),
        ("diff.algorithm", "patience"),
        ("diff.context", "9"),
        ("diff.interHunkContext", "5"),
        ("diff.relative", "true"),
        ("diff.suppressBlankEmpty", "true"),
        ("diff.orderFile", "/dev/null"),
        ("core.quotePath", "false"),
        ("diff.cpp.xfuncname", "^(int.*)$"),
        ("diff.bin.textconv", "od -c"),
    ] {
        git(w, &["config", "--local", k, v]);
    }
    fs::create_dir_all(w.join(".git/info")).unwrap();
    fs::write(
        w.join(".git/info/attributes"),
        "*.c diff=cpp\n*.bin diff=bin\n",
    )
    .unwrap();
    let hostile_env = [
        ("GIT_EXTERNAL_DIFF", "/bin/echo"),
        ("GIT_DIFF_OPTS", "--unified=12"),
        ("GIT_DIR", "/nonexistent/.git"),
        ("GIT_INDEX_FILE", "/nonexistent/index"),
        ("GIT_PAGER", "rev"),
        ("LC_ALL", "fr_FR.UTF-8"),
    ];
    let bytes = diff_bytes(&p, &hostile_env);
    let text = String::from_utf8_lossy(&bytes).to_string();
    assert_eq!(
        sha256_hex(&bytes),
        pinned,
        "the same content must hash the same under any configuration:\n{text}"
    );
    assert!(
        text.contains("diff --git a/renamed.txt b/renamed.txt\nnew file mode")
            && text.contains("GIT binary patch")
            && text.contains("\"b/na\\303\\257ve.txt\"")
            && text.contains("@@ -4,5 +4,5 @@\n")
            && !text.contains('\u{1b}'),
        "{text}"
    );
    // And a verdict under that configuration finds no drift.
    let mut args = p.args(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--artifact-sha256",
            &pinned,
            "--note",
            "ok",
        ],
    );
    args.push("--json".into());
    pair_env(&args, &hostile_env).code(0);
    p.assert_phase("READY_TO_COMMIT");

    // The other way round: submitted under the hostile configuration, read under none.
    let q = coding();
    for (k, v) in [
        ("color.ui", "always"),
        ("diff.noprefix", "true"),
        ("core.abbrev", "9"),
        ("diff.renames", "true"),
    ] {
        git(wt(&q), &["config", "--local", k, v]);
    }
    let mut args = q.args("doer", &["submit", "code", "--note", "staged"]);
    args.push("--json".into());
    pair_env(&args, &hostile_env).code(0);
    let pinned = pin_sha(&q);
    for (k, _) in [("color.ui", ""), ("diff.noprefix", ""), ("core.abbrev", "")] {
        git(wt(&q), &["config", "--local", "--unset", k]);
    }
    assert_eq!(sha256_hex(diff_bytes(&q, &[])), pinned);
}

#[test]
fn empty_diffs_are_refused_with_what_to_do() {
    let p = coding();
    // Nothing staged: nothing to review.
    git(wt(&p), &["reset", "-q"]);
    git(wt(&p), &["stash", "-q"]);
    p.refused("doer", &["submit", "code", "--note", "nothing"], 6)
        .mentions(&["staged diff", "empty", "git add"]);
    fs::write(wt(&p).join("lib.txt"), "one\ntwo\n").unwrap();
    git(wt(&p), &["add", "lib.txt"]);
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    p.ok(
        "alice",
        &["verdict", "COMMENT", "--revision", "1", "--note", "remark"],
    );
    // Nothing unstaged: no follow-up to review.
    p.refused("doer", &["submit", "followup", "--note", "nothing"], 6)
        .mentions(&["unstaged diff", "empty", "without staging"]);
}

#[test]
fn poll_reads_the_pin_and_never_runs_git() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    let pinned = pin_sha(&p);
    // No git on PATH: poll and status still answer, from the pin.
    let no_git = [("PATH", "/nonexistent")];
    let out = pair_env(["poll", p.p(), "--agent", "alice", "--json"], &no_git);
    out.code(0);
    assert_eq!(out.json()["review"]["artifact"]["sha256"], pinned);
    pair_env(["status", p.p(), "--json"], &no_git).code(0);
    // A verdict needs git to check the diff: it says so (exit 1) and writes nothing.
    let before = p.b.read();
    let out = pair_env(
        [
            "verdict",
            p.p(),
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "x",
        ],
        &no_git,
    );
    out.code(1).mentions(&["git", "not found"]);
    p.b.assert_untouched(&before);
}

#[test]
fn a_red_test_pins_its_text_and_the_test_files_named() {
    let p = Proto::init(&["--reviewers", "alice", "--red-test"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
        "DOER advance RED_TESTING",
    ]);
    let t1 =
        p.b.aux_file("test_a.rs", "#[test] fn a() { assert!(false) }\n");
    let t2 = p.b.aux_file("test_b.rs", "#[test] fn b() {}\n");
    let files = format!("{},{}", t1.display(), t2.display());
    p.ok(
        "doer",
        &[
            "submit",
            "red-test",
            "--note",
            "both fail",
            "--files",
            &files,
        ],
    );
    let v = pin(&p);
    assert_eq!(v["kind"], "files");
    assert_eq!(v["files"].as_array().map(Vec::len), Some(2), "{v:#}");
    let bytes = diff_bytes(&p, &[]);
    assert_eq!(sha256_hex(&bytes), v["sha256"].as_str().unwrap());
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.starts_with("both fail\n==> ") && text.contains("assert!(false)"),
        "{text}"
    );
    // A test file changes after the submission: stale until resubmitted.
    fs::write(&t1, "#[test] fn a() {}\n").unwrap();
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        3,
    )
    .mentions(&["test files", "changed"]);
    p.ok(
        "doer",
        &[
            "submit",
            "red-test",
            "--note",
            "both fail, again",
            "--files",
            &files,
        ],
    );
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    p.assert_phase("RED_TEST_APPROVED");
    // --files is only for a red test.
    p.refused(
        "doer",
        &["submit", "code", "--note", "c", "--files", &files],
        4,
    );
}

#[test]
fn a_board_without_a_worktree_completes_its_plan_only_work_as_before() {
    let p = Proto::init(&["--reviewers", "alice", "--work-type", "docs", "--rca"]);
    p.steps(&[
        "alice register",
        "DOER advance ANALYZING --user-approved",
        "DOER submit analysis --note why --user-approved",
        "alice verdict CHANGES_REQUESTED --revision 1 --note deeper",
        "DOER submit analysis --note deeper-why --user-approved",
        "alice verdict APPROVED --revision 2 --note ok",
        "DOER advance PLANNING",
        "DOER submit plan --note the-docs-plan --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
    ]);
    p.assert_phase("PLAN_APPROVED");
    assert_eq!(p.top("worktree").as_deref(), Some("null"));
    p.ok("doer", &["stop", "--reason", "the docs are written"]);
    p.assert_phase("STOPPED");
    // A no-review board pins its text too, and needs no git either.
    let q = Proto::init(&[]);
    q.steps(&[
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved --no-review",
    ]);
    q.assert_phase("PLAN_APPROVED");
    assert!(q.text().contains("pins:\n  plan:\n"), "{}", q.text());
}

#[test]
fn a_board_from_before_pins_validates_and_takes_unchecked_verdicts() {
    // In CODE_SUBMITTED with a worktree that is not even a git repository: nothing was pinned,
    // so no git is run and the verdict says it was not checked.
    let content = set_top(
        &set_top(
            &set_top(
                &set_top(
                    &set_top(&minimal_with_reviewer("alice"), "phase", "CODE_SUBMITTED"),
                    "required_reviewers",
                    "[alice]",
                ),
                "plan_revision",
                "1",
            ),
            "code_review_round",
            "1",
        ),
        "worktree",
        "/abs/old/worktree",
    );
    let b = Board::new(agreeing(&content));
    pair(["validate", b.p()]).code(0);
    // poll shows the round unpinned, and the verdict without the flag it would name.
    let v = pair(["poll", b.p(), "--agent", "alice", "--json"]).json();
    assert_eq!(v["review"]["artifact"], Value::Null, "{v:#}");
    let action = v["next"]["action"].as_str().unwrap_or_default();
    assert!(!action.contains("--artifact-sha256"), "{action}");
    let out = pair([
        "verdict",
        b.p(),
        "--agent",
        "alice",
        "APPROVED",
        "--revision",
        "1",
        "--artifact-sha256",
        &sha256_hex(b"x"),
        "--note",
        "ok",
    ]);
    out.code(0)
        .mentions(&["not pinned", "not checked", "--artifact-sha256"]);
    assert!(b.read_string().contains("phase: READY_TO_COMMIT"));
    assert!(!b.read_string().contains("sha256:"), "{}", b.read_string());
}

#[test]
fn the_law_holds_raw_writes_to_the_pins() {
    let p = coding();
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    let pinned = pin_sha(&p);
    let text = p.text();
    let at = text.find("\n  alice:\n").unwrap();
    let (head, tail) = text.split_at(at);
    let signed = |h: &str| {
        let tail = tail
            .replacen("reviewed_code_round: null", "reviewed_code_round: 1", 1)
            .replacen(
                "code_verdict: null",
                &format!("code_verdict: APPROVED\n    reviewed_code_sha256: \"{h}\""),
                1,
            );
        set_top(&format!("{head}{tail}"), "phase", "READY_TO_COMMIT")
    };
    // A verdict naming another artifact is stale.
    let h = p.b.sha();
    p.b.write_expect(signed(&sha256_hex(b"other")), &h, &["--as", "alice"])
        .code(3)
        .mentions(&["stale", &pinned]);
    // The doer may not move a pin outside a submission.
    let moved = text.replacen(&pinned, &sha256_hex(b"other"), 1);
    p.b.write_expect(&moved, &h, &["--as", "doer"])
        .code(6)
        .mentions(&["pins"]);
    // A malformed pin is invalid.
    let bad = text.replacen(&format!("\"{pinned}\""), "\"abc\"", 1);
    p.b.write_expect(&bad, &h, &["--as", "doer"])
        .code(5)
        .mentions(&["pins.code.sha256", "64"]);
    p.b.assert_untouched(text.as_bytes());
    // The verdict that names the pin is accepted.
    p.b.write_expect(agreeing(&signed(&pinned)), &h, &["--as", "alice"])
        .code(0);
    p.assert_valid();
}

#[test]
fn the_staged_diff_is_taken_against_base_sha_when_one_is_recorded() {
    let p = coding();
    let base = git(wt(&p), &["rev-parse", "HEAD"]).trim().to_string();
    // A commit on top of the base: with base_sha recorded it belongs to the reviewed diff.
    fs::write(wt(&p).join("extra.txt"), "committed after the base\n").unwrap();
    git(wt(&p), &["add", "extra.txt"]);
    git(wt(&p), &["commit", "-q", "-m", "extra"]);
    let with_base = p.text().replacen(
        "blocked_from: null\n",
        &format!("blocked_from: null\nbase_sha: {base}\n"),
        1,
    );
    p.b.write_expect(&with_base, &p.b.sha(), &["--as", "doer"])
        .code(0);
    p.ok("doer", &["submit", "code", "--note", "staged"]);
    let diff = String::from_utf8(diff_bytes(&p, &[])).unwrap();
    assert!(
        diff.contains("+committed after the base") && diff.contains("+two"),
        "{diff}"
    );
    // An unusable base is an error from git (exit 1), and nothing is written.
    let q = coding();
    let bad = q.text().replacen(
        "blocked_from: null\n",
        "blocked_from: null\nbase_sha: 0000000000000000000000000000000000000001\n",
        1,
    );
    q.b.write_expect(&bad, &q.b.sha(), &["--as", "doer"])
        .code(0);
    q.refused("doer", &["submit", "code", "--note", "staged"], 1)
        .mentions(&["git"]);
}

/// Run the command `poll --json` advertises for the diff under review, in `dir`, with a git
/// configuration that changes everything it can; its stdout.
fn run_advertised(v: &Value, dir: &std::path::Path) -> Vec<u8> {
    let cmd: Vec<String> = v["review"]["diff_command"]
        .as_array()
        .unwrap_or_else(|| panic!("a diff command: {v:#}"))
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("gitconfig");
    fs::write(
        &config,
        "[color]\n\tui = always\n[diff]\n\tnoprefix = true\n\tcontext = 9\n\trenames = copies\n\
         \tmnemonicPrefix = true\n[core]\n\tabbrev = 7\n",
    )
    .unwrap();
    let out = std::process::Command::new(&cmd[0])
        .args(&cmd[1..])
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", &config)
        .output()
        .unwrap();
    assert!(out.status.success(), "{cmd:?}: {out:?}");
    out.stdout
}

#[test]
fn the_advertised_diff_command_prints_exactly_the_pinned_bytes_whatever_the_configuration() {
    let p = coding();
    // A hunk inside a function: git writes the function's name after the hunk header, which the
    // pin leaves out.
    fs::write(
        wt(&p).join("lib.py"),
        "def area(r):\n    x = 1\n    y = 2\n    z = 3\n    w = 4\n    return 3 * r * r\n",
    )
    .unwrap();
    git(wt(&p), &["add", "lib.py"]);
    git(wt(&p), &["commit", "-q", "-m", "lib"]);
    fs::write(
        wt(&p).join("lib.py"),
        "def area(r):\n    x = 1\n    y = 2\n    z = 3\n    w = 4\n    return 3.14159 * r * r\n",
    )
    .unwrap();
    git(wt(&p), &["add", "lib.py"]);
    p.ok("doer", &["submit", "code", "--note", "pi"]);
    let (_, v) = crate::common::handmade::poll_json(p.p(), "alice");
    let bytes = run_advertised(&v, wt(&p));
    assert_eq!(
        sha256_hex(&bytes),
        pin_sha(&p),
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    assert!(String::from_utf8_lossy(&bytes).contains("\n@@ -3,4 +3,4 @@\n"));
}
