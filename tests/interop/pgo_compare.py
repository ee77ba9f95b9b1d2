#!/usr/bin/env python3
"""pgo_compare.py - `mantra pgo`'s text profile against the .NET runtime's own DOTNET_WritePGOData
dump of the same run (tests/interop/pgo-real.sh).

    pgo_compare.py RUNTIME_DUMP OURS --names no|bulk|full

The --names mode says which naming events the trace has (pgo-real.sh's three runs): no (none),
bulk (BulkType names only, GCHeapAndTypeNames 0x1000000), full (TypeLoadStop, TypeDiagnostic
0x8000000000: dotnet-pgo's keywords).

Both files are read as the CLR reader reads them (docs/pgo.md): the START line, then per method an
`@@@` header, `MethodName:`, `Signature:`, and per schema record a `Schema ...` line followed by
Count data lines. Required to be identical: the number of methods and their order, every
MethodName and Signature line, the ilSize and records of every header, every Schema line and
every count (non-handle data line). Differences that are explained, each counted and each with an
exact expectation:

  hashes    codehash and methodhash are not in any event (pgo-format.md §7): ours are 0.
            Expected: one per method.
  unnamed   (--names no: the trace was taken without GCHeapAndTypeNames 0x1000000, so BulkType
            has no names, and no TypeLoadStop) our handle line says UNKNOWN where the runtime
            names the handle. Expected: every named handle line of the dump, none other.
            (--names full: every handle line is equal, none of these.)
  nested    (--names bulk) a nested type whose enclosing type no event names: BulkType gives only
            "Inner"; ours is the runtime's name with "Outer+" prefixes missing. Expected: only
            handle lines of the dump that contain '+'.

  live      a count that differs between the two: the runtime writes its dump and its events from
            live counters (pgo-format.md §4: volatile loads, values may be mid-update) at different
            moments of its shutdown, while runtime threads (tiered compilation, the finalizer) may
            still run instrumented code. Seen once in CI (3 against 2 on one line of 5,000+).
            Expected: at most LIVE_MAX count lines (max(5, 0.1% of the count lines)); every such
            line is printed.

  late      methods the runtime instrumented after its EventPipe session had ended (shutdown: the
            finalizer thread's first System.GC.RunFinalizers, seen in 1 of 5 runs on a 2-CPU guest):
            the dump has them and no event does. Both files list the newest method first, so they
            lead the dump. Expected: at most LATE_MAX methods, all before the dump's first method
            that ours has, none of them in ours, each one of LATE_NAMES (methods that run at
            shutdown: a lost end of our trace would miss others).

Anything else is an unexplained difference: the first 20 are printed and the exit status is 1.
Prints one line of counts: `pgo_compare: methods=N handles=H hashes=.. unnamed=.. nested=..
unexplained=0`.
"""
import re
import sys

LATE_MAX = 3  # methods instrumented after the runtime's session ended (see "late" above) ...
LATE_NAMES = ("MethodName: System.GC.RunFinalizers",)  # ... and only these, which run at shutdown


def parse(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    if not lines or not lines[0].startswith("*** START PGO Data"):
        sys.exit(f"pgo_compare: {path}: no START line")
    methods, i = [], 1
    hdr = re.compile(r"@@@ codehash 0x([0-9A-F]{8}) methodhash 0x([0-9A-F]{8}) ilSize 0x([0-9A-F]{8}) records 0x([0-9A-F]{8})$")
    sch = re.compile(r"Schema InstrumentationKind (\d+) ILOffset (\d+) Count (\d+) Other (\d+)$")
    while i < len(lines):
        m = hdr.match(lines[i])
        if not m:
            i += 1
            continue
        meth = {"line": i + 1, "codehash": m.group(1), "methodhash": m.group(2), "il_size": int(m.group(3), 16),
                "name": lines[i + 1], "sig": lines[i + 2], "records": []}
        i += 3
        for _ in range(int(m.group(4), 16)):
            s = sch.match(lines[i])
            if not s:
                sys.exit(f"pgo_compare: {path}:{i + 1}: expected a Schema line")
            count = int(s.group(3))
            meth["records"].append((lines[i], lines[i + 1:i + 1 + count]))
            i += 1 + count
        methods.append(meth)
    return methods


def strip_enclosing(name):
    """The name with every enclosing-type prefix ("Outer+") removed."""
    return re.sub(r"[^\[\],|@ ]*\+", "", name)


def main():
    if len(sys.argv) != 5 or sys.argv[3] != "--names" or sys.argv[4] not in ("no", "bulk", "full"):
        sys.exit(__doc__)
    theirs, ours, mode = parse(sys.argv[1]), parse(sys.argv[2]), sys.argv[4]
    names = mode != "no"
    counts = {"hashes": 0, "unnamed": 0, "nested": 0, "live": 0, "late": 0, "unexplained": 0}
    count_lines = 0
    live = []
    expect_unnamed = 0
    handles = 0
    shown = []

    def bad(what):
        counts["unexplained"] += 1
        if len(shown) < 20:
            shown.append(what)

    late = len(theirs) - len(ours)
    if 0 < late <= LATE_MAX and ours:
        ours_keys = {(o["name"], o["sig"]) for o in ours}
        head = theirs[:late]
        if all((t["name"], t["sig"]) not in ours_keys and t["name"] in LATE_NAMES for t in head) and \
                (theirs[late]["name"], theirs[late]["sig"]) == (ours[0]["name"], ours[0]["sig"]):
            counts["late"] = late
            for t in head:
                print(f"pgo_compare: late: dump line {t['line']}: {t['name']} (no event: instrumented after the session)")
            theirs = theirs[late:]
    if len(theirs) != len(ours):
        bad(f"{len(theirs)} methods in the runtime's dump, {len(ours)} in ours")
    for t, o in zip(theirs, ours):
        where = f"dump line {t['line']} / ours line {o['line']}"
        if (t["codehash"], t["methodhash"]) != (o["codehash"], o["methodhash"]):
            if (o["codehash"], o["methodhash"]) == ("00000000", "00000000"):
                counts["hashes"] += 1
            else:
                bad(f"{where}: hashes {o['codehash']}/{o['methodhash']}")
        for k in ("il_size", "name", "sig"):
            if t[k] != o[k]:
                bad(f"{where}: {k}: {t[k]!r} != {o[k]!r}")
        if len(t["records"]) != len(o["records"]):
            bad(f"{where}: {len(t['records'])} records != {len(o['records'])}")
            continue
        for (ts, td), (os_, od) in zip(t["records"], o["records"]):
            if ts != os_ or len(td) != len(od):
                bad(f"{where}: {ts!r} != {os_!r}")
                continue
            for a, b in zip(td, od):
                is_handle = a.startswith(("TypeHandle: ", "MethodHandle: "))
                named = is_handle and not a.endswith((": NULL", ": UNKNOWN"))
                if named:
                    handles += 1
                    expect_unnamed += 1
                is_count = not is_handle and re.fullmatch(r"\d+( \d+)?", a) is not None
                count_lines += is_count
                if a == b:
                    continue
                if is_count and re.fullmatch(r"\d+( \d+)?", b):
                    counts["live"] += 1
                    live.append(f"{where}: {ts}: {a!r} != {b!r}")
                    continue
                prefix = a.split(": ", 1)[0] + ": "
                if not names and named and b == prefix + "UNKNOWN":
                    counts["unnamed"] += 1
                elif mode == "bulk" and named and "+" in a and b.startswith(prefix) and \
                        strip_enclosing(a) == strip_enclosing(b):
                    counts["nested"] += 1
                else:
                    bad(f"{where}: {ts}: {a!r} != {b!r}")
    if counts["hashes"] != len(theirs):
        bad(f"hashes: {counts['hashes']} methods with 0 hashes, expected {len(theirs)}")
    if not names and counts["unnamed"] != expect_unnamed:
        bad(f"unnamed: {counts['unnamed']} UNKNOWN handle lines, expected {expect_unnamed}")
    live_max = max(5, count_lines // 1000)
    for x in live:
        print("pgo_compare: live counter: " + x)
    if counts["live"] > live_max:
        bad(f"live: {counts['live']} count lines differ, more than {live_max} (counters still moving cannot "
            "explain that many)")
    for s in shown:
        print("pgo_compare: " + s)
    print(f"pgo_compare: methods={len(theirs)} handles={handles} " +
          " ".join(f"{k}={v}" for k, v in counts.items()))
    return 1 if counts["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
