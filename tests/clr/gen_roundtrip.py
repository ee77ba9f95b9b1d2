#!/usr/bin/env python3
"""Writes a check test source that round-trips one event per template of a manifest.

    gen_roundtrip.py --generator DIR --manifest FILE --base B -o OUT.c

For every template that some event uses (per provider), the first event using it gets one check
test that:

  * calls mantra_<Prefix>_<Symbol>_write() with deterministic, distinct values per field (integers
    of each width including their extreme values and negatives, doubles, bools, GUIDs, UTF-8
    strings with non-ASCII characters, arrays whose length is their count field, binaries, struct
    arrays laid out as raw bytes);
  * captures the payload through a listener and compares it, size and bytes, with the payload
    this script lays out by itself from the manifest (little-endian, packed, strings
    NUL-terminated, pointers 8 bytes);
  * calls the `_write16` variant (when the template has UnicodeString fields) with the same
    strings as UTF-16 and expects the same bytes;
  * decodes the payload with mantra_<Prefix>_<Symbol>_decode() (from an exact-size heap copy, so
    that ASan sees any over-read) and checks every field, array element and struct-array element
    (walked with the generated `_next` functions);
  * checks that every strict prefix of the payload fails to decode and that one trailing byte
    gives MANTRA_DECODE_TRAILING;
  * for templates with Pointer fields, decodes the same values laid out as a 32-bit writer does
    (4-byte pointers) with pointer_size 4, with the same checks.

Only the manifest model comes from the generator (mantra_gen.load / mantra_gen.resolve); the
expected payloads are computed here, independently of mantra_gen.render.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import struct
import sys

sys.dont_write_bytecode = True

POINTER_SIZE = 8  # the expected payloads assume the writer's pointer size (checked in C)

# type -> (C type, struct format, signed, bits) for fixed-size integers
INTS = {
    "Int8": ("int8_t", "<b", True, 8), "UInt8": ("uint8_t", "<B", False, 8),
    "Int16": ("int16_t", "<h", True, 16), "UInt16": ("uint16_t", "<H", False, 16),
    "Int32": ("int32_t", "<i", True, 32), "UInt32": ("uint32_t", "<I", False, 32),
    "Int64": ("int64_t", "<q", True, 64), "UInt64": ("uint64_t", "<Q", False, 64),
    "FILETIME": ("uint64_t", "<Q", False, 64), "Pointer": ("uintptr_t", "<Q", False, 64),
}
# array element type -> (C element type of the writer argument, mantra_array accessor or None)
ARRAY_C = {
    "Int8": ("int8_t", "i8"), "UInt8": ("uint8_t", "u8"), "Int16": ("int16_t", "i16"),
    "UInt16": ("uint16_t", "u16"), "Int32": ("int32_t", "i32"), "UInt32": ("uint32_t", "u32"),
    "Int64": ("int64_t", "i64"), "UInt64": ("uint64_t", "u64"), "Float": ("float", "f32"),
    "Double": ("double", "f64"), "Boolean": ("uint32_t", "u32"), "FILETIME": ("uint64_t", "u64"),
    "Pointer": ("uintptr_t", "u64"), "GUID": ("mantra_guid", None),
}
MIN_MACRO = {8: "INT8_MIN", 16: "INT16_MIN", 32: "INT32_MIN", 64: "INT64_MIN"}
MAX_MACRO = {8: "INT8_MAX", 16: "INT16_MAX", 32: "INT32_MAX", 64: "INT64_MAX"}
UMAX_MACRO = {8: "UINT8_MAX", 16: "UINT16_MAX", 32: "UINT32_MAX", 64: "UINT64_MAX"}


class Unsupported(Exception):
    pass


# ---- C literals ---------------------------------------------------------------------------
def c_string(text: str) -> str:
    """A C string literal in plain ASCII (non-ASCII as octal UTF-8 escapes)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def c_bytes_literal(data: bytes) -> str:
    """A C string literal holding exactly these bytes (plus the implicit NUL)."""
    return '"' + "".join("\\x%02x" % b for b in data) + '"'


def c_comment(text: str) -> str:
    return text.replace("*/", "* /")


def int_literal(t: str, v: int) -> str:
    """A literal of value v that initialises a variable of field type t without a conversion."""
    _c, _fmt, signed, bits = INTS[t]
    if t == "Pointer":
        return "UINTPTR_MAX" if v == (1 << 64) - 1 else f"(uintptr_t)UINT64_C(0x{v:x})"
    if signed:
        if v == -(1 << (bits - 1)):
            return MIN_MACRO[bits]
        if v == (1 << (bits - 1)) - 1:
            return MAX_MACRO[bits]
        return f"INT64_C({v})" if bits == 64 else str(v)
    if v == (1 << bits) - 1:
        return UMAX_MACRO[bits]
    return f"UINT64_C(0x{v:x})" if bits == 64 else f"0x{v:x}u"


def wide_literal(t: str, v: int) -> str:
    """A (u)int64 literal for comparisons with ck_assert_(u)int_eq."""
    _c, _fmt, signed, bits = INTS[t]
    if signed:
        return "INT64_MIN" if v == -(1 << 63) else f"INT64_C({v})"
    return f"UINT64_C(0x{v:x})"


def float_literal(t: str, v: float) -> str:
    return v.hex() + ("f" if t == "Float" else "")


def bytes_initializer(data: bytes, indent: str = "    ") -> str:
    lines = []
    for i in range(0, len(data), 16):
        lines.append(indent + ", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ",")
    return "\n".join(lines)


def guid_bytes_to_c(b: bytes) -> str:
    d1, d2, d3 = struct.unpack("<IHH", b[:8])
    tail = ", ".join(f"0x{x:02x}" for x in b[8:])
    return f"{{0x{d1:08x}u, 0x{d2:04x}u, 0x{d3:04x}u, {{{tail}}}}}"


# ---- values -------------------------------------------------------------------------------
STRING_STYLES = (
    lambda name, n: f"{name} Grüße ✓ 𝄞",          # 1-, 2-, 3- and 4-byte UTF-8 (a surrogate pair)
    lambda name, n: f"{name}-{n} ascii",
    lambda name, n: "",                             # empty (also written as NULL, see below)
    lambda name, n: f"Äö€ {name} 𝄞𝄢 #{n}",
)


class ValueSource:
    """Deterministic values for one event: distinct per field, with each width's extremes."""

    def __init__(self, seed: str):
        digest = hashlib.sha256(seed.encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "little"))
        self.bool_phase = digest[8] & 1   # which events start their Booleans with true
        self.used = set()
        self.occurrence = {}
        self.strings = 0

    def _nth(self, key: str) -> int:
        n = self.occurrence.get(key, 0)
        self.occurrence[key] = n + 1
        return n

    def _distinct(self, make):
        for _ in range(1000):
            v = make()
            if v not in self.used:
                self.used.add(v)
                return v
        raise RuntimeError("no distinct value")

    def integer(self, t: str) -> int:
        _c, _fmt, signed, bits = INTS[t]
        o = self._nth(f"{'i' if signed else 'u'}{bits}")
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if signed:
            first = {0: lo, 1: hi}.get(o)
            if first is not None and first not in self.used:
                self.used.add(first)
                return first
            # mostly negative, never an extreme
            return self._distinct(lambda: -self.rng.randint(1, hi - 1) if o % 2 == 0 else self.rng.randint(1, hi - 1))
        if o == 0 and hi not in self.used:
            self.used.add(hi)
            return hi
        # non-zero, not the maximum, and with a non-zero high byte where the width has one
        floor = 1 << (bits - 8) if bits > 8 else 1
        return self._distinct(lambda: self.rng.randint(floor, hi - 1))

    def count(self, n: int) -> int:
        self.used.add(n)
        return n

    def boolean(self) -> bool:
        return (self._nth("bool") + self.bool_phase) % 2 == 0

    def real(self, t: str) -> float:
        o = self._nth(t)
        fixed = [-1234.5625, 1e300, 5e-324, -0.0] if t == "Double" else [-1234.5625, 3.0e38, 1.5e-45]
        if o < len(fixed):
            v = fixed[o]
        else:
            v = self._distinct(lambda: self.rng.uniform(-1e9, 1e9))
        if t == "Float":
            v = struct.unpack("<f", struct.pack("<f", v))[0]
        return v

    def guid(self) -> bytes:
        return self._distinct(lambda: bytes(self.rng.randrange(256) for _ in range(16)))

    def string(self, name: str) -> str:
        s = self.strings
        self.strings += 1
        return STRING_STYLES[s % len(STRING_STYLES)](name, s)

    def blob(self, n: int) -> bytes:
        return bytes(self.rng.randrange(256) for _ in range(n))


def pack_scalar(t: str, v, ps: int = POINTER_SIZE) -> bytes:
    """v as payload bytes; Pointer fields take ps bytes (a 32-bit writer keeps the low half)."""
    if t == "Pointer" and ps == 4:
        return struct.pack("<I", v & 0xFFFFFFFF)
    if t in INTS:
        return struct.pack(INTS[t][1], v)
    if t == "Boolean":
        return struct.pack("<I", 1 if v else 0)
    if t == "Float":
        return struct.pack("<f", v)
    if t == "Double":
        return struct.pack("<d", v)
    if t == "GUID":
        return v
    raise Unsupported(t)


def as_read(t: str, v, ps: int):
    """The value a decoder reading a ps-byte-pointer payload gives back."""
    return v & 0xFFFFFFFF if t == "Pointer" and ps == 4 else v


def utf16z(s: str) -> bytes:
    return s.encode("utf-16-le") + b"\0\0"


def counted_names(fields):
    return {x for f in fields for x in (f.count, f.length) if isinstance(x, str)}


def has_pointer(fields) -> bool:
    return any(f.type == "Pointer" or (f.type == "struct" and has_pointer(f.fields)) for f in fields)


# ---- one element of a struct array --------------------------------------------------------
def element_values(vs: ValueSource, fields, index: int):
    """[(field, value)] for one struct element; nested count fields get index-dependent small
    values (including 0)."""
    counted = counted_names(fields)
    nested_counts = {}
    values = []
    for f in fields:
        if f.type == "struct":
            raise Unsupported("nested struct arrays")
        if f.length is not None and f.type != "Binary":
            raise Unsupported(f"{f.type} with length")
        if f.name in counted:
            v = nested_counts[f.name] = (2, 0, 1, 3)[index % 4]
        elif f.count is not None:
            n = nested_counts[f.count] if isinstance(f.count, str) else f.count
            v = [scalar_value(vs, f) for _ in range(n)]
        elif f.type == "Binary":
            v = vs.blob(nested_counts[f.length] if isinstance(f.length, str) else f.length)
        elif f.type in ("UnicodeString", "AnsiString"):
            v = vs.string(f.name)
        else:
            v = scalar_value(vs, f)
        values.append((f, v))
    return values


def element_bytes(values, ps: int) -> bytes:
    out = bytearray()
    for f, v in values:
        if f.count is not None:
            for x in v:
                out += pack_scalar(f.type, x, ps)
        elif f.type == "Binary":
            out += v
        elif f.type == "UnicodeString":
            out += utf16z(v)
        elif f.type == "AnsiString":
            out += v.encode("utf-8") + b"\0"
        else:
            out += pack_scalar(f.type, v, ps)
    return bytes(out)


def scalar_value(vs: ValueSource, f):
    t = f.type
    if t in INTS:
        return vs.integer(t)
    if t == "Boolean":
        return vs.boolean()
    if t in ("Float", "Double"):
        return vs.real(t)
    if t == "GUID":
        return vs.guid()
    raise Unsupported(t)


def int_check(t: str, expr: str, want: str) -> str:
    return f"ck_assert_{'int' if INTS[t][2] else 'uint'}_eq({expr}, {want});"


# ---- C for one event ----------------------------------------------------------------------
class EventTest:
    """The check test of one event. Payloads and checks exist for both pointer sizes: 8 (what
    the writer produces here) and 4 (the same values as a 32-bit writer lays them out, decoded
    with pointer_size 4; only emitted when the template has Pointer fields)."""

    SIZES = (8, 4)

    def __init__(self, base: str, pre: str, sym: str, tname: str, fields):
        self.pre, self.sym, self.tname, self.fields = pre, sym, tname, fields
        self.fn = f"rt_{pre}_{sym}"
        self.decls = []        # declarations of the written values
        self.args = []         # writer arguments (UTF-8 variant)
        self.args16 = []       # writer arguments (UTF-16 variant)
        self.checks = {ps: [] for ps in self.SIZES}      # statements checking the decoded `f`
        self.payload = {ps: bytearray() for ps in self.SIZES}
        self.has16 = any(f.type == "UnicodeString" for f in fields)
        self.has_pointer = has_pointer(fields)
        self.vs = ValueSource(f"{base}/{pre}/{sym}")
        self._build()

    def _both(self, line: str):
        for ps in self.SIZES:
            self.checks[ps].append(line)

    def _add_bytes(self, data: bytes):
        for ps in self.SIZES:
            self.payload[ps] += data

    def _build(self):
        counted = counted_names(self.fields)
        count_values = {}
        next_count = iter((3, 4, 5, 6, 7, 8, 9, 10, 11, 12))
        next_len = iter((7, 5, 11, 13, 6, 9))
        next_struct = iter((3, 2, 4, 5))
        # the count each count/length field will carry (known before the field that uses it)
        for f in self.fields:
            ref = f.count if f.count is not None else f.length
            if isinstance(ref, str) and ref not in count_values:
                if f.type == "struct":
                    count_values[ref] = next(next_struct)
                elif f.type == "Binary" or f.length is not None:
                    count_values[ref] = next(next_len)
                else:
                    count_values[ref] = next(next_count)
        empties = 0
        for f in self.fields:
            n, t = f.name, f.type
            v_ = f"v_{n}"
            if f.length is not None and t != "Binary":
                raise Unsupported(f"{t} with length")
            if t == "struct":
                cnt = count_values[f.count] if isinstance(f.count, str) else f.count
                elems = [element_values(self.vs, f.fields, i) for i in range(cnt)]
                for ps in self.SIZES:
                    self.payload[ps] += b"".join(element_bytes(e, ps) for e in elems)
                data = b"".join(element_bytes(e, POINTER_SIZE) for e in elems)
                if data:
                    self.decls.append(f"static const uint8_t {v_}[{len(data)}] = {{\n"
                                      f"{bytes_initializer(data, '        ')}\n    }};")
                    arg = [v_, f"sizeof {v_}"]
                else:
                    arg = ["NULL", "0"]
                self.args += arg
                self.args16 += arg
                for ps in self.SIZES:
                    self._struct_checks(f, elems, ps)
                continue
            if f.count is not None:
                cnt = count_values[f.count] if isinstance(f.count, str) else f.count
                ctype, acc = ARRAY_C[t]
                vals = [scalar_value(self.vs, f) for _ in range(cnt)]
                for ps in self.SIZES:
                    for x in vals:
                        self.payload[ps] += pack_scalar(t, x, ps)
                if cnt == 0:
                    self.args.append("NULL")
                    self.args16.append("NULL")
                else:
                    inits = [self._value_literal(t, x) for x in vals]
                    self.decls.append(f"static const {ctype} {v_}[{cnt}] = {{{', '.join(inits)}}};")
                    self.args.append(v_)
                    self.args16.append(v_)
                self._both(f"ck_assert_uint_eq(f.{n}.count, {cnt});")
                for i in range(cnt):
                    if acc is None:
                        self._both(f"ck_assert(memcmp(f.{n}.data + {i} * sizeof(mantra_guid), &{v_}[{i}], 16) == 0);")
                    elif t in ("Float", "Double"):
                        self._both(f"{{ {ctype} x_ = mantra_array_{acc}(f.{n}, {i}); "
                                   f"ck_assert(memcmp(&x_, &{v_}[{i}], sizeof x_) == 0); }}")
                    elif t == "Pointer":
                        self.checks[8].append(f"ck_assert_uint_eq(mantra_array_u64(f.{n}, {i}), {v_}[{i}]);")
                        self.checks[4].append(f"ck_assert_uint_eq(mantra_array_u32(f.{n}, {i}), (uint32_t){v_}[{i}]);")
                    else:
                        self._both(f"ck_assert_{'int' if acc.startswith('i') else 'uint'}_eq("
                                   f"mantra_array_{acc}(f.{n}, {i}), {v_}[{i}]);")
                continue
            if t == "Binary":
                ln = count_values[f.length] if isinstance(f.length, str) else f.length
                blob = self.vs.blob(ln)
                self._add_bytes(blob)
                if ln:
                    self.decls.append(f"static const uint8_t {v_}[{ln}] = {{{', '.join(f'0x{b:02x}' for b in blob)}}};")
                    self.args.append(v_)
                    self.args16.append(v_)
                    self._both(f"check_bytes(f.{n}, {v_}, sizeof {v_});")
                else:
                    self.args.append("NULL")
                    self.args16.append("NULL")
                    self._both(f"check_bytes(f.{n}, NULL, 0);")
                continue
            if t in ("UnicodeString", "AnsiString"):
                s = self.vs.string(n)
                self._add_bytes(utf16z(s) if t == "UnicodeString" else s.encode("utf-8") + b"\0")
                if s == "":
                    # an empty string goes once as NULL and once as "" (both write an empty string)
                    first = "NULL" if empties % 2 == 0 else '""'
                    second = '""' if empties % 2 == 0 else "NULL"
                    empties += 1
                    self.args.append(first)
                    self.args16.append(second if t == "UnicodeString" else first)
                    if t == "UnicodeString" and second == '""':
                        self.decls.append(f"static const uint16_t w_{n}[1] = {{0}};")
                        self.args16[-1] = f"w_{n}"
                else:
                    self.decls.append(f"static const char {v_}[] = {c_string(s)};")
                    self.args.append(v_)
                    if t == "UnicodeString":
                        units = struct.unpack(f"<{len(s.encode('utf-16-le')) // 2}H", s.encode("utf-16-le"))
                        self.decls.append(f"static const uint16_t w_{n}[{len(units) + 1}] = "
                                          f"{{{', '.join(f'0x{u:04x}' for u in units)}, 0}};")
                        self.args16.append(f"w_{n}")
                    else:
                        self.args16.append(v_)
                if t == "UnicodeString":
                    self._both(f"check_str16(f.{n}, {c_string(s)}, {len(s.encode('utf-16-le')) // 2});")
                else:
                    self._both(f"check_str8(f.{n}, {c_string(s)}, {len(s.encode('utf-8'))});")
                continue
            # fixed-size scalars
            if n in counted:
                v = self.vs.count(count_values[n])
            else:
                v = scalar_value(self.vs, f)
            for ps in self.SIZES:
                self.payload[ps] += pack_scalar(t, v, ps)
            if t == "GUID":
                self.decls.append(f"static const mantra_guid {v_} = {guid_bytes_to_c(v)};")
                self.args.append(f"&{v_}")
                self.args16.append(f"&{v_}")
                self._both(f"check_guid(&f.{n}, &{v_});")
                continue
            ctype = {"Boolean": "bool", "Float": "float", "Double": "double"}.get(t) or INTS[t][0]
            self.decls.append(f"const {ctype} {v_} = {self._value_literal(t, v)};")
            self.args.append(v_)
            self.args16.append(v_)
            if t in ("Float", "Double"):
                self._both(f"ck_assert(memcmp(&f.{n}, &{v_}, sizeof {v_}) == 0);")
            elif t == "Boolean":
                self._both(f"ck_assert_int_eq(f.{n}, {v_});")
            elif t == "Pointer":
                self.checks[8].append(f"ck_assert_uint_eq(f.{n}, (uint64_t){v_});")
                self.checks[4].append(f"ck_assert_uint_eq(f.{n}, (uint64_t)(uint32_t){v_});")
            else:
                self._both(int_check(t, f"f.{n}", v_))

    @staticmethod
    def _value_literal(t: str, v) -> str:
        if t in INTS:
            return int_literal(t, v)
        if t == "Boolean":
            return "true" if v else "false"
        if t in ("Float", "Double"):
            return float_literal(t, v)
        if t == "GUID":
            return guid_bytes_to_c(v)
        raise Unsupported(t)

    def _struct_checks(self, f, elems, ps: int):
        n = f.name
        tpl = f"mantra_{self.pre}_tpl_{self.tname}_{n}"
        c = self.checks[ps]
        sizes = [len(element_bytes(e, ps)) for e in elems]
        c.append(f"ck_assert_uint_eq(f.{n}.count, {len(elems)});")
        c.append(f"ck_assert_uint_eq(f.{n}.size, {sum(sizes)});")
        c.append("{")
        c.append(f"    mantra_cursor c_ = mantra_cursor_of(f.{n}, {ps}u);")
        c.append(f"    {tpl}_elem e_;")
        offset = 0
        for i, vals in enumerate(elems):
            c.append(f"    /* element {i} at offset {offset} of {n} */")
            c.append(f"    ck_assert_uint_eq(c_.pos, {offset});")
            c.append(f"    ck_assert_int_eq({tpl}_next(&c_, &e_), MANTRA_DECODE_OK);")
            offset += sizes[i]
            for sf, v in vals:
                m = f"e_.{sf.name}"
                t = sf.type
                if sf.count is not None:
                    acc = ARRAY_C[t][1]
                    c.append(f"    ck_assert_uint_eq({m}.count, {len(v)});")
                    for j, x in enumerate(v):
                        raw = pack_scalar(t, x, ps)
                        if t == "Pointer":
                            acc = "u64" if ps == 8 else "u32"
                        if acc is None or t in ("Float", "Double"):
                            c.append(f"    ck_assert(memcmp({m}.data + {j * len(raw)}, "
                                     f"{c_bytes_literal(raw)}, {len(raw)}) == 0);")
                        else:
                            c.append(f"    ck_assert_{'int' if acc.startswith('i') else 'uint'}_eq("
                                     f"mantra_array_{acc}({m}, {j}), {wide_literal(t, as_read(t, x, ps))});")
                elif t == "Binary":
                    c.append(f"    check_bytes({m}, (const uint8_t *){c_bytes_literal(v)}, {len(v)});")
                elif t == "UnicodeString":
                    c.append(f"    check_str16({m}, {c_string(v)}, {len(v.encode('utf-16-le')) // 2});")
                elif t == "AnsiString":
                    c.append(f"    check_str8({m}, {c_string(v)}, {len(v.encode('utf-8'))});")
                elif t == "GUID":
                    c.append(f"    {{ static const mantra_guid g_ = {guid_bytes_to_c(v)}; check_guid(&{m}, &g_); }}")
                elif t in ("Float", "Double"):
                    ctype = "float" if t == "Float" else "double"
                    c.append(f"    {{ const {ctype} x_ = {float_literal(t, v)}; ck_assert(memcmp(&{m}, &x_, sizeof x_) == 0); }}")
                elif t == "Boolean":
                    c.append(f"    ck_assert_int_eq({m}, {'true' if v else 'false'});")
                else:
                    c.append(f"    {int_check(t, m, wide_literal(t, as_read(t, v, ps)))}")
        c.append("    ck_assert_uint_eq(c_.pos, c_.size);")
        c.append("}")

    def render(self) -> str:
        pre, sym = self.pre, self.sym
        dec = f"mantra_{pre}_{sym}_decode"
        ftype = f"mantra_{pre}_{sym}_fields"
        payload = bytes(self.payload[8])
        L = []
        L.append(f"/* {pre}/{sym}: template {self.tname}, {len(self.fields)} field(s), {len(payload)} payload bytes */")
        L.append(f"START_TEST({self.fn}) {{")
        for d in self.decls:
            L.append(f"    {d}")
        if payload:
            L.append(f"    static const uint8_t expected[{len(payload)}] = {{")
            L.append(bytes_initializer(payload, "        "))
            L.append("    };")
        expected = "expected" if payload else "NULL"
        L.append(f"    ck_assert(MANTRA_{pre}_{sym}_enabled());")
        L.append(f"    ck_assert_int_eq(mantra_{pre}_{sym}_write({', '.join(self.args)}), MANTRA_WRITE_OK);")
        L.append(f"    check_captured(&mantra_{pre}_events[MANTRA_{pre}_EVENT_{sym}], {expected}, {len(payload)});")
        if self.has16:
            L.append("    cap.count = 0;")
            L.append(f"    ck_assert_int_eq(mantra_{pre}_{sym}_write16({', '.join(self.args16)}), MANTRA_WRITE_OK);")
            L.append(f"    check_captured(&mantra_{pre}_events[MANTRA_{pre}_EVENT_{sym}], {expected}, {len(payload)});")
        L.append("    {")
        L.append("        uint8_t *copy = heap_copy(cap.payload, cap.size);")
        L.append(f"        {ftype} f;")
        L.append(f"        ck_assert_int_eq({dec}(copy, cap.size, 8u, &f), MANTRA_DECODE_OK);")
        for c in self.checks[8]:
            L.append(f"        {c}")
        L.append("        free(copy);")
        L.append(f"        CHECK_PREFIXES_AND_TRAILING({dec}, {ftype}, cap.payload, cap.size, 8u);")
        L.append("    }")
        if self.has_pointer:
            p4 = bytes(self.payload[4])
            L.append("    {")
            L.append("        /* the same values as a 32-bit writer lays them out (4-byte pointers) */")
            L.append(f"        static const uint8_t payload4[{len(p4)}] = {{")
            L.append(bytes_initializer(p4, "            "))
            L.append("        };")
            L.append("        uint8_t *copy = heap_copy(payload4, sizeof payload4);")
            L.append(f"        {ftype} f;")
            L.append(f"        ck_assert_int_eq({dec}(copy, sizeof payload4, 4u, &f), MANTRA_DECODE_OK);")
            for c in self.checks[4]:
                L.append(f"        {c}")
            L.append("        free(copy);")
            L.append(f"        CHECK_PREFIXES_AND_TRAILING({dec}, {ftype}, payload4, sizeof payload4, 4u);")
            L.append("    }")
        L.append("}")
        L.append("END_TEST")
        return "\n".join(L)


PRELUDE = r"""/* Generated by tests/clr/gen_roundtrip.py from @MANIFEST@: do not edit.
 *
 * Writer -> payload -> reader round trip over one event per template (@NTEMPLATES@ templates, the
 * first event that uses each), plus the @NNOTPL@ events without a template. */
#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "mantra/decode.h"
#include "mantra/event.h"
#include "@BASE@_readers.h"
#include "@BASE@_registry.h"
#include "@BASE@_writers.h"

_Static_assert(sizeof(uintptr_t) == 8, "the writers' expected payloads are laid out for 8-byte pointers");

/* The last payload the listener saw. */
static struct {
    unsigned count;
    const mantra_event_desc *desc;
    size_t size;
    uint8_t payload[MANTRA_MAX_PAYLOAD];
} cap;

static void capture(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    (void)ctx;
    cap.count++;
    cap.desc = desc;
    cap.size = size;
    if (size <= sizeof cap.payload && size > 0)
        memcpy(cap.payload, payload, size);
}

static void setup(void) {
    ck_assert_int_eq(mantra_@BASE@_register(), 0);
    cap.count = 0;
    cap.desc = NULL;
    cap.size = 0;
    mantra_set_listener(capture, NULL);
}

static void teardown(void) {
    mantra_set_listener(NULL, NULL);
}

/* Exactly one payload, of the expected event, size and bytes. */
static inline void check_captured(const mantra_event_desc *desc, const uint8_t *expected, size_t size) {
    ck_assert_uint_eq(cap.count, 1);
    ck_assert_ptr_eq(cap.desc, desc);
    ck_assert_uint_eq(cap.size, size);
    if (size > 0)
        ck_assert_msg(memcmp(cap.payload, expected, size) == 0, "%s: payload bytes differ", desc->symbol);
}

/* An exact-size heap copy (ASan then sees any read past the payload). */
static inline uint8_t *heap_copy(const uint8_t *data, size_t size) {
    uint8_t *p = malloc(size ? size : 1);
    ck_assert_ptr_nonnull(p);
    if (size)
        memcpy(p, data, size);
    return p;
}

static inline void check_str16(mantra_str16 s, const char *utf8, size_t units) {
    ck_assert_uint_eq(s.units, units);
    ck_assert_msg(mantra_str16_equals_utf8(s, utf8), "UTF-16 string differs from \"%s\"", utf8);
    char back[512];
    size_t need = mantra_str16_to_utf8(s, back, sizeof back);
    ck_assert_uint_eq(need, strlen(utf8));
    ck_assert_str_eq(back, utf8);
}

static inline void check_str8(mantra_str8 s, const char *utf8, size_t len) {
    ck_assert_uint_eq(s.len, len);
    ck_assert(len == 0 || memcmp(s.data, utf8, len) == 0);
    ck_assert_int_eq(s.data[len], 0);
}

static inline void check_bytes(mantra_bytes b, const uint8_t *want, size_t size) {
    ck_assert_uint_eq(b.size, size);
    ck_assert_uint_eq(b.count, size);
    ck_assert(size == 0 || memcmp(b.data, want, size) == 0);
}

static inline void check_guid(const mantra_guid *got, const mantra_guid *want) {
    ck_assert_uint_eq(got->data1, want->data1);
    ck_assert_uint_eq(got->data2, want->data2);
    ck_assert_uint_eq(got->data3, want->data3);
    ck_assert(memcmp(got->data4, want->data4, sizeof want->data4) == 0);
}

/* Every strict prefix of a payload fails to decode; one more byte is reported as trailing. Each
 * decode reads an exact-size heap copy. */
#define CHECK_PREFIXES_AND_TRAILING(decode, fields_type, data, size, ptr_size)                  \
    do {                                                                                      \
        fields_type t_;                                                                       \
        for (size_t n_ = 0; n_ < (size); n_++) {                                              \
            uint8_t *p_ = heap_copy((data), n_);                                              \
            int rc_ = decode(p_, n_, (ptr_size), &t_);                                        \
            free(p_);                                                                         \
            ck_assert_msg(rc_ < 0, "%s: a %zu-byte prefix of %zu bytes decoded (%d)", #decode, \
                          n_, (size_t)(size), rc_);                                           \
        }                                                                                     \
        uint8_t *x_ = malloc((size) + 1);                                                     \
        ck_assert_ptr_nonnull(x_);                                                            \
        if ((size) > 0)                                                                       \
            memcpy(x_, (data), (size));                                                       \
        x_[(size)] = 0xA5;                                                                    \
        int rc_ = decode(x_, (size) + 1, (ptr_size), &t_);                                    \
        free(x_);                                                                             \
        ck_assert_int_eq(rc_, MANTRA_DECODE_TRAILING);                                        \
    } while (0)
"""


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generator", required=True, help="the folder that holds the mantra_gen package")
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--base", required=True, help="base name of the generated files, e.g. ClrEtwAll_coreclr_2019")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)

    sys.path.insert(0, os.path.abspath(args.generator))
    from mantra_gen.load import load_manifest
    from mantra_gen import resolve

    m = load_manifest(args.manifest)
    tests = []          # (provider prefix, EventTest)
    no_template = []    # (prefix, symbol)
    used_templates = 0
    for p in m.providers:
        pre = resolve.provider_prefix(p)
        seen = set()
        for e in p.events:
            sym = resolve.event_symbol(e)
            if e.template is None:
                no_template.append((pre, sym))
                continue
            if e.template in seen:
                continue
            seen.add(e.template)
            t = resolve.template_of(p, e)
            tests.append((pre, EventTest(args.base, pre, sym, t.name, t.fields)))
        used_templates += len(seen)
        unused = [t.name for t in p.templates if t.name not in seen]
        if unused:
            print(f"gen_roundtrip: {pre}: {len(unused)} template(s) no event uses: {', '.join(unused)}")
    assert len(tests) == used_templates

    out = [PRELUDE.replace("@BASE@", args.base).replace("@MANIFEST@", os.path.basename(args.manifest))
           .replace("@NTEMPLATES@", str(len(tests))).replace("@NNOTPL@", str(len(no_template)))]
    out.append(f"\n#define ROUNDTRIP_TEMPLATES {len(tests)}\n")
    for _pre, t in tests:
        out.append(t.render())
        out.append("")

    # Events without a template: empty payloads.
    out.append("/* Events without a template write an empty payload that decodes as such. */")
    out.append("START_TEST(rt_events_without_template) {")
    if not no_template:
        out.append("    ck_assert(1);")
    for pre, sym in no_template:
        out.append("    {")
        out.append("        cap.count = 0;")
        out.append(f"        ck_assert_int_eq(mantra_{pre}_{sym}_write(), MANTRA_WRITE_OK);")
        out.append(f"        check_captured(&mantra_{pre}_events[MANTRA_{pre}_EVENT_{sym}], NULL, 0);")
        out.append(f"        mantra_{pre}_{sym}_fields f;")
        out.append(f"        ck_assert_int_eq(mantra_{pre}_{sym}_decode(cap.payload, 0, 8u, &f), MANTRA_DECODE_OK);")
        out.append(f"        ck_assert_int_eq(mantra_{pre}_{sym}_decode((const uint8_t *)\"x\", 1, 8u, &f), "
                   "MANTRA_DECODE_TRAILING);")
        out.append("    }")
    out.append("}")
    out.append("END_TEST")
    out.append("")

    # The disabled path, with the first chosen event.
    if tests:
        pre, t = tests[0]
        out.append("/* Without a listener (and no session) events are disabled and writers do nothing. */")
        out.append("START_TEST(rt_disabled_without_listener) {")
        out.append("    mantra_set_listener(NULL, NULL);")
        out.append(f"    ck_assert(!MANTRA_{pre}_{t.sym}_enabled());")
        out.append("    {")
        for d in t.decls:
            out.append(f"        {d}")
        out.append(f"        ck_assert_int_eq(mantra_{pre}_{t.sym}_write({', '.join(t.args)}), MANTRA_WRITE_DISABLED);")
        out.append("        ck_assert_uint_eq(cap.count, 0);")
        out.append("        mantra_set_listener(capture, NULL);")
        out.append(f"        ck_assert(MANTRA_{pre}_{t.sym}_enabled());")
        out.append(f"        ck_assert_int_eq(mantra_{pre}_{t.sym}_write({', '.join(t.args)}), MANTRA_WRITE_OK);")
        out.append("        ck_assert_uint_eq(cap.count, 1);")
        out.append("    }")
        out.append("}")
        out.append("END_TEST")
        out.append("")

    out.append("static Suite *suite(void) {")
    out.append('    Suite *s = suite_create("clretwall-roundtrip");')
    by_pre = {}
    for pre, t in tests:
        by_pre.setdefault(pre, []).append(t)
    for pre, ts in by_pre.items():
        out.append("    {")
        out.append(f'        TCase *tc = tcase_create("{pre}");')
        out.append("        tcase_add_checked_fixture(tc, setup, teardown);")
        for t in ts:
            out.append(f"        tcase_add_test(tc, {t.fn});")
        out.append("        suite_add_tcase(s, tc);")
        out.append("    }")
    out.append("    {")
    out.append('        TCase *tc = tcase_create("other");')
    out.append("        tcase_add_checked_fixture(tc, setup, teardown);")
    out.append("        tcase_add_test(tc, rt_events_without_template);")
    if tests:
        out.append("        tcase_add_test(tc, rt_disabled_without_listener);")
    out.append("        suite_add_tcase(s, tc);")
    out.append("    }")
    out.append("    return s;")
    out.append("}")
    out.append("")
    out.append("MANTRA_CHECK_MAIN(suite)")
    text = "\n".join(out) + "\n"

    data = text.encode("utf-8")
    try:
        with open(args.output, "rb") as fh:
            if fh.read() == data:
                return 0
    except FileNotFoundError:
        pass
    tmp = args.output + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, args.output)
    print(f"gen_roundtrip: {args.output}: {len(tests)} template(s) round-tripped "
          f"({', '.join(f'{p}: {len(v)}' for p, v in by_pre.items())}), {len(no_template)} event(s) without a template")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Unsupported as exc:
        sys.stderr.write(f"gen_roundtrip: unsupported field shape: {exc}\n")
        sys.exit(1)
