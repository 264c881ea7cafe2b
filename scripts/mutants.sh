#!/bin/sh
# Mutation testing of the core with cargo-mutants: every mutant of the named files (a function
# body replaced, an operator flipped, a condition negated) is built and run against the tests;
# a mutant no test fails on is "missed" and is either caught by a new test or explained in
# docs/development.md ("Mutation testing"). Too slow for every CI run (the core is some 2,000
# mutants), so run it by slices, each in two passes: a fast filter first, then the rest of the
# modules that cover the slice for the mutants the first pass missed (--iterate).
#
# Usage: scripts/mutants.sh [CARGO_MUTANTS_OPTION...] FILE... [-- TEST_FILTER...]
#   scripts/mutants.sh src/store/lock.rs -- lock:: write:: crash::
#   scripts/mutants.sh --iterate src/store/lock.rs -- concurrency:: users:: paths::
#   scripts/mutants.sh --in-place src/law/protocol.rs -- law::     # in a worktree of its own
# With no FILE, the core: the write path and the rules. Options before the files go to
# cargo-mutants as they are (--iterate, --in-place, --shard 1/4, --jobs 2).
# Needs: cargo install cargo-mutants cargo-nextest --locked; mold, if installed, links each
# mutant. Builds only the test binary `it`, with the `mutants` profile (Cargo.toml: no debug
# info), and runs it under nextest, which stops at the first failing test. Results:
# target/mutants.out/ (caught.txt, missed.txt, timeout.txt, unviable.txt, outcomes.json).
set -eu
cd "$(dirname "$0")/.."
opts=""
timeout="--timeout 150"
build_timeout="--build-timeout 400"
while [ $# -gt 0 ]; do
    case "$1" in
        --timeout) timeout="$1 $2"; shift 2 ;;
        --build-timeout) build_timeout="$1 $2"; shift 2 ;;
        --shard|--jobs|-j) opts="$opts $1 $2"; shift 2 ;;
        --) break ;;
        --*) opts="$opts $1"; shift ;;
        *) break ;;
    esac
done
files=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do files="$files $1"; shift; done
[ "${1:-}" = "--" ] && shift
if [ -z "$files" ]; then
    files="src/transaction.rs src/store/local.rs src/store/durable.rs src/store/lock.rs
           $(ls src/store/gitref/*.rs src/law/*.rs src/law/ledger/*.rs)"
fi
args=""
for f in $files; do args="$args --file $f"; done
# A mutant's build is mostly the link of the binary and the test binary: mold makes it several
# times shorter. The flag is the same for every build of the run, so nothing is built twice.
if command -v mold >/dev/null 2>&1; then
    RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-fuse-ld=mold"
    export RUSTFLAGS
fi
# shellcheck disable=SC2086
exec cargo mutants $args $opts --profile mutants --test-tool nextest --cargo-arg=--test=it \
    $timeout $build_timeout --no-shuffle --output target -- -- "$@"
