/* The nettrace writer's plain rows for the session drain (the cursor nw_plain_open/_thread/_row/
 * _close and nw_plain_one, its one-event use; runtime/src/format/nettrace_event_rows.c): whatever
 * they write must be byte for byte what mantra_nettrace_write() writes for the same events, and
 * they must hand back (return 0) every event they cannot write the same way. Two writers with the
 * same options get the same event sequence: one only through mantra_nettrace_write(), the other
 * through the plain rows with mantra_nettrace_write() as the fallback; the files must be equal and
 * the plain rows' count exact. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "format/nettrace-internal.h"
#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"

typedef struct pw {
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    mantra_nettrace_event_key e4, e8; /* payloads of 4 and 8 bytes */
} pw;

static mantra_nettrace_event_key define(mantra_nettrace_writer *w, uint32_t id, const char *name) {
    mantra_metadata_builder *b;
    const uint8_t *blob;
    size_t n;
    mantra_nettrace_event_key k;
    ck_assert_int_eq(mantra_metadata_builder_new(&b), 0);
    ck_assert_int_eq(mantra_metadata_begin(b, id, name, 0, 0, 4, 0), 0);
    ck_assert_int_eq(mantra_metadata_field(b, "X", MANTRA_TYPE_UINT32), 0);
    ck_assert_int_eq(mantra_metadata_finish(b, &blob, &n), 0);
    ck_assert_int_eq(mantra_nettrace_add_event_raw(w, "P", blob, n, &k), 0);
    mantra_metadata_builder_free(b);
    return k;
}

static void pw_open(pw *p, uint32_t order, uint32_t block_bytes) {
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = INT64_C(1709214330123);
    o.sync_time_ticks = 1000;
    o.process_id = 4242;
    o.processor_count = 2;
    o.order = order;
    o.block_bytes = block_bytes;
    o.sequence_point_bytes = 3000; /* automatic sequence points: the fast path must leave them */
    ck_assert_int_eq(mantra_sink_open_memory(&p->sink, 0), 0);
    ck_assert_int_eq(mantra_nettrace_writer_new(&p->w, p->sink, &o), 0);
    p->e4 = define(p->w, 1, "A");
    p->e8 = define(p->w, 2, "B");
}

static const mantra_guid act = {0x11223344u, 0x5566u, 0x7788u, {1, 2, 3, 4, 5, 6, 7, 8}};

/* Event i of the sequence: two threads, runs of 1..4 events, sequence gaps, two payload sizes,
 * one event with an activity id every 97 (the rows after it compare against a non-zero one). */
static void event_i(const pw *p, uint32_t i, mantra_nettrace_event *ev, uint32_t *size, uint32_t *seq_a, uint32_t *seq_b) {
    uint64_t tid = ((i / 3u) % 2u) ? 202u : 101u;
    uint32_t *seq = tid == 101u ? seq_a : seq_b;
    *seq += (i % 29u == 0) ? 3u : 1u;
    memset(ev, 0, sizeof *ev);
    ev->key = (i % 11u == 0) ? p->e8 : p->e4;
    ev->flags = (i % 3u == 0) ? MANTRA_NETTRACE_EVENT_SORTED : 0u; /* a run starts every 3 */
    ev->timestamp = 5000u + (uint64_t)i * 7u;
    ev->thread_id = tid;
    ev->processor_number = 0xFFFFFFFFu;
    ev->sequence = *seq;
    if (i % 97u == 50u)
        ev->activity_id = &act;
    *size = ev->key == p->e8 ? 8u : 4u;
}

static uint32_t run_pair(uint32_t order, uint32_t n) {
    pw a, b;
    pw_open(&a, order, 1024);
    pw_open(&b, order, 1024);
    uint32_t sa1 = 1, sb1 = 1, sa2 = 1, sb2 = 1, fast = 0, hints[2] = {0, 0};
    _Alignas(8) uint8_t payload[8]; /* readable up to the next multiple of 8, as nw_plain_one needs */
    for (uint32_t i = 0; i < n; i++) {
        mantra_nettrace_event ea, eb;
        uint32_t size;
        event_i(&a, i, &ea, &size, &sa1, &sb1);
        event_i(&b, i, &eb, &size, &sa2, &sb2);
        memset(payload, 0, sizeof payload);
        memcpy(payload, &i, sizeof i);
        ck_assert_int_eq(mantra_nettrace_write(a.w, &ea, payload, size), 0);
        /* IsSorted up to the event's own timestamp, else up to 0 (every timestamp is over 5000) */
        uint64_t sorted_upto = (eb.flags & MANTRA_NETTRACE_EVENT_SORTED) ? eb.timestamp : 0u;
        if (!eb.activity_id && nw_plain_one(b.w, nw_key_metadata_id(b.w, eb.key), eb.thread_id,
                                            &hints[eb.thread_id == 101u ? 0 : 1], eb.sequence, eb.timestamp,
                                            sorted_upto, payload, size))
            fast++;
        else
            ck_assert_int_eq(mantra_nettrace_write(b.w, &eb, payload, size), 0);
    }
    ck_assert_int_eq(mantra_nettrace_finish(a.w), 0);
    ck_assert_int_eq(mantra_nettrace_finish(b.w), 0);
    size_t na, nb;
    const uint8_t *ba = mantra_sink_memory(a.sink, &na), *bb = mantra_sink_memory(b.sink, &nb);
    ck_assert_uint_eq(na, nb);
    ck_assert_int_eq(memcmp(ba, bb, na), 0);
    mantra_nettrace_stats s;
    mantra_nettrace_get_stats(b.w, &s);
    ck_assert_uint_eq(s.events, n);
    ck_assert_uint_gt(s.sequence_points, 1);
    for (pw *p = &a; p; p = p == &a ? &b : NULL) {
        mantra_nettrace_writer_free(p->w);
        mantra_sink_free(p->sink);
    }
    return fast;
}

START_TEST(plain_rows_same_bytes_global_order) {
    /* 2000 events, 75 of them the general way (nw_plain_one hands them back, counted by the first
     * rule that refuses): the 21 activity rows (the test never offers them), the 21 rows right
     * after them (previous row with ids: nw_plain_open), 24 rows that need a block flush (1024-byte
     * blocks: nw_plain_row), 6 rows while a sequence point is due (nw_plain_open), the first use of
     * each of the 2 definitions (no metadata id yet; the first of them is thread 101's first event)
     * and thread 202's first event (its entry has no event yet: nw_plain_thread). */
    uint32_t fast = run_pair(MANTRA_NETTRACE_GLOBAL_ORDER, 2000);
    ck_assert_uint_eq(fast, 1925);
    ck_assert_uint_eq(fast, run_pair(MANTRA_NETTRACE_GLOBAL_ORDER, 2000)); /* deterministic */
}
END_TEST

START_TEST(plain_rows_same_bytes_caller_runs) {
    /* the same 75 general rows: the IsSorted flags (sorted_upto at the timestamp or 0) match too */
    uint32_t fast = run_pair(MANTRA_NETTRACE_CALLER_RUNS, 2000);
    ck_assert_uint_eq(fast, 1925);
}
END_TEST

/* The drain's run path (nw_plain_open/_thread/_row/_close): the same bytes as the general path for
 * a global-order sequence with runs of 1..5 events of three threads, sequence gaps, payloads of 0,
 * 4, 8, 12 and 20 bytes (word copies and memcpy), activity rows, blocks filling up (1024-byte
 * blocks), automatic sequence points and a new file every `rotate` events (finish, a new writer:
 * what a session's rotation does). The cursor stays open across thread switches; it is closed
 * around every general write. */
typedef struct rw {
    mantra_sink *sink[4];
    mantra_nettrace_writer *w;
    mantra_nettrace_event_key k[5];
    uint32_t files;
} rw;

static const uint32_t run_sizes[5] = {0, 4, 8, 12, 20};

static void rw_file(rw *r) {
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = INT64_C(1709214330123);
    o.sync_time_ticks = 1000;
    o.process_id = 4242;
    o.processor_count = 2;
    o.block_bytes = 1024;
    o.sequence_point_bytes = 3000;
    ck_assert_uint_lt(r->files, 4);
    ck_assert_int_eq(mantra_sink_open_memory(&r->sink[r->files], 0), 0);
    ck_assert_int_eq(mantra_nettrace_writer_new(&r->w, r->sink[r->files], &o), 0);
    r->files++;
    for (uint32_t i = 0; i < 5; i++)
        r->k[i] = define(r->w, 10 + i, "R");
}

static void rw_next_file(rw *r) {
    ck_assert_int_eq(mantra_nettrace_finish(r->w), 0);
    mantra_nettrace_writer_free(r->w);
    rw_file(r);
}

/* Event i: thread, key index, sequence (per thread, gaps every 31), timestamp (ties every 13),
 * activity id every 89. */
typedef struct rev {
    uint64_t tid;
    uint32_t ki, seq;
    uint64_t ts;
    int act;
} rev;

static void run_event(uint32_t i, uint32_t seqs[3], uint64_t *ts, rev *e) {
    static const uint32_t run_len[7] = {1, 5, 2, 4, 3, 1, 5};
    uint32_t pos = 0, run = 0;
    while (pos + run_len[run % 7] <= i % 64u)
        pos += run_len[run++ % 7];
    uint32_t th = (run + i / 64u) % 3u;
    e->tid = 1000u + th * 77u;
    seqs[th] += (i % 31u == 7u) ? 4u : 1u;
    e->seq = seqs[th];
    e->ki = (i / 3u + (i % 7u == 0)) % 5u;
    if (i % 13u != 0)
        *ts += 1u + (i % 5u) * 40u;
    e->ts = *ts;
    e->act = i % 89u == 44u;
}

static uint32_t run_path(uint32_t n, uint32_t rotate, int use_cursor, rw *r) {
    memset(r, 0, sizeof *r);
    rw_file(r);
    uint32_t seqs[3] = {1, 1, 1}, fast = 0, hints[3] = {0, 0, 0};
    uint64_t ts = 7000;
    _Alignas(8) uint8_t payload[24];
    nw_plain c;
    int open = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (rotate && i && i % rotate == 0) {
            if (open)
                nw_plain_close(&c);
            open = 0;
            rw_next_file(r);
        }
        rev e;
        run_event(i, seqs, &ts, &e);
        uint32_t size = run_sizes[e.ki];
        memset(payload, 0xA5, sizeof payload);
        memcpy(payload, &i, sizeof i);
        if (use_cursor && !e.act) {
            if (!open)
                open = nw_plain_open(r->w, &c);
            uint32_t mid = nw_key_metadata_id(r->w, r->k[e.ki]);
            if (open && mid && nw_plain_thread(&c, e.tid, &hints[(e.tid - 1000u) / 77u]) &&
                nw_plain_row(&c, mid, e.seq, e.ts, payload, size)) {
                fast++;
                continue;
            }
        }
        if (open)
            nw_plain_close(&c);
        open = 0;
        mantra_nettrace_event ev;
        memset(&ev, 0, sizeof ev);
        ev.key = r->k[e.ki];
        ev.timestamp = e.ts;
        ev.thread_id = e.tid;
        ev.processor_number = 0xFFFFFFFFu;
        ev.sequence = e.seq;
        if (e.act)
            ev.activity_id = &act;
        ck_assert_int_eq(mantra_nettrace_write(r->w, &ev, payload, size), 0);
    }
    if (open)
        nw_plain_close(&c);
    ck_assert_int_eq(mantra_nettrace_finish(r->w), 0);
    return fast;
}

static void rw_free(rw *r) {
    mantra_nettrace_writer_free(r->w);
    for (uint32_t f = 0; f < r->files; f++)
        mantra_sink_free(r->sink[f]);
}

static void run_compare(uint32_t n, uint32_t rotate, uint32_t want_fast, uint32_t want_files) {
    rw a, b;
    ck_assert_uint_eq(run_path(n, rotate, 0, &a), 0);
    uint32_t fast = run_path(n, rotate, 1, &b);
    ck_assert_uint_eq(a.files, want_files);
    ck_assert_uint_eq(b.files, want_files);
    uint64_t sps = 0;
    for (uint32_t f = 0; f < a.files; f++) {
        size_t na, nb;
        const uint8_t *ba = mantra_sink_memory(a.sink[f], &na), *bb = mantra_sink_memory(b.sink[f], &nb);
        ck_assert_uint_eq(na, nb);
        ck_assert_int_eq(memcmp(ba, bb, na), 0);
    }
    mantra_nettrace_stats st;
    mantra_nettrace_get_stats(b.w, &st);
    sps = st.sequence_points;
    ck_assert_uint_gt(sps, 1);
    ck_assert_uint_gt(st.event_blocks, 4); /* runs cross block boundaries */
    ck_assert_uint_eq(fast, want_fast);
    rw_free(&a);
    rw_free(&b);
}

START_TEST(run_rows_same_bytes) {
    /* one file: 3000 events, the general path takes each thread's first, each definition's first
     * use, the activity rows and the row after each, and the rows that need a flush or a sequence
     * point */
    run_compare(3000, 0, 2859, 1);
}
END_TEST

START_TEST(run_rows_same_bytes_rotation) {
    /* a new file every 1000 events: each starts with its threads and definitions unknown */
    run_compare(3000, 1000, 2850, 3);
}
END_TEST

/* CALLER_RUNS mode, as the session drain writes two threads that alternate event by event (thread
 * 101 at 1000 + 20 j, thread 202 at 1010 + 20 j): runs of 64 events per thread, each thread's rows
 * IsSorted up to the other thread's oldest unwritten event (the cursor's sorted_upto; the general
 * path's MANTRA_NETTRACE_EVENT_SORTED). The cursor writes the same bytes as the general path, and
 * the rows after a run's first compress to flags, timestamp delta and payload (2 + 4 bytes). The
 * same events in global order (a thread switch every row) repeat thread id, sequence delta,
 * capture thread and processor in every row. Returns the file's size; *fast: rows the cursor
 * took; out: a copy of the file (at most 128 KiB). */
static size_t interleaved_runs(uint32_t order, int use_cursor, uint32_t *fast, uint8_t *out) {
    enum { PER_THREAD = 2000, RUN = 64 };
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.sync_time_unix_ms = INT64_C(1709214330123);
    o.sync_time_ticks = 1000;
    o.process_id = 4242;
    o.processor_count = 2;
    o.order = order;
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    ck_assert_int_eq(mantra_sink_open_memory(&sink, 0), 0);
    ck_assert_int_eq(mantra_nettrace_writer_new(&w, sink, &o), 0);
    mantra_nettrace_event_key k = define(w, 10, "R");
    _Alignas(8) uint8_t payload[8] = {0};
    nw_plain c;
    int open = 0;
    uint32_t hints[2] = {0, 0};
    *fast = 0;
    for (uint32_t n = 0; n < 2u * PER_THREAD; n++) {
        /* order == GLOBAL: event n in time order; else run n / RUN of thread (n / RUN) % 2 */
        uint32_t th, j;
        if (order == MANTRA_NETTRACE_GLOBAL_ORDER) {
            th = n % 2u;
            j = n / 2u;
        } else {
            th = (n / RUN) % 2u;
            j = (n / (2u * RUN)) * RUN + n % RUN;
        }
        uint64_t ts = 1000u + 20u * j + 10u * th;
        /* the other thread's oldest unwritten event */
        uint32_t other_j = th == 0 ? j - n % RUN : (n / (2u * RUN) + 1u) * RUN;
        uint64_t other = order == MANTRA_NETTRACE_GLOBAL_ORDER || other_j >= PER_THREAD
                             ? UINT64_MAX
                             : 1000u + 20u * other_j + 10u * (1u - th);
        uint64_t tid = th ? 202u : 101u;
        memcpy(payload, &n, sizeof n);
        if (use_cursor) {
            if (!open)
                open = nw_plain_open(w, &c);
            c.sorted_upto = other;
            uint32_t mid = nw_key_metadata_id(w, k);
            if (open && mid && nw_plain_thread(&c, tid, &hints[th]) && nw_plain_row(&c, mid, j + 1u, ts, payload, 4)) {
                (*fast)++;
                continue;
            }
            if (open)
                nw_plain_close(&c);
            open = 0;
        }
        mantra_nettrace_event ev;
        memset(&ev, 0, sizeof ev);
        ev.key = k;
        ev.timestamp = ts;
        ev.thread_id = tid;
        ev.processor_number = 0xFFFFFFFFu;
        ev.sequence = j + 1u;
        ev.flags = ts <= other ? MANTRA_NETTRACE_EVENT_SORTED : 0u;
        ck_assert_int_eq(mantra_nettrace_write(w, &ev, payload, 4), 0);
    }
    if (open)
        nw_plain_close(&c);
    ck_assert_int_eq(mantra_nettrace_finish(w), 0);
    size_t size;
    const uint8_t *bytes = mantra_sink_memory(sink, &size);
    ck_assert_uint_le(size, 131072);
    memcpy(out, bytes, size);
    mantra_nettrace_writer_free(w);
    mantra_sink_free(sink);
    return size;
}

START_TEST(interleaved_runs_compress) {
    static uint8_t a[131072], b[131072];
    uint32_t fast;
    size_t general = interleaved_runs(MANTRA_NETTRACE_CALLER_RUNS, 0, &fast, a);
    ck_assert_uint_eq(fast, 0);
    size_t cursor = interleaved_runs(MANTRA_NETTRACE_CALLER_RUNS, 1, &fast, b);
    ck_assert_uint_eq(cursor, general);
    ck_assert_int_eq(memcmp(a, b, general), 0);
    ck_assert_uint_eq(fast, 3998); /* each thread's first event takes the general path */
    /* 4000 rows in 63 runs: the runs' first rows carry every field, the other 3937 six bytes */
    ck_assert_uint_eq(general, 25342);
    size_t global = interleaved_runs(MANTRA_NETTRACE_GLOBAL_ORDER, 0, &fast, a);
    /* every row: flags, sequence delta, capture thread, processor (5 bytes), thread, delta, payload */
    ck_assert_uint_eq(global, 68370);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nettrace_plain");
    TCase *tc = tcase_create("plain");
    tcase_add_test(tc, plain_rows_same_bytes_global_order);
    tcase_add_test(tc, plain_rows_same_bytes_caller_runs);
    tcase_add_test(tc, run_rows_same_bytes);
    tcase_add_test(tc, run_rows_same_bytes_rotation);
    tcase_add_test(tc, interleaved_runs_compress);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
