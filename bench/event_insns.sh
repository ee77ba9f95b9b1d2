#!/usr/bin/env bash
# event_insns.sh - instructions per iteration of the disabled_event loops (valgrind callgrind:
# deterministic, unlike the timings) and the machine code of the disabled check.
#
# Runs bench/disabled_event once per variant under `valgrind --tool=callgrind` with no warm-up and
# one repetition (-W -r 1), reads the inclusive instruction count (Ir) of the variant's loop
# function (loop_baseline, loop_guarded, loop_direct; the enabled variant runs loop_guarded with
# the event enabled) and divides it by the iteration count. Then prints the disassembly of
# loop_guarded up to its first `ret` (objdump): the hot loop with the relaxed load of the event's
# enabled word, its test and the branch to the out-of-line call.
#
# Usage: bench/event_insns.sh [--build-dir DIR | --exe PATH] [-n N] [-e N_ENABLED]
#   default exe: build/bench/disabled_event; N default 1e6, N_ENABLED default 1e4
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXE="$REPO/build/bench/disabled_event"
N=1000000
NE=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) EXE="$2/bench/disabled_event"; shift 2 ;;
    --exe) EXE=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -e) NE=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "event_insns: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$N" =~ ^[1-9][0-9]*$ && "$NE" =~ ^[1-9][0-9]*$ ]] || { echo "event_insns: -n/-e take plain integers" >&2; exit 2; }
[ -x "$EXE" ] || { echo "event_insns: $EXE not built (cmake --build <dir> --target disabled_event)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mantra-event-insns.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1; then
  echo "event_insns: $(valgrind --version); $EXE -W -r 1 -n $N -e $NE -o VARIANT"
  declare -A IPI=()
  for v in baseline guarded direct enabled; do
    fn=loop_$v
    iters=$N
    if [ "$v" = enabled ]; then fn=loop_guarded; iters=$NE; fi
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$v" "$EXE" -W -r 1 -n "$N" -e "$NE" -o "$v" \
      >"$WORK/out.$v" 2>"$WORK/err.$v" || { cat "$WORK/err.$v" >&2; exit 1; }
    ir=$(callgrind_annotate --inclusive=yes "$WORK/cg.$v" 2>/dev/null |
         awk -v fn=":$fn" '!done { for (i = 1; i <= NF; i++) if ($i ~ fn "$" && $(i + 1) ~ /^\[/) { gsub(",", "", $1); print $1; done = 1; break } }')
    [ -n "$ir" ] || { echo "event_insns: no Ir for $fn in the callgrind profile" >&2; exit 1; }
    IPI[$v]=$(awk -v a="$ir" -v n="$iters" 'BEGIN { printf "%.2f", a / n }')
    printf '%-9s %14s Ir in %-13s / %8s iterations = %8s instructions/iteration\n' "$v" "$ir" "$fn" "$iters" "${IPI[$v]}"
  done
  d() { awk -v a="${IPI[$1]}" -v b="${IPI[baseline]}" 'BEGIN { printf "%+.2f", a - b }'; }
  echo "summary: event_insns instructions/iteration (callgrind): baseline ${IPI[baseline]}, guarded ${IPI[guarded]} ($(d guarded)), direct ${IPI[direct]} ($(d direct)), enabled ${IPI[enabled]} per event"
else
  echo "event_insns: valgrind/callgrind_annotate not installed: no instruction counts"
fi

if command -v objdump >/dev/null 2>&1; then
  echo "event_insns: objdump -d --no-show-raw-insn --disassemble=loop_guarded $EXE (up to the first ret):"
  objdump -d --no-show-raw-insn --disassemble=loop_guarded "$EXE" |
    awk '/<loop_guarded>:/ { on = 1 } on { print } on && /\tret/ { on = 0 }'
fi
