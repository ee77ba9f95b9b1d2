#!/usr/bin/env bash
# convert-input-untouched.sh - convert-check.sh writes nothing beside its input (dotnet-trace
# convert writes TRACE.etlx beside the trace it reads; the shared fixtures must stay as they are).
#
# usage: tests/interop/convert-input-untouched.sh TRACE WORKDIR
# Copies TRACE into WORKDIR/input/, runs convert-check.sh on that copy, and fails when the
# conversion fails or the input folder changes.
set -u -o pipefail
[ $# -eq 2 ] || { sed -n '2,8p' "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(realpath -m "$2")
rm -rf "$work"; mkdir -p "$work/input"
cp "$1" "$work/input/trace.nettrace"
# dotnet-trace creates TRACE.etlx while it converts and deletes it when done, so a finished run
# leaves no trace of it: a folder in its place makes any attempt to write there fail the conversion.
mkdir "$work/input/trace.nettrace.etlx"
before=$(cd "$work/input" && ls -Al --time-style=+ && sha256sum trace.nettrace)
"$here/convert-check.sh" "$work/input/trace.nettrace" "$work/out/trace" || exit 1
after=$(cd "$work/input" && ls -Al --time-style=+ && sha256sum trace.nettrace)
if [ "$before" != "$after" ]; then
  echo "FAIL: convert-check.sh changed its input folder:"; diff <(echo "$before") <(echo "$after"); exit 1
fi
echo "input folder unchanged: $(ls "$work/input" | tr '\n' ' ')"
