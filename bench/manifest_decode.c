/* manifest_decode - decoding throughput: manifest-driven (a manifest loaded at run time,
 * mantra_reader_add_manifest + mantra_decode_event) against the generated typed decoders
 * (mantra_DotNETRuntime_*_decode) on the same synthetic trace.
 *
 *     manifest_decode [-m MANIFEST.yaml] [-n EVENTS] [-r RUNS]
 *
 * The payloads come from the generated writers of manifest/dotnet.yaml (MethodLoadVerbose_V2 and
 * ModuleLoad_V2, caught with mantra_set_listener); the trace (nettrace_writer.h, in memory) gives
 * them the runtime's minimal metadata (no fields), as a real .NET trace does. Each run reads the
 * whole trace and decodes every field (values summed so nothing is optimised away); the best of
 * RUNS is reported, then `summary:` lines with the ratio. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dotnet_readers.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/manifest.h"
#include "mantra/nettrace_writer.h"
#include "mantra/reader.h"
#include "mantra/sink.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct caught {
    uint8_t *buf;
    size_t len, cap;
    uint32_t id, version;
} caught;

static caught g_last;

static void listener(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    (void)ctx;
    if (size > g_last.cap) {
        g_last.buf = realloc(g_last.buf, size);
        g_last.cap = size;
    }
    memcpy(g_last.buf, payload, size);
    g_last.len = size;
    g_last.id = desc->id;
    g_last.version = desc->version;
}

/* V5 metadata blob from EventId on with no fields. */
static size_t minimal_blob(uint8_t *b, uint32_t id, uint32_t version) {
    size_t n = 0;
    uint64_t kw = 0;
    uint32_t level = 4, zero = 0;
    memcpy(b + n, &id, 4), n += 4;
    b[n++] = 0, b[n++] = 0;
    memcpy(b + n, &kw, 8), n += 8;
    memcpy(b + n, &version, 4), n += 4;
    memcpy(b + n, &level, 4), n += 4;
    memcpy(b + n, &zero, 4), n += 4;
    return n;
}

static uint64_t g_sum;

static int v_scalar(void *ctx, const mantra_value *v) {
    (void)ctx;
    g_sum += v->u + v->size;
    return 0;
}

static const mantra_field_visitor visitor = {v_scalar, NULL, NULL, NULL, NULL};

static uint64_t sum_str(mantra_str16 s) { return s.units; }

int main(int argc, char **argv) {
    const char *path = "manifest/dotnet.yaml";
    long n = 200000, runs = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-m") == 0)
            path = argv[i + 1];
        else if (strcmp(argv[i], "-n") == 0)
            n = (long)atof(argv[i + 1]);
        else if (strcmp(argv[i], "-r") == 0)
            runs = atol(argv[i + 1]);
    }
    mantra_manifest_error *err = NULL;
    mantra_manifest *m = mantra_manifest_load_file(path, &err);
    if (m == NULL) {
        char buf[512] = "libmantra without libyaml";
        if (err)
            mantra_manifest_error_format(err, buf, sizeof buf);
        fprintf(stderr, "manifest_decode: %s\n", buf);
        mantra_manifest_error_free(err);
        return 1;
    }

    /* the trace */
    mantra_register_provider(&mantra_DotNETRuntime_provider);
    mantra_set_listener(listener, NULL);
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.pointer_size = 8;
    if (mantra_sink_open_memory(&sink, 0) != 0 || mantra_nettrace_writer_new(&w, sink, &o) != 0)
        return 1;
    uint8_t b[64];
    mantra_nettrace_event_key k_method, k_module;
    mantra_nettrace_add_event_raw(w, "Microsoft-Windows-DotNETRuntime", b, minimal_blob(b, 143, 2), &k_method);
    mantra_nettrace_add_event_raw(w, "Microsoft-Windows-DotNETRuntime", b, minimal_blob(b, 152, 2), &k_module);
    mantra_nettrace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.thread_id = 1;
    for (long i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "Method%ld", i);
        if (i % 8 == 7) {
            mantra_DotNETRuntime_ModuleLoad_V2_write((uint64_t)i, 1, 0, 0, "C:\\\\app\\\\Lib.dll", "C:\\\\app\\\\Lib.ni.dll", 8,
                                                     NULL, 0, NULL, NULL, 0, NULL);
            ev.key = k_module;
        } else {
            mantra_DotNETRuntime_MethodLoadVerbose_V2_write(0x7f0000000000u + (uint64_t)i, 0x7f0000100000u,
                                                            0x7f0000200000u + (uint64_t)i * 64, 64, 0x06000000u + (uint32_t)i,
                                                            0x88, "Demo.Namespace", name, "void (int32)", 8, 0);
            ev.key = k_method;
        }
        ev.timestamp = (uint64_t)i;
        mantra_nettrace_write(w, &ev, g_last.buf, g_last.len);
    }
    mantra_nettrace_finish(w);
    mantra_set_listener(NULL, NULL);
    size_t len;
    const uint8_t *data = mantra_sink_memory(sink, &len);

    double best_manifest = 1e30, best_typed = 1e30, best_headers = 1e30;
    uint64_t check_manifest = 0, check_typed = 0;
    for (long run = 0; run < runs; run++) {
        /* headers only (the reader's own cost) */
        double t0 = now_s();
        mantra_reader *r = mantra_reader_new(NULL);
        mantra_reader_open_memory(r, data, len);
        const mantra_trace_event *e;
        uint64_t cnt = 0;
        while (mantra_reader_next(r, &e) > 0)
            cnt += e->payload_size;
        mantra_reader_free(r);
        double t = now_s() - t0;
        if (t < best_headers)
            best_headers = t;

        /* manifest-driven */
        t0 = now_s();
        r = mantra_reader_new(NULL);
        mantra_reader_add_manifest(r, m);
        mantra_reader_open_memory(r, data, len);
        g_sum = 0;
        while (mantra_reader_next(r, &e) > 0)
            mantra_decode_event(e, &visitor, NULL);
        check_manifest = g_sum;
        mantra_reader_free(r);
        t = now_s() - t0;
        if (t < best_manifest)
            best_manifest = t;

        /* generated typed decoders */
        t0 = now_s();
        r = mantra_reader_new(NULL);
        mantra_reader_open_memory(r, data, len);
        uint64_t sum = 0;
        while (mantra_reader_next(r, &e) > 0) {
            if (e->metadata->event_id == 143) {
                mantra_DotNETRuntime_MethodLoadVerbose_V2_fields f;
                if (mantra_DotNETRuntime_MethodLoadVerbose_V2_decode(e->payload, e->payload_size, 8, &f) >= 0)
                    sum += f.MethodID + f.ModuleID + f.MethodStartAddress + f.MethodSize + f.MethodToken +
                           f.MethodFlags + sum_str(f.MethodNamespace) + sum_str(f.MethodName) +
                           sum_str(f.MethodSignature) + f.ClrInstanceID + f.ReJITID;
            } else {
                mantra_DotNETRuntime_ModuleLoad_V2_fields f;
                if (mantra_DotNETRuntime_ModuleLoad_V2_decode(e->payload, e->payload_size, 8, &f) >= 0)
                    sum += f.ModuleID + f.AssemblyID + f.ModuleFlags + sum_str(f.ModuleILPath) +
                           sum_str(f.ModuleNativePath) + f.ClrInstanceID;
            }
        }
        check_typed = sum;
        mantra_reader_free(r);
        t = now_s() - t0;
        if (t < best_typed)
            best_typed = t;
        (void)cnt;
    }
    double mb = (double)len / 1e6;
    printf("trace: %ld events, %.1f MB; checksums manifest %" PRIu64 ", typed %" PRIu64 "\n", n, mb, check_manifest,
           check_typed);
    printf("summary: manifest_decode headers only: %.1f Mevents/s (%.0f MB/s)\n", (double)n / best_headers / 1e6,
           mb / best_headers);
    printf("summary: manifest_decode manifest-driven: %.2f Mevents/s (%.0f MB/s)\n", (double)n / best_manifest / 1e6,
           mb / best_manifest);
    printf("summary: manifest_decode generated typed: %.2f Mevents/s (%.0f MB/s)\n", (double)n / best_typed / 1e6,
           mb / best_typed);
    printf("summary: manifest_decode ratio typed/manifest-driven time: %.2f (manifest-driven is %.2fx the time of "
           "typed)\n",
           best_typed / best_manifest, best_manifest / best_typed);
    mantra_nettrace_writer_free(w);
    mantra_sink_free(sink);
    mantra_manifest_free(m);
    free(g_last.buf);
    return 0;
}
