"""Renders a validated model into C sources, headers and an events reference (Jinja2 templates).

This module only prepares data: C names, parameter names, sizes, counts, decode kinds, packing
offsets and the nettrace metadata bytes of each event. Every piece of C text is written by the
templates under generator/templates/: the file templates (defs.h.j2, registry.c.j2, ...) lay the
files out, and the macro templates emit one construct each (c_writer.j2: a writer's parameters,
signature, call, payload descriptor and packing; c_reader.j2: a reader's struct member and decode
statement; c_registry.j2: a metadata blob's bytes and a GUID initializer).
Output is deterministic: it depends on the model and the output base name only.
"""
from __future__ import annotations

import hashlib
import os
import re
import struct
import uuid
from dataclasses import dataclass
from typing import Dict, List, Optional, Union

import jinja2

from . import resolve
from .model import LEVEL_NAMES, Event, Field, Manifest, Provider, Template

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "templates")

# Fixed-size scalar types: C type, payload size, cursor reader, nettrace TypeCode (System.TypeCode
# values, 17 Guid, 16 DateTime: dotnet/runtime, src/native/eventpipe/ep-types.h,
# EventPipeParameterType; microsoft/perfview, src/TraceEvent/EventPipe/EventPipeMetadata.cs).
SCALARS = {
    "Int8": ("int8_t", 1, "u8", 5),
    "UInt8": ("uint8_t", 1, "u8", 6),
    "Int16": ("int16_t", 2, "u16", 7),
    "UInt16": ("uint16_t", 2, "u16", 8),
    "Int32": ("int32_t", 4, "u32", 9),
    "UInt32": ("uint32_t", 4, "u32", 10),
    "Int64": ("int64_t", 8, "u64", 11),
    "UInt64": ("uint64_t", 8, "u64", 12),
    "Float": ("float", 4, "f32", 13),
    "Double": ("double", 8, "f64", 14),
    "Boolean": ("bool", 4, "u32", 3),
    "FILETIME": ("uint64_t", 8, "u64", 16),
}
UNSIGNED_OF = {"int8_t": "uint8_t", "int16_t": "uint16_t", "int32_t": "uint32_t", "int64_t": "uint64_t"}
# Array element C types (what a writer takes a pointer to, and the mantra_array accessor).
ARRAY_ELEM = {
    "Int8": ("int8_t", "1", "i8"), "UInt8": ("uint8_t", "1", "u8"),
    "Int16": ("int16_t", "2", "i16"), "UInt16": ("uint16_t", "2", "u16"),
    "Int32": ("int32_t", "4", "i32"), "UInt32": ("uint32_t", "4", "u32"),
    "Int64": ("int64_t", "8", "i64"), "UInt64": ("uint64_t", "8", "u64"),
    "Float": ("float", "4", "f32"), "Double": ("double", "8", "f64"),
    "Boolean": ("uint32_t", "4", "u32"), "FILETIME": ("uint64_t", "8", "u64"),
    "GUID": ("mantra_guid", "16", None), "Pointer": ("uintptr_t", "sizeof(uintptr_t)", "u64"),
}
# Field kinds whose C the templates know, by manifest type (scalars and arrays are set apart below).
KIND_OF = {"struct": "struct", "Binary": "binary", "UnicodeString": "str16", "AnsiString": "str8",
           "GUID": "guid", "Pointer": "pointer", "Boolean": "bool"}


def _utf16z(text: str) -> bytes:
    return text.encode("utf-16-le") + b"\0\0"


@dataclass
class FieldView:
    """One field as the templates see it. kind: struct, array, binary, str16, str8, guid, pointer,
    bool or scalar; the other members matter only for some kinds."""
    name: str
    type: str
    kind: str
    doc: str                           # the events reference's description of the type
    ctype: str = ""                    # scalar C type, or array element C type
    size: str = ""                     # scalar size, or array element size (a C constant)
    reader: str = ""                   # scalar: the mantra_cursor_<reader> it is decoded with
    unsigned: Optional[str] = None     # signed scalar: the unsigned type it is read as
    accessor: Optional[str] = None     # array: the mantra_array_<accessor> that reads an element
    count: Union[int, str, None] = None  # array or struct: element count (a number or a field name)
    length: Union[int, str, None] = None  # binary: byte length (a number or a field name)
    owner: str = ""                    # the template's C type (prefix of a struct's helpers)
    elem: str = ""                     # struct: the element struct type
    size_param: str = ""               # struct: the writer parameter carrying the size in bytes
    align: str = ""                    # a C-layout struct's member: its alignment (a C expression)


@dataclass
class StructView:
    name: str                      # field name
    c_elem: str                    # element struct type
    fields: List[FieldView]
    c_layout: bool = False         # layout: c (members at their natural alignment, elements padded)
    c_align: str = ""              # layout c: the element's alignment, its largest member's (a C expression)


@dataclass
class PackStep:
    """One field of a fixed-layout payload: copied at offset + pointers * sizeof(uintptr_t)."""
    kind: str                      # pointer, guid, bool or scalar
    name: str
    offset: int
    pointers: int
    size: int


@dataclass
class TemplateView:
    name: str
    c_type: str
    fields: List[FieldView]
    structs: List[StructView]
    has_utf16: bool
    used: bool
    packed: Optional[List[PackStep]] = None  # fixed layout: the fields packed into mantra_p_
    packed_size: Optional[PackStep] = None   # its size (offset and pointers of the end)


@dataclass
class EventView:
    index: int
    name: str
    symbol: str
    id: int
    version: int
    level: int
    level_name: str
    keywords: List[str]
    keyword_mask: int
    task: Optional[str]
    task_value: int
    opcode: Optional[str]
    opcode_value: int
    stack: bool
    message: Optional[str]
    template: Optional[TemplateView]
    metadata: List[Optional[int]]  # the blob's bytes; None where the pointer TypeCode goes
    metadata_fields: int
    metadata_complete: bool
    fields_doc: List[str]


@dataclass
class VersionCase:
    """One older version of an event in its every-version reader: decoded by its own reader, then
    the fields it shares with the newest version copied over (direct: the same template)."""
    version: int
    symbol: str
    direct: bool
    copies: List[str]


@dataclass
class EventGroupView:
    """Every version of one event id: the every-version reader (mantra_<P>_<Name>_decode_any)."""
    name: str                      # the newest version's event name
    id: int
    latest: int                    # the newest version declared
    latest_symbol: str
    versions: List[int]
    cases: List[VersionCase]       # the older versions, oldest first
    structs: List[StructView]      # the newest template's struct arrays (aliases of their walkers)
    template: str                  # the newest version's template C type ("" when it has none)


@dataclass
class GuidView:
    data1: int
    data2: int
    data3: int
    data4: List[int]


@dataclass
class ProviderView:
    name: str
    prefix: str
    guid: str
    guid_c: GuidView
    message: Optional[str]
    keywords: list
    tasks: list
    opcodes: list
    maps: list
    templates: List[TemplateView]
    events: List[EventView]
    groups: List[EventGroupView]
    has_utf16: bool = False


def _c_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            for b in ch.encode("utf-8"):
                out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def _guid_view(guid: str) -> GuidView:
    d = uuid.UUID(guid).bytes_le
    d1, d2, d3 = struct.unpack("<IHH", d[:8])
    return GuidView(d1, d2, d3, list(d[8:]))


class _Renderer:
    def __init__(self, m: Manifest, base: str):
        self.m = m
        self.base = base
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(os.path.normpath(TEMPLATE_DIR)),
            undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
            trim_blocks=True, lstrip_blocks=True, autoescape=False)
        self.env.filters["c_string"] = _c_string
        self.env.filters["hex"] = lambda v: f"0x{v:x}"

    # ---- fields -------------------------------------------------------------------------
    @staticmethod
    def _field(f: Field, owner: str) -> FieldView:
        t = f.type
        doc = t
        if f.count is not None:
            doc += f"[{f.count}]"
        if f.length is not None:
            doc += f" (length {f.length})"
        if f.map:
            doc += f", map {f.map}"
        if f.layout:
            doc += f", layout {f.layout}"
        v = FieldView(f.name, t, KIND_OF.get(t, "scalar"), doc, owner=owner)
        if t == "struct":
            v.count = f.count
            v.elem = f"{owner}_{f.name}_elem"
            v.size_param = resolve.struct_size_param(f.name)
        elif f.count is not None:
            v.kind = "array"
            v.ctype, v.size, v.accessor = ARRAY_ELEM[t]
            v.count = f.count
        elif t == "Binary":
            v.length = f.length
        elif t in SCALARS:
            v.ctype, size, v.reader, _code = SCALARS[t]
            v.size = str(size)
            v.unsigned = UNSIGNED_OF.get(v.ctype)
        return v

    @classmethod
    def _struct(cls, f: Field, owner: str) -> StructView:
        """A struct field's element. With layout c each member but the first (at offset 0) that needs
        it gets its alignment (a scalar's size; GUID 4, the alignment of its first member; Pointer the
        trace's pointer size; an array its element's), and the element the largest of them."""
        members = [cls._field(m, owner) for m in f.fields]
        view = StructView(f.name, f"{owner}_{f.name}_elem", members, f.layout == "c")
        if not view.c_layout:
            return view
        sizes = []
        for i, (m, v) in enumerate(zip(f.fields, members)):
            size = 0 if m.type == "Pointer" else 4 if m.type == "GUID" else SCALARS[m.type][1]
            sizes.append(size)
            if i > 0 and size != 1:
                v.align = "(size_t)c.pointer_size" if size == 0 else f"(size_t){size}"
        largest = max(sizes)
        if 0 not in sizes:
            view.c_align = f"(size_t){largest}"
        else:  # a pointer: 4 or 8 bytes, as the trace says
            view.c_align = "(size_t)c.pointer_size" if largest <= 4 else \
                f"(c.pointer_size > {largest} ? (size_t)c.pointer_size : (size_t){largest})"
        return view

    def _template(self, pre: str, t: Template, used: bool) -> TemplateView:
        c_type = f"mantra_{pre}_tpl_{t.name}"
        fields = [self._field(f, c_type) for f in t.fields]
        structs = [self._struct(f, c_type) for f in t.fields if f.type == "struct"]
        has16 = any(f.type == "UnicodeString" for f in t.fields)
        view = TemplateView(t.name, c_type, fields, structs, has16, used)
        self._pack(t, view)
        return view

    @staticmethod
    def _pack(t: Template, view: TemplateView) -> None:
        """Templates of fixed-size scalars only (no strings, arrays, binaries or structs) get a
        writer that packs the payload into a local array and hands it over whole
        (mantra_event_write_bytes): no descriptor walk, no size pass, no staging copy."""
        steps: List[PackStep] = []
        offset = 0
        pointers = 0  # Pointer fields before this one: sizeof(uintptr_t) each
        for f in t.fields:
            if f.count is not None or f.length is not None or f.type == "struct":
                return
            if f.type == "Pointer":
                steps.append(PackStep("pointer", f.name, offset, pointers, 0))
                pointers += 1
            elif f.type == "GUID":
                steps.append(PackStep("guid", f.name, offset, pointers, 16))
                offset += 16
            elif f.type == "Boolean":
                steps.append(PackStep("bool", f.name, offset, pointers, 4))
                offset += 4
            elif f.type in SCALARS:
                size = SCALARS[f.type][1]
                steps.append(PackStep("scalar", f.name, offset, pointers, size))
                offset += size
            else:
                return
        if not steps:
            return
        view.packed = steps
        view.packed_size = PackStep("end", "", offset, pointers, 0)

    # ---- metadata -----------------------------------------------------------------------
    @staticmethod
    def _metadata(p: Provider, e: Event, t: Optional[Template], mask: int, opcode: int):
        """nettrace V5 metadata from EventId on: EventId, EventName, Keywords, Version, Level, V1
        field list, then an Opcode tag when opcode != 0 (dotnet/runtime,
        src/native/eventpipe/ep-metadata-generator.c; microsoft/perfview,
        src/TraceEvent/EventPipe/EventPipeMetadata.cs, ReadV5OrLower and the V5 tags).
        The V1 list holds the template's fields up to the first one that nettrace cannot describe
        with the manifest's layout (counted arrays, binaries, structs and UTF-8 strings, whose
        lengths live in other fields); such events are flagged as having partial metadata.
        Returns the bytes, with None where the writer's pointer TypeCode goes."""
        out = bytearray()
        out += struct.pack("<i", e.id)
        out += _utf16z(e.name)
        out += struct.pack("<qii", mask if mask < (1 << 63) else mask - (1 << 64), e.version, e.level)
        described = []
        complete = True
        for f in (t.fields if t else []):
            if f.count is not None or f.type in ("Binary", "struct", "AnsiString"):
                complete = False
                break
            described.append(f)
        out += struct.pack("<i", len(described))
        pointer_positions = set()
        for f in described:
            if f.type == "Pointer":
                pointer_positions.add(len(out))
                out += struct.pack("<i", 12)
            elif f.type == "UnicodeString":
                out += struct.pack("<i", 18)
            elif f.type == "GUID":
                out += struct.pack("<i", 17)
            else:
                out += struct.pack("<i", SCALARS[f.type][3])
            out += _utf16z(f.name)
        if opcode:
            out += struct.pack("<iBB", 1, 1, opcode)
        items = [None if i in pointer_positions else b for i, b in enumerate(out)]
        return items, len(described), complete

    # ---- every-version readers ---------------------------------------------------------
    @staticmethod
    def _same_shape(a: Optional[FieldView], b: Optional[FieldView], ta: TemplateView, tb: TemplateView) -> bool:
        """Whether a field of an older template can be copied into the newest template's member of
        the same name: the same type and shape (and, for a struct array, the same element fields, so
        that the newest template's element reader walks it)."""
        if a is None or b is None:
            return False
        if (a.type, a.kind, a.ctype, a.count, a.length) != (b.type, b.kind, b.ctype, b.count, b.length):
            return False
        if a.kind != "struct":
            return True
        sa = next(s for s in ta.structs if s.name == a.name)
        sb = next(s for s in tb.structs if s.name == b.name)
        return [(f.name, f.type, f.count, f.length) for f in sa.fields] == \
               [(f.name, f.type, f.count, f.length) for f in sb.fields]

    def _groups(self, events: List[EventView]) -> List[EventGroupView]:
        by_id: Dict[int, List[EventView]] = {}
        for e in events:
            by_id.setdefault(e.id, []).append(e)
        groups = []
        for eid in sorted(by_id):
            versions = sorted(by_id[eid], key=lambda e: e.version)
            newest = versions[-1]
            cases = []
            for e in versions[:-1]:
                direct = e.template is not None and newest.template is not None and \
                    e.template.c_type == newest.template.c_type
                copies: List[str] = []
                if not direct and e.template is not None and newest.template is not None:
                    theirs = {f.name: f for f in newest.template.fields}
                    copies = [f.name for f in e.template.fields
                              if self._same_shape(f, theirs.get(f.name), e.template, newest.template)]
                cases.append(VersionCase(e.version, e.symbol, direct, copies))
            groups.append(EventGroupView(newest.name, eid, newest.version, newest.symbol,
                                         [e.version for e in versions], cases,
                                         newest.template.structs if newest.template else [],
                                         newest.template.c_type if newest.template else ""))
        return groups

    # ---- providers ----------------------------------------------------------------------
    def provider(self, p: Provider) -> ProviderView:
        pre = resolve.provider_prefix(p)
        used = {e.template for e in p.events}
        tviews = {t.name: self._template(pre, t, t.name in used) for t in p.templates}
        events = []
        for i, e in enumerate(p.events):
            t = resolve.template_of(p, e)
            mask = resolve.keyword_mask(p, e)
            opcode = resolve.opcode_value(p, e) or 0
            md, mdn, complete = self._metadata(p, e, t, mask, opcode)
            fields_doc = []
            if t:
                for f in t.fields:
                    fv = tviews[t.name].fields[[x.name for x in t.fields].index(f.name)]
                    fields_doc.append(f"{f.name}: {fv.doc}")
            events.append(EventView(
                index=i, name=e.name, symbol=resolve.event_symbol(e), id=e.id, version=e.version,
                level=e.level, level_name=LEVEL_NAMES.get(e.level, str(e.level)), keywords=list(e.keywords),
                keyword_mask=mask, task=e.task, task_value=resolve.task_value(p, e), opcode=e.opcode,
                opcode_value=opcode, stack=e.stack, message=e.message,
                template=tviews[t.name] if t else None, metadata=md, metadata_fields=mdn,
                metadata_complete=complete, fields_doc=fields_doc))
        guid = resolve.provider_guid(p)
        return ProviderView(
            name=p.name, prefix=pre, guid=guid, guid_c=_guid_view(guid), message=p.message,
            keywords=p.keywords, tasks=p.tasks, opcodes=p.opcodes, maps=p.maps,
            templates=list(tviews.values()), events=events, groups=self._groups(events),
            has_utf16=any(e.template and e.template.has_utf16 for e in events))

    def render(self, readers_only: bool = False) -> Dict[str, str]:
        from .emit_yaml import emit_yaml
        digest = hashlib.sha256(emit_yaml(self.m).encode("utf-8")).hexdigest()[:16]
        providers = [self.provider(p) for p in self.m.providers]
        ctx = dict(base=self.base, guard=self.base.upper(), digest=digest, providers=providers,
                   pgo_kinds=self.m.pgo_kinds, readers_only=readers_only)
        out = {}
        kinds = READERS_ONLY_OUTPUTS if readers_only else OUTPUTS
        for kind in kinds:
            out[f"{self.base}_{kind}"] = self.env.get_template(f"{kind}.j2").render(**ctx)
        return out


# What each manifest generates, and what --readers-only keeps of it.
OUTPUTS = ("defs.h", "registry.h", "registry.c", "writers.h", "writers.c", "readers.h", "readers.c", "events.md")
READERS_ONLY_OUTPUTS = ("defs.h", "readers.h", "readers.c")


def output_base(path: str) -> str:
    stem = os.path.basename(path)
    stem = re.sub(r"\.(ya?ml|man|xml)$", "", stem, flags=re.I)
    return re.sub(r"[^A-Za-z0-9_]", "_", stem)


def render_manifest(m: Manifest, base: Optional[str] = None, readers_only: bool = False) -> Dict[str, str]:
    """Every generated file of m by name: all of OUTPUTS, or only READERS_ONLY_OUTPUTS (the keyword,
    task and opcode definitions and the typed readers, for manifests one only reads, such as the
    .NET runtime's own: docs/manifest.md)."""
    return _Renderer(m, base or output_base(m.path)).render(readers_only)
