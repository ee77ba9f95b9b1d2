#!/usr/bin/env python3
"""TraceEvent's view of mantra's stacks and activity ids (tests/stacks/CMakeLists.txt).

  stacks_interop.py stacks --mantra MANTRA --program spin.masm --out DIR
      `mantra run` of the program with startup tracing (SampleProfiler, the runtime provider, rundown
      at stop), then `TraceEventDump stacks`: TraceLog must resolve every ThreadSample to the
      interpreted methods, leaf first, as dotnet-stack report does; at least one sample has the
      whole stack inner <- outer <- main. Then `TraceEventDump report` (dotnet-stack report's
      computation): the program's thread shows exactly its first sample's stack under its CPU_TIME
      frame.
  stacks_interop.py activity TRACE
      `TraceEventDump dump` of test_write_ex's activity trace: the Tick events carry exactly the
      activity ids the test set.
Needs MANTRA_TE_DUMP (the harness command). Exit 0 on success, 1 with the reason.
"""
import json
import os
import subprocess
import sys

SPIN = ["spin!Demo.Spin.inner(int64)", "spin!Demo.Spin.outer(int64)", "spin!Demo.Spin.main()"]
ZERO = "00000000-0000-0000-0000-000000000000"
A = "11223344-5566-7788-99aa-bbccddeeff01"
B = "01020304-0506-0708-090a-0b0c0d0e0f10"


def te(*args):
    cmd = os.environ["MANTRA_TE_DUMP"].split() + list(args)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def fail(msg):
    print("FAIL: " + msg)
    return 1


PROVIDERS = "Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x10:5"


def stacks(mantra, program, out):
    os.makedirs(out, exist_ok=True)
    # startup tracing (rundown at stop, as the runtime's), then a --trace session naming the profiler
    trace = os.path.join(out, "spin.nettrace")
    env = dict(os.environ)
    env.update({"MANTRA_EnableEventPipe": "1", "MANTRA_EventPipeOutputPath": trace, "MANTRA_EventPipeConfig": PROVIDERS})
    run = subprocess.run([mantra, "run", program], env=env, stdout=subprocess.PIPE, text=True)
    if run.returncode != 0:
        return fail(f"mantra run (startup tracing) exited {run.returncode}")
    rc = check_trace(trace)
    if rc != 0:
        return rc
    trace = os.path.join(out, "spin-trace.nettrace")
    run = subprocess.run([mantra, "run", program, "--trace", trace, "--providers", PROVIDERS], stdout=subprocess.PIPE,
                         text=True)
    if run.returncode != 0:
        return fail(f"mantra run --trace exited {run.returncode}")
    return check_trace(trace)


def check_trace(trace):
    samples = [e for e in te("stacks", trace) if e["provider"] == "Microsoft-DotNETCore-SampleProfiler"]
    if not samples:
        return fail("no ThreadSample with a stack")
    full = 0
    for e in samples:
        frames = e["frames"]
        # a sample taken during a call or a return has the leaf-most frames missing, never others
        if not frames or frames != SPIN[len(SPIN) - len(frames):]:
            return fail(f"sample on thread {e['thread_id']} resolved to {frames}, expected a suffix of {SPIN}")
        full += frames == SPIN
    if full == 0:
        return fail(f"{len(samples)} samples, none with the whole stack {SPIN}")
    print(f"stacks: {len(samples)} samples, {full} with {' <- '.join(SPIN)}")
    cmd = os.environ["MANTRA_TE_DUMP"].split() + ["report", trace]
    report = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True).stdout
    blocks, cur = {}, None
    for line in report.splitlines():
        if line.startswith("Thread ("):
            cur = blocks.setdefault(line.rstrip(":"), [])
        elif cur is not None:
            cur.append(line.strip())
    thread = f"Thread ({samples[0]['thread_id']})"
    # the thread-time computer puts a CPU_TIME pseudo frame at the leaf of a running thread's stack;
    # the report shows the thread's first sample (as dotnet-stack report does), and with startup
    # tracing that sample may come before main has called outer (seen in the slower ASan build):
    # exactly the first sample's frames, already checked above to be a suffix of the whole stack
    want = ["CPU_TIME"] + samples[0]["frames"]
    if blocks.get(thread) != want:
        return fail(f"report: {thread}: {blocks.get(thread)}, expected {want} (its first sample)\n{report}")
    print(f"report: {thread}: {' <- '.join(blocks[thread])}")
    return 0


def activity(trace):
    ticks = [e for e in te("dump", trace) if e["provider"] == "Mantra-Demo" and e["event_id"] == 1]
    want = [(ZERO, ZERO), (A, B), (A, B), (A, ZERO), (B, ZERO), (ZERO, ZERO)]
    got = [(e["activity_id"], e["related_activity_id"]) for e in ticks]
    if got != want:
        return fail(f"TraceEvent's activity ids {got}, expected {want}")
    print(f"activity: {len(ticks)} events with the expected ActivityID/RelatedActivityID")
    return 0


def main(argv):
    if "MANTRA_TE_DUMP" not in os.environ:
        return fail("MANTRA_TE_DUMP is not set")
    if len(argv) == 7 and argv[0] == "stacks" and argv[1] == "--mantra" and argv[3] == "--program" and argv[5] == "--out":
        return stacks(argv[2], argv[4], argv[6])
    if len(argv) == 2 and argv[0] == "activity":
        return activity(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
