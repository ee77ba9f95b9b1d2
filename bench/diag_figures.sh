#!/usr/bin/env bash
# diag_figures.sh MANTRA [RUNS] - figures of the diagnostics server (docs/diagnostics.md), measured
# with the stock dotnet-trace of tests/interop/dotnet-tools.json against `mantra emit`. Prints:
#
#   attach    time from starting `dotnet-trace collect -p PID` to the first event in its output
#             file (polled every 20 ms with `mantra stats`), the process writing 1000 and 200000
#             events/s (dotnet-trace copies the stream into the file through an 80 KB buffer, so at
#             a low rate the first event waits for the buffer to fill), and the same for the
#             protocol alone (a Python client: connect, CollectTracing2, first bytes of an event block)
#   stream    Tick events per second that reach the trace when a session streams to dotnet-trace
#             (reverse connect with suspend, so the session exists before the first write) against
#             the same session writing a file (`mantra emit --trace`): the ratio
#   idle      the host's CPU time per event (`mantra emit --mix tick` at a fixed 1 M events/s into
#             its own file session; user + system time of the process) alone and with dotnet-trace
#             attached through a session that enables none of its events: the difference
#
# Medians of RUNS runs (default 3). Not a test: figures depend on the machine and its load.
set -u -o pipefail
mantra=$(realpath "$1") runs=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/mantra-diag-bench.XXXXXX)
export TMPDIR=$work DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
trace() { (cd "$here/tests/interop" && dotnet tool run dotnet-trace "$@"); }
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
events_in() { "$mantra" stats --json "$1" 2>/dev/null | python3 -c 'import json,sys
try: print(json.load(sys.stdin)["by_event"].get("Mantra-Demo/1/v0", 0))
except Exception: print(0)'; }
wait_socket() { for _ in $(seq 1 200); do compgen -G "$TMPDIR/dotnet-diagnostic-$1-*-socket" >/dev/null && return 0; sleep 0.05; done; return 1; }

echo "== attach: dotnet-trace collect -p PID until the first event is in the file"
for arate in 1000 200000; do
rm -f "$work/attach.txt" "$work/proto.txt"
for r in $(seq 1 "$runs"); do
  (cd "$work" && exec "$mantra" emit --duration 60 --rate $arate >/dev/null 2>&1) &
  pid=$!
  wait_socket "$pid"
  f=$work/attach-$r.nettrace
  t0=$(now)
  trace collect -p "$pid" --providers Mantra-Demo:0x1:4 --duration 00:00:08 -o "$f" >/dev/null 2>&1 &
  tool=$!
  while :; do
    [ -s "$f" ] && [ "$(events_in "$f")" -gt 0 ] && break
    sleep 0.02
  done
  t1=$(now)
  echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}' >>"$work/attach.txt"
  # the protocol alone: connect, CollectTracing2 for Mantra-Demo, wait for the first EventBlock
  python3 - "$(compgen -G "$TMPDIR/dotnet-diagnostic-$pid-*-socket")" >>"$work/proto.txt" <<'PY'
import socket, struct, sys, time
name = "Mantra-Demo\0".encode("utf-16-le")
payload = struct.pack("<IIBI", 16, 1, 0, 1) + struct.pack("<QI", 1, 4) + struct.pack("<I", 12) + name + struct.pack("<I", 0)
msg = b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 20 + len(payload), 2, 3, 0) + payload
t0 = time.monotonic()
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(msg)
buf = b""
while b"EventBlock" not in buf:
    b = s.recv(65536)
    if not b: break
    buf += b
print("%.3f" % (time.monotonic() - t0))
PY
  wait "$tool"
  kill "$pid"; wait "$pid" 2>/dev/null
done
echo "  $arate events/s: dotnet-trace collect -p: median $(median <"$work/attach.txt") s (runs: $(tr '\n' ' ' <"$work/attach.txt"))"
echo "  $arate events/s: protocol only (connect + CollectTracing2 to the first EventBlock): median $(median <"$work/proto.txt") s"
done

rm -f "$work/tool.txt"
for r in $(seq 1 "$runs"); do
  t0=$(now); trace --version >/dev/null 2>&1; t1=$(now)
  echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}' >>"$work/tool.txt"
done
echo "  for comparison, dotnet-trace --version alone (tool start-up): median $(median <"$work/tool.txt") s"

echo "== stream: Tick events/s into the trace, streamed to dotnet-trace vs written to a file"
secs=5
for r in $(seq 1 "$runs"); do
  (cd "$work" && exec "$mantra" emit --duration $secs --rate 100000000 --mix tick --providers Mantra-Demo:0x1:4 \
     --trace "$work/file-$r.nettrace" >"$work/file-$r.json" 2>/dev/null)
  echo "$(events_in "$work/file-$r.nettrace") $secs" | awk '{printf "%.0f\n", $1 / $2}' >>"$work/file.txt"
  sock=$work/p$r.sock
  trace collect --diagnostic-port "$sock" --providers Mantra-Demo:0x1:4 --duration 00:01:00 \
    -o "$work/ipc-$r.nettrace" >/dev/null 2>&1 &
  tool=$!
  for _ in $(seq 1 200); do [ -S "$sock" ] && break; sleep 0.05; done
  (cd "$work" && MANTRA_DiagnosticPorts="$sock,connect,suspend" exec "$mantra" emit --duration $secs \
     --rate 100000000 --mix tick >"$work/ipc-$r.json" 2>/dev/null)
  wait "$tool"
  echo "$(events_in "$work/ipc-$r.nettrace") $secs" | awk '{printf "%.0f\n", $1 / $2}' >>"$work/ipc.txt"
  for f in file ipc; do
    "$mantra" stats --json "$work/$f-$r.nettrace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["dropped"])' \
      >>"$work/$f-dropped.txt"
  done
done
echo "  events dropped (sequence gaps): file $(tr '\n' ' ' <"$work/file-dropped.txt")| dotnet-trace $(tr '\n' ' ' <"$work/ipc-dropped.txt")"
fm=$(median <"$work/file.txt") im=$(median <"$work/ipc.txt")
echo "  to a file:        median $fm events/s (runs: $(tr '\n' ' ' <"$work/file.txt"))"
echo "  to dotnet-trace:  median $im events/s (runs: $(tr '\n' ' ' <"$work/ipc.txt"))"
echo "  ratio streamed/file: $(echo "$im $fm" | awk '{printf "%.2f", $1 / $2}')"

echo "== idle: the host's CPU time per event alone and with an attached idle session"
# A fixed rate the writer reaches (1 M Tick/s for $secs s into its own file session), so both runs
# write the same events; user+system CPU of the whole process (writer, drain, server thread) per
# event. The attached dotnet-trace session enables a provider the process does not have.
cpu_ns() { python3 -c 'import json,sys; ev=json.load(open(sys.argv[1]))["events_per_thread"]; u,s=open(sys.argv[2]).read().split()[-2:]; print("%.1f" % ((float(u)+float(s))*1e9/ev))' "$1" "$2"; }
for r in $(seq 1 "$runs"); do
  (cd "$work" && exec /usr/bin/time -o "$work/alone-$r.time" -f "%U %S" "$mantra" emit --duration $secs \
     --rate 1000000 --mix tick --providers Mantra-Demo:0x1:4 --trace "$work/alone-$r.nettrace" \
     >"$work/alone-$r.json" 2>/dev/null)
  cpu_ns "$work/alone-$r.json" "$work/alone-$r.time" >>"$work/alone.txt"
  sock=$work/i$r.sock
  trace collect --diagnostic-port "$sock" --providers Idle-Nothing:0x1:4 --duration 00:01:00 \
    -o "$work/idle-$r.nettrace" >/dev/null 2>&1 &
  tool=$!
  for _ in $(seq 1 200); do [ -S "$sock" ] && break; sleep 0.05; done
  (cd "$work" && MANTRA_DiagnosticPorts="$sock,connect,suspend" exec /usr/bin/time -o "$work/busy-$r.time" \
     -f "%U %S" "$mantra" emit --duration $secs --rate 1000000 --mix tick --providers Mantra-Demo:0x1:4 \
     --trace "$work/busy-$r.nettrace" >"$work/busy-$r.json" 2>/dev/null)
  wait "$tool"
  cpu_ns "$work/busy-$r.json" "$work/busy-$r.time" >>"$work/busy.txt"
done
am=$(median <"$work/alone.txt") bm=$(median <"$work/busy.txt")
echo "  alone:                 median $am CPU ns/event (runs: $(tr '\n' ' ' <"$work/alone.txt"))"
echo "  idle client attached:  median $bm CPU ns/event (runs: $(tr '\n' ' ' <"$work/busy.txt"))"
echo "  difference: $(echo "$am $bm" | awk '{printf "%+.1f%%", 100 * ($2 / $1 - 1)}')"
