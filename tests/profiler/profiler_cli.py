#!/usr/bin/env python3
"""profiler_cli.py - the Mantra-Interp provider through the mantra CLI (docs/profiler.md "In traces").

    profiler_cli.py trace      `mantra run examples/programs/async_elt.masm` with Mantra-Interp: the
                               trace's MethodEnter/MethodLeave give exactly the profiler's pairs and
                               kinds (25/25, 3/3, 3/3), balanced on the thread; every AsyncMethodSuspend,
                               Resume and Stop carries the ActivityId of its call's AsyncMethodStart,
                               whose RelatedActivityId is the awaiting caller's; each keyword alone
                               writes only its events; no provider, no event
    profiler_cli.py logical    examples/programs/async_logical.masm, sampled: Crunch, resumed by main's
                               `wait`, has main as its physical caller in every sample; `report
                               --logical` and `export --logical` give every one of those samples the
                               logical stack Crunch <- Outer <- run (its awaiting caller, then Outer's
                               caller), and without --logical nothing changes
    profiler_cli.py interop    TraceEvent (MANTRA_TE_DUMP) decodes every event of that trace as
                               `mantra dump` does (fields, activity ids, stacks: 0 differences), and
                               the same pairing and activity links hold on TraceEvent's own view;
                               TraceEvent's StartStopActivityComputer makes each logical call an
                               activity whose creator is its awaiting caller's

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


def speedscope_stacks(trace, *opts):
    doc = json.loads(mantra("export", trace, "--format", "speedscope", "-o", "-", *opts).stdout)
    names = [f["name"] for f in doc["shared"]["frames"]]
    stacks = collections.Counter()
    for prof in doc["profiles"]:
        for sample in prof["samples"]:
            stacks[" <- ".join(names[i].split("!")[-1] for i in reversed(sample))] += 1
    return stacks


def logical():
    trace = path("logical.nettrace")
    r = mantra("run", "examples/programs/async_logical.masm", "--entry", "run", "30000000", "--trace", trace,
               "--providers", "Microsoft-DotNETCore-SampleProfiler:0:5,Mantra-Interp:0x2:4,"
               "Microsoft-Windows-DotNETRuntimeRundown:0x118")
    check(r.stdout == "449999985000000\n", f"output {r.stdout!r}")
    physical = json.loads(mantra("report", trace, "--json", "--top", "0").stdout)
    logic = json.loads(mantra("report", trace, "--json", "--top", "0", "--logical").stdout)
    rows = lambda rep: {m["name"].split("!")[-1]: (m["exclusive"], m["inclusive"]) for m in rep["methods"]}
    p, q = rows(physical), rows(logic)
    crunch = p.get("Demo.Crunch", (0, 0))[1]
    check(crunch >= 20, f"{crunch} samples in Crunch (too few to tell): {p}")
    # physically, Crunch's caller is the dispatcher (run's wait), never Outer, which is suspended
    check(p.get("Demo.Outer", (0, 0))[1] < 3, f"physical: Outer in {p.get('Demo.Outer')} samples")
    check(q["Demo.Crunch"] == p["Demo.Crunch"] and q["Demo.Outer"][1] >= crunch, f"logical: {q}, physical {p}")
    check(logic["logical_samples"] >= crunch and "logical_samples" not in physical,
          f"logical samples {logic.get('logical_samples')} of {crunch} in Crunch")
    phys, log = speedscope_stacks(trace), speedscope_stacks(trace, "--logical")
    # A sample races the segment's edges (the stack published a few instructions before Resume is
    # written, or after Stop): at most 2 such samples may keep their physical stack; every other one
    # has exactly the stack below.
    in_crunch = lambda st: {k: v for k, v in st.items() if k.startswith("Demo.Crunch")}
    want_p, want_l = "Demo.Crunch <- Demo.run", "Demo.Crunch <- Demo.Outer <- Demo.run"
    check(in_crunch(phys).get(want_p, 0) >= crunch - 2 and sum(in_crunch(phys).values()) == crunch,
          f"physical stacks {in_crunch(phys)}")
    edge = {k: v for k, v in in_crunch(log).items() if k != want_l}
    check(in_crunch(log).get(want_l, 0) >= crunch - 2 and set(edge) <= {want_p} and
          sum(in_crunch(log).values()) == crunch, f"logical stacks {in_crunch(log)}")
    print(f"logical: {crunch} samples in Crunch: physically under run (its dispatcher), logically "
          "Crunch <- Outer <- run in report and export")


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
    # TraceEvent's own activity computation (StartStopActivityComputer, PerfView's activity views):
    # every logical call an activity, created by its awaiting caller's
    r = te("startstop", t)
    check(r.returncode == 0, f"TraceEvent startstop: {r.stderr[-1000:]}")
    acts = lines(r.stdout)
    method = {e["activity_id"]: TOKENS[e["fields"]["MethodToken"]] for e in events if e["event_id"] == START}
    check(sorted(a["activity_id"] for a in acts) == sorted(method), f"StartStopActivityComputer found "
          f"{len(acts)} activities: {[a['name'] for a in acts]}, expected the {len(method)} logical calls")
    root = [a for a, m in method.items() if m == "RunAsync"][0]
    for a in acts:
        want = "" if a["activity_id"] == root else root
        check(a["creator_id"] == want and a["task"] == "AsyncMethod" and a["duration_ms"] > 0,
              f"{method[a['activity_id']]}: TraceEvent's activity {a}, expected creator {want or 'none'}")
    print(f"interop: TraceEvent's StartStopActivityComputer: {len(acts)} activities ({acts[0]['name']} ...), "
          "each a logical call, created by its awaiting caller's")


def main():
    global SCRATCH
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    SCRATCH = os.path.join(SCRATCH, what or "none")
    os.makedirs(SCRATCH, exist_ok=True)
    fn = {"trace": trace, "logical": logical, "interop": interop}.get(what)
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
