#!/usr/bin/env bash
# prof_cost.sh - the figures of the profiler's hooks and of async methods (docs/profiler.md):
#   1. an enter/leave pair's cost in time: bench/prof_hooks (no hooks, the profiler's hooks, the
#      tracer; interleaved, R rounds, medians) on fib_of(27) (sync calls) and on
#      bench/async_yield.masm run(N) (an async method suspending and resuming N times);
#   2. the same in instructions: callgrind's total Ir of `prof_hooks --only MODE`, the excess over
#      --only none divided by the pairs of the run;
#   3. what the hooks cost when none is set: the build compiled without them
#      (-DMANTRA_INTERP_HOOKS=OFF, configured in DIR-nohooks/ and only prof_hooks built) against
#      this one, callgrind's Ir of `--only none` at two sizes of each program: the difference of the
#      two builds' excess per enter/leave pair a profiler would see (a call, or a resumption: each
#      resumption is a run of its own, which looks once whether hooks are set) (goal: 0 instructions
#      per call);
#   4. suspend/resume against Lua 5.4's coroutines: `mantra run bench/async_yield.masm --entry run N`
#      and `lua5.4 bench/async_yield.lua N` (a coroutine that yields N times, resumed by the main
#      loop), alternating, R rounds, whole-process wall clock, medians, ns per suspend/resume pair
#      and the ratio mantra/lua (goal: <= 1). Skipped with a message without lua5.4 or valgrind.
#
# Usage: bench/prof_cost.sh [--build-dir DIR] [-n N] [-r ROUNDS]   (defaults: build, 3e6, 7)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$REPO/build"
N=3000000
R=7
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -r) R=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "prof_cost: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$N" =~ ^[1-9][0-9]*$ && "$R" =~ ^[1-9][0-9]*$ ]] || { echo "prof_cost: -n/-r take plain integers" >&2; exit 2; }
BENCH="$BUILD/bench/prof_hooks"
MANTRA="$BUILD/tools/mantra"
ASYNC="$REPO/bench/async_yield.masm"
cd "$REPO"
[ -x "$BENCH" ] || { echo "prof_cost: $BENCH not built (configure with -DMANTRA_BUILD_BENCH=ON)" >&2; exit 1; }

echo "== 1. an enter/leave pair in time"
"$BENCH" -e fib_of -n 27 -r "$R"
"$BENCH" -f "$ASYNC" -e run -n 300000 -r "$R"

ir() { # total Ir of `prof_hooks ARGS` under callgrind
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" > /dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'
  rm -f "$out"
}

if ! command -v valgrind > /dev/null; then
  echo "prof_cost: valgrind not found: instruction counts skipped (Debian: apt-get install valgrind)"
else
  echo "== 2. an enter/leave pair in instructions (callgrind, total Ir)"
  for spec in "fib_of 22 examples/programs/fib.masm" "run 30000 $ASYNC"; do
    set -- $spec
    base=$(ir "$BENCH" -f "$3" -e "$1" -n "$2" --only none)
    for mode in profiler tracer; do
      line=$("$BENCH" -f "$3" -e "$1" -n "$2" --only "$mode")
      pairs=$(echo "$line" | sed -n 's/.*calls, \([0-9]*\) enter\/leave pairs.*/\1/p')
      [ "$mode" = tracer ] && pairs=$(( $(echo "$line" | sed -n 's/.*pairs, \([0-9]*\) traced events.*/\1/p') / 2 ))
      with=$(ir "$BENCH" -f "$3" -e "$1" -n "$2" --only "$mode")
      echo "  $1($2) $mode: $pairs pairs, $(( (with - base) / pairs )) instructions per enter/leave pair (Ir $with - $base)"
      echo "summary: prof_cost $1 $mode instructions_per_pair $(( (with - base) / pairs ))"
    done
  done

  echo "== 3. no hooks set: this build against one without hooks (-DMANTRA_INTERP_HOOKS=OFF)"
  NOHOOKS="${BUILD%/}-nohooks"
  cmake -S "$REPO" -B "$NOHOOKS" -DCMAKE_BUILD_TYPE="$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt")" \
        -DMANTRA_INTERP_HOOKS=OFF -DMANTRA_BUILD_TESTS=OFF -DMANTRA_BUILD_EXAMPLES=OFF > /dev/null
  cmake --build "$NOHOOKS" --target prof_hooks -j 2 > /dev/null
  # per enter/leave pair (a call, or a resumption: each resumption is a run of its own): the pairs
  # a profiler counts at each size
  pairs() { "$@" --only profiler | sed -n 's/.*calls, \([0-9]*\) enter\/leave pairs.*/\1/p'; }
  for spec in "fib_of 20 22 examples/programs/fib.masm" "run 10000 30000 $ASYNC"; do
    set -- $spec
    c1=$(pairs "$BENCH" -f "$4" -e "$1" -n "$2")
    c2=$(pairs "$BENCH" -f "$4" -e "$1" -n "$3")
    d1=$(( $(ir "$BENCH" -f "$4" -e "$1" -n "$2" --only none) - $(ir "$NOHOOKS/bench/prof_hooks" -f "$4" -e "$1" -n "$2" --only none) ))
    d2=$(( $(ir "$BENCH" -f "$4" -e "$1" -n "$3" --only none) - $(ir "$NOHOOKS/bench/prof_hooks" -f "$4" -e "$1" -n "$3" --only none) ))
    per=$(awk -v a="$d1" -v b="$d2" -v x="$c1" -v y="$c2" 'BEGIN { printf "%.4f", (b - a) / (y - x) }')
    echo "  $1: Ir with hooks compiled in minus without: $d1 at $c1 calls and resumptions, $d2 at $c2:" \
         "$per instructions added per call or resumption"
    echo "summary: prof_cost $1 added_instructions_per_segment $per"
  done
fi

if ! command -v lua5.4 > /dev/null; then
  echo "prof_cost: lua5.4 not found: the coroutine comparison skipped (Debian: apt-get install lua5.4)"
  exit 0
fi
echo "== 4. suspend/resume against Lua 5.4 coroutines, $N each, $R rounds alternating"
want=$(( N * (N - 1) / 2 ))
m=(); l=()
for ((k = 0; k < R; k++)); do
  t0=$(date +%s%N); out=$("$MANTRA" run "$ASYNC" --entry run "$N"); t1=$(date +%s%N)
  [ "$out" = "$want" ] || { echo "prof_cost: mantra printed $out, expected $want" >&2; exit 1; }
  m+=($(( t1 - t0 )))
  t0=$(date +%s%N); out=$(lua5.4 bench/async_yield.lua "$N"); t1=$(date +%s%N)
  [ "$out" = "$want" ] || { echo "prof_cost: lua printed $out, expected $want" >&2; exit 1; }
  l+=($(( t1 - t0 )))
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
mm=$(median "${m[@]}"); lm=$(median "${l[@]}")
awk -v m="$mm" -v l="$lm" -v n="$N" 'BEGIN {
  printf "  mantra median %.3f s (%.1f ns per suspend/resume)  lua5.4 median %.3f s (%.1f ns)  ratio mantra/lua %.3f\n",
         m / 1e9, m / n, l / 1e9, l / n, m / l
  printf "summary: prof_cost suspend_resume ratio_mantra_lua %.3f\n", m / l }'
