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
 * 2^32-1); HandleHistogramTypes/Methods and ValueHistogram are joined; Version takes the maximum and
 * NumRuns the sum of Other, a set without NumRuns counting as one run; records of either set that
 * match nothing are kept. So that a merge is associative and commutative (profiles can be reduced
 * in any grouping and order) and its memory bounded however many profiles are merged, the result is
 * canonical: a joined histogram is a multiset (each distinct entry, by name or by value when it has
 * none, once, with a weight: pgo_method.weights; the formats repeat it that many times), records
 * are ordered by (ILOffset, kind, Other) with Version and NumRuns last (a class profile's count
 * record stays before its histogram, whose kind is greater; no data record follows a size-0 one),
 * and of two records that cannot be merged (another Count, or a kind such as GetLikelyClass) the
 * greater in a total order is kept, and the conflict counted (merge_conflicts). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_tool.h"

const char *pgo_cmd_name = "pgo";

void pgo_errf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mantra %s: ", pgo_cmd_name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

typedef struct rec {
    mantra_pgo_schema s;
    int64_t *vals;
    char **names;
    uint32_t *w; /* per value: its weight (NULL: 1 each) */
} rec;

typedef struct recs {
    rec *r;
    size_t n, cap;
} recs;

static void recs_free(recs *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->r[i].vals);
        free(l->r[i].names); /* the strings belong to the methods' handle_names */
        free(l->r[i].w);
    }
    free(l->r);
}

static rec *recs_push(recs *l, const mantra_pgo_schema *s, const int64_t *vals, char *const *names,
                      const uint32_t *w) {
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
    e->w = w ? calloc(c ? c : 1, sizeof *e->w) : NULL;
    if (e->vals == NULL || e->names == NULL || (w && e->w == NULL)) {
        free(e->vals);
        free(e->names);
        free(e->w);
        return NULL;
    }
    if (c) {
        memcpy(e->vals, vals, c * sizeof *vals);
        if (names)
            memcpy(e->names, names, c * sizeof *names);
        if (w)
            memcpy(e->w, w, c * sizeof *w);
    }
    l->n++;
    return e;
}

/* Splits a method's data into records (names borrowed from m->handle_names). */
static int split(const pgo_method *m, recs *out) {
    size_t v = 0;
    for (size_t i = 0; i < m->data.records; i++) {
        const mantra_pgo_schema *s = &m->data.schema[i];
        if (recs_push(out, s, m->data.values + v, m->handle_names ? m->handle_names + v : NULL,
                      m->weights ? m->weights + v : NULL) == NULL)
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

/* One histogram entry: its value, name and weight. */
typedef struct entry {
    int64_t val;
    char *name;
    uint64_t w;
} entry;

/* The canonical order of histogram entries: named ones by name, then unnamed ones by value. */
static int entry_cmp(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if ((x->name == NULL) != (y->name == NULL))
        return x->name == NULL ? 1 : -1;
    if (x->name) {
        int c = strcmp(x->name, y->name);
        if (c)
            return c;
    }
    return x->val < y->val ? -1 : x->val > y->val;
}

/* A histogram of both records as a multiset: every distinct entry (by name, or by value when it has
 * none) once, with the sum of its weights, in canonical order; into dst. An associative and
 * commutative merge whose size is the number of distinct entries, however many profiles are merged. */
static int merge_histogram(rec *dst, const rec *src) {
    size_t a = (size_t)dst->s.count, b = (size_t)src->s.count;
    entry *e = malloc((a + b ? a + b : 1) * sizeof *e);
    if (e == NULL)
        return -1;
    for (size_t i = 0; i < a + b; i++) {
        const rec *r = i < a ? dst : src;
        size_t k = i < a ? i : i - a;
        e[i] = (entry){r->vals[k], r->names[k], r->w ? r->w[k] : 1};
    }
    if (a + b > 1)
        qsort(e, a + b, sizeof *e, entry_cmp);
    size_t n = 0;
    for (size_t i = 0; i < a + b; i++) {
        if (n && entry_cmp(&e[n - 1], &e[i]) == 0) {
            e[n - 1].w = e[n - 1].w + e[i].w > UINT32_MAX ? UINT32_MAX : e[n - 1].w + e[i].w;
            continue;
        }
        e[n++] = e[i];
    }
    int64_t *v = realloc(dst->vals, (n ? n : 1) * sizeof *v);
    if (v)
        dst->vals = v;
    char **names = realloc(dst->names, (n ? n : 1) * sizeof *names);
    if (names)
        dst->names = names;
    uint32_t *w = realloc(dst->w, (n ? n : 1) * sizeof *w);
    if (w)
        dst->w = w;
    if (v == NULL || names == NULL || w == NULL) {
        free(e);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        v[i] = e[i].val;
        names[i] = e[i].name;
        w[i] = (uint32_t)e[i].w;
    }
    dst->s.count = (int32_t)n;
    free(e);
    return 0;
}

/* A total order of records (for a conflict: the greater one is kept, whichever side it came from). */
static int rec_cmp(const rec *x, const rec *y) {
    const mantra_pgo_schema *a = &x->s, *b = &y->s;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->count != b->count)
        return a->count < b->count ? -1 : 1;
    if (a->other != b->other)
        return a->other < b->other ? -1 : 1;
    size_t c = mantra_pgo_has_data(a->kind) ? (size_t)a->count : 0;
    for (size_t i = 0; i < c; i++) {
        if (x->vals[i] != y->vals[i])
            return x->vals[i] < y->vals[i] ? -1 : 1;
        int n = strcmp(x->names[i] ? x->names[i] : "", y->names[i] ? y->names[i] : "");
        if (n)
            return n;
    }
    return 0;
}

/* Replaces dst's values by src's (a conflict that src wins). */
static int take(rec *dst, const rec *src) {
    rec copy = {src->s, NULL, NULL, NULL};
    size_t c = mantra_pgo_has_data(src->s.kind) ? (size_t)src->s.count : 0;
    copy.vals = malloc((c ? c : 1) * sizeof *copy.vals);
    copy.names = malloc((c ? c : 1) * sizeof *copy.names);
    copy.w = src->w ? malloc((c ? c : 1) * sizeof *copy.w) : NULL;
    if (copy.vals == NULL || copy.names == NULL || (src->w && copy.w == NULL)) {
        free(copy.vals);
        free(copy.names);
        free(copy.w);
        return -1;
    }
    memcpy(copy.vals, src->vals, c * sizeof *copy.vals);
    memcpy(copy.names, src->names, c * sizeof *copy.names);
    if (src->w)
        memcpy(copy.w, src->w, c * sizeof *copy.w);
    free(dst->vals);
    free(dst->names);
    free(dst->w);
    *dst = copy;
    return 0;
}

/* The canonical order of a merged method's records: by ILOffset, kind, Other (a class profile's
 * count record stays right before its histogram, whose kind is greater), Version and NumRuns last. */
static int rec_order(const void *a, const void *b) {
    const mantra_pgo_schema *x = &((const rec *)a)->s, *y = &((const rec *)b)->s;
    int xs = !mantra_pgo_has_data(x->kind) && (x->kind == MANTRA_PGO_Version || x->kind == MANTRA_PGO_NumRuns);
    int ys = !mantra_pgo_has_data(y->kind) && (y->kind == MANTRA_PGO_Version || y->kind == MANTRA_PGO_NumRuns);
    if (xs != ys)
        return xs - ys;
    if (x->il_offset != y->il_offset)
        return x->il_offset < y->il_offset ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->other < y->other ? -1 : x->other > y->other;
}

/* Merges the records of `add` into `into` (runs: NumRuns of each side, 1 when absent). The result
 * does not depend on which side is which, nor on how a series of profiles is grouped: sums, the
 * maximum for Version and for conflicts, histograms as multisets, records in canonical order. */
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
            if (s->kind == MANTRA_PGO_NumRuns) {
                *runs += s->other;
                continue;
            }
            if (s->kind == MANTRA_PGO_Version) {
                have_version = 1;
                if (s->other > version)
                    version = s->other;
                continue;
            }
            rec *m = find(&out, s);
            int32_t d = DESC(s->kind);
            if (m == NULL) {
                if (recs_push(&out, s, l->r[i].vals, l->r[i].names, l->r[i].w) == NULL)
                    goto oom;
                /* a histogram of one side alone is made canonical too (its own duplicates joined) */
                if (concatenated(d) && mantra_pgo_has_data(s->kind)) {
                    rec empty = {*s, NULL, NULL, NULL};
                    empty.s.count = 0;
                    if (merge_histogram(&out.r[out.n - 1], &empty) < 0)
                        goto oom;
                }
            } else if (summed(d) && m->s.count == 1 && s->count == 1 && m->s.kind == s->kind) {
                m->vals[0] = add_values(m->s.kind, m->vals[0], l->r[i].vals[0]);
            } else if (concatenated(d) && m->s.kind == s->kind) {
                if (merge_histogram(m, &l->r[i]) < 0)
                    goto oom;
            } else {
                c->merge_conflicts++;
                if (rec_cmp(&l->r[i], m) > 0 && take(m, &l->r[i]) < 0)
                    goto oom;
            }
        }
    }
    if (out.n > 1)
        qsort(out.r, out.n, sizeof *out.r, rec_order);
    mantra_pgo_schema s;
    if (have_version) {
        s = (mantra_pgo_schema){MANTRA_PGO_Version, 0, 1, version};
        if (recs_push(&out, &s, NULL, NULL, NULL) == NULL)
            goto oom;
    }
    int64_t runs = (runs_into ? runs_into : 1) + (runs_add ? runs_add : 1);
    s = (mantra_pgo_schema){MANTRA_PGO_NumRuns, 0, 1, runs > INT32_MAX ? INT32_MAX : (int32_t)runs};
    if (recs_push(&out, &s, NULL, NULL, NULL) == NULL)
        goto oom;
    recs_free(into);
    *into = out;
    return 0;
oom:
    recs_free(&out);
    return -1;
}

/* Rebuilds m's data, handle_names and weights from l (the names are borrowed from both methods;
 * merge_method frees the old arrays and the strings no longer held). */
static int join(pgo_method *m, const recs *l) {
    size_t nv = 0;
    int weighted = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (mantra_pgo_has_data(l->r[i].s.kind))
            nv += (size_t)l->r[i].s.count;
        weighted |= l->r[i].w != NULL;
    }
    mantra_pgo_schema *schema = malloc((l->n ? l->n : 1) * sizeof *schema);
    int64_t *vals = malloc((nv ? nv : 1) * sizeof *vals);
    char **names = calloc(nv ? nv : 1, sizeof *names);
    uint32_t *w = weighted ? malloc((nv ? nv : 1) * sizeof *w) : NULL;
    if (schema == NULL || vals == NULL || names == NULL || (weighted && w == NULL)) {
        free(schema);
        free(vals);
        free(names);
        free(w);
        return -1;
    }
    size_t v = 0;
    for (size_t i = 0; i < l->n; i++) {
        schema[i] = l->r[i].s;
        if (!mantra_pgo_has_data(l->r[i].s.kind))
            continue;
        size_t c = (size_t)l->r[i].s.count;
        memcpy(vals + v, l->r[i].vals, c * sizeof *vals);
        memcpy(names + v, l->r[i].names, c * sizeof *names);
        for (size_t k = 0; w && k < c; k++)
            w[v + k] = l->r[i].w ? l->r[i].w[k] : 1;
        v += c;
    }
    mantra_pgo_data_free(&m->data);
    free(m->weights); /* the old handle_names array: the caller's (merge_method) */
    m->data = (mantra_pgo_data){schema, l->n, vals, nv};
    m->handle_names = names;
    m->weights = w;
    return 0;
}

/* Frees the strings of names[0..n) that the merged method does not hold. */
static void free_dropped(char **names, size_t n, const pgo_method *merged) {
    for (size_t i = 0; names && i < n; i++) {
        if (names[i] == NULL)
            continue;
        int kept = 0;
        for (size_t j = 0; j < merged->data.value_count && !kept; j++)
            kept = merged->handle_names[j] == names[i];
        if (!kept)
            free(names[i]);
    }
}

/* Merges add into into. The handle-name strings of both move into the merged method, or are freed
 * (histogram entries joined with an equal one, the losing record of a conflict). */
static int merge_method(pgo_method *into, pgo_method *add, pgo_counts *c) {
    recs a = {0}, b = {0};
    char **into_names = into->handle_names, **add_names = add->handle_names;
    size_t n_into = into->data.value_count, n_add = add->data.value_count;
    int rc = -1;
    if (split(into, &a) == 0 && split(add, &b) == 0 && merge_recs(&a, &b, c) == 0 && join(into, &a) == 0)
        rc = 0;
    if (rc == 0) {
        free_dropped(into_names, n_into, into);
        free_dropped(add_names, n_add, into);
        free(into_names);
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
    free(m->weights);
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

int pgo_name_handles(pgo_method *m, pgo_counts *c, pgo_handle_namer fn, void *ctx) {
    m->handle_names = calloc(m->data.value_count ? m->data.value_count : 1, sizeof *m->handle_names);
    if (m->handle_names == NULL)
        return -2;
    size_t v = 0;
    for (size_t r = 0; r < m->data.records; r++) {
        const mantra_pgo_schema *s = &m->data.schema[r];
        if (!mantra_pgo_has_data(s->kind))
            continue;
        int elem = s->kind & MANTRA_PGO_MARSHAL_MASK;
        for (int32_t k = 0; k < s->count; k++, v++) {
            if ((elem != MANTRA_PGO_TypeHandle && elem != MANTRA_PGO_MethodHandle) || m->data.values[v] == 0)
                continue;
            int reason = PGO_UNNAMED_OUT_OF_MEMORY;
            m->handle_names[v] = fn(ctx, elem, &m->data.values[v], &reason);
            if (m->handle_names[v] == NULL && reason == PGO_HANDLE_NOT_COUNTED)
                continue;
            c->handles++;
            if (m->handle_names[v] == NULL) {
                if (reason == PGO_UNNAMED_OUT_OF_MEMORY)
                    return -2;
                c->handles_unnamed++;
                c->unnamed_by[reason]++;
            }
        }
    }
    return 0;
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

int pgo_method_view(const pgo_method *m, pgo_method *view) {
    *view = *m;
    if (m->weights == NULL)
        return 0;
    size_t nv = 0, v = 0;
    mantra_pgo_schema *schema = malloc((m->data.records ? m->data.records : 1) * sizeof *schema);
    if (schema == NULL)
        return -1;
    for (size_t r = 0; r < m->data.records; r++) {
        schema[r] = m->data.schema[r];
        if (!mantra_pgo_has_data(schema[r].kind))
            continue;
        uint64_t sum = 0;
        for (int32_t k = 0; k < schema[r].count; k++)
            sum += m->weights[v++];
        schema[r].count = sum > INT32_MAX ? INT32_MAX : (int32_t)sum;
        nv += (size_t)schema[r].count;
    }
    int64_t *vals = malloc((nv ? nv : 1) * sizeof *vals);
    char **names = malloc((nv ? nv : 1) * sizeof *names);
    if (vals == NULL || names == NULL) {
        free(schema);
        free(vals);
        free(names);
        return -1;
    }
    size_t out = 0;
    v = 0;
    for (size_t r = 0; r < m->data.records; r++) {
        if (!mantra_pgo_has_data(m->data.schema[r].kind))
            continue;
        size_t room = (size_t)schema[r].count;
        for (int32_t k = 0; k < m->data.schema[r].count; k++, v++)
            for (uint32_t rep = 0; rep < m->weights[v] && room; rep++, room--) {
                vals[out] = m->data.values[v];
                names[out++] = m->handle_names ? m->handle_names[v] : NULL;
            }
    }
    view->data = (mantra_pgo_data){schema, m->data.records, vals, nv};
    view->handle_names = names;
    view->weights = NULL;
    return 1;
}

void pgo_method_view_free(pgo_method *view, int owned) {
    if (owned == 1) {
        mantra_pgo_data_free(&view->data);
        free(view->handle_names);
    }
}
