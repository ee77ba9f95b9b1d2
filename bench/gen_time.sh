#!/usr/bin/env bash
# gen_time.sh - wall time of tools/mantra-gen on ClrEtwAll (load -> written files).
#
# Times these commands, interleaved round-robin so that each sees the same machine noise, from
# this shell (so with the caller's PATH: `python3` may be a pyenv shim, as for a user):
#
#   python3 -c pass                      baseline: interpreter start-up as found on PATH, which is
#                                        what the generator's `#!/usr/bin/env python3` line starts
#   tools/mantra-gen -o TMP MAN          the generator as users run it, fresh TMP each run
#   PY -c pass                           baseline: the resolved interpreter (no PATH shim)
#   PY -c 'import jinja2, yaml'          start-up + the third-party imports
#   PY tools/mantra-gen --validate MAN   load + validate: nothing rendered or written
#   PY tools/mantra-gen -o TMP MAN       load -> render -> write, fresh TMP each run
#
# PY is $PYTHON when set, else the real executable behind `python3`. Reports median, min and max
# wall seconds, and the generator's ratio to / paired excess over its baseline. Figures only: the
# exit status is 0 whatever the timings (non-zero when a command fails).
#
# Usage: bench/gen_time.sh [-n RUNS] [--manifest FILE]      (RUNS default 7)
#   MANTRA_SHARED_DIR  holds fixtures/manifests/ClrEtwAll-coreclr-2019.man
#                      (default: ../shared relative to the repository root)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GEN="$REPO/tools/mantra-gen"
SHARED=${MANTRA_SHARED_DIR:-$REPO/../shared}
MAN="$SHARED/fixtures/manifests/ClrEtwAll-coreclr-2019.man"
RUNS=7
GOAL_S=2

while [ $# -gt 0 ]; do
  case "$1" in
    -n|--runs) RUNS=$2; shift 2 ;;
    --manifest) MAN=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gen_time: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "gen_time: RUNS must be a positive integer" >&2; exit 2; }
[ -f "$MAN" ] || { echo "gen_time: manifest not found: $MAN (set MANTRA_SHARED_DIR)" >&2; exit 2; }
MAN=$(realpath "$MAN")
[ -x "$GEN" ] || { echo "gen_time: $GEN missing or not executable" >&2; exit 2; }
PY=${PYTHON:-$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')}

now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s.%N; fi; }

KEYS=(path_pass gen_shebang py_pass py_imports gen_validate gen_py)
declare -A LABEL=(
  [path_pass]="python3 -c pass   ($(command -v python3))"
  [gen_shebang]="tools/mantra-gen -o TMP MAN   (shebang: env python3)"
  [py_pass]="PY -c pass"
  [py_imports]="PY -c 'import jinja2, yaml'"
  [gen_validate]="PY tools/mantra-gen --validate MAN"
  [gen_py]="PY tools/mantra-gen -o TMP MAN"
)
declare -A TIMES=() FIRST=()
WRITTEN=""

# run_one KEY: runs the command once, sets ELAPSED (seconds).
run_one() {
  local key=$1 out="" t0 t1 rc=0 err
  err=$(mktemp)
  case "$key" in gen_shebang|gen_py) out=$(mktemp -d "${TMPDIR:-/tmp}/mantra-gen-time.XXXXXX") ;; esac
  t0=$(now)
  case "$key" in
    path_pass)    python3 -c pass >/dev/null 2>"$err" || rc=$? ;;
    gen_shebang)  "$GEN" -o "$out" "$MAN" >/dev/null 2>"$err" || rc=$? ;;
    py_pass)      "$PY" -c pass >/dev/null 2>"$err" || rc=$? ;;
    py_imports)   "$PY" -c 'import jinja2, yaml' >/dev/null 2>"$err" || rc=$? ;;
    gen_validate) "$PY" "$GEN" --validate "$MAN" >/dev/null 2>"$err" || rc=$? ;;
    gen_py)       "$PY" "$GEN" -o "$out" "$MAN" >/dev/null 2>"$err" || rc=$? ;;
  esac
  t1=$(now)
  if [ "$rc" -ne 0 ]; then
    cat "$err" >&2
    echo "gen_time: '${LABEL[$key]}' failed (exit $rc)" >&2
    exit 1
  fi
  if [ -n "$out" ]; then
    WRITTEN="$(find "$out" -type f | wc -l) files, $(du -sb "$out" | cut -f1) bytes"
    rm -rf "$out"
  fi
  rm -f "$err"
  ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
}

# stats v1 v2 ...: "median min max"
stats() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
    END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f %.3f %.3f", m, a[1], a[NR] }'
}
# paired KEY_A KEY_B: stats of the per-round differences A - B
paired() {
  local -a a=(${TIMES[$1]}) b=(${TIMES[$2]}) d=()
  local i
  for i in "${!a[@]}"; do d+=("$(awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN { printf "%.4f", x - y }')"); done
  stats "${d[@]}"
}

echo "gen_time: manifest $MAN ($(stat -c %s "$MAN") bytes)"
echo "gen_time: PY = $PY; python3 on PATH = $(command -v python3)"
echo "gen_time: $RUNS timed runs of each command, interleaved, after one warm-up run of each"
for k in "${KEYS[@]}"; do run_one "$k"; FIRST[$k]=$ELAPSED; TIMES[$k]=""; done
echo "gen_time: each generator run writes $WRITTEN, into a fresh directory"
for ((r = 0; r < RUNS; r++)); do
  for k in "${KEYS[@]}"; do run_one "$k"; TIMES[$k]+="$ELAPSED "; done
done

declare -A MED=()
printf '%-60s %9s %7s %7s %8s\n' command "median s" min max warm-up
for k in "${KEYS[@]}"; do
  read -r med min max <<<"$(stats ${TIMES[$k]})"
  MED[$k]=$med
  printf '%-60s %9s %7s %7s %8.3f\n' "${LABEL[$k]}" "$med" "$min" "$max" "${FIRST[$k]}"
done
ratio() { awk -v a="${MED[$1]}" -v b="${MED[$2]}" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
read -r d1 d1min d1max <<<"$(paired gen_shebang path_pass)"
read -r d2 d2min d2max <<<"$(paired gen_py py_pass)"
read -r d3 d3min d3max <<<"$(paired path_pass py_pass)"
read -r d4 d4min d4max <<<"$(paired gen_py gen_validate)"
echo "tools/mantra-gen vs python3 -c pass: ratio $(ratio gen_shebang path_pass)x of the medians; excess $d1 s (median of paired differences, min $d1min, max $d1max)"
echo "PY tools/mantra-gen vs PY -c pass: ratio $(ratio gen_py py_pass)x; excess $d2 s (min $d2min, max $d2max)"
echo "python3 on PATH vs PY start-up (PATH shim such as pyenv, if any): $d3 s (min $d3min, max $d3max)"
echo "render + write (PY full run minus PY --validate): $d4 s (min $d4min, max $d4max)"
read -r gm gmin gmax <<<"$(stats ${TIMES[gen_shebang]})"
echo "summary: gen_time ClrEtwAll tools/mantra-gen -o TMP: median $gm s (min $gmin, max $gmax, n=$RUNS; goal < $GOAL_S s); python3 -c pass baseline ${MED[path_pass]} s, ratio $(ratio gen_shebang path_pass)x"
read -r pm pmin pmax <<<"$(stats ${TIMES[gen_py]})"
echo "summary: gen_time ClrEtwAll PY tools/mantra-gen -o TMP: median $pm s (min $pmin, max $pmax); PY -c pass baseline ${MED[py_pass]} s; load+validate only ${MED[gen_validate]} s"
