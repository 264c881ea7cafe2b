//! The integration tests: one binary, one shared runner ([`common`], every process killed after
//! a timeout so a hang fails instead of stalling the suite), one module per behaviour.
//!
//! Every test drives the real `pair` binary (or the library's engine, for the in-memory
//! property tests) on real files in temporary directories.

mod common;
#[path = "common/proto.rs"]
mod proto;

mod advance;
mod agents;
mod block;
mod check;
mod cli;
mod concurrency;
mod crash;
mod cursor;
mod debate;
mod demo;
mod depend;
mod dissent;
mod docs;
mod formats;
mod gitstore;
mod guidance;
mod handoff;
mod independence;
mod init;
mod journal;
mod json;
mod law;
mod layers;
mod ledger;
mod lifecycle;
mod limits;
mod line_endings;
mod lock;
mod machines;
mod malformed;
mod mcp;
mod mcp_server;
mod note;
mod paths;
mod pins;
mod poll;
mod pool;
mod project;
mod project_cursor;
mod project_fair;
mod project_read;
mod project_run;
mod properties;
mod readers;
mod reads;
mod refusals;
mod repair;
mod roundtrip;
mod seal;
mod second;
mod signed;
mod slow_remotes;
mod status;
mod submit;
mod suite;
mod timeline;
mod top;
mod transcript;
mod users;
mod validate;
mod verdict;
mod walkthroughs;
mod watch;
mod worktree;
mod write;
