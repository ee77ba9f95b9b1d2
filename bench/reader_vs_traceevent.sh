#!/usr/bin/env bash
# reader_vs_traceevent.sh - mantra's reader against TraceEvent on the same trace, same run.
#
# usage: bench/reader_vs_traceevent.sh [--build-dir DIR] [-s MB | -i TRACE] [-r ROUNDS] [-p]
#                                      [--base-exe EXE]
#
# 1. Without -i, bench/reader_throughput generates a synthetic trace of MB megabytes (default
#    1024) and reads it once (headers only, every field decoded, peak RSS) as before.
# 2. Then ROUNDS rounds (default 3), each running in turn, on the same file: ours headers only
#    (`reader_throughput -i TRACE -m hdr`), the TraceEvent harness (tests/interop/TraceEventDump
#    `read`, a plain EventPipeEventSource touching every header), ours with every field decoded
#    (`-m dec`), TraceEvent `read --decode` (every PayloadValue); with --base-exe EXE also that
#    reader_throughput (e.g. built from the commit before, for before/after in the same run).
#    -p passes -p to ours (the generated .NET runtime providers, for real traces).
# Prints MB/s median, min and max per reader and mode, and `summary:` lines with ours as a multiple
# of TraceEvent's: the median of the per-round ratios (the runs of one round see about the same
# machine load) and the ratio of the medians.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR="$REPO/build"
SIZE=1024
RUNS=3
INPUT=
PROV=
BASE=
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    -s) SIZE=$2; shift 2 ;;
    -i) INPUT=$2; shift 2 ;;
    -r) RUNS=$2; shift 2 ;;
    -p) PROV=-p; shift ;;
    --base-exe) BASE=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reader_vs_traceevent.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
EXE="$BUILD_DIR/bench/reader_throughput"
DLL=$(ls "$BUILD_DIR"/tests/interop/dotnet/bin/TraceEventDump/release/TraceEventDump.dll 2>/dev/null || true)
[ -x "$EXE" ] || { echo "reader_vs_traceevent.sh: $EXE not built" >&2; exit 1; }
if [ -n "$INPUT" ]; then
  FILE=$INPUT
  LABEL=$(basename "$INPUT")
else
  FILE="${TMPDIR:-/tmp}/mantra-bench-reader-$$.nettrace"
  trap 'rm -f "$FILE" "$FILE.small"' EXIT
  "$EXE" -s "$SIZE" -o "$FILE" -k
  LABEL="synthetic ${SIZE} MB"
fi
have_te=1
if [ -z "$DLL" ] || ! command -v dotnet >/dev/null 2>&1; then
  have_te=0
  echo "summary: reader vs TraceEvent: TraceEvent skipped (no TraceEvent harness in $BUILD_DIR or no dotnet)"
fi

RES=$(mktemp)
trap 'rm -f "$RES"; [ -n "$INPUT" ] || rm -f "$FILE" "$FILE.small"' EXIT
ours() { # exe mode -> MB/s
  "$1" -i "$FILE" -m "$2" $PROV | awk '{ for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") { print $i; exit } }'
}
te() { # args for `read` -> MB/s
  dotnet "$DLL" read "$FILE" "$@" | sed 's/.*"seconds":\([0-9.eE+-]*\),"bytes":\([0-9]*\).*/\2 \1/' |
    awk '{ printf "%.1f\n", $1 / 1048576 / $2 }'
}
for round in $(seq "$RUNS"); do
  for mode in hdr dec; do
    v=$(ours "$EXE" $mode); echo "ours $mode $v $round" >>"$RES"; echo "  round $round: ours $mode $v MB/s"
    if [ -n "$BASE" ]; then
      v=$(ours "$BASE" $mode); echo "base $mode $v $round" >>"$RES"; echo "  round $round: base $mode $v MB/s"
    fi
    if [ $have_te = 1 ]; then
      if [ $mode = hdr ]; then v=$(te); else v=$(te --decode); fi
      echo "te $mode $v $round" >>"$RES"; echo "  round $round: TraceEvent $mode $v MB/s"
    fi
  done
done
stat() { # who mode -> "median min max"
  awk -v w="$1" -v m="$2" '$1 == w && $2 == m { print $3 }' "$RES" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%s %s %s", a[int((NR + 1) / 2)], a[1], a[NR] }'
}
for who in ours base te; do
  for mode in hdr dec; do
    s=$(stat $who $mode)
    [ -n "$s" ] && echo "$s" | awk -v w=$who -v m=$mode -v l="$LABEL" -v r="$RUNS" \
      '{ printf "summary: reader %s %s (%s, %s rounds): median %s MB/s (min %s, max %s)\n", w, m == "hdr" ? "headers only" : "every field decoded", l, r, $1, $2, $3 }'
  done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
med() { stat "$1" "$2" | cut -d' ' -f1; }
paired() { # a b mode -> median over the rounds of a/b in the same round
  awk -v a="$1" -v b="$2" -v m="$3" '$2 == m && $1 == a { x[$4] = $3 } $2 == m && $1 == b { y[$4] = $3 }
    END { for (r in x) if (r in y && y[r] > 0) print x[r] / y[r] }' "$RES" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.2f (min %.2f, max %.2f)", a[int((NR + 1) / 2)], a[1], a[NR] }'
}
if [ $have_te = 1 ]; then
  echo "summary: reader vs TraceEvent ($LABEL, per-round ratios, median of $RUNS): headers only $(paired ours te hdr)x (goal 5x); every field decoded $(paired ours te dec)x (goal 3x)"
  echo "summary: reader vs TraceEvent ($LABEL, medians of $RUNS): headers only $(med ours hdr) vs $(med te hdr) MB/s = $(ratio "$(med ours hdr)" "$(med te hdr)")x (goal 5x); every field decoded $(med ours dec) vs $(med te dec) MB/s = $(ratio "$(med ours dec)" "$(med te dec)")x (goal 3x)"
fi
if [ -n "$BASE" ]; then
  echo "summary: reader vs base exe ($LABEL, per-round ratios, median of $RUNS): headers only $(paired ours base hdr)x; every field decoded $(paired ours base dec)x"
  echo "summary: reader vs base exe ($LABEL, medians of $RUNS): headers only $(ratio "$(med ours hdr)" "$(med base hdr)")x; every field decoded $(ratio "$(med ours dec)" "$(med base dec)")x"
  if [ $have_te = 1 ]; then
    echo "summary: base vs TraceEvent ($LABEL): headers only $(ratio "$(med base hdr)" "$(med te hdr)")x; every field decoded $(ratio "$(med base dec)" "$(med te dec)")x"
  fi
fi
