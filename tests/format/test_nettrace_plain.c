/* The nettrace writer's fast path for the session drain (nw_write_plain, runtime/src/format/
 * nettrace_event_rows.c): whatever it writes must be byte for byte what mantra_nettrace_write()
 * writes for the same events, and it must hand back (return 0) every event it cannot write the
 * same way. Two writers with the same options get the same event sequence: one only through
 * mantra_nettrace_write(), the other through nw_write_plain() with mantra_nettrace_write() as the
 * fallback; the files must be equal and the fast path's count exact. */
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
    uint32_t sa1 = 1, sb1 = 1, sa2 = 1, sb2 = 1, fast = 0;
    uint8_t payload[8];
    for (uint32_t i = 0; i < n; i++) {
        mantra_nettrace_event ea, eb;
        uint32_t size;
        event_i(&a, i, &ea, &size, &sa1, &sb1);
        event_i(&b, i, &eb, &size, &sa2, &sb2);
        memset(payload, 0, sizeof payload);
        memcpy(payload, &i, sizeof i);
        ck_assert_int_eq(mantra_nettrace_write(a.w, &ea, payload, size), 0);
        int sorted = (eb.flags & MANTRA_NETTRACE_EVENT_SORTED) != 0;
        if (!eb.activity_id && nw_write_plain(b.w, eb.key, eb.thread_id, eb.sequence, eb.timestamp, payload, size, sorted))
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
    /* 2000 events: all but the first of each thread (unknown thread), the first use of each
     * definition, the activity rows, the row after each of them (previous row with ids), the first
     * row after each block flush or sequence point (stack id of the new region) and rows that need
     * a flush or a sequence point go the general way: 75 of them. */
    uint32_t fast = run_pair(MANTRA_NETTRACE_GLOBAL_ORDER, 2000);
    ck_assert_uint_eq(fast, 1925);
    ck_assert_uint_eq(fast, run_pair(MANTRA_NETTRACE_GLOBAL_ORDER, 2000)); /* deterministic */
}
END_TEST

START_TEST(plain_rows_same_bytes_caller_runs) {
    uint32_t fast = run_pair(MANTRA_NETTRACE_CALLER_RUNS, 2000);
    ck_assert_uint_eq(fast, 1925);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nettrace_plain");
    TCase *tc = tcase_create("plain");
    tcase_add_test(tc, plain_rows_same_bytes_global_order);
    tcase_add_test(tc, plain_rows_same_bytes_caller_runs);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN(suite)
