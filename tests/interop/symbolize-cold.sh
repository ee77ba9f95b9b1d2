#!/usr/bin/env bash
# symbolize-cold.sh - samples in the cold part of a ReadyToRun method, which TraceLog leaves
# unresolved, resolved by `mantra symbolize` (docs/symbols.md).
#
#   symbolize-cold.sh MANTRA PYTHON DOTNET TE_DLL COLDAPP_DLL OUTDIR
#
#  1. crossgen2 (the SDK's, restored by tests/interop/Crossgen2Restore) compiles ColdApp
#     (tests/interop/ColdApp) with --hot-cold-splitting: ColdApp.Step has a cold part, and
#     `mantra image --json` gives every hot and cold part as crossgen2's map and perfmap do.
#  2. The image runs (DOTNET_TieredCompilation=0: its code is never rejitted) to the IL build's
#     output, traced from startup with SampleProfiler and the runtime's Loader, Jit, NGen and
#     CompilationDiagnostic keywords (end rundown on): `mantra symbolize --stacks` names every frame
#     TraceLog names the same (symbolize_compare.py), and names the frames TraceLog leaves as
#     addresses: ColdApp.Step's cold part (return addresses while the exception is dispatched), and
#     now and then precompiled CoreLib code no event of the trace placed, named from the image.
#  3. The same run without rundown (DOTNET_EventPipeRundown=0): the images, placed from
#     R2RGetEntryPoint's starts, resolve every sampled frame, the cold ones included.
#  4. `mantra report --weight time` names TraceEvent's top 10 methods by exclusive time with the
#     same shares (within 0.1 percentage point) as dotnet-trace's speedscope conversion gives
#     (report_compare.py).
#  5. A JIT-only run of the IL build (ReadyToRun off, IL-to-native maps on): every frame TraceLog
#     names, mantra names the same, and ColdApp's frames have their IL offsets.
set -euo pipefail
[ $# -eq 6 ] || { echo "usage: $0 MANTRA PYTHON DOTNET TE_DLL COLDAPP_DLL OUTDIR" >&2; exit 2; }
mantra=$1 python=$2 dotnet=$3 te_dll=$4 app=$5 out=$6
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out/r2r"
fw=$("$dotnet" --list-runtimes | awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ { v = $2; d = $3 } END {
  gsub(/[][]/, "", d); if (v != "") print d "/" v }')
packages=${NUGET_PACKAGES:-$HOME/.nuget/packages}
cg2=$(ls -d "$packages"/microsoft.netcore.app.crossgen2.linux-x64/*/tools/crossgen2 2>/dev/null | sort -V | tail -1)
[ -x "$cg2" ] || { echo "symbolize-cold: no crossgen2 under $packages (tests/interop/Crossgen2Restore is restored by the build)" >&2; exit 1; }
status=0
# 1. the image
cp "$(dirname "$app")"/ColdApp.* "$out/r2r/"
"$cg2" "$app" -o "$out/r2r/ColdApp.dll" -r "$fw/*.dll" --targetos linux --targetarch x64 -O --hot-cold-splitting \
  --map --perfmap > "$out/crossgen2.log" 2>&1 || { echo "symbolize-cold: crossgen2 failed:" >&2; tail -5 "$out/crossgen2.log" >&2; exit 1; }
"$mantra" image --json "$out/r2r/ColdApp.dll" > "$out/image.json"
"$python" "$here/r2r_map_check.py" "$out/image.json" "$out/r2r/ColdApp.map" "$(ls "$out"/r2r/ColdApp.ni.*.map)" 1 > "$out/image.check" || {
  cat "$out/image.check" >&2; status=1; }
echo "symbolize-cold: $(tail -1 "$out/image.check")"
"$python" - "$out/image.json" <<'PY' || status=1
import json, sys
m = {x["name"]: x for x in json.load(open(sys.argv[1]))["methods"]}
step = m.get("ColdApp.Step")
if not step or not step["cold"]:
    sys.exit("symbolize-cold: ColdApp.Step has no cold part")
print(f"symbolize-cold: ColdApp.Step: hot {step['hot']['size']} bytes, cold {step['cold']['size']} bytes")
PY
# 2. traced with rundown, against TraceLog
iterations=30000000
"$dotnet" "$app" "$iterations" > "$out/il.out"
run() { # TRACE RUNDOWN(0|1)
  env DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_TieredCompilation=0 DOTNET_ReadyToRun=1 \
      DOTNET_EnableEventPipe=1 DOTNET_EventPipeRundown="$2" DOTNET_EventPipeOutputPath="$1" \
      DOTNET_EventPipeConfig="Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x2000000038:5" \
      "$dotnet" "$out/r2r/ColdApp.dll" "$iterations"
}
run "$out/cold.nettrace" 1 > "$out/r2r.out"
cmp -s "$out/il.out" "$out/r2r.out" || { echo "symbolize-cold: the image prints something else than the IL build" >&2; status=1; }
"$mantra" symbolize --stacks "$out/cold.nettrace" > "$out/cold.mantra" 2> "$out/cold.mantra.err" || {
  cat "$out/cold.mantra.err" >&2; status=1; }
MANTRA_BINARY_DIR="$out" "$dotnet" "$te_dll" stacks "$out/cold.nettrace" > "$out/cold.tracelog" 2> "$out/cold.tracelog.err" || {
  cat "$out/cold.tracelog.err" >&2; status=1; }
"$python" "$here/symbolize_compare.py" "$out/cold.mantra" "$out/cold.tracelog" cold 1000 > "$out/cold.check" || {
  cat "$out/cold.check" >&2; status=1; }
echo "symbolize-cold: $(tail -1 "$out/cold.check")"
# the frames only mantra names are ColdApp.Step's cold part
"$python" - "$out/cold.mantra" "$out/cold.tracelog" <<'PY' || status=1
import json, sys, collections
ours = {(e["thread_id"], e["timestamp"], i): f for e in map(json.loads, open(sys.argv[1])) for i, f in enumerate(e["frames"])}
only = collections.Counter()
for e in map(json.loads, open(sys.argv[2])):
    for i, f in enumerate(e["frames"]):
        o = ours.get((e["thread_id"], e["timestamp"], i))
        if f.startswith("0x") and o and not o.startswith("0x"):
            only[o] += 1
cold = only.get("ColdApp!ColdApp.Step[cold](int32,int32[])", 0)
print(f"symbolize-cold: frames TraceLog leaves as addresses and mantra names: {dict(only)}")
# all of them code of the images read from disk: the cold part, or precompiled code no event placed
other = [m for m in only if not m.startswith(("ColdApp!", "System.Private.CoreLib!"))]
sys.exit(0 if cold > 0 and cold >= sum(only.values()) // 2 and not other else 1)
PY
# 4. mantra report against dotnet-trace's view of the same trace (its speedscope conversion, which
#    weighs a sample by the time to its thread's next one, as `dotnet-trace report` does)
"$mantra" report "$out/cold.nettrace" --top 0 --weight time --json > "$out/report.json" 2> "$out/report.err" || {
  cat "$out/report.err" >&2; status=1; }
cp "$out/cold.nettrace" "$out/convert.nettrace"
(cd "$here" && "$dotnet" tool run dotnet-trace convert "$out/convert.nettrace" --format speedscope -o "$out/dotnet-trace" \
  > "$out/convert.log" 2>&1) || { echo "symbolize-cold: dotnet-trace convert failed:" >&2; tail -3 "$out/convert.log" >&2; status=1; }
"$python" "$here/report_compare.py" "$out/report.json" "$out/dotnet-trace.speedscope.json" 10 0.1 > "$out/report.check" || {
  cat "$out/report.check" >&2; status=1; }
echo "symbolize-cold: mantra report: $(tail -1 "$out/report.check")"
# 3. without rundown: the images from their files, placed by R2RGetEntryPoint
run "$out/norundown.nettrace" 0 > /dev/null
"$mantra" symbolize --json "$out/norundown.nettrace" > "$out/norundown.json" 2> "$out/norundown.err" || {
  cat "$out/norundown.err" >&2; status=1; }
"$python" - "$out/norundown.json" "$out/norundown.err" <<'PY' || status=1
import json, sys
s = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read().strip()
print(f"symbolize-cold: without rundown: {s}; {err.split('; ', 2)[-1]}")
sys.exit(0 if s["samples"] > 100 and s["unresolved"] == 0 and s["cold"] > 0 and " 0 rundown methods" in err else 1)
PY
# 5. a JIT-only .NET 10 run (ReadyToRun off: every method jitted, tiering on): mantra names every
#    frame TraceLog names the same
env DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_ReadyToRun=0 \
    DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$out/jit.nettrace" \
    DOTNET_EventPipeConfig="Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x2000020038:5" \
    "$dotnet" "$app" "$iterations" > /dev/null
"$mantra" symbolize --stacks "$out/jit.nettrace" > "$out/jit.mantra" 2> "$out/jit.mantra.err" || {
  cat "$out/jit.mantra.err" >&2; status=1; }
MANTRA_BINARY_DIR="$out" "$dotnet" "$te_dll" stacks "$out/jit.nettrace" > "$out/jit.tracelog" 2> "$out/jit.tracelog.err" || {
  cat "$out/jit.tracelog.err" >&2; status=1; }
"$python" "$here/symbolize_compare.py" "$out/jit.mantra" "$out/jit.tracelog" jit-only 1000 > "$out/jit.check" || {
  cat "$out/jit.check" >&2; status=1; }
echo "symbolize-cold: $(tail -1 "$out/jit.check")"
# with the IL-to-native maps (keyword JittedMethodILToNativeMap 0x20000): ColdApp's jitted frames
# have their IL offsets, inside the methods' IL (Main's and Step's bodies are under 200 bytes)
"$python" - "$out/jit.mantra" <<'PY' || status=1
import json, sys
frames = [(f, il) for e in map(json.loads, open(sys.argv[1])) for f, il in zip(e["frames"], e["il"])
          if f.startswith("ColdApp!ColdApp.")]
mapped = [il for f, il in frames if il is not None]
with_il = [il for il in mapped if il >= 0]
print(f"symbolize-cold: JIT-only run: {len(frames)} ColdApp frames, {len(mapped)} in code with an IL map "
      f"({len(with_il)} at an IL offset, the others the runtime's no-mapping/prolog/epilog; max IL_{max(with_il, default=0):04x})")
sys.exit(0 if frames and len(mapped) >= 0.95 * len(frames) and with_il and max(with_il) < 200 else 1)
PY
exit $status
