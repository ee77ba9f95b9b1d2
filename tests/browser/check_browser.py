#!/usr/bin/env python3
"""check_browser.py - examples/browser in Debian's chromium (headless, playwright-core), end to end.

Runs browser_pgo.mjs (serves the page, calls mantra.collectPgoTrace({seconds: 2}) twice from the
page's JavaScript, waits for each download, runs two overlapping collectTrace() calls, saves a
screenshot), then converts each downloaded trace with `mantra pgo --format json` and checks that the
profile holds exactly the counts the page's loops produced: work.masm's Page.frame(n) with probes in
mode 1 has entry (IL_0000) = R, outer loop head (IL_0018) = R*n, inner head (IL_0024) = R*n*4,
where R is the number of calls the page had made when the collection stopped (the page is one
thread: nothing runs between the stop and the snapshot). The second collection holds a complete,
larger, cumulative snapshot. The overlapping collections each stopped at their own window.

Environment: MANTRA_NODE, MANTRA_CHROMIUM, MANTRA_NODE_MODULES (holds node_modules/playwright-core),
MANTRA_WASM_DIR (build-wasm: examples/browser/mantra_web.wasm), MANTRA_NATIVE_CLI (native mantra),
MANTRA_BINARY_DIR. Without node, chromium, playwright-core or the wasm build: SKIP, or FAIL under
MANTRA_REQUIRE_INTEROP=1. Artefacts (traces, profiles, page.png) stay in
$MANTRA_BINARY_DIR/browser-checks/.
"""
import json
import os
import subprocess
import sys

SRC = os.environ.get("MANTRA_SOURCE_DIR", os.getcwd())


def skip_or_fail(reason):
    if os.environ.get("MANTRA_REQUIRE_INTEROP") == "1":
        print(f"FAIL: tests/browser: required (MANTRA_REQUIRE_INTEROP=1) but cannot run: {reason}")
        sys.exit(1)
    print(f"SKIP: tests/browser: browser check not run: {reason} (set MANTRA_REQUIRE_INTEROP=1 to make this fail)")
    sys.exit(0)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


BIG_METHODS = 56000


def write_big_program(path, n):
    """A program of n small methods (three basic blocks each, all instrumented in mode 2) and a frame
    that calls the first ten: with 56,000 its PGO trace is about 15 MB."""
    lines = ["; big.masm - written by tests/browser/check_browser.py: many instrumented methods",
             ".module Big 5d2c8f3a-1b4e-4c6d-9e7f-a0b1c2d3e4f5"]
    for i in range(n):
        lines += [f".method Page.m{i} int64(int64) token {0x06000002 + i:#010x}",
                  "        ldarg 0", "        ldc.i8 3", "        blt small",
                  "        ldarg 0", f"        ldc.i8 {i}", "        add", "        ret",
                  "small:  ldarg 0", "        ldc.i8 2", "        mul", "        ret", ".end"]
    lines += [".method Page.frame int64(int64) token 0x06000001", "        ldc.i8 0"]
    for i in range(10):
        lines += ["        ldarg 0", f"        call m{i}", "        add"]
    lines += ["        ret", ".end", ""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    node = os.environ.get("MANTRA_NODE", "")
    chromium = os.environ.get("MANTRA_CHROMIUM", "")
    modules = os.environ.get("MANTRA_NODE_MODULES", "")
    wasm = os.path.join(os.environ.get("MANTRA_WASM_DIR", ""), "examples", "browser", "mantra_web.wasm")
    native = os.environ.get("MANTRA_NATIVE_CLI", "")
    out = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "/tmp"), "browser-checks")
    if not node or not os.path.exists(node):
        skip_or_fail("node not found")
    if not chromium or not os.path.exists(chromium):
        skip_or_fail("chromium not found (make deps WASM=1 installs Debian's chromium)")
    if not os.path.exists(os.path.join(modules, "node_modules", "playwright-core", "package.json")):
        skip_or_fail(f"playwright-core not in {modules}/node_modules (make deps WASM=1 installs it)")
    if not os.path.exists(wasm):
        skip_or_fail(f"{wasm} not built (make wasm)")
    os.makedirs(out, exist_ok=True)
    write_big_program(os.path.join(out, "big.masm"), BIG_METHODS)
    r = subprocess.run([node, os.path.join(SRC, "tests", "browser", "browser_pgo.mjs"), "--web",
                        os.path.join(SRC, "examples", "browser", "web"), "--wasm", wasm, "--out", out,
                        "--chromium", chromium, "--modules", modules, "--big", "big.masm"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        fail(f"browser_pgo.mjs exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    with open(os.path.join(out, "result.json"), encoding="utf-8") as f:
        res = json.load(f)
    if res["errors"]:
        fail(f"errors in the page: {res['errors']}")
    if not os.path.getsize(os.path.join(out, "page.png")):
        fail("no screenshot")
    previous = 0
    for k, c in enumerate(res["collections"], 1):
        if c["suggested"] != c["fileName"] or os.path.getsize(c["file"]) != c["size"]:
            fail(f"download {k}: {c}")
        prof = os.path.join(out, f"pgo-{k}.json")
        p = subprocess.run([native, "pgo", c["file"], "-o", prof, "--format", "json"], capture_output=True,
                           text=True, timeout=120)
        if p.returncode != 0:
            fail(f"mantra pgo {c['file']}: exit {p.returncode}: {p.stderr}")
        with open(prof, encoding="utf-8") as f:
            doc = json.load(f)
        frame = [m for m in doc["methods"] if m["name"] == "frame" and m["namespace"] == "Page"]
        if len(frame) != 1:
            fail(f"collection {k}: Page.frame not in the profile ({[m['name'] for m in doc['methods']]})")
        runs, n = c["runsAtStop"], c["steps"]
        got = {rec["il_offset"]: rec["values"][0] for rec in frame[0]["records"] if rec["kind"] == 65}
        want = {0x00: runs, 0x18: runs * n, 0x24: runs * n * 4}
        if got != want:
            fail(f"collection {k}: block counts {got}, expected {want} after {runs} calls of frame({n})")
        if runs <= previous:
            fail(f"collection {k}: {runs} calls is not more than the previous collection's {previous}")
        previous = runs
        print(f"ok: collection {k}: {c['fileName']} ({c['size']} bytes) after {runs} calls: counts {got}, "
              f"collect-to-download {c['ms']} ms")
    big = res.get("big")
    if big is None or big["size"] < 10_000_000 or os.path.getsize(big["file"]) != big["size"]:
        fail(f"the big collection: {big}")
    st = subprocess.run([native, "stats", "--json", big["file"]], capture_output=True, text=True, timeout=120)
    sj = json.loads(st.stdout)
    if not sj["complete"] or sj["by_event"].get("Microsoft-Windows-DotNETRuntime/298/v0") != BIG_METHODS + 1:
        fail(f"the big trace: {st.stdout[:400]}")
    print(f"ok: a {big['size'] / 1048576:.1f} MB PGO trace ({BIG_METHODS + 1} methods): download complete "
          f"{big['downloadMs']} ms after collectPgoTrace returned")
    ov = res["concurrent"]
    if not (900 <= ov["shortMs"] < 2500 and ov["longMs"] >= 2900) or ov["shortId"] == ov["longId"]:
        fail(f"overlapping collections did not each stop at their own window: {ov}")
    print(f"ok: overlapping collections stopped at {ov['shortMs']:.0f} ms and {ov['longMs']:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
