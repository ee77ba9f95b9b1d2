#!/usr/bin/env python3
"""Prints every event of a manifest, one line each, as the generator's model sees it, in the format of
tests/manifest/manifest_test_util.c mt_describe_events() (the C loader's view). Used by
test_manifest_clr to check that both loaders agree on every event."""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("MANTRA_SOURCE_DIR", "."), "generator"))
from mantra_gen.load import load_manifest  # noqa: E402
from mantra_gen.resolve import (event_symbol, keyword_mask, opcode_value, task_value,  # noqa: E402
                                template_of)


def ref(fields, value, open_, close):
    if value is None:
        return ""
    return f"{open_}{value}{close}"


def fields_text(fields):
    out = []
    for f in fields:
        s = f"{f.name}:{f.type}" + ref(fields, f.count, "[", "]") + ref(fields, f.length, "<", ">")
        if f.map:
            s += "=" + f.map
        if f.out_type:
            s += "/" + f.out_type
        if f.layout:
            s += "@" + f.layout
        if f.type == "struct":
            s += "{" + fields_text(f.fields) + "}"
        out.append(s)
    return ", ".join(out)


def main():
    m = load_manifest(sys.argv[1])
    for p in m.providers:
        for e in p.events:
            t = template_of(p, e)
            print(f"{p.name}/{e.id}/v{e.version} {e.name} {event_symbol(e)} level={e.level} "
                  f"keywords=0x{keyword_mask(p, e):x} task={task_value(p, e)} opcode={opcode_value(p, e)} "
                  f"stack={int(e.stack)} tpl={t.name if t else '-'}: {fields_text(t.fields) if t else ''}")


main()
