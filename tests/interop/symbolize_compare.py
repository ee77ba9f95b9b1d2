#!/usr/bin/env python3
"""symbolize_compare.py - `mantra symbolize --stacks TRACE` against TraceEvent's TraceLog on the same
trace (`TraceEventDump stacks TRACE`: every event's stack as TraceLog resolves it, the symbolisation
PerfView and dotnet-trace use).

    symbolize_compare.py MANTRA_STACKS TRACELOG_STACKS NAME [MIN_RESOLVED]

Both list the events that carry a stack, one JSON line each, frames leaf first as
`Module!Namespace.Name(parameters)` or `0x<address>` when unresolved. Events are paired by thread
and timestamp (the raw header value on both sides); every TraceLog event must have its mantra
event (mantra may give more: TraceLog leaves some out, counted). Every frame that
TraceLog names must be named the same by mantra; a frame TraceLog leaves as an address may be named
by mantra (counted: "mantra only") or left as the same address. Module names are compared without
case (TraceLog gives some Windows modules' names in lower case). IL offsets (`il`) are only counted
where they agree: TraceLog's are an estimate (it drops the prolog and epilog entries, interpolates
between entries, takes one less, and looks a return address up as it is), mantra's the map entry of
the code itself (a return address's call), docs/symbols.md. Prints one summary line, exit 1 on
any difference or when fewer than MIN_RESOLVED frames are resolved by both.
"""
import collections
import json
import sys


def same_frame(x, y):
    """Equal, the module's name compared without case (TraceLog may give a Windows module's file
    name in lower case, as the file system keeps it)."""
    mx, _, rx = x.partition("!")
    my, _, ry = y.partition("!")
    return rx == ry and mx.lower() == my.lower()


def load(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    ours, theirs, name = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    min_resolved = int(sys.argv[4]) if len(sys.argv) == 5 else 1
    if not theirs:
        sys.exit(f"symbolize_compare: {name}: TraceLog gave no event with a stack")
    # pair by thread and timestamp (the raw header value on both sides), in order at one time
    pool = collections.defaultdict(collections.deque)
    for e in ours:
        pool[(e["thread_id"], e["timestamp"])].append(e)
    problems, both, ours_only, same_addr, events, missing, il_same = [], 0, 0, 0, 0, 0, 0
    for eb in theirs:
        key = (eb["thread_id"], eb["timestamp"])
        if not pool[key]:
            missing += 1
            problems.append(f"thread {key[0]} at {key[1]}: an event with a stack in TraceLog, none in mantra")
            continue
        ea = pool[key].popleft()
        events += 1
        fa, fb = ea["frames"], eb["frames"]
        if len(fa) != len(fb):
            problems.append(f"thread {key[0]} at {key[1]}: {len(fa)} frames, TraceLog {len(fb)}")
            continue
        ia, ib = ea.get("il"), eb.get("il")
        if ia is not None and ib is not None:  # IL offsets: counted where they agree (see above)
            il_same += sum(1 for x, y in zip(ia, ib) if y >= 0 and x == y)
        for i, (x, y) in enumerate(zip(fa, fb)):
            if y.startswith("0x"):
                if x == y:
                    same_addr += 1
                elif x.startswith("0x"):
                    problems.append(f"thread {key[0]} at {key[1]}: frame {i}: address {x} against TraceLog's {y}")
                else:
                    ours_only += 1
            elif same_frame(x, y):
                both += 1
            else:
                problems.append(f"thread {key[0]} at {key[1]}: frame {i}: mantra {x}, TraceLog {y}")
    extra = sum(len(q) for q in pool.values())
    for p in problems[:8]:
        print("symbolize_compare: " + p)
    print(f"symbolize_compare: {name}: {events} events with stacks paired ({extra} more in mantra: events TraceLog "
          f"does not give); frames named alike {both}, named by mantra only {ours_only}, unresolved by both {same_addr}; "
          f"IL offsets alike {il_same}; "
          f"{len(problems)} differences")
    return 0 if not problems and both >= min_resolved else 1


if __name__ == "__main__":
    sys.exit(main())
