/* write_dotnet_trace OUTDIR: the project's generated writers (manifest/dotnet.yaml) -> listener ->
 * nettrace writer -> OUTDIR/dotnet.nettrace, then read back with the reader and the generated typed
 * decoders. CTest then hands the file to TraceEvent (tests/interop: TraceEvent decodes the .NET
 * runtime providers' events with its built-in CLR parsers, so this checks that our payload layouts
 * are the runtime's) and to `dotnet-trace convert`. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "dotnet_readers.h"
#include "dotnet_writers.h"
#include "mantra/nettrace_writer.h"
#include "mantra/reader.h"

static const char *g_outdir;
static mantra_nettrace_writer *g_w;
static uint64_t g_ts = 5000000;
static uint64_t g_tid = 7001;
static const uint64_t *g_stack;
static uint32_t g_frames;

static const mantra_provider_desc *provider_of(const mantra_event_desc *d) {
    for (size_t i = 0; i < MANTRA_DOTNET_PROVIDER_COUNT; i++) {
        const mantra_provider_desc *p = mantra_dotnet_providers[i];
        if (d >= p->events && d < p->events + p->event_count)
            return p;
    }
    return NULL;
}

/* The listener: every generated write becomes one trace event. */
static void to_trace(void *ctx, const mantra_event_desc *d, const uint8_t *payload, size_t size) {
    (void)ctx;
    const mantra_provider_desc *p = provider_of(d);
    ck_assert_ptr_nonnull(p);
    mantra_nettrace_event_key key;
    ck_assert_int_eq(mantra_nettrace_add_event(g_w, p, d, &key), 0);
    g_ts += 1000;
    mantra_nettrace_event ev = {.key = key, .timestamp = g_ts, .thread_id = g_tid, .processor_number = 0xFFFFFFFFu,
                                .stack = (d->flags & MANTRA_EVENT_STACK) ? g_stack : NULL,
                                .stack_frames = (d->flags & MANTRA_EVENT_STACK) ? g_frames : 0};
    ck_assert_msg(mantra_nettrace_write(g_w, &ev, payload, size) == 0, "%s", mantra_nettrace_last_error(g_w));
}

static const mantra_guid PDB = {0x12345678u, 0x9abc, 0xdef0, {1, 2, 3, 4, 5, 6, 7, 8}};

static void write_events(void) {
    static const uint64_t stack_a[] = {0x7f0012345678u, 0x7f0012340000u, 0x7f0012300000u};
    g_stack = stack_a;
    g_frames = 3;
    ck_assert_int_eq(mantra_EventPipe_ProcessInfo_write("app --flag Grüße", "Linux 6.1", "x64"), MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_DotNETRuntime_ModuleLoad_V2_write(0x7f0010000000u, 0x7f0020000000u, 0x8, 0,
                                                              "/opt/app/Hello.dll", "/opt/app/Hello.r2r.dll", 1, &PDB,
                                                              7, "/src/Hello.pdb", NULL, 0, ""),
                     MANTRA_WRITE_OK);
    for (uint32_t i = 0; i < 3; i++) {
        g_tid = 7001 + i % 2;
        ck_assert_int_eq(mantra_DotNETRuntime_MethodLoadVerbose_V2_write(
                             0x1000u + i, 0x7f0010000000u, 0x7f0030000000u + 0x100u * i, 0x80u + i,
                             0x06000001u + i, 0x8, "Hello.Program", i == 2 ? "Fïb" : "Main", "void ()", 1, 0),
                         MANTRA_WRITE_OK);
    }
    ck_assert_int_eq(mantra_DotNETRuntime_MethodLoad_V2_write(0x2000, 0x7f0010000000u, 0x7f0040000000u, 0x20,
                                                               0x06000009u, 0x8, 1, 0),
                     MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_DotNETRuntime_MethodJittingStarted_V1_write(0x3000, 0x7f0010000000u, 0x0600000au, 42,
                                                                         "NS", "Jitted", "int32 ()", 1),
                     MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_DotNETRuntime_R2RGetEntryPoint_write(0x4000, "NS", "Precompiled", "void ()",
                                                                 0x7f0050000000u, 1),
                     MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_DotNETRuntime_R2RGetEntryPointStart_write(0x4000, 1), MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_DotNETRuntime_R2RMethodLoad_write(0x4000, 0x7f0010000000u, 0x7f0050000000u, 0x40,
                                                              0x7f0060000000u, 0x180, 0x0600000bu, 0, 1),
                     MANTRA_WRITE_OK);
    static const uint8_t pgo[6] = {0x41, 0x00, 0x01, 0x10, 0x00, 0x00};
    ck_assert_int_eq(mantra_DotNETRuntime_JitInstrumentationData_write(1, 0, sizeof pgo, 0x3000, pgo), MANTRA_WRITE_OK);
    static const uint64_t stack_b[] = {0x7f0012345999u};
    g_stack = stack_b;
    g_frames = 1;
    ck_assert_int_eq(mantra_SampleProfiler_ThreadSample_write(2), MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_DotNETRuntimeRundown_MethodDCEndVerbose_V2_write(
                         0x1000, 0x7f0010000000u, 0x7f0030000000u, 0x80, 0x06000001u, 0x8, "Hello.Program", "Main",
                         "void ()", 1, 0),
                     MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_DotNETRuntimeRundown_ModuleDCEnd_V2_write(0x7f0010000000u, 0x7f0020000000u, 0x8, 0,
                                                                      "/opt/app/Hello.dll", "", 1, &PDB, 7, "", NULL, 0,
                                                                      ""),
                     MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_DotNETRuntimeRundown_DCEndComplete_V1_write(1), MANTRA_WRITE_OK);
}

#define N_EVENTS 15

START_TEST(write_and_read_back) {
    char path[4096];
    mkdir(g_outdir, 0755);
    snprintf(path, sizeof path, "%s/dotnet.nettrace", g_outdir);
    mantra_sink *sink;
    ck_assert_int_eq(mantra_sink_open_file(&sink, path), 0);
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = INT64_C(1764374400000); /* 2025-11-29T00:00:00Z */
    o.sync_time_ticks = 5000000;
    o.process_id = 4321;
    o.processor_count = 2;
    ck_assert_int_eq(mantra_nettrace_writer_new(&g_w, sink, &o), 0);
    ck_assert_int_eq(mantra_dotnet_register(), 0);
    mantra_set_listener(to_trace, NULL);
    write_events();
    mantra_set_listener(NULL, NULL);
    ck_assert_int_eq(mantra_nettrace_finish(g_w), 0);
    mantra_nettrace_writer_free(g_w);
    ck_assert_int_eq(mantra_sink_close(sink), 0);
    mantra_sink_free(sink);

    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(mantra_reader_open_file(r, path), 0);
    const mantra_trace_event *ev;
    int rc, n = 0, seen_mlv = 0, seen_r2r = 0;
    while ((rc = mantra_reader_next(r, &ev)) > 0) {
        n++;
        const mantra_trace_metadata *md = ev->metadata;
        if (strcmp(md->provider, "Microsoft-Windows-DotNETRuntime") == 0 && md->event_id == 143 && md->version == 2) {
            mantra_DotNETRuntime_MethodLoadVerbose_V2_fields f;
            ck_assert_int_eq(mantra_DotNETRuntime_MethodLoadVerbose_V2_decode(ev->payload, ev->payload_size, 8, &f),
                             MANTRA_DECODE_OK);
            ck_assert(f.MethodID == 0x1000u + (uint64_t)seen_mlv);
            ck_assert(mantra_str16_equals_utf8(f.MethodName, seen_mlv == 2 ? "Fïb" : "Main"));
            ck_assert_uint_eq(ev->thread_id, 7001u + (uint64_t)(seen_mlv % 2));
            ck_assert_uint_eq(ev->stack_count, 3);
            ck_assert(mantra_trace_event_ip(ev, 0) == 0x7f0012345678u);
            seen_mlv++;
        }
        if (md->event_id == 1000 && strcmp(md->provider, "Microsoft-Windows-DotNETRuntime") == 0) {
            mantra_DotNETRuntime_R2RMethodLoad_fields f;
            ck_assert_int_eq(mantra_DotNETRuntime_R2RMethodLoad_decode(ev->payload, ev->payload_size, 8, &f),
                             MANTRA_DECODE_OK);
            ck_assert(f.HotSize == 0x40 && f.ColdSize == 0x180 && f.ColdStartAddress == 0x7f0060000000u);
            seen_r2r++;
        }
    }
    ck_assert_msg(rc == 0, "%s", mantra_reader_last_error(r));
    ck_assert(mantra_reader_complete(r));
    ck_assert_int_eq(n, N_EVENTS);
    ck_assert_int_eq(seen_mlv, 3);
    ck_assert_int_eq(seen_r2r, 1);
    mantra_reader_free(r);
}
END_TEST

int main(int argc, char **argv) {
    g_outdir = argc > 1 ? argv[1] : "format";
    Suite *s = suite_create("dotnet_trace");
    TCase *t = tcase_create("write");
    tcase_add_test(t, write_and_read_back);
    suite_add_tcase(s, t);
    return run_suite(s, CK_NOFORK); /* the listener and writer are process globals */
}
