/* Counting from several threads loses no counts, on both paths of mantra/pgo.h (per-thread cells
 * with mantra_pgo_count_slot, the shared cell with mantra_pgo_count), and snapshots with reset
 * taken while threads count lose nothing either: every increment lands in exactly one snapshot or
 * in the counter at the end. */
#include <check.h>
#include <stdatomic.h>
#include <string.h>

#include "check_main.h"
#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/pgo.h"
#include "platform/platform-internal.h"

#define THREADS 4
#define PER_THREAD 1000000u

typedef struct worker {
    uint32_t *shared; /* every thread counts here */
    uint32_t *own;    /* and in a counter of its own */
    uint64_t *wide;
    uint32_t slot0;   /* record 0 again, through the per-thread cells */
    uint32_t own_slot;
} worker;

static void count(void *arg) {
    worker *w = arg;
    mantra_pgo_thread *t = mantra_pgo_thread_attach();
    ck_assert_ptr_nonnull(t);
    for (uint32_t i = 0; i < PER_THREAD; i++) {
        mantra_pgo_count(w->shared);
        mantra_pgo_count_slot(t, w->slot0);
        mantra_pgo_count(w->own);
        mantra_pgo_count_slot(t, w->own_slot);
        if ((i & 7) == 0)
            mantra_pgo_count_u64(w->wide);
    }
    mantra_pgo_thread_detach(t);
}

static worker worker_for(mantra_pgo_method *m, int i) {
    worker w = {mantra_pgo_counters_u32(m, 0), mantra_pgo_counters_u32(m, 1 + (size_t)i),
                mantra_pgo_counters_u64(m, THREADS + 1), 0, 0};
    ck_assert_int_eq(mantra_pgo_counter_slot(m, 0, &w.slot0), MANTRA_OK);
    ck_assert_int_eq(mantra_pgo_counter_slot(m, 1 + (size_t)i, &w.own_slot), MANTRA_OK);
    return w;
}

static mantra_pgo_method *instrumented(uint32_t token) {
    mantra_guid g;
    memset(&g, 0x77, sizeof g);
    mantra_pgo_module *mod;
    ck_assert_int_eq(mantra_pgo_module_register("threads", "", &g, &mod), MANTRA_OK);
    mantra_pgo_method *m;
    ck_assert_int_eq(mantra_pgo_method_register(mod, token, "T", "Run", "", 10, &m), MANTRA_OK);
    mantra_pgo_schema s[THREADS + 2];
    s[0] = (mantra_pgo_schema){MANTRA_PGO_BasicBlockIntCount, 0, 1, 0};
    for (int i = 0; i < THREADS; i++)
        s[1 + i] = (mantra_pgo_schema){MANTRA_PGO_BasicBlockIntCount, 2 + i, 1, 0};
    s[THREADS + 1] = (mantra_pgo_schema){MANTRA_PGO_BasicBlockLongCount, 9, 1, 0};
    ck_assert_int_eq(mantra_pgo_method_instrument(m, s, THREADS + 2), MANTRA_OK);
    return m;
}

START_TEST(no_lost_counts) {
    mantra_pgo_method *m = instrumented(0x06000001);
    worker w[THREADS];
    mantra_pal_thread t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = worker_for(m, i);
        ck_assert_int_eq(mantra_pal_thread_start(&t[i], count, &w[i]), MANTRA_OK);
    }
    for (int i = 0; i < THREADS; i++)
        mantra_pal_thread_join(&t[i]);
    mantra_pgo_data d;
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert_uint_eq(d.value_count, THREADS + 2);
    ck_assert(d.values[0] == (int64_t)THREADS * PER_THREAD * 2);
    for (int i = 0; i < THREADS; i++)
        ck_assert(d.values[1 + i] == PER_THREAD * 2);
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
        w[i] = worker_for(m, i);
        ck_assert_int_eq(mantra_pal_thread_start(&t[i], count, &w[i]), MANTRA_OK);
    }
    for (int i = 0; i < THREADS; i++)
        mantra_pal_thread_join(&t[i]);
    atomic_store(&stop, 1);
    mantra_pal_thread_join(&st);
    mantra_pgo_data d;
    ck_assert_int_eq(mantra_pgo_snapshot(m, MANTRA_PGO_SNAPSHOT_RESET, &d), MANTRA_OK);
    ck_assert(s.sum + d.values[0] == (int64_t)THREADS * PER_THREAD * 2);
    ck_assert_int_gt(s.snapshots, 0);
    mantra_pgo_data_free(&d);
}
END_TEST

START_TEST(detached_cells_keep_their_counts) {
    mantra_pgo_method *m = instrumented(0x06000003);
    uint32_t slot;
    ck_assert_int_eq(mantra_pgo_counter_slot(m, 2, &slot), MANTRA_OK);
    mantra_pgo_thread *a = mantra_pgo_thread_attach(), *b = mantra_pgo_thread_attach();
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    for (int i = 0; i < 10; i++)
        mantra_pgo_count_slot(a, slot);
    mantra_pgo_count_slot(b, slot);
    mantra_pgo_thread_detach(a);
    mantra_pgo_thread *c = mantra_pgo_thread_attach(); /* takes a's cells, with their counts */
    ck_assert_ptr_eq(c, a);
    mantra_pgo_count_slot(c, slot);
    mantra_pgo_data d;
    ck_assert_int_eq(mantra_pgo_snapshot(m, 0, &d), MANTRA_OK);
    ck_assert(d.values[2] == 12);
    mantra_pgo_data_free(&d);
    /* a slot beyond the slot space is dropped, not written */
    mantra_pgo_count_slot(c, MANTRA_PGO_MAX_PAGES * MANTRA_PGO_PAGE_SLOTS);
    ck_assert_ptr_null(mantra_pgo_thread_page(c, MANTRA_PGO_MAX_PAGES));
    mantra_pgo_thread_detach(b);
    mantra_pgo_thread_detach(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pgo_threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, no_lost_counts);
    tcase_add_test(tc, delta_snapshots_lose_nothing);
    tcase_add_test(tc, detached_cells_keep_their_counts);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
