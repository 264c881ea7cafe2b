//! The integration tests: one binary, one shared runner ([`common`], every process killed after
//! a timeout so a hang fails instead of stalling the suite), one module per behaviour.
//!
//! Every test drives the real `pair` binary (or the library's engine, for the in-memory
//! property tests) on real files in temporary directories.

mod common;
#[path = "common/proto.rs"]
mod proto;

mod adversarial;
mod agent_guidance;
mod bad_input;
mod cli_conventions;
mod concurrency;
mod crash;
mod docs;
mod experience;
mod fixtures;
mod formats;
mod foundation_flow;
mod gitstore;
mod hardening;
mod hostile;
mod journal;
mod json_docs;
mod law_replay;
mod ledger;
mod ledger_prop;
mod lifecycle;
mod pins;
mod protocol_dead_ends;
mod protocol_lifecycle;
mod protocol_prop;
mod protocol_refusals;
mod regressions;
mod roundtrip_prop;
mod store;
mod ux;
mod watch;
