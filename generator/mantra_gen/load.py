"""Loads a manifest in either spelling (by file extension) and validates it."""
from __future__ import annotations

import os

from .errors import fail
from .model import Loc, Manifest

XML_EXTENSIONS = (".man", ".xml")
YAML_EXTENSIONS = (".yaml", ".yml")


def load_unvalidated(path: str) -> Manifest:
    ext = os.path.splitext(path)[1].lower()
    if not os.path.isfile(path):
        raise fail(Loc(path, 1, 1), "cannot read manifest: no such file")
    if ext in XML_EXTENSIONS:
        from .load_xml import load_xml
        m = load_xml(path)
    elif ext in YAML_EXTENSIONS:
        from .load_yaml import load_yaml
        m = load_yaml(path)
    else:
        raise fail(Loc(path, 1, 1), f"unknown manifest extension '{ext}'",
                   "use .yaml/.yml for YAML and .man/.xml for ETW XML")
    m.path = path
    return m


def load_manifest(path: str) -> Manifest:
    from .validate import validate
    m = load_unvalidated(path)
    validate(m)
    return m
