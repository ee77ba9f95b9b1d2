#!/usr/bin/env bash
# session_profile.sh - where the enabled write path of a session spends its instructions and its
# time, per event (bench/session_write -o enabled: Mantra-Demo/Tick into a session, one thread).
#
#   1. callgrind (deterministic): instructions per event of each function on the writer thread
#      (inclusive and self) and on the drain thread, from `valgrind --tool=callgrind
#      session_write -W -r 1 -n N -o enabled`, and the same for -o floor_clock (the floor).
#      Note: under valgrind clock_gettime is a real system call, not the vDSO; its count here is
#      not what it costs natively (see session_write's part p_clock for that).
#   2. perf stat (when perf works): task-clock, page faults and context switches per event for
#      enabled, floor_clock and floor_alloc (software events; hardware counters are often missing
#      in VMs).
#   3. perf record -e cpu-clock: the share of samples per symbol, for the writer thread(s) and the
#      other threads (drain) separately.
#   4. the parts (session_write -o parts): clock_gettime vs rdtsc, seq_cst vs release store,
#      payload serialisation, each in ns over the empty loop.
#
# Usage: bench/session_profile.sh [--build-dir DIR | --exe PATH] [-n EVENTS] [-N PERF_EVENTS] [-r REPS]
#   defaults: build/bench/session_write, -n 200000 (callgrind), -N 2000000 (perf), -r 5 (parts)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXE=""
BUILD_DIR="$REPO/build"
N=200000
NP=2000000
REPS=5
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --exe) EXE=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -N) NP=$2; shift 2 ;;
    -r) REPS=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "session_profile: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$N" =~ ^[1-9][0-9]*$ && "$NP" =~ ^[1-9][0-9]*$ ]] || { echo "session_profile: -n/-N take plain integers" >&2; exit 2; }
if [ -z "$EXE" ]; then
  case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$PWD/$BUILD_DIR" ;; esac
  [ -f "$BUILD_DIR/CMakeCache.txt" ] && cmake --build "$BUILD_DIR" --target session_write -j 2 >/dev/null
  EXE="$BUILD_DIR/bench/session_write"
fi
[ -x "$EXE" ] || { echo "session_profile: $EXE not built" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mantra-session-profile.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "session_profile: $EXE; $(uname -srm); $(nproc) CPUs; clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo ?); load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. callgrind -----------------------------------------------------------------------------
if command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1; then
  for v in enabled floor_clock; do
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$v" "$EXE" -W -r 1 -n "$N" -o "$v" \
      >"$WORK/out.$v" 2>"$WORK/err.$v" || { cat "$WORK/err.$v" >&2; exit 1; }
    callgrind_annotate --auto=no --inclusive=yes "$WORK/cg.$v" 2>/dev/null >"$WORK/incl.$v"
    callgrind_annotate --auto=no "$WORK/cg.$v" 2>/dev/null >"$WORK/self.$v"
  done
  # fn -> Ir from the function table of an annotate listing ("  1,234 (12.3%)  file:fn [obj]");
  # a function split over several files (inlined code, with -g) is summed (self) or its largest
  # part taken (inclusive: mode max).
  table() {
    awk -v mode="${2:-sum}" '/file:function/ { on = 1; next } on && /^-+$/ { next } on && /^ *$/ && got { on = 0 }
         on && /^ *[0-9,]+ +\(/ { got = 1; ir = $1; gsub(",", "", ir); f = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", f);
         sub(/ \[.*$/, "", f); sub(/^.*:/, "", f);
         if (mode == "max") { if (ir + 0 > v[f] + 0) v[f] = ir } else v[f] += ir }
         END { for (f in v) print f, v[f] }' "$1"
  }
  table "$WORK/incl.enabled" max >"$WORK/t.incl"
  table "$WORK/self.enabled" >"$WORK/t.self"
  echo
  echo "==> callgrind, -o enabled, $N events: instructions per event (inclusive / self)"
  echo "    writer thread:"
  for f in loop_tick mantra_Demo_Tick_emit mantra_event_write mantra_payload_serialize mantra_payload_size \
           write_into mantra_pal_now_ns clock_gettime __memcpy_avx_unaligned_erms \
           __memmove_avx_unaligned_erms; do
    awk -v f="$f" -v n="$N" 'FNR == NR { if ($1 == f) inc = $2; next } $1 == f { self = $2 }
         END { if (inc != "" || self != "") printf "      %-32s %8.1f %8.1f\n", f, inc / n, self / n }' \
        "$WORK/t.incl" "$WORK/t.self"
  done
  echo "      (memcpy: all threads together; writer share below)"
  callgrind_annotate --inclusive=yes --tree=calling "$WORK/cg.enabled" 2>/dev/null |
    awk -v n="$N" '/^ *[0-9,]+ .*\*  / { caller = $0; sub(/ \[.*$/, "", caller); sub(/^.*:/, "", caller) }
         /^ *[0-9,]+ .*>   .*mem(cpy|move)/ { ir = $1; gsub(",", "", ir); printf "      memcpy called from %-22s %8.1f\n", caller, ir / n }'
  echo "    drain thread (and the rest):"
  for f in drain_pass mantra_nettrace_write prepare_event.part.0 prepare_event mantra_nettrace_add_event \
           encode_row_header flush_blocks mantra_sink_write; do
    awk -v f="$f" -v n="$N" 'FNR == NR { if ($1 == f) inc = $2; next } $1 == f { self = $2 }
         END { if (inc != "" || self != "") printf "      %-32s %8.1f %8.1f\n", f, inc / n, self / n }' \
        "$WORK/t.incl" "$WORK/t.self"
  done
  fl=$(table "$WORK/incl.floor_clock" max | awk -v n="$N" '$1 == "loop_floor_clock" { printf "%.1f", $2 / n }')
  en=$(awk -v n="$N" '$1 == "loop_tick" { printf "%.1f", $2 / n }' "$WORK/t.incl")
  echo "summary: session_profile callgrind instructions/event: enabled loop ${en:-?} (writer thread, incl. the clock as a syscall under valgrind), floor_clock loop ${fl:-?}"
  echo "    top self-cost functions, whole program (per event):"
  awk -v n="$N" 'NR <= 14 { printf "      %-40s %8.1f\n", $1, $2 / n }' <(sort -k2,2nr "$WORK/t.self")
else
  echo "session_profile: valgrind/callgrind_annotate not installed: no instruction counts"
fi

# ---- 2./3. perf --------------------------------------------------------------------------------
if command -v perf >/dev/null 2>&1 && perf stat -e task-clock true >/dev/null 2>&1; then
  echo
  echo "==> perf stat (software events), -n $NP -r 1 -W, per event of the variant"
  for v in enabled floor_clock floor_alloc; do
    perf stat -x, -e task-clock,page-faults,context-switches -o "$WORK/stat.$v" "$EXE" -W -r 1 -n "$NP" -o "$v" >/dev/null 2>&1 || true
    awk -F, -v n="$NP" -v v="$v" '$3 == "task-clock" || $3 ~ /^task-clock/ { tc = $1 } $3 ~ /^page-faults/ { pf = $1 }
         $3 ~ /^context-switches/ { cs = $1 }
         END { printf "  %-12s task-clock %7.1f ns/event (all threads, incl. start/stop)  page faults %.4f/event (%.1f per MB of 48-byte records)  context switches %d\n",
               v, tc * 1e6 / n, pf / n, pf / (n * 48 / 1e6), cs }' "$WORK/stat.$v"
  done
  if perf record -e cpu-clock -F 4999 -o "$WORK/perf.data" "$EXE" -W -r 1 -n "$NP" -o enabled >/dev/null 2>"$WORK/perf.err"; then
    echo
    echo "==> perf record -e cpu-clock, -o enabled: share of each thread's samples per symbol"
    perf script -i "$WORK/perf.data" -F tid,ip,sym 2>/dev/null |
      awk '{ tid = $1; sym = $3; if (sym == "") sym = "[unknown, vdso]"; c[tid "|" sym]++; n[tid]++;
             if (sym == "loop_tick" || sym == "mantra_event_write") w[tid] = 1 }
           END { for (k in c) { split(k, a, "|"); cls = (a[1] in w) ? "writer" : "other"; cc[cls "|" a[2]] += c[k]; nn[cls] += c[k] }
                 for (k in cc) { split(k, a, "|"); printf "%s %d %.1f %s\n", a[1], cc[k], 100 * cc[k] / nn[a[1]], a[2] } }' |
      sort -k1,1r -k2,2nr | awk '{ if (cnt[$1]++ < 12) printf "  %-6s %5.1f%%  %s\n", $1, $3, substr($0, index($0, $4)) }'
  else
    echo "session_profile: perf record failed: $(head -2 "$WORK/perf.err")"
  fi
else
  echo "session_profile: perf not usable here (perf stat -e task-clock true failed): no time profile"
fi

# ---- 4. parts -------------------------------------------------------------------------------------
echo
echo "==> parts of the write path, ns per operation over the empty loop (session_write -o parts -r $REPS)"
"$EXE" -r "$REPS" -o parts | grep -E '^summary: ' | sed 's/^summary: session_write /summary: session_profile /'
