#!/usr/bin/env python3
"""Runs the TraceEvent harness on one trace and checks what it prints.

usage: check_dump.py TRACE --events N|any [--rc R] [--expected-json FILE] [--mutate]

  * `dump TRACE` exits with R (default 0) and prints N events (`any`: at least one), every line a
    JSON object with exactly the keys of docs/dump-json.md, in order, with the documented types;
  * `stats TRACE` agrees with the dump (events, per provider/id/version counts, complete = rc 0);
  * `compare TRACE <the dump>` finds 0 differences (the compare path reads our line format back);
    with --mutate, one changed field value must give exactly 1 difference and exit 1;
  * --expected-json: the synthetic V6 vectors' expected dispatch order (name, thread, timestamp).

The harness command comes from env MANTRA_TE_DUMP (space-separated, e.g. "dotnet /x/TraceEventDump.dll");
scratch files go to $MANTRA_BINARY_DIR/interop/.
"""
import json
import os
import shlex
import subprocess
import sys

KEYS = ["timestamp", "provider", "event_id", "version", "name", "thread_id", "sequence", "fields", "stack",
        "activity_id", "related_activity_id"]


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main(argv):
    trace, events, rc_want, expected, mutate = None, None, 0, None, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--events":
            events = argv[i + 1]; i += 2
        elif a == "--rc":
            rc_want = int(argv[i + 1]); i += 2
        elif a == "--expected-json":
            expected = argv[i + 1]; i += 2
        elif a == "--mutate":
            mutate = True; i += 1
        elif trace is None:
            trace = a; i += 1
        else:
            fail(f"unexpected argument {a}")
    if trace is None or events is None:
        fail(__doc__)
    cmd = shlex.split(os.environ.get("MANTRA_TE_DUMP", ""))
    if not cmd:
        fail("MANTRA_TE_DUMP is not set")
    scratch = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "/tmp"), "interop")
    os.makedirs(scratch, exist_ok=True)
    stem = os.path.join(scratch, os.path.basename(os.path.dirname(trace)) + "-" + os.path.basename(trace))

    # ---- dump ----------------------------------------------------------------------------------
    out = stem + ".te.jsonl"
    with open(out, "wb") as f:
        p = subprocess.run(cmd + ["dump", trace], stdout=f, stderr=subprocess.PIPE)
    err = p.stderr.decode("utf-8", "replace").strip()
    if p.returncode != rc_want:
        fail(f"dump exited {p.returncode}, expected {rc_want}; stderr: {err}")
    if err:
        print(f"dump stderr: {err}")
    counts, lines = {}, []
    with open(out, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                o = json.loads(line)
            except ValueError as e:
                fail(f"{out}:{n}: not JSON: {e}")
            if list(o.keys()) != KEYS:
                fail(f"{out}:{n}: keys {list(o.keys())}, expected {KEYS}")
            for k in ("timestamp", "event_id", "version", "thread_id", "sequence"):
                if not isinstance(o[k], int) or isinstance(o[k], bool):
                    fail(f"{out}:{n}: {k} is not an integer")
            if not isinstance(o["provider"], str) or not isinstance(o["name"], str):
                fail(f"{out}:{n}: provider/name not strings")
            if not isinstance(o["fields"], dict) or not isinstance(o["stack"], list):
                fail(f"{out}:{n}: fields/stack of the wrong type")
            for s in o["stack"]:
                if not (isinstance(s, str) and s.startswith("0x") and s == s.lower()):
                    fail(f"{out}:{n}: stack entry {s!r}")
            key = f"{o['provider']}/{o['event_id']}/v{o['version']}"
            counts[key] = counts.get(key, 0) + 1
            if expected:
                lines.append(o)
    total = sum(counts.values())
    if events == "any":
        if total == 0:
            fail("dump printed no events")
    elif total != int(events):
        fail(f"dump printed {total} events, expected {events}")
    print(f"dump: {total} events, {len(counts)} provider/id/version keys, exit {p.returncode}")

    # ---- stats ---------------------------------------------------------------------------------
    p = subprocess.run(cmd + ["stats", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail(f"stats exited {p.returncode}: {p.stderr.decode(errors='replace')}")
    st = json.loads(p.stdout)
    if st["events"] != total or st["by_event"] != counts:
        fail(f"stats disagrees with dump: {st['events']} events vs {total}")
    if st["complete"] != (rc_want == 0):
        fail(f"stats complete={st['complete']} but dump exit {rc_want}")
    print(f"stats: format_version {st['format_version']}, complete {st['complete']}, "
          f"dropped {st['dropped']}, error {st['error']}")

    # ---- expected dispatch order (synthetic V6) ------------------------------------------------
    if expected:
        with open(expected, encoding="utf-8") as f:
            exp = json.load(f)
        want = exp["expected_dispatch_order"]
        if len(want) != len(lines) or exp.get("total_events", len(want)) != len(lines):
            fail(f"{len(lines)} events, expected {len(want)}")
        for k, (w, o) in enumerate(zip(want, lines)):
            got = (o["name"], o["thread_id"], o["timestamp"])
            if got != (w["EventName"], w["ThreadID"], w["TimeStampQPC"]):
                fail(f"event {k}: {got}, expected {(w['EventName'], w['ThreadID'], w['TimeStampQPC'])}")
        if st["format_version"] != exp.get("FileFormatVersionNumber", st["format_version"]):
            fail(f"format version {st['format_version']}")
        print(f"expected.json: {len(want)} events in the asserted order")

    # ---- compare against itself ----------------------------------------------------------------
    p = subprocess.run(cmd + ["compare", trace, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    text = p.stdout.decode("utf-8", "replace")
    summary = [l for l in text.splitlines() if l.startswith("compare:")]
    if p.returncode != 0 or summary != [f"compare: {total} events, 0 differences"]:
        fail(f"compare with its own dump: exit {p.returncode}\n{text}{p.stderr.decode(errors='replace')}")
    print(summary[0])

    if mutate:
        bad = stem + ".mutated.jsonl"
        done = False
        with open(out, encoding="utf-8") as f, open(bad, "w", encoding="utf-8") as g:
            for line in f:
                o = json.loads(line)
                if not done:
                    for k, v in o["fields"].items():
                        if isinstance(v, int) and not isinstance(v, bool):
                            o["fields"][k] = v + 1
                            done = True
                            break
                g.write(json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n")
        if not done:
            fail("--mutate: no integer field to change")
        p = subprocess.run(cmd + ["compare", trace, bad], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        text = p.stdout.decode("utf-8", "replace")
        if p.returncode != 1 or f"compare: {total} events, 1 differences" not in text:
            fail(f"compare of a mutated dump: exit {p.returncode}\n{text}")
        print("mutated dump: " + text.strip().splitlines()[0][:200])
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1:])
