/* r2r_sig.c - ReadyToRun type and method signatures (mantra/ecma.h): ECMA-335 §II.23.2 type
 * signatures with the runtime's ZAPSIG element types (corhdr.h/zapsig.h: 0x3D NATIVE_VALUETYPE,
 * 0x3E CANON, 0x3F MODULE with a module index), and method signatures as readytorun-format.md
 * "Method signatures" and SignatureBuilder.EmitMethodSignature (crossgen2) write them: flags, the
 * UpdateContext module, the owner type, the MethodDef/MemberRef row (or a slot), the method's type
 * arguments, the constrained type. Every read is bounded by the bytes given. */
#include <string.h>

#include "ecma-internal.h"

#define MAX_DEPTH 64

static size_t type_size(const uint8_t *p, size_t n, int depth);

/* A compressed unsigned integer: its bytes, 0 when malformed. */
static size_t cu(const uint8_t *p, size_t n, uint32_t *v) { return n ? mantra_md_uncompress(p, n, v) : 0; }

/* A method signature inside a FNPTR: calling convention, [generic count], count, return, params. */
static size_t fnptr_size(const uint8_t *p, size_t n, int depth) {
    if (n == 0)
        return 0;
    size_t at = 1, k;
    uint32_t count, v;
    if (p[0] & 0x10) { /* GENERIC */
        if ((k = cu(p + at, n - at, &v)) == 0)
            return 0;
        at += k;
    }
    if ((k = cu(p + at, n - at, &count)) == 0 || count > n)
        return 0;
    at += k;
    for (uint32_t i = 0; i <= count; i++) { /* the return type, then the parameters */
        while (at < n && p[at] == 0x41) /* SENTINEL */
            at++;
        if ((k = type_size(p + at, n - at, depth + 1)) == 0)
            return 0;
        at += k;
    }
    return at;
}

static size_t type_size(const uint8_t *p, size_t n, int depth) {
    if (n == 0 || depth > MAX_DEPTH)
        return 0;
    uint8_t e = p[0] & 0x7F;
    size_t at = 1, k;
    uint32_t v, count;
    switch (e) {
    case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: case 0x06: case 0x07: case 0x08:
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x0E: case 0x16: case 0x18:
    case 0x19: case 0x1C: case 0x3E: /* primitives, string, object, TYPEDBYREF, I, U, CANON_ZAPSIG */
        return 1;
    case 0x0F: case 0x10: case 0x1D: case 0x45: case 0x3D: /* PTR, BYREF, SZARRAY, PINNED, NATIVE_VALUETYPE */
        k = type_size(p + 1, n - 1, depth + 1);
        return k ? 1 + k : 0;
    case 0x11: case 0x12: case 0x13: case 0x1E: /* VALUETYPE, CLASS: a TypeDefOrRefOrSpec; VAR, MVAR: a number */
        k = cu(p + 1, n - 1, &v);
        return k ? 1 + k : 0;
    case 0x1F: case 0x20: /* CMOD_REQD, CMOD_OPT: a token, then the type */
        if ((k = cu(p + 1, n - 1, &v)) == 0)
            return 0;
        at += k;
        k = type_size(p + at, n - at, depth + 1);
        return k ? at + k : 0;
    case 0x3F: /* MODULE_ZAPSIG: a module index, then the type in that module */
        if ((k = cu(p + 1, n - 1, &v)) == 0)
            return 0;
        at += k;
        k = type_size(p + at, n - at, depth + 1);
        return k ? at + k : 0;
    case 0x14: { /* ARRAY: element, rank, sizes, lower bounds (§II.23.2.13) */
        if ((k = type_size(p + 1, n - 1, depth + 1)) == 0)
            return 0;
        at += k;
        if ((k = cu(p + at, n - at, &v)) == 0)
            return 0;
        at += k;
        for (int part = 0; part < 2; part++) {
            if ((k = cu(p + at, n - at, &count)) == 0 || count > n)
                return 0;
            at += k;
            for (uint32_t i = 0; i < count; i++) {
                if ((k = cu(p + at, n - at, &v)) == 0)
                    return 0;
                at += k;
            }
        }
        return at;
    }
    case 0x15: /* GENERICINST: the generic type, the count, the arguments */
        if ((k = type_size(p + 1, n - 1, depth + 1)) == 0)
            return 0;
        at += k;
        if ((k = cu(p + at, n - at, &count)) == 0 || count == 0 || count > n)
            return 0;
        at += k;
        for (uint32_t i = 0; i < count; i++) {
            if ((k = type_size(p + at, n - at, depth + 1)) == 0)
                return 0;
            at += k;
        }
        return at;
    case 0x1B: /* FNPTR */
        k = fnptr_size(p + 1, n - 1, depth + 1);
        return k ? 1 + k : 0;
    default:
        return 0;
    }
}

size_t mantra_r2r_type_sig_size(const uint8_t *p, size_t n) { return p ? type_size(p, n, 0) : 0; }

#define KNOWN_FLAGS 0x1FFu

size_t mantra_r2r_method_sig_parse(const uint8_t *p, size_t n, mantra_r2r_method_sig *m) {
    if (p == NULL || m == NULL)
        return 0;
    memset(m, 0, sizeof *m);
    m->module = MANTRA_R2R_NO_MODULE;
    size_t at = 0, k;
    if ((k = cu(p, n, &m->flags)) == 0 || (m->flags & ~KNOWN_FLAGS))
        return 0;
    at += k;
    if (m->flags & MANTRA_R2R_SIG_UPDATE_CONTEXT) {
        if ((k = cu(p + at, n - at, &m->module)) == 0)
            return 0;
        at += k;
    }
    if (m->flags & MANTRA_R2R_SIG_OWNER_TYPE) {
        if ((k = type_size(p + at, n - at, 0)) == 0)
            return 0;
        m->owner = p + at;
        m->owner_size = k;
        at += k;
    }
    if ((k = cu(p + at, n - at, &m->rid)) == 0) /* the row, or the slot with SlotInsteadOfToken */
        return 0;
    at += k;
    if (m->flags & MANTRA_R2R_SIG_METHOD_INSTANTIATION) {
        if ((k = cu(p + at, n - at, &m->ninst)) == 0 || m->ninst == 0 || m->ninst > n)
            return 0;
        at += k;
        m->inst = p + at;
        for (uint32_t i = 0; i < m->ninst; i++) {
            if ((k = type_size(p + at, n - at, 0)) == 0)
                return 0;
            at += k;
        }
        m->inst_size = (size_t)(p + at - m->inst);
    }
    if (m->flags & MANTRA_R2R_SIG_CONSTRAINED) {
        if ((k = type_size(p + at, n - at, 0)) == 0)
            return 0;
        m->constrained = p + at;
        m->constrained_size = k;
        at += k;
    }
    return at;
}
