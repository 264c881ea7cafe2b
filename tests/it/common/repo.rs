//! A board with a real git repository and worktree (`Lc`), and the trees it pins.

use crate::common::*;
use crate::proto::*;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

/// A repository with one commit and a blackboard in it, driven to PLAN_APPROVED with one
/// required reviewer (alice).
pub(crate) struct Lc {
    _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) board: String,
}

impl Lc {
    pub(crate) fn new(init: &[&str]) -> Lc {
        Lc::new_ignoring(
            "*.md.lock\n*.md.lock.owner.json\n.worktrees/\ntask.md\n",
            init,
        )
    }

    /// [`Lc::new`] in a repository whose `.gitignore` is `ignore`.
    pub(crate) fn new_ignoring(ignore: &str, init: &[&str]) -> Lc {
        let lc = Lc::bare_ignoring(ignore, init);
        lc.ok("alice", &["register"]);
        lc.ok("doer", &["advance", "PLANNING", "--user-approved"]);
        lc.ok(
            "doer",
            &["submit", "plan", "--note", "the plan", "--user-approved"],
        );
        lc.ok(
            "alice",
            &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
        );
        lc
    }

    /// The repository and the blackboard, in DRAFT.
    pub(crate) fn bare(init: &[&str]) -> Lc {
        Lc::bare_ignoring(
            "*.md.lock\n*.md.lock.owner.json\n.worktrees/\ntask.md\n",
            init,
        )
    }

    fn bare_ignoring(ignore: &str, init: &[&str]) -> Lc {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap().join("repo");
        fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        fs::write(root.join("lib.txt"), "one\n").unwrap();
        fs::write(root.join(".gitignore"), ignore).unwrap();
        git(&root, &["add", "lib.txt", ".gitignore"]);
        git(&root, &["commit", "-q", "-m", "base"]);
        let board = root.join("task.md").to_str().unwrap().to_string();
        let mut args = vec!["init", board.as_str(), "--reviewers", "alice"];
        args.extend_from_slice(init);
        pair(&args).code(0);
        Lc {
            _dir: dir,
            root,
            board,
        }
    }

    pub(crate) fn wt(&self) -> PathBuf {
        self.root.join(".worktrees").join("task")
    }

    pub(crate) fn run(&self, actor: &str, words: &[&str]) -> Out {
        let mut v = vec![words[0].to_string(), self.board.clone()];
        if words[0] == "worktree" {
            v = vec!["worktree".into(), words[1].into(), self.board.clone()];
        }
        v.push("--agent".into());
        v.push(actor.into());
        let skip = if words[0] == "worktree" { 2 } else { 1 };
        v.extend(words[skip..].iter().map(|w| w.to_string()));
        pair(v)
    }

    #[track_caller]
    pub(crate) fn ok(&self, actor: &str, words: &[&str]) -> Out {
        let out = self.run(actor, words);
        out.code(0);
        pair(["validate", self.board.as_str()]).code(0);
        out
    }

    #[track_caller]
    pub(crate) fn refused(&self, actor: &str, words: &[&str], code: i32) -> Out {
        let before = fs::read(&self.board).unwrap();
        let out = self.run(actor, words);
        out.code(code);
        assert_eq!(
            before,
            fs::read(&self.board).unwrap(),
            "a refusal leaves the blackboard untouched\n{}",
            out.report()
        );
        out
    }

    pub(crate) fn text(&self) -> String {
        fs::read_to_string(&self.board).unwrap()
    }

    pub(crate) fn status(&self) -> Value {
        pair(["status", self.board.as_str(), "--json"]).json()
    }

    pub(crate) fn phase(&self) -> String {
        self.status()["phase"].as_str().unwrap().to_string()
    }

    pub(crate) fn field(&self, name: &str) -> Value {
        self.status()["frontmatter"][name].clone()
    }

    pub(crate) fn write(&self, file: &str, content: &str) {
        fs::write(self.wt().join(file), content).unwrap();
    }

    pub(crate) fn g(&self, args: &[&str]) -> String {
        git(&self.wt(), args)
    }

    /// Worktree made, code staged and approved in one round: READY_TO_COMMIT.
    pub(crate) fn approved(init: &[&str]) -> Lc {
        let lc = Lc::new(init);
        lc.ok("doer", &["worktree", "create", "--user-approved"]);
        lc.write("lib.txt", "one\ntwo\n");
        lc.g(&["add", "lib.txt"]);
        lc.ok("doer", &["submit", "code", "--note", "staged"]);
        lc.ok(
            "alice",
            &["verdict", "APPROVED", "--revision", "1", "--note", "lgtm"],
        );
        assert_eq!(lc.phase(), "READY_TO_COMMIT");
        lc
    }

    pub(crate) fn code_tree(&self) -> String {
        self.status()["frontmatter"]["pins"]["code"]["tree"]
            .as_str()
            .unwrap_or_else(|| panic!("the code round pins a tree\n{}", self.text()))
            .to_string()
    }
}

pub fn tree_of(dir: &Path, rev: &str) -> String {
    git(dir, &["rev-parse", &format!("{rev}^{{tree}}")])
        .trim()
        .to_string()
}

pub fn wt(p: &Proto) -> &Path {
    Path::new(&p.wt)
}
