/* The session write path's settings (runtime/src/session/thread_buffers.c, session.c): the pool of
 * buffers mapped at start (MANTRA_SESSION_POOL_MB, at most a quarter of the cap; none in the
 * threadless build), writers that run through more than the pool while the drain recycles it, and
 * the writers' fence (MANTRA_SESSION_FENCE=seqcst, else membarrier where the host has it; never in
 * a ThreadSanitizer build). The fence is decided once per process: ctest runs this file twice,
 * test_session_writer (MANTRA_EXPECT_FENCE=auto) and test_session_writer_seqcst
 * (MANTRA_SESSION_FENCE=seqcst, MANTRA_EXPECT_FENCE=seqcst). */
#define _DEFAULT_SOURCE /* mincore(2) */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/pump.h"
#include "mantra/session.h"
#include "session/session-internal.h"
#include "session_test_util.h"

#define DEMO_TICKS "Mantra-Demo:0x1:5"
#define MB (UINT64_C(1) << 20)

/* The stats of session id once it has mapped `buffers` buffers (the start populates the pool's
 * first 2 MB, the drain thread the rest: thread_buffers.c, ss_fill_pool): at most 10 s, then the
 * stats as they are. */
static void stats_with_buffers(mantra_session_id id, uint64_t buffers, mantra_session_stats *st) {
    for (int ms = 0; ms < 10000; ms++) {
        ck_assert_int_eq(mantra_session_get_stats(id, st), 0);
        if (st->buffers >= buffers)
            break;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
}

/* Starts a file session with the cap and MANTRA_SESSION_POOL_MB = env (NULL: unset) and returns
 * its stats before any event, once the pool has `buffers` buffers (stats_with_buffers). */
static void pool_after_start(const char *env, uint64_t cap, uint64_t buffers, mantra_session_stats *st) {
    if (env)
        setenv("MANTRA_SESSION_POOL_MB", env, 1);
    else
        unsetenv("MANTRA_SESSION_POOL_MB");
    mantra_session_id id = st_start_file(DEMO_TICKS, st_path("pool.nettrace"), cap);
    stats_with_buffers(id, buffers, st);
    ck_assert_int_eq(mantra_session_stop(id), 0);
    unsetenv("MANTRA_SESSION_POOL_MB");
}

/* The buffer header is the pool's too: buffer_bytes counts the mappings, headers included. The
 * threadless build maps no pool (checked below with mantra_threadless(): MANTRA_THREADLESS is the
 * library's compile definition, not the tests'). */
#define POOL(n, bytes) (n), (bytes)

START_TEST(pool_size_from_env_and_cap) {
    static const struct {
        const char *env;
        uint64_t cap;
        uint64_t buffers, bytes;
    } cases[] = {
        {NULL, 256 * MB, POOL(16u, 16 * MB)},     /* default: 16 MB in 1 MB buffers, ... */
        {NULL, 1024 * MB, POOL(16u, 16 * MB)},    /* ... whatever the cap (no longer a 32nd of it) */
        {NULL, 2048 * MB, POOL(16u, 16 * MB)},
        {NULL, 8192 * MB, POOL(16u, 16 * MB)},
        {NULL, 10 * MB, POOL(3u, 10 * MB / 4)},   /* and at most a quarter of the cap */
        {"abc", 2048 * MB, POOL(16u, 16 * MB)},   /* not a number: the default */
        {"4", 256 * MB, POOL(4u, 4 * MB)},        /* asked for */
        {"0", 256 * MB, POOL(0u, 0)},             /* no pool */
        {"64", 2048 * MB, POOL(64u, 64 * MB)},    /* larger than the default spare budget */
        {"4096", 10 * MB, POOL(3u, 10 * MB / 4)}, /* at most a quarter of the cap: 1 + 1 + 0.5 MB */
        {"abc", 256 * MB, POOL(16u, 16 * MB)},    /* not a number: the default */
        {"-1", 256 * MB, POOL(16u, 16 * MB)},
        {"4097", 256 * MB, POOL(16u, 16 * MB)},   /* over the 4096 MB bound: the default */
        {"", 256 * MB, POOL(16u, 16 * MB)},
        {"00004", 256 * MB, POOL(4u, 4 * MB)},    /* leading zeros: a decimal number (mantra_pal_getenv_u32) */
        {"4 ", 256 * MB, POOL(16u, 16 * MB)},     /* a blank: the default */
        {"1", 256 * 1024, POOL(0u, 0)},           /* a quarter of 256 KB is under one 100 KB buffer */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mantra_session_stats st;
        uint64_t want_buffers = mantra_threadless() ? 0u : cases[k].buffers;
        uint64_t want_bytes = mantra_threadless() ? 0u : cases[k].bytes;
        pool_after_start(cases[k].env, cases[k].cap, want_buffers, &st);
        ck_assert_msg(st.buffers == want_buffers && st.buffer_bytes == want_bytes,
                      "case %zu (%s, cap %llu): %llu buffers, %llu bytes", k, cases[k].env ? cases[k].env : "unset",
                      (unsigned long long)cases[k].cap, (unsigned long long)st.buffers,
                      (unsigned long long)st.buffer_bytes);
    }
}
END_TEST

/* A writer that runs through several times the pool: nothing is lost, and the trace holds every
 * event (the drain is woken when the pool is half empty and gives drained buffers back). */
START_TEST(writer_runs_through_the_pool) {
    setenv("MANTRA_SESSION_POOL_MB", "1", 1);
    mantra_session_id id = st_start_file(DEMO_TICKS, st_path("pool_run.nettrace"), 256 * MB);
    unsetenv("MANTRA_SESSION_POOL_MB");
    const uint32_t n = 200000; /* 48 bytes each: 9.2 MB of records */
    for (uint32_t i = 0; i < n; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(7, i), MANTRA_WRITE_OK);
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    ck_assert_uint_eq(st.attempted, n + 1u); /* + ProcessInfo */
    ck_assert_uint_eq(st.written, n + 1u);
    ck_assert_uint_eq(st.dropped, 0);
    ck_assert_uint_eq(st.threads, 1);
    readback rb;
    st_read_trace(st_path("pool_run.nettrace"), &rb, NULL, NULL);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.demo[1], n);
    ck_assert_uint_eq(rb.process_info, 1);
    ck_assert_uint_eq(rb.dropped, 0);
}
END_TEST

/* A writer that starts at once, before the drain thread has populated the pool (the start
 * populates 2 MB of it: thread_buffers.c, ss_fill_pool), here slowed to one piece every 20 ms
 * (ss_pool_fill_pause_us), and writes 7 MB of rows (500,000 Ticks of 14 bytes): it waits for the
 * pool's next buffer rather than map fresh memory, so the session maps exactly the pool's 16
 * buffers, and nothing is lost. Without the wait (the 2 ms wait for a recycled buffer only) fresh
 * buffers are mapped. */
START_TEST(early_writer_waits_for_the_pool) {
    if (mantra_threadless())
        return; /* no pool */
    unsetenv("MANTRA_SESSION_POOL_MB");
    atomic_store(&ss_pool_fill_pause_us, 20000u);
    mantra_session_id id = st_start_file(DEMO_TICKS, st_path("pool_early.nettrace"), 256 * MB);
    const uint32_t n = 500000;
    uint32_t not_ok = 0; /* counted, not asserted per event: check's assertions cost microseconds */
    for (uint32_t i = 0; i < n; i++)
        not_ok += mantra_Demo_Tick_write(7, i) != MANTRA_WRITE_OK;
    ck_assert_uint_eq(not_ok, 0);
    atomic_store(&ss_pool_fill_pause_us, 0u);
    mantra_session_stats st;
    stats_with_buffers(id, 16u, &st); /* the rest of the pool populated */
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    ck_assert_uint_eq(st.written, n + 1u); /* + ProcessInfo */
    ck_assert_uint_eq(st.dropped, 0);
    ck_assert_uint_eq(st.buffers, 16u);
    ck_assert_uint_eq(st.buffer_bytes, 16 * MB);
    readback rb;
    st_read_trace(st_path("pool_early.nettrace"), &rb, NULL, NULL);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.demo[1], n);
    ck_assert_uint_eq(rb.dropped, 0);
}
END_TEST

/* More writers than the pool has buffers, while it is populated: 20 threads, a 4 MB pool (4
 * buffers) filled one piece every 5 ms. Every event is written and none dropped: the writers
 * that find no populated buffer wait for the pool until it is all populated (then, when every
 * piece is taken, for a recycled buffer, 2 ms, and map fresh memory), never past the stop. */
typedef struct one_event_arg {
    atomic_int *go;
} one_event_arg;

static void *write_one_event(void *v) {
    one_event_arg *a = v;
    while (!atomic_load(a->go))
        ;
    ck_assert_int_eq(mantra_Demo_Tick_write(9, 1), MANTRA_WRITE_OK);
    return NULL;
}

START_TEST(more_writers_than_the_pool_while_it_fills) {
    if (mantra_threadless())
        return; /* no pool, no threads */
    setenv("MANTRA_SESSION_POOL_MB", "4", 1);
    atomic_store(&ss_pool_fill_pause_us, 5000u);
    mantra_session_id id = st_start_file(DEMO_TICKS, st_path("pool_many.nettrace"), 256 * MB);
    unsetenv("MANTRA_SESSION_POOL_MB");
    atomic_int go = 0;
    one_event_arg arg = {&go};
    pthread_t th[20];
    for (int k = 0; k < 20; k++)
        ck_assert_int_eq(pthread_create(&th[k], NULL, write_one_event, &arg), 0);
    atomic_store(&go, 1);
    for (int k = 0; k < 20; k++)
        pthread_join(th[k], NULL);
    atomic_store(&ss_pool_fill_pause_us, 0u);
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    ck_assert_uint_eq(st.written, 21u);
    ck_assert_uint_eq(st.dropped, 0);
    ck_assert_uint_eq(st.threads, 21u); /* 20 writers + the stop's ProcessInfo */
    readback rb;
    st_read_trace(st_path("pool_many.nettrace"), &rb, NULL, NULL);
    ck_assert_int_eq(rb.complete, 1);
    ck_assert_uint_eq(rb.demo[1], 20u);
    ck_assert_uint_eq(rb.dropped, 0);
}
END_TEST

/* At stop the session unmaps its whole pool, the pieces the drain gave back in the final pass
 * included, in runs of adjacent pieces (thread_buffers.c, ss_free_buffers): afterwards no page of
 * the pool's mapping is left (mincore(2) says ENOMEM for an unmapped range). 3 MB of rows first,
 * so that writers, drain and final pass all hold pieces. */
START_TEST(stop_unmaps_the_whole_pool) {
    if (mantra_threadless())
        return; /* no pool */
    unsetenv("MANTRA_SESSION_POOL_MB");
    mantra_session_id id = st_start_file(DEMO_TICKS, st_path("pool_unmap.nettrace"), 256 * MB);
    session *s = atomic_load(&ss_slots[id & 63u]);
    ck_assert_ptr_nonnull(s);
    for (uint32_t i = 0; i < 200000; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(7, i), MANTRA_WRITE_OK);
    uint8_t *base = s->pool_base;
    size_t size = (size_t)s->pool_size;
    ck_assert_ptr_nonnull(base);
    ck_assert_uint_eq(size, 16 * MB);
    unsigned char v[16 * 256]; /* 16 MB of 4 KB pages */
    ck_assert_int_eq(mincore(base, size, v), 0); /* mapped while the session runs */
    ck_assert_int_eq(mantra_session_stop(id), 0);
    errno = 0;
    ck_assert_int_eq(mincore(base, size, v), -1);
    ck_assert_int_eq(errno, ENOMEM);
    for (size_t off = 0; off < size; off += MB) /* and no piece of it alone */
        ck_assert_msg(mincore(base + off, 4096, v) == -1 && errno == ENOMEM, "piece at %zu MB still mapped", off / MB);
}
END_TEST

/* A drain that gives nothing back (its listener blocks until the writer is done): the writer uses
 * the pool up, then waits once, bounded (RECYCLE_WAIT_MS), for a recycled buffer, and then maps
 * fresh memory without waiting again - nothing lost, nothing dropped. Exact buffers: the pass that
 * blocks holds the first pool buffer (1 event); the other 15 hold 21,845 records of 48 bytes each
 * ((1 MB - 16-byte header) / 48); fresh buffers are 1 MB too (100 KB x (15 + 1) is over the 1 MB
 * maximum), so 500,000 events need ceil((500,000 - 15 x 21,845) / 21,845) = 8 fresh ones. */
/* A listener (ctx: a blocking_listener) that counts the records it sees and blocks on the first
 * until released: the drain pass that delivers it holds its buffers meanwhile. */
typedef struct blocking_listener {
    atomic_int entered, release;
    atomic_uint seen;
} blocking_listener;

static void block_on_first(void *ctx, const mantra_session_record *rec) {
    blocking_listener *l = ctx;
    (void)rec;
    atomic_fetch_add(&l->seen, 1u);
    if (atomic_exchange(&l->entered, 1) == 0)
        while (!atomic_load(&l->release)) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
}

/* A listener session of Demo ticks with a 64 MB cap (its pool: 16 MB) whose listener is l. */
static mantra_session_id start_blocking(blocking_listener *l, uint32_t flush_interval_ms) {
    unsetenv("MANTRA_SESSION_POOL_MB");
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = DEMO_TICKS;
    c.buffer_mb = 64;
    c.output = MANTRA_SESSION_OUTPUT_LISTENER;
    c.listener = block_on_first;
    c.listener_ctx = l;
    c.flush_interval_ms = flush_interval_ms;
    return st_start(&c);
}

static blocking_listener g_stuck;

START_TEST(stuck_drain_costs_one_bounded_wait) {
    if (mantra_threadless()) { /* no drain thread to block: the pump drains between writes */
        printf("stuck_drain_costs_one_bounded_wait: not applicable in the threadless build\n");
        return;
    }
    mantra_session_id id = start_blocking(&g_stuck, 1);
    ck_assert_int_eq(mantra_Demo_Tick_write(3, 0), MANTRA_WRITE_OK);
    while (!atomic_load(&g_stuck.entered)) { /* a drain pass took the first buffer and blocks */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    const uint32_t n = 500000, per_buf = (uint32_t)((MB - 16u) / 48u);
    ck_assert_uint_eq(per_buf, 21845u);
    for (uint32_t i = 1; i <= n; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(3, i), MANTRA_WRITE_OK);
    atomic_store(&g_stuck.release, 1);
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    ck_assert_uint_eq(st.attempted, n + 1u);
    ck_assert_uint_eq(st.written, n + 1u);
    ck_assert_uint_eq(st.dropped, 0);
    ck_assert_uint_eq(st.buffers, 16u + (n - 15u * per_buf + per_buf - 1u) / per_buf);
    ck_assert_uint_eq(st.buffers, 24u);
    ck_assert_uint_eq(atomic_load(&g_stuck.seen), n + 1u);
}
END_TEST

/* A wake-up that comes while the drain is in a pass is not lost: the drain passes again at once
 * instead of sleeping for its flush interval (60 s here). The first pass blocks in the listener
 * (woken by the writer once half the pool is used); the writer then writes 300,000 more events,
 * waking the drain on every new buffer; once the listener lets go, every event reaches it well
 * before the interval, without a stop. */
static blocking_listener g_wake;

START_TEST(wake_during_pass_not_lost) {
    if (mantra_threadless()) { /* no drain thread: the pump drains between writes */
        printf("wake_during_pass_not_lost: not applicable in the threadless build\n");
        return;
    }
    mantra_session_id id = start_blocking(&g_wake, 60000);
    uint32_t k = 0;
    while (!atomic_load(&g_wake.entered)) { /* until a pass started and blocks in the listener */
        ck_assert_uint_lt(k, 2000000u);
        ck_assert_int_eq(mantra_Demo_Tick_write(5, k), MANTRA_WRITE_OK);
        k++;
        if (k % 1000u == 0) {
            struct timespec us = {0, 100000};
            nanosleep(&us, NULL);
        }
    }
    const uint32_t m = 300000;
    for (uint32_t i = 0; i < m; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(5, k + i), MANTRA_WRITE_OK);
    atomic_store(&g_wake.release, 1);
    uint32_t waited_ms = 0;
    while (atomic_load(&g_wake.seen) < k + m && waited_ms < 10000u) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        waited_ms++;
    }
    uint32_t seen = atomic_load(&g_wake.seen);
    ck_assert_uint_eq(seen, k + m); /* before the stop's final pass */
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    ck_assert_uint_eq(st.written, k + m);
    ck_assert_uint_eq(st.dropped, 0);
    seen = atomic_load(&g_wake.seen);
    ck_assert_uint_eq(seen, k + m);
    printf("wake_during_pass_not_lost: %u events before the pass, all %u delivered %u ms after the release\n", k,
           k + m, waited_ms);
}
END_TEST

/* Drained buffers are reused oldest first (ss_recycle_buffers appends, ss_alloc_buffer takes the
 * first spare with room): the one drained last has its lines in the drain's CPU's cache, which a
 * writer on another CPU would have to take over line by line. Exact order, including a spare taken
 * from the end of the list (the end moves back) and one skipped for being too small. */
static buf *test_buffer(uint32_t bytes) {
    buf *b = mantra_pal_alloc_buffer(bytes);
    ck_assert_ptr_nonnull(b);
    b->size = bytes - (uint32_t)sizeof(buf);
    b->used = 0;
    b->next = NULL;
    return b;
}

/* ss_alloc_buffer(s, t, need), taken off t's list again, as the drain takes a writer's buffers
 * before it gives them back; the spare list's end is checked to end the list. */
static buf *take_spare(session *s, tss *t, uint32_t need) {
    buf *b = ss_alloc_buffer(s, t, need);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_eq(t->head, b);
    ck_assert_ptr_eq(t->tail, b);
    t->head = t->tail = NULL;
    t->nbufs = 0;
    atomic_store(&t->current, NULL);
    b->next = NULL;
    ck_assert(s->spare_last == NULL || s->spare_last->next == NULL);
    return b;
}

START_TEST(spares_reused_oldest_first) {
    session *s = calloc(1, sizeof *s);
    tss *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(mantra_pal_mutex_init(&s->lock), 0);
    s->cap = 64 * MB; /* spare budget 16 MB: every buffer below is kept */
    s->threads = t;   /* ss_free_buffers frees t */
    buf *a = test_buffer(200 * 1024), *b = test_buffer(200 * 1024), *c = test_buffer(120 * 1024),
        *d = test_buffer(200 * 1024);
    s->allocated = 720 * 1024;
    ss_recycle_buffers(s, a, 0);
    ss_recycle_buffers(s, b, 0);
    ss_recycle_buffers(s, c, 0);
    ck_assert_ptr_eq(s->spare, a);
    ck_assert_ptr_eq(s->spare_last, c);
    ck_assert_ptr_null(c->next);
    ck_assert_ptr_eq(take_spare(s, t, 1000), a); /* oldest first */
    ss_recycle_buffers(s, a, 0);                   /* spares: b c a */
    ck_assert_ptr_eq(s->spare_last, a);
    ck_assert_ptr_eq(take_spare(s, t, 1000), b);
    /* c is too small for 150 KB: a, the last spare, is taken; the list ends at c again */
    ck_assert_ptr_eq(take_spare(s, t, 150 * 1024), a);
    ck_assert_ptr_eq(s->spare, c);
    ck_assert_ptr_eq(s->spare_last, c);
    ck_assert_ptr_null(c->next);
    ss_recycle_buffers(s, d, 0); /* spares: c d */
    ck_assert_ptr_eq(s->spare_last, d);
    ck_assert_ptr_eq(take_spare(s, t, 1000), c);
    ck_assert_ptr_eq(take_spare(s, t, 1000), d);
    ck_assert_ptr_null(s->spare);
    ck_assert_ptr_null(s->spare_last);
    ck_assert_uint_eq(s->spare_bytes, 0);
    /* every buffer back (b a c d), then freed with the session's spares */
    ss_recycle_buffers(s, b, 0);
    ss_recycle_buffers(s, a, 0);
    ss_recycle_buffers(s, c, 0);
    ss_recycle_buffers(s, d, 0);
    ck_assert_ptr_eq(s->spare, b);
    ck_assert_ptr_eq(b->next, a);
    ck_assert_ptr_eq(a->next, c);
    ck_assert_ptr_eq(c->next, d);
    ck_assert_ptr_null(d->next);
    ck_assert_uint_eq(s->spare_bytes, 720 * 1024);
    ss_free_buffers(s);
    mantra_pal_mutex_destroy(&s->lock);
    free(s);
}
END_TEST

/* ---- where the drain runs (drain.c, spread_drain) ---- */

/* A bit per CPU of the threads of this process that may run on one CPU only (none of the test's
 * own threads is pinned: the drain is the one that can be). */
static uint64_t pinned_cpus(void) {
    uint64_t mask = 0;
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], line[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread has exited */
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
                char *v = line + 18;
                while (*v == ' ' || *v == '\t')
                    v++;
                if (!strpbrk(v, ",-") && atoi(v) < 64)
                    mask |= UINT64_C(1) << atoi(v);
            }
        fclose(f);
    }
    closedir(d);
    return mask;
}

typedef struct spread_writer {
    atomic_int *stop;
    int busy;
    pthread_t th;
} spread_writer;

/* busy: writes without a pause (its CPU's worth, megabytes per 20 ms pass even in a sanitizer
 * build, far over the drain's BUSY_BYTES of 64 KB); else an event a millisecond, a timer's pace
 * (a few hundred bytes per pass). */
static void *write_for_spread(void *v) {
    spread_writer *w = v;
    for (uint32_t i = 0; !atomic_load(w->stop);) {
        for (uint32_t k = 0; k < (w->busy ? 1000u : 1u); k++, i++)
            (void)mantra_Demo_Tick_write(3, i);
        if (!w->busy) {
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

/* Runs busy and slow writers into a session that writes to /dev/null (a pass every 20 ms) until
 * `until` (a mask of pinned CPUs) has been seen, or for `ms` at most; returns every pinned CPU
 * seen, and checks that none is left pinned once the session has stopped. */
static uint64_t watch_drain(uint32_t busy, uint32_t slow, uint64_t until, uint32_t ms) {
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = DEMO_TICKS;
    c.output = MANTRA_SESSION_OUTPUT_FD;
    c.fd = open("/dev/null", O_WRONLY);
    ck_assert_int_ge(c.fd, 0);
    c.buffer_mb = 64;
    c.flush_interval_ms = 20;
    mantra_session_id id = st_start(&c);
    atomic_int stop = 0;
    spread_writer w[64];
    for (uint32_t k = 0; k < busy + slow; k++) {
        w[k].stop = &stop;
        w[k].busy = k < busy;
        ck_assert_int_eq(pthread_create(&w[k].th, NULL, write_for_spread, &w[k]), 0);
    }
    uint64_t seen = 0;
    for (uint32_t t = 0; t < ms && (until == 0 || (seen & until) != until); t++) {
        seen |= pinned_cpus();
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    atomic_store(&stop, 1);
    for (uint32_t k = 0; k < busy + slow; k++)
        pthread_join(w[k].th, NULL);
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    close(c.fd);
    ck_assert_uint_eq(pinned_cpus(), 0); /* the drain gave its mask back before it ended */
    return seen;
}

/* As many busy writers as the drain has CPUs: each pass runs on the next CPU, so the drain is seen
 * pinned to every one of them. One busy writer fewer, beside a slow one (a timer, a sampler), or
 * MANTRA_DRAIN_SPREAD=0 (read at the session's start): never pinned. */
START_TEST(drain_spreads_over_the_cpus_when_writers_fill_them) {
    static uint32_t cpus[1024];
    uint32_t n = mantra_pal_thread_cpus(cpus, 1024);
    if (mantra_threadless() || n < 2 || n > 32 || cpus[n - 1] >= 64) {
        fprintf(stderr, "test_session_writer: drain_spreads: %u CPUs here (or threadless): not checked\n", n);
        return;
    }
    uint64_t all = 0;
    for (uint32_t i = 0; i < n; i++)
        all |= UINT64_C(1) << cpus[i];
    ck_assert_uint_eq(pinned_cpus(), 0);
    ck_assert_uint_eq(watch_drain(n, 0, all, 20000), all);
    ck_assert_uint_eq(watch_drain(n - 1, 1, 0, 300), 0);
    setenv("MANTRA_DRAIN_SPREAD", "0", 1);
    ck_assert_uint_eq(watch_drain(n, 0, 0, 300), 0);
    unsetenv("MANTRA_DRAIN_SPREAD");
}
END_TEST

/* Which fence the writers use, decided at the first session start of the process. */
START_TEST(writers_fence_as_configured) {
    const char *expect = getenv("MANTRA_EXPECT_FENCE");
    ck_assert_ptr_nonnull(expect);
    ck_assert_int_eq(atomic_load(&ss_asym_fence), 0); /* no session has started in this process yet */
    mantra_session_id id = st_start_file(DEMO_TICKS, st_path("fence.nettrace"), 0);
    int want = 0;
    if (strcmp(expect, "auto") == 0)
        want = SS_ASYM_FENCE && mantra_pal_heavy_fence_init();
    ck_assert_int_eq(atomic_load(&ss_asym_fence), want);
    for (uint32_t i = 0; i < 1000; i++)
        ck_assert_int_eq(mantra_Demo_Tick_write(1, i), MANTRA_WRITE_OK);
    mantra_session_stats st;
    ck_assert_int_eq(mantra_session_stop_stats(id, &st), 0);
    ck_assert_uint_eq(st.written, 1001u);
    ck_assert_int_eq(atomic_load(&ss_asym_fence), want); /* never cleared */
    readback rb;
    st_read_trace(st_path("fence.nettrace"), &rb, NULL, NULL);
    ck_assert_uint_eq(rb.demo[1], 1000u);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("session_writer");
    TCase *tc = tcase_create("writer");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, writers_fence_as_configured); /* first: before any session of this process */
    tcase_add_test(tc, pool_size_from_env_and_cap);
    tcase_add_test(tc, writer_runs_through_the_pool);
    tcase_add_test(tc, early_writer_waits_for_the_pool);
    tcase_add_test(tc, more_writers_than_the_pool_while_it_fills);
    tcase_add_test(tc, stop_unmaps_the_whole_pool);
    tcase_add_test(tc, stuck_drain_costs_one_bounded_wait);
    tcase_add_test(tc, spares_reused_oldest_first);
    tcase_add_test(tc, wake_during_pass_not_lost);
    tcase_add_test(tc, drain_spreads_over_the_cpus_when_writers_fill_them);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    /* one folder per registration: ctest runs the two at once */
    const char *expect = getenv("MANTRA_EXPECT_FENCE");
    st_init_dir(expect && strcmp(expect, "seqcst") == 0 ? "session-writer-seqcst" : "session-writer");
    if (mantra_dotnet_register() != 0)
        return 1;
    return run_suite(suite(), CK_NOFORK); /* the fence is process-wide state */
}
