/* Sessions under concurrent writers (mantra/session.h).
 *
 * rounds (sessions_under_writers): 4 threads write Mantra-Demo events continuously (bursts of 16,
 * 50 us apart) while the main thread starts and stops 1-3 overlapping file sessions under them,
 * with different provider specs, caps small enough to drop, BLOCK mode where there is a drain
 * thread, different drain periods, stops in varying order. Every trace is read back after its
 * stop and checked against the session's counters and against what the writers wrote (every
 * payload rebuilt from its (writer, index) key).
 * reuse (bit_reuse_under_writers): two sessions with disjoint specs take turns on one session bit
 * under 8 busy writers; no event may land in a session that does not enable it.
 *
 * Relations asserted per trace (E = events read besides ProcessInfo, P = ProcessInfo events):
 *   reader: end of stream seen, no error; P <= 1
 *   stats:  written == E + P; attempted == written + dropped; P == 0 only when dropped > 0;
 *           the reader's sequence-gap count == dropped (session.h: a dropped event still consumes
 *           its per-thread sequence number, so readers see the gap); files == 1; bytes == file size
 *   each event: Mantra-Demo, enabled by the session's spec, payload byte-identical to what its
 *           writer wrote at its index, on the writer's OS thread, sequence numbers strictly
 *           increasing per thread, indices of one event kind increasing per thread
 *   no lost event: per writer thread, the indices of one event kind missing between the first and
 *           the last one in the trace are at most that thread's sequence gaps between its first
 *           and last event (0 when nothing was dropped), since a thread that saw the session's bit
 *           of an event's mask at two writes saw it at every write between them.
 * The threadless build (mantra_threadless()) has no drain thread: the main thread pumps
 * (mantra_pump) while it waits. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/pump.h"
#include "mantra/reader.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "threads/demo_events.h"

#define NWRITERS 4    /* writers of sessions_under_writers */
#define MAX_WRITERS 8 /* bit_reuse_under_writers: twice as many busy writers */
/* For the per-event checks: ck_assert_* records its location through check's message file on
 * every call (a write per assertion), far too slow for millions of events. */
#define CHECK(cond, ...)                  \
    do {                                  \
        if (!(cond))                      \
            ck_abort_msg(__VA_ARGS__);    \
    } while (0)
#define BURST 16          /* events between two short sleeps of a writer */
#define BURST_SLEEP_US 50 /* keeps the traces at a few MB per second */

static char g_dir[512];
static int g_rounds = 30;

/* ---- writers ------------------------------------------------------------------------------ */

typedef struct writer_state {
    pthread_t th;
    uint32_t w;
    uint64_t tid;             /* published before `ready` */
    _Atomic uint64_t ok, disabled, dropped, bad;
    _Atomic int last_bad;
} writer_state;

static writer_state g_writers[MAX_WRITERS];
static uint32_t g_nwriters; /* set before the writers start */
static _Atomic int g_run;
static _Atomic int g_ready;
static uint32_t g_started;    /* writer threads running (main thread only) */
static long g_burst_sleep_us;  /* set before the writers start */
static int g_tick_arrays_only; /* set before the writers start */

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void *writer_main(void *arg) {
    writer_state *ws = arg;
    ws->tid = mantra_pal_thread_id();
    atomic_fetch_add(&g_ready, 1);
    demo_event e;
    uint64_t i = 0;
    while (atomic_load_explicit(&g_run, memory_order_relaxed)) {
        for (int b = 0; b < BURST; b++, i++) {
            if (g_tick_arrays_only && (i % 4u == 1 || i % 4u == 2))
                continue; /* no Scalars, no Strings (their snprintf would dominate a writer's time) */
            demo_make(&e, ws->w, i);
            int rc = demo_write(&e);
            if (rc == MANTRA_WRITE_OK)
                atomic_fetch_add_explicit(&ws->ok, 1, memory_order_relaxed);
            else if (rc == MANTRA_WRITE_DISABLED)
                atomic_fetch_add_explicit(&ws->disabled, 1, memory_order_relaxed);
            else if (rc == MANTRA_WRITE_DROPPED)
                atomic_fetch_add_explicit(&ws->dropped, 1, memory_order_relaxed);
            else {
                atomic_fetch_add_explicit(&ws->bad, 1, memory_order_relaxed);
                atomic_store_explicit(&ws->last_bad, rc, memory_order_relaxed);
            }
        }
        if (i >= DEMO_MAX_INDEX - BURST)
            break;
        if (g_burst_sleep_us)
            sleep_us(g_burst_sleep_us);
    }
    return NULL;
}

static void writers_start(uint32_t n, long burst_sleep_us, int tick_arrays_only) {
    g_nwriters = n;
    g_tick_arrays_only = tick_arrays_only;
    g_burst_sleep_us = burst_sleep_us;
    atomic_store(&g_run, 1);
    atomic_store(&g_ready, 0);
    for (uint32_t w = 0; w < g_nwriters; w++) {
        writer_state *ws = &g_writers[w];
        memset(ws, 0, sizeof *ws);
        ws->w = w;
        ck_assert_int_eq(pthread_create(&ws->th, NULL, writer_main, ws), 0);
        g_started++;
    }
    while (atomic_load(&g_ready) < (int)g_nwriters) /* the thread ids are readable after this */
        sleep_us(100);
}

static void writers_join(void) {
    atomic_store(&g_run, 0);
    for (uint32_t w = 0; w < g_started; w++)
        pthread_join(g_writers[w].th, NULL);
    g_started = 0;
}

static void writers_stop(void) {
    writers_join();
    for (uint32_t w = 0; w < g_nwriters; w++) {
        ck_assert_msg(atomic_load(&g_writers[w].bad) == 0, "writer %u: %llu writes returned %d", w,
                      (unsigned long long)atomic_load(&g_writers[w].bad), atomic_load(&g_writers[w].last_bad));
    }
}

/* Waits about ms milliseconds, pumping the job queue (the threadless build's drain). */
static void wait_pumping(unsigned ms) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        mantra_pump();
        clock_gettime(CLOCK_MONOTONIC, &t);
        long el = (t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L;
        if (el >= (long)ms)
            break;
        sleep_us(500);
    }
}

/* ---- sessions ----------------------------------------------------------------------------- */

typedef struct conf {
    const char *providers;
    uint64_t cap;     /* buffer_bytes; 0: 8 MB */
    uint32_t flush_ms;
    uint32_t mode;    /* enum mantra_buffer_mode (BLOCK only in the threaded build) */
} conf;

static const char *const k_specs[] = {
    "Mantra-Demo:0xF:5",                   /* everything */
    "Mantra-Demo:0x1:4",                   /* Tick only */
    "Mantra-Demo:0x6:5",                   /* Scalars + Strings */
    "Mantra-Demo:0x8:3",                   /* Arrays (Warning) */
    "*",                                   /* catch-all */
    "Mantra-Demo:0x2:4",                   /* Scalars is Verbose: nothing but ProcessInfo */
    "Mantra-Demo:0xD:4,Other-Provider:0x1", /* Tick, Strings, Arrays; an unregistered provider */
};
#define NSPECS (sizeof k_specs / sizeof k_specs[0])
static const uint64_t k_caps[] = {0, 64 * 1024, 1 << 20, 200 * 1024, 0};
#define NCAPS (sizeof k_caps / sizeof k_caps[0])
static const uint32_t k_flush[] = {100, 1, 20, 5};

typedef struct live {
    mantra_session_id id;
    char path[640];
    conf c;
} live;

static void start_session(live *l, const conf *c, const char *name) {
    l->c = *c;
    snprintf(l->path, sizeof l->path, "%s/%s", g_dir, name);
    mantra_session_config cfg;
    mantra_session_config_init(&cfg);
    cfg.providers = c->providers;
    cfg.output = MANTRA_SESSION_OUTPUT_FILE;
    cfg.path = l->path;
    cfg.buffer_bytes = c->cap ? c->cap : 8u << 20;
    cfg.flush_interval_ms = c->flush_ms;
    cfg.buffer_mode = c->mode;
    cfg.block_timeout_ms = 2;
    ck_assert_msg(mantra_session_start(&l->id, &cfg) == 0, "start %s (%s): %s", name, c->providers,
                  mantra_session_last_error());
}

typedef struct totals {
    uint64_t traces, events, dropped, process_info, blocked, holes;
} totals;
static totals g_tot;

typedef struct per_writer {
    uint64_t first_seq, last_seq, events, gaps_inside;
    int seen;
    int64_t first[5], last[5]; /* per event id: first and last index, -1 none */
    uint64_t count[5];
} per_writer;

static mantra_reader *g_reader; /* the reader of check_trace, freed by teardown() after a failure */

/* Reads the trace of a stopped session and checks it (the relations in the header comment). */
static void check_trace(const live *l, const mantra_session_stats *st) {
    mantra_provider_spec specs[8];
    size_t nspecs = 0;
    ck_assert_int_eq(mantra_provider_spec_parse(l->c.providers, specs, 8, &nspecs, NULL), 0);

    mantra_reader *r = g_reader = mantra_reader_new(NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_msg(mantra_reader_open_file(r, l->path) == 0, "%s: %s", l->path, mantra_reader_last_error(r));
    per_writer pw[MAX_WRITERS];
    memset(pw, 0, sizeof pw);
    for (int w = 0; w < MAX_WRITERS; w++)
        for (int k = 0; k < 5; k++)
            pw[w].first[k] = pw[w].last[k] = -1;
    uint64_t E = 0, P = 0;
    uint64_t other_seq = 0;
    const mantra_trace_event *ev;
    int rc;
    uint8_t want[DEMO_MAX_PAYLOAD];
    while ((rc = mantra_reader_next(r, &ev)) == 1) {
        const mantra_trace_metadata *md = ev->metadata;
        if (strcmp(md->provider, "Microsoft-DotNETCore-EventPipe") == 0 && md->event_id == 1) {
            P++;
            CHECK(ev->thread_id == mantra_pal_thread_id(), "%s: ProcessInfo on thread %llu", l->path,
                          (unsigned long long)ev->thread_id);
            CHECK(ev->sequence > other_seq, "%s: ProcessInfo sequence %u", l->path, ev->sequence);
            other_seq = ev->sequence;
            continue;
        }
        E++;
        CHECK(strcmp(md->provider, DEMO_PROVIDER) == 0, "%s: event of %s", l->path, md->provider);
        uint32_t id = md->event_id;
        CHECK(id >= 1 && id <= 4, "%s: Mantra-Demo event id %u", l->path, id);
        CHECK(mantra_provider_spec_enables(specs, nspecs, DEMO_PROVIDER, &mantra_Demo_events[id - 1]),
                      "%s: %s event in a session with providers %s (offset %llu)", l->path, demo_name(id),
                      l->c.providers, (unsigned long long)ev->offset);
        uint32_t w;
        uint64_t i;
        CHECK(demo_key(id, ev->payload, ev->payload_size, &w, &i) == 0, "%s: bad %s payload", l->path,
                      demo_name(id));
        CHECK(w < g_nwriters && i % 4u == id - 1u, "%s: %s payload with writer %u index %llu", l->path,
                      demo_name(id), w, (unsigned long long)i);
        demo_event e;
        demo_make(&e, w, i);
        int64_t n = demo_payload(&e, want, sizeof want);
        CHECK(n > 0, "demo_payload failed");
        CHECK((size_t)n == ev->payload_size && memcmp(want, ev->payload, (size_t)n) == 0,
                      "%s: %s of writer %u index %llu: payload differs (%zu bytes, want %lld)", l->path,
                      demo_name(id), w, (unsigned long long)i, ev->payload_size, (long long)n);
        CHECK(ev->thread_id == g_writers[w].tid && ev->capture_thread_id == g_writers[w].tid,
                      "%s: writer %u's event on thread %llu, want %llu", l->path, w,
                      (unsigned long long)ev->thread_id, (unsigned long long)g_writers[w].tid);
        per_writer *p = &pw[w];
        CHECK(ev->sequence > p->last_seq, "%s: writer %u: sequence %u after %llu", l->path, w,
                      ev->sequence, (unsigned long long)p->last_seq);
        if (p->seen)
            p->gaps_inside += ev->sequence - p->last_seq - 1u;
        else
            p->first_seq = ev->sequence;
        p->last_seq = ev->sequence;
        p->seen = 1;
        p->events++;
        CHECK(p->last[id] < (int64_t)i, "%s: writer %u: %s index %llu after %lld", l->path, w,
                      demo_name(id), (unsigned long long)i, (long long)p->last[id]);
        if (p->first[id] < 0)
            p->first[id] = (int64_t)i;
        p->last[id] = (int64_t)i;
        p->count[id]++;
    }
    ck_assert_msg(rc == 0, "%s: reader: %s", l->path, mantra_reader_last_error(r));
    ck_assert_msg(mantra_reader_complete(r), "%s: no end-of-stream tag", l->path);
    ck_assert_str_eq(mantra_reader_last_error(r), "");
    uint64_t reader_dropped = mantra_reader_get_stats(r)->dropped;
    mantra_reader_free(r);
    g_reader = NULL;

    ck_assert_uint_le(P, 1);
    ck_assert_msg(st->written == E + P, "%s: stats written %llu, trace has %llu events + %llu ProcessInfo",
                  l->path, (unsigned long long)st->written, (unsigned long long)E, (unsigned long long)P);
    ck_assert_msg(st->attempted == st->written + st->dropped, "%s: attempted %llu, written %llu, dropped %llu",
                  l->path, (unsigned long long)st->attempted, (unsigned long long)st->written,
                  (unsigned long long)st->dropped);
    if (P == 0)
        ck_assert_msg(st->dropped > 0, "%s: no ProcessInfo, and nothing dropped", l->path);
    ck_assert_uint_le(st->threads, g_nwriters + 1);
    ck_assert_uint_eq(st->files, 1);
    struct stat sb;
    ck_assert_int_eq(stat(l->path, &sb), 0);
    ck_assert_msg(st->bytes == (uint64_t)sb.st_size, "%s: stats bytes %llu, file size %lld", l->path,
                  (unsigned long long)st->bytes, (long long)sb.st_size);
    if (l->c.mode != MANTRA_BUFFER_BLOCK)
        ck_assert_uint_eq(st->blocked, 0);
    uint64_t gaps = 0, holes_all = 0;
    for (uint32_t w = 0; w < g_nwriters; w++) {
        per_writer *p = &pw[w];
        gaps += p->gaps_inside;
        uint64_t holes = 0;
        for (int k = 1; k <= 4; k++)
            if (p->count[k])
                holes += (uint64_t)(p->last[k] - p->first[k]) / 4u + 1u - p->count[k];
        ck_assert_msg(holes <= p->gaps_inside,
                      "%s: writer %u: %llu events missing between its first and last, but only %llu dropped "
                      "(sequence gaps) in between",
                      l->path, w, (unsigned long long)holes, (unsigned long long)p->gaps_inside);
        holes_all += holes;
    }
    ck_assert_msg(gaps + (P ? 0u : 1u) <= st->dropped, "%s: %llu sequence gaps between events, stats dropped %llu",
                  l->path, (unsigned long long)gaps, (unsigned long long)st->dropped);
    ck_assert_msg(reader_dropped == st->dropped, "%s: reader counts %llu dropped (sequence gaps), stats %llu",
                  l->path, (unsigned long long)reader_dropped, (unsigned long long)st->dropped);
    g_tot.traces++;
    g_tot.events += E;
    g_tot.dropped += st->dropped;
    g_tot.process_info += P;
    g_tot.blocked += st->blocked;
    g_tot.holes += holes_all;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Stops a session: its final counters in *st. */
static double stop_only(live *l, mantra_session_stats *st) {
    memset(st, 0xff, sizeof *st);
    double t0 = now_s();
    ck_assert_msg(mantra_session_stop_stats(l->id, st) == 0, "stop %s: %s", l->path, mantra_session_last_error());
    return now_s() - t0;
}

/* Checks the trace of a stopped session, then removes it (STRESS_KEEP=1 keeps the files). */
static void check_stopped(live *l, const mantra_session_stats *st, double stop_s) {
    double t1 = now_s();
    check_trace(l, st);
    if (getenv("STRESS_VERBOSE"))
        fprintf(stderr, "%s (%s, cap %llu, flush %u, mode %u): stop %.3fs, check %.3fs, written %llu, dropped %llu, "
                        "blocked %llu, bytes %llu\n",
                l->path, l->c.providers, (unsigned long long)l->c.cap, l->c.flush_ms, l->c.mode, stop_s,
                now_s() - t1, (unsigned long long)st->written, (unsigned long long)st->dropped,
                (unsigned long long)st->blocked, (unsigned long long)st->bytes);
    if (getenv("STRESS_KEEP") == NULL)
        unlink(l->path);
}

static void stop_session(live *l) {
    mantra_session_stats st;
    double t = stop_only(l, &st);
    check_stopped(l, &st, t);
}

/* ---- tests -------------------------------------------------------------------------------- */

static const int k_perm[6][3] = {{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {0, 2, 1}, {2, 0, 1}, {1, 2, 0}};

START_TEST(sessions_under_writers) {
    memset(&g_tot, 0, sizeof g_tot);
    int threadless = mantra_threadless();
    writers_start(NWRITERS, BURST_SLEEP_US, 0);
    for (int round = 0; round < g_rounds; round++) {
        int n = 1 + round % 3;
        live ls[3];
        for (int k = 0; k < n; k++) {
            conf c = {k_specs[(size_t)(round + 2 * k) % NSPECS], k_caps[(size_t)(round * 3 + k) % NCAPS],
                      k_flush[(round + k) % 4], MANTRA_BUFFER_DROP};
            if (!threadless && (round + k) % 7 == 3) {
                c.mode = MANTRA_BUFFER_BLOCK; /* writers wait for the drain, then drop */
                c.cap = 128 * 1024;
            }
            char name[64];
            snprintf(name, sizeof name, "stress-%02d-%d.nettrace", round, k);
            start_session(&ls[k], &c, name);
            wait_pumping(3u + (unsigned)((round * 7 + k * 13) % 20));
        }
        const int *order = k_perm[round % 6];
        for (int j = 0; j < 3; j++) {
            if (order[j] >= n)
                continue;
            stop_session(&ls[order[j]]);
            wait_pumping((unsigned)(round % 4));
        }
        /* a chained session: starts after this round's first stop while writers still run */
        if (round % 5 == 4) {
            live chained;
            conf c = {"Mantra-Demo:0xF:5", 0, 10, MANTRA_BUFFER_DROP};
            char name[64];
            snprintf(name, sizeof name, "stress-%02d-chained.nettrace", round);
            start_session(&chained, &c, name);
            wait_pumping(10);
            stop_session(&chained);
        }
    }
    writers_stop();
    uint64_t written = 0;
    for (uint32_t w = 0; w < g_nwriters; w++)
        written += atomic_load(&g_writers[w].ok) + atomic_load(&g_writers[w].dropped);
    fprintf(stderr,
            "stress: %d rounds, %llu traces, %llu events read, %llu dropped, %llu ProcessInfo, %llu blocked, %llu "
            "holes (all dropped), writers: %llu writes reached a session%s\n",
            g_rounds, (unsigned long long)g_tot.traces, (unsigned long long)g_tot.events,
            (unsigned long long)g_tot.dropped, (unsigned long long)g_tot.process_info,
            (unsigned long long)g_tot.blocked, (unsigned long long)g_tot.holes, (unsigned long long)written,
            threadless ? " (threadless)" : "");
    /* the run did what it is meant to: events went through and the small caps dropped some */
    ck_assert_uint_gt(g_tot.events, 0);
    ck_assert_uint_gt(g_tot.dropped, 0);
    ck_assert_uint_gt(g_tot.process_info, 0);
}
END_TEST

/* Session bits are reused: a session that stops gives its bit to the next one. Two sessions with
 * disjoint specs (A: Tick only, B: Arrays only) take turns on the same bit - B started as soon as A
 * stopped, both traces checked after B stopped, then the next A - while busy writers run on more
 * threads than there are cores. A writer preempted between loading an event's enabled mask (while
 * one session held the bit) and writing must not put the event into the next session, which does
 * not enable it: check_trace asserts that every event is enabled by its session's spec. */
START_TEST(bit_reuse_under_writers) {
    memset(&g_tot, 0, sizeof g_tot);
    /* busy writers, more threads than cores: writers get preempted in the middle of writes; only the
     * two kinds of event the sessions enable, so that most of a writer's time is spent writing them */
    writers_start(MAX_WRITERS, 0, 1);
    /* 1 MB caps bound the traces (busy writers fill them in a millisecond, then drop) */
    static const conf cs[2] = {{"Mantra-Demo:0x1:4", 1u << 20, 100, MANTRA_BUFFER_DROP},
                               {"Mantra-Demo:0x8:4", 1u << 20, 100, MANTRA_BUFFER_DROP}};
    int bit = -1;
    for (int round = 0; round < 5 * g_rounds; round++) {
        /* A, then B on A's bit at once; both live about a millisecond; checked after both stopped */
        live l[2];
        mantra_session_stats st[2];
        double t[2];
        for (int k = 0; k < 2; k++) {
            char name[64];
            snprintf(name, sizeof name, "reuse-%03d-%c.nettrace", round, "AB"[k]);
            start_session(&l[k], &cs[k], name);
            int b = mantra_session_bit(l[k].id);
            ck_assert_int_ge(b, 0);
            if (bit >= 0)
                ck_assert_int_eq(b, bit); /* the lowest free bit: always the same */
            bit = b;
            mantra_pump(); /* no wait: the sessions live as long as a start and a stop take */
            t[k] = stop_only(&l[k], &st[k]);
        }
        for (int k = 0; k < 2; k++)
            check_stopped(&l[k], &st[k], t[k]);
    }
    writers_stop();
    fprintf(stderr, "bit reuse: %llu traces, %llu events\n", (unsigned long long)g_tot.traces,
            (unsigned long long)g_tot.events);
    ck_assert_uint_gt(g_tot.events, 0);
}
END_TEST

/* After a failed assertion (CK_NOFORK: the test function is left by longjmp): stop the writers
 * and every session, so that the next test starts clean. */
static void teardown(void) {
    writers_join();
    mantra_session_stop_all();
    mantra_reader_free(g_reader);
    g_reader = NULL;
}

/* BLOCK needs a drain thread: the threadless build refuses it. */
START_TEST(block_mode_threadless) {
    if (!mantra_threadless())
        return;
    mantra_session_config cfg;
    mantra_session_config_init(&cfg);
    char path[640];
    snprintf(path, sizeof path, "%s/block.nettrace", g_dir);
    cfg.providers = "Mantra-Demo:0xF:5";
    cfg.path = path;
    cfg.buffer_mode = MANTRA_BUFFER_BLOCK;
    mantra_session_id id;
    ck_assert_int_eq(mantra_session_start(&id, &cfg), MANTRA_EUNSUPPORTED);
}
END_TEST

int main(int argc, char **argv) {
    const char *bin = getenv("MANTRA_BINARY_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/threads", bin ? bin : ".");
    mkdir(g_dir, 0777);
    if (argc > 1)
        g_rounds = atoi(argv[1]);
    if (g_rounds < 1)
        g_rounds = 1;
    if (mantra_dotnet_register() != 0) {
        fprintf(stderr, "mantra_dotnet_register failed\n");
        return 1;
    }
    /* one case per test, so that CK_RUN_CASE=rounds (or reuse) runs one of them */
    Suite *s = suite_create("session_stress");
    const struct {
        const char *name;
        const TTest *test;
    } cases[] = {{"rounds", sessions_under_writers}, {"reuse", bit_reuse_under_writers},
                 {"threadless", block_mode_threadless}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        TCase *tc = tcase_create(cases[k].name);
        tcase_set_timeout(tc, 600);
        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_test(tc, cases[k].test);
        suite_add_tcase(s, tc);
    }
    return run_suite(s, CK_NOFORK);
}
