"""The manifest model: what both loaders (YAML, ETW XML) produce and every later stage consumes.

Contract (loaders, validator, renderers and the compat checker all rely on it):

* Every node carries ``loc`` (a :class:`Loc`, 1-based line and column of the node in its source
  file). ``loc`` never takes part in equality, so the same manifest loaded from YAML and from XML
  compares equal.
* Names are kept exactly as written. Cross references (event -> keywords/task/opcode/template,
  field -> map/length/count) are kept *by name*; :mod:`validate` checks that they resolve and
  :mod:`resolve` computes derived values (masks, symbols, GUIDs) without mutating the model.
* Localised strings (``$(string.X)`` in XML) are resolved to their text at load time; the model
  holds plain text or ``None``.
* Field types are the canonical names in :data:`FIELD_TYPES` (ETW ``inType`` names without the
  ``win:`` prefix, plus ``struct``). ``count``/``length`` hold either the name of an earlier field
  (``str``) or a fixed number (``int``); ``count=1`` is normalised to ``None`` by the loaders.
* Levels are integers 0..5 (loaders map names such as ``win:Informational`` to numbers).
* Opcode references keep their spelling: a task-local or provider-level opcode name, or a standard
  one such as ``win:Start`` (see :data:`STANDARD_OPCODES`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Union


@dataclass(frozen=True)
class Loc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = Loc("<model>", 0, 0)


def _loc() -> Loc:
    return field(default=NOWHERE, compare=False, repr=False)


# Canonical field types -> (size in bytes or None when variable, description).
# Pointer is target-pointer sized (8 on every platform mantra writes today, recorded in the
# trace header); FILETIME is 100 ns ticks since 1601 (nettrace TypeCode 16, DateTime).
FIELD_TYPES = {
    "Int8": 1, "UInt8": 1, "Int16": 2, "UInt16": 2, "Int32": 4, "UInt32": 4,
    "Int64": 8, "UInt64": 8, "Float": 4, "Double": 8, "Boolean": 4, "GUID": 16,
    "Pointer": None, "FILETIME": 8, "UnicodeString": None, "AnsiString": None,
    "Binary": None, "struct": None,
}
INTEGER_TYPES = ("Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64")
STRING_TYPES = ("UnicodeString", "AnsiString")

LEVELS = {
    "win:LogAlways": 0, "win:Critical": 1, "win:Error": 2, "win:Warning": 3,
    "win:Informational": 4, "win:Verbose": 5,
}
LEVEL_NAMES = {v: k[4:] for k, v in LEVELS.items()}  # 4 -> "Informational"

# Standard ETW opcodes (winmeta.xml values).
STANDARD_OPCODES = {
    "win:Info": 0, "win:Start": 1, "win:Stop": 2, "win:DC_Start": 3, "win:DC_Stop": 4,
    "win:Extension": 5, "win:Reply": 6, "win:Resume": 7, "win:Suspend": 8, "win:Send": 9,
    "win:Receive": 240,
}


@dataclass
class Keyword:
    name: str
    mask: int
    symbol: Optional[str] = None
    message: Optional[str] = None
    loc: Loc = _loc()


@dataclass
class Opcode:
    name: str
    value: int
    symbol: Optional[str] = None
    message: Optional[str] = None
    loc: Loc = _loc()


@dataclass
class Task:
    name: str
    value: int
    symbol: Optional[str] = None
    message: Optional[str] = None
    guid: Optional[str] = None          # lower case, no braces
    opcodes: List[Opcode] = field(default_factory=list)
    loc: Loc = _loc()


@dataclass
class MapEntry:
    value: int
    message: str
    loc: Loc = _loc()


@dataclass
class Map:
    name: str
    kind: str                           # "value" or "bitmap"
    entries: List[MapEntry] = field(default_factory=list)
    loc: Loc = _loc()


@dataclass
class Field:
    name: str
    type: str                           # a key of FIELD_TYPES
    out_type: Optional[str] = None      # ETW outType without prefix handling, e.g. "win:HexInt64"
    map: Optional[str] = None
    length: Optional[Union[str, int]] = None   # Binary (and strings with fixed length)
    count: Optional[Union[str, int]] = None    # arrays and structs
    fields: List["Field"] = field(default_factory=list)   # members when type == "struct"
    layout: Optional[str] = None        # struct only: "c" (C alignment and padding); None packed
    loc: Loc = _loc()


@dataclass
class Template:
    name: str
    fields: List[Field] = field(default_factory=list)
    loc: Loc = _loc()


@dataclass
class Event:
    name: str                           # base name, e.g. "MethodLoadVerbose"
    id: int
    version: int = 0
    level: int = 4
    keywords: List[str] = field(default_factory=list)
    task: Optional[str] = None
    opcode: Optional[str] = None
    template: Optional[str] = None
    symbol: Optional[str] = None        # None: derived (name, plus "_V<n>" when version > 0)
    stack: bool = True                  # whether the runtime captures a stack
    message: Optional[str] = None
    loc: Loc = _loc()


@dataclass
class Provider:
    name: str
    guid: Optional[str] = None          # lower case, no braces; None: EventSource name hash
    symbol: Optional[str] = None        # the ETW symbol (kept for XML round trips)
    prefix: Optional[str] = None        # C prefix; None: derived from the name
    message: Optional[str] = None
    keywords: List[Keyword] = field(default_factory=list)
    tasks: List[Task] = field(default_factory=list)
    opcodes: List[Opcode] = field(default_factory=list)   # provider-level opcodes
    maps: List[Map] = field(default_factory=list)
    templates: List[Template] = field(default_factory=list)
    events: List[Event] = field(default_factory=list)
    loc: Loc = _loc()


@dataclass
class PgoKind:
    name: str
    value: int
    size: int                           # element size in bytes; 0 for None-sized, -1 for pointer
    loc: Loc = _loc()


@dataclass
class Manifest:
    providers: List[Provider] = field(default_factory=list)
    pgo_kinds: List[PgoKind] = field(default_factory=list)
    path: str = field(default="", compare=False)
    loc: Loc = _loc()
