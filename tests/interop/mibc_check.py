#!/usr/bin/env python3
"""mibc_check.py - crossgen2's map of an image compiled with `--mibc OURS --partial` against the
profile the .mibc was made from (tests/interop/pgo-mibc.sh).

    mibc_check.py MAP PROFILE.json MODULE

The methods of MODULE that the profile lists (`mantra pgo --format json`), less the generic
instantiations the .mibc does not hold yet (a "`" in the namespace, "!!" in the signature), must be exactly the methods the map shows compiled
(`(MethodWithGCInfo)` lines). crossgen2 names a method in its map as MODULE_NAMESPACE__NAME with
every character other than a letter, a digit or '_' replaced by '_' (observed with crossgen2
10.0.12); the two lists are compared as multisets of such names. Prints one summary line; exit 1
on any difference (both sides' extra names are printed).
"""
import collections
import json
import re
import sys


def mangle(module, ns, name):
    clean = lambda s: re.sub(r"[^A-Za-z0-9_]", "_", s)
    return f"{clean(module)}_{clean(ns)}__{clean(name)}"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    map_path, profile_path, module = sys.argv[1:]
    with open(profile_path, encoding="utf-8") as f:
        profile = json.load(f)
    listed = [m for m in profile["methods"] if m["module"] == module]
    # a method of a generic type has its type's arity in its namespace ("List`1[System.__Canon]"); a
    # generic method has method type parameters in its signature ("!!0")
    generic = [m for m in listed if "`" in m["namespace"] or "!!" in m["signature"]]
    expected = collections.Counter(mangle(module, m["namespace"], m["name"]) for m in listed if m not in generic)
    compiled = collections.Counter()
    with open(map_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.rstrip().endswith("(MethodWithGCInfo)"):
                sym = line.split("|")[-1].strip().rsplit(" ", 1)[0].strip()
                if sym.startswith(module.replace(".", "_") + "_"):
                    compiled[sym] += 1
    missing, extra = expected - compiled, compiled - expected
    for name in sorted(missing):
        print(f"mibc_check: in the profile, not compiled: {name}")
    for name in sorted(extra):
        print(f"mibc_check: compiled, not in the profile: {name}")
    print(f"mibc_check: {module}: {sum(expected.values())} methods in the profile ({len(generic)} generic "
          f"instantiations left out), {sum(compiled.values())} compiled, "
          f"{'equal' if not missing and not extra else 'different'}")
    return 1 if missing or extra or not expected else 0


if __name__ == "__main__":
    sys.exit(main())
