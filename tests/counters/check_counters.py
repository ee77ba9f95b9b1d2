#!/usr/bin/env python3
"""check_counters.py PROGRAM MANTRA OUT.nettrace [COUNTER_CHECK_DLL] - the counters interop test.

Runs PROGRAM (counters_trace) to write OUT.nettrace: a file session with
`Mantra.Runtime:0:5:EventCounterIntervalSec=1` for about 2.6 s while it writes 3500 Mantra-Demo
Tick events (1000, then 2500). Then reads the trace with TraceEvent ($MANTRA_TE_DUMP dump) and
checks the EventCounters events it decodes: every tick carries the 9 built-in counters with the
.NET payload members (dotnet/runtime CounterPayload.cs / IncrementingCounterPayload), Series
"Interval=1000", and events-written rises by exactly what was written (3500 over all ticks; each
tick's increment one of 0, 1000, 2500, 3500). `mantra dump --json --sorted` must agree with
TraceEvent event for event (compare). With COUNTER_CHECK_DLL (CounterCheck/, run with the dotnet of
$MANTRA_TE_DUMP), dotnet-counters' own parsing (TraceEventExtensions.TryGetCounterPayload and
CounterFilter of the 10.0.750501 tool) must accept every counter event for `Mantra.Runtime` at a
1 s refresh, with the same names, kinds and values, and none at 2 s (Series mismatch) or for
System.Runtime. Exit 0 when all holds."""
import json
import os
import subprocess
import sys

BUILTINS = {"events-written": "Sum", "events-dropped": "Sum", "sessions": "Mean",
            "session-buffer-bytes": "Mean", "heap-size": "Mean", "heap-committed": "Mean",
            "alloc-rate": "Sum", "interp-calls": "Sum", "interp-instructions": "Sum"}
MEAN_MEMBERS = ["Name", "DisplayName", "Mean", "StandardDeviation", "Count", "Min", "Max",
                "IntervalSec", "Series", "CounterType", "Metadata", "DisplayUnits"]
SUM_MEMBERS = ["Name", "DisplayName", "DisplayRateTimeScale", "Increment", "IntervalSec",
               "Metadata", "Series", "CounterType", "DisplayUnits"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    program, mantra, out = sys.argv[1:4]
    te = os.environ.get("MANTRA_TE_DUMP", "").split()
    if not te:
        fail("MANTRA_TE_DUMP is not set")
    r = subprocess.run([program, out], capture_output=True, text=True)
    if r.returncode != 0 or json.loads(r.stdout) != {"written": 3500}:
        fail(f"{program} exited {r.returncode}: {r.stdout}{r.stderr}")
    r = subprocess.run(te + ["dump", out], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"TraceEvent dump exited {r.returncode}: {r.stderr}")
    events = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    ticks = sum(1 for e in events if e["provider"] == "Mantra-Demo" and e["name"] == "Tick")
    if ticks != 3500:
        fail(f"TraceEvent sees {ticks} Tick events, want 3500")
    counters = [e for e in events if e["provider"] == "Mantra.Runtime"]
    if not counters:
        fail("TraceEvent sees no Mantra.Runtime events")
    by_name = {}
    for e in counters:
        if e["name"] != "EventCounters":
            fail(f"event named {e['name']!r}, want EventCounters")
        p = e["fields"][""]["Payload"]
        shape = p.get("CounterType")
        members = MEAN_MEMBERS if shape == "Mean" else SUM_MEMBERS
        if list(p.keys()) != members:
            fail(f"payload members {list(p.keys())}, want {members}")
        if BUILTINS.get(p["Name"]) != shape:
            fail(f"counter {p['Name']!r} of type {shape!r}")
        if p["Series"] != "Interval=1000" or not p["IntervalSec"] > 0:
            fail(f"{p['Name']}: Series {p['Series']!r}, IntervalSec {p['IntervalSec']}")
        by_name.setdefault(p["Name"], []).append(p)
    if set(by_name) != set(BUILTINS):
        fail(f"counters {sorted(by_name)}, want {sorted(BUILTINS)}")
    n_ticks = {len(v) for v in by_name.values()}
    if len(n_ticks) != 1 or min(n_ticks) < 2:
        fail(f"ticks per counter {n_ticks}: want the same number, at least 2")
    written = [p["Increment"] for p in by_name["events-written"]]
    if sum(written) != 3500 or any(w not in (0, 1000, 2500, 3500) for w in written):
        fail(f"events-written increments {written}: want a sum of 3500")
    dropped = [p["Increment"] for p in by_name["events-dropped"]]
    sessions = [p["Mean"] for p in by_name["sessions"]]
    if any(dropped) or any(s != 1 for s in sessions):
        fail(f"events-dropped {dropped}, sessions {sessions}")
    buffers = [p["Mean"] for p in by_name["session-buffer-bytes"]]
    if not all(b > 0 and p["DisplayUnits"] == "B" for b, p in zip(buffers, by_name["session-buffer-bytes"])):
        fail(f"session-buffer-bytes {buffers}")
    print(f"TraceEvent: {len(counters)} EventCounters events, {min(n_ticks)} ticks, "
          f"events-written increments {written}, session-buffer-bytes {buffers}")
    # mantra dump agrees with TraceEvent, event for event
    ours = out + ".mantra.jsonl"
    with open(ours, "w") as f:
        r = subprocess.run([mantra, "dump", "--json", "--sorted", out], stdout=f)
    if r.returncode != 0:
        fail(f"mantra dump exited {r.returncode}")
    r = subprocess.run(te + ["compare", out, ours, "--max", "20"], capture_output=True, text=True)
    print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr)
    if r.returncode != 0:
        fail("mantra dump and TraceEvent differ:\n" + r.stdout)
    if len(sys.argv) > 4:
        check_with_dotnet_counters(te[0], sys.argv[4], out, by_name, len(counters))
    return 0


def counter_check(dotnet, dll, trace, provider, interval):
    r = subprocess.run([dotnet, dll, trace, provider, interval], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"CounterCheck exited {r.returncode}: {r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def check_with_dotnet_counters(dotnet, dll, trace, by_name, n_events):
    values = counter_check(dotnet, dll, trace, "Mantra.Runtime", "1")
    if len(values) != n_events:
        fail(f"dotnet-counters' parser accepts {len(values)} of {n_events} counter events")
    kinds = {"Mean": "Metric", "Sum": "Rate"}
    seen = {}
    for v in values:
        name = v["name"]
        if v["provider"] != "Mantra.Runtime" or name not in BUILTINS or v["type"] != kinds[BUILTINS[name]]:
            fail(f"dotnet-counters' parser: {v}")
        seen.setdefault(name, []).append(v["value"])
    for name, payloads in by_name.items():
        want = [p["Mean"] if "Mean" in p else p["Increment"] for p in payloads]
        if seen.get(name) != want:
            fail(f"dotnet-counters' parser: {name} {seen.get(name)}, TraceEvent {want}")
    other = counter_check(dotnet, dll, trace, "Mantra.Runtime", "2") + \
        counter_check(dotnet, dll, trace, "System.Runtime", "1")
    if other:
        fail(f"dotnet-counters' parser accepts events for another interval or provider: {other[:2]}")
    print(f"dotnet-counters' parser: {len(values)} values, events-written {seen['events-written']}; "
          "none at a 2 s refresh or for System.Runtime")


if __name__ == "__main__":
    sys.exit(main())
