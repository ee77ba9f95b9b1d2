/* The rows a file session's writers encode themselves (src/session/dispatch.c, "row chunks" in
 * src/session/session-internal.h) and what the drain makes of them (src/session/drain.c):
 *   - the session's own metadata ids, in order of first use, up to MID_MAX; events beyond go through
 *     raw records and the writer's ids; an event with a stack keeps its plain rows' id;
 *   - chunks split where a pass or a sequence point ends, with a slow and a fast writer: every event
 *     once with its payload, IsSorted true on every row marked so, time order in the reader's sorted
 *     mode, the sequence points the size asks for. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "mantra/event.h"
#include "mantra/reader.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "session/session-internal.h"
#include "session_test_util.h"

/* ---- ids beyond the session's table ---- */

#define MANY (MID_MAX + 100u)
static mantra_event_desc g_many[MANY];
static mantra_event_state g_many_states[MANY];
static const mantra_provider_desc g_many_provider = {
    "Mantra-Test-Many", "Many", {0x6d616e79, 0x1, 0x2, {1, 2, 3, 4, 5, 6, 7, 8}}, g_many, g_many_states, MANY};

typedef struct many_seen {
    uint32_t count[MANY + 1];
    uint32_t mid[MANY + 1];
    uint32_t bad_payload, stacks, stack_mid, other;
} many_seen;

static void see_many(void *ctx, const mantra_trace_event *ev) {
    many_seen *m = ctx;
    uint32_t e = ev->metadata->event_id;
    if (strcmp(ev->metadata->provider, "Mantra-Test-Many") != 0)
        return;
    if (e == 0 || e > MANY || ev->payload_size != 4) {
        m->other++;
        return;
    }
    uint32_t v;
    memcpy(&v, ev->payload, 4);
    m->bad_payload += v != e - 1u;
    m->count[e]++;
    if (ev->stack_count) {
        m->stacks++;
        m->stack_mid = ev->metadata_id;
    } else if (m->mid[e] && m->mid[e] != ev->metadata_id) {
        m->bad_payload++; /* one definition per event */
    } else {
        m->mid[e] = ev->metadata_id;
    }
}

/* The provider's MANY events (ids 1..MANY, no fields), registered once per process. */
static void register_many(void) {
    if (g_many[0].id != 0)
        return;
    for (uint32_t i = 0; i < MANY; i++) {
        g_many[i].name = "Many";
        g_many[i].symbol = "Many";
        g_many[i].keywords = 1;
        g_many[i].id = i + 1u;
        g_many[i].level = MANTRA_LEVEL_INFORMATIONAL;
    }
    ck_assert_int_eq(mantra_register_provider(&g_many_provider), 0);
}

START_TEST(ids_beyond_the_table_go_raw) {
    register_many();
    const char *path = st_path("many.nettrace");
    mantra_session_id id = st_start_file("Mantra-Test-Many:0x1:5", path, 0);
    for (uint32_t i = 0; i < MANY; i++)
        ck_assert_int_eq(mantra_event_write_bytes(&g_many[i], &g_many_states[i], &i, 4), MANTRA_WRITE_OK);
    /* the first event again: with a stack (a raw record) between two plain rows */
    const uint64_t ips[2] = {0x7f0000001000u, 0x7f0000002000u};
    mantra_event_options o = {ips, 2, 0, 0, NULL, NULL};
    uint32_t zero = 0;
    ck_assert_int_eq(mantra_event_write_bytes_ex(&g_many[0], &g_many_states[0], &zero, 4, &o), MANTRA_WRITE_OK);
    ck_assert_int_eq(mantra_event_write_bytes(&g_many[0], &g_many_states[0], &zero, 4), MANTRA_WRITE_OK);
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    ck_assert_uint_eq(st.written, MANY + 3u); /* + ProcessInfo */
    ck_assert_uint_eq(st.dropped, 0);

    static many_seen m;
    memset(&m, 0, sizeof m);
    readback rb;
    st_read_trace(path, &rb, see_many, &m);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.dropped, 0);
    ck_assert_uint_eq(m.other, 0);
    ck_assert_uint_eq(m.bad_payload, 0);
    ck_assert_uint_eq(m.count[1], 3);
    for (uint32_t e = 2; e <= MANY; e++)
        ck_assert_uint_eq(m.count[e], 1);
    /* ids by first use up to MID_MAX; then the writer's own, above them */
    for (uint32_t e = 1; e <= MID_MAX; e++)
        ck_assert_uint_eq(m.mid[e], e);
    for (uint32_t e = MID_MAX + 1u; e <= MANY; e++)
        ck_assert_uint_gt(m.mid[e], MID_MAX);
    ck_assert_uint_eq(m.stacks, 1);
    ck_assert_uint_eq(m.stack_mid, 1);
}
END_TEST

/* ---- an event whose definition the writer refuses ---- */

static uint8_t g_big_blob[MANTRA_MAX_PAYLOAD + 16u]; /* a metadata record over a payload's size */
static mantra_event_desc g_big[2] = {
    {"Big", "Big", 1, 1, 0, MANTRA_LEVEL_INFORMATIONAL, 0, 0, 0, 0, g_big_blob, sizeof g_big_blob},
    {"Small", "Small", 1, 2, 0, MANTRA_LEVEL_INFORMATIONAL, 0, 0, 0, 0, NULL, 0}};
static mantra_event_state g_big_states[2];
static const mantra_provider_desc g_big_provider = {
    "Mantra-Test-Big", "Big", {0x62696721, 0x1, 0x2, {1, 2, 3, 4, 5, 6, 7, 8}}, g_big, g_big_states, 2};

typedef struct big_seen {
    uint32_t small, big;
} big_seen;
static void see_big(void *ctx, const mantra_trace_event *ev) {
    big_seen *b = ctx;
    if (strcmp(ev->metadata->provider, "Mantra-Test-Big") == 0) {
        b->small += ev->metadata->event_id == 2;
        b->big += ev->metadata->event_id == 1;
    }
}

/* Its events are refused one by one (a sequence gap each, as before the writers encoded rows); the
 * session and the other events go on. Before, the rows of such an event made the drain fail the
 * whole session at its first chunk. */
START_TEST(unfit_definition_refuses_its_events_only) {
    ck_assert_int_eq(mantra_register_provider(&g_big_provider), 0);
    const char *path = st_path("big.nettrace");
    mantra_session_id id = st_start_file("Mantra-Test-Big:0x1:5", path, 0);
    uint32_t v = 7;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(mantra_event_write_bytes(&g_big[1], &g_big_states[1], &v, 4), MANTRA_WRITE_OK);
        ck_assert_int_eq(mantra_event_write_bytes(&g_big[0], &g_big_states[0], &v, 4), MANTRA_WRITE_OK);
    }
    ck_assert_int_eq(mantra_event_write_bytes(&g_big[1], &g_big_states[1], &v, 4), MANTRA_WRITE_OK);
    mantra_session_stats st;
    ck_assert_msg(mantra_session_stop_stats(id, &st) == 0, "%s", mantra_session_last_error());
    big_seen b = {0, 0};
    readback rb;
    st_read_trace(path, &rb, see_big, &b);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(b.small, 4);
    ck_assert_uint_eq(b.big, 0);
    ck_assert_uint_eq(rb.dropped, 3);
}
END_TEST

/* ---- payloads of every size, back to back ---- */

/* The common write (dispatch.c, write_fast) copies payloads of 0 and 4 to 32 bytes itself and
 * leaves the rest, a second session and a listener to the general path: every size on either side
 * of those bounds, three times in a row each, BLOB_ROUNDS times (some 450 KB: many chunks, so that
 * it also meets full chunks), comes back byte for byte, with one session, with two and with a
 * listener; and the thread's count of writes the common write did not finish (ev_uncommon) is
 * exactly those it must leave with one session (other sizes, plus at most a chunk start per 4 KB
 * of rows: a fast path that never ran fails that) and every write with two sessions or a listener. */
static mantra_event_desc g_blob[1] = {{"Blob", "Blob", 1, 1, 0, MANTRA_LEVEL_INFORMATIONAL, 0, 0, 0, 0, NULL, 0}};
static mantra_event_state g_blob_states[1];
static const mantra_provider_desc g_blob_provider = {
    "Mantra-Test-Blob", "Blob", {0x626c6f62, 0x1, 0x2, {1, 2, 3, 4, 5, 6, 7, 8}}, g_blob, g_blob_states, 1};
static const uint32_t g_blob_sizes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 40, 64, 100, 255};
#define BLOB_SIZES (sizeof g_blob_sizes / sizeof g_blob_sizes[0])
#define BLOB_PER_ROUND (3u * BLOB_SIZES)
#define BLOB_ROUNDS 200u
#define BLOB_EVENTS (BLOB_ROUNDS * BLOB_PER_ROUND)

static uint32_t blob_size(uint32_t k) { return g_blob_sizes[(k % BLOB_PER_ROUND) / 3u]; }
static uint8_t blob_byte(uint32_t k, uint32_t j) { return (uint8_t)(k * 31u + j * 7u + 1u); }

typedef struct blob_seen {
    uint32_t n, other, first_seq;
    uint32_t bad_seq, bad_size, bad_byte; /* the first bad event + 1 of each kind */
} blob_seen;

static void see_blob(void *ctx, const mantra_trace_event *ev) {
    blob_seen *b = ctx;
    if (strcmp(ev->metadata->provider, "Mantra-Test-Blob") != 0)
        return;
    uint32_t k = b->n++;
    if (k == 0)
        b->first_seq = ev->sequence;
    if (k >= BLOB_EVENTS) {
        b->other++;
        return;
    }
    if (ev->sequence != b->first_seq + k && !b->bad_seq)
        b->bad_seq = k + 1u;
    if (ev->payload_size != blob_size(k)) {
        if (!b->bad_size)
            b->bad_size = k + 1u;
        return;
    }
    for (uint32_t j = 0; j < blob_size(k) && !b->bad_byte; j++)
        if (ev->payload[j] != blob_byte(k, j))
            b->bad_byte = k + 1u;
}

static uint32_t g_heard;
static void listen_blob(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    (void)ctx;
    (void)payload;
    (void)size;
    if (desc == &g_blob[0])
        g_heard++;
}

/* Writes every blob; returns the writes the common write did not finish. */
static uint64_t write_blobs(void) {
    uint8_t p[256];
    uint64_t before = ss_current_rec()->ev_uncommon;
    for (uint32_t k = 0; k < BLOB_EVENTS; k++) {
        for (uint32_t j = 0; j < blob_size(k); j++)
            p[j] = blob_byte(k, j);
        ck_assert_int_eq(mantra_event_write_bytes(&g_blob[0], &g_blob_states[0], p, blob_size(k)), MANTRA_WRITE_OK);
    }
    return ss_current_rec()->ev_uncommon - before;
}

/* Every event once, in sequence order (one thread), with its size and bytes. */
static void check_blobs(const char *path) {
    blob_seen b;
    memset(&b, 0, sizeof b);
    readback rb;
    st_read_trace(path, &rb, see_blob, &b);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.dropped, 0);
    ck_assert_uint_eq(b.other, 0);
    ck_assert_uint_eq(b.n, BLOB_EVENTS);
    ck_assert_msg(!b.bad_seq && !b.bad_size && !b.bad_byte,
                  "%s: first event out of sequence %u, of the wrong size %u (%u bytes), with a wrong byte %u (%u bytes)",
                  path, b.bad_seq, b.bad_size, b.bad_size ? blob_size(b.bad_size - 1u) : 0u, b.bad_byte,
                  b.bad_byte ? blob_size(b.bad_byte - 1u) : 0u);
}

START_TEST(payloads_of_every_size_back_to_back) {
    ck_assert_int_eq(mantra_register_provider(&g_blob_provider), 0);
    uint32_t uncommon_sizes = 0, bytes = 0;
    for (uint32_t k = 0; k < BLOB_PER_ROUND; k++) {
        uint32_t size = blob_size(k);
        uncommon_sizes += !(size == 0 || (size >= 4 && size <= 32));
        bytes += size + 3u; /* + the row's header: flags, timestamp delta, size */
    }
    const char *one = st_path("blob-one.nettrace");
    mantra_session_id id = st_start_file("Mantra-Test-Blob:0x1:5", one, 0);
    uint64_t uncommon = write_blobs();
    ck_assert_int_eq(mantra_session_stop(id), 0);
    check_blobs(one);
    ck_assert_uint_ge(uncommon, (uint64_t)BLOB_ROUNDS * uncommon_sizes);
    ck_assert_uint_le(uncommon, (uint64_t)BLOB_ROUNDS * uncommon_sizes + 1u + BLOB_ROUNDS * bytes / 4096u);

    char a[512], b[512];
    snprintf(a, sizeof a, "%s", st_path("blob-two-a.nettrace"));
    snprintf(b, sizeof b, "%s", st_path("blob-two-b.nettrace"));
    mantra_session_id ia = st_start_file("Mantra-Test-Blob:0x1:5", a, 0);
    mantra_session_id ib = st_start_file("Mantra-Test-Blob:0x1:5", b, 0);
    uncommon = write_blobs();
    ck_assert_int_eq(mantra_session_stop(ib), 0);
    ck_assert_int_eq(mantra_session_stop(ia), 0);
    check_blobs(a);
    check_blobs(b);
    ck_assert_uint_eq(uncommon, BLOB_EVENTS);

    const char *listened = st_path("blob-listener.nettrace");
    g_heard = 0;
    mantra_set_listener(listen_blob, NULL);
    id = st_start_file("Mantra-Test-Blob:0x1:5", listened, 0);
    uncommon = write_blobs();
    mantra_set_listener(NULL, NULL);
    ck_assert_int_eq(mantra_session_stop(id), 0);
    ck_assert_uint_eq(g_heard, BLOB_EVENTS);
    ck_assert_uint_eq(uncommon, BLOB_EVENTS);
    check_blobs(listened);
}
END_TEST

/* ---- chunks split at a pass's end and at sequence points ---- */

#define FAST_EVENTS 150000u
#define SLOW_EVENTS 3000u
typedef struct pacer {
    pthread_t th;
    uint32_t k, n, every;
    long pause_ns;
    uint64_t tid;
    uint32_t ok;
} pacer;
static atomic_int g_running;

static void *pace_main(void *arg) {
    pacer *p = arg;
    p->tid = mantra_pal_thread_id();
    struct timespec ts = {0, p->pause_ns};
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t v[2] = {p->k, i};
        if (mantra_event_write_bytes(&g_many[p->k], &g_many_states[p->k], v, sizeof v) == MANTRA_WRITE_OK)
            p->ok++;
        if (i % p->every == p->every - 1u)
            nanosleep(&ts, NULL);
    }
    atomic_fetch_sub(&g_running, 1);
    return NULL;
}

typedef struct paced_seen {
    uint32_t next[2], bad, rows, sorted_untrue, out_of_order;
    int64_t last_ts;
    int64_t *ts;
    uint8_t *sorted;
} paced_seen;

static void see_file_order(void *ctx, const mantra_trace_event *ev) {
    paced_seen *s = ctx;
    if (strcmp(ev->metadata->provider, "Mantra-Test-Many") != 0)
        return;
    uint32_t v[2];
    memcpy(v, ev->payload, 8);
    if (v[0] > 1 || v[1] != s->next[v[0]]++ || s->rows >= FAST_EVENTS + SLOW_EVENTS) {
        s->bad++;
        return;
    }
    s->ts[s->rows] = ev->timestamp;
    s->sorted[s->rows++] = (uint8_t)ev->is_sorted;
}

static void see_sorted(void *ctx, const mantra_trace_event *ev) {
    paced_seen *s = ctx;
    if (strcmp(ev->metadata->provider, "Mantra-Test-Many") != 0)
        return;
    s->out_of_order += ev->timestamp < s->last_ts;
    s->last_ts = ev->timestamp;
    s->rows++;
}

START_TEST(chunks_split_at_passes_and_cuts) {
    register_many(); /* its two first events */
    const char *path = st_path("paced.nettrace");
    mantra_session_config c;
    st_config_file(&c, "Mantra-Test-Many:0x1:5", path, 0);
    c.flush_interval_ms = 2; /* many passes, each ending inside a chunk */
    c.sequence_point_mb = 1;
    uint64_t splits = atomic_load(&ss_chunk_splits);
    mantra_session_id id = st_start(&c);
    pacer p[2] = {{.k = 0, .n = FAST_EVENTS, .every = 5000, .pause_ns = 200000},
                  {.k = 1, .n = SLOW_EVENTS, .every = 10, .pause_ns = 20000}};
    atomic_store(&g_running, 2);
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(pthread_create(&p[k].th, NULL, pace_main, &p[k]), 0);
    st_wait_pumping(&g_running);
    for (int k = 0; k < 2; k++)
        pthread_join(p[k].th, NULL);
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    /* the slow writer's chunks span many passes and the fast writer's runs: some were split */
    ck_assert_uint_gt(atomic_load(&ss_chunk_splits), splits);
    ck_assert_uint_eq(p[0].ok, FAST_EVENTS);
    ck_assert_uint_eq(p[1].ok, SLOW_EVENTS);
    ck_assert_uint_eq(st.dropped, 0);

    static paced_seen s;
    memset(&s, 0, sizeof s);
    s.ts = malloc((FAST_EVENTS + SLOW_EVENTS) * sizeof *s.ts);
    s.sorted = malloc(FAST_EVENTS + SLOW_EVENTS);
    ck_assert_ptr_nonnull(s.ts);
    ck_assert_ptr_nonnull(s.sorted);
    readback rb;
    st_read_trace(path, &rb, see_file_order, &s);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.dropped, 0);
    ck_assert_uint_eq(s.bad, 0);
    ck_assert_uint_eq(s.next[0], FAST_EVENTS);
    ck_assert_uint_eq(s.next[1], SLOW_EVENTS);
    ck_assert_uint_eq(s.rows, FAST_EVENTS + SLOW_EVENTS);
    /* IsSorted true: no later row is older than a row marked so */
    int64_t later_min = INT64_MAX;
    for (uint32_t n = s.rows; n-- > 0;) {
        s.sorted_untrue += s.sorted[n] && s.ts[n] > later_min;
        if (s.ts[n] < later_min)
            later_min = s.ts[n];
    }
    ck_assert_uint_eq(s.sorted_untrue, 0);
    /* a sequence point every MB at least */
    ck_assert_uint_ge(rb.sequence_points, st.bytes >> 20);
    free(s.ts);
    free(s.sorted);

    /* the reader's sorted mode (TraceEvent's merge) gives time order back */
    paced_seen o;
    memset(&o, 0, sizeof o);
    mantra_reader_options ro = {MANTRA_READER_SORTED, 0};
    mantra_reader *r = mantra_reader_new(&ro);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(mantra_reader_open_file(r, path), 0);
    const mantra_trace_event *ev;
    while (mantra_reader_next(r, &ev) == 1)
        see_sorted(&o, ev);
    ck_assert_msg(mantra_reader_complete(r), "%s", mantra_reader_last_error(r));
    mantra_reader_free(r);
    ck_assert_uint_eq(o.rows, FAST_EVENTS + SLOW_EVENTS);
    ck_assert_uint_eq(o.out_of_order, 0);
}
END_TEST

static Suite *suite(void) {
    st_init_dir("session_rows");
    Suite *s = suite_create("session_rows");
    TCase *tc = tcase_create("rows");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ids_beyond_the_table_go_raw);
    tcase_add_test(tc, chunks_split_at_passes_and_cuts);
    tcase_add_test(tc, unfit_definition_refuses_its_events_only);
    tcase_add_test(tc, payloads_of_every_size_back_to_back);
    suite_add_tcase(s, tc);
    return s;
}

MANTRA_CHECK_MAIN_NOFORK(suite)
