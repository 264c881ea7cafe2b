#!/bin/sh
# Time what pinning costs: `pair submit code` and `pair verdict` on a code round whose staged
# diff is about 5,000 lines (each pins or re-checks the diff's SHA-256 and the git tree of the
# content, written from a temporary index), against `git diff --cached` and `git write-tree`
# alone (what any pin must at least run) and against the same commands on a text-pinned plan
# round (no git at all); and `pair advance COMMITTED` on a board that records its repository
# (the commit held to the approved tree, on the topic branch, from base_sha).
# Usage: scripts/bench_pins.sh [REPS]   (default 30; prints medians in milliseconds)
# PAIR_BIN=/path/to/pair times that binary instead of building this tree (to compare versions;
# a version without `pair worktree create` skips the COMMITTED timing).
set -eu
cd "$(dirname "$0")/.."
reps=${1:-30}
if [ -n "${PAIR_BIN:-}" ]; then
    pair=$PAIR_BIN
else
    cargo build --release --quiet --bin pair
    pair=$(pwd)/target/release/pair
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/pair-bench-pins.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

# A worktree whose staged diff is ~5,000 lines: 10 files of 250 lines, every line changed.
git init -q wt
for f in 0 1 2 3 4 5 6 7 8 9; do
    seq 1 250 | sed "s/^/let value_$f = /" >"wt/file$f.rs"
done
git -C wt add . && git -C wt -c user.name=b -c user.email=b@b.invalid commit -qm base
for f in 0 1 2 3 4 5 6 7 8 9; do
    seq 1 250 | sed "s/^/let changed_$f = /" >"wt/file$f.rs"
done
git -C wt add .

"$pair" init board.md --reviewers alice --yolo >/dev/null
"$pair" register board.md --agent alice >/dev/null
"$pair" advance board.md --agent doer PLANNING >/dev/null
"$pair" submit board.md --agent doer plan --note 'the plan' >/dev/null
cp board.md plan.md
"$pair" verdict board.md --agent alice APPROVED --revision 1 --note ok >/dev/null
"$pair" advance board.md --agent doer CODING --worktree "$dir/wt" >/dev/null
cp board.md coding.md

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m/1e6}'; }

# A board that records its repository (pair worktree create), approved and committed: the
# verified `advance COMMITTED` is timed on copies of it.
lifecycle=no
if "$pair" worktree create --help >/dev/null 2>&1; then lifecycle=yes; fi
if [ "$lifecycle" = yes ]; then
git init -q repo
printf 'board.md\nboard.md.lock\nboard.md.lock.owner.json\n.worktrees/\n' >repo/.gitignore
for f in 0 1 2 3 4 5 6 7 8 9; do
    seq 1 250 | sed "s/^/let value_$f = /" >"repo/file$f.rs"
done
git -C repo add . && git -C repo -c user.name=b -c user.email=b@b.invalid commit -qm base
"$pair" init repo/board.md --reviewers alice --yolo >/dev/null
"$pair" register repo/board.md --agent alice >/dev/null
"$pair" advance repo/board.md --agent doer PLANNING >/dev/null
"$pair" submit repo/board.md --agent doer plan --note 'the plan' >/dev/null
"$pair" verdict repo/board.md --agent alice APPROVED --revision 1 --note ok >/dev/null
"$pair" worktree create repo/board.md --agent doer >/dev/null
for f in 0 1 2 3 4 5 6 7 8 9; do
    seq 1 250 | sed "s/^/let changed_$f = /" >"repo/.worktrees/board/file$f.rs"
done
git -C repo/.worktrees/board add .
"$pair" submit repo/board.md --agent doer code --note c >/dev/null
"$pair" verdict repo/board.md --agent alice APPROVED --revision 1 --note ok >/dev/null
git -C repo/.worktrees/board -c user.name=b -c user.email=b@b.invalid commit -qm fix
cp repo/board.md ready.md
fi

: >git.t; : >tree.t; : >submit.t; : >verdict.t; : >psubmit.t; : >pverdict.t; : >poll.t; : >commit.t
i=0
while [ "$i" -lt "$reps" ]; do
    t0=$(now_ns); git -C wt diff --cached >/dev/null; t1=$(now_ns); echo $((t1 - t0)) >>git.t
    t0=$(now_ns); git -C wt write-tree >/dev/null; t1=$(now_ns); echo $((t1 - t0)) >>tree.t
    cp coding.md b.md
    t0=$(now_ns); "$pair" submit b.md --agent doer code --note c >/dev/null; t1=$(now_ns)
    echo $((t1 - t0)) >>submit.t
    t0=$(now_ns); "$pair" poll b.md --agent alice >/dev/null || true; t1=$(now_ns)
    echo $((t1 - t0)) >>poll.t
    t0=$(now_ns); "$pair" verdict b.md --agent alice APPROVED --revision 1 --note ok >/dev/null
    t1=$(now_ns); echo $((t1 - t0)) >>verdict.t
    cp plan.md p.md
    "$pair" claim p.md --agent alice >/dev/null
    t0=$(now_ns); "$pair" verdict p.md --agent alice APPROVED --revision 1 --note ok >/dev/null
    t1=$(now_ns); echo $((t1 - t0)) >>pverdict.t
    if [ "$lifecycle" = yes ]; then
        cp ready.md repo/board.md
        t0=$(now_ns); "$pair" advance repo/board.md --agent doer COMMITTED >/dev/null
        t1=$(now_ns); echo $((t1 - t0)) >>commit.t
    fi
    i=$((i + 1))
done
lines=$(cd "$dir" && cp coding.md d.md && "$pair" submit d.md --agent doer code --note c >/dev/null \
    && "$pair" diff d.md 2>/dev/null | wc -l)
echo "staged diff: $lines lines (canonical form, as \`pair diff\` prints it), $reps repetitions, medians:"
echo "  git diff --cached (alone)            $(median <git.t) ms"
echo "  git write-tree (alone)               $(median <tree.t) ms"
echo "  pair submit code                     $(median <submit.t) ms"
echo "  pair verdict (code round, pinned)    $(median <verdict.t) ms"
echo "  pair verdict (plan round, text pin)  $(median <pverdict.t) ms"
echo "  pair poll (code round, pinned)       $(median <poll.t) ms"
if [ "$lifecycle" = yes ]; then
    echo "  pair advance COMMITTED (verified)    $(median <commit.t) ms"
fi
