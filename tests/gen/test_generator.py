"""The generator's front end tested over its corpora, one case per file (pytest).

invalid/NAME.EXT (.yaml, .yml, .xml, .man) holds exactly one problem; NAME.EXT.expected beside it
is what `mantra-gen --validate` must print on stderr (nothing on stdout, exit status 1, never a
Python traceback). For the YAML cases the runtime's manifest loader (mantra_manifest_load_file, run
through the gen_loadcheck program whose path CTest passes in MANTRA_GEN_LOADCHECK) must reject the
same file with the same first line (FILE:LINE:COL: error: MESSAGE; the generator may add a note),
unless NAME.EXT.loader records that it does not, and why:

    accepts: REASON                     the loader loads the file (it checks structure only)
    differs: FILE:LINE:COL: REASON      the loader rejects it at that other location

compat/NAME.old.EXT, NAME.new.EXT and NAME.expected: `mantra-gen --compat OLD NEW` must give

    exit: N
    --- stderr
    ...breaking changes (errors), or the diagnostics of a manifest that does not load...
    --- stdout
    ...additions (notes) and the summary line...

The cases run the generator in this process (mantra_gen.cli.main, from the source root so that it
prints relative paths); test_tool_runs_as_a_program checks that the tools/mantra-gen program
prints the same. Also: the real ClrEtwAll.man of the .NET runtime (shared fixtures) validates.

Environment (set by CTest): MANTRA_SOURCE_DIR (repo root; default: two folders up),
MANTRA_SHARED_DIR (../shared), MANTRA_GEN_LOADCHECK (gen_loadcheck; the loader cases are skipped
without it), MANTRA_REQUIRE_INTEROP=1 to fail instead of skipping when the shared fixtures are absent.
"""
import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

SOURCE_DIR = os.environ.get("MANTRA_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE_DIR, "generator"))

from mantra_gen.cli import main  # noqa: E402

INVALID_DIR = "tests/gen/invalid"
COMPAT_DIR = "tests/gen/compat"
MIN_INVALID = 45
MANIFEST_SUFFIXES = (".yaml", ".yml", ".xml", ".man")
YAML_SUFFIXES = (".yaml", ".yml")
CLR_MANIFEST = "fixtures/manifests/ClrEtwAll-coreclr-2019.man"


def _names(rel_dir, suffixes):
    return sorted(n for n in os.listdir(os.path.join(SOURCE_DIR, rel_dir)) if n.endswith(suffixes))


def _read(rel_path):
    with open(os.path.join(SOURCE_DIR, rel_path), "rb") as f:
        return f.read()


def _exists(rel_path):
    return os.path.exists(os.path.join(SOURCE_DIR, rel_path))


INVALID = _names(INVALID_DIR, MANIFEST_SUFFIXES)
COMPAT = [n[:-len(".expected")] for n in _names(COMPAT_DIR, (".expected",))]


def run_gen(argv):
    """mantra-gen's main() in this process from the source root: (exit status, stdout, stderr) as
    bytes. An exception escaping main() is a crash and fails the test as it is."""
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(SOURCE_DIR)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else 1
    finally:
        os.chdir(cwd)
    return status, out.getvalue().encode("utf-8"), err.getvalue().encode("utf-8")


def _no_traceback(name, out, err):
    assert b"Traceback" not in out and b"Traceback" not in err, f"{name}: the tool crashed:\n{out}{err}"


# ---- invalid manifests ------------------------------------------------------------------------
@pytest.mark.parametrize("name", INVALID)
def test_invalid_manifest(name):
    expected = _read(f"{INVALID_DIR}/{name}.expected")
    status, out, err = run_gen(["--validate", f"{INVALID_DIR}/{name}"])
    _no_traceback(name, out, err)
    assert status == 1, f"{name}: exit status {status}, expected 1; stderr:\n{err.decode()}"
    assert out == b"", f"{name}: expected no stdout, got:\n{out.decode()}"
    assert err == expected, (f"{name}: stderr differs from {name}.expected\n--- expected\n{expected.decode()}"
                             f"--- actual\n{err.decode()}")


def test_invalid_corpus_is_complete():
    """The corpus is big enough, every manifest has its .expected file and the other way round, and
    every .loader file belongs to a YAML manifest."""
    assert len(INVALID) >= MIN_INVALID, f"only {len(INVALID)} invalid manifests, want at least {MIN_INVALID}"
    for name in INVALID:
        assert _exists(f"{INVALID_DIR}/{name}.expected"), f"{name} has no {name}.expected"
    for extra in _names(INVALID_DIR, (".expected", ".loader")):
        manifest = extra.rsplit(".", 1)[0]
        assert manifest in INVALID, f"{extra} has no manifest"
        if extra.endswith(".loader"):
            assert manifest.endswith(YAML_SUFFIXES), f"{extra}: the runtime loader reads YAML only"


# ---- the runtime loader over the same corpus --------------------------------------------------
def _location(line):
    """'FILE:LINE:COL' of a 'FILE:LINE:COL: error: MESSAGE' line."""
    head, sep, _ = line.partition(": error: ")
    assert sep, f"not a diagnostic: {line!r}"
    return head


def _loader_expectation(name):
    """(kind, location) from NAME.loader, or ('rejects', the generator's location) without one."""
    if not _exists(f"{INVALID_DIR}/{name}.loader"):
        first = _read(f"{INVALID_DIR}/{name}.expected").decode("utf-8").splitlines()[0]
        return "rejects", _location(first)
    text = _read(f"{INVALID_DIR}/{name}.loader").decode("utf-8").strip()
    kind, _, rest = text.partition(": ")
    assert kind in ("accepts", "differs") and rest, f"{name}.loader: want 'accepts: REASON' or 'differs: FILE:LINE:COL: REASON'"
    if kind == "accepts":
        return "accepts", None
    location = ":".join(rest.split(":")[:3])
    assert rest.startswith(location + ": ") and len(rest) > len(location) + 2, f"{name}.loader: no reason given"
    return "differs", location


@pytest.mark.parametrize("name", [n for n in INVALID if n.endswith(YAML_SUFFIXES)])
def test_runtime_loader_agrees(name):
    tool = os.environ.get("MANTRA_GEN_LOADCHECK")
    if not tool:
        pytest.skip("MANTRA_GEN_LOADCHECK is not set (no libmantra in this build)")
    r = subprocess.run([tool, f"{INVALID_DIR}/{name}"], cwd=SOURCE_DIR, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)
    if r.returncode == 77:
        pytest.skip("libmantra was built without libyaml")
    out = r.stdout.decode("utf-8", "replace")
    kind, location = _loader_expectation(name)
    if kind == "accepts":
        assert r.returncode == 0 and out == "", f"{name}: {name}.loader says the loader accepts it, but:\n{out}{r.stderr.decode()}"
        return
    assert r.returncode == 1, f"{name}: the runtime loader exited {r.returncode}\n{out}{r.stderr.decode()}"
    got = out.splitlines()[0]
    assert _location(got) == location, f"{name}: the runtime loader reports {got!r}, expected the location {location}"
    if kind == "rejects":  # same place, same words (the generator may add a 'did you mean' note)
        want = _read(f"{INVALID_DIR}/{name}.expected").decode("utf-8").splitlines()[0]
        assert got == want, f"{name}: the runtime loader reports {got!r}, the generator {want!r}"


# ---- compat ------------------------------------------------------------------------------------
def _side(name, which):
    for ext in (".yaml", ".xml", ".yml", ".man"):
        rel = f"{COMPAT_DIR}/{name}.{which}{ext}"
        if _exists(rel):
            return rel
    return None


def _parse_expected(name, text):
    first, _, _ = text.partition(b"\n")
    assert first.startswith(b"exit: "), f"{name}.expected: want 'exit: N', '--- stderr' and '--- stdout' lines"
    status = int(first[len(b"exit: "):])
    err_mark = text.find(b"\n--- stderr\n")
    assert err_mark >= 0, f"{name}.expected: no '--- stderr' line"
    err_start = err_mark + len(b"\n--- stderr\n")
    out_mark = text.find(b"\n--- stdout\n", err_start - 1)
    assert out_mark >= 0, f"{name}.expected: no '--- stdout' line"
    return status, text[err_start:out_mark + 1], text[out_mark + len(b"\n--- stdout\n"):]


@pytest.mark.parametrize("name", COMPAT)
def test_compat_case(name):
    old, new = _side(name, "old"), _side(name, "new")
    assert old and new, f"{name}: missing {name}.old.* or {name}.new.*"
    want_status, want_err, want_out = _parse_expected(name, _read(f"{COMPAT_DIR}/{name}.expected"))
    status, out, err = run_gen(["--compat", old, new])
    _no_traceback(name, out, err)
    assert status == want_status, f"{name}: exit status {status}, expected {want_status}\nstderr:\n{err.decode()}"
    assert err == want_err, f"{name}: stderr differs\n--- expected\n{want_err.decode()}--- actual\n{err.decode()}"
    assert out == want_out, f"{name}: stdout differs\n--- expected\n{want_out.decode()}--- actual\n{out.decode()}"


def test_compat_cases_are_complete():
    """There are cases, and every NAME.old.* has its NAME.expected (else it would never run)."""
    assert COMPAT, f"no compat cases in {COMPAT_DIR}"
    for old in _names(COMPAT_DIR, tuple(".old" + s for s in MANIFEST_SUFFIXES)):
        name = old[:old.index(".old.")]
        assert name in COMPAT, f"{old} has no .expected file"


# ---- the program itself ------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["--validate", f"{INVALID_DIR}/{INVALID[0]}"],
                                  ["--compat", _side(COMPAT[0], "old"), _side(COMPAT[0], "new")]],
                         ids=["validate", "compat"])
def test_tool_runs_as_a_program(argv):
    """tools/mantra-gen, run as a program, prints what main() prints in this process."""
    r = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "tools", "mantra-gen")] + argv,
                       cwd=SOURCE_DIR, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == run_gen(argv)


def test_clr_etw_all_validates():
    """The real ClrEtwAll.man of the .NET runtime is valid."""
    shared = os.environ.get("MANTRA_SHARED_DIR")
    path = os.path.join(shared, CLR_MANIFEST) if shared else None
    if path is None or not os.path.exists(path):
        assert os.environ.get("MANTRA_REQUIRE_INTEROP") != "1", \
            f"MANTRA_REQUIRE_INTEROP=1 but {path or 'MANTRA_SHARED_DIR (unset)'} is missing"
        pytest.skip("the shared ClrEtwAll fixture is missing" if path else "MANTRA_SHARED_DIR is not set")
    status, out, err = run_gen(["--validate", path])
    assert (status, out, err) == (0, b"", b""), f"ClrEtwAll: exit status {status}\nstdout:\n{out}\nstderr:\n{err}"


# ---- --provider and --layouts-only (the built-in data of manifest/clr/) ----------------------------
def test_emit_yaml_provider_and_layouts_only():
    """--provider keeps the named providers in the order given; --layouts-only drops event and provider
    messages but keeps task, opcode, keyword and map display names; the result loads back."""
    status, out, err = run_gen(["--emit-yaml", "--layouts-only", "--provider", "Mantra-Demo",
                                "--provider", "Microsoft-DotNETCore-SampleProfiler", "manifest/dotnet.yaml"])
    assert (status, err) == (0, b"")
    text = out.decode()
    names = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("  - name: ")]
    assert names == ["Mantra-Demo", "Microsoft-DotNETCore-SampleProfiler"]
    assert "Demo provider of mantra emit" not in text          # the provider message is gone
    assert "{value: 0x1, message: Steady}" in text              # map entries keep their names
    assert "{name: Ticks, mask: 0x1, message: Small fixed-size events}" in text  # keyword display names
    full = run_gen(["--emit-yaml", "--provider", "Mantra-Demo", "manifest/dotnet.yaml"])[1].decode()
    assert "Demo provider of mantra emit" in full


def test_layouts_only_drops_event_messages(tmp_path):
    src = tmp_path / "m.yaml"
    src.write_text("providers:\n  - name: P\n    tasks:\n      - {name: T, value: 1, message: Tee}\n"
                   "    events:\n      - {name: E, id: 1, task: T, opcode: \"win:Start\", message: \"Count=%1\"}\n")
    status, out, err = run_gen(["--emit-yaml", "--layouts-only", str(src)])
    assert (status, err) == (0, b"")
    assert out.decode() == ("providers:\n  - name: P\n    tasks:\n      - {name: T, value: 1, message: Tee}\n"
                            "    events:\n      - name: E\n        id: 1\n        task: T\n        opcode: win:Start\n")


def test_emit_yaml_unknown_provider():
    status, out, err = run_gen(["--emit-yaml", "--provider", "Nope", "manifest/dotnet.yaml"])
    assert (status, out) == (1, b"")
    assert err.startswith(b"manifest/dotnet.yaml:1:1: error: no provider named 'Nope' (the manifest has: ")


def test_layouts_only_needs_emit():
    status, out, err = run_gen(["--layouts-only", "manifest/dotnet.yaml"])
    assert (status, out) == (2, b"")
    assert err.endswith(b"mantra-gen: error: --provider/--layouts-only go with --emit-yaml or --emit-xml\n")


# ---- --readers-only, --base, --prefix, @FILE (the readers of the built-in data) ---------------------
def test_readers_only_base_and_prefix(tmp_path):
    """--readers-only writes BASE_defs.h and BASE_readers.{h,c} only, --base names them, --prefix
    renames a provider's C names (readers, every-version readers, defs), and an @FILE gives the same."""
    status, out, err = run_gen(["--readers-only", "--base", "rt", "--prefix", "Mantra-Demo=Dm",
                                "-o", str(tmp_path), "manifest/dotnet.yaml"])
    assert (status, err) == (0, b"")
    assert sorted(os.listdir(tmp_path)) == ["rt_defs.h", "rt_readers.c", "rt_readers.h"]
    readers = (tmp_path / "rt_readers.h").read_text()
    assert '#include "rt_defs.h"' in readers
    assert "int mantra_Dm_Tick_decode_any(unsigned version," in readers
    assert "mantra_Demo_" not in readers
    assert "#define MANTRA_Dm_KEYWORD_Ticks" in (tmp_path / "rt_defs.h").read_text()
    assert "_EVENT_COUNT" not in (tmp_path / "rt_defs.h").read_text()  # no registry: no event indices
    args = tmp_path / "gen.args"
    args.write_text("# comment line\n--readers-only --base rt  # trailing comment\n"
                    "--prefix Mantra-Demo=Dm\nmanifest/dotnet.yaml\n")
    assert run_gen(["--check", "-o", str(tmp_path), "@" + str(args)]) == (0, b"", b"")
    (tmp_path / "rt_readers.c").write_text("stale")
    status, out, err = run_gen(["--check", "-o", str(tmp_path), "@" + str(args)])
    assert status == 1
    assert err.decode().endswith("rt_readers.c: stale (regenerate with tools/mantra-gen -o " + str(tmp_path)
                                 + " --readers-only --base rt --prefix Mantra-Demo=Dm manifest/dotnet.yaml)\n")


@pytest.mark.parametrize("argv,message", [
    (["--prefix", "Mantra-Demo", "manifest/dotnet.yaml"], "--prefix 'Mantra-Demo': expected PROVIDER=PREFIX"),
    (["--prefix", "Mantra-Demo=9x", "manifest/dotnet.yaml"], "--prefix 'Mantra-Demo=9x': expected PROVIDER=PREFIX"),
    (["--prefix", "Nope=X", "--list-outputs", "manifest/dotnet.yaml"],
     "--prefix names provider 'Nope', which no manifest given has"),
    (["--base", "a-b", "manifest/dotnet.yaml"], "--base 'a-b' is not a C identifier"),
    (["--base", "x", "manifest/dotnet.yaml", "tests/golden/alltypes.yaml"], "--base takes exactly one manifest"),
    (["--readers-only", "--emit-yaml", "manifest/dotnet.yaml"], "--readers-only/--base go with generating files"),
], ids=["no-equals", "bad-prefix", "unknown-provider", "bad-base", "base-two", "readers-emit"])
def test_generation_option_errors(argv, message):
    status, out, err = run_gen(argv)
    assert (status, out) == (2, b"")
    assert message.encode() in err, err


def test_prefix_collision_is_reported(tmp_path):
    """A --prefix that makes two providers share a C prefix is a located error, as in the manifest."""
    status, out, err = run_gen(["--prefix", "Mantra-Demo=EventPipe", "-o", str(tmp_path), "manifest/dotnet.yaml"])
    assert (status, out) == (1, b"")
    assert b"generates C name 'mantra_EventPipe_provider', already generated by" in err, err


def test_clr_readers_args_are_current():
    """manifest/clr/readers.args regenerates generated/clr_* exactly (also `make test-gen`)."""
    assert run_gen(["--check", "-o", "generated", "@manifest/clr/readers.args"]) == (0, b"", b"")


# ---- --c-layout (manifest/clr/runtime.args) ---------------------------------------------------------
def test_c_layout_option(tmp_path):
    """--c-layout TEMPLATE.FIELD gives a struct field layout c before validation: printed by --emit-yaml
    and --emit-xml, refused where a member has no fixed size, an error for a name that is no struct."""
    src = tmp_path / "m.yaml"
    src.write_text("providers:\n  - name: P\n    templates:\n      - name: T\n        fields:\n"
                   "          - {name: N, type: UInt16}\n          - name: S\n            type: struct\n"
                   "            count: N\n            fields:\n              - {name: A, type: UInt8}\n"
                   "              - {name: B, type: Pointer}\n    events:\n      - {name: E, id: 1, template: T}\n")
    status, out, err = run_gen(["--emit-yaml", "--c-layout", "T.S", str(src)])
    assert (status, err) == (0, b"")
    assert "            count: N\n            layout: c\n" in out.decode()
    status, out, err = run_gen(["--emit-xml", "--c-layout", "T.S", str(src)])
    assert (status, err) == (0, b"")
    assert 'mantra:layout="c"' in out.decode()
    status, out, err = run_gen(["--validate", "--c-layout", "T.N", str(src)])
    assert (status, out) == (1, b"")
    assert b"--c-layout T.N: no template 'T' has a struct field 'N'" in err
    status, out, err = run_gen(["--validate", "--c-layout", "Structs.Items", "tests/golden/alltypes.yaml"])
    assert (status, out) == (1, b"")
    assert b"error: member 'Name' of struct 'Items' (layout c) has no fixed size" in err


def test_clr_runtime_args_mark_gc_fit_bucket_info_and_loh_compact():
    """manifest/clr/runtime.yaml gives GCFitBucketInfo's and GCLOHCompact's Values the C layout
    (manifest/clr/runtime.args), and no other struct."""
    with open(os.path.join(SOURCE_DIR, "manifest/clr/runtime.yaml"), encoding="utf-8") as f:
        text = f.read()
    for template in ("GCFitBucketInfo", "GCLOHCompact"):
        at = text.index(f"      - name: {template}\n        fields:")
        assert "          - name: Values\n            type: struct\n            count: Count\n            layout: c\n" \
            in text[at:at + 600]
    assert text.count("layout: c") == 2
