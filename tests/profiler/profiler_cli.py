#!/usr/bin/env python3
"""profiler_cli.py - the Mantra-Interp provider through the mantra CLI (docs/profiler.md "In traces").

    profiler_cli.py trace      `mantra run examples/programs/async_elt.masm` with Mantra-Interp: the
                               trace's MethodEnter/MethodLeave give exactly the profiler's pairs and
                               kinds (25/25, 3/3, 3/3), balanced on the thread; every AsyncMethodSuspend,
                               Resume and Stop carries the ActivityId of its call's AsyncMethodStart,
                               whose RelatedActivityId is the awaiting caller's; each keyword alone
                               writes only its events; no provider, no event
    profiler_cli.py interop    TraceEvent (MANTRA_TE_DUMP) decodes every event of that trace as
                               `mantra dump` does (fields, activity ids, stacks: 0 differences), and
                               the same pairing and activity links hold on TraceEvent's own view

Environment: MANTRA_TOOL (the mantra binary), MANTRA_BINARY_DIR (scratch under tests/profiler).
Exit 0 on success, 1 with the reason.
"""
import collections
import json
import os
import subprocess
import sys

MANTRA = os.environ.get("MANTRA_TOOL", "build/tools/mantra")
SCRATCH = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "build"), "tests", "profiler", "cli")
PROGRAM = "examples/programs/async_elt.masm"
PROVIDER = "Mantra-Interp"
ZERO = "00000000-0000-0000-0000-000000000000"
# event ids of manifest/dotnet.yaml's Mantra-Interp
ENTER, LEAVE, START, STOP, SUSPEND, RESUME = 1, 2, 3, 4, 5, 6
KINDS = {1: "Call", 2: "Resume", 3: "Return", 4: "Suspend", 5: "Unwind"}
# async_elt.masm's methods by token
TOKENS = {0x06000001: "main", 0x06000002: "Work", 0x06000003: "WorkVoid", 0x06000004: "WorkDouble",
          0x06000005: "RunAsync"}
# what the run must show: per method, (calls, resumptions) = (returns, suspensions)
EXPECTED = {"main": (1, 0), "RunAsync": (1, 7), "Work": (5, 20), "WorkVoid": (1, 2), "WorkDouble": (1, 2)}


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def mantra(*args, ok=True):
    r = subprocess.run([MANTRA] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if ok and r.returncode != 0:
        raise Fail(f"mantra {' '.join(map(str, args))} exited {r.returncode}: {r.stderr.strip()}")
    return r


def path(name):
    return os.path.join(SCRATCH, name)


def run(name, providers):
    trace = path(name)
    r = mantra("run", PROGRAM, "--trace", trace, "--providers", providers)
    check(r.stdout == "total 30, double 2\n100\n", f"output {r.stdout!r}")
    return trace


def lines(text):
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def ours(trace):
    return [e for e in lines(mantra("dump", "--json", trace).stdout) if e["provider"] == PROVIDER]


def analyse(events, who):
    """Checks the pairing and the activity links of one view of the trace; returns its figures."""
    method = lambda e: TOKENS.get(e["fields"]["MethodToken"], hex(e["fields"]["MethodToken"]))
    kinds = collections.Counter()
    stacks = collections.defaultdict(list)  # thread -> [(MethodID, activity)]
    starts = {}  # activity -> (method, related)
    life = collections.defaultdict(list)  # activity -> its async events' ids in order
    for e in events:
        eid, f, act = e["event_id"], e["fields"], e["activity_id"]
        if eid in (ENTER, LEAVE):
            kind = KINDS.get(f["Kind"], f["Kind"])
            kinds[(method(e), kind)] += 1
            st = stacks[e["thread_id"]]
            if eid == ENTER:
                check(kind in ("Call", "Resume"), f"{who}: MethodEnter kind {kind}")
                st.append((f["MethodID"], act))
            else:
                check(kind in ("Return", "Suspend", "Unwind"), f"{who}: MethodLeave kind {kind}")
                check(st and st[-1][0] == f["MethodID"], f"{who}: MethodLeave of {method(e)} out of sequence "
                      f"(top {st[-1] if st else None})")
                check(st[-1][1] == act, f"{who}: {method(e)}'s enter and leave have other activity ids")
                st.pop()
            if method(e) != "main":  # async: its events carry its call's activity
                check(act != ZERO, f"{who}: {method(e)} {kind} without an activity id")
            continue
        check(eid in (START, STOP, SUSPEND, RESUME), f"{who}: unknown event id {eid}")
        if eid == START:
            check(act != ZERO and act not in starts, f"{who}: a Start's activity {act} is zero or seen before")
            starts[act] = (method(e), e["related_activity_id"])
            check(len(e["stack"]) >= 2, f"{who}: a Start without its call's stack: {e['stack']}")
        else:
            check(act in starts, f"{who}: {method(e)} event {eid} with activity {act}: no Start has it")
            check(starts[act][0] == method(e), f"{who}: activity {act} is {starts[act][0]}'s, not {method(e)}'s")
        life[act].append(eid)
    for t, st in stacks.items():
        check(not st, f"{who}: thread {t} ends with {len(st)} frames entered and not left")
    for m, (calls, resumes) in EXPECTED.items():
        got = (kinds[(m, "Call")], kinds[(m, "Resume")], kinds[(m, "Return")], kinds[(m, "Suspend")])
        check(got == (calls, resumes, calls, resumes), f"{who}: {m}: call/resume/return/suspend {got}, "
              f"expected {(calls, resumes, calls, resumes)}")
    check(kinds.get(("main", "Unwind"), 0) == 0, f"{who}: unwinds")
    # every logical call: Start, then (Suspend, Resume)*, then Stop
    by_method = collections.Counter(m for m, _ in starts.values())
    check(by_method == collections.Counter({"RunAsync": 1, "Work": 5, "WorkVoid": 1, "WorkDouble": 1}),
          f"{who}: logical calls {dict(by_method)}")
    for act, seq in life.items():
        m = starts[act][0]
        n = EXPECTED[m][1] // (5 if m == "Work" else 1)
        check(seq == [START] + [SUSPEND, RESUME] * n + [STOP], f"{who}: {m} {act}: events {seq}")
    run_async = [a for a, (m, _) in starts.items() if m == "RunAsync"][0]
    for act, (m, rel) in starts.items():
        want = ZERO if m == "RunAsync" else run_async
        check(rel == want, f"{who}: {m}'s Start relates to {rel}, expected the awaiting caller's {want}")
    pairs = sum(v for (m, k), v in kinds.items() if k in ("Call", "Resume"))
    return pairs, len(starts), sum(len(s) - 2 for s in life.values()) // 2


def trace():
    t = run("ae.nettrace", f"{PROVIDER}:0x3:5")
    pairs, calls, resumptions = analyse(ours(t), "mantra dump")
    print(f"trace: {pairs} enter/leave pairs (25/25, 3/3, 3/3 for Work, WorkVoid, WorkDouble), {calls} logical "
          f"calls, {resumptions} resumptions linked to them")
    only = {"0x1": {ENTER, LEAVE}, "0x2": {START, STOP, SUSPEND, RESUME}}
    for kw, ids in only.items():
        got = {e["event_id"] for e in ours(run(f"kw{kw}.nettrace", f"{PROVIDER}:{kw}:5"))}
        check(got == ids, f"keywords {kw}: event ids {sorted(got)}, expected {sorted(ids)}")
    # Informational (4) excludes the Verbose enter/leave events
    got = {e["event_id"] for e in ours(run("level4.nettrace", f"{PROVIDER}:0x3:4"))}
    check(got == only["0x2"], f"level 4: event ids {sorted(got)}")
    got = ours(run("none.nettrace", "Microsoft-Windows-DotNETRuntime:0x8:4"))
    check(got == [], f"{len(got)} Mantra-Interp events without the provider")
    print("trace: each keyword and level writes exactly its events; none without the provider")


def te(*args):
    cmd = os.environ["MANTRA_TE_DUMP"].split() + [str(a) for a in args]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, MANTRA_BINARY_DIR=SCRATCH))


def interop():
    check(os.environ.get("MANTRA_TE_DUMP"), "MANTRA_TE_DUMP is not set")
    t = run("ae.nettrace", f"{PROVIDER}:0x3:5")
    mine = path("ae.mantra.jsonl")
    with open(mine, "w") as f:
        f.write(mantra("dump", "--json", "--sorted", t).stdout)
    r = te("compare", t, mine, "--max", "20")
    check(r.returncode == 0, f"TraceEvent compare: {r.stdout[-2000:]} {r.stderr[-1000:]}")
    print(f"interop: {r.stdout.strip().splitlines()[-1] if r.stdout.strip() else 'no difference'}")
    r = te("dump", t)
    check(r.returncode == 0, f"TraceEvent dump: {r.stderr[-1000:]}")
    events = [e for e in lines(r.stdout) if e["provider"] == PROVIDER]
    pairs, calls, resumptions = analyse(events, "TraceEvent")
    print(f"interop: TraceEvent's view: {pairs} enter/leave pairs, {calls} logical calls, {resumptions} "
          "resumptions whose ActivityID is their call's")


def main():
    global SCRATCH
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    SCRATCH = os.path.join(SCRATCH, what or "none")
    os.makedirs(SCRATCH, exist_ok=True)
    fn = {"trace": trace, "interop": interop}.get(what)
    if fn is None:
        print(__doc__)
        return 2
    try:
        fn()
    except Fail as e:
        print(f"FAIL: {what}: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
