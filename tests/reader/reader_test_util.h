/* Helpers of the reader tests: fixture lookup with SKIP handling, whole-trace runs. */
#ifndef MANTRA_TESTS_READER_UTIL_H
#define MANTRA_TESTS_READER_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "mantra/reader.h"

/* Path of $MANTRA_SHARED_DIR/fixtures/nettrace/REL (malloc'ed), or NULL when the file is absent:
 * then a "SKIP" line has been printed, and *must_fail is set when MANTRA_REQUIRE_INTEROP=1. */
char *fixture_path(const char *rel, int *must_fail);

/* The result of reading a whole trace. */
typedef struct trace_run {
    int rc;                 /* last mantra_reader_next / open status */
    int complete;
    uint64_t events;
    uint64_t last_bytes;    /* bytes_read */
    char error[512];
    mantra_reader_stats stats;
    int format_version;
} trace_run;

/* Reads data[0..size) to its end (flags: MANTRA_READER_*). */
void run_memory(const uint8_t *data, size_t size, unsigned flags, trace_run *out);

#endif
