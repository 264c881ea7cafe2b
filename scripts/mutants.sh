#!/bin/sh
# Mutation testing of the core with cargo-mutants: every mutant of the named files (a function
# body replaced, an operator flipped, a condition negated) is built and run against the tests;
# a mutant no test fails on is "missed" and is either caught by a new test or explained in
# docs/development.md ("Mutation testing"). Too slow for every CI run: the whole core is some
# 2,000 mutants, about a minute each on 2 cores, so run it by slices.
#
# Usage: scripts/mutants.sh [FILE...] [-- TEST_FILTER...]
#   scripts/mutants.sh                                  # the core: the write path and the rules
#   scripts/mutants.sh src/transaction.rs -- write:: crash:: journal::
# Needs: cargo install cargo-mutants --locked. Results: target/mutants/mutants.out/
#   (caught.txt, missed.txt, timeout.txt, unviable.txt, outcomes.json).
set -eu
cd "$(dirname "$0")/.."
files=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do files="$files $1"; shift; done
[ "${1:-}" = "--" ] && shift
if [ -z "$files" ]; then
    files="src/transaction.rs src/store/local.rs src/store/durable.rs src/store/lock.rs
           $(ls src/store/gitref/*.rs src/law/*.rs src/law/ledger/*.rs)"
fi
args=""
for f in $files; do args="$args --file $f"; done
# shellcheck disable=SC2086
exec cargo mutants $args --jobs 1 --timeout-multiplier 3 --output target/mutants \
    -- --test it --lib -- "$@"
