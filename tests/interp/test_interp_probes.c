/* test_interp_probes - PGO probes: where they go in mode 1 (method entry, targets of backward
 * branches and backward switch targets) and mode 2 (every basic block), their exact counts for
 * small programs derived by hand below, the method filter (options and environment), counter
 * wrap-around at 2^32, the allocator interface, and that IL offsets survive the rewrite. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "interp_test_util.h"

#define HDR ".module P 0a0b0c0d-0e0f-1011-1213-141516171819\n"

/* A top-tested loop of 10 iterations.
 *   IL_0000 ldc.i8 0 / IL_0009 stloc 0
 *   IL_000c head: ldloc 0 / IL_000f ldc.i8 10 / IL_0018 bge done
 *   IL_001d ldloc 0 / IL_0020 ldc.i8 1 / IL_0029 add / IL_002a stloc 0 / IL_002d br head
 *   IL_0032 done: ldloc 0 / IL_0035 ret
 * Mode 1: IL_0000 once; IL_000c is the target of the backward `br` at IL_002d: reached once by
 * falling in and 10 times from the back edge = 11 (the 11th test of i < 10 exits).
 * Mode 2 adds the blocks IL_001d (after the conditional branch: the 10 iterations) and IL_0032
 * (the forward target of bge, after br: once). */
static const char top_tested[] = HDR ".method Loops.top int64()\n.locals 1\n"
                                     "       ldc.i8 0\n       stloc 0\n"
                                     "head:  ldloc 0\n       ldc.i8 10\n       bge done\n"
                                     "       ldloc 0\n       ldc.i8 1\n       add\n       stloc 0\n       br head\n"
                                     "done:  ldloc 0\n       ret\n.end\n";

/* A bottom-tested loop of 10 iterations.
 *   IL_0000 ldc.i8 0 / IL_0009 stloc 0 / IL_000c br cond
 *   IL_0011 body: ldloc 0 / IL_0014 ldc.i8 1 / IL_001d add / IL_001e stloc 0
 *   IL_0021 cond: ldloc 0 / IL_0024 ldc.i8 10 / IL_002d blt body
 *   IL_0032 ldloc 0 / IL_0035 ret
 * Mode 1: IL_0000 once; IL_0011 (target of the backward blt) 10 times; IL_0021 is a forward
 * target only: no probe. Mode 2: IL_0000 1, IL_0011 10, IL_0021 11 (once from br, 10 from the
 * body), IL_0032 1. */
static const char bottom_tested[] = HDR ".method Loops.bottom int64()\n.locals 1\n"
                                        "       ldc.i8 0\n       stloc 0\n       br cond\n"
                                        "body:  ldloc 0\n       ldc.i8 1\n       add\n       stloc 0\n"
                                        "cond:  ldloc 0\n       ldc.i8 10\n       blt body\n"
                                        "       ldloc 0\n       ret\n.end\n";

static void check_counts(const char *text, int mode, const char *entry, int64_t want_result, const char *want) {
    it_prog p = it_load(text, mode, NULL);
    mantra_interp_value r;
    char err[256], got[512];
    ck_assert_int_eq(it_run(&p, entry, NULL, 0, &r, NULL, err, sizeof err), 0);
    ck_assert_int_eq(r.i, want_result);
    it_probes(&p, 0, got, sizeof got);
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(mantra_interp_program_pgo_mode(p.prog), mode);
    it_free(&p);
}

START_TEST(mode0_has_no_probes) {
    check_counts(top_tested, 0, "top", 10, "");
    it_prog p = it_load(top_tested, 0, NULL);
    size_t size;
    ck_assert_int_eq(mantra_interp_program_code(p.prog, 0, NULL, &size), 0);
    ck_assert_uint_eq(size, 0x36); /* the IL itself: nothing inserted */
    it_free(&p);
}
END_TEST

START_TEST(mode1_top_tested) { check_counts(top_tested, 1, "top", 10, "0000:1 000c:11"); }
END_TEST
START_TEST(mode2_top_tested) { check_counts(top_tested, 2, "top", 10, "0000:1 000c:11 001d:10 0032:1"); }
END_TEST
START_TEST(mode1_bottom_tested) { check_counts(bottom_tested, 1, "bottom", 10, "0000:1 0011:10"); }
END_TEST
START_TEST(mode2_bottom_tested) {
    check_counts(bottom_tested, 2, "bottom", 10, "0000:1 0011:10 0021:11 0032:1");
}
END_TEST

/* Nested loops, 3 x 4, both bottom-tested.
 *   IL_0000 ldc.i8 0 / IL_0009 stloc 0                        i = 0
 *   IL_000c outer: ldc.i8 0 / IL_0015 stloc 1                  j = 0
 *   IL_0018 inner: ldloc 2 / IL_001b ldc.i8 1 / IL_0024 add / IL_0025 stloc 2     n++
 *   IL_0028 ldloc 1 / IL_002b ldc.i8 1 / IL_0034 add / IL_0035 dup / IL_0036 stloc 1
 *   IL_0039 ldc.i8 4 / IL_0042 blt inner                       while (++j < 4)
 *   IL_0047 ldloc 0 / IL_004a ldc.i8 1 / IL_0053 add / IL_0054 dup / IL_0055 stloc 0
 *   IL_0058 ldc.i8 3 / IL_0061 blt outer                       while (++i < 3)
 *   IL_0066 ldloc 2 / IL_0069 ret
 * Mode 1: entry 1, outer head 3, inner head 3 * 4 = 12. Mode 2 adds IL_0047 (after the inner
 * blt: 3) and IL_0066 (1). */
static const char nested[] = HDR ".method Loops.nested int64()\n.locals 3\n"
                                 "ldc.i8 0\nstloc 0\n"
                                 "outer: ldc.i8 0\nstloc 1\n"
                                 "inner: ldloc 2\nldc.i8 1\nadd\nstloc 2\n"
                                 "ldloc 1\nldc.i8 1\nadd\ndup\nstloc 1\nldc.i8 4\nblt inner\n"
                                 "ldloc 0\nldc.i8 1\nadd\ndup\nstloc 0\nldc.i8 3\nblt outer\n"
                                 "ldloc 2\nret\n.end\n";

START_TEST(nested_loops) {
    check_counts(nested, 1, "nested", 12, "0000:1 000c:3 0018:12");
    check_counts(nested, 2, "nested", 12, "0000:1 000c:3 0018:12 0047:3 0066:1");
}
END_TEST

/* A state machine whose only back edges are switch targets.
 *   IL_0000 top: ldloc 0 / IL_0003 switch (s0, s1) -> 13 bytes, ends at IL_0010
 *   IL_0010 ldloc 1 / IL_0013 ret                               state 2+: return the count
 *   IL_0014 s0: ldc.i8 1 / IL_001d stloc 0 / IL_0020 br top    state 0 -> 1
 *   IL_0025 s1: ldloc 1 / IL_0028 ldc.i8 1 / IL_0031 add / IL_0032 dup / IL_0033 stloc 1
 *   IL_0036 ldc.i8 5 / IL_003f blt again                       five times state 1
 *   IL_0044 ldc.i8 2 / IL_004d stloc 0
 *   IL_0050 again: ldloc 0 / IL_0053 switch (top, top) -> backward targets; ends at IL_0060
 *   IL_0060 br top
 * `top` (IL_0000) is both the method entry and the target of backward br and switch: one probe.
 * Runs: top with state 0 -> s0 -> br top; state 1 five times: s1 -> again -> switch(1) -> top
 * (counts 1..4 go through `again` with state 1; the 5th sets state 2, switch(2) falls through to
 * br top); finally state 2 returns. top: 1 (entry) + 1 (br from s0) + 5 (back from again) = 7.
 * Mode 2 blocks: 0000:7, 0010:1 (after switch), 0014:1, 0025:5, 0044:1, 0050:5, 0060:1. */
static const char machine[] = HDR ".method SM.run int64()\n.locals 2\n"
                                  "top: ldloc 0\nswitch s0, s1\nldloc 1\nret\n"
                                  "s0: ldc.i8 1\nstloc 0\nbr top\n"
                                  "s1: ldloc 1\nldc.i8 1\nadd\ndup\nstloc 1\nldc.i8 5\nblt again\n"
                                  "ldc.i8 2\nstloc 0\n"
                                  "again: ldloc 0\nswitch top, top\nbr top\n.end\n";

START_TEST(backward_switch) {
    check_counts(machine, 1, "run", 5, "0000:7");
    check_counts(machine, 2, "run", 5, "0000:7 0010:1 0014:1 0025:5 0044:1 0050:5 0060:1");
}
END_TEST

START_TEST(rewrite_keeps_il_offsets) {
    it_prog p = it_load(top_tested, 2, NULL);
    const uint8_t *code;
    size_t size;
    ck_assert_int_eq(mantra_interp_program_code(p.prog, 0, &code, &size), 0);
    /* four probes of 5 bytes; bge and br (both to probed targets) become counting branches (+4) */
    ck_assert_uint_eq(size, 0x36 + 4 * 5 + 2 * 4);
    /* the probe before IL_000c sits at 0x0c + 5 (after the entry probe), the instruction after it */
    size_t mi;
    uint32_t il;
    ck_assert_int_eq(mantra_interp_program_locate(p.prog, code + 0x11, &mi, &il), 0);
    ck_assert_uint_eq(il, 0x0c);
    ck_assert_int_eq(mantra_interp_program_locate(p.prog, code + 0x16, &mi, &il), 0);
    ck_assert_uint_eq(il, 0x0c);
    ck_assert_int_eq(mantra_interp_program_locate(p.prog, code + size - 1, &mi, &il), 0);
    ck_assert_uint_eq(il, 0x35);
    ck_assert_int_eq(mantra_interp_program_locate(p.prog, code, &mi, &il), 0);
    ck_assert_uint_eq(il, 0);
    it_free(&p);
}
END_TEST

static const char two[] = HDR ".method Ns.alpha void()\nret\n.end\n.method Ns.beta void()\nret\n.end\n"
                              ".method gamma void()\nret\n.end\n";

static uint32_t probe_count(const it_prog *p, size_t i) {
    mantra_interp_probes pr;
    ck_assert_int_eq(mantra_interp_program_probes(p->prog, i, &pr), 0);
    return pr.count;
}

static void check_filter(const char *filter, int a, int b, int g) {
    it_prog p = it_load(two, 1, filter);
    ck_assert_msg(probe_count(&p, 0) == (uint32_t)a && probe_count(&p, 1) == (uint32_t)b &&
                      probe_count(&p, 2) == (uint32_t)g,
                  "filter '%s'", filter ? filter : "(env)");
    it_free(&p);
}

START_TEST(method_filter) {
    check_filter("", 1, 1, 1);
    check_filter("*", 1, 1, 1);
    check_filter("Ns.al*", 1, 0, 0);
    check_filter("beta", 0, 1, 0);
    check_filter("?lpha, gam?a", 1, 0, 1);
    check_filter("Ns.*", 1, 1, 0);
    check_filter("*a", 1, 1, 1);
    check_filter("Ns.alph", 0, 0, 0);
    check_filter("nothing,", 0, 0, 0);
    ck_assert_int_eq(mantra_interp_glob_match("a*b*c", "aXXbYYc"), 1);
    ck_assert_int_eq(mantra_interp_glob_match("a*b*c", "aXXbYY"), 0);
    ck_assert_int_eq(mantra_interp_glob_match("**", ""), 1);
}
END_TEST

START_TEST(environment) {
    setenv("MANTRA_InterpPgo", "2", 1);
    setenv("MANTRA_InterpPgoMethods", "beta,gamma", 1);
    mantra_interp_module *m = NULL;
    ck_assert_int_eq(mantra_interp_assemble(two, strlen(two), "two", &m, NULL), 0);
    mantra_interp_program *p = NULL;
    ck_assert_int_eq(mantra_interp_load(m, NULL, &p), 0); /* NULL options: the environment */
    ck_assert_int_eq(mantra_interp_program_pgo_mode(p), 2);
    it_prog ip = {m, p};
    ck_assert_uint_eq(probe_count(&ip, 0), 0);
    ck_assert_uint_eq(probe_count(&ip, 1), 1);
    ck_assert_uint_eq(probe_count(&ip, 2), 1);
    mantra_interp_program_free(p);
    setenv("MANTRA_InterpPgo", "3", 1);
    ck_assert_int_eq(mantra_interp_load(m, NULL, &p), MANTRA_EINVAL);
    unsetenv("MANTRA_InterpPgo");
    ck_assert_int_eq(mantra_interp_load(m, NULL, &p), 0);
    ck_assert_int_eq(mantra_interp_program_pgo_mode(p), 0);
    mantra_interp_program_free(p);
    mantra_interp_module_free(m);
}
END_TEST

static void check_wrap(uint32_t counting) {
    mantra_interp_module *m = NULL;
    ck_assert_int_eq(mantra_interp_assemble(top_tested, strlen(top_tested), "w", &m, NULL), 0);
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = 1;
    o.counting = counting;
    o.allocator = mantra_interp_private_counters(); /* the counters written below are the program's */
    mantra_interp_program *p = NULL;
    ck_assert_int_eq(mantra_interp_load(m, &o, &p), 0);
    mantra_interp_probes pr;
    mantra_interp_program_probes(p, 0, &pr);
    ck_assert_uint_eq(pr.count, 2);
    pr.counters[0] = UINT32_MAX;     /* + 1 -> 0 */
    pr.counters[1] = UINT32_MAX - 5; /* + 11 -> 5 */
    it_prog ip = {m, p};
    mantra_interp_value r;
    ck_assert_int_eq(it_run(&ip, "top", NULL, 0, &r, NULL, NULL, 0), 0);
    ck_assert_uint_eq(pr.counters[0], 0);
    ck_assert_uint_eq(pr.counters[1], 5);
    mantra_interp_program_free(p);
    mantra_interp_module_free(m);
}

START_TEST(counter_wraps) {
    check_wrap(MANTRA_INTERP_COUNT_PLAIN);
    check_wrap(MANTRA_INTERP_COUNT_ATOMIC);
    check_wrap(MANTRA_INTERP_COUNT_PER_THREAD); /* the merge adds 11 to UINT32_MAX - 5 */
}
END_TEST

/* An allocator that records what it was asked and hands out counters starting at 100. */
typedef struct rec_alloc {
    uint32_t tokens[8];
    uint32_t offsets[8][8];
    uint32_t counts[8];
    uint32_t storage[8][8];
    int calls, releases;
} rec_alloc;

static uint32_t *rec_alloc_fn(void *ctx, const mantra_interp_method_identity *id, const uint32_t *il_offsets,
                              uint32_t count) {
    rec_alloc *a = ctx;
    ck_assert_int_lt(a->calls, 8);
    ck_assert_uint_le(count, 8);
    int k = a->calls++;
    a->tokens[k] = id->token;
    a->counts[k] = count;
    memcpy(a->offsets[k], il_offsets, count * sizeof *il_offsets);
    for (uint32_t i = 0; i < count; i++)
        a->storage[k][i] = 100;
    return a->storage[k];
}

static void rec_release_fn(void *ctx, const mantra_interp_method_identity *id, uint32_t *counters, uint32_t count) {
    rec_alloc *a = ctx;
    (void)id;
    (void)counters;
    (void)count;
    a->releases++;
}

START_TEST(allocator_interface) {
    static const char text[] = HDR ".method A.skip void() token 0x06000007\nret\n.end\n";
    char both[2048];
    snprintf(both, sizeof both, "%s%s", text, bottom_tested + strlen(HDR));
    mantra_interp_module *m = NULL;
    mantra_interp_diag d;
    ck_assert_msg(mantra_interp_assemble(both, strlen(both), "a", &m, &d) == 0, "%s", d.text);
    rec_alloc a;
    memset(&a, 0, sizeof a);
    mantra_interp_counter_allocator al = {rec_alloc_fn, rec_release_fn, &a};
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = 1;
    o.pgo_methods = "bottom";
    o.allocator = &al;
    mantra_interp_program *p = NULL;
    ck_assert_int_eq(mantra_interp_load(m, &o, &p), 0);
    ck_assert_int_eq(a.calls, 1); /* only the selected method */
    ck_assert_uint_eq(a.tokens[0], 0x06000002);
    ck_assert_uint_eq(a.counts[0], 2);
    ck_assert_uint_eq(a.offsets[0][0], 0x00);
    ck_assert_uint_eq(a.offsets[0][1], 0x11);
    it_prog ip = {m, p};
    mantra_interp_value r;
    ck_assert_int_eq(it_run(&ip, "bottom", NULL, 0, &r, NULL, NULL, 0), 0);
    ck_assert_uint_eq(a.storage[0][0], 101); /* initial values are the allocator's */
    ck_assert_uint_eq(a.storage[0][1], 110);
    mantra_interp_program_free(p);
    ck_assert_int_eq(a.releases, 1);
    mantra_interp_module_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("interp_probes");
    TCase *tc = tcase_create("probes");
    tcase_add_test(tc, mode0_has_no_probes);
    tcase_add_test(tc, mode1_top_tested);
    tcase_add_test(tc, mode2_top_tested);
    tcase_add_test(tc, mode1_bottom_tested);
    tcase_add_test(tc, mode2_bottom_tested);
    tcase_add_test(tc, nested_loops);
    tcase_add_test(tc, backward_switch);
    tcase_add_test(tc, rewrite_keeps_il_offsets);
    tcase_add_test(tc, method_filter);
    tcase_add_test(tc, environment);
    tcase_add_test(tc, counter_wraps);
    tcase_add_test(tc, allocator_interface);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
