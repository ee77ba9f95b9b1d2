#!/usr/bin/env bash
# diag_client_figures.sh MANTRA TRACEMAKER_DLL [RUNS] - figures of the diagnostics client
# (docs/diagnostics.md, "The client"), each against the stock tool of tests/interop/dotnet-tools.json
# in the same run, taking turns on the same process. Prints:
#
#   first     time from starting `mantra collect -p PID` / `dotnet-trace collect -p PID` to the first
#             event in the output file (polled every 20 ms with `mantra stats`), against a .NET 10
#             process (`TraceMaker serve`) with --profile dotnet-sampled-thread-time
#   stream    Tick events per second that reach the file while a session streams from `mantra emit
#             --duration --rate 1000000000` (as fast as one writer can) for 3 s, with each tool
#   size      the mantra executable as built (CMake's build, libmantra linked in), stripped, and a
#             fully static link of the same objects (-static), stripped
#
# Medians of RUNS runs (default 5). Not a test: figures depend on the machine and its load.
set -u -o pipefail
mantra=$(realpath "$1") dll=$(realpath "$2") runs=${3:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/mantra-client-bench.XXXXXX)
export TMPDIR=$work DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
events_in() { "$mantra" stats --json "$1" 2>/dev/null | python3 -c 'import json,sys
try: print(json.load(sys.stdin)["events"])
except Exception: print(0)'; }
ticks_in() { "$mantra" stats --json "$1" 2>/dev/null | python3 -c 'import json,sys
try: print(json.load(sys.stdin)["by_event"].get("Mantra-Demo/1/v0", 0))
except Exception: print(0)'; }
dtrace() { (cd "$here/tests/interop" && exec dotnet tool run dotnet-trace "$@"); }

echo "== first: collect -p PID --profile dotnet-sampled-thread-time until the first event is in the file"
dotnet "$dll" serve 600 >"$work/serve.txt" &
for _ in $(seq 1 100); do grep -q ready "$work/serve.txt" && break; sleep 0.1; done
pid=$(awk '{print $2}' "$work/serve.txt")
sleep 1
for r in $(seq 1 "$runs"); do
  for tool in mantra dotnet-trace; do
    f=$work/first-$tool-$r.nettrace
    t0=$(now)
    if [ $tool = mantra ]; then
      "$mantra" collect -p "$pid" --profile dotnet-sampled-thread-time --duration 3 -o "$f" >/dev/null 2>&1 &
    else
      dtrace collect -p "$pid" --profile dotnet-sampled-thread-time --duration 00:00:00:03 -o "$f" >/dev/null 2>&1 &
    fi
    job=$!
    while :; do
      [ -s "$f" ] && [ "$(events_in "$f")" -gt 0 ] && break
      sleep 0.02
    done
    echo "$t0 $(now)" | awk '{printf "%.3f\n", $2 - $1}' >>"$work/first-$tool.txt"
    wait $job
  done
done
m=$(median <"$work/first-mantra.txt"); d=$(median <"$work/first-dotnet-trace.txt")
echo "  mantra collect  $m s   dotnet-trace collect  $d s   ratio $(echo "$m $d" | awk '{printf "%.2f", $1 / $2}')"
kill %1 2>/dev/null; wait 2>/dev/null

echo "== stream: Tick events per second in the file, mantra emit as fast as it writes, 3 s"
for r in $(seq 1 "$runs"); do
  for tool in mantra dotnet-trace; do
    (cd "$work" && exec "$mantra" emit --duration 30 --rate 1000000000 --mix tick >/dev/null 2>&1) &
    epid=$!
    for _ in $(seq 1 200); do compgen -G "$TMPDIR/dotnet-diagnostic-$epid-*-socket" >/dev/null && break; sleep 0.05; done
    f=$work/stream-$tool-$r.nettrace
    if [ $tool = mantra ]; then
      "$mantra" collect -p "$epid" --providers Mantra-Demo:0x1:4 --duration 3 -o "$f" >/dev/null 2>&1
    else
      dtrace collect -p "$epid" --providers Mantra-Demo:0x1:4 --duration 00:00:00:03 -o "$f" >/dev/null 2>&1
    fi
    kill $epid 2>/dev/null; wait $epid 2>/dev/null
    echo "$(ticks_in "$f")" | awk '{printf "%.0f\n", $1 / 3}' >>"$work/stream-$tool.txt"
  done
done
m=$(median <"$work/stream-mantra.txt"); d=$(median <"$work/stream-dotnet-trace.txt")
echo "  mantra collect  $m /s   dotnet-trace collect  $d /s   ratio $(echo "$m $d" | awk '{printf "%.2f", $1 / $2}')"

echo "== size"
cp "$mantra" "$work/mantra-stripped" && strip "$work/mantra-stripped"
echo "  as built  $(stat -c %s "$mantra") bytes, stripped $(stat -c %s "$work/mantra-stripped") bytes"
static=$work/static
# libyaml's archive instead of the shared object pkg-config names (glibc warns that getaddrinfo
# wants its shared libraries at run time: name lookups of TCP addresses)
yaml_a="$(pkg-config --variable=libdir yaml-0.1 2>/dev/null)/libyaml.a"
if cmake -S "$here" -B "$static" -DCMAKE_BUILD_TYPE=Release -DMANTRA_BUILD_TESTS=OFF -DMANTRA_BUILD_BENCH=OFF \
     -DMANTRA_BUILD_EXAMPLES=OFF -DMANTRA_BUILD_SHARED=OFF -DCMAKE_EXE_LINKER_FLAGS=-static \
     -Dpkgcfg_lib_MANTRA_YAML_yaml="$yaml_a" >/dev/null 2>&1 &&
   cmake --build "$static" --target mantra_cli -j 2 >/dev/null 2>&1; then
  strip -o "$work/mantra-static" "$static/tools/mantra"
  echo "  static (-static, Release) stripped $(stat -c %s "$work/mantra-static") bytes; $(file -b "$work/mantra-static" | cut -d, -f1-2)"
else
  echo "  static: the -static link failed here"
fi
