//! `pair`: coordinate one doer and several reviewer agents through a shared Markdown blackboard
//! whose YAML frontmatter is a checked state machine.
//!
//! # Layers
//!
//! The modules below are declared in layer order: each uses only the modules declared before
//! it, never one after it. `tests/it/layers.rs` reads this file and every file under `src/` and
//! fails on any reference against the order, so the house cannot tangle again unnoticed.
//!
//! 1. [`text`] — escaping for the terminal, shell quoting, the hex SHA-256, the output settings;
//! 2. [`sys`] — the only module with `unsafe`: the system calls std does not offer, each a small
//!    safe function with its SAFETY note;
//! 3. [`error`] — typed errors, field errors, structured hints and every exit code;
//! 4. [`input`] — the one reader of files read on an agent's behalf: never blocking, regular
//!    files only, bounded, inside the places a read belongs to, hashed as it streams;
//! 5. [`board`] — the board as data: the file as text, entries, the YAML tree, the typed
//!    frontmatter and its field registry, the ledger's, SLAs' and checks' data, the journal's
//!    records, the format version, emission with hand comments kept;
//! 6. [`law`] — every rule, pure: the transition table, validation, body/frontmatter agreement,
//!    the ledger's moves, lifecycle checks, SLAs, whose turn; [`law::judge`] is the one entry;
//! 7. [`repo`] — the only module that runs git: pinned settings, the repository's answers, and
//!    what a command observes before its write (pins, anchors, lifecycle facts);
//! 8. [`signature`] — signed records: signing and checking with OpenSSH's `ssh-keygen`, the
//!    trust root (an allowed-signers file) and the signing key, from the command or git's
//!    configuration;
//! 9. [`ops`] — the semantic operations as typed edits of a board (they state no refusal the
//!    law states);
//! 10. [`store`] — where a board lives: the backends (a file under a lock, a file in a git ref),
//!     the lock, compare-and-swap, durable replace, the journal seal, waiting for a change;
//! 11. [`transaction`] — one transaction for every writer: parse once, edit, judge, record,
//!     render, commit through the store;
//! 12. [`stats`] — where the time and tokens went, from the journal;
//! 13. [`watch`] — presence records and the watchdog's findings;
//! 14. [`render`] — human text, the whose-turn report, the SVG timeline;
//! 15. [`project`] — a set of boards read as one (a directory, or a git remote's board
//!     namespace): listing, reading and waiting for a change in any;
//! 16. [`cli`] — the command line's definitions (clap): every command's `Args`;
//! 17. [`commands`] — one handler per command, from typed arguments to an outcome.
//!
//! The binary (`main.rs`) is the edge over all of them: parse, run, print, exit code.

#![deny(unsafe_code)]

pub mod text;

#[allow(unsafe_code)]
pub mod sys;

pub mod error;

pub mod input;

pub mod board;

pub mod law;

pub mod repo;

pub mod signature;

pub mod ops;

pub mod store;

pub mod transaction;

pub mod stats;

pub mod watch;

pub mod render;

pub mod project;

pub mod cli;

pub mod commands;

pub use error::{Error, Result};
