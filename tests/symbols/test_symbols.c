/* test_symbols.c - the time-aware symbol map (mantra/symbols.h): exact answers for loads, unloads,
 * reuse of an address, start and end rundowns, cold parts, return addresses, module unloads and the
 * state rules. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "mantra/symbols.h"

static mantra_sym_method method(uint64_t module, uint32_t token, const char *name, uint64_t start, uint32_t size) {
    mantra_sym_method m;
    memset(&m, 0, sizeof m);
    m.module_id = module;
    m.token = token;
    m.name_space = "Ns.T";
    m.name = name;
    m.signature = "void  ()";
    m.hot_start = start;
    m.hot_size = size;
    return m;
}

/* The name resolved at (address, time), "" when nothing; part and offset through the pointers. */
static const char *at(const mantra_symbols *s, uint64_t address, int64_t time, int ret, int *part, uint64_t *offset) {
    mantra_sym_result r;
    ck_assert_int_eq(mantra_symbols_resolve(s, address, time, ret, &r), MANTRA_OK);
    if (part)
        *part = r.part;
    if (offset)
        *offset = r.offset;
    return r.part == MANTRA_SYM_NONE ? "" : r.method->name;
}

START_TEST(lifetimes) {
    mantra_symbols *s;
    ck_assert_int_eq(mantra_symbols_new(&s), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_module_load(s, 0, MANTRA_SYM_LOAD, 1, "/app/A.dll"), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_module_load(s, 100, MANTRA_SYM_LOAD, 2, "/app/B.dll"), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_module_load(s, 0, MANTRA_SYM_LOAD, 3, "/app/C.dll"), MANTRA_OK);
    mantra_sym_method m;
    /* A: loaded at 10, unloaded at 30; B at the same address from 40 */
    m = method(1, 0x06000001, "A", 0x1000, 0x100);
    ck_assert_int_eq(mantra_symbols_method_load(s, 10, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_method_unload(s, 30, 0x1000), MANTRA_OK);
    m = method(1, 0x06000002, "B", 0x1000, 0x80);
    ck_assert_int_eq(mantra_symbols_method_load(s, 40, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    /* C: from the start rundown (any time) */
    m = method(1, 0x06000003, "C", 0x2000, 0x10);
    ck_assert_int_eq(mantra_symbols_method_load(s, 500, MANTRA_SYM_START_RUNDOWN, &m), MANTRA_OK);
    /* D: only in the end rundown, its module loaded at 100; a cold part */
    m = method(2, 0x06000004, "D", 0x3000, 0x40);
    m.cold_start = 0x9000;
    m.cold_size = 0x10;
    ck_assert_int_eq(mantra_symbols_method_load(s, 900, MANTRA_SYM_END_RUNDOWN, &m), MANTRA_OK);
    /* E: loaded at 60, repeated by the end rundown */
    m = method(1, 0x06000005, "E", 0x5000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 60, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_method_load(s, 900, MANTRA_SYM_END_RUNDOWN, &m), MANTRA_OK);
    /* F then G at one address, no unload between */
    m = method(1, 0x06000006, "F", 0x6000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 10, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    m = method(1, 0x06000007, "G", 0x6000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 20, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    /* X loaded 10, unloaded 20; Y there in the end rundown only */
    m = method(1, 0x06000008, "X", 0x7000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 10, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_method_unload(s, 20, 0x7000), MANTRA_OK);
    m = method(1, 0x06000009, "Y", 0x7000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 900, MANTRA_SYM_END_RUNDOWN, &m), MANTRA_OK);
    /* Z of module 3, unloaded with its module at 200 */
    m = method(3, 0x0600000A, "Z", 0x8000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 10, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_module_unload(s, 200, 3), MANTRA_OK);

    mantra_sym_result r;
    ck_assert_int_eq(mantra_symbols_resolve(s, 0x1000, 20, 0, &r), MANTRA_ESTATE);
    ck_assert_int_eq(mantra_symbols_finish(s), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_finish(s), MANTRA_ESTATE);
    ck_assert_int_eq(mantra_symbols_method_load(s, 1, MANTRA_SYM_LOAD, &m), MANTRA_ESTATE);
    ck_assert_uint_eq(mantra_symbols_method_count(s), 11);

    int part;
    uint64_t off;
    ck_assert_str_eq(at(s, 0x1010, 5, 0, NULL, NULL), "");
    ck_assert_str_eq(at(s, 0x1010, 20, 0, &part, &off), "A");
    ck_assert_int_eq(part, MANTRA_SYM_HOT);
    ck_assert_uint_eq(off, 0x10);
    ck_assert_str_eq(at(s, 0x1010, 35, 0, NULL, NULL), "");
    ck_assert_str_eq(at(s, 0x1010, 50, 0, NULL, NULL), "B");
    ck_assert_str_eq(at(s, 0x10A0, 50, 0, NULL, NULL), "");   /* past B's end, inside A's old range */
    ck_assert_str_eq(at(s, 0x1100, 20, 0, NULL, NULL), "");   /* the first byte after A */
    ck_assert_str_eq(at(s, 0x1100, 20, 1, NULL, &off), "A");  /* as a return address: A's call */
    ck_assert_uint_eq(off, 0x100);
    ck_assert_str_eq(at(s, 0x2008, INT64_MIN + 1, 0, NULL, NULL), "C");
    ck_assert_str_eq(at(s, 0x2008, 1000, 0, NULL, NULL), "C");
    ck_assert_str_eq(at(s, 0x3000, 50, 0, NULL, NULL), "");   /* before D's module */
    ck_assert_str_eq(at(s, 0x3000, 150, 0, NULL, NULL), "D");
    ck_assert_str_eq(at(s, 0x9005, 150, 0, &part, &off), "D");
    ck_assert_int_eq(part, MANTRA_SYM_COLD);
    ck_assert_uint_eq(off, 5);
    ck_assert_str_eq(at(s, 0x5004, 59, 0, NULL, NULL), "");   /* the repeat does not reach back */
    ck_assert_str_eq(at(s, 0x5004, 61, 0, NULL, NULL), "E");
    ck_assert_str_eq(at(s, 0x6000, 15, 0, NULL, NULL), "F");
    ck_assert_str_eq(at(s, 0x6000, 25, 0, NULL, NULL), "G");
    ck_assert_str_eq(at(s, 0x7000, 15, 0, NULL, NULL), "X");
    ck_assert_str_eq(at(s, 0x7000, 5, 0, NULL, NULL), "");    /* Y only after X left */
    ck_assert_str_eq(at(s, 0x7000, 25, 0, NULL, NULL), "Y");
    ck_assert_str_eq(at(s, 0x8000, 150, 0, NULL, NULL), "Z");
    ck_assert_str_eq(at(s, 0x8000, 250, 0, NULL, NULL), "");  /* its module unloaded at 200 */
    ck_assert_int_eq(mantra_symbols_resolve(s, 0x3000, 150, 0, &r), MANTRA_OK);
    ck_assert_str_eq(r.module_path, "/app/B.dll");
    ck_assert_uint_eq(r.method->token, 0x06000004);
    mantra_symbols_free(s);
}
END_TEST

START_TEST(refusals) {
    mantra_symbols *s;
    ck_assert_int_eq(mantra_symbols_new(&s), MANTRA_OK);
    mantra_sym_method m = method(1, 1, "A", 0x1000, 0);
    ck_assert_int_eq(mantra_symbols_method_load(s, 1, MANTRA_SYM_LOAD, &m), MANTRA_EINVAL);
    m.hot_size = 4;
    ck_assert_int_eq(mantra_symbols_method_load(s, 1, 7, &m), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_symbols_finish(s), MANTRA_OK); /* empty: nothing resolves */
    ck_assert_str_eq(at(s, 0x1000, 1, 0, NULL, NULL), "");
    mantra_symbols_free(s);
    mantra_symbols_free(NULL);
}
END_TEST

START_TEST(image_methods) {
    mantra_symbols *s;
    ck_assert_int_eq(mantra_symbols_new(&s), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_module_load(s, 100, MANTRA_SYM_LOAD, 5, "/app/R2R.dll"), MANTRA_OK);
    mantra_sym_method m;
    /* the trace's end rundown: T1's hot part only; the image: T1 with its cold part */
    m = method(5, 0x06000001, "FromTrace", 0x10000, 0x40);
    ck_assert_int_eq(mantra_symbols_method_load(s, 900, MANTRA_SYM_END_RUNDOWN, &m), MANTRA_OK);
    m = method(5, 0x06000001, "FromImage", 0x10000, 0x40);
    m.cold_start = 0x20000;
    m.cold_size = 0x10;
    ck_assert_int_eq(mantra_symbols_method_load(s, 0, MANTRA_SYM_IMAGE, &m), MANTRA_OK);
    /* T2: in the image only */
    m = method(5, 0x06000002, "ImageOnly", 0x11000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 0, MANTRA_SYM_IMAGE, &m), MANTRA_OK);
    /* T3: jitted in the trace (not the image's code), precompiled with a cold part in the image */
    m = method(5, 0x06000003, "Jitted", 0x30000, 0x20);
    m.flags = MANTRA_SYM_FLAG_JITTED;
    ck_assert_int_eq(mantra_symbols_method_load(s, 300, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    m = method(5, 0x06000003, "ImageT3", 0x12000, 0x20);
    m.cold_start = 0x21000;
    m.cold_size = 0x8;
    ck_assert_int_eq(mantra_symbols_method_load(s, 0, MANTRA_SYM_IMAGE, &m), MANTRA_OK);
    /* an instantiation in the image (no token) where the end rundown names the same code: the
     * trace's name wins */
    m = method(5, 0, "Inst[System.Int32]", 0x13000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 0, MANTRA_SYM_IMAGE, &m), MANTRA_OK);
    m = method(5, 0x06000004, "Inst", 0x13000, 0x20);
    ck_assert_int_eq(mantra_symbols_method_load(s, 900, MANTRA_SYM_END_RUNDOWN, &m), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_finish(s), MANTRA_OK);
    size_t merged, alone;
    mantra_symbols_image_counts(s, &merged, &alone);
    ck_assert_uint_eq(merged, 1);
    ck_assert_uint_eq(alone, 3);
    ck_assert_str_eq(at(s, 0x13004, 150, 0, NULL, NULL), "Inst");
    int part;
    uint64_t off;
    ck_assert_str_eq(at(s, 0x10010, 150, 0, &part, NULL), "FromTrace");
    ck_assert_int_eq(part, MANTRA_SYM_HOT);
    ck_assert_str_eq(at(s, 0x20004, 150, 0, &part, &off), "FromTrace");
    ck_assert_int_eq(part, MANTRA_SYM_COLD);
    ck_assert_uint_eq(off, 4);
    ck_assert_str_eq(at(s, 0x20010, 150, 1, &part, NULL), "FromTrace"); /* return address after the cold part */
    ck_assert_int_eq(part, MANTRA_SYM_COLD);
    ck_assert_str_eq(at(s, 0x11000, 50, 0, NULL, NULL), "");      /* before its module's load */
    ck_assert_str_eq(at(s, 0x11000, 150, 0, NULL, NULL), "ImageOnly");
    ck_assert_str_eq(at(s, 0x30000, 400, 0, NULL, NULL), "Jitted");
    ck_assert_str_eq(at(s, 0x21000, 400, 0, &part, NULL), "ImageT3");
    ck_assert_int_eq(part, MANTRA_SYM_COLD);
    mantra_symbols_free(s);
}
END_TEST

/* The IL offset at address, -100 when the code there has no map entry. */
static int64_t il_at(const mantra_symbols *s, uint64_t address, int ret) {
    mantra_sym_result r;
    ck_assert_int_eq(mantra_symbols_resolve(s, address, 100, ret, &r), MANTRA_OK);
    if (!r.il_mapped)
        ck_assert_int_eq(r.il_offset, -1);
    return r.il_mapped ? r.il_offset : -100;
}

/* mantra's R2RMethodLoad after an R2RGetEntryPoint (same MethodID): module, token and cold part
 * completed on that fact only; an id no fact has is refused and kept nowhere. */
START_TEST(r2r_method_completes_last_fact) {
    mantra_symbols *s;
    ck_assert_int_eq(mantra_symbols_new(&s), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_module_load(s, 0, MANTRA_SYM_LOAD, 7, "/app/a.img"), MANTRA_OK);
    mantra_sym_method m = method(0, 0, "Run", 0x4000, 0x30); /* R2RGetEntryPoint: no module, no token */
    m.method_id = 0x4000;
    ck_assert_int_eq(mantra_symbols_method_load(s, 10, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_method_r2r(s, 0x4000, 7, 0x06000002, 0x8000, 0x12), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_method_r2r(s, 0x5000, 7, 0x06000003, 0x8100, 0x4), MANTRA_ENOENT);
    ck_assert_int_eq(mantra_symbols_method_r2r(s, 0, 7, 0x06000003, 0x8100, 0x4), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_symbols_finish(s), MANTRA_OK);
    mantra_sym_result r;
    ck_assert_int_eq(mantra_symbols_resolve(s, 0x8011, 20, 0, &r), MANTRA_OK);
    ck_assert_int_eq(r.part, MANTRA_SYM_COLD);
    ck_assert_uint_eq(r.offset, 0x11);
    ck_assert_str_eq(r.method->name, "Run");
    ck_assert_uint_eq(r.method->token, 0x06000002);
    ck_assert_str_eq(r.module_path, "/app/a.img");
    ck_assert_int_eq(mantra_symbols_resolve(s, 0x8012, 20, 0, &r), MANTRA_OK);
    ck_assert_int_eq(r.part, MANTRA_SYM_NONE);
    ck_assert_int_eq(mantra_symbols_resolve(s, 0x8104, 20, 1, &r), MANTRA_OK);
    ck_assert_int_eq(r.part, MANTRA_SYM_NONE);
    ck_assert_int_eq(mantra_symbols_resolve(s, 0x8005, 5, 0, &r), MANTRA_OK); /* before the load */
    ck_assert_int_eq(r.part, MANTRA_SYM_NONE);
    mantra_symbols_free(s);
}
END_TEST

START_TEST(il_offsets) {
    mantra_symbols *s;
    ck_assert_int_eq(mantra_symbols_new(&s), MANTRA_OK);
    mantra_sym_method m = method(1, 0x06000001, "A", 0x1000, 0x100);
    m.method_id = 77;
    ck_assert_int_eq(mantra_symbols_method_load(s, 10, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    static const uint32_t native[3] = {0x40, 0, 0x10}; /* in any order */
    static const int32_t il[3] = {12, -2, 5};            /* the prolog, then IL 5 and 12 */
    ck_assert_int_eq(mantra_symbols_il_map(s, 77, 0, native, il, 3), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_il_map(s, 78, 0, native, il, 3), MANTRA_OK); /* no such method: ignored */
    m = method(1, 0x06000002, "B", 0x2000, 0x10); /* no map */
    m.method_id = 79;
    ck_assert_int_eq(mantra_symbols_method_load(s, 10, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    /* a second version of A (same method id: tiered up) at 0x4000 with its own map, then the end
     * rundown: each version's map just before its DCEndVerbose */
    m = method(1, 0x06000001, "A", 0x4000, 0x100);
    m.method_id = 77;
    ck_assert_int_eq(mantra_symbols_method_load(s, 20, MANTRA_SYM_LOAD, &m), MANTRA_OK);
    static const uint32_t native2[2] = {0, 0x20};
    static const int32_t il2[2] = {30, 40};
    ck_assert_int_eq(mantra_symbols_il_map(s, 77, 0, native2, il2, 2), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_il_map(s, 77, 1, native, il, 3), MANTRA_OK);
    m = method(1, 0x06000001, "A", 0x1000, 0x100);
    m.method_id = 77;
    ck_assert_int_eq(mantra_symbols_method_load(s, 90, MANTRA_SYM_END_RUNDOWN, &m), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_il_map(s, 77, 1, native2, il2, 2), MANTRA_OK);
    m = method(1, 0x06000001, "A", 0x4000, 0x100);
    m.method_id = 77;
    ck_assert_int_eq(mantra_symbols_method_load(s, 91, MANTRA_SYM_END_RUNDOWN, &m), MANTRA_OK);
    /* C: only in the rundown (loaded before the trace), its map before it */
    ck_assert_int_eq(mantra_symbols_il_map(s, 81, 1, native2, il2, 2), MANTRA_OK);
    m = method(1, 0x06000003, "C", 0x5000, 0x40);
    m.method_id = 81;
    ck_assert_int_eq(mantra_symbols_method_load(s, 92, MANTRA_SYM_END_RUNDOWN, &m), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_finish(s), MANTRA_OK);
    ck_assert_int_eq(mantra_symbols_il_map(s, 77, 0, native, il, 3), MANTRA_ESTATE);
    ck_assert_int_eq(il_at(s, 0x4021, 0), 40); /* the second version keeps its own map */
    ck_assert_int_eq(il_at(s, 0x5005, 0), 30); /* the rundown-only method has the map before it */
    ck_assert_int_eq(il_at(s, 0x1000, 0), -2);
    ck_assert_int_eq(il_at(s, 0x1020, 0), 5);
    ck_assert_int_eq(il_at(s, 0x1040, 0), 12);
    ck_assert_int_eq(il_at(s, 0x10FF, 0), 12);
    ck_assert_int_eq(il_at(s, 0x1041, 1), 12); /* a return address: its call at 0x1040 */
    ck_assert_int_eq(il_at(s, 0x1040, 1), 5);  /* ... at 0x103F */
    ck_assert_int_eq(il_at(s, 0x2004, 0), -100); /* no map */
    ck_assert_int_eq(il_at(s, 0x3000, 0), -100); /* nothing there */
    mantra_symbols_free(s);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("symbols");
    TCase *tc = tcase_create("symbols");
    tcase_add_test(tc, lifetimes);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, image_methods);
    tcase_add_test(tc, il_offsets);
    tcase_add_test(tc, r2r_method_completes_last_fact);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
