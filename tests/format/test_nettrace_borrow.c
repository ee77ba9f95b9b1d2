/* The nettrace writer's borrowed rows (nw_write_rows in runtime/src/format/nettrace_event_rows.c,
 * the gathered stage write in nettrace_blocks.c): a session writer's run of rows of at least
 * NW_BORROW_MIN bytes is not copied into the block but written from where it is, with the staged
 * blocks, in one gathered write, where the sink gathers (a descriptor). What is borrowed must come
 * out byte for byte as when copied, the writer must never need a borrowed byte once
 * nw_borrows_done() has passed its borrow (the test overwrites every run as soon as the writer
 * says it is done with it, a copied run at once), and the stage must not hold more than about
 * NW_STAGE_BYTES of the stream (borrowed bytes hold the session's buffers). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "format/nettrace-internal.h"
#include "gen/run_tool.h"
#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"
#include "mantra/reader.h"

#define RUNS 1000u
#define PAYLOAD 12u
#define ROW (2u + PAYLOAD) /* flags 0, a one-byte timestamp delta, the payload */
#define TS_STEP 3u

/* Run k: thread 101 or 202 (alternately), rows_of(k) rows 1000 ticks apart from the last run's,
 * 3 apart within; its rest (the rows after the first) is 826..1932 bytes: some copied, most
 * borrowed. */
static uint32_t rows_of(uint32_t k) { return 60u + (k * 17u) % 80u; }
static uint64_t run_ts(uint32_t k) { return 10000u + (uint64_t)k * 1000u; }
static uint64_t run_tid(uint32_t k) { return k % 2u ? 202u : 101u; }

static void put_payload(uint8_t *p, uint32_t k, uint32_t row) {
    uint32_t a = k;
    uint64_t b = (uint64_t)k << 32 | row;
    memcpy(p, &a, 4);
    memcpy(p + 4, &b, 8);
}

/* The rest of run k as a session writer encodes it (nw_rows): each row compressed against the one
 * before it, the same event, sequence + 1, same size. */
static uint8_t *make_rest(uint32_t k, size_t *len) {
    uint32_t n = rows_of(k) - 1u;
    uint8_t *r = malloc((size_t)n * ROW), *p = r;
    for (uint32_t i = 1; i <= n; i++) {
        *p++ = 0x00;
        *p++ = TS_STEP;
        put_payload(p, k, i);
        p += PAYLOAD;
    }
    *len = (size_t)n * ROW;
    return r;
}

typedef struct bw {
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    mantra_nettrace_event_key key;
    uint8_t *rest[RUNS];
    uint64_t ticket[RUNS]; /* the borrow count after run k (0: copied) */
    uint32_t poisoned;     /* runs [0, poisoned) overwritten */
} bw;

/* copy: every run copied whatever the sink; sp_bytes: a sequence point every so many bytes */
static void bw_open(bw *b, mantra_sink *sink, int copy, uint32_t sp_bytes) {
    memset(b, 0, sizeof *b);
    b->sink = sink;
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = INT64_C(1709214330123);
    o.process_id = 7;
    o.processor_count = 2;
    o.order = MANTRA_NETTRACE_CALLER_RUNS;
    o.sequence_point_bytes = sp_bytes; /* sequence points write the staged blocks in between */
    ck_assert_int_eq(mantra_nettrace_writer_new(&b->w, sink, &o), 0);
    if (copy)
        b->w->borrow_min = SIZE_MAX;
    mantra_metadata_builder *mb;
    const uint8_t *blob;
    size_t n;
    ck_assert_int_eq(mantra_metadata_builder_new(&mb), 0);
    ck_assert_int_eq(mantra_metadata_begin(mb, 1, "Tick", 0, 0, 4, 0), 0);
    ck_assert_int_eq(mantra_metadata_field(mb, "Run", MANTRA_TYPE_UINT32), 0);
    ck_assert_int_eq(mantra_metadata_field(mb, "Row", MANTRA_TYPE_UINT64), 0);
    ck_assert_int_eq(mantra_metadata_finish(mb, &blob, &n), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(b->w, "Mantra-Test-Borrow", blob, n, &b->key), 0);
    mantra_metadata_builder_free(mb);
    /* each thread's first event the general way: the event's metadata id and both threads known */
    uint8_t payload[PAYLOAD];
    for (uint32_t t = 0; t < 2; t++) {
        put_payload(payload, UINT32_MAX, t);
        mantra_nettrace_event ev = {.key = b->key, .flags = MANTRA_NETTRACE_EVENT_SORTED, .timestamp = 5000u + t,
                                    .thread_id = t ? 202u : 101u, .processor_number = 0xFFFFFFFFu, .sequence = 1};
        ck_assert_int_eq(mantra_nettrace_write(b->w, &ev, payload, sizeof payload), 0);
    }
    for (uint32_t k = 0; k < RUNS; k++) {
        size_t len;
        b->rest[k] = make_rest(k, &len);
    }
}

/* Run k as nw_write_rows takes it, its thread's last sequence number seq before it. */
static nw_rows run_rows(const bw *b, uint32_t k, uint32_t mid, uint32_t seq, const uint8_t *first) {
    uint32_t n = rows_of(k);
    return (nw_rows){.seq = seq + 1u, .size = PAYLOAD, .ts = run_ts(k), .payload = first, .rest = b->rest[k],
                     .rest_len = (size_t)(n - 1u) * ROW, .rest_rows = n - 1u, .last_mid = mid, .last_seq = seq + n,
                     .last_size = PAYLOAD, .last_ts = run_ts(k) + (uint64_t)(n - 1u) * TS_STEP};
}

/* Overwrites the runs the writer no longer needs (in order: the borrows are written in order). */
static void poison_done(bw *b) {
    uint64_t done = nw_borrows_done(b->w);
    while (b->poisoned < RUNS && b->ticket[b->poisoned] != UINT64_MAX && b->ticket[b->poisoned] <= done) {
        memset(b->rest[b->poisoned], 0xEE, (size_t)(rows_of(b->poisoned) - 1u) * ROW);
        b->poisoned++;
    }
}

/* Writes every run; returns the most borrows the writer held at once. */
static uint64_t bw_write(bw *b) {
    uint32_t mid = nw_key_metadata_id(b->w, b->key), seq[2] = {1, 1}, hint[2] = {0, 0};
    ck_assert_uint_ne(mid, 0);
    uint64_t borrowed = 0, most = 0;
    _Alignas(8) uint8_t first[16] = {0}; /* readable up to the next multiple of 8 */
    for (uint32_t k = 0; k < RUNS; k++)
        b->ticket[k] = UINT64_MAX;
    for (uint32_t k = 0; k < RUNS; k++) {
        uint32_t t = k % 2u;
        put_payload(first, k, 0);
        nw_rows r = run_rows(b, k, mid, seq[t], first);
        ck_assert_int_eq(nw_write_rows(b->w, b->key, run_tid(k), &hint[t], &r, r.ts), 0);
        seq[t] = r.last_seq;
        if (r.rest_len >= b->w->borrow_min)
            borrowed++;
        ck_assert_uint_eq(nw_borrows_taken(b->w), borrowed);
        ck_assert_uint_le(nw_borrows_done(b->w), borrowed);
        b->ticket[k] = r.rest_len >= b->w->borrow_min ? borrowed : 0; /* copied: not needed now */
        if (borrowed - nw_borrows_done(b->w) > most)
            most = borrowed - nw_borrows_done(b->w);
        /* the staged blocks: at most NW_STAGE_BYTES of the stream and the block that passed it */
        ck_assert_uint_le(nw_staged_bytes(b->w), NW_STAGE_BYTES + NW_DEFAULT_BLOCK_BYTES + 2u * NW_HEADROOM);
        poison_done(b);
    }
    ck_assert_int_eq(mantra_nettrace_finish(b->w), 0);
    ck_assert_uint_eq(nw_borrows_done(b->w), borrowed);
    poison_done(b);
    ck_assert_uint_eq(b->poisoned, RUNS);
    return most;
}

static void bw_free(bw *b) {
    for (uint32_t k = 0; k < RUNS; k++)
        free(b->rest[k]);
    mantra_nettrace_writer_free(b->w);
    mantra_sink_free(b->sink);
}

/* Every event of the trace, in file order: the two first ones, then each run's rows. */
static void check_events(const uint8_t *data, size_t size) {
    mantra_reader *r = mantra_reader_new(NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(mantra_reader_open_memory(r, data, size), 0);
    const mantra_trace_event *ev;
    uint32_t k = 0, row = 0, seq[2] = {1, 1}, n = 0;
    ck_assert_int_eq(mantra_reader_next(r, &ev), 1);
    ck_assert_int_eq(mantra_reader_next(r, &ev), 1);
    while (mantra_reader_next(r, &ev) == 1) {
        uint8_t want[PAYLOAD];
        put_payload(want, k, row);
        uint32_t t = k % 2u;
        ck_assert_uint_eq(ev->payload_size, PAYLOAD);
        ck_assert_mem_eq(ev->payload, want, PAYLOAD);
        ck_assert_uint_eq(ev->capture_thread_id, run_tid(k));
        ck_assert_uint_eq(ev->sequence, ++seq[t]);
        ck_assert_int_eq(ev->timestamp, (int64_t)(run_ts(k) + (uint64_t)row * TS_STEP));
        ck_assert_int_eq(ev->is_sorted, row == 0);
        n++;
        if (++row == rows_of(k)) {
            row = 0;
            k++;
        }
    }
    ck_assert_uint_eq(k, RUNS);
    ck_assert_int_eq(mantra_reader_complete(r), 1);
    ck_assert_uint_eq(mantra_reader_get_stats(r)->events, n + 2u);
    mantra_reader_free(r);
}

static const char *trace_path(const char *name, char *path, size_t size) {
    const char *dir = getenv("MANTRA_BINARY_DIR");
    snprintf(path, size, "%s/format", dir ? dir : "/tmp");
    mkdir(path, 0777);
    snprintf(path, size, "%s/format/%s", dir ? dir : "/tmp", name);
    return path;
}

/* Writes the runs through a copying writer on a memory sink and a borrowing one on a file; the
 * files must be equal. Returns the most borrows the file's writer held at once. */
static uint64_t copied_and_borrowed(uint32_t sp_bytes, const uint8_t **copy, size_t *ncopy, bw *a) {
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_memory(&s, 0), 0);
    bw_open(a, s, 1, sp_bytes);
    ck_assert_uint_eq(a->w->borrow_min, SIZE_MAX);
    ck_assert_uint_eq(bw_write(a), 0);
    ck_assert_uint_eq(nw_borrows_taken(a->w), 0);
    *copy = mantra_sink_memory(a->sink, ncopy);

    char path[4200];
    trace_path("test_nettrace_borrow.nettrace", path, sizeof path);
    bw b;
    ck_assert_int_eq(mantra_sink_open_file(&s, path), 0);
    bw_open(&b, s, 0, sp_bytes);
    ck_assert_uint_eq(b.w->borrow_min, NW_BORROW_MIN); /* a descriptor gathers */
    uint64_t most = bw_write(&b);
    /* runs of 75 rows or more are borrowed (1036 bytes of rest and up): 812 of the 1000 */
    ck_assert_uint_eq(nw_borrows_taken(b.w), 812);
    ck_assert_int_eq(mantra_sink_close(b.sink), 0);
    size_t n;
    uint8_t *d = (uint8_t *)run_tool_read_file(path, &n);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_gt(*ncopy, 1400000);
    ck_assert_uint_eq(n, *ncopy);
    ck_assert_int_eq(memcmp(d, *copy, n), 0);
    free(d);
    unlink(path);
    bw_free(&b);
    return most;
}

START_TEST(borrowed_rows_same_bytes_as_copied) {
    /* a sequence point every 150000 bytes: each writes the stage, about a hundred borrows */
    bw a;
    const uint8_t *copy;
    size_t n;
    ck_assert_uint_ge(copied_and_borrowed(150000, &copy, &n, &a), 64);
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(a.w, &st);
    ck_assert_uint_eq(st.sequence_points, 7);
    check_events(copy, n);
    bw_free(&a);
    /* none: the stage is written when it passes NW_STAGE_BYTES of the stream (1 MiB here: about
     * 600 borrows), as the bound checked after every run says */
    ck_assert_uint_ge(copied_and_borrowed(0, &copy, &n, &a), 500);
    check_events(copy, n);
    bw_free(&a);
}
END_TEST

START_TEST(sinks_that_take_parts_one_by_one_get_copies) {
    /* memory, a fixed buffer and callbacks would take a gathered write part by part (a callback
     * call each): the writer copies every run for them */
    static uint8_t fixed[4096];
    mantra_sink *sinks[2];
    ck_assert_int_eq(mantra_sink_open_memory(&sinks[0], 0), 0);
    ck_assert_int_eq(mantra_sink_open_buffer(&sinks[1], fixed, sizeof fixed), 0);
    for (int i = 0; i < 2; i++) {
        mantra_nettrace_writer *w;
        ck_assert_int_eq(mantra_nettrace_writer_new(&w, sinks[i], NULL), 0);
        ck_assert_uint_eq(w->borrow_min, SIZE_MAX);
        mantra_nettrace_writer_free(w);
        mantra_sink_free(sinks[i]);
    }
}
END_TEST

/* The read end of a pipe: takes `limit` bytes, then closes. */
typedef struct short_reader {
    int fd;
    size_t limit, got;
} short_reader;

static void *short_reader_main(void *arg) {
    short_reader *r = arg;
    static uint8_t buf[65536];
    while (r->got < r->limit) {
        size_t want = r->limit - r->got < sizeof buf ? r->limit - r->got : sizeof buf;
        ssize_t n = read(r->fd, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        r->got += (size_t)n;
    }
    close(r->fd);
    return NULL;
}

START_TEST(failed_writer_gives_borrows_up) {
    /* a pipe whose reader goes away after 200000 bytes: a stage write fails (EPIPE), the writer
     * with it, and every borrow is done (nothing will be written from the runs any more) */
    signal(SIGPIPE, SIG_IGN);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    short_reader r = {p[0], 200000, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, short_reader_main, &r), 0);
    mantra_sink *s;
    ck_assert_int_eq(mantra_sink_open_fd(&s, p[1], 1), 0);
    bw b;
    bw_open(&b, s, 0, 150000);
    ck_assert_uint_eq(b.w->borrow_min, NW_BORROW_MIN);
    uint32_t mid = nw_key_metadata_id(b.w, b.key), seq[2] = {1, 1}, hint[2] = {0, 0}, k = 0;
    _Alignas(8) uint8_t first[16] = {0};
    int rc = 0;
    for (; k < RUNS && rc == 0; k++) {
        uint32_t t = k % 2u;
        nw_rows rows = run_rows(&b, k, mid, seq[t], first);
        rc = nw_write_rows(b.w, b.key, run_tid(k), &hint[t], &rows, rows.ts);
        seq[t] = rows.last_seq;
        if (rc == 0)
            ck_assert_uint_le(nw_borrows_done(b.w), nw_borrows_taken(b.w));
    }
    pthread_join(th, NULL);
    ck_assert_int_eq(rc, MANTRA_EIO);
    ck_assert_uint_eq(r.got, 200000);
    /* the second sequence point's stage write (the first one's stage fits the pipe and the reader) */
    ck_assert_uint_lt(k, 300);
    ck_assert_uint_gt(nw_borrows_taken(b.w), 0);
    ck_assert_uint_eq(nw_borrows_done(b.w), nw_borrows_taken(b.w));
    nw_borrows_settle(b.w); /* nothing to do */
    ck_assert_uint_eq(nw_borrows_done(b.w), nw_borrows_taken(b.w));
    bw_free(&b);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nettrace_borrow");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, borrowed_rows_same_bytes_as_copied);
    tcase_add_test(tc, sinks_that_take_parts_one_by_one_get_copies);
    tcase_add_test(tc, failed_writer_gives_borrows_up);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
