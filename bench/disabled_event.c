/* disabled_event - what an instrumented call site costs when nobody listens.
 *
 * Four loops over the same loop-varying work (a value derived from the loop counter, stored to a
 * volatile sink each iteration so that the loop can be neither removed nor vectorised):
 *
 *   baseline  the work alone
 *   guarded   the work + `if (MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled())
 *                 mantra_DotNETRuntime_MethodLoadVerbose_V2_emit(<11 loop-varying args>);`
 *             with the event disabled: the cost of the inline check (relaxed load + branch)
 *   direct    the work + an unconditional call of the writer, which tests enabled itself and
 *             returns MANTRA_WRITE_DISABLED: the cost of an out-of-line call into libmantra_dotnet
 *   enabled   the guarded loop with the event ENABLED (a do-nothing listener set with
 *             mantra_set_listener, the provider registered): the full write path per event
 *             (payload assembly, UTF-8 -> UTF-16 of three strings, listener dispatch)
 *
 * Each loop is its own noinline function (loop_<variant>), so that objdump --disassemble=loop_guarded
 * shows the check inside the loop and callgrind attributes instructions per variant.
 * Repetitions are interleaved (baseline, guarded, direct, enabled, baseline, ...) so that every
 * variant sees the same machine noise; the report gives median/min/max ns per iteration and the
 * median of the per-repetition differences against the baseline of the same repetition.
 *
 * Usage: disabled_event [-n N] [-e N_ENABLED] [-r REPS] [-o VARIANTS] [-W] [N]
 *   -n N          iterations per timed run of baseline/guarded/direct (default 1e9; 1e9 and 2.5e8 accepted)
 *   -e N          events per timed run of the enabled variant (default 2e6)
 *   -r REPS       repetitions (default 5)
 *   -o LIST       comma-separated subset of baseline,guarded,direct,enabled (default all)
 *   -W            no warm-up run (use with valgrind --tool=callgrind: then the loop_<v> function
 *                 runs exactly N x REPS iterations)
 * Figures only: the exit status is 0 whatever the timings (non-zero only on usage or setup errors).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 199309L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#endif

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/event.h"

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_NOINLINE __attribute__((noinline))
#else
#define BENCH_NOINLINE
#endif

#define MAX_REPS 101

/* Every loop stores here each iteration: the "loop-varying work" and what keeps the loop alive. */
static volatile uint64_t g_sink;

/* Realistic MethodLoadVerbose strings (UTF-8, converted to UTF-16 by the writer when enabled). */
static const char k_namespace[] = "System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]";
static const char k_name[] = "TryInsert";
static const char k_signature[] = "instance bool (!0,!1,value class System.Collections.Generic.InsertionBehavior)";

#define METHOD_BASE UINT64_C(0x00007ff8a1230000)
#define MODULE_ID UINT64_C(0x00007ff8a0000000)
#define CODE_BASE UINT64_C(0x00007ff8b0000000)

/* The 11 arguments of MethodLoadVerbose_V2, all derived from the loop counter i. */
#define MLV2_ARGS(i, method_id)                                                                       \
    (method_id), MODULE_ID ^ ((i) >> 10), CODE_BASE + ((i) << 6), (uint32_t)(64u + ((i)&0x3ffu)),     \
        (uint32_t)(0x06000000u | ((i)&0xffffu)), (uint32_t)((i)&0x7u), k_namespace, k_name, k_signature, \
        (uint16_t)((i)&0x3u), (i) >> 3

BENCH_NOINLINE static void loop_baseline(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        uint64_t method_id = METHOD_BASE + (i << 4);
        g_sink = method_id;
    }
}

BENCH_NOINLINE static void loop_guarded(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        uint64_t method_id = METHOD_BASE + (i << 4);
        g_sink = method_id;
        if (MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled())
            mantra_DotNETRuntime_MethodLoadVerbose_V2_emit(MLV2_ARGS(i, method_id));
    }
}

BENCH_NOINLINE static void loop_direct(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        uint64_t method_id = METHOD_BASE + (i << 4);
        g_sink = method_id;
        (void)mantra_DotNETRuntime_MethodLoadVerbose_V2_write(MLV2_ARGS(i, method_id));
    }
}

/* The listener of the enabled variant: does nothing (the payload has been assembled by then). */
static void noop_listener(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    (void)ctx;
    (void)desc;
    (void)payload;
    (void)size;
}

enum { V_BASELINE, V_GUARDED, V_DIRECT, V_ENABLED, V_COUNT };
static const char *const k_variant_names[V_COUNT] = {"baseline", "guarded", "direct", "enabled"};
static const char *const k_variant_what[V_COUNT] = {
    "loop work only (volatile store)",
    "work + if (_enabled()) _emit(...), event disabled",
    "work + _write(...) called directly, event disabled",
    "work + if (_enabled()) _emit(...), event ENABLED (no-op listener)",
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    double median, min, max;
} stats;

static stats summarize(const double *v, int n) {
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    stats r;
    r.min = s[0];
    r.max = s[n - 1];
    r.median = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    return r;
}

static int parse_count(const char *s, uint64_t *out) {
    char *end = NULL;
    double d = strtod(s, &end);
    if (end == s || *end != '\0' || !(d >= 1.0) || d > 1e15)
        return -1;
    *out = (uint64_t)(d + 0.5);
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: disabled_event [-n N] [-e N_ENABLED] [-r REPS] [-o baseline,guarded,direct,enabled] [-W] [N]\n");
}

static void check_disabled(void) {
    if (MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled()) {
        fprintf(stderr, "disabled_event: MethodLoadVerbose_V2 unexpectedly enabled\n");
        exit(2);
    }
}

static double run_variant(int v, uint64_t n) {
    uint64_t t0, t1;
    if (v == V_ENABLED) {
        mantra_set_listener(noop_listener, NULL);
        if (!MANTRA_DotNETRuntime_MethodLoadVerbose_V2_enabled()) {
            fprintf(stderr, "disabled_event: listener set but MethodLoadVerbose_V2 not enabled\n");
            exit(2);
        }
        t0 = now_ns();
        loop_guarded(n);
        t1 = now_ns();
        mantra_set_listener(NULL, NULL);
    } else {
        check_disabled();
        t0 = now_ns();
        if (v == V_BASELINE)
            loop_baseline(n);
        else if (v == V_GUARDED)
            loop_guarded(n);
        else
            loop_direct(n);
        t1 = now_ns();
    }
    return (double)(t1 - t0) / (double)n;
}

int main(int argc, char **argv) {
    uint64_t n = UINT64_C(1000000000), n_enabled = UINT64_C(2000000), reps = 5;
    int selected[V_COUNT] = {1, 1, 1, 1};
    int warmup = 1;

    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "-W") == 0) {
            warmup = 0;
        } else if ((strcmp(arg, "-n") == 0 || strcmp(arg, "-e") == 0 || strcmp(arg, "-r") == 0 ||
                    strcmp(arg, "-o") == 0) && a + 1 < argc) {
            const char *val = argv[++a];
            if (arg[1] == 'o') {
                memset(selected, 0, sizeof selected);
                char buf[128];
                snprintf(buf, sizeof buf, "%s", val);
                for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                    int found = 0;
                    for (int v = 0; v < V_COUNT; v++)
                        if (strcmp(tok, k_variant_names[v]) == 0)
                            selected[v] = found = 1;
                    if (!found) {
                        fprintf(stderr, "disabled_event: unknown variant '%s'\n", tok);
                        usage();
                        return 2;
                    }
                }
            } else {
                uint64_t *dst = arg[1] == 'n' ? &n : arg[1] == 'e' ? &n_enabled : &reps;
                if (parse_count(val, dst) != 0) {
                    fprintf(stderr, "disabled_event: bad count '%s'\n", val);
                    usage();
                    return 2;
                }
            }
        } else if (arg[0] != '-' && parse_count(arg, &n) == 0) {
            /* positional N */
        } else {
            usage();
            return 2;
        }
    }
    if (reps > MAX_REPS) {
        fprintf(stderr, "disabled_event: at most %d repetitions\n", MAX_REPS);
        return 2;
    }

    if (mantra_register_provider(&mantra_DotNETRuntime_provider) != 0) {
        fprintf(stderr, "disabled_event: mantra_register_provider failed\n");
        return 2;
    }
    check_disabled();

    const int r = (int)reps;
    printf("disabled_event: MethodLoadVerbose_V2 (11 args, 3 strings); %" PRIu64
           " iterations/run (enabled: %" PRIu64 " events/run), %d interleaved repetitions%s\n",
           n, n_enabled, r, warmup ? ", after one warm-up run of each" : ", no warm-up");

    if (warmup)
        for (int v = 0; v < V_COUNT; v++)
            if (selected[v])
                (void)run_variant(v, v == V_ENABLED ? (n_enabled / 10 + 1) : (n / 10 + 1));

    double ns[V_COUNT][MAX_REPS];
    for (int rep = 0; rep < r; rep++)
        for (int v = 0; v < V_COUNT; v++)
            if (selected[v])
                ns[v][rep] = run_variant(v, v == V_ENABLED ? n_enabled : n);

    printf("%-9s %12s %9s %9s   %s\n", "variant", "median ns/it", "min", "max", "per repetition");
    for (int v = 0; v < V_COUNT; v++) {
        if (!selected[v])
            continue;
        stats s = summarize(ns[v], r);
        printf("%-9s %12.4f %9.4f %9.4f  ", k_variant_names[v], s.median, s.min, s.max);
        for (int rep = 0; rep < r; rep++)
            printf(" %.4f", ns[v][rep]);
        printf("   [%s]\n", k_variant_what[v]);
    }

    stats diff[V_COUNT];
    memset(diff, 0, sizeof diff);
    if (selected[V_BASELINE]) {
        for (int v = V_GUARDED; v < V_COUNT; v++) {
            if (!selected[v])
                continue;
            double d[MAX_REPS], q[MAX_REPS];
            for (int rep = 0; rep < r; rep++) {
                d[rep] = ns[v][rep] - ns[V_BASELINE][rep];
                q[rep] = ns[v][rep] / ns[V_BASELINE][rep];
            }
            stats sd = summarize(d, r), sq = summarize(q, r);
            stats sv = summarize(ns[v], r), sb = summarize(ns[V_BASELINE], r);
            printf("%-9s - baseline: %+.4f ns/it median of per-repetition differences (min %+.4f, max %+.4f); "
                   "difference of the minima %+.4f; ratio %.3fx (min %.3fx, max %.3fx)%s\n",
                   k_variant_names[v], sd.median, sd.min, sd.max, sv.min - sb.min, sq.median, sq.min, sq.max,
                   v == V_GUARDED ? "   [goal for the disabled check: < 0.1 ns]" : "");
            diff[v] = sd;
        }
    }
    /* One line per figure for bench/run_all.sh's summary. */
    if (selected[V_BASELINE]) {
        stats b = summarize(ns[V_BASELINE], r);
        printf("summary: disabled_event baseline loop %.4f ns/it (min %.4f, max %.4f)\n", b.median, b.min, b.max);
        if (selected[V_GUARDED])
            printf("summary: disabled_event guarded check, event disabled: %+.4f ns/call over baseline "
                   "(median of %d paired differences, min %+.4f, max %+.4f; difference of the minima %+.4f; "
                   "goal < 0.1 ns)\n",
                   diff[V_GUARDED].median, r, diff[V_GUARDED].min, diff[V_GUARDED].max,
                   summarize(ns[V_GUARDED], r).min - b.min);
        if (selected[V_DIRECT])
            printf("summary: disabled_event direct writer call, event disabled: %+.4f ns/call over baseline "
                   "(min %+.4f, max %+.4f)\n",
                   diff[V_DIRECT].median, diff[V_DIRECT].min, diff[V_DIRECT].max);
    }
    if (selected[V_ENABLED]) {
        stats e = summarize(ns[V_ENABLED], r);
        printf("summary: disabled_event enabled event (no-op listener): %.1f ns/event (min %.1f, max %.1f)\n",
               e.median, e.min, e.max);
    }

    mantra_write_counters c;
    mantra_get_write_counters(&c);
    printf("libmantra counters: written %" PRIu64 ", dropped %" PRIu64 ", too_large %" PRIu64
           ", bad_string %" PRIu64 "\n",
           c.written, c.dropped, c.too_large, c.bad_string);
    printf("sink %" PRIu64 "\n", (uint64_t)g_sink);
    return 0;
}
