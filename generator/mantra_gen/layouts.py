"""Selecting providers of a model and keeping their event layouts only (``--provider``,
``--layouts-only``): what the built-in runtime data of manifest/clr/ is made of.

``layouts_only`` drops the text written for people: event messages (format strings such as
``Count=%1;%nReason=%2``) and provider messages. It keeps what a reader needs to find and show an
event: ids, versions, names, levels, keywords, tasks and opcodes (with their short display names,
the ``message`` of a task or opcode, e.g. ``GC`` and ``Start``: what TraceEvent prints as
``GC/Start``), templates and maps (map entries are named by their messages).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, List

from .errors import fail
from .model import Loc, Manifest, Provider

__all__ = ["select_providers", "layouts_only"]


def select_providers(m: Manifest, names: Iterable[str]) -> Manifest:
    """The manifest with only the named providers, in the order given. A name the manifest lacks is
    an error (located at the manifest)."""
    by_name = {p.name: p for p in m.providers}
    chosen: List[Provider] = []
    for n in names:
        p = by_name.get(n)
        if p is None:
            known = ", ".join(sorted(by_name))
            raise fail(Loc(m.path, 1, 1), f"no provider named '{n}' (the manifest has: {known})")
        chosen.append(p)
    return replace(m, providers=chosen)


def layouts_only(m: Manifest) -> Manifest:
    """The manifest without event and provider messages."""
    providers = [replace(p, message=None, events=[replace(e, message=None) for e in p.events])
                 for p in m.providers]
    return replace(m, providers=providers)
