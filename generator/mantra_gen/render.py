"""Renders a validated model into C sources, headers and an events reference (Jinja2 templates).

The Python side computes a view of the model (C names, parameter lists, data descriptors, decode
steps, nettrace metadata bytes); the templates under generator/templates/ only lay it out.
Output is deterministic: it depends on the model and the output base name only.
"""
from __future__ import annotations

import hashlib
import os
import re
import struct
from dataclasses import dataclass
from typing import Dict, List, Optional

import jinja2

from . import resolve
from .model import LEVEL_NAMES, Event, Field, Manifest, Provider, Template

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "templates")

# Fixed-size scalar types: C type, payload size, cursor reader, nettrace TypeCode
# (nettrace-format.md §5.6: System.TypeCode values; 17 Guid, 16 DateTime).
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


def _utf16z(text: str) -> bytes:
    return text.encode("utf-16-le") + b"\0\0"


@dataclass
class FieldView:
    name: str
    type: str
    doc: str
    params: List[str]              # writer parameters (UTF-8 variant)
    params16: List[str]            # writer parameters (UTF-16 variant)
    data: str                      # mantra_data initializer (UTF-8 variant)
    data16: str
    temp: Optional[str]            # a local the writer declares first (Boolean conversion)
    member: str                    # reader struct member declaration
    decode: List[str]              # statements decoding into `out->`


@dataclass
class StructView:
    name: str                      # field name
    c_elem: str                    # element struct type
    members: List[str]
    decode: List[str]


@dataclass
class TemplateView:
    name: str
    c_type: str
    fields: List[FieldView]
    structs: List[StructView]
    has_utf16: bool
    used: bool
    packed: Optional[List[str]] = None  # fixed layout: statements packing the payload into mantra_p_
    packed_size: str = ""               # its size (a C constant expression)


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
    metadata: List[int]
    metadata_fields: int
    metadata_complete: bool
    fields_doc: List[str]


@dataclass
class ProviderView:
    name: str
    prefix: str
    guid: str
    guid_c: str
    message: Optional[str]
    keywords: list
    tasks: list
    opcodes: list
    maps: list
    templates: List[TemplateView]
    events: List[EventView]
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


def _signature(head: str, fields, variant16: bool = False, tail: str = "") -> str:
    """`head(params)tail`, on one line when it fits in 100 columns, else one parameter a line."""
    params = [p for f in fields for p in (f.params16 if variant16 else f.params)] or ["void"]
    line = f"{head}({', '.join(params)}){tail}"
    if len(line) <= 100:
        return line
    return f"{head}(" + ",".join(f"\n    {p}" for p in params) + f"){tail}"


def _call(head: str, fields) -> str:
    """`head(arg, ...)` passing every writer parameter through by name."""
    args = [p.split()[-1].lstrip("*") for f in fields for p in f.params]
    line = f"{head}({', '.join(args)})"
    if len(line) <= 92:
        return line
    return f"{head}(" + ",".join(f"\n        {a}" for a in args) + ")"


def _guid_c(guid: str) -> str:
    import uuid
    u = uuid.UUID(guid)
    d = u.bytes_le
    d1, d2, d3 = struct.unpack("<IHH", d[:8])
    tail = ", ".join(f"0x{b:02x}" for b in d[8:])
    return f"{{0x{d1:08x}u, 0x{d2:04x}u, 0x{d3:04x}u, {{{tail}}}}}"


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
        self.env.filters["signature"] = _signature
        self.env.filters["call"] = _call

    # ---- fields -------------------------------------------------------------------------
    def _field(self, f: Field, owner: str, ref: str) -> FieldView:
        """ref is the C expression prefix for sibling values in decode code ('out->')."""
        t = f.type
        n = f.name
        doc = t
        if f.count is not None:
            doc += f"[{f.count}]"
        if f.length is not None:
            doc += f" (length {f.length})"
        if f.map:
            doc += f", map {f.map}"
        temp = None
        if t == "struct":
            elem = f"{owner}_{n}_elem"
            size_param = resolve.struct_size_param(n)
            params = [f"const void *{n}", f"size_t {size_param}"]
            data = f"{{{n}, (uint64_t){size_param}, MANTRA_DATA_BYTES}}"
            member = f"mantra_bytes {n}; /* {f.count} elements of {elem}; walk with {owner}_{n}_next() */"
            decode = [
                "{",
                "    size_t start_ = c.pos;",
                f"    uint64_t n_ = {self._count_value(f.count, ref)};",
                "    for (uint64_t i_ = 0; i_ < n_; i_++) {",
                f"        {elem} e_;",
                "        size_t before_ = c.pos;",
                f"        MANTRA_TRY({owner}_{n}_next(&c, &e_));",
                "        if (c.pos == before_)",
                "            break; /* zero-sized elements: nothing more to walk */",
                "    }",
                f"    {ref}{n}.data = c.data + start_;",
                f"    {ref}{n}.size = c.pos - start_;",
                f"    {ref}{n}.count = (size_t)n_;",
                "}",
            ]
            return FieldView(n, t, doc, params, params, data, data, None, member, decode)
        if f.count is not None:
            ctype, esize, acc = ARRAY_ELEM[t]
            params = [f"const {ctype} *{n}"]
            data = f"{{{n}, mantra_array_bytes({self._count_value(f.count, '')}, {esize}), MANTRA_DATA_BYTES}}"
            rsize = "c.pointer_size" if t == "Pointer" else esize
            member = f"mantra_array {n}; /* {ctype if t != 'Pointer' else 'pointer'} elements" + \
                (f", read with mantra_array_{acc}()" if acc and t != "Pointer" else "") + " */"
            decode = [f"MANTRA_TRY(mantra_cursor_array(&c, {self._count_value(f.count, ref)}, {rsize}, &{ref}{n}));"]
            return FieldView(n, t, doc, params, params, data, data, None, member, decode)
        if t == "Binary":
            params = [f"const void *{n}"]
            data = f"{{{n}, {self._count_value(f.length, '')}, MANTRA_DATA_BYTES}}"
            member = f"mantra_bytes {n};"
            decode = ["{",
                      "    mantra_array a_;",
                      f"    MANTRA_TRY(mantra_cursor_array(&c, {self._count_value(f.length, ref)}, 1, &a_));",
                      f"    {ref}{n}.data = a_.data;",
                      f"    {ref}{n}.size = a_.count;",
                      f"    {ref}{n}.count = a_.count;",
                      "}"]
            return FieldView(n, t, doc, params, params, data, data, None, member, decode)
        if t == "UnicodeString":
            return FieldView(n, t, doc, [f"const char *{n}"], [f"const uint16_t *{n}"],
                             f"{{{n}, 0, MANTRA_DATA_UTF8_AS_UTF16Z}}", f"{{{n}, 0, MANTRA_DATA_UTF16Z}}",
                             None, f"mantra_str16 {n};", [f"MANTRA_TRY(mantra_cursor_str16(&c, &{ref}{n}));"])
        if t == "AnsiString":
            return FieldView(n, t, doc, [f"const char *{n}"], [f"const char *{n}"],
                             f"{{{n}, 0, MANTRA_DATA_UTF8Z}}", f"{{{n}, 0, MANTRA_DATA_UTF8Z}}",
                             None, f"mantra_str8 {n};", [f"MANTRA_TRY(mantra_cursor_str8(&c, &{ref}{n}));"])
        if t == "GUID":
            return FieldView(n, t, doc, [f"const mantra_guid *{n}"], [f"const mantra_guid *{n}"],
                             f"{{{n}, 16, MANTRA_DATA_BYTES}}", f"{{{n}, 16, MANTRA_DATA_BYTES}}",
                             None, f"mantra_guid {n};", [f"MANTRA_TRY(mantra_cursor_guid(&c, &{ref}{n}));"])
        if t == "Pointer":
            return FieldView(n, t, doc, [f"uintptr_t {n}"], [f"uintptr_t {n}"],
                             f"{{&{n}, sizeof {n}, MANTRA_DATA_BYTES}}", f"{{&{n}, sizeof {n}, MANTRA_DATA_BYTES}}",
                             None, f"uint64_t {n}; /* pointer-sized in the payload */",
                             [f"MANTRA_TRY(mantra_cursor_pointer(&c, &{ref}{n}));"])
        ctype, size, reader, _code = SCALARS[t]
        if t == "Boolean":
            temp = f"const uint32_t mantra_b_{n} = {n} ? 1u : 0u;"
            data = f"{{&mantra_b_{n}, 4, MANTRA_DATA_BYTES}}"
            decode = ["{", "    uint32_t v_;", "    MANTRA_TRY(mantra_cursor_u32(&c, &v_));",
                      f"    {ref}{n} = v_ != 0;", "}"]
        else:
            data = f"{{&{n}, {size}, MANTRA_DATA_BYTES}}"
            if ctype in UNSIGNED_OF:
                u = UNSIGNED_OF[ctype]
                decode = ["{", f"    {u} v_;", f"    MANTRA_TRY(mantra_cursor_{reader}(&c, &v_));",
                          f"    {ref}{n} = ({ctype})v_;", "}"]
            else:
                decode = [f"MANTRA_TRY(mantra_cursor_{reader}(&c, &{ref}{n}));"]
        return FieldView(n, t, doc, [f"{ctype} {n}"], [f"{ctype} {n}"], data, data, temp,
                         f"{ctype} {n};", decode)

    @staticmethod
    def _count_value(count, ref: str) -> str:
        if isinstance(count, int):
            return f"UINT64_C({count})"
        return f"(uint64_t){ref}{count}"

    def _template(self, pre: str, t: Template, used: bool) -> TemplateView:
        c_type = f"mantra_{pre}_tpl_{t.name}"
        fields = [self._field(f, c_type, "out->") for f in t.fields]
        structs = []
        for f in t.fields:
            if f.type == "struct":
                members = [self._field(sf, c_type, "out->") for sf in f.fields]
                structs.append(StructView(f.name, f"{c_type}_{f.name}_elem",
                                          [mv.member for mv in members],
                                          [line for mv in members for line in mv.decode]))
        has16 = any(f.type == "UnicodeString" for f in t.fields)
        view = TemplateView(t.name, c_type, fields, structs, has16, used)
        self._pack(t, view)
        return view

    @staticmethod
    def _pack(t: Template, view: TemplateView) -> None:
        """Templates of fixed-size scalars only (no strings, arrays, binaries or structs) get a
        writer that packs the payload into a local array and hands it over whole
        (mantra_event_write_bytes): no descriptor walk, no size pass, no staging copy."""
        stmts: List[str] = []
        offset = 0
        extra = ""  # "+ sizeof(uintptr_t)" per Pointer field before this one
        for f in t.fields:
            if f.count is not None or f.length is not None or f.type == "struct":
                return
            at = f"{offset}{extra}" if extra else f"{offset}"
            n = f.name
            if f.type == "Pointer":
                stmts.append(f"memcpy(mantra_p_ + {at}, &{n}, sizeof(uintptr_t));")
                extra += " + sizeof(uintptr_t)"
            elif f.type == "GUID":
                stmts.append(f"if ({n}) memcpy(mantra_p_ + {at}, {n}, 16); else memset(mantra_p_ + {at}, 0, 16);")
                offset += 16
            elif f.type == "Boolean":
                stmts.append(f"memcpy(mantra_p_ + {at}, &mantra_b_{n}, 4);")
                offset += 4
            elif f.type in SCALARS:
                size = SCALARS[f.type][1]
                stmts.append(f"memcpy(mantra_p_ + {at}, &{n}, {size});")
                offset += size
            else:
                return
        if not stmts:
            return
        view.packed = stmts
        view.packed_size = f"{offset}{extra}"

    # ---- metadata -----------------------------------------------------------------------
    @staticmethod
    def _metadata(p: Provider, e: Event, t: Optional[Template], mask: int, opcode: int):
        """nettrace V5 metadata from EventId on (nettrace-format.md §5.1-5.3): EventId, EventName,
        Keywords, Version, Level, V1 field list, then an Opcode tag when opcode != 0.
        The V1 list holds the template's fields up to the first one that nettrace cannot describe
        with the manifest's layout (counted arrays, binaries, structs and UTF-8 strings, whose
        lengths live in other fields); such events are flagged as having partial metadata."""
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
        pointer_positions = []
        for f in described:
            if f.type == "Pointer":
                pointer_positions.append(len(out))
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
        items = []
        for i, b in enumerate(out):
            if i in pointer_positions:
                items.append("MANTRA_POINTER_TYPECODE")
            else:
                items.append(f"0x{b:02x}")
        return items, len(described), complete

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
            name=p.name, prefix=pre, guid=guid, guid_c=_guid_c(guid), message=p.message,
            keywords=p.keywords, tasks=p.tasks, opcodes=p.opcodes, maps=p.maps,
            templates=list(tviews.values()), events=events,
            has_utf16=any(e.template and e.template.has_utf16 for e in events))

    def render(self) -> Dict[str, str]:
        from .emit_yaml import emit_yaml
        digest = hashlib.sha256(emit_yaml(self.m).encode("utf-8")).hexdigest()[:16]
        providers = [self.provider(p) for p in self.m.providers]
        ctx = dict(base=self.base, guard=self.base.upper(), digest=digest, providers=providers,
                   pgo_kinds=self.m.pgo_kinds)
        out = {}
        for kind in ("defs.h", "registry.h", "registry.c", "writers.h", "writers.c",
                     "readers.h", "readers.c", "events.md"):
            out[f"{self.base}_{kind}"] = self.env.get_template(f"{kind}.j2").render(**ctx)
        return out


def output_base(path: str) -> str:
    stem = os.path.basename(path)
    stem = re.sub(r"\.(ya?ml|man|xml)$", "", stem, flags=re.I)
    return re.sub(r"[^A-Za-z0-9_]", "_", stem)


def render_manifest(m: Manifest, base: Optional[str] = None) -> Dict[str, str]:
    return _Renderer(m, base or output_base(m.path)).render()
