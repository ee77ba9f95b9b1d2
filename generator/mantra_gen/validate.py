"""Semantic checks of a loaded manifest: everything that would produce broken C or broken traces.

The loaders check syntax and shape; :func:`validate` checks what only the whole model can tell:
cross references, duplicates, value ranges, payload shapes the trace format can carry and C names.
Every problem is collected (not just the first) and raised at once as a
:class:`errors.ManifestError`, sorted by location. Each diagnostic sits at the offending node: the
reference (not the definition) for an undefined name, the second occurrence for a duplicate (with a
hint naming the first's line).

Rules (tests/gen/invalid/ has a manifest for each):

* names: providers, keywords, tasks, opcodes (per task and per provider), maps, templates, fields
  (per template and per struct) and pgo kinds are unique; no two nodes generate the same C name
  (:func:`resolve.generated_names`); provider prefixes, event symbols and the names of keywords,
  tasks, opcodes, maps, templates, fields and pgo kinds are C identifiers; field names are not C
  type names of the generated code nor in its ``mantra_`` namespace
* identity: provider names and GUIDs (explicit or derived) are unique and GUIDs well formed; one
  (id, version) per provider; id 0..65535, version 0..255, level 0..5, task 0..65535, opcode
  0..255. Versions of one id may come in any order (ClrEtwAll.man lists GCPerHeapHistory
  version 2 before version 1)
* references: keywords, tasks, opcodes (the event's task's, the provider's or a standard ``win:``
  one), maps and templates are defined
* keywords: each mask is one bit of 64, and no two keywords share one
* maps: values 0..2**64-1, each once per map; a map only on an integer field
* payloads: a ``length`` only on Binary and every Binary has one; a ``count`` only on fixed-size
  scalars (not strings or Binary) and structs, and every struct has one, not both on one field;
  a named count/length is an EARLIER integer (non-array) field of the same template or struct,
  a fixed one is at least 1; structs have members and no structs inside; a used template's fixed
  part stays within 65535 bytes
* struct layout: only on structs, packed or c; a c struct's members have a fixed size
* pgo kinds: value 0..0xffffffff, unique; size one of -1, 0, 1, 2, 4, 8; a kind's size is its
  element type's
"""
from __future__ import annotations

import difflib
import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

from .errors import Collector
from .model import (
    FIELD_TYPES, INTEGER_TYPES, LEVEL_NAMES, STANDARD_OPCODES, STRING_TYPES, Event, Field, Keyword,
    Loc, Manifest, Map, Opcode, PgoKind, Provider, Task, Template,
)
from .resolve import (C_IDENT, event_symbol, generated_names, is_c_ident, provider_guid, provider_prefix,
                      struct_size_param)

MAX_EVENT_ID = 0xFFFF
MAX_VERSION = 0xFF
MAX_TASK = 0xFFFF
MAX_OPCODE = 0xFF
MAX_LEVEL = 5
MAX_PAYLOAD = 0xFFFF          # TraceEvent keeps payload sizes in 16 bits (microsoft/perfview EventPipeEventSource.cs: UserDataLength)
MAX_MAP_VALUE = 0xFFFFFFFFFFFFFFFF
MAX_PGO_VALUE = 0xFFFFFFFF
PGO_SIZES = (-1, 0, 1, 2, 4, 8)
GUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
GUID_HINT = "write xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hexadecimal digits)"
POINTER_SIZE = 8

# Field names become parameter names of the generated writers: they must not shadow a type or a
# local name of the generated code.
RESERVED_TYPE_NAMES = frozenset("""
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t intmax_t
uintmax_t size_t ptrdiff_t wchar_t max_align_t
""".split())
RESERVED_PREFIXES = ("mantra_", "MANTRA_")

# Types whose elements have a fixed size, so `count` can make an array of them (raw elements, no
# prefix, as the runtime's writers lay them out). Strings (NUL-terminated) and Binary (already sized
# by its length) have no element size; structs take a count of their own.
STRUCT_LAYOUTS = ("c",)  # besides the default, packed (None in the model)
ARRAY_TYPES = tuple(t for t in FIELD_TYPES if t not in STRING_TYPES + ("Binary", "struct"))


def first_line(loc: Loc) -> str:
    return f"first defined at line {loc.line}"


def suggest(name: str, candidates: Iterable[str]) -> Optional[str]:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1)
    return f"did you mean '{close[0]}'?" if close else None


def describe(node: object) -> str:
    """How a model node is named in messages."""
    if isinstance(node, Event):
        return f"event '{node.name}' (id {node.id}, version {node.version})"
    if isinstance(node, Provider):
        return f"provider '{node.name}'"
    if isinstance(node, Keyword):
        return f"keyword '{node.name}'"
    if isinstance(node, Task):
        return f"task '{node.name}'"
    if isinstance(node, Opcode):
        return f"opcode '{node.name}'"
    if isinstance(node, Map):
        return f"map '{node.name}'"
    if isinstance(node, PgoKind):
        return f"pgo kind '{node.name}'"
    if isinstance(node, Template):
        return f"template '{node.name}'"
    if isinstance(node, Field):
        return f"field '{node.name}'"
    return repr(node)


class _Validator:
    def __init__(self, m: Manifest):
        self.m = m
        self.diag = Collector()
        # Nodes already reported as duplicates (by identity): the generated-name check skips them,
        # so one mistake gives one diagnostic.
        self.reported: Set[int] = set()

    # -- helpers ---------------------------------------------------------------------------------

    def error(self, loc: Loc, message: str, hint: Optional[str] = None) -> None:
        self.diag.error(loc, message, hint)

    def ident(self, what: str, name: str, loc: Loc, hint: Optional[str] = None) -> None:
        if is_c_ident(name):
            return
        if hint is None:
            hint = (f"'{name}' is a C keyword" if C_IDENT.match(name)
                    else "use letters, digits and '_', not starting with a digit")
        self.error(loc, f"{what} '{name}' is not a valid C identifier", hint)

    def in_range(self, what: str, value: int, owner: str, lo: int, hi: int, loc: Loc,
                 hint: Optional[str] = None) -> bool:
        if lo <= value <= hi:
            return True
        shown = hex(hi) if hi >= 0xFFFFFFFF else str(hi)
        self.error(loc, f"{what} {value} of {owner} is out of range {lo}..{shown}", hint)
        return False

    def unique_names(self, nodes: Iterable[object], what: str, where: str = "") -> Dict[str, object]:
        """Reports every node whose ``name`` repeats an earlier one; returns name -> first node."""
        seen: Dict[str, object] = {}
        for node in nodes:
            name = node.name  # type: ignore[attr-defined]
            if name in seen:
                self.error(node.loc, f"{what} '{name}' is defined twice{where}",  # type: ignore[attr-defined]
                           first_line(seen[name].loc))  # type: ignore[attr-defined]
                self.mark(node)
            else:
                seen[name] = node
        return seen

    def mark(self, node: object) -> None:
        self.reported.add(id(node))
        if isinstance(node, Provider):
            for child in (node.keywords + node.tasks + node.opcodes + node.maps + node.events):
                self.mark(child)
        elif isinstance(node, Task):
            for o in node.opcodes:
                self.mark(o)

    # -- the checks ------------------------------------------------------------------------------

    def run(self) -> None:
        providers = self.unique_names(self.m.providers, "provider")
        guids: Dict[str, Provider] = {}
        for p in self.m.providers:
            guid = provider_guid(p)
            if guid in guids and providers.get(p.name) is p:
                first = guids[guid]
                self.error(p.loc, f"provider '{p.name}' reuses the GUID '{guid}' of provider "
                                  f"'{first.name}'", first_line(first.loc))
            guids.setdefault(guid, p)
            self.provider(p)
        self.pgo_kinds()
        self.c_names()
        self.diag.check()

    def guid(self, guid: Optional[str], owner: str, loc: Loc) -> None:
        if guid is not None and not GUID_RE.match(guid):
            self.error(loc, f"invalid GUID '{guid}' of {owner}", GUID_HINT)

    def provider(self, p: Provider) -> None:
        self.guid(p.guid, f"provider '{p.name}'", p.loc)
        prefix = provider_prefix(p)
        self.ident("provider prefix", prefix, p.loc,
                   None if p.prefix is not None or is_c_ident(prefix)
                   else "it is derived from the provider name; set 'prefix' to choose one")
        self.keywords(p)
        self.tasks_and_opcodes(p)
        self.maps(p)
        self.templates(p)
        self.events(p)

    def keywords(self, p: Provider) -> None:
        self.unique_names(p.keywords, "keyword")
        masks: Dict[int, Keyword] = {}
        for k in p.keywords:
            self.ident("keyword name", k.name, k.loc)
            if k.mask <= 0 or k.mask > 0xFFFFFFFFFFFFFFFF or k.mask & (k.mask - 1):
                self.error(k.loc, f"mask {_hex(k.mask)} of keyword '{k.name}' is not a single bit",
                           "a keyword mask is one of the 64 bits 0x1 .. 0x8000000000000000")
            elif k.mask in masks:
                first = masks[k.mask]
                self.error(k.loc, f"keyword '{k.name}' reuses the mask {_hex(k.mask)} of keyword "
                                  f"'{first.name}'", first_line(first.loc))
            else:
                masks[k.mask] = k

    def opcode_defs(self, opcodes: List[Opcode], where: str) -> None:
        self.unique_names(opcodes, "opcode", where)
        for o in opcodes:
            self.ident("opcode name", o.name, o.loc)
            self.in_range("value", o.value, f"opcode '{o.name}'", 0, MAX_OPCODE, o.loc)

    def tasks_and_opcodes(self, p: Provider) -> None:
        self.unique_names(p.tasks, "task")
        for t in p.tasks:
            self.ident("task name", t.name, t.loc)
            self.in_range("value", t.value, f"task '{t.name}'", 0, MAX_TASK, t.loc)
            self.guid(t.guid, f"task '{t.name}'", t.loc)
            self.opcode_defs(t.opcodes, f" in task '{t.name}'")
        self.opcode_defs(p.opcodes, "")

    def maps(self, p: Provider) -> None:
        self.unique_names(p.maps, "map")
        for mp in p.maps:
            self.ident("map name", mp.name, mp.loc)
            values: Dict[int, object] = {}
            for entry in mp.entries:
                if not self.in_range("value", entry.value, f"map '{mp.name}'", 0, MAX_MAP_VALUE, entry.loc):
                    continue
                if entry.value in values:
                    self.error(entry.loc, f"map '{mp.name}' defines value {_hex(entry.value)} twice",
                               first_line(values[entry.value].loc))  # type: ignore[attr-defined]
                else:
                    values[entry.value] = entry

    def templates(self, p: Provider) -> None:
        self.unique_names(p.templates, "template")
        maps = {mp.name for mp in p.maps}
        used = {e.template for e in p.events if e.template is not None}
        for t in p.templates:
            self.ident("template name", t.name, t.loc)
            self.fields(t.fields, f" in template '{t.name}'", None, maps)
            names = {f.name for f in t.fields}
            for f in t.fields:
                if f.type == "struct" and struct_size_param(f.name) in names:
                    self.error(f.loc, f"struct '{f.name}' needs the writer parameter '{struct_size_param(f.name)}', "
                                      f"which field '{struct_size_param(f.name)}' already uses",
                               "rename one of the two fields")
            if t.name in used:
                size = fixed_size(t.fields)
                if size > MAX_PAYLOAD:
                    self.error(t.loc, f"template '{t.name}' has {size} bytes of fixed payload, "
                                      f"more than {MAX_PAYLOAD}", "an event payload must stay below 64 KiB")

    def fields(self, fields: List[Field], where: str, parent: Optional[Field], maps: Set[str],
               outer: Tuple[str, ...] = ()) -> None:
        """``outer``: names of the template-level fields, when ``fields`` are a struct's members."""
        self.unique_names(fields, "field", where)
        for i, f in enumerate(fields):
            self.ident("field name", f.name, f.loc)
            if f.name in RESERVED_TYPE_NAMES:
                self.error(f.loc, f"field name '{f.name}' is reserved", "it names a C type of the generated code")
            elif f.name.startswith(RESERVED_PREFIXES):
                self.error(f.loc, f"field name '{f.name}' is reserved",
                           "names starting with 'mantra_' belong to the generated code")
            if f.type == "struct":
                if parent is not None:
                    self.error(f.loc, f"struct '{f.name}' is nested in struct '{parent.name}'",
                               "a struct cannot contain structs")
                if f.count is None:
                    self.error(f.loc, f"struct '{f.name}' has no count",
                               "a struct is an array: give it a count (an earlier integer field or a number)")
                if not f.fields:
                    self.error(f.loc, f"struct '{f.name}' has no fields")
                self.fields(f.fields, f" in struct '{f.name}'", f, maps, tuple(x.name for x in fields))
                self.layout(f)
            elif f.layout is not None:
                self.error(f.loc, f"field '{f.name}' of type '{f.type}' cannot have a layout",
                           "a layout applies to struct fields")
            if f.length is not None and f.count is not None:
                self.error(f.loc, f"field '{f.name}' has both a count and a length")
            elif f.count is not None and f.type not in ARRAY_TYPES + ("struct",):
                self.error(f.loc, f"field '{f.name}' of type '{f.type}' cannot have a count",
                           "arrays of strings and of Binary cannot be written")
            elif f.length is not None and f.type != "Binary":
                self.error(f.loc, f"field '{f.name}' of type '{f.type}' cannot have a length",
                           "only Binary fields take a length")
            elif f.type == "Binary" and f.length is None:
                self.error(f.loc, f"field '{f.name}' of type 'Binary' has no length",
                           "give it a length: an earlier integer field or a number")
            self.reference("length", f.length, f, fields, i, outer)
            self.reference("count", f.count, f, fields, i, outer)
            if f.map is not None:
                if f.map not in maps:
                    self.error(f.loc, f"undefined map '{f.map}'", suggest(f.map, maps))
                elif f.type not in INTEGER_TYPES:
                    self.error(f.loc, f"field '{f.name}' of type '{f.type}' cannot have a map",
                               "maps apply to integer fields")

    def layout(self, f: Field) -> None:
        """A struct's layout: packed (the default) or c, whose members must have a C type of a fixed
        size (no strings, Binary or counted arrays: a C struct cannot hold them inline)."""
        if f.layout is None:
            return
        if f.layout not in STRUCT_LAYOUTS:
            self.error(f.loc, f"unknown layout '{f.layout}' of struct '{f.name}'",
                       "packed (the default: members back to back) or c (each member at its natural "
                       "alignment, each element padded to the largest)")
            return
        for m in f.fields:
            if m.type in STRING_TYPES + ("Binary",) or isinstance(m.count, str):
                self.error(m.loc, f"member '{m.name}' of struct '{f.name}' (layout c) has no fixed size",
                           "a C-layout struct holds fixed-size members only: scalars, GUID, Pointer and "
                           "arrays of a fixed count of them")

    def reference(self, what: str, value, f: Field, fields: List[Field], index: int,
                  outer: Tuple[str, ...]) -> None:
        if value is None:
            return
        if isinstance(value, int):
            if value < 1:
                self.error(f.loc, f"{what} {value} of field '{f.name}' is out of range",
                           f"a fixed {what} is at least 1")
            return
        earlier = fields[:index]
        target = next((x for x in reversed(earlier) if x.name == value), None)
        if target is not None and target.type in INTEGER_TYPES and target.count is None:
            return
        if target is not None:
            hint = (f"'{value}' is an array" if target.type in INTEGER_TYPES
                    else f"'{value}' has type '{target.type}'")
        elif any(x.name == value for x in fields[index:]):
            hint = f"'{value}' comes after '{f.name}'" if value != f.name else None
        elif value in outer:
            hint = f"a struct member's {what} must name a member of the same struct"
        else:
            hint = suggest(value, [x.name for x in earlier])
        self.error(f.loc, f"{what} '{value}' of field '{f.name}' does not name an earlier integer field",
                   hint)

    def events(self, p: Provider) -> None:
        keywords = {k.name for k in p.keywords}
        tasks = {t.name: t for t in p.tasks}
        popcodes = {o.name for o in p.opcodes}
        templates = {t.name for t in p.templates}
        seen: Dict[Tuple[int, int], Event] = {}
        for e in p.events:
            self.ident("event symbol", event_symbol(e), e.loc)
            ok = self.in_range("id", e.id, f"event '{e.name}'", 0, MAX_EVENT_ID, e.loc)
            ok = self.in_range("version", e.version, f"event '{e.name}'", 0, MAX_VERSION, e.loc) and ok
            self.in_range("level", e.level, f"event '{e.name}'", 0, MAX_LEVEL, e.loc,
                          "levels are " + ", ".join(f"{v} {n}" for v, n in sorted(LEVEL_NAMES.items())))
            if ok:
                key = (e.id, e.version)
                if key in seen:
                    first = seen[key]
                    if first.name == e.name:
                        msg = f"event '{e.name}' (id {e.id}, version {e.version}) is defined twice"
                    else:
                        msg = (f"event '{e.name}' (id {e.id}, version {e.version}) reuses the id and version "
                               f"of event '{first.name}'")
                    self.error(e.loc, msg, first_line(first.loc))
                    self.mark(e)
                else:
                    seen[key] = e
            for k in e.keywords:
                if k not in keywords:
                    self.error(e.loc, f"undefined keyword '{k}'", suggest(k, keywords))
            task = None
            if e.task is not None:
                task = tasks.get(e.task)
                if task is None:
                    self.error(e.loc, f"undefined task '{e.task}'", suggest(e.task, tasks))
            if e.opcode is not None:
                self.opcode_ref(p, e, task, popcodes)
            if e.template is not None and e.template not in templates:
                self.error(e.loc, f"undefined template '{e.template}'", suggest(e.template, templates))

    def opcode_ref(self, p: Provider, e: Event, task: Optional[Task], popcodes: Set[str]) -> None:
        local = {o.name for o in task.opcodes} if task is not None else set()
        if e.opcode in local or e.opcode in popcodes or e.opcode in STANDARD_OPCODES:
            return
        if e.task is not None and task is None:
            return          # the undefined task is reported; its opcodes are unknown
        owners = [t.name for t in p.tasks if any(o.name == e.opcode for o in t.opcodes)]
        if owners:
            hint = (f"opcode '{e.opcode}' belongs to task '{owners[0]}'; an event can use its own task's "
                    f"opcodes, provider opcodes and win: opcodes")
        else:
            hint = suggest(e.opcode, local | popcodes | set(STANDARD_OPCODES))
        self.error(e.loc, f"undefined opcode '{e.opcode}'", hint)

    def pgo_kinds(self) -> None:
        kinds = self.m.pgo_kinds
        self.unique_names(kinds, "pgo kind")
        values: Dict[int, PgoKind] = {}
        for k in kinds:
            self.ident("pgo kind name", k.name, k.loc)
            if self.in_range("value", k.value, f"pgo kind '{k.name}'", 0, MAX_PGO_VALUE, k.loc):
                if k.value in values:
                    first = values[k.value]
                    self.error(k.loc, f"pgo kind '{k.name}' reuses the value {_hex(k.value)} of pgo kind "
                                      f"'{first.name}'", first_line(first.loc))
                else:
                    values[k.value] = k
            if k.size not in PGO_SIZES:
                self.error(k.loc, f"size {k.size} of pgo kind '{k.name}' is not one of "
                                  + ", ".join(str(s) for s in PGO_SIZES),
                           "bytes per element: 1, 2, 4 or 8; 0 for none; -1 for pointer size")
        # A kind's low 4 bits are its element type (corjit.h, PgoInstrumentationKind), whose size
        # is the size of every kind over it (pgo_formatprocessing.h, InstrumentKindSize).
        for k in kinds:
            elem = values.get(k.value & 0xF) if k.value >= 0x10 else None
            if elem is not None and elem.size != k.size and k.size in PGO_SIZES:
                self.error(k.loc, f"pgo kind '{k.name}' ({_hex(k.value)}) has size {k.size}, but its element type "
                                  f"(the low 4 bits) is pgo kind '{elem.name}' of size {elem.size}",
                           f"give it size {elem.size}, or a value whose low 4 bits name an element type of size {k.size}")

    def c_names(self) -> None:
        # Sorted by name, a provider's descriptor name first (the one a prefix collision is reported by).
        collisions = sorted(((name, nodes) for name, nodes in generated_names(self.m).items() if len(nodes) > 1),
                            key=lambda item: (not item[0].endswith("_provider"), item[0]))
        # Providers first: when two providers share a C prefix, every name of the second collides;
        # report the prefix once and skip the rest.
        for providers_first in (True, False):
            for name, nodes in collisions:
                first = nodes[0]
                for node in nodes[1:]:
                    if isinstance(node, Provider) != providers_first or id(node) in self.reported:
                        continue
                    self.mark(node)     # one diagnostic per node, even for several names
                    self.error(node.loc, f"{describe(node)} generates C name '{name}', "  # type: ignore[attr-defined]
                                         f"already generated by {describe(first)}",
                               first_line(first.loc))  # type: ignore[attr-defined]


def _hex(value: int) -> str:
    return hex(value) if value >= 0 else str(value)


def _fixed(t: str) -> int:
    size = FIELD_TYPES.get(t)
    if t == "Pointer":
        return POINTER_SIZE
    return size or 0


def fixed_size(fields: List[Field]) -> int:
    """Bytes of a payload known without its arguments (variable parts count as 0)."""
    total = 0
    for f in fields:
        if f.type == "struct":
            elem = fixed_size(f.fields)
        elif f.type == "Binary":
            elem = f.length if isinstance(f.length, int) else 0
        else:
            elem = _fixed(f.type)
        count = f.count if isinstance(f.count, int) else (0 if f.count is not None else 1)
        total += elem * max(count, 0)
    return total


def validate(m: Manifest) -> None:
    """Raise :class:`errors.ManifestError` with every semantic problem of ``m``, sorted by location."""
    _Validator(m).run()
