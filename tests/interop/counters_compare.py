#!/usr/bin/env python3
"""`mantra counters` against dotnet-counters on the same .NET 10 process in the same seconds.

usage: counters_compare.py MANTRA TRACEMAKER_DLL OUTDIR

`TraceMaker serve 30` runs; `dotnet-counters collect -p PID --counters
EventCounters\\System.Runtime[cpu-usage,gc-heap-size] --refresh-interval 1 --duration 00:00:00:06 --format json`
(tests/interop/dotnet-tools.json) and `mantra counters -p PID` with the same counters, interval and
duration (--format json) run at the same time. Checked, per counter, leaving out mantra's first value
and dotnet-counters' first two (the intervals in which the sessions started): both tools have
values; every mantra value lies within dotnet-counters' range widened by the largest change between
two of its consecutive values (one interval's change); at least two of mantra's values are exactly
among dotnet-counters' (both sessions receive the same EventCounters events); mantra's display names
are dotnet-counters' names ("CPU Usage (%)", "GC Heap Size (MB)"). Then the same for TraceMaker's
Meter (Mantra.TraceMaker, through System.Diagnostics.Metrics), the tools one after the other (the
process's MetricsEventSource takes one non-shared session, which dotnet-counters collect asks for):
both show the same instruments under the same names and tags, the gauge 42 and every histogram
quantile 5.
Without dotnet: SKIP (a failure with MANTRA_REQUIRE_INTEROP=1).
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fresh_trace  # noqa: E402  (serving: TraceMaker serve for a with-block)

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, DOTNET_CLI_TELEMETRY_OPTOUT="1", DOTNET_NOLOGO="1")
# EventCounters only: both tools' Meter sessions would meet in the process, and MetricsEventSource
# takes one non-shared session (dotnet-counters collect asks for one)
COUNTERS = "EventCounters\\System.Runtime[cpu-usage,gc-heap-size]"
NAMES = {"cpu-usage": "CPU Usage (%)", "gc-heap-size": "GC Heap Size (MB)"}


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def when(stamp):
    """Seconds since the epoch of an ISO 8601 time (dotnet-counters' 7-digit fractions cut to 6)."""
    stamp = re.sub(r"(\.\d{6})\d+", r"\1", stamp).replace("Z", "+00:00")
    return datetime.datetime.fromisoformat(stamp).timestamp()


def main(argv):
    if len(argv) != 3:
        fail(__doc__)
    mantra, dll, outdir = argv
    if not shutil.which("dotnet") or not os.path.exists(dll):
        if os.environ.get("MANTRA_REQUIRE_INTEROP") == "1":
            fail(f"dotnet or {dll} missing and MANTRA_REQUIRE_INTEROP=1")
        print(f"SKIP: dotnet or {dll} missing")
        return 0
    outdir = os.path.abspath(outdir)
    os.makedirs(outdir, exist_ok=True)
    theirs, mine = run_both(mantra, dll, outdir, COUNTERS, "event-counters", together=True)
    compare_event_counters(theirs, mine)
    compare_meter(mantra, dll, outdir)
    print("OK")
    return 0


def run_both(mantra, dll, outdir, counters, tag, together=False):
    """dotnet-counters collect and mantra counters (--format json, refresh 1 s) on one TraceMaker:
    their rows. together: at the same time, 6 s each; else one after the other, 4 s each (a Meter
    session, MetricsEventSource, takes one non-shared client at a time), and mantra must say nothing
    on stderr."""
    dc_out, m_out = os.path.join(outdir, f"dotnet-counters-{tag}.json"), os.path.join(outdir, f"mantra-{tag}.jsonl")
    for f in (dc_out, m_out):
        if os.path.exists(f):
            os.unlink(f)
    seconds = 6 if together else 4
    with fresh_trace.serving(dll) as pid:
        dc = subprocess.Popen(["dotnet", "tool", "run", "dotnet-counters", "--", "collect", "-p", pid, "--counters",
                               counters, "--refresh-interval", "1", "--duration", f"00:00:00:0{seconds}",
                               "--format", "json", "-o", dc_out], cwd=HERE, env=ENV, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if not together:
            dc.wait(timeout=120)
        ours = subprocess.run([mantra, "counters", "-p", pid, "--counters", counters, "--refresh-interval", "1",
                               "--duration", str(seconds), "--format", "json", "-o", m_out], env=ENV,
                              capture_output=True, text=True, timeout=120)
        dc_text, _ = dc.communicate(timeout=120)
        if dc.returncode != 0 or not os.path.exists(dc_out):
            fail(f"dotnet-counters exited {dc.returncode}: {dc_text}")
        if ours.returncode != 0 or (not together and ours.stderr.strip()):
            fail(f"mantra counters exited {ours.returncode}: {ours.stderr}")
    with open(dc_out, encoding="utf-8") as f:
        theirs = json.load(f)["Events"]
    with open(m_out, encoding="utf-8") as f:
        return theirs, [json.loads(line) for line in f]


def compare_meter(mantra, dll, outdir):
    """TraceMaker's Meter (Mantra.TraceMaker): the gauge is 42 and every histogram quantile 5 in both
    tools; both show the same instruments under the same names and tags."""
    theirs, mine = run_both(mantra, dll, outdir, "Mantra.TraceMaker", "meter")
    shown = lambda rows, key: sorted({(e[key], e.get("tags", "")) for e in rows if e["provider"] == "Mantra.TraceMaker"})
    if shown(mine, "display_name") != shown(theirs, "name"):
        fail(f"Meter instruments: mantra shows {shown(mine, 'display_name')}, dotnet-counters {shown(theirs, 'name')}")
    for rows, key, who in ((mine, "display_name", "mantra"), (theirs, "name", "dotnet-counters")):
        answer = [e["value"] for e in rows if e[key] == "mantra.tracemaker.answer ({answer})"]
        steps = [e["value"] for e in rows if e[key] == "mantra.tracemaker.step (s)"]
        if len(answer) < 2 or set(answer) != {42} or len(steps) < 3 or set(steps) != {5}:
            fail(f"{who}: the gauge {answer} (want 42), the histogram's quantiles {steps} (want 5)")
    print(f"Meter Mantra.TraceMaker: the same {len(shown(mine, 'display_name'))} instrument rows "
          f"{shown(mine, 'display_name')}, gauge 42, histogram quantiles 5")


def compare_event_counters(theirs, mine):
    for name, display in NAMES.items():
        # dotnet-counters' first two values: the interval its session started in, and one more that
        # the runtime's counter group may have begun for a session started just before (mantra's)
        drows = [e for e in theirs if e["provider"] == "System.Runtime" and e["name"] == display][2:]
        dvals = [e["value"] for e in drows]
        mrows = [e for e in mine if e["name"] == name]
        if any(e["display_name"] != display or e["provider"] != "System.Runtime" for e in mrows):
            fail(f"{name}: mantra rows {mrows[:2]} do not name it as dotnet-counters does ({display})")
        # mantra's values from the intervals dotnet-counters' compared values cover (not before)
        since = when(drows[0]["timestamp"]) - 0.5 if drows else 0
        mvals = [e["value"] for e in mrows[1:] if when(e["timestamp"]) >= since]
        if len(dvals) < 3 or len(mvals) < 2:
            fail(f"{name}: too few values (dotnet-counters {dvals}, mantra {mvals})")
        step = max(abs(a - b) for a, b in zip(dvals, dvals[1:]))
        lo, hi = min(dvals) - step - 1e-9, max(dvals) + step + 1e-9
        out = [v for v in mvals if not lo <= v <= hi]
        if out:
            fail(f"{name}: mantra values {out} outside dotnet-counters' range [{min(dvals)}, {max(dvals)}] "
                 f"widened by its largest step {step} (dotnet-counters {dvals}, mantra {mvals})")
        # both sessions get the same EventCounters events: mantra must show the same numbers
        same = [v for v in mvals if any(abs(v - d) <= 1e-9 * max(1.0, abs(d)) for d in dvals)]
        if len(same) < 2:
            fail(f"{name}: fewer than 2 of mantra's values {mvals} are among dotnet-counters' {dvals}")
        print(f"{display}: dotnet-counters {[round(v, 3) for v in dvals]}, mantra {[round(v, 3) for v in mvals]} "
              f"(largest step {step:.3f})")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
