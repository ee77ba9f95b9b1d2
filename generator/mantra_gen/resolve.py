"""Derived values of a (validated) model: C names, GUIDs, masks, opcode and task values.

Everything that the validator checks for collisions and the renderer prints comes from here, so the
two can never disagree about a generated name.
"""
from __future__ import annotations

import hashlib
import re
import uuid
from typing import Dict, List, Optional

from .model import STANDARD_OPCODES, Event, Field, Manifest, Provider, Template

C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if inline int
long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert
_Thread_local bool true false NULL
""".split())

# EventSource's name-based GUID: SHA-1 over this namespace and the upper-cased name in UTF-16BE,
# first 16 bytes, version nibble 5 (System.Diagnostics.Tracing.EventSource.GenerateGuidFromName).
_EVENTSOURCE_NAMESPACE = bytes([0x48, 0x2C, 0x2D, 0xB2, 0xC3, 0x90, 0x47, 0xC8,
                                0x87, 0xF8, 0x1A, 0x15, 0xBF, 0xC1, 0x30, 0xFB])


def eventsource_guid(name: str) -> str:
    digest = bytearray(hashlib.sha1(_EVENTSOURCE_NAMESPACE + name.upper().encode("utf-16-be")).digest()[:16])
    digest[7] = (digest[7] & 0x0F) | 0x50
    return str(uuid.UUID(bytes_le=bytes(digest)))


def is_c_ident(name: str) -> bool:
    return bool(C_IDENT.match(name)) and name not in C_KEYWORDS


def derive_prefix(provider_name: str) -> str:
    """'Microsoft-Windows-DotNETRuntime' -> 'DotNETRuntime' (as dotnet's genEventPipe names files)."""
    stem = provider_name.replace("Microsoft-", "").replace("Windows-", "")
    return re.sub(r"[^A-Za-z0-9_]", "", stem)


def provider_prefix(p: Provider) -> str:
    return p.prefix if p.prefix is not None else derive_prefix(p.name)


def provider_guid(p: Provider) -> str:
    return p.guid if p.guid is not None else eventsource_guid(p.name)


def derived_symbol(name: str, version: int) -> str:
    return f"{name}_V{version}" if version > 0 else name


def event_symbol(e: Event) -> str:
    return e.symbol if e.symbol is not None else derived_symbol(e.name, e.version)


def keyword_mask(p: Provider, e: Event) -> int:
    masks = {k.name: k.mask for k in p.keywords}
    mask = 0
    for k in e.keywords:
        mask |= masks.get(k, 0)
    return mask


def task_value(p: Provider, e: Event) -> int:
    for t in p.tasks:
        if t.name == e.task:
            return t.value
    return 0


def opcode_value(p: Provider, e: Event) -> Optional[int]:
    """The opcode's number, or None when the name does not resolve."""
    if e.opcode is None:
        return 0
    for t in p.tasks:
        if t.name == e.task:
            for o in t.opcodes:
                if o.name == e.opcode:
                    return o.value
    for o in p.opcodes:
        if o.name == e.opcode:
            return o.value
    return STANDARD_OPCODES.get(e.opcode)


def template_of(p: Provider, e: Event) -> Optional[Template]:
    if e.template is None:
        return None
    for t in p.templates:
        if t.name == e.template:
            return t
    return None


def struct_size_param(field_name: str) -> str:
    """The writer parameter that carries a struct array's size in bytes."""
    return f"{field_name}_size"


def writer_params(t: Template) -> List[str]:
    """The parameter names of the writers of events using template t, in order."""
    names: List[str] = []
    for f in t.fields:
        names.append(f.name)
        if f.type == "struct":
            names.append(struct_size_param(f.name))
    return names


def generated_names(m: Manifest) -> Dict[str, List[object]]:
    """Every global C name the generator emits for this manifest -> the model nodes it came from.
    A list longer than one is a collision (the validator reports it)."""
    names: Dict[str, List[object]] = {}

    def add(name: str, node: object) -> None:
        names.setdefault(name, []).append(node)

    for p in m.providers:
        pre = provider_prefix(p)
        add(f"mantra_{pre}_provider", p)
        add(f"mantra_{pre}_events", p)
        add(f"mantra_{pre}_states", p)
        add(f"MANTRA_{pre}_EVENT_COUNT", p)
        for k in p.keywords:
            add(f"MANTRA_{pre}_KEYWORD_{k.name}", k)
        for t in p.tasks:
            add(f"MANTRA_{pre}_TASK_{t.name}", t)
            for o in t.opcodes:
                add(f"MANTRA_{pre}_OPCODE_{t.name}_{o.name}", o)
        for o in p.opcodes:
            add(f"MANTRA_{pre}_OPCODE_{o.name}", o)
        for t in p.templates:
            add(f"mantra_{pre}_tpl_{t.name}", t)
            add(f"mantra_{pre}_tpl_{t.name}_decode", t)
            for f in t.fields:
                if f.type == "struct":
                    add(f"mantra_{pre}_tpl_{t.name}_{f.name}_elem", f)
                    add(f"mantra_{pre}_tpl_{t.name}_{f.name}_next", f)
        for mp in p.maps:
            add(f"mantra_{pre}_{mp.name}_name", mp)
        for e in p.events:
            sym = event_symbol(e)
            for suffix in ("write", "write16", "emit", "emit16", "decode", "fields"):
                add(f"mantra_{pre}_{sym}_{suffix}", e)
            add(f"MANTRA_{pre}_{sym}_enabled", e)
            add(f"MANTRA_{pre}_EVENT_{sym}", e)
        # the every-version reader of each event id, named after its newest version
        newest: Dict[int, Event] = {}
        for e in p.events:
            if e.id not in newest or e.version > newest[e.id].version:
                newest[e.id] = e
        for e in newest.values():
            for name in (f"mantra_{pre}_{e.name}_any", f"mantra_{pre}_{e.name}_decode_any",
                         f"MANTRA_{pre}_{e.name}_LATEST_VERSION", f"mantra_{pre}_{e.name}_declares"):
                add(name, e)
            t = template_of(p, e)
            for f in (t.fields if t else []):
                if f.type == "struct":
                    add(f"mantra_{pre}_{e.name}_any_{f.name}_elem", f)
                    add(f"mantra_{pre}_{e.name}_any_{f.name}_next", f)
    for k in m.pgo_kinds:
        add(f"MANTRA_PGO_{k.name}", k)
        add(f"MANTRA_PGO_{k.name}_SIZE", k)
    if m.pgo_kinds:
        add("MANTRA_PGO_KINDS", m.pgo_kinds[0])
    return names


def walk_fields(fields: List[Field]):
    """Yields (field, parent_list) for every field, depth first (struct members after their struct)."""
    for f in fields:
        yield f, fields
        if f.type == "struct":
            yield from walk_fields(f.fields)
