#!/usr/bin/env bash
# diag-interop.sh MODE MANTRA OUTDIR [DIAGCLIENT_DLL] - stock .NET diagnostics tools against a
# process that embeds mantra (`mantra emit --duration`, whose mantra_init starts the diagnostics
# server; docs/diagnostics.md). Tools run from tests/interop/ (dotnet-tools.json pins them).
#
#   ps-collect  `dotnet-trace ps` lists the process; `dotnet-trace collect -p PID --providers
#               Mantra-Demo:0xF:5 --duration 00:00:03` writes a trace
#   reverse     `dotnet-trace collect --diagnostic-port SOCK` waits; the process starts with
#               MANTRA_DiagnosticPorts=SOCK,connect,suspend, connects, and runs once resumed
#   tcp         the process listens on 127.0.0.1:PORT (MANTRA_DiagnosticPorts=127.0.0.1:PORT,listen);
#               DiagClient (tests/interop/DiagClient) collects over TCP for 2 s
#   client      DiagClient through Microsoft.Diagnostics.NETCore.Client: it listens on SOCK
#               (DiagnosticsClientConnector), the process connects (SOCK,connect,suspend), the
#               library starts a session, resumes the process, collects for 2 s and stops
#
# Each trace must be complete (end tag), without drops, hold Mantra-Demo Tick events, and read the
# same in TraceEvent and `mantra dump` (compare-mantra.sh, $MANTRA_TE_DUMP). Exit 0 or 1.
set -u -o pipefail
mode=$1 mantra=$(realpath "$2") out=$(realpath -m "$3") client=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out/tmp"
export TMPDIR=$out/tmp DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
emit_pid=
cleanup() { [ -n "$emit_pid" ] && kill "$emit_pid" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
fail() { echo "FAIL: diag-interop $mode: $*"; for f in "$out"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }
trace() { (cd "$here" && timeout 120 dotnet tool run dotnet-trace "$@"); }

# check TRACE: complete, nothing dropped, Tick events, TraceEvent agrees with mantra dump.
check() {
  "$mantra" stats --json "$1" >"$out/stats.json" || fail "mantra stats $1 failed"
  python3 - "$out/stats.json" <<'PY' || fail "$(cat "$out/stats.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["complete"] is True, "trace without its end tag"
assert s["dropped"] == 0 and s["errors"] == [], "drops or errors"
ticks = s["by_event"].get("Mantra-Demo/1/v0", 0)
assert ticks >= 100, "only %d Tick events" % ticks
assert s["by_event"].get("Microsoft-DotNETCore-EventPipe/1/v0") == 1, "no ProcessInfo event at the end"
print("trace: %d events, %d Tick" % (s["events"], ticks))
PY
  MANTRA_BINARY_DIR=$out sh "$here/compare-mantra.sh" "$mantra" "$1" >"$out/compare.log" 2>&1 ||
    fail "TraceEvent and mantra dump differ: $(tail -n 5 "$out/compare.log")"
  tail -n 1 "$out/compare.log"
}

wait_for() { # wait_for TEST... : up to 20 s
  for _ in $(seq 1 200); do "$@" && return 0; sleep 0.1; done
  return 1
}
socket_of() { compgen -G "$TMPDIR/dotnet-diagnostic-$1-*-socket" >/dev/null; }

case "$mode" in
ps-collect)
  (cd "$out" && exec "$mantra" emit --duration 60 --rate 1000 >emit.log 2>&1) &
  emit_pid=$!
  wait_for socket_of "$emit_pid" || fail "no socket $TMPDIR/dotnet-diagnostic-$emit_pid-*-socket"
  trace ps >"$out/ps.log" 2>&1 || fail "dotnet-trace ps failed"
  grep -Eq "^ *$emit_pid +mantra " "$out/ps.log" || fail "dotnet-trace ps does not list $emit_pid"
  echo "dotnet-trace ps: $(grep -E "^ *$emit_pid " "$out/ps.log" | tr -s ' ' | cut -c1-80)"
  trace collect -p "$emit_pid" --providers Mantra-Demo:0xF:5 --duration 00:00:03 -o "$out/ps.nettrace" \
    >"$out/collect.log" 2>&1 || fail "dotnet-trace collect failed"
  grep -q "Trace completed" "$out/collect.log" || fail "dotnet-trace did not complete"
  check "$out/ps.nettrace"
  ;;
reverse)
  sock=$out/port.sock
  trace collect --diagnostic-port "$sock" --providers Mantra-Demo:0xF:5 --duration 00:00:03 \
    -o "$out/reverse.nettrace" >"$out/collect.log" 2>&1 &
  tool_pid=$!
  wait_for test -S "$sock" || fail "dotnet-trace does not listen on $sock"
  (cd "$out" && MANTRA_DiagnosticPorts="$sock,connect,suspend" exec "$mantra" emit --duration 60 --rate 1000 \
     >emit.log 2>&1) &
  emit_pid=$!
  wait "$tool_pid" || fail "dotnet-trace collect --diagnostic-port failed"
  grep -q "Trace completed" "$out/collect.log" || fail "dotnet-trace did not complete"
  check "$out/reverse.nettrace"
  ;;
tcp)
  [ -n "$client" ] || fail "no DiagClient.dll given"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  (cd "$out" && MANTRA_DiagnosticPorts="127.0.0.1:$port,listen,nosuspend" exec "$mantra" emit --duration 60 \
     --rate 1000 >emit.log 2>&1) &
  emit_pid=$!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null || fail "nothing listens on 127.0.0.1:$port"
  timeout 120 dotnet "$client" collect "127.0.0.1:$port,tcp" "$out/tcp.nettrace" 2 >"$out/client.log" 2>&1 ||
    fail "DiagClient failed"
  check "$out/tcp.nettrace"
  ;;
client)
  [ -n "$client" ] || fail "no DiagClient.dll given"
  sock=$out/client.sock
  timeout 120 dotnet "$client" collect "$sock,listen" "$out/client.nettrace" 2 >"$out/client.log" 2>&1 &
  tool_pid=$!
  wait_for test -S "$sock" || fail "DiagClient does not listen on $sock"
  (cd "$out" && MANTRA_DiagnosticPorts="$sock,connect,suspend" exec "$mantra" emit --duration 60 --rate 1000 \
     >emit.log 2>&1) &
  emit_pid=$!
  wait "$tool_pid" || fail "DiagClient failed"
  check "$out/client.nettrace"
  ;;
*) echo "diag-interop.sh: unknown mode $mode" >&2; exit 2 ;;
esac
echo "PASS: diag-interop $mode"
