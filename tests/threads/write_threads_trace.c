/* A trace written by 4 threads through a real file session, for the interop checks of
 * tests/threads/CMakeLists.txt (check_threads_trace.py against TraceEvent and `mantra dump`).
 *
 *   write_threads_trace OUTDIR [EVENTS_PER_THREAD]
 *
 * writes OUTDIR/threads.nettrace (session "Mantra-Demo:0xF:5", a sequence point every MB of
 * output, a flush every 10 ms: many EventBlocks and several sequence points),
 * OUTDIR/threads.expected.jsonl (one line per event the writers wrote, in each thread's write
 * order: writer, OS thread id, attempt number, event id, name, the fields the trace's metadata
 * describes and all the fields of the manifest's template, in the conventions of
 * docs/dump-json.md) and OUTDIR/threads.meta.json (the session's
 * counters, the thread ids, the least number of sequence points the trace must hold). The main
 * thread pumps the job queue while the writers run (the threadless build has no drain thread). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/pump.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "threads/demo_events.h"

#define NWRITERS 4

static const char *g_out = ".";
static uint64_t g_per_thread = 16000;

typedef struct writer_state {
    pthread_t th;
    uint32_t w;
    uint64_t tid;
    uint64_t ok, other; /* read after join */
    int last_rc;
} writer_state;

static writer_state g_w[NWRITERS];
static _Atomic int g_done;
static _Atomic int g_go;

static void *writer_main(void *arg) {
    writer_state *ws = arg;
    ws->tid = mantra_pal_thread_id();
    while (!atomic_load(&g_go)) /* all threads start together: their events interleave */
        mantra_pal_yield();
    demo_event e;
    for (uint64_t i = 0; i < g_per_thread; i++) {
        demo_make(&e, ws->w, i);
        int rc = demo_write(&e);
        if (rc == MANTRA_WRITE_OK) {
            ws->ok++;
        } else {
            ws->other++;
            ws->last_rc = rc;
        }
    }
    atomic_fetch_add(&g_done, 1);
    return NULL;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

START_TEST(write_trace) {
    char path[1024], exp_path[1024], meta_path[1024];
    snprintf(path, sizeof path, "%s/threads.nettrace", g_out);
    snprintf(exp_path, sizeof exp_path, "%s/threads.expected.jsonl", g_out);
    snprintf(meta_path, sizeof meta_path, "%s/threads.meta.json", g_out);

    mantra_session_config cfg;
    mantra_session_config_init(&cfg);
    cfg.providers = "Mantra-Demo:0xF:5";
    cfg.output = MANTRA_SESSION_OUTPUT_FILE;
    cfg.path = path;
    cfg.sequence_point_mb = 1;
    cfg.flush_interval_ms = 10;
    cfg.buffer_mb = 256; /* far more than the trace: nothing may be dropped */
    mantra_session_id id;
    ck_assert_msg(mantra_session_start(&id, &cfg) == 0, "%s", mantra_session_last_error());

    atomic_store(&g_done, 0);
    atomic_store(&g_go, 0);
    for (uint32_t w = 0; w < NWRITERS; w++) {
        g_w[w].w = w;
        ck_assert_int_eq(pthread_create(&g_w[w].th, NULL, writer_main, &g_w[w]), 0);
    }
    atomic_store(&g_go, 1);
    while (atomic_load(&g_done) < NWRITERS) {
        mantra_pump();
        sleep_ms(1);
    }
    for (uint32_t w = 0; w < NWRITERS; w++)
        pthread_join(g_w[w].th, NULL);
    mantra_pump();

    mantra_session_stats st;
    ck_assert_msg(mantra_session_stop_stats(id, &st) == 0, "%s", mantra_session_last_error());
    for (uint32_t w = 0; w < NWRITERS; w++)
        ck_assert_msg(g_w[w].ok == g_per_thread, "writer %u: %llu of %llu written, last status %d", w,
                      (unsigned long long)g_w[w].ok, (unsigned long long)g_per_thread, g_w[w].last_rc);
    uint64_t total = NWRITERS * g_per_thread;
    ck_assert_uint_eq(st.attempted, total + 1); /* + ProcessInfo */
    ck_assert_uint_eq(st.written, total + 1);
    ck_assert_uint_eq(st.dropped, 0);
    ck_assert_uint_eq(st.threads, NWRITERS + 1);
    ck_assert_uint_eq(st.files, 1);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_uint_eq(st.bytes, (uint64_t)sb.st_size);

    FILE *f = fopen(exp_path, "w");
    ck_assert_ptr_nonnull(f);
    demo_event e;
    for (uint32_t w = 0; w < NWRITERS; w++) {
        for (uint64_t i = 0; i < g_per_thread; i++) {
            demo_make(&e, w, i);
            /* attempt: the thread's (i+1)th write into the session (its sequence numbers count attempts) */
            fprintf(f, "{\"writer\":%u,\"thread_id\":%llu,\"attempt\":%llu,\"provider\":\"%s\",\"event_id\":%u,"
                       "\"version\":0,\"name\":\"%s\",\"fields\":{",
                    (unsigned)w, (unsigned long long)g_w[w].tid, (unsigned long long)(i + 1), DEMO_PROVIDER,
                    (unsigned)e.id, demo_name(e.id));
            demo_json_fields(&e, f);
            fputs("},\"all_fields\":{", f);
            demo_json_all_fields(&e, f);
            fputs("}}\n", f);
        }
    }
    ck_assert_int_eq(fclose(f), 0);

    f = fopen(meta_path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"events\":%llu,\"dropped\":0,\"process_info_thread\":%llu,\"bytes\":%llu,"
               "\"min_sequence_points\":%llu,\"threads\":[",
            (unsigned long long)total, (unsigned long long)mantra_pal_thread_id(), (unsigned long long)st.bytes,
            (unsigned long long)(st.bytes >> 20));
    for (uint32_t w = 0; w < NWRITERS; w++)
        fprintf(f, "%s%llu", w ? "," : "", (unsigned long long)g_w[w].tid);
    fputs("]}\n", f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_msg(st.bytes >= (UINT64_C(3) << 20), "trace of %llu bytes: too small for several sequence points",
                  (unsigned long long)st.bytes);
}
END_TEST

int main(int argc, char **argv) {
    if (argc > 1)
        g_out = argv[1];
    if (argc > 2)
        g_per_thread = strtoull(argv[2], NULL, 10);
    mkdir(g_out, 0777);
    if (mantra_dotnet_register() != 0) {
        fprintf(stderr, "mantra_dotnet_register failed\n");
        return 1;
    }
    Suite *s = suite_create("threads_trace");
    TCase *tc = tcase_create("write");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, write_trace);
    suite_add_tcase(s, tc);
    return run_suite(s, CK_NOFORK);
}
