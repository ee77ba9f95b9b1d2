#!/usr/bin/env bash
# compile_time.sh - compile time of the C that mantra-gen generates for ClrEtwAll.
#
# Generates ClrEtwAll into a temporary directory (or uses --gen-dir DIR), then compiles each of
# <base>_writers.c, <base>_readers.c and <base>_registry.c to an object file with the project's
# flags
#     $CC -std=c11 -Wall -Wextra -Wpedantic -Wconversion -Werror -O2 -I runtime/include -I GEN -c
# and the same with -O0, RUNS times each, interleaved round-robin. Baseline measured in the same
# rounds: a trivial translation unit that includes mantra/event.h (compiler start-up + the runtime
# header). Reports median/min/max seconds per file and optimisation level, the total (sum of the
# medians), the ratio to the baseline, lines of generated C and object sizes. Figures only: the
# exit status is 0 whatever the timings (non-zero when a compilation fails).
#
# Usage: bench/compile_time.sh [-n RUNS] [--gen-dir DIR] [--manifest FILE]   (RUNS default 3)
#   CC                 compiler (default cc)
#   PYTHON             interpreter for tools/mantra-gen (default: its shebang)
#   MANTRA_SHARED_DIR  holds fixtures/manifests/ClrEtwAll-coreclr-2019.man (default ../shared
#                      relative to the repository root)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${MANTRA_SHARED_DIR:-$REPO/../shared}
MAN="$SHARED/fixtures/manifests/ClrEtwAll-coreclr-2019.man"
CC=${CC:-cc}
RUNS=3
GEN_DIR=""
FLAGS=(-std=c11 -Wall -Wextra -Wpedantic -Wconversion -Werror)
OPTS=(-O2 -O0)

while [ $# -gt 0 ]; do
  case "$1" in
    -n|--runs) RUNS=$2; shift 2 ;;
    --gen-dir) GEN_DIR=$2; shift 2 ;;
    --manifest) MAN=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compile_time: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "compile_time: RUNS must be a positive integer" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mantra-compile-time.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ -z "$GEN_DIR" ]; then
  [ -f "$MAN" ] || { echo "compile_time: manifest not found: $MAN (set MANTRA_SHARED_DIR)" >&2; exit 2; }
  MAN=$(realpath "$MAN")
  GEN_DIR="$WORK/gen"
  mkdir -p "$GEN_DIR"
  if [ -n "${PYTHON:-}" ]; then
    "$PYTHON" "$REPO/tools/mantra-gen" -o "$GEN_DIR" "$MAN" >/dev/null
  else
    "$REPO/tools/mantra-gen" -o "$GEN_DIR" "$MAN" >/dev/null
  fi
  echo "compile_time: generated from $MAN into a temporary directory"
fi
GEN_DIR=$(realpath "$GEN_DIR")

FILES=()
for part in writers readers registry; do
  f=$(find "$GEN_DIR" -maxdepth 1 -name "*_${part}.c" | sort | head -n 1)
  [ -n "$f" ] || { echo "compile_time: no *_${part}.c in $GEN_DIR" >&2; exit 2; }
  FILES+=("$f")
done
BASE_SRC="$WORK/baseline.c"
cat >"$BASE_SRC" <<'EOF'
#include "mantra/event.h"
int baseline_tu(void);
int baseline_tu(void) { return MANTRA_WRITE_OK; }
EOF

now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s.%N; fi; }
stats() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
    END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f %.3f %.3f", m, a[1], a[NR] }'
}

# compile SRC OPT: sets ELAPSED; the object stays in $WORK/<name><opt>.o
compile() {
  local src=$1 opt=$2 obj t0 t1
  obj="$WORK/$(basename "$src" .c)${opt}.o"
  t0=$(now)
  if ! "$CC" "${FLAGS[@]}" "$opt" -I "$REPO/runtime/include" -I "$GEN_DIR" -c "$src" -o "$obj" 2>"$WORK/err"; then
    cat "$WORK/err" >&2
    echo "compile_time: $CC failed on $src ($opt)" >&2
    exit 1
  fi
  t1=$(now)
  ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
}

echo "compile_time: $($CC --version | head -n 1)"
echo "compile_time: $CC ${FLAGS[*]} {-O2|-O0} -I runtime/include -I <gen dir> -c FILE; $RUNS runs each, interleaved, after one warm-up"
SRCS=("$BASE_SRC" "${FILES[@]}")
declare -A T=()
for opt in "${OPTS[@]}"; do for s in "${SRCS[@]}"; do compile "$s" "$opt"; T["$s$opt"]=""; done; done
for ((r = 0; r < RUNS; r++)); do
  for opt in "${OPTS[@]}"; do
    for s in "${SRCS[@]}"; do compile "$s" "$opt"; T["$s$opt"]+="$ELAPSED "; done
  done
done

name() { if [ "$1" = "$BASE_SRC" ]; then echo "baseline (trivial TU + mantra/event.h)"; else basename "$1"; fi; }
lines() { wc -l <"$1" | tr -d ' '; }

printf '%-42s %7s %10s %7s %7s %10s %10s\n' file lines "opt median" min max "x baseline" "text bytes"
declare -A TOTAL=() BASEMED=()
for opt in "${OPTS[@]}"; do
  TOTAL[$opt]=0
  for s in "${SRCS[@]}"; do
    read -r med min max <<<"$(stats ${T["$s$opt"]})"
    obj="$WORK/$(basename "$s" .c)${opt}.o"
    text=$(size "$obj" 2>/dev/null | awk 'NR == 2 { print $1 + $2 }' || true)
    if [ "$s" = "$BASE_SRC" ]; then
      BASEMED[$opt]=$med
      x="1.00"
    else
      TOTAL[$opt]=$(awk -v a="${TOTAL[$opt]}" -v b="$med" 'BEGIN { printf "%.3f", a + b }')
      x=$(awk -v a="$med" -v b="${BASEMED[$opt]}" 'BEGIN { printf "%.1f", (b > 0) ? a / b : 0 }')
    fi
    printf '%-42s %7s %4s %5s %7s %7s %10s %10s\n' "$(name "$s")" "$(lines "$s")" "$opt" "$med" "$min" "$max" "$x" "${text:-?}"
  done
done

C_LINES=0
for f in "${FILES[@]}"; do C_LINES=$((C_LINES + $(lines "$f"))); done
H_LINES=$(cat "$GEN_DIR"/*.h | wc -l | tr -d ' ')
echo "generated C: $C_LINES lines in the three .c files; $H_LINES lines in the generated headers ($(ls "$GEN_DIR"/*.h | wc -l) files)"
for opt in "${OPTS[@]}"; do
  echo "summary: compile_time ClrEtwAll generated C ($C_LINES lines) at $opt: total $(printf '%s' "${TOTAL[$opt]}") s (sum of per-file medians:" \
       "$(for s in "${FILES[@]}"; do read -r m _ _ <<<"$(stats ${T["$s$opt"]})"; printf '%s %s s, ' "$(basename "$s" .c | sed 's/.*_//')" "$m"; done | sed 's/, $//'));" \
       "baseline TU ${BASEMED[$opt]} s"
done
