#!/usr/bin/env python3
"""`mantra counters` against dotnet-counters on the same .NET 10 process in the same seconds.

usage: counters_compare.py MANTRA TRACEMAKER_DLL OUTDIR

`TraceMaker serve 30` runs; `dotnet-counters collect -p PID --counters
System.Runtime[cpu-usage,gc-heap-size] --refresh-interval 1 --duration 00:00:00:06 --format json`
(tests/interop/dotnet-tools.json) and `mantra counters -p PID` with the same counters, interval and
duration (--format json) run at the same time. Checked, per counter, leaving out mantra's first value
and dotnet-counters' first two (the intervals in which the sessions started): both tools have
values; every mantra value lies within dotnet-counters' range widened by the largest change between
two of its consecutive values (one interval's change); at least two of mantra's values are exactly
among dotnet-counters' (both sessions receive the same EventCounters events); mantra's display names
are dotnet-counters' names ("CPU Usage (%)", "GC Heap Size (MB)").
Without dotnet: SKIP (a failure with MANTRA_REQUIRE_INTEROP=1).
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, DOTNET_CLI_TELEMETRY_OPTOUT="1", DOTNET_NOLOGO="1")
COUNTERS = "System.Runtime[cpu-usage,gc-heap-size]"
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
    dc_out, m_out = os.path.join(outdir, "dotnet-counters.json"), os.path.join(outdir, "mantra-counters.jsonl")
    for f in (dc_out, m_out):
        if os.path.exists(f):
            os.unlink(f)
    app = subprocess.Popen(["dotnet", dll, "serve", "30"], env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        m = re.match(r"ready (\d+)", app.stdout.readline())
        if not m:
            fail("TraceMaker serve did not start")
        pid = m.group(1)
        time.sleep(0.5)
        dc = subprocess.Popen(["dotnet", "tool", "run", "dotnet-counters", "--", "collect", "-p", pid, "--counters",
                               COUNTERS, "--refresh-interval", "1", "--duration", "00:00:00:06", "--format", "json",
                               "-o", dc_out], cwd=HERE, env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        ours = subprocess.run([mantra, "counters", "-p", pid, "--counters", COUNTERS, "--refresh-interval", "1",
                               "--duration", "6", "--format", "json", "-o", m_out], env=ENV, capture_output=True,
                              text=True, timeout=120)
        dc_text, _ = dc.communicate(timeout=120)
        if ours.returncode != 0:
            fail(f"mantra counters exited {ours.returncode}: {ours.stderr}")
        if dc.returncode != 0 or not os.path.exists(dc_out):
            fail(f"dotnet-counters exited {dc.returncode}: {dc_text}")
    finally:
        app.kill()
        app.wait()
    theirs = json.load(open(dc_out, encoding="utf-8"))["Events"]
    mine = [json.loads(line) for line in open(m_out, encoding="utf-8")]
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
        if len(dvals) < 3 or len(mvals) < 3:
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
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
