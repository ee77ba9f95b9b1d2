"""One source of truth (docs/manifest.md): the tools read runtime events through generated readers
and the PGO kinds are defined by the manifest only (pytest, run with tests/gen by test_generator).

* No payload layout of a runtime event is written by hand under tools/: no source there names three
  consecutive fields of a template of manifest/dotnet.yaml or manifest/clr/runtime.yaml in order as a
  layout does ("u64 MethodID | u64 ModuleID | u32 MethodToken"; a member access such as f.MethodID is
  not a layout), and none decodes with the cursor's scalar and string reads (mantra_cursor_u32(), ...).
* The PGO kinds have no second definition: no C source outside generated/ spells a kind's name as a
  string or defines an enum of kinds; the kinds come from MANTRA_PGO_KINDS (dotnet_defs.h).
"""
import os
import re
import sys

SOURCE_DIR = os.environ.get("MANTRA_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE_DIR, "generator"))

from mantra_gen.load import load_manifest  # noqa: E402

MANIFESTS = ("manifest/dotnet.yaml", "manifest/clr/runtime.yaml")
C_SUFFIXES = (".c", ".h")


def _sources(*folders):
    for folder in folders:
        for root, _dirs, files in os.walk(os.path.join(SOURCE_DIR, folder)):
            for f in sorted(files):
                if f.endswith(C_SUFFIXES):
                    path = os.path.join(root, f)
                    with open(path, encoding="utf-8") as fh:
                        yield os.path.relpath(path, SOURCE_DIR), fh.read()


def _field_runs(length=3):
    """Every run of `length` consecutive top-level field names of the runtime templates."""
    runs = set()
    for path in MANIFESTS:
        m = load_manifest(os.path.join(SOURCE_DIR, path))
        for p in m.providers:
            for t in p.templates:
                names = [f.name for f in t.fields]
                for i in range(len(names) - length + 1):
                    runs.add(tuple(names[i:i + length]))
    return runs


def _layout_pattern(run):
    # a name not reached through a member access (., ->) nor part of a longer identifier, the next
    # one within 40 characters of the same line that hold no statement or call punctuation
    gap = r"[^\n;{}()=]{0,40}?"
    word = r"(?<![\w.>])%s(?!\w)"
    return re.compile(gap.join(word % re.escape(n) for n in run))


def find_layouts(sources, runs):
    """(path, line, fields) of each hand-written layout found."""
    found = []
    index = {}
    for run in runs:
        index.setdefault(run[0], []).append(run)
    for path, text in sources:
        for first, rs in index.items():
            if first not in text:
                continue
            for run in rs:
                if not all(n in text for n in run[1:]):
                    continue
                m = _layout_pattern(run).search(text)
                if m:
                    found.append((path, text.count("\n", 0, m.start()) + 1, " ".join(run)))
    return found


CURSOR_READ = re.compile(r"\bmantra_cursor_(u8|u16|u32|u64|pointer|f32|f64|guid|str16|str8|array|bytes)\s*\(")


def test_no_hand_written_layout_under_tools():
    runs = _field_runs()
    assert len(runs) > 300, "the manifests' templates were not read"
    sources = list(_sources("tools"))
    assert any(p.endswith("pgo_events.c") for p, _ in sources)
    found = find_layouts(sources, runs)
    assert not found, "hand-written payload layouts under tools/ (read them with generated readers):\n" + \
        "\n".join(f"{p}:{line}: {fields}" for p, line, fields in found)
    reads = [(p, text.count("\n", 0, m.start()) + 1) for p, text in sources for m in CURSOR_READ.finditer(text)]
    assert not reads, "payloads decoded by hand with the cursor under tools/: " + \
        ", ".join(f"{p}:{line}" for p, line in reads)


def test_the_check_finds_a_layout():
    """The check above can fail: the comment the converter's hand parser had is found."""
    comment = ("/*  298 JitInstrumentationDataVerbose: u16 ClrInstanceID | u32 MethodFlags | u32 DataSize |\n"
               " *      u64 MethodID | u64 ModuleID | u32 MethodToken | UTF-16Z MethodNamespace */\n")
    code = "e->method_id = f.MethodID; e->module_id = f.ModuleID; e->token = f.MethodToken;\n"
    found = find_layouts([("x.c", comment), ("y.c", code)], _field_runs())
    assert found and all(p == "x.c" for p, _, _ in found)
    assert ("x.c", 1, "ClrInstanceID MethodFlags DataSize") in found
    assert CURSOR_READ.search("rc = mantra_cursor_u16(&c->m, &v16);")
    assert not CURSOR_READ.search("mantra_cursor c = mantra_cursor_of(values, pointer_size);")


COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def _without_comments(text):
    """The text with its comments blanked (newlines kept, so that line numbers stay)."""
    return COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def test_pgo_kinds_defined_once():
    m = load_manifest(os.path.join(SOURCE_DIR, "manifest/dotnet.yaml"))
    # "None" is also a token of the CLR text format (a None element's line, pgo.cpp), which the text
    # writer and parser spell as the format does, whatever the manifest calls the kind
    names = [k.name for k in m.pgo_kinds if k.name != "None"]
    assert "BasicBlockIntCount" in names
    quoted = re.compile(r'"(%s)"' % "|".join(map(re.escape, names)))
    enum = re.compile(r"\benum\s+\w*pgo\w*\s*\{", re.I)
    bad = []
    for path, text in _sources("runtime", "tools"):
        text = _without_comments(text)
        for m_ in quoted.finditer(text):
            bad.append(f"{path}:{text.count(chr(10), 0, m_.start()) + 1}: the kind name {m_.group(0)}")
        for m_ in enum.finditer(text):
            bad.append(f"{path}:{text.count(chr(10), 0, m_.start()) + 1}: an enum of PGO kinds")
    assert not bad, "a second definition of the PGO kinds (use MANTRA_PGO_KINDS, mantra_pgo_kind_name):\n" + \
        "\n".join(bad)
