#!/bin/sh
# compare-mantra.sh MANTRA TRACE - our reader against TraceEvent on one trace:
#     MANTRA dump --json --sorted TRACE | $MANTRA_TE_DUMP compare TRACE -
# Exit 0 when `compare` finds no difference (README.md lists what it tolerates) and mantra did not fail.
set -u
mantra=$1 trace=$2
[ -n "${MANTRA_TE_DUMP:-}" ] || { echo "compare-mantra.sh: MANTRA_TE_DUMP is not set" >&2; exit 2; }
dir=${MANTRA_BINARY_DIR:-/tmp}/interop
mkdir -p "$dir"
ours=$dir/$(basename "$(dirname "$trace")")-$(basename "$trace").mantra.jsonl
"$mantra" dump --json --sorted "$trace" >"$ours"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: mantra dump exited $rc"; exit 1; }
# shellcheck disable=SC2086 # MANTRA_TE_DUMP is a command with arguments
$MANTRA_TE_DUMP compare "$trace" "$ours" --max 20
