#!/usr/bin/env bash
# Install the MCP clients the tests drive `pair mcp` with, at the versions pinned in tests/mcp/:
# the official Python SDK (requirements.txt, into a virtual environment) and the MCP Inspector's
# command-line mode (package.json and package-lock.json, with `npm ci`). They go to
# $CARGO_TARGET_DIR/mcp-clients (default target/mcp-clients), where tests/it/mcp.rs looks for
# them; .ci/run runs this. Run again, it installs only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${CARGO_TARGET_DIR:-target}/mcp-clients
mkdir -p "$dir"

python=$dir/venv/bin/python
if ! cmp -s tests/mcp/requirements.txt "$dir/venv/requirements.txt"; then
    rm -rf "$dir/venv"
    python3 -m venv "$dir/venv"
    "$python" -m pip install --quiet --disable-pip-version-check -r tests/mcp/requirements.txt
    cp tests/mcp/requirements.txt "$dir/venv/requirements.txt"
fi

if ! cmp -s tests/mcp/package-lock.json "$dir/npm/package-lock.json" ||
    [[ ! -d $dir/npm/node_modules/@modelcontextprotocol/inspector ]]; then
    rm -rf "$dir/npm"
    mkdir -p "$dir/npm"
    cp tests/mcp/package.json tests/mcp/package-lock.json "$dir/npm/"
    (cd "$dir/npm" && npm ci --no-audit --no-fund --loglevel=error)
fi

"$python" -c 'import importlib.metadata as m; print("mcp (Python SDK)", m.version("mcp"))'
node -e 'console.log("@modelcontextprotocol/inspector", require(process.argv[1]).version)' \
    "$(cd "$dir/npm" && pwd)/node_modules/@modelcontextprotocol/inspector/package.json"
