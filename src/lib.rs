//! `pair`: coordinate one doer and several reviewer agents through a shared Markdown blackboard
//! whose YAML frontmatter is a checked state machine.
//!
//! The crate is layered so each module has one job:
//!
//! * [`document`] — the file as text: frontmatter/body split, line endings, sections, appends;
//! * [`yaml`] — the frontmatter as a span-carrying YAML tree (lines for every error);
//! * [`model`] — the typed frontmatter and its canonical emission;
//! * [`protocol`] — phases, the transition table, review rounds, whose turn;
//! * [`ops`] — the semantic operations (register, submit, verdict, advance, …) in memory;
//! * [`ownership`] — field ownership checks for raw writes made as an agent;
//! * [`validate`] — every invariant a blackboard must satisfy;
//! * [`store`] — the lock, compare-and-swap and durable atomic replace;
//! * [`commands`] — the commands, on top of all of the above;
//! * [`report`] — the whose-turn report shared by `poll` and `status`;
//! * [`output`] — colour, quiet and verbose settings, escaping, and hints for humans;
//! * [`wait`] — waking `poll --wait` on file-system notifications.

pub mod cli;
pub mod commands;
pub mod document;
pub mod error;
pub mod model;
pub mod ops;
pub mod output;
pub mod ownership;
pub mod protocol;
pub mod report;
pub mod store;
pub mod validate;
pub mod wait;
pub mod yaml;

pub use error::{Error, Result};
