#!/usr/bin/env python3
"""embedded_check.py - the PGO data crossgen2 embedded in a ReadyToRun image (`--embed-pgo-data`),
read back by `mantra pgo IMAGE.dll --format json`, against the profile the image was compiled from
(tests/interop/pgo-mibc.sh).

    embedded_check.py PROFILE.json EMBEDDED.json MODULE [MIN_TYPES]

crossgen2 embeds every method of MODULE that the profile gives data for
(ReadyToRunCodegenNodeFactory: ProfileDataManager.GetMethodsForModuleDesc), with its records as
they are, except that each handle histogram (a HandleHistogramIntCount or LongCount record followed
by HandleHistogramTypes or Methods) becomes one GetLikelyClass or GetLikelyMethod record
(CorInfoImpl.ConvertTypeHandleHistogramsToCompactTypeHistogramFormat): ILOffset the count's, Count
1, Other = likelihood | (1 << 8), the most likely type or method as the JIT's getLikelyClasses
computes it with one result (likelyclass.cpp: distinct handles counted in order of first appearance;
one: 100; two: the first unless the second has more, 100 * count / total; more: the most frequent,
100 * count / total, plus the rounding error when no handle is unknown; an unknown handle is never
chosen). crossgen2 10.0.12 hands the JIT a histogram's NULL entries (ldc.i4.0 in a .mibc, as
dotnet-pgo writes them too) as an unknown handle, not as 0: observed by compiling a profile whose
call site saw one type in one of 32 slots (left out) and the same with the type in all 32 (kept);
NULL and UNKNOWN entries are therefore one unknown handle here. The record is left out
when the JIT returns nothing, or when the type is outside MODULE's version bubble (here: its assembly is
not MODULE, or a type argument is neither of MODULE nor a primitive); a method stays unknown in the
image (TypeToInt encodes only types). Everything else must be equal: methods, record order, kinds,
IL offsets, counts, others, values and type names. With MIN_TYPES, at least that many GetLikelyClass
records must name their type (read from the image's import cells). Prints one summary line; exit 1
on a difference.
"""
import collections
import json
import sys

PRIMITIVES = {"System." + n for n in ("Boolean", "Char", "SByte", "Byte", "Int16", "UInt16", "Int32", "UInt32",
                                      "Int64", "UInt64", "IntPtr", "UIntPtr", "Single", "Double", "String",
                                      "Object")}


def split_qualified(name):
    """'Ns.T`1[[A, AsmA]], Asm, Version=...' -> ('Ns.T`1', ['A, AsmA'], 'Asm')."""
    depth, i = 0, 0
    base_end, args, arg_start = None, [], None
    while i < len(name):
        c = name[i]
        if c == "[":
            if depth == 0 and base_end is None:
                base_end = i
            depth += 1
            if depth == 2:
                arg_start = i + 1
        elif c == "]":
            if depth == 2:
                args.append(name[arg_start:i])
            depth -= 1
        elif c == "," and depth == 0:
            return name[:base_end if base_end is not None else i], args, name[i + 1:].split(",")[0].strip()
        i += 1
    return name, args, ""


def versions_with(name, module):
    base, args, assembly = split_qualified(name)
    if assembly != module:
        return False
    for a in args:
        b, _, asm = split_qualified(a)
        if not (b in PRIMITIVES or versions_with(a, module)):
            return False
    return True


UNKNOWN = "?"  # NULL and UNKNOWN entries: one unknown handle (see the module's doc)


def likely(values):
    """getLikelyClasses with one result over a histogram's entries as crossgen2 hands them to it:
    [(handle, likelihood)] alternatives (several only where the JIT's unstable sort may pick any of
    tied handles), or [] when it returns nothing."""
    seen = [UNKNOWN if v in ("NULL", "UNKNOWN") else v for v in values]
    counts = collections.OrderedDict()
    for v in seen:
        counts[v] = counts.get(v, 0) + 1
    items, total = list(counts.items()), len(seen)
    if not items:
        return []
    if len(items) == 1:
        return [] if items[0][0] == UNKNOWN else [(items[0][0], 100)]
    if len(items) == 2:
        (h0, c0), (h1, c1) = items
        if c0 >= c1 and h0 != UNKNOWN:
            return [(h0, 100 * c0 // total)]
        return [] if h1 == UNKNOWN else [(h1, 100 * c1 // total)]
    known = [(h, c) for h, c in items if h != UNKNOWN]
    if not known:
        return []
    top = max(c for _, c in known)
    # the rounding error goes to the first when there is no unknown handle
    like = 100 * top // total if len(known) < len(items) else 100
    return [(h, like) for h, c in known if c == top]


def expected_records(records, module):
    """The records crossgen2 embeds: a list of alternatives per position (all but histograms have one)."""
    out, i = [], 0
    while i < len(records):
        r = records[i]
        nxt = records[i + 1] if i + 1 < len(records) else None
        if (r["kind_name"] in ("HandleHistogramIntCount", "HandleHistogramLongCount") and r["count"] == 1 and nxt
                and nxt["kind_name"] in ("HandleHistogramTypes", "HandleHistogramMethods")):
            is_type = nxt["kind_name"] == "HandleHistogramTypes"
            alts = []
            for handle, likelihood in likely(nxt["values"]):
                if is_type and not versions_with(handle, module):
                    continue
                alts.append({"kind_name": "GetLikelyClass" if is_type else "GetLikelyMethod",
                             "il_offset": r["il_offset"], "count": 1, "other": likelihood | (1 << 8),
                             "values": [handle if is_type else "UNKNOWN"]})
            if alts:
                out.append(alts)
            i += 2
            continue
        out.append([{k: r[k] for k in ("kind_name", "il_offset", "count", "other", "values")}])
        i += 1
    return out


def key(m):
    return (m["namespace"], m["name"], m["signature"], tuple(m.get("method_args") or ()))


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    min_types = int(sys.argv[4]) if len(sys.argv) == 5 else 0
    profile, embedded, module = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
    want = {key(m): m for m in profile["methods"] if m["module"] == module and m["records"]}
    got = {key(m): m for m in embedded["methods"]}
    problems = []
    for k in sorted(set(want) - set(got)):
        problems.append(f"not embedded: {k[0]}.{k[1]} {k[2]}")
    for k in sorted(set(got) - set(want)):
        problems.append(f"embedded but not in the profile: {k[0]}.{k[1]} {k[2]}")
    records = likely_records = dropped = 0
    for k in sorted(set(want) & set(got)):
        exp = expected_records(want[k]["records"], module)
        have = [{f: r[f] for f in ("kind_name", "il_offset", "count", "other", "values")} for r in got[k]["records"]]
        hist = sum(1 for r in want[k]["records"] if r["kind_name"] in ("HandleHistogramTypes", "HandleHistogramMethods"))
        likely_records += sum(1 for r in have if r["kind_name"].startswith("GetLikely"))
        dropped += hist - sum(1 for alts in exp if alts[0]["kind_name"].startswith("GetLikely"))
        if len(exp) != len(have) or any(h not in alts for h, alts in zip(have, exp)):
            first = next((i for i, (h, alts) in enumerate(zip(have, exp)) if h not in alts), min(len(exp), len(have)))
            problems.append(f"{k[0]}.{k[1]}: {len(have)} records embedded, {len(exp)} expected; first difference at "
                            f"record {first}: embedded {have[first] if first < len(have) else None}, expected "
                            f"{exp[first] if first < len(exp) else None}")
        records += len(have)
    named = sum(1 for m in got.values() for r in m["records"]
                if r["kind_name"] == "GetLikelyClass" and r["values"] and r["values"][0] not in ("UNKNOWN", "NULL"))
    if named < min_types:
        problems.append(f"{named} GetLikelyClass records name their type, {min_types} expected")
    for p in problems[:10]:
        print("embedded_check: " + p)
    print(f"embedded_check: {len(got)} methods embedded, {len(want)} in the profile's {module}; {records} records "
          f"({likely_records} likely-class/method records from histograms, {named} naming a type of the image, "
          f"{dropped} histograms left out as crossgen2 leaves them out); {'equal' if not problems else f'{len(problems)} differences'}")
    return 0 if not problems and want else 1


if __name__ == "__main__":
    sys.exit(main())
