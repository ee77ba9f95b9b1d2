"""Command line of mantra-gen. Exit status: 0 ok, 1 bad input or stale output, 2 usage."""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import List, Optional, TextIO

from . import __version__
from .errors import ManifestError

USAGE_EXIT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors exit 2, as every mantra tool
        self.print_usage(sys.stderr)
        sys.stderr.write(f"mantra-gen: error: {message}\n")
        sys.exit(USAGE_EXIT)

    def convert_arg_line_to_args(self, arg_line: str) -> List[str]:
        """@FILE arguments: words separated by white space, '#' to the end of a line a comment."""
        return arg_line.split("#", 1)[0].split()


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="mantra-gen", fromfile_prefix_chars="@",
        description="Turn event manifests (YAML, or ETW instrumentation-manifest XML such as "
                    "ClrEtwAll.man) into C event writers, typed readers, nettrace metadata, "
                    "registration tables and an events reference.",
        epilog="@FILE reads more arguments from FILE (white-space separated, # comments), e.g. "
               "manifest/clr/readers.args. "
               "Exit status: 0 ok, 1 invalid manifest / stale output / breaking change, 2 usage. "
               "Diagnostics are FILE:LINE:COL: error: MESSAGE on stderr.")
    p.add_argument("manifests", nargs="*", metavar="MANIFEST", help="manifest files (.yaml/.yml or .man/.xml)")
    p.add_argument("-o", "--output", default="generated", metavar="DIR",
                   help="directory for generated files (default: generated)")
    p.add_argument("--docs", metavar="DIR", help="directory for the events reference (default: the output directory)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming each generated file that is missing or stale")
    p.add_argument("--validate", action="store_true", help="load and validate only")
    p.add_argument("--list-outputs", action="store_true", help="print the paths that would be generated")
    p.add_argument("--emit-yaml", action="store_true", help="print the manifest in the YAML spelling")
    p.add_argument("--emit-xml", action="store_true", help="print the manifest in the ETW XML spelling")
    p.add_argument("--provider", action="append", metavar="NAME",
                   help="with --emit-yaml/--emit-xml: only this provider (repeatable; in the order given)")
    p.add_argument("--layouts-only", action="store_true",
                   help="with --emit-yaml/--emit-xml: leave out event and provider messages (what "
                        "manifest/clr/ holds; docs/manifest.md)")
    p.add_argument("--readers-only", action="store_true",
                   help="generate only BASE_defs.h and the typed readers BASE_readers.{h,c} (for a "
                        "manifest one reads but does not write, such as the .NET runtime's)")
    p.add_argument("--base", metavar="NAME",
                   help="base name of the generated files (default: the manifest file's name without "
                        "its extension); one manifest only")
    p.add_argument("--prefix", action="append", metavar="PROVIDER=PREFIX",
                   help="C prefix of a provider's generated names (mantra_PREFIX_...), instead of the "
                        "manifest's or the one derived from its name (repeatable)")
    p.add_argument("--c-layout", action="append", metavar="TEMPLATE.FIELD",
                   help="give that struct field of every provider's template TEMPLATE the layout c (each "
                        "member at its natural alignment, elements padded) before anything else is done "
                        "(repeatable; for manifests one cannot edit, such as ClrEtwAll.man)")
    p.add_argument("--compat", nargs=2, metavar=("OLD", "NEW"),
                   help="report changes from OLD to NEW that break readers or writers of existing events")
    p.add_argument("--version", action="version", version=f"mantra-gen {__version__}")
    return p


def _report(err: ManifestError, stream: TextIO) -> None:
    for d in err.diagnostics:
        stream.write(d.format() + "\n")


def _write_if_changed(path: str, content: str) -> bool:
    data = content.encode("utf-8")
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return True


def _set_c_layout(m, spec: str) -> None:
    """--c-layout TEMPLATE.FIELD: layout c on that struct field of every template so named."""
    from .errors import fail
    from .model import Loc
    tname, dot, fname = spec.partition(".")
    hits = [f for p in m.providers for t in p.templates if t.name == tname for f in t.fields
            if f.name == fname and f.type == "struct"]
    if not dot or not hits:
        raise fail(Loc(m.path, 1, 1), f"--c-layout {spec}: no template '{tname}' has a struct field '{fname}'",
                   "give TEMPLATE.FIELD of a struct field")
    for f in hits:
        f.layout = "c"


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)

    if args.compat:
        if args.manifests:
            _parser().error("--compat takes exactly OLD and NEW")
        from .compat import compat_main
        return compat_main(args.compat[0], args.compat[1], sys.stdout, sys.stderr)

    if not args.manifests:
        _parser().error("no manifest given")
    if (args.emit_yaml or args.emit_xml) and len(args.manifests) != 1:
        _parser().error("--emit-yaml/--emit-xml take exactly one manifest")

    if (args.readers_only or args.base is not None) and (args.emit_yaml or args.emit_xml or args.validate):
        _parser().error("--readers-only/--base go with generating files, not with --emit-yaml, --emit-xml "
                        "or --validate")
    if args.base is not None:
        if len(args.manifests) != 1:
            _parser().error("--base takes exactly one manifest")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args.base):
            _parser().error(f"--base '{args.base}' is not a C identifier")
    prefixes = {}
    for spec in args.prefix or []:
        name, eq, prefix = spec.partition("=")
        if not eq or not name or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", prefix):
            _parser().error(f"--prefix '{spec}': expected PROVIDER=PREFIX with a C identifier as PREFIX")
        prefixes[name] = prefix

    from .load import load_unvalidated
    from .validate import validate
    manifests = []
    failed = False
    for path in args.manifests:
        try:
            m = load_unvalidated(path)
            for p in m.providers:
                if p.name in prefixes:
                    p.prefix = prefixes[p.name]
            for spec in args.c_layout or []:
                _set_c_layout(m, spec)
            validate(m)
            manifests.append(m)
        except ManifestError as e:
            _report(e, sys.stderr)
            failed = True
    if failed:
        return 1
    unknown = sorted(set(prefixes) - {p.name for m in manifests for p in m.providers})
    if unknown:
        _parser().error(f"--prefix names provider '{unknown[0]}', which no manifest given has")
    if args.validate:
        return 0
    if (args.provider or args.layouts_only) and not (args.emit_yaml or args.emit_xml):
        _parser().error("--provider/--layouts-only go with --emit-yaml or --emit-xml")
    if args.emit_yaml or args.emit_xml:
        from .layouts import layouts_only, select_providers
        m = manifests[0]
        try:
            if args.provider:
                m = select_providers(m, args.provider)
        except ManifestError as e:
            _report(e, sys.stderr)
            return 1
        if args.layouts_only:
            m = layouts_only(m)
        if args.emit_yaml:
            from .emit_yaml import emit_yaml
            sys.stdout.write(emit_yaml(m))
        else:
            from .emit_xml import emit_xml
            sys.stdout.write(emit_xml(m))
        return 0

    from .render import render_manifest
    docs_dir = args.docs or args.output
    stale = []
    for m in manifests:
        for name, content in render_manifest(m, args.base, args.readers_only).items():
            directory = docs_dir if name.endswith(".md") else args.output
            path = os.path.join(directory, name)
            if args.list_outputs:
                print(path)
            elif args.check:
                try:
                    with open(path, "rb") as f:
                        current = f.read()
                except FileNotFoundError:
                    current = None
                if current != content.encode("utf-8"):
                    stale.append((path, "missing" if current is None else "stale"))
            else:
                os.makedirs(directory, exist_ok=True)
                if _write_if_changed(path, content):
                    print(f"mantra-gen: wrote {path}")
    extra = (" --readers-only" if args.readers_only else "") + \
        (f" --base {args.base}" if args.base else "") + \
        "".join(f" --prefix {spec}" for spec in args.prefix or []) + \
        "".join(f" --c-layout {spec}" for spec in args.c_layout or [])
    for path, why in stale:
        sys.stderr.write(f"mantra-gen: {path}: {why} (regenerate with tools/mantra-gen -o {args.output}{extra} "
                         f"{' '.join(args.manifests)})\n")
    return 1 if stale else 0
