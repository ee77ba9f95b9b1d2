#!/usr/bin/env python3
"""`mantra ps`, `mantra collect` and `mantra counters` against mantra processes (`mantra emit --duration`), through the
CLI (docs/cli.md, docs/diagnostics.md "The client").

usage: collect_cli.py MANTRA OUTDIR

Checked: ps --json lists the process with its command line and skips (and counts) the socket file
of a process that is gone; collect -p with --providers and --duration writes a complete trace with
no drops; Ctrl-C (SIGINT) in the middle of a collection leaves a complete trace (end tag); the target
killed in the middle leaves every complete block (readable, not complete, events in it) and exit 0;
--diagnostic-port (listen) with a process started with MANTRA_DiagnosticPorts=SOCK,connect,suspend:
every event it wrote is in the trace, its first one included, and the socket file is removed;
TCP both ways (a process listening on 127.0.0.1:PORT, and collect listening for one that connects);
counters (csv) of a process writing 2000 events per second into its own session: events-written
2000 +- 10 % in every interval but the first and last, sessions 2 (its own and ours);
bad input: an unknown pid, the pid of a stale socket file, a port nobody listens on (exit 1, no file
left behind), a malformed provider spec, a bad pid, an unknown profile or option (exit 2).
The processes' socket files live in a fresh TMPDIR under /tmp (sun_path holds 108 bytes), removed
at the end; the traces go to OUTDIR.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(cmd, env, **kw):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, **kw)


def stats(mantra, trace, env):
    p = run([mantra, "stats", "--json", trace], env)
    if p.returncode != 0:
        fail(f"mantra stats {trace}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def start_emit(mantra, env, seconds):
    p = subprocess.Popen([mantra, "emit", "--duration", str(seconds), "--rate", "2000"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sock_prefix = f"dotnet-diagnostic-{p.pid}-"
    for _ in range(100):  # the server is up once its socket file is there
        if any(f.startswith(sock_prefix) for f in os.listdir(env["TMPDIR"])):
            return p
        time.sleep(0.05)
    p.kill()
    fail("mantra emit published no diagnostics socket")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    if len(argv) != 2:
        fail(__doc__)
    mantra, outdir = argv
    os.makedirs(outdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="mantra-cli-")
    env = dict(os.environ, TMPDIR=tmp)
    procs = []
    try:
        emit = start_emit(mantra, env, 30)
        procs.append(emit)
        # a socket file whose process is gone
        open(os.path.join(tmp, "dotnet-diagnostic-2147483001-5-socket"), "w").close()

        p = run([mantra, "ps", "--json"], env)
        listed = json.loads(p.stdout) if p.returncode == 0 else fail(f"ps: {p.returncode} {p.stderr}")
        if [e["pid"] for e in listed] != [emit.pid]:
            fail(f"ps --json listed {listed}, want only pid {emit.pid}")
        e = listed[0]
        if "emit --duration 30 --rate 2000" not in e["command_line"] or e["os"] != "Linux" or not e["arch"]:
            fail(f"ps --json: {e}")
        if "1 socket file of processes that are gone skipped" not in p.stderr:
            fail(f"ps did not count the stale socket file: {p.stderr!r}")
        table = run([mantra, "ps"], env)
        if table.returncode != 0 or str(emit.pid) not in table.stdout or "COMMAND LINE" not in table.stdout:
            fail(f"ps table: {table.stdout}{table.stderr}")

        # --providers and --duration
        a = os.path.join(outdir, "duration.nettrace")
        p = run([mantra, "collect", "-p", str(emit.pid), "--providers", "Mantra-Demo:0x1:5", "--duration", "1.5",
                 "-o", a], env)
        if p.returncode != 0:
            fail(f"collect --duration: exit {p.returncode}: {p.stderr}")
        s = stats(mantra, a, env)
        ticks = s["by_name"].get("Mantra-Demo/Tick", 0)
        if not s["complete"] or s["dropped"] or s["decode_errors"] or not 1500 <= ticks <= 6000:
            fail(f"collect --duration 1.5 at 2000 events/s: {s}")
        if set(s["by_name"]) - {"Mantra-Demo/Tick", "Microsoft-DotNETCore-EventPipe/ProcessInfo"}:
            fail(f"collect --providers Mantra-Demo:0x1:5 brought other events: {s['by_name']}")
        print(f"collect --duration 1.5: complete, {ticks} Tick events, nothing dropped")

        # Ctrl-C in the middle
        b = os.path.join(outdir, "sigint.nettrace")
        c = subprocess.Popen([mantra, "collect", "-p", str(emit.pid), "--providers", "Mantra-Demo:0xF:5", "-o", b],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        c.send_signal(signal.SIGINT)
        out, err = c.communicate(timeout=60)
        if c.returncode != 0:
            fail(f"collect after SIGINT: exit {c.returncode}: {err}")
        s = stats(mantra, b, env)
        if not s["complete"] or s["dropped"] or s["by_name"].get("Mantra-Demo/Tick", 0) < 500:
            fail(f"collect stopped by SIGINT: {s}")
        # no session of collect's is left running in the process: its sessions counter shows only
        # the session that asks (counters' own)
        p = run([mantra, "counters", "-p", str(emit.pid), "--counters", "Mantra.Runtime[sessions]", "--duration", "1.5",
                 "--format", "csv"], env)
        left = [float(r.split(",")[4]) for r in p.stdout.splitlines()[1:]]
        if p.returncode != 0 or not left or set(left) != {1}:
            fail(f"sessions running in the process after the SIGINT collect: {left} ({p.stderr})")
        print(f"collect stopped by SIGINT: complete, {s['events']} events; no session of its own left running")

        # the target killed in the middle
        victim = start_emit(mantra, env, 60)
        procs.append(victim)
        k = os.path.join(outdir, "killed.nettrace")
        c = subprocess.Popen([mantra, "collect", "-p", str(victim.pid), "--providers", "Mantra-Demo:0x1:5", "-o", k],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        victim.kill()
        victim.wait()
        out, err = c.communicate(timeout=60)
        if c.returncode != 0 or "the process ended the stream" not in err:
            fail(f"collect of a killed process: exit {c.returncode}: {err}")
        p = run([mantra, "stats", "--json", k], env)
        s = json.loads(p.stdout) if p.stdout else fail(f"stats of the killed process's trace: {p.stderr}")
        if p.returncode != 0 or s["complete"] or s["by_name"].get("Mantra-Demo/Tick", 0) < 500:
            fail(f"trace of a killed process: exit {p.returncode} {s} {p.stderr}")
        print(f"collect of a killed process: {s['events']} events in its complete blocks, no end tag")

        # reverse connect with suspend: collect listens, the process connects and waits for the
        # session before it writes its first event; every event it wrote is in the trace
        sock = os.path.join(tmp, "collect.sock")
        r = os.path.join(outdir, "reverse.nettrace")
        c = subprocess.Popen([mantra, "collect", "--diagnostic-port", sock, "--providers", "Mantra-Demo:0x1:5",
                              "-o", r], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        p = run([mantra, "emit", "--duration", "1", "--rate", "2000", "--mix", "tick"],
                dict(env, MANTRA_DiagnosticPorts=f"{sock},connect,suspend"))
        out, err = c.communicate(timeout=60)
        if p.returncode != 0 or c.returncode != 0:
            fail(f"reverse connect: emit exit {p.returncode} {p.stderr}; collect exit {c.returncode} {err}")
        written = json.loads(p.stdout)["events_per_thread"]
        s = stats(mantra, r, env)
        if not s["complete"] or s["by_name"].get("Mantra-Demo/Tick") != written:
            fail(f"reverse connect: emit wrote {written} Tick events, the trace holds {s}")
        first = next(json.loads(line) for line in run([mantra, "dump", "--json", "--sorted", r], env).stdout.splitlines()
                     if '"name":"Tick"' in line)
        if first["fields"] != {"Thread": 0, "Index": 0}:
            fail(f"reverse connect: the first Tick is {first['fields']}, not the process's first event")
        if os.path.exists(sock):
            fail("reverse connect: collect left its socket file behind")
        print(f"reverse connect with suspend: all {written} events written, the first one included")

        # TCP both ways: a process listening on a port (MANTRA_DiagnosticPorts HOST:PORT,listen), and
        # collect listening for a process that connects (HOST:PORT,connect,suspend)
        port = free_port()
        tcp_emit = subprocess.Popen([mantra, "emit", "--duration", "4", "--rate", "2000", "--mix", "tick"],
                                    env=dict(env, MANTRA_DiagnosticPorts=f"127.0.0.1:{port},listen"),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(tcp_emit)
        time.sleep(0.5)
        t1 = os.path.join(outdir, "tcp-connect.nettrace")
        p = run([mantra, "collect", "--diagnostic-port", f"127.0.0.1:{port},connect", "--providers",
                 "Mantra-Demo:0x1:5", "--duration", "1", "-o", t1], env)
        s = stats(mantra, t1, env) if p.returncode == 0 else fail(f"collect over TCP: {p.returncode} {p.stderr}")
        if not s["complete"] or s["by_name"].get("Mantra-Demo/Tick", 0) < 1000:
            fail(f"collect over TCP (connect): {s}")
        tcp_emit.wait(timeout=30)
        port = free_port()
        t2 = os.path.join(outdir, "tcp-listen.nettrace")
        c = subprocess.Popen([mantra, "collect", "--diagnostic-port", f"127.0.0.1:{port}", "--providers",
                              "Mantra-Demo:0x1:5", "-o", t2], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        p = run([mantra, "emit", "--duration", "1", "--rate", "2000", "--mix", "tick"],
                dict(env, MANTRA_DiagnosticPorts=f"127.0.0.1:{port},connect,suspend"))
        out, err = c.communicate(timeout=60)
        written = json.loads(p.stdout)["events_per_thread"] if p.returncode == 0 else fail(f"emit: {p.stderr}")
        s = stats(mantra, t2, env)
        if c.returncode != 0 or not s["complete"] or s["by_name"].get("Mantra-Demo/Tick") != written:
            fail(f"collect over TCP (listen): exit {c.returncode} {err}; emit wrote {written}; {s}")
        print(f"TCP: connect to a listening process ({s['events']} events), and listen for one that connects "
              f"(all {written} events)")

        # counters of a mantra process that writes 2000 events per second into its own session
        busy = subprocess.Popen([mantra, "emit", "--duration", "8", "--rate", "2000", "--trace",
                                 os.path.join(outdir, "counted.nettrace")], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        procs.append(busy)
        time.sleep(0.5)
        csv = os.path.join(outdir, "counters.csv")
        p = run([mantra, "counters", "-p", str(busy.pid), "--counters", "Mantra.Runtime[events-written,sessions]",
                 "--duration", "4.5", "--format", "csv", "-o", csv], env)
        if p.returncode != 0:
            fail(f"counters: exit {p.returncode}: {p.stderr}")
        rows = open(csv).read().splitlines()
        if rows[0] != "Timestamp,Provider,Counter Name,Counter Type,Mean/Increment":
            fail(f"counters csv header: {rows[0]}")
        written = [float(r.split(",")[4]) for r in rows[1:] if ",Events Written (Count / 1 sec),Rate," in r]
        sessions = [float(r.split(",")[4]) for r in rows[1:] if ",Sessions Running,Metric," in r]
        # per-second counts: a second's events can land in its neighbour's interval when the
        # emitting process is descheduled at a boundary (2310 then 1692 was seen on a loaded
        # machine), so the middle intervals' mean is held to 5% and each one to 25%
        mid = written[1:-1]
        if (len(written) < 3 or abs(sum(mid) / len(mid) - 2000) > 100 or any(abs(v - 2000) > 500 for v in mid)
                or set(sessions) != {2}):
            fail(f"counters of emit --rate 2000 (its session and ours): events written {written}, sessions {sessions}")
        print(f"counters: events written per second {written}, sessions {sessions[0]:.0f}")
        for args, status, words in [
                (["-p", str(busy.pid), "--counters", "Mantra.Runtime[events-written"], 2, "--counters"),
                (["-p", str(busy.pid), "--format", "xml"], 2, "--format 'xml'"),
                (["-p", str(busy.pid), "--refresh-interval", "0"], 2, "--refresh-interval '0'"),
                (["-p", "2147483000"], 1, "no such process: 2147483000"),
        ]:
            p = run([mantra, "counters", *args], env)
            if p.returncode != status or words not in p.stderr:
                fail(f"counters {args}: exit {p.returncode} (want {status}), stderr {p.stderr!r}")
        busy.wait(timeout=30)

        # bad input: exit 1 (no file left behind) or 2
        bad = os.path.join(outdir, "bad.nettrace")
        for args, status, words in [
                (["-p", "2147483000"], 1, "no such process: 2147483000"),
                (["-p", "2147483001"], 1, "no such process: 2147483001"),
                (["--diagnostic-port", "127.0.0.1:1,connect"], 1, "cannot connect to 127.0.0.1:1"),
                (["--diagnostic-port", os.path.join(tmp, "nobody") + ",connect"], 1, "cannot connect to"),
                (["--diagnostic-port", os.path.join(tmp, "dotnet-diagnostic-2147483001-5-socket")], 1,
                 "cannot listen on"),
                (["-p", str(emit.pid), "--providers", "Mantra-Demo:0xZZ"], 2, "--providers:"),
                (["-p", "abc"], 2, "-p 'abc': want a process id"),
                (["-p", str(emit.pid), "--profile", "cpu-sampling"], 2, "unknown profile 'cpu-sampling'"),
                (["-p", str(emit.pid), "--duration", "1:2"], 2, "--duration '1:2'"),
                (["-p", str(emit.pid), "--format", "speedscope"], 2, "the only format is nettrace"),
                (["--bogus"], 2, "unknown argument '--bogus'"),
                ([], 2, "give exactly one of -p PID"),
        ]:
            if os.path.exists(bad):
                os.unlink(bad)
            p = run([mantra, "collect", *args, "-o", bad], env)
            if p.returncode != status or words not in p.stderr or os.path.exists(bad):
                fail(f"collect {args}: exit {p.returncode} (want {status}), stderr {p.stderr!r}, "
                     f"file left: {os.path.exists(bad)}")
        p = run([mantra, "ps", "--bogus"], env)
        if p.returncode != 2:
            fail(f"ps --bogus: exit {p.returncode}")
        for cmd in (["ps", "--help"], ["collect", "--help"], ["counters", "--help"]):
            p = run([mantra, *cmd], env)
            if p.returncode != 0 or not p.stdout.startswith("Usage: mantra " + cmd[0]):
                fail(f"{cmd}: {p.returncode} {p.stdout[:80]}")
        print("bad input: exit statuses and messages as documented, no file left behind")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
