"""Print the model as an ETW instrumentation manifest that :func:`load_xml.load_xml` reads back
into an equal model (locations aside).

Output is deterministic: 2-space indentation, attributes in a fixed order, every message moved to
an en-US ``<stringTable>`` under a generated id and referenced as ``$(string.ID)``. mantra's own
attributes (namespace ``urn:mantra``) appear only when they carry information: ``mantra:prefix``
when a provider has a prefix, ``mantra:stack="false"``, and ``mantra:name`` when an event's base
name cannot be derived from its symbol.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from .resolve import event_symbol
from .load_xml import ETW_NS, MANTRA_NS, base_name
from .model import LEVEL_NAMES, Event, Field, Manifest, Provider

WIN_NS = "http://manifests.microsoft.com/win/2004/08/windows/events"
XS_NS = "http://www.w3.org/2001/XMLSchema"

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _esc(value: str) -> str:
    """Escape an attribute value for double quotes; keep whitespace characters exact."""
    bad = _NOT_XML.search(value)
    if bad:
        raise ValueError("character U+%04X in %r cannot be written in XML 1.0"
                         % (ord(bad.group()), value))
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
            .replace("\t", "&#9;"))


class _Strings:
    """The generated string table: unique ids in first-use order."""

    def __init__(self) -> None:
        self.items: List[Tuple[str, str]] = []
        self.used: set = set()

    def ref(self, *parts: str, text: str) -> str:
        base = ".".join(_ID_UNSAFE.sub("_", p) or "_" for p in parts)
        sid, n = base, 1
        while sid in self.used:
            n += 1
            sid = "%s.%d" % (base, n)
        self.used.add(sid)
        self.items.append((sid, text))
        return "$(string.%s)" % sid


def _tag(name: str, attrs: List[Tuple[str, Optional[object]]], close: bool) -> str:
    parts = [name]
    for key, value in attrs:
        if value is not None:
            parts.append('%s="%s"' % (key, _esc(str(value))))
    return "<%s%s>" % (" ".join(parts), "/" if close else "")


def _level(level: int) -> str:
    name = LEVEL_NAMES.get(level)
    return "win:" + name if name is not None else str(level)


class _Writer:
    def __init__(self) -> None:
        self.lines: List[str] = []
        self.strings = _Strings()

    def put(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def msg(self, text: Optional[str], *parts: str) -> Optional[str]:
        return None if text is None else self.strings.ref(*parts, text=text)

    def fields(self, depth: int, fields: List[Field]) -> None:
        for f in fields:
            if f.type == "struct":
                attrs = [("name", f.name), ("count", f.count), ("length", f.length), ("mantra:layout", f.layout)]
                if f.fields:
                    self.put(depth, _tag("struct", attrs, False))
                    self.fields(depth + 1, f.fields)
                    self.put(depth, "</struct>")
                else:
                    self.put(depth, _tag("struct", attrs, True))
            else:
                self.put(depth, _tag("data", [
                    ("name", f.name), ("inType", "win:" + f.type), ("outType", f.out_type),
                    ("map", f.map), ("length", f.length), ("count", f.count)], True))

    def event(self, depth: int, pid: str, e: Event) -> None:
        attrs: List[Tuple[str, Optional[object]]] = [
            ("value", e.id), ("version", e.version), ("level", _level(e.level)),
            ("symbol", event_symbol(e)), ("template", e.template),
            ("keywords", " ".join(e.keywords) if e.keywords else None),
            ("task", e.task), ("opcode", e.opcode),
        ]
        label = event_symbol(e)
        attrs.append(("message", self.msg(e.message, pid, "event", label)))
        if base_name(event_symbol(e), e.version) != e.name:
            attrs.append(("mantra:name", e.name))
        if not e.stack:
            attrs.append(("mantra:stack", "false"))
        self.put(depth, _tag("event", attrs, True))

    def provider(self, depth: int, index: int, p: Provider) -> None:
        pid = p.symbol or "provider%d" % index
        self.put(depth, _tag("provider", [
            ("name", p.name), ("guid", "{%s}" % p.guid if p.guid is not None else None),
            ("symbol", p.symbol), ("message", self.msg(p.message, pid, "provider")),
            ("mantra:prefix", p.prefix)], False))
        d = depth + 1
        if p.keywords:
            self.put(d, "<keywords>")
            for k in p.keywords:
                self.put(d + 1, _tag("keyword", [
                    ("name", k.name), ("mask", "0x%x" % k.mask if k.mask >= 0 else k.mask),
                    ("symbol", k.symbol), ("message", self.msg(k.message, pid, "keyword", k.name))],
                    True))
            self.put(d, "</keywords>")
        if p.tasks:
            self.put(d, "<tasks>")
            for t in p.tasks:
                attrs = [("name", t.name), ("value", t.value), ("symbol", t.symbol),
                         ("eventGUID", "{%s}" % t.guid if t.guid is not None else None),
                         ("message", self.msg(t.message, pid, "task", t.name))]
                if not t.opcodes:
                    self.put(d + 1, _tag("task", attrs, True))
                    continue
                self.put(d + 1, _tag("task", attrs, False))
                self.put(d + 2, "<opcodes>")
                for o in t.opcodes:
                    self.put(d + 3, _tag("opcode", [
                        ("name", o.name), ("value", o.value), ("symbol", o.symbol),
                        ("message", self.msg(o.message, pid, "opcode", t.name, o.name))], True))
                self.put(d + 2, "</opcodes>")
                self.put(d + 1, "</task>")
            self.put(d, "</tasks>")
        if p.opcodes:
            self.put(d, "<opcodes>")
            for o in p.opcodes:
                self.put(d + 1, _tag("opcode", [
                    ("name", o.name), ("value", o.value), ("symbol", o.symbol),
                    ("message", self.msg(o.message, pid, "opcode", o.name))], True))
            self.put(d, "</opcodes>")
        if p.maps:
            self.put(d, "<maps>")
            for m in p.maps:
                tag = "bitMap" if m.kind == "bitmap" else "valueMap"
                if not m.entries:
                    self.put(d + 1, _tag(tag, [("name", m.name)], True))
                    continue
                self.put(d + 1, _tag(tag, [("name", m.name)], False))
                for entry in m.entries:
                    value = "0x%x" % entry.value if entry.value >= 0 else str(entry.value)
                    self.put(d + 2, _tag("map", [
                        ("value", value),
                        ("message", self.msg(entry.message, pid, "map", m.name, value))], True))
                self.put(d + 1, "</%s>" % tag)
            self.put(d, "</maps>")
        if p.templates:
            self.put(d, "<templates>")
            for t in p.templates:
                if not t.fields:
                    self.put(d + 1, _tag("template", [("tid", t.name)], True))
                    continue
                self.put(d + 1, _tag("template", [("tid", t.name)], False))
                self.fields(d + 2, t.fields)
                self.put(d + 1, "</template>")
            self.put(d, "</templates>")
        if p.events:
            self.put(d, "<events>")
            for e in p.events:
                self.event(d + 1, pid, e)
            self.put(d, "</events>")
        self.put(depth, "</provider>")

    def manifest(self, m: Manifest) -> str:
        self.lines.append('<?xml version="1.0" encoding="UTF-8"?>')
        self.lines.append('<instrumentationManifest xmlns="%s" xmlns:win="%s" xmlns:xs="%s" '
                          'xmlns:mantra="%s">' % (ETW_NS, WIN_NS, XS_NS, MANTRA_NS))
        self.put(1, "<instrumentation>")
        self.put(2, "<events>")
        for i, p in enumerate(m.providers):
            self.provider(3, i, p)
        self.put(2, "</events>")
        self.put(1, "</instrumentation>")
        if m.pgo_kinds:
            self.put(1, "<mantra:pgoKinds>")
            for k in m.pgo_kinds:
                self.put(2, _tag("mantra:pgoKind", [
                    ("name", k.name), ("value", "0x%x" % k.value if k.value >= 0 else k.value),
                    ("size", k.size)], True))
            self.put(1, "</mantra:pgoKinds>")
        if self.strings.items:
            self.put(1, "<localization>")
            self.put(2, '<resources culture="en-US">')
            self.put(3, "<stringTable>")
            for sid, text in self.strings.items:
                self.put(4, _tag("string", [("id", sid), ("value", text)], True))
            self.put(3, "</stringTable>")
            self.put(2, "</resources>")
            self.put(1, "</localization>")
        self.lines.append("</instrumentationManifest>")
        return "\n".join(self.lines) + "\n"


def emit_xml(m: Manifest) -> str:
    """The manifest ``m`` as ETW instrumentation-manifest XML text (UTF-8 declared)."""
    return _Writer().manifest(m)
