/* `mantra pgo` output: the CLR text format (through mantra_pgo_text_write_*), the JSON document of
 * docs/cli.md ("mantra pgo") and the --top table. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_tool.h"
#include "tool.h"

/* Keyword values: manifest/clr/runtime.yaml (ClrEtwAll.man's Microsoft-Windows-DotNETRuntime). */
const pgo_unnamed_reason pgo_unnamed_reasons[PGO_UNNAMED_REASONS] = {
    [PGO_UNNAMED_TYPE_UNKNOWN] = {"type_unknown", "types in no BulkType or TypeLoadStop event (keywords Type 0x80000, "
                                                  "TypeDiagnostic 0x8000000000)"},
    [PGO_UNNAMED_TYPE_NAMELESS] = {"type_nameless", "types without a name (keyword TypeDiagnostic 0x8000000000 for "
                                                    "TypeLoadStop, or GCHeapAndTypeNames 0x1000000 for BulkType names)"},
    [PGO_UNNAMED_TYPE_DEPTH] = {"type_depth", "type arguments nested more than 16 deep"},
    [PGO_UNNAMED_METHOD_NO_DETAILS] = {"method_no_details", "methods without MethodDetails (keyword MethodDiagnostic "
                                                            "0x4000000000)"},
    [PGO_UNNAMED_METHOD_NAMELESS] = {"method_nameless", "methods that no MethodLoadVerbose, MethodJittingStarted or "
                                                        "rundown event names (keyword Jit 0x10)"},
    [PGO_UNNAMED_MIBC_TOKEN] = {"mibc_token", "handle tokens of a .mibc that this reader cannot name"},
    [PGO_UNNAMED_IMAGE_UNKNOWN] = {"image_unknown", "handles a ReadyToRun image's embedded data leaves unknown "
                                                    "(types outside its version bubble, methods)"},
    [PGO_UNNAMED_IMAGE_CELL] = {"image_cell", "import cells of a ReadyToRun image that this reader cannot name "
                                              "(types of other modules)"},
};

/* ---- text ------------------------------------------------------------------------------------ */

typedef struct text_ctx {
    FILE *out;
    const pgo_method *m;
    size_t *first; /* per record: index of its first value */
} text_ctx;

static int text_write(void *ctx, const char *text, size_t size) {
    text_ctx *t = ctx;
    return fwrite(text, 1, size, t->out) == size ? 0 : -1;
}

static const char *text_handle(void *ctx, size_t record, size_t element, int element_type, int64_t value) {
    (void)element_type;
    (void)value;
    text_ctx *t = ctx;
    return t->m->handle_names ? t->m->handle_names[t->first[record] + element] : NULL;
}

int pgo_write_text(FILE *out, const pgo_profile *p) {
    text_ctx t = {out, NULL, NULL};
    int rc = mantra_pgo_text_write_start(text_write, &t, (uint32_t)p->count);
    for (size_t i = 0; rc == 0 && i < p->count; i++) {
        pgo_method view;
        int owned = pgo_method_view(&p->methods[i], &view);
        if (owned < 0)
            return -1;
        const pgo_method *m = &view;
        size_t *first = malloc((m->data.records ? m->data.records : 1) * sizeof *first);
        if (first == NULL) {
            pgo_method_view_free(&view, owned);
            return -1;
        }
        size_t v = 0;
        for (size_t r = 0; r < m->data.records; r++) {
            first[r] = v;
            if (mantra_pgo_has_data(m->data.schema[r].kind))
                v += (size_t)m->data.schema[r].count;
        }
        t.m = m;
        t.first = first;
        /* codehash and methodhash are not in any event (pgo-format.md §7): written as 0. */
        mantra_pgo_text_method tm = {0, 0, m->il_size, m->name_space, m->name, m->signature,
                                     m->data.schema, m->data.records, m->data.values, m->data.value_count,
                                     text_handle, &t};
        rc = mantra_pgo_text_write_method(text_write, &t, &tm);
        free(first);
        pgo_method_view_free(&view, owned);
    }
    if (rc == 0)
        rc = mantra_pgo_text_write_end(text_write, &t);
    return rc;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void jstr(FILE *out, const char *s) { json_string(out, s, strlen(s)); }

static void json_values(FILE *out, const pgo_method *m, const mantra_pgo_schema *s, size_t v) {
    int type = s->kind & MANTRA_PGO_MARSHAL_MASK;
    fputs(",\"values\":[", out);
    for (int32_t k = 0; k < s->count; k++) {
        if (k)
            fputc(',', out);
        int64_t x = m->data.values[v + (size_t)k];
        if (type == MANTRA_PGO_TypeHandle || type == MANTRA_PGO_MethodHandle) {
            const char *name = m->handle_names ? m->handle_names[v + (size_t)k] : NULL;
            if (name)
                jstr(out, name);
            else
                fputs(x == 0 ? "\"NULL\"" : "\"UNKNOWN\"", out);
        } else if (type == MANTRA_PGO_FourByte) {
            fprintf(out, "%" PRIu32, (uint32_t)x);
        } else {
            fprintf(out, "%" PRIu64, (uint64_t)x);
        }
    }
    fputc(']', out);
}

int pgo_write_json(FILE *out, const pgo_profile *p) {
    const pgo_counts *c = &p->counts;
    fputs("{\"methods\":[", out);
    for (size_t i = 0; i < p->count; i++) {
        pgo_method view;
        int owned = pgo_method_view(&p->methods[i], &view);
        if (owned < 0)
            return -1;
        const pgo_method *m = &view;
        fputs(i ? ",\n{" : "\n{", out);
        fputs("\"module\":", out);
        jstr(out, m->module);
        fputs(",\"module_path\":", out);
        jstr(out, m->module_path);
        fputs(",\"pdb_guid\":", out);
        jstr(out, m->pdb_guid);
        fprintf(out, ",\"token\":%" PRIu32 ",\"namespace\":", m->token);
        jstr(out, m->name_space);
        fputs(",\"name\":", out);
        jstr(out, m->name);
        fputs(",\"signature\":", out);
        jstr(out, m->signature);
        fprintf(out, ",\"il_size\":%" PRIu32 ",\"runs\":%u,\"type\":", m->il_size, m->runs);
        if (m->owner_type)
            jstr(out, m->owner_type);
        else
            fputs("null", out);
        fputs(",\"method_args\":[", out);
        for (uint32_t k = 0; k < m->nmethod_args; k++) {
            if (k)
                fputc(',', out);
            jstr(out, m->method_args[k]);
        }
        fputs("],\"records\":[", out);
        size_t v = 0;
        for (size_t r = 0; r < m->data.records; r++) {
            const mantra_pgo_schema *s = &m->data.schema[r];
            const char *kn = mantra_pgo_kind_name(s->kind);
            fprintf(out, "%s{\"kind\":%" PRId32 ",\"kind_name\":", r ? "," : "", s->kind);
            if (kn)
                jstr(out, kn);
            else
                fputs("null", out);
            fprintf(out, ",\"il_offset\":%" PRId32 ",\"count\":%" PRId32 ",\"other\":%" PRId32, s->il_offset, s->count,
                    s->other);
            if (mantra_pgo_has_data(s->kind)) {
                json_values(out, m, s, v);
                v += (size_t)s->count;
            }
            fputc('}', out);
        }
        fputs("]}", out);
        pgo_method_view_free(&view, owned);
    }
    fprintf(out,
            "\n],\"stats\":{\"traces\":%" PRIu64 ",\"truncated_traces\":%" PRIu64 ",\"unreadable_traces\":%" PRIu64
            ",\"profiles\":%" PRIu64
            ",\"events\":%" PRIu64 ",\"bad_payloads\":%" PRIu64 ",\"chunks_dropped\":%" PRIu64
            ",\"discard_out_of_order\":%" PRIu64 ",\"discard_after_final\":%" PRIu64 ",\"incomplete\":%" PRIu64
            ",\"undecodable\":%" PRIu64 ",\"methods_read\":%" PRIu64 ",\"methods\":%zu,\"merged\":%" PRIu64
            ",\"merge_conflicts\":%" PRIu64 ",\"handles\":%" PRIu64 ",\"handles_unnamed\":%" PRIu64
            ",\"unnamed_by\":{",
            c->traces, c->truncated_traces, c->unreadable_traces, c->profiles, c->events, c->bad_payloads, c->chunks_dropped,
            c->discard_out_of_order, c->discard_after_final, c->incomplete, c->undecodable, c->methods_read, p->count,
            c->merged, c->merge_conflicts, c->handles, c->handles_unnamed);
    for (int r = 0; r < PGO_UNNAMED_REASONS; r++)
        fprintf(out, "%s\"%s\":%" PRIu64, r ? "," : "", pgo_unnamed_reasons[r].key, c->unnamed_by[r]);
    fputs("}}}\n", out);
    return ferror(out) ? -1 : 0;
}

/* ---- --top ----------------------------------------------------------------------------------- */

typedef struct hot {
    size_t method;
    uint64_t total;
} hot;

static uint64_t count_of(const mantra_pgo_schema *s, int64_t v) {
    return (s->kind & MANTRA_PGO_MARSHAL_MASK) == MANTRA_PGO_FourByte ? (uint64_t)(uint32_t)v : (uint64_t)v;
}

static int is_block(int32_t kind) { return (kind & MANTRA_PGO_DESCRIPTOR_MASK) == 0x40; }

/* Sum of the method's block counts (edge counts when it has no block count). */
static uint64_t method_total(const pgo_method *m) {
    uint64_t blocks = 0, edges = 0;
    size_t v = 0;
    for (size_t r = 0; r < m->data.records; r++) {
        const mantra_pgo_schema *s = &m->data.schema[r];
        if (!mantra_pgo_has_data(s->kind))
            continue;
        if (is_block(s->kind) && s->count == 1)
            blocks += count_of(s, m->data.values[v]);
        else if ((s->kind & MANTRA_PGO_DESCRIPTOR_MASK) == 0x180 && s->count == 1)
            edges += count_of(s, m->data.values[v]);
        v += (size_t)s->count;
    }
    return blocks ? blocks : edges;
}

static int hot_cmp(const void *a, const void *b) {
    const hot *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return x->method < y->method ? -1 : x->method > y->method;
}

#define TOP_BLOCKS 5

void pgo_write_top(FILE *out, const pgo_profile *p, size_t n) {
    hot *h = malloc((p->count ? p->count : 1) * sizeof *h);
    if (h == NULL)
        return;
    for (size_t i = 0; i < p->count; i++)
        h[i] = (hot){i, method_total(&p->methods[i])};
    qsort(h, p->count, sizeof *h, hot_cmp);
    if (n > p->count)
        n = p->count;
    fprintf(out, "%4s  %14s  %s\n", "rank", "block count", "method (module, token) / hottest blocks: IL offset, count");
    for (size_t i = 0; i < n; i++) {
        const pgo_method *m = &p->methods[h[i].method];
        fprintf(out, "%4zu  %14" PRIu64 "  %s%s%s (%s, 0x%08" PRIx32 ")\n", i + 1, h[i].total, m->name_space,
                m->name_space[0] ? "." : "", m->name, m->module, m->token);
        /* the method's hottest blocks, count descending, then IL offset */
        hot blocks[TOP_BLOCKS];
        size_t nb = 0, v = 0;
        for (size_t r = 0; r < m->data.records; r++) {
            const mantra_pgo_schema *s = &m->data.schema[r];
            if (!mantra_pgo_has_data(s->kind))
                continue;
            if (is_block(s->kind) && s->count == 1) {
                hot b = {(size_t)(uint32_t)s->il_offset, count_of(s, m->data.values[v])};
                size_t at = nb;
                while (at > 0 && hot_cmp(&blocks[at - 1], &b) > 0)
                    at--;
                if (at < TOP_BLOCKS) {
                    size_t last = nb < TOP_BLOCKS ? nb : TOP_BLOCKS - 1;
                    memmove(&blocks[at + 1], &blocks[at], (last - at) * sizeof *blocks);
                    blocks[at] = b;
                    if (nb < TOP_BLOCKS)
                        nb++;
                }
            }
            v += (size_t)s->count;
        }
        for (size_t b = 0; b < nb; b++)
            fprintf(out, "%4s  %14" PRIu64 "    IL_%04zx\n", "", blocks[b].total, blocks[b].method);
    }
    free(h);
}
