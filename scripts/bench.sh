#!/bin/sh
# Build pair and the benchmark floors in release, then run the whole-process benchmark.
# Options are passed to the harness: --quick, --reps N, --idle-secs S, --keep, --sweep-only
# (only the board-size sweep: note and raw write against the floor from 1 KiB to 50 MiB).
# PAIR_BENCH_DIR=/some/dir puts the temporary blackboards on another filesystem.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin pair --example floor_read --example floor_write --example bench_pair
exec target/release/examples/bench_pair "$@"
