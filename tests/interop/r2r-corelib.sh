#!/usr/bin/env bash
# r2r-corelib.sh - libmantra's ReadyToRun reader (`mantra image --json`) on the shared framework's
# System.Private.CoreLib.dll.
#
#   r2r-corelib.sh MANTRA PYTHON DOTNET OUTDIR
#
#  1. The shipped CoreLib (ReadyToRun, Machine XORed for Linux) reads whole: methods of its own
#     MethodDefs and generic instantiations, every one named, hot parts inside the file's sections.
#  2. crossgen2 (the SDK's, restored by tests/interop/Crossgen2Restore) compiles CoreLib again with
#     `--map --perfmap`: every method's hot RVA and size equal crossgen2's map and perfmap
#     (r2r_map_check.py), byte for byte.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 MANTRA PYTHON DOTNET OUTDIR" >&2; exit 2; }
mantra=$1 python=$2 dotnet=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
fw=$("$dotnet" --list-runtimes | awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ { v = $2; d = $3 } END {
  gsub(/[][]/, "", d); if (v != "") print d "/" v }')
[ -n "$fw" ] || { echo "r2r-corelib: no .NET 10 shared framework" >&2; exit 1; }
corelib="$fw/System.Private.CoreLib.dll"
status=0
# 1. the shipped image
"$mantra" image --json "$corelib" > "$out/shipped.json" 2> "$out/shipped.err" || { cat "$out/shipped.err" >&2; exit 1; }
"$python" - "$out/shipped.json" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1]))
m = d["methods"]
inst = sum(1 for x in m if x["instantiation"])
unnamed = [x for x in m if "?" in x["name"]]
bad = [x for x in m if x["hot"]["size"] == 0 or x["hot"]["rva"] == 0]
print(f"r2r-corelib: shipped {d['module']} (ReadyToRun {d['version']}, MVID {d['mvid']}): {len(m)} methods, "
      f"{len(m) - inst} MethodDefs and {inst} instantiations; {len(unnamed)} unnamed, {len(bad)} empty")
sys.exit(1 if d["format"] != "r2r" or len(m) - inst < 1000 or inst < 1000 or unnamed or bad else 0)
PY
# 2. compiled again by crossgen2, against its map and perfmap
packages=${NUGET_PACKAGES:-$HOME/.nuget/packages}
cg2=$(ls -d "$packages"/microsoft.netcore.app.crossgen2.linux-x64/*/tools/crossgen2 2>/dev/null | sort -V | tail -1)
[ -x "$cg2" ] || { echo "r2r-corelib: no crossgen2 under $packages (tests/interop/Crossgen2Restore is restored by the build)" >&2; exit 1; }
"$cg2" "$corelib" -o "$out/System.Private.CoreLib.dll" -r "$fw/*.dll" --targetos linux --targetarch x64 -O --map \
  --perfmap > "$out/crossgen2.log" 2>&1 || { echo "r2r-corelib: crossgen2 failed:" >&2; tail -5 "$out/crossgen2.log" >&2; exit 1; }
"$mantra" image --json "$out/System.Private.CoreLib.dll" > "$out/compiled.json" 2> "$out/compiled.err" || {
  cat "$out/compiled.err" >&2; exit 1; }
perfmap=$(ls "$out"/System.Private.CoreLib.ni.*.map | head -1)
"$python" "$here/r2r_map_check.py" "$out/compiled.json" "$out/System.Private.CoreLib.map" "$perfmap" > "$out/check" || status=1
cat "$out/check"
exit $status
