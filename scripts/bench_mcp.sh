#!/bin/sh
# How soon a waiting `poll` wakes through `pair mcp`, against `pair poll --wait`: from the start
# of the `pair submit` that gives the reviewer the turn to the waiting poll's answer (the MCP
# response, seen by the MCP Python SDK; the exit of the `poll --wait` process). Each run waits
# until the poll is asleep (its progress notification; its presence record) before writing.
# Usage: scripts/bench_mcp.sh [RUNS]   (default 30; prints medians and p90 in milliseconds)
# PAIR_BIN=/path/to/pair times that binary instead of building this tree.
set -eu
cd "$(dirname "$0")/.."
runs=${1:-30}
if [ -n "${PAIR_BIN:-}" ]; then
    pair=$PAIR_BIN
else
    cargo build --release --quiet --bin pair
    pair=$(pwd)/target/release/pair
fi
scripts/mcp-clients.sh >/dev/null
dir=$(mktemp -d "${TMPDIR:-/tmp}/pair-bench-mcp.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"${CARGO_TARGET_DIR:-target}/mcp-clients/venv/bin/python" tests/mcp/client.py latency \
    --pair "$pair" --dir "$dir" --runs "$runs"
