#!/usr/bin/env python3
"""speedscope_check.py - `mantra export` opened by the real viewers' own code.

Makes a sampled trace of tests/stacks/spin.masm (`mantra run` with startup tracing: SampleProfiler
and the runtime provider, rundown at stop), exports it with `mantra export --format speedscope`
and `--format chrome`, checks both files' structure (speedscope: one sampled profile per thread,
stacks root first over the shared frames, a positive weight per sample but the last (0, as
dotnet-trace's conversion closes it); chrome: complete events
for the stacks, instants for the other events), then opens the speedscope file in the speedscope
app (the npm package's bundle) in Debian's chromium (speedscope_view.mjs): it must load through the
app's importer without an error and list Spin!Demo.Spin.inner, .outer and .main in its Sandwich
view.

Environment: MANTRA_NODE, MANTRA_CHROMIUM, MANTRA_NODE_MODULES (node_modules/playwright-core and
node_modules/speedscope), MANTRA_NATIVE_CLI, MANTRA_BINARY_DIR. Without node, chromium or the npm
packages: SKIP, or FAIL under MANTRA_REQUIRE_INTEROP=1. Artefacts in $MANTRA_BINARY_DIR/speedscope/.
"""
import json
import os
import subprocess
import sys

SRC = os.environ.get("MANTRA_SOURCE_DIR", os.getcwd())
NAMES = ["Spin!Demo.Spin.inner", "Spin!Demo.Spin.outer", "Spin!Demo.Spin.main"]


def skip_or_fail(reason):
    if os.environ.get("MANTRA_REQUIRE_INTEROP") == "1":
        print(f"FAIL: speedscope: required (MANTRA_REQUIRE_INTEROP=1) but cannot run: {reason}")
        sys.exit(1)
    print(f"SKIP: speedscope: not run: {reason} (set MANTRA_REQUIRE_INTEROP=1 to make this fail)")
    sys.exit(0)


def fail(msg):
    print(f"FAIL: speedscope: {msg}")
    sys.exit(1)


def main():
    node, chromium = os.environ.get("MANTRA_NODE", ""), os.environ.get("MANTRA_CHROMIUM", "")
    modules, native = os.environ.get("MANTRA_NODE_MODULES", ""), os.environ.get("MANTRA_NATIVE_CLI", "")
    out = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "build"), "speedscope")
    if not node or not os.path.exists(node):
        skip_or_fail("node not found")
    if not chromium or not os.path.exists(chromium):
        skip_or_fail("chromium not found (make deps WASM=1 installs Debian's chromium)")
    for pkg in ("playwright-core", "speedscope"):
        if not os.path.exists(os.path.join(modules, "node_modules", pkg, "package.json")):
            skip_or_fail(f"{pkg} not in {modules}/node_modules (make deps WASM=1 installs it)")
    os.makedirs(out, exist_ok=True)
    trace = os.path.join(out, "spin.nettrace")
    env = dict(os.environ, MANTRA_EnableEventPipe="1", MANTRA_EventPipeOutputPath=trace,
               MANTRA_EventPipeConfig="Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x10:5")
    r = subprocess.run([native, "run", os.path.join(SRC, "tests", "stacks", "spin.masm")], env=env,
                       stdout=subprocess.PIPE, text=True, timeout=300)
    if r.returncode != 0:
        fail(f"mantra run exited {r.returncode}")
    files = {}
    for fmt in ("speedscope", "chrome"):
        files[fmt] = os.path.join(out, f"spin.{fmt}.json")
        r = subprocess.run([native, "export", trace, "--format", fmt, "-o", files[fmt]], capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            fail(f"mantra export --format {fmt} exited {r.returncode}: {r.stderr.strip()}")
        print(r.stderr.strip())
    s = json.load(open(files["speedscope"]))
    frames = [f["name"] for f in s["shared"]["frames"]]
    if sorted(frames) != sorted(NAMES):
        fail(f"speedscope frames {frames}, expected {NAMES}")
    samples = 0
    for p in s["profiles"]:
        if (p["type"] != "sampled" or len(p["samples"]) != len(p["weights"]) or not all(w >= 0 for w in p["weights"])
                or not all(w > 0 for w in p["weights"][:-1])):
            fail(f"profile {p['name']}: not a sampled profile with a weight per sample (positive but for the last)")
        for st in p["samples"]:
            if [frames[i] for i in st] != ["Spin!Demo.Spin.main", "Spin!Demo.Spin.outer", "Spin!Demo.Spin.inner"]:
                fail(f"profile {p['name']}: a stack {[frames[i] for i in st]} (root first expected main, outer, inner)")
        samples += len(p["samples"])
    if samples < 50:
        fail(f"{samples} samples")
    c = json.load(open(files["chrome"]))
    xs = [e for e in c["traceEvents"] if e["ph"] == "X"]
    inst = [e for e in c["traceEvents"] if e["ph"] == "i"]
    if {e["name"] for e in xs} != set(NAMES) or not all(e["dur"] > 0 and e["ts"] >= 0 for e in xs) or not inst:
        fail("chrome: complete events for the three methods and instants for the other events expected")
    print(f"speedscope: {samples} samples in {len(s['profiles'])} profile(s); chrome: {len(xs)} complete events, "
          f"{len(inst)} instants")
    app = os.path.join(modules, "node_modules", "speedscope", "dist", "release")
    r = subprocess.run([node, os.path.join(SRC, "tests", "browser", "speedscope_view.mjs"), "--app", app, "--profile",
                        files["speedscope"], "--out", out, "--chromium", chromium, "--modules", modules],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        fail(f"speedscope_view.mjs exited {r.returncode}: {r.stderr.strip()}")
    v = json.load(open(os.path.join(out, "speedscope.json")))
    missing = [n for n in NAMES if n not in v["text"]]
    if v["errors"] or missing or "Sandwich" not in v["text"] or "speedscope" not in v["title"]:
        fail(f"the speedscope app: errors {v['errors']}, names missing {missing}, title {v['title']!r}")
    print(f"speedscope: the speedscope app loaded it ({v['title']!r}) and lists {', '.join(NAMES)} in its Sandwich view")
    return 0


if __name__ == "__main__":
    sys.exit(main())
