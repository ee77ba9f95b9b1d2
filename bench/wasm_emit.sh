#!/usr/bin/env bash
# wasm_emit.sh - `mantra emit` under Node's WASI (build-wasm/tools/mantra.wasm, one writer that pumps
# its own loop) against the native build (build/tools/mantra, one writer thread and the drain
# thread) on the same machine, alternating runs; the median events per second of each and their
# ratio. Also the sizes of the WASI artefacts (stripped with llvm-strip when it is there).
#
# Usage: bench/wasm_emit.sh [-n EVENTS] [-r RUNS] [--build-dir DIR] [--wasm-dir DIR]
#   -n EVENTS   events per run (default 2000000), --mix all
#   -r RUNS     runs of each (default 7)
# Figures, not a test: exit 0 unless something could not run.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=2000000 RUNS=7 BUILD_DIR=$REPO/build WASM_DIR=$REPO/build-wasm
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;;
    -r) RUNS=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --wasm-dir) WASM_DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "wasm_emit: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
native=$BUILD_DIR/tools/mantra wasm=$WASM_DIR/tools/mantra.wasm
for f in "$native" "$wasm"; do [ -e "$f" ] || { echo "wasm_emit: $f not built (make build; make wasm)" >&2; exit 1; }; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mantra-wasm-emit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rate() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["events_per_second"])'; }
: >"$tmp/native" ; : >"$tmp/wasm"
for ((k = 0; k < RUNS; k++)); do
  "$native" emit --threads 1 --events "$N" --trace "$tmp/n.nettrace" | rate >>"$tmp/native"
  node "$REPO/tools/wasm/mantra-wasi.mjs" --dir "$tmp" "$wasm" emit --events "$N" --trace "$tmp/w.nettrace" \
    | rate >>"$tmp/wasm"
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mn=$(median "$tmp/native") mw=$(median "$tmp/wasm")
echo "mantra emit, 1 writer, $N events, median of $RUNS alternating runs:"
printf '  native (drain thread)        %12.0f events/s\n' "$mn"
printf '  WASI under Node (self-pump)  %12.0f events/s\n' "$mw"
python3 -c "print(f'  ratio WASI / native          {$mw / $mn:12.3f}')"
cp "$wasm" "$tmp/stripped.wasm"
strip=$(command -v llvm-strip-14 || command -v llvm-strip || true)
[ -n "$strip" ] && "$strip" "$tmp/stripped.wasm"
echo "sizes:"
printf '  %-40s %9d bytes\n' "mantra.wasm" "$(stat -c %s "$wasm")" \
  "mantra.wasm stripped${strip:+ ($(basename "$strip"))}" "$(stat -c %s "$tmp/stripped.wasm")" \
  "libmantra.a (wasm32, with the interpreter)" "$(stat -c %s "$WASM_DIR/libmantra.a")"
