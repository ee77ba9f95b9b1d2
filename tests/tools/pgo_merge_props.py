#!/usr/bin/env python3
"""pgo_merge_props.py - properties of `mantra pgo`'s merge and of its .mibc on generated profiles
(issue 30 item 3).

    pgo_merge_props.py MANTRA PGO_TEST_ASSEMBLY DOTNET_DEFS_H OUTDIR

Profiles are generated in the JSON format (`mantra pgo --format json`) from a fixed seed: methods
M0.. of Ns.C in an assembly written by PGO_TEST_ASSEMBLY (mantra's metadata writer), with records
of every instrumentation kind the manifest declares (read from DOTNET_DEFS_H's MANTRA_PGO_KINDS,
but None, which ends a record stream): counts, handle histograms (type and method names of the
assembly, NULL, UNKNOWN), value histograms, likely class/method, Version, NumRuns, bare element
types. Three profiles A, B, C share some methods (the same records, or other records and
conflicting ones) and have methods of their own. Checked, exactly:

  commutative   A+B and B+A hold the same methods with the same records and values
  associative   (A+B)+C and A+(B+C) the same, through files (each merge written as JSON, read back)
  round trip    A written as text directly, and A written as a .mibc (-r the assembly) and that
                .mibc written as text: the same bytes (ilSize is 0 in generated profiles: a .mibc
                carries none)
  bounded       the peak memory of merging 1,000 copies of a profile is within 8 MB of merging 10
                (each input is read, merged and freed; a merged histogram keeps each distinct entry
                once with a weight)

Prints one line per property; exit 1 on the first that does not hold.
"""
import json
import os
import random
import re
import resource
import subprocess
import sys

APP = ", app, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
METHODS = 40


def kinds(defs_h):
    with open(defs_h, encoding="utf-8") as f:
        text = f.read()
    out = {}
    for name, value, size in re.findall(r"X\((\w+), (0x[0-9a-f]+), (-?\d+)\)", text):
        if name != "None":
            out[name] = (int(value, 16), int(size))
    return out


def values_for(rng, kind, count):
    elem = kind & 0xF
    if elem == 1:
        return [rng.choice([0, 1, 7, 1000, 2**31, 2**32 - 1, rng.randrange(2**32)]) for _ in range(count)]
    if elem == 2:
        return [rng.choice([0, 3, 2**40, 2**64 - 1, rng.randrange(2**64)]) for _ in range(count)]
    if elem == 3:
        return [rng.choice(["Ns.C" + APP, "Ns.D" + APP, "NULL", "UNKNOWN"]) for _ in range(count)]
    if elem == 4:
        return [rng.choice([f"M{rng.randrange(METHODS)}|@|Ns.C" + APP, "NULL", "UNKNOWN"]) for _ in range(count)]
    return None


def records(rng, ks, salt):
    """Records of one method: every kind once at its own IL offset (the runtime's layout: one record
    per (ILOffset, kind)), in a shuffled order; Version and NumRuns sometimes."""
    recs = []
    for i, (name, (kind, size)) in enumerate(sorted(ks.items())):
        if name in ("Version", "NumRuns"):
            if rng.random() < 0.5:
                recs.append({"kind": kind, "il_offset": 0, "count": 1, "other": rng.randrange(1, 5)})
            continue
        il = 10 * i + salt % 3  # a salt that moves some records: they then match nothing
        count = 8 if name in ("HandleHistogramTypes", "ValueHistogram") else \
            4 if name == "HandleHistogramMethods" else 2 if name in ("TypeHandle", "MethodHandle", "FourByte") else 1
        rec = {"kind": kind, "il_offset": il, "count": count, "other": 12 if name.startswith("Edge") else 0}
        if size != 0:
            vals = values_for(rng, kind, count)
            if name == "ValueHistogram":
                vals = [rng.randrange(4) for _ in range(count)]
            rec["values"] = vals
        recs.append(rec)
    rng.shuffle(recs)
    return recs


def method(i, assembly, recs):
    return {"module": "app", "module_path": assembly, "pdb_guid": "00000000-0000-0000-0000-000000000000",
            "token": 0x06000001 + i, "namespace": "Ns.C", "name": f"M{i}", "signature": "void  ()",
            "il_size": 0, "runs": 1, "type": "Ns.C" + APP, "method_args": [], "records": recs}


def profile(seed, assembly, ks, methods):
    rng = random.Random(seed)
    out = []
    for i in methods:
        # a method shared by profiles has, by i % 3: the same records; records at the same IL offsets
        # with other values (counts to sum, histograms to join, conflicts to resolve); records at other
        # IL offsets (kept side by side)
        r = random.Random(i * 7919 + (0 if i % 3 == 0 else seed))
        out.append(method(i, assembly, records(r, ks, seed if i % 3 == 2 else 0)))
    rng.shuffle(out)
    return {"methods": out}


def write(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def pgo(mantra, *args):
    r = subprocess.run([mantra, "pgo", *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"pgo_merge_props: mantra pgo {' '.join(args)} failed:\n{r.stderr}")
    return r.stderr


def methods_of(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return {(m["module"], m["token"], m["name"]): m["records"] for m in doc["methods"]}


def same(a, b):
    return methods_of(a) == methods_of(b)


def peak_rss_kb(mantra, args):
    """The peak resident memory of one `mantra pgo` run (a child of a fresh Python, so that
    RUSAGE_CHILDREN is its own)."""
    code = ("import resource,subprocess,sys;"
            "subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    # an AddressSanitizer build keeps freed memory in quarantine (256 MB by default): none for this run
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0:"
               "thread_local_quarantine_size_kb=0")
    r = subprocess.run([sys.executable, "-c", code, mantra, "pgo", *args], capture_output=True, text=True, check=True,
                       env=env)
    return int(r.stdout.strip())


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    mantra, make_assembly, defs_h, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    assembly = os.path.join(out, "app.dll")
    subprocess.run([make_assembly, assembly, str(METHODS)], check=True)
    ks = kinds(defs_h)
    if len(ks) < 15:
        sys.exit(f"pgo_merge_props: {defs_h}: only {len(ks)} kinds")
    p = {n: os.path.join(out, n) for n in ("A.json", "B.json", "C.json")}
    write(p["A.json"], profile(1, assembly, ks, range(0, 30)))
    write(p["B.json"], profile(2, assembly, ks, range(10, 40)))
    write(p["C.json"], profile(3, assembly, ks, range(5, 35, 2)))
    j = lambda n: os.path.join(out, n)
    status = 0

    pgo(mantra, p["A.json"], p["B.json"], "-o", j("AB.json"), "--format", "json")
    err = pgo(mantra, p["B.json"], p["A.json"], "-o", j("BA.json"), "--format", "json")
    conflicts = re.search(r"(\d+) merge conflicts", err).group(1)
    ok = same(j("AB.json"), j("BA.json"))
    print(f"pgo_merge_props: commutative: A+B {'==' if ok else '!='} B+A "
          f"({len(methods_of(j('AB.json')))} methods, {len(ks)} kinds, {conflicts} conflicts resolved)")
    status |= not ok

    pgo(mantra, j("AB.json"), p["C.json"], "-o", j("AB_C.json"), "--format", "json")
    pgo(mantra, p["B.json"], p["C.json"], "-o", j("BC.json"), "--format", "json")
    pgo(mantra, p["A.json"], j("BC.json"), "-o", j("A_BC.json"), "--format", "json")
    ok = same(j("AB_C.json"), j("A_BC.json"))
    print(f"pgo_merge_props: associative: (A+B)+C {'==' if ok else '!='} A+(B+C)")
    status |= not ok

    pgo(mantra, p["A.json"], "-o", j("A.txt"))
    pgo(mantra, p["A.json"], "-r", assembly, "-o", j("A.mibc"), "--format", "mibc")
    pgo(mantra, j("A.mibc"), "-o", j("A.mibc.txt"))
    with open(j("A.txt"), "rb") as f1, open(j("A.mibc.txt"), "rb") as f2:
        a, b = f1.read(), f2.read()
    ok = a == b
    print(f"pgo_merge_props: round trip: json -> text {'==' if ok else '!='} json -> mibc -> text "
          f"({a.count(b'@@@')} methods, {len(a)} bytes)")
    status |= not ok

    ten = peak_rss_kb(mantra, [p["A.json"]] * 10 + ["-o", os.devnull, "--format", "json"])
    thousand = peak_rss_kb(mantra, [p["A.json"]] * 1000 + ["-o", os.devnull, "--format", "json"])
    ok = thousand <= ten + 8 * 1024
    print(f"pgo_merge_props: bounded: peak memory merging 1,000 profiles {thousand} KB, 10 profiles {ten} KB "
          f"({'within' if ok else 'over'} the 8 MB bound)")
    status |= not ok
    return status


if __name__ == "__main__":
    sys.exit(main())
