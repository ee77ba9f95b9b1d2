/* prof_hooks - the cost of the profiler's enter/leave hooks and of the tracer (mantra/profiler.h,
 * docs/profiler.md): one program run with no hooks, with the profiler's hooks (enter and leave
 * counting the pairs, the mapper taking every method) and with the tracer (counting its events),
 * interleaved round-robin, R rounds, medians; the cost of an enter/leave pair is the median's
 * excess over the run without hooks divided by the pairs of a run. `--only MODE` runs one mode
 * once (for callgrind: bench/prof_cost.sh counts the instructions).
 *
 * Usage: prof_hooks [-f PROGRAM] [-e ENTRY] [-n ARG] [-r ROUNDS] [--only none|profiler|tracer] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_program.h"
#include "bench_time.h"
#include "mantra/interp.h"
#include "mantra/profiler.h"

static uint64_t g_enters, g_leaves, g_traced;

static void enter(uintptr_t client, int kind, const mantra_prof_info *info) {
    (void)client;
    (void)kind;
    (void)info;
    g_enters++;
}
static void leave(uintptr_t client, int kind, const mantra_prof_info *info) {
    (void)client;
    (void)kind;
    (void)info;
    g_leaves++;
}
static void traced(void *ctx, const mantra_prof_trace_event *e) {
    (void)ctx;
    (void)e;
    g_traced++;
}

enum { NONE, PROFILER, TRACER, MODES };
static const char *const NAMES[MODES] = {"none", "profiler", "tracer"};
#define MAX_ROUNDS 101

static int run(mantra_interp_thread *t, const char *entry, const mantra_interp_value *arg, size_t nargs, int mode,
               double *secs) {
    mantra_prof_hooks h = {enter, leave, NULL, NULL, NULL, 0};
    if (mode == PROFILER && mantra_prof_start(&h) != 0)
        return -1;
    if (mode == TRACER && mantra_prof_trace_start(traced, NULL) != 0)
        return -1;
    double t0 = bench_now();
    int rc = mantra_interp_thread_run(t, entry, arg, nargs, NULL);
    *secs = bench_now() - t0;
    if (mode == PROFILER)
        mantra_prof_stop();
    if (mode == TRACER)
        mantra_prof_trace_stop(traced, NULL);
    if (rc != 0)
        fprintf(stderr, "prof_hooks: %s\n", mantra_interp_thread_last_error(t));
    return rc;
}

int main(int argc, char **argv) {
    const char *file = "examples/programs/fib.masm", *entry = "fib_of", *only = NULL;
    long long n = 25;
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-f") == 0 && i + 1 < argc)
            file = argv[++i];
        else if (strcmp(argv[i], "-e") == 0 && i + 1 < argc)
            entry = argv[++i];
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = (long long)strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: prof_hooks [-f PROGRAM] [-e ENTRY] [-n ARG] [-r ROUNDS] [--only none|profiler|tracer]\n");
            return 2;
        }
    }
    int only_mode = -1;
    for (int k = 0; only && k < MODES; k++)
        if (strcmp(only, NAMES[k]) == 0)
            only_mode = k;
    if (rounds < 1 || rounds > MAX_ROUNDS || (only && only_mode < 0)) {
        fprintf(stderr, "prof_hooks: -r 1..%d; --only none, profiler or tracer\n", MAX_ROUNDS);
        return 2;
    }
    mantra_interp_module *m = bench_assemble("prof_hooks", file);
    if (m == NULL)
        return 1;
    mantra_interp_load_options o;
    mantra_interp_load_options_init(&o);
    o.pgo_mode = 0;
    mantra_interp_program *p = NULL;
    mantra_interp_thread *t = NULL;
    mantra_interp_thread_options to;
    mantra_interp_thread_options_init(&to);
    to.write = bench_discard;
    if (mantra_interp_load(m, &o, &p) != 0 || mantra_interp_thread_create(p, &to, &t) != 0) {
        fprintf(stderr, "prof_hooks: load failed\n");
        return 1;
    }
    mantra_interp_value arg;
    arg.i = n;
    double secs[MODES][MAX_ROUNDS];
    if (only_mode >= 0) {
        uint64_t c0 = mantra_interp_calls_total();
        if (run(t, entry, &arg, 1, only_mode, &secs[0][0]) != 0)
            return 1;
        printf("prof_hooks: %s(%lld) with %s: %.4f s, %llu calls, %llu enter/leave pairs, %llu traced events\n",
               entry, n, NAMES[only_mode], secs[0][0], (unsigned long long)(mantra_interp_calls_total() - c0),
               (unsigned long long)g_enters, (unsigned long long)g_traced);
        return 0;
    }
    uint64_t c0 = mantra_interp_calls_total();
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < MODES; k++)
            if (run(t, entry, &arg, 1, k, &secs[k][r]) != 0)
                return 1;
    uint64_t calls = (mantra_interp_calls_total() - c0) / ((uint64_t)rounds * MODES);
    uint64_t pairs = g_enters / (uint64_t)rounds, events = g_traced / (uint64_t)rounds;
    if (g_enters != g_leaves || pairs == 0) {
        fprintf(stderr, "prof_hooks: %llu enters, %llu leaves\n", (unsigned long long)g_enters,
                (unsigned long long)g_leaves);
        return 1;
    }
    printf("prof_hooks: %s %s(%lld): %llu calls, %llu enter/leave pairs and %llu traced events a run, %d rounds "
           "interleaved, dispatch %s\n",
           file, entry, n, (unsigned long long)calls, (unsigned long long)pairs, (unsigned long long)events, rounds,
           mantra_interp_computed_goto() ? "computed goto" : "switch");
    double base = 0;
    for (int k = 0; k < MODES; k++) {
        qsort(secs[k], (size_t)rounds, sizeof(double), bench_cmp_double);
        double med = secs[k][rounds / 2];
        if (k == NONE)
            base = med;
        printf("  %-9s median %.4f s  min %.4f  max %.4f  ratio %.3f", NAMES[k], med, secs[k][0], secs[k][rounds - 1],
               med / base);
        if (k != NONE)
            printf("  %.2f ns per enter/leave pair", (med - base) * 1e9 / (double)pairs);
        printf("\n");
        printf("summary: prof_hooks %s ratio %.3f\n", NAMES[k], med / base);
    }
    mantra_interp_thread_free(t);
    mantra_interp_program_free(p);
    mantra_interp_module_free(m);
    return 0;
}
