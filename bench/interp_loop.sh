#!/usr/bin/env bash
# interp_loop.sh - the reference interpreter on the loop benchmark:
#   1. probe overhead: bench/interp_loop (in one process, interleaved): uninstrumented vs
#      MANTRA_InterpPgo=1 (per-thread, atomic and plain counters) vs =2, with ratios;
#   2. a deterministic figure: x86 instructions per inner loop iteration executed inside the
#      dispatch loop (ip_execute, valgrind callgrind) for MANTRA_InterpPgo=0, 1 and 2 (mantra
#      run's default counting: per-thread), N/20 outer iterations; skipped without valgrind;
#   3. against Lua 5.4: `mantra run examples/programs/bench_loop.masm --entry Examples.loop N`
#      and `lua5.4 bench/interp_loop.lua N` (the same loop), alternating, R rounds, wall clock of
#      the whole process (start-up included: a few ms against seconds), median/min/max and the
#      ratio mantra/lua (goal: <= 2). Skipped with a message when lua5.4 is missing
#      (Debian: apt-get install lua5.4).
#
# Usage: bench/interp_loop.sh [--build-dir DIR] [-n N] [-r ROUNDS]   (defaults: build, 3e6, 5)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$REPO/build"
N=3000000
R=5
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -r) R=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "interp_loop: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$N" =~ ^[1-9][0-9]*$ && "$R" =~ ^[1-9][0-9]*$ ]] || { echo "interp_loop: -n/-r take plain integers" >&2; exit 2; }
MANTRA="$BUILD/tools/mantra"
BENCH="$BUILD/bench/interp_loop"
cd "$REPO"

if [ -x "$BENCH" ]; then
  "$BENCH" -n "$N" -r "$R"
else
  echo "interp_loop: $BENCH not built (configure with -DMANTRA_BUILD_BENCH=ON): probe overhead skipped"
fi

if command -v valgrind >/dev/null && [ -x "$MANTRA" ]; then
  CG_N=$((N / 20))
  tmp=$(mktemp -d)
  base=""
  echo "interp_loop: instructions per inner iteration in ip_execute (callgrind, loop($CG_N)):"
  for mode in 0 1 2; do
    MANTRA_InterpPgo=$mode valgrind --tool=callgrind --toggle-collect=ip_execute --callgrind-out-file="$tmp/cg.$mode" \
      "$MANTRA" run examples/programs/bench_loop.masm --entry Examples.loop "$CG_N" >/dev/null 2>&1
    ir=$(awk '/^totals:/ { print $2 }' "$tmp/cg.$mode")
    per=$(echo "$ir / ($CG_N * 10)" | bc -l)
    [ -n "$base" ] || base=$per
    printf '  MANTRA_InterpPgo=%s  %.2f instructions  ratio %.3f\n' "$mode" "$per" "$(echo "$per / $base" | bc -l)"
    printf 'summary: interp_loop callgrind mode%s instructions/iteration %.2f ratio %.3f\n' "$mode" "$per" "$(echo "$per / $base" | bc -l)"
  done
  rm -rf "$tmp"
else
  echo "interp_loop: valgrind not installed: instruction counts skipped"
fi

if ! command -v lua5.4 >/dev/null; then
  echo "interp_loop: lua5.4 not installed (apt-get install lua5.4): comparison with Lua skipped"
  exit 0
fi
[ -x "$MANTRA" ] || { echo "interp_loop: $MANTRA not built" >&2; exit 1; }

# Same results first (the integer line must be equal; the double sums are equal as numbers).
m_out=$(MANTRA_InterpPgo=0 "$MANTRA" run examples/programs/bench_loop.masm --entry Examples.loop "$N")
l_out=$(lua5.4 bench/interp_loop.lua "$N")
if [ "$(sed -n 1p <<<"$m_out")" != "$(sed -n 1p <<<"$l_out")" ] ||
   ! awk -v a="$(sed -n 2p <<<"$m_out")" -v b="$(sed -n 2p <<<"$l_out")" 'BEGIN { exit !(a + 0 == b + 0) }'; then
  echo "interp_loop: mantra and lua disagree: [$m_out] [$l_out]" >&2
  exit 1
fi

now() { date +%s.%N; }
m_times=()
l_times=()
for ((k = 0; k < R; k++)); do
  t0=$(now); MANTRA_InterpPgo=0 "$MANTRA" run examples/programs/bench_loop.masm --entry Examples.loop "$N" >/dev/null; t1=$(now)
  lua5.4 bench/interp_loop.lua "$N" >/dev/null; t2=$(now)
  m_times+=("$(echo "$t1 - $t0" | bc -l)")
  l_times+=("$(echo "$t2 - $t1" | bc -l)")
done
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.4f %.4f %.4f", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
read -r mm mmin mmax <<<"$(stats "${m_times[@]}")"
read -r lm lmin lmax <<<"$(stats "${l_times[@]}")"
ratio=$(echo "$mm / $lm" | bc -l)
echo "interp_loop vs lua5.4 ($(lua5.4 -v 2>&1 | head -1)), loop($N), $R rounds alternating:"
printf '  mantra run  median %s s  min %s  max %s\n' "$mm" "$mmin" "$mmax"
printf '  lua5.4      median %s s  min %s  max %s\n' "$lm" "$lmin" "$lmax"
printf 'summary: interp_loop mantra/lua5.4 ratio %.3f (goal <= 2)\n' "$ratio"
