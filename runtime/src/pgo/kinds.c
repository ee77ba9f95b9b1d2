/* Instrumentation kinds: the manifest's table, element sizes, alignment, the in-memory layout and
 * the schema checks (mantra/pgo.h). Facts: dotnet/runtime src/coreclr/inc/pgo_formatprocessing.h
 * (InstrumentKindSize / InstrumentKindAlignment / LayoutPgoInstrumentationSchema) and
 * src/coreclr/inc/corjit.h (PgoInstrumentationKind); see docs/pgo.md. The kinds themselves are
 * manifest/dotnet.yaml's `pgo_kinds`, generated into dotnet_defs.h (MANTRA_PGO_KINDS). */
#include <string.h>

#include "pgo-internal.h" /* and dotnet_defs.h: MANTRA_PGO_KINDS */

#define PG_KIND_ROW(name, value, size) {#name, (int32_t)(uint32_t)(value), (size)},
static const mantra_pgo_kind_info pg_kinds[] = {MANTRA_PGO_KINDS(PG_KIND_ROW)};
#define PG_KIND_COUNT (sizeof pg_kinds / sizeof pg_kinds[0])

const mantra_pgo_kind_info *mantra_pgo_kinds(size_t *count) {
    if (count != NULL)
        *count = PG_KIND_COUNT;
    return pg_kinds;
}

static const mantra_pgo_kind_info *pg_kind_of(int32_t kind) {
    for (size_t i = 0; i < PG_KIND_COUNT; i++)
        if (pg_kinds[i].value == kind)
            return &pg_kinds[i];
    return NULL;
}

const char *mantra_pgo_kind_name(int32_t kind) {
    const mantra_pgo_kind_info *k = pg_kind_of(kind);
    return k != NULL ? k->name : NULL;
}

int mantra_pgo_kind_by_name(const char *name, int32_t *kind) {
    for (size_t i = 0; name != NULL && i < PG_KIND_COUNT; i++)
        if (strcmp(pg_kinds[i].name, name) == 0) {
            if (kind != NULL)
                *kind = pg_kinds[i].value;
            return MANTRA_OK;
        }
    return MANTRA_EINVAL;
}

/* The element types are the kinds below 0x10 (the low nibble of every kind): pg_elem_sizes[e] is
 * element type e's size + 2 (so 0 is "not declared"), a constant built from the table: every kind
 * of 0x10 or more lands in the unused slot 16, each overriding the one before. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
#define PG_ELEM_ROW(name, value, size) \
    [(uint32_t)(value) < 16 ? (uint32_t)(value) : 16] = (signed char)((uint32_t)(value) < 16 ? (size) + 2 : 0),
const signed char pg_elem_sizes[17] = {MANTRA_PGO_KINDS(PG_ELEM_ROW)};
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

int mantra_pgo_element_size(int32_t kind, unsigned pointer_size) {
    if (pointer_size != 4 && pointer_size != 8)
        return MANTRA_EINVAL;
    int size = pg_elem_size(pg_elem(kind));
    if (size == -1)
        return (int)pointer_size;
    return size < 0 ? MANTRA_EINVAL : size;
}

int mantra_pgo_element_align(int32_t kind, unsigned pointer_size) {
    int size = mantra_pgo_element_size(kind, pointer_size);
    if (size < 0)
        return size;
    switch ((uint32_t)kind & MANTRA_PGO_ALIGN_MASK) {
    case MANTRA_PGO_ALIGN_4_BYTE:
        return 4;
    case MANTRA_PGO_ALIGN_8_BYTE:
        return 8;
    case MANTRA_PGO_ALIGN_POINTER:
        return (int)pointer_size;
    default:
        return size;
    }
}

int mantra_pgo_has_data(int32_t kind) { return pg_elem(kind) != MANTRA_PGO_None; }

int64_t mantra_pgo_value_count(const mantra_pgo_schema *schema, size_t records) {
    if (schema == NULL && records > 0)
        return MANTRA_EINVAL;
    int64_t n = 0;
    for (size_t i = 0; i < records; i++) {
        if (schema[i].count < 0)
            return MANTRA_EINVAL;
        if (mantra_pgo_has_data(schema[i].kind))
            n += schema[i].count;
    }
    return n;
}

/* AlignUp(prev.Offset + size(prev) * prev.Count, align(cur)) for records with data; the previous
 * record's start for records without (the quirk of pgo_formatprocessing.h: a size-0 record copies
 * the start, not the end, of the record before it). */
int mantra_pgo_layout(const mantra_pgo_schema *schema, size_t records, unsigned pointer_size, size_t *offsets,
                      size_t *size) {
    if (schema == NULL && records > 0)
        return MANTRA_EINVAL;
    size_t prev_offset = 0, prev_bytes = 0, end = 0;
    for (size_t i = 0; i < records; i++) {
        int es = mantra_pgo_element_size(schema[i].kind, pointer_size);
        int al = mantra_pgo_element_align(schema[i].kind, pointer_size);
        if (es < 0 || al < 0 || schema[i].count < 0)
            return MANTRA_EINVAL;
        size_t off = prev_offset;
        if (es != 0) {
            if (prev_offset > SIZE_MAX - prev_bytes - 8)
                return MANTRA_EINVAL;
            off = prev_offset + prev_bytes;
            off = (off + (size_t)al - 1) / (size_t)al * (size_t)al;
        }
        size_t bytes = (size_t)es * (size_t)(uint32_t)schema[i].count;
        if (off > SIZE_MAX - bytes)
            return MANTRA_EINVAL;
        if (off + bytes > end)
            end = off + bytes;
        if (offsets != NULL)
            offsets[i] = off;
        prev_offset = off;
        prev_bytes = bytes;
    }
    if (size != NULL)
        *size = end;
    return MANTRA_OK;
}

int mantra_pgo_schema_check(const mantra_pgo_schema *schema, size_t records, size_t *bad_record) {
    size_t bad = 0;
    if (schema == NULL || records == 0)
        goto fail;
    size_t prev_offset = 0, prev_bytes = 0, data_end = 0;
    for (size_t i = 0; i < records; i++) {
        const mantra_pgo_schema *s = &schema[i];
        bad = i;
        if (!pg_elem_known(s->kind) || s->kind == MANTRA_PGO_None || s->count < 0)
            goto fail;
        if (i > 0 && memcmp(s, &schema[i - 1], sizeof *s) == 0)
            goto fail;
        /* The layout of mantra_pgo_layout with 8-byte pointers (the widest), checking overlap. */
        int es = mantra_pgo_element_size(s->kind, 8), al = mantra_pgo_element_align(s->kind, 8);
        size_t off = prev_offset;
        size_t bytes = (size_t)es * (size_t)(uint32_t)s->count;
        if (es != 0) {
            off = (prev_offset + prev_bytes + (size_t)al - 1) / (size_t)al * (size_t)al;
            if (bytes > 0 && off < data_end)
                goto fail;
            if (off + bytes > data_end)
                data_end = off + bytes;
        }
        prev_offset = off;
        prev_bytes = bytes;
    }
    return MANTRA_OK;
fail:
    if (bad_record != NULL)
        *bad_record = bad;
    return MANTRA_EINVAL;
}
