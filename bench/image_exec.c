/* image_exec - figures of precompiled images (mantra/image.h, docs/image-format.md).
 *
 *   image_exec [-p PROGRAM] [-r REPS] [-n METHODS] [-R RUNDOWN_METHODS] [-o DIR]
 *
 * 1. Execution: PROGRAM (default examples/programs/calc.masm) is run once with block probes
 *    (MANTRA_InterpPgo=2's, private counters) for its profile, precompiled from it, then its main
 *    runs from source (no probes) and from the image alternately, REPS times each (default 11):
 *    medians and the ratio image / source (goal: <= 1.0). Instructions dispatched by each (the
 *    interp-instructions counter): the image's extra ones are the `br`s the layout appends.
 * 2. Hot-code density, from the profile run's block counts: the share of executed instructions
 *    (block count x instructions in the block) in blocks laid in the hot section, and the hot
 *    section's share of all code (goal: >= 99% in a hot section under half the code).
 * 3. The per-method load step: an image of METHODS (default 10,000) one-instruction methods, all
 *    called once by main; its load and run without a session against with a file session taking
 *    the load events (R2RGetEntryPointStart, R2RGetEntryPoint V1, R2RMethodLoad): the difference
 *    per method (medians of 5).
 * 4. The rundown: an image of RUNDOWN_METHODS (default 100,000) methods; the NGen rundown of all of
 *    them (MethodDCEndVerbose + R2RMethodDCEnd each) into a file session (median of 5).
 * Traces go to DIR (default the working directory), removed at the end. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_program.h"
#include "bench_time.h"
#include "dotnet_registry.h"
#include "dotnet_stacks.h"
#include "mantra/image.h"
#include "mantra/interp.h"
#include "mantra/pump.h"
#include "mantra/session.h"

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

/* Assembles generated text (the load step's and the rundown's modules). */
static mantra_interp_module *assemble(const char *text, size_t size, const char *name) {
    mantra_interp_module *m = NULL;
    mantra_interp_diag d;
    if (mantra_interp_assemble(text, size, name, &m, &d) != 0) {
        fprintf(stderr, "image_exec: %s\n", d.text);
        exit(1);
    }
    return m;
}

/* Runs main on a new thread of p, its output dropped; seconds. */
static double run_main(const mantra_interp_program *p) {
    mantra_interp_thread_options o;
    mantra_interp_thread_options_init(&o);
    o.write = bench_discard;
    mantra_interp_thread *t = NULL;
    if (mantra_interp_thread_create(p, &o, &t) != 0)
        exit(1);
    double t0 = bench_now();
    if (mantra_interp_thread_run(t, "main", NULL, 0, NULL) != 0) {
        fprintf(stderr, "image_exec: main: %s\n", mantra_interp_thread_last_error(t));
        exit(1);
    }
    double dt = bench_now() - t0;
    mantra_interp_thread_free(t);
    return dt;
}

static int execution(const char *path, int reps) {
    mantra_interp_module *m = bench_assemble("image_exec", path);
    if (m == NULL)
        return 1;
    size_t n = mantra_interp_module_method_count(m);
    /* the profile run: block probes, private counters */
    mantra_interp_load_options lo;
    mantra_interp_load_options_init(&lo);
    lo.pgo_mode = 2;
    lo.allocator = mantra_interp_private_counters();
    mantra_interp_program *probed = NULL, *plain = NULL;
    if (mantra_interp_load(m, &lo, &probed) != 0)
        return 1;
    run_main(probed);
    lo.pgo_mode = 0;
    lo.allocator = NULL;
    if (mantra_interp_load(m, &lo, &plain) != 0)
        return 1;
    mantra_image_layout *lay = calloc(n, sizeof *lay);
    uint8_t **hot = calloc(n, sizeof *hot);
    uint32_t **counts = calloc(n, sizeof *counts);
    int64_t *nb = calloc(n, sizeof *nb);
    for (size_t i = 0; i < n; i++) {
        nb[i] = mantra_image_blocks(m, i, NULL, 0);
        counts[i] = malloc((size_t)nb[i] * sizeof **counts);
        hot[i] = malloc((size_t)nb[i]);
        mantra_interp_program_counts(probed, i, counts[i]); /* the probes are the blocks, in order */
        for (int64_t b = 0; b < nb[i]; b++) {
            hot[i][b] = counts[i][b] > 0;
            lay[i].weight += counts[i][b];
        }
        lay[i].block_hot = hot[i];
    }
    uint8_t *img = NULL;
    size_t img_size = 0;
    mantra_image *im = NULL;
    if (mantra_image_build(m, lay, &img, &img_size) != 0 ||
        mantra_image_open_memory(img, img_size, path, 0, &im, NULL) != 0) {
        fprintf(stderr, "image_exec: cannot build or open the image\n");
        return 1;
    }
    const mantra_interp_program *ip = mantra_image_program(im);
    /* instructions dispatched by one run of each */
    uint64_t i0 = mantra_interp_instructions_total();
    run_main(plain);
    uint64_t i1 = mantra_interp_instructions_total();
    run_main(ip);
    uint64_t i2 = mantra_interp_instructions_total();
    double *ts = malloc((size_t)reps * sizeof *ts), *ti = malloc((size_t)reps * sizeof *ti);
    for (int r = 0; r < reps; r++) {
        ts[r] = run_main(plain);
        ti[r] = run_main(ip);
    }
    double ms = median(ts, reps), mi = median(ti, reps);
    printf("execution of %s main, median of %d (alternating):\n", path, reps);
    printf("  from source  %10.3f ms   %" PRIu64 " instructions dispatched\n", ms * 1e3, i1 - i0);
    printf("  from image   %10.3f ms   %" PRIu64 " instructions dispatched (+%" PRIu64 " appended br)\n", mi * 1e3,
           i2 - i1, (i2 - i1) - (i1 - i0));
    printf("  ratio image / source: %.3f (goal <= 1.0)\n", mi / ms);
    /* density */
    uint64_t exec_hot = 0, exec_all = 0, hot_bytes = 0, all_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        mantra_image_method_info info;
        mantra_image_method(im, i, &info);
        int placed_cold = (info.flags & MANTRA_IMAGE_PLACED_COLD) != 0;
        if (!placed_cold)
            hot_bytes += info.hot_size;
        all_bytes += info.hot_size + info.cold_size;
        uint32_t *insns = malloc((size_t)nb[i] * sizeof *insns);
        mantra_image_block_insns(m, i, insns, (size_t)nb[i]);
        for (int64_t b = 0; b < nb[i]; b++) {
            uint64_t e = (uint64_t)counts[i][b] * insns[b];
            exec_all += e;
            if (!placed_cold && (b == 0 || hot[i][b]))
                exec_hot += e;
        }
        free(insns);
    }
    printf("hot-code density of %s (its own profile):\n", path);
    printf("  executed instructions in the hot section: %.2f%% (%" PRIu64 " of %" PRIu64 ")\n",
           exec_all ? 100.0 * (double)exec_hot / (double)exec_all : 0.0, exec_hot, exec_all);
    printf("  hot section: %" PRIu64 " of %" PRIu64 " code bytes, %.1f%% (goal: >= 99%% executed in under 50%%)\n",
           hot_bytes, all_bytes, all_bytes ? 100.0 * (double)hot_bytes / (double)all_bytes : 0.0);
    mantra_image_close(im);
    free(img);
    for (size_t i = 0; i < n; i++) {
        free(hot[i]);
        free(counts[i]);
    }
    free(hot);
    free(counts);
    free(nb);
    free(lay);
    free(ts);
    free(ti);
    mantra_interp_program_free(plain);
    mantra_interp_program_free(probed);
    mantra_interp_module_free(m);
    return 0;
}

static uint8_t *build_whole(mantra_interp_module *m, size_t *size) {
    size_t n = mantra_interp_module_method_count(m);
    mantra_image_layout *lay = calloc(n, sizeof *lay);
    for (size_t i = 0; i < n; i++)
        lay[i].whole_hot = 1;
    uint8_t *img = NULL;
    if (mantra_image_build(m, lay, &img, size) != 0)
        img = NULL;
    free(lay);
    return img;
}

static mantra_session_id start_file(const char *providers, const char *path) {
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = providers;
    c.output = MANTRA_SESSION_OUTPUT_FILE;
    c.path = path;
    mantra_session_id id = 0;
    if (mantra_session_start(&id, &c) != 0) {
        fprintf(stderr, "image_exec: session: %s\n", mantra_session_last_error());
        exit(1);
    }
    return id;
}

static int load_step(size_t n, const char *dir) {
    mantra_interp_module *m = NULL;
    size_t size = 0;
    size_t cap = 256 + n * 128, len = 0; /* a method (49 bytes) and its call (18) */
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, ".module Many 0a0b0c0d-1111-4222-8333-444455556666\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, ".method B.M%zu int64()\n ldc.i8 %zu\n ret\n.end\n", i, i);
    len += (size_t)snprintf(t + len, cap - len, ".method B.main void()\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, " call M%zu\n pop\n", i);
    len += (size_t)snprintf(t + len, cap - len, " ret\n.end\n");
    m = assemble(t, len, "many.masm");
    free(t);
    uint8_t *img = build_whole(m, &size);
    char path[1024];
    snprintf(path, sizeof path, "%s/image_exec_load.nettrace", dir);
    double off[5], on[5];
    for (int r = 0; r < 5; r++) {
        for (int with = 0; with < 2; with++) {
            mantra_session_id id = with ? start_file("Microsoft-Windows-DotNETRuntime:0x2000000028:5", path) : 0;
            double t0 = bench_now();
            mantra_image *im = NULL;
            if (mantra_image_open_memory(img, size, "many.img", 0, &im, NULL) != 0)
                return 1;
            run_main(mantra_image_program(im));
            mantra_image_close(im);
            double dt = bench_now() - t0;
            if (id)
                mantra_session_stop(id);
            (with ? on : off)[r] = dt;
        }
    }
    double a = median(off, 5), b = median(on, 5);
    printf("first call of %zu precompiled methods (load + run + unload, median of 5):\n", n);
    printf("  events disabled %8.3f ms, with the load events %8.3f ms: %.0f ns per method for its 3 events\n",
           a * 1e3, b * 1e3, (b - a) / (double)n * 1e9);
    remove(path);
    free(img);
    mantra_interp_module_free(m);
    return 0;
}

static void do_rundown(void *ctx, const mantra_session_info *info) {
    (void)info;
    int *methods = ctx;
    *methods = mantra_dotnet_stacks_rundown_ex(MANTRA_RUNDOWN_AT_STOP, 0x128);
}

static int rundown(size_t n, const char *dir) {
    size_t cap = 256 + n * 64, len = 0; /* ".method B.M99999 int64()" and its body: 49 bytes */
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, ".module Lots 0a0b0c0d-1111-4222-8333-444455557777\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, ".method B.M%zu int64()\n ldc.i8 %zu\n ret\n.end\n", i, i);
    mantra_interp_module *m = assemble(t, len, "lots.masm");
    free(t);
    size_t size = 0;
    uint8_t *img = build_whole(m, &size);
    mantra_image *im = NULL;
    if (img == NULL || mantra_image_open_memory(img, size, "lots.img", 0, &im, NULL) != 0)
        return 1;
    char path[1024];
    snprintf(path, sizeof path, "%s/image_exec_rundown.nettrace", dir);
    double v[5];
    int methods = 0;
    for (int r = 0; r < 5; r++) {
        mantra_session_id id = start_file("Microsoft-Windows-DotNETRuntimeRundown:0x128:5", path);
        double t0 = bench_now();
        mantra_session_run_exclusive(id, do_rundown, &methods);
        v[r] = bench_now() - t0;
        mantra_session_stop(id);
    }
    double d = median(v, 5);
    printf("NGen rundown of %d precompiled methods (MethodDCEndVerbose + R2RMethodDCEnd each, median of 5):\n",
           methods);
    printf("  %.1f ms, %.0f ns per method\n", d * 1e3, d / (double)(methods ? methods : 1) * 1e9);
    remove(path);
    mantra_image_close(im);
    free(img);
    mantra_interp_module_free(m);
    return 0;
}

int main(int argc, char **argv) {
    const char *program = "examples/programs/calc.masm", *dir = ".";
    int reps = 11;
    size_t methods = 10000, rundown_methods = 100000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-p") == 0)
            program = argv[i + 1];
        else if (strcmp(argv[i], "-r") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-n") == 0)
            methods = (size_t)strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-R") == 0)
            rundown_methods = (size_t)strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-o") == 0)
            dir = argv[i + 1];
    }
    if (reps < 1)
        reps = 1;
    if (mantra_dotnet_stacks_init(0) != 0 && !mantra_threadless())
        return 1;
    mantra_interp_sampler_stop();
    if (mantra_dotnet_images_init() != 0)
        return 1;
    int rc = execution(program, reps);
    if (rc == 0)
        rc = load_step(methods, dir);
    if (rc == 0)
        rc = rundown(rundown_methods, dir);
    mantra_dotnet_images_fini();
    mantra_dotnet_stacks_fini();
    return rc;
}
