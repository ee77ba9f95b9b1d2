/* interp_loop - probe overhead of the reference interpreter: the loop benchmark
 * (examples/programs/bench_loop.masm, Examples.loop(N)) loaded six times in one process,
 * uninstrumented (MANTRA_InterpPgo=0), mode 1 with per-thread counters (the threaded build's
 * default), atomic and plain counters, and mode 2 per-thread and atomic; the variants run interleaved round-robin,
 * R rounds, and each is reported as median/min/max seconds and the ratio of its median to the
 * uninstrumented median. Also prints ns per loop iteration and the probe counts of one run.
 *
 * Usage: interp_loop [-f PROGRAM] [-n N] [-r ROUNDS] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_program.h"
#include "bench_time.h"
#include "mantra/interp.h"

#define VARIANTS 6
#define MAX_ROUNDS 101

int main(int argc, char **argv) {
    const char *file = "examples/programs/bench_loop.masm";
    long long n = 2000000;
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-f") == 0 && i + 1 < argc)
            file = argv[++i];
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = (long long)strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: interp_loop [-f PROGRAM] [-n N] [-r ROUNDS]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || n < 1) {
        fprintf(stderr, "interp_loop: -r 1..%d, -n >= 1\n", MAX_ROUNDS);
        return 2;
    }
    mantra_interp_module *m = bench_assemble("interp_loop", file);
    if (m == NULL)
        return 1;
    static const char *const names[VARIANTS] = {"uninstrumented", "mode1 per-thread", "mode1 atomic",
                                                "mode1 plain",    "mode2 per-thread", "mode2 atomic"};
    static const int modes[VARIANTS] = {0, 1, 1, 1, 2, 2};
    static const uint32_t counting[VARIANTS] = {MANTRA_INTERP_COUNT_PER_THREAD, MANTRA_INTERP_COUNT_PER_THREAD,
                                                MANTRA_INTERP_COUNT_ATOMIC,     MANTRA_INTERP_COUNT_PLAIN,
                                                MANTRA_INTERP_COUNT_PER_THREAD, MANTRA_INTERP_COUNT_ATOMIC};
    mantra_interp_program *p[VARIANTS];
    mantra_interp_thread *t[VARIANTS];
    mantra_interp_thread_options to;
    mantra_interp_thread_options_init(&to);
    to.write = bench_discard;
    for (int v = 0; v < VARIANTS; v++) {
        mantra_interp_load_options o;
        mantra_interp_load_options_init(&o);
        o.pgo_mode = modes[v];
        o.pgo_methods = "";
        o.counting = counting[v];
        /* mode 1 counts in the PGO store (the default); one method has one probe layout in the
         * store, so mode 2 takes program-private counters */
        if (modes[v] == 2)
            o.allocator = mantra_interp_private_counters();
        if (mantra_interp_load(m, &o, &p[v]) != 0 || mantra_interp_thread_create(p[v], &to, &t[v]) != 0) {
            fprintf(stderr, "interp_loop: load failed\n");
            return 1;
        }
    }
    double secs[VARIANTS][MAX_ROUNDS];
    mantra_interp_value arg;
    arg.i = n;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < VARIANTS; v++) {
            double t0 = bench_now();
            if (mantra_interp_thread_run(t[v], "Examples.loop", &arg, 1, NULL) != 0) {
                fprintf(stderr, "interp_loop: %s\n", mantra_interp_thread_last_error(t[v]));
                return 1;
            }
            secs[v][r] = bench_now() - t0;
        }
    printf("interp_loop: %s, loop(%lld) (%lld outer x 10 inner iterations), %d rounds interleaved, dispatch %s\n",
           file, n, n, rounds, mantra_interp_computed_goto() ? "computed goto" : "switch");
    double base = 0;
    for (int v = 0; v < VARIANTS; v++) {
        qsort(secs[v], (size_t)rounds, sizeof(double), bench_cmp_double);
        double med = secs[v][rounds / 2];
        if (v == 0)
            base = med;
        printf("  %-17s median %.4f s  min %.4f  max %.4f  ratio %.3f  %.2f ns/inner iteration\n", names[v], med,
               secs[v][0], secs[v][rounds - 1], med / base, med * 1e9 / ((double)n * 10));
        printf("summary: interp_loop %s ratio %.3f\n", names[v], med / base);
    }
    /* the probes of one variant, as a sanity check of what was measured (the mode 1 variants share
     * the PGO store's counters: their sum; mode 2 its private ones) */
    for (int v = 1; v < VARIANTS; v++) {
        mantra_interp_probes pr;
        uint32_t counts[64];
        mantra_interp_program_probes(p[v], 0, &pr);
        if (pr.count > 64 || mantra_interp_program_counts(p[v], 0, counts) != 0)
            continue;
        printf("  %s probes of Examples.loop:", names[v]);
        for (uint32_t k = 0; k < pr.count; k++)
            printf(" IL_%04x=%u", (unsigned)pr.il_offsets[k], (unsigned)counts[k]);
        printf("\n");
    }
    for (int v = 0; v < VARIANTS; v++) {
        mantra_interp_thread_free(t[v]);
        mantra_interp_program_free(p[v]);
    }
    mantra_interp_module_free(m);
    return 0;
}
