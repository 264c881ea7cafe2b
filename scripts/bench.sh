#!/bin/sh
# Build pair and the benchmark floors in release, then run the whole-process benchmark.
# Options are passed to the harness: --quick, --reps N, --idle-secs S, --keep, --sweep-only
# (only the board-size sweep: note and raw write against the floor from 1 KiB to 50 MiB).
# PAIR_BENCH_DIR=/some/dir puts the temporary blackboards on another filesystem.
# First, what the journal costs a write (examples/bench_journal.rs: a note against the journal's
# own work, measured in the same run; PAIR_BENCH_JOURNAL_REPS sets its repetitions).
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin pair --example floor_read --example floor_write --example bench_pair --example bench_journal
target/release/examples/bench_journal --reps "${PAIR_BENCH_JOURNAL_REPS:-200}"
exec target/release/examples/bench_pair "$@"
