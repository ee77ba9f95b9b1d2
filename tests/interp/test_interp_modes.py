#!/usr/bin/env python3
"""test_interp_modes - differential test of the probe rewrite: random terminating programs (every
backward branch and backward switch is guarded by a global budget in local 0 that only decreases)
run under `mantra run` with MANTRA_InterpPgo=0, 1 and 2. All three must print the same output,
and every probe of mode 1 (entry, loop heads) must have the same count in mode 2, which probes
those offsets too (mode 1 lands most back edges on counting branches, mode 2 also forward ones).
Fixed seed: deterministic. Environment: MANTRA_TOOL (the mantra binary), MANTRA_BINARY_DIR."""
import os
import random
import subprocess
import sys

MANTRA = os.environ.get("MANTRA_TOOL", "build/tools/mantra")
SCRATCH = os.path.join(os.environ.get("MANTRA_BINARY_DIR", "build"), "tests", "interp", "modes")
PROGRAMS = 200


def back_guard(end):
    """Spends one unit of the budget in local 0; jumps to `end` (forward) when it is exhausted."""
    return [" ldloc 0", " ldc.i8 1", " sub", " dup", " stloc 0", " ldc.i8 0", f" ble {end}"]


def gen(rng):
    """One method of random statements L0..Ln-1, each starting at stack depth 0 under its label."""
    n = rng.randint(3, 25)
    labels = [f"L{i}" for i in range(n + 1)]
    out = [".module R 01234567-89ab-cdef-0123-456789abcdef", ".method R.main void()", ".locals 4",
           f" ldc.i8 {rng.randint(0, 60)}", " stloc 0"]
    for i in range(n):
        out.append(f"{labels[i]}:")
        k = rng.random()
        r = rng.randint(1, 3)
        if k < 0.25:  # arithmetic and output
            out += [f" ldloc {r}", f" ldc.i8 {rng.randint(-3, 7)}", " add", f" stloc {r}", f" ldloc {r}", " print.i",
                    " newline"]
        elif k < 0.45:  # forward conditional branch
            op = rng.choice(["blt", "bge", "beq", "bne", "ble", "bgt"])
            out += [f" ldloc {r}", f" ldc.i8 {rng.randint(-2, 5)}", f" {op} {labels[rng.randint(i + 1, n)]}"]
        elif k < 0.6:  # guarded backward branches (conditional, then maybe unconditional)
            t = labels[rng.randint(0, i)]
            out += back_guard(f"E{i}") + [f" ldloc {r}", f" brtrue {t}", f" br {t}" if rng.random() < 0.3 else " nop",
                                          f"E{i}: nop"]
        elif k < 0.75:  # switch, guarded when a target is backward
            ts = [labels[rng.randint(0, n)] for _ in range(rng.randint(1, 4))]
            back = any(int(x[1:]) <= i for x in ts)
            out += (back_guard(f"E{i}") if back else []) + [f" ldloc {r}", f" switch {', '.join(ts)}"]
            out += [f"E{i}: nop"] if back else []
        elif k < 0.85:
            out += [f" ldloc {r}", f" ldc.i8 {rng.randint(0, 2)}", " xor", f" stloc {r}"]
        elif rng.random() < 0.5:
            out += [f" br {labels[rng.randint(i + 1, n)]}"]
        else:
            out += [" ldloc 0", " print.i", " newline"]
    out += [f"{labels[n]}: ldloc 1", " print.i", " newline", " ret", ".end"]
    return "\n".join(out) + "\n"


def probes(err):
    """{IL offset: count} from the `probe METHOD TOKEN IL_xxxx COUNT` lines of --probes."""
    d = {}
    for line in err.splitlines():
        if line.startswith("probe "):
            f = line.split()
            d[f[3]] = int(f[4])
    return d


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    path = os.path.join(SCRATCH, "g.masm")
    rng = random.Random(20261201)
    for i in range(PROGRAMS):
        src = gen(rng)
        with open(path, "w") as f:
            f.write(src)
        res = []
        for mode in "012":
            env = dict(os.environ, MANTRA_InterpPgo=mode, MANTRA_InterpPgoMethods="")
            res.append(subprocess.run([MANTRA, "run", path, "--probes"], env=env, capture_output=True, text=True,
                                      timeout=60))
        if any(r.returncode != 0 for r in res):
            print(f"program {i}: exit status {[r.returncode for r in res]}: {res[0].stderr}\n{src}")
            return 1
        if not (res[0].stdout == res[1].stdout == res[2].stdout):
            print(f"program {i}: the output differs between modes\n{src}")
            return 1
        p1, p2 = probes(res[1].stderr), probes(res[2].stderr)
        if not p1 or "IL_0000" not in p1 or any(p2.get(k) != v for k, v in p1.items()):
            print(f"program {i}: mode 1 counts {p1} differ from mode 2 {p2}\n{src}")
            return 1
    print(f"{PROGRAMS} programs: same output in modes 0/1/2, mode-1 counts equal in mode 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
