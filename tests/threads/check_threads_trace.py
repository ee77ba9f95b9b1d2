#!/usr/bin/env python3
"""Checks the 4-thread trace of write_threads_trace against what its writers wrote.

    check_threads_trace.py --tool traceevent TRACE EXPECTED.jsonl META.json
    check_threads_trace.py --tool mantra --mantra MANTRA [--manifest YAML] TRACE EXPECTED.jsonl META.json

traceevent: the TraceEvent harness (env MANTRA_TE_DUMP, tests/interop) `dump` and `stats`;
mantra: `mantra dump --json` (file order) and `mantra stats --json`; with --manifest, `mantra dump
--json --manifest YAML`. Either way the events whose metadata is partial (Strings, Arrays) decode
whole (with YAML, or with manifest/dotnet.yaml, which the tool embeds): those must show every field
of the template (field_source "manifest").

EXPECTED.jsonl holds one line per event in each writer thread's write order (writer, thread_id,
attempt, provider, event_id, version, name, fields = the fields the trace's metadata describes,
all_fields = every field of the manifest's template);
META.json the event count, the drop count (0), the thread ids and the least number of sequence
points. Asserted: the trace is complete; the reader's event count is the expected one plus the
session's ProcessInfo, and its drop count (sequence gaps; TraceEvent's EventsLost) is META's;
ProcessInfo once, on the stopping thread; per writer thread, the events in the reader's order are
exactly the expected ones in write order (provider, id, version, name, field names in order and
every value), with non-decreasing timestamps; with --tool mantra also consecutive sequence numbers
per thread (they count attempts) and at least META's sequence points. Exit 0 when all hold.
"""
import argparse
import json
import math
import os
import shlex
import struct
import subprocess
import sys

MAX_REPORT = 20
PI_PROVIDER = "Microsoft-DotNETCore-EventPipe"


def parse_int(text):
    # keep the sign of a negative zero (a Single or Double printed as "-0")
    return -0.0 if text == "-0" else int(text)


def loads(line):
    return json.loads(line, parse_int=parse_int)


def run(cmd, what):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode("utf-8", "replace"))
        print(f"FAIL: {what} exited {p.returncode}: {' '.join(cmd)}")
        sys.exit(1)
    return p.stdout.decode("utf-8")


def same_float(kind, want, got):
    if isinstance(want, str) or isinstance(got, str):  # "NaN", "Infinity", "-Infinity"
        return want == got
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    w, g = float(want), float(got)
    if kind == "f32":
        return struct.pack("<f", w) == struct.pack("<f", g)
    return w == g and math.copysign(1.0, w) == math.copysign(1.0, g)


def same_value(name, want, got):
    if name == "F32":
        return same_float("f32", want, got)
    if name == "F64":
        return same_float("f64", want, got)
    if isinstance(want, bool) or isinstance(got, bool):
        return isinstance(want, bool) and isinstance(got, bool) and want == got
    if isinstance(want, int):
        return isinstance(got, int) and want == got
    return want == got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", choices=["traceevent", "mantra"], required=True)
    ap.add_argument("--mantra", help="the mantra CLI (--tool mantra)")
    ap.add_argument("--manifest", help="--tool mantra: dump with --manifest YAML (partial events whole)")
    ap.add_argument("trace")
    ap.add_argument("expected")
    ap.add_argument("meta")
    a = ap.parse_args()

    with open(a.meta, encoding="utf-8") as f:
        meta = json.load(f)
    expected = {}  # thread id -> list of expected events in write order
    n_expected = 0
    with open(a.expected, encoding="utf-8") as f:
        for line in f:
            e = loads(line)
            expected.setdefault(e["thread_id"], []).append(e)
            n_expected += 1
    if n_expected != meta["events"] or sorted(expected) != sorted(meta["threads"]):
        print(f"FAIL: {a.expected} has {n_expected} events of threads {sorted(expected)}, "
              f"{a.meta} says {meta['events']} of {sorted(meta['threads'])}")
        return 1

    te = a.tool == "traceevent"
    if te:
        cmd = shlex.split(os.environ.get("MANTRA_TE_DUMP", ""))
        if not cmd:
            print("FAIL: MANTRA_TE_DUMP is not set (tests/interop)")
            return 2
        dump = run(cmd + ["dump", a.trace], "TraceEventDump dump")
        stats = json.loads(run(cmd + ["stats", a.trace], "TraceEventDump stats"))
    else:
        if not a.mantra:
            print("FAIL: --tool mantra needs --mantra")
            return 2
        extra = ["--manifest", a.manifest] if a.manifest else []
        dump = run([a.mantra, "dump", "--json"] + extra + [a.trace], "mantra dump --json")
        stats = json.loads(run([a.mantra, "stats", "--json", a.trace], "mantra stats --json"))

    errors = []

    def fail(msg):
        errors.append(msg)

    # TraceEvent stores the thread id in an int: compare low 32 bits there
    tid_key = (lambda t: t & 0xFFFFFFFF) if te else (lambda t: t)
    by_key = {tid_key(t): t for t in expected}
    if len(by_key) != len(expected):
        fail(f"writer thread ids collide on their low 32 bits: {sorted(expected)}")

    events = [loads(line) for line in dump.splitlines() if line.strip()]
    got = {t: [] for t in expected}
    pinfo = []
    last_ts = None
    for k, ev in enumerate(events):
        if te and last_ts is not None and ev["timestamp"] < last_ts:
            fail(f"event {k}: timestamp {ev['timestamp']} before {last_ts} (TraceEvent dispatches in time order)")
        last_ts = ev["timestamp"]
        if ev["provider"] == PI_PROVIDER and ev["event_id"] == 1:
            pinfo.append(ev)
            continue
        t = by_key.get(tid_key(ev["thread_id"]))
        if t is None:
            fail(f"event {k} ({ev['provider']}/{ev['event_id']}) on thread {ev['thread_id']}, not a writer thread")
            continue
        got[t].append(ev)

    if len(pinfo) != 1:
        fail(f"{len(pinfo)} ProcessInfo events, want 1")
    else:
        p = pinfo[0]
        if tid_key(p["thread_id"]) != tid_key(meta["process_info_thread"]):
            fail(f"ProcessInfo on thread {p['thread_id']}, want the stopping thread {meta['process_info_thread']}")
        if list(p["fields"]) != ["CommandLine", "OSInformation", "ArchInformation"]:
            fail(f"ProcessInfo fields {list(p['fields'])}")
        elif "write_threads_trace" not in p["fields"]["CommandLine"] or not p["fields"]["ArchInformation"]:
            fail(f"ProcessInfo fields {p['fields']}")

    for t, want in expected.items():
        have = got[t]
        w = want[0]["writer"]
        if len(have) != len(want):
            fail(f"writer {w} (thread {t}): {len(have)} events, want {len(want)}")
        seq_base = None
        ts = None
        for j, (e, g) in enumerate(zip(want, have)):
            where = f"writer {w} (thread {t}) event {j}"
            if ts is not None and g["timestamp"] < ts:
                fail(f"{where}: timestamp {g['timestamp']} before the thread's previous {ts}")
            ts = g["timestamp"]
            for key in ("provider", "event_id", "version", "name"):
                if g[key] != e[key]:
                    fail(f"{where}: {key} {g[key]!r}, want {e[key]!r}")
            if not te:
                if seq_base is None:
                    seq_base = g["sequence"] - e["attempt"]
                elif g["sequence"] - e["attempt"] != seq_base:
                    fail(f"{where}: sequence {g['sequence']} for attempt {e['attempt']} (first: +{seq_base}): "
                         "not consecutive")
            fields = e["fields"]
            # a partial-metadata event: mantra decodes it whole with --manifest and, without, with the
            # manifest/dotnet.yaml the tool embeds (docs/cli.md); TraceEvent shows the metadata's fields
            if not te and list(e["all_fields"]) != list(fields):
                fields = e["all_fields"]
                if g.get("field_source") != "manifest":
                    fail(f"{where} ({e['name']}): field_source {g.get('field_source')!r}, want 'manifest'")
            if list(g["fields"]) != list(fields):
                fail(f"{where} ({e['name']}): fields {list(g['fields'])}, want {list(fields)}")
                continue
            for name, value in fields.items():
                if not same_value(name, value, g["fields"][name]):
                    fail(f"{where} ({e['name']}): {name} = {g['fields'][name]!r}, want {value!r}")

    n_events = meta["events"] + 1  # + ProcessInfo
    if stats.get("complete") is not True:
        fail(f"stats: complete = {stats.get('complete')!r}")
    if stats.get("events") != n_events:
        fail(f"stats: {stats.get('events')} events, want {n_events}")
    if stats.get("dropped") != meta["dropped"]:
        fail(f"stats: dropped {stats.get('dropped')} (sequence gaps), want {meta['dropped']}")
    if te and stats.get("error"):
        fail(f"stats: error {stats['error']!r}")
    if not te:
        if stats.get("errors"):
            fail(f"stats: errors {stats['errors']}")
        want_sp = max(2, meta["min_sequence_points"])
        if stats.get("sequence_points", 0) < want_sp:
            fail(f"stats: {stats.get('sequence_points')} sequence points, want at least {want_sp} "
                 f"({meta['bytes']} bytes, one every MB)")
    if len(events) != n_events:
        fail(f"dump: {len(events)} events, want {n_events}")

    tool = "TraceEvent" if te else ("mantra --manifest" if a.manifest else "mantra")
    if errors:
        for msg in errors[:MAX_REPORT]:
            print(f"FAIL: {msg}")
        if len(errors) > MAX_REPORT:
            print(f"... {len(errors) - MAX_REPORT} more")
        print(f"{tool}: {len(errors)} problems in {a.trace}")
        return 1
    sp = f", {stats.get('sequence_points')} sequence points" if not te else ""
    print(f"ok: {tool} reads {len(events)} events of {len(expected)} writer threads + ProcessInfo as written, "
          f"dropped {stats.get('dropped')}{sp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
