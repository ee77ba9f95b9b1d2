/* Fuzz target: the CLR PGO text parser (mantra_pgo_text_parse). Every method it keeps is written
 * back with the text writer (when the writer accepts it) and parsed again: the same schema, values
 * and handle names must come back. Seeds: tests/pgo/corpus/text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/pgo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct names_ctx {
    const mantra_pgo_text_entry *e;
    size_t *first; /* first value index of each record */
} names_ctx;

static const char *name_of(void *ctx, size_t record, size_t element, int elem, int64_t value) {
    (void)elem;
    (void)value;
    names_ctx *n = ctx;
    return n->e->handle_names[n->first[record] + element];
}

static int same_names(const char *a, const char *b) { return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0; }

static void rewrite(const mantra_pgo_text_entry *e) {
    size_t *first = malloc((e->data.records + 1) * sizeof *first);
    if (first == NULL)
        abort();
    size_t vi = 0;
    for (size_t r = 0; r < e->data.records; r++) {
        first[r] = vi;
        if (mantra_pgo_has_data(e->data.schema[r].kind))
            vi += (size_t)e->data.schema[r].count;
    }
    names_ctx nc = {e, first};
    mantra_pgo_text_method m = {e->codehash, e->methodhash, e->il_size, "C", "M", "S", e->data.schema,
                                e->data.records, e->data.values, e->data.value_count, name_of, &nc};
    mantra_pgo_text_buffer b = {0};
    int rc = mantra_pgo_text_write_start(mantra_pgo_text_buffer_write, &b, 1);
    if (rc == 0)
        rc = mantra_pgo_text_write_method(mantra_pgo_text_buffer_write, &b, &m);
    if (rc == 0) {
        mantra_pgo_text *t = NULL;
        if (mantra_pgo_text_parse(b.data, b.size, "again", &t) != MANTRA_OK || mantra_pgo_text_method_count(t) != 1 ||
            mantra_pgo_text_error_count(t) != 0)
            abort();
        const mantra_pgo_text_entry *f = mantra_pgo_text_entry_at(t, 0);
        if (f->codehash != e->codehash || f->methodhash != e->methodhash || f->il_size != e->il_size ||
            f->data.records != e->data.records || f->data.value_count != e->data.value_count ||
            (e->data.records > 0 &&
             memcmp(f->data.schema, e->data.schema, e->data.records * sizeof *e->data.schema) != 0) ||
            (e->data.value_count > 0 &&
             memcmp(f->data.values, e->data.values, e->data.value_count * sizeof *e->data.values) != 0))
            abort();
        for (size_t i = 0; i < e->data.value_count; i++)
            if (!same_names(f->handle_names[i], e->handle_names[i]))
                abort();
        mantra_pgo_text_free(t);
    }
    mantra_pgo_text_buffer_free(&b);
    free(first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mantra_pgo_text *t = NULL;
    if (mantra_pgo_text_parse((const char *)data, size, "fuzz.txt", &t) != MANTRA_OK)
        return 0;
    for (size_t i = 0; i < mantra_pgo_text_error_count(t) && i < 4; i++)
        if (mantra_pgo_text_error(t, i) == NULL)
            abort();
    for (size_t i = 0; i < mantra_pgo_text_method_count(t); i++)
        rewrite(mantra_pgo_text_entry_at(t, i));
    mantra_pgo_text_free(t);
    return 0;
}
