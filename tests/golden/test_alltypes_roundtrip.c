/* Writer -> bytes -> reader round trips for every field type of tests/golden/alltypes.yaml, with
 * the boundary values of each type, exact payload bytes, and the refusal paths (disabled, too
 * large, invalid UTF-8) with their counters. Links the checked-in golden generated code. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alltypes_readers.h"
#include "alltypes_writers.h"
#include "check_main.h"

/* ---- capture of written payloads ------------------------------------------------------------- */
static uint8_t g_payload[MANTRA_MAX_PAYLOAD];
static size_t g_size;
static const mantra_event_desc *g_desc;
static int g_calls;

static void capture(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    (void)ctx;
    memcpy(g_payload, payload, size);
    g_size = size;
    g_desc = desc;
    g_calls++;
}

static void setup(void) {
    ck_assert_int_eq(mantra_alltypes_register(), 0);
    mantra_set_listener(capture, NULL);
    g_size = 0;
    g_desc = NULL;
    g_calls = 0;
}

static void teardown(void) { mantra_set_listener(NULL, NULL); }

static const mantra_guid GUID_A = {0x01020304u, 0x0506u, 0x0708u, {0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}};
static const mantra_guid GUID_B = {0xffffffffu, 0xffffu, 0x0000u, {0, 0, 0, 0, 0, 0, 0, 0xff}};

static int guid_eq(mantra_guid a, mantra_guid b) {
    return a.data1 == b.data1 && a.data2 == b.data2 && a.data3 == b.data3 && memcmp(a.data4, b.data4, 8) == 0;
}

/* ---- scalars ----------------------------------------------------------------------------------- */
typedef struct scalar_case {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    bool b;
    mantra_guid g;
    uintptr_t p;
    uint64_t t;
    uint8_t c;
} scalar_case;

static const scalar_case SCALAR_CASES[] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 0.0f, 0.0, false, {0, 0, 0, {0}}, 0, 0, 0},
    {INT8_MAX, UINT8_MAX, INT16_MAX, UINT16_MAX, INT32_MAX, UINT32_MAX, INT64_MAX, UINT64_MAX, FLT_MAX, DBL_MAX, true,
     {0xffffffffu, 0xffffu, 0xffffu, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, UINTPTR_MAX, UINT64_MAX,
     UINT8_MAX},
    {INT8_MIN, 1, INT16_MIN, 1, INT32_MIN, 1, INT64_MIN, 1, -FLT_MIN, -DBL_MIN, true,
     {0x01020304u, 0x0506u, 0x0708u, {0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}}, (uintptr_t)0x1000, 132000000000000000ull,
     1},
    {-1, 0x80, -1, 0x8000, -1, 0x80000000u, -1, 0x8000000000000000ull, -1.5f, 3.141592653589793, false,
     {0, 0, 0, {0, 0, 0, 0, 0, 0, 0, 1}}, (uintptr_t)-1, 1, 2},
};

START_TEST(scalars_round_trip) {
    const scalar_case *s = &SCALAR_CASES[_i];
    ck_assert_int_eq(mantra_AllTypes_Scalars_write(s->i8, s->u8, s->i16, s->u16, s->i32, s->u32, s->i64, s->u64, s->f32,
                                                   s->f64, s->b, &s->g, s->p, s->t, s->c),
                     MANTRA_WRITE_OK);
    ck_assert_int_eq(g_calls, 1);
    ck_assert_ptr_eq(g_desc, &mantra_AllTypes_events[MANTRA_AllTypes_EVENT_Scalars]);
    /* 1+1+2+2+4+4+8+8+4+8+4+16+ptr+8+1 */
    ck_assert_uint_eq(g_size, 71 + sizeof(uintptr_t));
    mantra_AllTypes_Scalars_fields f;
    ck_assert_int_eq(mantra_AllTypes_Scalars_decode(g_payload, g_size, (unsigned)sizeof(uintptr_t), &f), MANTRA_DECODE_OK);
    ck_assert_int_eq(f.I8, s->i8);
    ck_assert_uint_eq(f.U8, s->u8);
    ck_assert_int_eq(f.I16, s->i16);
    ck_assert_uint_eq(f.U16, s->u16);
    ck_assert_int_eq(f.I32, s->i32);
    ck_assert_uint_eq(f.U32, s->u32);
    ck_assert(f.I64 == s->i64);
    ck_assert(f.U64 == s->u64);
    ck_assert(memcmp(&f.F32, &s->f32, sizeof f.F32) == 0);
    ck_assert(memcmp(&f.F64, &s->f64, sizeof f.F64) == 0);
    ck_assert(f.B == s->b);
    ck_assert(guid_eq(f.G, s->g));
    ck_assert(f.P == (uint64_t)s->p);
    ck_assert(f.T == s->t);
    ck_assert_uint_eq(f.C, s->c);
}
END_TEST

START_TEST(scalars_exact_bytes) {
    const mantra_guid g = GUID_A;
    ck_assert_int_eq(mantra_AllTypes_Scalars_write(-2, 0xfe, -3, 0x1234, -4, 0xdeadbeefu, -5, 0x0102030405060708ull,
                                                   1.0f, -2.0, true, &g, (uintptr_t)0x1122334455667788ull,
                                                   0x0a0b0c0d0e0f1011ull, 1),
                     MANTRA_WRITE_OK);
    static const uint8_t want[] = {
        0xfe,                                           /* I8 -2 */
        0xfe,                                           /* U8 */
        0xfd, 0xff,                                     /* I16 -3 */
        0x34, 0x12,                                     /* U16 */
        0xfc, 0xff, 0xff, 0xff,                         /* I32 -4 */
        0xef, 0xbe, 0xad, 0xde,                         /* U32 */
        0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* I64 -5 */
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* U64 */
        0x00, 0x00, 0x80, 0x3f,                         /* F32 1.0 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, /* F64 -2.0 */
        0x01, 0x00, 0x00, 0x00,                         /* Boolean as 4 bytes */
        0x04, 0x03, 0x02, 0x01, 0x06, 0x05, 0x08, 0x07, /* GUID, .NET layout */
        0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* Pointer (8-byte host) */
        0x11, 0x10, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, /* FILETIME */
        0x01,                                           /* C */
    };
    ck_assert_uint_eq(sizeof(uintptr_t), 8);
    ck_assert_uint_eq(g_size, sizeof want);
    ck_assert_mem_eq(g_payload, want, sizeof want);
}
END_TEST

START_TEST(null_guid_is_zero) {
    ck_assert_int_eq(mantra_AllTypes_Scalars_write(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, NULL, 0, 0, 0), MANTRA_WRITE_OK);
    mantra_AllTypes_Scalars_fields f;
    ck_assert_int_eq(mantra_AllTypes_Scalars_decode(g_payload, g_size, 8, &f), MANTRA_DECODE_OK);
    ck_assert(guid_eq(f.G, (mantra_guid){0, 0, 0, {0}}));
}
END_TEST

/* ---- strings ----------------------------------------------------------------------------------- */
static const char *const STRINGS[][3] = {
    {"", "", ""},
    {"a", "b", "c"},
    {"Grüße ✓ 𝄞", "bytes ✓", "日本語"},
    {"tab\tnew\nline", "x", "\x7f"},
};

START_TEST(strings_round_trip) {
    const char *const *s = STRINGS[_i];
    ck_assert_int_eq(mantra_AllTypes_Strings_write(s[0], s[1], s[2]), MANTRA_WRITE_OK);
    mantra_AllTypes_Strings_fields f;
    ck_assert_int_eq(mantra_AllTypes_Strings_decode(g_payload, g_size, 8, &f), MANTRA_DECODE_OK);
    ck_assert(mantra_str16_equals_utf8(f.Wide, s[0]));
    ck_assert(mantra_str16_equals_utf8(f.Wide2, s[2]));
    ck_assert_uint_eq(f.Narrow.len, strlen(s[1]));
    ck_assert(memcmp(f.Narrow.data, s[1], f.Narrow.len) == 0);
    char back[64];
    ck_assert_uint_eq(mantra_str16_to_utf8(f.Wide, back, sizeof back), strlen(s[0]));
    ck_assert_str_eq(back, s[0]);
}
END_TEST

START_TEST(strings_exact_utf16_bytes) {
    /* U+00FC (2 UTF-8 bytes) -> fc 00; U+1D11E (4 UTF-8 bytes) -> surrogate pair 34 d8 1e dd. */
    ck_assert_int_eq(mantra_AllTypes_Strings_write("\xc3\xbc\xf0\x9d\x84\x9e", "A", NULL), MANTRA_WRITE_OK);
    static const uint8_t want[] = {0xfc, 0x00, 0x34, 0xd8, 0x1e, 0xdd, 0x00, 0x00, 'A', 0x00, 0x00, 0x00};
    ck_assert_uint_eq(g_size, sizeof want);
    ck_assert_mem_eq(g_payload, want, sizeof want);
}
END_TEST

START_TEST(strings_utf16_variant) {
    static const uint16_t wide[] = {0x0048, 0x00e9, 0xd834, 0xdd1e, 0};
    ck_assert_int_eq(mantra_AllTypes_Strings_write16(wide, "n", NULL), MANTRA_WRITE_OK);
    mantra_AllTypes_Strings_fields f;
    ck_assert_int_eq(mantra_AllTypes_Strings_decode(g_payload, g_size, 8, &f), MANTRA_DECODE_OK);
    ck_assert_uint_eq(f.Wide.units, 4);
    ck_assert(mantra_str16_equals_utf8(f.Wide, "H\xc3\xa9\xf0\x9d\x84\x9e"));
    ck_assert_uint_eq(f.Wide2.units, 0);
}
END_TEST

START_TEST(strings_invalid_utf8_refused_and_counted) {
    mantra_write_counters before, after;
    mantra_get_write_counters(&before);
    static const char *const bad[] = {"\xff", "\xc3", "\xed\xa0\x80" /* surrogate */, "\xc0\xaf" /* overlong */,
                                      "\xf4\x90\x80\x80" /* > U+10FFFF */};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(mantra_AllTypes_Strings_write(bad[i], "", ""), MANTRA_WRITE_BAD_STRING);
        ck_assert_int_eq(mantra_AllTypes_Strings_write("", bad[i], ""), MANTRA_WRITE_BAD_STRING); /* AnsiString */
    }
    mantra_get_write_counters(&after);
    ck_assert_uint_eq(after.bad_string - before.bad_string, 10);
    ck_assert_int_eq(g_calls, 0);
}
END_TEST

/* ---- arrays and binaries --------------------------------------------------------------------- */
START_TEST(arrays_round_trip) {
    static const uint16_t counts[] = {0, 1, 3, 1000};
    uint16_t n = counts[_i];
    uint32_t *values = calloc(n + 1u, sizeof *values);
    int64_t *signed_ = calloc(n + 1u, sizeof *signed_);
    uintptr_t *ptrs = calloc(n + 1u, sizeof *ptrs);
    ck_assert(values && signed_ && ptrs);
    for (uint16_t i = 0; i < n; i++) {
        values[i] = i == 0 ? UINT32_MAX : (uint32_t)i * 7u;
        signed_[i] = i == 0 ? INT64_MIN : -(int64_t)i;
        ptrs[i] = (uintptr_t)i << 20;
    }
    const double pair[2] = {-0.0, DBL_MAX};
    uint8_t blob[300];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (uint8_t)(i * 13u);
    uint32_t blob_size = _i == 0 ? 0 : (uint32_t)sizeof blob;
    const uint8_t fixed[4] = {0xde, 0xad, 0xbe, 0xef};
    const mantra_guid ids[2] = {GUID_A, GUID_B};

    ck_assert_int_eq(mantra_AllTypes_Arrays_write(n, values, signed_, pair, blob_size, blob, fixed, ptrs, ids),
                     MANTRA_WRITE_OK);
    ck_assert_uint_eq(g_size, 2 + 4u * n + 8u * n + 16 + 4 + blob_size + 4 + sizeof(uintptr_t) * n + 32);
    mantra_AllTypes_Arrays_fields f;
    ck_assert_int_eq(mantra_AllTypes_Arrays_decode(g_payload, g_size, (unsigned)sizeof(uintptr_t), &f), MANTRA_DECODE_OK);
    ck_assert_uint_eq(f.N, n);
    ck_assert_uint_eq(f.Values.count, n);
    ck_assert_uint_eq(f.Signed.count, n);
    ck_assert_uint_eq(f.Ptrs.count, n);
    for (uint16_t i = 0; i < n; i++) {
        ck_assert_uint_eq(mantra_array_u32(f.Values, i), values[i]);
        ck_assert(mantra_array_i64(f.Signed, i) == signed_[i]);
        ck_assert(mantra_array_u64(f.Ptrs, i) == (uint64_t)ptrs[i]);
    }
    ck_assert_uint_eq(f.Pair.count, 2);
    ck_assert(signbit(mantra_array_f64(f.Pair, 0)) && mantra_array_f64(f.Pair, 0) == 0.0);
    ck_assert(mantra_array_f64(f.Pair, 1) == DBL_MAX);
    ck_assert_uint_eq(f.Size, blob_size);
    ck_assert_uint_eq(f.Blob.size, blob_size);
    if (blob_size)
        ck_assert_mem_eq(f.Blob.data, blob, blob_size);
    ck_assert_uint_eq(f.Fixed.size, 4);
    ck_assert_mem_eq(f.Fixed.data, fixed, 4);
    ck_assert_uint_eq(f.Ids.count, 2);
    ck_assert_mem_eq(f.Ids.data, &ids[0], 16);
    ck_assert_mem_eq(f.Ids.data + 16, &ids[1], 16);
    free(values);
    free(signed_);
    free(ptrs);
}
END_TEST

START_TEST(payload_over_64k_refused_and_counted) {
    mantra_write_counters before, after;
    mantra_get_write_counters(&before);
    uint8_t *big = calloc(1, 70000);
    ck_assert_ptr_nonnull(big);
    const double pair[2] = {0, 0};
    const uint8_t fixed[4] = {0};
    const mantra_guid ids[2] = {GUID_A, GUID_B};
    ck_assert_int_eq(mantra_AllTypes_Arrays_write(0, NULL, NULL, pair, 70000, big, fixed, NULL, ids),
                     MANTRA_WRITE_TOO_LARGE);
    /* A count whose byte size overflows 64 bits saturates and is refused too. */
    ck_assert_int_eq(mantra_AllTypes_Arrays_write(UINT16_MAX, NULL, NULL, pair, UINT32_MAX, big, fixed, NULL, ids),
                     MANTRA_WRITE_TOO_LARGE);
    mantra_get_write_counters(&after);
    ck_assert_uint_eq(after.too_large - before.too_large, 2);
    ck_assert_int_eq(g_calls, 0);
    /* Exactly 64 KB fits: 2+16+4+4+32 fixed bytes plus the blob. */
    uint32_t blob = MANTRA_MAX_PAYLOAD - (2 + 16 + 4 + 4 + 32);
    ck_assert_int_eq(mantra_AllTypes_Arrays_write(0, NULL, NULL, pair, blob, big, fixed, NULL, ids), MANTRA_WRITE_OK);
    ck_assert_uint_eq(g_size, MANTRA_MAX_PAYLOAD);
    free(big);
}
END_TEST

START_TEST(largest_arrays_that_fit) {
    /* 2 + 4N + 8N + 16 + 4 + 0 + 4 + 8N + 32 = 58 + 20N bytes: N = 3273 is the largest under 64 KB. */
    const uint16_t n = 3273;
    uint32_t *values = calloc(n + 1u, sizeof *values);
    int64_t *signed_ = calloc(n + 1u, sizeof *signed_);
    uintptr_t *ptrs = calloc(n + 1u, sizeof *ptrs);
    ck_assert(values && signed_ && ptrs);
    for (uint16_t i = 0; i < n + 1u; i++) {
        values[i] = UINT32_MAX - i;
        signed_[i] = INT64_MIN + i;
        ptrs[i] = UINTPTR_MAX - i;
    }
    const double pair[2] = {1, 2};
    const uint8_t fixed[4] = {1, 2, 3, 4};
    const mantra_guid ids[2] = {GUID_A, GUID_B};
    ck_assert_int_eq(mantra_AllTypes_Arrays_write(n, values, signed_, pair, 0, NULL, fixed, ptrs, ids), MANTRA_WRITE_OK);
    ck_assert_uint_eq(g_size, 58u + 20u * n);
    mantra_AllTypes_Arrays_fields f;
    ck_assert_int_eq(mantra_AllTypes_Arrays_decode(g_payload, g_size, 8, &f), MANTRA_DECODE_OK);
    ck_assert_uint_eq(f.Values.count, n);
    ck_assert_uint_eq(mantra_array_u32(f.Values, n - 1u), UINT32_MAX - (n - 1u));
    ck_assert(mantra_array_i64(f.Signed, n - 1u) == INT64_MIN + (n - 1));
    ck_assert(mantra_array_u64(f.Ptrs, n - 1u) == (uint64_t)(UINTPTR_MAX - (n - 1u)));
    /* One more element is over 64 KB. */
    ck_assert_int_eq(mantra_AllTypes_Arrays_write((uint16_t)(n + 1u), values, signed_, pair, 0, NULL, fixed, ptrs, ids),
                     MANTRA_WRITE_TOO_LARGE);
    free(values);
    free(signed_);
    free(ptrs);
}
END_TEST

/* ---- structs ----------------------------------------------------------------------------------- */
static size_t put_item(uint8_t *out, uint64_t id, const char *ascii_name, uint8_t k) {
    size_t o = 0;
    memcpy(out + o, &id, 8);
    o += 8;
    for (const char *p = ascii_name; *p; p++) {
        out[o++] = (uint8_t)*p;
        out[o++] = 0;
    }
    out[o++] = 0;
    out[o++] = 0;
    out[o++] = k;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t v = 100u * k + i;
        memcpy(out + o, &v, 4);
        o += 4;
    }
    return o;
}

START_TEST(structs_round_trip) {
    uint8_t items[256];
    size_t size = 0;
    size += put_item(items + size, 1, "first", 0);
    size += put_item(items + size, UINT64_MAX, "", 3);
    size += put_item(items + size, 42, "z", 1);
    ck_assert_int_eq(mantra_AllTypes_Structs_write(3, items, size, 0xbeef), MANTRA_WRITE_OK);
    ck_assert_uint_eq(g_size, 4 + size + 2);
    mantra_AllTypes_Structs_fields f;
    ck_assert_int_eq(mantra_AllTypes_Structs_decode(g_payload, g_size, 8, &f), MANTRA_DECODE_OK);
    ck_assert_uint_eq(f.Count, 3);
    ck_assert_uint_eq(f.Items.count, 3);
    ck_assert_uint_eq(f.Items.size, size);
    ck_assert_uint_eq(f.After, 0xbeef);
    mantra_cursor c = mantra_cursor_of(f.Items, 8);
    static const uint64_t ids[] = {1, UINT64_MAX, 42};
    static const char *const names[] = {"first", "", "z"};
    static const uint8_t ks[] = {0, 3, 1};
    for (int i = 0; i < 3; i++) {
        mantra_AllTypes_tpl_Structs_Items_elem e;
        ck_assert_int_eq(mantra_AllTypes_tpl_Structs_Items_next(&c, &e), MANTRA_DECODE_OK);
        ck_assert(e.Id == ids[i]);
        ck_assert(mantra_str16_equals_utf8(e.Name, names[i]));
        ck_assert_uint_eq(e.K, ks[i]);
        ck_assert_uint_eq(e.Sub.count, ks[i]);
        for (uint8_t j = 0; j < e.K; j++)
            ck_assert_uint_eq(mantra_array_u32(e.Sub, j), 100u * ks[i] + j);
    }
    ck_assert_int_eq(mantra_cursor_finish(&c), MANTRA_DECODE_OK);
}
END_TEST

/* ---- events without payload, other versions, registry ------------------------------------------ */
START_TEST(empty_event_and_descriptors) {
    ck_assert_int_eq(mantra_AllTypes_Empty_write(), MANTRA_WRITE_OK);
    ck_assert_uint_eq(g_size, 0);
    mantra_AllTypes_Empty_fields f;
    ck_assert_int_eq(mantra_AllTypes_Empty_decode(g_payload, 0, 8, &f), MANTRA_DECODE_OK);
    ck_assert_int_eq(mantra_AllTypes_Empty_decode((const uint8_t *)"x", 1, 8, &f), MANTRA_DECODE_TRAILING);

    const mantra_event_desc *e = &mantra_AllTypes_events[MANTRA_AllTypes_EVENT_Strings_V1];
    ck_assert_str_eq(e->name, "Strings");
    ck_assert_str_eq(e->symbol, "Strings_V1");
    ck_assert_uint_eq(e->id, 2);
    ck_assert_uint_eq(e->version, 1);
    ck_assert_uint_eq(e->level, MANTRA_LEVEL_VERBOSE);
    ck_assert_uint_eq(e->opcode, 1); /* win:Start */
    ck_assert(e->keywords == MANTRA_AllTypes_KEYWORD_Strings);
    ck_assert(mantra_AllTypes_events[MANTRA_AllTypes_EVENT_Strings].keywords == (0x2u | 0x8000000000000000ull));
    ck_assert_uint_eq(mantra_AllTypes_events[MANTRA_AllTypes_EVENT_Strings].opcode, 10);
    ck_assert_uint_eq(mantra_AllTypes_events[MANTRA_AllTypes_EVENT_Scalars].task, 7);
    ck_assert_uint_eq(mantra_AllTypes_events[MANTRA_AllTypes_EVENT_Scalars].opcode, 11);
    ck_assert_uint_eq(mantra_AllTypes_events[MANTRA_AllTypes_EVENT_Scalars].flags, MANTRA_EVENT_STACK);
    ck_assert_uint_eq(mantra_AllTypes_events[MANTRA_AllTypes_EVENT_Structs].flags, MANTRA_EVENT_PARTIAL_METADATA);
    ck_assert_uint_eq(mantra_AllTypes_events[MANTRA_AllTypes_EVENT_RenamedEvent].level, MANTRA_LEVEL_ERROR);
    ck_assert_str_eq(mantra_AllTypes_events[MANTRA_AllTypes_EVENT_RenamedEvent].name, "Renamed");
    ck_assert_uint_eq(mantra_AllTypes_provider.event_count, 11);
    ck_assert_str_eq(mantra_AllTypes_provider.name, "Mantra-Test-AllTypes");
    ck_assert_int_eq(MANTRA_PGO_BasicBlockIntCount, 0x41);
    ck_assert_int_eq(MANTRA_PGO_TypeHandle_SIZE, -1);
}
END_TEST

START_TEST(maps_name_values) {
    ck_assert_str_eq(mantra_AllTypes_Color_name(0), "Red");
    ck_assert_str_eq(mantra_AllTypes_Color_name(1), "Gr\xc3\xbcn");
    ck_assert_ptr_null(mantra_AllTypes_Color_name(2));
    ck_assert_str_eq(mantra_AllTypes_Flags_name(0x80000000u), "Top");
    ck_assert_ptr_null(mantra_AllTypes_Flags_name(0x81));
}
END_TEST

START_TEST(disabled_event_does_nothing) {
    mantra_set_listener(NULL, NULL);
    ck_assert(!MANTRA_AllTypes_Scalars_enabled());
    ck_assert_int_eq(mantra_AllTypes_Strings_write("\xff", "", ""), MANTRA_WRITE_DISABLED); /* not even validated */
    ck_assert_int_eq(mantra_AllTypes_Empty_write(), MANTRA_WRITE_DISABLED);
    ck_assert_int_eq(g_calls, 0);
    mantra_set_listener(capture, NULL);
    ck_assert(MANTRA_AllTypes_Scalars_enabled());
}
END_TEST

/* ---- decoders on damaged payloads -------------------------------------------------------------- */
START_TEST(truncated_payloads_are_reported) {
    uint8_t items[64];
    size_t size = put_item(items, 7, "ab", 2);
    ck_assert_int_eq(mantra_AllTypes_Structs_write(1, items, size, 9), MANTRA_WRITE_OK);
    size_t full = g_size;
    uint8_t copy[128];
    memcpy(copy, g_payload, full);
    mantra_AllTypes_Structs_fields f;
    for (size_t n = 0; n < full; n++) {
        int rc = mantra_AllTypes_Structs_decode(copy, n, 8, &f);
        ck_assert_msg(rc == MANTRA_DECODE_SHORT || rc == MANTRA_DECODE_BAD_STRING, "length %zu gave %d", n, rc);
    }
    copy[full] = 0x55;
    ck_assert_int_eq(mantra_AllTypes_Structs_decode(copy, full + 1, 8, &f), MANTRA_DECODE_TRAILING);
    /* A count far beyond the payload is refused, not walked. */
    uint32_t huge = UINT32_MAX;
    memcpy(copy, &huge, 4);
    ck_assert_int_lt(mantra_AllTypes_Structs_decode(copy, full, 8, &f), 0);
}
END_TEST

START_TEST(unterminated_string_is_bad) {
    const uint8_t p[] = {'a', 0, 'b', 0};
    mantra_AllTypes_Strings_fields f;
    ck_assert_int_eq(mantra_AllTypes_Strings_decode(p, sizeof p, 8, &f), MANTRA_DECODE_BAD_STRING);
    const uint8_t odd[] = {'a', 0, 0};
    ck_assert_int_eq(mantra_AllTypes_Strings_decode(odd, sizeof odd, 8, &f), MANTRA_DECODE_BAD_STRING);
}
END_TEST

/* The every-version reader of Grown (V0, V1, V3; tests/golden/alltypes.yaml): each version's payload
 * decodes by its own reader into V3's fields, shared fields copied (not V0's AnsiString Label, whose
 * type V1 changed), the rest zero; a skipped or newer version reads with V3's reader. */
START_TEST(every_version_reader) {
    ck_assert_int_eq(MANTRA_AllTypes_Grown_LATEST_VERSION, 3);
    ck_assert(mantra_AllTypes_Grown_declares(0) && mantra_AllTypes_Grown_declares(1) && mantra_AllTypes_Grown_declares(3));
    ck_assert(!mantra_AllTypes_Grown_declares(2) && !mantra_AllTypes_Grown_declares(4));
    mantra_AllTypes_Grown_any f;
    uint8_t v0[64], v1[64], v3[64];
    size_t n0, n1, n3;
    ck_assert_int_eq(mantra_AllTypes_Grown_write(7, "ab"), MANTRA_WRITE_OK);
    memcpy(v0, g_payload, n0 = g_size);
    ck_assert_int_eq(mantra_AllTypes_Grown_V1_write(8, "cd", UINT64_C(0x1122334455667788)), MANTRA_WRITE_OK);
    memcpy(v1, g_payload, n1 = g_size);
    ck_assert_int_eq(mantra_AllTypes_Grown_V3_write(9, "e", 5, 0xBEEF), MANTRA_WRITE_OK);
    memcpy(v3, g_payload, n3 = g_size);
    ck_assert_uint_eq(n0, 4 + 3);
    ck_assert_uint_eq(n1, 4 + 6 + 8);
    ck_assert_uint_eq(n3, 4 + 4 + 8 + 2);

    memset(&f, 0xAB, sizeof f);
    ck_assert_int_eq(mantra_AllTypes_Grown_decode_any(0, v0, n0, 8, &f), MANTRA_DECODE_OK);
    ck_assert_uint_eq(f.A, 7);
    ck_assert_ptr_null(f.Label.data);
    ck_assert_uint_eq(f.Label.units, 0);
    ck_assert_uint_eq(f.B, 0);
    ck_assert_uint_eq(f.C, 0);

    ck_assert_int_eq(mantra_AllTypes_Grown_decode_any(1, v1, n1, 8, &f), MANTRA_DECODE_OK);
    ck_assert_uint_eq(f.A, 8);
    ck_assert(mantra_str16_equals_utf8(f.Label, "cd"));
    ck_assert_uint_eq(f.B, UINT64_C(0x1122334455667788));
    ck_assert_uint_eq(f.C, 0);

    ck_assert_int_eq(mantra_AllTypes_Grown_decode_any(3, v3, n3, 8, &f), MANTRA_DECODE_OK);
    ck_assert_uint_eq(f.A, 9);
    ck_assert(mantra_str16_equals_utf8(f.Label, "e"));
    ck_assert_uint_eq(f.B, 5);
    ck_assert_uint_eq(f.C, 0xBEEF);

    /* version 2 (not declared) reads with V3's reader: a V1-shaped payload ends before C, and the
     * fields before C keep their values */
    ck_assert_int_eq(mantra_AllTypes_Grown_decode_any(2, v1, n1, 8, &f), MANTRA_DECODE_SHORT);
    ck_assert_uint_eq(f.A, 8);
    ck_assert_uint_eq(f.B, UINT64_C(0x1122334455667788));
    ck_assert_uint_eq(f.C, 0);
    /* a newer version that appended a field: V3's fields, and TRAILING */
    v3[n3] = 0x42;
    ck_assert_int_eq(mantra_AllTypes_Grown_decode_any(4, v3, n3 + 1, 8, &f), MANTRA_DECODE_TRAILING);
    ck_assert_uint_eq(f.C, 0xBEEF);
    /* an older version's payload that does not fit its own template */
    ck_assert_int_eq(mantra_AllTypes_Grown_decode_any(0, v0, 3, 8, &f), MANTRA_DECODE_SHORT);
    ck_assert_int_eq(mantra_AllTypes_Grown_decode_any(1, v1, n1 + 0, 8, &f), MANTRA_DECODE_OK);
    v1[n1] = 1;
    ck_assert_int_eq(mantra_AllTypes_Grown_decode_any(1, v1, n1 + 1, 8, &f), MANTRA_DECODE_TRAILING);
}
END_TEST

/* A struct with `layout: c` (Buckets.Values: u16 Index, u32 Hits, Pointer Size, u8 Tag): the writer
 * takes the caller's C array as it is in memory, and the reader finds each member at its natural
 * alignment, each element padded to its largest member's (24 bytes with 8-byte pointers, 16 with 4). */
typedef struct bucket {
    uint16_t index;
    uint32_t hits;
    uintptr_t size;
    uint8_t tag;
} bucket;

START_TEST(c_layout_struct) {
    static const bucket values[3] = {{0, 7, 0x3a8, 1}, {1, 3, 0x410, 2}, {4, 1, 0xa60, 0xff}};
    ck_assert_int_eq(mantra_AllTypes_Buckets_write(9, 3, values, sizeof values), MANTRA_WRITE_OK);
    ck_assert_uint_eq(g_size, 4 + sizeof values);
    mantra_AllTypes_Buckets_fields f;
    unsigned ptr = (unsigned)sizeof(uintptr_t);
    ck_assert_int_eq(mantra_AllTypes_Buckets_decode(g_payload, g_size, ptr, &f), MANTRA_DECODE_OK);
    ck_assert_uint_eq(f.Kind, 9);
    ck_assert_uint_eq(f.Values.count, 3);
    ck_assert_uint_eq(f.Values.size, sizeof values);
    mantra_cursor c = mantra_cursor_of(f.Values, ptr);
    for (int i = 0; i < 3; i++) {
        mantra_AllTypes_tpl_Buckets_Values_elem e;
        ck_assert_int_eq(mantra_AllTypes_tpl_Buckets_Values_next(&c, &e), MANTRA_DECODE_OK);
        ck_assert_uint_eq(e.Index, values[i].index);
        ck_assert_uint_eq(e.Hits, values[i].hits);
        ck_assert_uint_eq(e.Size, values[i].size);
        ck_assert_uint_eq(e.Tag, values[i].tag);
        ck_assert_uint_eq(c.pos, (size_t)(i + 1) * sizeof(bucket));
    }
    /* a 32-bit process's array: Index, 2 bytes of padding, Hits, Size (4 bytes), Tag, 3 bytes */
    static const uint8_t p32[] = {5, 0, 2, 0,                                       /* Kind, Count */
                                  1, 0, 0xEE, 0xEE, 10, 0, 0, 0, 0x44, 0x33, 0x22, 0x11, 7, 0xEE, 0xEE, 0xEE,
                                  2, 0, 0xEE, 0xEE, 20, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 8, 0xEE, 0xEE, 0xEE};
    ck_assert_int_eq(mantra_AllTypes_Buckets_decode(p32, sizeof p32, 4, &f), MANTRA_DECODE_OK);
    c = mantra_cursor_of(f.Values, 4);
    mantra_AllTypes_tpl_Buckets_Values_elem e;
    ck_assert_int_eq(mantra_AllTypes_tpl_Buckets_Values_next(&c, &e), MANTRA_DECODE_OK);
    ck_assert(e.Index == 1 && e.Hits == 10 && e.Size == 0x11223344u && e.Tag == 7);
    ck_assert_int_eq(mantra_AllTypes_tpl_Buckets_Values_next(&c, &e), MANTRA_DECODE_OK);
    ck_assert(e.Index == 2 && e.Hits == 20 && e.Size == 0x55667788u && e.Tag == 8);
    /* without the last element's trailing padding the payload is short */
    ck_assert_int_eq(mantra_AllTypes_Buckets_decode(p32, sizeof p32 - 1, 4, &f), MANTRA_DECODE_SHORT);
    /* read packed (no padding), the same bytes would not fit: Count 2 packed elements are 11 bytes each */
    ck_assert_uint_eq(sizeof p32 - 4, 2 * 16);
}
END_TEST

START_TEST(pointer_size_4_traces) {
    /* A 32-bit writer's Scalars payload: pointer field is 4 bytes. */
    uint8_t p[75] = {0};
    size_t off = 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + 4 + 8 + 4 + 16; /* P follows G */
    p[off] = 0x78;
    p[off + 1] = 0x56;
    p[off + 2] = 0x34;
    p[off + 3] = 0x12;
    mantra_AllTypes_Scalars_fields f;
    ck_assert_int_eq(mantra_AllTypes_Scalars_decode(p, off + 4 + 8 + 1, 4, &f), MANTRA_DECODE_OK);
    ck_assert(f.P == 0x12345678u);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("alltypes");
    TCase *t = tcase_create("roundtrip");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_loop_test(t, scalars_round_trip, 0, (int)(sizeof SCALAR_CASES / sizeof SCALAR_CASES[0]));
    tcase_add_test(t, scalars_exact_bytes);
    tcase_add_test(t, null_guid_is_zero);
    tcase_add_loop_test(t, strings_round_trip, 0, (int)(sizeof STRINGS / sizeof STRINGS[0]));
    tcase_add_test(t, strings_exact_utf16_bytes);
    tcase_add_test(t, strings_utf16_variant);
    tcase_add_test(t, strings_invalid_utf8_refused_and_counted);
    tcase_add_loop_test(t, arrays_round_trip, 0, 4);
    tcase_add_test(t, payload_over_64k_refused_and_counted);
    tcase_add_test(t, largest_arrays_that_fit);
    tcase_add_test(t, structs_round_trip);
    tcase_add_test(t, empty_event_and_descriptors);
    tcase_add_test(t, maps_name_values);
    tcase_add_test(t, disabled_event_does_nothing);
    tcase_add_test(t, truncated_payloads_are_reported);
    tcase_add_test(t, unterminated_string_is_bad);
    tcase_add_test(t, pointer_size_4_traces);
    tcase_add_test(t, every_version_reader);
    tcase_add_test(t, c_layout_struct);
    suite_add_tcase(s, t);
    return s;
}

MANTRA_CHECK_MAIN(suite)
