"""Print a model in the YAML spelling (docs/manifest.md).

Deterministic and meant to be read: providers, tasks with opcodes, maps, templates and events in
block style, short leaf mappings (keywords, opcodes, map entries, fields, PGO kinds) in flow style.
Masks, map values and PGO kind values are written in hex; defaults and ``None`` values are left
out. ``load_yaml(emit_yaml(m)) == m`` for every model the loader can produce.

A template that is used by exactly one event, is named after that event's symbol and sits at the
end of the provider's template list (in event order) is written inline as the event's ``fields:``,
which is exactly what the loader turns back into the same template at the same position.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Tuple, Union

import yaml

from .model import LEVEL_NAMES, Event, Field, Manifest, Map, Provider, Task, Template
from .resolve import derived_symbol, event_symbol

__all__ = ["emit_yaml"]

try:
    _Loader = yaml.CSafeLoader
except AttributeError:
    _Loader = yaml.SafeLoader

_STR_TAG = "tag:yaml.org,2002:str"

# A value is either formatted scalar/flow text (str), a block sequence (list of items, each formatted
# flow text or a block mapping) or, inside a sequence, a block mapping (list of (key, value) pairs).
_Value = Union[str, list]
_Pairs = List[Tuple[str, _Value]]


# --- scalars -------------------------------------------------------------------------------------

_UNPRINTABLE = frozenset("\u2028\u2029\ufeff\ufffe\uffff") | frozenset(map(chr, range(0xD800, 0xE000)))
_SAFE_FIRST = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_SAFE_REST = _SAFE_FIRST | set("0123456789.-")


def _s(text: str, flow: bool = True) -> str:
    """``text`` as a YAML scalar that reads back as exactly this string (plain when that is safe)."""
    if text and text[0] in _SAFE_FIRST and all(c in _SAFE_REST for c in text):
        if _plain_is_str(text):
            return text
        return _dq(text)
    return _plain_or_quoted(text, flow)


@lru_cache(maxsize=None)
def _plain_is_str(text: str) -> bool:
    node = yaml.compose("k: " + text, Loader=_Loader)
    return node.value[0][1].tag == _STR_TAG


@lru_cache(maxsize=None)
def _plain_or_quoted(text: str, flow: bool) -> str:
    """Plain if libyaml reads it back unchanged as a string (in block and, for ``flow``, in flow
    context), else double-quoted."""
    if text and text == text.strip() and all(" " <= c <= "~" or (c >= "\xa0" and c not in _UNPRINTABLE)
                                                 for c in text):
        docs = ["k: " + text] + (["{k: " + text + "}"] if flow else [])   # flow text may go in block too
        if all(_reads_back(doc, text) for doc in docs):
            return text
    return _dq(text)


def _reads_back(doc: str, text: str) -> bool:
    try:
        node = yaml.compose(doc, Loader=_Loader)
    except yaml.YAMLError:
        return False
    return (node is not None and len(node.value) == 1 and node.value[0][1].tag == _STR_TAG
            and not node.value[0][1].style and node.value[0][1].value == text)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def _dq(text: str) -> str:
    out = ['"']
    for c in text:
        o = ord(c)
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif (o < 0x20 or 0x7F <= o <= 0x9F or 0xD800 <= o <= 0xDFFF
              or o in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)):
            out.append(f"\\x{o:02X}" if o <= 0xFF else f"\\u{o:04X}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _hex(value: int) -> str:
    return f"-0x{-value:X}" if value < 0 else f"0x{value:X}"


def _num(value: int) -> str:
    return str(value)


def _flow(pairs: _Pairs) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"


def _flow_list(names: List[str]) -> str:
    return "[" + ", ".join(_s(n) for n in names) + "]"


# --- block layout --------------------------------------------------------------------------------

def _block(lines: List[str], pairs: _Pairs, indent: int, item: bool) -> None:
    """Write a block mapping at ``indent``; as a sequence item (``- ``) when ``item``."""
    key_indent = indent + 2 if item else indent
    for i, (key, value) in enumerate(pairs):
        if item and i == 0:
            head = " " * indent + "- " + key + ":"
        else:
            head = " " * key_indent + key + ":"
        if isinstance(value, str):
            lines.append(head + " " + value)
        elif not value:
            lines.append(head + " []")
        else:
            lines.append(head)
            for element in value:
                if isinstance(element, str):
                    lines.append(" " * (key_indent + 2) + "- " + element)
                else:
                    _block(lines, element, key_indent + 2, True)


# --- model nodes ---------------------------------------------------------------------------------

def _opt(pairs: _Pairs, key: str, value, fmt=_s) -> None:
    if value is not None:
        pairs.append((key, fmt(value)))


def _named(name: str, number_key: str, number: str, symbol, message) -> _Pairs:
    pairs: _Pairs = [("name", _s(name)), (number_key, number)]
    _opt(pairs, "symbol", symbol)
    _opt(pairs, "message", message)
    return pairs


def _task(t: Task) -> Union[str, _Pairs]:
    pairs: _Pairs = [("name", _s(t.name)), ("value", _num(t.value))]
    _opt(pairs, "symbol", t.symbol)
    _opt(pairs, "guid", t.guid)
    _opt(pairs, "message", t.message)
    if not t.opcodes:
        return _flow(pairs)
    pairs.append(("opcodes", [_flow(_named(o.name, "value", _num(o.value), o.symbol, o.message))
                              for o in t.opcodes]))
    return pairs


def _map(mp: Map) -> _Pairs:
    pairs: _Pairs = [("name", _s(mp.name, False)), ("kind", _s(mp.kind, False))]
    if mp.entries:
        pairs.append(("entries", [_flow([("value", _hex(x.value)), ("message", _s(x.message))])
                                  for x in mp.entries]))
    return pairs


def _size_ref(value) -> str:
    return _num(value) if isinstance(value, int) else _s(value)


def _field(f: Field) -> Union[str, _Pairs]:
    pairs: _Pairs = [("name", _s(f.name)), ("type", _s(f.type))]
    _opt(pairs, "out", f.out_type)
    _opt(pairs, "map", f.map)
    _opt(pairs, "length", f.length, _size_ref)
    _opt(pairs, "count", f.count, _size_ref)
    _opt(pairs, "layout", f.layout)
    if not f.fields:
        return _flow(pairs)
    pairs.append(("fields", [_field(m) for m in f.fields]))
    return pairs


def _template(t: Template) -> _Pairs:
    pairs: _Pairs = [("name", _s(t.name, False))]
    if t.fields:
        pairs.append(("fields", [_field(f) for f in t.fields]))
    return pairs


def _event(e: Event, inline: Union[Template, None]) -> _Pairs:
    pairs: _Pairs = [("name", _s(e.name, False)), ("id", _num(e.id))]
    if e.version != 0:
        pairs.append(("version", _num(e.version)))
    if e.level != 4:
        pairs.append(("level", LEVEL_NAMES[e.level] if e.level in LEVEL_NAMES else _num(e.level)))
    if e.keywords:
        pairs.append(("keywords", _flow_list(e.keywords)))
    _opt(pairs, "task", e.task)
    _opt(pairs, "opcode", e.opcode)
    if inline is not None:
        pairs.append(("fields", [_field(f) for f in inline.fields]))
    else:
        _opt(pairs, "template", e.template)
    if e.symbol is not None and e.symbol != derived_symbol(e.name, e.version):
        pairs.append(("symbol", _s(e.symbol, False)))
    if not e.stack:
        pairs.append(("stack", "false"))
    _opt(pairs, "message", e.message, lambda m: _s(m, False))
    return pairs


def _inline_templates(p: Provider) -> Dict[int, Template]:
    """Event index -> template to write inline (see the module docstring)."""
    users: Dict[str, List[int]] = {}
    for i, e in enumerate(p.events):
        if e.template is not None:
            users.setdefault(e.template, []).append(i)
    counts: Dict[str, int] = {}
    for t in p.templates:
        counts[t.name] = counts.get(t.name, 0) + 1
    inline: Dict[int, Template] = {}
    last = len(p.events)
    for t in reversed(p.templates):
        used = users.get(t.name, [])
        if counts[t.name] != 1 or len(used) != 1 or used[0] >= last:
            break
        e = p.events[used[0]]
        if event_symbol(e) != t.name:
            break
        inline[used[0]] = t
        last = used[0]
    return inline


def _provider(p: Provider) -> _Pairs:
    pairs: _Pairs = [("name", _s(p.name, False))]
    _opt(pairs, "guid", p.guid)
    _opt(pairs, "prefix", p.prefix)
    _opt(pairs, "symbol", p.symbol)
    _opt(pairs, "message", p.message, lambda m: _s(m, False))
    if p.keywords:
        pairs.append(("keywords", [_flow(_named(k.name, "mask", _hex(k.mask), k.symbol, k.message))
                                   for k in p.keywords]))
    if p.opcodes:
        pairs.append(("opcodes", [_flow(_named(o.name, "value", _num(o.value), o.symbol, o.message))
                                  for o in p.opcodes]))
    if p.tasks:
        pairs.append(("tasks", [_task(t) for t in p.tasks]))
    if p.maps:
        pairs.append(("maps", [_map(mp) for mp in p.maps]))
    inline = _inline_templates(p)
    inlined = {id(t) for t in inline.values()}
    templates = [t for t in p.templates if id(t) not in inlined]
    if templates:
        pairs.append(("templates", [_template(t) for t in templates]))
    if p.events:
        pairs.append(("events", [_event(e, inline.get(i)) for i, e in enumerate(p.events)]))
    return pairs


def emit_yaml(m: Manifest) -> str:
    """The manifest in the YAML spelling (ends with a newline)."""
    top: _Pairs = [("providers", [_provider(p) for p in m.providers])]
    if m.pgo_kinds:
        top.append(("pgo_kinds", [_flow([("name", _s(k.name)), ("value", _hex(k.value)),
                                         ("size", _num(k.size))]) for k in m.pgo_kinds]))
    lines: List[str] = []
    _block(lines, top, 0, False)
    return "\n".join(lines) + "\n"
