#!/usr/bin/env bash
# md_compare.sh - libmantra's PE and ECMA-335 reader against System.Reflection.Metadata.
#
#   md_compare.sh MD_DUMP DOTNET TE_DLL OUTDIR [ASSEMBLY...]
#
# For each assembly (those given, and from the .NET 10 shared framework that DOTNET runs:
# System.Private.CoreLib.dll, ReadyToRun with the Machine field XORed for Linux; System.Runtime.dll,
# a facade of ExportedTypes; System.Collections.dll; System.Linq.dll) MD_DUMP FILE and
# `dotnet TE_DLL metadata FILE` must print the same lines. Prints one summary line per assembly;
# exit 1 on the first difference (the first lines of the diff are shown). Writes only under OUTDIR.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 MD_DUMP DOTNET TE_DLL OUTDIR [ASSEMBLY...]" >&2; exit 2; }
md_dump=$1 dotnet=$2 te_dll=$3 out=$4
shift 4
fw=$("$dotnet" --list-runtimes | awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ { v = $2; d = $3 } END {
  gsub(/[][]/, "", d); if (v != "") print d "/" v }')
[ -n "$fw" ] && [ -d "$fw" ] || { echo "md_compare: no Microsoft.NETCore.App 10.x runtime in \`$dotnet --list-runtimes\`" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
status=0
for f in "$@" "$fw/System.Private.CoreLib.dll" "$fw/System.Runtime.dll" "$fw/System.Collections.dll" "$fw/System.Linq.dll"; do
  [ -r "$f" ] || { echo "md_compare: $f: not readable" >&2; status=1; continue; }
  base=$(basename "$f")
  "$md_dump" "$f" > "$out/$base.ours" || { echo "md_compare: $base: md_dump refused it" >&2; status=1; continue; }
  "$dotnet" "$te_dll" metadata "$f" > "$out/$base.srm" || { echo "md_compare: $base: the harness failed" >&2; status=1; continue; }
  if cmp -s "$out/$base.ours" "$out/$base.srm"; then
    echo "md_compare: $base: $(wc -l < "$out/$base.ours") lines equal ($(grep -c '^MethodDef ' "$out/$base.ours") methods, $(grep -c '^TypeDef ' "$out/$base.ours") types, $(grep -c '^MemberRef ' "$out/$base.ours") member references)"
  else
    echo "md_compare: $base: differs from System.Reflection.Metadata:" >&2
    diff "$out/$base.srm" "$out/$base.ours" | head -20 >&2 || true
    status=1
  fi
done
exit $status
