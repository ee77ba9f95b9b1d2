/* pgo_counters - what a block-count probe costs (mantra/pgo.h, docs/pgo.md): the increment the
 * library ships (mantra_pgo_count: a relaxed atomic fetch-add) against per-thread counters merged
 * at snapshot, and a plain increment that loses counts under threads, with 1 and 2 threads.
 *
 * Every variant is a noinline loop over the same work (a multiply-add chain on the loop counter,
 * standing for the interpreter's own work between probes), plus:
 *   work       nothing else (the baseline)
 *   plain      a non-atomic read-modify-write of one shared counter (relaxed load + store: no lock
 *              prefix; with 2 threads increments are lost, and the loss is reported)
 *   atomic     mantra_pgo_count() on one shared counter (lock xadd on x86)
 *   perthread  mantra_pgo_count_slot(): the calling thread's own cell of the probe's slot (a
 *              relaxed load + store, no lock prefix); the value is read with mantra_pgo_snapshot,
 *              which sums every thread's cells
 * Each runs on 1 thread, and on 2 threads at once (barrier start) counting the same probe.
 * Repetitions are interleaved round-robin; figures are ns per loop iteration (per thread), median,
 * min and max, and the median of the per-repetition differences against `work`.
 *
 * Usage: pgo_counters [-n N] [-r REPS]    (defaults -n 1e8 -r 5). Figures only: exit 0.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/pgo.h"
#include "platform/platform-internal.h"

#define MAX_REPS 31

enum { V_WORK, V_PLAIN, V_ATOMIC, V_PERTHREAD, V_COUNT };
static const char *k_names[V_COUNT] = {"work", "plain", "atomic", "perthread"};

static mantra_pgo_method *g_method; /* one BasicBlockIntCount record */
static uint32_t *g_cell;             /* its shared cell */
static uint32_t g_slot;              /* its per-thread slot */
static volatile uint64_t g_sink;

#define WORK(x, i) ((x) = (x) * UINT64_C(6364136223846793005) + (i))

__attribute__((noinline)) static uint64_t loop_work(uint64_t n) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) {
        WORK(x, i);
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}
__attribute__((noinline)) static uint64_t loop_plain(uint64_t n, uint32_t *c) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) {
        WORK(x, i);
        __asm__ volatile("" : "+r"(x));
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1u, __ATOMIC_RELAXED);
    }
    return x;
}
__attribute__((noinline)) static uint64_t loop_atomic(uint64_t n, uint32_t *c) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) {
        WORK(x, i);
        __asm__ volatile("" : "+r"(x));
        mantra_pgo_count(c);
    }
    return x;
}
__attribute__((noinline)) static uint64_t loop_perthread(uint64_t n, mantra_pgo_thread *t, uint32_t slot) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) {
        WORK(x, i);
        __asm__ volatile("" : "+r"(x));
        mantra_pgo_count_slot(t, slot);
    }
    return x;
}

typedef struct run {
    int variant;
    uint64_t n;
    _Atomic int *gate;
    _Atomic int *ready;
    uint64_t ns;
} run;

static void run_one(run *r) {
    mantra_pgo_thread *t = r->variant == V_PERTHREAD ? mantra_pgo_thread_attach() : NULL;
    if (r->variant == V_PERTHREAD && t == NULL) {
        fprintf(stderr, "pgo_counters: mantra_pgo_thread_attach failed\n");
        exit(2);
    }
    atomic_fetch_add(r->ready, 1);
    while (!atomic_load(r->gate))
        ;
    uint64_t t0 = mantra_pal_now_ns(), x = 0;
    switch (r->variant) {
    case V_WORK:
        x = loop_work(r->n);
        break;
    case V_PLAIN:
        x = loop_plain(r->n, g_cell);
        break;
    case V_ATOMIC:
        x = loop_atomic(r->n, g_cell);
        break;
    default:
        x = loop_perthread(r->n, t, g_slot);
        break;
    }
    r->ns = mantra_pal_now_ns() - t0;
    mantra_pgo_thread_detach(t);
    g_sink += x;
}
static void thread_fn(void *arg) { run_one(arg); }

/* ns per iteration (the slower thread) and the counts lost, for threads 1 or 2. */
static double measure(int variant, int threads, uint64_t n, uint64_t *lost) {
    mantra_pgo_reset(g_method);
    _Atomic int gate = 0, ready = 0;
    run r[2];
    mantra_pal_thread t;
    for (int i = 0; i < threads; i++)
        r[i] = (run){variant, n, &gate, &ready, 0};
    if (threads == 2 && mantra_pal_thread_start(&t, thread_fn, &r[1]) != 0) {
        fprintf(stderr, "pgo_counters: cannot start a thread\n");
        exit(2);
    }
    while (atomic_load(&ready) < threads - 1)
        mantra_pal_yield();
    atomic_store(&gate, 1);
    run_one(&r[0]);
    if (threads == 2)
        mantra_pal_thread_join(&t);
    uint64_t ns = r[0].ns;
    if (threads == 2 && r[1].ns > ns)
        ns = r[1].ns;
    uint64_t want = variant == V_WORK ? 0 : n * (uint64_t)threads;
    mantra_pgo_data d;
    if (mantra_pgo_snapshot(g_method, 0, &d) != MANTRA_OK) {
        fprintf(stderr, "pgo_counters: snapshot failed\n");
        exit(2);
    }
    /* uint32 counters wrap: compare modulo 2^32 */
    *lost = (uint32_t)(want - (uint64_t)d.values[0]);
    mantra_pgo_data_free(&d);
    return (double)ns / (double)n;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp);
    return s[n / 2];
}
static double vmin(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}
static double vmax(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

int main(int argc, char **argv) {
    uint64_t n = 100000000;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = (uint64_t)strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: pgo_counters [-n N] [-r REPS]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS || n == 0) {
        fprintf(stderr, "pgo_counters: -r 1..%d, -n > 0\n", MAX_REPS);
        return 2;
    }
    mantra_guid g = {0x6d616e74, 0x7261, 0x7067, {'o', 'b', 'e', 'n', 'c', 'h', 0, 1}};
    mantra_pgo_module *mod;
    static const mantra_pgo_schema schema[] = {{MANTRA_PGO_BasicBlockIntCount, 0, 1, 0}};
    if (mantra_pgo_module_register("bench", "", &g, &mod) != MANTRA_OK ||
        mantra_pgo_method_register(mod, 0x06000001, "Bench", "Loop", "void ()", 16, &g_method) != MANTRA_OK ||
        mantra_pgo_method_instrument(g_method, schema, 1) != MANTRA_OK ||
        mantra_pgo_counter_slot(g_method, 0, &g_slot) != MANTRA_OK) {
        fprintf(stderr, "pgo_counters: cannot set up the method\n");
        return 2;
    }
    g_cell = mantra_pgo_counters_u32(g_method, 0);
    printf("pgo_counters: n=%" PRIu64 " iterations per thread, %d repetitions, clock %s, %u CPUs\n", n, reps,
           mantra_pal_clock_name(), mantra_pal_cpu_count());
    static double ns[2][V_COUNT][MAX_REPS];
    static uint64_t lost[2][V_COUNT][MAX_REPS];
    uint64_t dummy;
    for (int v = 0; v < V_COUNT; v++) /* warm-up */
        (void)measure(v, 1, n / 10 + 1, &dummy);
    for (int rep = 0; rep < reps; rep++)
        for (int th = 0; th < 2; th++)
            for (int v = 0; v < V_COUNT; v++)
                ns[th][v][rep] = measure(v, th + 1, n, &lost[th][v][rep]);
    for (int th = 0; th < 2; th++) {
        printf("\n%d thread%s (ns per iteration per thread; difference = median of per-repetition differences "
               "against work)\n",
               th + 1, th ? "s" : "");
        printf("  %-10s %8s %8s %8s %10s %14s\n", "variant", "median", "min", "max", "diff", "lost counts");
        for (int v = 0; v < V_COUNT; v++) {
            double d[MAX_REPS];
            uint64_t maxlost = 0;
            for (int r = 0; r < reps; r++) {
                d[r] = ns[th][v][r] - ns[th][V_WORK][r];
                maxlost = lost[th][v][r] > maxlost ? lost[th][v][r] : maxlost;
            }
            printf("  %-10s %8.3f %8.3f %8.3f %+10.3f %14" PRIu64 "\n", k_names[v], median(ns[th][v], reps),
                   vmin(ns[th][v], reps), vmax(ns[th][v], reps), median(d, reps), maxlost);
        }
    }
    for (int th = 0; th < 2; th++)
        for (int v = 1; v < V_COUNT; v++) {
            double d[MAX_REPS];
            uint64_t maxlost = 0;
            for (int r = 0; r < reps; r++) {
                d[r] = ns[th][v][r] - ns[th][V_WORK][r];
                maxlost = lost[th][v][r] > maxlost ? lost[th][v][r] : maxlost;
            }
            printf("summary: pgo_counters %d thread%s %-9s %+.3f ns/probe over work (min %+.3f, max %+.3f); "
                   "lost counts (worst repetition) %" PRIu64 "\n",
                   th + 1, th ? "s" : " ", k_names[v], median(d, reps), vmin(d, reps), vmax(d, reps), maxlost);
        }
    return 0;
}
