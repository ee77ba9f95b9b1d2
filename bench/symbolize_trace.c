/* symbolize_trace - figures of the symbol map (mantra/symbols.h, docs/symbols.md), and a large
 * sampled trace for `mantra symbolize` / `mantra report` (bench/symbolize_figures.sh).
 *
 *   symbolize_trace [-s SAMPLES] [-m METHODS] [-o TRACE] [-r IMAGE]
 *
 * 1. The map alone: METHODS methods (default 20,000) loaded over time, a tenth of them unloaded and
 *    their addresses reused; then SAMPLES (default 1,000,000) stacks of 8 frames resolved: frames
 *    per second, samples per second, and the time to finish (index) the map.
 * 2. With -o: a nettrace file written through a file session with libmantra's generated writers:
 *    ModuleLoad, METHODS MethodLoadVerbose, SAMPLES SampleProfiler ThreadSample events on 4 threads
 *    with those 8-frame stacks (leaf first; callers as return addresses). Medians of 5 for part 1.
 * 3. With -r: the ReadyToRun reader indexing IMAGE (a file read once into memory): PE headers,
 *    metadata, ReadyToRun header and every method's hot and cold range (mantra_pe_parse,
 *    mantra_md_open_pe, mantra_r2r_open, mantra_r2r_code), median of 5, and the memory it holds. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_file.h"
#include "bench_time.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/ecma.h"
#include "mantra/event.h"
#include "mantra/session.h"
#include "mantra/symbols.h"

#define DEPTH 8
#define BASE 0x7f0000000000ull

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t start_of(uint32_t i) { return BASE + (uint64_t)i * 0x200; }
static uint32_t size_of(uint32_t i) { return 0x80 + (i * 37) % 0x100; }

/* A stack: DEPTH addresses inside methods (the leaf anywhere, callers just after a call), some
 * (1 in 64) in no method. */
static void stack_of(uint32_t methods, uint64_t *ips) {
    for (uint32_t f = 0; f < DEPTH; f++) {
        uint32_t m = (uint32_t)(next() % methods);
        uint64_t fu = f;
        ips[f] = (next() & 63) == 0 ? BASE - 0x1000u - fu : start_of(m) + next() % size_of(m) + (fu ? 1u : 0u);
    }
}

/* Part 3. */
static int index_image(const char *path) {
    size_t n = 0;
    uint8_t *data = (uint8_t *)bench_read_file(path, &n);
    if (data == NULL) {
        fprintf(stderr, "symbolize_trace: cannot read %s\n", path);
        return 1;
    }
    double t[5];
    size_t methods = 0, held = 0;
    for (int run = 0; run < 5; run++) {
        mantra_pe pe;
        mantra_md *md = NULL;
        mantra_r2r r;
        mantra_ecma_error err;
        double t0 = now();
        if (mantra_pe_parse(data, (size_t)n, &pe, &err) != MANTRA_OK || mantra_md_open_pe(&pe, &md, &err) != MANTRA_OK ||
            mantra_r2r_open(&pe, &r, &err) != MANTRA_OK || mantra_r2r_code(&pe, &r, &err) != MANTRA_OK) {
            fprintf(stderr, "symbolize_trace: %s: %s\n", path, err.message);
            free(data);
            return 1;
        }
        t[run] = now() - t0;
        methods = r.nmethods;
        held = r.nmethods * sizeof *r.methods + r.nsections * sizeof *r.sections + pe.nsections * sizeof *pe.sections;
        mantra_r2r_free(&r);
        mantra_md_close(md);
        mantra_pe_free(&pe);
    }
    qsort(t, 5, sizeof t[0], bench_cmp_double);
    printf("ReadyToRun reader: %s (%.1f MB): %zu methods indexed in %.2f ms (median of 5); the index holds %.2f MB "
           "beside the file's bytes (and the metadata reader's tables)\n",
           path, (double)n / 1e6, methods, t[2] * 1000, (double)held / 1e6);
    free(data);
    return 0;
}

int main(int argc, char **argv) {
    uint32_t samples = 1000000, methods = 20000;
    const char *out = NULL, *image = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-s") == 0)
            samples = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-m") == 0)
            methods = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-o") == 0)
            out = argv[i + 1];
        else if (strcmp(argv[i], "-r") == 0)
            image = argv[i + 1];
    }
    if (image && index_image(image) != 0)
        return 1;
    char name[32];
    double resolve_s[5], finish_s[5];
    uint64_t resolved = 0;
    for (int run = 0; run < 5; run++) {
        mantra_symbols *s;
        if (mantra_symbols_new(&s) != MANTRA_OK)
            return 1;
        mantra_symbols_module_load(s, 0, MANTRA_SYM_LOAD, 1, "/bench/Bench.dll");
        for (uint32_t i = 0; i < methods; i++) {
            snprintf(name, sizeof name, "M%u", i);
            mantra_sym_method m = {1, i + 1, 0x06000001 + i, 0x8, "Bench.T", name, "void  ()", start_of(i), size_of(i), 0, 0};
            mantra_symbols_method_load(s, (int64_t)i, MANTRA_SYM_LOAD, &m);
            if (i % 10 == 9) { /* unloaded, and its range used again by another method */
                mantra_symbols_method_unload(s, (int64_t)i + 5, start_of(i));
                mantra_sym_method r = m;
                r.name = "Reused";
                mantra_symbols_method_load(s, (int64_t)i + 6, MANTRA_SYM_LOAD, &r);
            }
        }
        double t0 = now();
        mantra_symbols_finish(s);
        finish_s[run] = now() - t0;
        uint64_t ips[DEPTH];
        resolved = 0;
        rng = 88172645463325252ull;
        t0 = now();
        for (uint32_t k = 0; k < samples; k++) {
            stack_of(methods, ips);
            for (int f = 0; f < DEPTH; f++) {
                mantra_sym_result r;
                mantra_symbols_resolve(s, ips[f], (int64_t)methods + 10, f > 0, &r);
                resolved += r.part != MANTRA_SYM_NONE;
            }
        }
        resolve_s[run] = now() - t0;
        mantra_symbols_free(s);
    }
    qsort(resolve_s, 5, sizeof resolve_s[0], bench_cmp_double);
    qsort(finish_s, 5, sizeof finish_s[0], bench_cmp_double);
    printf("symbol map: %u methods (+%u reusing unloaded ranges), finish %.2f ms; %u samples x %d frames resolved "
           "in %.3f s (median of 5): %.2f M frames/s, %.0f samples/s; %" PRIu64 " frames resolved\n",
           methods, methods / 10, finish_s[2] * 1000, samples, DEPTH, resolve_s[2],
           (double)samples * DEPTH / resolve_s[2] / 1e6, (double)samples / resolve_s[2], resolved);
    if (out == NULL)
        return 0;
    /* the trace */
    mantra_dotnet_register();
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = "Microsoft-Windows-DotNETRuntime:0x18:5,Microsoft-DotNETCore-SampleProfiler:0:5";
    c.output = MANTRA_SESSION_OUTPUT_FILE;
    c.path = out;
    c.buffer_mode = MANTRA_BUFFER_BLOCK;
    c.buffer_mb = 64;
    mantra_session_id id;
    if (mantra_session_start(&id, &c) != MANTRA_OK) {
        fprintf(stderr, "symbolize_trace: cannot start a session writing %s\n", out);
        return 1;
    }
    static const mantra_guid zero = {0, 0, 0, {0}};
    mantra_DotNETRuntime_ModuleLoad_V2_write(1, 1, 0, 0, "/bench/Bench.dll", "", 0, &zero, 0, "", &zero, 0, "");
    for (uint32_t i = 0; i < methods; i++) {
        snprintf(name, sizeof name, "M%u", i);
        mantra_DotNETRuntime_MethodLoadVerbose_write(i + 1, 1, start_of(i), size_of(i), 0x06000001 + i, 0x8, "Bench.T", name,
                                                     "void  ()");
    }
    rng = 88172645463325252ull;
    uint64_t ips[DEPTH];
    int32_t type = 2; /* managed */
    double t0 = now();
    for (uint32_t k = 0; k < samples; k++) {
        stack_of(methods, ips);
        mantra_event_options o = {0};
        o.stack = ips;
        o.stack_depth = DEPTH;
        o.flags = MANTRA_EVENT_OPT_THREAD_ID;
        o.thread_id = 1000 + k % 4;
        mantra_event_write_bytes_ex(&mantra_SampleProfiler_events[0], &mantra_SampleProfiler_states[0], &type, sizeof type, &o);
    }
    mantra_session_stop(id);
    printf("trace: %s: %u samples of %d frames on 4 threads, %u methods, written in %.2f s\n", out, samples, DEPTH, methods,
           now() - t0);
    return 0;
}
