/* Counting from several threads loses no counts (mantra/pgo.h: relaxed atomic increments), and
 * snapshots with reset taken while threads count lose nothing either: every increment lands in
 * exactly one snapshot or in the counter at the end. */
#include <check.h>
#include <stdatomic.h>
#include <string.h>

#include "check_main.h"
#include "mantra/pgo.h"
#include "platform/platform-internal.h"

#define THREADS 4
#define PER_THREAD 1000000u

typedef struct worker {
    uint32_t *shared; /* every thread counts here */
    uint32_t *own;    /* and in a counter of its own */
    uint64_t *wide;
} worker;

static void count(void *arg) {
    worker *w = arg;
    for (uint32_t i = 0; i < PER_THREAD; i++) {
        mantra_pgo_count(w->shared);
        mantra_pgo_count(w->own);
        if ((i & 7) == 0)
            mantra_pgo_count_u64(w->wide);
    }
}

static mantra_pgo_method *instrumented(uint32_t token) {
    mantra_guid g;
    memset(&g, 0x77, sizeof g);
    mantra_pgo_module *mod;
    ck_assert_int_eq(mantra_pgo_module_register("threads", "", &g, &mod), MANTRA_OK);
    mantra_pgo_method *m;
    ck_assert_int_eq(mantra_pgo_method_register(mod, token, "T", "Run", "", 10, &m), MANTRA_OK);
    mantra_pgo_schema s[THREADS + 2];
    s[0] = (mantra_pgo_schema){MANTRA_PGO_BASIC_BLOCK_INT_COUNT, 0, 1, 0};
    for (int i = 0; i < THREADS; i++)
        s[1 + i] = (mantra_pgo_schema){MANTRA_PGO_BASIC_BLOCK_INT_COUNT, 2 + i, 1, 0};
    s[THREADS + 1] = (mantra_pgo_schema){MANTRA_PGO_BASIC_BLOCK_LONG_COUNT, 9, 1, 0};
    ck_assert_int_eq(mantra_pgo_method_instrument(m, s, THREADS + 2), MANTRA_OK);
    return m;
}

START_TEST(no_lost_counts) {
    mantra_pgo_method *m = instrumented(0x06000001);
    worker w[THREADS];
    mantra_pal_thread t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){mantra_pgo_counters_u32(m, 0), mantra_pgo_counters_u32(m, 1 + (size_t)i),
                        mantra_pgo_counters_u64(m, THREADS + 1)};
        ck_assert_int_eq(mantra_pal_thread_start(&t[i], count, &w[i]), MANTRA_OK);
    }
    for (int i = 0; i < THREADS; i++)
        mantra_pal_thread_join(&t[i]);
    mantra_pgo_data d;
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert_uint_eq(d.value_count, THREADS + 2);
    ck_assert(d.values[0] == (int64_t)THREADS * PER_THREAD);
    for (int i = 0; i < THREADS; i++)
        ck_assert(d.values[1 + i] == PER_THREAD);
    ck_assert(d.values[THREADS + 1] == (int64_t)THREADS * (PER_THREAD / 8));
    mantra_pgo_data_free(&d);
}
END_TEST

typedef struct snapper {
    const mantra_pgo_method *m;
    _Atomic int *stop;
    int64_t sum;
    int snapshots;
} snapper;

static void snap(void *arg) {
    snapper *s = arg;
    while (!atomic_load(s->stop)) {
        mantra_pgo_data d;
        ck_assert_int_eq(mantra_pgo_snapshot(s->m, MANTRA_PGO_SNAPSHOT_RESET, &d), MANTRA_OK);
        s->sum += d.values[0];
        s->snapshots++;
        mantra_pgo_data_free(&d);
        mantra_pal_yield();
    }
}

START_TEST(delta_snapshots_lose_nothing) {
    mantra_pgo_method *m = instrumented(0x06000002);
    worker w[THREADS];
    mantra_pal_thread t[THREADS], st;
    _Atomic int stop = 0;
    snapper s = {m, &stop, 0, 0};
    ck_assert_int_eq(mantra_pal_thread_start(&st, snap, &s), MANTRA_OK);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){mantra_pgo_counters_u32(m, 0), mantra_pgo_counters_u32(m, 1 + (size_t)i),
                        mantra_pgo_counters_u64(m, THREADS + 1)};
        ck_assert_int_eq(mantra_pal_thread_start(&t[i], count, &w[i]), MANTRA_OK);
    }
    for (int i = 0; i < THREADS; i++)
        mantra_pal_thread_join(&t[i]);
    atomic_store(&stop, 1);
    mantra_pal_thread_join(&st);
    mantra_pgo_data d;
    ck_assert_int_eq(mantra_pgo_snapshot(m, MANTRA_PGO_SNAPSHOT_RESET, &d), MANTRA_OK);
    ck_assert(s.sum + d.values[0] == (int64_t)THREADS * PER_THREAD);
    ck_assert_int_gt(s.snapshots, 0);
    mantra_pgo_data_free(&d);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, no_lost_counts);
    tcase_add_test(tc, delta_snapshots_lose_nothing);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
