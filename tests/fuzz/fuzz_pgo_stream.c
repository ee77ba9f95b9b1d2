/* Fuzz target: the PgoFormat record stream decoder (mantra_pgo_decode) with 8- and 4-byte pointers.
 * Whatever decodes and is a schema the encoder accepts must re-encode and decode to the same records
 * and values (FourByte values compared as the int32 the format keeps); the compressed-integer
 * decoder is run over every offset. Seeds: tests/pgo/corpus/stream. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/pgo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile int64_t sink;

static int64_t norm(int32_t kind, int64_t v) {
    return (kind & MANTRA_PGO_MARSHAL_MASK) == MANTRA_PGO_FourByte ? (int64_t)(int32_t)(uint32_t)(uint64_t)v : v;
}

static void round_trip(const mantra_pgo_data *d) {
    if (mantra_pgo_schema_check(d->schema, d->records, NULL) != MANTRA_OK)
        return;
    int64_t n = mantra_pgo_encode(d->schema, d->records, d->values, d->value_count, NULL, 0);
    if (n <= 0)
        abort();
    uint8_t *buf = malloc((size_t)n);
    if (buf == NULL || mantra_pgo_encode(d->schema, d->records, d->values, d->value_count, buf, (size_t)n) != n)
        abort();
    mantra_pgo_data e;
    size_t where = 0;
    if (mantra_pgo_decode(buf, (size_t)n, 8, &e, &where) != MANTRA_OK || where != (size_t)n)
        abort();
    if (e.records != d->records || memcmp(e.schema, d->schema, d->records * sizeof *d->schema) != 0 ||
        e.value_count != d->value_count)
        abort();
    size_t vi = 0;
    for (size_t r = 0; r < d->records; r++) {
        if (!mantra_pgo_has_data(d->schema[r].kind))
            continue;
        for (int32_t k = 0; k < d->schema[r].count; k++, vi++)
            if (e.values[vi] != norm(d->schema[r].kind, d->values[vi]))
                abort();
    }
    mantra_pgo_data_free(&e);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (unsigned ptr = 4; ptr <= 8; ptr += 4) {
        mantra_pgo_data d;
        size_t where = 0;
        int rc = mantra_pgo_decode(data, size, ptr, &d, &where);
        if (where > size)
            abort();
        if (rc == MANTRA_OK) {
            size_t bytes = 0;
            if (mantra_pgo_layout(d.schema, d.records, ptr, NULL, &bytes) == MANTRA_OK)
                sink += (int64_t)bytes;
            round_trip(&d);
            mantra_pgo_data_free(&d);
        } else if (d.schema != NULL || d.values != NULL || d.records != 0) {
            abort(); /* failures leave the output empty */
        }
    }
    for (size_t i = 0; i < size; i++) {
        int64_t v;
        int n = mantra_pgo_int_decode(data + i, size - i, &v);
        if (n > 0) {
            uint8_t b[MANTRA_PGO_INT_MAX_BYTES];
            size_t m = mantra_pgo_int_encode(v, b);
            int64_t w;
            if (mantra_pgo_int_decode(b, m, &w) != (int)m || w != v || m > (size_t)n)
                abort();
        }
    }
    return 0;
}
