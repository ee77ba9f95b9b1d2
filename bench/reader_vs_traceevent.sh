#!/usr/bin/env bash
# reader_vs_traceevent.sh - mantra's reader against TraceEvent on the same synthetic trace.
#
# usage: bench/reader_vs_traceevent.sh [--build-dir DIR] [-s MB] [-r RUNS]
#
# 1. bench/reader_throughput (the C benchmark) generates a trace of MB megabytes (default 1024)
#    and reads it: headers only and with every field decoded (MB/s, events/s, peak RSS).
# 2. The TraceEvent harness (tests/interop/TraceEventDump `read`, a plain EventPipeEventSource that
#    touches every header, and with --decode every PayloadValue) reads the same file RUNS times
#    (default 3); the median is the baseline.
# Prints `summary:` lines with both throughputs and ours as a multiple of TraceEvent's.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR="$REPO/build"
SIZE=1024
RUNS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    -s) SIZE=$2; shift 2 ;;
    -r) RUNS=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reader_vs_traceevent.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
EXE="$BUILD_DIR/bench/reader_throughput"
DLL=$(ls "$BUILD_DIR"/tests/interop/dotnet/bin/TraceEventDump/release/TraceEventDump.dll 2>/dev/null || true)
[ -x "$EXE" ] || { echo "reader_vs_traceevent.sh: $EXE not built" >&2; exit 1; }
FILE="${TMPDIR:-/tmp}/mantra-bench-reader-$$.nettrace"
trap 'rm -f "$FILE" "$FILE.small"' EXIT

ours=$("$EXE" -s "$SIZE" -o "$FILE" -k)
echo "$ours"
mbs() { echo "$ours" | awk -v k="$1" 'index($0, k) == 1 { for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") { print $i; exit } }'; }
ours_hdr=$(mbs "full file, headers only")
ours_dec=$(mbs "full file, decoding")
echo "summary: reader_throughput ours ${SIZE} MB: headers only ${ours_hdr} MB/s, decoding ${ours_dec} MB/s"

if [ -z "$DLL" ] || ! command -v dotnet >/dev/null 2>&1; then
  echo "summary: reader vs TraceEvent: skipped (no TraceEvent harness in $BUILD_DIR or no dotnet)"
  exit 0
fi
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
te_mbs() { # args for `read`; prints MB/s per run
  local i out
  for i in $(seq "$RUNS"); do
    out=$(dotnet "$DLL" read "$FILE" "$@")
    echo "  TraceEvent read $* run $i: $out" >&2
    echo "$out" | sed 's/.*"seconds":\([0-9.eE+-]*\),"bytes":\([0-9]*\).*/\2 \1/' | awk '{ printf "%.1f\n", $1 / 1048576 / $2 }'
  done
}
te_hdr=$(te_mbs | median)
te_dec=$(te_mbs --decode | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
echo "summary: reader vs TraceEvent (${SIZE} MB, median of ${RUNS}): headers only ${ours_hdr} vs ${te_hdr} MB/s = $(ratio "$ours_hdr" "$te_hdr")x; decoding ${ours_dec} vs ${te_dec} MB/s = $(ratio "$ours_dec" "$te_dec")x (goal 5x)"
