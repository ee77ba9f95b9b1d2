#!/usr/bin/env bash
# session_emit.sh - end to end into a file through the same code as `mantra emit` (the CLI itself):
# 10 M Mantra-Demo/Tick events on 1 thread and on 2 threads, session start to trace closed (stop
# included, so every trace is complete), repeated; events/s and the trace file's MB/s.
#
# Each repetition runs, interleaved so that all see the same machine noise:
#   emit1   <build>/tools/mantra emit --mix tick --providers Mantra-Demo:0x1:5 --threads 1
#           --events E --trace FILE --buffer-mb MB
#   emit2   the same with --threads 2 --events E/2 (the same total E; --per-thread: E each)
#   write   baseline: the same number of bytes as emit1's trace written with dd (bs=100K, no
#           fsync, as the session's file sink) to a file in the same folder
# From emit's JSON line: total_seconds (start to every trace closed), write_seconds, start_seconds
# and stop_seconds (the parts of total_seconds before and after the writes),
# events_per_second (emit's own figure: events / write_seconds) and the session's
# attempted/written/dropped/bytes. Reported per configuration: events/s over total_seconds (stop
# included), events/s over write_seconds, file MB/s (bytes / total_seconds, MB = 10^6 bytes),
# the ratio emit2/emit1 of total events/s, and file MB/s as a fraction of dd's MB/s.
#
# When the build has no `mantra emit` yet, it says so and runs the C benchmark's own equivalent
# instead: session_write -o e2e,e2e2 -E E (same session setup, 1 and 2 threads, stop included).
#
# Usage: bench/session_emit.sh [--build-dir DIR] [-r REPS] [-E EVENTS] [-b BUFFER_MB] [--dir DIR]
#                              [--per-thread] [--quick] [--c-too]
#   defaults: build, -r 5, -E 10000000, -b 2048, --dir ${TMPDIR:-/tmp}
#   --c-too   also run session_write's e2e variants after emit
#   --writes  also count the write system calls of one emit1 run (strace -f -c), with the trace's
#             size: how large the drain's writes to the file are
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR="$REPO/build"
REPS=5
EVENTS=10000000
BUFMB=2048
DIR="${TMPDIR:-/tmp}"
PER_THREAD=0
C_TOO=0
WRITES=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    -r) REPS=$2; shift 2 ;;
    -E) EVENTS=$2; shift 2 ;;
    -b) BUFMB=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --per-thread) PER_THREAD=1; shift ;;
    --c-too) C_TOO=1; shift ;;
    --writes) WRITES=1; shift ;;
    --quick) REPS=3; EVENTS=2000000; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "session_emit: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ && "$EVENTS" =~ ^[1-9][0-9]*$ && "$BUFMB" =~ ^[1-9][0-9]*$ ]] ||
  { echo "session_emit: -r, -E and -b take plain positive integers" >&2; exit 2; }
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$PWD/$BUILD_DIR" ;; esac
command -v python3 >/dev/null 2>&1 || { echo "session_emit: needs python3 (JSON and statistics)" >&2; exit 2; }

MANTRA="$BUILD_DIR/tools/mantra"
if [ -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake --build "$BUILD_DIR" --target mantra_cli -j 2 >/dev/null 2>&1 || true
fi
HAVE_EMIT=0
if [ -x "$MANTRA" ] && "$MANTRA" emit --help >/dev/null 2>&1; then HAVE_EMIT=1; fi

WORK=$(mktemp -d "$DIR/mantra-session-emit.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "session_emit: $(uname -srm); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); files in $WORK ($(df -h "$WORK" | awk 'NR == 2 { print $1 }'))"

# The trace clock (docs/sessions.md, "The clock"): the clock these runs use, what the machine offers,
# what a read costs, and what MANTRA_CLOCK would change - as the library itself decides it
# (`mantra stats --clock`; a build without it says so).
if clock=$("$MANTRA" stats --clock 2>/dev/null); then
  sed 's/^/session_emit: /' <<<"$clock"
else
  echo "session_emit: clock: $MANTRA has no 'stats --clock' (MANTRA_CLOCK=${MANTRA_CLOCK:-unset})"
fi

run_c_equivalent() {
  local exe="$BUILD_DIR/bench/session_write"
  [ -f "$BUILD_DIR/CMakeCache.txt" ] && cmake --build "$BUILD_DIR" --target session_write -j 2 >/dev/null
  [ -x "$exe" ] || { echo "session_emit: $exe not built" >&2; exit 1; }
  echo "\$ $exe -r $REPS -E $EVENTS -b $BUFMB -T $WORK/c.nettrace -o e2e,e2e2"
  "$exe" -r "$REPS" -E "$EVENTS" -b "$BUFMB" -T "$WORK/c.nettrace" -o e2e,e2e2 |
    sed 's/^summary: session_write /summary: session_emit (C equivalent) /'
}

if [ "$HAVE_EMIT" = 0 ]; then
  echo "session_emit: $MANTRA has no 'emit' subcommand (tools/mantra/emit.c not built yet): running the C equivalent"
  run_c_equivalent
  exit 0
fi

E1=$EVENTS
E2=$((EVENTS / 2))
[ "$PER_THREAD" = 1 ] && E2=$EVENTS
emit_args=(emit --mix tick --providers Mantra-Demo:0x1:5 --buffer-mb "$BUFMB")
echo "session_emit: $MANTRA ${emit_args[*]} --threads 1 --events $E1 / --threads 2 --events $E2; $REPS repetitions"

: >"$WORK/results"
now() { date +%s%N; }
for rep in $(seq 1 "$REPS"); do
  for t in 1 2; do
    ev=$E1; [ "$t" = 2 ] && ev=$E2
    f="$WORK/emit$t.nettrace"
    if ! "$MANTRA" "${emit_args[@]}" --threads "$t" --events "$ev" --trace "$f" >"$WORK/out" 2>"$WORK/err"; then
      echo "session_emit: mantra emit failed:" >&2; cat "$WORK/err" >&2; exit 1
    fi
    size=$(stat -c %s "$f")
    echo "emit$t $rep $size $(tail -1 "$WORK/out")" >>"$WORK/results"
    rm -f "$f"
    if [ "$t" = 1 ]; then
      count=$(( (size + 102399) / 102400 ))
      t0=$(now)
      dd if=/dev/zero of="$WORK/dd.bin" bs=100K count="$count" status=none
      t1=$(now)
      echo "write $rep $((count * 102400)) $(( t1 - t0 ))" >>"$WORK/results"
      rm -f "$WORK/dd.bin"
    fi
  done
done

python3 - "$WORK/results" "$EVENTS" <<'EOF'
import json, sys, statistics

rows = {"emit1": [], "emit2": [], "write": []}
for line in open(sys.argv[1]):
    kind, rep, size, rest = line.split(" ", 3)
    if kind == "write":
        rows[kind].append({"bytes": int(size), "seconds": int(rest) / 1e9})
    else:
        j = json.loads(rest)
        s = j["sessions"][0]
        ev = j["threads"] * j["events_per_thread"]
        rows[kind].append({"bytes": int(size), "events": ev, "total": j["total_seconds"], "write": j["write_seconds"],
                           "start": j.get("start_seconds", 0.0), "stop": j.get("stop_seconds", 0.0),
                           "eps_emit": j["events_per_second"], "attempted": s["attempted"], "written": s["written"],
                           "dropped": s["dropped"], "threads": j["threads"]})

def mmm(v):
    return statistics.median(v), min(v), max(v)

def fmt(v, scale=1.0, p=2):
    m, lo, hi = mmm([x / scale for x in v])
    return f"{m:.{p}f} (min {lo:.{p}f}, max {hi:.{p}f})"

dd_mbs = [w["bytes"] / 1e6 / w["seconds"] for w in rows["write"]]
print()
print(f"{'config':8} {'Mev/s total':>24} {'Mev/s write':>24} {'file MB/s':>26} {'file MB':>8} {'total s':>8} dropped")
for k in ("emit1", "emit2"):
    r = rows[k]
    if not r:
        continue
    tot = [x["events"] / x["total"] for x in r]
    wr = [x["events"] / x["write"] for x in r]
    mbs = [x["bytes"] / 1e6 / x["total"] for x in r]
    print(f"{k:8} {fmt(tot, 1e6):>24} {fmt(wr, 1e6):>24} {fmt(mbs, 1, 1):>26} {statistics.median([x['bytes'] for x in r]) / 1e6:8.1f} "
          f"{statistics.median([x['total'] for x in r]):8.3f} {sum(x['dropped'] for x in r)}")
print(f"{'dd':8} {'':>24} {'':>24} {fmt(dd_mbs, 1, 1):>26}   (plain write of emit1's byte count, bs=100K)")
print()
for k in ("emit1", "emit2"):
    r = rows[k]
    tot = [x["events"] / x["total"] for x in r]
    wr = [x["events"] / x["write"] for x in r]
    mbs = [x["bytes"] / 1e6 / x["total"] for x in r]
    dropped = sum(x["dropped"] for x in r)
    ratio = [m / d for m, d in zip(mbs, dd_mbs)]
    print(f"summary: session_emit {k[-1]} thread(s), {r[0]['events']} events into a file, stop included: "
          f"{fmt(tot, 1e6)} Mevents/s; write phase only {fmt(wr, 1e6)} Mevents/s; file {statistics.median([x['bytes'] for x in r]) / 1e6:.1f} MB at "
          f"{fmt(mbs, 1, 1)} MB/s = {fmt(ratio, 1, 3)}x of dd; dropped {dropped}"
          + ("  ** DROPS: raise -b **" if dropped else ""))
    print(f"summary: session_emit {k[-1]} thread(s), fixed costs: start {fmt([x['start'] for x in r], 1e-3, 1)} ms "
          f"(start-up, clock calibration, session start), stop {fmt([x['stop'] for x in r], 1e-3, 1)} ms "
          f"(final pass, trace closed)")
if rows["emit1"] and rows["emit2"]:
    q = [(b["events"] / b["total"]) / (a["events"] / a["total"]) for a, b in zip(rows["emit1"], rows["emit2"])]
    qw = [(b["events"] / b["write"]) / (a["events"] / a["write"]) for a, b in zip(rows["emit1"], rows["emit2"])]
    print(f"summary: session_emit 2 threads / 1 thread: {fmt(q, 1, 2)}x total events/s (stop included; "
          f"goal >= 1.6x end to end); write phase {fmt(qw, 1, 2)}x")
EOF

if [ "$C_TOO" = 1 ]; then
  echo
  run_c_equivalent
fi

if [ "$WRITES" = 1 ]; then
  echo
  if command -v strace >/dev/null 2>&1; then
    f="$WORK/writes.nettrace"
    strace -f -c -e trace=write,writev,pwrite64 -o "$WORK/strace" \
      "$MANTRA" "${emit_args[@]}" --threads 1 --events "$E1" --trace "$f" >/dev/null 2>"$WORK/err" ||
      { echo "session_emit: mantra emit under strace failed:" >&2; cat "$WORK/err" >&2; exit 1; }
    calls=$(awk '$NF == "total" { print $4 }' "$WORK/strace")
    size=$(stat -c %s "$f")
    echo "summary: session_emit write calls, 1 thread, $E1 events: $calls calls for $size bytes ($(( size / (calls > 0 ? calls : 1) )) bytes per call)"
  else
    echo "session_emit: strace not installed: write calls not counted"
  fi
fi
