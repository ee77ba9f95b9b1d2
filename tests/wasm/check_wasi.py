#!/usr/bin/env python3
"""check_wasi.py CHECK - mantra's WASI build (build-wasm/tools/mantra.wasm) under Node's WASI.

Each CHECK is one CTest test (tests/wasm/CMakeLists.txt). Environment: MANTRA_NODE (node),
MANTRA_WASM_CLI (mantra.wasm), MANTRA_NATIVE_CLI (the native mantra, used to read traces),
MANTRA_BINARY_DIR (scratch space), MANTRA_TE_DUMP (the TraceEvent harness, tests/interop), and
MANTRA_REQUIRE_INTEROP=1 makes a missing node or mantra.wasm a failure instead of a skip.

  emit-interop    `mantra.wasm emit` writes a trace that TraceEvent reads event for event as
                  `mantra dump --json --sorted` does; the header says 4-byte pointers, and so does
                  TraceEvent
  run-interop     an interpreted program (examples/programs/loop.masm) runs under Node with its
                  expected output and a trace that TraceEvent reads as mantra does
  cap-drained     a 1 MB cap and a trace more than 20 times larger with nothing dropped: the loop
                  pumped the drain during the run
  no-pump         a loop that never pumps: the events that fit under the cap, the rest counted as
                  dropped (by the session and by the reader's sequence numbers), and the end tag
  block-refused   Block mode needs a drain thread: a clear error, exit status 1
  startup-env     MANTRA_EnableEventPipe=1 through the WASI environment starts a session whose
                  trace is complete
  image-interop   `mantra.wasm precompile` writes the same image bytes as the native mantra from the
                  same profile; `mantra.wasm run IMAGE` (read into memory: WASI maps nothing) prints
                  the program's output and writes the image's load and first-call events, which
                  TraceEvent reads as mantra does
"""
import json
import os
import shlex
import subprocess
import sys

SRC = os.environ.get("MANTRA_SOURCE_DIR", os.getcwd())
RUNNER = os.path.join(SRC, "tools", "wasm", "mantra-wasi.mjs")


def skip_or_fail(reason):
    if os.environ.get("MANTRA_REQUIRE_INTEROP") == "1":
        print(f"FAIL: tests/wasm: required (MANTRA_REQUIRE_INTEROP=1) but cannot run: {reason}")
        sys.exit(1)
    print(f"SKIP: tests/wasm: WASI checks not run: {reason} (set MANTRA_REQUIRE_INTEROP=1 to make this fail)")
    sys.exit(0)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


NODE = os.environ.get("MANTRA_NODE", "")
WASM = os.environ.get("MANTRA_WASM_CLI", "")
NATIVE = os.environ.get("MANTRA_NATIVE_CLI", "")
SCRATCH = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "/tmp"), "wasm-checks")


def wasi(args, env=None, dirs=()):
    """Runs mantra.wasm ARGS under Node with SCRATCH (and dirs) preopened at the same paths."""
    cmd = [NODE, RUNNER, "--dir", SCRATCH]
    for d in dirs:
        cmd += ["--dir", d]
    for k, v in (env or {}).items():
        cmd += ["--env", f"{k}={v}"]
    cmd += [WASM] + args
    e = {k: v for k, v in os.environ.items() if not k.startswith("MANTRA_") or k in ("MANTRA_REQUIRE_INTEROP",)}
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=600)


def native(args):
    return subprocess.run([NATIVE] + args, capture_output=True, text=True, timeout=600)


def stats(trace):
    r = native(["stats", "--json", trace])
    if r.returncode != 0:
        fail(f"mantra stats {trace}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def emit_json(r, what):
    if r.returncode != 0:
        fail(f"{what}: exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def te_compare(trace):
    """TraceEvent against `mantra dump --json --sorted` (tests/interop/compare-mantra.sh)."""
    te = os.environ.get("MANTRA_TE_DUMP", "")
    if not te:
        skip_or_fail("MANTRA_TE_DUMP is not set (no dotnet: the TraceEvent harness is not built)")
    ours = trace + ".mantra.jsonl"
    d = native(["dump", "--json", "--sorted", trace])
    if d.returncode != 0:
        fail(f"mantra dump {trace}: exit {d.returncode}: {d.stderr}")
    with open(ours, "w", encoding="utf-8") as f:
        f.write(d.stdout)
    c = subprocess.run(shlex.split(te) + ["compare", trace, ours, "--max", "20"], capture_output=True, text=True,
                       timeout=600)
    print(c.stdout.strip())
    if c.returncode != 0:
        fail(f"TraceEvent disagrees with mantra dump on {trace}:\n{c.stderr}")
    s = subprocess.run(shlex.split(te) + ["stats", trace], capture_output=True, text=True, timeout=600)
    if s.returncode != 0:
        fail(f"TraceEvent stats {trace}: {s.stderr}")
    return json.loads(s.stdout)


def check_emit_interop():
    trace = os.path.join(SCRATCH, "emit.nettrace")
    out = emit_json(wasi(["emit", "--events", "20000", "--trace", trace]), "mantra.wasm emit")
    s = out["sessions"][0]
    if (out["threads"], s["attempted"], s["written"], s["dropped"]) != (1, 20001, 20001, 0):
        fail(f"emit counts: {out}")
    st = stats(trace)
    if (st["complete"], st["pointer_size"], st["events"], st["dropped"]) != (True, 4, 20001, 0):
        fail(f"mantra stats: {st}")
    # thread 0, i = 0..19999: i % 64 == 1, 2, 3 -> Scalars, Strings, Arrays (313 each), else Tick
    want = {"Mantra-Demo/1/v0": 19061, "Mantra-Demo/2/v0": 313, "Mantra-Demo/3/v0": 313, "Mantra-Demo/4/v0": 313,
            "Microsoft-DotNETCore-EventPipe/1/v0": 1}
    if st["by_event"] != want:
        fail(f"by_event {st['by_event']} != {want}")
    te = te_compare(trace)
    if (te["pointer_size"], te["events"], te["dropped"]) != (4, 20001, 0):
        fail(f"TraceEvent stats: {te}")
    print(f"ok: 20001 events, 4-byte pointers, TraceEvent agrees ({s['bytes']} bytes)")


def check_run_interop():
    progs = os.path.join(SRC, "examples", "programs")
    trace = os.path.join(SCRATCH, "run.nettrace")
    r = wasi(["run", os.path.join(progs, "loop.masm"), "--trace", trace], dirs=[progs], env={"MANTRA_InterpPgo": "1"})
    if r.returncode != 0:
        fail(f"mantra.wasm run: exit {r.returncode}: {r.stderr}")
    with open(os.path.join(progs, "loop.expected"), encoding="utf-8") as f:
        if r.stdout != f.read():
            fail(f"program output differs from loop.expected:\n{r.stdout}")
    st = stats(trace)
    if not st["complete"] or st["pointer_size"] != 4 or st["dropped"] != 0:
        fail(f"mantra stats: {st}")
    # the flush at stop: ModuleLoad, MethodLoadVerbose, one JitInstrumentationDataVerbose chunk
    for key in ("Microsoft-Windows-DotNETRuntime/152/v2", "Microsoft-Windows-DotNETRuntime/143/v2",
                "Microsoft-Windows-DotNETRuntime/298/v0"):
        if st["by_event"].get(key) != 1:
            fail(f"{key}: {st['by_event'].get(key)} events, expected 1 ({st['by_event']})")
    te = te_compare(trace)
    if te["events"] != st["events"] or te["pointer_size"] != 4:
        fail(f"TraceEvent stats {te} against ours {st}")
    # mode 1: Examples.main's entry ran once, its loop head 11 times (i = 0..10)
    prof = trace + ".json"
    p = native(["pgo", trace, "-o", prof, "--format", "json"])
    if p.returncode != 0:
        fail(f"mantra pgo: exit {p.returncode}: {p.stderr}")
    with open(prof, encoding="utf-8") as f:
        methods = json.load(f)["methods"]
    got = [(m["module"], m["name"], [(r["il_offset"], r["values"]) for r in m["records"]]) for m in methods]
    if got != [("Loop", "main", [(0, [1]), (0x18, [11])])]:
        fail(f"profile {got}")
    print(f"ok: output as expected, {st['events']} events, TraceEvent agrees, profile {got}")


def check_cap_drained():
    trace = os.path.join(SCRATCH, "cap.nettrace")
    out = emit_json(wasi(["emit", "--events", "2000000", "--mix", "tick", "--buffer-mb", "1", "--trace", trace]),
                    "mantra.wasm emit --buffer-mb 1")
    s = out["sessions"][0]
    if s["dropped"] != 0 or s["written"] != 2000001:
        fail(f"a pumped loop dropped events under a 1 MB cap: {s}")
    size = os.path.getsize(trace)
    if size < 20 * 1024 * 1024:
        fail(f"trace of {size} bytes is not over 20 times the 1 MB cap")
    st = stats(trace)
    if (st["complete"], st["events"], st["dropped"]) != (True, 2000001, 0):
        fail(f"mantra stats: {st}")
    print(f"ok: {size} bytes ({size / 1048576:.1f} times the cap), nothing dropped")


def check_no_pump():
    trace = os.path.join(SCRATCH, "nopump.nettrace")
    out = emit_json(wasi(["emit", "--events", "500000", "--mix", "tick", "--buffer-mb", "1", "--no-pump", "--trace",
                          trace]), "mantra.wasm emit --no-pump")
    s = out["sessions"][0]
    if s["attempted"] != 500001 or s["dropped"] == 0 or s["written"] + s["dropped"] != s["attempted"]:
        fail(f"session counts: {s}")
    # a Tick event is a row the writer encodes (src/session/dispatch.c): 12 payload bytes, a flags
    # byte and a 1-3 byte timestamp delta, in chunks of 16 KiB with a 56-byte header; the buffers
    # under a 1 MB cap hold 1,024,000 bytes: 60,000-80,000 rows (before the rows: a 24-byte record
    # header + 12 payload bytes, about 26,000)
    if not 55000 <= s["written"] <= 85000:
        fail(f"{s['written']} events written under a 1 MB cap")
    st = stats(trace)
    if not st["complete"]:
        fail("the trace has no end tag (queued jobs did not run at shutdown)")
    # the ProcessInfo event is written at stop, after the drops
    if st["events"] != s["written"] or st["dropped"] != s["dropped"]:
        fail(f"reader saw {st['events']} events and {st['dropped']} drops; the session wrote {s['written']} and "
             f"dropped {s['dropped']}")
    print(f"ok: {s['written']} events kept, {s['dropped']} dropped and counted, end tag present")


def check_block_refused():
    r = wasi(["emit", "--block", "--trace", os.path.join(SCRATCH, "block.nettrace")])
    want = "mantra emit: Block mode needs a drain thread: not available in the threadless build"
    if r.returncode != 1 or want not in r.stderr:
        fail(f"exit {r.returncode}, stderr {r.stderr!r}")
    print("ok: " + want)


def check_startup_env():
    trace = os.path.join(SCRATCH, "startup.nettrace")
    out = emit_json(wasi(["emit", "--events", "1000"],
                         env={"MANTRA_EnableEventPipe": "1", "MANTRA_EventPipeOutputPath": trace,
                              "MANTRA_EventPipeConfig": "Mantra-Demo:0xF:5"}), "MANTRA_EnableEventPipe=1 emit")
    s = out["sessions"][0]
    if s["output"] != "env" or s["written"] != 1001:  # 1000 and ProcessInfo
        fail(f"session: {s}")
    st = stats(trace)
    if not st["complete"] or st["by_event"].get("Mantra-Demo/1/v0") != 952:
        fail(f"mantra stats: {st}")
    print(f"ok: startup session from the WASI environment, {st['events']} events")


def check_image_interop():
    progs = os.path.join(SRC, "examples", "programs")
    prog = os.path.join(progs, "checked.masm")
    trace, prof = os.path.join(SCRATCH, "img-profile.nettrace"), os.path.join(SCRATCH, "checked.prof")
    for cmd in (["run", prog, "--trace", trace], ["pgo", trace, "-o", prof]):
        r = subprocess.run([NATIVE] + cmd, capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, MANTRA_InterpPgo="2"))
        if r.returncode != 0:
            fail(f"mantra {' '.join(cmd)}: {r.stderr}")
    ours, theirs = os.path.join(SCRATCH, "checked-wasm.img"), os.path.join(SCRATCH, "checked-native.img")
    r = wasi(["precompile", prog, "--profile", prof, "-o", ours], dirs=[progs])
    if r.returncode != 0:
        fail(f"mantra.wasm precompile: exit {r.returncode}: {r.stderr}")
    r = native(["precompile", prog, "--profile", prof, "-o", theirs])
    if r.returncode != 0:
        fail(f"mantra precompile: {r.stderr}")
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        if a.read() != b.read():
            fail("the WASI build's image differs from the native one's")
    run_trace = os.path.join(SCRATCH, "img-run.nettrace")
    r = wasi(["run", ours, "--entry", "check", "5", "--trace", run_trace, "--providers",
              "Microsoft-Windows-DotNETRuntime:0x2000000028:5,Microsoft-Windows-DotNETRuntimeRundown:0x128"])
    if r.returncode != 0:
        fail(f"mantra.wasm run IMAGE: exit {r.returncode}: {r.stderr}")
    st = stats(run_trace)
    want = {"Microsoft-Windows-DotNETRuntime/1000/v0": 2, "Microsoft-Windows-DotNETRuntime/159/v1": 2,
            "Microsoft-Windows-DotNETRuntime/152/v2": 1, "Microsoft-Windows-DotNETRuntimeRundown/1000/v0": 3}
    for k, v in want.items():
        if st["by_event"].get(k) != v:
            fail(f"{k}: {st['by_event'].get(k)} events, expected {v} ({st['by_event']})")
    r = wasi(["run", ours])
    with open(os.path.join(progs, "checked.expected"), encoding="utf-8") as f:
        if r.returncode != 0 or r.stdout != f.read():
            fail(f"mantra.wasm run IMAGE printed {r.stdout!r} (exit {r.returncode})")
    te = te_compare(run_trace)
    if te["events"] != st["events"]:
        fail(f"TraceEvent stats {te} against ours {st}")
    print(f"ok: the same image bytes under WASI, its output, {st['events']} events, TraceEvent agrees")


CHECKS = {
    "emit-interop": check_emit_interop,
    "run-interop": check_run_interop,
    "cap-drained": check_cap_drained,
    "no-pump": check_no_pump,
    "block-refused": check_block_refused,
    "startup-env": check_startup_env,
    "image-interop": check_image_interop,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CHECKS:
        print(f"usage: check_wasi.py {'|'.join(CHECKS)}", file=sys.stderr)
        return 2
    if not NODE or not os.path.exists(NODE):
        skip_or_fail("node not found (Node.js >= 18 runs the WASI checks)")
    if not WASM or not os.path.exists(WASM):
        skip_or_fail(f"{WASM or 'mantra.wasm'} not built (`make wasm` builds it)")
    if not NATIVE or not os.path.exists(NATIVE):
        fail(f"native mantra {NATIVE!r} not found")
    os.makedirs(SCRATCH, exist_ok=True)
    CHECKS[sys.argv[1]]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
