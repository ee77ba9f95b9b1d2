/* Two writer threads stepping in lockstep (every other event from the other thread) into a file
 * session: the drain writes them in per-thread runs (src/session/drain.c, drain_runs), so the row
 * headers stay compressed (thread id, sequence and capture thread are not repeated) and only the
 * rows no later row is older than are IsSorted; TraceEvent's merge (the reader's sorted mode, as
 * microsoft/perfview src/TraceEvent/EventPipe/EventCache.cs) still delivers them in time order.
 *
 *   test_interleaved_runs OUTDIR [EVENTS_PER_THREAD]   (OUTDIR/interleaved.nettrace)
 *
 * The session is only drained at its stop (flush interval of a minute, a cap far above the trace,
 * no buffer pool: MANTRA_SESSION_POOL_MB=0 in CMakeLists.txt, so nothing wakes the drain early).
 * The writers encode their rows in chunks of at most 16 KiB (src/session/session-internal.h, "row
 * chunks"); the drain writes each chunk as a run whose first row is IsSorted and the others not, as
 * EventPipe marks a run's first row (dotnet/runtime, src/native/eventpipe/ep-buffer-manager.c). The
 * test checks that a thread switch only comes on an IsSorted row, that IsSorted is true (no later
 * row is older), that the runs are long (thread id, sequence and capture thread are not repeated)
 * and that the reader's sorted mode (TraceEvent's merge) gives time order back. Before the runs
 * (the drain switching thread wherever time order does), every event was its own run: 39999
 * switches, each row repeating thread id, sequence delta, capture thread and processor (about 12
 * more bytes per event). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/reader.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"

static const char *g_out = ".";
static uint32_t g_per_thread = 20000;
static _Atomic uint32_t g_turn; /* which writer writes next */

typedef struct stepper {
    pthread_t th;
    uint32_t k;
    uint64_t tid;
    uint32_t ok;
} stepper;

static void *step_main(void *arg) {
    stepper *st = arg;
    st->tid = mantra_pal_thread_id();
    for (uint32_t i = 0; i < g_per_thread; i++) {
        while (atomic_load(&g_turn) != st->k)
            mantra_pal_yield();
        if (mantra_Demo_Tick_write(st->k, i) == MANTRA_WRITE_OK)
            st->ok++;
        atomic_store(&g_turn, 1u - st->k);
    }
    return NULL;
}

/* What the file holds, in file order and in the reader's sorted (TraceEvent) order. */
typedef struct shape {
    uint32_t ticks, switches, sorted_rows, gap_rows, out_of_order;
    uint32_t next_index[2];
    int64_t *ts[2]; /* each thread's timestamps in the order read */
    uint8_t *sorted[2];
    uint8_t *who; /* the writer of the n-th row read */
} shape;

static void read_shape(const char *path, unsigned flags, const stepper *s, shape *out) {
    memset(out, 0, sizeof *out);
    for (int k = 0; k < 2; k++) {
        out->ts[k] = calloc(g_per_thread, sizeof *out->ts[k]);
        out->sorted[k] = calloc(g_per_thread, 1);
        ck_assert(out->ts[k] && out->sorted[k]);
    }
    out->who = calloc(2u * g_per_thread, 1);
    ck_assert_ptr_nonnull(out->who);
    mantra_reader_options o = {flags, 0};
    mantra_reader *r = mantra_reader_new(&o);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(mantra_reader_open_file(r, path), 0);
    const mantra_trace_event *ev;
    uint64_t prev_tid = 0;
    int64_t prev_ts = 0;
    uint32_t prev_seq[2] = {1, 1}; /* the threads' sequence numbers start at 2 (ProcessInfo's thread at 1) */
    while (mantra_reader_next(r, &ev) == 1) {
        if (ev->capture_thread_id != s[0].tid && ev->capture_thread_id != s[1].tid)
            continue; /* ProcessInfo, from the stopping thread */
        uint32_t k = ev->capture_thread_id == s[1].tid;
        ck_assert_uint_eq(ev->capture_thread_id, s[k].tid);
        ck_assert_uint_lt(out->ticks, 2u * g_per_thread);
        out->who[out->ticks] = (uint8_t)k;
        out->ticks++;
        out->sorted_rows += ev->is_sorted != 0;
        if (out->ticks > 1 && ev->capture_thread_id != prev_tid) {
            out->switches++;
            /* TraceEvent changes its current thread only on an IsSorted row */
            if (!(flags & MANTRA_READER_SORTED))
                ck_assert_msg(ev->is_sorted, "thread switch on a row not IsSorted (row %u)", out->ticks);
        }
        if (ev->sequence != prev_seq[k] + 1u)
            out->gap_rows++;
        prev_seq[k] = ev->sequence;
        if (out->ticks > 1 && ev->timestamp < prev_ts)
            out->out_of_order++;
        /* Index is the payload's second field: each thread's events in its write order */
        uint64_t index;
        ck_assert_uint_eq(ev->payload_size, 12);
        memcpy(&index, ev->payload + 4, 8);
        ck_assert_uint_eq(index, out->next_index[k]);
        out->ts[k][index] = ev->timestamp;
        out->sorted[k][index] = ev->is_sorted != 0;
        out->next_index[k]++;
        prev_tid = ev->capture_thread_id;
        prev_ts = ev->timestamp;
    }
    ck_assert_msg(mantra_reader_complete(r), "%s", mantra_reader_last_error(r));
    mantra_reader_free(r);
}

START_TEST(lockstep_runs) {
    char path[1024];
    snprintf(path, sizeof path, "%s/interleaved.nettrace", g_out);
    mantra_session_config cfg;
    mantra_session_config_init(&cfg);
    cfg.providers = "Mantra-Demo:0x1:5";
    cfg.output = MANTRA_SESSION_OUTPUT_FILE;
    cfg.path = path;
    cfg.flush_interval_ms = 60000; /* drained at the stop only */
    cfg.buffer_mb = 64;
    mantra_session_id id;
    ck_assert_msg(mantra_session_start(&id, &cfg) == 0, "%s", mantra_session_last_error());
    stepper s[2];
    memset(s, 0, sizeof s);
    atomic_store(&g_turn, 0);
    for (uint32_t k = 0; k < 2; k++) {
        s[k].k = k;
        ck_assert_int_eq(pthread_create(&s[k].th, NULL, step_main, &s[k]), 0);
    }
    for (uint32_t k = 0; k < 2; k++)
        pthread_join(s[k].th, NULL);
    mantra_session_stats st;
    ck_assert_msg(mantra_session_stop_stats(id, &st) == 0, "%s", mantra_session_last_error());
    ck_assert_uint_eq(s[0].ok, g_per_thread);
    ck_assert_uint_eq(s[1].ok, g_per_thread);
    ck_assert_uint_eq(st.dropped, 0);
    ck_assert_uint_eq(st.written, 2u * g_per_thread + 1u);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_uint_eq(st.bytes, (uint64_t)sb.st_size);

    /* TraceEvent's order: the writers alternated, so every event switches thread */
    shape sorted;
    read_shape(path, MANTRA_READER_SORTED, s, &sorted);
    ck_assert_uint_eq(sorted.ticks, 2u * g_per_thread);
    ck_assert_uint_eq(sorted.out_of_order, 0);
    ck_assert_uint_eq(sorted.switches, 2u * g_per_thread - 1u);

    /* File order: runs of a buffer's events */
    shape file;
    read_shape(path, 0, s, &file);
    ck_assert_uint_eq(file.ticks, 2u * g_per_thread);
    ck_assert_uint_eq(file.gap_rows, 0);
    /* IsSorted true: a row marked so is not newer than any row after it in the file (in file
     * order each writer's events follow its write order); every chunk's first row is marked. */
    uint32_t at[2] = {0, 0}, wrong = 0, total = 2u * g_per_thread;
    int64_t *row_ts = malloc(total * sizeof *row_ts);
    uint8_t *row_sorted = malloc(total);
    ck_assert_ptr_nonnull(row_ts);
    ck_assert_ptr_nonnull(row_sorted);
    for (uint32_t n = 0; n < total; n++) {
        uint32_t k = file.who[n], i = at[k]++;
        row_ts[n] = file.ts[k][i];
        row_sorted[n] = file.sorted[k][i];
    }
    int64_t later_min = INT64_MAX;
    for (uint32_t n = total; n-- > 0;) {
        wrong += row_sorted[n] && row_ts[n] > later_min;
        if (row_ts[n] < later_min)
            later_min = row_ts[n];
    }
    free(row_ts);
    free(row_sorted);
    ck_assert_uint_eq(wrong, 0);
    printf("interleaved: %u events per thread, %u thread switches in file order, %u IsSorted rows, %llu bytes "
           "(%.3f per event)\n",
           g_per_thread, file.switches, file.sorted_rows, (unsigned long long)st.bytes,
           (double)st.bytes / (2.0 * g_per_thread));
    /* the writers' pace: events per millisecond of trace time (timestamps in ns) */
    int64_t first = file.ts[0][0] < file.ts[1][0] ? file.ts[0][0] : file.ts[1][0];
    int64_t end = file.ts[0][g_per_thread - 1] > file.ts[1][g_per_thread - 1] ? file.ts[0][g_per_thread - 1]
                                                                               : file.ts[1][g_per_thread - 1];
    double per_ms = 2.0 * g_per_thread * 1e6 / (double)(end - first + 1);
    printf("interleaved: %.1f events per ms\n", per_ms);
    if (g_per_thread == 20000 && getenv("MANTRA_SESSION_POOL_MB") && !strcmp(getenv("MANTRA_SESSION_POOL_MB"), "0")) {
        /* the writers' chunks (src/session/session-internal.h, "row chunks": at most CHUNK_BYTES,
         * 16 KiB, of 14-byte rows at least: flags, timestamp delta and 12 bytes of payload) make
         * at least 18 runs per thread, each starting with an IsSorted row */
        ck_assert_uint_ge(file.sorted_rows, 36);
        ck_assert_uint_lt(file.switches, file.sorted_rows);
        if (per_ms >= 100.0) {
            ck_assert_uint_lt(file.switches, 2000);
            ck_assert_uint_lt(st.bytes, 2u * g_per_thread * 20u);
        }
    }
    for (int k = 0; k < 2; k++) {
        free(file.ts[k]);
        free(file.sorted[k]);
        free(sorted.ts[k]);
        free(sorted.sorted[k]);
    }
    free(file.who);
    free(sorted.who);
}
END_TEST

int main(int argc, char **argv) {
    if (argc > 1)
        g_out = argv[1];
    if (argc > 2)
        g_per_thread = (uint32_t)strtoul(argv[2], NULL, 10);
    mkdir(g_out, 0777);
    if (mantra_dotnet_register() != 0) {
        fprintf(stderr, "mantra_dotnet_register failed\n");
        return 1;
    }
    Suite *su = suite_create("interleaved_runs");
    TCase *tc = tcase_create("lockstep");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, lockstep_runs);
    suite_add_tcase(su, tc);
    return run_suite(su, CK_NOFORK);
}
