#!/usr/bin/env bash
# symbolize-fixtures.sh - `mantra symbolize --stacks` against TraceEvent's TraceLog on real traces
# (../shared/fixtures): every frame TraceLog names, mantra names the same (symbolize_compare.py).
#
#   symbolize-fixtures.sh MANTRA PYTHON DOTNET TE_DLL FIXTURES_DIR OUTDIR
#
# The traces: a .NET 6 app on Windows with start and end rundown (erlendthune-RememberCalendar), a
# .NET 5 app on macOS sampled with native frames (mixed_managed_external_samples), a .NET Core 3.0
# trace without rundown whose jitted methods come from MethodLoadVerbose alone (objver4).
# A missing fixture prints SKIP (fails under MANTRA_REQUIRE_INTEROP=1).
set -euo pipefail
[ $# -eq 6 ] || { echo "usage: $0 MANTRA PYTHON DOTNET TE_DLL FIXTURES_DIR OUTDIR" >&2; exit 2; }
mantra=$1 python=$2 dotnet=$3 te_dll=$4 fixtures=$5 out=$6
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
status=0
for spec in "erlendthune-RememberCalendar/trace.nettrace 100" "microsoft-perfview/mixed_managed_external_samples.nettrace 20000" \
            "microsoft-perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace 50000"; do
  set -- $spec
  f="$fixtures/$1" min=$2
  name=$(echo "$1" | tr '/' '-')
  name=${name%.nettrace}
  if [ ! -f "$f" ]; then
    if [ "${MANTRA_REQUIRE_INTEROP:-0}" = 1 ]; then echo "symbolize-fixtures: $f missing (MANTRA_REQUIRE_INTEROP=1)" >&2; exit 1; fi
    echo "SKIP: $f missing"; continue
  fi
  "$mantra" symbolize --stacks "$f" > "$out/$name.mantra" 2> "$out/$name.mantra.err" || {
    cat "$out/$name.mantra.err" >&2; status=1; continue; }
  MANTRA_BINARY_DIR="$out" "$dotnet" "$te_dll" stacks "$f" > "$out/$name.tracelog" 2> "$out/$name.tracelog.err" || {
    cat "$out/$name.tracelog.err" >&2; status=1; continue; }
  "$python" "$here/symbolize_compare.py" "$out/$name.mantra" "$out/$name.tracelog" "$name" "$min" > "$out/$name.check" || status=1
  tail -9 "$out/$name.check"
done
exit $status
