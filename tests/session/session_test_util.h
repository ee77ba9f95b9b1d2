/* Shared helpers of the session tests: a per-test output folder, starting file sessions, reading a
 * trace back with the reader, and waiting for writer threads while pumping the job queue (the
 * threadless build has no drain thread). */
#ifndef SESSION_TEST_UTIL_H
#define SESSION_TEST_UTIL_H

#include <stdatomic.h>
#include <stdint.h>

#include "mantra/reader.h"
#include "mantra/session.h"

/* Output folder $MANTRA_BINARY_DIR/<sub> (created). */
void st_init_dir(const char *sub);
/* <folder>/<name>; the last 8 results stay valid. */
const char *st_path(const char *name);

/* A FILE session config with a short flush interval; cap_bytes 0 = default cap. */
void st_config_file(mantra_session_config *c, const char *providers, const char *path, uint64_t cap_bytes);
/* Starts it; fails the test with the session error otherwise. */
mantra_session_id st_start(const mantra_session_config *c);
mantra_session_id st_start_file(const char *providers, const char *path, uint64_t cap_bytes);

typedef struct readback {
    uint64_t events;       /* all but ProcessInfo */
    uint64_t process_info;
    uint64_t dropped;      /* the reader's count from sequence gaps */
    uint64_t by_id[512];   /* by event id, all providers but the EventPipe one */
    uint64_t demo[8];      /* Mantra-Demo by event id */
    uint64_t rundown;      /* events of the rundown provider */
    uint64_t sequence_points;
    int complete;
} readback;
typedef void (*st_event_fn)(void *ctx, const mantra_trace_event *ev);
/* Reads the whole trace (it must read without error); fn (may be NULL) sees every event. */
void st_read_trace(const char *path, readback *rb, st_event_fn fn, void *ctx);

/* Until *running is 0: mantra_pump() (threadless) or a short sleep. */
void st_wait_pumping(atomic_int *running);

#endif
