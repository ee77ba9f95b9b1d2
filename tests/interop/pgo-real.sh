#!/usr/bin/env bash
# pgo-real.sh - `mantra pgo` on a real .NET trace against the runtime's own PGO dump of the same run.
#
#   pgo-real.sh MANTRA PYTHON DOTNET TE_DLL FIXTURE OUTDIR MD_DUMP
#
# The workload is a real .NET 10 program, the TraceEvent harness (TE_DLL) reading FIXTURE, run as a
# child with tiered PGO instrumenting every method (DOTNET_TieredPGO=1
# DOTNET_TieredPGO_InstrumentOnlyHotCode=0 DOTNET_ReadyToRun=0), its text dump
# (DOTNET_WritePGOData=1 DOTNET_PGODataPath=OUTDIR/RUN.txt) and EventPipe startup tracing of
# Microsoft-Windows-DotNETRuntime (DOTNET_EventPipeOutputPath=OUTDIR/RUN.nettrace). Three runs:
#   plain  keywords 0x14000080018 (Loader, Jit, Type, MethodDiagnostic, JitInstrumentationData):
#          no event names a type, so every named handle of the dump is UNKNOWN in ours, and the
#          summary says which keyword was missing
#   names  the same plus GCHeapAndTypeNames 0x1000000, which makes BulkType carry names (nested
#          types by their own name only: counted)
#   full   dotnet-pgo's keywords 0x1F000080018 (plain's plus CompilationDiagnostic,
#          TypeDiagnostic): TypeLoadStop names every type; every handle line equals the dump's
# Then per run: `mantra pgo RUN.nettrace -o RUN.out.txt`, pgo_compare.py (every difference explained
# and counted), `mantra pgo --check` on both files, and `mantra stats` of the trace (no event may be
# reported as not matching its template: the regression test of event 298's Data field).
# Then pgo-mibc.sh on the full run's trace: the .mibc against crossgen2 and System.Reflection.Metadata
# (MD_DUMP: tests/ecma's md_dump). Last, layout_compare.py: the events of mantra's own PGO flush
# against the runtime's, field by field.
# Everything is written under OUTDIR (in the build tree).
set -euo pipefail
[ $# -eq 7 ] || { echo "usage: $0 MANTRA PYTHON DOTNET TE_DLL FIXTURE OUTDIR MD_DUMP" >&2; exit 2; }
mantra=$1 python=$2 dotnet=$3 te_dll=$4 fixture=$5 out=$6 md_dump=$7
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -r "$fixture" ]; then
  if [ "${MANTRA_REQUIRE_INTEROP:-}" = 1 ]; then
    echo "pgo-real: fixture $fixture is required (MANTRA_REQUIRE_INTEROP=1)" >&2; exit 1
  fi
  echo "SKIP: pgo-real: fixture $fixture not found"; exit 0
fi
rm -rf "$out"
mkdir -p "$out"
status=0
for run in plain names full; do
  case $run in
    plain) keywords=0x14000080018 names=no ;;
    names) keywords=0x14001080018 names=bulk ;;
    full)  keywords=0x1F000080018 names=full ;;
  esac
  env DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
      DOTNET_TieredPGO=1 DOTNET_TieredPGO_InstrumentOnlyHotCode=0 DOTNET_ReadyToRun=0 \
      DOTNET_WritePGOData=1 DOTNET_PGODataPath="$out/$run.txt" \
      DOTNET_EnableEventPipe=1 DOTNET_EventPipeConfig="Microsoft-Windows-DotNETRuntime:$keywords:5" \
      DOTNET_EventPipeOutputPath="$out/$run.nettrace" \
      "$dotnet" "$te_dll" stats "$fixture" > "$out/$run.child.out"
  [ -s "$out/$run.txt" ] && [ -s "$out/$run.nettrace" ] || { echo "pgo-real: $run: the runtime wrote no dump or no trace" >&2; exit 1; }
  "$mantra" pgo "$out/$run.nettrace" -o "$out/$run.out.txt" 2> "$out/$run.pgo.err" || { cat "$out/$run.pgo.err" >&2; exit 1; }
  echo "pgo-real: $run: $(cat "$out/$run.pgo.err")"
  # nothing dropped, nothing unnamed beyond what the run explains
  grep -q "dropped: 0 out of order, 0 after the final chunk (0 chunks), 0 incomplete, 0 bad payloads, 0 undecodable" \
    "$out/$run.pgo.err" || { echo "pgo-real: $run: the converter dropped data" >&2; status=1; }
  # unnamed handles: none with type names in the trace; without them the summary names the keyword
  if [ $run = plain ]; then
    grep -q "handles unnamed: types without a name (keyword TypeDiagnostic 0x8000000000" "$out/$run.pgo.err" || {
      echo "pgo-real: $run: the summary does not say which keyword names the handles" >&2; status=1; }
  else
    grep -q " 0 of [0-9]* handles unnamed" "$out/$run.pgo.err" || {
      echo "pgo-real: $run: handles left unnamed" >&2; status=1; }
  fi
  echo "pgo-real: $run: $("$python" "$here/pgo_compare.py" "$out/$run.txt" "$out/$run.out.txt" --names $names | tail -1)"
  "$python" "$here/pgo_compare.py" "$out/$run.txt" "$out/$run.out.txt" --names $names > "$out/$run.compare" || {
    cat "$out/$run.compare" >&2; status=1; }
  for f in "$out/$run.txt" "$out/$run.out.txt"; do
    "$mantra" pgo --check "$f" > "$out/$run.check" 2>&1 || { cat "$out/$run.check" >&2; status=1; }
  done
  # event 298 (and every other runtime event) decodes with the manifest's template: no warnings
  "$mantra" stats "$out/$run.nettrace" > "$out/$run.stats" 2> "$out/$run.stats.err" || status=1
  if [ -s "$out/$run.stats.err" ]; then
    echo "pgo-real: $run: mantra stats reports payloads that do not match their template:" >&2
    head -5 "$out/$run.stats.err" >&2
    status=1
  fi
done
# the .mibc of the run traced with dotnet-pgo's keywords, through crossgen2
"$here/pgo-mibc.sh" "$mantra" "$python" "$dotnet" "$te_dll" "$md_dump" "$fixture" "$out/full.nettrace" "$out/mibc" ||
  status=1
# mantra's own flush (examples/programs/loop.masm with probes) against the runtime's events: the same
# fields in the same order for ModuleLoad, MethodLoadVerbose and JitInstrumentationDataVerbose
MANTRA_InterpPgo=1 "$mantra" run "$here/../../examples/programs/loop.masm" --trace "$out/ours.nettrace" \
  > "$out/ours.run.out" || { echo "pgo-real: mantra run failed" >&2; exit 1; }
"$python" "$here/layout_compare.py" "$mantra" "$here/../../manifest/dotnet.yaml" "$out/plain.nettrace" \
  "$out/ours.nettrace" || status=1
# and TraceEvent reads our flush as it reads the runtime's (298's MethodToken/MethodNamespace: its
# parser's 2-bytes-early reading, checked against our bytes and counted by the comparer)
"$mantra" dump --json --sorted "$out/ours.nettrace" > "$out/ours.jsonl" || status=1
"$dotnet" "$te_dll" compare "$out/ours.nettrace" "$out/ours.jsonl" --max 20 > "$out/ours.compare" || {
  cat "$out/ours.compare" >&2; status=1; }
echo "pgo-real: ours: $(tail -1 "$out/ours.compare")"
exit $status
