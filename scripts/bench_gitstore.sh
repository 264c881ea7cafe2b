#!/usr/bin/env bash
# Git boards: write latency and cross-clone handoff latency over file:// and over a local
# `git daemon`, against a write to a blackboard file (the floor) in the same run, and the
# requests per minute of an idle `poll --wait`.
#
#   scripts/bench_gitstore.sh            # release build, 20 writes and 10 handoffs each
#   scripts/bench_gitstore.sh --quick    # 5 and 3
#   PAIR=target/debug/pair scripts/bench_gitstore.sh --quick   # no build
#
# Every figure is the median of whole processes timed from just before they start; a handoff
# is timed from just before the doer's write starts to the exit of the reviewer's
# `poll --wait --interval 1`, which was already waiting in another clone with another cache.
set -euo pipefail

writes=20
handoffs=10
idle_s=60
if [[ "${1:-}" == "--quick" ]]; then
    writes=5
    handoffs=3
    idle_s=10
fi

cd "$(dirname "$0")/.."
if [[ -z "${PAIR:-}" ]]; then
    cargo build --release --quiet
    PAIR="$PWD/target/release/pair"
fi
PAIR="$(realpath "$PAIR")"
work="$(mktemp -d)"
daemon_pid=""
cleanup() {
    [[ -n "$daemon_pid" ]] && kill "$daemon_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset PAIR_AGENT

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ms() { awk -v ns="$1" 'BEGIN {printf "%.1f", ns/1e6}'; }

# Time `pair note` $writes times on a board; print the median in ns.
time_writes() {
    local board="$1" cache="$2" i t0 t1
    for ((i = 0; i < writes; i++)); do
        t0=$(now_ns)
        PAIR_CACHE_DIR="$cache" "$PAIR" note "$board" --agent doer --section Evidence \
            --note "bench $i" >/dev/null
        t1=$(now_ns)
        echo $((t1 - t0))
    done | median
}

# Time $handoffs handoffs doer -> reviewer (block wakes a waiting reviewer); median in ns.
time_handoffs() {
    local board="$1" i t0 t1 pid
    for ((i = 0; i < handoffs; i++)); do
        PAIR_CACHE_DIR="$work/cache-alice" "$PAIR" poll "$board" --agent alice --wait \
            --interval 1 --timeout 60 >/dev/null 2>&1 &
        pid=$!
        sleep 1.5
        t0=$(now_ns)
        PAIR_CACHE_DIR="$work/cache-doer" "$PAIR" block "$board" --agent doer \
            --reason "bench $i" >/dev/null
        wait "$pid" || true
        t1=$(now_ns)
        echo $((t1 - t0))
        PAIR_CACHE_DIR="$work/cache-doer" "$PAIR" unblock "$board" --agent doer \
            --reason "bench $i" >/dev/null
    done | median
}

setup() {
    local board="$1" cache="$2"
    PAIR_CACHE_DIR="$cache" "$PAIR" init "$board" --doer doer --reviewers alice \
        --goal bench >/dev/null
    PAIR_CACHE_DIR="$work/cache-alice" "$PAIR" register "$board" --agent alice >/dev/null
    PAIR_CACHE_DIR="$cache" "$PAIR" advance "$board" --agent doer PLANNING \
        --user-approved >/dev/null
}

git init -q --bare "$work/remote.git"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$(git --exec-path)/git-daemon" --enable=receive-pack --export-all --reuseaddr \
    --base-path="$work" --listen=127.0.0.1 --port="$port" --verbose \
    --log-destination=stderr "$work" 2>"$work/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do
    (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
    sleep 0.05
done

local_board="$work/local.md"
file_board="git+file://$work/remote.git#refs/pair/file:task.md"
daemon_board="git+git://127.0.0.1:$port/remote.git#refs/pair/daemon:task.md"
for b in "$local_board" "$file_board" "$daemon_board"; do
    setup "$b" "$work/cache-doer"
done

w_local=$(time_writes "$local_board" "$work/cache-doer")
w_file=$(time_writes "$file_board" "$work/cache-doer")
w_daemon=$(time_writes "$daemon_board" "$work/cache-doer")
h_file=$(time_handoffs "$file_board")
h_daemon=$(time_handoffs "$daemon_board")

# An idle `poll --wait` (default interval) for $idle_s seconds: connections to the daemon.
before=$(grep -c "Connection from" "$work/daemon.log" || true)
PAIR_CACHE_DIR="$work/cache-alice" "$PAIR" poll "$daemon_board" --agent alice --wait \
    --timeout "$idle_s" >/dev/null 2>&1 || true
after=$(grep -c "Connection from" "$work/daemon.log" || true)
per_min=$(awk -v n=$((after - before)) -v s="$idle_s" 'BEGIN {printf "%.1f", n * 60 / s}')

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a/b}'; }
echo "pair: $PAIR ($("$PAIR" --version))"
echo "git: $(git --version); $(nproc) CPUs; writes=$writes handoffs=$handoffs (medians)"
echo
echo "| figure | median | vs local-file write |"
echo "|---|---|---|"
echo "| write (\`pair note\`), local file (floor) | $(ms "$w_local") ms | 1.0x |"
echo "| write, git board over file:// | $(ms "$w_file") ms | $(ratio "$w_file" "$w_local")x |"
echo "| write, git board over git daemon (127.0.0.1) | $(ms "$w_daemon") ms | $(ratio "$w_daemon" "$w_local")x |"
echo "| handoff across clones, file://, --interval 1 | $(ms "$h_file") ms | $(ratio "$h_file" "$w_local")x |"
echo "| handoff across clones, git daemon, --interval 1 | $(ms "$h_daemon") ms | $(ratio "$h_daemon" "$w_local")x |"
echo "| idle \`poll --wait\` (default interval), requests to the remote | $per_min per minute | - |"
