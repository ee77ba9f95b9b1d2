/* pgo_flush - the time to write the PGO flush at session stop (dotnet_pgo.h) for M instrumented
 * methods (1..8 BasicBlockIntCount records each, counts from a fixed seed, one module): per
 * repetition, a file session with Microsoft-Windows-DotNETRuntime:0x10000000018:5 is started and
 * stopped; the stop runs the hook (ModuleLoad, M MethodLoadVerbose, M+ JitInstrumentationDataVerbose
 * chunks: snapshot, encode, chunk, write) and then drains and finishes the trace. Printed: the
 * stop (median, min, max over -r repetitions), the flush alone (mantra_pgo_flush_last_stats is
 * the hook's; timed around mantra_pgo_flush_write in a session of its own), and the same stop
 * without the keyword (no flush) for reference.
 *
 * Usage: pgo_flush [-m METHODS] [-r REPS] [-o TRACE]   (defaults -m 100000 -r 5 -o
 * pgo_flush.nettrace). Figures only: exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "dotnet_pgo.h"
#include "platform/platform-internal.h"

#define MAX_REPS 31

static uint64_t g_rng = 0x243F6A8885A308D3u;
static uint64_t rnd(void) {
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Du;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static mantra_session_id start(const char *providers, const char *path) {
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = providers;
    c.path = path;
    mantra_session_id id = 0;
    if (mantra_session_start(&id, &c) != 0) {
        fprintf(stderr, "pgo_flush: %s\n", mantra_session_last_error());
        exit(1);
    }
    return id;
}

static void report(const char *what, double *ms, int reps) {
    qsort(ms, (size_t)reps, sizeof *ms, cmp);
    printf("%-28s median %8.1f ms   min %8.1f   max %8.1f\n", what, ms[reps / 2], ms[0], ms[reps - 1]);
}

int main(int argc, char **argv) {
    long methods = 100000;
    int reps = 5;
    const char *path = "pgo_flush.nettrace";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-m") == 0 && i + 1 < argc)
            methods = (long)strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            path = argv[++i];
        else {
            fprintf(stderr, "usage: pgo_flush [-m METHODS] [-r REPS] [-o TRACE]\n");
            return 2;
        }
    }
    if (methods < 1 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "pgo_flush: -m >= 1, -r 1..%d\n", MAX_REPS);
        return 2;
    }
    if (mantra_dotnet_pgo_init(0) != 0) {
        fprintf(stderr, "pgo_flush: init failed\n");
        return 1;
    }
    mantra_guid g = {0xB3B3B3B3u, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
    mantra_pgo_module *mod;
    if (mantra_pgo_module_register("Bench", "/bench/Bench.mbc", &g, &mod) != 0)
        return 1;
    uint64_t t0 = mantra_pal_now_ns();
    for (long i = 0; i < methods; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%ld", i);
        mantra_pgo_method *m;
        if (mantra_pgo_method_register(mod, 0x06000001u + (uint32_t)i, "Bench.Class", name, "int64(int64)", 200, &m) != 0)
            return 1;
        mantra_pgo_schema s[8];
        int n = 1 + (int)(rnd() % 8);
        for (int k = 0; k < n; k++)
            s[k] = (mantra_pgo_schema){MANTRA_PGO_BasicBlockIntCount, 12 * k, 1, 0};
        if (mantra_pgo_method_instrument(m, s, (size_t)n) != 0)
            return 1;
        for (int k = 0; k < n; k++)
            mantra_pgo_counters_u32(m, (size_t)k)[0] = (uint32_t)(rnd() % 100000);
    }
    printf("pgo_flush: %ld methods registered in %.1f ms\n", methods, (double)(mantra_pal_now_ns() - t0) / 1e6);
    double stop_ms[MAX_REPS], flush_ms[MAX_REPS], base_ms[MAX_REPS];
    mantra_pgo_flush_stats st = {0};
    for (int r = 0; r < reps; r++) {
        /* the stop with the flush */
        mantra_session_id id = start(MANTRA_PGO_COLLECT_PROVIDERS, path);
        uint64_t a = mantra_pal_now_ns();
        mantra_session_stop(id);
        stop_ms[r] = (double)(mantra_pal_now_ns() - a) / 1e6;
        mantra_pgo_flush_last_stats(&st);
        /* the same stop without the keyword: no flush */
        id = start("Microsoft-Windows-DotNETRuntime:0x18:5", path);
        a = mantra_pal_now_ns();
        mantra_session_stop(id);
        base_ms[r] = (double)(mantra_pal_now_ns() - a) / 1e6;
        /* the flush writes alone (into a session, as the hook does, without the drain and finish) */
        id = start(MANTRA_PGO_COLLECT_PROVIDERS, path);
        a = mantra_pal_now_ns();
        mantra_pgo_flush_write(0, NULL);
        flush_ms[r] = (double)(mantra_pal_now_ns() - a) / 1e6;
        mantra_dotnet_pgo_fini(); /* this stop without a second flush */
        mantra_session_stop(id);
        mantra_dotnet_pgo_init(0);
    }
    printf("pgo_flush: %u methods, %u chunks, %.1f MB of PgoFormat, %u modules, %u failed writes\n", st.methods,
           st.chunks, (double)st.bytes / 1e6, st.modules, st.failed);
    report("stop with flush", stop_ms, reps);
    report("flush events written", flush_ms, reps);
    report("stop without keyword", base_ms, reps);
    mantra_shutdown();
    remove(path);
    return 0;
}
