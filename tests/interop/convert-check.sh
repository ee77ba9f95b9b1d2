#!/usr/bin/env bash
# convert-check.sh - does `dotnet-trace convert` accept a trace?
#
# usage: tests/interop/convert-check.sh [--format speedscope|chromium] [--allow-broken] [--expect-reject]
#                                       TRACE OUTBASE
#
# Runs, from tests/interop/ (where dotnet-tools.json pins dotnet-trace; `dotnet tool restore` there
# installs it - the CMake build does that):
#     dotnet tool run dotnet-trace convert TRACE --format FORMAT -o OUTBASE.x
# "Accepted" means: exit status 0, OUTBASE.FORMAT.json written and not empty (dotnet-trace appends
# .speedscope.json / .chromium.json), and no "potentially broken trace" warning (TraceLog saw
# lost events or broken stacks) unless --allow-broken. --expect-reject inverts the verdict (the
# tool must exit non-zero). Exit 0 when the verdict is as expected, 1 otherwise.
set -u -o pipefail
format=speedscope allow_broken= expect_reject=
while [ $# -gt 2 ]; do
  case "$1" in
    --format) format=$2; shift 2 ;;
    --allow-broken) allow_broken=1; shift ;;
    --expect-reject) expect_reject=1; shift ;;
    *) echo "convert-check.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 2 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
trace=$(realpath "$1") out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$(dirname "$out")"
rm -f "$out.$format.json"
# dotnet-trace writes TRACE.etlx beside its input: convert a copy in OUTBASE's folder, so that
# nothing is written beside the original (the shared fixtures are read-only inputs).
copy="$out.input.nettrace"
cp "$trace" "$copy" || { echo "convert-check.sh: cannot copy $trace to $copy" >&2; exit 1; }
trap 'rm -f "$copy" "$copy.etlx" "${copy%.nettrace}.etlx"' EXIT
trace=$copy

# dotnet-trace writes Path.ChangeExtension(<-o>, ".FORMAT.json"): hand it OUTBASE.x so that dots
# inside OUTBASE survive.
log=$(cd "$here" && dotnet tool run dotnet-trace convert "$trace" --format "$format" -o "$out.x" 2>&1)
rc=$?
printf '%s\n' "$log" | sed 's/^/  dotnet-trace: /'
if printf '%s' "$log" | grep -q "dotnet tool restore"; then
  echo "convert-check.sh: dotnet-trace is not installed: run 'dotnet tool restore' in $here" >&2
  exit 1
fi
if [ -n "$expect_reject" ]; then
  if [ $rc -ne 0 ]; then echo "rejected as expected (exit $rc)"; exit 0; fi
  echo "FAIL: dotnet-trace accepted $trace"; exit 1
fi
[ $rc -eq 0 ] || { echo "FAIL: dotnet-trace convert exited $rc"; exit 1; }
[ -s "$out.$format.json" ] || { echo "FAIL: $out.$format.json not written"; exit 1; }
if [ -z "$allow_broken" ] && printf '%s' "$log" | grep -qi "potentially broken"; then
  echo "FAIL: dotnet-trace says the trace is potentially broken"; exit 1
fi
echo "accepted: $out.$format.json ($(wc -c < "$out.$format.json") bytes)"
