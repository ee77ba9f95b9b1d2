#!/usr/bin/env bash
# diag-counters-stack.sh MODE MANTRA OUTDIR - stock `dotnet-counters` and `dotnet-stack` (tests/interop/
# dotnet-tools.json) against a live process that embeds mantra (mantra_init starts the Mantra.Runtime
# counters and the diagnostics server; docs/diagnostics.md, docs/counters.md).
#
#   counters-emit  `mantra emit --duration 8 --rate 2000 --trace emit.nettrace` (its own session takes the
#                  Mantra-Demo events: events-written counts events written into sessions);
#                  `dotnet-counters collect -p PID --counters Mantra.Runtime --refresh-interval 1
#                  --format json --duration 00:00:00:05`: every interval holds each built-in
#                  counter; sessions is exactly 2 (emit's and the tool's);
#                  events-written per second is 2000 within 10% in every interval but the first and
#                  last (the tool's 1 s intervals and emit's 1 ms pacing do not line up exactly);
#                  events-dropped 0; interp-calls 0 (emit runs no interpreter)
#   counters-run   `mantra run tests/diag/call_loop.masm` (a loop calling a method); the same collect
#                  as CSV: interp-calls per second > 1e6 in every full interval
#   stack          `mantra run tests/diag/spin.masm` (spinning in Demo.Block.inner, called by outer,
#                  called by main); `dotnet-stack report -p PID` prints exactly these frames for the
#                  interpreter thread, leaf first
# Exit 0 or 1.
set -u -o pipefail
mode=$1 mantra=$(realpath "$2") out=$(realpath -m "$3")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rm -rf "$out"
mkdir -p "$out/tmp"
export TMPDIR=$out/tmp DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
fail() { echo "FAIL: diag-counters-stack $mode: $*"; for f in "$out"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done; exit 1; }
tool() { (cd "$here" && timeout 120 dotnet tool run "$@"); }
wait_socket() {
  for _ in $(seq 1 200); do
    compgen -G "$TMPDIR/dotnet-diagnostic-$1-*-socket" >/dev/null && return 0
    sleep 0.1
  done
  fail "no socket $TMPDIR/dotnet-diagnostic-$1-*-socket"
}
# counters FORMAT FILE: collect Mantra.Runtime at 1 s for 5 s
counters() {
  tool dotnet-counters collect -p "$pid" --counters Mantra.Runtime --refresh-interval 1 --format "$1" \
    -o "$2" --duration 00:00:00:05 >"$out/counters.log" 2>&1 || fail "dotnet-counters collect failed"
  [ -s "$2" ] || fail "dotnet-counters wrote no $2"
}

case "$mode" in
counters-emit)
  (cd "$out" && exec "$mantra" emit --duration 8 --rate 2000 --trace emit.nettrace >emit.log 2>&1) &
  pid=$!
  wait_socket "$pid"
  counters json "$out/counters.json"
  python3 - "$out/counters.json" <<'PY' || fail "unexpected counter values"
import json, sys
from collections import defaultdict
doc = json.load(open(sys.argv[1]))
by = defaultdict(list)  # counter name -> values in time order
for ev in doc["Events"]:
    assert ev["provider"] == "Mantra.Runtime", ev
    by[ev["name"]].append(ev["value"])
names = ("Events Written (Count / 1 sec)", "Events Dropped (Count / 1 sec)", "Sessions Running",
         "Session Buffer Size (B)", "Interpreter Calls (Count / 1 sec)",
         "Interpreter Instructions (Count / 1 sec)")
for n in names:
    assert by.get(n), "no %r in %s" % (n, sorted(by))
w = by[names[0]]
assert len(w) >= 3, "only %d intervals" % len(w)
inner = w[1:-1]
assert all(abs(v - 2000) <= 200 for v in inner), "events written per interval %s, want 2000 +- 10%%" % w
assert all(v == 0 for v in by[names[1]]), "dropped %s" % by[names[1]]
assert all(v == 2 for v in by[names[2]]), "sessions %s" % by[names[2]]
assert all(v == 0 for v in by[names[4]]), "interp calls %s" % by[names[4]]
assert all(v == 0 for v in by[names[5]]), "interp instructions %s" % by[names[5]]
print("dotnet-counters: %d intervals, events written/s %s, sessions %s" % (len(w), w, by[names[2]]))
PY
  ;;
counters-run)
  (cd "$out" && exec "$mantra" run "$src/tests/diag/call_loop.masm" --entry Demo.Loop.main 100000000000 \
     >run.log 2>&1) &
  pid=$!
  wait_socket "$pid"
  counters csv "$out/counters.csv"
  python3 - "$out/counters.csv" <<'PY' || fail "unexpected counter values"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
calls = [float(r["Mean/Increment"]) for r in rows if r["Counter Name"] == "Interpreter Calls (Count / 1 sec)"]
assert all(r["Provider"] == "Mantra.Runtime" for r in rows), rows[:2]
assert len(calls) >= 3, "only %d intervals: %s" % (len(calls), calls)
assert all(v > 1e6 for v in calls[1:-1]), "interp calls per second %s, want > 1e6" % calls
insns = [float(r["Mean/Increment"]) for r in rows if r["Counter Name"] == "Interpreter Instructions (Count / 1 sec)"]
assert len(insns) >= 3, "only %d intervals of instructions: %s" % (len(insns), insns)
# call_loop.masm dispatches 14 instructions per call (tests/interp/test_interp_threads.c derives it);
# the two counters are read at slightly different moments, so the ratio is checked within 13..15
mid = list(zip(calls[1:-1], insns[1:-1]))
assert all(13 * c <= i <= 15 * c for c, i in mid), "instructions/s %s against calls/s %s, want 14x" % (insns, calls)
print("dotnet-counters: interp calls/s %s, instructions/s %s" % (["%.3g" % v for v in calls], ["%.3g" % v for v in insns]))
PY
  ;;
stack)
  (cd "$out" && exec "$mantra" run "$src/tests/diag/spin.masm" --entry Demo.Block.main 100000 >run.log 2>&1) &
  pid=$!
  wait_socket "$pid"
  sleep 1 # into the spin
  tool dotnet-stack report -p "$pid" >"$out/stack.log" 2>&1 || fail "dotnet-stack report failed"
  # dotnet-stack prints each sampled thread, then its frames leaf first as module!method(signature);
  # the interpreter runs on the main thread, whose OS id is the pid; TraceEvent lower-cases module
  # names; CPU_TIME is the pseudo frame of a running (not waiting) sample.
  want=$(printf 'Thread (0x%X):\n  CPU_TIME\n  block!Demo.Block.inner(int64)\n  block!Demo.Block.outer(int64)\n  block!Demo.Block.main(int64)' "$pid")
  got=$(grep -v '^[[:space:]]*$' "$out/stack.log")
  [ "$got" = "$want" ] || fail "dotnet-stack printed [$got], want [$want]"
  echo "dotnet-stack report: $(tr '\n' ' ' <<<"$got")"
  ;;
*) fail "unknown mode" ;;
esac
