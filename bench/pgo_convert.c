/* pgo_convert - throughput of `mantra pgo` (trace -> CLR text profile), in MB of trace per second.
 *
 *   pgo_convert -t MANTRA [-m METHODS] [-r RUNS] [-d DIR]
 *
 * Writes DIR/pgo_convert.nettrace (default DIR "."): METHODS methods (default 100,000) shaped like a
 * .NET runtime's shutdown PGO data (tests/tools/pgo_trace.c: empty-metadata runtime events, a
 * ModuleLoad and an AssemblyLoad, one JitInstrumentationDataVerbose per method) with 1..8
 * BasicBlockIntCount records each, then runs `MANTRA pgo TRACE -o DIR/pgo_convert.txt` RUNS times
 * (default 5) and prints each run's wall time and the median, min and max in MB/s. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "../tests/tools/pgo_trace.h"

extern char **environ;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const char *tool = NULL, *dir = ".";
    long methods = 100000, runs = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-t") == 0)
            tool = argv[i + 1];
        else if (strcmp(argv[i], "-m") == 0)
            methods = (long)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "-r") == 0)
            runs = (long)strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "-d") == 0)
            dir = argv[i + 1];
    }
    if (tool == NULL || methods < 1 || runs < 1 || runs > 99) {
        fprintf(stderr, "usage: pgo_convert -t MANTRA [-m METHODS] [-r RUNS] [-d DIR]\n");
        return 2;
    }
    char trace[4096], out[4096];
    snprintf(trace, sizeof trace, "%s/pgo_convert.nettrace", dir);
    snprintf(out, sizeof out, "%s/pgo_convert.txt", dir);

    static const mantra_guid guid = {0x01020304, 0x0506, 0x0708, {9, 10, 11, 12, 13, 14, 15, 16}};
    pgo_trace *t = pgo_trace_open(trace);
    pgo_trace_module(t, 0x1000, 0x2000, "/bench/bench.dll", &guid);
    pgo_trace_assembly(t, 0x2000, "bench, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null");
    uint64_t x = 88172645463325252ull, records = 0;
    for (long m = 0; m < methods; m++) {
        mantra_pgo_schema s[8];
        int64_t v[8];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int n = 1 + (int)(x % 8);
        for (int k = 0; k < n; k++) {
            s[k] = (mantra_pgo_schema){MANTRA_PGO_BasicBlockIntCount, k * 11, 1, 0};
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            v[k] = (int64_t)(x % 1000000);
        }
        char name[32];
        snprintf(name, sizeof name, "M%ld", m);
        pgo_trace_method(t, 0x100000 + (uint64_t)m * 64, 0x1000, 0x06000001 + (uint32_t)m, "Bench.Hot", name,
                         "int32 (int32)", s, (size_t)n, v, (size_t)n);
        records += (uint64_t)n;
    }
    pgo_trace_close(t);
    struct stat st;
    if (stat(trace, &st) != 0) {
        perror(trace);
        return 1;
    }
    double mb = (double)st.st_size / 1e6;
    printf("pgo_convert: %ld methods, %llu block counts, trace %.1f MB\n", methods, (unsigned long long)records, mb);

    double rates[100];
    for (long r = 0; r < runs; r++) {
        char *args[] = {(char *)tool, "pgo", trace, "-o", out, NULL};
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        pid_t pid;
        double t0 = now();
        if (posix_spawn(&pid, tool, &fa, NULL, args, environ) != 0) {
            perror(tool);
            return 1;
        }
        int status = 0;
        waitpid(pid, &status, 0);
        double dt = now() - t0;
        posix_spawn_file_actions_destroy(&fa);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "pgo_convert: %s pgo failed (status %d)\n", tool, status);
            return 1;
        }
        rates[r] = mb / dt;
        printf("  run %ld: %.3f s, %.1f MB/s, %.0f methods/s\n", r + 1, dt, rates[r], (double)methods / dt);
    }
    qsort(rates, (size_t)runs, sizeof rates[0], cmp_double);
    printf("pgo_convert: median %.1f MB/s of trace (min %.1f, max %.1f, %ld runs)\n", rates[runs / 2], rates[0],
           rates[runs - 1], runs);
    return 0;
}
