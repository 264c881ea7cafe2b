//! `pair`: coordinate one doer and several reviewer agents through a shared Markdown blackboard
//! whose YAML frontmatter is a checked state machine.
//!
//! The crate is layered so each module has one job, each layer using only those above it:
//!
//! * [`document`] — the file as text: frontmatter/body split, line endings, sections, appends;
//! * [`entry`] — the body's entries read back: kind, counter, agent, verdict, time, text;
//! * [`yaml`] — the frontmatter as a span-carrying YAML tree (lines for every error);
//! * [`model`] — the typed frontmatter and its canonical emission;
//! * [`comments`] — a changed frontmatter written in the file's own words: hand comments and
//!   unchanged spellings kept;
//! * [`field`] — the registry of frontmatter fields: name, owner, emission order;
//! * [`format`] — format versions: what a reader accepts from a later version, and the refusal
//!   to write a board of a format newer than this one knows;
//! * [`protocol`] — the rules as data: phases, the transition table, terminal permissions,
//!   review rounds, whose turn;
//! * [`validate`] — every invariant a blackboard must satisfy on its own;
//! * [`agreement`] — the body and the frontmatter agree: counters and verdicts have their entries;
//! * [`law`] — every rule a *change* must satisfy: one pure function of (old board, new board,
//!   writer, consent) that semantic commands and raw writes both go through;
//! * [`ledger`] — the objection ledger: objections as data, the rules that move them, the
//!   round cap and the decisions that end a gate;
//! * [`ops`] — the semantic operations as edits of a typed board (they never judge themselves);
//! * [`git`] — running git with its output form pinned (worktree checks, canonical diffs);
//! * [`repo`] — the repository's answers about trees, commits, branches and worktrees;
//! * [`checks`] — required validation checks and the latest run of each, tied to a tree;
//! * [`lifecycle`] — the git lifecycle's checks (commit, merge, cleanup) on observed facts;
//! * [`pin`] — pinned artifacts: the exact bytes a submission puts under review and their hash;
//! * [`journal`] — one record per write in the board's last section, chained by hashes;
//! * [`stats`] and [`svg`] — where the time and tokens went, from the journal, and its timeline;
//! * [`sla`] — service levels as data: SLA names, the phases they cover, durations, the `sla`
//!   field;
//! * [`unrequire`] — the law's rule for removing a required reviewer that never registered;
//! * [`presence`] — agents seen alive without writing the board: a small record beside it;
//! * [`watch`] — the watchdog's findings (stalls, missing reviewers, breaches, dead writers) and
//!   its one-nudge-then-escalate memory;
//! * [`store`] — the lock, compare-and-swap and durable atomic replace;
//! * [`engine`] — one transaction: parse once under the lock, edit, judge, append, render,
//!   replace;
//! * [`report`] — the whose-turn report shared by `poll` and `status`;
//! * [`output`] — colour, quiet and verbose settings, and escaping for human output;
//! * [`wait`] — waking `poll --wait` on file-system notifications;
//! * [`suggest`] — the closest known word to a mistyped one ("did you mean …?");
//! * [`error`] — typed errors, structured hints and every exit code;
//! * [`cli`] and [`commands`] — the command line: arguments in, rendered results and hints out.

pub mod board;
pub mod cli;
pub mod commands;
pub mod error;
pub mod law;
pub mod ops;
pub mod render;
pub mod repo;
pub mod stats;
pub mod store;
pub mod text;
pub mod transaction;
pub mod watch;

pub use error::{Error, Result};
