#!/bin/bash
# Write the boards of the fixture corpus `tests/fixtures/formats/N/` with a `pair` binary, through
# the flows they record: run it with the release of a new format (PAIR=path/to/pair) into an
# empty directory, then copy the boards into `tests/fixtures/formats/N/`.
#
#   scripts/format_fixtures.sh OUT_DIR
#   SIGNED=1 scripts/format_fixtures.sh OUT_DIR   # format 3: signed boards (not the demo's)
#
# SIGNED=1 makes each board with `init --signed` and signs each write with a key of its agent,
# made here by ssh-keygen and thrown away; OUT_DIR/allowed_signers gets their public keys (it
# belongs in tests/fixtures/signing/, not among the boards).
#
# The boards record paths under /tmp/pair-fixtures (worktrees, the repository), where the flows
# run. The times are fixed with PAIR_NOW (a debug build's clock), one to seven minutes apart; the
# journal's pids, hosts and the demo's clock are the machine's. The corpus also holds boards
# written by hand (a board naming `format: 1`, and one with what a later version adds:
# fractional seconds, unknown keys and journal words), which this script does not write.
set -euo pipefail
OUT=${1:?usage: scripts/format_fixtures.sh OUT_DIR}
PAIR=${PAIR:-pair}
ROOT=/tmp/pair-fixtures
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "$ROOT"
mkdir -p "$ROOT"
unset PAIR_AGENT PAIR_BOARD
T0=$(date -u -d 2026-05-04T09:00:00Z +%s)
STEP=0
SIGN=()
if [ -n "${SIGNED:-}" ]; then
    mkdir -p "$ROOT/keys"
    for a in doer alice bob; do
        ssh-keygen -q -t ed25519 -N '' -C "$a" -f "$ROOT/keys/$a"
        echo "$a $(cat "$ROOT/keys/$a.pub")"
    done >"$OUT/allowed_signers"
    export PAIR_ALLOWED_SIGNERS="$OUT/allowed_signers"
fi
p() {
    STEP=$((STEP + 1 + (STEP * 7) % 6))
    local agent=doer prev= args=("$@")
    for a in "$@"; do
        [ "$prev" = --agent ] && agent=$a
        prev=$a
    done
    if [ -n "${SIGNED:-}" ]; then
        [ "$1" = init ] && args+=(--signed)
        export PAIR_SIGNING_KEY="$ROOT/keys/$agent"
    fi
    PAIR_NOW=$(date -u -d @$((T0 + STEP * 60)) +%Y-%m-%dT%H:%M:%SZ) "$PAIR" "${args[@]}" >/dev/null
}

cd "$ROOT"
# fresh: a board as init leaves it
p init fresh.md --goal 'Add a --dry-run flag to the exporter' --reviewers alice

# mid_review: a plan round sent back, the second revision half reviewed, usage reported
B=mid_review.md
p init $B --goal 'Export: retry a failed upload at most 3 times' --reviewers alice,bob
p register $B --agent alice
p register $B --agent bob
p advance $B --agent doer PLANNING --user-approved
p submit $B --agent doer plan --note $'1. Wrap upload() in a retry loop.\n2. Log each retry.' \
    --user-approved --tokens 1800 --cost 0.05
p claim $B --agent alice
p verdict $B --agent alice APPROVED --revision 1 --note 'Looks right.' --tokens 600
p verdict $B --agent bob CHANGES_REQUESTED --revision 1 \
    --note 'Retries need a backoff; say how long.' --tokens 700 --cost 0.02
p advance $B --agent doer PLANNING
p submit $B --agent doer plan --note $'1. Wrap upload() in a retry loop with exponential backoff (1 s, 2 s, 4 s).\n2. Log each retry.' \
    --user-approved --tokens 900
p verdict $B --agent alice APPROVED --revision 2 --note 'The backoff is fine.'
p note $B --agent doer --section Evidence --note 'The upload fails about once in 50 runs on CI.'

# ledger: objections raised, one resolved, the round cap set
B=ledger.md
p init $B --goal 'Cache the search index between runs' --reviewers alice --max-rounds 3
p register $B --agent alice
p advance $B --agent doer PLANNING --user-approved
p submit $B --agent doer plan \
    --note $'1. Write the index to ~/.cache/search.idx.\n2. Read it back on start.' --user-approved
p object $B --agent alice --severity blocking --anchor '## Goal' \
    --title 'A stale index is never rebuilt' --evidence 'Nothing checks the sources changed.' \
    --fix 'Store the sources hash and rebuild on mismatch.'
p object $B --agent alice --severity advisory --anchor '## Goal' --title 'Name the cache path' \
    --evidence 'The path is hard-coded.' --fix 'A constant.'
p verdict $B --agent alice CHANGES_REQUESTED --revision 1 --note 'See BLK-1.' --objections BLK-1
p resolve $B --agent doer BLK-1 \
    --resolution 'The index records the sources hash and is rebuilt when it differs.'
p advance $B --agent doer PLANNING
p submit $B --agent doer plan \
    --note $'1. Write the index with the sources hash.\n2. Rebuild it when the hash differs.' \
    --user-approved

# seconded: one finding held by two reviewers: alice raises it, bob seconds it, both request
# changes naming it
B=seconded.md
p init $B --goal 'Read the config once' --reviewers alice,bob --max-rounds 3
p register $B --agent alice
p register $B --agent bob
p advance $B --agent doer PLANNING --user-approved
p submit $B --agent doer plan --note $'1. Read the config in main.\n2. Pass it to each stage.' \
    --user-approved
p object $B --agent alice --severity blocking --anchor '## Goal' \
    --title 'The stages still read the config themselves' \
    --evidence 'Step 2 passes it, but nothing removes the reads in each stage.' \
    --fix 'Say that each stage drops its own read.'
p second $B BLK-1 --agent bob
p verdict $B --agent alice CHANGES_REQUESTED --revision 1 --note 'See BLK-1.' --objections BLK-1
p verdict $B --agent bob CHANGES_REQUESTED --revision 1 --note 'As BLK-1 says.' --objections BLK-1

# blocked: work stopped for the user
B=blocked.md
p init $B --goal 'Drop the legacy v1 API' --reviewers alice --work-type refactor
p register $B --agent alice
p advance $B --agent doer PLANNING --user-approved
p block $B --agent doer --reason 'Waiting for the user: are v1 clients still in use?'

# sla_checks: SLAs, a required check and its run, an absence, pins and a worktree, in a repository
mkdir repo
cd repo
git init -q -b main .
git config user.email dev@example.com
git config user.name Dev
printf 'board.md\nboard.md.lock\nboard.md.lock.owner.json\n.board.md.pair/\n.worktrees/\n' >.gitignore
printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n' >lib.rs
git add .
git commit -qm initial
B=board.md
p init $B --goal 'add() subtracts' --reviewers alice --sla review=2h,revision=4h \
    --require-check 'unit=test -f lib.rs'
p register $B --agent alice
p advance $B --agent doer PLANNING --user-approved
p submit $B --agent doer plan --note 'Make add() add.' --user-approved
p verdict $B --agent alice APPROVED --revision 1 --note 'Yes.'
p worktree create $B --agent doer --user-approved
printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n' >.worktrees/board/lib.rs
git -C .worktrees/board add lib.rs
p check $B --agent doer --name unit
p away $B --agent alice --until 2026-05-05T09:00:00Z --reason 'Off until tomorrow morning'
p report-usage $B --agent doer --tokens 5200 --cost 0.31
p submit $B --agent doer code --note 'add() adds; the unit check passes.'
cd ..

# demo_cleaned_up: the demo's whole lifecycle (analysis, plan, red test, code and follow-up,
# objections and a decision, commit, merge, cleanup)
[ -n "${SIGNED:-}" ] || "$PAIR" demo --keep "$ROOT/demo" >/dev/null

cp fresh.md mid_review.md ledger.md seconded.md blocked.md "$OUT/"
cp repo/board.md "$OUT/sla_checks.md"
[ -n "${SIGNED:-}" ] || cp demo/task.md "$OUT/demo_cleaned_up.md"
"$PAIR" validate "$OUT" >/dev/null
