#!/usr/bin/env bash
# reader_insns.sh - instructions per event of the nettrace reader (valgrind callgrind; deterministic).
#
# usage: bench/reader_insns.sh [--build-dir DIR] [--base-exe EXE] [-p] TRACE
#
# Runs `reader_throughput -i TRACE -m hdr` (headers only) and `-m dec` (every field decoded) under
# callgrind and divides the program's instruction count by the events read (start-up included: about
# 0.2 M instructions). With --base-exe the same for that reader_throughput (e.g. built from the commit
# before) and the ratios. -p: the generated .NET runtime providers registered (real traces).
# Keep TRACE small (16 MB: bench/reader_throughput -s 16 -o FILE -k) or expect minutes.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR="$REPO/build"
BASE=
PROV=
while [ $# -gt 1 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --base-exe) BASE=$2; shift 2 ;;
    -p) PROV=-p; shift ;;
    *) echo "reader_insns.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
TRACE=$1
command -v valgrind >/dev/null 2>&1 || { echo "summary: reader_insns: skipped (no valgrind)"; exit 0; }
EXE="$BUILD_DIR/bench/reader_throughput"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
per_event() { # exe mode -> instructions per event
  local log="$OUT/log" events
  events=$("$1" -i "$TRACE" -m "$2" $PROV | awk '{ for (i = 1; i <= NF; i++) if ($(i+1) == "events") { print $i; exit } }')
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg" "$1" -i "$TRACE" -m "$2" $PROV >/dev/null 2>"$log"
  awk -v e="$events" '/I[ ]+refs:/ { gsub(",", "", $NF); printf "%.1f", $NF / e }' "$log"
}
for mode in hdr dec; do
  what=$([ $mode = hdr ] && echo "headers only" || echo "every field decoded")
  ours=$(per_event "$EXE" $mode)
  if [ -n "$BASE" ]; then
    base=$(per_event "$BASE" $mode)
    echo "summary: reader instructions per event ($(basename "$TRACE"), $what): $ours (base $base, $(awk -v a="$base" -v b="$ours" 'BEGIN { printf "%.2f", a / b }')x fewer)"
  else
    echo "summary: reader instructions per event ($(basename "$TRACE"), $what): $ours"
  fi
done
