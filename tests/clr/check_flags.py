#!/usr/bin/env python3
"""Checks that each given source was compiled with mantra's warning set.

    check_flags.py --compile-commands build/compile_commands.json [--werror] FILE...

Each FILE must have an entry in compile_commands.json whose command line holds -std=c11, -Wall,
-Wextra, -Wpedantic and -Wconversion (and -Werror with --werror), and no flag that turns one of
them off again (-w, -Wno-error, -Wno-conversion, ...). Exit status 0 when all do, 1 otherwise.
"""
import argparse
import json
import os
import shlex
import sys

REQUIRED = ["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion"]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile-commands", required=True)
    ap.add_argument("--werror", action="store_true")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    required = REQUIRED + (["-Werror"] if args.werror else [])
    try:
        with open(args.compile_commands, encoding="utf-8") as fh:
            db = json.load(fh)
    except OSError as exc:
        print(f"check_flags: cannot read {args.compile_commands}: {exc} "
              "(CMAKE_EXPORT_COMPILE_COMMANDS must be ON)")
        return 1
    by_file = {}
    for entry in db:
        path = entry["file"]
        if not os.path.isabs(path):
            path = os.path.join(entry.get("directory", ""), path)
        cmd = entry.get("arguments") or shlex.split(entry.get("command", ""))
        by_file.setdefault(os.path.realpath(path), []).append(cmd)
    bad = 0
    for f in args.files:
        cmds = by_file.get(os.path.realpath(f))
        if not cmds:
            print(f"FAIL {f}: not in {args.compile_commands}")
            bad += 1
            continue
        for cmd in cmds:
            missing = [flag for flag in required if flag not in cmd]
            # the last -std= wins
            stds = [a for a in cmd if a.startswith("-std=")]
            if stds and stds[-1] != "-std=c11":
                missing.append(f"-std=c11 (last is {stds[-1]})")
            undo = [a for a in cmd if a == "-w" or a in ("-Wno-error", "-Wno-all", "-Wno-extra", "-Wno-pedantic",
                                                          "-Wno-conversion")]
            if missing or undo:
                print(f"FAIL {f}: missing {missing} undone by {undo}\n     {' '.join(cmd)}")
                bad += 1
            else:
                print(f"ok   {os.path.basename(f)}: {' '.join(required)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
