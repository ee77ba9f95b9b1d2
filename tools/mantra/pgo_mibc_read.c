/* Reading a .mibc (ours or dotnet-pgo's) back into a profile, as crossgen2's MIbcProfileParser.cs
 * reads one (dotnet/runtime src/coreclr/tools/aot/ILCompiler.ReadyToRun/IBC/): the ZIP entry
 * NAME.dll (stored or deflated) or the plain assembly; the global method AssemblyDictionary
 * (`ldstr GROUP  ldtoken GROUP_METHOD  pop`, repeated); in each group method, per profiled method
 * `ldtoken METHOD`, optional data introduced by `ldstr` ("ExclusiveWeight" and a number,
 * "WeightedCallData" and a count of ldtoken/ldc pairs: both skipped, "InstrumentationDataStart" and
 * the schema and values as absolute numbers and tokens up to "InstrumentationDataEnd"), `pop`.
 *
 * Each method is named as the runtime names it in its events (pgo_names.c): its type's namespace
 * with the instantiation, its name, its signature text; handles as the runtime's dump does. When its
 * assembly is found (pgo_assembly_named: the -r paths and known folders), the method's MethodDef token
 * and the assembly's PDB signature are looked up too, so that it merges with the same method read
 * from a trace. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_mibc.h"
#include "tool.h"

#define NO_OFFSET UINT64_MAX

typedef struct reader {
    const char *path;
    char where[96]; /* "" or " (in its entry NAME.dll)" */
    mantra_pe pe;
    mantra_md *md;
    pgo_profile *p;
    pgo_assemblies *asms;
    pgo_assembly_names names;
    char *corelib;
    uint64_t methods, skipped;
} reader;

static int fail(reader *r, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(reader *r, uint64_t offset, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (offset == NO_OFFSET) /* a fault of the content rather than of one place */
        pgo_errf("%s%s: %s\n", r->path, r->where, msg);
    else
        pgo_errf("%s%s: offset %" PRIu64 ": %s\n", r->path, r->where, offset, msg);
    return -1;
}

/* The code of the method body at rva (§25.4: tiny or fat header). */
static int il_body(reader *r, uint32_t rva, const char *method, const uint8_t **code, size_t *len) {
    size_t at;
    if (mantra_pe_rva_to_offset(&r->pe, rva, 1, &at) != MANTRA_OK)
        return fail(r, NO_OFFSET, "%s: its body (RVA 0x%x) is not inside a section", method, rva);
    const uint8_t *b = r->pe.data + at;
    size_t room = r->pe.size - at;
    if ((b[0] & 3) == 2) {
        *code = b + 1;
        *len = b[0] >> 2;
        if (*len > room - 1)
            return fail(r, at, "%s: its tiny body runs past the file", method);
        return 0;
    }
    if ((b[0] & 3) != 3 || room < 12)
        return fail(r, at, "%s: its body header (0x%02x) is neither tiny nor fat", method, b[0]);
    size_t header = (size_t)(b[1] >> 4) * 4;
    uint32_t size = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
    if (header < 12 || header > room || size > room - header)
        return fail(r, at, "%s: its fat body (header %zu bytes, code %u bytes) runs past the file", method, header, size);
    *code = b + header;
    *len = size;
    return 0;
}

/* One instruction of the few a .mibc holds. */
typedef struct insn {
    uint8_t op;
    int64_t value;  /* ldc.* */
    uint32_t token; /* ldstr, ldtoken */
    int is_number, is_float;
} insn;

static int next_insn(reader *r, const char *method, const uint8_t *code, size_t len, size_t *at, insn *in) {
    memset(in, 0, sizeof in[0]);
    uint8_t op = code[*at];
    size_t operand = 0;
    in->op = op;
    if (op >= 0x15 && op <= 0x1E) { /* ldc.i4.m1 .. ldc.i4.8 */
        in->value = (int64_t)op - 0x16;
        in->is_number = 1;
    } else if (op == 0x1F || op == 0x20 || op == 0x21 || op == 0x22 || op == 0x23) {
        operand = op == 0x1F ? 1 : op == 0x20 || op == 0x22 ? 4 : 8;
        in->is_number = op <= 0x21;
        in->is_float = op >= 0x22;
    } else if (op == 0x72 || op == 0xD0) {
        operand = 4;
    } else if (op != 0x00 && op != 0x26 && op != 0x2A) {
        return fail(r, (uint64_t)(code + *at - r->pe.data), "%s: IL offset %zu: opcode 0x%02x is not one a .mibc holds",
                    method, *at, op);
    }
    if (operand > len - *at - 1)
        return fail(r, (uint64_t)(code + *at - r->pe.data), "%s: IL offset %zu: the operand of opcode 0x%02x runs past "
                    "the body", method, *at, op);
    const uint8_t *o = code + *at + 1;
    uint64_t u = 0;
    for (size_t i = 0; i < operand; i++)
        u |= (uint64_t)o[i] << (8 * i);
    if (op == 0x1F)
        in->value = (int8_t)u;
    else if (op == 0x20)
        in->value = (int32_t)(uint32_t)u;
    else if (op == 0x21)
        in->value = (int64_t)u;
    else if (op == 0x72 || op == 0xD0)
        in->token = (uint32_t)u;
    *at += 1 + operand;
    return 0;
}

/* A user string token's text (UTF-16 to UTF-8, ASCII only matters here); NULL when not one. */
static char *user_string(reader *r, uint32_t token) {
    const uint8_t *u;
    uint32_t units;
    if ((token >> 24) != 0x70 || mantra_md_user_string(r->md, token & 0xFFFFFF, &u, &units) != MANTRA_OK)
        return NULL;
    mantra_str16 s = {u, units};
    return pgo_str16_dup(s);
}

/* ---- a method's names and identity ---------------------------------------------------------- */

/* The TypeRef a type token is based on (the generic type of an instantiation), 0 when none. */
static uint32_t base_typeref(const mantra_md *md, uint32_t token) {
    if (MANTRA_MD_TOKEN_TABLE(token) == MANTRA_MD_TYPE_REF)
        return token;
    uint32_t v[MANTRA_MD_MAX_COLUMNS], k;
    const uint8_t *sig;
    uint32_t n;
    if (MANTRA_MD_TOKEN_TABLE(token) != MANTRA_MD_TYPE_SPEC ||
        mantra_md_row(md, MANTRA_MD_TYPE_SPEC, MANTRA_MD_TOKEN_ROW(token), v) != 0 || mantra_md_blob(md, v[0], &sig, &n) != 0 ||
        n < 3 || sig[0] != 0x15 || mantra_md_uncompress(sig + 2, n - 2, &k) == 0 || (k & 3) != 1)
        return 0;
    return MANTRA_MD_TOKEN(MANTRA_MD_TYPE_REF, k >> 2);
}

/* Looks the method up in its real assembly (by type name, method name and signature text): its
 * MethodDef token and the assembly's path and PDB signature in m. */
static int resolve_in_assembly(reader *r, pgo_method *m, uint32_t parent, const char *name, const char *sig_text) {
    pgo_assembly *a = pgo_assembly_named(r->asms, m->module);
    char type[512];
    uint32_t base = base_typeref(r->md, parent);
    size_t tn = base ? mantra_md_type_name(r->md, base, type, sizeof type) : 0;
    uint32_t def = a && tn && tn < sizeof type ? pgo_assembly_type(a, type) : 0, v[MANTRA_MD_MAX_COLUMNS];
    if (def == 0 || mantra_md_row(a->md, MANTRA_MD_TYPE_DEF, def, v) != 0)
        return 0;
    uint32_t first = v[5], end = mantra_md_row_count(a->md, MANTRA_MD_METHOD_DEF) + 1;
    if (mantra_md_row(a->md, MANTRA_MD_TYPE_DEF, def + 1, v) == 0)
        end = v[5];
    for (uint32_t row = first; row < end; row++) {
        const uint8_t *sig;
        uint32_t n;
        uint32_t arity = 0;
        if (mantra_md_row(a->md, MANTRA_MD_METHOD_DEF, row, v) != 0 || strcmp(mantra_md_string(a->md, v[3]), name) != 0 ||
            mantra_md_blob(a->md, v[4], &sig, &n) != 0 || n == 0)
            continue;
        /* the text does not show how many type parameters a generic method has: the MethodSpec does */
        if ((sig[0] & 0x10) && (mantra_md_uncompress(sig + 1, n - 1, &arity) == 0 || arity != m->nmethod_args))
            continue;
        pgo_text t = {0};
        int same = pgo_sig_text(a->md, sig, n, &t) == n && t.s && strcmp(t.s, sig_text) == 0;
        int oom = t.oom;
        free(t.s);
        if (oom)
            return -2;
        if (!same)
            continue;
        m->token = MANTRA_MD_TOKEN(MANTRA_MD_METHOD_DEF, row);
        const char *slash = strrchr(a->path, '/');
        const char *file = slash ? slash + 1 : a->path;
        const char *dot = strrchr(file, '.');
        char *module = pgo_strf("%.*s", (int)(dot && dot != file ? (size_t)(dot - file) : strlen(file)), file);
        char *path = pgo_strdup(a->path);
        /* the text a trace's ModuleLoad gives (all zeros for an assembly without a CodeView entry) */
        static const mantra_guid none = {0, 0, 0, {0}};
        const mantra_guid *g = a->has_pdb_guid ? &a->pdb_guid : &none;
        char *guid = pgo_strf("%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", g->data1, g->data2, g->data3,
                              g->data4[0], g->data4[1], g->data4[2], g->data4[3], g->data4[4], g->data4[5],
                              g->data4[6], g->data4[7]);
        if (module == NULL || path == NULL || guid == NULL) {
            free(module);
            free(path);
            free(guid);
            return -2;
        }
        free(m->module);
        free(m->module_path);
        free(m->pdb_guid);
        m->module = module;
        m->module_path = path;
        m->pdb_guid = guid;
        return 0;
    }
    return 0;
}

/* Fills m's names from the ldtoken of a profiled method; -1 when it cannot be named (skipped and
 * counted), -2 out of memory. */
static int name_method(reader *r, uint32_t token, pgo_method *m) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    pgo_text ns = {0}, owner = {0}, sig = {0}, module = {0};
    uint32_t member = token;
    if (MANTRA_MD_TOKEN_TABLE(token) == MANTRA_MD_METHOD_SPEC) {
        if (mantra_md_row(r->md, MANTRA_MD_METHOD_SPEC, MANTRA_MD_TOKEN_ROW(token), v) != 0)
            return -1;
        member = v[0];
        const uint8_t *inst;
        uint32_t n, count;
        size_t k;
        if (mantra_md_blob(r->md, v[1], &inst, &n) != 0 || n < 2 || inst[0] != 0x0A ||
            (k = mantra_md_uncompress(inst + 1, n - 1, &count)) == 0 || count > 64)
            return -1;
        m->method_args = calloc(count ? count : 1, sizeof *m->method_args);
        if (m->method_args == NULL)
            return -2;
        size_t at = 1 + k;
        for (uint32_t i = 0; i < count; i++) {
            pgo_text t = {0};
            size_t used = pgo_sig_type_text(r->md, inst + at, n - at, 1, &r->names, &t);
            if (used == 0 || t.oom) {
                free(t.s);
                return t.oom ? -2 : -1;
            }
            m->method_args[m->nmethod_args++] = t.s;
            at += used;
        }
    }
    if (MANTRA_MD_TOKEN_TABLE(member) != MANTRA_MD_MEMBER_REF ||
        mantra_md_row(r->md, MANTRA_MD_MEMBER_REF, MANTRA_MD_TOKEN_ROW(member), v) != 0)
        return -1;
    uint32_t parent = v[0];
    const char *name = mantra_md_string(r->md, v[1]);
    const uint8_t *blob;
    uint32_t n;
    int rc = -1;
    if (mantra_md_blob(r->md, v[2], &blob, &n) == 0 && pgo_sig_text(r->md, blob, n, &sig) == n && sig.s &&
        pgo_type_text(r->md, parent, 0, &r->names, &ns) == 0 && pgo_type_text(r->md, parent, 1, &r->names, &owner) == 0 &&
        pgo_assembly_of_type(r->md, parent, &module) == 0) {
        m->name_space = ns.s;
        m->owner_type = owner.s;
        m->signature = sig.s;
        m->module = module.s;
        ns.s = owner.s = sig.s = module.s = NULL;
        m->name = pgo_strdup(name);
        m->module_path = pgo_strdup("");
        m->pdb_guid = pgo_strdup("");
        rc = m->name && m->module_path && m->pdb_guid ? 0 : -2;
        if (rc == 0)
            rc = resolve_in_assembly(r, m, parent, name, m->signature);
    }
    if (ns.oom || owner.oom || sig.oom || module.oom)
        rc = -2;
    free(ns.s);
    free(owner.s);
    free(sig.s);
    free(module.s);
    return rc;
}

/* ---- instrumentation data -------------------------------------------------------------------- */
typedef struct longs {
    int64_t *v;
    size_t n, cap;
} longs;

static int push_long(longs *l, int64_t v) {
    if (tool_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v, 64) < 0)
        return -2;
    l->v[l->n++] = v;
    return 0;
}

/* The numbers between InstrumentationDataStart and End as a schema and values (PgoFormat.cs
 * ParsePgoData with longsAreCompressed false: a mask, then the fields it names, then Count values);
 * handle values are tokens of this file (named into m->handle_names) or unknown numbers. */
static int decode_data(reader *r, const char *method, const longs *l, pgo_method *m) {
    mantra_pgo_schema cur = {0, 0, 0, 0};
    size_t i = 0, nrec = 0, nval = 0;
    mantra_pgo_data *d = &m->data;
    while (i < l->n) {
        int64_t mask = l->v[i++];
        if (mask < 0 || mask > 15)
            return fail(r, NO_OFFSET, "%s: instrumentation data: a mask of %" PRId64 " (0..15 expected)", method, mask);
        int32_t *fields[4] = {&cur.il_offset, &cur.kind, &cur.count, &cur.other};
        for (int b = 0; b < 4; b++)
            if (mask >> b & 1) {
                if (i == l->n)
                    return fail(r, NO_OFFSET, "%s: instrumentation data ends inside a schema record", method);
                *fields[b] = (int32_t)l->v[i++];
            }
        if (mask & 2 && cur.kind == 0)
            break; /* Done */
        if (cur.count < 0 || (mantra_pgo_has_data(cur.kind) && (size_t)cur.count > l->n - i))
            return fail(r, NO_OFFSET, "%s: instrumentation data: a record of %d values runs past the data", method, cur.count);
        if (!mantra_pgo_has_data(cur.kind) && cur.count > MANTRA_PGO_NONE_COUNT_MAX)
            return fail(r, NO_OFFSET, "%s: instrumentation data: a record without data (kind %d) with Count %d, more than %d",
                        method, cur.kind, cur.count, MANTRA_PGO_NONE_COUNT_MAX);
        mantra_pgo_schema *sch = realloc(d->schema, (nrec + 1) * sizeof *sch);
        if (sch == NULL)
            return -2;
        d->schema = sch;
        d->schema[nrec++] = cur;
        if (!mantra_pgo_has_data(cur.kind))
            continue;
        size_t add = (size_t)cur.count;
        int64_t *vals = realloc(d->values, (nval + add + 1) * sizeof *vals);
        char **names = realloc(m->handle_names, (nval + add + 1) * sizeof *names);
        if (vals)
            d->values = vals;
        if (names)
            m->handle_names = names;
        if (vals == NULL || names == NULL)
            return -2;
        int elem = cur.kind & MANTRA_PGO_MARSHAL_MASK;
        for (size_t k = 0; k < add; k++, nval++) {
            int64_t x = l->v[i++];
            m->handle_names[nval] = NULL;
            if (elem == MANTRA_PGO_FourByte)
                x = (int32_t)x; /* as the runtime's serializer sees a FourByte slot */
            d->values[nval] = x;
            if ((elem == MANTRA_PGO_TypeHandle || elem == MANTRA_PGO_MethodHandle) && (x >> 24) != 0) {
                r->p->counts.handles++;
                pgo_text t = {0};
                uint32_t tok = (uint32_t)x;
                int ok;
                if (elem == MANTRA_PGO_TypeHandle) {
                    ok = pgo_type_text(r->md, tok, 1, &r->names, &t) == 0;
                } else { /* "Name|@|Type, Assembly" */
                    uint32_t v[MANTRA_MD_MAX_COLUMNS];
                    uint32_t member = tok;
                    if (MANTRA_MD_TOKEN_TABLE(tok) == MANTRA_MD_METHOD_SPEC &&
                        mantra_md_row(r->md, MANTRA_MD_METHOD_SPEC, MANTRA_MD_TOKEN_ROW(tok), v) == 0)
                        member = v[0];
                    ok = MANTRA_MD_TOKEN_TABLE(member) == MANTRA_MD_MEMBER_REF &&
                         mantra_md_row(r->md, MANTRA_MD_MEMBER_REF, MANTRA_MD_TOKEN_ROW(member), v) == 0;
                    if (ok) {
                        pgo_text_add(&t, mantra_md_string(r->md, v[1]));
                        pgo_text_add(&t, "|@|");
                        ok = pgo_type_text(r->md, v[0], 1, &r->names, &t) == 0;
                    }
                }
                if (t.oom) {
                    free(t.s);
                    return -2;
                }
                if (ok) {
                    m->handle_names[nval] = t.s;
                } else {
                    free(t.s);
                    r->p->counts.handles_unnamed++;
                    r->p->counts.unnamed_by[PGO_UNNAMED_MIBC_TOKEN]++;
                }
            }
        }
    }
    d->records = nrec;
    d->value_count = nval;
    return 0;
}

/* ---- groups ------------------------------------------------------------------------------------ */
enum { LOOKING, OPTIONAL, EXCLUSIVE, CALL_COUNT, CALL_TOKEN, CALL_WEIGHT, DATA };

static int method_name(reader *r, uint32_t row, char *buf, size_t size) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    if (mantra_md_row(r->md, MANTRA_MD_METHOD_DEF, row, v) != 0)
        return -1;
    snprintf(buf, size, "method %s (MethodDef %u)", mantra_md_string(r->md, v[3]), row);
    return 0;
}

/* Adds the method being read (when it has one) to the profile. */
static int finish_method(reader *r, const char *where, pgo_method *m, int have) {
    if (!have)
        return 0;
    if (m->name == NULL) { /* not named: skipped */
        pgo_method_free(m);
        return 0;
    }
    if (m->data.schema == NULL) { /* no instrumentation data: an empty record list */
        m->data.schema = calloc(1, sizeof *m->data.schema);
        if (m->data.schema == NULL)
            return -2;
    }
    m->runs = 1;
    char *id = pgo_method_identity(m); /* as pgo_collect.c's for a trace: both merge */
    if (id == NULL) {
        pgo_method_free(m);
        return -2;
    }
    r->p->counts.methods_read++;
    r->methods++;
    int rc = pgo_profile_add(r->p, m, id);
    free(id);
    (void)where;
    return rc < 0 ? -2 : 0;
}

static int read_group(reader *r, uint32_t row) {
    char where[160];
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    if (method_name(r, row, where, sizeof where) < 0 || mantra_md_row(r->md, MANTRA_MD_METHOD_DEF, row, v) != 0)
        return fail(r, NO_OFFSET, "AssemblyDictionary: ldtoken of a group that is not a MethodDef (row %u)", row);
    const uint8_t *code;
    size_t len, at = 0;
    if (il_body(r, v[0], where, &code, &len) < 0)
        return -1;
    int state = LOOKING, have = 0, rc = 0;
    int64_t calls = 0;
    pgo_method m;
    memset(&m, 0, sizeof m);
    longs l = {NULL, 0, 0};
    while (at < len && rc == 0) {
        insn in;
        if (next_insn(r, where, code, len, &at, &in) < 0) {
            rc = -1;
            break;
        }
        if (state == DATA && (in.op == 0xD0 || in.is_number)) {
            rc = push_long(&l, in.op == 0xD0 ? (int64_t)in.token : in.value);
            continue;
        }
        if (in.op == 0xD0) {
            if (state == LOOKING) {
                have = 1;
                if (name_method(r, in.token, &m) == -2)
                    rc = -2;
                else if (m.name == NULL) {
                    r->skipped++;
                    if (r->skipped <= 10)
                        pgo_errf("%s%s: %s: ldtoken 0x%08x names no method this reader can name: "
                                "skipped\n", r->path, r->where, where, in.token);
                }
                state = OPTIONAL;
            } else if (state == CALL_TOKEN) {
                state = CALL_WEIGHT;
            } else {
                state = OPTIONAL;
            }
        } else if (in.is_number || in.is_float) {
            if (state == CALL_COUNT) {
                calls = in.value;
                state = calls > 0 ? CALL_TOKEN : OPTIONAL;
            } else if (state == CALL_WEIGHT) {
                state = --calls > 0 ? CALL_TOKEN : OPTIONAL;
            } else {
                state = OPTIONAL;
            }
        } else if (in.op == 0x72) {
            char *s = user_string(r, in.token);
            if (s == NULL) {
                rc = fail(r, NO_OFFSET, "%s: ldstr 0x%08x is not a user string of the file", where, in.token);
                break;
            }
            if (strcmp(s, "ExclusiveWeight") == 0) {
                state = EXCLUSIVE;
            } else if (strcmp(s, "WeightedCallData") == 0) {
                state = CALL_COUNT;
            } else if (strcmp(s, "InstrumentationDataStart") == 0) {
                state = DATA;
                l.n = 0;
            } else if (strcmp(s, "InstrumentationDataEnd") == 0 && state == DATA) {
                if (have && m.name)
                    rc = decode_data(r, where, &l, &m);
                state = OPTIONAL;
            } else {
                state = OPTIONAL;
            }
            free(s);
        } else if (in.op == 0x26) { /* pop: the method is complete */
            rc = finish_method(r, where, &m, have);
            memset(&m, 0, sizeof m);
            have = 0;
            state = LOOKING;
        }
    }
    pgo_method_free(&m); /* a method without its pop at the end of the body, or one cut by an error */
    free(l.v);
    return rc;
}

static int read_dictionary(reader *r) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS], dict = 0;
    for (uint32_t row = 1; row <= mantra_md_row_count(r->md, MANTRA_MD_METHOD_DEF); row++)
        if (mantra_md_method_owner(r->md, row) == 1 && mantra_md_row(r->md, MANTRA_MD_METHOD_DEF, row, v) == 0 &&
            strcmp(mantra_md_string(r->md, v[3]), "AssemblyDictionary") == 0)
            dict = row;
    if (dict == 0)
        return fail(r, NO_OFFSET, "no global method AssemblyDictionary: not a .mibc");
    mantra_md_row(r->md, MANTRA_MD_METHOD_DEF, dict, v);
    const uint8_t *code;
    size_t len, at = 0;
    if (il_body(r, v[0], "AssemblyDictionary", &code, &len) < 0)
        return -1;
    while (at < len) {
        insn in;
        if (next_insn(r, "AssemblyDictionary", code, len, &at, &in) < 0)
            return -1;
        if (in.op == 0xD0) {
            if (MANTRA_MD_TOKEN_TABLE(in.token) != MANTRA_MD_METHOD_DEF)
                return fail(r, NO_OFFSET, "AssemblyDictionary: ldtoken 0x%08x is not a group method", in.token);
            int rc = read_group(r, MANTRA_MD_TOKEN_ROW(in.token));
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* CoreLib's full name for primitive element types and __Canon: from the file's AssemblyRef, else
 * from the assembly itself when found, else (NULL) the simple name. */
static void find_corelib(reader *r) {
    uint32_t v[MANTRA_MD_MAX_COLUMNS];
    for (uint32_t row = 1; row <= mantra_md_row_count(r->md, MANTRA_MD_ASSEMBLY_REF) && !r->corelib; row++)
        if (mantra_md_row(r->md, MANTRA_MD_ASSEMBLY_REF, row, v) == 0 &&
            strcmp(mantra_md_string(r->md, v[6]), "System.Private.CoreLib") == 0)
            r->corelib = pgo_assembly_ref_name(r->md, row);
    pgo_assembly *a = r->corelib ? NULL : pgo_assembly_named(r->asms, "System.Private.CoreLib");
    if (a)
        r->corelib = pgo_assembly_full_name(a->name, a->version, a->culture, a->public_key, a->public_key_size, 1);
    r->names.corelib = r->corelib;
}

int pgo_read_mibc_bytes(pgo_profile *p, pgo_assemblies *s, const char *path, const uint8_t *file, size_t n) {
    reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.p = p;
    r.asms = s;
    uint8_t *unzipped = NULL;
    const uint8_t *pe = file;
    size_t pe_size = n;
    int rc = 0;
    if (n >= 2 && file[0] == 'P' && file[1] == 'K') { /* the entry crossgen2 reads: the file's name + .dll */
        const char *base = strrchr(path, '/');
        char *want = pgo_strf("%s.dll", base ? base + 1 : path);
        size_t at = 0;
        const char *why = "";
        rc = want ? pgo_zip_find(file, n, want, &unzipped, &pe_size, &at, &why) : -2;
        if (rc == -1)
            fail(&r, at, "%s", why);
        else if (rc == 0)
            snprintf(r.where, sizeof r.where, " (in its entry %s)", want);
        free(want);
        pe = unzipped;
    }
    mantra_ecma_error err = {0, ""};
    if (rc == 0) {
        int st = mantra_pe_parse(pe, pe_size, &r.pe, &err);
        if (st == MANTRA_OK)
            st = mantra_md_open_pe(&r.pe, &r.md, &err);
        if (st == MANTRA_ENOMEM)
            rc = -2;
        else if (st != MANTRA_OK)
            rc = fail(&r, err.offset, "%s", err.message);
    }
    if (rc == 0 && r.pe.has_cli && r.pe.cli_managed_native_header.rva != 0) { /* a ReadyToRun image */
        find_corelib(&r);
        rc = pgo_read_image(p, path, &r.pe, r.md, r.corelib);
        mantra_md_close(r.md);
        mantra_pe_free(&r.pe);
        free(unzipped);
        free(r.corelib);
        return rc;
    }
    if (rc == 0) {
        find_corelib(&r);
        rc = read_dictionary(&r);
        if (rc == 0 && r.skipped)
            pgo_errf("%s: %" PRIu64 " method%s skipped (not named)\n", path, r.skipped,
                    r.skipped == 1 ? "" : "s");
    }
    if (rc == 0)
        p->counts.profiles++;
    mantra_md_close(r.md);
    mantra_pe_free(&r.pe);
    free(unzipped);
    free(r.corelib);
    return rc;
}

int pgo_read_mibc(pgo_profile *p, pgo_assemblies *s, const char *path) {
    size_t n = 0;
    uint8_t *file = (uint8_t *)tool_read_file(path, &n);
    if (file == NULL) {
        pgo_errf("%s: cannot read the profile\n", path);
        return -1;
    }
    int rc = pgo_read_mibc_bytes(p, s, path, file, n);
    free(file);
    return rc;
}
