/* The PGO store (mantra/pgo.h): kinds and layout (pgo-format.md §1.2, §3), schema refusals, modules
 * and methods, counters (uint32 wrap at 2^32: this test runs under UBSan in the ASan build),
 * snapshots with and without reset, initial values, iteration in registration order. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/pgo.h"

static mantra_pgo_module *module(uint8_t tag) {
    mantra_guid g;
    memset(&g, tag, sizeof g);
    char name[32];
    snprintf(name, sizeof name, "mod%u", tag);
    mantra_pgo_module *m = NULL;
    ck_assert_int_eq(mantra_pgo_module_register(name, "/x/mod.dll", &g, &m), MANTRA_OK);
    return m;
}

static mantra_pgo_method *method(mantra_pgo_module *mod, uint32_t token) {
    mantra_pgo_method *m = NULL;
    ck_assert_int_eq(mantra_pgo_method_register(mod, token, "Ns.C", "M", "int32 ()", 20, &m), MANTRA_OK);
    return m;
}

START_TEST(kinds_sizes_alignment) {
    ck_assert_int_eq(MANTRA_PGO_BasicBlockIntCount, 0x41);
    ck_assert_int_eq(MANTRA_PGO_HandleHistogramIntCount, 0xB1);
    ck_assert_int_eq(MANTRA_PGO_ValueHistogramIntCount, 0x231);
    ck_assert_int_eq(MANTRA_PGO_ValueHistogram, 0x242);
    ck_assert_int_eq(mantra_pgo_element_size(MANTRA_PGO_NumRuns, 8), 0);
    ck_assert_int_eq(mantra_pgo_element_size(MANTRA_PGO_EdgeIntCount, 8), 4);
    ck_assert_int_eq(mantra_pgo_element_size(MANTRA_PGO_EdgeLongCount, 4), 8);
    ck_assert_int_eq(mantra_pgo_element_size(MANTRA_PGO_GetLikelyClass, 4), 4);
    ck_assert_int_eq(mantra_pgo_element_size(MANTRA_PGO_GetLikelyMethod, 8), 8);
    ck_assert_int_eq(mantra_pgo_element_size(0x45, 8), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_pgo_element_size(0x41, 2), MANTRA_EINVAL);
    /* HandleHistogramIntCount: FourByte with pointer alignment */
    ck_assert_int_eq(mantra_pgo_element_align(MANTRA_PGO_HandleHistogramIntCount, 8), 8);
    ck_assert_int_eq(mantra_pgo_element_align(MANTRA_PGO_HandleHistogramIntCount, 4), 4);
    ck_assert_int_eq(mantra_pgo_element_align(MANTRA_PGO_BasicBlockIntCount | MANTRA_PGO_ALIGN_8_BYTE, 4), 8);
    ck_assert_int_eq(mantra_pgo_element_align(MANTRA_PGO_BasicBlockLongCount, 4), 8);
    ck_assert_int_eq(mantra_pgo_element_align(MANTRA_PGO_Version, 8), 0);
}
END_TEST

/* The kinds libmantra is built from are manifest/dotnet.yaml's pgo_kinds (dotnet_defs.h's
 * MANTRA_PGO_KINDS): the same names, values and sizes in the same order. */
START_TEST(kinds_come_from_the_manifest) {
#define ROW(name, value, size) {#name, (int32_t)(value), (size)},
    static const mantra_pgo_kind_info expected[] = {MANTRA_PGO_KINDS(ROW)};
#undef ROW
    size_t n = 0;
    const mantra_pgo_kind_info *k = mantra_pgo_kinds(&n);
    ck_assert_uint_eq(n, sizeof expected / sizeof expected[0]);
    ck_assert_uint_eq(n, 20);
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(k[i].name, expected[i].name);
        ck_assert_int_eq(k[i].value, expected[i].value);
        ck_assert_int_eq(k[i].size, expected[i].size);
    }
    ck_assert_ptr_eq(mantra_pgo_kinds(NULL), k);
    ck_assert_str_eq(mantra_pgo_kind_name(MANTRA_PGO_BasicBlockIntCount), "BasicBlockIntCount");
    ck_assert_str_eq(mantra_pgo_kind_name(0x242), "ValueHistogram");
    ck_assert_str_eq(mantra_pgo_kind_name(0), "None");
    ck_assert_ptr_null(mantra_pgo_kind_name(0x281)); /* not declared: no name */
    int32_t v = -1;
    ck_assert_int_eq(mantra_pgo_kind_by_name("HandleHistogramTypes", &v), MANTRA_OK);
    ck_assert_int_eq(v, 0xC3);
    ck_assert_int_eq(mantra_pgo_kind_by_name("handlehistogramtypes", &v), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_pgo_kind_by_name(NULL, &v), MANTRA_EINVAL);
    /* an undeclared descriptor over a declared element type passes by its element type */
    ck_assert_int_eq(mantra_pgo_element_size(0x281, 8), 4);
    ck_assert_int_eq(mantra_pgo_element_size(0x283, 4), 4);
    ck_assert_int_eq(mantra_pgo_element_size(MANTRA_PGO_TypeHandle, 8), 8);
    ck_assert_int_eq(MANTRA_PGO_TypeHandle_SIZE, -1);
}
END_TEST

START_TEST(layout_rule) {
    /* a class probe as the JIT lays it out: int count, then a pointer-aligned histogram count, then types */
    static const mantra_pgo_schema s[] = {
        {MANTRA_PGO_BasicBlockIntCount, 0, 1, 0},      /* 0..4 */
        {MANTRA_PGO_HandleHistogramIntCount, 5, 1, 0}, /* aligned to 8: 8..12 */
        {MANTRA_PGO_HandleHistogramTypes, 5, 8, 0},     /* 16..80 (8-byte handles) */
        {MANTRA_PGO_BasicBlockIntCount, 9, 3, 0},      /* 80..92 */
        {MANTRA_PGO_EdgeLongCount, 9, 1, 12},           /* 96..104 */
    };
    size_t off[5], size;
    ck_assert_int_eq(mantra_pgo_layout(s, 5, 8, off, &size), MANTRA_OK);
    ck_assert_uint_eq(off[0], 0);
    ck_assert_uint_eq(off[1], 8);
    ck_assert_uint_eq(off[2], 16);
    ck_assert_uint_eq(off[3], 80);
    ck_assert_uint_eq(off[4], 96);
    ck_assert_uint_eq(size, 104);
    /* 4-byte pointers: 0, 4, 8..40, 40..52, 56..64 */
    ck_assert_int_eq(mantra_pgo_layout(s, 5, 4, off, &size), MANTRA_OK);
    ck_assert_uint_eq(off[1], 4);
    ck_assert_uint_eq(off[2], 8);
    ck_assert_uint_eq(off[3], 40);
    ck_assert_uint_eq(off[4], 56);
    ck_assert_uint_eq(size, 64);
    /* the size-0 quirk: a record after Version starts where the record before Version started */
    static const mantra_pgo_schema q[] = {
        {MANTRA_PGO_BasicBlockIntCount, 0, 2, 0},
        {MANTRA_PGO_Version, 0, 1, 3},
        {MANTRA_PGO_BasicBlockIntCount, 4, 1, 0},
    };
    ck_assert_int_eq(mantra_pgo_layout(q, 3, 8, off, &size), MANTRA_OK);
    ck_assert_uint_eq(off[1], 0);
    ck_assert_uint_eq(off[2], 0);
    ck_assert_uint_eq(size, 8);
    size_t bad = 99;
    ck_assert_int_eq(mantra_pgo_schema_check(q, 3, &bad), MANTRA_EINVAL); /* overlap: refused */
    ck_assert_uint_eq(bad, 2);
    ck_assert_int_eq(mantra_pgo_value_count(q, 3), 3);
}
END_TEST

START_TEST(schema_refusals) {
    size_t bad = 99;
    ck_assert_int_eq(mantra_pgo_schema_check(NULL, 0, &bad), MANTRA_EINVAL);
    mantra_pgo_schema s[3] = {{0x41, 0, 1, 0}, {0x41, 4, 1, 0}, {0x41, 8, 1, 0}};
    ck_assert_int_eq(mantra_pgo_schema_check(s, 3, &bad), MANTRA_OK);
    s[1].kind = 0x47; /* unknown element type 7 */
    ck_assert_int_eq(mantra_pgo_schema_check(s, 3, &bad), MANTRA_EINVAL);
    ck_assert_uint_eq(bad, 1);
    s[1].kind = 0x41;
    s[2].count = -1;
    ck_assert_int_eq(mantra_pgo_schema_check(s, 3, &bad), MANTRA_EINVAL);
    ck_assert_uint_eq(bad, 2);
    s[2] = s[1]; /* identical consecutive records: mask 0 */
    ck_assert_int_eq(mantra_pgo_schema_check(s, 3, &bad), MANTRA_EINVAL);
    ck_assert_uint_eq(bad, 2);
    s[2].il_offset = 0; /* the same as record 0 but not consecutive: fine */
    ck_assert_int_eq(mantra_pgo_schema_check(s, 3, &bad), MANTRA_OK);
    s[0].kind = MANTRA_PGO_None;
    ck_assert_int_eq(mantra_pgo_schema_check(s, 3, &bad), MANTRA_EINVAL);
    ck_assert_uint_eq(bad, 0);
    /* the store and the encoder refuse the same schemas */
    mantra_pgo_method *m = method(module(1), 0x06000001);
    ck_assert_int_eq(mantra_pgo_method_instrument(m, s, 3), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_pgo_encode(s, 3, (int64_t[]){0, 0, 0}, 3, NULL, 0), MANTRA_EINVAL);
    ck_assert_ptr_null(mantra_pgo_method_schema(m, NULL));
}
END_TEST

START_TEST(modules_and_methods) {
    mantra_pgo_module *a = module(2), *b = module(3);
    ck_assert_ptr_ne(a, b);
    ck_assert_ptr_eq(module(2), a); /* the same GUID, name and path: the same module */
    mantra_pgo_module_info mi;
    mantra_pgo_module_describe(a, &mi);
    ck_assert_str_eq(mi.name, "mod2");
    ck_assert_str_eq(mi.path, "/x/mod.dll");
    ck_assert_uint_eq(mi.guid.data1, 0x02020202u);
    mantra_pgo_method *m1 = method(a, 0x06000001), *m2 = method(a, 0x06000002), *m3 = method(b, 0x06000001);
    ck_assert_ptr_ne(m1, m2);
    ck_assert_ptr_ne(m1, m3);
    ck_assert_ptr_eq(method(a, 0x06000001), m1);
    mantra_pgo_method_info info;
    mantra_pgo_method_describe(m2, &info);
    ck_assert_ptr_eq(info.module, a);
    ck_assert_uint_eq(info.token, 0x06000002);
    ck_assert_str_eq(info.name_space, "Ns.C");
    ck_assert_str_eq(info.name, "M");
    ck_assert_str_eq(info.signature, "int32 ()");
    ck_assert_uint_eq(info.il_size, 20);
    mantra_pgo_method_info i1;
    mantra_pgo_method_describe(m1, &i1);
    ck_assert_uint_eq(info.index, i1.index + 1);
    mantra_pgo_method *n = NULL;
    ck_assert_int_eq(mantra_pgo_method_register(a, 7, NULL, NULL, NULL, 0, &n), MANTRA_OK);
    mantra_pgo_method_describe(n, &info);
    ck_assert_str_eq(info.name, "");
    ck_assert_int_eq(mantra_pgo_method_register(NULL, 7, NULL, NULL, NULL, 0, &n), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_pgo_module_register(NULL, NULL, &mi.guid, &a), MANTRA_EINVAL);
}
END_TEST

START_TEST(counters_and_wrap) {
    mantra_pgo_method *m = method(module(4), 0x06000010);
    static const mantra_pgo_schema s[] = {
        {MANTRA_PGO_BasicBlockIntCount, 0, 1, 0},
        {MANTRA_PGO_BasicBlockIntCount, 12, 1, 0},
        {MANTRA_PGO_BasicBlockLongCount, 20, 1, 0},
        {MANTRA_PGO_HandleHistogramTypes, 20, 2, 0},
    };
    ck_assert_int_eq(mantra_pgo_method_instrument(m, s, 4), MANTRA_OK);
    ck_assert_int_eq(mantra_pgo_method_instrument(m, s, 4), MANTRA_OK);     /* the same again: kept */
    ck_assert_int_eq(mantra_pgo_method_instrument(m, s, 3), MANTRA_ESTATE); /* another schema */
    size_t n = 0;
    ck_assert_ptr_nonnull(mantra_pgo_method_schema(m, &n));
    ck_assert_uint_eq(n, 4);
    uint32_t *c0 = mantra_pgo_counters_u32(m, 0), *c1 = mantra_pgo_counters_u32(m, 1);
    uint64_t *l = mantra_pgo_counters_u64(m, 2);
    uintptr_t *h = mantra_pgo_handles(m, 3);
    ck_assert_ptr_nonnull(c0);
    ck_assert_ptr_nonnull(c1);
    ck_assert_ptr_nonnull(l);
    ck_assert_ptr_nonnull(h);
    ck_assert_ptr_eq((void *)c1, (char *)c0 + 4);
    ck_assert_ptr_eq((void *)l, (char *)c0 + 8);
    ck_assert_ptr_eq(mantra_pgo_record_data(m, 3), (void *)h);
    ck_assert_ptr_null(mantra_pgo_counters_u64(m, 0)); /* wrong element type */
    ck_assert_ptr_null(mantra_pgo_counters_u32(m, 4)); /* out of range */
    ck_assert_ptr_null(mantra_pgo_handles(m, 0));
    ck_assert_uint_eq(*c0, 0);
    for (int i = 0; i < 5; i++)
        mantra_pgo_count(c0);
    ck_assert_uint_eq(*c0, 5);
    /* wrap at 2^32: unsigned arithmetic, no overflow for UBSan to report */
    *c1 = UINT32_MAX - 1;
    mantra_pgo_count(c1);
    ck_assert_uint_eq(*c1, UINT32_MAX);
    mantra_pgo_count(c1);
    ck_assert_uint_eq(*c1, 0);
    mantra_pgo_count(c1);
    ck_assert_uint_eq(*c1, 1);
    *l = UINT64_MAX;
    mantra_pgo_count_u64(l);
    ck_assert(*l == 0);
    mantra_pgo_count_u64(l);
    h[0] = 0x1234;
    h[1] = 7;

    /* a snapshot: FourByte as signed int32 (2^31 and up read negative), EightByte and handles 64-bit */
    *c1 = 0x80000000u;
    mantra_pgo_data d;
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert_uint_eq(d.records, 4);
    ck_assert_mem_eq(d.schema, s, sizeof s);
    ck_assert_uint_eq(d.value_count, 5);
    ck_assert(d.values[0] == 5);
    ck_assert(d.values[1] == INT32_MIN);
    ck_assert(d.values[2] == 1);
    ck_assert(d.values[3] == 0x1234);
    ck_assert(d.values[4] == 7);
    mantra_pgo_data_free(&d);
    ck_assert_uint_eq(*c0, 5); /* not reset */

    /* with reset: counters read and zeroed, handles kept */
    ck_assert_int_eq(mantra_pgo_snapshot(m, MANTRA_PGO_SNAPSHOT_RESET, &d), MANTRA_OK);
    ck_assert(d.values[0] == 5 && d.values[2] == 1);
    mantra_pgo_data_free(&d);
    ck_assert_uint_eq(*c0, 0);
    ck_assert_uint_eq(*c1, 0);
    ck_assert(*l == 0);
    ck_assert_uint_eq(h[0], 0x1234);
    mantra_pgo_count(c0);
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert(d.values[0] == 1); /* the delta since the reset */
    mantra_pgo_data_free(&d);
    mantra_pgo_reset(m);
    ck_assert_uint_eq(*c0, 0);
    ck_assert_uint_eq(h[0], 0);

    /* per-thread cells: FourByte records have consecutive slots; others have none */
    uint32_t s0 = 0, s1 = 0;
    ck_assert_int_eq(mantra_pgo_counter_slot(m, 0, &s0), MANTRA_OK);
    ck_assert_int_eq(mantra_pgo_counter_slot(m, 1, &s1), MANTRA_OK);
    ck_assert_uint_eq(s1, s0 + 1);
    ck_assert_int_eq(mantra_pgo_counter_slot(m, 2, &s1), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_pgo_counter_slot(m, 3, &s1), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_pgo_counter_slot(m, 4, &s1), MANTRA_EINVAL);
    mantra_pgo_thread *t = mantra_pgo_thread_attach();
    ck_assert_ptr_nonnull(t);
    mantra_pgo_count_slot(t, s0);
    mantra_pgo_count_slot(t, s0);
    mantra_pgo_count(c0);
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert(d.values[0] == 3); /* shared cell 1 + thread cell 2 */
    mantra_pgo_data_free(&d);
    /* the value wraps at 2^32 across both cells: set UINT32_MAX - 1, count 3 */
    mantra_pgo_schema one[] = {s[0]};
    int64_t start = (int64_t)UINT32_MAX - 1;
    mantra_pgo_data init = {one, 1, &start, 1};
    ck_assert_int_eq(mantra_pgo_set_data(m, &init), 1);
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert(d.values[0] == -2); /* 0xFFFFFFFE read as the serializer reads it */
    mantra_pgo_data_free(&d);
    mantra_pgo_count_slot(t, s0);
    mantra_pgo_count_slot(t, s0);
    mantra_pgo_count(c0);
    ck_assert_int_eq(mantra_pgo_snapshot(m, MANTRA_PGO_SNAPSHOT_RESET, &d), MANTRA_OK);
    ck_assert(d.values[0] == 1);
    mantra_pgo_data_free(&d);
    mantra_pgo_count_slot(t, s0);
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert(d.values[0] == 1); /* counting after the reset */
    mantra_pgo_data_free(&d);
    mantra_pgo_reset(m);
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert(d.values[0] == 0);
    mantra_pgo_data_free(&d);
    mantra_pgo_thread_detach(t);

    /* an uninstrumented method has no snapshot */
    ck_assert_int_eq(mantra_pgo_snapshot(method(module(4), 0x06000011), 0, &d), MANTRA_EINVAL);
}
END_TEST

START_TEST(initial_values) {
    mantra_pgo_module *mod = module(5);
    mantra_pgo_schema s[] = {{0x41, 0, 1, 0}, {0x41, 6, 1, 0}, {0x42, 9, 1, 0}};
    int64_t v[] = {100, -1, INT64_C(0x100000002)};
    mantra_pgo_data d = {s, 3, v, 3};
    /* an uninstrumented method takes the loaded schema */
    mantra_pgo_method *a = method(mod, 0x06000001);
    ck_assert_int_eq(mantra_pgo_set_data(a, &d), 3);
    ck_assert_uint_eq(*mantra_pgo_counters_u32(a, 0), 100);
    ck_assert_uint_eq(*mantra_pgo_counters_u32(a, 1), UINT32_MAX);
    ck_assert(*mantra_pgo_counters_u64(a, 2) == UINT64_C(0x100000002));
    /* an instrumented one keeps its schema: matching records get their values, others stay 0 */
    mantra_pgo_method *b = method(mod, 0x06000002);
    mantra_pgo_schema own[] = {{0x41, 0, 1, 0}, {0x41, 3, 1, 0}, {0x42, 9, 1, 0}};
    ck_assert_int_eq(mantra_pgo_method_instrument(b, own, 3), MANTRA_OK);
    ck_assert_int_eq(mantra_pgo_set_data(b, &d), 2);
    ck_assert_uint_eq(*mantra_pgo_counters_u32(b, 0), 100);
    ck_assert_uint_eq(*mantra_pgo_counters_u32(b, 1), 0);
    ck_assert(*mantra_pgo_counters_u64(b, 2) == UINT64_C(0x100000002));
    d.value_count = 2; /* values that do not match the schema */
    ck_assert_int_eq(mantra_pgo_set_data(b, &d), MANTRA_EINVAL);
}
END_TEST

START_TEST(iteration_in_registration_order) {
    mantra_pgo_module *mod = module(6);
    mantra_pgo_method *m[5];
    for (uint32_t i = 0; i < 5; i++)
        m[i] = method(mod, 0x06000100 + i);
    /* instrument in another order; 2 stays uninstrumented */
    static const mantra_pgo_schema s[] = {{0x41, 0, 1, 0}};
    ck_assert_int_eq(mantra_pgo_method_instrument(m[4], s, 1), MANTRA_OK);
    ck_assert_int_eq(mantra_pgo_method_instrument(m[0], s, 1), MANTRA_OK);
    ck_assert_int_eq(mantra_pgo_method_instrument(m[3], s, 1), MANTRA_OK);
    ck_assert_int_eq(mantra_pgo_method_instrument(m[1], s, 1), MANTRA_OK);
    const mantra_pgo_method *seen[8];
    size_t n = 0;
    for (const mantra_pgo_method *p = mantra_pgo_next_method(NULL); p != NULL; p = mantra_pgo_next_method(p)) {
        mantra_pgo_method_info info;
        mantra_pgo_method_describe(p, &info);
        if (info.module == mod) {
            ck_assert_uint_lt(n, 8);
            seen[n++] = p;
        }
    }
    ck_assert_uint_eq(n, 4);
    ck_assert_ptr_eq(seen[0], m[0]);
    ck_assert_ptr_eq(seen[1], m[1]);
    ck_assert_ptr_eq(seen[2], m[3]);
    ck_assert_ptr_eq(seen[3], m[4]);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_store");
    TCase *tc = tcase_create("store");
    tcase_add_test(tc, kinds_sizes_alignment);
    tcase_add_test(tc, kinds_come_from_the_manifest);
    tcase_add_test(tc, layout_rule);
    tcase_add_test(tc, schema_refusals);
    tcase_add_test(tc, modules_and_methods);
    tcase_add_test(tc, counters_and_wrap);
    tcase_add_test(tc, initial_values);
    tcase_add_test(tc, iteration_in_registration_order);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
