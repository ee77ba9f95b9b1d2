#!/usr/bin/env python3
"""`mantra collect` sends the CollectTracing request that dotnet-trace 10 sends, byte for byte.

usage: profiles_compare.py MANTRA OUTDIR

A recording endpoint (this script: a Unix socket $TMPDIR/dotnet-diagnostic-PID-1-socket of a live
`sleep`, in a fresh TMPDIR) answers every command with UNKNOWN_COMMAND and keeps the bytes it got.
For each profile of dotnet-trace 10's collect (dotnet-common, dotnet-sampled-thread-time,
gc-verbose, gc-collect, database), for the default (no --profile, no --providers) and for
--providers: `dotnet-trace collect -p PID ...` (tests/interop/dotnet-tools.json) and `mantra collect
-p PID ...` each run against it; the commands they send must be the same bytes, in the same order
(gc-collect: CollectTracing4 with rundown keyword 1, then CollectTracing2 without rundown after the
refusal). Both tools then fail (the endpoint refuses): mantra with exit 1 and the HRESULT named.
Without dotnet: SKIP (a failure with MANTRA_REQUIRE_INTEROP=1).
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
UNKNOWN = b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 24, 0xFF, 0xFF, 0) + struct.pack("<I", 0x80131385)
CASES = [["--profile", p] for p in ("dotnet-common", "dotnet-sampled-thread-time", "gc-verbose", "gc-collect",
                                    "database")] + [[], ["--providers", "Mantra-Demo:0xF:5,Other:0x10:Verbose"]]


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


class Recorder:
    """A diagnostics endpoint that records each command and refuses it."""

    def __init__(self, tmp, pid):
        self.path = os.path.join(tmp, f"dotnet-diagnostic-{pid}-1-socket")
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.got, self.stop = [], False
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            with c:
                c.settimeout(5)
                data = b""
                while len(data) < 20 or len(data) < struct.unpack_from("<H", data, 14)[0]:
                    part = c.recv(65536)
                    if not part:
                        break
                    data += part
                self.got.append(data)
                c.sendall(UNKNOWN)

    def take(self):
        got, self.got = self.got, []
        return got

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()
        os.unlink(self.path)


def main(argv):
    if len(argv) != 2:
        fail(__doc__)
    mantra, outdir = argv
    if not shutil.which("dotnet"):
        if os.environ.get("MANTRA_REQUIRE_INTEROP") == "1":
            fail("dotnet missing and MANTRA_REQUIRE_INTEROP=1")
        print("SKIP: dotnet missing")
        return 0
    outdir = os.path.abspath(outdir)
    os.makedirs(outdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="mantra-prof-")
    env = dict(os.environ, TMPDIR=tmp, DOTNET_CLI_TELEMETRY_OPTOUT="1", DOTNET_NOLOGO="1")
    sleeper = subprocess.Popen(["sleep", "300"])
    rec = Recorder(tmp, sleeper.pid)
    try:
        for args in CASES:
            out = os.path.join(outdir, "refused.nettrace")
            d = subprocess.run(["dotnet", "tool", "run", "dotnet-trace", "--", "collect", "-p", str(sleeper.pid), *args,
                                "-o", out], cwd=HERE, env=env, capture_output=True, text=True, timeout=120,
                               stdin=subprocess.DEVNULL)
            theirs = rec.take()
            m = subprocess.run([mantra, "collect", "-p", str(sleeper.pid), *args, "-o", out], env=env,
                               capture_output=True, text=True, timeout=60)
            ours = rec.take()
            if not theirs:
                fail(f"{args}: dotnet-trace sent nothing (exit {d.returncode}: {d.stdout}{d.stderr})")
            if ours != theirs:
                fail(f"{args}: mantra collect sent {[x.hex() for x in ours]}, dotnet-trace {[x.hex() for x in theirs]}")
            if m.returncode != 1 or "UNKNOWN_COMMAND" not in m.stderr or os.path.exists(out):
                fail(f"{args}: mantra collect against a refusing endpoint: exit {m.returncode}, {m.stderr!r}")
            print(f"{' '.join(args) or '(defaults)'}: the same {len(ours)} command(s), "
                  f"{', '.join(f'{x[16]:02x}{x[17]:02x} ({len(x)} bytes)' for x in ours)}")
    finally:
        rec.close()
        sleeper.kill()
        sleeper.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
