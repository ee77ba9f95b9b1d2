#!/usr/bin/env python3
"""The shared libmantra exports exactly the functions its public headers declare.

    check_exports.py LIBRARY INCLUDE_DIR      nm -D LIBRARY against INCLUDE_DIR/mantra/*.h
    check_exports.py --symbols FILE INCLUDE_DIR   the same with a symbol list (one per line)

Fails (exit 1, one line per symbol) when the library exports a symbol that no public header
declares (an internal leaked: rd_*, mf_*, cm_*, mantra_pal_*, mantra__*), or when a header
declares a function (not static inline) that the library does not export.
"""
import os
import re
import subprocess
import sys

DECL = re.compile(r"\b(mantra_[A-Za-z0-9_]+)\s*\(")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def declared_functions(include_dir):
    """Functions declared (not defined static inline, not macros) in include_dir/mantra/*.h."""
    names = {}
    folder = os.path.join(include_dir, "mantra")
    for header in sorted(os.listdir(folder)):
        if not header.endswith(".h"):
            continue
        text = strip_comments(open(os.path.join(folder, header), encoding="utf-8").read())
        # drop preprocessor lines (macros with mantra_ calls inside) and static inline bodies
        text = "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))
        depth = 0
        statement = ""
        for ch in text:
            if ch == "{":
                if depth == 0:
                    statement = ""  # a struct/enum/union or static inline body follows
                depth += 1
            elif ch == "}":
                depth -= 1
            elif depth > 0:
                continue
            elif ch == ";":
                m = DECL.search(statement)
                if m and "typedef" not in statement and "static" not in statement:
                    names[m.group(1)] = header
                statement = ""
            else:
                statement += ch
    return names


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                         text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TDBRVWiu" and parts[1] != "U":
            name = parts[2].split("@")[0]
            syms.add(name)
    return syms


# Symbols every shared object defines that are not ours.
TOOLCHAIN = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def main(argv):
    if len(argv) == 4 and argv[1] == "--symbols":
        syms = {l.strip() for l in open(argv[2], encoding="utf-8") if l.strip()}
        include_dir = argv[3]
        what = argv[2]
    elif len(argv) == 3:
        syms = exported(argv[1])
        include_dir = argv[2]
        what = argv[1]
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    decl = declared_functions(include_dir)
    syms -= TOOLCHAIN
    leaked = sorted(s for s in syms if s not in decl)
    missing = sorted(n for n in decl if n not in syms)
    for s in leaked:
        print(f"{what}: exports {s}, which no public header declares (mark it static, or keep it "
              f"out of MANTRA_BEGIN_DECLS)")
    for n in missing:
        print(f"{what}: does not export {n}, declared in mantra/{decl[n]}")
    print(f"check_exports: {len(syms)} exported, {len(decl)} declared, {len(leaked)} leaked, "
          f"{len(missing)} missing")
    return 1 if leaked or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
