/* Reading and writing a method's counters as a whole (mantra/pgo.h): snapshots (each element read
 * atomically, optionally reset for delta collections), reset, and initial values from loaded data.
 * A FourByte counter's value is its shared cell plus the sum of its per-thread cells
 * (thread_counters.c); only the shared cell is ever written here, so threads keep counting into
 * their own cells undisturbed: a reset stores minus the per-thread sum it read into the shared
 * cell (with an atomic exchange, so shared increments are not lost either). Values follow the serializer of dotnet/runtime src/coreclr/vm/pgo.cpp: a FourByte
 * slot read as a signed int32, EightByte and handle slots as 64-bit. */
#include <stdlib.h>
#include <string.h>

#include "pgo-internal.h"

static int64_t read_elem(unsigned char *p, int elem, int reset, uint32_t slot) {
    switch (elem) {
    case MANTRA_PGO_FourByte: {
        uint32_t *c = (uint32_t *)(void *)p;
        uint32_t threads = slot != PG_NO_SLOT ? pg_thread_sum(slot) : 0u;
        uint32_t v = reset ? PG_XCHG(c, 0u - threads) : PG_LOAD(c);
        return (int64_t)(int32_t)(uint32_t)(v + threads);
    }
    case MANTRA_PGO_EightByte: {
        uint64_t *c = (uint64_t *)(void *)p;
        uint64_t v = reset ? PG_XCHG(c, (uint64_t)0) : PG_LOAD(c);
        return (int64_t)v;
    }
    default: { /* handles are kept by a reset: they name what was seen, they are not counts */
        uintptr_t *h = (uintptr_t *)(void *)p;
        return (int64_t)(uint64_t)PG_LOAD(h);
    }
    }
}

static void write_elem(unsigned char *p, int elem, int64_t v, uint32_t slot) {
    switch (elem) {
    case MANTRA_PGO_FourByte: {
        uint32_t threads = slot != PG_NO_SLOT ? pg_thread_sum(slot) : 0u;
        PG_STORE((uint32_t *)(void *)p, (uint32_t)(uint64_t)v - threads);
        break;
    }
    case MANTRA_PGO_EightByte:
        PG_STORE((uint64_t *)(void *)p, (uint64_t)v);
        break;
    default:
        PG_STORE((uintptr_t *)(void *)p, (uintptr_t)(uint64_t)v);
        break;
    }
}

/* The per-thread slot of element k of record r (PG_NO_SLOT for elements other than FourByte). */
static uint32_t slot_of(const pg_instr *in, size_t r, int32_t k) {
    return in->slots[r] == PG_NO_SLOT ? PG_NO_SLOT : in->slots[r] + (uint32_t)k;
}

int mantra_pgo_snapshot(const mantra_pgo_method *method, unsigned flags, mantra_pgo_data *out) {
    if (out == NULL)
        return MANTRA_EINVAL;
    memset(out, 0, sizeof *out);
    const pg_instr *in = pg_method_instr(method);
    if (in == NULL)
        return MANTRA_EINVAL;
    int64_t n = mantra_pgo_value_count(in->schema, in->records);
    out->schema = malloc(in->records * sizeof *out->schema);
    out->values = malloc(n > 0 ? (size_t)n * sizeof *out->values : 1);
    if (out->schema == NULL || out->values == NULL) {
        mantra_pgo_data_free(out);
        return MANTRA_ENOMEM;
    }
    memcpy(out->schema, in->schema, in->records * sizeof *out->schema);
    out->records = in->records;
    int reset = (flags & MANTRA_PGO_SNAPSHOT_RESET) != 0;
    if (reset && pg_lock() != MANTRA_OK) {
        mantra_pgo_data_free(out);
        return MANTRA_ENOMEM;
    }
    size_t vi = 0;
    for (size_t r = 0; r < in->records; r++) {
        int elem = pg_elem(in->schema[r].kind);
        if (elem == MANTRA_PGO_None)
            continue;
        size_t es = (size_t)mantra_pgo_element_size(in->schema[r].kind, (unsigned)sizeof(void *));
        unsigned char *p = in->data + in->offsets[r];
        for (int32_t k = 0; k < in->schema[r].count; k++, p += es)
            out->values[vi++] = read_elem(p, elem, reset, slot_of(in, r, k));
    }
    if (reset)
        pg_unlock();
    out->value_count = vi;
    return MANTRA_OK;
}

void mantra_pgo_reset(const mantra_pgo_method *method) {
    const pg_instr *in = pg_method_instr(method);
    if (in == NULL || pg_lock() != MANTRA_OK)
        return;
    for (size_t r = 0; r < in->records; r++) {
        int elem = pg_elem(in->schema[r].kind);
        if (elem == MANTRA_PGO_None)
            continue;
        size_t es = (size_t)mantra_pgo_element_size(in->schema[r].kind, (unsigned)sizeof(void *));
        unsigned char *p = in->data + in->offsets[r];
        for (int32_t k = 0; k < in->schema[r].count; k++, p += es)
            write_elem(p, elem, 0, slot_of(in, r, k));
    }
    pg_unlock();
}

int mantra_pgo_set_data(mantra_pgo_method *method, const mantra_pgo_data *data) {
    if (method == NULL || data == NULL)
        return MANTRA_EINVAL;
    int64_t n = mantra_pgo_value_count(data->schema, data->records);
    if (n < 0 || (uint64_t)n != data->value_count || (data->values == NULL && n > 0))
        return MANTRA_EINVAL;
    const pg_instr *in = pg_method_instr(method);
    if (in == NULL) {
        int rc = mantra_pgo_method_instrument(method, data->schema, data->records);
        if (rc != MANTRA_OK && rc != MANTRA_ESTATE)
            return rc;
        in = pg_method_instr(method);
    }
    if (pg_lock() != MANTRA_OK)
        return MANTRA_ENOMEM;
    int stored = 0;
    size_t next = 0; /* records of the method are matched in order */
    size_t vi = 0;
    for (size_t r = 0; r < data->records; r++) {
        const mantra_pgo_schema *s = &data->schema[r];
        size_t nv = mantra_pgo_has_data(s->kind) ? (size_t)s->count : 0;
        size_t m = next;
        while (m < in->records && memcmp(&in->schema[m], s, sizeof *s) != 0)
            m++;
        if (m < in->records) {
            int elem = pg_elem(s->kind);
            size_t es = (size_t)mantra_pgo_element_size(s->kind, (unsigned)sizeof(void *));
            unsigned char *p = in->data + in->offsets[m];
            for (size_t k = 0; k < nv; k++, p += es)
                write_elem(p, elem, data->values[vi + k], slot_of(in, m, (int32_t)k));
            stored++;
            next = m + 1;
        }
        vi += nv;
    }
    pg_unlock();
    return stored;
}
