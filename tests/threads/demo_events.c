/* demo_events.c - deterministic Mantra-Demo events (demo_events.h). */
#include "threads/demo_events.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "dotnet_writers.h"

/* Special floating-point values every 16 events of a kind, so that TraceEvent sees them too. */
static float f32_of(uint64_t k) {
    switch ((k + 8) % 16) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return FLT_MAX;
    case 4: return FLT_TRUE_MIN;
    case 5: return -0.0f;
    default: return (float)((double)k * 0.37 - 1000.0);
    }
}

static double f64_of(uint64_t k) {
    switch (k % 16) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return DBL_MAX;
    case 4: return DBL_TRUE_MIN;
    case 5: return -0.0;
    default: return (double)k * 1.1 / 3.0 - 7.0;
    }
}

void demo_make(demo_event *e, uint32_t w, uint64_t i) {
    memset(e, 0, sizeof *e);
    e->id = 1u + (uint32_t)(i % 4u);
    e->w = w;
    e->i = i;
    uint64_t k = i / 4u; /* the index among events of this kind */
    uint32_t packed = (w << 28) | (uint32_t)(i & 0x0fffffffu);
    switch (e->id) {
    case 2:
        e->I8 = (int8_t)((int)((k * 37u) % 256u) - 128);
        e->U8 = (uint8_t)(k % 3u);
        e->I16 = (int16_t)((int32_t)(k % 65536u) - 32768);
        e->U16 = (uint16_t)(k * 7u);
        e->I32 = (int32_t)((int64_t)((k * 2654435761u) % UINT64_C(4294967296)) - INT64_C(2147483648));
        e->U32 = w;
        e->I64 = (int64_t)(k * UINT64_C(0x9E3779B97F4A7C15));
        e->U64 = i;
        e->F32 = f32_of(k);
        e->F64 = f64_of(k);
        e->Flag = (k & 1u) != 0;
        e->Id.data1 = (uint32_t)(k * 2654435761u);
        e->Id.data2 = (uint16_t)w;
        e->Id.data3 = (uint16_t)k;
        for (unsigned j = 0; j < 8; j++)
            e->Id.data4[j] = (uint8_t)((i >> (8u * j)) ^ (0x5au + j));
        e->Address = (uintptr_t)(UINT64_C(0x7f0000000000) + k * 16u);
        e->When = UINT64_C(132223104000000000) + k * UINT64_C(10000019);
        break;
    case 3:
        if (k % 10u == 0)
            e->wide[0] = '\0';
        else
            snprintf(e->wide, sizeof e->wide, "w%u-F\xc3\xaf" "b-%llu-\xf0\x9f\x98\x80", (unsigned)w,
                     (unsigned long long)i);
        e->length = packed;
        snprintf(e->narrow, sizeof e->narrow, "n%u-%llu-\xc3\xbc", (unsigned)w, (unsigned long long)i);
        break;
    case 4:
        e->n = (uint16_t)(1u + k % 5u);
        for (uint32_t j = 0; j < e->n; j++)
            e->values[j] = (w << 28) | (uint32_t)((i + j) & 0x0fffffffu);
        e->size = (uint32_t)(k % 5u);
        for (uint32_t j = 0; j < e->size; j++)
            e->blob[j] = (uint8_t)(i * 3u + j);
        e->count = 1u + (uint32_t)(k % 3u);
        for (uint32_t j = 0; j < e->count; j++) {
            uint64_t key = ((uint64_t)w << 48) | (i << 4) | j;
            for (unsigned b = 0; b < 8; b++)
                e->items[e->items_size++] = (uint8_t)(key >> (8u * b));
            const char name[] = {'i', 't', 'e', 'm', (char)('0' + j)};
            for (unsigned c = 0; c < sizeof name; c++) {
                e->items[e->items_size++] = (uint8_t)name[c];
                e->items[e->items_size++] = 0;
            }
            e->items[e->items_size++] = 0;
            e->items[e->items_size++] = 0;
        }
        break;
    default:
        break;
    }
}

int demo_write(const demo_event *e) {
    switch (e->id) {
    case 1:
        return mantra_Demo_Tick_write(e->w, e->i);
    case 2:
        return mantra_Demo_Scalars_write(e->I8, e->U8, e->I16, e->U16, e->I32, e->U32, e->I64, e->U64, e->F32,
                                         e->F64, e->Flag, &e->Id, e->Address, e->When);
    case 3:
        return mantra_Demo_Strings_write(e->wide, e->length, e->narrow);
    case 4:
        return mantra_Demo_Arrays_write(e->n, e->values, e->size, e->blob, e->count, e->items, e->items_size);
    default:
        return MANTRA_WRITE_DISABLED;
    }
}

int64_t demo_payload(const demo_event *e, uint8_t *out, size_t cap) {
    /* the descriptors of the generated _emit functions (generated/dotnet_writers.c) */
    const uint32_t flag = e->Flag ? 1u : 0u;
    mantra_data d[14];
    uint32_t n = 0;
    switch (e->id) {
    case 1:
        d[n++] = (mantra_data){&e->w, 4, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->i, 8, MANTRA_DATA_BYTES};
        break;
    case 2:
        d[n++] = (mantra_data){&e->I8, 1, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->U8, 1, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->I16, 2, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->U16, 2, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->I32, 4, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->U32, 4, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->I64, 8, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->U64, 8, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->F32, 4, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->F64, 8, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&flag, 4, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->Id, 16, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->Address, sizeof e->Address, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->When, 8, MANTRA_DATA_BYTES};
        break;
    case 3:
        d[n++] = (mantra_data){e->wide, 0, MANTRA_DATA_UTF8_AS_UTF16Z};
        d[n++] = (mantra_data){&e->length, 4, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){e->narrow, 0, MANTRA_DATA_UTF8Z};
        break;
    case 4:
        d[n++] = (mantra_data){&e->n, 2, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){e->values, 4u * (uint64_t)e->n, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->size, 4, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){e->blob, e->size, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){&e->count, 4, MANTRA_DATA_BYTES};
        d[n++] = (mantra_data){e->items, e->items_size, MANTRA_DATA_BYTES};
        break;
    default:
        return -1;
    }
    return mantra_payload_serialize(d, n, out, cap);
}

static uint32_t ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const uint8_t *p) { return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32; }

int demo_key(uint32_t id, const uint8_t *p, size_t size, uint32_t *w, uint64_t *i) {
    switch (id) {
    case 1:
        if (size < 12)
            return -1;
        *w = ld32(p);
        *i = ld64(p + 4);
        return 0;
    case 2:
        if (size < 30)
            return -1;
        *w = ld32(p + 10);
        *i = ld64(p + 22);
        return 0;
    case 3: {
        size_t off = 0;
        while (off + 1 < size && (p[off] | p[off + 1]) != 0)
            off += 2;
        off += 2; /* the terminator */
        if (off + 4 > size)
            return -1;
        uint32_t packed = ld32(p + off);
        *w = packed >> 28;
        *i = packed & 0x0fffffffu;
        return 0;
    }
    case 4: {
        if (size < 6 || (p[0] | p[1]) == 0)
            return -1;
        uint32_t v = ld32(p + 2);
        *w = v >> 28;
        *i = v & 0x0fffffffu;
        return 0;
    }
    default:
        return -1;
    }
}

const char *demo_name(uint32_t id) {
    static const char *const names[] = {"Tick", "Scalars", "Strings", "Arrays"};
    return id >= 1 && id <= 4 ? names[id - 1] : NULL;
}

static void json_double(FILE *out, double v, int digits) {
    if (isnan(v))
        fputs("\"NaN\"", out);
    else if (isinf(v))
        fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", out);
    else
        fprintf(out, "%.*g", digits, v);
}

void demo_json_fields(const demo_event *e, FILE *out) {
    switch (e->id) {
    case 1:
        fprintf(out, "\"Thread\":%u,\"Index\":%llu", (unsigned)e->w, (unsigned long long)e->i);
        break;
    case 2:
        fprintf(out, "\"I8\":%d,\"U8\":%u,\"I16\":%d,\"U16\":%u,\"I32\":%ld,\"U32\":%lu,\"I64\":%lld,\"U64\":%llu,",
                (int)e->I8, (unsigned)e->U8, (int)e->I16, (unsigned)e->U16, (long)e->I32, (unsigned long)e->U32,
                (long long)e->I64, (unsigned long long)e->U64);
        fputs("\"F32\":", out);
        json_double(out, (double)e->F32, 9);
        fputs(",\"F64\":", out);
        json_double(out, e->F64, 17);
        fprintf(out, ",\"Flag\":%s,\"Id\":\"%08lx-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x\"",
                e->Flag ? "true" : "false", (unsigned long)e->Id.data1, (unsigned)e->Id.data2,
                (unsigned)e->Id.data3, e->Id.data4[0], e->Id.data4[1], e->Id.data4[2], e->Id.data4[3],
                e->Id.data4[4], e->Id.data4[5], e->Id.data4[6], e->Id.data4[7]);
        fprintf(out, ",\"Address\":%llu,\"When\":%llu", (unsigned long long)e->Address,
                (unsigned long long)e->When);
        break;
    case 3:
        /* the strings hold no character JSON must escape */
        fprintf(out, "\"Wide\":\"%s\",\"Length\":%lu", e->wide, (unsigned long)e->length);
        break;
    case 4:
        fprintf(out, "\"N\":%u", (unsigned)e->n);
        break;
    default:
        break;
    }
}

void demo_json_all_fields(const demo_event *e, FILE *out) {
    demo_json_fields(e, out);
    if (e->id == 3) {
        fprintf(out, ",\"Narrow\":\"%s\"", e->narrow);
    } else if (e->id == 4) {
        fputs(",\"Values\":[", out);
        for (uint32_t j = 0; j < e->n; j++)
            fprintf(out, "%s%lu", j ? "," : "", (unsigned long)e->values[j]);
        fprintf(out, "],\"Size\":%lu,\"Blob\":\"", (unsigned long)e->size);
        for (uint32_t j = 0; j < e->size; j++)
            fprintf(out, "%02x", e->blob[j]);
        fprintf(out, "\",\"Count\":%lu,\"Items\":[", (unsigned long)e->count);
        for (uint32_t j = 0; j < e->count; j++)
            fprintf(out, "%s{\"Key\":%llu,\"Name\":\"item%u\"}", j ? "," : "",
                    (unsigned long long)(((uint64_t)e->w << 48) | (e->i << 4) | j), (unsigned)j);
        fputc(']', out);
    }
}
