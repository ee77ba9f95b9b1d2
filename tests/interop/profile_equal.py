#!/usr/bin/env python3
"""profile_equal.py - two text profiles (the CLR's DOTNET_WritePGOData format) hold the same methods,
in any order (tests/interop/pgo-mibc.sh: a trace's profile against the same profile written as a
.mibc and read back).

    profile_equal.py A.txt B.txt

Each method is compared whole: its MethodName and Signature lines and every schema record with its
data lines (counts and handle names). The only allowed difference is the ilSize of the `@@@` line,
which a .mibc does not carry (dotnet-pgo's format has no place for it): counted. Prints
`profile_equal: N methods, equal (I ilSize differences)` and exits 0, or the first differences and 1.
"""
import collections
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import pgo_compare  # noqa: E402  (its parser: the CLR reader's view of the format)


def key(m):
    return (m["name"], m["sig"], tuple((s, tuple(d)) for s, d in m["records"]))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = pgo_compare.parse(sys.argv[1]), pgo_compare.parse(sys.argv[2])
    ca, cb = collections.Counter(key(m) for m in a), collections.Counter(key(m) for m in b)
    il = sum(1 for m in b if m["il_size"] == 0) if any(m["il_size"] for m in a) else 0
    only_a, only_b = ca - cb, cb - ca
    for k in list(only_a)[:5]:
        print(f"profile_equal: only in {sys.argv[1]}: {k[0]} / {k[1]}")
    for k in list(only_b)[:5]:
        print(f"profile_equal: only in {sys.argv[2]}: {k[0]} / {k[1]}")
    same = not only_a and not only_b and len(a) == len(b)
    print(f"profile_equal: {len(a)} and {len(b)} methods, {'equal' if same else 'different'} "
          f"({il} ilSize differences)")
    return 0 if same and a else 1


if __name__ == "__main__":
    sys.exit(main())
