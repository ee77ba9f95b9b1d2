#!/usr/bin/env python3
"""mibc_check.py - crossgen2's map of an image compiled with `--mibc OURS --partial` against the
profile the .mibc was made from (tests/interop/pgo-mibc.sh).

    mibc_check.py MAP PROFILE.json MODULE

The methods of MODULE that the profile lists (`mantra pgo --format json`) and whose group holds
MODULE only must be exactly the methods the map shows compiled (`(MethodWithGCInfo)` lines). A
method's group is what dotnet-pgo's MibcEmitter (and `mantra pgo --format mibc`) files it under:
its assembly and the assemblies its declaring type's and its own type arguments involve
(primitives and __Canon involve none); crossgen2 reads only groups whose assemblies are all in the
version bubble, here MODULE alone. crossgen2 names a method in its map MODULE_TYPE__NAME, TYPE being
the type's full name with an instantiation as <ARG__ARG> (primitive arguments by their short name:
Int64), other characters than letters and digits mostly replaced by '_' (observed
with crossgen2 10.0.12; Byte and SByte arguments as UInt8 and Int8), an overloaded method's name with
a number appended ("Compare_1"). The lists are compared as multisets of names with every run of
characters other than letters and digits as one '_', a compiled name also without its overload
number. Prints one summary
line; exit 1 on any difference (both sides' extra names are printed) or when nothing is expected.
"""
import collections
import json
import re
import sys

PRIMITIVES = {"Boolean", "Char", "SByte", "Byte", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64",
              "IntPtr", "UIntPtr", "Single", "Double"}


def parse(s, i=0):
    """An assembly-qualified type name at s[i:] -> (dict(name, args, mods, assembly), end)."""
    j = i
    while j < len(s) and s[j] not in "[],*&":
        j += 1
    t = {"name": s[i:j], "args": [], "mods": "", "assembly": None}
    if s.startswith("[[", j):
        j += 1
        while True:
            assert s[j] == "["
            arg, j = parse(s, j + 1)
            assert s[j] == "]"
            t["args"].append(arg)
            j += 1
            if s[j] == ",":
                j += 1
                continue
            assert s[j] == "]"
            j += 1
            break
    m = re.match(r"(\[,*\]|\*|&)*", s[j:])
    t["mods"] = m.group(0)
    j += len(m.group(0))
    if s.startswith(", ", j):
        k = j + 2
        while k < len(s) and s[k] not in ",]":
            k += 1
        t["assembly"] = s[j + 2:k]
        while k < len(s) and s[k] != "]":
            k += 1
        j = k
    return t, j


def is_primitive(t):
    return (not t["mods"] and t["assembly"] == "System.Private.CoreLib" and t["name"].startswith("System.")
            and t["name"][7:] in PRIMITIVES)


def assemblies(t, out):
    if t["name"] == "System.__Canon" or is_primitive(t):
        return
    if not t["mods"] and t["assembly"]:
        out.add(t["assembly"])
    for a in t["args"]:
        assemblies(a, out)


def clean(s):
    return re.sub(r"[^A-Za-z0-9_]", "_", s)


# crossgen2's names of primitive type arguments
SHORT = {"Byte": "UInt8", "SByte": "Int8"}


def mangled_type(t):
    if is_primitive(t):
        return SHORT.get(t["name"][7:], t["name"][7:])
    name = clean(t["name"])
    if t["args"]:
        name += "<" + "__".join(mangled_type(a) for a in t["args"]) + ">"
    return name + clean(t["mods"])


def key(sym):
    """A map name with every run of characters other than letters and digits as one '_'."""
    return re.sub(r"[^A-Za-z0-9]+", "_", sym)


def without_overload(sym):
    """The name with the overload number crossgen2 appends to a method name ("Compare_1") removed."""
    depth, last = 0, -1
    for i, c in enumerate(sym):
        depth += c == "<"
        depth -= c == ">"
        if depth == 0 and sym.startswith("__", i):
            last = i
    if last < 0:
        return sym
    method = sym[last + 2:]
    inst = method.find("<")
    head, tail = (method, "") if inst < 0 else (method[:inst], method[inst:])
    return sym[:last + 2] + re.sub(r"_[0-9]+$", "", head) + tail


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    map_path, profile_path, module = sys.argv[1:]
    with open(profile_path, encoding="utf-8") as f:
        profile = json.load(f)
    expected, other_groups = collections.Counter(), 0
    for m in profile["methods"]:
        if m["module"] != module:
            continue
        group = {module}
        if m["type"]:
            owner = parse(m["type"])[0]
            assemblies(owner, group)
            type_part = mangled_type(owner)
        else:
            type_part = clean(m["namespace"])
        for a in m["method_args"]:
            assemblies(parse(a)[0], group)
        if group != {module}:
            other_groups += 1
            continue
        suffix = "<" + "__".join(mangled_type(parse(a)[0]) for a in m["method_args"]) + ">" if m["method_args"] else ""
        expected[f"{clean(module)}_{type_part}__{clean(m['name'])}{suffix}"] += 1
    compiled = collections.Counter()
    with open(map_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.rstrip().endswith("(MethodWithGCInfo)"):
                sym = line.split("|")[-1].strip().rsplit(" ", 1)[0].strip()
                if sym.startswith(clean(module) + "_"):
                    compiled[sym] += 1
    # match by key(), then without the overload number crossgen2 adds to overloaded methods
    want = collections.Counter({key(k): v for k, v in expected.items()})
    extra = collections.Counter()
    for sym, n in compiled.items():
        for _ in range(n):
            for k in (key(sym), key(without_overload(sym))):
                if want[k] > 0:
                    want[k] -= 1
                    break
            else:
                extra[sym] += 1
    missing = +want
    for name in sorted(missing):
        print(f"mibc_check: in the profile, not compiled: {name}")
    for name in sorted(extra):
        print(f"mibc_check: compiled, not in the profile: {name}")
    print(f"mibc_check: {module}: {sum(expected.values())} methods in the profile's group of {module} alone "
          f"({other_groups} in groups with other assemblies), {sum(compiled.values())} compiled, "
          f"{'equal' if not missing and not extra else 'different'}")
    return 1 if missing or extra or not expected else 0


if __name__ == "__main__":
    sys.exit(main())
