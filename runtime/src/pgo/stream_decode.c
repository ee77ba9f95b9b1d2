/* Decoding one method's PgoFormat record stream (mantra/pgo.h). Facts: dotnet/runtime
 * src/coreclr/inc/pgo_formatprocessing.h (ReadInstrumentationSchemaWithLayout / ProcessInteger
 * state machine: the C++ reader applies schema fields as int32) and src/coreclr/tools/Common/Pgo/
 * PgoFormat.cs (ParsePgoData with longsAreCompressed: the deltas per accumulator, "Partial
 * Instrumentation Data" when the integers end before Done). Everything is checked before it is
 * trusted: a count is never larger than the bytes left. */
#include <stdlib.h>
#include <string.h>

#include "common/grow-internal.h"
#include "pgo-internal.h"

typedef struct dec {
    const uint8_t *p;
    size_t size, pos;
    size_t where; /* offset of the integer that failed */
} dec;

static int next(dec *d, int64_t *v) {
    d->where = d->pos;
    int n = mantra_pgo_int_decode(d->p + d->pos, d->size - d->pos, v);
    if (n < 0)
        return n;
    d->pos += (size_t)n;
    return MANTRA_OK;
}

static int32_t apply32(int32_t prev, int64_t delta) { return (int32_t)((uint32_t)prev + (uint32_t)(uint64_t)delta); }

void mantra_pgo_data_free(mantra_pgo_data *d) {
    if (d == NULL)
        return;
    free(d->schema);
    free(d->values);
    memset(d, 0, sizeof *d);
}

int mantra_pgo_decode(const uint8_t *bytes, size_t size, unsigned pointer_size, mantra_pgo_data *out, size_t *where) {
    if (out == NULL || (bytes == NULL && size > 0) || (pointer_size != 4 && pointer_size != 8))
        return MANTRA_EINVAL;
    memset(out, 0, sizeof *out);
    dec d = {bytes, size, 0, 0};
    size_t schema_cap = 0, values_cap = 0;
    mantra_pgo_schema prev = {0, 0, 0, 0};
    uint64_t acc[3] = {0, 0, 0};
    int rc;
    for (;;) {
        int64_t mask;
        if ((rc = next(&d, &mask)) != MANTRA_OK)
            goto fail;
        if (mask <= 0 || mask > 0xF) {
            rc = MANTRA_EFORMAT;
            goto fail;
        }
        mantra_pgo_schema s = prev;
        int64_t delta;
        if (mask & 1) {
            if ((rc = next(&d, &delta)) != MANTRA_OK)
                goto fail;
            s.il_offset = apply32(prev.il_offset, delta);
        }
        if (mask & 2) {
            if ((rc = next(&d, &delta)) != MANTRA_OK)
                goto fail;
            s.kind = apply32(prev.kind, delta);
        }
        if (mask & 4) {
            if ((rc = next(&d, &delta)) != MANTRA_OK)
                goto fail;
            s.count = apply32(prev.count, delta);
        }
        if (mask & 8) {
            if ((rc = next(&d, &delta)) != MANTRA_OK)
                goto fail;
            s.other = apply32(prev.other, delta);
        }
        if (s.kind == MANTRA_PGO_None)
            break;
        if (!pg_elem_known(s.kind) || s.count < 0 ||
            (pg_elem(s.kind) == MANTRA_PGO_None && s.count > MANTRA_PGO_NONE_COUNT_MAX)) {
            rc = MANTRA_EFORMAT;
            goto fail;
        }
        if (cm_grow((void **)&out->schema, &schema_cap, out->records + 1, sizeof *out->schema, 8) != 0) {
            rc = MANTRA_ENOMEM;
            goto fail;
        }
        out->schema[out->records++] = s;
        int elem = pg_elem(s.kind);
        if (elem != MANTRA_PGO_None && s.count > 0) {
            /* every value takes at least one byte */
            if ((size_t)s.count > d.size - d.pos) {
                d.where = d.size;
                rc = MANTRA_ETRUNCATED;
                goto fail;
            }
            if (cm_grow((void **)&out->values, &values_cap, out->value_count + (size_t)s.count, sizeof *out->values,
                        16) != 0) {
                rc = MANTRA_ENOMEM;
                goto fail;
            }
            uint64_t *a = &acc[elem <= MANTRA_PGO_EightByte ? 0 : elem - MANTRA_PGO_EightByte];
            for (int32_t k = 0; k < s.count; k++) {
                if ((rc = next(&d, &delta)) != MANTRA_OK)
                    goto fail;
                uint64_t v = *a + (uint64_t)delta;
                /* a 4-byte producer's handle fits in 32 bits, zero- or sign-extended */
                if (elem >= MANTRA_PGO_TypeHandle && pointer_size == 4 && v > UINT32_MAX &&
                    !((int64_t)v < 0 && (int64_t)v >= INT32_MIN)) {
                    rc = MANTRA_EFORMAT;
                    goto fail;
                }
                *a = v;
                out->values[out->value_count++] = (int64_t)v;
            }
        }
        prev = s;
    }
    if (where != NULL)
        *where = d.pos;
    return MANTRA_OK;
fail:
    mantra_pgo_data_free(out);
    if (where != NULL)
        *where = d.where;
    return rc;
}
