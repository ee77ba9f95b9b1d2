/* test_images - precompiled images (runtime/src/images, mantra/image.h): the hot/cold split of a
 * layout, running an image gives the program's output for every example program under many random
 * layouts, IP -> (method, IL offset, part) over both parts, the listener's events, unload and
 * reload at the same address, and every check of opening (truncation at every length, every bit
 * flipped, magic, version, checksum, sections, crafted code that a checksum does not catch). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "mantra/decode.h" /* mantra_load_u32 */
#include "mantra/image.h"
#include "../interp/interp_test_util.h"

/* a method with an error path: blocks [0] check, [1] error (cold unless it ran), [2] work */
static const char checked_src[] = ".module Checked 11111111-2222-4333-8444-555555555555\n"
                                  ".method T.half int64(int64) token 0x06000002\n"
                                  "        ldarg 0\n"
                                  "        ldc.i8 0\n"
                                  "        bge ok\n"
                                  "        print.s \"negative\"\n"
                                  "        newline\n"
                                  "        ldc.i8 -1\n"
                                  "        ret\n"
                                  "ok:     ldarg 0\n"
                                  "        ldc.i8 2\n"
                                  "        div\n"
                                  "        ret\n"
                                  ".end\n"
                                  ".method T.main void() token 0x06000001\n"
                                  "        ldc.i8 10\n"
                                  "        call half\n"
                                  "        print.i\n"
                                  "        newline\n"
                                  "        ret\n"
                                  ".end\n"
                                  ".method T.unused int64() token 0x06000003\n"
                                  "        ldc.i8 7\n"
                                  "        ret\n"
                                  ".end\n";

static mantra_interp_module *assemble(const char *text) {
    mantra_interp_module *m = NULL;
    mantra_interp_diag d;
    int rc = mantra_interp_assemble(text, strlen(text), "t.masm", &m, &d);
    ck_assert_msg(rc == 0, "assemble: %s", d.text);
    return m;
}

/* The image of m with block b of method i hot when hot[i][b] (NULL row: whole method by whole[i]). */
static uint8_t *build(const mantra_interp_module *m, const uint8_t *const *hot, const int *whole, const uint64_t *w,
                      size_t *size) {
    size_t n = mantra_interp_module_method_count(m);
    mantra_image_layout *lay = calloc(n, sizeof *lay);
    for (size_t i = 0; i < n; i++) {
        lay[i].block_hot = hot ? hot[i] : NULL;
        lay[i].whole_hot = whole ? whole[i] : 1;
        lay[i].weight = w ? w[i] : 0;
    }
    uint8_t *img = NULL;
    ck_assert_int_eq(mantra_image_build(m, lay, &img, size), 0);
    free(lay);
    return img;
}

static int run_image(const mantra_image *im, const char *entry, it_out *out, char *err) {
    it_prog p = {NULL, (mantra_interp_program *)(uintptr_t)mantra_image_program(im)};
    return it_run(&p, entry, NULL, 0, NULL, out, err, 256);
}

static void store_u32(uint8_t *p, uint32_t v) {
    memcpy(p, &v, 4);
}
/* Recomputes the checksum of a crafted image (header offset 24). */
static void reseal(uint8_t *img, size_t size) {
    store_u32(img + 24, 0);
    store_u32(img + 24, mantra_crc32(0, img, size));
}

START_TEST(test_split_and_table) {
    mantra_interp_module *m = assemble(checked_src);
    ck_assert_int_eq(mantra_image_blocks(m, 0, NULL, 0), 3);
    uint32_t starts[3];
    ck_assert_int_eq(mantra_image_blocks(m, 0, starts, 3), 3);
    ck_assert_uint_eq(starts[0], 0);
    ck_assert_uint_eq(starts[1], 17); /* after ldarg (3 bytes), ldc.i8 (9), bge (5) */
    ck_assert_uint_eq(starts[2], 33); /* ok: after print.s, newline, ldc.i8, ret */
    uint32_t insns[3] = {0, 0, 0};
    ck_assert_int_eq(mantra_image_block_insns(m, 0, insns, 3), 3);
    ck_assert_uint_eq(insns[0], 3);
    ck_assert_uint_eq(insns[1], 4);
    ck_assert_uint_eq(insns[2], 4);
    ck_assert_int_eq(mantra_image_block_insns(m, 9, insns, 3), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_image_blocks(m, 0, NULL, 3), MANTRA_EINVAL);
    static const uint8_t half_hot[3] = {1, 0, 1}, main_hot[1] = {1};
    const uint8_t *hot[3] = {half_hot, main_hot, NULL};
    int whole[3] = {1, 1, 0};
    uint64_t w[3] = {5, 9, 0};
    size_t size = 0;
    uint8_t *img = build(m, hot, whole, w, &size);
    mantra_image *im = NULL;
    mantra_image_error err;
    ck_assert_int_eq(mantra_image_open_memory(img, size, "checked.img", 0, &im, &err), 0);
    ck_assert_uint_eq(mantra_image_method_count(im), 3);
    mantra_image_method_info h, mn, un;
    ck_assert_int_eq(mantra_image_method(im, 0, &h), 0);
    ck_assert_int_eq(mantra_image_method(im, 1, &mn), 0);
    ck_assert_int_eq(mantra_image_method(im, 2, &un), 0);
    /* main is heavier: first in the hot section; half follows it; unused sits whole in cold */
    ck_assert_uint_eq(mn.hot_rva, 4096);
    ck_assert_uint_eq(h.hot_rva, 4096 + mn.hot_size);
    /* half's hot part: check (17 bytes), a br to the error block (its fall-through, now cold: 5),
     * work (ldarg 3, ldc.i8 9, div 1, ret 1) */
    ck_assert_uint_eq(h.hot_size, 17 + 5 + 14);
    ck_assert_uint_eq(h.cold_size, 5 + 1 + 9 + 1); /* print.s, newline, ldc.i8, ret */
    ck_assert_uint_eq(h.cold_rva, 8192);
    ck_assert_uint_eq(h.flags, 0);
    ck_assert_uint_eq(un.flags, MANTRA_IMAGE_PLACED_COLD);
    ck_assert_uint_eq(un.hot_rva, 8192 + h.cold_size);
    ck_assert_uint_eq(un.cold_size, 0);
    ck_assert_str_eq(h.id.name, "half");
    ck_assert_str_eq(h.id.namespace_name, "T");
    ck_assert_str_eq(h.id.signature, "int64(int64)");
    ck_assert_uint_eq(h.id.token, 0x06000002);
    ck_assert_str_eq(h.id.module_name, "Checked");
    /* it runs, and the cold part resolves to half at its IL offsets */
    it_out out;
    char e[256];
    ck_assert_int_eq(run_image(im, "main", &out, e), 0);
    ck_assert_str_eq(out.buf, "5\n");
    const uint8_t *base = mantra_image_base(im);
    size_t mi = 99;
    uint32_t il = 99;
    ck_assert_int_eq(mantra_interp_program_locate(mantra_image_program(im), base + h.cold_rva, &mi, &il), 0);
    ck_assert_uint_eq(mi, 0);
    ck_assert_uint_eq(il, 17); /* the error block's print.s */
    ck_assert_int_eq(mantra_interp_program_locate(mantra_image_program(im), base + h.cold_rva + 6, &mi, &il), 0);
    ck_assert_uint_eq(il, 23); /* ldc.i8 -1 */
    ck_assert_int_eq(mantra_interp_program_locate(mantra_image_program(im), base + h.hot_rva + 17, &mi, &il), 0);
    ck_assert_uint_eq(il, 12); /* the added br: the bge whose fall-through it is */
    ck_assert_int_eq(mantra_interp_program_locate(mantra_image_program(im), base + h.hot_rva + 22, &mi, &il), 0);
    ck_assert_uint_eq(il, 33); /* ok: */
    ck_assert_int_eq(mantra_interp_program_locate(mantra_image_program(im), base + 4095, &mi, &il), MANTRA_EINVAL);
    ck_assert_int_eq(mantra_image_check(img, size, 0, &err), 0);
    mantra_image_close(im);
    free(img);
    mantra_interp_module_free(m);
}
END_TEST

/* The error path taken by an image whose profile never saw it: the output is the program's. */
START_TEST(test_cold_path_runs) {
    mantra_interp_module *m = assemble(checked_src);
    static const uint8_t half_hot[3] = {1, 0, 1}, main_hot[1] = {1};
    const uint8_t *hot[3] = {half_hot, main_hot, NULL};
    size_t size = 0;
    uint8_t *img = build(m, hot, NULL, NULL, &size);
    mantra_image *im = NULL;
    ck_assert_int_eq(mantra_image_open_memory(img, size, "c.img", 0, &im, NULL), 0);
    it_prog p = {NULL, (mantra_interp_program *)(uintptr_t)mantra_image_program(im)};
    it_out out;
    char e[256];
    mantra_interp_value arg = {.i = -4}, result = {.i = 0};
    ck_assert_int_eq(it_run(&p, "half", &arg, 1, &result, &out, e, sizeof e), 0);
    ck_assert_str_eq(out.buf, "negative\n");
    ck_assert_int_eq(result.i, -1);
    arg.i = 9;
    ck_assert_int_eq(it_run(&p, "half", &arg, 1, &result, &out, e, sizeof e), 0);
    ck_assert_int_eq(result.i, 4);
    mantra_image_close(im);
    free(img);
    mantra_interp_module_free(m);
}
END_TEST

/* Every example program under 25 random layouts (seeded): the image prints what the program does. */
START_TEST(test_examples_random_layouts) {
    static const char *const programs[] = {"bench_loop", "dispatch", "fib", "loop", "nested", "sort"};
    uint32_t seed = 12345u;
    for (size_t p = 0; p < sizeof programs / sizeof *programs; p++) {
        char path[256];
        snprintf(path, sizeof path, "examples/programs/%s.masm", programs[p]);
        char *text = it_read_file(path);
        mantra_interp_module *m = assemble(text);
        it_prog ref = {m, NULL};
        ck_assert_int_eq(mantra_interp_load(m, NULL, &ref.prog), 0);
        it_out want, got;
        char e[256];
        int want_rc = it_run(&ref, "main", NULL, 0, NULL, &want, e, sizeof e);
        size_t n = mantra_interp_module_method_count(m);
        for (int round = 0; round < 25; round++) {
            uint8_t **hot = calloc(n, sizeof *hot);
            uint64_t *w = calloc(n, sizeof *w);
            int *whole = calloc(n, sizeof *whole);
            for (size_t i = 0; i < n; i++) {
                int64_t nb = mantra_image_blocks(m, i, NULL, 0);
                hot[i] = calloc((size_t)nb, 1);
                for (int64_t b = 0; b < nb; b++) {
                    seed = seed * 1103515245u + 12345u;
                    hot[i][b] = (seed >> 16) % 3 != 0; /* round 0: every block hot */
                    if (round == 0)
                        hot[i][b] = 1;
                    if (round == 1)
                        hot[i][b] = 0; /* every method placed cold */
                }
                seed = seed * 1103515245u + 12345u;
                w[i] = (seed >> 16) % 7;
            }
            size_t size = 0;
            uint8_t *img = build(m, (const uint8_t *const *)hot, whole, w, &size);
            mantra_image *im = NULL;
            mantra_image_error err;
            ck_assert_msg(mantra_image_open_memory(img, size, path, 0, &im, &err) == 0, "%s round %d: %s at %llu", path,
                          round, err.message, (unsigned long long)err.offset);
            ck_assert_int_eq(run_image(im, "main", &got, e), want_rc);
            ck_assert_msg(strcmp(got.buf, want.buf) == 0, "%s round %d: the image printed\n%s\ninstead of\n%s", path,
                          round, got.buf, want.buf);
            mantra_image_close(im);
            free(img);
            for (size_t i = 0; i < n; i++)
                free(hot[i]);
            free(hot);
            free(w);
            free(whole);
        }
        mantra_interp_program_free(ref.prog);
        mantra_interp_module_free(m);
        free(text);
    }
}
END_TEST

typedef struct events {
    int loaded, unloading, first[8];
    const mantra_image *last;
} events;

static void ev_loaded(void *ctx, const mantra_image *im) {
    events *e = ctx;
    e->loaded++;
    e->last = im;
}
static void ev_unloading(void *ctx, const mantra_image *im) {
    events *e = ctx;
    e->unloading++;
    e->last = im;
}
static void ev_first(void *ctx, const mantra_image *im, size_t method) {
    events *e = ctx;
    ck_assert_ptr_eq(im, e->last);
    e->first[method]++;
}

/* The listener: one load, one first call per called method (main, half: not unused), one unload;
 * a reload at the same bytes' address with other code runs that code. */
START_TEST(test_listener_and_reload) {
    events ev;
    memset(&ev, 0, sizeof ev);
    mantra_image_listener l = {ev_loaded, ev_unloading, ev_first, &ev};
    mantra_image_set_listener(&l);
    mantra_interp_module *m = assemble(checked_src);
    size_t size = 0;
    uint8_t *img = build(m, NULL, NULL, NULL, &size);
    uint8_t *buf = malloc(size + 65536);
    memcpy(buf, img, size);
    mantra_image *im = NULL;
    ck_assert_int_eq(mantra_image_open_memory(buf, size, "a.img", 0, &im, NULL), 0);
    ck_assert_int_eq(ev.loaded, 1);
    it_out out;
    char e[256];
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(run_image(im, "main", &out, e), 0);
    ck_assert_int_eq(ev.first[0], 1);
    ck_assert_int_eq(ev.first[1], 1);
    ck_assert_int_eq(ev.first[2], 0);
    ck_assert_int_eq(mantra_image_method_called(im, 0), 1);
    ck_assert_int_eq(mantra_image_method_called(im, 2), 0);
    mantra_image_method_info a;
    mantra_image_method(im, 0, &a); /* half, first in the hot section */
    mantra_image_close(im);
    ck_assert_int_eq(ev.unloading, 1);
    /* other code at the same address */
    static const char other[] = ".module Other 99999999-2222-4333-8444-555555555555\n"
                                ".method O.main void() token 0x06000001\n"
                                "        print.s \"other\"\n"
                                "        newline\n"
                                "        ret\n"
                                ".end\n";
    mantra_interp_module *m2 = assemble(other);
    size_t size2 = 0;
    uint8_t *img2 = build(m2, NULL, NULL, NULL, &size2);
    memcpy(buf, img2, size2);
    ck_assert_int_eq(mantra_image_open_memory(buf, size2, "b.img", 0, &im, NULL), 0);
    ck_assert_ptr_eq(mantra_image_base(im), buf);
    ck_assert_int_eq(run_image(im, "main", &out, e), 0);
    ck_assert_str_eq(out.buf, "other\n");
    size_t mi = 9;
    ck_assert_int_eq(mantra_interp_program_locate(mantra_image_program(im), buf + a.hot_rva, &mi, NULL), 0);
    ck_assert_uint_eq(mi, 0); /* O.main now lives where T.main was */
    mantra_image_close(im);
    ck_assert_int_eq(ev.loaded, 2);
    ck_assert_int_eq(ev.unloading, 2);
    mantra_image_set_listener(NULL);
    free(buf);
    free(img);
    free(img2);
    mantra_interp_module_free(m);
    mantra_interp_module_free(m2);
}
END_TEST

/* Truncated at every length, every bit flipped: each refused, never opened. */
START_TEST(test_every_truncation_and_bit_flip) {
    mantra_interp_module *m = assemble(checked_src);
    size_t size = 0;
    uint8_t *img = build(m, NULL, NULL, NULL, &size);
    mantra_image_error err;
    for (size_t n = 0; n < size; n++) {
        err.message[0] = '\0';
        ck_assert_int_eq(mantra_image_check(img, n, 0, &err), MANTRA_EFORMAT);
        ck_assert_msg(strstr(err.message, "truncated") != NULL, "length %zu: %s", n, err.message);
    }
    uint8_t *copy = malloc(size);
    size_t refused = 0;
    for (size_t bit = 0; bit < size * 8; bit++) {
        memcpy(copy, img, size);
        copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        refused += mantra_image_check(copy, size, 0, &err) == MANTRA_EFORMAT;
    }
    ck_assert_uint_eq(refused, size * 8);
    free(copy);
    free(img);
    mantra_interp_module_free(m);
}
END_TEST

/* One message per check, at its offset. */
static void expect(const uint8_t *img, size_t size, uint64_t offset, const char *text) {
    mantra_image_error err = {0, ""};
    ck_assert_int_eq(mantra_image_check(img, size, 0, &err), MANTRA_EFORMAT);
    ck_assert_msg(strstr(err.message, text) != NULL, "wanted '%s', got '%s'", text, err.message);
    ck_assert_uint_eq(err.offset, offset);
    mantra_image *im = (mantra_image *)1;
    ck_assert_int_eq(mantra_image_open_memory(img, size, "bad", 0, &im, NULL), MANTRA_EFORMAT);
    ck_assert_ptr_null(im);
}

START_TEST(test_each_check_its_message) {
    mantra_interp_module *m = assemble(checked_src);
    size_t size = 0;
    uint8_t *img = build(m, NULL, NULL, NULL, &size);
    uint8_t *c = malloc(size + 16);
    /* header */
    memcpy(c, img, size);
    memcpy(c, "MZ\x90\0\0\0\0\0", 8);
    expect(c, size, 0, "not a mantra image");
    memcpy(c, img, size);
    c[8] = 2;
    expect(c, size, 8, "image format version 2.0; this build reads version 1.x");
    memcpy(c, img, size);
    c[100] ^= 0x40;
    expect(c, size, 24, "checksum mismatch");
    memcpy(c, img, size);
    c[size] = 0;
    expect(c, size + 1, 16, "trailing bytes");
    /* sections: the hot code section made to run past the end */
    uint32_t table = mantra_load_u32(img + 32);
    int hot_sections = 0;
    for (uint32_t k = 0; k < 6; k++) {
        memcpy(c, img, size);
        uint8_t *e = c + table + 16 * k;
        if (mantra_load_u32(e) != 5)
            continue;
        hot_sections++;
        store_u32(e + 8, (uint32_t)size);
        reseal(c, size);
        expect(c, size, table + 16 * k + 4, "hot code section");
        memcpy(c, img, size);
        store_u32(e, 3); /* a second literals section */
        reseal(c, size);
        expect(c, size, table + 16 * k, "a second literals section");
    }
    ck_assert_int_eq(hot_sections, 1); /* the checks above ran */
    /* no method at all (the method count made 0): refused, an image holds at least one */
    memcpy(c, img, size);
    store_u32(c + 36, 0);
    reseal(c, size);
    expect(c, size, 36, "no method: an image holds at least one");
    /* crafted code with a good checksum: a branch out of the method, a bad call, a stack underflow */
    mantra_image *im = NULL;
    ck_assert_int_eq(mantra_image_open_memory(img, size, "ok", 0, &im, NULL), 0);
    mantra_image_method_info h;
    mantra_image_method(im, 0, &h); /* half: ldarg 0 (3), ldc.i8 0 (9), bge (5) at 12 */
    mantra_image_close(im);
    memcpy(c, img, size);
    store_u32(c + h.hot_rva + 13, 0x7000);
    reseal(c, size);
    expect(c, size, h.hot_rva + 12, "branch to rva");
    memcpy(c, img, size);
    c[h.hot_rva] = 0x3f; /* an opcode the assembler never writes */
    reseal(c, size);
    expect(c, size, h.hot_rva, "unknown opcode");
    memcpy(c, img, size);
    c[h.hot_rva] = 8; /* pop on an empty stack, 3 bytes earlier than ldarg's end */
    c[h.hot_rva + 1] = 0;
    c[h.hot_rva + 2] = 0;
    reseal(c, size);
    expect(c, size, h.hot_rva, "stack underflow");
    memcpy(c, img, size);
    c[h.hot_rva + h.hot_size - 1] = 0; /* the last ret made a nop: the part runs off its end */
    reseal(c, size);
    expect(c, size, h.hot_rva, "does not end in br or ret");
    free(c);
    free(img);
    mantra_interp_module_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("images");
    TCase *tc = tcase_create("images");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_split_and_table);
    tcase_add_test(tc, test_cold_path_runs);
    tcase_add_test(tc, test_examples_random_layouts);
    tcase_add_test(tc, test_listener_and_reload);
    tcase_add_test(tc, test_every_truncation_and_bit_flip);
    tcase_add_test(tc, test_each_check_its_message);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
