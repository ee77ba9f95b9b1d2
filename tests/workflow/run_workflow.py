#!/usr/bin/env python3
"""The maintainer's workflow end to end (CTest: manifest-workflow; docs/manifest.md "Changing the
manifest"), on copies of manifest/dotnet.yaml in the build tree:

compatible  adds JitInstrumentationDataVerbose V1 (V0's fields and Tier, UInt16, at the end) and the
            PGO kind WorkflowProbeIntCount (0x281, 4 bytes); regenerates into a copy of generated/;
            `mantra-gen --compat` classifies the change as compatible (additions only, no breaking
            change); libmantra, `mantra` and tests/workflow/project/workflow_writer.c are built
            against the copy (tests/workflow/project); the writer writes one method with V0 and one
            with V1 through a real session; the rebuilt `mantra pgo` reads both, names the new kind
            (kind_name in the JSON, from libmantra's kinds), and `mantra dump` shows V1's Tier. The
            main build's `mantra pgo` (the unchanged manifest) reads the same trace too: V1 as a newer
            version with fields appended, the new kind unnamed, the same text profile.
breaking    inserts a field into the middle of JitInstrumentationDataVerbose's template:
            `mantra-gen --compat` exits 1 and names it.

    run_workflow.py --source DIR --work DIR --mantra MAIN_MANTRA [--python PY] [--cmake CMAKE] [--jobs N]

Prints each step; exits 1 at the first check that fails, saying what it expected.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

NEW_KIND = "WorkflowProbeIntCount"
NEW_KIND_VALUE = 0x281


def run(argv, **kw):
    print("+ " + " ".join(argv), flush=True)
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, **kw)


def check(ok, what, detail=""):
    if not ok:
        print(f"manifest-workflow: FAILED: {what}" + (f"\n{detail}" if detail else ""), file=sys.stderr)
        sys.exit(1)
    print(f"  ok: {what}", flush=True)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def edit(text, anchor, insert, after=True, start=0):
    """text with insert placed after (or before) the first anchor at or after start."""
    at = text.find(anchor, start)
    check(at >= 0, f"the manifest has {anchor.strip()!r}")
    at = at + len(anchor) if after else at
    return text[:at] + insert + text[at:]


TEMPLATE = "      - name: JitInstrumentationDataVerbose\n        fields:\n"
V0_EVENT = ("      - name: JitInstrumentationDataVerbose\n        id: 298\n")


def compatible(text):
    """V1 of event 298 (its own template: V0's fields and Tier) and a new PGO kind."""
    start = text.index(TEMPLATE)
    end = text.index("      - name: ", start + len(TEMPLATE))
    v1 = text[start:end].replace("name: JitInstrumentationDataVerbose\n",
                                 "name: JitInstrumentationDataVerbose_V1\n", 1)
    v1 += "          - {name: Tier, type: UInt16}\n"
    text = text[:end] + v1 + text[end:]
    ev = text.index(V0_EVENT)
    ev_end = text.index("      - name: ", ev + len(V0_EVENT))
    block = text[ev:ev_end]
    v1_event = block.replace("        id: 298\n", "        id: 298\n        version: 1\n", 1) \
                    .replace("template: JitInstrumentationDataVerbose\n", "template: JitInstrumentationDataVerbose_V1\n")
    check("version: 1" in v1_event and "_V1\n" in v1_event, "V1 of event 298 written")
    text = text[:ev_end] + v1_event + text[ev_end:]
    check(text.rstrip().endswith("}"), "pgo_kinds is the manifest's last list")
    return text.rstrip("\n") + f"\n  - {{name: {NEW_KIND}, value: {NEW_KIND_VALUE:#x}, size: 4}}\n"


def breaking(text):
    """A field inserted between MethodFlags and DataSize of JitInstrumentationDataVerbose V0."""
    return edit(text, "          - {name: MethodFlags, type: UInt32}\n", "          - {name: Tier, type: UInt16}\n",
                start=text.index(TEMPLATE))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mantra", required=True, help="the main build's mantra (unchanged manifest)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--jobs", default="2")
    a = ap.parse_args()
    src, work = os.path.abspath(a.source), os.path.abspath(a.work)
    gen = [a.python, os.path.join(src, "tools", "mantra-gen")]
    original = os.path.join(src, "manifest", "dotnet.yaml")
    with open(original, encoding="utf-8") as f:
        text = f.read()
    shutil.rmtree(work, ignore_errors=True)

    # ---- breaking: a field in the middle ---------------------------------------------------------
    bad = os.path.join(work, "breaking", "dotnet.yaml")
    write(bad, breaking(text))
    r = run(gen + ["--compat", original, bad])
    check(r.returncode == 1, "--compat exits 1 for a field inserted in the middle", r.stdout + r.stderr)
    check("JitInstrumentationDataVerbose" in r.stderr and "error:" in r.stderr and
          "compat: " in r.stdout and "0 breaking" not in r.stdout,
          "--compat names the breaking change", r.stdout + r.stderr)
    print(r.stderr.rstrip())

    # ---- compatible: a new version and a new kind ------------------------------------------------
    manifest = os.path.join(work, "compatible", "manifest", "dotnet.yaml")
    generated = os.path.join(work, "compatible", "generated")
    write(manifest, compatible(text))
    r = run(gen + ["--compat", original, manifest])
    check(r.returncode == 0, "--compat exits 0 for a new version and a new kind", r.stdout + r.stderr)
    check("compat: 0 breaking change(s), 3 addition(s)" in r.stdout and "version 1 of event id 298" in r.stdout,
          "--compat: three additions (the template, the version, the kind)", r.stdout + r.stderr)
    check("JitInstrumentationDataVerbose" in r.stdout and NEW_KIND in r.stdout, "--compat names both", r.stdout)
    print(r.stdout.rstrip())
    r = run(gen + ["-o", generated, manifest])
    check(r.returncode == 0, "mantra-gen regenerates the copy", r.stderr)
    r = run(gen + ["-o", generated, "@manifest/clr/readers.args"], cwd=src)
    check(r.returncode == 0, "the built-in runtime data's readers beside it", r.stderr)
    r = run(gen + ["--check", "-o", generated, manifest])
    check(r.returncode == 0, "--check: the copy is fresh", r.stderr)
    r = run(gen + ["--check", "-o", os.path.join(src, "generated"), manifest])
    check(r.returncode == 1 and "dotnet_readers.h: stale" in r.stderr and "dotnet_defs.h: stale" in r.stderr,
          "--check against the checked-in generated/ names the stale files (what CI shows)", r.stderr)

    # ---- build libmantra, mantra and the writer against the copy -----------------------------------
    build = os.path.join(work, "build")
    r = run([a.cmake, "-S", os.path.join(src, "tests", "workflow", "project"), "-B", build,
             "-DCMAKE_BUILD_TYPE=Release", f"-DMANTRA_SOURCE_DIR={src}", f"-DMANTRA_GENERATED_DIR={generated}",
             f"-DMANTRA_DOTNET_MANIFEST={manifest}", f"-DMANTRA_PYTHON={a.python}"])
    check(r.returncode == 0, "configure the workflow build", r.stdout[-3000:] + r.stderr[-3000:])
    r = run([a.cmake, "--build", build, "-j", a.jobs, "--target", "mantra_cli", "workflow_writer"])
    check(r.returncode == 0, "build libmantra, mantra and workflow_writer against the copy",
          r.stdout[-4000:] + r.stderr[-4000:])
    new_mantra = os.path.join(build, "tools", "mantra")

    trace = os.path.join(work, "workflow.nettrace")
    r = run([os.path.join(build, "workflow_writer"), trace])
    check(r.returncode == 0, "workflow_writer writes V0 and V1 through a session", r.stdout + r.stderr)

    r = run([new_mantra, "stats", "--json", trace])
    stats = json.loads(r.stdout) if r.returncode == 0 else {}
    by_event = stats.get("by_event", {})
    check(by_event.get("Microsoft-Windows-DotNETRuntime/298/v0") == 1 and
          by_event.get("Microsoft-Windows-DotNETRuntime/298/v1") == 1 and stats.get("errors") == [],
          "the trace holds one V0 and one V1 event 298 and decodes cleanly", r.stdout + r.stderr)
    r = run([new_mantra, "dump", "--json", trace])
    v1 = [json.loads(line) for line in r.stdout.splitlines() if '"event_id":298' in line and '"version":1' in line]
    check(len(v1) == 1 and v1[0]["fields"].get("Tier") == 2, "mantra dump shows V1's Tier", r.stdout[-2000:] + r.stderr)

    profiles = {}
    for who, tool in (("rebuilt", new_mantra), ("main", a.mantra)):
        out = os.path.join(work, f"{who}.json")
        r = run([tool, "pgo", trace, "-o", out, "--format", "json"])
        check(r.returncode == 0 and "2 methods from 1 trace" in r.stderr and "0 bad payloads" in r.stderr
              and "did not fit" not in r.stderr, f"the {who} converter reads both versions", r.stderr)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        methods = {m["name"]: m for m in doc["methods"]}
        check(sorted(methods) == ["FromV0", "FromV1"], f"the {who} converter: both methods", json.dumps(doc)[:2000])
        for name, values in (("FromV0", [[7], [11, 13]]), ("FromV1", [[5], [3, 2]])):
            recs = methods[name]["records"]
            check([r_["kind"] for r_ in recs] == [0x41, NEW_KIND_VALUE] and [r_["values"] for r_ in recs] == values,
                  f"the {who} converter: {name}'s records and values", json.dumps(recs))
        profiles[who] = methods
        txt = os.path.join(work, f"{who}.txt")
        r = run([tool, "pgo", trace, "-o", txt])
        check(r.returncode == 0, f"the {who} converter writes the text profile", r.stderr)
        r = run([tool, "pgo", "--check", txt])
        check(r.returncode == 0, f"the {who} converter's text profile parses back (--check)", r.stdout + r.stderr)
    kinds = {who: [r_["kind_name"] for r_ in profiles[who]["FromV1"]["records"]] for who in profiles}
    check(kinds["rebuilt"] == ["BasicBlockIntCount", NEW_KIND], "the rebuilt converter names the new kind", str(kinds))
    check(kinds["main"] == ["BasicBlockIntCount", None], "the main build's converter does not know it", str(kinds))
    with open(os.path.join(work, "rebuilt.txt"), encoding="utf-8") as f1, \
            open(os.path.join(work, "main.txt"), encoding="utf-8") as f2:
        check(f1.read() == f2.read(), "both text profiles are the same (kinds are numbers there)")
    print("manifest-workflow: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
