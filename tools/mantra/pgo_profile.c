/* `mantra pgo`: the merged profile. Methods are identified across traces by
 *   (module identity, MethodToken, type and method names with their instantiation, signature)
 * (built by method_identity in pgo_collect.c). The token names the method definition; a generic
 * type's or method's instantiations share it and are separate methods for the runtime (one PGO
 * entry per MethodDesc), told apart by the names the events carry ("List`1[System.Int32]") and
 * the type arguments of MethodDetails. The module identity is the IL file's name and the ManagedPdbSignature GUID of its
 * ModuleLoad event (two builds of an assembly are different modules: a token names another method
 * in each), or "module@0xID" (the trace's ModuleID: that trace only) when no ModuleLoad event
 * names the module. MethodIDs
 * (MethodDesc addresses) are not used: they differ from run to run.
 *
 * Merging follows PgoFormat.cs `Merge` (../shared/reference/pgo-format.md §8, the newer copy):
 * records match by (ILOffset, Kind & DescriptorMask), edges by Other (the target) too; block, edge,
 * handle-histogram and value-histogram counts (Count 1) are summed (FourByte sums saturate at
 * 2^32-1); HandleHistogramTypes/Methods and ValueHistogram are concatenated; Version takes the
 * maximum and NumRuns the sum of Other, a set without NumRuns counting as one run. Records of the
 * later set that match nothing are appended; records that cannot be merged (a Count that differs,
 * or any other kind, e.g. GetLikelyClass) keep the first set's values and are counted
 * (merge_conflicts). A merged method lists its data records first, then Version and NumRuns (so
 * that no data record follows a size-0 record: the layout rule of §3). */
#include <stdlib.h>
#include <string.h>

#include "pgo_tool.h"

typedef struct rec {
    mantra_pgo_schema s;
    int64_t *vals;
    char **names;
} rec;

typedef struct recs {
    rec *r;
    size_t n, cap;
} recs;

static void recs_free(recs *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->r[i].vals);
        free(l->r[i].names); /* the strings belong to the methods' handle_names */
    }
    free(l->r);
}

static rec *recs_push(recs *l, const mantra_pgo_schema *s, const int64_t *vals, char *const *names) {
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        rec *r = realloc(l->r, nc * sizeof *r);
        if (r == NULL)
            return NULL;
        l->r = r;
        l->cap = nc;
    }
    rec *e = &l->r[l->n];
    e->s = *s;
    size_t c = mantra_pgo_has_data(s->kind) ? (size_t)s->count : 0;
    e->vals = calloc(c ? c : 1, sizeof *e->vals);
    e->names = calloc(c ? c : 1, sizeof *e->names);
    if (e->vals == NULL || e->names == NULL) {
        free(e->vals);
        free(e->names);
        return NULL;
    }
    if (c) {
        memcpy(e->vals, vals, c * sizeof *vals);
        if (names)
            memcpy(e->names, names, c * sizeof *names);
    }
    l->n++;
    return e;
}

/* Splits a method's data into records (names borrowed from m->handle_names). */
static int split(const pgo_method *m, recs *out) {
    size_t v = 0;
    for (size_t i = 0; i < m->data.records; i++) {
        const mantra_pgo_schema *s = &m->data.schema[i];
        if (recs_push(out, s, m->data.values + v, m->handle_names ? m->handle_names + v : NULL) == NULL)
            return -1;
        if (mantra_pgo_has_data(s->kind))
            v += (size_t)s->count;
    }
    return 0;
}

#define DESC(k) ((k) & MANTRA_PGO_DESCRIPTOR_MASK)
#define EDGE 0x180

static int summed(int32_t d) { return d == 0x40 || d == EDGE || d == 0x80 || d == 0x200; }
static int concatenated(int32_t d) { return d == 0xC0 || d == 0x240; }

static int64_t add_values(int32_t kind, int64_t a, int64_t b) {
    if ((kind & MANTRA_PGO_MARSHAL_MASK) == MANTRA_PGO_FourByte) {
        uint64_t s = (uint64_t)(uint32_t)a + (uint64_t)(uint32_t)b;
        if (s > UINT32_MAX)
            s = UINT32_MAX;
        return (int64_t)(int32_t)(uint32_t)s;
    }
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static rec *find(recs *l, const mantra_pgo_schema *s) {
    for (size_t i = 0; i < l->n; i++) {
        const mantra_pgo_schema *o = &l->r[i].s;
        if (o->il_offset == s->il_offset && DESC(o->kind) == DESC(s->kind) &&
            (DESC(s->kind) != EDGE || o->other == s->other))
            return &l->r[i];
    }
    return NULL;
}

static int append(rec *dst, const rec *src) {
    size_t a = (size_t)dst->s.count, b = (size_t)src->s.count;
    int64_t *v = realloc(dst->vals, (a + b ? a + b : 1) * sizeof *v);
    if (v == NULL)
        return -1;
    dst->vals = v;
    char **n = realloc(dst->names, (a + b ? a + b : 1) * sizeof *n);
    if (n == NULL)
        return -1;
    dst->names = n;
    memcpy(v + a, src->vals, b * sizeof *v);
    memcpy(n + a, src->names, b * sizeof *n);
    dst->s.count = (int32_t)(a + b);
    return 0;
}

/* Merges the records of `add` into `into` (runs: NumRuns of each side, 1 when absent). */
static int merge_recs(recs *into, const recs *add, pgo_counts *c) {
    int32_t version = -1;
    int64_t runs_into = 0, runs_add = 0;
    int have_version = 0;
    recs out = {0};
    for (size_t pass = 0; pass < 2; pass++) {
        const recs *l = pass ? add : into;
        int64_t *runs = pass ? &runs_add : &runs_into;
        for (size_t i = 0; i < l->n; i++) {
            const mantra_pgo_schema *s = &l->r[i].s;
            if (s->kind == MANTRA_PGO_NumRuns)
                *runs += s->other;
            else if (s->kind == MANTRA_PGO_Version) {
                have_version = 1;
                if (s->other > version)
                    version = s->other;
            } else if (pass == 0) {
                if (recs_push(&out, s, l->r[i].vals, l->r[i].names) == NULL)
                    goto oom;
            } else {
                rec *m = find(&out, s);
                int32_t d = DESC(s->kind);
                if (m == NULL) {
                    if (recs_push(&out, s, l->r[i].vals, l->r[i].names) == NULL)
                        goto oom;
                } else if (summed(d) && m->s.count == 1 && s->count == 1) {
                    m->vals[0] = add_values(m->s.kind, m->vals[0], l->r[i].vals[0]);
                } else if (concatenated(d) && (m->s.kind & MANTRA_PGO_MARSHAL_MASK) == (s->kind & MANTRA_PGO_MARSHAL_MASK)) {
                    if (append(m, &l->r[i]) < 0)
                        goto oom;
                } else {
                    c->merge_conflicts++;
                }
            }
        }
    }
    mantra_pgo_schema s;
    if (have_version) {
        s = (mantra_pgo_schema){MANTRA_PGO_Version, 0, 1, version};
        if (recs_push(&out, &s, NULL, NULL) == NULL)
            goto oom;
    }
    int64_t runs = (runs_into ? runs_into : 1) + (runs_add ? runs_add : 1);
    s = (mantra_pgo_schema){MANTRA_PGO_NumRuns, 0, 1, runs > INT32_MAX ? INT32_MAX : (int32_t)runs};
    if (recs_push(&out, &s, NULL, NULL) == NULL)
        goto oom;
    recs_free(into);
    *into = out;
    return 0;
oom:
    recs_free(&out);
    return -1;
}

/* Rebuilds m's data and handle_names from l. The names of both methods stay alive: names of the
 * merged-away method are moved to into (the caller frees only its array). */
static int join(pgo_method *m, const recs *l) {
    size_t nv = 0;
    for (size_t i = 0; i < l->n; i++)
        if (mantra_pgo_has_data(l->r[i].s.kind))
            nv += (size_t)l->r[i].s.count;
    mantra_pgo_schema *schema = malloc((l->n ? l->n : 1) * sizeof *schema);
    int64_t *vals = malloc((nv ? nv : 1) * sizeof *vals);
    char **names = calloc(nv ? nv : 1, sizeof *names);
    if (schema == NULL || vals == NULL || names == NULL) {
        free(schema);
        free(vals);
        free(names);
        return -1;
    }
    size_t v = 0;
    for (size_t i = 0; i < l->n; i++) {
        schema[i] = l->r[i].s;
        if (!mantra_pgo_has_data(l->r[i].s.kind))
            continue;
        memcpy(vals + v, l->r[i].vals, (size_t)l->r[i].s.count * sizeof *vals);
        memcpy(names + v, l->r[i].names, (size_t)l->r[i].s.count * sizeof *names);
        v += (size_t)l->r[i].s.count;
    }
    mantra_pgo_data_free(&m->data);
    free(m->handle_names);
    m->data = (mantra_pgo_data){schema, l->n, vals, nv};
    m->handle_names = names;
    return 0;
}

/* Merges add into into. The handle-name strings of add move into `into` (or are freed). */
static int merge_method(pgo_method *into, pgo_method *add, pgo_counts *c) {
    recs a = {0}, b = {0};
    /* Names not taken by the merge are freed below: collect add's names first. */
    size_t nadd = add->data.value_count;
    char **add_names = add->handle_names;
    int rc = -1;
    if (split(into, &a) == 0 && split(add, &b) == 0 && merge_recs(&a, &b, c) == 0 && join(into, &a) == 0)
        rc = 0;
    if (rc == 0 && add_names) {
        /* free the strings of add that the merged method does not hold */
        for (size_t i = 0; i < nadd; i++) {
            if (add_names[i] == NULL)
                continue;
            int kept = 0;
            for (size_t j = 0; j < into->data.value_count && !kept; j++)
                kept = into->handle_names[j] == add_names[i];
            if (!kept)
                free(add_names[i]);
        }
        free(add_names);
        add->handle_names = NULL;
        add->data.value_count = 0;
    }
    recs_free(&a);
    recs_free(&b);
    if (add->il_size > into->il_size)
        into->il_size = add->il_size;
    into->runs += add->runs;
    return rc;
}

void pgo_method_free(pgo_method *m) {
    free(m->module);
    free(m->module_path);
    free(m->pdb_guid);
    free(m->name_space);
    free(m->name);
    free(m->signature);
    if (m->handle_names)
        for (size_t i = 0; i < m->data.value_count; i++)
            free(m->handle_names[i]);
    free(m->handle_names);
    free(m->owner_type);
    for (uint32_t i = 0; i < m->nmethod_args; i++)
        free(m->method_args[i]);
    free(m->method_args);
    mantra_pgo_data_free(&m->data);
    memset(m, 0, sizeof *m);
}

int pgo_profile_add(pgo_profile *p, pgo_method *m, const char *id) {
    size_t at = pgo_strmap_get(&p->by_identity, id);
    int rc = 0;
    if (at != (size_t)-1) {
        p->counts.merged++;
        rc = merge_method(&p->methods[at], m, &p->counts);
        pgo_method_free(m);
    } else if (p->count == p->cap && (p->methods = realloc(p->methods, (p->cap = p->cap ? p->cap * 2 : 64) * sizeof *m)) == NULL) {
        pgo_method_free(m);
        rc = -1;
    } else if (pgo_strmap_put(&p->by_identity, id, p->count) < 0) {
        pgo_method_free(m);
        rc = -1;
    } else {
        p->methods[p->count++] = *m;
        memset(m, 0, sizeof *m);
    }
    return rc;
}

void pgo_profile_free(pgo_profile *p) {
    for (size_t i = 0; i < p->count; i++)
        pgo_method_free(&p->methods[i]);
    free(p->methods);
    pgo_strmap_free(&p->by_identity);
    memset(p, 0, sizeof *p);
}

char *pgo_method_identity(const pgo_method *m) {
    char *id = pgo_strf("%s|%s|%08x|%s|%s|%s", m->module, m->pdb_guid, m->token, m->name_space, m->name, m->signature);
    for (uint32_t i = 0; id && i < m->nmethod_args; i++) {
        char *n = pgo_strf("%s%s%s", id, i ? "," : "|<", m->method_args[i]);
        free(id);
        id = n;
    }
    return id;
}
