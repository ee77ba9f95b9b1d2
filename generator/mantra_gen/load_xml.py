"""Load an ETW instrumentation manifest (the spelling of ClrEtwAll.man) into the model.

The loader checks syntax and shape only: well-formed XML, required attributes present, numbers,
GUIDs, levels and field types spelled correctly, ``$(string.ID)`` references resolvable, and no
unknown attributes on ``<data>``/``<struct>`` or in the ``urn:mantra`` namespace. Cross references
(keyword/task/opcode/template/map names, duplicate ids, ...) are left to :mod:`validate`.

Channels, ``UserData`` and other ETW-only elements and attributes are accepted and ignored.
mantra's own attributes live in the namespace ``urn:mantra`` (see docs/manifest.md).
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple
from xml.parsers import expat

from .errors import Collector, fail
from .resolve import derived_symbol
from .model import (
    FIELD_TYPES, LEVELS, Event, Field, Keyword, Loc, Manifest, Map, MapEntry, Opcode, PgoKind,
    Provider, Task, Template,
)

ETW_NS = "http://schemas.microsoft.com/win/2004/08/events"
MANTRA_NS = "urn:mantra"
_SEP = "\x1f"        # expat namespace separator: "URI\x1flocal" (never occurs in a URI)

DATA_ATTRS = ("name", "inType", "outType", "map", "length", "count")
STRUCT_ATTRS = ("name", "count", "length")
IN_TYPES = {"win:" + t: t for t in FIELD_TYPES if t != "struct"}

_NUM_RE = re.compile(r"(?:0[xX][0-9a-fA-F]+|[0-9]+)\Z")
_SNUM_RE = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|[0-9]+)\Z")
_GUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_STRING_REF_RE = re.compile(r"\$\(string\.(.+)\)\Z", re.S)


def _split(name: str) -> Tuple[str, str]:
    """Split an expat namespaced name into (namespace URI or "", local name)."""
    ns, sep, local = name.rpartition(_SEP)
    return (ns, local) if sep else ("", name)


def _display(name: str) -> str:
    """How an element or attribute name is shown in messages (mantra: prefix kept)."""
    ns, local = _split(name)
    return "mantra:" + local if ns == MANTRA_NS else local


class _Attrs:
    """The attributes of one start tag, with located, collected errors."""

    def __init__(self, loader: "_Loader", tag: str, raw: Dict[str, str], loc: Loc):
        self.ld = loader
        self.tag = tag                     # display name, e.g. "event" or "mantra:pgoKind"
        self.loc = loc
        self.plain: Dict[str, str] = {}     # attributes without a namespace
        self.mantra: Dict[str, str] = {}    # attributes in urn:mantra (local names)
        self.other: List[str] = []          # attributes in any other namespace (display names)
        for key, value in raw.items():
            ns, local = _split(key)
            if not ns:
                self.plain[local] = value
            elif ns == MANTRA_NS:
                self.mantra[local] = value
            else:
                self.other.append(key.replace(_SEP, ":"))

    def error(self, message: str, hint: Optional[str] = None) -> None:
        self.ld.diag.error(self.loc, message, hint)

    def check_mantra(self, allowed: Tuple[str, ...] = ()) -> None:
        for name in self.mantra:
            if name not in allowed:
                if allowed:
                    hint = "allowed mantra attributes on <%s>: %s" % (
                        self.tag, ", ".join("mantra:" + a for a in allowed))
                else:
                    hint = "<%s> takes no mantra attributes" % self.tag
                self.error("unknown attribute 'mantra:%s' on <%s>" % (name, self.tag), hint)

    def check_only(self, allowed: Tuple[str, ...]) -> None:
        """Every plain and foreign attribute must be one of ``allowed``."""
        hint = "allowed attributes on <%s>: %s" % (self.tag, ", ".join(allowed))
        for name in self.plain:
            if name not in allowed:
                self.error("unknown attribute '%s' on <%s>" % (name, self.tag), hint)
        for name in self.other:
            self.error("unknown attribute '%s' on <%s>" % (name, self.tag), hint)

    def _raw(self, name: str, required: bool, mantra: bool) -> Optional[str]:
        table = self.mantra if mantra else self.plain
        value = table.get(name)
        if value is None and required:
            shown = "mantra:" + name if mantra else name
            self.error("missing attribute '%s' on <%s>" % (shown, self.tag))
        return value

    def text(self, name: str, required: bool = False, mantra: bool = False) -> Optional[str]:
        value = self._raw(name, required, mantra)
        if value is not None and required and not value.strip():
            shown = "mantra:" + name if mantra else name
            self.error("empty attribute '%s' on <%s>" % (shown, self.tag))
        return value

    def number(self, name: str, required: bool = False, default: Optional[int] = None,
               signed: bool = False) -> Optional[int]:
        """A decimal or 0x-hex attribute; on an error the default (or 0) keeps the load going."""
        value = self._raw(name, required, False)
        if value is None:
            return 0 if required and default is None else default
        text = value.strip()
        if not (_SNUM_RE if signed else _NUM_RE).match(text):
            self.error("invalid number '%s' for attribute '%s'" % (value, name),
                       "write a decimal or 0x hexadecimal %sinteger" % ("" if signed else "non-negative "))
            return default if default is not None else 0
        return _to_int(text)

    def guid(self, name: str) -> Optional[str]:
        value = self._raw(name, False, False)
        if value is None:
            return None
        text = value.strip()
        if text.startswith("{") and text.endswith("}"):
            text = text[1:-1]
        if not _GUID_RE.match(text):
            self.error("invalid GUID '%s' for attribute '%s'" % (value, name),
                       "write xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, with or without braces")
            return None
        return text.lower()

    def message(self, name: str, setter: Callable[[str], None], required: bool = False) -> Optional[str]:
        """Read a message attribute; a ``$(string.ID)`` reference is resolved after the parse."""
        value = self._raw(name, required, False)
        if value is None:
            return None
        ref = _STRING_REF_RE.match(value.strip())
        if ref:
            self.ld.string_refs.append((ref.group(1), setter, self.loc))
            return None
        return value


# Frame kinds: what the children of the current element mean.
_IGNORE = "ignore"


class _Loader:
    def __init__(self, path: str):
        self.path = path
        self.diag = Collector()
        self.manifest = Manifest(path=path, loc=Loc(path, 1, 1))
        self.stack: List[Tuple[str, object]] = []
        self.string_refs: List[Tuple[str, Callable[[str], None], Loc]] = []
        # culture -> {id: text}; first culture seen is remembered for the fallback
        self.tables: Dict[str, Dict[str, str]] = {}
        self.culture_order: List[str] = []
        self.string_locs: Dict[Tuple[str, str], Loc] = {}
        self.parser = None

    # -- expat callbacks -------------------------------------------------------------------------

    def loc(self) -> Loc:
        p = self.parser
        return Loc(self.path, p.CurrentLineNumber, p.CurrentColumnNumber + 1)

    def start(self, name: str, raw: Dict[str, str]) -> None:
        ns, local = _split(name)
        loc = self.loc()
        kind, obj = self.stack[-1] if self.stack else ("document", None)
        if kind == _IGNORE:
            self.stack.append((_IGNORE, None))
            return
        if ns == MANTRA_NS:
            self.stack.append(self.start_mantra(kind, local, raw, loc))
            return
        if ns not in ("", ETW_NS):
            self.stack.append((_IGNORE, None))     # UserData payload schemas and the like
            return
        handler = getattr(self, "in_" + kind, None)
        frame = handler(obj, local, _Attrs(self, local, raw, loc)) if handler else None
        self.stack.append(frame or (_IGNORE, None))

    def end(self, name: str) -> None:
        self.stack.pop()

    # -- element handlers: in_<parent kind>(parent object, child local name, attrs) -> frame -----

    def in_document(self, _obj, local, a: _Attrs):
        if local != "instrumentationManifest":
            a.error("unexpected root element <%s>" % local,
                    "an ETW manifest starts with <instrumentationManifest>")
            return (_IGNORE, None)
        a.check_mantra()
        return ("root", None)

    def in_root(self, _obj, local, a: _Attrs):
        if local == "instrumentation":
            a.check_mantra()
            return ("instrumentation", None)
        if local == "localization":
            return ("localization", None)
        return None

    def in_instrumentation(self, _obj, local, a: _Attrs):
        if local == "events":
            return ("providers", None)
        return None

    def in_providers(self, _obj, local, a: _Attrs):
        if local != "provider":
            return None
        a.check_mantra(("prefix",))
        p = Provider(name=a.text("name", required=True) or "", loc=a.loc)
        p.guid = a.guid("guid")
        p.symbol = a.text("symbol")
        p.prefix = a.text("prefix", mantra=True)
        p.message = a.message("message", lambda s, o=p: setattr(o, "message", s))
        self.manifest.providers.append(p)
        return ("provider", p)

    def in_provider(self, p: Provider, local, a: _Attrs):
        sections = {"keywords": "keywords", "tasks": "tasks", "opcodes": "popcodes",
                    "maps": "maps", "templates": "templates", "events": "events"}
        if local in sections:
            a.check_mantra()
            return (sections[local], p)
        return None        # channels, filters, levels, ...

    def in_keywords(self, p: Provider, local, a: _Attrs):
        if local != "keyword":
            return None
        a.check_mantra()
        k = Keyword(name=a.text("name", required=True) or "", mask=a.number("mask", required=True),
                    symbol=a.text("symbol"), loc=a.loc)
        k.message = a.message("message", lambda s, o=k: setattr(o, "message", s))
        p.keywords.append(k)
        return (_IGNORE, None)

    def _opcode(self, a: _Attrs) -> Opcode:
        a.check_mantra()
        o = Opcode(name=a.text("name", required=True) or "", value=a.number("value", required=True),
                   symbol=a.text("symbol"), loc=a.loc)
        o.message = a.message("message", lambda s, x=o: setattr(x, "message", s))
        return o

    def in_popcodes(self, p: Provider, local, a: _Attrs):
        if local != "opcode":
            return None
        p.opcodes.append(self._opcode(a))
        return (_IGNORE, None)

    def in_tasks(self, p: Provider, local, a: _Attrs):
        if local != "task":
            return None
        a.check_mantra()
        t = Task(name=a.text("name", required=True) or "", value=a.number("value", required=True),
                 symbol=a.text("symbol"), guid=a.guid("eventGUID"), loc=a.loc)
        t.message = a.message("message", lambda s, o=t: setattr(o, "message", s))
        p.tasks.append(t)
        return ("task", t)

    def in_task(self, t: Task, local, a: _Attrs):
        if local == "opcodes":
            return ("topcodes", t)
        return None

    def in_topcodes(self, t: Task, local, a: _Attrs):
        if local != "opcode":
            return None
        t.opcodes.append(self._opcode(a))
        return (_IGNORE, None)

    def in_maps(self, p: Provider, local, a: _Attrs):
        kinds = {"valueMap": "value", "bitMap": "bitmap"}
        if local not in kinds:
            return None
        a.check_mantra()
        m = Map(name=a.text("name", required=True) or "", kind=kinds[local], loc=a.loc)
        p.maps.append(m)
        return ("map", m)

    def in_map(self, m: Map, local, a: _Attrs):
        if local != "map":
            return None
        a.check_mantra()
        e = MapEntry(value=a.number("value", required=True), message="", loc=a.loc)
        msg = a.message("message", lambda s, o=e: setattr(o, "message", s), required=True)
        if msg is not None:
            e.message = msg
        m.entries.append(e)
        return (_IGNORE, None)

    def in_templates(self, p: Provider, local, a: _Attrs):
        if local != "template":
            return None
        a.check_mantra()
        t = Template(name=a.text("tid", required=True) or "", loc=a.loc)
        p.templates.append(t)
        return ("fields", (t.fields, None))

    def _count(self, a: _Attrs, name: str, normalise_one: bool):
        value = a.text(name)
        if value is None:
            return None
        text = value.strip()
        if text[:1].isdigit() or text[:1] == "-":
            number = a.number(name)
            if normalise_one and number == 1:
                return None
            return number
        if not text:
            a.error("empty attribute '%s' on <%s>" % (name, a.tag))
            return None
        return value

    def in_fields(self, frame: Tuple[List[Field], Optional[Field]], local, a: _Attrs):
        fields, owner = frame
        if local == "data":
            a.check_mantra()
            a.check_only(DATA_ATTRS)
            in_type = a.text("inType", required=True)
            ftype = "UInt32"
            if in_type is not None:
                if in_type.strip() in IN_TYPES:
                    ftype = IN_TYPES[in_type.strip()]
                else:
                    a.error("unsupported inType '%s'" % in_type,
                            "supported types: " + ", ".join(IN_TYPES))
            f = Field(name=a.text("name", required=True) or "", type=ftype,
                      out_type=a.text("outType"), map=a.text("map"),
                      length=self._count(a, "length", False),
                      count=self._count(a, "count", True), loc=a.loc)
            fields.append(f)
            return (_IGNORE, None)
        if local == "struct":
            if owner is not None:
                a.error("unexpected <struct> inside <struct> '%s'" % owner.name,
                        "an ETW struct holds <data> fields only")
                return (_IGNORE, None)
            a.check_mantra(("layout",))
            a.check_only(STRUCT_ATTRS)
            layout = a.text("layout", mantra=True)
            f = Field(name=a.text("name", required=True) or "", type="struct",
                      length=self._count(a, "length", False),
                      count=self._count(a, "count", True),
                      layout=None if layout == "packed" else layout, loc=a.loc)
            fields.append(f)
            return ("fields", (f.fields, f))
        return None        # UserData and friends

    def in_events(self, p: Provider, local, a: _Attrs):
        if local != "event":
            return None
        a.check_mantra(("stack", "name"))
        e = Event(name="", id=a.number("value", required=True), version=a.number("version", default=0),
                  loc=a.loc)
        level = a.text("level")
        if level is None:
            e.level = 0            # ETW: an event without a level has level 0
        elif level.strip() in LEVELS:
            e.level = LEVELS[level.strip()]
        elif level.strip().isdigit() and int(level.strip()) in LEVELS.values():
            e.level = int(level.strip())
        else:
            a.error("unknown level '%s'" % level, "use one of: " + ", ".join(LEVELS))
        keywords = a.text("keywords")
        e.keywords = keywords.split() if keywords is not None else []
        e.task = a.text("task")
        e.opcode = a.text("opcode")
        e.template = a.text("template")
        e.symbol = a.text("symbol")
        e.message = a.message("message", lambda s, o=e: setattr(o, "message", s))
        stack = a.mantra.get("stack")
        if stack is not None:
            if stack.strip() in ("true", "1"):
                e.stack = True
            elif stack.strip() in ("false", "0"):
                e.stack = False
            else:
                a.error("invalid boolean '%s' for attribute 'mantra:stack'" % stack,
                        "write true or false")
        name = a.mantra.get("name")
        if name is not None:
            if not name.strip():
                a.error("empty attribute 'mantra:name' on <event>")
            e.name = name
        elif e.symbol is None:
            a.error("missing attribute 'symbol' on <event>",
                    "an event needs a symbol or a mantra:name to name it")
        else:
            e.name = base_name(e.symbol, e.version)
            if not e.name.strip():
                a.error("empty attribute 'symbol' on <event>")
        if e.symbol is not None and e.symbol == derived_symbol(e.name, e.version):
            e.symbol = None  # the model keeps only symbols that differ from the derived one
        p.events.append(e)
        return (_IGNORE, None)

    def in_localization(self, _obj, local, a: _Attrs):
        if local != "resources":
            return None
        culture = a.plain.get("culture", "")
        if culture not in self.tables:
            self.tables[culture] = {}
            self.culture_order.append(culture)
        return ("resources", culture)

    def in_resources(self, culture, local, a: _Attrs):
        if local == "stringTable":
            return ("strings", culture)
        return None

    def in_strings(self, culture, local, a: _Attrs):
        if local != "string":
            return None
        sid = a.text("id", required=True)
        value = a.text("value", required=False)
        if value is None:
            a.error("missing attribute 'value' on <string>")
        if sid is None or value is None:
            return (_IGNORE, None)
        table = self.tables[culture]
        if sid in table:
            first = self.string_locs[(culture, sid)]
            a.error("duplicate string id '%s'" % sid, "first defined at %s" % first)
        else:
            table[sid] = value
            self.string_locs[(culture, sid)] = a.loc
        return (_IGNORE, None)

    # -- mantra namespace elements ---------------------------------------------------------------

    def start_mantra(self, kind: str, local: str, raw: Dict[str, str], loc: Loc):
        a = _Attrs(self, "mantra:" + local, raw, loc)
        if local == "pgoKinds" and kind in ("root", "instrumentation"):
            a.check_only(())
            return ("pgokinds", None)
        if local == "pgoKind" and kind == "pgokinds":
            a.check_only(("name", "value", "size"))
            a.check_mantra()
            self.manifest.pgo_kinds.append(PgoKind(
                name=a.text("name", required=True) or "", value=a.number("value", required=True),
                size=a.number("size", required=True, signed=True), loc=loc))
            return (_IGNORE, None)
        if local in ("pgoKinds", "pgoKind"):
            where = "<instrumentationManifest>" if local == "pgoKinds" else "<mantra:pgoKinds>"
            a.error("misplaced element <mantra:%s>" % local, "it belongs directly inside " + where)
        else:
            a.error("unknown element <mantra:%s>" % local,
                    "mantra elements: <mantra:pgoKinds>, <mantra:pgoKind>")
        return (_IGNORE, None)

    # -- driver ----------------------------------------------------------------------------------

    def resolve_strings(self) -> None:
        if not self.string_refs:
            return
        culture = "en-US" if "en-US" in self.tables else (
            self.culture_order[0] if self.culture_order else None)
        table = self.tables.get(culture, {}) if culture is not None else {}
        for sid, setter, loc in self.string_refs:
            if sid in table:
                setter(table[sid])
            else:
                hint = None if table else "the manifest has no <localization> string table"
                self.diag.error(loc, "unknown string id '%s'" % sid, hint)

    def run(self) -> Manifest:
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise fail(Loc(self.path, 1, 1), "cannot read manifest: %s" % (exc.strerror or exc))
        p = expat.ParserCreate(namespace_separator=_SEP)
        self.parser = p
        p.StartElementHandler = self.start
        p.EndElementHandler = self.end
        try:
            p.Parse(data, True)
        except expat.ExpatError as exc:
            message = expat.ErrorString(exc.code)
            hint = None
            if exc.code == expat.errors.codes.get(expat.errors.XML_ERROR_UNBOUND_PREFIX):
                hint = ('declare every prefix with xmlns:PREFIX="URI"; mantra attributes need '
                        'xmlns:mantra="urn:mantra"')
            self.diag.error(Loc(self.path, exc.lineno, exc.offset + 1),
                            "XML syntax error: %s" % message, hint)
            self.diag.check()
        self.resolve_strings()
        self.diag.check()
        return self.manifest


def _to_int(text: str) -> int:
    """A string matched by _NUM_RE/_SNUM_RE as an int (decimal, or hex with 0x; "010" is ten)."""
    negative = text.startswith("-")
    digits = text[1:] if negative else text
    value = int(digits[2:], 16) if digits[:2] in ("0x", "0X") else int(digits, 10)
    return -value if negative else value


def base_name(symbol: str, version: int) -> str:
    """An event's base name from its symbol: ``MethodLoad_V2`` (version 2) -> ``MethodLoad``."""
    suffix = "_V%d" % version
    if version > 0 and symbol.endswith(suffix) and len(symbol) > len(suffix):
        return symbol[: -len(suffix)]
    return symbol


def load_xml(path: str) -> Manifest:
    """Parse the ETW manifest at ``path``; raise :class:`errors.ManifestError` on bad input."""
    return _Loader(path).run()
