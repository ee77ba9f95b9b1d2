/* `mantra pgo --format mibc`: a profile as the .mibc that dotnet-pgo writes and crossgen2 reads
 * (../shared/reference/pgo-format.md §6; dotnet/runtime src/coreclr/tools/dotnet-pgo/MibcEmitter.cs
 * writes it, src/coreclr/tools/aot/ILCompiler.ReadyToRun/IBC/MIbcProfileParser.cs reads it):
 *
 *   a metadata-only assembly (mantra_md_builder, mantra/ecma.h) whose global method
 *   `AssemblyDictionary` holds, per group of methods defined in one assembly,
 *       ldstr "GROUP"  ldtoken Assemblies_GROUP_N  pop        (GROUP: "DefiningAssembly;")
 *   and each global method `Assemblies_GROUP_N` holds, per method,
 *       ldtoken METHOD
 *       ldstr "InstrumentationDataStart"
 *       per schema record: the mask 15 (every field), ILOffset, Kind, Count, Other, then its values:
 *         numbers as ldc.i4 / ldc.i8, type and method handles as ldtoken (ldc.i4 N, 1 <= N <= 33,
 *         for a handle the profile cannot name or the assemblies cannot resolve; ldc.i4.0 for null)
 *       ldstr "InstrumentationDataEnd"
 *       pop
 *
 * METHOD is a MemberRef whose parent is a TypeRef into the method's real assembly and whose
 * signature is the MethodDef's own signature blob read from that assembly, its type tokens
 * re-encoded as this file's TypeRefs and TypeSpecs; crossgen2 resolves it by name and signature.
 * A method of a generic type is referenced on its instantiation (a TypeSpec from MethodDetails' TypeID,
 * by name), a generic method through a MethodSpec; one whose type arguments have no names is counted
 * and left out. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_mibc.h"

#define DEPTH_MAX 64
#define MASK_ALL 15 /* ILOffset | Type | Count | Other (InstrumentationDataProcessingState) */

/* IL opcodes (ECMA-335 Partition III). */
enum { OP_LDC_I4_M1 = 0x15, OP_LDC_I4_0 = 0x16, OP_LDC_I4_S = 0x1F, OP_LDC_I4 = 0x20, OP_LDC_I8 = 0x21,
       OP_POP = 0x26, OP_RET = 0x2A, OP_LDSTR = 0x72, OP_LDTOKEN = 0xD0 };

/* Byte buffers (IL, signatures) are the texts of pgo_names.c: they grow the same way. */
typedef pgo_text bytes;

static void put(bytes *b, const void *p, size_t n) { pgo_text_put(b, p, n); }

static void put_u8(bytes *b, uint8_t v) { put(b, &v, 1); }

static void put_u32(bytes *b, uint32_t v) {
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}

/* A compressed unsigned integer (§23.2). */
static void put_compressed(bytes *b, uint32_t v) {
    if (v < 0x80) {
        put_u8(b, (uint8_t)v);
    } else if (v < 0x4000) {
        uint8_t x[2] = {(uint8_t)(0x80 | v >> 8), (uint8_t)v};
        put(b, x, 2);
    } else {
        uint8_t x[4] = {(uint8_t)(0xC0 | v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
        put(b, x, 4);
    }
}

/* ldc.i4 in its shortest form, or ldc.i8 (InstructionEncoder.LoadConstantI4/I8's choice). */
static void put_ldc(bytes *b, int64_t v) {
    if (v >= -1 && v <= 8) {
        put_u8(b, (uint8_t)(OP_LDC_I4_0 + v));
    } else if (v >= -128 && v <= 127) {
        put_u8(b, OP_LDC_I4_S);
        put_u8(b, (uint8_t)(int8_t)v);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        put_u8(b, OP_LDC_I4);
        put_u32(b, (uint32_t)(int32_t)v);
    } else {
        put_u8(b, OP_LDC_I8);
        put_u32(b, (uint32_t)(uint64_t)v);
        put_u32(b, (uint32_t)((uint64_t)v >> 32));
    }
}

static void put_op_token(bytes *b, uint8_t op, uint32_t token) {
    put_u8(b, op);
    put_u32(b, token);
}

/* ---- the writer's state ---------------------------------------------------------------------- */
typedef struct mibc {
    mantra_md_builder *b;
    pgo_assemblies *asms;
    pgo_strmap asmref, typeref, typespec, memberref; /* keys -> row */
    pgo_strmap handles; /* a handle's name -> its token (0: unresolved) */
    int oom;
    const char *why; /* why the last resolution failed */
} mibc;

#define ROW(...) ((const uint32_t[MANTRA_MD_MAX_COLUMNS]){__VA_ARGS__})

/* The row of `table` known under key (freed here), else a new one with values (whose heap entries
 * cost nothing when they exist: the heaps deduplicate); 0 after an error. */
static uint32_t row_once(mibc *w, pgo_strmap *m, char *key, unsigned table, const uint32_t values[MANTRA_MD_MAX_COLUMNS]) {
    if (key == NULL) {
        w->oom = 1;
        return 0;
    }
    size_t have = pgo_strmap_get(m, key);
    uint32_t row = have != (size_t)-1 ? (uint32_t)have : mantra_md_add_row(w->b, table, values);
    if (have == (size_t)-1 && row && pgo_strmap_put(m, key, row) < 0)
        w->oom = 1;
    free(key);
    return row;
}

/* An AssemblyRef (one per simple name). */
static uint32_t asmref(mibc *w, const char *name, const uint16_t ver[4], uint32_t flags, const uint8_t *key,
                       uint32_t key_size, const char *culture) {
    return row_once(w, &w->asmref, pgo_strdup(name), MANTRA_MD_ASSEMBLY_REF,
                    ROW(ver[0], ver[1], ver[2], ver[3], flags, mantra_md_add_blob(w->b, key, key_size),
                        mantra_md_add_string(w->b, name), mantra_md_add_string(w->b, culture), 0));
}

/* An AssemblyRef to a itself, with its public key token (as compilers write references). */
static uint32_t asmref_to(mibc *w, const pgo_assembly *a) {
    uint8_t token[8];
    if (a->public_key_size)
        mantra_ecma_public_key_token(a->public_key, a->public_key_size, token);
    return asmref(w, a->name, a->version, 0, token, a->public_key_size ? 8 : 0, a->culture);
}

/* A TypeRef (scope token, namespace, name). */
static uint32_t typeref(mibc *w, uint32_t scope, const char *ns, const char *name) {
    uint32_t row = row_once(w, &w->typeref, pgo_strf("%08" PRIx32 "|%s|%s", scope, ns, name), MANTRA_MD_TYPE_REF,
                            ROW(scope, mantra_md_add_string(w->b, name), mantra_md_add_string(w->b, ns)));
    return row ? MANTRA_MD_TOKEN(MANTRA_MD_TYPE_REF, row) : 0;
}

static uint32_t typespec(mibc *w, const bytes *sig) {
    uint32_t blob = mantra_md_add_blob(w->b, sig->s, sig->n);
    uint32_t row = row_once(w, &w->typespec, pgo_strf("%" PRIu32, blob), MANTRA_MD_TYPE_SPEC, ROW(blob));
    return row ? MANTRA_MD_TOKEN(MANTRA_MD_TYPE_SPEC, row) : 0;
}

/* ---- a source assembly's tokens and signatures in this file --------------------------------- */
static uint32_t src_type(mibc *w, const pgo_assembly *a, uint32_t token, int depth);

/* A signature's type (§23.2.12) from p, written to out with its type tokens re-encoded; the bytes
 * read, 0 when the signature is malformed or names what this file cannot reference. */
static size_t src_sig_type(mibc *w, const pgo_assembly *a, const uint8_t *p, size_t n, bytes *out, int depth);

/* A TypeDefOrRefEncoded (§23.2.8) of a, re-encoded: bytes read, 0 on failure. */
static size_t src_coded_type(mibc *w, const pgo_assembly *a, const uint8_t *p, size_t n, bytes *out, int depth) {
    uint32_t v;
    size_t k = mantra_md_uncompress(p, n, &v);
    static const unsigned tables[3] = {MANTRA_MD_TYPE_DEF, MANTRA_MD_TYPE_REF, MANTRA_MD_TYPE_SPEC};
    if (k == 0 || (v & 3) == 3) {
        w->why = "a signature's type token does not decode";
        return 0;
    }
    uint32_t ours = src_type(w, a, MANTRA_MD_TOKEN(tables[v & 3], v >> 2), depth + 1);
    if (ours == 0)
        return 0;
    unsigned tag = MANTRA_MD_TOKEN_TABLE(ours) == MANTRA_MD_TYPE_REF ? 1 : 2;
    put_compressed(out, MANTRA_MD_TOKEN_ROW(ours) << 2 | tag);
    return k;
}

/* Copies one compressed integer; bytes read, 0 when malformed. */
static size_t copy_compressed(const uint8_t *p, size_t n, bytes *out, uint32_t *value) {
    uint32_t v;
    size_t k = mantra_md_uncompress(p, n, &v);
    if (k)
        put(out, p, k);
    if (value)
        *value = v;
    return k;
}

static size_t src_method_sig(mibc *w, const pgo_assembly *a, const uint8_t *p, size_t n, bytes *out, int depth);

static size_t src_sig_type(mibc *w, const pgo_assembly *a, const uint8_t *p, size_t n, bytes *out, int depth) {
    if (n == 0 || depth > DEPTH_MAX) {
        w->why = "a signature ends inside a type (or nests too deep)";
        return 0;
    }
    uint8_t e = p[0];
    put_u8(out, e);
    size_t k, m;
    uint32_t count;
    switch (e) {
    case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: case 0x06: case 0x07: case 0x08: case 0x09:
    case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x0E: case 0x16: case 0x18: case 0x19: case 0x1C:
        return 1; /* VOID .. STRING, TYPEDBYREF, I, U, OBJECT */
    case 0x0F: case 0x10: case 0x1D: case 0x45: case 0x41: /* PTR, BYREF, SZARRAY, PINNED, SENTINEL + type */
        k = src_sig_type(w, a, p + 1, n - 1, out, depth + 1);
        return k ? 1 + k : 0;
    case 0x11: case 0x12: /* VALUETYPE, CLASS */
        k = src_coded_type(w, a, p + 1, n - 1, out, depth);
        return k ? 1 + k : 0;
    case 0x1F: case 0x20: /* CMOD_REQD, CMOD_OPT: a type token, then the modified type */
        k = src_coded_type(w, a, p + 1, n - 1, out, depth);
        if (k == 0)
            return 0;
        m = src_sig_type(w, a, p + 1 + k, n - 1 - k, out, depth + 1);
        return m ? 1 + k + m : 0;
    case 0x13: case 0x1E: /* VAR, MVAR */
        k = copy_compressed(p + 1, n - 1, out, NULL);
        return k ? 1 + k : 0;
    case 0x15: { /* GENERICINST (CLASS | VALUETYPE) TypeDefOrRef count types */
        if (n < 2 || (p[1] != 0x11 && p[1] != 0x12))
            break;
        put_u8(out, p[1]);
        size_t at = 2;
        k = src_coded_type(w, a, p + at, n - at, out, depth);
        if (k == 0)
            return 0;
        at += k;
        k = copy_compressed(p + at, n - at, out, &count);
        if (k == 0)
            break;
        at += k;
        for (uint32_t i = 0; i < count; i++) {
            k = src_sig_type(w, a, p + at, n - at, out, depth + 1);
            if (k == 0)
                return 0;
            at += k;
        }
        return at;
    }
    case 0x14: { /* ARRAY type, then its shape copied as it is */
        size_t at = 1;
        uint32_t rank;
        k = src_sig_type(w, a, p + at, n - at, out, depth + 1);
        if (k == 0)
            return 0;
        at += k;
        if ((k = pgo_sig_array_shape(p + at, n - at, &rank)) == 0)
            break;
        put(out, p + at, k);
        return at + k;
    }
    case 0x1B: /* FNPTR method signature */
        k = src_method_sig(w, a, p + 1, n - 1, out, depth + 1);
        return k ? 1 + k : 0;
    default:
        break;
    }
    w->why = "a signature holds an element type this writer does not know";
    return 0;
}

/* A MethodDefSig / MethodRefSig (§23.2.1-2): calling convention, generic parameter count, parameter
 * count, return type, parameters. */
static size_t src_method_sig(mibc *w, const pgo_assembly *a, const uint8_t *p, size_t n, bytes *out, int depth) {
    if (n == 0)
        return 0;
    size_t at = 1, k;
    uint32_t params;
    put_u8(out, p[0]);
    if ((p[0] & 0x10) && (k = copy_compressed(p + at, n - at, out, NULL)) == 0) /* GENERIC */
        return 0;
    at += p[0] & 0x10 ? k : 0;
    if ((k = copy_compressed(p + at, n - at, out, &params)) == 0)
        return 0;
    at += k;
    for (uint32_t i = 0; i <= params; i++) { /* the return type, then each parameter */
        if ((k = src_sig_type(w, a, p + at, n - at, out, depth + 1)) == 0)
            return 0;
        at += k;
    }
    return at;
}

/* A TypeDef, TypeRef or TypeSpec token of a as a token of this file (a TypeRef or a TypeSpec). */
static uint32_t src_type(mibc *w, const pgo_assembly *a, uint32_t token, int depth) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    unsigned t = MANTRA_MD_TOKEN_TABLE(token);
    if (depth > DEPTH_MAX || mantra_md_row(a->md, t, MANTRA_MD_TOKEN_ROW(token), v) != MANTRA_OK) {
        w->why = "a type token that the assembly does not hold";
        return 0;
    }
    if (t == MANTRA_MD_TYPE_DEF) {
        uint32_t outer = mantra_md_enclosing_type(a->md, MANTRA_MD_TOKEN_ROW(token));
        uint32_t scope = outer ? src_type(w, a, MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, outer), depth + 1)
                               : MANTRA_MD_TOKEN(MANTRA_MD_ASSEMBLY_REF, asmref_to(w, a));
        if (scope == 0 || MANTRA_MD_TOKEN_ROW(scope) == 0)
            return 0;
        return typeref(w, scope, mantra_md_string(a->md, v[2]), mantra_md_string(a->md, v[1]));
    }
    if (t == MANTRA_MD_TYPE_REF) {
        uint32_t scope = v[0], ours;
        unsigned st = MANTRA_MD_TOKEN_TABLE(scope);
        if (st == MANTRA_MD_ASSEMBLY_REF) {
            uint32_t r[MANTRA_MD_MAX_COLUMNS];
            mantra_md_row(a->md, st, MANTRA_MD_TOKEN_ROW(scope), r);
            const uint8_t *key;
            uint32_t key_size;
            mantra_md_blob(a->md, r[5], &key, &key_size);
            uint16_t ver[4] = {(uint16_t)r[0], (uint16_t)r[1], (uint16_t)r[2], (uint16_t)r[3]};
            ours = MANTRA_MD_TOKEN(MANTRA_MD_ASSEMBLY_REF, asmref(w, mantra_md_string(a->md, r[6]), ver, r[4], key,
                                                                  key_size, mantra_md_string(a->md, r[7])));
        } else if (st == MANTRA_MD_TYPE_REF) {
            ours = src_type(w, a, scope, depth + 1);
        } else if (st == MANTRA_MD_MODULE || scope == 0) {
            ours = MANTRA_MD_TOKEN(MANTRA_MD_ASSEMBLY_REF, asmref_to(w, a));
        } else {
            w->why = "a TypeRef scoped to another module of a multi-module assembly";
            return 0;
        }
        if (ours == 0 || MANTRA_MD_TOKEN_ROW(ours) == 0)
            return 0;
        return typeref(w, ours, mantra_md_string(a->md, v[2]), mantra_md_string(a->md, v[1]));
    }
    if (t == MANTRA_MD_TYPE_SPEC) {
        const uint8_t *sig;
        uint32_t n;
        bytes out = {0};
        mantra_md_blob(a->md, v[0], &sig, &n);
        size_t k = src_sig_type(w, a, sig, n, &out, depth + 1);
        uint32_t tok = k == n && !out.oom ? typespec(w, &out) : 0;
        w->oom |= out.oom;
        free(out.s);
        return tok;
    }
    w->why = "a type token of another table";
    return 0;
}

/* ---- handles by name --------------------------------------------------------------------------
 * A handle's name as the runtime's dump writes it (TypeString, assembly-qualified):
 *   NAME[[ARG, ASSEMBLY],...]MODIFIERS, ASSEMBLY      MODIFIERS: [] [,] * &
 *   METHOD|@|TYPE                                      (a method handle)
 */
typedef struct type_name {
    char *name, *assembly; /* "Ns.Outer+Inner`1", the simple assembly name */
    struct type_name *args;
    size_t nargs;
    char mods[16]; /* one letter per modifier: 'a' [], 'm' [,...] (rank in ranks), 'p' *, 'r' & */
    uint8_t ranks[16];
    size_t nmods;
} type_name;

static void type_name_free(type_name *t) {
    for (size_t i = 0; i < t->nargs; i++)
        type_name_free(&t->args[i]);
    free(t->args);
    free(t->name);
    free(t->assembly);
    memset(t, 0, sizeof *t);
}

/* Parses a type name at *s (to the end, or to the ']' closing an argument); 0 or -1. */
static int parse_type_name(const char **s, type_name *t, int depth) {
    memset(t, 0, sizeof *t);
    const char *p = *s, *start = p;
    if (depth > DEPTH_MAX)
        return -1;
    while (*p && *p != '[' && *p != ',' && *p != ']' && *p != '*' && *p != '&')
        p++;
    if (p == start || (t->name = pgo_strf("%.*s", (int)(p - start), start)) == NULL)
        return -1;
    if (p[0] == '[' && p[1] == '[') { /* instantiation */
        p++;
        for (;;) {
            if (*p != '[')
                return -1;
            p++;
            type_name *args = realloc(t->args, (t->nargs + 1) * sizeof *args);
            if (args == NULL)
                return -1;
            t->args = args;
            if (parse_type_name(&p, &t->args[t->nargs++], depth + 1) < 0 || *p != ']')
                return -1;
            p++;
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p != ']')
                return -1;
            p++;
            break;
        }
    }
    for (;;) { /* modifiers */
        if (t->nmods == sizeof t->mods)
            return -1;
        if (*p == '*' || *p == '&') {
            t->mods[t->nmods++] = *p == '*' ? 'p' : 'r';
            p++;
        } else if (*p == '[' && (p[1] == ']' || p[1] == ',')) {
            unsigned rank = 1;
            p++;
            while (*p == ',') {
                rank++;
                p++;
            }
            if (*p != ']')
                return -1;
            p++;
            t->ranks[t->nmods] = (uint8_t)rank;
            t->mods[t->nmods++] = rank == 1 ? 'a' : 'm';
        } else {
            break;
        }
    }
    if (p[0] == ',' && p[1] == ' ') { /* ", Assembly, Version=..." up to the closing ']' */
        p += 2;
        const char *a = p;
        while (*p && *p != ',' && *p != ']')
            p++;
        if ((t->assembly = pgo_strf("%.*s", (int)(p - a), a)) == NULL)
            return -1;
        while (*p && *p != ']')
            p++;
    }
    *s = p;
    return 0;
}

/* Primitive element types by full name (§23.1.16). */
static int primitive(const char *name) {
    static const struct {
        const char *name;
        uint8_t e;
    } k[] = {{"System.Void", 0x01}, {"System.Boolean", 0x02}, {"System.Char", 0x03}, {"System.SByte", 0x04},
             {"System.Byte", 0x05}, {"System.Int16", 0x06}, {"System.UInt16", 0x07}, {"System.Int32", 0x08},
             {"System.UInt32", 0x09}, {"System.Int64", 0x0A}, {"System.UInt64", 0x0B}, {"System.Single", 0x0C},
             {"System.Double", 0x0D}, {"System.String", 0x0E}, {"System.TypedReference", 0x16},
             {"System.IntPtr", 0x18}, {"System.UIntPtr", 0x19}, {"System.Object", 0x1C}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(k[i].name, name) == 0)
            return k[i].e;
    return 0;
}

/* A named type (no instantiation, no modifier) as a TypeRef of this file, and whether it is a value
 * type; 0 with w->why when its assembly or its TypeDef is not found. */
static uint32_t named_type(mibc *w, const type_name *t, int *valuetype) {
    *valuetype = 0;
    if (strcmp(t->name, "System.__Canon") == 0) { /* crossgen2 resolves this assembly to its canonical types */
        static const uint16_t zero[4] = {0, 0, 0, 0};
        uint32_t scope = asmref(w, "System.Private.Canon", zero, 0, NULL, 0, "");
        return scope ? typeref(w, MANTRA_MD_TOKEN(MANTRA_MD_ASSEMBLY_REF, scope), "System", "__Canon") : 0;
    }
    pgo_assembly *a = t->assembly ? pgo_assembly_named(w->asms, t->assembly) : NULL;
    uint32_t def = a ? pgo_assembly_type(a, t->name) : 0;
    if (def == 0) {
        w->why = a ? "a handle's type is not in its assembly" : "a handle's assembly file was not found";
        return 0;
    }
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    mantra_md_row(a->md, MANTRA_MD_TYPE_DEF, def, v);
    char base[64];
    if (v[3] != 0 && mantra_md_type_name(a->md, v[3], base, sizeof base) < sizeof base)
        *valuetype = (strcmp(base, "System.ValueType") == 0 && strcmp(t->name, "System.Enum") != 0) ||
                     strcmp(base, "System.Enum") == 0;
    return src_type(w, a, MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, def), 0);
}

/* The signature of a parsed type name (for a TypeSpec or a generic argument); -1 when unresolved. */
static int name_sig(mibc *w, const type_name *t, size_t nmods, bytes *out, int depth) {
    if (depth > DEPTH_MAX)
        return -1;
    if (nmods > 0) {
        char m = t->mods[nmods - 1];
        put_u8(out, m == 'a' ? 0x1D : m == 'm' ? 0x14 : m == 'p' ? 0x0F : 0x10);
        if (name_sig(w, t, nmods - 1, out, depth + 1) < 0)
            return -1;
        if (m == 'm') { /* rank, no sizes, no lower bounds */
            put_compressed(out, t->ranks[nmods - 1]);
            put_u8(out, 0);
            put_u8(out, 0);
        }
        return 0;
    }
    int e = t->nargs == 0 ? primitive(t->name) : 0;
    if (e && t->assembly && strcmp(t->assembly, "System.Private.CoreLib") == 0) {
        put_u8(out, (uint8_t)e);
        return 0;
    }
    int vt;
    uint32_t tok = named_type(w, t, &vt);
    if (tok == 0)
        return -1;
    if (t->nargs)
        put_u8(out, 0x15);
    put_u8(out, vt ? 0x11 : 0x12);
    put_compressed(out, MANTRA_MD_TOKEN_ROW(tok) << 2 | 1);
    if (t->nargs) {
        put_compressed(out, (uint32_t)t->nargs);
        for (size_t i = 0; i < t->nargs; i++)
            if (name_sig(w, &t->args[i], t->args[i].nmods, out, depth + 1) < 0)
                return -1;
    }
    return 0;
}

/* A type handle's name as a token of this file (TypeRef, or TypeSpec for instantiations and
 * modified types); 0 when it does not resolve. */
static uint32_t type_handle(mibc *w, const char *name) {
    type_name t;
    const char *p = name;
    uint32_t tok = 0;
    if (parse_type_name(&p, &t, 0) == 0 && *p == '\0') {
        if (t.nargs == 0 && t.nmods == 0) {
            int vt;
            tok = named_type(w, &t, &vt);
        } else {
            bytes sig = {0};
            if (name_sig(w, &t, t.nmods, &sig, 0) == 0 && !sig.oom)
                tok = typespec(w, &sig);
            w->oom |= sig.oom;
            free(sig.s);
        }
    }
    type_name_free(&t);
    return tok;
}

/* Does TypeDef `type` of a have generic parameters? */
static int generic_type(const pgo_assembly *a, uint32_t type) {
    return type >= 1 && type <= mantra_md_row_count(a->md, MANTRA_MD_TYPE_DEF) && a->generic[type - 1];
}

/* A MethodSpec of method (a MemberRef token) with these type arguments by name; 0 when one does not
 * resolve. */
static uint32_t method_spec(mibc *w, uint32_t method, char *const *args, uint32_t nargs) {
    bytes inst = {0};
    put_u8(&inst, 0x0A); /* GENERICINST (§23.2.15) */
    put_compressed(&inst, nargs);
    int ok = 1;
    for (uint32_t i = 0; i < nargs && ok; i++) {
        type_name t;
        const char *p = args[i];
        ok = parse_type_name(&p, &t, 0) == 0 && *p == '\0' && name_sig(w, &t, t.nmods, &inst, 0) == 0;
        type_name_free(&t);
    }
    uint32_t tok = 0;
    if (ok && !inst.oom) {
        uint32_t blob = mantra_md_add_blob(w->b, inst.s, inst.n);
        uint32_t row = row_once(w, &w->memberref, pgo_strf("spec|%08" PRIx32 "|%" PRIu32, method, blob),
                                MANTRA_MD_METHOD_SPEC, ROW(method, blob));
        tok = row ? MANTRA_MD_TOKEN(MANTRA_MD_METHOD_SPEC, row) : 0;
    } else if (!ok) {
        w->why = "a method type argument does not resolve";
    }
    w->oom |= inst.oom;
    free(inst.s);
    return tok;
}

/* The reference to MethodDef `method` of a: a MemberRef on its type (a TypeRef; for a generic type
 * the instantiation `owner` names, a TypeSpec) with the definition's signature, and for a generic
 * method a MethodSpec of it with `args`. 0 with w->why when it does not resolve, or with *generic set
 * when it is a generic instantiation whose type arguments the profile cannot name. */
static uint32_t src_method(mibc *w, const pgo_assembly *a, uint32_t method, const char *owner, char *const *args,
                           uint32_t nargs, int *generic) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    *generic = 0;
    if (mantra_md_row(a->md, MANTRA_MD_METHOD_DEF, method, v) != MANTRA_OK) {
        w->why = "the method's token is not a MethodDef of its assembly";
        return 0;
    }
    const uint8_t *sig;
    uint32_t n;
    mantra_md_blob(a->md, v[4], &sig, &n);
    uint32_t owner_def = mantra_md_method_owner(a->md, method);
    if (n == 0 || owner_def == 0) {
        w->why = "the method has no signature or no declaring type";
        return 0;
    }
    int generic_method = (sig[0] & 0x10) != 0, on_generic_type = generic_type(a, owner_def);
    if ((generic_method && nargs == 0) || (on_generic_type && (owner == NULL || strchr(owner, '[') == NULL))) {
        *generic = 1;
        return 0;
    }
    uint32_t parent = on_generic_type ? type_handle(w, owner)
                                      : src_type(w, a, MANTRA_MD_TOKEN(MANTRA_MD_TYPE_DEF, owner_def), 0);
    if (parent == 0 || (on_generic_type && MANTRA_MD_TOKEN_TABLE(parent) != MANTRA_MD_TYPE_SPEC)) {
        if (w->why == NULL)
            w->why = "the declaring type does not resolve";
        return 0;
    }
    bytes out = {0};
    size_t k = src_method_sig(w, a, sig, n, &out, 0);
    uint32_t tok = 0;
    if (k == n && !out.oom) {
        const char *name = mantra_md_string(a->md, v[3]);
        uint32_t blob = mantra_md_add_blob(w->b, out.s, out.n);
        uint32_t row = row_once(w, &w->memberref, pgo_strf("%08" PRIx32 "|%s|%" PRIu32, parent, name, blob),
                                MANTRA_MD_MEMBER_REF, ROW(parent, mantra_md_add_string(w->b, name), blob));
        tok = row ? MANTRA_MD_TOKEN(MANTRA_MD_MEMBER_REF, row) : 0;
    } else if (k != n && w->why == NULL) {
        w->why = "the method's signature does not decode";
    }
    w->oom |= out.oom;
    free(out.s);
    if (tok && generic_method)
        tok = method_spec(w, tok, args, nargs);
    return tok;
}

/* A method handle's name ("Name|@|Type, Assembly") as a MemberRef (on a TypeSpec when the type is
 * an instantiation): when the type has exactly one method of that name and it is not itself generic
 * (the name gives no signature and no method type arguments); 0 otherwise. */
static uint32_t method_handle(mibc *w, const char *name) {
    const char *sep = strstr(name, "|@|");
    if (sep == NULL)
        return 0;
    type_name t;
    const char *p = sep + 3;
    uint32_t tok = 0;
    if (parse_type_name(&p, &t, 0) == 0 && *p == '\0' && t.nmods == 0 && t.assembly) {
        pgo_assembly *a = pgo_assembly_named(w->asms, t.assembly);
        uint32_t def = a ? pgo_assembly_type(a, t.name) : 0;
        uint32_t found = 0, matches = 0, v[MANTRA_MD_MAX_COLUMNS], first = 0, end = 0;
        size_t len = (size_t)(sep - name);
        if (def && mantra_md_row(a->md, MANTRA_MD_TYPE_DEF, def, v) == MANTRA_OK) { /* the type's MethodList run */
            first = v[5];
            end = mantra_md_row_count(a->md, MANTRA_MD_METHOD_DEF) + 1;
            if (mantra_md_row(a->md, MANTRA_MD_TYPE_DEF, def + 1, v) == MANTRA_OK)
                end = v[5];
        }
        for (uint32_t r = first; r < end; r++) {
            if (mantra_md_row(a->md, MANTRA_MD_METHOD_DEF, r, v) != 0)
                continue;
            const char *n = mantra_md_string(a->md, v[3]);
            if (strlen(n) == len && strncmp(n, name, len) == 0) {
                found = r;
                matches++;
            }
        }
        int generic;
        if (matches == 1) /* on a generic type, its instantiation is the type part of the name */
            tok = src_method(w, a, found, sep + 3, NULL, 0, &generic);
    }
    type_name_free(&t);
    return tok;
}

/* ---- the file --------------------------------------------------------------------------------- */
static char *guid_text(const mantra_guid *g) {
    return pgo_strf("%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", g->data1, g->data2, g->data3, g->data4[0],
                    g->data4[1], g->data4[2], g->data4[3], g->data4[4], g->data4[5], g->data4[6], g->data4[7]);
}

/* The assembly of a profiled method: its ModuleILPath, else its module's name; NULL with a count. */
static pgo_assembly *method_assembly(mibc *w, const pgo_method *m, int *mismatch) {
    pgo_assembly *a = NULL;
    *mismatch = 0;
    if (m->module_path[0] != '\0') {
        int rc = pgo_assembly_load(w->asms, m->module_path, &a);
        if (rc == -2)
            w->oom = 1;
    }
    if (a == NULL)
        a = pgo_assembly_named(w->asms, m->module);
    if (a == NULL)
        return NULL;
    static const char zero[] = "00000000-0000-0000-0000-000000000000";
    if (m->pdb_guid[0] != '\0' && strcmp(m->pdb_guid, zero) != 0) {
        char *g = a->has_pdb_guid ? guid_text(&a->pdb_guid) : NULL;
        if (g == NULL || strcmp(g, m->pdb_guid) != 0) {
            pgo_errf("%s: Dll mismatch: the trace's module %s has PDB signature %s, the file %s\n",
                    a->path, m->module, m->pdb_guid, g ? g : "has none");
            *mismatch = 1;
        }
        free(g);
    }
    return a;
}

typedef struct group {
    char *name; /* "Assembly;" */
    bytes il;
} group;

/* One method's instructions (ldtoken METHOD ... pop) into il. */
static void method_il(mibc *w, const pgo_method *m, uint32_t token, bytes *il, pgo_mibc_counts *c) {
    put_op_token(il, OP_LDTOKEN, token);
    put_op_token(il, OP_LDSTR, 0x70000000u | mantra_md_add_user_string(w->b, "InstrumentationDataStart"));
    size_t v = 0;
    for (size_t r = 0; r < m->data.records; r++) {
        const mantra_pgo_schema *s = &m->data.schema[r];
        put_ldc(il, MASK_ALL);
        put_ldc(il, s->il_offset);
        put_ldc(il, s->kind);
        put_ldc(il, s->count);
        put_ldc(il, s->other);
        if (!mantra_pgo_has_data(s->kind))
            continue;
        int elem = s->kind & MANTRA_PGO_MARSHAL_MASK;
        for (int32_t k = 0; k < s->count; k++, v++) {
            int64_t value = m->data.values[v];
            if (elem != MANTRA_PGO_TypeHandle && elem != MANTRA_PGO_MethodHandle) {
                put_ldc(il, value);
                continue;
            }
            if (value == 0) {
                put_ldc(il, 0);
                continue;
            }
            c->handles++;
            const char *name = m->handle_names ? m->handle_names[v] : NULL;
            uint32_t tok = 0;
            if (name) { /* the same names come again and again: resolved once */
                size_t have = pgo_strmap_get(&w->handles, name);
                if (have != (size_t)-1) {
                    tok = (uint32_t)have;
                } else {
                    tok = elem == MANTRA_PGO_TypeHandle ? type_handle(w, name) : method_handle(w, name);
                    if (pgo_strmap_put(&w->handles, name, tok) < 0)
                        w->oom = 1;
                }
            }
            if (tok) {
                c->handle_tokens++;
                put_op_token(il, OP_LDTOKEN, tok);
            } else { /* unknown: the runtime's 1..33, else 1 */
                c->handles_unknown++;
                put_ldc(il, value >= MANTRA_PGO_UNKNOWN_HANDLE_MIN && value <= MANTRA_PGO_UNKNOWN_HANDLE_MAX ? value : 1);
            }
        }
    }
    put_op_token(il, OP_LDSTR, 0x70000000u | mantra_md_add_user_string(w->b, "InstrumentationDataEnd"));
    put_u8(il, OP_POP);
}

/* Is a type name one of CoreLib's primitive types (TypeDesc.IsPrimitive: not String or Object)? */
static int is_primitive(const type_name *t) {
    int e = primitive(t->name);
    return e && e != 0x01 && e != 0x0E && e != 0x16 && e != 0x1C && t->assembly &&
           strcmp(t->assembly, "System.Private.CoreLib") == 0;
}

/* Adds the assemblies a type name involves to set (dotnet-pgo's AddAssembliesAssociatedWithType:
 * none for primitives and __Canon, an array's or pointer's element's, else the type's own and its
 * type arguments'). */
static void type_assemblies(const type_name *t, pgo_strmap *set, int depth) {
    if (depth > DEPTH_MAX || strcmp(t->name, "System.__Canon") == 0 || (t->nmods == 0 && is_primitive(t)))
        return;
    if (t->nmods == 0 && t->assembly && pgo_strmap_get(set, t->assembly) == (size_t)-1)
        (void)pgo_strmap_put(set, t->assembly, set->count);
    for (size_t i = 0; i < t->nargs; i++)
        type_assemblies(&t->args[i], set, depth + 1);
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A method's group: "DEFINING;OTHER;...;" with the other assemblies its declaring type's and its own
 * type arguments involve, in ordinal order (MibcEmitter.GenerateMibcFile). */
static char *group_name(const char *defining, const pgo_method *m) {
    pgo_strmap set = {0};
    const char *names[64];
    size_t n = 0;
    for (uint32_t i = 0; i <= m->nmethod_args; i++) {
        const char *s = i == 0 ? m->owner_type : m->method_args[i - 1];
        type_name t;
        const char *p = s;
        if (s && parse_type_name(&p, &t, 0) == 0)
            type_assemblies(&t, &set, 0);
        if (s)
            type_name_free(&t);
    }
    for (size_t i = 0; i < set.cap && n < 64; i++)
        if (set.keys[i] && strcmp(set.keys[i], defining) != 0)
            names[n++] = set.keys[i];
    if (n > 1)
        qsort(names, n, sizeof *names, str_cmp);
    char *g = pgo_strf("%s;", defining);
    for (size_t i = 0; i < n && g; i++) {
        char *x = pgo_strf("%s%s;", g, names[i]);
        free(g);
        g = x;
    }
    pgo_strmap_free(&set);
    return g;
}

static int group_cmp(const void *a, const void *b) {
    return strcmp(((const group *)a)->name, ((const group *)b)->name);
}

int pgo_write_mibc(const pgo_profile *p, pgo_assemblies *s, const char *name, int zip, uint8_t **out, size_t *size,
                   pgo_mibc_counts *c) {
    memset(c, 0, sizeof *c);
    mibc w = {mantra_md_builder_new(), s, {0}, {0}, {0}, {0}, {0}, 0, NULL};
    group *groups = NULL;
    size_t ngroups = 0;
    int rc = 0;
    if (w.b == NULL)
        return -2;
    /* Module, Assembly, <Module>: the names dotnet-pgo gives (the output file's name); a MVID made
     * from the profile (two FNV-1a hashes of every method's identity and values), so that the same
     * profile gives the same bytes and another profile another MVID */
    uint64_t h1 = UINT64_C(1469598103934665603), h2 = UINT64_C(0x84222325cbf29ce4);
    for (size_t i = 0; i < p->count; i++) {
        const pgo_method *m = &p->methods[i];
        const char *parts[4] = {m->module, m->name_space, m->name, m->signature};
        for (int k = 0; k < 4; k++)
            for (const char *c = parts[k]; *c; c++) {
                h1 = (h1 ^ (uint8_t)*c) * UINT64_C(1099511628211);
                h2 = (h2 ^ (uint8_t)*c) * UINT64_C(0x100000001b3);
            }
        for (size_t v = 0; v < m->data.value_count; v++) {
            h1 = (h1 ^ (uint64_t)m->data.values[v]) * UINT64_C(1099511628211);
            h2 = (h2 ^ ((uint64_t)m->data.values[v] >> 7)) * UINT64_C(0x100000001b3);
        }
        h1 = (h1 ^ m->token) * UINT64_C(1099511628211);
    }
    mantra_guid mvid = {(uint32_t)h1, (uint16_t)(h1 >> 32), (uint16_t)(0x4000 | ((h1 >> 48) & 0x0FFF)), {0}};
    for (int k = 0; k < 8; k++)
        mvid.data4[k] = (uint8_t)(h2 >> (8 * k));
    mvid.data4[0] = (uint8_t)(0x80 | (mvid.data4[0] & 0x3F)); /* an RFC 4122 version 4 layout */
    mantra_md_add_row(w.b, MANTRA_MD_MODULE, ROW(0, mantra_md_add_string(w.b, name), mantra_md_add_guid(w.b, &mvid), 0, 0));
    mantra_md_add_row(w.b, MANTRA_MD_ASSEMBLY, ROW(0x8004, 0, 0, 0, 0, 0, 0, mantra_md_add_string(w.b, name), 0));
    mantra_md_add_row(w.b, MANTRA_MD_TYPE_DEF, ROW(0, mantra_md_add_string(w.b, "<Module>"), 0, 0, 1, 1));
    for (size_t i = 0; i < p->count && rc == 0 && !w.oom; i++) {
        const pgo_method *m = &p->methods[i];
        c->methods++;
        int mismatch = 0, generic = 0;
        pgo_assembly *a = method_assembly(&w, m, &mismatch);
        if (mismatch) {
            rc = -1;
            break;
        }
        if (a == NULL) {
            c->no_assembly++;
            continue;
        }
        w.why = NULL;
        uint32_t tok = src_method(&w, a, m->token & 0xFFFFFF, m->owner_type, m->method_args, m->nmethod_args, &generic);
        if (tok == 0) {
            if (generic) {
                c->generic++;
            } else if (++c->unresolved <= 10) {
                pgo_errf(".mibc: %s%s%s (%s, token 0x%08" PRIx32 "): not written: %s\n", m->name_space,
                        m->name_space[0] ? "." : "", m->name, a->path, m->token,
                        w.why ? w.why : "it does not resolve");
                if (c->unresolved == 10)
                    pgo_errf(".mibc: more unresolved methods are only counted\n");
            }
            continue;
        }
        char *gname = group_name(a->name, m);
        size_t g = 0;
        while (gname && g < ngroups && strcmp(groups[g].name, gname) != 0)
            g++;
        if (gname && g == ngroups) {
            group *ng = realloc(groups, (ngroups + 1) * sizeof *ng);
            if (ng == NULL) {
                free(gname);
                w.oom = 1;
                break;
            }
            groups = ng;
            memset(&groups[ngroups], 0, sizeof groups[ngroups]);
            groups[ngroups++].name = gname;
        } else {
            free(gname);
        }
        if (gname == NULL) {
            w.oom = 1;
            break;
        }
        pgo_method view; /* a merged histogram's entries as many times as they count */
        int owned = pgo_method_view(m, &view);
        if (owned < 0) {
            w.oom = 1;
            break;
        }
        method_il(&w, &view, tok, &groups[g].il, c);
        pgo_method_view_free(&view, owned);
        c->written++;
    }
    if (rc == 0 && !w.oom) {
        /* groups in ordinal order of their names (dotnet-pgo's SortedDictionary), each a global
         * method Assemblies_NAME_N (N counts from 1), then AssemblyDictionary */
        if (ngroups > 1)
            qsort(groups, ngroups, sizeof *groups, group_cmp);
        static const uint8_t sig_void[] = {0x00, 0x00, 0x01};
        uint32_t sig = mantra_md_add_blob(w.b, sig_void, sizeof sig_void);
        bytes dict = {0};
        for (size_t g = 0; g < ngroups; g++) {
            put_u8(&groups[g].il, OP_RET);
            w.oom |= groups[g].il.oom;
            char *mname = pgo_strf("Assemblies_%.200s_%zu", groups[g].name, g + 1);
            uint32_t rva = mantra_md_add_method_body(w.b, (const uint8_t *)groups[g].il.s, groups[g].il.n, 8);
            uint32_t row = mname ? mantra_md_add_row(w.b, MANTRA_MD_METHOD_DEF,
                                                     ROW(rva, 0, 0x16, mantra_md_add_string(w.b, mname), sig, 1))
                                 : 0;
            free(mname);
            put_op_token(&dict, OP_LDSTR, 0x70000000u | mantra_md_add_user_string(w.b, groups[g].name));
            put_op_token(&dict, OP_LDTOKEN, MANTRA_MD_TOKEN(MANTRA_MD_METHOD_DEF, row));
            put_u8(&dict, OP_POP);
        }
        put_u8(&dict, OP_RET);
        uint32_t rva = mantra_md_add_method_body(w.b, (const uint8_t *)dict.s, dict.n, 8);
        mantra_md_add_row(w.b, MANTRA_MD_METHOD_DEF, ROW(rva, 0, 0x16, mantra_md_add_string(w.b, "AssemblyDictionary"), sig, 1));
        w.oom |= dict.oom;
        free(dict.s);
        uint8_t *pe = NULL;
        size_t pe_size = 0;
        int st = w.oom ? MANTRA_ENOMEM : mantra_md_write_pe(w.b, &pe, &pe_size);
        if (st == MANTRA_ENOMEM) {
            rc = -2;
        } else if (st != MANTRA_OK) {
            pgo_errf("the .mibc cannot be written: %s\n", mantra_status_name(st));
            rc = -1;
        } else if (zip) {
            char *entry = pgo_strf("%s.dll", name);
            rc = entry ? pgo_zip_one(entry, pe, pe_size, out, size) : -2;
            free(entry);
            free(pe);
        } else {
            *out = pe;
            *size = pe_size;
        }
    }
    if (w.oom && rc == 0)
        rc = -2;
    for (size_t g = 0; g < ngroups; g++) {
        free(groups[g].name);
        free(groups[g].il.s);
    }
    free(groups);
    pgo_strmap_free(&w.asmref);
    pgo_strmap_free(&w.typeref);
    pgo_strmap_free(&w.typespec);
    pgo_strmap_free(&w.memberref);
    pgo_strmap_free(&w.handles);
    mantra_md_builder_free(w.b);
    return rc;
}
