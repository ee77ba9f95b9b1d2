/* Shared helpers of the session tests (session_test_util.h). */
#define _POSIX_C_SOURCE 200809L
#include "session_test_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mantra/pump.h"

static char g_dir[512];

void st_init_dir(const char *sub) {
    const char *bin = getenv("MANTRA_BINARY_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/%s", bin ? bin : ".", sub);
    mkdir(g_dir, 0777);
}

const char *st_path(const char *name) {
    static char p[8][640];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", g_dir, name);
    return p[k];
}

void st_config_file(mantra_session_config *c, const char *providers, const char *path, uint64_t cap_bytes) {
    mantra_session_config_init(c);
    c->providers = providers;
    c->output = MANTRA_SESSION_OUTPUT_FILE;
    c->path = path;
    c->buffer_bytes = cap_bytes;
    c->flush_interval_ms = 20;
}

mantra_session_id st_start(const mantra_session_config *c) {
    mantra_session_id id;
    ck_assert_msg(mantra_session_start(&id, c) == 0, "%s", mantra_session_last_error());
    return id;
}

mantra_session_id st_start_file(const char *providers, const char *path, uint64_t cap_bytes) {
    mantra_session_config c;
    st_config_file(&c, providers, path, cap_bytes);
    return st_start(&c);
}

void st_read_trace(const char *path, readback *rb, st_event_fn fn, void *ctx) {
    memset(rb, 0, sizeof *rb);
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_msg(mantra_reader_open_file(r, path) == 0, "%s: %s", path, mantra_reader_last_error(r));
    const mantra_trace_event *ev;
    int rc;
    while ((rc = mantra_reader_next(r, &ev)) == 1) {
        const char *prov = ev->metadata->provider;
        uint32_t id = ev->metadata->event_id;
        if (fn)
            fn(ctx, ev);
        if (strcmp(prov, "Microsoft-DotNETCore-EventPipe") == 0 && id == 1) {
            rb->process_info++;
            continue;
        }
        rb->events++;
        if (id < 512)
            rb->by_id[id]++;
        if (strcmp(prov, "Mantra-Demo") == 0 && id < 8)
            rb->demo[id]++;
        if (strcmp(prov, MANTRA_RUNDOWN_PROVIDER) == 0)
            rb->rundown++;
    }
    ck_assert_msg(rc == 0, "%s: %s", path, mantra_reader_last_error(r));
    rb->complete = mantra_reader_complete(r);
    rb->dropped = mantra_reader_get_stats(r)->dropped;
    rb->sequence_points = mantra_reader_get_stats(r)->sequence_points;
    mantra_reader_free(r);
}

void st_wait_pumping(atomic_int *running) {
    struct timespec ts = {0, 1000000};
    while (atomic_load(running) > 0) {
        if (mantra_threadless())
            mantra_pump();
        nanosleep(&ts, NULL);
    }
}
