/* One visitor (mantra/visit.h) for both decoders: a payload walked with trace field descriptions
 * (mantra_decode_payload) and with a loaded manifest's template of the same layout
 * (mantra_manifest_decode) gives the same calls with the same names, types, depths, element
 * indexes, offsets, sizes and values; stopping and skipping work alike. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "mantra/manifest.h"
#include "mantra/reader.h"

typedef struct calls_log {
    char text[4096];
    size_t len;
    int calls;
    int stop_at;     /* return STOP at this call (1-based), 0 never */
    int skip_arrays; /* begin_array returns 1 */
} calls_log;

#define STOP (-77)

/* A: Int32; Vals: 2 x UInt16; Blob: 3 bytes; Items: 2 x {X: Byte, S: String}; Z: UInt64 */
static const uint8_t payload[] = {
    0xfe, 0xff, 0xff, 0xff,                   /* A = -2 */
    0x01, 0x00, 0x02, 0x01,                   /* Vals = 1, 0x102 */
    0xaa, 0xbb, 0xcc,                         /* Blob */
    0x07, 'h', 0, 'i', 0, 0, 0,               /* Items[0] = {7, "hi"} */
    0x08, 0, 0,                               /* Items[1] = {8, ""} */
    0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* Z */
};

static int add(calls_log *l, const char *what, const mantra_value *v) {
    l->calls++;
    if (v->size > 0) /* data[0..size) are the value's bytes in the payload */
        ck_assert_ptr_eq(v->data, payload + v->offset);
    int n = snprintf(l->text + l->len, sizeof l->text - l->len,
                     "%s %s t%" PRIu32 " d%u i%" PRIu64 " @%zu+%zu n%zu u%" PRIu64 "\n", what, v->name, v->type,
                     v->depth, v->index, v->offset, v->size, v->count, v->u);
    ck_assert_int_gt(n, 0);
    l->len += (size_t)n;
    ck_assert_uint_lt(l->len, sizeof l->text);
    if (l->stop_at == l->calls)
        return STOP;
    return 0;
}

static int on_scalar(void *ctx, const mantra_value *v) {
    return add(ctx, "scalar", v);
}
static int on_begin_object(void *ctx, const mantra_value *v) {
    return add(ctx, "{", v);
}
static int on_end_object(void *ctx, const mantra_value *v) {
    return add(ctx, "}", v);
}
static int on_begin_array(void *ctx, const mantra_value *v) {
    calls_log *l = ctx;
    int rc = add(l, "[", v);
    return rc == 0 && l->skip_arrays ? 1 : rc;
}
static int on_end_array(void *ctx, const mantra_value *v) {
    return add(ctx, "]", v);
}

static const mantra_field_visitor logger = {on_scalar, on_begin_object, on_end_object, on_begin_array, on_end_array};

static const mantra_field_desc u16 = {"", MANTRA_TYPE_UINT16, 0, NULL, NULL, 0};
static const mantra_field_desc byte = {"", MANTRA_TYPE_BYTE, 0, NULL, NULL, 0};
static const mantra_field_desc members[] = {
    {"X", MANTRA_TYPE_BYTE, 0, NULL, NULL, 0},
    {"S", MANTRA_TYPE_STRING, 0, NULL, NULL, 0},
};
static const mantra_field_desc object = {"", MANTRA_TYPE_OBJECT, 0, NULL, members, 2};
static const mantra_field_desc fields[] = {
    {"A", MANTRA_TYPE_INT32, 0, NULL, NULL, 0},
    {"Vals", MANTRA_TYPE_FIXED_ARRAY, 2, &u16, NULL, 0},
    {"Blob", MANTRA_TYPE_FIXED_ARRAY, 3, &byte, NULL, 0},
    {"Items", MANTRA_TYPE_FIXED_ARRAY, 2, &object, NULL, 0},
    {"Z", MANTRA_TYPE_UINT64, 0, NULL, NULL, 0},
};

static const char yaml[] = "providers:\n"
                           "  - name: Visit-Test\n"
                           "    guid: 11111111-2222-3333-4444-555555555555\n"
                           "    events:\n"
                           "      - name: E\n"
                           "        id: 1\n"
                           "        fields:\n"
                           "          - {name: A, type: Int32}\n"
                           "          - {name: Vals, type: UInt16, count: 2}\n"
                           "          - {name: Blob, type: Binary, length: 3}\n"
                           "          - name: Items\n"
                           "            type: struct\n"
                           "            count: 2\n"
                           "            fields:\n"
                           "              - {name: X, type: UInt8}\n"
                           "              - {name: S, type: UnicodeString}\n"
                           "          - {name: Z, type: UInt64}\n";

static const char expected[] = /* t: enum mantra_type (22 FixedArray, 1 Object) */
    "scalar A t9 d0 i0 @0+4 n0 u4294967294\n"
    "[ Vals t22 d0 i0 @4+4 n2 u0\n"
    "scalar  t8 d1 i0 @4+2 n0 u1\n"
    "scalar  t8 d1 i1 @6+2 n0 u258\n"
    "] Vals t22 d0 i0 @4+4 n2 u0\n"
    "[ Blob t22 d0 i0 @8+3 n3 u0\n"
    "scalar  t6 d1 i0 @8+1 n0 u170\n"
    "scalar  t6 d1 i1 @9+1 n0 u187\n"
    "scalar  t6 d1 i2 @10+1 n0 u204\n"
    "] Blob t22 d0 i0 @8+3 n3 u0\n"
    "[ Items t22 d0 i0 @11+0 n2 u0\n"
    "{  t1 d1 i0 @11+0 n2 u0\n"
    "scalar X t6 d2 i0 @11+1 n0 u7\n"
    "scalar S t18 d2 i0 @12+4 n2 u0\n"
    "}  t1 d1 i0 @11+7 n2 u0\n"
    "{  t1 d1 i1 @18+0 n2 u0\n"
    "scalar X t6 d2 i0 @18+1 n0 u8\n"
    "scalar S t18 d2 i0 @19+0 n0 u0\n"
    "}  t1 d1 i1 @18+3 n2 u0\n"
    "] Items t22 d0 i0 @11+10 n2 u0\n"
    "scalar Z t12 d0 i0 @21+8 n0 u1234605616436508552\n";

static mantra_manifest *g_m;
static const mantra_manifest_template *g_tpl;

static void setup(void) {
    mantra_manifest_error *err = NULL;
    g_m = mantra_manifest_load_memory(yaml, sizeof yaml - 1, "visit.yaml", &err);
    if (g_m == NULL) {
        char buf[512];
        mantra_manifest_error_format(err, buf, sizeof buf);
        ck_abort_msg("%s", buf);
    }
    const mantra_manifest_provider *p = mantra_manifest_find_provider(g_m, "Visit-Test");
    ck_assert_ptr_nonnull(p);
    const mantra_manifest_event *e = mantra_manifest_find_event(p, 1, 0);
    ck_assert_ptr_nonnull(e);
    g_tpl = e->tpl;
}

static void teardown(void) {
    mantra_manifest_free(g_m);
}

static int by_trace(calls_log *l) {
    return mantra_decode_payload(fields, 5, payload, sizeof payload, 8, &logger, l);
}

static int by_manifest(calls_log *l) {
    return mantra_manifest_decode(g_tpl, payload, sizeof payload, 8, &logger, l, NULL);
}

START_TEST(same_calls_from_both_decoders) {
    calls_log a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    ck_assert_int_eq(by_trace(&a), 0);
    ck_assert_int_eq(by_manifest(&b), MANTRA_DECODE_OK);
    ck_assert_str_eq(a.text, expected);
    ck_assert_str_eq(b.text, expected);
}
END_TEST

START_TEST(stop_at_every_call) {
    for (int stop = 1; stop <= 21; stop++) {
        calls_log a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        a.stop_at = b.stop_at = stop;
        ck_assert_int_eq(by_trace(&a), STOP);
        ck_assert_int_eq(by_manifest(&b), STOP);
        ck_assert_int_eq(a.calls, stop);
        ck_assert_str_eq(a.text, b.text);
    }
}
END_TEST

START_TEST(skip_elements) {
    calls_log a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.skip_arrays = b.skip_arrays = 1;
    ck_assert_int_eq(by_trace(&a), 0);
    ck_assert_int_eq(by_manifest(&b), MANTRA_DECODE_OK);
    ck_assert_int_eq(a.calls, 8); /* A, and [ ] of each array, Z */
    ck_assert_str_eq(a.text, b.text);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("visit");
    TCase *tc = tcase_create("visit");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, same_calls_from_both_decoders);
    tcase_add_test(tc, stop_at_every_call);
    tcase_add_test(tc, skip_elements);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
