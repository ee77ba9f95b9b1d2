"""Breaking-change check between two versions of a manifest (``mantra-gen --compat OLD NEW``).

An event version, once published, is a contract with every trace reader (TraceEvent, PerfView,
mantra's own typed readers) and with every caller of its generated C writer: its identity (provider,
id, version), level, keywords, opcode, task and payload layout never change. New things may be added.
The rules are documented in docs/compat.md; each finding is located at the new node, or at the old
node for a removal.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, TextIO, Union

from .errors import Diagnostic
from .model import LEVEL_NAMES, Event, Field, Loc, Manifest, Map, Provider
from .resolve import (event_symbol, keyword_mask, opcode_value, provider_guid, provider_prefix,
                      task_value, template_of)


class Finding(Diagnostic):
    """A compat finding: an error for a breaking change, a note for an allowed addition."""

    @property
    def breaking(self) -> bool:
        return self.severity == "error"


NEW_VERSION_HINT = "an event version's payload is fixed; add a new version of the event instead"


def _count(value: Union[None, str, int]) -> str:
    if value is None:
        return "none"
    return str(value) if isinstance(value, int) else f"'{value}'"


def _level(value: int) -> str:
    name = LEVEL_NAMES.get(value)
    return f"{value} ({name})" if name else str(value)


def _named(name: Optional[str], value: Optional[int]) -> str:
    if name is None:
        return "none"
    return f"'{name}' ({value})"


def _map_value(mp: Map, value: int) -> str:
    return hex(value) if mp.kind == "bitmap" else str(value)


def _describe(e: Event) -> str:
    return f"event '{event_symbol(e)}' (id {e.id}, version {e.version})"


class _Compat:
    def __init__(self, old: Manifest, new: Manifest):
        self.old = old
        self.new = new
        self.findings: List[Finding] = []

    def breaking(self, loc: Loc, message: str, hint: Optional[str] = None) -> None:
        self.findings.append(Finding(loc, message, hint))

    def added(self, loc: Loc, message: str) -> None:
        self.findings.append(Finding(loc, message, severity="note"))

    def run(self) -> List[Finding]:
        new_providers = {p.name: p for p in self.new.providers}
        old_names = {p.name for p in self.old.providers}
        for op in self.old.providers:
            np_ = new_providers.get(op.name)
            if np_ is None:
                self.breaking(op.loc, f"provider '{op.name}' was removed")
            else:
                self.provider(op, np_)
        for np_ in self.new.providers:
            if np_.name not in old_names:
                self.added(np_.loc, f"provider '{np_.name}' was added")
        self.pgo_kinds()
        new_path = self.new.path
        # New-file locations first (in file order), then old-file ones (removals).
        self.findings.sort(key=lambda f: (f.loc.file != new_path, f.loc.file, f.loc.line, f.loc.col))
        return self.findings

    # -- provider-level definitions --------------------------------------------------------------

    def provider(self, op: Provider, np_: Provider) -> None:
        if provider_guid(op) != provider_guid(np_):
            self.breaking(np_.loc, f"provider '{op.name}' changed its GUID from '{provider_guid(op)}' "
                                   f"to '{provider_guid(np_)}'")
        if provider_prefix(op) != provider_prefix(np_):
            self.breaking(np_.loc, f"provider '{op.name}' changed its C prefix from '{provider_prefix(op)}' "
                                   f"to '{provider_prefix(np_)}'", "every generated C name of the provider changes")
        self.keywords(op, np_)
        self.tasks(op, np_)
        self.maps(op, np_)
        old_templates = {t.name for t in op.templates}
        for t in np_.templates:
            if t.name not in old_templates:
                self.added(t.loc, f"template '{t.name}' was added")
        self.events(op, np_)

    def keywords(self, op: Provider, np_: Provider) -> None:
        new = {k.name: k for k in np_.keywords}
        old = {k.name for k in op.keywords}
        for k in op.keywords:
            nk = new.get(k.name)
            if nk is None:
                self.breaking(k.loc, f"keyword '{k.name}' was removed")
            elif nk.mask != k.mask:
                self.breaking(nk.loc, f"keyword '{k.name}' changed its mask from {hex(k.mask)} to {hex(nk.mask)}")
        for k in np_.keywords:
            if k.name not in old:
                self.added(k.loc, f"keyword '{k.name}' (mask {hex(k.mask)}) was added")

    def opcodes(self, old_list, new_list, where: str) -> None:
        new = {o.name for o in new_list}
        old = {o.name for o in old_list}
        for o in old_list:
            if o.name not in new:
                self.breaking(o.loc, f"opcode '{o.name}'{where} was removed")
        for o in new_list:
            if o.name not in old:
                self.added(o.loc, f"opcode '{o.name}' (value {o.value}){where} was added")

    def tasks(self, op: Provider, np_: Provider) -> None:
        new = {t.name: t for t in np_.tasks}
        old = {t.name for t in op.tasks}
        for t in op.tasks:
            nt = new.get(t.name)
            if nt is None:
                self.breaking(t.loc, f"task '{t.name}' was removed")
            else:
                self.opcodes(t.opcodes, nt.opcodes, f" of task '{t.name}'")
        for t in np_.tasks:
            if t.name not in old:
                self.added(t.loc, f"task '{t.name}' (value {t.value}) was added")
        self.opcodes(op.opcodes, np_.opcodes, "")

    def maps(self, op: Provider, np_: Provider) -> None:
        new = {mp.name: mp for mp in np_.maps}
        old = {mp.name for mp in op.maps}
        for mp in op.maps:
            nm = new.get(mp.name)
            if nm is None:
                self.breaking(mp.loc, f"map '{mp.name}' was removed")
                continue
            if nm.kind != mp.kind:
                self.breaking(nm.loc, f"map '{mp.name}' changed its kind from '{mp.kind}' to '{nm.kind}'")
            entries = {e.value: e for e in nm.entries}
            seen = {e.value for e in mp.entries}
            for e in mp.entries:
                ne = entries.get(e.value)
                if ne is None:
                    self.breaking(e.loc, f"value {_map_value(mp, e.value)} of map '{mp.name}' was removed")
                elif ne.message != e.message:
                    self.breaking(ne.loc, f"value {_map_value(mp, e.value)} of map '{mp.name}' changed its name "
                                          f"from '{e.message}' to '{ne.message}'")
            for ne in nm.entries:
                if ne.value not in seen:
                    self.added(ne.loc, f"value {_map_value(nm, ne.value)} ('{ne.message}') of map '{nm.name}' "
                                       f"was added")
        for mp in np_.maps:
            if mp.name not in old:
                self.added(mp.loc, f"map '{mp.name}' was added")

    # -- events ----------------------------------------------------------------------------------

    def events(self, op: Provider, np_: Provider) -> None:
        old_by_sym = {event_symbol(e): e for e in op.events}
        new_by_sym = {event_symbol(e): e for e in np_.events}
        old_by_key = {(e.id, e.version): e for e in op.events}
        new_by_key = {(e.id, e.version): e for e in np_.events}
        old_ids = {e.id for e in op.events}
        renamed: Set[int] = set()       # id() of new events paired with a renamed old one
        for oe in op.events:
            sym = event_symbol(oe)
            ne = new_by_sym.get(sym)
            if ne is None:
                cand = new_by_key.get((oe.id, oe.version))
                if cand is not None and event_symbol(cand) not in old_by_sym:
                    renamed.add(id(cand))
                    self.breaking(cand.loc, f"{_describe(oe)} was renamed to '{event_symbol(cand)}'",
                                  "the symbol names the generated C writer, reader and enable check")
                    self.event(op, oe, np_, cand)
                else:
                    self.breaking(oe.loc, f"{_describe(oe)} was removed")
                continue
            self.event(op, oe, np_, ne)
        for ne in np_.events:
            if id(ne) in renamed:
                continue
            sym = event_symbol(ne)
            prior = old_by_key.get((ne.id, ne.version))
            if prior is not None and event_symbol(prior) != sym:
                self.breaking(ne.loc, f"{_describe(ne)} reuses the id and version of event '{event_symbol(prior)}'",
                              "readers of existing traces would decode it as the old event")
            elif sym not in old_by_sym and prior is None:
                if ne.id in old_ids:
                    self.added(ne.loc, f"version {ne.version} of event id {ne.id} ('{sym}') was added")
                else:
                    self.added(ne.loc, f"{_describe(ne)} was added")

    def event(self, op: Provider, oe: Event, np_: Provider, ne: Event) -> None:
        sym = event_symbol(ne)
        what = f"event '{sym}'"
        if oe.id != ne.id:
            self.breaking(ne.loc, f"{what} changed its id from {oe.id} to {ne.id}")
        if oe.version != ne.version:
            self.breaking(ne.loc, f"{what} changed its version from {oe.version} to {ne.version}")
        if oe.level != ne.level:
            self.breaking(ne.loc, f"{what} changed its level from {_level(oe.level)} to {_level(ne.level)}")
        old_mask, new_mask = keyword_mask(op, oe), keyword_mask(np_, ne)
        if old_mask != new_mask:
            self.breaking(ne.loc, f"{what} changed its keywords from {hex(old_mask)} to {hex(new_mask)}")
        old_op, new_op = opcode_value(op, oe), opcode_value(np_, ne)
        if old_op != new_op:
            self.breaking(ne.loc, f"{what} changed its opcode from {_named(oe.opcode, old_op)} "
                                  f"to {_named(ne.opcode, new_op)}")
        old_task, new_task = task_value(op, oe), task_value(np_, ne)
        if old_task != new_task:
            self.breaking(ne.loc, f"{what} changed its task from {_named(oe.task, old_task)} "
                                  f"to {_named(ne.task, new_task)}")
        ot, nt = template_of(op, oe), template_of(np_, ne)
        self.fields(ot.fields if ot else [], nt.fields if nt else [], f"event '{sym}'", "")

    def fields(self, old: List[Field], new: List[Field], ev: str, path: str) -> None:
        """Compares two payloads (or two structs' members, ``path`` = "Struct.")."""
        old_names = {f.name for f in old}
        new_by_name: Dict[str, Field] = {f.name: f for f in new}
        paired: Set[str] = set()
        for i, f in enumerate(old):
            if f.name in new_by_name:
                continue
            g = new[i] if i < len(new) else None
            if g is not None and g.name not in old_names:
                paired.add(g.name)
                self.breaking(g.loc, f"field '{path}{f.name}' of {ev} was renamed to '{g.name}'")
                self.shape(f, g, ev, path)
            else:
                self.breaking(f.loc, f"field '{path}{f.name}' of {ev} was removed")
        common_old = [f.name for f in old if f.name in new_by_name]
        common_new = [f.name for f in new if f.name in old_names]
        for a, b in zip(common_old, common_new):
            if a != b:
                self.breaking(new_by_name[b].loc, f"field '{path}{b}' of {ev} was moved before field '{path}{a}'")
                break
        for g in new:
            if g.name not in old_names and g.name not in paired:
                self.breaking(g.loc, f"field '{path}{g.name}' was added to {ev}", NEW_VERSION_HINT)
        old_by_name = {f.name: f for f in old}
        for g in new:
            if g.name in old_by_name:
                self.shape(old_by_name[g.name], g, ev, path)

    def shape(self, f: Field, g: Field, ev: str, path: str) -> None:
        name = f"field '{path}{g.name}' of {ev}"
        if f.type != g.type:
            self.breaking(g.loc, f"{name} changed its type from '{f.type}' to '{g.type}'")
            return
        if f.count != g.count:
            self.breaking(g.loc, f"{name} changed its count from {_count(f.count)} to {_count(g.count)}")
        if f.length != g.length:
            self.breaking(g.loc, f"{name} changed its length from {_count(f.length)} to {_count(g.length)}")
        if f.type == "struct" and (f.layout or "packed") != (g.layout or "packed"):
            self.breaking(g.loc, f"{name} changed its layout from {f.layout or 'packed'} to {g.layout or 'packed'}")
        if f.type == "struct":
            self.fields(f.fields, g.fields, ev, f"{path}{g.name}.")

    # -- pgo kinds -------------------------------------------------------------------------------

    def pgo_kinds(self) -> None:
        new = {k.name: k for k in self.new.pgo_kinds}
        old = {k.name for k in self.old.pgo_kinds}
        for k in self.old.pgo_kinds:
            nk = new.get(k.name)
            if nk is None:
                self.breaking(k.loc, f"pgo kind '{k.name}' was removed")
                continue
            if nk.value != k.value:
                self.breaking(nk.loc, f"pgo kind '{k.name}' changed its value from {hex(k.value)} to {hex(nk.value)}")
            if nk.size != k.size:
                self.breaking(nk.loc, f"pgo kind '{k.name}' changed its size from {k.size} to {nk.size}")
        for k in self.new.pgo_kinds:
            if k.name not in old:
                self.added(k.loc, f"pgo kind '{k.name}' (value {hex(k.value)}) was added")


def compat(old: Manifest, new: Manifest) -> List[Finding]:
    """Every change from ``old`` to ``new``: breaking ones (``breaking=True``) and additions."""
    return _Compat(old, new).run()


def compat_main(old_path: str, new_path: str, out: TextIO, err: TextIO) -> int:
    """``mantra-gen --compat OLD NEW``: breaking changes to ``err`` as errors, additions to ``out``
    as notes, then a summary line on ``out``. Exit status 1 when anything breaks (or when either
    manifest does not load), else 0."""
    from .errors import ManifestError
    from .load import load_manifest

    loaded: List[Manifest] = []
    failed = False
    for path in (old_path, new_path):
        try:
            loaded.append(load_manifest(path))
        except ManifestError as e:
            for d in e.diagnostics:
                err.write(d.format() + "\n")
            failed = True
    if failed:
        return 1
    findings = compat(loaded[0], loaded[1])
    breaking = [f for f in findings if f.breaking]
    additions = [f for f in findings if not f.breaking]
    for f in breaking:
        err.write(f.format() + "\n")
    for f in additions:
        out.write(f.format() + "\n")
    out.write(f"compat: {len(breaking)} breaking change(s), {len(additions)} addition(s)\n")
    return 1 if breaking else 0
