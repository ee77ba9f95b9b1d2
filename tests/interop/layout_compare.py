#!/usr/bin/env python3
"""layout_compare.py MANTRA MANIFEST REAL_TRACE OURS_TRACE - the PGO flush's events against the runtime's.

For ModuleLoad (152 v2), MethodJittingStarted (145 v1), MethodLoadVerbose (143 v2) and JitInstrumentationDataVerbose (298 v0) of
Microsoft-Windows-DotNETRuntime, takes the first event of each kind from a real .NET 10 trace and
from a trace of mantra's flush, decodes both with `mantra dump --json --manifest MANIFEST`
(manifest/dotnet.yaml: the runtime's events have no field metadata, and mantra's own metadata for
298 stops before Data, a length-field binary nettrace metadata cannot express; the manifest's
template completes both and must consume each payload exactly - `mantra dump` warns otherwise),
and checks field by field: the same names in the same
order with values of the same kind (integer, string, hex bytes). For 298 also: DataSize equals the
length of Data, and MethodFlags is a chunk index with 0x80000000 on the last chunk. Exit 0 when
every check holds; prints each comparison.
"""
import json
import subprocess
import sys

EVENTS = [(152, 2, "ModuleLoad"), (145, 1, "MethodJittingStarted"), (143, 2, "MethodLoadVerbose"),
          (298, 0, "JitInstrumentationDataVerbose")]
PROVIDER = "Microsoft-Windows-DotNETRuntime"


def first_events(mantra, manifest, trace):
    r = subprocess.run([mantra, "dump", "--json", "--manifest", manifest, trace], capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0 or r.stderr.strip():
        sys.exit(f"FAIL: mantra dump {trace}: exit {r.returncode}: {r.stderr.strip()[:500]}")
    found = {}
    for line in r.stdout.splitlines():
        e = json.loads(line)
        key = (e["event_id"], e["version"])
        if e["provider"] == PROVIDER and key not in found:
            found[key] = e
    return found


def kind(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "integer"
    return type(v).__name__


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    mantra, manifest, real, ours = sys.argv[1:]
    a, b = first_events(mantra, manifest, real), first_events(mantra, manifest, ours)
    bad = 0
    for eid, ver, name in EVENTS:
        ra, rb = a.get((eid, ver)), b.get((eid, ver))
        if ra is None or rb is None:
            print(f"FAIL: {name} ({eid} v{ver}) missing: real {ra is not None}, ours {rb is not None}")
            bad += 1
            continue
        la = [(k, kind(v)) for k, v in ra["fields"].items()]
        lb = [(k, kind(v)) for k, v in rb["fields"].items()]
        if la != lb:
            print(f"FAIL: {name}: real {la}\n      ours {lb}")
            bad += 1
            continue
        print(f"ok: {name} ({eid} v{ver}): {len(la)} fields, same names, order and kinds: "
              f"{', '.join(k for k, _ in la)}")
        if eid == 298:
            for side, e in (("real", ra), ("ours", rb)):
                f = e["fields"]
                if f["DataSize"] * 2 != len(f["Data"]) or (f["MethodFlags"] & 0x7FFFFFFF) > 1000:
                    print(f"FAIL: {side} 298: DataSize {f['DataSize']}, Data {len(f['Data']) // 2} bytes, "
                          f"MethodFlags {f['MethodFlags']:#x}")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
