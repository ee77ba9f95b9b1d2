#!/usr/bin/env python3
"""clr-builtin-current: the built-in runtime providers (manifest/clr/runtime.yaml) are exactly what
`mantra-gen @manifest/clr/runtime.args` makes of the current fixture manifest (docs/manifest.md
"Refreshing the built-in data"). Prints SKIP (CTest: skipped) without the fixture, fails then when
MANTRA_REQUIRE_INTEROP=1.

    check_clr_builtin.py GEN_SCRIPT MAN_FILE REPO_ROOT
"""
import difflib
import os
import subprocess
import sys


def main() -> int:
    gen, man, root = sys.argv[1:4]
    if not os.path.exists(man):
        if os.environ.get("MANTRA_REQUIRE_INTEROP") == "1":
            print(f"clr-builtin-current: fixture {man} not found (MANTRA_REQUIRE_INTEROP=1)")
            return 1
        print(f"SKIP: clr-builtin-current: fixture {man} not found (set MANTRA_REQUIRE_INTEROP=1 to make this fail)")
        return 0
    cmd = [sys.executable, gen, "@manifest/clr/runtime.args", man]
    made = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=root).stdout
    path = os.path.join(root, "manifest", "clr", "runtime.yaml")
    with open(path, encoding="utf-8") as f:
        have = f.read()
    if have != made:
        diff = list(difflib.unified_diff(have.splitlines(), made.splitlines(), "manifest/clr/runtime.yaml",
                                         "mantra-gen output", lineterm="", n=1))
        print("\n".join(diff[:60]))
        print(f"clr-builtin-current: manifest/clr/runtime.yaml differs from the generator's output "
              f"({len(diff)} diff lines); refresh it: {' '.join(cmd[1:])} > manifest/clr/runtime.yaml")
        return 1
    print(f"clr-builtin-current: manifest/clr/runtime.yaml is current ({len(made)} bytes, "
          f"{made.count(chr(10))} lines, from manifest/clr/runtime.args)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
