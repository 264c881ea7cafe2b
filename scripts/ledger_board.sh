#!/bin/sh
# Make a blackboard with a ledger of N objections and a body of about BODY bytes, for benchmarks:
#   scripts/ledger_board.sh PAIR BOARD N [BODY]
# PAIR is the pair binary to use. The board is made by pair itself: init (format 2) with reviewer
# alice, register, advance to PLANNING, submit a plan, then N blocking objections by alice, then
# notes of 64 KiB in Evidence until the file is at least BODY bytes.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 PAIR BOARD N [BODY]" >&2; exit 2; }
P=$1 B=$2 N=$3 BODY=${4:-0}
rm -f "$B"
"$P" init "$B" --reviewers alice --max-rounds 3 -q
"$P" register "$B" --agent alice -q
"$P" advance "$B" --agent doer PLANNING --user-approved -q
"$P" submit "$B" --agent doer plan --note "the plan" --user-approved -q
i=1
while [ "$i" -le "$N" ]; do
    "$P" object "$B" --agent alice --severity blocking --anchor "## Plan Revisions" \
        --title "objection $i" --evidence "evidence $i" --fix "fix $i" -q
    i=$((i + 1))
done
if [ "$BODY" -gt 0 ]; then
    chunk=$(mktemp)
    # 64 KiB of text lines (no headings).
    awk 'BEGIN { for (i = 0; i < 1024; i++) printf "line %05d of the evidence, as a benchmark fills it: 0123456789\n", i }' >"$chunk"
    while [ "$(wc -c <"$B")" -lt "$BODY" ]; do
        "$P" note "$B" --agent doer --section Evidence --note-file "$chunk" -q
    done
    rm -f "$chunk"
fi
