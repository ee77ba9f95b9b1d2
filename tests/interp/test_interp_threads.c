/* test_interp_threads - several threads run one loaded program at once (the program is
 * immutable; each thread has its own mantra_interp_thread): every thread gets the right result
 * and output, and with atomic and per-thread counting (the default of the threaded build) no
 * probe count is lost: the counts are exactly THREADS x RUNS x the single-run counts. */
#include <pthread.h>
#include <stdio.h>

#include "check_main.h"
#include "interp_test_util.h"

#define THREADS 4
/* Under ThreadSanitizer every atomic operation is intercepted, and each interpreted call publishes
 * the thread's call stack for the sampler (interp.md "Sampling") with a few of them: the TSan build
 * runs a tenth of the runs so the test stays within its timeout; the counts scale exactly. */
#if defined(__SANITIZE_THREAD__)
#define RUNS 200
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RUNS 200
#endif
#endif
#ifndef RUNS
#define RUNS 2000
#endif

/* fib(10) = 55 with 177 calls per run; a loop of 10 in main (head 11 per run, see
 * test_interp_probes.c top_tested for the derivation). */
static const char text[] = ".module Th 99999999-8888-7777-6666-555555555555\n"
                           ".method fib int64(int64)\nldarg 0\nldc.i8 2\nbge r\nldarg 0\nret\n"
                           "r: ldarg 0\nldc.i8 1\nsub\ncall fib\nldarg 0\nldc.i8 2\nsub\ncall fib\nadd\nret\n.end\n"
                           ".method main int64()\n.locals 2\n"
                           "head: ldloc 0\nldc.i8 10\nbge done\nldloc 1\nldc.i8 10\ncall fib\nadd\nstloc 1\n"
                           "ldloc 0\nldc.i8 1\nadd\nstloc 0\nbr head\n"
                           "done: ldloc 1\ndup\nprint.i\nret\n.end\n";

typedef struct worker {
    const mantra_interp_program *prog;
    int ok;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    it_out out;
    mantra_interp_thread_options to;
    mantra_interp_thread_options_init(&to);
    to.write = it_write;
    to.write_ctx = &out;
    mantra_interp_thread *t = NULL;
    if (mantra_interp_thread_create(w->prog, &to, &t) != 0)
        return NULL;
    w->ok = 1;
    for (int i = 0; i < RUNS; i++) {
        out.len = 0;
        mantra_interp_value r;
        if (mantra_interp_thread_run(t, "main", NULL, 0, &r) != 0 || r.i != 550 || out.len != 3 ||
            memcmp(out.buf, "550", 3) != 0)
            w->ok = 0;
    }
    mantra_interp_thread_free(t);
    return NULL;
}

static void run_threads(int mode, uint32_t counting, const char *want) {
    mantra_interp_module *m = NULL;
    ck_assert_int_eq(mantra_interp_assemble(text, strlen(text), "th", &m, NULL), 0);
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = mode;
    o.counting = counting;
    o.allocator = mantra_interp_private_counters(); /* fresh counters per load */
    mantra_interp_program *p = NULL;
    ck_assert_int_eq(mantra_interp_load(m, &o, &p), 0);
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i].prog = p;
        w[i].ok = 0;
        ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(w[i].ok, "thread %d", i);
    }
    char got[256], all[512];
    it_prog ip = {m, p};
    it_probes(&ip, 0, got, sizeof got);
    snprintf(all, sizeof all, "%s |", got);
    it_probes(&ip, 1, got, sizeof got);
    strncat(all, got, sizeof all - strlen(all) - 1);
    ck_assert_str_eq(all, want);
    mantra_interp_program_free(p);
    mantra_interp_module_free(m);
}

/* Per run: fib is entered 177 * 10 = 1770 times (calls of fib(10): 2*fib(11)-1 = 177). main's
 * loop head is its first instruction, so entry and loop head share the probe at IL_0000: 1 entry
 * + 10 back edges = 11. x 4 threads x 2000 runs = x 8000. */
START_TEST(mode1_no_lost_counts) {
    /* x THREADS x RUNS = x 8000 in the default build */
    const unsigned long n = (unsigned long)THREADS * RUNS;
    char m1[128], m2[192];
    snprintf(m1, sizeof m1, "0000:%lu |0000:%lu", 1770 * n, 11 * n);
    run_threads(1, MANTRA_INTERP_COUNT_ATOMIC, m1);
    run_threads(1, MANTRA_INTERP_COUNT_PER_THREAD, m1);
    /* mode 2: fib IL_0011 (n < 2: 89 of the 177 calls of fib(10)) and IL_0015 (n >= 2: 88), x 10 per run;
     * main IL_0011 (the loop body: 10 per run) and IL_003b (after the loop: 1 per run) */
    snprintf(m2, sizeof m2, "0000:%lu 0011:%lu 0015:%lu |0000:%lu 0011:%lu 003b:%lu", 1770 * n, 890 * n, 880 * n,
             11 * n, 10 * n, n);
    run_threads(2, MANTRA_INTERP_COUNT_PER_THREAD, m2);
}
END_TEST

START_TEST(mode0_results) {
    run_threads(0, MANTRA_INTERP_COUNT_DEFAULT, " |");
}
END_TEST

/* interp-instructions and interp-calls (mantra_interp_instructions_total, _calls_total): main
 * calls step N times; per iteration main dispatches 10 instructions (ldloc, call, stloc, ldarg,
 * ldc, sub, dup, starg, ldc, bgt) and step 4 (ldarg, ldc, add, ret), 14 in all, then
 * ldloc + ret: 14 N + 2 instructions, N + 1 calls (the entry run counts). Without probes (mode 0). */
static const char loop_text[] = ".module Lp 99999999-8888-7777-6666-555555555556\n"
                                ".method main int64(int64)\n.locals 1\n"
                                "again: ldloc 0\ncall step\nstloc 0\nldarg 0\nldc.i8 1\nsub\ndup\nstarg 0\n"
                                "ldc.i8 0\nbgt again\nldloc 0\nret\n.end\n"
                                ".method step int64(int64)\nldarg 0\nldc.i8 1\nadd\nret\n.end\n"
                                ".method fault int64()\nldc.i8 1\nldc.i8 0\ndiv\nret\n.end\n";

START_TEST(instruction_and_call_counts) {
    it_prog p = it_load(loop_text, 0, NULL);
    mantra_interp_value arg = {.i = 1000}, r = {0};
    uint64_t i0 = mantra_interp_instructions_total(), c0 = mantra_interp_calls_total();
    char err[256];
    ck_assert_int_eq(it_run(&p, "main", &arg, 1, &r, NULL, err, sizeof err), 0);
    ck_assert_int_eq(r.i, 1000);
    ck_assert_uint_eq(mantra_interp_instructions_total() - i0, 14u * 1000u + 2u);
    ck_assert_uint_eq(mantra_interp_calls_total() - c0, 1001u);
    /* a fault ends the run: the three instructions dispatched up to it (ldc, ldc, div) count */
    i0 = mantra_interp_instructions_total();
    ck_assert_int_ne(it_run(&p, "fault", NULL, 0, &r, NULL, err, sizeof err), 0);
    ck_assert_uint_eq(mantra_interp_instructions_total() - i0, 3u);
    it_free(&p);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("interp_threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, mode0_results);
    tcase_add_test(tc, mode1_no_lost_counts);
    tcase_add_test(tc, instruction_and_call_counts);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
