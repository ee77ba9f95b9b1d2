#!/usr/bin/env bash
# pgo-mibc.sh - `mantra pgo --format mibc` against crossgen2 and System.Reflection.Metadata.
#
#   pgo-mibc.sh MANTRA PYTHON DOTNET TE_DLL MD_DUMP FIXTURE TRACE OUTDIR
#
# TRACE is a real .NET 10 run of the TraceEvent harness (TE_DLL reading FIXTURE) traced with
# dotnet-pgo's keywords (pgo-real.sh's `full` run). Steps, everything written under OUTDIR:
#  1. `mantra pgo TRACE --format mibc` (the ZIP container) and `--uncompressed` (the assembly), and
#     the JSON profile; the uncompressed .mibc read by MD_DUMP (mantra's ECMA-335 reader) and by
#     System.Reflection.Metadata (`TE_DLL metadata`) gives the same lines.
#     The .mibc read back (ZIP, plain, and re-packed deflated by Python's zipfile as dotnet-pgo
#     deflates it) gives the trace's text profile again, methods in any order (profile_equal.py);
#     the trace and its .mibc (with -r the framework and the harness's folder) merge method for
#     method with no conflict.
#  2. crossgen2 (the SDK's, restored by tests/interop/Crossgen2Restore) compiles TraceEventDump.dll
#     with `--mibc` (each form) `--partial --map`, and System.Collections.dll of the framework (its
#     profiled methods are generic instantiations): the methods each map shows compiled are exactly
#     the profile's methods of that assembly in the group of that assembly alone (mibc_check.py).
#  3. crossgen2 with `--mibc --embed-pgo-data --hot-cold-splitting` (whole image), and without a
#     profile: the map holds the embedded instrumentation data and cold code; the harness run
#     from each image prints the same `stats` of FIXTURE as the IL-only harness. The embedded data,
#     read back by `mantra pgo IMAGE.dll`, is the profile as crossgen2 embeds it (embedded_check.py),
#     also for a profile with a call site made monomorphic in a type of the image's own.
#  4. `mantra image --json` of the split image: every method's hot and cold part equal to what
#     crossgen2's --map and --perfmap say (r2r_map_check.py).
set -euo pipefail
[ $# -eq 8 ] || { echo "usage: $0 MANTRA PYTHON DOTNET TE_DLL MD_DUMP FIXTURE TRACE OUTDIR" >&2; exit 2; }
mantra=$1 python=$2 dotnet=$3 te_dll=$4 md_dump=$5 fixture=$6 trace=$7 out=$8
here=$(cd "$(dirname "$0")" && pwd)
bin=$(dirname "$te_dll")
rm -rf "$out"
mkdir -p "$out"
status=0
# 1. the .mibc
"$mantra" pgo "$trace" -o "$out/app.mibc" --format mibc 2> "$out/mibc.err" || { cat "$out/mibc.err" >&2; exit 1; }
echo "pgo-mibc: $(tail -1 "$out/mibc.err")"
"$mantra" pgo "$trace" -o "$out/app-plain.mibc" --format mibc --uncompressed 2> /dev/null
"$mantra" pgo "$trace" -o "$out/app.json" --format json 2> /dev/null
[ "$(head -c 2 "$out/app.mibc")" = PK ] || { echo "pgo-mibc: app.mibc is not a ZIP archive" >&2; status=1; }
"$md_dump" "$out/app-plain.mibc" > "$out/app-plain.ours"
"$dotnet" "$te_dll" metadata "$out/app-plain.mibc" > "$out/app-plain.srm"
if cmp -s "$out/app-plain.ours" "$out/app-plain.srm"; then
  echo "pgo-mibc: the .mibc read by mantra and by System.Reflection.Metadata: $(wc -l < "$out/app-plain.ours") lines equal"
else
  echo "pgo-mibc: the .mibc reads differently with System.Reflection.Metadata:" >&2
  diff "$out/app-plain.srm" "$out/app-plain.ours" | head -10 >&2 || true
  status=1
fi
# 1b. read back: the .mibc (ZIP, plain, and re-packed deflated as dotnet-pgo writes it) gives the
#     trace's profile again; the trace and its .mibc merge method for method
"$mantra" pgo "$trace" -o "$out/trace.txt" 2> /dev/null
"$python" - "$out/app-plain.mibc" "$out/app-deflated.mibc" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[1], "app-deflated.mibc.dll")
PY
for form in app.mibc app-plain.mibc app-deflated.mibc; do
  "$mantra" pgo "$out/$form" -o "$out/$form.txt" 2> "$out/$form.read.err" || { cat "$out/$form.read.err" >&2; status=1; }
  "$python" "$here/profile_equal.py" "$out/trace.txt" "$out/$form.txt" > "$out/$form.equal" || {
    cat "$out/$form.equal" >&2; status=1; }
  echo "pgo-mibc: $form read back: $(tail -1 "$out/$form.equal")"
done
# 2. crossgen2 --partial
fw=$("$dotnet" --list-runtimes | awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ { v = $2; d = $3 } END {
  gsub(/[][]/, "", d); if (v != "") print d "/" v }')
version=$(basename "$fw")
packages=${NUGET_PACKAGES:-$HOME/.nuget/packages}
cg2=$(ls -d "$packages"/microsoft.netcore.app.crossgen2.linux-x64/*/tools/crossgen2 2>/dev/null | sort -V | tail -1)
[ -x "$cg2" ] || { echo "pgo-mibc: no crossgen2 under $packages (tests/interop/Crossgen2Restore is restored by the build)" >&2; exit 1; }
echo "pgo-mibc: crossgen2 $(basename "$(dirname "$(dirname "$cg2")")"), runtime $version"
compile() { # INPUT OUTPUT ARGS...
  local in=$1 o=$2
  shift 2
  mkdir -p "$(dirname "$o")"
  "$cg2" "$in" -o "$o" -r "$fw/*.dll" -r "$bin/*.dll" --targetos linux --targetarch x64 -O --map "$@" \
    > "$o.log" 2>&1 || { echo "pgo-mibc: crossgen2 $* failed:" >&2; tail -5 "$o.log" >&2; return 1; }
}
partial() { # ASSEMBLY-PATH MIBC
  local name
  name=$(basename "$1" .dll)
  compile "$1" "$out/partial-$2/$name.dll" --mibc "$out/$2" --partial || return 1
  "$python" "$here/mibc_check.py" "$out/partial-$2/$name.map" "$out/app.json" "$name" > "$out/partial-$2-$name.check" || {
    cat "$out/partial-$2-$name.check" >&2; return 1; }
  echo "pgo-mibc: --mibc $2 --partial: $(tail -1 "$out/partial-$2-$name.check")"
}
# the harness (both forms of the .mibc), and a framework assembly whose profiled methods are generic
# instantiations (System.Collections: Stack`1[__Canon], SortedDictionary`2[__Canon,Int64], ...)
partial "$te_dll" app.mibc || status=1
partial "$te_dll" app-plain.mibc || status=1
partial "$fw/System.Collections.dll" app.mibc || status=1
# the trace and its .mibc merged: every method of one is a method of the other
"$mantra" pgo "$trace" "$out/app.mibc" -r "$fw" -r "$bin" -o "$out/merged.txt" 2> "$out/merged.err" || {
  cat "$out/merged.err" >&2; status=1; }
methods=$(grep -c '^@@@' "$out/trace.txt")
grep -q "^mantra pgo: $methods methods from 1 trace and 1 profile ([0-9]* instrumentation events, $((2 * methods)) methods read, $methods merged); .*; 0 merge conflicts" \
  "$out/merged.err" || { echo "pgo-mibc: the trace and its .mibc do not merge method for method:" >&2; head -3 "$out/merged.err" >&2; status=1; }
echo "pgo-mibc: trace + its .mibc: $(head -1 "$out/merged.err" | cut -c1-120)"
# 3. whole images, run
"$dotnet" "$te_dll" stats "$fixture" > "$out/il.out"
for variant in plain pgo; do
  args=()
  [ $variant = pgo ] && args=(--mibc "$out/app.mibc" --embed-pgo-data --hot-cold-splitting --perfmap)
  rm -rf "$out/run-$variant"
  cp -r "$bin" "$out/run-$variant"
  compile "$te_dll" "$out/image-$variant/TraceEventDump.dll" "${args[@]}" || { status=1; continue; }
  cp "$out/image-$variant/TraceEventDump.dll" "$out/run-$variant/TraceEventDump.dll"
  "$dotnet" "$out/run-$variant/TraceEventDump.dll" stats "$fixture" > "$out/$variant.out" || status=1
  if cmp -s "$out/il.out" "$out/$variant.out"; then
    echo "pgo-mibc: image ($variant) runs to the IL build's output ($(wc -c < "$out/il.out") bytes)"
  else
    echo "pgo-mibc: image ($variant) prints something else than the IL build" >&2
    status=1
  fi
done
# 3b. the data crossgen2 embedded, read back from the image by mantra's ReadyToRun reader, is the
#     profile as crossgen2 embeds it (histograms as likely classes: embedded_check.py); and a call
#     site made monomorphic in a type of the image's own keeps that type, named from its import cell
embedded() { # IMAGE PROFILE.json NAME MIN_TYPES
  "$mantra" pgo "$1" -o "$out/$3.json" --format json 2> "$out/$3.err" || { cat "$out/$3.err" >&2; return 1; }
  "$python" "$here/embedded_check.py" "$2" "$out/$3.json" TraceEventDump "$4" > "$out/$3.check" || {
    cat "$out/$3.check" >&2; return 1; }
  echo "pgo-mibc: $3: $(tail -1 "$out/$3.check")"
}
if [ -f "$out/image-pgo/TraceEventDump.dll" ]; then
  embedded "$out/image-pgo/TraceEventDump.dll" "$out/app.json" embedded 0 || status=1
  # an image compiled without a profile has no embedded data: refused, exit status 1
  if "$mantra" pgo "$out/image-plain/TraceEventDump.dll" -o "$out/plain-embedded.txt" 2> "$out/plain-embedded.err"; then
    echo "pgo-mibc: an image without embedded PGO data was read as a profile" >&2; status=1
  elif ! grep -q "a ReadyToRun image without embedded PGO data" "$out/plain-embedded.err"; then
    echo "pgo-mibc: an image without embedded PGO data: unexpected message" >&2; cat "$out/plain-embedded.err" >&2; status=1
  fi
  "$python" - "$out/app.json" "$out/mono.json" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["methods"]:
    if m["module"] == "TraceEventDump" and m.get("type") and "[" not in m["type"]:
        h = [r for r in m["records"] if r["kind_name"] == "HandleHistogramTypes"]
        if h:
            h[0]["values"] = [m["type"]] * len(h[0]["values"])
            break
else:
    sys.exit("pgo-mibc: no class probe in a method of TraceEventDump to make monomorphic")
json.dump(d, open(sys.argv[2], "w"))
PY
  "$mantra" pgo "$out/mono.json" -o "$out/mono.mibc" --format mibc 2> /dev/null || status=1
  compile "$te_dll" "$out/image-mono/TraceEventDump.dll" --mibc "$out/mono.mibc" --embed-pgo-data &&
    embedded "$out/image-mono/TraceEventDump.dll" "$out/mono.json" embedded-mono 1 || status=1
fi
map="$out/image-pgo/TraceEventDump.map"
if [ -f "$map" ]; then
  data=$(grep -c "(InstrumentationDataTableNode)" "$map" || true)
  cold=$(grep -c "(MethodColdCodeNode)" "$map" || true)
  echo "pgo-mibc: image (pgo): embedded instrumentation data tables: $data, cold parts: $cold"
  [ "$data" -ge 1 ] && [ "$cold" -ge 1 ] || { echo "pgo-mibc: no embedded PGO data or no cold code" >&2; status=1; }
  # 4. libmantra's ReadyToRun reader on the split image: every hot and cold part as crossgen2's map
  #    and perfmap give it
  "$mantra" image --json "$out/image-pgo/TraceEventDump.dll" > "$out/image-pgo.json" 2> "$out/image-pgo.err" || {
    cat "$out/image-pgo.err" >&2; status=1; }
  perfmap=$(ls "$out"/image-pgo/TraceEventDump.ni.*.map 2>/dev/null | head -1)
  "$python" "$here/r2r_map_check.py" "$out/image-pgo.json" "$map" "$perfmap" 1 > "$out/image-pgo.check" || {
    cat "$out/image-pgo.check" >&2; status=1; }
  echo "pgo-mibc: mantra image: $(tail -1 "$out/image-pgo.check")"
fi
exit $status
