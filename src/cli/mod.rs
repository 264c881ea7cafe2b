//! The command line: every command, flag and example. The binary parses this and hands the
//! result to [`crate::commands`]; completions and the man page are generated from it too.

pub mod ledger;
pub mod mcp;
pub mod migrate;
pub mod project;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueHint};

use crate::error::{Error, Result};
use crate::text::ColorChoice;

use crate::board::frontmatter::Phase;

const ABOUT: &str =
    "Coordinate one doer and several reviewer agents through a shared Markdown blackboard";

const LONG_ABOUT: &str = "\
pair keeps a Markdown blackboard whose YAML frontmatter is a checked state machine: the phase of
the work, revision counters and one entry per agent. Every change is one locked, hash-checked,
fsynced atomic replace, checked against the protocol.

A command's BOARD may be left out when --board PATH or $PAIR_BOARD names it.

Exit codes: 0 done (poll: your turn), 1 I/O error, 2 lock timeout, 3 stale, 4 usage error,
5 invalid blackboard, 6 protocol violation, 7 missing or already exists, 10 not your turn,
11 terminal phase, 12 blocked (poll), 14 the board's format is newer than this pair knows.";

const EXAMPLES: &str = "\
Examples:
  pair init task.md --goal 'Fix the flaky upload test' --work-type debugging
  pair poll task.md --agent doer
  pair status task.md
  pair validate blackboards/
  PAIR_BOARD=task.md pair status
  pair help poll
  pair write task.md --content-file new.md --expect-sha256 <sha256 of what you read>
  pair demo --keep /tmp/pair-demo
  pair skill > SKILL.md";

#[derive(Debug, Parser)]
#[command(
    name = "pair",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    propagate_version = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,

    #[command(subcommand)]
    pub command: Cmd,
}

/// The options every command takes (before or after its name).
#[derive(Debug, Args)]
pub struct Global {
    /// Print a machine-readable JSON result on stdout (errors as JSON on stderr).
    #[arg(long, global = true)]
    pub json: bool,

    /// Colour human output: auto (on a terminal, unless NO_COLOR is set or TERM=dumb;
    /// CLICOLOR_FORCE forces it), always or never.
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Print only errors: no result text and no warnings (--json output is unchanged).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Say on stderr what was locked, read, checked and written, with timings.
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// The blackboard of every command whose BOARD is left out [env: PAIR_BOARD, when not
    /// empty].
    #[arg(
        long = "board",
        id = "default_board",
        global = true,
        value_name = "PATH",
        value_hint = ValueHint::FilePath
    )]
    pub default_board: Option<PathBuf>,

    /// The writer's session, recorded with every write (one context of the agent program: a
    /// conversation; a review board may refuse a verdict from the session that wrote the
    /// artifact) [env: PAIR_SESSION].
    #[arg(long, global = true, value_name = "ID")]
    pub session: Option<String>,

    /// The writer's model, recorded with every write [env: PAIR_MODEL].
    #[arg(long, global = true, value_name = "NAME")]
    pub model: Option<String>,

    /// The writer's own transcript (a Claude Code session log or a Codex rollout file): every
    /// write records the tokens it gained since the writer's previous write [env:
    /// PAIR_TRANSCRIPT].
    #[arg(long, global = true, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub transcript: Option<PathBuf>,

    /// The writer's SSH key (a private key file, or a public one whose private key is in
    /// ssh-agent): every write to a signed board is signed with it (default: git's
    /// user.signingkey when gpg.format is ssh) [env: PAIR_SIGNING_KEY].
    #[arg(long, global = true, value_name = "KEY", value_hint = ValueHint::FilePath)]
    pub signing_key: Option<PathBuf>,

    /// The allowed-signers file (principals are agent ids) that a signed board's records are
    /// checked against (default: git's gpg.ssh.allowedSignersFile) [env: PAIR_ALLOWED_SIGNERS].
    #[arg(long, global = true, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub allowed_signers: Option<PathBuf>,
}

impl Global {
    /// The writer's session and model as [`Cli::resolve`] checked them.
    /// The signing key and trust root as [`Cli::resolve`] read them.
    pub fn keys(&self) -> crate::signature::Keys {
        crate::signature::Keys {
            signing_key: self.signing_key.clone(),
            allowed_signers: self.allowed_signers.clone(),
        }
    }

    pub fn origin(&self) -> crate::board::journal::Origin {
        crate::board::journal::Origin {
            session: self.session.clone(),
            model: self.model.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Create a blackboard from the template (refuses to overwrite).
    #[command(after_help = "\
Examples:
  pair init task.md --goal 'Add CSV export to the report page'
  pair init bug.md --goal-file issue.txt --work-type debugging --reviewers alice,bob
  pair init task.md --doer builder --yolo
  pair init task.md --require-check 'tests=cargo test' --require-check 'lint=cargo clippy'
  pair init task.md --reviewers alice,bob --max-rounds 3
  pair init task.md --reviewer-pool alice,bob,carol --reviews 1
  pair init task.md --reviewers alice --independent-review")]
    Init(InitArgs),

    /// Read the frontmatter and say whose turn it is (exit 0 your turn, 10 not, 11 terminal,
    /// 12 blocked).
    #[command(after_help = "\
Examples:
  pair poll task.md --agent alice
  pair poll task.md --agent alice --wait --timeout 600
  pair poll task.md --agent alice --wait --through-blocked --json
  pair poll task.md --agent alice --wait --after 12 --json
  pair poll task.md --agent alice --wait --until CLEANED_UP --json
  pair poll boards/ --agent alice --after 0 --json
  PAIR_AGENT=doer pair poll task.md --json")]
    Poll(PollArgs),

    /// Full read (whose turn, counters, reviewers, the file's SHA-256 and the body's sections).
    #[command(after_help = "\
Examples:
  pair status task.md
  pair status task.md --agent alice --json")]
    Status(StatusArgs),

    /// Check blackboards for CI (exit 5 if any is invalid).
    #[command(after_help = "\
Examples:
  pair validate task.md
  pair validate docs/blackboards/ --json
  pair validate --format github --require-some blackboards/
  git show HEAD:task.md | pair validate -")]
    Validate(ValidateArgs),

    /// Register yourself as a reviewer (`--required` if the user named you).
    #[command(after_help = "\
Examples:
  pair register task.md --agent alice
  pair register task.md --agent bob --required")]
    Register(RegisterArgs),

    /// Withdraw your registration (only with no verdicts given and not required).
    #[command(after_help = "\
Examples:
  pair unregister task.md --agent alcie")]
    Unregister(ClaimArgs),

    /// Take up the submitted artifact for review (optional; sets REVIEWING_*).
    #[command(after_help = "\
Examples:
  pair claim task.md --agent alice")]
    Claim(ClaimArgs),

    /// Submit an artifact for review: analysis, plan, red-test, code or followup.
    #[command(after_help = "\
Examples:
  pair submit task.md --agent doer plan --note-file plan.md --user-approved
  pair submit task.md --agent doer code --note 'Staged: parser fix and tests'
  pair submit task.md --agent doer red-test --note-file red.md --files tests/upload.rs
  pair submit task.md --agent doer plan --note-file plan.md --user-approved --no-review
  git diff --cached --stat | pair submit task.md --agent doer code --note-file -")]
    Submit(SubmitArgs),

    /// Your verdict on the revision under review.
    #[command(after_help = "\
Examples:
  pair verdict task.md --agent alice APPROVED --revision 2 --note 'Plan is sound.'
  pair verdict task.md --agent bob CHANGES_REQUESTED --revision 2 --note-file review.md
  pair verdict task.md --agent bob APPROVED --revision 3 --artifact-sha256 9f86d0… --note-file review.md
  pair verdict task.md --agent bob UNABLE --revision 3 --reason 'the tests could not run: disk full'")]
    Verdict(VerdictArgs),

    /// Hand your role to another agent.
    ///
    /// (The doer's role or a required reviewer's place; it stays yours until the incoming
    /// agent runs `acknowledge`, and the record carries your summary with the brief material.)
    #[command(after_help = "\
Examples:
  pair handoff task.md --agent alice --to carol --summary 'Plan 2 is next; BLK-1 still open'
  pair handoff task.md --agent bob --to dave --user-approved
  pair handoff task.md --agent alice --withdraw")]
    Handoff(HandoffArgs),

    /// Take a role handed to you.
    ///
    /// (Read `brief` first: it carries the outgoing agent's summary.)
    #[command(after_help = "\
Examples:
  pair acknowledge task.md --agent carol")]
    Acknowledge(ClaimArgs),

    /// Answer, as a fresh dissenter, a gate the reviewers passed.
    #[command(after_help = "\
Examples:
  pair dissent task.md --agent dave none --revision 2 --note 'The cap holds; nothing else found'
  pair dissent task.md --agent dave blocking --revision 2 --objections BLK-1,REG-1 --note-file dissent.md
  pair dissent task.md --agent dave advisory --revision 2 --note 'ADV-1 logged'")]
    Dissent(DissentArgs),

    /// Move the phase on (the doer's transitions of the protocol).
    #[command(after_help = "\
Examples:
  pair advance task.md --agent doer PLANNING --user-approved
  pair advance task.md --agent doer CODING --worktree /repo/.worktrees/task --user-approved
  pair advance task.md --agent doer COMMITTED --commit-sha 1a2b3c4 --user-approved
  pair advance task.md --agent doer COMMITTED --user-approved   # HEAD of the recorded worktree
  pair advance task.md --agent doer MERGED --merged-into main --user-approved
  pair advance task.md --agent doer CLEANED_UP
  pair advance task.md --agent doer CLEANED_UP --keep-branch
  pair advance task.md --agent doer COMMITTED --user-approved --waive 'user: commit as is'")]
    Advance(AdvanceArgs),

    /// Block the work (any agent) until the doer unblocks it.
    #[command(after_help = "\
Examples:
  pair block task.md --agent alice --reason 'The staging database is down'")]
    Block(ReasonArgs),

    /// Resume blocked work where it stopped (the doer).
    #[command(after_help = "\
Examples:
  pair unblock task.md --agent doer --reason 'Database is back'")]
    Unblock(ReasonArgs),

    /// Stop the workflow because the user asked to (any agent).
    #[command(after_help = "\
Examples:
  pair stop task.md --agent doer --reason 'User cancelled the task'")]
    Stop(ReasonArgs),

    /// Append a note to a section of the body.
    #[command(after_help = "\
Examples:
  pair note task.md --agent doer --section Evidence --note 'Fails on 3 of 10 runs'
  cargo test 2>&1 | tail -20 | pair note task.md --agent doer --section Validation --code --note-file -")]
    Note(NoteArgs),

    /// Correct your own review after its round has closed (a reviewer; the verdict stands, and
    /// the correction is shown beside the review).
    #[command(after_help = "\
Examples:
  pair correct task.md --agent alice --note-file correction.md
  pair correct task.md --agent alice --review analysis:1 --note 'Line 42 is fine: the lock is held there'")]
    Correct(CorrectArgs),

    /// Print exactly the artifact under review (the pinned diff or text); its SHA-256 on stderr.
    #[command(after_help = "\
Examples:
  pair diff task.md
  pair diff task.md --stat
  pair diff task.md --json
  pair diff task.md | sha256sum")]
    Diff(DiffArgs),

    /// Print the default worktree path for a blackboard.
    #[command(after_help = "\
Examples:
  pair worktree-path task.md
  pair worktree-path task.md --repo-root /src/app --json")]
    WorktreePath(WorktreePathArgs),

    /// Raw compare-and-swap write of a complete new file.
    #[command(after_help = "\
Examples:
  pair write task.md --content-file new.md --expect-sha256 3f2a…  --operation plan-review
  pair write --path task.md --content-file new.md --create-if-missing
  generate-board | pair write task.md --content-file - --create-if-missing")]
    Write(WriteArgs),

    /// Run a scripted debugging task: a doer, two reviewers and a dissenter, each a separate
    /// `pair` process.
    #[command(after_help = "\
Examples:
  pair demo
  pair demo --keep /tmp/pair-demo && pair status /tmp/pair-demo/task.md
  pair demo --json")]
    Demo(DemoArgs),

    /// One agent of `pair demo` (internal: run by the demo, not by hand).
    #[command(
        hide = true,
        after_help = "\
Examples:
  pair demo-agent --role reviewer --id alice --board task.md"
    )]
    DemoAgent(DemoAgentArgs),

    /// Print the agent skill (how a doer or reviewer agent runs the protocol with `pair`).
    #[command(after_help = "\
Examples:
  pair skill
  mkdir -p .claude/skills/pair && pair skill > .claude/skills/pair/SKILL.md")]
    Skill(SkillArgs),

    /// Print a shell completion script.
    #[command(after_help = "\
Examples:
  pair completions bash > ~/.local/share/bash-completion/completions/pair
  pair completions zsh > ~/.zfunc/_pair
  pair completions fish > ~/.config/fish/completions/pair.fish")]
    Completions(CompletionsArgs),

    /// Print the man page (roff), one command's page, or write every page to a directory.
    #[command(after_help = "\
Examples:
  pair man > pair.1 && man ./pair.1
  pair man poll | man -l -
  pair man --dir ~/.local/share/man/man1")]
    Man(ManArgs),

    /// Print the help of pair, or of one command.
    #[command(after_help = "\
Examples:
  pair help
  pair help advance")]
    Help(HelpArgs),

    /// Make the coding worktree with git and record it (`worktree create`, the doer, out of
    /// PLAN_APPROVED).
    #[command(after_help = "\
Examples:
  pair worktree create task.md --agent doer --user-approved
  pair worktree create task.md --agent doer --branch fix/upload --path /src/app/.worktrees/upload --user-approved --json")]
    Worktree(WorktreeArgs),

    /// Run a check command in the recorded worktree and record it in Validation (with the tree it
    /// ran on).
    #[command(after_help = "\
Examples:
  pair check task.md --agent doer --name tests -- cargo test
  pair check task.md --agent doer --name tests        # a required check: its recorded command
  pair check task.md --agent alice --reproduce tests --yes  # re-run it cold and compare
  pair check task.md --agent doer --name tests --needs .env --setup 'cp .env.example .env' -- make test
  pair check task.md --agent doer --json -- make lint
  pair check task.md --agent doer --time-limit 600 --name tests -- cargo test")]
    Check(CheckArgs),

    /// Print the artifact under review with its round's reviews and open objections (or the
    /// newest entry with --latest, one objection with --id, or a section).
    #[command(after_help = "\
Examples:
  pair show task.md --latest
  pair show task.md
  pair show task.md 'Plan Reviews'
  pair show task.md --id BLK-1
  pair show task.md Decisions --latest --json
  PAIR_BOARD=task.md pair show 'Root Cause Analysis'")]
    Show(ShowArgs),

    /// Print one Markdown document that rebuilds an agent's context (from the blackboard alone).
    #[command(after_help = "\
Examples:
  pair brief task.md --for doer
  pair brief task.md --for reviewer --agent alice
  pair brief task.md --for reviewer --agent alice --json")]
    Brief(BriefArgs),

    /// Raise an objection (a reviewer, on the artifact under review): prints its id.
    #[command(after_help = "\
Examples:
  pair object task.md --agent alice --severity blocking --anchor src/upload.rs:42 \\
      --title 'Retry loop never ends' --evidence-file ev.md --fix 'Cap retries at 5'
  pair object task.md --agent alice --severity advisory --anchor 'src/upload.rs#retry_budget' \\
      --title 'Name the budget' --evidence 'Magic number' --fix 'A named constant'
  pair object task.md --agent alice --severity blocking --regression-of BLK-1 \\
      --anchor src/upload.rs:50 --title 'Fix drops errors' --evidence-file ev.md --fix-file fix.md
  pair object task.md --agent bob --severity blocking --anchor src/db.rs:7 \\
      --undeclared-impact 'upload.rs now holds the pool lock' --title … --evidence … --fix …")]
    Object(crate::cli::ledger::ObjectArgs),

    /// Say how an objection was fixed (the doer, while revising; once its gate has closed,
    /// naming the submission that fixed it with --fixed-in).
    #[command(after_help = "\
Examples:
  pair resolve task.md BLK-1 --agent doer --resolution 'Retries capped at 5' --surfaces src/upload.rs
  pair resolve task.md BLK-2 --agent doer --resolution-file fix-blk-2.md
  pair resolve task.md ADV-1 --agent doer --fixed-in code:2 --resolution 'The constant is named now'")]
    Resolve(crate::cli::ledger::ResolveArgs),

    /// Dispute an objection (the doer); the arbiter rules on it.
    #[command(after_help = "\
Examples:
  pair challenge task.md BLK-3 --agent doer --grounds 'SPEC §6 allows this: the lock is held'
  pair challenge task.md BLK-3 --agent doer --grounds-file grounds.md")]
    Challenge(crate::cli::ledger::ChallengeArgs),

    /// Rule on a challenge (uphold or overrule), or reject a rework (the arbiter).
    #[command(after_help = "\
Examples:
  pair rule task.md BLK-3 uphold --agent alice --reason 'The lock is not held on the error path'
  pair rule task.md BLK-4 overrule --agent doer --user-approved --reason 'The user agrees: out of scope'
  pair rule task.md rework reject-rework --agent alice --reason 'BLK-1 needed a one-line fix'")]
    Rule(crate::cli::ledger::RuleArgs),

    /// Accept the resolution of your objection (the reviewer who raised it).
    #[command(after_help = "\
Examples:
  pair accept task.md BLK-1 --agent alice")]
    Accept(crate::cli::ledger::AcceptArgs),

    /// Reopen your objection: its resolution does not fix it.
    #[command(after_help = "\
Examples:
  pair reopen task.md BLK-1 --agent alice --reason 'Still loops when the server returns 503'")]
    Reopen(crate::cli::ledger::ReopenArgs),

    /// Withdraw your objection.
    #[command(after_help = "\
Examples:
  pair withdraw task.md ADV-2 --agent alice --reason 'Covered by BLK-1'")]
    Withdraw(crate::cli::ledger::ReopenArgs),

    /// Second another reviewer's open objection (one finding, one objection), or withdraw your
    /// second.
    #[command(after_help = "\
Examples:
  pair second task.md BLK-1 --agent bob
  pair verdict task.md --agent bob CHANGES_REQUESTED --revision 1 --objections BLK-1 --note 'As BLK-1 says'
  pair second task.md BLK-1 --agent bob --withdraw")]
    Second(crate::cli::ledger::SecondArgs),

    /// List the objection ledger (ids, raisers, gates, rounds, anchors, states).
    #[command(after_help = "\
Examples:
  pair objections task.md
  pair objections task.md --open --json")]
    Objections(crate::cli::ledger::ObjectionsArgs),

    /// Decide a gate that reached its round cap or diverged (accept, reject or defer).
    #[command(after_help = "\
Examples:
  pair decide task.md accept --agent alice --reason 'BLK-4 is a known limitation'
  pair decide task.md reject --agent doer --user-approved --reason 'The approach cannot work'
  pair decide task.md defer --agent alice --reason 'Needs the schema change' --escalation blocked-pending:schema-v2
  pair decide task.md defer --agent doer --user-approved --reason 'Ask the team' --escalation human")]
    Decide(crate::cli::ledger::DecideArgs),
    /// Record tokens and cost of work that wrote nothing else (a journal record only).
    #[command(after_help = "\
Examples:
  pair report-usage task.md --agent alice --tokens 5400
  pair report-usage task.md --agent doer --tokens 12000 --cost 0.31 --phase PLANNING")]
    ReportUsage(ReportUsageArgs),

    /// The board's history from its journal, newest last (--follow waits for more).
    #[command(after_help = "\
Examples:
  pair log task.md
  pair log task.md --agent alice --since 2026-01-01T09:00:00Z --json
  pair log task.md --follow")]
    Log(LogArgs),

    /// Where the time and the tokens went: phases, gates, rounds, turns and responses.
    #[command(after_help = crate::stats::help())]
    Stats(StatsArgs),

    /// Change SLAs with the user's approval (recorded in Decisions with the reason).
    #[command(after_help = "\
Examples:
  pair extend task.md --agent doer --sla review=4h --reason 'Reviewer out until noon' --user-approved
  pair extend task.md --agent doer --sla review=1d,revision=6h --reason 'Holiday week' --user-approved")]
    Extend(ExtendArgs),

    /// Declare a planned absence (a usage-limit pause, a long build) so the watchdog waits.
    #[command(after_help = "\
Examples:
  pair away task.md --agent alice --until 2h --reason 'usage limit; back after the reset'
  pair away task.md --agent doer --until 2026-01-31T18:00:00Z --reason 'full test run'
  pair away task.md --agent alice --clear")]
    Away(AwayArgs),

    /// Remove a required reviewer that never registered (with the user's approval; the open
    /// round is settled on the reviewers that remain).
    #[command(after_help = "\
Examples:
  pair unrequire task.md carol --agent doer --user-approved --reason 'carol is not coming'")]
    Unrequire(UnrequireArgs),

    /// A watchdog: report stalled agents, missing reviewers, SLA breaches and dead writers.
    #[command(after_help = "\
Examples:
  pair watch task.md --once
  pair watch boards/ --interval 60 --on-stall 'notify-send \"$PAIR_AGENT stalled on $PAIR_BOARD\"'
  pair watch task.md --once --json --on-breach ./escalate.sh")]
    Watch(WatchArgs),

    /// A live dashboard of a project's boards, for a person at a terminal (whose turn, phase,
    /// time in phase, stalls and SLA breaches, the selected board's latest entries).
    #[command(after_help = "\
Keys: up/down or j/k select a board, g/G the first/last, q or Esc quits.

Examples:
  pair top boards/
  pair top task.md")]
    Top(TopArgs),

    /// Copy a blackboard between a file and a git board, byte for byte (never clobbering); or,
    /// given one board, upgrade it to the newest format this pair writes (a recorded write).
    #[command(after_help = "\
Examples:
  pair migrate task.md 'git+ssh://host/repo.git#refs/pair/task:task.md'
  pair migrate 'git+file:///srv/repo.git#refs/pair/task' task.md
  pair migrate task.md")]
    Migrate(crate::cli::migrate::MigrateArgs),

    /// Serve the agent commands as MCP tools over stdio, for one agent on one blackboard, or on
    /// a project's boards: then `next` names the board the other tools act on.
    #[command(after_help = "\
Examples:
  pair mcp task.md --agent alice
  pair mcp boards/ --agent alice
  pair mcp --board task.md --agent doer --timeout 30
  claude mcp add pair -- pair mcp --board task.md --agent alice")]
    Mcp(crate::cli::mcp::McpArgs),

    /// One line per board of a project: phase, whose turn, time in phase, round, blocking
    /// objections, stalled or breached.
    #[command(after_help = "\
Examples:
  pair ls boards/
  pair ls boards/ --sort age --state open
  pair ls 'git+file:///srv/repo.git#refs/pair/' --agent alice --json")]
    Ls(crate::cli::project::LsArgs),

    /// The one step to take next anywhere in a project (what you hold first, then new work,
    /// oldest first), with its command (exit 0 one found, 10 none, 11 you are done).
    #[command(after_help = "\
Examples:
  pair next boards/ --agent alice
  pair next boards/ --agent alice --wait --timeout 600 --json
  pair next boards/ --agent alice --max-held 2")]
    Next(crate::cli::project::NextArgs),
}

#[derive(Debug, Args)]
pub struct ExtendArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// The new limits: NAME=DURATION, comma-separated or repeated (durations like 90s, 30m, 2h,
    /// 1d, 1h30m).
    #[arg(long, required = true, value_name = "NAME=DURATION")]
    pub sla: Vec<String>,
    /// Why (recorded in Decisions).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// The user approved the change.
    #[arg(long)]
    pub user_approved: bool,
}

#[derive(Debug, Args)]
pub struct AwayArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// Until when: a UTC time (YYYY-MM-DDTHH:MM:SSZ) or a duration from now (90s, 30m, 2h, 1d,
    /// 1h30m).
    #[arg(
        long,
        value_name = "TIME",
        required_unless_present = "clear",
        conflicts_with = "clear"
    )]
    pub until: Option<String>,
    /// Why (kept with the absence).
    #[arg(
        long,
        value_name = "TEXT",
        required_unless_present = "clear",
        conflicts_with = "clear"
    )]
    pub reason: Option<String>,
    /// End the absence now (any later write of yours ends it too).
    #[arg(long)]
    pub clear: bool,
}

#[derive(Debug, Args)]
pub struct UnrequireArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// The required reviewer to remove (one that never registered).
    #[arg(value_name = "ID")]
    pub reviewer: String,
    #[command(flatten)]
    pub common: WriteCommon,
    /// Why (recorded in Decisions).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// The user approved the removal.
    #[arg(long)]
    pub user_approved: bool,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Blackboards, or directories whose blackboards are all watched.
    #[arg(required = true, value_name = "BOARD|DIR", value_hint = ValueHint::AnyPath)]
    pub board: Vec<PathBuf>,
    #[command(flatten)]
    pub caller: Caller,
    /// Check once and exit: 0 when nothing was reported, 13 when something was.
    #[arg(long)]
    pub once: bool,
    /// Seconds between checks (without --once).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub interval: f64,
    /// Run `sh -c CMD` for each stall, missing reviewer or dead writer reported (see PAIR_* in
    /// docs/protocol.md).
    #[arg(long, value_name = "CMD")]
    pub on_stall: Option<String>,
    /// Run `sh -c CMD` for each SLA breach reported.
    #[arg(long, value_name = "CMD")]
    pub on_breach: Option<String>,
    /// Kill a hook still running after this many seconds.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub hook_timeout: f64,
}

#[derive(Debug, Args)]
pub struct TopArgs {
    /// The project: a directory whose blackboards are shown (recursively), or one board.
    #[arg(value_name = "PROJECT", value_hint = ValueHint::AnyPath)]
    pub project: PathBuf,
}

#[derive(Debug, Args)]
pub struct ReportUsageArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// The phase the work belongs to (default: the current phase).
    #[arg(long, value_name = "PHASE")]
    pub phase: Option<String>,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// Only the records this agent wrote.
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Only records at or after this UTC time (YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// After the history, print each new record as it is written, until the board reaches a
    /// terminal phase or --timeout passes.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: stop after this many seconds (exit 0).
    #[arg(
        long,
        default_value_t = 3600.0,
        value_name = "SECONDS",
        requires = "follow"
    )]
    pub timeout: f64,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Blackboards to report on, each and in total.
    #[arg(required = true, value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: Vec<PathBuf>,
    #[command(flatten)]
    pub caller: Caller,
    /// Also draw a timeline to FILE: a band per visit of a phase, named where the name fits; a
    /// lane per agent with its turns, writes, verdicts and dissents and the objections it raised,
    /// from raised to settled; a lane of the user's decisions; one time axis for all the boards;
    /// a legend (docs/stats.md).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it; then a lone
    /// argument is the SECTION).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub caller: Caller,
    /// A section of the body (spelled as its `## ` heading; default: the artifact of the
    /// current round, the round's reviews and the objections still to be settled).
    #[arg(value_name = "SECTION")]
    pub section: Option<String>,
    /// Only the newest entry (the artifact alone, or the section's last entry).
    #[arg(long, conflicts_with = "id")]
    pub latest: bool,
    /// One objection (BLK-N, ADV-N, REG-N: its evidence and suggested fix, and every later
    /// entry about it, resolutions, challenges, rulings, acceptance).
    #[arg(long, value_name = "ID", conflicts_with = "section")]
    pub id: Option<String>,
}

/// Whose context `pair brief` rebuilds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BriefFor {
    Doer,
    Reviewer,
    /// The dissent stage's bundle only: task spec, artifact (and, in a revision cycle, the
    /// prior objections, resolutions, diff and impacted surfaces).
    Dissenter,
}

#[derive(Debug, Args)]
pub struct BriefArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// The role the brief is for: the doer (goal, approved plan, open review points, gates,
    /// next step) or a reviewer (task, artifact under review, prior reviews, pinned diff,
    /// without the doer's own notes).
    #[arg(long = "for", value_enum, value_name = "ROLE")]
    pub role: BriefFor,
    /// Whose next step to name (default: the doer for --for doer; for a reviewer, the first
    /// required reviewer still to vote).
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: Option<String>,
}

#[derive(Debug, Args)]
pub struct WorktreeArgs {
    #[command(subcommand)]
    pub action: WorktreeAction,
}

#[derive(Debug, Subcommand)]
pub enum WorktreeAction {
    /// Make the task's worktree on a new topic branch (recorded with the move to RED_TESTING or
    /// CODING: `git worktree add`; the repository, base branch and base commit are recorded in the
    /// same write, and RED_TESTING is the move when a red test is required).
    #[command(after_help = "\
Examples:
  pair worktree create task.md --agent doer --user-approved
  pair worktree create task.md --agent doer --branch fix/upload --user-approved")]
    Create(WorktreeCreateArgs),
}

#[derive(Debug, Args)]
pub struct WorktreeCreateArgs {
    /// The blackboard.
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// Where to make the worktree (default: what `pair worktree-path BOARD` prints).
    #[arg(long, value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// The new topic branch (default: `pair/<stem>`, the stem being the blackboard's name less
    /// `.md`).
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// The user approved this step (the human gate, unless yolo).
    #[arg(long)]
    pub user_approved: bool,
    /// The repository to make the worktree in (default: the git repository the blackboard is
    /// in; for a git board, the clone the command runs in).
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// The check's name (default: the command's program name). A required check's name runs its
    /// recorded command.
    #[arg(long, value_name = "NAME", conflicts_with = "reproduce")]
    pub name: Option<String>,
    /// Re-run the named check (its recorded command, and compare with its previous run).
    #[arg(long, value_name = "NAME")]
    pub reproduce: Option<String>,
    /// With --reproduce: run the recorded command (and its setup first), which you have read.
    /// Without it a reproduction prints them and runs nothing, unless the check is one the user
    /// required at `init` and no setup comes with it.
    #[arg(long, requires = "reproduce")]
    pub yes: bool,
    /// Files the command reads that git does not track (relative to the worktree;
    /// comma-separated or repeated): recorded, and checked for before a reproduction runs.
    #[arg(
        long,
        value_name = "PATH",
        value_delimiter = ',',
        conflicts_with = "reproduce"
    )]
    pub needs: Vec<String>,
    /// The command line (`sh -c`) that makes the --needs files in a fresh checkout: recorded,
    /// and run first in a temporary checkout.
    #[arg(long, value_name = "CMD", conflicts_with = "reproduce")]
    pub setup: Option<String>,
    /// Stop the command after this many seconds (its whole process group, SIGKILL, and record
    /// the run as failed by the time limit); 0: no limit.
    #[arg(long, default_value_t = 1800, value_name = "SECONDS")]
    pub time_limit: u64,
    /// The command and its arguments, after `--` (run directly, not through a shell).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// The visible commands, in the order [`Cli`] defines them (for `pair help COMMAND` and
/// `pair man COMMAND`): read from the definitions, so the list cannot drift from them.
pub fn commands() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

/// A command name, checked against [`commands`] and offered to shell completion.
#[derive(Debug, Clone, Copy)]
struct CommandName;

impl TypedValueParser for CommandName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<String, clap::Error> {
        let s = clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)?;
        let all = commands();
        if all.contains(&s) {
            Ok(s)
        } else {
            Err(clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!(
                    "{s:?} is not a command; the commands are {}\n",
                    all.join(", ")
                ),
            ))
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(commands().into_iter().map(PossibleValue::new)))
    }
}

/// Accepts any word, and offers `words` to shell completion: for values `pair` checks itself
/// (with its own messages), where clap's check would only repeat it.
#[derive(Debug, Clone, Copy)]
struct Suggest(&'static [&'static str]);

impl TypedValueParser for Suggest {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.0.iter().map(|w| PossibleValue::new(*w))))
    }
}

/// A phase, in any case, parsed into [`Phase`] where the command line is parsed; shell
/// completion offers every phase of the model.
#[derive(Debug, Clone, Copy)]
struct PhaseArg;

impl TypedValueParser for PhaseArg {
    type Value = Phase;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<Phase, clap::Error> {
        let s = clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)?;
        parse_phase(&s).map_err(|m| clap::Error::raw(clap::error::ErrorKind::InvalidValue, m))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Phase::ALL.iter().map(|p| PossibleValue::new(p.as_str())),
        ))
    }
}

/// A phase `poll --until` waits for past COMMITTED: one of
/// [`crate::law::protocol::until_phases`], in any case.
#[derive(Debug, Clone, Copy)]
struct UntilArg;

impl TypedValueParser for UntilArg {
    type Value = Phase;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<Phase, clap::Error> {
        let phase = PhaseArg.parse_ref(cmd, arg, value)?;
        let ends = crate::law::protocol::until_phases();
        if ends.contains(&phase) {
            return Ok(phase);
        }
        let names: Vec<&str> = ends.iter().map(|p| p.as_str()).collect();
        Err(clap::Error::raw(
            clap::error::ErrorKind::InvalidValue,
            format!(
                "--until {phase}: a wait past COMMITTED waits for {}; before COMMITTED, `poll \
                 --wait` already waits for your turn\n",
                names.join(" or ")
            ),
        ))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            crate::law::protocol::until_phases()
                .iter()
                .map(|p| PossibleValue::new(p.as_str())),
        ))
    }
}

/// The work types the template knows (any other lower-case word is accepted too).
const WORK_TYPES: &[&str] = &["feature", "debugging", "refactor", "docs", "spike"];

/// The phase names, for the closest-match suggestion.
fn phase_names() -> Vec<&'static str> {
    Phase::ALL.iter().map(|p| p.as_str()).collect()
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the demo's directory (blackboard, notes, lock files) here; it must be empty or absent.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Give up (and fail) if the demo has not finished after this many seconds.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// A project instead: four boards in a directory worked through by two doers and a pool of
    /// two reviewers, with a dependency and a handoff (kept under DIR/boards with --keep).
    #[arg(long)]
    pub project: bool,
}

/// What `init --review` refuses: a pairing board's settings, which a review-only board (no doer,
/// three debate roles, its own stop) has no use for; given, they would be silently dropped.
pub const REVIEW_ONLY_REFUSES: [&str; 15] = [
    "from_review",
    "goal",
    "goal_file",
    "rca",
    "red_test",
    "yolo",
    "independent_review",
    "reviewer_pool",
    "reviews",
    "template",
    "require_check",
    "dissent",
    "dissenter_every_cycle",
    "max_rounds",
    "sla",
];

/// The part an agent plays in the demo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DemoRole {
    Doer,
    Reviewer,
    Dissenter,
    /// `demo --project`'s scripted user, who makes the repository and the boards.
    ProjectUser,
    /// `demo --project`'s doers and pool members.
    ProjectAgent,
}

#[derive(Debug, Args)]
pub struct DemoAgentArgs {
    /// Doer, reviewer or dissenter.
    #[arg(long, value_enum)]
    pub role: DemoRole,
    /// This agent's id.
    #[arg(long, value_name = "ID")]
    pub id: String,
    /// The blackboard (relative to the working directory), given with the global --board.
    #[arg(skip)]
    pub board: PathBuf,
    /// Reviewers the doer names when it creates the blackboard.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub reviewers: Vec<String>,
    /// Milliseconds since the Unix epoch when the demo started (timeline origin).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub epoch_ms: u64,
    /// Give up after this many seconds of waiting for a turn.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub timeout: f64,
}

/// `--agent` on a command that only reads: who runs it. Every command an agent runs takes
/// `--agent ID` (or `PAIR_AGENT`), so the habit of always naming oneself never meets "unexpected
/// argument"; these commands print the same for every agent.
#[derive(Debug, Args)]
pub struct Caller {
    /// Your agent id (accepted on every command an agent runs; this one prints the same for
    /// every agent).
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: Option<String>,
}

#[derive(Debug, Args)]
pub struct SkillArgs {
    #[command(flatten)]
    pub caller: Caller,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Print only this command's page (`pair-COMMAND(1)`).
    #[arg(value_name = "COMMAND", value_parser = CommandName)]
    pub command: Option<String>,
    /// Write pair.1 and one pair-COMMAND.1 per command into this directory (created if missing).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath, conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HelpArgs {
    /// The command to explain (default: pair itself).
    #[arg(value_name = "COMMAND", value_parser = CommandName)]
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Path of the blackboard to create (may be left out when --board PATH or $PAIR_BOARD
    /// names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// The goal, written into the Goal section.
    #[arg(long, conflicts_with = "goal_file")]
    pub goal: Option<String>,
    /// Read the goal from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub goal_file: Option<PathBuf>,
    /// feature, debugging, refactor, docs, spike (or another lower-case word).
    #[arg(long, default_value = "feature", value_name = "TYPE", value_parser = Suggest(WORK_TYPES), hide_possible_values = true)]
    pub work_type: String,
    /// Require a root cause analysis round before planning (on by default for debugging).
    #[arg(long)]
    pub rca: bool,
    /// Require a red-test round before coding (on by default for debugging).
    #[arg(long)]
    pub red_test: bool,
    /// Pre-approve the doer-side human gates.
    #[arg(long)]
    pub yolo: bool,
    /// Refuse same-session verdicts (from the session that wrote the artifact; verdicts then
    /// need --session or PAIR_SESSION).
    #[arg(long)]
    pub independent_review: bool,
    /// The doer's agent id (`--agent ID` says the same: the doer creates the blackboard).
    #[arg(
        long,
        visible_alias = "agent",
        default_value = "doer",
        value_name = "ID"
    )]
    pub doer: String,
    /// Reviewers required from the start (comma-separated ids).
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub reviewers: Vec<String>,
    /// Pool of reviewers (each round takes --reviews of them, by `claim`).
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub reviewer_pool: Vec<String>,
    /// Reviews per round from the pool.
    #[arg(long, requires = "reviewer_pool", value_name = "N")]
    pub reviews: Option<u32>,
    /// Wait for this board before the work starts (until it is COMMITTED or later; a path from
    /// this board's directory, or a ref in its git namespace; repeatable or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "BOARD")]
    pub after: Vec<String>,
    /// Use this blackboard file as the template (instead of the built-in one).
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,
    /// Require a passing run of this check (on the approved tree before `advance COMMITTED`;
    /// repeatable; CMD runs as `sh -c CMD` in the worktree, by `pair check --name NAME`).
    #[arg(long, value_name = "NAME=CMD")]
    pub require_check: Vec<String>,
    /// Dissent stage after the reviewers pass (GATES: all, or e.g. plan,code; a fresh dissenter
    /// answers none, advisory or blocking).
    #[arg(long, value_name = "GATES", num_args = 0..=1, default_missing_value = "all")]
    pub dissent: Option<String>,
    /// One dissenter may answer every cycle (default: a fresh one per cycle).
    #[arg(long, requires = "dissent")]
    pub dissenter_every_cycle: bool,
    /// Objection ledger: at most N rounds per gate (then a decision).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_rounds: Option<u32>,
    /// Service levels: NAME=DURATION, comma-separated or repeated (review=2h,revision=4h; NAME is
    /// review, revision, analysis, plan, red_test, code, decision, advance or stall).
    #[arg(long, value_name = "NAME=DURATION")]
    pub sla: Vec<String>,
    /// The board's format (2 by default, or 1 for a board that agents on an older pair must
    /// still write: its journal is not sealed, and `pair migrate BOARD` upgrades it later).
    #[arg(long, value_name = "N", default_value_t = crate::board::format::UNSIGNED,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::board::format::CURRENT)))]
    pub format: u32,
    /// Make a signed board (format 3): every record carries its writer's SSH signature
    /// (--signing-key), checked against the trust root (--allowed-signers, or git's
    /// gpg.ssh.allowedSignersFile). See docs/signing.md.
    #[arg(long)]
    pub signed: bool,
    /// How long to wait for the lock (a git board: for its remote), in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    #[command(flatten)]
    pub usage: UsageArgs,
    /// Create a review-only board of TARGET (a file, A..B or `staged`; no doer).
    #[arg(long, value_name = "TARGET", conflicts_with_all = REVIEW_ONLY_REFUSES)]
    pub review: Option<String>,
    /// Seed the goal with a review board's confirmed findings.
    #[arg(long, value_name = "BOARD")]
    pub from_review: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("waiting").args(["wait", "through_blocked"]).multiple(true)))]
pub struct PollArgs {
    /// The blackboard (or, with --after, a project: a directory of blackboards or
    /// git+URL#refs/…/; may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// Your agent id.
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: String,
    /// Block until it is your turn (or the phase is terminal, or the blackboard appears).
    #[arg(long)]
    pub wait: bool,
    /// Wait, and keep waiting while the work is BLOCKED (it implies --wait; until the doer
    /// unblocks it, or it stops, instead of returning at once with exit 12).
    #[arg(long)]
    pub through_blocked: bool,
    /// With --wait: give up after this many seconds (exit 10).
    #[arg(
        long,
        default_value_t = 600.0,
        value_name = "SECONDS",
        requires = "waiting"
    )]
    pub timeout: f64,
    /// With --wait: re-check this often: for a git board, how often the remote is asked for
    /// the ref's tip (default 5); for a file, where file notifications are unavailable
    /// (default 60).
    #[arg(long, value_name = "SECONDS", requires = "waiting")]
    pub interval: Option<f64>,
    /// Journal records after this position (0: the whole journal; the answer's `position` is
    /// the next one to pass; with --wait, any new record another agent wrote wakes the wait;
    /// for a project, a cursor: 0, then the answer's `cursor`).
    #[arg(long, value_name = "SEQ", allow_negative_numbers = true)]
    pub after: Option<String>,
    /// Wait past COMMITTED until PHASE (MERGED or CLEANED_UP).
    ///
    /// The doer records MERGED and CLEANED_UP when the user asks: reaching PHASE ends the wait
    /// (exit 11); at the timeout, a board still short of it is exit 10.
    #[arg(long, value_name = "PHASE", value_parser = UntilArg)]
    pub until: Option<Phase>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// Whose point of view to report `your_turn` from (default: the doer).
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: Option<String>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Blackboard files, or directories searched for them; `-` reads one from stdin (may be
    /// left out when --board PATH or $PAIR_BOARD names a blackboard).
    #[arg(required = true, value_name = "PATH", value_hint = ValueHint::AnyPath)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub caller: Caller,
    /// Fail (exit 5) when a directory named holds no blackboard (a wrong path in CI).
    #[arg(long)]
    pub require_some: bool,
    /// Output format: text, json (like --json) or github (workflow annotations for CI).
    #[arg(long, value_enum, default_value_t = ValidateFormat::Text, value_name = "FORMAT")]
    pub format: ValidateFormat,
}

/// How `validate` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ValidateFormat {
    /// One line per file, errors and warnings indented below it.
    Text,
    /// The same object as --json.
    Json,
    /// GitHub Actions workflow commands: `::error file=…,line=…,title=…::message`.
    Github,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["expect_sha256", "create_if_missing"])))]
pub struct WriteArgs {
    /// The blackboard (or use --path; may be left out when --board PATH or $PAIR_BOARD names
    /// it).
    #[arg(
        required_unless_present = "path",
        conflicts_with = "path",
        value_name = "BOARD",
        value_hint = ValueHint::FilePath
    )]
    pub board: Option<PathBuf>,
    /// The blackboard (compatible with the original helper).
    #[arg(long, value_name = "BOARD")]
    pub path: Option<PathBuf>,
    /// The complete new file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub content_file: PathBuf,
    /// SHA-256 of the file as you read it (compare-and-swap).
    #[arg(long, value_name = "HEX")]
    pub expect_sha256: Option<String>,
    /// Create the blackboard; refuse if it exists.
    #[arg(long)]
    pub create_if_missing: bool,
    /// A short name for the change, recorded in the lock owner file.
    #[arg(long, default_value = "write", value_name = "NAME")]
    pub operation: String,
    /// Who is writing: recorded in the lock owner file, and the change is checked against this
    /// agent's field ownership (like --as).
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: Option<String>,
    /// Check the change against this agent's field ownership and the transition table.
    #[arg(long = "as", value_name = "ID", conflicts_with = "repair")]
    pub as_agent: Option<String>,
    /// A human repair: skip ownership and transition checks (still validated; recorded).
    #[arg(long, requires = "reason")]
    pub repair: bool,
    /// Why the repair is needed (recorded in Decisions).
    #[arg(long, value_name = "TEXT", requires = "repair")]
    pub reason: Option<String>,
    /// With --as: the user approved the human gate this change passes.
    #[arg(long)]
    pub user_approved: bool,
    /// With --as (the doer): the user waived the predicate of the transition this change takes
    /// (recorded in Decisions with the predicate).
    #[arg(long, value_name = "REASON", conflicts_with = "repair")]
    pub waive: Option<String>,
    /// How long to wait for the lock (a git board: for its remote), in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    #[command(flatten)]
    pub usage: UsageArgs,
}

impl WriteArgs {
    pub fn board(&self) -> Option<&PathBuf> {
        self.board.as_ref().or(self.path.as_ref())
    }
}

/// Flags every semantic write takes.
#[derive(Debug, Args)]
pub struct WriteCommon {
    /// Your agent id.
    #[arg(long, env = "PAIR_AGENT", value_name = "ID")]
    pub agent: String,
    /// Refuse (exit 3) unless the file still has this SHA-256.
    #[arg(long, value_name = "HEX")]
    pub expect_sha256: Option<String>,
    /// How long to wait for the lock (a git board: for its remote), in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    #[command(flatten)]
    pub usage: UsageArgs,
}

/// Tokens and cost the writer reports, kept in the write's journal record.
#[derive(Debug, Args, Clone, Default)]
pub struct UsageArgs {
    /// Tokens spent on the work this write records (kept in the journal, summed by `pair stats`).
    #[arg(long, value_name = "N")]
    pub tokens: Option<u64>,
    /// What the work cost, a decimal (e.g. 0.42), kept in the journal like --tokens.
    #[arg(long, value_name = "X")]
    pub cost: Option<String>,
}

/// Where a note's text comes from.
#[derive(Debug, Args)]
pub struct NoteText {
    /// The text.
    #[arg(long, value_name = "TEXT", conflicts_with = "note_file")]
    pub note: Option<String>,
    /// Read the text from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub note_file: Option<PathBuf>,
    /// Put the text in a code block (for command output, logs, diffs).
    #[arg(long)]
    pub code: bool,
}

#[derive(Debug, Args)]
pub struct RegisterArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// The user named you a required reviewer.
    #[arg(long)]
    pub required: bool,
}

#[derive(Debug, Args)]
pub struct HandoffArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// (The incoming agent, new to the board.)
    #[arg(
        long,
        value_name = "ID",
        required_unless_present = "withdraw",
        conflicts_with = "withdraw"
    )]
    pub to: Option<String>,
    /// (What the incoming agent needs to know; recorded in Decisions with the open objections,
    /// the pending work, the phase and the next step.)
    #[arg(long, value_name = "TEXT")]
    pub summary: Option<String>,
    /// (The user approved a handoff in the middle of a review cycle.)
    #[arg(long)]
    pub user_approved: bool,
    /// (Take back your pending handoff, before it is acknowledged.)
    #[arg(long)]
    pub withdraw: bool,
}

#[derive(Debug, Args)]
pub struct ClaimArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
}

/// The artifacts a doer submits.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ArtifactArg {
    Analysis,
    Plan,
    RedTest,
    Code,
    Followup,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// What you submit (any case).
    #[arg(value_enum, ignore_case = true)]
    pub artifact: ArtifactArg,
    #[command(flatten)]
    pub common: WriteCommon,
    #[command(flatten)]
    pub text: NoteText,
    /// The user approved this step (the human gate of analysis and plan submissions).
    #[arg(long)]
    pub user_approved: bool,
    /// The user approved working without reviewers (only when none are registered).
    #[arg(long)]
    pub no_review: bool,
    /// The user waived this step's predicate; the reason is recorded.
    #[arg(long, value_name = "REASON")]
    pub waive: Option<String>,
    /// A red test's files, pinned with the text (repeat the flag, or separate with commas; a
    /// verdict is refused if they change after the submission).
    #[arg(long, value_name = "FILE", value_delimiter = ',')]
    pub files: Vec<PathBuf>,
    /// Restart this gate's rounds (with a fresh objection ledger; old objections stay on the
    /// record, superseded; needs --reason).
    #[arg(long, requires = "rework_reason")]
    pub rework: bool,
    /// Why incremental fixes will not do (with --rework; recorded).
    #[arg(
        long = "reason",
        id = "rework_reason",
        value_name = "TEXT",
        requires = "rework"
    )]
    pub rework_reason: Option<String>,
}

/// A reviewer's verdict.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
#[value(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VerdictArg {
    Approved,
    ChangesRequested,
    Comment,
    /// Not a judgement: you could not review (needs --reason; costs no round).
    Unable,
}

#[derive(Debug, Args)]
pub struct VerdictArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// Your verdict (any case: `approved` is APPROVED).
    #[arg(value_enum, ignore_case = true)]
    pub verdict: VerdictArg,
    #[command(flatten)]
    pub common: WriteCommon,
    /// The revision (or round) you reviewed, as `poll` reported it.
    #[arg(long, value_name = "N")]
    pub revision: u32,
    /// The SHA-256 of the artifact you read (checked against the pin, as `pair diff` or
    /// `poll`'s `review.artifact` gave it; a stale one is refused, exit 3).
    #[arg(long, value_name = "SHA256")]
    pub artifact_sha256: Option<String>,
    #[command(flatten)]
    pub text: NoteText,
    /// With CHANGES_REQUESTED: the open blocking objections (yours, on this gate) it is about.
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub objections: Vec<String>,
    /// Request changes in free text only, naming no objection (with CHANGES_REQUESTED on a board
    /// that uses the ledger; recorded in Decisions).
    #[arg(long)]
    pub no_objection_ids: bool,
    /// With UNABLE: why you could not review (e.g. the tests could not run).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// A dissenter's answer.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum DissentArg {
    None,
    Advisory,
    Blocking,
}

#[derive(Debug, Args)]
pub struct DissentArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// Your answer (blocking names --objections).
    #[arg(value_enum, ignore_case = true)]
    pub outcome: DissentArg,
    #[command(flatten)]
    pub common: WriteCommon,
    /// The revision (or round) passed.
    #[arg(long, value_name = "N")]
    pub revision: u32,
    /// The open blocking objections.
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub objections: Vec<String>,
    #[command(flatten)]
    pub text: NoteText,
}

#[derive(Debug, Args)]
pub struct AdvanceArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    /// The phase to move to (any case: `planning` is PLANNING).
    #[arg(value_name = "PHASE", value_parser = PhaseArg, hide_possible_values = true)]
    pub phase: Phase,
    #[command(flatten)]
    pub common: WriteCommon,
    /// Absolute path of the coding worktree (entering CODING).
    #[arg(long, value_name = "PATH")]
    pub worktree: Option<String>,
    /// The commit made (entering COMMITTED; default: HEAD of the worktree on a board that
    /// records a repository).
    #[arg(long, value_name = "SHA")]
    pub commit_sha: Option<String>,
    /// The branch merged into (entering MERGED).
    #[arg(long, value_name = "BRANCH")]
    pub merged_into: Option<String>,
    /// The user approved this step (human gates).
    #[arg(long)]
    pub user_approved: bool,
    /// The user waived this step's predicate; the reason is recorded.
    #[arg(long, value_name = "REASON")]
    pub waive: Option<String>,
    #[command(flatten)]
    pub text: NoteText,
    /// Keep the topic branch on purpose (entering CLEANED_UP; recorded).
    #[arg(long)]
    pub keep_branch: bool,
}

/// A phase name, in any case, turned into the type once, where the command line is parsed.
fn parse_phase(s: &str) -> Result<Phase, String> {
    s.trim().to_uppercase().parse().map_err(|_| {
        if let Some(p) = crate::board::suggest::closest(&s.trim().to_uppercase(), phase_names()) {
            return format!("{s:?} is not a phase; did you mean {p}?");
        }
        format!(
            "{s:?} is not a phase; phases are {}",
            Phase::ALL
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

#[derive(Debug, Args)]
pub struct ReasonArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// Why (recorded in Decisions).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
}

#[derive(Debug, Args)]
pub struct NoteArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// The section to append to (one of the template's or the body's, created at its template
    /// position if missing).
    #[arg(long, value_name = "NAME")]
    pub section: String,
    /// Create a new section (one neither the template nor the blackboard has yet).
    #[arg(long)]
    pub new_section: bool,
    #[command(flatten)]
    pub text: NoteText,
}

#[derive(Debug, Args)]
pub struct CorrectArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub common: WriteCommon,
    /// Which of your reviews, as GATE:N (e.g. analysis:1); default: your latest review.
    #[arg(long, value_name = "GATE:N", value_parser = crate::cli::ledger::round_arg)]
    pub review: Option<(crate::board::frontmatter::Target, u32)>,
    #[command(flatten)]
    pub text: NoteText,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub caller: Caller,
    /// Print how much each file changes (or the text's size, instead of the artifact itself).
    #[arg(long)]
    pub stat: bool,
    /// A published red test: print each test file whole (`==> PATH <==` and its bytes, instead
    /// of its change against the base).
    #[arg(long, conflicts_with_all = ["stat", "pinned"])]
    pub whole: bool,
    /// Print exactly the bytes the pin covers (for a published red test: its text and files in
    /// the pinned form, not the change against the base).
    #[arg(long, conflicts_with = "stat")]
    pub pinned: bool,
}

#[derive(Debug, Args)]
pub struct WorktreePathArgs {
    /// The blackboard (may be left out when --board PATH or $PAIR_BOARD names it).
    #[arg(value_name = "BOARD", value_hint = ValueHint::FilePath)]
    pub board: PathBuf,
    #[command(flatten)]
    pub caller: Caller,
    /// The repository root (default: `git rev-parse --show-toplevel` in the blackboard's directory).
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
}

/// Whether a command's first positional argument is a blackboard (`board`, or `validate`'s
/// `paths`), which --board PATH or `$PAIR_BOARD` supply when it is left out: read from the
/// definitions. `words` are the command's (`["worktree", "create"]` for a nested one).
fn takes_board(words: &[&str]) -> bool {
    use clap::CommandFactory;
    let mut command = Cli::command();
    for word in words {
        match command.find_subcommand(word) {
            Some(sub) => command = sub.clone(),
            None => return false,
        }
    }
    command
        .get_positionals()
        .next()
        .is_some_and(|a| matches!(a.get_id().as_str(), "board" | "paths"))
}

/// The words of a command that has subcommands of its own (`worktree create`) as they stand
/// after its name on a command line: the command's name and, when the next word is one of its
/// subcommands, that word too; with where the last of them stands.
fn command_words(args: &[std::ffi::OsString]) -> Option<(usize, Vec<&str>)> {
    use clap::CommandFactory;
    let (i, name) = command_name(args)?;
    let nested = Cli::command()
        .find_subcommand(name)
        .map(|c| {
            c.get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    match args.get(i + 1).and_then(|a| a.to_str()) {
        Some(sub) if nested.iter().any(|n| n == sub) => Some((i + 1, vec![name, sub])),
        _ => Some((i, vec![name])),
    }
}

/// The global options that take a value (and so may stand before the command's name).
const GLOBAL_VALUE_OPTIONS: &[&str] = &[
    "--color",
    "--board",
    "--session",
    "--model",
    "--transcript",
    "--signing-key",
    "--allowed-signers",
];

/// The default blackboard of a command line: the last `--board PATH` on it, else a non-empty
/// `$PAIR_BOARD` (as `env` gives it).
pub fn default_board(
    args: &[std::ffi::OsString],
    env: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let mut found = None;
    let mut rest = args.iter().skip(1);
    while let Some(a) = rest.next() {
        if a == "--board" {
            found = rest.next().cloned();
        } else if let Some(v) = a.to_str().and_then(|s| s.strip_prefix("--board=")) {
            found = Some(v.into());
        }
    }
    found.or(env).filter(|b| !b.is_empty()).map(PathBuf::from)
}

/// Where the name of a command that [`takes_board`] stands on a command line (only global
/// options may come before it), and the name; None for the other commands.
pub fn board_command(args: &[std::ffi::OsString]) -> Option<(usize, String)> {
    let (i, words) = command_words(args)?;
    takes_board(&words).then(|| (i, words.join(" ")))
}

/// Where the command's name stands on a command line (only global options may come before
/// it), and the name.
fn command_name(args: &[std::ffi::OsString]) -> Option<(usize, &str)> {
    let mut i = 1;
    while let Some(a) = args.get(i) {
        let a = a.to_str()?;
        if !a.starts_with('-') {
            break;
        }
        i += if GLOBAL_VALUE_OPTIONS.contains(&a) {
            2
        } else {
            1
        };
    }
    Some((i, args.get(i)?.to_str()?))
}

/// The commands an agent runs in its loop, each with what adds its arguments to a command:
/// [`parse_lean`] builds a parser for the one named.
type Augment = fn(clap::Command) -> clap::Command;

const LEAN: &[(&str, Augment)] = {
    use crate::cli::ledger::{
        AcceptArgs, ChallengeArgs, DecideArgs, ObjectArgs, ObjectionsArgs, ReopenArgs, ResolveArgs,
        RuleArgs,
    };
    use clap::Args;
    &[
        ("poll", PollArgs::augment_args),
        ("status", StatusArgs::augment_args),
        ("register", RegisterArgs::augment_args),
        ("unregister", ClaimArgs::augment_args),
        ("claim", ClaimArgs::augment_args),
        ("acknowledge", ClaimArgs::augment_args),
        ("submit", SubmitArgs::augment_args),
        ("verdict", VerdictArgs::augment_args),
        ("handoff", HandoffArgs::augment_args),
        ("advance", AdvanceArgs::augment_args),
        ("block", ReasonArgs::augment_args),
        ("unblock", ReasonArgs::augment_args),
        ("stop", ReasonArgs::augment_args),
        ("note", NoteArgs::augment_args),
        ("object", ObjectArgs::augment_args),
        ("resolve", ResolveArgs::augment_args),
        ("challenge", ChallengeArgs::augment_args),
        ("rule", RuleArgs::augment_args),
        ("accept", AcceptArgs::augment_args),
        ("reopen", ReopenArgs::augment_args),
        ("withdraw", ReopenArgs::augment_args),
        ("objections", ObjectionsArgs::augment_args),
        ("decide", DecideArgs::augment_args),
        ("report-usage", ReportUsageArgs::augment_args),
    ]
};

/// Parse the command line of one of the commands an agent runs in its loop (`poll`, `note`,
/// `submit`, `verdict`, `object` …) with a parser built for that command alone: building the
/// whole tree (every command's arguments) cost such a command about as much as its own work.
/// The same derived definitions build it, so what parses here parses the same with [`Cli`]'s
/// full parser; anything else (`--help`, an error, a left-out BOARD to take from `--board`,
/// another command) returns `None`, and the full parser answers it with its complete messages.
pub fn parse_lean(args: &[std::ffi::OsString]) -> Option<(Cli, &'static str)> {
    use clap::{Command, FromArgMatches};
    let name = command_name(args)?.1;
    let &(name, augment) = LEAN.iter().find(|(n, _)| *n == name)?;
    let command = Global::augment_args(
        Command::new("pair")
            .disable_help_subcommand(true)
            .disable_version_flag(true),
    )
    .subcommand(augment(Command::new(name).disable_version_flag(true)));
    let matches = command.try_get_matches_from(args).ok()?;
    Some((Cli::from_arg_matches(&matches).ok()?, name))
}

impl Cli {
    /// Check what parsing leaves to check: no blackboard is `-` (a file literally named `-`;
    /// only `validate` reads `-` as stdin), and the internal `demo-agent` has its --board.
    pub fn resolve(&mut self) -> Result<()> {
        // `$PAIR_BOARD` is read here rather than by the parser, which refuses an empty one: an
        // empty variable is no board, as if unset.
        if self.global.default_board.is_none() {
            self.global.default_board = std::env::var_os("PAIR_BOARD")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from);
        }
        // `$PAIR_SESSION` and `$PAIR_MODEL` likewise (an empty one is none), read once here:
        // the command carries them typed to every write it makes.
        for (value, flag, var) in [
            (&mut self.global.session, "--session", "PAIR_SESSION"),
            (&mut self.global.model, "--model", "PAIR_MODEL"),
        ] {
            if value.is_none() {
                *value = std::env::var(var).ok().filter(|v| !v.is_empty());
                if let Some(v) = value.as_deref() {
                    crate::board::journal::Origin::check(var, v).map_err(Error::Usage)?;
                }
            } else if let Some(v) = value.as_deref() {
                crate::board::journal::Origin::check(flag, v).map_err(Error::Usage)?;
            }
        }
        // `$PAIR_SIGNING_KEY` and `$PAIR_ALLOWED_SIGNERS` likewise.
        for (value, var) in [
            (&mut self.global.signing_key, "PAIR_SIGNING_KEY"),
            (&mut self.global.allowed_signers, "PAIR_ALLOWED_SIGNERS"),
        ] {
            if value.is_none() {
                *value = std::env::var_os(var)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from);
            }
        }
        // `$PAIR_TRANSCRIPT` likewise (an empty one is none).
        if self.global.transcript.is_none() {
            self.global.transcript = std::env::var_os("PAIR_TRANSCRIPT")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from);
        }
        if let Cmd::Show(a) = &mut self.command {
            lone_section(a, self.global.default_board.as_deref());
        }
        match &mut self.command {
            Cmd::Init(a) => not_stdin("init", &a.board),
            Cmd::Poll(a) => not_stdin_project("poll", &a.board),
            Cmd::Status(a) => not_stdin("status", &a.board),
            Cmd::Register(a) => not_stdin("register", &a.board),
            Cmd::Unregister(a) => not_stdin("unregister", &a.board),
            Cmd::Claim(a) => not_stdin("claim", &a.board),
            Cmd::Submit(a) => not_stdin("submit", &a.board),
            Cmd::Verdict(a) => not_stdin("verdict", &a.board),
            Cmd::Dissent(a) => not_stdin("dissent", &a.board),
            Cmd::Handoff(a) => not_stdin("handoff", &a.board),
            Cmd::Acknowledge(a) => not_stdin("acknowledge", &a.board),
            Cmd::Advance(a) => not_stdin("advance", &a.board),
            Cmd::Block(a) => not_stdin("block", &a.board),
            Cmd::Unblock(a) => not_stdin("unblock", &a.board),
            Cmd::Stop(a) => not_stdin("stop", &a.board),
            Cmd::Note(a) => not_stdin("note", &a.board),
            Cmd::Correct(a) => not_stdin("correct", &a.board),
            Cmd::WorktreePath(a) => not_stdin("worktree-path", &a.board),
            Cmd::Diff(a) => not_stdin("diff", &a.board),
            Cmd::Worktree(a) => match &a.action {
                WorktreeAction::Create(c) => not_stdin("worktree create", &c.board),
            },
            Cmd::Check(a) => not_stdin("check", &a.board),
            Cmd::Show(a) => not_stdin("show", &a.board),
            Cmd::Brief(a) => not_stdin("brief", &a.board),
            Cmd::ReportUsage(a) => not_stdin("report-usage", &a.board),
            Cmd::Log(a) => not_stdin("log", &a.board),
            Cmd::Stats(a) => a
                .board
                .iter()
                .try_for_each(|b| not_stdin_project("stats", b)),
            Cmd::Migrate(a) => {
                not_stdin("migrate", &a.from)?;
                a.to.iter().try_for_each(|to| not_stdin("migrate", to))
            }
            Cmd::Write(a) => match a.board() {
                Some(board) => not_stdin("write", board),
                None => Ok(()),
            },
            Cmd::DemoAgent(a) => {
                a.board = self.global.default_board.clone().ok_or_else(|| {
                    Error::Usage("demo-agent needs --board BOARD (it is run by `pair demo`)".into())
                })?;
                Ok(())
            }
            Cmd::Object(a) => not_stdin("object", &a.board),
            Cmd::Resolve(a) => not_stdin("resolve", &a.board),
            Cmd::Challenge(a) => not_stdin("challenge", &a.board),
            Cmd::Rule(a) => not_stdin("rule", &a.board),
            Cmd::Accept(a) => not_stdin("accept", &a.board),
            Cmd::Reopen(a) => not_stdin("reopen", &a.board),
            Cmd::Withdraw(a) => not_stdin("withdraw", &a.board),
            Cmd::Second(a) => not_stdin("second", &a.board),
            Cmd::Objections(a) => not_stdin("objections", &a.board),
            Cmd::Decide(a) => not_stdin("decide", &a.board),
            Cmd::Extend(a) => not_stdin("extend", &a.board),
            Cmd::Away(a) => not_stdin("away", &a.board),
            Cmd::Unrequire(a) => not_stdin("unrequire", &a.board),
            Cmd::Watch(a) => a.board.iter().try_for_each(|b| not_stdin("watch", b)),
            Cmd::Top(a) => not_stdin_project("top", &a.project),
            Cmd::Mcp(a) => not_stdin_project("mcp", &a.board),
            // A project's address is checked when it is opened (a prefix, not a board's ref).
            Cmd::Ls(a) => not_stdin_project("ls", &a.project),
            Cmd::Next(a) => not_stdin_project("next", &a.project),
            Cmd::Validate(_)
            | Cmd::Demo(_)
            | Cmd::Skill(_)
            | Cmd::Completions(_)
            | Cmd::Man(_)
            | Cmd::Help(_) => Ok(()),
        }
    }
}

/// A parse error's message on one line: clap's, up to its usage block.
pub fn parse_error_message(e: &clap::Error) -> String {
    let detail = e.render().to_string();
    detail
        .split("\n\nUsage:")
        .next()
        .unwrap_or(&detail)
        .split("\n\nFor more information")
        .next()
        .unwrap_or(&detail)
        .trim_start_matches("error: ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `pair show X` with the blackboard from --board or `$PAIR_BOARD`: the lone argument is the
/// section (`pair show 'Plan Reviews'`), unless it names that board itself, a file that exists
/// or a git board's address (then it is the board, as it always was).
fn lone_section(a: &mut ShowArgs, default: Option<&Path>) {
    let Some(default) = default else {
        return;
    };
    let board_like = a.board == default
        || a.board.exists()
        || crate::store::location::is_git(&a.board)
        || a.section.is_some();
    if !board_like && let Some(name) = a.board.to_str() {
        a.section = Some(name.to_string());
        a.board = default.to_path_buf();
    }
}

/// The usage error when a command's blackboard is neither given nor defaulted.
pub fn no_board(command: &str) -> Error {
    Error::Usage(format!(
        "no blackboard given: name it (`pair {command} BOARD …`), pass --board PATH, or set \
         PAIR_BOARD"
    ))
}

/// `-` as a project is refused as it is for a board; a git address is a board's unless it names
/// a namespace (its ref part ends in `/`), which is checked when the project is opened.
fn not_stdin_project(command: &str, project: &Path) -> Result<()> {
    if crate::store::location::is_git(project) && crate::project::is_project(project) {
        return Ok(());
    }
    not_stdin(command, project)
}

/// `-` as a blackboard would be a file literally named `-`, which is never what was meant.
fn not_stdin(command: &str, board: &Path) -> Result<()> {
    if board == Path::new("-") {
        return Err(Error::Usage(format!(
            "`pair {command} -`: a blackboard cannot be standard input (it is locked and \
             replaced in place), and a file named `-` is almost certainly a mistake; if you \
             really mean a file named `-`, write `./-`"
        )));
    }
    // A git board address is checked before anything runs (exit 4, naming the wrong part).
    crate::store::location::Location::of(board).map(|_| ())
}

impl TryFrom<&UsageArgs> for crate::board::journal::Usage {
    type Error = Error;
    fn try_from(a: &UsageArgs) -> crate::Result<Self> {
        use crate::board::journal::Usage;
        let cost_micros = match &a.cost {
            Some(c) => Some(Usage::parse_cost(c).map_err(Error::Usage)?),
            None => None,
        };
        Ok(Usage {
            tokens: a.tokens,
            cost_micros,
            phase: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn argv(words: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("pair")
            .chain(words.iter().copied())
            .map(Into::into)
            .collect()
    }

    #[test]
    fn the_lean_parser_parses_as_the_whole_tree_does() {
        for words in [
            &["poll", "t.md", "--agent", "alice"][..],
            &[
                "note",
                "t.md",
                "--agent",
                "a",
                "--section",
                "Evidence",
                "--note",
                "x",
                "-q",
            ],
            &[
                "submit", "t.md", "--agent", "d", "plan", "--note", "p", "--json",
            ],
            &[
                "verdict",
                "t.md",
                "--agent",
                "r",
                "approved",
                "--revision",
                "1",
                "--note",
                "ok",
            ],
            &[
                "object",
                "t.md",
                "--agent",
                "r",
                "--severity",
                "blocking",
                "--anchor",
                "## Plan",
            ],
            &["--json", "status", "t.md"],
            &[
                "advance",
                "t.md",
                "--agent",
                "d",
                "PLANNING",
                "--user-approved",
            ],
            &["block", "t.md", "--agent", "d", "--reason", "why"],
            &["register", "t.md", "--agent", "r"],
            &["objections", "t.md", "--open", "--json"],
            &["poll", "t.md", "--agent", "alice", "--json"],
            &[
                "--json",
                "poll",
                "t.md",
                "--agent",
                "a",
                "--wait",
                "--timeout",
                "5",
            ],
            &[
                "poll",
                "t.md",
                "--agent",
                "a",
                "--wait",
                "--through-blocked",
                "--interval",
                "2",
            ],
            &["--color", "never", "poll", "--agent=b", "t.md", "-q"],
            &["--board", "x.md", "poll", "t.md", "--agent", "a", "-v"],
        ] {
            let args = argv(words);
            let (lean, _) = parse_lean(&args).unwrap_or_else(|| panic!("{words:?}: not parsed"));
            let full = Cli::try_parse_from(&args).expect("the full parser parses it");
            assert_eq!(format!("{lean:?}"), format!("{full:?}"), "{words:?}");
        }
        // What the full parser must answer (help, version, errors, a left-out BOARD) is left
        // to it.
        for words in [
            &["poll", "--help"][..],
            &["poll", "--version"],
            &["poll", "t.md"],
            &["poll", "t.md", "--agent", "a", "--timeout", "5"],
            &["--board", "x.md", "poll", "--agent", "a"],
            &["poll", "t.md", "--agent", "a", "--bogus"],
            &["validate", "t.md"],
            &["note", "--agent", "a", "--note", "x"],
            &["verdict", "t.md", "--agent", "r", "MAYBE"],
            &["--version"],
        ] {
            assert!(parse_lean(&argv(words)).is_none(), "{words:?}");
        }
    }
}
