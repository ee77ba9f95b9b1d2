/* The PgoFormat codec (mantra/pgo.h) against the byte vectors of the format notes
 * (../shared/reference/pgo-format.md §2, §2.1: compressed integers, the worked example, the
 * 0x80000000 FourByte case) and a fixed-seed property test: random schemas of every kind and
 * random values, 64-bit extremes included, round-trip encode -> decode. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/pgo.h"

typedef struct vec {
    int64_t v;
    size_t n;
    uint8_t b[9];
} vec;

static const vec k_vectors[] = {
    {0, 1, {0x00}},
    {1, 1, {0x02}},
    {-1, 1, {0x7f}},
    {63, 1, {0x7e}},
    {-64, 1, {0x01}},
    {64, 2, {0x80, 0x80}},
    {-65, 2, {0xbf, 0x7f}},
    {4095, 2, {0x9f, 0xfe}},
    {-4096, 2, {0xa0, 0x01}},
    {4096, 2, {0xa0, 0x00}},
    {8191, 2, {0xbf, 0xfe}},
    {-8192, 2, {0x80, 0x01}},
    {8192, 5, {0xc0, 0x00, 0x00, 0x20, 0x00}},
    {-8193, 5, {0xc0, 0xff, 0xff, 0xdf, 0xff}},
    {2147483647, 5, {0xc0, 0x7f, 0xff, 0xff, 0xff}},
    {-2147483647 - 1, 5, {0xc0, 0x80, 0x00, 0x00, 0x00}},
    {2147483648, 9, {0xc1, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00}},
    {INT64_MIN, 9, {0xc1, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
};

START_TEST(int_vectors) {
    for (size_t i = 0; i < sizeof k_vectors / sizeof k_vectors[0]; i++) {
        const vec *t = &k_vectors[i];
        uint8_t b[MANTRA_PGO_INT_MAX_BYTES];
        ck_assert_uint_eq(mantra_pgo_int_encode(t->v, b), t->n);
        ck_assert_uint_eq(mantra_pgo_int_size(t->v), t->n);
        ck_assert_mem_eq(b, t->b, t->n);
        int64_t v = 12345;
        ck_assert_int_eq(mantra_pgo_int_decode(t->b, t->n, &v), (int)t->n);
        ck_assert(v == t->v);
        for (size_t k = 0; k < t->n; k++) /* every truncation is refused */
            ck_assert_int_eq(mantra_pgo_int_decode(t->b, k, &v), MANTRA_ETRUNCATED);
    }
}
END_TEST

START_TEST(int_decode_other_lead_bytes) {
    /* 0xC2..0xFF lead a 32-bit big-endian value, sign-extended, like 0xC0 */
    static const uint8_t b[] = {0xff, 0xff, 0xff, 0xff, 0xfe};
    int64_t v = 0;
    ck_assert_int_eq(mantra_pgo_int_decode(b, sizeof b, &v), 5);
    ck_assert(v == -2);
    static const uint8_t c[] = {0xc7, 0x00, 0x00, 0x01, 0x00};
    ck_assert_int_eq(mantra_pgo_int_decode(c, sizeof c, &v), 5);
    ck_assert(v == 256);
    /* INT64_MAX takes 9 bytes and comes back */
    uint8_t e[9];
    ck_assert_uint_eq(mantra_pgo_int_encode(INT64_MAX, e), 9);
    ck_assert_int_eq(mantra_pgo_int_decode(e, 9, &v), 9);
    ck_assert(v == INT64_MAX);
}
END_TEST

START_TEST(worked_example) {
    static const mantra_pgo_schema s[] = {
        {MANTRA_PGO_BasicBlockIntCount, 0x0, 1, 0},
        {MANTRA_PGO_BasicBlockIntCount, 0xA, 1, 0},
        {MANTRA_PGO_BasicBlockIntCount, 0x30, 1, 0},
    };
    static const int64_t values[] = {5, 3, 100000};
    static const uint8_t want[] = {0x0c, 0x80, 0x82, 0x02, 0x0a, 0x02, 0x14, 0x7d, 0x02,
                                   0x4c, 0xc0, 0x00, 0x01, 0x86, 0x9d, 0x04, 0xbf, 0x7f};
    uint8_t out[64];
    ck_assert_int_eq(mantra_pgo_encode(s, 3, values, 3, NULL, 0), (int64_t)sizeof want);
    ck_assert_int_eq(mantra_pgo_encode(s, 3, values, 3, out, sizeof want - 1), (int64_t)sizeof want);
    ck_assert_int_eq(mantra_pgo_encode(s, 3, values, 3, out, sizeof out), (int64_t)sizeof want);
    ck_assert_mem_eq(out, want, sizeof want);

    mantra_pgo_data d;
    size_t where = 0;
    ck_assert_int_eq(mantra_pgo_decode(want, sizeof want, 8, &d, &where), MANTRA_OK);
    ck_assert_uint_eq(where, sizeof want);
    ck_assert_uint_eq(d.records, 3);
    ck_assert_mem_eq(d.schema, s, sizeof s);
    ck_assert_uint_eq(d.value_count, 3);
    ck_assert(d.values[0] == 5 && d.values[1] == 3 && d.values[2] == 100000);
    mantra_pgo_data_free(&d);

    /* bytes after Done are not read: where says where the method ends */
    uint8_t more[sizeof want + 2];
    memcpy(more, want, sizeof want);
    more[sizeof want] = 0x02;
    more[sizeof want + 1] = 0x02;
    ck_assert_int_eq(mantra_pgo_decode(more, sizeof more, 8, &d, &where), MANTRA_OK);
    ck_assert_uint_eq(where, sizeof want);
    mantra_pgo_data_free(&d);

    /* every truncation is refused, at the offset of the integer that runs out */
    for (size_t n = 0; n < sizeof want; n++) {
        ck_assert_int_eq(mantra_pgo_decode(want, n, 8, &d, &where), MANTRA_ETRUNCATED);
        ck_assert_ptr_null(d.schema);
        ck_assert_uint_le(where, n);
    }
    ck_assert_int_eq(mantra_pgo_decode(want, 14, 8, &d, &where), MANTRA_ETRUNCATED);
    ck_assert_uint_eq(where, 10); /* the 5-byte 99997 starts at 10 */
}
END_TEST

START_TEST(fourbyte_0x80000000) {
    static const mantra_pgo_schema s[] = {{MANTRA_PGO_BasicBlockIntCount, 0, 1, 0}};
    static const uint8_t want[] = {0x0c, 0x80, 0x82, 0x02, 0xc0, 0x80, 0x00, 0x00, 0x00, 0x04, 0xbf, 0x7f};
    uint8_t out[32];
    /* the counter's zero-extended and sign-extended values encode alike: a FourByte slot is read signed */
    int64_t zero_ext = 0x80000000, sign_ext = INT32_MIN;
    ck_assert_int_eq(mantra_pgo_encode(s, 1, &zero_ext, 1, out, sizeof out), (int64_t)sizeof want);
    ck_assert_mem_eq(out, want, sizeof want);
    ck_assert_int_eq(mantra_pgo_encode(s, 1, &sign_ext, 1, out, sizeof out), (int64_t)sizeof want);
    ck_assert_mem_eq(out, want, sizeof want);
    mantra_pgo_data d;
    ck_assert_int_eq(mantra_pgo_decode(want, sizeof want, 8, &d, NULL), MANTRA_OK);
    ck_assert_uint_eq(d.value_count, 1);
    ck_assert(d.values[0] == INT32_MIN);
    mantra_pgo_data_free(&d);
}
END_TEST

START_TEST(accumulators_and_fields) {
    /* type handles and method handles have accumulators of their own; the count accumulator is shared
     * by FourByte and EightByte; Version/NumRuns carry no data */
    static const mantra_pgo_schema s[] = {
        {MANTRA_PGO_Version, 0, 1, 7},
        {MANTRA_PGO_BasicBlockIntCount, 0, 1, 0},
        {MANTRA_PGO_HandleHistogramTypes, 4, 2, 0},
        {MANTRA_PGO_BasicBlockLongCount, 8, 1, 0},
        {MANTRA_PGO_HandleHistogramMethods, 12, 1, 0},
    };
    static const int64_t v[] = {10, 1000, 1004, 12, 5000};
    uint8_t out[128];
    int64_t n = mantra_pgo_encode(s, 5, v, 5, out, sizeof out);
    ck_assert_int_gt(n, 0);
    mantra_pgo_data d;
    ck_assert_int_eq(mantra_pgo_decode(out, (size_t)n, 8, &d, NULL), MANTRA_OK);
    ck_assert_uint_eq(d.records, 5);
    ck_assert_mem_eq(d.schema, s, sizeof s);
    ck_assert_uint_eq(d.value_count, 5);
    ck_assert_mem_eq(d.values, v, sizeof v);
    mantra_pgo_data_free(&d);
    /* the integer stream: check the deltas themselves */
    int64_t ints[64];
    size_t k = 0, pos = 0;
    while (pos < (size_t)n) {
        int r = mantra_pgo_int_decode(out + pos, (size_t)n - pos, &ints[k++]);
        ck_assert_int_gt(r, 0);
        pos += (size_t)r;
    }
    static const int64_t want_ints[] = {
        0xE, 256, 1, 7,            /* Version: kind, count, other; no data */
        0xA, 65 - 256, -7, 10,     /* BasicBlockIntCount: kind, other; 10 - 0 */
        0x7, 4, 195 - 65, 1, 1000, 4, /* types: il, kind, count; 1000 - 0, 1004 - 1000 */
        0x7, 4, 66 - 195, -1, 2,   /* long count: il, kind, count; 12 - 10 (shared with FourByte) */
        0x3, 4, 196 - 66, 5000,    /* methods: il, kind; 5000 - 0 */
        0x2, -196                  /* Done */
    };
    ck_assert_uint_eq(k, sizeof want_ints / sizeof want_ints[0]);
    for (size_t i = 0; i < k; i++)
        ck_assert_msg(ints[i] == want_ints[i], "integer %zu: %lld, want %lld", i, (long long)ints[i],
                      (long long)want_ints[i]);
}
END_TEST

START_TEST(decode_refusals) {
    mantra_pgo_data d;
    size_t where = 99;
    /* mask 0: an identical record, which no reader can represent */
    static const uint8_t mask0[] = {0x00, 0x04, 0xbf, 0x7f};
    ck_assert_int_eq(mantra_pgo_decode(mask0, sizeof mask0, 8, &d, &where), MANTRA_EFORMAT);
    ck_assert_uint_eq(where, 0);
    /* mask with bit 0x10 */
    static const uint8_t mask16[] = {0x20, 0x00};
    ck_assert_int_eq(mantra_pgo_decode(mask16, sizeof mask16, 8, &d, &where), MANTRA_EFORMAT);
    ck_assert_uint_eq(where, 0);
    /* unknown element type 5 (kind 0x45) at the record of the first integer */
    static const uint8_t elem5[] = {0x0c, 0x81, 0x0a, 0x02, 0x02, 0x04, 0xbb, 0x7f};
    ck_assert_int_eq(mantra_pgo_decode(elem5, sizeof elem5, 8, &d, &where), MANTRA_EFORMAT);
    /* negative count */
    static const uint8_t negcount[] = {0x0c, 0x80, 0x82, 0x7f, 0x04, 0xbf, 0x7f};
    ck_assert_int_eq(mantra_pgo_decode(negcount, sizeof negcount, 8, &d, &where), MANTRA_EFORMAT);
    /* a record without data (Version, kind 256) may have a Count of MANTRA_PGO_NONE_COUNT_MAX, not more: the
     * text format would write a line per element (found by fuzz_mibc: 537,465,856 "None" lines) */
    static const uint8_t none_max[] = {0x0c, 0x82, 0x00, 0xc0, 0x00, 0x01, 0x00, 0x00, 0x04, 0xbe, 0x01};
    ck_assert_int_eq(mantra_pgo_decode(none_max, sizeof none_max, 8, &d, &where), MANTRA_OK);
    ck_assert_uint_eq(d.records, 1);
    ck_assert_int_eq(d.schema[0].count, MANTRA_PGO_NONE_COUNT_MAX);
    mantra_pgo_data_free(&d);
    static const uint8_t none_over[] = {0x0c, 0x82, 0x00, 0xc0, 0x00, 0x01, 0x00, 0x01, 0x04, 0xbe, 0x01};
    ck_assert_int_eq(mantra_pgo_decode(none_over, sizeof none_over, 8, &d, &where), MANTRA_EFORMAT);
    /* a count larger than the bytes left is truncation, without allocating for it */
    static const uint8_t huge[] = {0x0c, 0x80, 0x82, 0xc0, 0x7f, 0xff, 0xff, 0xff, 0x02};
    ck_assert_int_eq(mantra_pgo_decode(huge, sizeof huge, 8, &d, &where), MANTRA_ETRUNCATED);
    ck_assert_uint_eq(where, sizeof huge);
    /* a 4-byte producer's handle above 2^32 */
    static const mantra_pgo_schema th[] = {{MANTRA_PGO_HandleHistogramTypes, 0, 1, 0}};
    int64_t big = INT64_C(0x100000000);
    uint8_t out[32];
    int64_t n = mantra_pgo_encode(th, 1, &big, 1, out, sizeof out);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(mantra_pgo_decode(out, (size_t)n, 4, &d, &where), MANTRA_EFORMAT);
    ck_assert_int_eq(mantra_pgo_decode(out, (size_t)n, 8, &d, &where), MANTRA_OK);
    mantra_pgo_data_free(&d);
    ck_assert_int_eq(mantra_pgo_decode(out, (size_t)n, 2, &d, &where), MANTRA_EINVAL);
    /* a 32-bit handle read sign-extended (0xF0000000 as a negative int64) is a 4-byte producer's */
    int64_t neg = (int64_t)(int32_t)0xF0000000u;
    n = mantra_pgo_encode(th, 1, &neg, 1, out, sizeof out);
    ck_assert_int_eq(mantra_pgo_decode(out, (size_t)n, 4, &d, &where), MANTRA_OK);
    ck_assert(d.values[0] == neg);
    mantra_pgo_data_free(&d);
    /* an empty method: only Done */
    static const uint8_t done[] = {0x04, 0x00};
    ck_assert_int_eq(mantra_pgo_decode(done, sizeof done, 8, &d, &where), MANTRA_OK);
    ck_assert_uint_eq(d.records, 0);
    ck_assert_uint_eq(where, 2);
    mantra_pgo_data_free(&d);
}
END_TEST

/* ---- property test ---- */
static uint64_t g_rng = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) { /* xorshift64*, fixed seed */
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Du;
}

static const int32_t k_kinds[] = {
    MANTRA_PGO_BasicBlockIntCount,       MANTRA_PGO_BasicBlockLongCount,  MANTRA_PGO_HandleHistogramIntCount,
    MANTRA_PGO_HandleHistogramLongCount, MANTRA_PGO_HandleHistogramTypes,  MANTRA_PGO_HandleHistogramMethods,
    MANTRA_PGO_Version,                     MANTRA_PGO_NumRuns,                MANTRA_PGO_EdgeIntCount,
    MANTRA_PGO_EdgeLongCount,             MANTRA_PGO_GetLikelyClass,        MANTRA_PGO_GetLikelyMethod,
    MANTRA_PGO_ValueHistogramIntCount,   MANTRA_PGO_ValueHistogramLongCount, MANTRA_PGO_ValueHistogram,
    0x281 /* an unknown descriptor over FourByte */, 0x2c3 /* unknown over TypeHandle */,
};

static int64_t rnd_value(int elem) {
    static const int64_t extremes[] = {0, 1, -1, 63, 64, -64, -65, 8191, 8192, -8192, -8193, INT32_MAX,
                                       INT32_MIN, (int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1, INT64_MAX, INT64_MIN};
    int64_t v;
    switch (rnd() % 4) {
    case 0:
        v = extremes[rnd() % (sizeof extremes / sizeof extremes[0])];
        break;
    case 1:
        v = (int64_t)(rnd() % 200);
        break;
    case 2:
        v = (int64_t)(int32_t)rnd();
        break;
    default:
        v = (int64_t)rnd();
        break;
    }
    if (elem == MANTRA_PGO_FourByte) /* what a FourByte slot holds, read as the serializer reads it */
        v = (int64_t)(int32_t)(uint32_t)(uint64_t)v;
    return v;
}

START_TEST(property_round_trip) {
    for (int iter = 0; iter < 3000; iter++) {
        size_t records = 1 + rnd() % 12;
        mantra_pgo_schema s[12];
        int64_t values[12 * 8];
        size_t nv = 0;
        int prev_size0 = 0;
        for (size_t i = 0; i < records; i++) {
            for (;;) {
                s[i].kind = k_kinds[rnd() % (sizeof k_kinds / sizeof k_kinds[0])];
                s[i].il_offset = (rnd() % 8 == 0) ? (int32_t)rnd() : (int32_t)(rnd() % 5000);
                s[i].count = mantra_pgo_has_data(s[i].kind) ? (int32_t)(rnd() % 8) : 1;
                s[i].other = (rnd() % 4 == 0) ? (int32_t)rnd() : (int32_t)(rnd() % 3);
                int size0 = !mantra_pgo_has_data(s[i].kind);
                /* size-0 records only in a leading run (the layout rule overlaps data after them otherwise) */
                if (size0 && (i > 0 && !prev_size0))
                    continue;
                if (!size0)
                    prev_size0 = 0;
                else
                    prev_size0 = 1;
                if (i > 0 && memcmp(&s[i], &s[i - 1], sizeof s[i]) == 0)
                    continue;
                break;
            }
            if (mantra_pgo_has_data(s[i].kind))
                for (int32_t k = 0; k < s[i].count; k++)
                    values[nv++] = rnd_value(s[i].kind & 0xF);
        }
        ck_assert_int_eq(mantra_pgo_schema_check(s, records, NULL), MANTRA_OK);
        uint8_t buf[2048];
        int64_t n = mantra_pgo_encode(s, records, values, nv, buf, sizeof buf);
        ck_assert_int_gt(n, 0);
        ck_assert_int_le(n, (int64_t)sizeof buf);
        mantra_pgo_data d;
        size_t where;
        ck_assert_int_eq(mantra_pgo_decode(buf, (size_t)n, 8, &d, &where), MANTRA_OK);
        ck_assert_uint_eq(where, (size_t)n);
        ck_assert_uint_eq(d.records, records);
        ck_assert_mem_eq(d.schema, s, records * sizeof s[0]);
        ck_assert_uint_eq(d.value_count, nv);
        if (nv > 0)
            ck_assert_mem_eq(d.values, values, nv * sizeof values[0]);
        mantra_pgo_data_free(&d);
    }
}
END_TEST

/* The Data of one JitInstrumentationDataVerbose event written by the .NET 10.0.12 runtime on this
 * project's machine (System.Text.UTF8Encoding.GetMaxByteCount, TieredPGO, one final chunk of 144
 * bytes; the same run's DOTNET_WritePGOData dump lists the schema below). It decodes to the dump's
 * records and counts, and re-encodes to the same bytes: schema field deltas are 64-bit (Other goes
 * from 0x80000000 to 46 as +2147483694, a 9-byte integer), handles are 64-bit pointers. */
static const uint8_t k_runtime[] = {
    0x1e, 0x2e, 0x81, 0x62, 0x02, 0xc0, 0x80, 0x00, 0x00, 0x00, 0x02, 0x0c, 0x24, 0x3e, 0xc1, 0x00,
    0x00, 0x7f, 0x3b, 0x3a, 0x62, 0xa2, 0xb8, 0xc1, 0xff, 0xff, 0x80, 0xc4, 0xc5, 0x9d, 0x5d, 0x48,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1e, 0x10,
    0x81, 0x7c, 0x43, 0xc1, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x2e, 0x7f, 0x16, 0x0e, 0xbe,
    0x61, 0xc1, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xd2, 0x00, 0x0c, 0x24, 0x3e, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1e, 0x4c,
    0x81, 0x7c, 0x43, 0xc1, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x02, 0x04, 0xbc, 0xff
};

START_TEST(runtime_vector) {
    static const mantra_pgo_schema want[] = {
        {MANTRA_PGO_HandleHistogramIntCount, 23, 1, INT32_MIN}, {MANTRA_PGO_HandleHistogramTypes, 23, 32, INT32_MIN},
        {MANTRA_PGO_EdgeIntCount, 31, 1, 46},                    {MANTRA_PGO_HandleHistogramIntCount, 38, 1, INT32_MIN},
        {MANTRA_PGO_HandleHistogramTypes, 38, 32, INT32_MIN},    {MANTRA_PGO_EdgeIntCount, 76, 1, 0},
    };
    mantra_pgo_data d;
    size_t where = 0;
    ck_assert_int_eq(mantra_pgo_decode(k_runtime, sizeof k_runtime, 8, &d, &where), MANTRA_OK);
    ck_assert_uint_eq(where, sizeof k_runtime);
    ck_assert_uint_eq(d.records, 6);
    ck_assert_mem_eq(d.schema, want, sizeof want);
    ck_assert_uint_eq(d.value_count, 68);
    for (size_t i = 0; i < d.value_count; i++) {
        int64_t v = i == 0 || i == 67 ? 1 : i == 1 ? INT64_C(0x7f3b3a62a2b8) : 0;
        ck_assert_msg(d.values[i] == v, "value %zu", i);
    }
    uint8_t out[sizeof k_runtime];
    ck_assert_int_eq(mantra_pgo_encode(d.schema, d.records, d.values, d.value_count, out, sizeof out),
                     (int64_t)sizeof k_runtime);
    ck_assert_mem_eq(out, k_runtime, sizeof k_runtime);
    mantra_pgo_data_free(&d);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_codec");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, int_vectors);
    tcase_add_test(tc, int_decode_other_lead_bytes);
    tcase_add_test(tc, worked_example);
    tcase_add_test(tc, fourbyte_0x80000000);
    tcase_add_test(tc, accumulators_and_fields);
    tcase_add_test(tc, decode_refusals);
    tcase_add_test(tc, property_round_trip);
    tcase_add_test(tc, runtime_vector);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
