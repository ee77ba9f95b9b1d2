#!/usr/bin/env bash
# run_all.sh - runs every mantra benchmark and prints a summary. Figures, not tests: the exit
# status is non-zero only when a benchmark could not be built or run, never because of a timing.
#
#   gen     bench/gen_time.sh       tools/mantra-gen wall time on ClrEtwAll vs python3 start-up
#   compile bench/compile_time.sh   compile time of the generated ClrEtwAll C (-O2 and -O0)
#   event   disabled_event          ns per disabled / directly called / enabled event call site
#   insns   bench/event_insns.sh    callgrind instructions per iteration + the check's disassembly
#   writer  writer_throughput       nettrace writer to a file vs plain write() of the same bytes
#   reader  bench/reader_vs_traceevent.sh  reader MB/s and events/s (1 GB), and vs TraceEvent
#   manifest manifest_load          C run-time manifest loader on ClrEtwAll (converted to YAML)
#   session session_write + bench/session_emit.sh + bench/session_lttng.sh   session write path:
#                                   disabled/enabled Tick vs empty loop and plain copy, 2 threads,
#                                   parts (clock, atomics), end to end via `mantra emit`, LTTng-UST
#                                   anchor (skipped when LTTng is not installed)
#
# Usage: bench/run_all.sh [--build-dir DIR] [--quick] [--log FILE] [gen] [compile] [event] [insns]
#                         [writer] [reader] [manifest] [session]
#   --build-dir DIR  CMake build folder holding bench/disabled_event (default: build). The target
#                    is (re)built there; a folder without CMakeCache.txt is configured first with
#                    -DMANTRA_BUILD_BENCH=ON -DMANTRA_BUILD_TESTS=OFF -DMANTRA_BUILD_EXAMPLES=OFF.
#   --quick          fewer runs / iterations (a smoke run; figures are noisier)
#   --log FILE       also keep the full output there (default: a temporary file, removed)
#   names            run only these benchmarks (default: all four)
# Environment: PYTHON (generator interpreter), CC (compile_time), MANTRA_SHARED_DIR (fixtures).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR="$REPO/build"
QUICK=0
LOG=""
WANT=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --log) LOG=$2; shift 2 ;;
    gen|compile|event|insns|writer|reader|manifest|session) WANT+=("$1"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_all: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ ${#WANT[@]} -gt 0 ] || WANT=(gen compile event insns writer reader manifest session)
want() { local w; for w in "${WANT[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$PWD/$BUILD_DIR" ;; esac

if [ "$QUICK" = 1 ]; then
  GEN_RUNS=3; CC_RUNS=1; EV_ARGS=(-n 2e8 -r 3 -e 2e5); INSN_ARGS=(-n 100000 -e 2000); READER_MB=128; TE_RUNS=1
  SW_ARGS=(-r 3 -n 5e5 -d 5e7 -p 2e6); SESSION_QUICK=(--quick)
else
  GEN_RUNS=7; CC_RUNS=3; EV_ARGS=(-n 1e9 -r 7 -e 2e6); INSN_ARGS=(-n 1000000 -e 10000); READER_MB=1024; TE_RUNS=3
  SW_ARGS=(-r 7 -n 2e6 -d 2e8 -p 1e7); SESSION_QUICK=()
fi

KEEP_LOG=1
if [ -z "$LOG" ]; then LOG=$(mktemp "${TMPDIR:-/tmp}/mantra-bench.XXXXXX.log"); KEEP_LOG=0; fi
: >"$LOG"
cleanup() { [ "$KEEP_LOG" = 1 ] || rm -f "$LOG"; }
trap cleanup EXIT

section() { printf '\n==> %s\n' "$*" | tee -a "$LOG"; }
# run CMD...: echoes the command, runs it with its output also appended to the log.
run() { echo "\$ $*" | tee -a "$LOG"; "$@" 2>&1 | tee -a "$LOG"; }

section "machine"
{
  echo "$(uname -srm); $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
} | tee -a "$LOG"

EXE="$BUILD_DIR/bench/disabled_event"
if want event || want insns; then
  section "build disabled_event in $BUILD_DIR"
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    run cmake -S "$REPO" -B "$BUILD_DIR" -DMANTRA_BUILD_BENCH=ON -DMANTRA_BUILD_TESTS=OFF -DMANTRA_BUILD_EXAMPLES=OFF >/dev/null
  fi
  run cmake --build "$BUILD_DIR" --target disabled_event -j "$(nproc)" >/dev/null
  [ -x "$EXE" ] || { echo "run_all: $EXE was not built (is MANTRA_BUILD_BENCH ON in $BUILD_DIR?)" >&2; exit 1; }
  echo "$(grep -m1 -o '"command": "[^"]*disabled_event.c"' "$BUILD_DIR/compile_commands.json" 2>/dev/null |
         sed 's/^"command": "//; s/"$//')" | tee -a "$LOG"
fi

if want gen; then
  section "generator time (bench/gen_time.sh)"
  run "$REPO/bench/gen_time.sh" -n "$GEN_RUNS"
fi
if want compile; then
  section "compile time of the generated C (bench/compile_time.sh)"
  run "$REPO/bench/compile_time.sh" -n "$CC_RUNS"
fi
if want event; then
  section "disabled event cost (disabled_event)"
  run "$EXE" "${EV_ARGS[@]}"
fi
if want insns; then
  section "instructions per iteration + disassembly (bench/event_insns.sh)"
  run "$REPO/bench/event_insns.sh" --exe "$EXE" "${INSN_ARGS[@]}"
fi

if want writer || want reader || want manifest; then
  section "build the other benchmarks in $BUILD_DIR"
  run cmake --build "$BUILD_DIR" --target writer_throughput reader_throughput manifest_load -j "$(nproc)" >/dev/null
fi
if want writer; then
  section "writer throughput (writer_throughput)"
  run "$BUILD_DIR/bench/writer_throughput"
fi
if want reader; then
  section "reader throughput and TraceEvent (bench/reader_vs_traceevent.sh)"
  run "$REPO/bench/reader_vs_traceevent.sh" --build-dir "$BUILD_DIR" -s "$READER_MB" -r "$TE_RUNS"
fi
if want manifest; then
  section "run-time manifest load (manifest_load)"
  man="${MANTRA_SHARED_DIR:-$REPO/../shared}/fixtures/manifests/ClrEtwAll-coreclr-2019.man"
  if [ -f "$man" ]; then run "$BUILD_DIR/bench/manifest_load" "$man"; else echo "skipped: $man not found" | tee -a "$LOG"; fi
fi

if want session; then
  section "build session_write in $BUILD_DIR"
  run cmake --build "$BUILD_DIR" --target session_write -j "$(nproc)" >/dev/null
  section "session write path (session_write)"
  run "$BUILD_DIR/bench/session_write" "${SW_ARGS[@]}" -o default,parts
  section "session end to end into a file via mantra emit (bench/session_emit.sh)"
  run "$REPO/bench/session_emit.sh" --build-dir "$BUILD_DIR" ${SESSION_QUICK[@]+"${SESSION_QUICK[@]}"}
  section "session write path vs LTTng-UST (bench/session_lttng.sh)"
  run "$REPO/bench/session_lttng.sh" --build-dir "$BUILD_DIR" ${SESSION_QUICK[@]+"${SESSION_QUICK[@]}"}
fi

section "summary"
{
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  grep '^summary: ' "$LOG" | sed 's/^summary: /  /'
} | tee -a "$LOG"
[ "$KEEP_LOG" = 1 ] && echo "full output: $LOG"
exit 0
