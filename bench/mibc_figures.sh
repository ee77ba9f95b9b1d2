#!/usr/bin/env bash
# mibc_figures.sh MANTRA TE_DLL FIXTURE [RUNS] - figures of `mantra pgo --format mibc` (docs/pgo.md
# ".mibc"), each against its baseline measured in the same run:
#
#   convert   `mantra pgo TRACE -o X --format mibc` against `--format text` on the same trace: a real
#             .NET 10 run of the TraceEvent harness (TE_DLL reading FIXTURE) traced with dotnet-pgo's
#             keywords, as tests/interop/pgo-real.sh records it; MB of trace per second
#   merge     100 copies of that profile merged, given as text, JSON or .mibc inputs (the .mibc with -r
#             the framework and the harness, so that its methods find their tokens): profiles per
#             second, against the text path
#   startup   the harness's start-up (`TE_DLL --help`) and a workload (`TE_DLL stats FIXTURE`: reading
#             a trace with TraceEvent), wall time, with three builds of TraceEventDump.dll and
#             Microsoft.Diagnostics.Tracing.TraceEvent.dll: IL only (the JIT compiles everything),
#             ReadyToRun without a profile, ReadyToRun with the .mibc (crossgen2 --mibc
#             --embed-pgo-data); ratios against IL only
#
# crossgen2 is the SDK's, from the NuGet cache (the build restores tests/interop/Crossgen2Restore).
# Medians of RUNS runs (default 5), the variants taking turns. Not a test: figures depend on the
# machine and its load.
set -eu -o pipefail
mantra=$(realpath "$1") te_dll=$(realpath "$2") fixture=$(realpath "$3") runs=${4:-5}
bin=$(dirname "$te_dll")
work=$(mktemp -d /tmp/mantra-mibc-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

echo "== recording a PGO trace of the harness (dotnet-pgo's keywords)"
env DOTNET_TieredPGO=1 DOTNET_TieredPGO_InstrumentOnlyHotCode=0 DOTNET_ReadyToRun=0 \
    DOTNET_EnableEventPipe=1 DOTNET_EventPipeConfig="Microsoft-Windows-DotNETRuntime:0x1F000080018:5" \
    DOTNET_EventPipeOutputPath="$work/app.nettrace" dotnet "$te_dll" stats "$fixture" > /dev/null
size=$(stat -c %s "$work/app.nettrace")

echo "== convert: $(printf '%.1f' "$(echo "$size / 1048576" | bc -l)") MB of trace, median of $runs"
for r in $(seq 1 "$runs"); do
  secs "$mantra" pgo "$work/app.nettrace" -o "$work/app.txt" >> "$work/text.s"
  secs "$mantra" pgo "$work/app.nettrace" -o "$work/app.mibc" --format mibc >> "$work/mibc.s"
done
text=$(median < "$work/text.s") mibc=$(median < "$work/mibc.s")
printf 'convert: text %.3f s (%.1f MB/s), mibc %.3f s (%.1f MB/s): mibc/text time %.2f\n' "$text" \
  "$(echo "$size / 1048576 / $text" | bc -l)" "$mibc" "$(echo "$size / 1048576 / $mibc" | bc -l)" \
  "$(echo "$mibc / $text" | bc -l)"
"$mantra" pgo "$work/app.nettrace" -o "$work/app.mibc" --format mibc 2>&1 | tail -1

echo "== merge: 100 copies of the profile, as text, JSON and .mibc inputs, median of $runs"
"$mantra" pgo "$work/app.nettrace" -o "$work/app.json" --format json 2> /dev/null
fw0=$(dotnet --list-runtimes | awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ { v = $2; d = $3 } END {
  gsub(/[][]/, "", d); if (v != "") print d "/" v }')
for r in $(seq 1 "$runs"); do
  for f in txt json mibc; do
    refs=()
    [ $f = mibc ] && refs=(-r "$fw0" -r "$(dirname "$te_dll")")
    secs "$mantra" pgo $(printf "$work/app.$f %.0s" $(seq 1 100)) "${refs[@]}" -o "$work/merged.$f.txt" >> "$work/merge.$f.s"
  done
done
mt=$(median < "$work/merge.txt.s") mj=$(median < "$work/merge.json.s") mm=$(median < "$work/merge.mibc.s")
printf 'merge: text %.1f profiles/s, JSON %.1f profiles/s (%.2f of text), .mibc %.1f profiles/s (%.2f of text)\n' \
  "$(echo "100 / $mt" | bc -l)" "$(echo "100 / $mj" | bc -l)" "$(echo "$mt / $mj" | bc -l)" \
  "$(echo "100 / $mm" | bc -l)" "$(echo "$mt / $mm" | bc -l)"

fw=$(dotnet --list-runtimes | awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ { v = $2; d = $3 } END {
  gsub(/[][]/, "", d); if (v != "") print d "/" v }')
cg2=$(ls -d "${NUGET_PACKAGES:-$HOME/.nuget/packages}"/microsoft.netcore.app.crossgen2.linux-x64/*/tools/crossgen2 | sort -V | tail -1)
echo "== builds (crossgen2 $(basename "$(dirname "$(dirname "$cg2")")"))"
for v in jit r2r mibc; do
  cp -r "$bin" "$work/$v"
  [ $v = jit ] && continue
  args=()
  [ $v = mibc ] && args=(--mibc "$work/app.mibc" --embed-pgo-data)
  for a in TraceEventDump Microsoft.Diagnostics.Tracing.TraceEvent; do
    "$cg2" "$bin/$a.dll" -o "$work/$v/$a.dll" -r "$fw/*.dll" -r "$bin/*.dll" --targetos linux --targetarch x64 -O \
      "${args[@]}" > "$work/$v-$a.log" 2>&1 || { tail -3 "$work/$v-$a.log"; exit 1; }
  done
done
echo "== startup and workload, median of $runs (variants taking turns)"
for r in $(seq 1 "$runs"); do
  for v in jit r2r mibc; do
    secs dotnet "$work/$v/TraceEventDump.dll" --help >> "$work/$v.start"
    secs dotnet "$work/$v/TraceEventDump.dll" stats "$fixture" >> "$work/$v.work"
  done
done
for v in jit r2r mibc; do
  s=$(median < "$work/$v.start") w=$(median < "$work/$v.work")
  [ $v = jit ] && { s0=$s; w0=$w; }
  printf '%-5s startup %.3f s (%.2f of IL only)   workload %.3f s (%.2f of IL only)\n' "$v" "$s" \
    "$(echo "$s / $s0" | bc -l)" "$w" "$(echo "$w / $w0" | bc -l)"
done
