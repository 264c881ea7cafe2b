#!/usr/bin/env bash
# Projects of boards: what `pair ls` and `pair next` cost at 10, 100 and 1,000 boards, on a
# directory and on a git remote's namespace served by `git daemon` on 127.0.0.1; how soon a
# waiting `pair next --wait` wakes after the write that gives its agent work; and what an idle
# `next --wait` costs in CPU.
#
#   scripts/bench_project.sh                 # release build; 10, 100, 1000 boards; 11 runs each
#   scripts/bench_project.sh --quick         # 10 and 100 boards, 3 runs, 3 wake-ups
#   scripts/bench_project.sh --reads         # ls and next only (no wake-ups, no idle figure)
#   scripts/bench_project.sh --keep          # keep the projects (the directory is printed)
#   PAIR=target/debug/pair scripts/bench_project.sh --quick   # no build
#
# The boards: ten templates made once by real `pair` commands in a throwaway git repository (a
# mix of phases: DRAFT waiting for another board, PLANNING, a plan submitted to a pool of three
# reviewers, one claimed from the pool, one sent back, a red test submitted, CODING in a real
# worktree, COMMITTED, and a board released by its COMMITTED dependency), copied into one
# directory per group of ten (g001/, g002/, ...: a board's `after:` names a board beside it, so
# every copy waits for its own group's board). Every project is checked with `pair validate DIR`.
# The remote namespace holds the same boards, one ref each (refs/s100/g001/plan, ...: a board at
# board.md in each), made with git plumbing in the bare repository; `ls` must read every one.
#
# Every figure is whole processes timed by scripts/bench_project.c (built here with cc): from
# just before fork to the return of wait4; a wake-up from just before the rename(2) that puts the
# new board in place (or from the start and the exit of the `pair` write that makes it) to the
# first byte the waiting `next --wait` prints. The floor of `ls` is the least any program could
# do for it: exec, walk the directory and read each board's head up to its closing `---`. The
# floor, `ls` and `next` run interleaved (the harness's `paired`: one of each in turn), and
# beside the medians are their CPU times and the instructions of one run under
# `valgrind --tool=callgrind` (repeatable where wall times are not; the process alone, not the
# git it starts; "-" without valgrind). On a remote, the floor is the directory's of the same
# size, and `git ls-remote` of the namespace alone runs in the same rounds.
set -euo pipefail

reps=11
wakes=9
sizes="10 100 1000"
remote_sizes="10 100 1000"
remote_wakes="10 100"
idle_s=5
keep=""
reads_only=""
for a in "$@"; do
    case "$a" in
        --quick) reps=3; wakes=3; sizes="10 100"; remote_sizes="10"; remote_wakes="10" ;;
        --keep) keep=1 ;;
        --reads) reads_only=1 ;;
        *) echo "unknown option $a" >&2; exit 2 ;;
    esac
done

cd "$(dirname "$0")/.."
if [[ -z "${PAIR:-}" ]]; then
    cargo build --release --quiet --bin pair
    PAIR="$PWD/target/release/pair"
fi
PAIR="$(realpath "$PAIR")"
work="$(mktemp -d)"
daemon_pid=""
cleanup() {
    [[ -n "$daemon_pid" ]] && kill "$daemon_pid" 2>/dev/null || true
    if [[ -n "$keep" ]]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@pair.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@pair.invalid
export PAIR_CACHE_DIR="$work/cache"
unset PAIR_AGENT PAIR_BOARD

cc -O2 -o "$work/harness" scripts/bench_project.c
H="$work/harness"
p() { "$PAIR" "$@" >/dev/null; }
ms() { awk -v ns="$1" 'BEGIN {printf "%.1f", ns/1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }

# ---- the ten templates, made by real commands --------------------------------------------------
tpl="$work/tpl"
mkdir -p "$tpl"
git -C "$tpl" init -q
git -C "$tpl" commit -q --allow-empty -m base
note="$work/note.md"
echo "As planned." >"$note"
(
    cd "$tpl"
    sha() { "$PAIR" diff "$1" 2>&1 >/dev/null | grep -o '[0-9a-f]\{64\}' | head -1; }
    planned() { # BOARD DOER: a plan submitted
        p advance "$1" PLANNING --agent "$2"
        p submit "$1" plan --agent "$2" --note-file "$note"
    }
    approved() { # BOARD DOER REVIEWER: the plan approved by the one reviewer
        planned "$1" "$2"
        p verdict "$1" APPROVED --agent "$3" --revision 1 --artifact-sha256 "$(sha "$1")" \
            --note "Fine."
    }
    # done: COMMITTED, its code in a real worktree and a real commit.
    p init done.md --goal "Parse the config file" --doer d1 --reviewers r1 --yolo
    p register done.md --agent r1
    approved done.md d1 r1
    p worktree create done.md --agent d1
    echo "config" >.worktrees/done/config.txt
    git -C .worktrees/done add config.txt
    p submit done.md code --agent d1 --note-file "$note"
    p verdict done.md APPROVED --agent r1 --revision 1 --artifact-sha256 "$(sha done.md)" \
        --note "Good."
    git -C .worktrees/done commit -q -m "config parser"
    p advance done.md COMMITTED --agent d1 --commit-sha "$(git -C .worktrees/done rev-parse HEAD)"
    # build: CODING in a worktree.
    p init build.md --goal "Write the exporter" --doer d2 --reviewers r2 --yolo
    p register build.md --agent r2
    approved build.md d2 r2
    p worktree create build.md --agent d2
    # after-done: released by done (COMMITTED), in PLANNING.
    p init after-done.md --goal "Use the parsed config" --doer d1 --reviewers r1 --yolo --after done
    p register after-done.md --agent r1
    p advance after-done.md PLANNING --agent d1
    # after-build: waits for build.
    p init after-build.md --goal "Document the exporter" --doer d2 --reviewers r1 --yolo \
        --after build
    p register after-build.md --agent r1
    # plan: PLANNING.
    p init plan.md --goal "Plan the importer" --doer d1 --reviewers r2 --yolo
    p register plan.md --agent r2
    p advance plan.md PLANNING --agent d1
    # plan-review: a plan waiting for one review from a pool of three.
    p init plan-review.md --goal "Plan the cache" --doer d2 --reviewer-pool p1,p2,p3 --reviews 1 --yolo
    planned plan-review.md d2
    # plan-claimed: the same, claimed by p2.
    p init plan-claimed.md --goal "Plan the retry policy" --doer d1 --reviewer-pool p1,p2,p3 --yolo
    planned plan-claimed.md d1
    p register plan-claimed.md --agent p2
    p claim plan-claimed.md --agent p2
    # plan-back: sent back by one of two reviewers.
    p init plan-back.md --goal "Plan the migration" --doer d2 --reviewers r1,r2 --yolo
    p register plan-back.md --agent r1
    p register plan-back.md --agent r2
    planned plan-back.md d2
    p verdict plan-back.md APPROVED --agent r2 --revision 1 --artifact-sha256 "$(sha plan-back.md)" \
        --note "Fine."
    p verdict plan-back.md CHANGES_REQUESTED --agent r1 --revision 1 \
        --artifact-sha256 "$(sha plan-back.md)" --note "Step 2 needs a rollback."
    # tests: a red test submitted.
    p init tests.md --goal "Fix the date bug" --doer d1 --reviewers r2 --yolo --red-test
    p register tests.md --agent r2
    approved tests.md d1 r2
    p advance tests.md RED_TESTING --agent d1
    p submit tests.md red-test --agent d1 --note-file "$note"
    # spec: DRAFT.
    p init spec.md --goal "Specify the API" --doer d2 --reviewers r2 --yolo
    p register spec.md --agent r2
    # The wake-up board, outside the groups: PLANNING with reviewer w (idle), and the same
    # after its plan was submitted (w's turn: busy).
    p init wake.md --goal "Plan the wake-up" --doer dw --reviewers w --yolo
    p register wake.md --agent w
    p advance wake.md PLANNING --agent dw
    cp wake.md "$work/wake-idle.md"
    p submit wake.md plan --agent dw --note-file "$note"
    cp wake.md "$work/wake-busy.md"
    rm wake.md
)
templates=(spec plan plan-review plan-claimed plan-back tests build done after-done after-build)

# A directory project of N boards: N/10 groups of the ten templates.
make_dir() {
    local n=$1 dir="$work/dir$1" g
    mkdir -p "$dir"
    for ((g = 1; g <= n / 10; g++)); do
        local gd
        gd="$dir/$(printf 'g%03d' "$g")"
        mkdir -p "$gd"
        for t in "${templates[@]}"; do cp "$tpl/$t.md" "$gd/$t.md"; done
    done
    "$PAIR" validate "$dir" >/dev/null || { echo "pair validate $dir failed" >&2; exit 1; }
    echo "$dir"
}

# ---- the remote: a bare repository served by git daemon on 127.0.0.1 -------------------------
git init -q --bare "$work/remote.git"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$(git --exec-path)/git-daemon" --enable=receive-pack --export-all --reuseaddr \
    --base-path="$work" --listen=127.0.0.1 --port="$port" "$work" 2>/dev/null &
daemon_pid=$!
for _ in $(seq 100); do
    (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
    sleep 0.05
done
url="git://127.0.0.1:$port/remote.git"
bare="$work/remote.git"

# A commit holding FILE at board.md (a namespace's default path), in the bare repository;
# prints its id.
commit_of() {
    local blob tree
    blob=$(git --git-dir="$bare" hash-object -w "$1")
    tree=$(printf '100644 blob %s\tboard.md\n' "$blob" | git --git-dir="$bare" mktree)
    git --git-dir="$bare" commit-tree "$tree" -m "board"
}
declare -A tcommit
for t in "${templates[@]}"; do tcommit[$t]=$(commit_of "$tpl/$t.md"); done
idle_commit=$(commit_of "$work/wake-idle.md")

# The namespace refs/s$N/ of N boards (same groups as the directory).
make_remote() {
    local n=$1 g
    for ((g = 1; g <= n / 10; g++)); do
        for t in "${templates[@]}"; do
            printf 'update refs/s%d/g%03d/%s %s\n' "$n" "$g" "$t" "${tcommit[$t]}"
        done
    done | git --git-dir="$bare" update-ref --stdin
    local ns="git+$url#refs/s$n/" valid
    valid=$("$PAIR" ls "$ns" --json | grep -o '"error":null' | wc -l)
    [[ "$valid" == "$n" ]] || { echo "$ns: $valid of $n boards read" >&2; exit 1; }
    echo "$ns"
}

# ---- ls and next --------------------------------------------------------------------------------
# Instructions of one run of CMD under callgrind (the process alone), or "-" without valgrind.
instr() {
    command -v valgrind >/dev/null || { echo "-"; return; }
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        awk '/Collected :/ {print $NF}'
}
mi() { [[ "$1" == "-" ]] && echo "-" || awk -v n="$1" 'BEGIN {printf "%.1f M", n/1e6}'; }
echo "pair: $PAIR ($("$PAIR" --version)); $(nproc) CPUs; $(git --version); runs=$reps wake-ups=$wakes; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| boards | store | floor (exec, walk, read heads) | \`ls --json\` | ls / floor | \`next --agent p1 --json\` | next / floor | CPU: floor, ls, next | instructions: floor, ls, next |"
echo "|---|---|---|---|---|---|---|---|---|"
declare -A ls_ms next_ms floor_ms
for n in $sizes; do
    dir=$(make_dir "$n")
    "$H" time 1 -- "$PAIR" ls "$dir" --json >/dev/null # warm the page cache
    { read -r floor _ _ fc _; read -r ls _ _ lc _; read -r nx _ _ nc _; } < <("$H" paired "$reps" \
        -- "$H" floor "$dir" -- "$PAIR" ls "$dir" --json -- "$PAIR" next --agent p1 "$dir" --json)
    ls_ms[$n]=$ls
    next_ms[$n]=$nx
    floor_ms[$n]=$floor
    echo "| $n | directory | $(ms "$floor") ms | $(ms "$ls") ms | $(ratio "$ls" "$floor")x | $(ms "$nx") ms | $(ratio "$nx" "$floor")x | $(ms "$fc"), $(ms "$lc"), $(ms "$nc") ms | $(mi "$(instr "$H" floor "$dir")"), $(mi "$(instr "$PAIR" ls "$dir" --json)"), $(mi "$(instr "$PAIR" next --agent p1 "$dir" --json)") |"
done
for n in $remote_sizes; do
    ns=$(make_remote "$n")
    dir="$work/dir$n"
    [[ -d "$dir" ]] || dir=$(make_dir "$n")
    read -r cold _ <<<"$("$H" time 1 -- env PAIR_CACHE_DIR="$work/cache-cold$n" "$PAIR" ls "$ns" --json)"
    { read -r floor _ _ fc _; read -r lsr _; read -r ls _ _ lc _; read -r nx _ _ nc _; } < <(
        "$H" paired "$reps" -- "$H" floor "$dir" -- git ls-remote --refs "$url" "refs/s$n/*" \
            -- "$PAIR" ls "$ns" --json -- "$PAIR" next --agent p1 "$ns" --json)
    echo "| $n | git daemon (first ls, empty cache: $(ms "$cold") ms; \`git ls-remote\` alone: $(ms "$lsr") ms) | $(ms "$floor") ms | $(ms "$ls") ms | $(ratio "$ls" "$floor")x | $(ms "$nx") ms | $(ratio "$nx" "$floor")x | $(ms "$fc"), $(ms "$lc"), $(ms "$nc") ms (git included) | -, $(mi "$(instr "$PAIR" ls "$ns" --json)"), $(mi "$(instr "$PAIR" next --agent p1 "$ns" --json)") |"
done
echo
first=${sizes%% *}
last=${sizes##* }
echo "Growth (directory): ls ${first}→${last} boards: $(ratio "${ls_ms[$last]}" "${ls_ms[$first]}")x; next: $(ratio "${next_ms[$last]}" "${next_ms[$first]}")x; floor: $(ratio "${floor_ms[$last]}" "${floor_ms[$first]}")x"
echo
[[ -n "$reads_only" ]] && exit 0

# ---- next --wait: wake-up latency and idle CPU -------------------------------------------------
echo "| wake-up of a waiting \`next --wait\` | boards | median | worst |"
echo "|---|---|---|---|"
for n in $sizes; do
    [[ "$n" == 1000 && -n "${BENCH_SKIP_1000_WAKE:-}" ]] && continue
    dir="$work/dir$n"
    target="$dir/g001/plan.md"
    cp "$target" "$work/plan-orig.md"
    out=$("$H" wake-rename "$wakes" "$target" "$work/wake-idle.md" "$work/wake-busy.md" 1000 -- \
        "$PAIR" next --agent w "$dir" --wait --timeout 60 --json | tail -1)
    read -r med worst <<<"$out"
    echo "| rename(2) of the board → waiter prints (directory) | $n | $(ms "$med") ms | $(ms "$worst") ms |"
    reset="cp $work/wake-idle.md $target.r && mv $target.r $target"
    out=$("$H" wake-cmd "$wakes" 1000 "$reset" -- "$PAIR" submit "$target" plan --agent dw \
        --note "Woken." -- "$PAIR" next --agent w "$dir" --wait --timeout 60 --json | tail -1)
    read -r s_med s_worst e_med e_worst <<<"$out"
    echo "| \`pair submit\` starts → waiter prints (directory) | $n | $(ms "$s_med") ms | $(ms "$s_worst") ms |"
    echo "| \`pair submit\` exits → waiter prints (directory) | $n | $(ms "$e_med") ms | $(ms "$e_worst") ms |"
    cp "$work/plan-orig.md" "$target"
done
for n in $remote_wakes; do
    ns="git+$url#refs/s$n/"
    board="git+$url#refs/s$n/g001/plan:board.md"
    orig=$(git --git-dir="$bare" rev-parse "refs/s$n/g001/plan")
    reset="git --git-dir=$bare update-ref refs/s$n/g001/plan $idle_commit && rm -rf $work/cache-writer"
    out=$("$H" wake-cmd "$wakes" 2500 "$reset" -- env PAIR_CACHE_DIR="$work/cache-writer" \
        "$PAIR" submit "$board" plan --agent dw --note "Woken." -- \
        "$PAIR" next --agent w "$ns" --wait --timeout 60 --json | tail -1)
    read -r s_med s_worst e_med e_worst <<<"$out"
    echo "| \`pair submit\` starts → waiter prints (git daemon, default interval) | $n | $(ms "$s_med") ms | $(ms "$s_worst") ms |"
    echo "| \`pair submit\` exits → waiter prints (git daemon, default interval) | $n | $(ms "$e_med") ms | $(ms "$e_worst") ms |"
    git --git-dir="$bare" update-ref "refs/s$n/g001/plan" "$orig"
done
echo
echo "| idle \`next --wait\` for ${idle_s} s | boards | CPU (user+sys, its git children included) | share of a core |"
echo "|---|---|---|---|"
mid=$(echo "$sizes" | awk '{print ($2 ? $2 : $1)}')
read -r wall cpu <<<"$("$H" idle "$idle_s" -- "$PAIR" next --agent nobody "$work/dir$mid" --wait --timeout "$idle_s" --json)"
echo "| directory | $mid | $(ms "$cpu") ms | $(awk -v c="$cpu" -v w="$wall" 'BEGIN {printf "%.3f%%", 100*c/w}') |"
rn=${remote_sizes%% *}
read -r wall cpu <<<"$("$H" idle "$idle_s" -- "$PAIR" next --agent nobody "git+$url#refs/s$rn/" --wait --timeout "$idle_s" --json)"
echo "| git daemon, default interval | $rn | $(ms "$cpu") ms | $(awk -v c="$cpu" -v w="$wall" 'BEGIN {printf "%.3f%%", 100*c/w}') |"
