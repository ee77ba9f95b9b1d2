/* Names of metadata entities as the .NET runtime writes them, for profiles read from a .mibc:
 *
 *   pgo_sig_text       a method signature as the runtime's MethodSignature event field and its
 *                      DOTNET_WritePGOData dump print it ("instance generic bool  (!!0&,int32)":
 *                      calling convention words, the return type, two spaces, the parameters;
 *                      class/value class with the type's Namespace.Name, a nested type by its own
 *                      name; wchar, unsigned int8, int for native int; !N, !!N; required_modifier)
 *   pgo_type_text      a type token as a handle name (TypeString, assembly-qualified:
 *                      "Ns.Outer+Inner`1[[Arg, Asm]][], Asm") or as a method's namespace (the
 *                      MethodNamespace field: "Ns.Outer+Inner`1[Arg]", arguments unqualified)
 *
 * Observed on .NET 10.0.12 (the runtime's events against its own dump, tests/interop/pgo-real.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_mibc.h"

#define DEPTH_MAX 64

void pgo_text_put(pgo_text *t, const void *s, size_t n) {
    if (t->oom)
        return;
    if (t->n + n + 1 > t->cap) {
        size_t c = t->cap ? t->cap * 2 : 128;
        while (c < t->n + n + 1)
            c *= 2;
        char *d = realloc(t->s, c);
        if (d == NULL) {
            t->oom = 1;
            return;
        }
        t->s = d;
        t->cap = c;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

void pgo_text_add(pgo_text *t, const char *s) { pgo_text_put(t, s, strlen(s)); }

/* "Namespace.Name" of a TypeDef or TypeRef, or the name alone for a nested one (signature style). */
static int short_name(const mantra_md *md, uint32_t token, pgo_text *out) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    unsigned t = MANTRA_MD_TOKEN_TABLE(token);
    if ((t != MANTRA_MD_TYPE_DEF && t != MANTRA_MD_TYPE_REF) || mantra_md_row(md, t, MANTRA_MD_TOKEN_ROW(token), v) != 0)
        return -1;
    const char *ns = mantra_md_string(md, v[2]), *name = mantra_md_string(md, v[1]);
    if (ns[0]) {
        pgo_text_add(out, ns);
        pgo_text_add(out, ".");
    }
    pgo_text_add(out, name);
    return 0;
}

static size_t sig_type(const mantra_md *md, const uint8_t *p, size_t n, pgo_text *out, int depth);

size_t pgo_sig_array_shape(const uint8_t *p, size_t n, uint32_t *rank) {
    uint32_t count, x;
    size_t at = mantra_md_uncompress(p, n, rank), k;
    if (at == 0)
        return 0;
    for (int part = 0; part < 2; part++) { /* NumSizes sizes, NumLoBounds lobounds */
        if ((k = mantra_md_uncompress(p + at, n - at, &count)) == 0)
            return 0;
        at += k;
        for (uint32_t i = 0; i < count; i++) {
            if ((k = mantra_md_uncompress(p + at, n - at, &x)) == 0)
                return 0;
            at += k;
        }
    }
    return at;
}

/* A TypeDefOrRefEncoded in signature style: bytes read, 0 when bad. */
static size_t sig_coded(const mantra_md *md, const uint8_t *p, size_t n, pgo_text *out, int depth) {
    uint32_t v;
    size_t k = mantra_md_uncompress(p, n, &v);
    static const unsigned tables[3] = {MANTRA_MD_TYPE_DEF, MANTRA_MD_TYPE_REF, MANTRA_MD_TYPE_SPEC};
    if (k == 0 || (v & 3) == 3)
        return 0;
    uint32_t token = MANTRA_MD_TOKEN(tables[v & 3], v >> 2);
    if ((v & 3) == 2) { /* a TypeSpec: its own signature */
        uint32_t row[MANTRA_MD_MAX_COLUMNS];
        const uint8_t *sig;
        uint32_t sn;
        if (mantra_md_row(md, MANTRA_MD_TYPE_SPEC, v >> 2, row) != 0 || mantra_md_blob(md, row[0], &sig, &sn) != 0 ||
            sig_type(md, sig, sn, out, depth + 1) != sn)
            return 0;
        return k;
    }
    return short_name(md, token, out) == 0 ? k : 0;
}

static size_t sig_type(const mantra_md *md, const uint8_t *p, size_t n, pgo_text *out, int depth) {
    static const char *const prim[] = {
        [0x01] = "void",   [0x02] = "bool",           [0x03] = "wchar",          [0x04] = "int8",
        [0x05] = "unsigned int8", [0x06] = "int16",   [0x07] = "unsigned int16", [0x08] = "int32",
        [0x09] = "unsigned int32", [0x0A] = "int64",  [0x0B] = "unsigned int64", [0x0C] = "float32",
        [0x0D] = "float64", [0x0E] = "class System.String", [0x16] = "typedbyref", [0x18] = "int",
        [0x19] = "unsigned int", [0x1C] = "class System.Object"};
    char num[16];
    size_t k, m;
    uint32_t v;
    if (n == 0 || depth > DEPTH_MAX)
        return 0;
    uint8_t e = p[0];
    if (e < sizeof prim / sizeof prim[0] && prim[e]) {
        pgo_text_add(out, prim[e]);
        return 1;
    }
    switch (e) {
    case 0x0F: case 0x10: case 0x1D: /* PTR, BYREF, SZARRAY: the element, then the modifier */
        k = sig_type(md, p + 1, n - 1, out, depth + 1);
        pgo_text_add(out, e == 0x0F ? "*" : e == 0x10 ? "&" : "[]");
        return k ? 1 + k : 0;
    case 0x45: case 0x41: /* PINNED, SENTINEL */
        k = sig_type(md, p + 1, n - 1, out, depth + 1);
        return k ? 1 + k : 0;
    case 0x11: case 0x12:
        pgo_text_add(out, e == 0x11 ? "value class " : "class ");
        k = sig_coded(md, p + 1, n - 1, out, depth);
        return k ? 1 + k : 0;
    case 0x13: case 0x1E: /* VAR, MVAR */
        k = mantra_md_uncompress(p + 1, n - 1, &v);
        snprintf(num, sizeof num, "%s%u", e == 0x13 ? "!" : "!!", v);
        pgo_text_add(out, num);
        return k ? 1 + k : 0;
    case 0x1F: case 0x20: /* CMOD_REQD, CMOD_OPT */
        pgo_text_add(out, e == 0x1F ? "required_modifier " : "optional_modifier ");
        k = sig_coded(md, p + 1, n - 1, out, depth);
        if (k == 0)
            return 0;
        pgo_text_add(out, " ");
        m = sig_type(md, p + 1 + k, n - 1 - k, out, depth + 1);
        return m ? 1 + k + m : 0;
    case 0x15: { /* GENERICINST */
        if (n < 2 || (p[1] != 0x11 && p[1] != 0x12))
            return 0;
        pgo_text_add(out, p[1] == 0x11 ? "value class " : "class ");
        size_t at = 2;
        k = sig_coded(md, p + at, n - at, out, depth);
        if (k == 0)
            return 0;
        at += k;
        k = mantra_md_uncompress(p + at, n - at, &v);
        if (k == 0)
            return 0;
        at += k;
        pgo_text_add(out, "<");
        for (uint32_t i = 0; i < v; i++) {
            if (i)
                pgo_text_add(out, ",");
            k = sig_type(md, p + at, n - at, out, depth + 1);
            if (k == 0)
                return 0;
            at += k;
        }
        pgo_text_add(out, ">");
        return at;
    }
    case 0x14: { /* ARRAY: the element, "[" and a comma per extra dimension, "]" */
        uint32_t rank;
        k = sig_type(md, p + 1, n - 1, out, depth + 1);
        if (k == 0 || (m = pgo_sig_array_shape(p + 1 + k, n - 1 - k, &rank)) == 0)
            return 0;
        pgo_text_add(out, "[");
        for (uint32_t i = 1; i < rank; i++)
            pgo_text_add(out, ",");
        pgo_text_add(out, "]");
        return 1 + k + m;
    }
    case 0x1B: { /* FNPTR */
        pgo_text sub = {0};
        k = pgo_sig_text(md, p + 1, n - 1, &sub);
        pgo_text_add(out, "method ");
        if (sub.s)
            pgo_text_add(out, sub.s);
        out->oom |= sub.oom;
        free(sub.s);
        return k ? 1 + k : 0;
    }
    default:
        return 0;
    }
}

size_t pgo_sig_text(const mantra_md *md, const uint8_t *p, size_t n, pgo_text *out) {
    if (n == 0)
        return 0;
    size_t at = 1, k;
    uint32_t gen = 0, params;
    if (p[0] & 0x20)
        pgo_text_add(out, "instance ");
    if (p[0] & 0x10) {
        pgo_text_add(out, "generic ");
        if ((k = mantra_md_uncompress(p + at, n - at, &gen)) == 0)
            return 0;
        at += k;
    }
    if ((k = mantra_md_uncompress(p + at, n - at, &params)) == 0)
        return 0;
    at += k;
    if ((k = sig_type(md, p + at, n - at, out, 0)) == 0)
        return 0;
    at += k;
    pgo_text_add(out, "  (");
    for (uint32_t i = 0; i < params; i++) {
        if (i)
            pgo_text_add(out, ",");
        if ((k = sig_type(md, p + at, n - at, out, 0)) == 0)
            return 0;
        at += k;
    }
    pgo_text_add(out, ")");
    return at;
}

/* ---- types as handle names and as method namespaces ----------------------------------------- */

char *pgo_assembly_full_name(const char *name, const uint16_t version[4], const char *culture, const uint8_t *key,
                             size_t key_size, int full_key) {
    uint8_t token[8];
    if (full_key && key_size) { /* a full public key: its token */
        mantra_ecma_public_key_token(key, key_size, token);
        key = token;
        key_size = 8;
    }
    char hex[17] = "null";
    if (key_size == 8)
        snprintf(hex, sizeof hex, "%02x%02x%02x%02x%02x%02x%02x%02x", key[0], key[1], key[2], key[3], key[4], key[5],
                 key[6], key[7]);
    return pgo_strf("%s, Version=%u.%u.%u.%u, Culture=%s, PublicKeyToken=%s", name, version[0], version[1], version[2],
                    version[3], culture && culture[0] ? culture : "neutral", hex);
}

/* The assembly md itself describes, where an AssemblyRef row is expected (its TypeDefs are in it). */
#define SELF_ASSEMBLY ((uint32_t)-2)

/* The full name of AssemblyRef `row` of md (SELF_ASSEMBLY: of md's own assembly) ("" when there is none); the AssemblyRef "System.Private.Canon" (CoreLib's canonical types) is named as CoreLib. */
static char *assembly_ref_name(const mantra_md *md, uint32_t row, const pgo_assembly_names *names) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    if (row == SELF_ASSEMBLY) { /* the Assembly row: HashAlgId, version, Flags, PublicKey, Name, Culture */
        if (mantra_md_row(md, MANTRA_MD_ASSEMBLY, 1, v) != 0)
            return pgo_strdup("");
        const uint8_t *key;
        uint32_t kn;
        mantra_md_blob(md, v[6], &key, &kn);
        const uint16_t version[4] = {(uint16_t)v[1], (uint16_t)v[2], (uint16_t)v[3], (uint16_t)v[4]};
        return pgo_assembly_full_name(mantra_md_string(md, v[7]), version, mantra_md_string(md, v[8]), key, kn, 1);
    }
    if (mantra_md_row(md, MANTRA_MD_ASSEMBLY_REF, row, v) != 0)
        return pgo_strdup("");
    const char *name = mantra_md_string(md, v[6]);
    if (strcmp(name, "System.Private.Canon") == 0)
        return pgo_strdup(names && names->corelib ? names->corelib : "System.Private.CoreLib");
    const uint8_t *key;
    uint32_t kn;
    mantra_md_blob(md, v[5], &key, &kn);
    const uint16_t version[4] = {(uint16_t)v[0], (uint16_t)v[1], (uint16_t)v[2], (uint16_t)v[3]};
    return pgo_assembly_full_name(name, version, mantra_md_string(md, v[7]), key, kn, v[4] & 1);
}

char *pgo_assembly_ref_name(const mantra_md *md, uint32_t row) { return assembly_ref_name(md, row, NULL); }

/* Appends the full name of AssemblyRef `row` of md. */
static void assembly_text(const mantra_md *md, uint32_t row, const pgo_assembly_names *names, pgo_text *out) {
    char *n = assembly_ref_name(md, row, names);
    if (n == NULL) {
        out->oom = 1;
        return;
    }
    pgo_text_add(out, n);
    free(n);
}

/* The AssemblyRef row a TypeRef resolves in (through enclosing TypeRefs), 0 when none. */
static uint32_t typeref_assembly(const mantra_md *md, uint32_t token, int depth) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    if (depth > DEPTH_MAX || mantra_md_row(md, MANTRA_MD_TYPE_REF, MANTRA_MD_TOKEN_ROW(token), v) != 0)
        return 0;
    if (MANTRA_MD_TOKEN_TABLE(v[0]) == MANTRA_MD_TYPE_REF)
        return typeref_assembly(md, v[0], depth + 1);
    return MANTRA_MD_TOKEN_TABLE(v[0]) == MANTRA_MD_ASSEMBLY_REF ? MANTRA_MD_TOKEN_ROW(v[0]) : 0;
}

/* Full names of the primitive element types (CoreLib's). */
static const char *prim_full(uint8_t e) {
    static const char *const k[] = {
        [0x01] = "System.Void",   [0x02] = "System.Boolean", [0x03] = "System.Char",  [0x04] = "System.SByte",
        [0x05] = "System.Byte",   [0x06] = "System.Int16",   [0x07] = "System.UInt16", [0x08] = "System.Int32",
        [0x09] = "System.UInt32", [0x0A] = "System.Int64",   [0x0B] = "System.UInt64", [0x0C] = "System.Single",
        [0x0D] = "System.Double", [0x0E] = "System.String",  [0x16] = "System.TypedReference",
        [0x18] = "System.IntPtr", [0x19] = "System.UIntPtr", [0x1C] = "System.Object"};
    return e < sizeof k / sizeof k[0] ? k[e] : NULL;
}

/* A type signature as a name: qualified (handle style) or not (namespace style); the assembly of
 * its outermost named type in *asm (AssemblyRef row, or (uint32_t)-1 for CoreLib's primitives).
 * Bytes read, 0 when it cannot be named. */
static size_t spec_text(const mantra_md *md, const uint8_t *p, size_t n, int qualified, const pgo_assembly_names *names,
                        pgo_text *out, uint32_t *asm_row, int depth);

static void qualify(const mantra_md *md, uint32_t asm_row, const pgo_assembly_names *names, pgo_text *out) {
    pgo_text_add(out, ", ");
    if (asm_row == (uint32_t)-1)
        pgo_text_add(out, names && names->corelib ? names->corelib : "System.Private.CoreLib");
    else
        assembly_text(md, asm_row, names, out);
}

static int token_text(const mantra_md *md, uint32_t token, int qualified, const pgo_assembly_names *names,
                      pgo_text *out, uint32_t *asm_row, int depth) {
    unsigned t = MANTRA_MD_TOKEN_TABLE(token);
    if (t == MANTRA_MD_TYPE_SPEC) {
        uint32_t v[MANTRA_MD_MAX_COLUMNS];
        const uint8_t *sig;
        uint32_t sn;
        if (mantra_md_row(md, t, MANTRA_MD_TOKEN_ROW(token), v) != 0 || mantra_md_blob(md, v[0], &sig, &sn) != 0)
            return -1;
        return spec_text(md, sig, sn, qualified, names, out, asm_row, depth + 1) == sn ? 0 : -1;
    }
    if (t != MANTRA_MD_TYPE_REF && t != MANTRA_MD_TYPE_DEF)
        return -1;
    char small[512];
    size_t len = mantra_md_type_name(md, token, small, sizeof small);
    if (len == 0 || len >= sizeof small)
        return -1;
    pgo_text_add(out, small);
    *asm_row = t == MANTRA_MD_TYPE_DEF ? SELF_ASSEMBLY : typeref_assembly(md, token, 0);
    return *asm_row ? 0 : -1;
}

static size_t spec_text(const mantra_md *md, const uint8_t *p, size_t n, int qualified, const pgo_assembly_names *names,
                        pgo_text *out, uint32_t *asm_row, int depth) {
    if (n == 0 || depth > DEPTH_MAX)
        return 0;
    uint8_t e = p[0];
    uint32_t v;
    size_t k;
    if (prim_full(e)) {
        pgo_text_add(out, prim_full(e));
        *asm_row = (uint32_t)-1;
        return 1;
    }
    switch (e) {
    case 0x3E: /* ELEMENT_TYPE_CANON_ZAPSIG (ReadyToRun signatures: zapsig.h): the canonical type */
        pgo_text_add(out, "System.__Canon");
        *asm_row = (uint32_t)-1;
        return 1;
    case 0x0F: case 0x10: case 0x1D:
        k = spec_text(md, p + 1, n - 1, qualified, names, out, asm_row, depth + 1);
        pgo_text_add(out, e == 0x0F ? "*" : e == 0x10 ? "&" : "[]");
        return k ? 1 + k : 0;
    case 0x11: case 0x12: {
        static const unsigned tables[3] = {MANTRA_MD_TYPE_DEF, MANTRA_MD_TYPE_REF, MANTRA_MD_TYPE_SPEC};
        k = mantra_md_uncompress(p + 1, n - 1, &v);
        if (k == 0 || (v & 3) == 3 ||
            token_text(md, MANTRA_MD_TOKEN(tables[v & 3], v >> 2), qualified, names, out, asm_row, depth) < 0)
            return 0;
        return 1 + k;
    }
    case 0x15: {
        if (n < 2)
            return 0;
        size_t at = 1;
        k = spec_text(md, p + at, n - at, qualified, names, out, asm_row, depth + 1);
        if (k == 0)
            return 0;
        at += k;
        if ((k = mantra_md_uncompress(p + at, n - at, &v)) == 0)
            return 0;
        at += k;
        pgo_text_add(out, "[");
        for (uint32_t i = 0; i < v; i++) {
            uint32_t arg_asm = 0;
            pgo_text_add(out, i ? (qualified ? ",[" : ",") : (qualified ? "[" : ""));
            k = spec_text(md, p + at, n - at, qualified, names, out, &arg_asm, depth + 1);
            if (k == 0)
                return 0;
            if (qualified) {
                qualify(md, arg_asm, names, out);
                pgo_text_add(out, "]");
            }
            at += k;
        }
        pgo_text_add(out, "]");
        return at;
    }
    case 0x14: { /* ARRAY: "[*]" for one dimension, else "[" and a comma per extra one, "]" */
        uint32_t rank;
        size_t m;
        k = spec_text(md, p + 1, n - 1, qualified, names, out, asm_row, depth + 1);
        if (k == 0 || (m = pgo_sig_array_shape(p + 1 + k, n - 1 - k, &rank)) == 0)
            return 0;
        pgo_text_add(out, rank == 1 ? "[*]" : "[");
        for (uint32_t i = 1; i < rank; i++)
            pgo_text_add(out, i + 1 == rank ? ",]" : ",");
        return 1 + k + m;
    }
    default:
        return 0;
    }
}

int pgo_type_text(const mantra_md *md, uint32_t token, int qualified, const pgo_assembly_names *names, pgo_text *out) {
    uint32_t asm_row = 0;
    if (token_text(md, token, qualified, names, out, &asm_row, 0) < 0)
        return -1;
    if (qualified)
        qualify(md, asm_row, names, out);
    return out->oom ? -2 : 0;
}

int pgo_assembly_of_type(const mantra_md *md, uint32_t token, pgo_text *simple_name) {
    uint32_t asm_row = 0;
    pgo_text scratch = {0};
    int rc = token_text(md, token, 0, NULL, &scratch, &asm_row, 0);
    free(scratch.s);
    if (rc < 0 || asm_row == (uint32_t)-1 || asm_row == 0)
        return -1;
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    int self = asm_row == SELF_ASSEMBLY;
    if (mantra_md_row(md, self ? MANTRA_MD_ASSEMBLY : MANTRA_MD_ASSEMBLY_REF, self ? 1 : asm_row, v) != 0)
        return -1;
    pgo_text_add(simple_name, mantra_md_string(md, v[self ? 7 : 6]));
    return 0;
}

size_t pgo_sig_type_text(const mantra_md *md, const uint8_t *p, size_t n, int qualified, const pgo_assembly_names *names,
                         pgo_text *out) {
    uint32_t asm_row = 0;
    size_t k = spec_text(md, p, n, qualified, names, out, &asm_row, 0);
    if (k && qualified)
        qualify(md, asm_row, names, out);
    return k;
}
