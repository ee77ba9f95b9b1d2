#!/usr/bin/env python3
"""report_compare.py - `mantra report --weight time --json` against dotnet-trace's view of the same
trace: its speedscope conversion (`dotnet-trace convert --format speedscope`, TraceEvent's
SampleProfilerThreadTimeComputer: an evented profile per thread, each sample lasting until its
thread's next one), from which the exclusive and inclusive time of every method is computed as
`dotnet-trace report` computes it (the deepest real frame of each interval is exclusive; pseudo
frames without a module such as CPU_TIME, UNMANAGED_CODE_TIME and "Thread (N)" are not methods;
"?!?", what TraceEvent leaves unresolved, keeps the exclusive time of the intervals whose leaf it is
and is not compared: mantra resolves such frames, e.g. a ReadyToRun method's cold part).

    report_compare.py MANTRA_REPORT.json SPEEDSCOPE.json TOP [TOLERANCE]

TraceEvent's TOP methods by exclusive time (the ones it resolves: names with a module) must be
mantra's TOP methods, in the same order where their shares differ by more than TOLERANCE, with
exclusive and inclusive shares within TOLERANCE (percentage points; default 0.5) of TraceEvent's.
Names are compared without their parameter lists. Prints one line per method and a summary; exit 1
on a difference.
"""
import collections
import json
import sys


def method(name):
    """A frame's method; None for pseudo frames (no module); "?" for what TraceEvent left unresolved
    ("?!?": it keeps the exclusive time of an interval whose leaf it is, but is not compared)."""
    if "!" not in name:
        return None
    if name.startswith("?"):
        return "?"
    return name.split("(", 1)[0]


def traceevent_shares(path):
    d = json.load(open(path))
    frames = [method(f["name"]) for f in d["shared"]["frames"]]
    excl, incl, total = collections.Counter(), collections.Counter(), 0.0
    for p in d["profiles"]:
        if p["type"] != "evented":
            continue
        stack, last = [], None
        for e in p["events"]:
            if last is not None and stack and e["at"] > last:
                dt = e["at"] - last
                total += dt
                real = [frames[f] for f in stack if frames[f]]
                if real:
                    excl[real[-1]] += dt
                    for m in set(real):
                        incl[m] += dt
            last = e["at"]
            if e["type"] == "O":
                stack.append(e["frame"])
            else:
                stack.pop()
    return {m: 100 * v / total for m, v in excl.items()}, {m: 100 * v / total for m, v in incl.items()}


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    ours = json.load(open(sys.argv[1]))
    top = int(sys.argv[3])
    tol = float(sys.argv[4]) if len(sys.argv) == 5 else 0.5
    te_excl, te_incl = traceevent_shares(sys.argv[2])
    mine = {m["name"]: m for m in ours["methods"]}
    want = sorted((m for m in te_excl if m != "?"), key=lambda m: -te_excl[m])[:top]
    problems = []
    for i, m in enumerate(want):
        o = mine.get(m)
        if o is None:
            problems.append(f"{m}: in TraceEvent's top {top}, not in mantra's report")
            continue
        oe, oi = 100 * o["exclusive_share"], 100 * o["inclusive_share"]
        ok = abs(oe - te_excl[m]) <= tol and abs(oi - te_incl.get(m, 0)) <= tol
        print(f"report_compare: {i + 1}. {m}: exclusive {oe:.2f}% (TraceEvent {te_excl[m]:.2f}%), inclusive {oi:.2f}% "
              f"(TraceEvent {te_incl.get(m, 0):.2f}%){'' if ok else '  <- differs'}")
        if not ok:
            problems.append(f"{m}: shares differ by more than {tol} points")
    ranked = [m["name"] for m in ours["methods"] if m["name"] in te_excl]
    for a, b in zip(want, ranked[:len(want)]):
        if a != b and abs(te_excl[a] - te_excl.get(b, 0)) > tol:
            problems.append(f"order: TraceEvent ranks {a} where mantra ranks {b}")
            break
    for p in problems:
        print("report_compare: " + p)
    print(f"report_compare: TraceEvent's top {len(want)} methods by exclusive time: "
          f"{'the same in mantra, shares within ' + str(tol) + ' points' if not problems else str(len(problems)) + ' differences'}")
    return 0 if not problems and want else 1


if __name__ == "__main__":
    sys.exit(main())
