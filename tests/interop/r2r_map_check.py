#!/usr/bin/env python3
"""r2r_map_check.py - `mantra image --json IMAGE` (libmantra's ReadyToRun reader) against crossgen2's
own account of the same image: its `--map` (a line per node: `RVA | LENGTH | ... | NAME (KIND)`;
a method's hot code is a MethodWithGCInfo node, its cold part a MethodColdCodeNode) and its
`--perfmap` (`IMAGE.ni.{MVID}.map`: `RVA SIZE NAME` per method, after header lines whose RVA is
FFFFFFxx; cold parts are not listed there).

    r2r_map_check.py IMAGE.json MAP PERFMAP [MIN_COLD]

Every method's hot part (RVA, size) must be a MethodWithGCInfo node and a perfmap line, and every
node and line a method's hot part (multisets: an image may hold two methods' identical ranges only
once each); every cold part a MethodColdCodeNode and every such node a cold part, byte for byte. With
MIN_COLD at least that many methods must have a cold part. Prints one summary line; exit 1 on any
difference (the first few printed).
"""
import collections
import json
import sys


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    image = json.load(open(sys.argv[1]))
    min_cold = int(sys.argv[4]) if len(sys.argv) == 5 else 0
    hot = collections.Counter((m["hot"]["rva"], m["hot"]["size"]) for m in image["methods"])
    cold = collections.Counter((m["cold"]["rva"], m["cold"]["size"]) for m in image["methods"] if m["cold"])
    map_hot, map_cold = collections.Counter(), collections.Counter()
    for line in open(sys.argv[2], errors="replace"):
        p = [x.strip() for x in line.split("|")]
        if len(p) >= 5 and p[0].startswith("0x"):
            if p[4].endswith("(MethodWithGCInfo)"):
                map_hot[(int(p[0], 16), int(p[1], 16))] += 1
            elif p[4].endswith("(MethodColdCodeNode)"):
                map_cold[(int(p[0], 16), int(p[1], 16))] += 1
    perf = collections.Counter()
    for line in open(sys.argv[3], errors="replace"):
        a = line.split(" ", 2)
        if len(a) < 2 or a[0].upper().startswith("FFFFFF"):
            continue
        perf[(int(a[0], 16), int(a[1], 16))] += 1
    problems = []
    for what, ours, theirs in (("hot parts / map MethodWithGCInfo", hot, map_hot),
                               ("cold parts / map MethodColdCodeNode", cold, map_cold),
                               ("hot parts / perfmap", hot, perf)):
        only_ours, only_theirs = ours - theirs, theirs - ours
        if only_ours or only_theirs:
            problems.append(f"{what}: {sum(only_ours.values())} only in mantra's "
                            f"{[(hex(r), s) for r, s in list(only_ours)[:3]]}, {sum(only_theirs.values())} only in "
                            f"crossgen2's {[(hex(r), s) for r, s in list(only_theirs)[:3]]}")
    if sum(cold.values()) < min_cold:
        problems.append(f"{sum(cold.values())} cold parts, at least {min_cold} expected")
    for p in problems:
        print("r2r_map_check: " + p)
    print(f"r2r_map_check: {image.get('module')}: {len(image['methods'])} methods "
          f"({sum(1 for m in image['methods'] if m.get('instantiation'))} instantiations), {sum(cold.values())} cold "
          f"parts; map {sum(map_hot.values())} + {sum(map_cold.values())} cold, perfmap {sum(perf.values())}: "
          f"{'equal' if not problems else 'different'}")
    return 1 if problems or not image["methods"] else 0


if __name__ == "__main__":
    sys.exit(main())
