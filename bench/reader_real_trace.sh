#!/usr/bin/env bash
# reader_real_trace.sh - makes a real-shaped .NET 10 trace for the reader benchmarks.
#
# usage: bench/reader_real_trace.sh [--build-dir DIR] [-s MB] [-o FILE]
#
# Builds bench/reader_workload (a multi-threaded, allocation-heavy C# program) into
# DIR/bench/reader_workload and runs it under EventPipe (DOTNET_EnableEventPipe=1) with the sample
# profiler (stacks of every thread each millisecond), the runtime provider at verbose level with
# dotnet-trace's default keywords 0x14C14FCCBD (GC, JIT, loader, exceptions, contention, thread pool,
# stacks ...), until the trace reaches MB megabytes (default 120). Output: FILE (default
# DIR/bench/real-dotnet10.nettrace; kept in the build tree, never checked in). Prints the path.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR="$REPO/build"
SIZE=120
OUT=
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    -s) SIZE=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reader_real_trace.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v dotnet >/dev/null 2>&1 || { echo "reader_real_trace.sh: dotnet not found" >&2; exit 1; }
OUT=${OUT:-$BUILD_DIR/bench/real-dotnet10.nettrace}
WL="$BUILD_DIR/bench/reader_workload"
mkdir -p "$WL" "$(dirname "$OUT")"
# built from a copy in the build tree, so that obj/ and bin/ stay out of the sources
mkdir -p "$WL/src"
cp "$REPO/bench/reader_workload/Program.cs" "$REPO/bench/reader_workload/reader_workload.csproj" "$WL/src/"
dotnet build "$WL/src/reader_workload.csproj" -c Release -o "$WL/bin" --nologo -v q >&2
rm -f "$OUT"
DOTNET_EnableEventPipe=1 \
DOTNET_EventPipeOutputPath="$OUT" \
DOTNET_EventPipeCircularMB=1024 \
DOTNET_EventPipeConfig='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x14C14FCCBD:5' \
  dotnet "$WL/bin/reader_workload.dll" "$OUT" "$SIZE" 600 >&2
ls -l "$OUT" >&2
echo "$OUT"
