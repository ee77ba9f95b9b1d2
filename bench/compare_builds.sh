#!/usr/bin/env bash
# compare_builds.sh - the same benchmarks from two build folders (say, a base commit and HEAD),
# interleaved round by round so that both see the same machine noise. Figures, not a test.
#
# Usage: bench/compare_builds.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]   (ROUNDS default 3)
# Each build folder must have MANTRA_BUILD_BENCH=ON and its benchmarks built. Prints the summary:
# lines of disabled_event, session_write (default group), writer_throughput, manifest_load
# (ClrEtwAll from $MANTRA_SHARED_DIR, default ../shared), manifest_decode and reader_throughput
# prefixed with before:/after:, then callgrind's instruction counts (bench/event_insns.sh of each
# build's own source tree). Take medians per side; instruction counts are deterministic.
set -u
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
B=$1 A=$2 ROUNDS=${3:-3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${MANTRA_SHARED_DIR:-$REPO/../shared}
src_of() { sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt"; }
echo "machine: $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
  for side in before after; do
    d=$B; [ $side = after ] && d=$A
    echo "=== round $r $side ($d)"
    {
      "$d/bench/disabled_event" -n 2e8 -r 3 -e 2e6
      "$d/bench/session_write" -r 3 -n 5e5 -d 5e7 -p 2e6 -o default
      "$d/bench/writer_throughput"
      "$d/bench/manifest_load" "$SHARED/fixtures/manifests/ClrEtwAll-coreclr-2019.man"
      "$d/bench/manifest_decode"
    } 2>&1 | grep summary | sed "s/^/$side: /"
    "$d/bench/reader_throughput" -s 256 2>&1 | grep 'full file' | sed "s/^/$side: reader_throughput /"
  done
done
for side in before after; do
  d=$B; [ $side = after ] && d=$A
  echo "=== callgrind $side"
  "$(src_of "$d")/bench/event_insns.sh" --exe "$d/bench/disabled_event" -n 1000000 -e 10000 2>&1 |
    grep summary | sed "s/^/$side: /"
done
