#!/usr/bin/env python3
"""images_cli.py - precompiled images through the mantra CLI (docs/image-format.md, docs/cli.md).

    images_cli.py examples     every example program, precompiled from its own mode-2 profile,
                               prints exactly its .expected; a mode-1 profile splits nothing
    images_cli.py checked      checked.masm: its never-taken error path is the cold part of
                               Examples.check (exact sizes from `mantra image --json`); a run that
                               takes it samples the cold part and both parts resolve to the method
    images_cli.py events       exact load, first-call and rundown events as the keywords ask
    images_cli.py reload       unload and reload at the same address with other code: samples and
                               addresses before the unload are the first image's, after it the second's
    images_cli.py refuse       damaged and foreign files are refused by run and image with the check
                               and offset, nothing executed
    images_cli.py perfmap      MANTRA_PerfMapEnabled 0-3: perf-PID.map and jit-PID.dump read back with the
                               published formats (jit-interface.txt, jitdump-specification.txt): one
                               entry per part of each called method, cold parts named [cold], the
                               jitdump's code bytes those of the image
    images_cli.py attach       `mantra collect -p PID` of a process already running an image, asking for a
                               start rundown (Rundown:0x40): the trace has no load event of the image's
                               methods, the start rundown (before every sample) has them with both
                               parts, and every sample resolves
    images_cli.py interop      TraceEvent (MANTRA_TE_DUMP) decodes every event of the checked and reload
                               traces as `mantra dump` does, and TraceLog resolves the samples of an
                               image's hot code as `mantra symbolize --stacks` does

Environment: MANTRA_TOOL (the mantra binary), MANTRA_BINARY_DIR (scratch under tests/images).
Exit 0 on success, 1 with the reason.
"""
import json
import os
import subprocess
import sys

MANTRA = os.environ.get("MANTRA_TOOL", "build/tools/mantra")
SCRATCH = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "build"), "tests", "images", "cli")
PROGRAMS = "examples/programs"
RUNTIME, RUNDOWN = "Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown"
# Loader | NGen | CompilationDiagnostic (R2RGetEntryPoint): the load and first-call events
LOAD_PROVIDERS = RUNTIME + ":0x2000000028:5"
SAMPLES = "Microsoft-DotNETCore-SampleProfiler:0:5"


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def mantra(*args, env=None, ok=True):
    e = dict(os.environ)
    e.pop("MANTRA_InterpPgo", None)
    e.update(env or {})
    r = subprocess.run([MANTRA] + [str(a) for a in args], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if ok and r.returncode != 0:
        raise Fail(f"mantra {' '.join(map(str, args))} exited {r.returncode}: {r.stderr.strip()}")
    return r


def path(name):
    return os.path.join(SCRATCH, name)


def precompile(program, mode=2, entry=None, args=()):
    """program's image from its own profile (a run with MANTRA_InterpPgo=mode)."""
    name = os.path.splitext(os.path.basename(program))[0] + f"-m{mode}"
    trace, prof, img = path(name + ".nettrace"), path(name + ".prof"), path(name + ".img")
    cmd = ["run", program, "--trace", trace] + (["--entry", entry] if entry else []) + list(args)
    mantra(*cmd, env={"MANTRA_InterpPgo": str(mode)})
    mantra("pgo", trace, "-o", prof)
    mantra("precompile", program, "--profile", prof, "-o", img)
    return img


def table(img):
    t = json.loads(mantra("image", "--json", img).stdout)
    check(t["format"] == "mantra", f"{img}: format {t['format']}")
    return {m["name"]: m for m in t["methods"]}


def dump(trace):
    return [json.loads(line) for line in mantra("dump", "--json", trace).stdout.splitlines() if line.strip()]


def named(events, provider, name):
    return [e for e in events if e["provider"] == provider and e["name"] == name]


def examples():
    progs = sorted(f for f in os.listdir(PROGRAMS) if f.endswith(".masm"))
    check(len(progs) >= 7, f"{len(progs)} example programs")
    for f in progs:
        program = os.path.join(PROGRAMS, f)
        want = open(os.path.join(PROGRAMS, f[:-5] + ".expected")).read()
        img = precompile(program)
        got = mantra("run", img).stdout
        check(got == want, f"{f}: the image printed {got!r}, the program {want!r}")
    # probes asked of an image: said, not silently ignored; the output is the same
    r = mantra("run", path("loop-m2.img"), "--probes", env={"MANTRA_InterpPgo": "2"})
    check(r.stdout == open(os.path.join(PROGRAMS, "loop.expected")).read(), "loop image with MANTRA_InterpPgo=2")
    check("precompiled code has no probes (MANTRA_InterpPgo=2 not used)" in r.stderr and
          "--probes prints none" in r.stderr, f"no note on probes: {r.stderr!r}")
    # mode 1 (entry and loop-head counts): whole methods, no split; every method main calls is hot
    img = precompile(os.path.join(PROGRAMS, "checked.masm"), mode=1)
    t = table(img)
    for name in ("Examples.main", "Examples.check", "Examples.work"):
        check(t[name]["cold"] is None and not t[name]["placed_cold"], f"mode 1: {name} {t[name]}")
    check(mantra("run", img).stdout == open(os.path.join(PROGRAMS, "checked.expected")).read(), "mode 1 output")
    # a method the profile never saw goes cold whole: fib.masm's fib_of is not called by main
    t = table(path("fib-m2.img"))
    check(t["Examples.fib_of"]["placed_cold"] and t["Examples.fib_of"]["cold"] is None, f"fib_of {t['Examples.fib_of']}")
    print(f"examples: {len(progs)} programs print their .expected from their images; mode 1 splits nothing")


# checked.masm's Examples.check: entry part = the test (ldarg 3, ldc.i8 9, bge 5), a br to the
# error block (5: its fall-through went cold), the valid block (ldarg 3, call 5, ret 1); cold part
# = the error block (print.s 5, ldarg 3, print.i 1, newline 1, ldc.i8 9, stloc 3; the retry loop
# 51; ldc.i8 9, ret 1)
CHECK_HOT, CHECK_COLD = 17 + 5 + 9, 22 + 51 + 10


def checked_image():
    return precompile(os.path.join(PROGRAMS, "checked.masm"))


def checked():
    img = checked_image()
    t = table(img)
    c = t["Examples.check"]
    check(c["hot"]["size"] == CHECK_HOT and c["cold"] and c["cold"]["size"] == CHECK_COLD,
          f"Examples.check: {c} (want hot {CHECK_HOT}, cold {CHECK_COLD})")
    check(c["cold"]["rva"] % 4096 == 0 and c["hot"]["rva"] >= 4096, f"cold section on its own page: {c}")
    for name in ("Examples.main", "Examples.work"):
        check(t[name]["cold"] is None, f"{name} has a cold part: {t[name]}")
    # the error path taken: samples land in the cold part, and resolve to the method
    trace = path("checked-error.nettrace")
    r = mantra("run", img, "--entry", "check", "-3", "--trace", trace, "--providers",
               f"{SAMPLES},{LOAD_PROVIDERS},{RUNDOWN}:0x128")
    check(r.stdout == "invalid input -3\n", f"output {r.stdout!r}")
    s = json.loads(mantra("symbolize", trace, "--json").stdout)
    check(s["samples"] > 20 and s["unresolved"] == 0 and s["cold"] > 0, f"samples {s}")
    rep = json.loads(mantra("report", trace, "--json").stdout)
    names = {m["name"] for m in rep["methods"]}
    check("checked-m2.img!Examples.check[cold]" in names, f"report {names}")
    # addresses of both parts, from the method's load event, resolve to Examples.check
    ev = dump(trace)
    load = [e for e in named(ev, RUNTIME, "R2RMethodLoad") if e["fields"]["MethodToken"] == 0x06000003]
    check(len(load) == 1, f"{len(load)} R2RMethodLoad of check")
    f, ts = load[0]["fields"], load[0]["timestamp"]
    hot, cold = f["HotStartAddress"], f["ColdStartAddress"]
    out = mantra("symbolize", trace, "--json", f"{hot + 5}@{ts + 1}", f"{cold + 40}@{ts + 1}",
                 f"{cold + CHECK_COLD}@{ts + 1}").stdout.splitlines()
    got = [json.loads(line) for line in out]
    check([g["method"] for g in got] == ["Examples.check", "Examples.check", None], f"resolved {got}")
    check([g["part"] for g in got] == ["hot", "cold", None], f"parts {got}")
    check(got[1]["offset"] == 40 and got[1]["token"] == "0x06000003", f"cold {got[1]}")
    print(f"checked: the error path is check's cold part ({CHECK_COLD} bytes); {s['cold']} of {s['samples']} "
          "samples in it, both parts resolve to Examples.check")


def counts(ev):
    out = {}
    for e in ev:
        k = (e["provider"].rsplit("-", 1)[-1], e["name"])
        out[k] = out.get(k, 0) + 1
    return out


def events():
    img = checked_image()
    t = table(img)
    n = len(t)
    by_token = {int(m["token"], 16): m for m in t.values()}
    # K of N methods called: check -3 calls check only; check 5 calls check and work
    for arg, called in (("-3", {0x06000003}), ("5", {0x06000003, 0x06000002})):
        trace = path(f"events{arg}.nettrace")
        mantra("run", img, "--entry", "check", arg, "--trace", trace, "--providers", LOAD_PROVIDERS)
        ev = dump(trace)
        c = counts(ev)
        k = len(called)
        for name in ("R2RMethodLoad", "R2RGetEntryPointStart"):
            check(c.get(("DotNETRuntime", name), 0) == k, f"check {arg}: {c.get(('DotNETRuntime', name))} {name}, want {k}")
        entry = named(ev, RUNTIME, "R2RGetEntryPoint")
        check(len(entry) == k and all(e["version"] == 1 for e in entry), f"R2RGetEntryPoint {entry}")
        for name in ("AssemblyLoad", "ModuleLoad", "DomainModuleLoad"):
            check(c.get(("DotNETRuntime", name), 0) == 1, f"{name}: {c.get(('DotNETRuntime', name))}")
        check(not any(e["provider"] == RUNDOWN for e in ev), "rundown events without rundown keywords")
        mod = named(ev, RUNTIME, "ModuleLoad")[0]["fields"]
        check(mod["ModuleFlags"] == 0x28 and mod["ModuleILPath"] == img, f"ModuleLoad {mod}")
        loads = named(ev, RUNTIME, "R2RMethodLoad")
        check({e["fields"]["MethodToken"] for e in loads} == called, f"methods loaded {loads}")
        bases = set()
        for e, g in zip(loads, [x for x in entry]):
            f = e["fields"]
            m = by_token[f["MethodToken"]]
            bases.add(f["HotStartAddress"] - m["hot"]["rva"])
            check(f["HotSize"] == m["hot"]["size"], f"hot size {f} {m}")
            cold = m["cold"]
            check(f["ColdSize"] == (cold["size"] if cold else 0), f"cold size {f} {m}")
            if cold:
                bases.add(f["ColdStartAddress"] - cold["rva"])
            check(g["fields"]["MethodSize"] == f["HotSize"] and g["fields"]["EntryPoint"] == f["HotStartAddress"],
                  f"R2RGetEntryPoint {g} against {e}")
            check(g["timestamp"] <= e["timestamp"], "R2RGetEntryPoint after R2RMethodLoad")
        check(len(bases) == 1, f"addresses from {len(bases)} bases: {bases}")
    # rundown as the keywords ask (check 5): Loader 0x8, Jit 0x10, NGen 0x20, End 0x100
    want = {0x128: (1, n, n), 0x118: (1, 0, 0), 0x108: (1, 0, 0), 0x120: (0, n, n), 0x28: None}
    for kw, w in want.items():
        trace = path(f"rundown-{kw:x}.nettrace")
        mantra("run", img, "--entry", "check", "5", "--trace", trace, "--providers", f"{LOAD_PROVIDERS},{RUNDOWN}:{kw:#x}")
        ev = dump(trace)
        rd = [e for e in ev if e["provider"] == RUNDOWN]
        if w is None:
            check(rd == [], f"keywords {kw:#x}: {len(rd)} rundown events without EndRundown")
            continue
        c = counts(rd)
        got = (c.get(("DotNETRuntimeRundown", "ModuleDCEnd"), 0), c.get(("DotNETRuntimeRundown", "MethodDCEndVerbose"), 0),
               c.get(("DotNETRuntimeRundown", "R2RMethodDCEnd"), 0))
        check(got == w, f"keywords {kw:#x}: ModuleDCEnd, MethodDCEndVerbose, R2RMethodDCEnd = {got}, want {w}")
        check(c.get(("DotNETRuntimeRundown", "DCEndComplete"), 0) == 1, f"keywords {kw:#x}: DCEndComplete {c}")
        for e in named(rd, RUNDOWN, "R2RMethodDCEnd"):
            f = e["fields"]
            m = by_token[f["MethodToken"]]
            check(f["HotSize"] == m["hot"]["size"] and f["ColdSize"] == (m["cold"]["size"] if m["cold"] else 0),
                  f"R2RMethodDCEnd {f} against {m}")
        for e in named(rd, RUNDOWN, "MethodDCEndVerbose"):
            f = e["fields"]
            m = by_token[f["MethodToken"]]
            check(f["MethodSize"] == m["hot"]["size"] and f["MethodFlags"] == 0, f"MethodDCEndVerbose {f}")
    print(f"events: exactly K of N={n} methods' R2RMethodLoad/R2RGetEntryPoint v1 at first call (K = 1, 2); "
          f"rundown counts for keywords {', '.join(hex(k) for k in want)}")


OTHER = """.module Other 7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6
.method Other.check int64(int64) token 0x06000001
.locals 1
        ldc.i8 25000000
        stloc 0
again:  ldloc 0
        ldc.i8 1
        sub
        dup
        stloc 0
        ldc.i8 0
        bgt again
        ldc.i8 2
        ret
.end
"""


def reload():
    img = checked_image()
    other_src = path("other.masm")
    with open(other_src, "w") as f:
        f.write(OTHER)
    other = precompile(other_src, entry="check", args=("1",))
    trace = path("reload.nettrace")
    r = mantra("run", img, "--entry", "check", "-3", "--reload", other, "--trace", trace, "--providers",
               f"{SAMPLES},{LOAD_PROVIDERS},{RUNDOWN}:0x128")
    check("reloaded at the same address" in r.stderr, f"stderr {r.stderr!r}")
    ev = dump(trace)
    unload = named(ev, RUNTIME, "ModuleUnload")
    check(len(unload) == 1, f"{len(unload)} ModuleUnload")
    t_unload = unload[0]["timestamp"]
    mu = named(ev, RUNTIME, "MethodUnloadVerbose")
    check(len(mu) == 1 and mu[0]["fields"]["MethodName"] == "check", f"MethodUnloadVerbose {mu}")
    loads = named(ev, RUNTIME, "R2RMethodLoad")
    check(len(loads) == 2, f"{len(loads)} R2RMethodLoad")
    first, second = loads[0]["fields"], loads[1]["fields"]
    # the first image's check, the second's Other.check (both at the image's base: the same address)
    a, b, b_size = first["HotStartAddress"], second["HotStartAddress"], second["HotSize"]
    check(b == a - table(img)["Examples.check"]["hot"]["rva"] + 4096, f"second image's base {b:#x}, first {a:#x}")
    stacks = [json.loads(x) for x in mantra("symbolize", trace, "--stacks", "--json").stdout.splitlines()]
    samples = [x for x in stacks if x["name"] == "ThreadSample"]
    early = [s["frames"][0] for s in samples if s["timestamp"] < t_unload]
    late = [s["frames"][0] for s in samples if s["timestamp"] > t_unload]
    check(early and all(f.startswith("checked-m2.img!Examples.check") for f in early), f"before the unload: {set(early)}")
    check(late and all(f.startswith("other-m2.img!Other.check") for f in late), f"after the reload: {set(late)}")
    # one address at two times: the first image's check, then never the unloaded method again
    t1, t2 = loads[0]["timestamp"] + 1, loads[1]["timestamp"] + 1
    out = [json.loads(x) for x in mantra("symbolize", trace, "--json", f"{a}@{t1}", f"{a}@{t2}", f"{b}@{t2}").stdout.splitlines()]
    check(out[0]["method"] == "Examples.check", f"{a:#x} before the unload: {out[0]}")
    want = "Other.check" if b <= a < b + b_size else None
    check(out[1]["method"] == want and out[2]["method"] == "Other.check", f"{a:#x}, {b:#x} after the reload: {out[1:]}")
    print(f"reload: {len(early)} samples before the unload in the first image, {len(late)} after it in the second, "
          "at the same address")
    # the reloaded image's entry takes a double where the first's took an int64: ARGS are read by
    # the reloaded entry's own types (3 as 3.0, not the int64's bits)
    progs = {"int": "int64", "dbl": "double"}
    imgs = {}
    for k, ty in progs.items():
        src = path(f"ty_{k}.masm")
        with open(src, "w") as f:
            f.write(f".module Ty{k} 11111111-2222-4333-8444-55555555555{len(k)}\n.method T.show void({ty})\n"
                    f"        ldarg 0\n        print.{'i' if ty == 'int64' else 'r'}\n        newline\n"
                    "        ret\n.end\n")
        imgs[k] = precompile(src, entry="show", args=("3",))
    r = mantra("run", imgs["int"], "--entry", "show", "3", "--reload", imgs["dbl"])
    check(r.stdout == "3\n3\n", f"reload across argument types printed {r.stdout!r}")


def refuse():
    img = checked_image()
    data = open(img, "rb").read()
    cases = {
        "truncated.img": (data[:len(data) // 2], "offset 16: truncated: the header says"),
        "magic.img": (b"MANTRAIX" + data[8:], "is not"),  # not told an image: assembled as a program
        "version.img": (data[:8] + b"\x07" + data[9:], "offset 8: image format version 7.0"),
        "damaged.img": (data[:5000] + bytes([data[5000] ^ 1]) + data[5001:], "offset 24: checksum mismatch"),
    }
    for name, (blob, want) in cases.items():
        p = path(name)
        with open(p, "wb") as f:
            f.write(blob)
        r = mantra("run", p, ok=False)
        check(r.returncode == 1 and r.stdout == "", f"{name}: run exited {r.returncode}, printed {r.stdout!r}")
        if name != "magic.img":
            check(want in r.stderr, f"{name}: run said {r.stderr!r}, want {want!r}")
            r = mantra("image", "--json", p, ok=False)
            check(r.returncode == 1 and want in r.stderr, f"{name}: image said {r.stderr!r}")
    # a program without a method: refused (its assembly says so; an image holds at least one)
    empty = path("empty.masm")
    with open(empty, "w") as f:
        f.write(".module Empty 11111111-2222-4333-8444-555555555555\n")
    r = mantra("precompile", empty, "--profile", empty, "-o", path("empty.img"), ok=False)
    check(r.returncode == 1 and "error: no methods in the module" in r.stderr and not os.path.exists(path("empty.img")),
          f"empty program: precompile exited {r.returncode}: {r.stderr!r}")
    print(f"refuse: {len(cases)} damaged or foreign files refused with the check and offset, nothing run")


def read_perf_map(p):
    """perf-PID.map: "START SIZE name" per line, START and SIZE hex without 0x."""
    out = []
    for line in open(p).read().splitlines():
        start, size, name = line.split(" ", 2)
        check(not start.startswith("0x") and not size.startswith("0x"), f"perf map line {line!r}: a 0x prefix")
        out.append((int(start, 16), int(size, 16), name))
    return out


def read_jitdump(p):
    """jit-PID.dump: the header, then records; JIT_CODE_LOAD (0) records as (addr, size, name, code)."""
    import struct
    b = open(p, "rb").read()
    magic, version, hsize, mach, _pad, pid, _ts, flags = struct.unpack_from("<IIIIIIQQ", b, 0)
    check(magic == 0x4A695444 and version == 1 and hsize == 40 and flags == 0, f"jitdump header {magic:#x} {version} {hsize}")
    check(mach in (62, 183, 3, 40, 243), f"jitdump e_machine {mach}")
    out, at, index = [], hsize, 0
    while at < len(b):
        rid, total, _ts = struct.unpack_from("<IIQ", b, at)
        check(total >= 16 and at + total <= len(b), f"jitdump record at {at}: size {total}")
        if rid == 0:
            rpid, _tid, vma, addr, size, code_index = struct.unpack_from("<IIQQQQ", b, at + 16)
            check(rpid == pid and vma == addr and code_index == index, f"JIT_CODE_LOAD at {at}")
            end = b.index(b"\0", at + 56)
            name = b[at + 56:end].decode()
            code = b[end + 1:at + total]
            check(len(code) == size, f"{name}: {len(code)} code bytes, size {size}")
            out.append((addr, size, name, code))
            index += 1
        at += total
    return pid, out


def perfmap():
    img = checked_image()
    t = table(img)
    data = open(img, "rb").read()
    for mode, files in (("1", {"map", "dump"}), ("2", {"dump"}), ("3", {"map"}), ("0", set())):
        d = path(f"perf{mode}")
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        trace = path(f"perf{mode}.nettrace")
        mantra("run", img, "--entry", "check", "5", "--trace", trace, "--providers", LOAD_PROVIDERS,
               env={"MANTRA_PerfMapEnabled": mode, "MANTRA_PerfMapJitDumpPath": d})
        names = os.listdir(d)
        got = {("map" if n.startswith("perf-") else "dump") for n in names}
        check(got == files, f"mode {mode}: files {names}")
        # what each method's first call loaded: R2RMethodLoad, image-relative through its hot part
        want = []
        for e in named(dump(trace), RUNTIME, "R2RMethodLoad"):
            f = e["fields"]
            m = [x for x in t.values() if int(x["token"], 16) == f["MethodToken"]][0]
            base = f["HotStartAddress"] - m["hot"]["rva"]
            want.append((f["HotStartAddress"], f["HotSize"], m["name"], base, m["hot"]["rva"]))
            if f["ColdSize"]:
                want.append((f["ColdStartAddress"], f["ColdSize"], m["name"] + "[cold]", base, m["cold"]["rva"]))
        for n in names:
            if n.startswith("perf-"):
                entries = read_perf_map(os.path.join(d, n))
                check([e[:3] for e in entries] == [w[:3] for w in want], f"perf map {entries} != {want}")
            else:
                pid, entries = read_jitdump(os.path.join(d, n))
                check(n == f"jit-{pid}.dump", f"jitdump file {n}, pid {pid}")
                check([e[:3] for e in entries] == [w[:3] for w in want], f"jitdump {[e[:3] for e in entries]} != {want}")
                for (addr, size, name, code), w in zip(entries, want):
                    check(code == data[w[4]:w[4] + size], f"jitdump {name}: code bytes differ from the image's")
        if mode == "1":
            check(any(w[2].endswith("[cold]") for w in want), "no cold part loaded")
    print(f"perfmap: modes 0-3 write the files they name; {len(want)} entries (cold included) read back, "
          "jitdump code equal to the image's")


SPIN = """.module Spin 2a3b4c5d-6e7f-4081-9213-a4b5c6d7e8f9
.method Spin.run int64(int64) token 0x06000001
.locals 1
again:  ldloc 0
        ldc.i8 1
        add
        dup
        stloc 0
        ldarg 0
        blt again
        ldloc 0
        ret
.end
"""


def attach():
    import tempfile
    import time
    src = path("spin.masm")
    with open(src, "w") as f:
        f.write(SPIN)
    img = precompile(src, entry="run", args=("1000",))
    tmp = tempfile.mkdtemp(prefix="mantra-img-")  # the diagnostics socket (sun_path: short paths)
    env = dict(os.environ, TMPDIR=tmp)
    env.pop("MANTRA_InterpPgo", None)
    proc = subprocess.Popen([MANTRA, "run", img, "--entry", "run", "100000000000"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if any(f.startswith(f"dotnet-diagnostic-{proc.pid}-") for f in os.listdir(tmp)):
                break
            time.sleep(0.05)
        time.sleep(0.3)  # the image is loaded and Spin.run called well before the session starts
        trace = path("attach.nettrace")
        r = subprocess.run([MANTRA, "collect", "-p", str(proc.pid), "--providers",
                            f"{SAMPLES},{LOAD_PROVIDERS},{RUNDOWN}:0x68", "--duration", "1", "-o", trace],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        check(r.returncode == 0, f"collect: {r.stderr}")
    finally:
        proc.kill()
        proc.wait()
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        os.rmdir(tmp)
    ev = dump(trace)
    check(not named(ev, RUNTIME, "R2RMethodLoad") and not named(ev, RUNTIME, "ModuleLoad"),
          "load events in a trace begun after the load")
    start = named(ev, RUNDOWN, "R2RMethodDCStart")
    check(len(start) == 1 and len(named(ev, RUNDOWN, "MethodDCStartVerbose")) == 1, f"start rundown: {len(start)}")
    check(named(ev, RUNDOWN, "ModuleDCStart")[0]["fields"]["ModuleILPath"] == img, "ModuleDCStart path")
    first_sample = min(e["timestamp"] for e in named(ev, "Microsoft-DotNETCore-SampleProfiler", "ThreadSample"))
    check(start[0]["timestamp"] < first_sample, "the start rundown comes after a sample")
    sm = json.loads(mantra("symbolize", trace, "--json").stdout)
    check(sm["samples"] > 50 and sm["resolved"] == sm["frames"] and sm["unresolved"] == 0, f"samples {sm}")
    stacks = [json.loads(x) for x in mantra("symbolize", trace, "--stacks", "--json").stdout.splitlines()]
    leaves = {x["frames"][0] for x in stacks if x["name"] == "ThreadSample"}
    check(leaves == {"spin-m2.img!Spin.run(int64)"}, f"leaves {leaves}")
    f = start[0]["fields"]
    check(f["HotSize"] > 0 and f["MethodToken"] == 0x06000001, f"R2RMethodDCStart {f}")
    print(f"attach: {sm['samples']} samples of an image loaded before the session, all resolved; its start "
          "rundown came first")


def te(*args, out=None):
    cmd = os.environ["MANTRA_TE_DUMP"].split() + [str(a) for a in args]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, MANTRA_BINARY_DIR=SCRATCH))
    if out:
        with open(out, "w") as f:
            f.write(r.stdout)
    return r


def interop():
    check(os.environ.get("MANTRA_TE_DUMP"), "MANTRA_TE_DUMP is not set")
    checked()
    reload()
    for name in ("checked-error.nettrace", "reload.nettrace"):
        trace = path(name)
        ours = path(name + ".mantra.jsonl")
        with open(ours, "w") as f:
            f.write(mantra("dump", "--json", "--sorted", trace).stdout)
        r = te("compare", trace, ours, "--max", "20")
        check(r.returncode == 0, f"{name}: TraceEvent compare: {r.stdout[-2000:]} {r.stderr[-1000:]}")
        print(f"interop: {name}: {r.stdout.strip().splitlines()[-1] if r.stdout.strip() else 'no difference'}")
    # TraceLog on samples in an image's hot code (its rundown's MethodDCEndVerbose: hot parts)
    other = path("other-m2.img")
    trace = path("hot.nettrace")
    mantra("run", other, "--entry", "check", "1", "--trace", trace, "--providers",
           f"{SAMPLES},{LOAD_PROVIDERS},{RUNDOWN}:0x128")
    with open(path("hot.mantra"), "w") as f:
        f.write(mantra("symbolize", "--stacks", trace).stdout)
    r = te("stacks", trace, out=path("hot.tracelog"))
    check(r.returncode == 0, f"TraceEventDump stacks: {r.stderr[-1000:]}")
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, os.path.join(here, "..", "interop", "symbolize_compare.py"), path("hot.mantra"),
                        path("hot.tracelog"), "image-hot", "20"], stdout=subprocess.PIPE, text=True)
    print(r.stdout.strip())
    check(r.returncode == 0, "TraceLog and mantra differ on the image's hot samples")


def main():
    global SCRATCH
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    SCRATCH = os.path.join(SCRATCH, what or "none")  # one folder per check: they run in parallel
    os.makedirs(SCRATCH, exist_ok=True)
    fn = {"examples": examples, "checked": checked, "events": events, "reload": reload, "refuse": refuse,
          "interop": interop, "perfmap": perfmap, "attach": attach}.get(what)
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
