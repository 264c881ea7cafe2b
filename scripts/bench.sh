#!/bin/sh
# Build pair and the benchmark floors in release, then run the whole-process benchmark.
# Options are passed to the harness: --quick, --reps N, --idle-secs S, --keep, --sweep-only
# (only the board-size sweep: note and raw write against the floor from 1 KiB to 50 MiB).
# PAIR_BENCH_DIR=/some/dir puts the temporary blackboards on another filesystem.
# --startup: only the start-up cost (`pair --version`, `pair poll` on 1 KiB) of the release build
# and of a statically linked build of the same code (built into target/static; a static glibc
# build needs --target, because +crt-static cannot build the proc-macro crates for the host).
# Otherwise, first, what the journal costs a write (examples/bench_journal.rs: a note against the
# journal's own work, measured in the same run; PAIR_BENCH_JOURNAL_REPS sets its repetitions).
# --matrix: only the cost sweep (examples/bench_matrix.rs): `poll --json` and `note` over board
# size (4 KB to 50 MB) x ledger size (0 to 1,000 objections) x store (file, git board on a local
# bare repository), against the floors in the same run, with callgrind instruction counts when
# valgrind is installed. Its options follow: --quick (a few minutes), --reps N, --no-git,
# --no-callgrind, --keep.
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = --matrix ]; then
    shift
    # The examples first and `pair` alone after: built together, `pair` would get the test-only
    # fault injection that the examples' dev-dependency turns on.
    cargo build --release --quiet --example floor_read --example floor_write --example bench_matrix
    cargo build --release --quiet --bin pair
    exec "${CARGO_TARGET_DIR:-target}/release/examples/bench_matrix" "$@"
fi
# The examples first and `pair` alone after: built together, `pair` would get the test-only fault
# injection that the examples' dev-dependency turns on.
cargo build --release --quiet --example floor_read --example floor_write --example bench_pair --example bench_journal
cargo build --release --quiet --bin pair
startup=
for a in "$@"; do
    if [ "$a" = --startup ]; then
        startup=1
        triple=$(rustc -vV | sed -n 's/^host: //p')
        CARGO_TARGET_DIR=target/static RUSTFLAGS="-C target-feature=+crt-static" \
            cargo build --release --quiet --bin pair --target "$triple"
        PAIR_BENCH_ALT="static=$(pwd)/target/static/$triple/release/pair${PAIR_BENCH_ALT:+:$PAIR_BENCH_ALT}"
        export PAIR_BENCH_ALT
    fi
done
if [ -z "$startup" ]; then
    target/release/examples/bench_journal --reps "${PAIR_BENCH_JOURNAL_REPS:-200}"
fi
exec target/release/examples/bench_pair "$@"
