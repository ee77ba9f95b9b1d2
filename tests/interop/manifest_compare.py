#!/usr/bin/env python3
"""Runtime-provider events decoded with ClrEtwAll (2019) or the built-in data against TraceEvent.

usage: manifest_compare.py MANTRA TRACE --decoded N --undefined M [--builtin]

With --builtin: no manifest is converted or passed; `MANTRA dump --json --sorted TRACE` decodes the
runtime events with the built-in providers (manifest/clr/), and every runtime event must carry a
name. Otherwise:

  * converts $MANTRA_SHARED_DIR/fixtures/manifests/ClrEtwAll-coreclr-2019.man with
    `$MANTRA_PYTHON $MANTRA_GEN --emit-yaml` into $MANTRA_BINARY_DIR/interop/ClrEtwAll-2019.<pid>.yaml;
  * `MANTRA dump --json --sorted --manifest YAML TRACE`: no payload mismatch on stderr; among the events
    of Microsoft-Windows-DotNETRuntime, ...Rundown, ...Private, ...Stress exactly N have
    field_source "manifest" and exactly M "none" (events no manifest defines: listed; the events the
    2019 manifest lacks decode with the built-in data, which comes after --manifest);
  * `$MANTRA_TE_DUMP compare TRACE <that dump>`: 0 differences (fields of "manifest" events are
    compared with TraceEvent's CLR parsers, tests/interop/README.md rules 4-6 and 9).
Without ../shared: SKIP (exit 0), a failure with MANTRA_REQUIRE_INTEROP=1.
"""
import json
import os
import shlex
import subprocess
import sys
from collections import Counter

RUNTIME = {"Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown",
           "Microsoft-Windows-DotNETRuntimePrivate", "Microsoft-Windows-DotNETRuntimeStress"}


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main(argv):
    builtin = argv[-1:] == ["--builtin"]
    if builtin:
        argv = argv[:-1]
    if len(argv) != 6 or argv[2] != "--decoded" or argv[4] != "--undefined":
        fail(__doc__)
    mantra, trace, want_decoded, want_undefined = argv[0], argv[1], int(argv[3]), int(argv[5])
    shared = os.environ.get("MANTRA_SHARED_DIR", "../shared")
    man = os.path.join(shared, "fixtures", "manifests", "ClrEtwAll-coreclr-2019.man")
    if not os.path.exists(man) or not os.path.exists(trace):
        if os.environ.get("MANTRA_REQUIRE_INTEROP") == "1":
            fail(f"{man} or {trace} not found and MANTRA_REQUIRE_INTEROP=1")
        print(f"SKIP: {man} or {trace} not found")
        return 0
    te = shlex.split(os.environ.get("MANTRA_TE_DUMP", ""))
    if not te:
        fail("MANTRA_TE_DUMP is not set")
    scratch = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "/tmp"), "interop")
    os.makedirs(scratch, exist_ok=True)
    stem = os.path.join(scratch, os.path.basename(os.path.dirname(trace)) + "-" + os.path.basename(trace))
    if builtin:
        ours = stem + ".builtin.jsonl"
        with open(ours, "wb") as f:
            p = subprocess.run([mantra, "dump", "--json", "--sorted", trace], stdout=f, stderr=subprocess.PIPE)
    else:
        yaml = os.path.join(scratch, f"ClrEtwAll-2019.{os.getpid()}.yaml")
        gen = [os.environ.get("MANTRA_PYTHON", "python3"), os.environ["MANTRA_GEN"], "--emit-yaml", man]
        with open(yaml, "wb") as f:
            p = subprocess.run(gen, stdout=f, stderr=subprocess.PIPE)
        if p.returncode != 0:
            fail(f"mantra-gen --emit-yaml exited {p.returncode}: {p.stderr.decode()}")
        try:
            ours = stem + ".manifest.jsonl"
            with open(ours, "wb") as f:
                p = subprocess.run([mantra, "dump", "--json", "--sorted", "--manifest", yaml, trace],
                                   stdout=f, stderr=subprocess.PIPE)
        finally:
            os.unlink(yaml)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        fail(f"mantra dump exited {p.returncode}: {err}")
    if "payload" in err:
        fail(f"payloads that do not match the manifest: {err}")
    source, undefined = Counter(), Counter()
    all_manifest = 0
    with open(ours, encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            all_manifest += o["field_source"] == "manifest"
            if o["provider"] not in RUNTIME:
                continue
            source[o["field_source"]] += 1
            if builtin and not o["name"]:
                fail(f"runtime event without a name: {line}")
            if o["field_source"] == "none":
                undefined[f'{o["provider"]}/{o["event_id"]}/v{o["version"]}'] += 1
            elif o["field_source"] != "manifest":
                fail(f'runtime event with field_source {o["field_source"]}: {line}')
    what = "the built-in providers" if builtin else "ClrEtwAll 2019 (then the built-in providers)"
    print(f"runtime-provider events: {source['manifest']} decoded with {what}, "
          f"{source['none']} not defined by any")
    for k in sorted(undefined):
        print(f"  not defined: {k}: {undefined[k]}")
    if builtin:  # `mantra stats` without --manifest agrees: no decode error, the same manifest events
        st = subprocess.run([mantra, "stats", "--json", trace], capture_output=True, text=True)
        stats = json.loads(st.stdout)
        if stats["decode_errors"] != 0 or stats["manifest_events"] != all_manifest:
            fail(f"mantra stats: decode_errors {stats['decode_errors']} (want 0), manifest_events "
                 f"{stats['manifest_events']} (want {all_manifest})")
        print(f"mantra stats: {stats['events']} events, {stats['manifest_events']} from the built-in manifests, "
              "0 decode errors")
    p = subprocess.run(te + ["compare", trace, ours, "--max", "20"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    text = p.stdout.decode("utf-8", "replace")
    print(text, end="")
    if source["manifest"] != want_decoded or source["none"] != want_undefined:
        fail(f"expected {want_decoded} decoded and {want_undefined} undefined runtime events")
    if p.returncode != 0 or " 0 differences" not in text.splitlines()[-1]:
        fail("TraceEvent's compare found differences")
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
