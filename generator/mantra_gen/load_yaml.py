"""Load a manifest written in the YAML spelling (docs/manifest.md) into the model.

The file is composed into a YAML node tree with libyaml (``yaml.compose``), which keeps a start mark
on every mapping, sequence and scalar; the model is built from those nodes so that every model node
and every diagnostic carries its 1-based line and column. Scalars are converted from their source
text (integers in decimal or ``0x`` hex, as YAML integers or strings), not by PyYAML's constructor,
so YAML 1.1 surprises (octal ``010``, sexagesimal ``1:30``) never slip in silently.

Only the spelling is checked here (shape, keys, value types, level and field type names). Cross
references, duplicates and C identifier validity are :mod:`validate`'s job.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import Collector, fail
from .model import (FIELD_TYPES, LEVEL_NAMES, LEVELS, Event, Field, Keyword, Loc, Manifest, Map,
                    MapEntry, Opcode, PgoKind, Provider, Task, Template)
from .resolve import derived_symbol

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

__all__ = ["load_yaml"]

_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+)\Z")
_NULLS = ("", "~", "null", "Null", "NULL")
_TRUE = ("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON")
_FALSE = ("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF")
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_MAP_KINDS = ("value", "bitmap")

_BAD = object()   # a value that failed to convert (its diagnostic is already recorded)

# Keys of each mapping, in the order docs/manifest.md lists them, and the required ones.
_MANIFEST_KEYS = ("providers", "pgo_kinds")
_PROVIDER_KEYS = ("name", "guid", "prefix", "symbol", "message", "keywords", "opcodes", "tasks",
                  "maps", "templates", "events")
_KEYWORD_KEYS = ("name", "mask", "symbol", "message")
_OPCODE_KEYS = ("name", "value", "symbol", "message")
_TASK_KEYS = ("name", "value", "symbol", "guid", "message", "opcodes")
_MAP_KEYS = ("name", "kind", "entries")
_ENTRY_KEYS = ("value", "message")
_TEMPLATE_KEYS = ("name", "fields")
_FIELD_KEYS = ("name", "type", "out", "map", "length", "count", "fields", "layout")
_EVENT_KEYS = ("name", "id", "version", "level", "keywords", "task", "opcode", "template", "fields",
               "symbol", "stack", "message")
_PGO_KEYS = ("name", "value", "size")

_LEVEL_HINT = ("valid levels: " + ", ".join(LEVEL_NAMES[i] for i in sorted(LEVEL_NAMES))
               + " (with or without 'win:'), or a number 0..5")
_TYPE_HINT = "valid types: " + ", ".join(FIELD_TYPES) + " (scalar types also with 'win:')"

_Pairs = Dict[str, Tuple[Node, Node]]   # key -> (key node, value node)


def load_yaml(path: str) -> Manifest:
    """Load the YAML manifest at ``path``; raises :class:`errors.ManifestError` on any problem."""
    data = _read(path)
    _check_depth(path, data)
    root = _compose(path, data)
    if root is None:
        raise fail(Loc(path, 1, 1), "an empty file is not a manifest")
    b = _Builder(path)
    try:
        m = b.manifest(root)
    except RecursionError:
        raise fail(b.loc(root), "the manifest is nested too deeply") from None
    b.errors.check()
    assert m is not None
    return m


# --- reading and composing -----------------------------------------------------------------------

def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise fail(Loc(path, 1, 1), f"cannot read the file: {e.strerror or e}")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):           # UTF-16 with BOM (YAML allows it)
        try:
            return data.decode("utf-16").encode("utf-8")
        except UnicodeError as e:
            raise fail(Loc(path, 1, 1), f"invalid UTF-16: {e.reason}")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise fail(_byte_loc(path, data, e.start),
                   f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x})")
    return data


def _byte_loc(path: str, data: bytes, offset: int) -> Loc:
    before = data[:offset].decode("utf-8", "replace")
    line = before.count("\n") + 1
    return Loc(path, line, len(before) - (before.rfind("\n") + 1) + 1)


_MAX_DEPTH = 1000
_BRACKETS = re.compile(rb"[\[\]{}]")


def _check_depth(path: str, data: bytes) -> None:
    """libyaml's composer recurses in C and crashes the process on absurdly deep nesting, so refuse
    that first. Nesting depth is at most the flow bracket depth plus twice the longest line (block
    nesting needs indentation); only when that cheap bound is high are the parse events counted."""
    depth = deepest = 0
    for b in _BRACKETS.findall(data):
        depth = depth + 1 if b in b"[{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    if deepest + 2 * max(map(len, data.split(b"\n"))) + 2 <= _MAX_DEPTH:
        return
    depth = 0
    try:
        for event in yaml.parse(data, Loader=_Loader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > _MAX_DEPTH:
                    mark = event.start_mark
                    raise fail(Loc(path, mark.line + 1, mark.column + 1),
                               f"the YAML is nested too deeply (more than {_MAX_DEPTH} levels)")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return          # _compose reports it with its location


def _compose(path: str, data: bytes) -> Optional[Node]:
    try:
        return yaml.compose(data, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        loc = Loc(path, mark.line + 1, mark.column + 1) if mark is not None else Loc(path, 1, 1)
        problem = e.problem or e.context or "invalid YAML"
        hint = None
        if e.context and problem.startswith("but "):      # "expected X ... but found Y"
            problem = f"{e.context}, {problem}"
        elif e.context and e.problem:
            hint = e.context
            if e.context_mark is not None:
                hint += f" (started at line {e.context_mark.line + 1}, column {e.context_mark.column + 1})"
        raise fail(loc, f"YAML syntax error: {problem}", hint)
    except yaml.reader.ReaderError as e:
        loc = _byte_loc(path, data, e.position) if isinstance(e.position, int) else Loc(path, 1, 1)
        raise fail(loc, f"YAML syntax error: unacceptable character #x{e.character:04x}: {e.reason}")
    except yaml.YAMLError as e:                       # anything else libyaml may report
        raise fail(Loc(path, 1, 1), f"YAML syntax error: {str(e).splitlines()[0] if str(e) else e}")


# --- node helpers --------------------------------------------------------------------------------

def _is_null(node: Node) -> bool:
    return (isinstance(node, ScalarNode) and node.tag == _NULL_TAG and not node.style
            and node.value in _NULLS)


def _describe(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a sequence"
    if _is_null(node):
        return "nothing" if node.value == "" else "null"
    text = node.value
    if len(text) > 40:
        text = text[:37] + "..."
    return "'" + text.replace("\n", "\\n") + "'"


def _parse_int(text: str) -> Optional[int]:
    text = text.strip()
    if not _INT.match(text):
        return None
    return int(text, 16) if "x" in text[:3].lower() else int(text, 10)


class _Builder:
    def __init__(self, path: str) -> None:
        self.path = path
        self.errors = Collector()
        self._active: set = set()     # sequence nodes being built (guards against recursive aliases)

    def loc(self, node: Node) -> Loc:
        return Loc(self.path, node.start_mark.line + 1, node.start_mark.column + 1)

    def error(self, node: Node, message: str, hint: Optional[str] = None) -> None:
        self.errors.error(self.loc(node), message, hint)

    # -- mappings ---------------------------------------------------------------------------------

    def mapping(self, node: Node, what: str, keys: Tuple[str, ...],
                required: Tuple[str, ...]) -> Optional[_Pairs]:
        """The key/value nodes of a mapping, after checking its shape and keys; None if not one."""
        if not isinstance(node, MappingNode):
            self.error(node, f"expected a mapping for {what}, got {_describe(node)}")
            return None
        pairs: _Pairs = {}
        for knode, vnode in node.value:
            if not isinstance(knode, ScalarNode):
                self.error(knode, f"expected a string key in {what}, got {_describe(knode)}")
                continue
            key = knode.value
            if knode.tag == _MERGE_TAG:
                self.error(knode, f"merge key '<<' is not supported in {what}")
                continue
            if key not in keys:
                self.error(knode, f"unknown key '{key}' in {what}", "valid keys: " + ", ".join(keys))
                continue
            if key in pairs:
                first = pairs[key][0]
                self.error(knode, f"duplicate key '{key}' in {what}",
                           f"first given at line {first.start_mark.line + 1}")
                continue
            pairs[key] = (knode, vnode)
        for key in required:
            if key not in pairs:
                self.error(node, f"missing key '{key}' in {what}")
        return pairs

    def values(self, pairs: _Pairs, required: Tuple[str, ...],
               converters: Dict[str, Callable[[Node, str], object]]) -> Optional[dict]:
        """Convert the scalar-valued keys; None when a required key is missing or any value is bad.
        A null value (``key:`` or ``key: ~``) on an optional key means the default."""
        out = {}
        ok = all(k in pairs for k in required)
        for key, conv in converters.items():
            if key not in pairs:
                continue
            vnode = pairs[key][1]
            if key not in required and _is_null(vnode):
                continue
            value = conv(vnode, key)
            if value is _BAD:
                ok = False
            else:
                out[key] = value
        return out if ok else None

    def sequence(self, pairs: _Pairs, key: str) -> List[Node]:
        if key not in pairs:
            return []
        node = pairs[key][1]
        if _is_null(node):
            return []
        if not isinstance(node, SequenceNode):
            self.error(node, f"expected a sequence for '{key}', got {_describe(node)}")
            return []
        return node.value

    # -- scalar converters (each returns the value or _BAD after recording a diagnostic) -----------

    def _scalar(self, node: Node, key: str, kind: str) -> Optional[str]:
        if isinstance(node, ScalarNode) and not _is_null(node):
            return node.value
        self.error(node, f"expected {kind} for '{key}', got {_describe(node)}")
        return None

    def string(self, node: Node, key: str) -> object:
        text = self._scalar(node, key, "a string")
        return _BAD if text is None else text

    def guid(self, node: Node, key: str) -> object:
        text = self._scalar(node, key, "a GUID")
        if text is None:
            return _BAD
        text = text.strip()
        if text.startswith("{") and text.endswith("}"):
            text = text[1:-1]
        return text.lower()

    def integer(self, node: Node, key: str) -> object:
        if isinstance(node, ScalarNode) and not _is_null(node):
            value = _parse_int(node.value)
            if value is not None:
                return value
        self.error(node, f"expected an integer for '{key}', got {_describe(node)}")
        return _BAD

    def boolean(self, node: Node, key: str) -> object:
        if isinstance(node, ScalarNode):
            if node.tag == _BOOL_TAG or node.style:
                if node.value in _TRUE:
                    return True
                if node.value in _FALSE:
                    return False
        self.error(node, f"expected true or false for '{key}', got {_describe(node)}")
        return _BAD

    def level(self, node: Node, key: str) -> object:
        text = self._scalar(node, key, "a level")
        if text is None:
            return _BAD
        if text in LEVELS:
            return LEVELS[text]
        if "win:" + text in LEVELS:
            return LEVELS["win:" + text]
        value = _parse_int(text)
        if value is None:
            self.error(node, f"unknown level '{text}'", _LEVEL_HINT)
            return _BAD
        if not 0 <= value <= 5:
            self.error(node, f"level {value} is out of range 0..5", _LEVEL_HINT)
            return _BAD
        return value

    def field_type(self, node: Node, key: str) -> object:
        text = self._scalar(node, key, "a field type")
        if text is None:
            return _BAD
        if text in FIELD_TYPES:
            return text
        if text.startswith("win:") and text[4:] in FIELD_TYPES and text[4:] != "struct":
            return text[4:]
        self.error(node, f"unknown field type '{text}'", _TYPE_HINT)
        return _BAD

    def map_kind(self, node: Node, key: str) -> object:
        text = self._scalar(node, key, "a map kind")
        if text is None:
            return _BAD
        if text not in _MAP_KINDS:
            self.error(node, f"unknown map kind '{text}'", "valid kinds: " + ", ".join(_MAP_KINDS))
            return _BAD
        return text

    def size_ref(self, node: Node, key: str) -> object:
        """``count``/``length``: a fixed number or the name of an earlier field."""
        text = self._scalar(node, key, "a number or a field name")
        if text is None:
            return _BAD
        value = _parse_int(text)
        return text if value is None else value

    def names(self, node: Node, key: str) -> object:
        if not isinstance(node, SequenceNode):
            self.error(node, f"expected a sequence for '{key}', got {_describe(node)}")
            return _BAD
        out = []
        for item in node.value:
            if isinstance(item, ScalarNode) and not _is_null(item):
                out.append(item.value)
            else:
                self.error(item, f"expected a name in '{key}', got {_describe(item)}")
        return out if len(out) == len(node.value) else _BAD

    # -- model nodes ------------------------------------------------------------------------------

    def manifest(self, node: Node) -> Optional[Manifest]:
        pairs = self.mapping(node, "manifest", _MANIFEST_KEYS, ("providers",))
        m = Manifest(path=self.path, loc=self.loc(node))
        if pairs is None:
            return m
        if "providers" in pairs:
            items = self.sequence(pairs, "providers")
            vnode = pairs["providers"][1]
            if not items and (isinstance(vnode, SequenceNode) or _is_null(vnode)):
                self.error(vnode, "expected at least one provider in 'providers'")
            m.providers = [p for p in map(self.provider, items) if p is not None]
        m.pgo_kinds = [k for k in map(self.pgo_kind, self.sequence(pairs, "pgo_kinds")) if k is not None]
        return m

    def provider(self, node: Node) -> Optional[Provider]:
        req = ("name",)
        pairs = self.mapping(node, "provider", _PROVIDER_KEYS, req)
        if pairs is None:
            return None
        vals = self.values(pairs, req, {"name": self.string, "guid": self.guid, "prefix": self.string,
                                        "symbol": self.string, "message": self.string})
        p = Provider(name="", loc=self.loc(node))
        p.keywords = [x for x in map(self.keyword, self.sequence(pairs, "keywords")) if x is not None]
        p.tasks = [x for x in map(self.task, self.sequence(pairs, "tasks")) if x is not None]
        p.opcodes = [x for x in map(self.opcode, self.sequence(pairs, "opcodes")) if x is not None]
        p.maps = [x for x in map(self.map, self.sequence(pairs, "maps")) if x is not None]
        p.templates = [x for x in map(self.template, self.sequence(pairs, "templates")) if x is not None]
        for item in self.sequence(pairs, "events"):
            e = self.event(item, p)
            if e is not None:
                p.events.append(e)
        if vals is None:
            return None
        for k, v in vals.items():
            setattr(p, k, v)
        return p

    def keyword(self, node: Node) -> Optional[Keyword]:
        req = ("name", "mask")
        pairs = self.mapping(node, "keyword", _KEYWORD_KEYS, req)
        vals = pairs is not None and self.values(pairs, req, {
            "name": self.string, "mask": self.integer, "symbol": self.string, "message": self.string})
        return Keyword(**vals, loc=self.loc(node)) if vals else None

    def opcode(self, node: Node) -> Optional[Opcode]:
        req = ("name", "value")
        pairs = self.mapping(node, "opcode", _OPCODE_KEYS, req)
        vals = pairs is not None and self.values(pairs, req, {
            "name": self.string, "value": self.integer, "symbol": self.string, "message": self.string})
        return Opcode(**vals, loc=self.loc(node)) if vals else None

    def task(self, node: Node) -> Optional[Task]:
        req = ("name", "value")
        pairs = self.mapping(node, "task", _TASK_KEYS, req)
        if pairs is None:
            return None
        vals = self.values(pairs, req, {"name": self.string, "value": self.integer,
                                        "symbol": self.string, "guid": self.guid,
                                        "message": self.string})
        opcodes = [x for x in map(self.opcode, self.sequence(pairs, "opcodes")) if x is not None]
        return Task(**vals, opcodes=opcodes, loc=self.loc(node)) if vals else None

    def map(self, node: Node) -> Optional[Map]:
        req = ("name", "kind")
        pairs = self.mapping(node, "map", _MAP_KEYS, req)
        if pairs is None:
            return None
        vals = self.values(pairs, req, {"name": self.string, "kind": self.map_kind})
        entries = [x for x in map(self.map_entry, self.sequence(pairs, "entries")) if x is not None]
        return Map(**vals, entries=entries, loc=self.loc(node)) if vals else None

    def map_entry(self, node: Node) -> Optional[MapEntry]:
        req = ("value", "message")
        pairs = self.mapping(node, "map entry", _ENTRY_KEYS, req)
        vals = pairs is not None and self.values(pairs, req, {
            "value": self.integer, "message": self.string})
        return MapEntry(**vals, loc=self.loc(node)) if vals else None

    def template(self, node: Node) -> Optional[Template]:
        req = ("name",)
        pairs = self.mapping(node, "template", _TEMPLATE_KEYS, req)
        if pairs is None:
            return None
        vals = self.values(pairs, req, {"name": self.string})
        fields = self.fields(pairs)
        return Template(**vals, fields=fields, loc=self.loc(node)) if vals else None

    def fields(self, pairs: _Pairs) -> List[Field]:
        if "fields" not in pairs:
            return []
        seq = pairs["fields"][1]
        if id(seq) in self._active:
            self.error(seq, "recursive alias in 'fields'")
            return []
        self._active.add(id(seq))
        try:
            return [x for x in map(self.field, self.sequence(pairs, "fields")) if x is not None]
        finally:
            self._active.discard(id(seq))

    def field(self, node: Node) -> Optional[Field]:
        req = ("name", "type")
        pairs = self.mapping(node, "field", _FIELD_KEYS, req)
        if pairs is None:
            return None
        vals = self.values(pairs, req, {"name": self.string, "type": self.field_type,
                                        "out": self.string, "map": self.string,
                                        "length": self.size_ref, "count": self.size_ref,
                                        "layout": self.string})
        members = self.fields(pairs)
        if vals is None:
            return None
        if "fields" in pairs and vals["type"] != "struct":
            self.error(pairs["fields"][0], "only a struct field can have 'fields'",
                       f"field '{vals['name']}' has type '{vals['type']}'")
            return None
        if vals.get("count") == 1:
            del vals["count"]
        if "out" in vals:
            vals["out_type"] = vals.pop("out")
        if vals.get("layout") == "packed":
            del vals["layout"]                    # the default: None in the model
        return Field(**vals, fields=members, loc=self.loc(node))

    def event(self, node: Node, p: Provider) -> Optional[Event]:
        req = ("name", "id")
        pairs = self.mapping(node, "event", _EVENT_KEYS, req)
        if pairs is None:
            return None
        vals = self.values(pairs, req, {
            "name": self.string, "id": self.integer, "version": self.integer, "level": self.level,
            "keywords": self.names, "task": self.string, "opcode": self.string,
            "template": self.string, "symbol": self.string, "stack": self.boolean,
            "message": self.string})
        inline = "fields" in pairs and not _is_null(pairs["fields"][1])
        fields = self.fields(pairs) if inline else []
        if vals is None:
            return None
        e = Event(**vals, loc=self.loc(node))
        if e.symbol is not None and e.symbol == derived_symbol(e.name, e.version):
            e.symbol = None                       # None means "derived" in the model
        if inline:
            fkey = pairs["fields"][0]
            if "template" in pairs:
                self.error(fkey, "an event cannot have both 'fields' and 'template'")
                return None
            name = e.symbol if e.symbol is not None else derived_symbol(e.name, e.version)
            if any(t.name == name for t in p.templates):
                self.error(fkey, f"inline fields would create template '{name}', which already exists")
                return None
            p.templates.append(Template(name=name, fields=fields, loc=self.loc(fkey)))
            e.template = name
        return e

    def pgo_kind(self, node: Node) -> Optional[PgoKind]:
        req = ("name", "value", "size")
        pairs = self.mapping(node, "pgo kind", _PGO_KEYS, req)
        vals = pairs is not None and self.values(pairs, req, {
            "name": self.string, "value": self.integer, "size": self.integer})
        return PgoKind(**vals, loc=self.loc(node)) if vals else None
