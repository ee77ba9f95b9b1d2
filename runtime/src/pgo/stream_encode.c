/* Encoding one method's schema and data as the PgoFormat record stream (mantra/pgo.h). Facts:
 * dotnet/runtime src/coreclr/inc/pgo_formatprocessing.h (SchemaAndDataWriter: AppendSchema,
 * AppendDataFromLastSchema, Finish) and src/coreclr/tools/Common/Pgo/PgoFormat.cs (EncodePgoData):
 * per record a change mask and the changed fields' differences, then Count data differences per
 * accumulator, and a final record changing Kind to Done. */
#include "pgo-internal.h"

typedef struct enc {
    uint8_t *out;
    size_t cap;
    uint64_t size; /* bytes of the whole encoding so far */
} enc;

static void put(enc *e, int64_t v) {
    uint8_t b[MANTRA_PGO_INT_MAX_BYTES];
    size_t n = mantra_pgo_int_encode(v, b);
    if (e->size + n <= e->cap)
        for (size_t i = 0; i < n; i++)
            e->out[e->size + i] = b[i];
    e->size += n;
}

/* Differences of the int32 fields are taken in 64-bit arithmetic, as the runtime's writer does (a
 * .NET 10 trace has Other going from 0x80000000 to 46 as +2147483694, a 9-byte integer); readers
 * apply them truncated to int32, so either width decodes alike, and this one is byte-identical. */
static int64_t diff32(int32_t now, int32_t before) { return (int64_t)now - (int64_t)before; }

int64_t mantra_pgo_encode(const mantra_pgo_schema *schema, size_t records, const int64_t *values, size_t value_count,
                          uint8_t *out, size_t cap) {
    if (mantra_pgo_schema_check(schema, records, NULL) != MANTRA_OK)
        return MANTRA_EINVAL;
    int64_t need = mantra_pgo_value_count(schema, records);
    if (need < 0 || (uint64_t)need != value_count || (values == NULL && value_count > 0) || (out == NULL && cap > 0))
        return MANTRA_EINVAL;
    enc e = {out, cap, 0};
    mantra_pgo_schema prev = {0, 0, 0, 0};
    /* accumulators: [0] FourByte and EightByte, [1] TypeHandle, [2] MethodHandle */
    uint64_t acc[3] = {0, 0, 0};
    size_t vi = 0;
    for (size_t i = 0; i < records; i++) {
        const mantra_pgo_schema *s = &schema[i];
        int64_t mask = (s->il_offset != prev.il_offset ? 1 : 0) | (s->kind != prev.kind ? 2 : 0) |
                       (s->count != prev.count ? 4 : 0) | (s->other != prev.other ? 8 : 0);
        put(&e, mask);
        if (mask & 1)
            put(&e, diff32(s->il_offset, prev.il_offset));
        if (mask & 2)
            put(&e, diff32(s->kind, prev.kind));
        if (mask & 4)
            put(&e, diff32(s->count, prev.count));
        if (mask & 8)
            put(&e, diff32(s->other, prev.other));
        int elem = pg_elem(s->kind);
        if (elem != MANTRA_PGO_None) {
            uint64_t *a = &acc[elem <= MANTRA_PGO_EightByte ? 0 : elem - MANTRA_PGO_EightByte];
            for (int32_t k = 0; k < s->count; k++) {
                uint64_t v = (uint64_t)values[vi++];
                if (elem == MANTRA_PGO_FourByte) /* a FourByte slot is read as a signed int32 */
                    v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
                put(&e, (int64_t)(v - *a));
                *a = v;
            }
        }
        prev = *s;
    }
    /* Done: only Kind changes, to 0. */
    put(&e, 2);
    put(&e, diff32(MANTRA_PGO_None, prev.kind));
    if (e.size > (uint64_t)INT64_MAX)
        return MANTRA_ERANGE;
    return (int64_t)e.size;
}
