#!/usr/bin/env bash
# session_lttng.sh - the LTTng-UST 2.13 anchor of the session write path: the same two-integer
# event through an LTTng-UST tracepoint (enabled, recorded by an LTTng session; and disabled) and
# through mantra's session, in ONE program (session_write_lttng from bench/lttng/build.sh), with
# the same baselines (empty loop, plain copy of the bytes) and interleaved repetitions.
#
#   phase 1, no LTTng session: empty, disabled (mantra's inline check), lttng (disabled tracepoint)
#   phase 2, an LTTng session records mantra_bench:tick (lttng create / enable-channel /
#            enable-event -u / start): empty, floor, floor_clock, enabled, lttng, enabled2, lttng2;
#            then lttng stop, the channel's "Discarded events" (must be 0 for a valid figure),
#            lttng destroy
#
# Needs liblttng-ust-dev and lttng-tools (apt-get install -y liblttng-ust-dev lttng-tools); prints
# "skipped: ..." and exits 0 when they are missing or no session daemon can be reached or started.
# A session daemon is started (lttng-sessiond --daemonize) only when none answers, and then
# stopped at the end by its pid (--keep-daemon leaves it running). The LTTng channel: per-user
# buffers, discard mode, 16 sub-buffers of 4 MB per CPU (-s/-c to change), trace in a temporary
# folder under /tmp. mantra's sessions write to a file in /tmp by default (-O tmp), as LTTng does.
#
# Usage: bench/session_lttng.sh [--build-dir DIR] [-r REPS] [-n EVENTS] [-d ITERS] [-O null|tmp]
#                               [-s SUBBUF] [-c NUM_SUBBUF] [--keep-daemon] [--quick]
#   defaults: build, -r 7, -n 2e6 events per thread, -d 2e8 iterations (disabled phase), -O tmp
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR="$REPO/build"
REPS=7
N=2e6
D=2e8
OUTK=tmp
SUBBUF=4M
NSUBBUF=16
KEEP_DAEMON=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    -r) REPS=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -d) D=$2; shift 2 ;;
    -O) OUTK=$2; shift 2 ;;
    -s) SUBBUF=$2; shift 2 ;;
    -c) NSUBBUF=$2; shift 2 ;;
    --keep-daemon) KEEP_DAEMON=1; shift ;;
    --quick) REPS=3; N=5e5; D=5e7; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "session_lttng: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$PWD/$BUILD_DIR" ;; esac

BUILD_OUT=$("$REPO/bench/lttng/build.sh" --build-dir "$BUILD_DIR") || { echo "session_lttng: build failed" >&2; exit 1; }
if grep -q '^skipped: ' <<<"$BUILD_OUT"; then
  echo "session_lttng: $(grep '^skipped: ' <<<"$BUILD_OUT")"
  echo "summary: session_lttng $(grep '^skipped: ' <<<"$BUILD_OUT")"
  exit 0
fi
echo "$BUILD_OUT" | sed -n '1p'
EXE=$(tail -1 <<<"$BUILD_OUT")
[ -x "$EXE" ] || { echo "session_lttng: $EXE not built" >&2; exit 1; }

if ! command -v lttng >/dev/null 2>&1 || ! command -v lttng-sessiond >/dev/null 2>&1; then
  echo "summary: session_lttng skipped: lttng / lttng-sessiond not installed (apt-get install -y lttng-tools)"
  exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mantra-lttng.XXXXXX")
SESSION="mantra-bench-$$"
STARTED_PID=""
SESSION_UP=0
cleanup() {
  if [ "$SESSION_UP" = 1 ]; then lttng destroy "$SESSION" >/dev/null 2>&1 || true; fi
  if [ -n "$STARTED_PID" ] && [ "$KEEP_DAEMON" = 0 ]; then
    kill "$STARTED_PID" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$STARTED_PID" 2>/dev/null || break; sleep 0.2; done
    echo "session_lttng: stopped the lttng-sessiond it started (pid $STARTED_PID)"
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# A session daemon: use the running one, else start one as the current user.
if [ "$(id -u)" = 0 ]; then RUNDIR=/var/run/lttng; else RUNDIR="${LTTNG_HOME:-$HOME}/.lttng"; fi
if ! lttng list >"$WORK/list.out" 2>&1; then
  echo "session_lttng: no session daemon answers ($(head -1 "$WORK/list.out")); starting lttng-sessiond --daemonize"
  if ! lttng-sessiond --daemonize >"$WORK/sessiond.out" 2>&1; then
    echo "summary: session_lttng skipped: lttng-sessiond --daemonize failed: $(tr '\n' ' ' <"$WORK/sessiond.out")"
    exit 0
  fi
  for _ in $(seq 1 50); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
  STARTED_PID=$(cat "$RUNDIR/lttng-sessiond.pid" 2>/dev/null || true)
  if ! lttng list >"$WORK/list.out" 2>&1; then
    echo "summary: session_lttng skipped: lttng-sessiond started but does not answer: $(head -1 "$WORK/list.out")"
    exit 0
  fi
  echo "session_lttng: lttng-sessiond started, pid ${STARTED_PID:-unknown}"
else
  echo "session_lttng: using the running session daemon"
fi

echo "session_lttng: $(lttng --version 2>/dev/null | head -1); $(uname -srm); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "==> phase 1: no LTTng session (disabled tracepoint vs mantra's disabled check vs empty loop)"
"$EXE" -r "$REPS" -d "$D" -o empty,disabled,lttng | tee "$WORK/phase1.out"

echo
echo "==> phase 2: LTTng session $SESSION recording mantra_bench:tick"
run_lttng() { echo "\$ lttng $*"; lttng "$@" 2>&1 | sed 's/^/  /'; }
run_lttng create "$SESSION" --output="$WORK/trace" || { echo "summary: session_lttng skipped: lttng create failed"; exit 0; }
SESSION_UP=1
run_lttng enable-channel -u -s "$SESSION" --subbuf-size="$SUBBUF" --num-subbuf="$NSUBBUF" mbch
run_lttng enable-event -u -s "$SESSION" -c mbch mantra_bench:tick
run_lttng start "$SESSION"
"$EXE" -r "$REPS" -n "$N" -O "$OUTK" -o empty,floor,floor_clock,enabled,lttng,enabled2,lttng2 | tee "$WORK/phase2.out"
run_lttng stop "$SESSION"
lttng list "$SESSION" >"$WORK/session.list" 2>&1 || true
DISCARDED=$(awk '/Discarded events:/ { s += $3 } END { print s + 0 }' "$WORK/session.list")
LOST=$(awk '/Lost packets:/ { s += $3 } END { print s + 0 }' "$WORK/session.list")
TRACE_MB=$(du -sm "$WORK/trace" 2>/dev/null | cut -f1)
echo "session_lttng: LTTng channel mbch: discarded events $DISCARDED, lost packets $LOST; trace ${TRACE_MB:-?} MB"
run_lttng destroy "$SESSION"
SESSION_UP=0

echo
echo "==> summary"
grep '^summary: session_write disabled Tick' "$WORK/phase1.out" | sed 's/session_write/session_lttng (phase 1)/'
grep '^summary: session_write lttng' "$WORK/phase1.out" | sed 's/session_write/session_lttng (phase 1)/'
grep -E '^summary: session_write (enabled|lttng|2 threads|  CPU view)' "$WORK/phase2.out" | sed 's/session_write/session_lttng (phase 2)/'
echo "summary: session_lttng (phase 2) LTTng discarded events $DISCARDED, lost packets $LOST$( [ "$DISCARDED" = 0 ] || echo '  ** LTTng discarded events: its figure is flattered; raise -s/-c **')"
