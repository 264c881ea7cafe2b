//! A board in a scratch directory driven by relative paths (`Env`), and raw writes on it.

use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn pair_in(dir: &Path, args: &[&str]) -> Run {
    let out = crate::common::output_in(dir, args);
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub struct Env {
    pub dir: TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    pub fn run(&self, args: &[&str]) -> Run {
        pair_in(self.dir.path(), args)
    }
    /// Run and require an exit code, showing the output otherwise.
    pub fn ok(&self, code: i32, args: &[&str]) -> Run {
        let r = self.run(args);
        assert_eq!(
            r.code, code,
            "pair {args:?}\nstdout: {}\nstderr: {}",
            r.stdout, r.stderr
        );
        r
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    pub fn read(&self, name: &str) -> String {
        fs::read_to_string(self.path(name)).unwrap()
    }
    pub fn sha(&self, name: &str) -> String {
        let v: serde_json::Value =
            serde_json::from_str(&self.ok(0, &["status", name, "--json"]).stdout).unwrap();
        v["sha256"].as_str().unwrap().to_string()
    }
    /// Raw write of `content` over `name`, with extra flags; returns the run.
    pub fn write(&self, name: &str, content: &str, extra: &[&str]) -> Run {
        let f = self.path("content.tmp");
        fs::write(&f, content).unwrap();
        let sha = self.sha(name);
        let mut args = vec![
            "write",
            name,
            "--content-file",
            f.to_str().unwrap(),
            "--expect-sha256",
            &sha,
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }
}

pub fn planning_submitted_with_alice_approved(e: &Env) {
    e.ok(
        0,
        &[
            "init",
            "w.md",
            "--goal",
            "g",
            "--reviewers",
            "alice,bob",
            "--yolo",
        ],
    );
    e.ok(0, &["register", "w.md", "--agent", "alice"]);
    e.ok(0, &["register", "w.md", "--agent", "bob"]);
    e.ok(0, &["advance", "w.md", "--agent", "doer", "PLANNING"]);
    e.ok(
        0,
        &["submit", "w.md", "--agent", "doer", "plan", "--note", "p"],
    );
    e.ok(
        0,
        &[
            "verdict",
            "w.md",
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
    );
}

/// Raw write of `content` over `name` as `writer` (or anonymously with `None`).
pub fn write_as(e: &Env, name: &str, content: &str, writer: Option<&str>, extra: &[&str]) -> Run {
    let mut args: Vec<&str> = Vec::new();
    if let Some(w) = writer {
        args.extend(["--as", w]);
    }
    args.extend_from_slice(extra);
    e.write(name, content, &args)
}
