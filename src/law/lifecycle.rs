//! The verified git lifecycle: what must be true in the repository before a board records a
//! commit, a merge or a cleanup, and which of those checks apply to a board.
//!
//! The checks are a table ([`CHECKS`]) read by `advance` and `validate`. They apply
//! when the board records a repository (`repo_root`, set by `pair worktree create`); a board
//! without one (plan-only work, docs, a worktree named by `advance CODING --worktree` alone)
//! moves as before.
//!
//! Where they run, and why there is still one law. The law ([`crate::law::judge`]) is a pure
//! function of two frontmatters: it cannot ask git anything. So the command gathers what git
//! says *before* the locked write ([`crate::repo::lifecycle::observe`], like the pins' [`crate::repo::pin::observe_diff`]),
//! and hands those [`Facts`] to the `advance` operation, which holds them against the board it
//! edits under the lock with the pure [`verify`] (refusing them as stale when the recorded
//! fields they were read for moved meanwhile). A failed check refuses the step (exit 6) unless
//! the user waived it (`--waive REASON`), and the waiver is recorded in `## Decisions` with the
//! checks it overrode ([`rule`]). The law keeps the one thing it can judge without git: a raw
//! write (`pair write --as`) may not take these steps on a board with a recorded repository,
//! because nothing would have checked them ([`raw_step_refusal`]).

use crate::board::frontmatter::{Frontmatter, Phase, Target, Timestamp};
use crate::error::{Error, Flag, Hint, Result};
use crate::law::Consent;

/// When a check applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// The board records a repository (`repo_root`).
    Repo,
    /// The board records a repository and a topic branch.
    TopicBranch,
    /// The board records a repository and a `base_sha`.
    BaseSha,
    /// The board requires checks (`required_checks`).
    RequiredChecks,
    /// The board records a worktree: code submissions pin its diffs and trees.
    Worktree,
}

/// One check of the lifecycle.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    pub name: &'static str,
    /// The step it guards (`advance` to this phase; CODING also `submit code`'s pins).
    pub step: &'static str,
    pub applies: Applies,
    pub rule: &'static str,
}

/// Every check of the lifecycle, in the order the steps come.
#[rustfmt::skip]
pub const CHECKS: &[Check] = &[
    Check { name: "worktree-of-repository", step: "advance … --worktree",  applies: Applies::Repo,           rule: "the path is the top of a worktree of the recorded repository" },
    Check { name: "diff-pinned",            step: "submit code/followup",  applies: Applies::Worktree,       rule: "the staged/unstaged diff and its git tree are pinned; a verdict is refused (exit 3) if either changed" },
    Check { name: "commit-exists",          step: "COMMITTED",             applies: Applies::Repo,           rule: "the commit (--commit-sha, default the worktree's HEAD) exists" },
    Check { name: "commit-on-topic-branch", step: "COMMITTED",             applies: Applies::TopicBranch,    rule: "the commit is on the topic branch" },
    Check { name: "commit-descends-from-base", step: "COMMITTED",          applies: Applies::BaseSha,        rule: "base_sha is an ancestor of the commit" },
    Check { name: "commit-tree-approved",   step: "COMMITTED",             applies: Applies::Repo,           rule: "the commit's tree is the tree of the last approved code round" },
    Check { name: "required-checks-passed", step: "COMMITTED",             applies: Applies::RequiredChecks, rule: "each required check's latest run passed on the approved tree" },
    Check { name: "merged-branch-contains-commit", step: "MERGED",         applies: Applies::Repo,           rule: "the --merged-into branch is not the topic branch, exists and contains the commit" },
    Check { name: "merge-brings-no-unreviewed-commit", step: "MERGED",     applies: Applies::TopicBranch,    rule: "no commit the topic branch gained after the verified one is in the --merged-into branch" },
    Check { name: "worktree-removed",       step: "CLEANED_UP",            applies: Applies::Repo,           rule: "the worktree directory is gone and git no longer lists it" },
    Check { name: "topic-branch-deleted",   step: "CLEANED_UP",            applies: Applies::TopicBranch,    rule: "the topic branch is deleted (or kept with --keep-branch, recorded)" },
];

/// Whether a check applies to a board.
pub fn applies(fm: &Frontmatter, a: Applies) -> bool {
    let repo = fm.audit.repo_root.is_some();
    match a {
        Applies::Repo => repo,
        Applies::TopicBranch => repo && fm.audit.topic_branch.is_some(),
        Applies::BaseSha => repo && fm.audit.base_sha.is_some(),
        Applies::RequiredChecks => !fm.required_checks.is_empty(),
        Applies::Worktree => fm.worktree.is_some(),
    }
}

/// Whether the git lifecycle is verified for this board at all.
pub fn verified(fm: &Frontmatter) -> bool {
    applies(fm, Applies::Repo)
}

/// The recorded fields an observation was made for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Basis {
    pub repo_root: Option<String>,
    pub worktree: Option<String>,
    pub base_sha: Option<String>,
    pub topic_branch: Option<String>,
    pub commit_sha: Option<String>,
    pub approved_tree: Option<String>,
}

impl Basis {
    pub fn of(fm: &Frontmatter) -> Basis {
        Basis {
            repo_root: fm.audit.repo_root.clone(),
            worktree: fm.worktree.clone(),
            base_sha: fm.audit.base_sha.clone(),
            topic_branch: fm.audit.topic_branch.clone(),
            commit_sha: fm.audit.commit_sha.clone(),
            approved_tree: approved_tree(fm).map(str::to_string),
        }
    }
}

/// The tree of the code round the board is at (the approved one at READY_TO_COMMIT).
pub fn approved_tree(fm: &Frontmatter) -> Option<&str> {
    fm.pin(Target::Code).and_then(|p| p.tree.as_deref())
}

/// What git said about a commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitFacts {
    /// The commit as given (or the worktree's HEAD).
    pub asked: String,
    /// Its full id; `None`: no such commit.
    pub sha: Option<String>,
    /// On the topic branch (`None`: no topic branch recorded); `Some(false)` also when the
    /// branch does not exist.
    pub on_branch: Option<bool>,
    pub topic_exists: bool,
    pub descends: Option<bool>,
    pub tree: Option<String>,
    /// `STATUS\tPATH` of each file that differs from the approved tree.
    pub differs: Vec<String>,
}

/// What git said about a merge target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeFacts {
    pub branch: String,
    pub exists: bool,
    pub contains: bool,
    /// Commits of the topic branch after the verified one that the branch contains (unreviewed
    /// content merged along with the commit), newest first.
    pub beyond: Vec<String>,
}

/// What the file system and git said about a cleanup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanupFacts {
    pub worktree_exists: bool,
    /// The files of the worktree no commit holds as they are (for which `git worktree remove`
    /// refuses it), as git names them.
    pub uncommitted: Vec<String>,
    pub worktree_listed: bool,
    pub branch_exists: bool,
}

/// The observation for one step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Step {
    #[default]
    None,
    Commit(CommitFacts),
    Merge(MergeFacts),
    Cleanup(CleanupFacts),
}

/// What git said, and what it was asked about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub basis: Basis,
    pub step: Step,
}

/// A check that did not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub check: &'static str,
    pub message: String,
}

/// What the checks of a step found: the ones that held (in words) and the ones that did not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    pub passed: Vec<String>,
    pub failed: Vec<Failure>,
}

impl Outcome {
    fn fail(&mut self, check: &'static str, message: String) {
        self.failed.push(Failure { check, message });
    }
}

fn short(s: &str) -> &str {
    &s[..s.len().min(12)]
}

/// Hold the facts against the board as it is under the lock: pure. `Err` (stale, exit 3) when
/// the recorded fields they were read for changed meanwhile.
pub fn verify(
    fm: &Frontmatter,
    to: Phase,
    facts: Option<&Facts>,
    keep_branch: bool,
) -> Result<Outcome> {
    let mut out = Outcome::default();
    let steps = matches!(to, Phase::Committed | Phase::Merged | Phase::CleanedUp);
    if to == Phase::Committed {
        required_checks(fm, &mut out);
    }
    if !verified(fm) || !steps {
        return Ok(out);
    }
    let stale = || {
        Error::stale_artifact(
            "the repository fields on the blackboard (repo_root, worktree, base_sha, \
                  topic_branch, commit_sha or the code pin) changed while git was being read; \
                  run the command again",
            Some(crate::error::Hint::Rerun { add: vec![] }),
        )
    };
    let Some(facts) = facts.filter(|f| f.basis == Basis::of(fm)) else {
        return Err(stale());
    };
    let topic = fm.audit.topic_branch.as_deref().unwrap_or("(none)");
    match (&facts.step, to) {
        (Step::Commit(c), Phase::Committed) => commit_checks(fm, c, topic, &mut out),
        (Step::Merge(m), Phase::Merged) => {
            let commit = fm.audit.commit_sha.as_deref().unwrap_or("(none)");
            if Some(m.branch.as_str()) == fm.audit.topic_branch.as_deref() {
                out.fail(
                    "merged-branch-contains-commit",
                    format!(
                        "{} is the topic branch the commit was made on, not a branch it was \
                         merged into; name the branch you merged it into (e.g. {})",
                        m.branch,
                        fm.audit.base_branch.as_deref().unwrap_or("the base branch")
                    ),
                );
            } else if !m.exists {
                out.fail(
                    "merged-branch-contains-commit",
                    format!(
                        "there is no branch {:?} in {}; name the branch the commit was merged \
                         into",
                        m.branch,
                        fm.audit.repo_root.as_deref().unwrap_or_default()
                    ),
                );
            } else if !m.contains {
                out.fail(
                    "merged-branch-contains-commit",
                    format!(
                        "branch {} does not contain commit {}; merge it first (`git merge {}`)",
                        m.branch,
                        short(commit),
                        topic
                    ),
                );
            } else {
                out.passed.push(format!(
                    "branch {} contains commit {}",
                    m.branch,
                    short(commit)
                ));
                if m.beyond.is_empty() {
                    if fm.audit.topic_branch.is_some() {
                        out.passed.push(format!(
                            "branch {} holds no commit of {topic} after {}",
                            m.branch,
                            short(commit)
                        ));
                    }
                } else {
                    let shown: Vec<&str> = m.beyond.iter().take(5).map(|c| short(c)).collect();
                    let more = match m.beyond.len() {
                        n if n > 5 => format!(" and {} more", n - 5),
                        _ => String::new(),
                    };
                    out.fail(
                        "merge-brings-no-unreviewed-commit",
                        format!(
                            "branch {} also holds {} commit(s) of {topic} made after the verified \
                             commit {} ({}{more}): that content was not reviewed; merge the \
                             verified commit itself (`git merge {}`), or record why it may stay \
                             with --waive REASON",
                            m.branch,
                            m.beyond.len(),
                            short(commit),
                            shown.join(", "),
                            commit
                        ),
                    );
                }
            }
        }
        (Step::Cleanup(c), Phase::CleanedUp) => {
            let wt = fm.worktree.as_deref().unwrap_or_default();
            match (c.worktree_exists, c.worktree_listed) {
                (false, false) => out.passed.push(format!("worktree {wt} is removed")),
                (true, _) if c.uncommitted.is_empty() => out.fail(
                    "worktree-removed",
                    format!("the worktree {wt} is still there; remove it with `git worktree remove {wt}`"),
                ),
                (true, _) => {
                    let shown: Vec<&str> = c.uncommitted.iter().take(5).map(String::as_str).collect();
                    let more = match c.uncommitted.len() {
                        n if n > 5 => format!(" and {} more", n - 5),
                        _ => String::new(),
                    };
                    out.fail(
                        "worktree-removed",
                        format!(
                            "the worktree {wt} is still there, with files no commit holds ({}{more}), \
                             so `git worktree remove {wt}` refuses it: keep what is needed elsewhere, \
                             then remove it with `git worktree remove --force {wt}`",
                            shown.join(", ")
                        ),
                    )
                }
                (false, true) => out.fail(
                    "worktree-removed",
                    format!(
                        "the worktree {wt} is gone but git still lists it; run `git worktree prune`"
                    ),
                ),
            }
            if applies(fm, Applies::TopicBranch) {
                match (c.branch_exists, keep_branch) {
                    (false, _) => out.passed.push(format!("topic branch {topic} is deleted")),
                    (true, true) => out.passed.push(format!("topic branch {topic} is kept (--keep-branch)")),
                    (true, false) => out.fail(
                        "topic-branch-deleted",
                        format!(
                            "the topic branch {topic} still exists; delete it (`git branch -d {topic}`) \
                             or keep it on purpose with --keep-branch"
                        ),
                    ),
                }
            }
        }
        _ => return Err(stale()),
    }
    Ok(out)
}

fn commit_checks(fm: &Frontmatter, c: &CommitFacts, topic: &str, out: &mut Outcome) {
    let root = fm.audit.repo_root.as_deref().unwrap_or_default();
    let Some(sha) = &c.sha else {
        out.fail(
            "commit-exists",
            format!("commit {:?} does not exist in {root}", c.asked),
        );
        return;
    };
    out.passed.push(format!("commit {} exists", short(sha)));
    match c.on_branch {
        Some(true) => out.passed.push(format!("it is on {topic}")),
        Some(false) if !c.topic_exists => out.fail(
            "commit-on-topic-branch",
            format!(
                "the topic branch {topic} does not exist, so commit {} is not on it",
                short(sha)
            ),
        ),
        Some(false) => out.fail(
            "commit-on-topic-branch",
            format!("commit {} is not on the topic branch {topic}", short(sha)),
        ),
        None => {}
    }
    let base = fm.audit.base_sha.as_deref().unwrap_or_default();
    match c.descends {
        Some(true) => out
            .passed
            .push(format!("it descends from base_sha {}", short(base))),
        Some(false) => out.fail(
            "commit-descends-from-base",
            format!(
                "commit {} does not descend from base_sha {}",
                short(sha),
                short(base)
            ),
        ),
        None => {}
    }
    let round = fm.code_review_round;
    match (approved_tree(fm), &c.tree) {
        (Some(a), Some(t)) if a == t => out.passed.push(format!(
            "its tree {} is the approved tree of code round {round}",
            short(t)
        )),
        (Some(a), Some(t)) => out.fail(
            "commit-tree-approved",
            format!(
                "the tree of commit {} ({}) is not the approved tree of code round {round} ({}); \
                 files that differ from what was approved:\n{}",
                short(sha),
                short(t),
                short(a),
                if c.differs.is_empty() {
                    "  (none listed)".to_string()
                } else {
                    c.differs
                        .iter()
                        .map(|l| format!("  {}", l.replace('\t', " ")))
                        .collect::<Vec<_>>()
                        .join("\n")
                }
            ),
        ),
        (None, _) => out.fail(
            "commit-tree-approved",
            format!(
                "code round {round} pinned no tree, so the commit cannot be held to what was \
                 approved (resubmit the code with this version of pair)"
            ),
        ),
        (Some(_), None) => {}
    }
}

/// Each required check's latest run must have run its command on the approved tree and passed.
fn required_checks(fm: &Frontmatter, out: &mut Outcome) {
    let approved = approved_tree(fm);
    for req in &fm.required_checks {
        let name = &req.name;
        let run = fm.check_runs.iter().find(|r| &r.name == name);
        let message = match (run, approved) {
            (None, _) => Some(format!(
                "required check {name} has not run; run `pair check BOARD --name {name}`"
            )),
            (Some(r), _) if r.command != req.argv() => Some(format!(
                "required check {name}'s latest run ran {:?}, not its required command {:?}",
                r.command.join(" "),
                req.command
            )),
            (Some(_), None) => Some(format!(
                "required check {name} cannot be tied to the approved code: the code round \
                 pinned no tree"
            )),
            (Some(r), Some(a)) if r.tree != a => Some(format!(
                "required check {name} last ran on tree {}, not on the approved tree {}; run it \
                 again on the approved content (`pair check BOARD --name {name}`)",
                short(&r.tree),
                short(a)
            )),
            (Some(r), _) if !r.passed() => Some(format!(
                "required check {name} failed on the approved tree (exit {}, by {} at {})",
                r.exit_code.map_or("by signal".into(), |c| c.to_string()),
                r.agent,
                r.at
            )),
            (Some(r), _) => {
                out.passed.push(format!(
                    "required check {name} passed on the approved tree ({} at {})",
                    r.agent, r.at
                ));
                None
            }
        };
        if let Some(m) = message {
            out.fail("required-checks-passed", m);
        }
    }
}

/// Refuse a step whose checks failed, or, when the user waived it, the record of the waiver
/// (heading, text) for `## Decisions`.
pub fn rule(
    out: &Outcome,
    consent: &Consent,
    from: Phase,
    to: Phase,
    agent: &str,
    now: Timestamp,
) -> Result<Option<(String, String)>> {
    if out.failed.is_empty() {
        return Ok(None);
    }
    let list = out
        .failed
        .iter()
        .map(|f| format!("- {}: {}", f.check, f.message))
        .collect::<Vec<_>>()
        .join("\n");
    let Some(reason) = &consent.waive else {
        return Err(Error::refused(
            format!(
                "{from} → {to}: {} of the git lifecycle failed:\n{list}\nFix it and run the \
                 command again; only if the user explicitly waived this, add --waive REASON",
                if out.failed.len() == 1 {
                    "a check"
                } else {
                    "checks"
                }
            ),
            Hint::Rerun {
                add: vec![Flag::with("--waive", "REASON")],
            },
        ));
    };
    Ok(Some((
        format!("Lifecycle check waived — {from} → {to} — {agent} — {now}"),
        format!(
            "The user waived the failed checks:\n\n{list}\n\nReason: {}",
            reason.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    )))
}

/// The law's part: a raw write may not take a verified step (COMMITTED, MERGED, CLEANED_UP) on
/// a board that records a repository, since nothing checked git for it; nor may it change
/// `check_runs`, the evidence `advance COMMITTED` reads, which only a run of `pair check` makes.
pub fn raw_step_refusal(old: &Frontmatter, new: &Frontmatter) -> Option<String> {
    if old.check_runs != new.check_runs {
        return Some(
            "field `check_runs` records runs that `pair check` made and timed in the worktree; \
             a raw write cannot record one. Run the check: `pair check BOARD --agent ID --name \
             NAME` (or `--reproduce NAME`)"
                .to_string(),
        );
    }
    let step = matches!(
        new.phase,
        Phase::Committed | Phase::Merged | Phase::CleanedUp
    );
    (verified(old) && step && old.phase != new.phase).then(|| {
        format!(
            "field `phase`: {} → {} on a board that records a repository is checked against git \
             (the commit, the merge, the cleanup); a raw write cannot be. Use `pair advance \
             BOARD {}` (with --waive REASON if the user waived a check)",
            old.phase, new.phase, new.phase
        )
    })
}

/// The checks and whether each applies to this board, for `validate`.
pub fn applicable(fm: &Frontmatter) -> Vec<(&'static Check, bool)> {
    CHECKS.iter().map(|c| (c, applies(fm, c.applies))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const OTHER: &str = "1111111111111111111111111111111111111111";

    /// A board at READY_TO_COMMIT that records its repository, with an approved code round
    /// pinned at TREE and one required check.
    fn board(extra: &str) -> Frontmatter {
        let text = format!(
            "---\nphase: READY_TO_COMMIT\nphase_updated_at: \"2026-01-01T00:00:00Z\"\nwork_type: feature\n\
             rca_required: false\nred_test_required: false\nrequired_reviewers: [alice]\n\
             analysis_revision: 0\nplan_revision: 1\nred_test_round: 0\ncode_review_round: 1\n\
             pins:\n  code:\n    counter: 1\n    kind: staged\n    sha256: \"{}\"\n    tree: \"{TREE}\"\n\
             worktree: /r/.worktrees/t\nrepo_root: /r\nbase_sha: \"{OTHER}\"\ntopic_branch: pair/t\n\
             {extra}agents:\n  doer:\n    role: doer\n    status: WORKING\n  alice:\n    role: reviewer\n\
             \x20   status: APPROVED\n    reviewed_code_round: 1\n    code_verdict: APPROVED\n\
             \x20   reviewed_code_sha256: \"{}\"\n---\n",
            "a".repeat(64),
            "a".repeat(64)
        );
        crate::law::validate::check_bytes(text.as_bytes())
            .unwrap_or_else(|r| panic!("{:?}", r.errors))
            .parsed
            .fm
    }

    fn commit(fm: &Frontmatter, c: CommitFacts) -> Facts {
        Facts {
            basis: Basis::of(fm),
            step: Step::Commit(c),
        }
    }

    fn good() -> CommitFacts {
        CommitFacts {
            asked: "abcd".into(),
            sha: Some(OTHER.into()),
            on_branch: Some(true),
            topic_exists: true,
            descends: Some(true),
            tree: Some(TREE.into()),
            differs: vec![],
        }
    }

    fn failed(fm: &Frontmatter, c: CommitFacts) -> Vec<&'static str> {
        verify(fm, Phase::Committed, Some(&commit(fm, c)), false)
            .expect("not stale")
            .failed
            .iter()
            .map(|f| f.check)
            .collect()
    }

    #[test]
    fn each_failed_commit_check_is_named_by_its_row_of_the_table() {
        let fm = board("");
        assert!(failed(&fm, good()).is_empty());
        let cases: Vec<(CommitFacts, &str)> = vec![
            (
                CommitFacts {
                    sha: None,
                    ..good()
                },
                "commit-exists",
            ),
            (
                CommitFacts {
                    on_branch: Some(false),
                    ..good()
                },
                "commit-on-topic-branch",
            ),
            (
                CommitFacts {
                    descends: Some(false),
                    ..good()
                },
                "commit-descends-from-base",
            ),
            (
                CommitFacts {
                    tree: Some(OTHER.into()),
                    differs: vec!["M\tlib.rs".into()],
                    ..good()
                },
                "commit-tree-approved",
            ),
        ];
        for (facts, name) in cases {
            assert_eq!(failed(&fm, facts), [name]);
            assert!(CHECKS.iter().any(|c| c.name == name));
        }
    }

    #[test]
    fn facts_read_for_other_recorded_fields_are_stale() {
        let fm = board("");
        let mut facts = commit(&fm, good());
        facts.basis.topic_branch = Some("other".into());
        let e = verify(&fm, Phase::Committed, Some(&facts), false).unwrap_err();
        assert_eq!(e.code(), crate::error::exit::STALE);
        assert!(verify(&fm, Phase::Committed, None, false).is_err());
    }

    #[test]
    fn a_required_check_counts_only_as_a_pass_of_its_command_on_the_approved_tree() {
        let run = |tree: &str, exit: i32, cmd: &str| {
            format!(
                "required_checks:\n  tests: \"make test\"\ncheck_runs:\n  tests:\n    command: \
                 [\"sh\", \"-c\", \"{cmd}\"]\n    exit_code: {exit}\n    tree: \"{tree}\"\n    \
                 duration_ms: 5\n    agent: alice\n    at: \"2026-01-01T00:00:00Z\"\n"
            )
        };
        let check = |extra: &str| failed(&board(extra), good());
        assert!(check(&run(TREE, 0, "make test")).is_empty());
        for bad in [
            run(OTHER, 0, "make test"),
            run(TREE, 2, "make test"),
            run(TREE, 0, "true"),
            "required_checks:\n  tests: \"make test\"\n".to_string(),
        ] {
            assert_eq!(check(&bad), ["required-checks-passed"], "{bad}");
        }
    }

    #[test]
    fn a_waiver_turns_failures_into_a_record_and_without_one_they_refuse() {
        let out = Outcome {
            passed: vec![],
            failed: vec![Failure {
                check: "worktree-removed",
                message: "still there".into(),
            }],
        };
        let now = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
        let e = rule(
            &out,
            &Consent::default(),
            Phase::Merged,
            Phase::CleanedUp,
            "doer",
            now,
        )
        .unwrap_err();
        assert_eq!(e.code(), crate::error::exit::PROTOCOL);
        let consent = Consent {
            waive: Some("the user keeps it".into()),
            ..Consent::default()
        };
        let (heading, text) = rule(&out, &consent, Phase::Merged, Phase::CleanedUp, "doer", now)
            .unwrap()
            .unwrap();
        assert!(heading.starts_with("Lifecycle check waived — MERGED → CLEANED_UP"));
        assert!(text.contains("worktree-removed") && text.contains("the user keeps it"));
    }

    #[test]
    fn a_board_without_a_repository_is_not_verified() {
        let fm = board("").clone();
        let mut plain = fm.clone();
        plain.audit.repo_root = None;
        assert!(!verified(&plain));
        assert!(
            verify(&plain, Phase::Committed, None, false)
                .unwrap()
                .failed
                .is_empty()
        );
        assert!(
            raw_step_refusal(&plain, &{
                let mut n = plain.clone();
                n.phase = Phase::Committed;
                n
            })
            .is_none()
        );
        let mut moved = fm.clone();
        moved.phase = Phase::Committed;
        assert!(raw_step_refusal(&fm, &moved).is_some());
    }
}
