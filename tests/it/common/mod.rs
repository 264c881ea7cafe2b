//! Shared helpers for the black-box integration tests of the `pair` CLI.
//!
//! Every helper runs the real `pair` binary as a separate process on real files in
//! temporary directories.
#![allow(dead_code)]

pub mod accounts;
pub mod bounded;
pub mod daemon;
pub mod env;
pub mod files;
pub mod flow;
pub mod handmade;
pub mod httpd;
pub mod phases;
pub mod prereq;
pub mod proxy;
pub mod reads;
pub mod repair;
pub mod repo;
pub mod signing;
pub mod sshd;

use assert_cmd::Command;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// A valid minimal blackboard in phase DRAFT with one doer (`doer`).
pub const MINIMAL: &str = "---
phase: DRAFT
phase_updated_at: \"2026-01-01T00:00:00Z\"
yolo: false
work_type: feature
rca_required: false
red_test_required: false
required_reviewers: []
no_review: false
analysis_revision: 0
plan_revision: 0
red_test_round: 0
code_review_round: 0
worktree: null
blocked_from: null
agents:
  doer:
    role: doer
    status: DRAFT
    last_seen: null
    reviewed_analysis_revision: null
    analysis_verdict: null
    reviewed_plan_revision: null
    plan_verdict: null
    reviewed_red_test_round: null
    red_test_verdict: null
    reviewed_code_round: null
    code_verdict: null
---
# Blackboard

## Goal

Do the thing.
";

/// Names allowed beside a blackboard `board.md` after any write (success or failure).
pub const LOCK_SIDECARS: [&str; 2] = ["board.md.lock", "board.md.lock.owner.json"];

/// The hidden directory beside `board.md` where `poll` keeps presence records and `watch` its
/// state (never the board's content).
pub const SIDE_DIR: &str = ".board.md.pair";

/// Default per-process timeout: any `pair` call that runs longer than this is a hang.
pub const PROCESS_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// hashing

pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    let digest = Sha256::digest(bytes.as_ref());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn is_lower_hex_sha256(s: &str) -> bool {
    s.len() == 64
        && s.chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

// ---------------------------------------------------------------------------------------------
// running pair

/// Path of the built `pair` binary (for spawning many processes directly).
pub fn pair_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pair"))
}

/// A fresh `pair` command with a hang timeout and without an inherited `PAIR_AGENT`.
pub fn pair_cmd() -> Command {
    let mut c = Command::cargo_bin("pair").expect("the `pair` binary must be built");
    c.timeout(PROCESS_TIMEOUT);
    c.env_remove("PAIR_AGENT");
    c.env_remove("PAIR_SESSION");
    c.env_remove("PAIR_MODEL");
    c.env_remove("PAIR_SIGNING_KEY");
    c.env_remove("PAIR_ALLOWED_SIGNERS");
    c
}

/// The result of one `pair` process.
#[derive(Debug, Clone)]
pub struct Out {
    pub desc: String,
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_bytes: Vec<u8>,
    pub elapsed: Duration,
}

impl Out {
    pub fn report(&self) -> String {
        format!(
            "command: {}\nexit code: {:?} (signal {:?}) after {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}\n",
            self.desc, self.code, self.signal, self.elapsed, self.stdout, self.stderr
        )
    }

    /// stdout and stderr together (human messages may go to either).
    pub fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    #[track_caller]
    pub fn code(&self, expected: i32) -> &Self {
        assert_eq!(
            self.code,
            Some(expected),
            "expected exit code {expected}\n{}",
            self.report()
        );
        self
    }

    #[track_caller]
    pub fn code_in(&self, expected: &[i32]) -> &Self {
        assert!(
            self.code.map(|c| expected.contains(&c)).unwrap_or(false),
            "expected exit code in {expected:?}\n{}",
            self.report()
        );
        self
    }

    /// Finished by itself (not killed by the hang timeout) with a non-zero exit code.
    #[track_caller]
    pub fn failed_without_hanging(&self) -> &Self {
        self.not_timed_out();
        assert!(
            matches!(self.code, Some(c) if c != 0),
            "expected a non-zero exit code\n{}",
            self.report()
        );
        self
    }

    #[track_caller]
    pub fn not_timed_out(&self) -> &Self {
        assert!(
            self.code.is_some(),
            "process did not exit by itself (killed by the test timeout => it hung)\n{}",
            self.report()
        );
        self
    }

    /// All words appear (case-insensitive) in stdout+stderr.
    #[track_caller]
    pub fn mentions(&self, words: &[&str]) -> &Self {
        let all = self.all().to_lowercase();
        for w in words {
            assert!(
                all.contains(&w.to_lowercase()),
                "expected the output to mention {w:?}\n{}",
                self.report()
            );
        }
        self
    }

    /// At least one of the words appears (case-insensitive) in stdout+stderr.
    #[track_caller]
    pub fn mentions_any(&self, words: &[&str]) -> &Self {
        let all = self.all().to_lowercase();
        assert!(
            words.iter().any(|w| all.contains(&w.to_lowercase())),
            "expected the output to mention one of {words:?}\n{}",
            self.report()
        );
        self
    }

    /// The output names one of the given 1-based lines as `line N`.
    #[track_caller]
    pub fn mentions_line_any(&self, lines: &[usize]) -> &Self {
        let all = self.all().to_lowercase();
        assert!(
            lines.iter().any(|n| contains_line_ref(&all, *n)),
            "expected the output to say `line N` for one of N in {lines:?}\n{}",
            self.report()
        );
        self
    }

    /// stdout parsed as exactly one JSON value.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value: {e}\n{}", self.report()))
    }

    /// With `--json`: stdout empty, stderr exactly one JSON object
    /// `{"error": {"code": <code>, "kind": <string>, "message": <string>}}`.
    #[track_caller]
    pub fn json_error(&self, code: i32) -> serde_json::Value {
        self.code(code);
        assert!(
            self.stdout_bytes.is_empty(),
            "with --json, stdout must be empty on error\n{}",
            self.report()
        );
        let v: serde_json::Value = serde_json::from_str(self.stderr.trim()).unwrap_or_else(|e| {
            panic!(
                "with --json, stderr must be exactly one JSON object: {e}\n{}",
                self.report()
            )
        });
        let err = v
            .get("error")
            .unwrap_or_else(|| panic!("missing `error` key\n{}", self.report()));
        assert_eq!(
            err.get("code").and_then(|c| c.as_i64()),
            Some(code as i64),
            "error.code must equal the exit code\n{}",
            self.report()
        );
        let kind = err.get("kind").and_then(|k| k.as_str());
        assert!(
            kind.is_some_and(|k| !k.is_empty()),
            "error.kind must be a non-empty string\n{}",
            self.report()
        );
        let message = err.get("message").and_then(|k| k.as_str());
        assert!(
            message.is_some_and(|m| !m.is_empty()),
            "error.message must be a non-empty string\n{}",
            self.report()
        );
        err.clone()
    }
}

fn contains_line_ref(haystack_lower: &str, n: usize) -> bool {
    let needle = format!("line {n}");
    let mut start = 0;
    while let Some(pos) = haystack_lower[start..].find(&needle) {
        let end = start + pos + needle.len();
        let next = haystack_lower[end..].chars().next();
        if !next.is_some_and(|c| c.is_ascii_digit()) {
            return true;
        }
        start = end;
    }
    false
}

/// Runs a prepared command, never panicking on non-zero exit; asserts the process did not panic.
#[track_caller]
pub fn run(cmd: &mut Command, desc: String) -> Out {
    let start = Instant::now();
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("failed to spawn `{desc}`: {e}"));
    let out = Out {
        desc,
        code: output.status.code(),
        signal: output.status.signal(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        stdout_bytes: output.stdout,
        elapsed: start.elapsed(),
    };
    assert!(
        out.code != Some(101) && !out.stderr.contains("panicked at"),
        "`pair` panicked (a panic is a bug, SPEC §7.1)\n{}",
        out.report()
    );
    out
}

fn describe<I, S>(args: I) -> (Vec<std::ffi::OsString>, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let desc = std::iter::once("pair".to_string())
        .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ");
    (args, desc)
}

/// Runs `pair ARGS...` in `dir`, with `PAIR_AGENT` and `NO_COLOR` unset, and kills it after
/// [`PROCESS_TIMEOUT`] (the returned status then shows the signal): the raw output, for the
/// tests that look at bytes and statuses themselves.
pub fn output_in(dir: &Path, args: &[&str]) -> std::process::Output {
    assert_cmd::Command::new(pair_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("PAIR_AGENT")
        .env_remove("NO_COLOR")
        .timeout(PROCESS_TIMEOUT)
        .output()
        .expect("run pair")
}

/// Runs `pair ARGS...`.
#[track_caller]
pub fn pair<I, S>(args: I) -> Out
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let (args, desc) = describe(args);
    let mut c = pair_cmd();
    c.args(&args);
    run(&mut c, desc)
}

/// Runs `pair ARGS...` with the given stdin bytes.
#[track_caller]
pub fn pair_stdin<I, S>(args: I, stdin: impl Into<Vec<u8>>) -> Out
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let (args, desc) = describe(args);
    let mut c = pair_cmd();
    c.args(&args).write_stdin(stdin);
    run(&mut c, desc)
}

/// Runs `pair ARGS...` with extra environment variables.
#[track_caller]
pub fn pair_env<I, S>(args: I, env: &[(&str, &str)]) -> Out
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let (args, desc) = describe(args);
    let mut c = pair_cmd();
    c.args(&args);
    for (k, v) in env {
        c.env(k, v);
    }
    run(
        &mut c,
        format!(
            "{} {desc}",
            env.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    )
}

/// Runs `pair ARGS...` with a custom hang timeout.
#[track_caller]
pub fn pair_timeout<I, S>(args: I, timeout: Duration) -> Out
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let (args, desc) = describe(args);
    let mut c = pair_cmd();
    c.args(&args).timeout(timeout);
    run(&mut c, desc)
}

// ---------------------------------------------------------------------------------------------
// boards in temp dirs

/// A temp dir holding `board.md`, plus a separate temp dir for content files, so the board's
/// directory only ever holds what `pair` puts there.
pub struct Board {
    pub dir: TempDir,
    pub aux: TempDir,
    pub path: PathBuf,
}

impl Board {
    /// A board file with the given bytes.
    pub fn new(content: impl AsRef<[u8]>) -> Board {
        let b = Board::absent();
        fs::write(&b.path, content.as_ref()).unwrap();
        b
    }

    /// A temp dir where `board.md` does not exist (yet).
    pub fn absent() -> Board {
        let dir = tempfile::tempdir().unwrap();
        let aux = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.md");
        Board { dir, aux, path }
    }

    pub fn minimal() -> Board {
        Board::new(MINIMAL)
    }

    pub fn p(&self) -> &str {
        self.path.to_str().unwrap()
    }

    pub fn read(&self) -> Vec<u8> {
        fs::read(&self.path).unwrap()
    }

    /// The file without its journal ([`unjournaled`]).
    pub fn content(&self) -> Vec<u8> {
        unjournaled(&self.read())
    }

    pub fn read_string(&self) -> String {
        String::from_utf8(self.read()).unwrap()
    }

    pub fn sha(&self) -> String {
        sha256_hex(self.read())
    }

    /// Writes a file in the auxiliary dir (not beside the board) and returns its path.
    pub fn aux_file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.aux.path().join(name);
        fs::write(&p, content.as_ref()).unwrap();
        p
    }

    /// `pair write BOARD --content-file F --expect-sha256 H [extra...]`.
    #[track_caller]
    pub fn write_expect(&self, content: impl AsRef<[u8]>, expect: &str, extra: &[&str]) -> Out {
        let f = self.aux_file("content.md", content);
        let mut args: Vec<String> = vec![
            "write".into(),
            self.p().into(),
            "--content-file".into(),
            f.to_str().unwrap().into(),
            "--expect-sha256".into(),
            expect.into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        pair(args)
    }

    /// `pair write BOARD --content-file F --create-if-missing [extra...]`.
    #[track_caller]
    pub fn write_create(&self, content: impl AsRef<[u8]>, extra: &[&str]) -> Out {
        let f = self.aux_file("content.md", content);
        let mut args: Vec<String> = vec![
            "write".into(),
            self.p().into(),
            "--content-file".into(),
            f.to_str().unwrap().into(),
            "--create-if-missing".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        pair(args)
    }

    #[track_caller]
    pub fn assert_untouched(&self, original: &[u8]) {
        assert_bytes_eq(
            &self.read(),
            original,
            "the blackboard must be byte-for-byte untouched",
        );
    }

    /// No stray (temporary) files beside the board: only the board, its lock sidecars and
    /// the named extra entries.
    #[track_caller]
    pub fn assert_clean_dir(&self, extra_allowed: &[&str]) {
        let mut allowed: Vec<&str> = vec!["board.md", SIDE_DIR];
        allowed.extend(LOCK_SIDECARS);
        allowed.extend(extra_allowed);
        assert_only_entries(self.dir.path(), &allowed);
    }
}

#[track_caller]
/// A board's bytes without its `## Journal` section (and the blank line the first record put
/// before it): what the writers wrote, without the records pair adds to every write.
pub fn unjournaled(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let cut = if text.starts_with("## Journal") {
        Some(0)
    } else {
        text.rfind("\n## Journal\n")
            .or_else(|| text.rfind("\n## Journal\r\n"))
            .map(|p| p + 1)
    };
    let Some(cut) = cut else {
        return bytes.to_vec();
    };
    let mut out = bytes[..cut].to_vec();
    if out.ends_with(b"\r\n") {
        out.truncate(out.len() - 2);
    } else if out.ends_with(b"\n") {
        out.truncate(out.len() - 1);
    }
    out
}

/// New content for a raw write that keeps the board's journal as it is (the law refuses a
/// raw write that drops or changes a record): `content`, then the board's journal section.
pub fn keep_journal(content: &str, board: &[u8]) -> String {
    let kept = unjournaled(board).len();
    let journal = String::from_utf8_lossy(&board[kept..]).into_owned();
    format!("{content}{journal}")
}

/// A board's bytes less its last journal record (the last line), as the write that added it
/// found them plus its change.
pub fn without_last_record(bytes: &[u8]) -> Vec<u8> {
    let end = bytes.len() - usize::from(bytes.ends_with(b"\n"));
    let start = bytes[..end]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |p| p + 1);
    assert!(
        bytes[start..].starts_with(b"- at="),
        "the last line is not a journal record"
    );
    bytes[..start].to_vec()
}

/// The journal records of a board, one line each.
pub fn journal_lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    match text.rfind("## Journal") {
        Some(p) => text[p..]
            .lines()
            .filter(|l| l.starts_with("- at="))
            .map(str::to_string)
            .collect(),
        None => vec![],
    }
}

pub fn assert_bytes_eq(actual: &[u8], expected: &[u8], what: &str) {
    if actual != expected {
        panic!(
            "{what}\n--- expected ({} bytes) ---\n{}\n--- actual ({} bytes) ---\n{}",
            expected.len(),
            String::from_utf8_lossy(expected),
            actual.len(),
            String::from_utf8_lossy(actual)
        );
    }
}

/// Names of the entries in `dir` (not recursive).
pub fn dir_entries(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[track_caller]
pub fn assert_only_entries(dir: &Path, allowed: &[&str]) {
    let entries = dir_entries(dir);
    let stray: Vec<&String> = entries
        .iter()
        .filter(|e| !allowed.contains(&e.as_str()))
        .collect();
    assert!(
        stray.is_empty(),
        "unexpected (temporary?) files left in {}: {stray:?} (all entries: {entries:?})",
        dir.display()
    );
}

// ---------------------------------------------------------------------------------------------
// editing board text

/// Replaces the one whole line equal to `from` with `to` (which may span several lines).
#[track_caller]
pub fn replace_line(content: &str, from: &str, to: &str) -> String {
    let lines: Vec<&str> = content.split('\n').collect();
    let hits = lines.iter().filter(|l| **l == from).count();
    assert_eq!(hits, 1, "test bug: line {from:?} must occur exactly once");
    lines
        .iter()
        .map(|l| if *l == from { to } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Sets a top-level frontmatter key (replaces the line `key: ...`).
#[track_caller]
pub fn set_top(content: &str, key: &str, value: &str) -> String {
    let prefix = format!("{key}:");
    let lines: Vec<&str> = content.split('\n').collect();
    let hits = lines.iter().filter(|l| l.starts_with(&prefix)).count();
    assert_eq!(
        hits, 1,
        "test bug: top-level key {key} must occur exactly once"
    );
    lines
        .iter()
        .map(|l| {
            if l.starts_with(&prefix) {
                format!("{key}: {value}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Removes the top-level line `key: ...`.
#[track_caller]
pub fn remove_top(content: &str, key: &str) -> String {
    let prefix = format!("{key}:");
    let before = content.split('\n').count();
    let out: Vec<&str> = content
        .split('\n')
        .filter(|l| !l.starts_with(&prefix))
        .collect();
    assert_eq!(
        out.len() + 1,
        before,
        "test bug: key {key} must occur exactly once"
    );
    out.join("\n")
}

/// A board made by hand from another's text (format 1): its `format` and its journal's seal
/// (`journal`) dropped, since a board of format 2 without the journal its seal describes is
/// invalid. Used with [`Board::content`] (the board without its journal).
pub fn unsealed(content: &str) -> String {
    content
        .split('\n')
        .filter(|l| !(l.starts_with("format:") || l.starts_with("journal:")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The seal a board of format 2 carries (`journal: {records, head}`) set to match its journal as
/// it stands: what an editor with write access who rewrites the journal consistently would
/// write (the digest is the first 16 hex digits of the SHA-256 of the last record's line
/// without its `after=` word).
pub fn reseal(content: &str) -> String {
    let records = journal_lines(content.as_bytes());
    let last = records.last().expect("test bug: a journal to seal");
    let start = last.find(" after=").unwrap();
    let end = last[start + 1..]
        .find(' ')
        .map_or(last.len(), |e| start + 1 + e);
    let unsealed = format!("{}{}", &last[..start], &last[end..]);
    let head = &sha256_hex(unsealed.as_bytes())[..16];
    set_top(
        content,
        "journal",
        &format!("{{records: {}, head: \"{head}\"}}", records.len()),
    )
}

/// Inserts lines just before the closing `---` of the frontmatter (i.e. at the end of the
/// `agents` map when `text` is indented by two spaces, or as top-level keys when not).
#[track_caller]
pub fn insert_before_closing(content: &str, text: &str) -> String {
    let first = content.find("---\n").expect("opening delimiter");
    let rest = &content[first + 4..];
    let close = rest.find("\n---\n").expect("closing delimiter") + first + 4 + 1;
    format!("{}{}{}", &content[..close], text, &content[close..])
}

/// An agent entry (indented for the `agents` map) with the given overrides.
pub fn agent_block(id: &str, role: &str, status: &str, overrides: &[(&str, &str)]) -> String {
    let fields = [
        "last_seen",
        "reviewed_analysis_revision",
        "analysis_verdict",
        "reviewed_plan_revision",
        "plan_verdict",
        "reviewed_red_test_round",
        "red_test_verdict",
        "reviewed_code_round",
        "code_verdict",
    ];
    let mut s = format!("  {id}:\n    role: {role}\n    status: {status}\n");
    for f in fields {
        let v = overrides
            .iter()
            .find(|(k, _)| *k == f)
            .map(|(_, v)| *v)
            .unwrap_or("null");
        s.push_str(&format!("    {f}: {v}\n"));
    }
    s
}

/// MINIMAL plus a registered reviewer `id` (role reviewer, status IDLE).
pub fn minimal_with_reviewer(id: &str) -> String {
    insert_before_closing(MINIMAL, &agent_block(id, "reviewer", "IDLE", &[]))
}

/// 1-based number of the first line that equals `line` exactly.
#[track_caller]
pub fn line_no(content: &str, line: &str) -> usize {
    content
        .split('\n')
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("test bug: no line {line:?}"))
        + 1
}

/// All 1-based numbers of lines that equal `line` exactly.
pub fn line_nos(content: &str, line: &str) -> Vec<usize> {
    content
        .split('\n')
        .enumerate()
        .filter(|(_, l)| *l == line)
        .map(|(i, _)| i + 1)
        .collect()
}

pub fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

pub fn with_bom(s: &str) -> Vec<u8> {
    let mut v = vec![0xEF, 0xBB, 0xBF];
    v.extend_from_slice(s.as_bytes());
    v
}

/// The text of the body section `## name` (up to the next level-2 heading), if present.
pub fn section_text(content: &str, name: &str) -> Option<String> {
    let heading = format!("## {name}");
    let mut lines = content.lines();
    lines.by_ref().find(|l| l.trim_end() == heading)?;
    let mut out = String::new();
    for l in lines {
        if l.starts_with("## ") || l.starts_with("# ") {
            break;
        }
        out.push_str(l);
        out.push('\n');
    }
    Some(out)
}

pub fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// `pair init BOARD ARGS...`, asserting success and that the result validates.
#[track_caller]
pub fn init_board(extra: &[&str]) -> Board {
    let b = Board::absent();
    let mut args = vec!["init", b.p()];
    args.extend_from_slice(extra);
    pair(&args).code(0);
    assert!(b.path.is_file(), "init must create the blackboard file");
    pair(["validate", b.p()]).code(0);
    b
}

// ---------------------------------------------------------------------------------------------
// git worktrees

/// Runs `git ARGS...` in `dir` with a fixed identity and none of the caller's git environment;
/// panics unless it succeeds. Returns stdout.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let mut c = std::process::Command::new("git");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            c.env_remove(k);
        }
    }
    let out = c
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Pair Test",
            "-c",
            "user.email=pair@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git must be installed to run these tests");
    assert!(
        out.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Makes `dir` a git repository with one commit, a staged change and an unstaged change on top
/// of it, so both a code submission (staged diff) and a follow-up (unstaged diff) have
/// something to pin.
pub fn git_worktree(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    fs::write(dir.join("lib.txt"), "one\n").unwrap();
    git(dir, &["add", "lib.txt"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    fs::write(dir.join("lib.txt"), "one\ntwo\n").unwrap();
    git(dir, &["add", "lib.txt"]);
    fs::write(dir.join("lib.txt"), "one\ntwo\nthree\n").unwrap();
}

// ---------------------------------------------------------------------------------------------
// hand-made boards whose body agrees with their frontmatter

/// A hand-made board with the body entries its frontmatter implies appended: for each counter
/// above the body's latest submission of that target, the submission entry of that counter; for
/// each verdict an agent records without its review entry, that entry. `validate` checks that
/// the two agree, so a board built by editing the frontmatter needs them.
pub fn agreeing(content: &str) -> String {
    use pair::board::entry::artifact_section;
    use pair::board::entry::{Kind, heads};
    use pair::board::frontmatter::Target;
    let valid = pair::law::validate::check_bytes(content.as_bytes())
        .unwrap_or_else(|r| panic!("test bug: the board is invalid on its own: {:?}", r.errors));
    let fm = valid.parsed.fm;
    let mut doc = valid.doc;
    const AT: &str = "2026-01-01T00:00:00Z";
    for t in Target::ALL {
        let (noun, unit) = match t {
            Target::Analysis => ("Analysis", "revision"),
            Target::Plan => ("Plan", "revision"),
            Target::RedTest => ("Red test", "round"),
            Target::Code => ("Code", "round"),
        };
        let have = heads(&doc);
        let n = fm.counter(*t);
        let latest = have
            .iter()
            .filter(|h| {
                h.section == artifact_section(*t, false)
                    && h.heading.kind == Kind::Submission
                    && h.heading.target == Some(*t)
            })
            .filter_map(|h| h.heading.counter)
            .max()
            .unwrap_or(0);
        if n > latest {
            let heading = match t {
                Target::Code => {
                    format!("Code review round {n} — submitted (staged diff) — doer — {AT}")
                }
                _ => format!("{noun} {unit} {n} — doer — {AT}"),
            };
            assert!(doc.append(
                artifact_section(*t, false),
                &format!("### {heading}\n\n(a test's entry)\n")
            ));
        }
        for (id, agent) in &fm.agents {
            let r = agent.review(*t);
            let (Some(k), Some(v)) = (r.reviewed, r.verdict) else {
                continue;
            };
            let present = heads(&doc).iter().rev().any(|h| {
                h.section == artifact_section(*t, true)
                    && h.heading.kind == Kind::Review
                    && h.heading.target == Some(*t)
                    && h.heading.counter == Some(k)
                    && h.heading.agent.as_deref() == Some(id.as_str())
                    && h.heading.verdict == Some(v)
            });
            if !present {
                assert!(doc.append(
                    artifact_section(*t, true),
                    &format!(
                        "### {noun} review — {unit} {k} — {id} — {v} — {AT}\n\n(a test's review)\n"
                    )
                ));
            }
        }
    }
    let fm_text = doc.fm_text.replace("\r\n", "\n");
    doc.render(&fm_text)
}
