#!/usr/bin/env python3
"""test_pgo_cli - the PGO features of `mantra run` (docs/cli.md): the text dump at exit
(MANTRA_WritePGOData, exact lines; no file without data), its read-back as initial counter values
(MANTRA_ReadPGOData), --pgo-collect (window longer than the program: stopped at exit, complete)
and SIGUSR2, three times into MANTRA_PGOCollectPath with {pid} and {n} (every snapshot kept:
cumulative counts grow, deltas add up to the whole run). Traces are checked with `mantra stats --json`. Environment: MANTRA_TOOL,
MANTRA_BINARY_DIR."""
import json
import os
import signal
import subprocess
import sys
import time

MANTRA = os.environ.get("MANTRA_TOOL", "build/tools/mantra")
OUT = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "build"), "pgoflush", "cli")
os.makedirs(OUT, exist_ok=True)

PROGRAM = """.module F 5a5a5a5a-0e0f-1011-1213-141516171819
.method Loops.top int64()
.locals 1
       ldc.i8 0
       stloc 0
head:  ldloc 0
       ldc.i8 10
       bge done
       ldloc 0
       ldc.i8 1
       add
       stloc 0
       br head
done:  ldloc 0
       ret
.end
.method main int64()
       call top
       ret
.end
"""
SPIN = """.module S 6b6b6b6b-0e0f-1011-1213-141516171819
.method main int64()
.locals 1
       ldc.i8 0
       stloc 0
head:  ldloc 0
       ldc.i8 1
       add
       dup
       stloc 0
       ldc.i8 150000000
       blt head
       ldc.i8 0
       ret
.end
"""


def path(name):
    return os.path.join(OUT, name)


def env(**kw):
    e = {k: v for k, v in os.environ.items() if not k.startswith("MANTRA_") or k in ("MANTRA_BINARY_DIR",)}
    e.update(kw)
    return e


def run(args, **kw):
    return subprocess.run([MANTRA, "run"] + args, env=env(**kw), capture_output=True, text=True, timeout=120)


def stats(trace):
    r = subprocess.run([MANTRA, "stats", "--json", trace], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def fnv(data, h=0x811C9DC5):
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def wait_handler(pid, sig, timeout=30.0):
    """Waits until pid has a handler for sig (Linux: SigCgt in /proc/PID/status), else 1 s."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("SigCgt:") and int(line.split()[1], 16) & (1 << (int(sig) - 1)):
                        return
        except OSError:
            time.sleep(1.0)
            return
        time.sleep(0.01)


def main():
    prog = path("loop.masm")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    dump = path("dump.txt")
    for p in (dump, path("none.txt")):
        if os.path.exists(p):
            os.remove(p)
    # 1. the text dump at exit: exact lines; methodhash = FNV-1a(GUID bytes + token LE)
    r = run([prog], MANTRA_InterpPgo="1", MANTRA_WritePGOData="1", MANTRA_PGODataPath=dump)
    assert r.returncode == 0, r.stderr
    lines = open(dump).read().splitlines()
    guid = bytes([0x5a, 0x5a, 0x5a, 0x5a, 0x0f, 0x0e, 0x11, 0x10, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19])
    mh_top = fnv(guid + (0x06000001).to_bytes(4, "little"))
    assert lines[0] == "*** START PGO Data, max index = 2 ***", lines
    assert lines[1].startswith("@@@ codehash 0x") and lines[1].endswith(
        "methodhash 0x%08X ilSize 0x00000036 records 0x00000002" % mh_top), lines[1]
    assert lines[2:8] == ["MethodName: Loops.top", "Signature: int64()",
                          "Schema InstrumentationKind 65 ILOffset 0 Count 1 Other 0", "1",
                          "Schema InstrumentationKind 65 ILOffset 12 Count 1 Other 0", "11"], lines
    assert lines[-1] == "*** END PGO Data ***"
    # no method with data: no file at all
    r = run([prog], MANTRA_InterpPgo="0", MANTRA_WritePGOData="1", MANTRA_PGODataPath=path("none.txt"))
    assert r.returncode == 0 and not os.path.exists(path("none.txt"))
    # 2. read-back: the dump's counts are the initial values (1 + 1, 11 + 11)
    r = run([prog, "--probes"], MANTRA_InterpPgo="1", MANTRA_ReadPGOData="1", MANTRA_PGODataPath=dump)
    assert r.returncode == 0, r.stderr
    assert "probe Loops.top 0x06000001 IL_0000 2" in r.stderr and "IL_000c 22" in r.stderr, r.stderr
    # ReadPGOData is ignored when WritePGOData is set too (as in the CLR)
    r = run([prog, "--probes"], MANTRA_InterpPgo="1", MANTRA_ReadPGOData="1", MANTRA_WritePGOData="1",
            MANTRA_PGODataPath=path("rw.txt"))
    assert "IL_000c 11" in r.stderr, r.stderr
    # 3. --pgo-collect with a window longer than the program: stopped at exit, complete
    trace = path("collect.nettrace")
    r = run([prog, "--pgo-collect", trace + ":30"], MANTRA_InterpPgo="1")
    assert r.returncode == 0, r.stderr
    s = stats(trace)
    assert s["complete"], s
    by = s["by_event"]
    assert by.get("Microsoft-Windows-DotNETRuntime/298/v0") == 2, by
    assert by.get("Microsoft-Windows-DotNETRuntime/143/v2") == 2, by
    assert by.get("Microsoft-Windows-DotNETRuntime/152/v2") == 1, by
    # --pgo-deltas: accepted; the collection still holds one complete sequence per method
    r = run([prog, "--pgo-deltas", "--pgo-collect", trace], MANTRA_InterpPgo="1")
    assert r.returncode == 0, r.stderr
    assert stats(trace)["by_event"].get("Microsoft-Windows-DotNETRuntime/298/v0") == 2
    # usage errors
    r = run([prog, "--pgo-collect"])
    assert r.returncode == 2
    # 4. SIGUSR2 during a long run starts a collection into MANTRA_PGOCollectPath
    sig = path("sigusr2.nettrace")
    if os.path.exists(sig):
        os.remove(sig)
    spin = path("spin.masm")
    with open(spin, "w") as f:
        f.write(SPIN)
    p = subprocess.Popen([MANTRA, "run", spin], env=env(MANTRA_InterpPgo="1", MANTRA_PGOCollectPath=sig,
                                                         MANTRA_PGOCollectSeconds="1"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_handler(p.pid, signal.SIGUSR2)
    p.send_signal(signal.SIGUSR2)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    s = stats(sig)
    assert s["complete"], s
    assert s["by_event"].get("Microsoft-Windows-DotNETRuntime/298/v0") == 1, s
    repeated_collections()
    print("ok")
    return 0


ENDLESS = SPIN.replace("150000000", "1000000000000")  # runs until killed


def loop_count(trace):
    """The loop head's count (IL offset 12 of main) in a PGO trace, through mantra pgo --format json."""
    out = trace + ".json"
    r = subprocess.run([MANTRA, "pgo", trace, "-o", out, "--format", "json"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        methods = json.load(f)["methods"]
    assert len(methods) == 1, methods
    return next(rec["values"][0] for rec in methods[0]["records"] if rec["il_offset"] == 12)


def collect_three(program, seconds, reset, name, wait_each):
    """Three SIGUSR2 collections of one `mantra run`, into MANTRA_PGOCollectPath=OUT/NAME-{pid}-{n}:
    the three paths, in order. wait_each: wait for each trace to be complete before the next signal
    (windows one after the other), then kill the endless program; else signal three times and let
    the program end (its end stops the collections)."""
    for old in os.listdir(OUT):
        if old.startswith(name + "-"):
            os.remove(path(old))
    p = subprocess.Popen([MANTRA, "run", program],
                         env=env(MANTRA_InterpPgo="1", MANTRA_PGOCollectPath=path(name + "-{pid}-{n}.nettrace"),
                                 MANTRA_PGOCollectSeconds=str(seconds), MANTRA_PGOCollectReset=reset),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    traces = [path(f"{name}-{p.pid}-{n}.nettrace") for n in (1, 2, 3)]
    wait_handler(p.pid, signal.SIGUSR2)
    for t in traces:
        p.send_signal(signal.SIGUSR2)
        if wait_each:
            end = time.time() + 60
            while time.time() < end and not (os.path.exists(t) and stats(t)["complete"]):
                time.sleep(0.1)
        else:
            end = time.time() + 60  # its session has started once the file is there
            while time.time() < end and not os.path.exists(t):
                time.sleep(0.01)
    if wait_each:
        p.kill()
    out, err = p.communicate(timeout=120)
    assert wait_each or p.returncode == 0, err
    for t in traces:
        s = stats(t)
        assert s["complete"], (t, s)
        assert s["by_event"].get("Microsoft-Windows-DotNETRuntime/298/v0") == 1, (t, s)
    return traces


def repeated_collections():
    """Issue 30 item 4: "{pid}" and "{n}" in MANTRA_PGOCollectPath keep every snapshot. Cumulative
    collections one after the other: three traces whose loop counts grow. Delta collections
    (MANTRA_PGOCollectReset=1) that last until the program's end: their counts add up to the whole
    run's (what --pgo-collect over the whole run counts)."""
    endless = path("endless.masm")
    with open(endless, "w") as f:
        f.write(ENDLESS)
    cum = [loop_count(t) for t in collect_three(endless, 1, "", "cum", True)]
    assert 0 < cum[0] < cum[1] < cum[2], cum
    spin = path("spin.masm")
    whole = path("whole.nettrace")
    r = run([spin, "--pgo-collect", whole + ":3600"], MANTRA_InterpPgo="1")  # until the end, even under ASan
    assert r.returncode == 0, r.stderr
    total = loop_count(whole)
    deltas = [loop_count(t) for t in collect_three(spin, 3600, "1", "delta", False)]
    assert sum(deltas) == total == 150000000, (deltas, total)
    print(f"three collections: cumulative {cum}, deltas {deltas} (sum {sum(deltas)} = the whole run)")


if __name__ == "__main__":
    sys.exit(main())
