#!/usr/bin/env python3
"""A fresh .NET 10 trace made at test time by TraceMaker, read by mantra and by TraceEvent.

usage: fresh_trace.py MANTRA TRACEMAKER_DLL OUTDIR MODE

MODE env: `dotnet TraceMaker.dll work` with DOTNET_EnableEventPipe=1 (GC, JIT, loader, type-load,
  thread pool, contention, exception and JitInstrumentationData keywords at Verbose: some
  JitInstrumentationDataVerbose (298) events, each decoded whole with its Data by default, the sample profiler, the Mantra-TraceMaker
  EventSource with keywords 0xF00000000003: bits 44-47 let WriteEvent(int, object[]) events through);
  the runtime writes the exit rundown by default.
MODE sweep: `TraceMaker sweep` with every keyword of the runtime, rundown and private providers at
  verbose level, and the core library's own event sources (SWEEP_CONFIG), under server GC with
  background GC and the GC's generation-aware analysis (SWEEP_ENV), run in OUTDIR (where the
  analysis writes its own gcgenaware.PID.nettrace and multicore JIT its profile); the number of
  distinct event types it holds, and how many of them the runtime's native providers wrote, are
  printed against the goal SWEEP_MIN_TYPES.
MODE mantra-collect-providers | mantra-collect-dotnet-sampled-thread-time: `TraceMaker serve 30`,
  `MANTRA ps --json` (lists it with its command line and runtime version) and `MANTRA collect -p
  PID --providers ...|--profile dotnet-sampled-thread-time --duration 3`; the trace must hold the
  session's rundown (MethodDCEndVerbose, DCEndComplete).
MODE mantra-collect-reverse: `MANTRA collect --diagnostic-port SOCK` listens and `TraceMaker work`
  starts with DOTNET_DiagnosticPorts=SOCK (suspended until ResumeRuntime): the trace holds the
  program's first EventSource event (StepStart 0), its loads and the rundown.
MODE default | dotnet-sampled-thread-time | gc-verbose: `TraceMaker serve 30` and
  `dotnet-trace collect -p PID [--profile MODE] --duration 00:00:00:03` against it (dotnet-trace of
  tests/interop/dotnet-tools.json; `default` passes no --profile).

Checked (env): an event of each kind of work (GC, JIT, type load, loader, thread pool, contention,
exceptions, JitInstrumentationData, MethodDetails, rundown, sample profiler, ProcessInfo, both
EventSources), and the EventSource values exactly as TraceMaker writes them.
Checked (every mode): `MANTRA dump --json --sorted` agrees with `$MANTRA_TE_DUMP compare` (0 differences; the
exceptions TraceEvent forces are counted there, tests/interop/README.md); every event of the
runtime providers (DotNETRuntime, Rundown, Private, Stress, SampleProfiler, EventPipe) has its
fields from the built-in manifests and a name; every GCFitBucketInfo (209) event with buckets
decodes (the runtime writes each bucket as a padded C struct of 16 bytes where ClrEtwAll.man
describes 14: dotnet/runtime src/coreclr/gc/gc.cpp, FIRE_EVENT(GCFitBucketInfo) passes the raw
bucket array; manifest/clr/runtime.args gives Values layout c) with Count values whose Sizes add up
to TotalSize; `MANTRA stats --json` counts as decode errors exactly the TraceLogging `Flags` events
of Mantra-TraceMaker-SelfDescribing (their metadata describes the bool as a 4-byte Boolean, the
runtime writes 1 byte: 5 payload bytes where the metadata says 8), each with Flag true (the first
payload byte) and reported as ending inside a field.
Without dotnet: SKIP (a failure with MANTRA_REQUIRE_INTEROP=1).
"""
import contextlib
import json
import os
import re
import shlex
import shutil
import tempfile
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = ("Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown",
           "Microsoft-Windows-DotNETRuntimePrivate", "Microsoft-Windows-DotNETRuntimeStress",
           "Microsoft-DotNETCore-SampleProfiler", "Microsoft-DotNETCore-EventPipe")
# GC 0x1, AssemblyLoader 0x4, Loader 0x8, Jit 0x10, Contention 0x4000, Exception 0x8000,
# Threading 0x10000, Type 0x80000, Stack 0x40000000, TypeDiagnostic 0x8000000000,
# MethodDiagnostic 0x4000000000 (MethodDetails, 72), JitInstrumentationData 0x10000000000 (ClrEtwAll.man)
CONFIG = ("Microsoft-Windows-DotNETRuntime:0x1C04009C01D:5,Microsoft-DotNETCore-SampleProfiler:0:5,"
          "Mantra-TraceMaker:0xF00000000003:5,Mantra-TraceMaker-SelfDescribing:0xF00000000003:5")
# The sweep: every keyword of the runtime's providers at verbose level, and the event sources of
# System.Private.CoreLib (and System.Net's) that TraceMaker sweep drives: tasks and async methods,
# parallel loops, the shared array pool, sockets and name resolution.
SWEEP_CONFIG = ",".join(f"{p}:0xFFFFFFFFFFFFFFFF:5" for p in (
    "Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown",
    "Microsoft-Windows-DotNETRuntimePrivate", "System.Threading.Tasks.TplEventSource",
    "System.Threading.Tasks.Parallel.EventSource", "System.Buffers.ArrayPoolEventSource",
    "System.Net.Sockets", "System.Net.NameResolution")) + ",Microsoft-DotNETCore-SampleProfiler:0:5"
# server GC with two heaps and background GC (the per-heap, join and BGC events), and the GC's
# generation-aware analysis of the first gen-1 GC that promotes a byte (GenAwareBegin/End; it writes
# its own trace into the working directory, no dump)
SWEEP_ENV = {"DOTNET_gcServer": "1", "DOTNET_GCHeapCount": "2", "DOTNET_gcConcurrent": "1",
             "DOTNET_GCGenAnalysisGen": "1", "DOTNET_GCGenAnalysisBytes": "1", "DOTNET_GCGenAnalysisTrace": "1",
             "DOTNET_GCGenAnalysisDump": "0"}
SWEEP_MIN_TYPES = 150  # the goal for the distinct event types (provider, id, version) of the sweep (printed)
# What the env run must hold: (provider, event name) of each kind of work TraceMaker does.
REQUIRED = [(RUNTIME[0], n) for n in ("GCStart", "GCEnd", "GCAllocationTick", "MethodJittingStarted",
                                      "MethodLoadVerbose", "TypeLoadStart", "AssemblyLoadStart", "ModuleLoad",
                                      "ThreadPoolWorkerThreadStart", "ContentionStart", "ExceptionThrown",
                                      "JitInstrumentationDataVerbose", "MethodDetails")] + [
    (RUNTIME[1], "MethodDCEndVerbose"), (RUNTIME[1], "DCEndComplete"), (RUNTIME[4], "ThreadSample"),
    (RUNTIME[5], "ProcessInfo"), ("Mantra-TraceMaker", "Scalars"), ("Mantra-TraceMaker", "Texts"),
    ("Mantra-TraceMaker-SelfDescribing", "Numbers")]
# The EventSource's values as TraceMaker writes them (Program.cs Work), field for field.
SCALARS = {"flag": True, "u8": 200, "i8": -100, "i16": -30000, "u16": 60000, "i32": -2000000000,
           "u32": 4000000000, "i64": -9000000000000000000, "u64": 18000000000000000000, "f32": 1.5,
           "f64": -2.25, "ch": "Z", "ptr": 0x12345678, "color": 2}
TEXTS = {"text": "h\u00e9llo, w\u00f6rld", "empty": "", "id": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
         "when": 134117966450000000}  # 2026-01-02T03:04:05Z as FILETIME
NUMBERS = {"tag": 9, "values": [10, -20, 30]}
ENV = dict(os.environ, DOTNET_CLI_TELEMETRY_OPTOUT="1", DOTNET_NOLOGO="1")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def make_env_trace(dll, trace, config=CONFIG, what="work", extra=None, cwd=None):
    env = dict(ENV, DOTNET_EnableEventPipe="1", DOTNET_EventPipeOutputPath=trace, DOTNET_EventPipeConfig=config,
               **(extra or {}))
    p = subprocess.run(["dotnet", dll, what], env=env, capture_output=True, text=True, timeout=300, cwd=cwd)
    if p.returncode != 0:
        fail(f"TraceMaker {what} exited {p.returncode}: {p.stderr}")


@contextlib.contextmanager
def serving(dll):
    """`TraceMaker serve 30` running for the with-block: its pid (text); killed at the end."""
    app = subprocess.Popen(["dotnet", dll, "serve", "30"], env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        line = app.stdout.readline()
        m = re.match(r"ready (\d+)", line)
        if not m:
            fail(f"TraceMaker serve printed {line!r}")
        time.sleep(0.5)  # the diagnostics server is up once the program runs managed code
        yield m.group(1)
    finally:
        app.kill()
        app.wait()


def make_collect_trace(dll, trace, profile):
    with serving(dll) as pid:
        cmd = ["dotnet", "tool", "run", "dotnet-trace", "--", "collect", "-p", pid, "-o", trace,
               "--duration", "00:00:00:03"]
        if profile != "default":
            cmd += ["--profile", profile]
        p = subprocess.run(cmd, cwd=HERE, env=ENV, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        if p.returncode != 0 or not os.path.exists(trace):
            fail(f"dotnet-trace collect exited {p.returncode}: {p.stdout}{p.stderr}")


def check_gen_aware(mantra, te, rundir):
    """The trace the GC's generation-aware analysis wrote by itself (a heap walk, V4 format): decoded
    whole, GenAwareBegin and GenAwareEnd in it, and 0 differences from TraceEvent."""
    found = sorted(f for f in os.listdir(rundir) if re.fullmatch(r"gcgenaware\.\d+\.nettrace", f))
    if len(found) != 1:
        fail(f"want one gcgenaware.PID.nettrace in {rundir}, found {found}")
    trace = os.path.join(rundir, found[0])
    stats = json.loads(subprocess.run([mantra, "stats", "--json", trace], capture_output=True, text=True).stdout)
    names = stats["by_name"]
    if (stats["decode_errors"] or not stats["complete"] or stats["dropped"]
            or not names.get("Microsoft-Windows-DotNETRuntime/GenAwareBegin")
            or not names.get("Microsoft-Windows-DotNETRuntime/GenAwareEnd")):
        fail(f"{trace}: {stats}")
    ours = trace + ".mantra.jsonl"
    with open(ours, "wb") as f:
        p = subprocess.run([mantra, "dump", "--json", "--sorted", trace], stdout=f, stderr=subprocess.PIPE)
    if p.returncode != 0 or p.stderr:
        fail(f"mantra dump of {trace} exited {p.returncode}: {p.stderr.decode()}")
    p = subprocess.run(te + ["compare", trace, ours], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0 or " 0 differences" not in text.splitlines()[-1]:
        fail(f"TraceEvent's compare of {trace} found differences: {text}")
    print(f"{trace}: {stats['events']} events ({', '.join(n.split('/')[1] for n in sorted(names))}), "
          f"all decoded; {text.splitlines()[-1]}")


# the reverse run: the runtime's work keywords (CONFIG) and TraceMaker's EventSource
REVERSE_PROVIDERS = "Microsoft-Windows-DotNETRuntime:0x1C04009C01D:5,Mantra-TraceMaker:0xF00000000003:5"
# `mantra collect` against TraceMaker serve (mode mantra-collect-NAME): the arguments of each
MANTRA_COLLECT = {
    "mantra-collect-providers": ["--providers", "Microsoft-Windows-DotNETRuntime:0x1C04009C01D:5"],
    "mantra-collect-dotnet-sampled-thread-time": ["--profile", "dotnet-sampled-thread-time"],
}


def make_mantra_collect_trace(mantra, dll, trace, args):
    """`mantra ps --json` lists the process with its command line; `mantra collect -p PID ARGS
    --duration 3` writes the trace."""
    with serving(dll) as text_pid:
        pid = int(text_pid)
        p = subprocess.run([mantra, "ps", "--json"], env=ENV, capture_output=True, text=True, timeout=60)
        listed = [e for e in json.loads(p.stdout or "[]") if e["pid"] == pid]
        if p.returncode != 0 or len(listed) != 1 or "TraceMaker.dll serve 30" not in listed[0]["command_line"] \
                or listed[0]["os"] != "Linux" or not listed[0]["runtime_version"].startswith("10."):
            fail(f"mantra ps --json does not list TraceMaker ({pid}) with its command line: {p.stdout}{p.stderr}")
        print(f"mantra ps: {listed[0]}")
        p = subprocess.run([mantra, "collect", "-p", text_pid, *args, "--duration", "3", "-o", trace], env=ENV,
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0 or not os.path.exists(trace):
            fail(f"mantra collect exited {p.returncode}: {p.stderr}")
        print(p.stderr, end="")


def make_mantra_reverse_trace(mantra, dll, trace):
    """`mantra collect --diagnostic-port SOCK` listens; `TraceMaker work` starts with
    DOTNET_DiagnosticPorts=SOCK (suspended until the session is up and ResumeRuntime comes)."""
    tmp = tempfile.mkdtemp(prefix="mantra-rev-")
    sock = os.path.join(tmp, "collect.sock")
    try:
        c = subprocess.Popen([mantra, "collect", "--diagnostic-port", sock, "--providers", REVERSE_PROVIDERS,
                              "-o", trace], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        p = subprocess.run(["dotnet", dll, "work"], env=dict(ENV, DOTNET_DiagnosticPorts=sock), capture_output=True,
                           text=True, timeout=300)
        out, err = c.communicate(timeout=120)
        if p.returncode != 0 or c.returncode != 0 or not os.path.exists(trace):
            fail(f"reverse connect: TraceMaker exit {p.returncode} {p.stderr}; mantra collect exit {c.returncode} {err}")
        print(err, end="")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    if len(argv) != 4:
        fail(__doc__)
    mantra, dll, outdir, mode = argv
    te = shlex.split(os.environ.get("MANTRA_TE_DUMP", ""))
    if not te or not os.path.exists(dll):
        if os.environ.get("MANTRA_REQUIRE_INTEROP") == "1":
            fail(f"TraceEvent harness or {dll} missing and MANTRA_REQUIRE_INTEROP=1")
        print(f"SKIP: TraceEvent harness (MANTRA_TE_DUMP) or {dll} missing")
        return 0
    os.makedirs(outdir, exist_ok=True)
    trace = os.path.join(outdir, f"tracemaker-{mode}.nettrace")
    if os.path.exists(trace):
        os.unlink(trace)
    if mode == "env":
        make_env_trace(dll, trace)
    elif mode == "sweep":
        rundir = os.path.join(outdir, "sweep-run")
        shutil.rmtree(rundir, ignore_errors=True)
        os.makedirs(rundir)
        make_env_trace(dll, trace, SWEEP_CONFIG, "sweep", dict(SWEEP_ENV, MANTRA_SWEEP_DIR=rundir), rundir)
    elif mode == "mantra-collect-reverse":
        make_mantra_reverse_trace(mantra, dll, trace)
    elif mode in MANTRA_COLLECT:
        make_mantra_collect_trace(mantra, dll, trace, MANTRA_COLLECT[mode])
    else:
        make_collect_trace(dll, trace, mode)

    ours = trace + ".mantra.jsonl"
    with open(ours, "wb") as f:
        p = subprocess.run([mantra, "dump", "--json", "--sorted", trace], stdout=f, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail(f"mantra dump exited {p.returncode}: {p.stderr.decode()}")
    warnings = p.stderr.decode("utf-8", "replace").splitlines()
    runtime = unnamed = flags = whole298 = 0
    # the events each counted rule of TraceEventDump compare must apply to, from our side
    expect = {"298": 0, "GCDynamicEvent": 0, "MethodDetails": 0, "MethodFlags": 0, "short": 0}
    fit = 0  # GCFitBucketInfo events with buckets, each decoded whole (layout c)
    providers, seen, types = set(), set(), set()
    first_step = None  # the step of the first Mantra-TraceMaker StepStart
    with open(ours, encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            providers.add(o["provider"])
            types.add((o["provider"], o["event_id"], o["version"]))
            seen.add((o["provider"], o["name"]))
            want = {("Mantra-TraceMaker", "Texts"): TEXTS,
                    ("Mantra-TraceMaker-SelfDescribing", "Numbers"): NUMBERS}.get((o["provider"], o["name"]))
            if o["provider"] == "Mantra-TraceMaker" and o["name"] == "Scalars" and o["fields"].get("flag") is True:
                want = SCALARS
            if want is not None and o["fields"] != want:
                fail(f"{o['provider']}/{o['name']}: fields {o['fields']}, want {want}")
            if o["provider"] == "Mantra-TraceMaker-SelfDescribing" and o["name"] == "Flags":
                flags += 1
                if o["fields"] != {"": {"Flag": True}}:
                    fail(f"TraceLogging Flags: fields {o['fields']}, want the first payload byte as Flag true")
            if o["provider"] == "Mantra-TraceMaker" and o["name"] == "StepStart" and first_step is None:
                first_step = o["fields"].get("step")
            if o.get("decode_error") == "short" and o["field_source"] == "metadata":
                expect["short"] += 1
            if o["provider"] not in RUNTIME:
                continue
            runtime += 1
            f = o["fields"]
            if o["provider"] == RUNTIME[0] and o["event_id"] == 298:
                expect["298"] += 1
            if o["provider"] == RUNTIME[0] and o["event_id"] == 39 and f.get("Name") == "CommittedUsage":
                expect["GCDynamicEvent"] += 1
            if o["provider"] == RUNTIME[0] and o["event_id"] == 72:
                expect["MethodDetails"] += 1
            if isinstance(f.get("MethodFlags"), int) and f["MethodFlags"] & 0x380:
                expect["MethodFlags"] += 1
            if o["field_source"] not in ("manifest", "metadata"):
                fail(f"runtime event not decoded: {line}")
            if not o["name"]:
                unnamed += 1
            if o["provider"] == RUNTIME[0] and o["event_id"] == 298:  # JitInstrumentationDataVerbose
                data = o["fields"].get("Data")
                if not isinstance(data, str) or len(data) != 2 * o["fields"]["DataSize"] or o.get("decode_error"):
                    fail(f"event 298 not decoded whole (Data of DataSize bytes): {line[:400]}")
                whole298 += 1
            if o["provider"] == RUNTIME[0] and o["event_id"] == 209 and o["fields"]["Count"] > 0:
                values = o["fields"].get("Values")
                if (o.get("decode_error") or not isinstance(values, list) or len(values) != o["fields"]["Count"]
                        or sum(v["Size"] for v in values) != o["fields"]["TotalSize"]):
                    fail(f"GCFitBucketInfo not decoded as padded C buckets whose Sizes add up to TotalSize: {line[:600]}")
                fit += 1
    if unnamed:
        fail(f"{unnamed} runtime events without a name")
    if mode == "gc-verbose" and fit == 0:
        fail("no GCFitBucketInfo event with buckets: the gc-verbose run forces GCs that write them")
    if mode in MANTRA_COLLECT:  # the session's rundown, and what the providers asked for
        want = [(RUNTIME[1], "MethodDCEndVerbose"), (RUNTIME[1], "DCEndComplete"), (RUNTIME[5], "ProcessInfo")]
        want += [(RUNTIME[4], "ThreadSample")] if "sampled" in mode else [(RUNTIME[0], "GCStart"),
                                                                          (RUNTIME[0], "MethodLoadVerbose")]
        missing = [f"{p}/{n}" for p, n in want if (p, n) not in seen]
        if missing:
            fail(f"events missing from the mantra collect trace: {missing}")
    if mode == "mantra-collect-reverse":  # the process's first events: its first EventSource event, step 0
        if first_step != 0:
            fail(f"reverse connect: the trace's first StepStart has step {first_step}, want 0 (the first event)")
        missing = [f"{p}/{n}" for p, n in [(RUNTIME[0], "MethodLoadVerbose"), (RUNTIME[0], "AssemblyLoadStart"),
                                            (RUNTIME[1], "MethodDCEndVerbose")] if (p, n) not in seen]
        if missing:
            fail(f"events missing from the reverse-connect trace: {missing}")
    if mode == "env":
        missing = [f"{p}/{n}" for p, n in REQUIRED if (p, n) not in seen]
        if missing:
            fail(f"events missing from the env run: {missing}")
        if whole298 == 0:
            fail("no JitInstrumentationDataVerbose (298) event: the env run enables JitInstrumentationData")
    stats = json.loads(subprocess.run([mantra, "stats", "--json", trace], capture_output=True, text=True).stdout)
    if stats["decode_errors"] != flags:
        fail(f"{stats['decode_errors']} decode errors, want {flags} (TraceLogging bools); {warnings[:5]}")
    for w in warnings:
        tl = re.search(r"Mantra-TraceMaker-SelfDescribing/\d+/v0: the payload \(5 bytes\) ends inside a field", w)
        if tl is None and "events whose payload" not in w:
            fail(f"unexpected warning: {w}")
    goal = ""
    if mode == "sweep":
        native = sum(1 for t in types if t[0] in RUNTIME)
        goal = (f", {native} of them from the runtime's native providers (the goal is {SWEEP_MIN_TYPES}: "
                f"{'met' if len(types) >= SWEEP_MIN_TYPES else 'not met'})")
    print(f"{trace}: {len(types)} distinct event types (provider, id, version){goal}")
    print(f"{trace}: {stats['events']} events, {runtime} of the runtime providers, all decoded and named; "
          f"{whole298} JitInstrumentationDataVerbose with their Data, {fit} GCFitBucketInfo with padded buckets decoded, {flags} TraceLogging bool decode errors; "
          f"providers: {', '.join(sorted(providers))}")
    p = subprocess.run(te + ["compare", trace, ours, "--max", "20"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode("utf-8", "replace")
    print(text, end="")
    if p.returncode != 0 or " 0 differences" not in text.splitlines()[-1]:
        fail("TraceEvent's compare found differences")
    # every counted exception exactly as often as our events call for it
    notes = {"298": r"note: (\d+) JitInstrumentationDataVerbose events",
             "GCDynamicEvent": r"note: (\d+) GCDynamicEvent events",
             "MethodDetails": r"note: (\d+) MethodDetails events",
             "MethodFlags": r"note: (\d+) events: MethodFlags",
             "short": r"note: (\d+) events whose payload ends inside"}
    for rule, pattern in notes.items():
        m = re.search(pattern, text)
        got = int(m.group(1)) if m else 0
        if got != expect[rule]:
            fail(f"compare counted {got} events under the {rule} rule, our events call for {expect[rule]}")
    print("counted exceptions: " + ", ".join(f"{k} {v}" for k, v in expect.items()))
    if mode == "sweep":
        check_gen_aware(mantra, te, os.path.join(outdir, "sweep-run"))
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
