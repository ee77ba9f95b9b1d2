#!/usr/bin/env bash
# symbolize_figures.sh MANTRA BENCH REAL_TRACE [RUNS] - figures of the symbol map, `mantra symbolize`
# and `mantra report` (docs/symbols.md), each against its baseline measured in the same run:
#
#   map        the symbol map alone (BENCH = build/bench/symbolize_trace): 20,000 methods, 1,000,000
#              samples of 8 frames resolved: frames and samples per second; its index time
#   r2r        the ReadyToRun reader indexing the shared framework's System.Private.CoreLib.dll
#   symbolize  `mantra symbolize --json` on a trace of 1,000,000 samples (written by BENCH through a
#              libmantra file session): samples per second, wall time and peak memory
#   report     `mantra report` against `dotnet-trace report ... topN` (TraceEvent's TraceLog and
#              thread-time computer) on the same files: a 100,000-sample trace written by BENCH (on
#              the 1M one dotnet-trace report had not finished after 13 CPU-minutes) and REAL_TRACE
#              (a real .NET trace, e.g. ../shared/fixtures' objver4); ratio of wall times
#
# Medians of RUNS runs (default 3; dotnet-trace once per file when it takes more than a minute).
# Not a test: figures depend on the machine and its load.
set -eu -o pipefail
mantra=$(realpath "$1") bench=$(realpath "$2") real=$(realpath "$3") runs=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
interop="$here/../tests/interop"
work=$(mktemp -d /tmp/mantra-symbolize-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
corelib=$(dotnet --list-runtimes | awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ { v = $2; d = $3 } END {
  gsub(/[][]/, "", d); print d "/" v "/System.Private.CoreLib.dll" }')

echo "== map and r2r"
"$bench" -s 1000000 -m 20000 -o "$work/big.nettrace" -r "$corelib"
echo "== mantra symbolize --json on the 1M-sample trace"
/usr/bin/time -f "peak memory %M KB" "$mantra" symbolize --json "$work/big.nettrace" 2>&1 >/dev/null | tail -1
t=$(for i in $(seq "$runs"); do secs "$mantra" symbolize --json "$work/big.nettrace"; done | median)
printf 'mantra symbolize: %.2f s (median of %s): %.0f samples/s\n' "$t" "$runs" "$(echo "1000000 / $t" | bc -l)"
"$bench" -s 100000 -m 20000 -o "$work/100k.nettrace" | tail -1
# dotnet-trace writes TRACE.etlx beside its input: a copy in the work folder keeps REAL_TRACE's folder
# (../shared/fixtures) untouched
cp "$real" "$work/real.nettrace"
for f in "$work/100k.nettrace" "$work/real.nettrace"; do
  echo "== report: $(basename "$f")"
  m=$(for i in $(seq "$runs"); do secs "$mantra" report "$f" --top 10; done | median)
  d=$(cd "$interop" && secs timeout 1800 dotnet tool run dotnet-trace report "$f" topN -n 10)
  printf 'mantra report %.2f s (median of %s), dotnet-trace report %.2f s: %.1fx\n' "$m" "$runs" "$d" "$(echo "$d / $m" | bc -l)"
done
