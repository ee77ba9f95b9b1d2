#define _POSIX_C_SOURCE 200809L

#include "reader_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/run_tool.h"

char *fixture_path(const char *rel, int *must_fail) {
    const char *shared = run_tool_env("MANTRA_SHARED_DIR", "../shared");
    char *dir = run_tool_path(shared, "fixtures/nettrace");
    char *p = run_tool_path(dir, rel);
    free(dir);
    *must_fail = 0;
    if (access(p, R_OK) == 0)
        return p;
    const char *req = getenv("MANTRA_REQUIRE_INTEROP");
    *must_fail = req != NULL && strcmp(req, "1") == 0;
    printf("SKIP: fixture %s not found%s\n", p, *must_fail ? " (MANTRA_REQUIRE_INTEROP=1: failing)" : "");
    fflush(stdout);
    free(p);
    return NULL;
}

void run_memory(const uint8_t *data, size_t size, unsigned flags, trace_run *out) {
    memset(out, 0, sizeof *out);
    mantra_reader_options o = {flags, 0};
    mantra_reader *r = mantra_reader_new(&o);
    if (r == NULL) {
        out->rc = MANTRA_ENOMEM;
        return;
    }
    int rc = mantra_reader_open_memory(r, data, size);
    if (rc >= 0) {
        const mantra_trace_event *ev;
        while ((rc = mantra_reader_next(r, &ev)) > 0) {
            out->events++;
            /* touch everything the event points to (ASan checks the bounds) */
            volatile uint8_t sink = 0;
            for (size_t i = 0; i < ev->payload_size; i++)
                sink ^= ev->payload[i];
            for (size_t i = 0; i < ev->stack_count; i++)
                sink ^= (uint8_t)mantra_trace_event_ip(ev, i);
            (void)sink;
            mantra_decode_event(ev, NULL, NULL);
        }
    }
    out->rc = rc;
    out->complete = mantra_reader_complete(r);
    out->stats = *mantra_reader_get_stats(r);
    out->last_bytes = out->stats.bytes_read;
    out->format_version = mantra_reader_info(r)->format_version;
    snprintf(out->error, sizeof out->error, "%s", mantra_reader_last_error(r));
    mantra_reader_free(r);
}
