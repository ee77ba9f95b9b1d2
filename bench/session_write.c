/* session_write - the write path of sessions: what one generated event costs when a session
 * records it, against baselines measured in the same run.
 *
 * The event is Mantra-Demo/Tick (id 1, Informational, keyword Ticks 0x1): two integers, written
 * with the generated `mantra_Demo_Tick_write(uint32_t Thread, uint64_t Index)`. Sessions have the
 * providers "Mantra-Demo:0x1:5", a cap of -b MB (default 2048, so nothing is dropped in a timed
 * loop; the drop counters are checked and reported) and, for the timed loops, output
 * MANTRA_SESSION_OUTPUT_FD to an fd on /dev/null (-O null, default) or on a file in /tmp (-O tmp).
 * A new session is started before and stopped after every timed loop (neither is timed, except in
 * e2e); the drain thread runs as it always does (it wakes every 100 ms and at each new buffer) and
 * competes for the machine's cores: its CPU time during the loop is reported ("other CPU").
 *
 * Variants (each a noinline loop; repetitions interleaved round-robin so all see the same noise):
 *   empty        loop work only: a volatile store of the loop counter            (-d N iterations)
 *   disabled     work + mantra_Demo_Tick_write(t, i), no session: the inline check (-d N)
 *   floor        work + copy of the bytes a session stores per Tick (32-byte record header
 *                {timestamp, desc, provider, seq, size} + 12 payload bytes, 48-byte stride) into a
 *                1 MB ring; the timestamp is the loop counter (no clock)           (-n N events)
 *   floor_clock  floor + clock_gettime(CLOCK_MONOTONIC) for the timestamp: the fair floor
 *   floor_tsc    floor + rdtsc for the timestamp (x86; elsewhere clock_gettime)
 *   floor_alloc  floor_clock into freshly malloc'd 1 MB buffers (first touch: page faults), as
 *                the session's buffers are (malloc'd, filled once, freed by the drain)
 *   floor_thp    floor_alloc with 2 MB buffers madvise(MADV_HUGEPAGE)'d before the first touch
 *   listener     work + Tick with a no-op mantra_set_listener() listener and no session:
 *                serialisation + dispatch, no session buffer
 *   enabled      work + Tick into a running session (one writer thread)
 *   empty2, floor2, floor_clock2, listener2, enabled2
 *                the same on two threads at once (barrier start; figure: total events/s; empty2
 *                and floor2 show what the machine itself gives a second thread)
 *   lttng, lttng2  (only in the build of bench/lttng/build.sh, MANTRA_BENCH_LTTNG) work +
 *                tracepoint(mantra_bench, tick, t, i); enabled or not as the LTTng session
 *                outside says (printed; a disabled tracepoint runs -d iterations)
 *   e2e1, e2e2   end to end into a file: session start, -E N events in total (e2e2: N/2 per
 *                thread), stop (the trace is complete); events/s and the file's MB/s
 *   parts        p_clock p_coarse p_rdtsc p_rdtscp p_xchg p_release p_fetch_add p_fetch_add2
 *                p_serialize (-p N each), p_fault (-p/1000 fresh pages, one first touch each):
 *                pieces of the write path alone, in ns over the empty loop (bench/session_profile.sh)
 *
 * Usage: session_write [-n N] [-d N] [-p N] [-E N] [-r REPS] [-b MB] [-O null|tmp] [-T PATH]
 *                      [-o LIST] [-W] [-k]
 *   -o LIST   comma-separated variants and groups: default (empty,disabled,floor,floor_clock,
 *             floor_tsc,floor_alloc,floor_thp,listener,enabled,empty2,floor2,floor_clock2,enabled2), parts,
 *             e2e (e2e1,e2e2), lttng (lttng,lttng2, the LTTng build only), all
 *   defaults  -n 2e6, -d 2e8, -p 1e7, -E 1e7, -r 5, -b 2048, -O null
 *   -W        no warm-up (callgrind); -k keep the e2e trace (-T, default /tmp/mantra-sw.PID.nettrace)
 * Figures only: exit 0 whatever the timings; non-zero on usage or setup errors.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE), CLOCK_MONOTONIC_COARSE */
#endif

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dotnet_registry.h"
#include "dotnet_writers.h"
#include "mantra/event.h"
#include "mantra/session.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_RDTSC 1
#else
#define HAVE_RDTSC 0
#endif

#ifdef MANTRA_BENCH_LTTNG
#include "mantra_bench_tp.h"
#define HAVE_LTTNG 1
#else
#define HAVE_LTTNG 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

#define MAX_REPS 101
#define MAX_THREADS 2
#define RING_BYTES (1u << 20)
#define REC_BYTES 48u /* 32-byte header + 12 payload bytes rounded up to 8, as the session stores */

/* Every loop stores its counter to its thread's sink each iteration (the "loop work", which keeps
 * the loop alive); one cache line per thread, so two threads do not share one. */
typedef struct sink_slot {
    volatile uint64_t v;
    char pad[128 - sizeof(uint64_t)];
} sink_slot;
static sink_slot g_sinks[2];

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}
static uint64_t clock_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* ---- loops ------------------------------------------------------------------------------ */

typedef struct floor_hdr {
    uint64_t ts;
    const void *desc;
    const void *provider;
    uint32_t seq, size;
} floor_hdr;
_Static_assert(sizeof(floor_hdr) == 32, "floor header");

typedef struct loop_arg {
    volatile uint64_t *sink;
    uint64_t n;
    uint32_t thread;
    uint8_t *ring;   /* floor, floor_clock: RING_BYTES */
    uint8_t **bufs;  /* floor_alloc: the buffers it allocated (freed by the caller) */
    size_t nbufs, capbufs;
} loop_arg;

NOINLINE static void loop_empty(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    for (uint64_t i = 0; i < n; i++)
        *sink = i;
}

NOINLINE static void loop_tick(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    const uint32_t t = a->thread;
    for (uint64_t i = 0; i < n; i++) {
        *sink = i;
        (void)mantra_Demo_Tick_write(t, i);
    }
}

static inline void floor_store(uint8_t *p, uint64_t ts, uint32_t seq, uint32_t t, uint64_t i) {
    floor_hdr h = {ts, &mantra_Demo_events[0], &mantra_Demo_provider, seq, 12u};
    memcpy(p, &h, sizeof h);
    memcpy(p + 32, &t, 4);
    memcpy(p + 36, &i, 8);
}

NOINLINE static void loop_floor(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    uint8_t *ring = a->ring;
    size_t used = 0;
    uint32_t seq = 1;
    for (uint64_t i = 0; i < n; i++) {
        *sink = i;
        floor_store(ring + used, i, seq++, a->thread, i);
        used += REC_BYTES;
        if (used > RING_BYTES - REC_BYTES)
            used = 0;
    }
}

NOINLINE static void loop_floor_clock(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    uint8_t *ring = a->ring;
    size_t used = 0;
    uint32_t seq = 1;
    for (uint64_t i = 0; i < n; i++) {
        *sink = i;
        floor_store(ring + used, now_ns(), seq++, a->thread, i);
        used += REC_BYTES;
        if (used > RING_BYTES - REC_BYTES)
            used = 0;
    }
}

/* floor with rdtsc for the timestamp (what an invariant-TSC clock would cost; x86 only, else
 * clock_gettime) */
NOINLINE static void loop_floor_tsc(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    uint8_t *ring = a->ring;
    size_t used = 0;
    uint32_t seq = 1;
    for (uint64_t i = 0; i < n; i++) {
        *sink = i;
#if HAVE_RDTSC
        floor_store(ring + used, (uint64_t)__rdtsc(), seq++, a->thread, i);
#else
        floor_store(ring + used, now_ns(), seq++, a->thread, i);
#endif
        used += REC_BYTES;
        if (used > RING_BYTES - REC_BYTES)
            used = 0;
    }
}

NOINLINE static void loop_floor_alloc(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    uint8_t *buf = NULL;
    size_t used = RING_BYTES;
    uint32_t seq = 1;
    for (uint64_t i = 0; i < n; i++) {
        *sink = i;
        if (used > RING_BYTES - REC_BYTES) {
            if (a->nbufs == a->capbufs) {
                size_t cap = a->capbufs ? a->capbufs * 2 : 64;
                uint8_t **nb = realloc(a->bufs, cap * sizeof *nb);
                if (!nb) {
                    fprintf(stderr, "session_write: out of memory\n");
                    exit(2);
                }
                a->bufs = nb;
                a->capbufs = cap;
            }
            buf = malloc(RING_BYTES);
            if (!buf) {
                fprintf(stderr, "session_write: out of memory\n");
                exit(2);
            }
            a->bufs[a->nbufs++] = buf;
            used = 0;
        }
        floor_store(buf + used, now_ns(), seq++, a->thread, i);
        used += REC_BYTES;
    }
}

/* floor_alloc with 2 MB buffers that ask for transparent huge pages (madvise) before the first
 * touch: one fault per 2 MB instead of one per 4 KB (what a session could do for its buffers). */
#define HUGE_BYTES (2u << 20)
NOINLINE static void loop_floor_thp(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    uint8_t *buf = NULL;
    size_t used = HUGE_BYTES;
    uint32_t seq = 1;
    for (uint64_t i = 0; i < n; i++) {
        *sink = i;
        if (used > HUGE_BYTES - REC_BYTES) {
            if (a->nbufs == a->capbufs) {
                size_t cap = a->capbufs ? a->capbufs * 2 : 64;
                uint8_t **nb = realloc(a->bufs, cap * sizeof *nb);
                if (!nb)
                    exit(2);
                a->bufs = nb;
                a->capbufs = cap;
            }
            buf = aligned_alloc(HUGE_BYTES, HUGE_BYTES);
            if (!buf)
                exit(2);
#ifdef MADV_HUGEPAGE
            (void)madvise(buf, HUGE_BYTES, MADV_HUGEPAGE);
#endif
            a->bufs[a->nbufs++] = buf;
            used = 0;
        }
        floor_store(buf + used, now_ns(), seq++, a->thread, i);
        used += REC_BYTES;
    }
}

#if HAVE_LTTNG
NOINLINE static void loop_lttng(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    const uint32_t t = a->thread;
    for (uint64_t i = 0; i < n; i++) {
        *sink = i;
        tracepoint(mantra_bench, tick, t, i);
    }
}
#endif

/* parts: one piece of the write path per iteration, next to the same volatile store */
NOINLINE static void loop_p_clock(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    for (uint64_t i = 0; i < n; i++)
        *sink = i + now_ns();
}
NOINLINE static void loop_p_coarse(loop_arg *a) {
#ifdef CLOCK_MONOTONIC_COARSE
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    for (uint64_t i = 0; i < n; i++)
        *sink = i + clock_ns(CLOCK_MONOTONIC_COARSE);
#else
    loop_empty(a);
#endif
}
NOINLINE static void loop_p_rdtsc(loop_arg *a) {
#if HAVE_RDTSC
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    for (uint64_t i = 0; i < n; i++)
        *sink = i + (uint64_t)__rdtsc();
#else
    loop_empty(a);
#endif
}
NOINLINE static void loop_p_rdtscp(loop_arg *a) {
#if HAVE_RDTSC
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    unsigned aux;
    for (uint64_t i = 0; i < n; i++)
        *sink = i + (uint64_t)__rdtscp(&aux);
#else
    loop_empty(a);
#endif
}
/* The enter/leave pair of mantra_event_write_bytes: a sequentially consistent store of the session
 * number (xchg on x86-64) and a release store of 0 (a plain mov). */
static _Atomic uint32_t g_writing;
NOINLINE static void loop_p_xchg(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    for (uint64_t i = 0; i < n; i++) {
        atomic_store(&g_writing, 1u);
        *sink = i;
        atomic_store_explicit(&g_writing, 0u, memory_order_release);
    }
}
NOINLINE static void loop_p_release(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    for (uint64_t i = 0; i < n; i++) {
        atomic_store_explicit(&g_writing, 1u, memory_order_release);
        *sink = i;
        atomic_store_explicit(&g_writing, 0u, memory_order_release);
    }
}
/* One first touch of a fresh 4 KB page per iteration (anonymous mmap of 16 MB chunks, unmapped
 * when done): the page fault a writer takes every 4096 / 48 = 85 Ticks in fresh buffer memory. */
#define FAULT_CHUNK (16u << 20)
NOINLINE static void loop_p_fault(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    uint8_t *chunk = NULL;
    size_t off = FAULT_CHUNK;
    for (uint64_t i = 0; i < n; i++) {
        if (off >= FAULT_CHUNK) {
            if (chunk)
                munmap(chunk, FAULT_CHUNK);
            void *m = mmap(NULL, FAULT_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) {
                fprintf(stderr, "session_write: mmap failed\n");
                exit(2);
            }
            chunk = m;
            off = 0;
        }
        chunk[off] = (uint8_t)i;
        off += 4096;
        *sink = i;
    }
    if (chunk)
        munmap(chunk, FAULT_CHUNK);
}

/* A relaxed fetch_add on one process-wide counter (lock xadd on x86-64), as mantra_event_write
 * counts every written event in g_written; p_fetch_add2 runs it on two threads at once (one
 * cache line shared by both: the contended cost). */
static _Atomic uint64_t g_counter;
NOINLINE static void loop_p_fetch_add(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    for (uint64_t i = 0; i < n; i++) {
        *sink = i;
        atomic_fetch_add_explicit(&g_counter, 1, memory_order_relaxed);
    }
}
/* mantra_payload_serialize of Tick's two descriptors into a thread-local 64 KB buffer (what
 * mantra_event_write does before it dispatches). */
NOINLINE static void loop_p_serialize(loop_arg *a) {
    volatile uint64_t *const sink = a->sink;
    const uint64_t n = a->n;
    static _Thread_local uint8_t out[MANTRA_MAX_PAYLOAD];
    const uint32_t t = a->thread;
    for (uint64_t i = 0; i < n; i++) {
        mantra_data d[2] = {{&t, 4, MANTRA_DATA_BYTES}, {&i, 8, MANTRA_DATA_BYTES}};
        *sink = (uint64_t)mantra_payload_serialize(d, 2, out, sizeof out);
    }
}

/* ---- variants ----------------------------------------------------------------------------- */

enum kind { K_ITER, K_EVENTS, K_PART, K_E2E, K_PAGES };
enum setup { S_NONE, S_SESSION, S_LISTENER, S_FILE, S_WARM };

/* enabled_warm: the writer's own cost with the session's buffers warm - batches of WARM_BATCH
 * events (about 2.4 MB of records, within the 16 MB of drained buffers a session keeps for
 * reuse) are timed; between batches (not timed) the drain empties the buffers. What an
 * application that does not outrun the drain pays per event. */
#define WARM_BATCH 50000u
typedef struct warm_peer {
    pthread_barrier_t start, done;
    uint64_t n, last;
} warm_peer;
static uint64_t warm_batch(volatile uint64_t *sink, uint64_t first, uint64_t n);
static void *warm_peer_main(void *arg) {
    warm_peer *p = arg;
    for (uint64_t done = 0; done < p->n; done += WARM_BATCH) {
        uint64_t k = p->n - done < WARM_BATCH ? p->n - done : WARM_BATCH;
        pthread_barrier_wait(&p->start);
        p->last = warm_batch(&g_sinks[1].v, done, k);
        pthread_barrier_wait(&p->done);
    }
    return NULL;
}
static _Atomic uint64_t g_warm_cpu; /* writer threads' CPU ns inside timed batches */
NOINLINE static uint64_t warm_batch(volatile uint64_t *sink, uint64_t first, uint64_t n) {
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns();
    for (uint64_t i = first; i < first + n; i++) {
        *sink = i;
        (void)mantra_Demo_Tick_write(0, i);
    }
    uint64_t t1 = now_ns();
    atomic_fetch_add(&g_warm_cpu, clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
    return t1 - t0;
}

typedef struct variant {
    const char *name;
    void (*fn)(loop_arg *);
    int threads;
    int kind;
    int setup;
    int ring;  /* needs a ring per thread */
    const char *what;
} variant;

static const variant k_variants[] = {
    {"empty", loop_empty, 1, K_ITER, S_NONE, 0, "loop work only (volatile store)"},
    {"disabled", loop_tick, 1, K_ITER, S_NONE, 0, "work + mantra_Demo_Tick_write, no session (inline check)"},
    {"floor", loop_floor, 1, K_EVENTS, S_NONE, 1, "work + copy 32 B header + 12 B payload into a 1 MB ring (no clock)"},
    {"floor_clock", loop_floor_clock, 1, K_EVENTS, S_NONE, 1, "floor + clock_gettime(CLOCK_MONOTONIC)"},
    {"floor_tsc", loop_floor_tsc, 1, K_EVENTS, S_NONE, 1, "floor + rdtsc for the timestamp"},
    {"floor_alloc", loop_floor_alloc, 1, K_EVENTS, S_NONE, 0, "floor_clock into fresh malloc'd 1 MB buffers"},
    {"floor_thp", loop_floor_thp, 1, K_EVENTS, S_NONE, 0, "floor_alloc with 2 MB buffers, madvise(MADV_HUGEPAGE)"},
    {"listener", loop_tick, 1, K_EVENTS, S_LISTENER, 0, "work + Tick, no-op process listener, no session"},
    {"enabled", loop_tick, 1, K_EVENTS, S_SESSION, 0, "work + Tick into a session, 1 thread"},
    {"enabled_warm", loop_tick, 1, K_EVENTS, S_WARM, 0,
     "Tick into a session, 1 thread, batches of 50000 timed while the drain keeps up (warm buffers)"},
    {"enabled_warm2", loop_tick, 2, K_EVENTS, S_WARM, 0,
     "enabled_warm on 2 threads at once (total events over the longer thread's batch time)"},
    {"empty2", loop_empty, 2, K_ITER, S_NONE, 0, "empty on 2 threads (total): the machine's own scaling"},
    {"floor2", loop_floor, 2, K_EVENTS, S_NONE, 1, "floor on 2 threads (total)"},
    {"floor_clock2", loop_floor_clock, 2, K_EVENTS, S_NONE, 1, "floor_clock on 2 threads (total)"},
    {"listener2", loop_tick, 2, K_EVENTS, S_LISTENER, 0, "listener on 2 threads (total)"},
    {"enabled2", loop_tick, 2, K_EVENTS, S_SESSION, 0, "Tick into one session from 2 threads (total)"},
#if HAVE_LTTNG
    {"lttng", loop_lttng, 1, K_EVENTS, S_NONE, 0, "work + tracepoint(mantra_bench, tick, t, i)"},
    {"lttng2", loop_lttng, 2, K_EVENTS, S_NONE, 0, "lttng on 2 threads (total)"},
#endif
    {"e2e1", loop_tick, 1, K_E2E, S_FILE, 0, "start + E Ticks into a file session + stop, 1 thread"},
    {"e2e2", loop_tick, 2, K_E2E, S_FILE, 0, "start + E Ticks (E/2 per thread) + stop, 2 threads"},
    {"p_clock", loop_p_clock, 1, K_PART, S_NONE, 0, "clock_gettime(CLOCK_MONOTONIC) (mantra_pal_now_ns)"},
    {"p_coarse", loop_p_coarse, 1, K_PART, S_NONE, 0, "clock_gettime(CLOCK_MONOTONIC_COARSE)"},
    {"p_rdtsc", loop_p_rdtsc, 1, K_PART, S_NONE, 0, "rdtsc"},
    {"p_rdtscp", loop_p_rdtscp, 1, K_PART, S_NONE, 0, "rdtscp"},
    {"p_xchg", loop_p_xchg, 1, K_PART, S_NONE, 0, "seq_cst store + release store (session enter/leave)"},
    {"p_release", loop_p_release, 1, K_PART, S_NONE, 0, "release store + release store"},
    {"p_fault", loop_p_fault, 1, K_PAGES, S_NONE, 0, "first touch of a fresh 4 KB page (-p/1000 pages)"},
    {"p_fetch_add", loop_p_fetch_add, 1, K_PART, S_NONE, 0, "relaxed fetch_add on a global counter"},
    {"p_fetch_add2", loop_p_fetch_add, 2, K_PART, S_NONE, 0,
     "the same on 2 threads, one shared counter (CPU ns/op of a thread)"},
    {"p_serialize", loop_p_serialize, 1, K_PART, S_NONE, 0, "mantra_payload_serialize of Tick's 2 fields"},
};
#define NV ((int)(sizeof k_variants / sizeof k_variants[0]))

static int vindex(const char *name) {
    for (int v = 0; v < NV; v++)
        if (strcmp(k_variants[v].name, name) == 0)
            return v;
    return -1;
}

typedef struct result {
    double ns;          /* wall ns per event (all threads together) */
    double other_cpu;   /* CPU ns per event of other threads (drain) during the timed loop */
    double writer_cpu;  /* CPU ns per event of the writer threads */
    uint64_t events, attempted, written, dropped;
    uint64_t buffers;   /* buffers the session mapped (its pool included) */
    double stop_ms;     /* session stop (not in ns) */
    double write_s, total_s; /* e2e */
    uint64_t file_bytes;
    double spread; /* threads > 1: how far apart the writers finished, as a share of the wall time */
} result;

typedef struct options {
    uint64_t n, d, p, e;
    uint32_t buffer_mb;
    int out_tmp;
    const char *trace;
    int keep;
} options;

static options g_opt;
static int g_null_fd = -1;
static char g_out_path[256];

static void noop_listener(void *ctx, const mantra_event_desc *desc, const uint8_t *payload, size_t size) {
    (void)ctx;
    (void)desc;
    (void)payload;
    (void)size;
}

/* ---- threads ------------------------------------------------------------------------------ */

typedef struct worker {
    pthread_t th;
    loop_arg arg;
    void (*fn)(loop_arg *);
    pthread_barrier_t *bar;
    uint64_t t0, t1, cpu;
} worker;

static void *worker_main(void *p) {
    worker *w = p;
    pthread_barrier_wait(w->bar);
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    w->t0 = now_ns();
    w->fn(&w->arg);
    w->t1 = now_ns();
    w->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    return NULL;
}

/* Runs fn on `threads` new threads with a barrier start; wall = last end - first start. */
static void run_threads(const variant *v, uint64_t n_per_thread, uint8_t **rings, result *r, uint64_t *wall) {
    worker w[MAX_THREADS];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)v->threads + 1);
    memset(w, 0, sizeof w);
    for (int k = 0; k < v->threads; k++) {
        w[k].arg.sink = &g_sinks[k].v;
        w[k].arg.n = n_per_thread;
        w[k].arg.thread = (uint32_t)k;
        w[k].arg.ring = rings ? rings[k] : NULL;
        w[k].fn = v->fn;
        w[k].bar = &bar;
        if (pthread_create(&w[k].th, NULL, worker_main, &w[k]) != 0) {
            fprintf(stderr, "session_write: pthread_create failed\n");
            exit(2);
        }
    }
    uint64_t p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    pthread_barrier_wait(&bar);
    uint64_t first = UINT64_MAX, last = 0, wcpu = 0, first_end = UINT64_MAX;
    for (int k = 0; k < v->threads; k++)
        pthread_join(w[k].th, NULL);
    uint64_t p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (int k = 0; k < v->threads; k++) {
        first = w[k].t0 < first ? w[k].t0 : first;
        last = w[k].t1 > last ? w[k].t1 : last;
        first_end = w[k].t1 < first_end ? w[k].t1 : first_end;
        wcpu += w[k].cpu;
        for (size_t b = 0; b < w[k].arg.nbufs; b++)
            free(w[k].arg.bufs[b]);
        free(w[k].arg.bufs);
    }
    pthread_barrier_destroy(&bar);
    uint64_t events = n_per_thread * (uint64_t)v->threads;
    *wall = last - first;
    r->events = events;
    r->ns = (double)(last - first) / (double)events;
    r->writer_cpu = (double)wcpu / (double)events;
    r->other_cpu = p1 - p0 > wcpu ? (double)(p1 - p0 - wcpu) / (double)events : 0.0;
    r->spread = last > first ? (double)(last - first_end) / (double)(last - first) : 0.0;
}

static mantra_session_id start_session(int output_file, const char *path) {
    mantra_session_config c;
    mantra_session_config_init(&c);
    c.providers = "Mantra-Demo:0x1:5";
    c.buffer_mb = g_opt.buffer_mb;
    if (output_file) {
        c.output = MANTRA_SESSION_OUTPUT_FILE;
        c.path = path;
    } else {
        c.output = MANTRA_SESSION_OUTPUT_FD;
        c.fd = g_null_fd;
    }
    mantra_session_id id;
    int rc = mantra_session_start(&id, &c);
    if (rc != 0) {
        fprintf(stderr, "session_write: mantra_session_start failed (%d): %s\n", rc, mantra_session_last_error());
        exit(2);
    }
    if (!MANTRA_Demo_Tick_enabled()) {
        fprintf(stderr, "session_write: session started but Mantra-Demo/Tick is not enabled\n");
        exit(2);
    }
    return id;
}

static void stop_session(mantra_session_id id, result *r) {
    mantra_session_stats st;
    uint64_t t0 = now_ns();
    int rc = mantra_session_stop_stats(id, &st);
    r->stop_ms = (double)(now_ns() - t0) * 1e-6;
    if (rc != 0) {
        fprintf(stderr, "session_write: mantra_session_stop failed (%d): %s\n", rc, mantra_session_last_error());
        exit(2);
    }
    r->attempted = st.attempted;
    r->written = st.written;
    r->dropped = st.dropped;
    r->buffers = st.buffers;
}

static void check_disabled(void) {
    if (MANTRA_Demo_Tick_enabled()) {
        fprintf(stderr, "session_write: Mantra-Demo/Tick unexpectedly enabled\n");
        exit(2);
    }
}

static result run_variant(int vi, int scale_down) {
    const variant *v = &k_variants[vi];
    result r;
    memset(&r, 0, sizeof r);
    uint64_t n = v->kind == K_ITER ? g_opt.d : v->kind == K_PART ? g_opt.p : v->kind == K_E2E ? g_opt.e
               : v->kind == K_PAGES ? g_opt.p / 1000 + 1 : g_opt.n;
#if HAVE_LTTNG
    if (v->fn == loop_lttng && !tracepoint_enabled(mantra_bench, tick))
        n = g_opt.d; /* a disabled tracepoint: measured like the disabled check */
#endif
    if (scale_down)
        n = n / 10 + 1;
    uint64_t per_thread = v->kind == K_E2E ? n / (uint64_t)v->threads : n;
    static uint8_t *rings[MAX_THREADS];
    if (v->ring && !rings[0])
        for (int k = 0; k < MAX_THREADS; k++) {
            rings[k] = aligned_alloc(64, RING_BYTES);
            if (!rings[k])
                exit(2);
            memset(rings[k], 0, RING_BYTES);
        }
    uint64_t wall = 0;
    switch (v->setup) {
    case S_NONE:
        check_disabled();
        run_threads(v, per_thread, v->ring ? rings : NULL, &r, &wall);
        break;
    case S_LISTENER:
        mantra_set_listener(noop_listener, NULL);
        run_threads(v, per_thread, NULL, &r, &wall);
        mantra_set_listener(NULL, NULL);
        break;
    case S_WARM: {
        mantra_session_config c;
        mantra_session_config_init(&c);
        c.providers = "Mantra-Demo:0x1:5";
        c.buffer_mb = g_opt.buffer_mb;
        c.output = MANTRA_SESSION_OUTPUT_FD;
        c.fd = g_null_fd;
        c.flush_interval_ms = 5;
        mantra_session_id id;
        if (mantra_session_start(&id, &c) != 0) {
            fprintf(stderr, "session_write: mantra_session_start failed: %s\n", mantra_session_last_error());
            exit(2);
        }
        uint64_t timed = 0;
        atomic_store(&g_warm_cpu, 0);
        warm_peer peer = {.n = per_thread};
        pthread_t th;
        if (v->threads == 2) {
            pthread_barrier_init(&peer.start, NULL, 2);
            pthread_barrier_init(&peer.done, NULL, 2);
            if (pthread_create(&th, NULL, warm_peer_main, &peer) != 0)
                exit(2);
        }
        for (uint64_t done = 0; done < per_thread; done += WARM_BATCH) {
            uint64_t k = per_thread - done < WARM_BATCH ? per_thread - done : WARM_BATCH;
            if (v->threads == 2) { /* both threads write the batch at once: the batch takes the longer */
                pthread_barrier_wait(&peer.start);
                uint64_t mine = warm_batch(&g_sinks[0].v, done, k);
                pthread_barrier_wait(&peer.done);
                timed += mine > peer.last ? mine : peer.last;
            } else {
                timed += warm_batch(&g_sinks[0].v, done, k);
            }
            struct timespec pause = {0, 20000000}; /* the drain empties the buffers meanwhile */
            nanosleep(&pause, NULL);
        }
        if (v->threads == 2) {
            pthread_join(th, NULL);
            pthread_barrier_destroy(&peer.start);
            pthread_barrier_destroy(&peer.done);
        }
        stop_session(id, &r);
        r.events = per_thread * (uint64_t)v->threads;
        r.ns = (double)timed / (double)r.events;
        r.writer_cpu = (double)atomic_load(&g_warm_cpu) / (double)r.events;
        break;
    }
    case S_SESSION: {
        mantra_session_id id = start_session(0, NULL);
        run_threads(v, per_thread, NULL, &r, &wall);
        stop_session(id, &r);
        break;
    }
    case S_FILE: {
        uint64_t t0 = now_ns();
        mantra_session_id id = start_session(1, g_opt.trace);
        run_threads(v, per_thread, NULL, &r, &wall);
        uint64_t tw = now_ns();
        stop_session(id, &r);
        uint64_t t1 = now_ns();
        r.write_s = (double)(tw - t0) * 1e-9;
        r.total_s = (double)(t1 - t0) * 1e-9;
        struct stat sb;
        r.file_bytes = stat(g_opt.trace, &sb) == 0 ? (uint64_t)sb.st_size : 0;
        if (!g_opt.keep)
            unlink(g_opt.trace);
        break;
    }
    default:
        break;
    }
    return r;
}

/* ---- statistics --------------------------------------------------------------------------- */

typedef struct stats {
    double median, min, max;
} stats;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats summarize(const double *v, int n) {
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    stats r = {(n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]), s[0], s[n - 1]};
    return r;
}

static int parse_count(const char *s, uint64_t *out) {
    char *end = NULL;
    double d = strtod(s, &end);
    if (end == s || *end != '\0' || !(d >= 1.0) || d > 1e15)
        return -1;
    *out = (uint64_t)(d + 0.5);
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: session_write [-n N] [-d N] [-p N] [-E N] [-r REPS] [-b MB] [-O null|tmp] [-T PATH] "
                    "[-o LIST] [-W] [-k]\n  variants:");
    for (int v = 0; v < NV; v++)
        fprintf(stderr, " %s", k_variants[v].name);
    fprintf(stderr, "\n  groups: default parts e2e lttng all\n");
}

static int select_list(const char *list, int *sel) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "all") == 0) {
            for (int v = 0; v < NV; v++)
                sel[v] = 1;
        } else if (strcmp(tok, "default") == 0) {
            const char *d[] = {"empty", "disabled", "floor", "floor_clock", "floor_tsc", "floor_alloc", "floor_thp", "listener",
                               "enabled", "empty2", "floor2", "floor_clock2", "enabled2"};
            for (size_t k = 0; k < sizeof d / sizeof d[0]; k++)
                sel[vindex(d[k])] = 1;
        } else if (strcmp(tok, "parts") == 0) {
            for (int v = 0; v < NV; v++)
                if (k_variants[v].kind == K_PART || k_variants[v].kind == K_PAGES)
                    sel[v] = 1;
            sel[vindex("empty")] = 1;
        } else if (strcmp(tok, "e2e") == 0) {
            sel[vindex("e2e1")] = sel[vindex("e2e2")] = 1;
        } else if (strcmp(tok, "lttng") == 0) {
            if (!HAVE_LTTNG) {
                fprintf(stderr, "session_write: built without LTTng (bench/lttng/build.sh builds session_write_lttng)\n");
                return -1;
            }
            for (int v = 0; v < NV; v++)
                if (strncmp(k_variants[v].name, "lttng", 5) == 0)
                    sel[v] = 1;
        } else if (vindex(tok) >= 0) {
            sel[vindex(tok)] = 1;
        } else {
            fprintf(stderr, "session_write: unknown variant '%s'\n", tok);
            return -1;
        }
    }
    return 0;
}

/* paired per-repetition figure: f(a[rep], b[rep]) */
static stats paired(const double *a, const double *b, int r, int ratio) {
    double d[MAX_REPS];
    for (int k = 0; k < r; k++)
        d[k] = ratio ? a[k] / b[k] : a[k] - b[k];
    return summarize(d, r);
}

int main(int argc, char **argv) {
    g_opt.n = 2000000;
    g_opt.d = 200000000;
    g_opt.p = 10000000;
    g_opt.e = 10000000;
    g_opt.buffer_mb = 2048;
    uint64_t reps = 5;
    int warmup = 1;
    int sel[NV];
    memset(sel, 0, sizeof sel);
    int any = 0;
    static char trace_default[128];
    snprintf(trace_default, sizeof trace_default, "/tmp/mantra-sw.%ld.nettrace", (long)getpid());
    g_opt.trace = trace_default;

    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "-W") == 0) {
            warmup = 0;
        } else if (strcmp(arg, "-k") == 0) {
            g_opt.keep = 1;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage();
            return 0;
        } else if (arg[0] == '-' && strlen(arg) == 2 && strchr("ndpErboOT", arg[1]) && a + 1 < argc) {
            const char *val = argv[++a];
            uint64_t x = 0;
            switch (arg[1]) {
            case 'o':
                if (select_list(val, sel) != 0) {
                    usage();
                    return 2;
                }
                any = 1;
                continue;
            case 'O':
                if (strcmp(val, "null") == 0)
                    g_opt.out_tmp = 0;
                else if (strcmp(val, "tmp") == 0)
                    g_opt.out_tmp = 1;
                else {
                    usage();
                    return 2;
                }
                continue;
            case 'T':
                g_opt.trace = val;
                continue;
            default:
                break;
            }
            if (parse_count(val, &x) != 0) {
                fprintf(stderr, "session_write: bad count '%s'\n", val);
                usage();
                return 2;
            }
            switch (arg[1]) {
            case 'n': g_opt.n = x; break;
            case 'd': g_opt.d = x; break;
            case 'p': g_opt.p = x; break;
            case 'E': g_opt.e = x; break;
            case 'r': reps = x; break;
            case 'b': g_opt.buffer_mb = (uint32_t)x; break;
            default: break;
            }
        } else {
            usage();
            return 2;
        }
    }
    if (!any)
        select_list("default", sel);
    if (reps > MAX_REPS) {
        fprintf(stderr, "session_write: at most %d repetitions\n", MAX_REPS);
        return 2;
    }
    const int r = (int)reps;

    if (mantra_dotnet_register() != 0) {
        fprintf(stderr, "session_write: mantra_dotnet_register failed\n");
        return 2;
    }
    check_disabled();
    if (g_opt.out_tmp) {
        snprintf(g_out_path, sizeof g_out_path, "/tmp/mantra-sw-out.%ld.nettrace", (long)getpid());
        g_null_fd = open(g_out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    } else {
        snprintf(g_out_path, sizeof g_out_path, "/dev/null");
        g_null_fd = open("/dev/null", O_WRONLY);
    }
    if (g_null_fd < 0) {
        perror(g_out_path);
        return 2;
    }

    printf("session_write: Mantra-Demo/Tick (2 integers); sessions \"Mantra-Demo:0x1:5\", buffer_mb %" PRIu32
           ", timed loops output FD -> %s; %d interleaved repetitions%s\n",
           g_opt.buffer_mb, g_out_path, r, warmup ? ", after one warm-up run of each (1/10 size)" : ", no warm-up");
    printf("session_write: -n %" PRIu64 " events/thread, -d %" PRIu64 " iterations (empty/disabled), -p %" PRIu64
           " (parts), -E %" PRIu64 " events (e2e, trace %s)\n",
           g_opt.n, g_opt.d, g_opt.p, g_opt.e, g_opt.trace);
#if HAVE_LTTNG
    printf("session_write: LTTng-UST tracepoint mantra_bench:tick is %s\n",
           tracepoint_enabled(mantra_bench, tick) ? "ENABLED (an LTTng session records it)" : "disabled");
#endif

    if (warmup)
        for (int v = 0; v < NV; v++)
            if (sel[v] && k_variants[v].kind != K_E2E)
                (void)run_variant(v, 1);

    static result res[NV][MAX_REPS];
    for (int rep = 0; rep < r; rep++)
        for (int v = 0; v < NV; v++)
            if (sel[v]) {
                if (g_opt.out_tmp && k_variants[v].setup == S_SESSION && ftruncate(g_null_fd, 0) == 0)
                    (void)lseek(g_null_fd, 0, SEEK_SET);
                res[v][rep] = run_variant(v, 0);
            }

    double ns[NV][MAX_REPS], evs[NV][MAX_REPS], wcpu[NV][MAX_REPS], ocpu[NV][MAX_REPS];
    printf("\n%-11s %10s %9s %9s %10s %9s %9s  %s\n", "variant", "ns/event", "min", "max", "Mevents/s", "min", "max",
           "[what]  writer-thread CPU and other-thread CPU (drain) ns/event, dropped");
    for (int v = 0; v < NV; v++) {
        if (!sel[v])
            continue;
        const variant *vv = &k_variants[v];
        uint64_t dropped = 0, attempted = 0;
        double oc[MAX_REPS], sp[MAX_REPS];
        for (int k = 0; k < r; k++) {
            ns[v][k] = res[v][k].ns;
            evs[v][k] = 1e3 / res[v][k].ns;
            oc[k] = res[v][k].other_cpu;
            sp[k] = res[v][k].spread;
            wcpu[v][k] = res[v][k].writer_cpu;
            ocpu[v][k] = res[v][k].other_cpu;
            dropped += res[v][k].dropped;
            attempted += res[v][k].attempted;
        }
        stats s = summarize(ns[v], r), e = summarize(evs[v], r), o = summarize(oc, r);
        printf("%-11s %10.3f %9.3f %9.3f %10.2f %9.2f %9.2f  [%s]", vv->name, s.median, s.min, s.max, e.median, e.min,
               e.max, vv->what);
        if (vv->setup == S_SESSION || vv->setup == S_FILE || vv->setup == S_WARM || vv->threads > 1)
            printf(" CPU writer %.1f, other %.1f ns/ev", summarize(wcpu[v], r).median, o.median);
        if (vv->threads > 1 && vv->setup != S_WARM)
            printf(", writers ended %.1f%% of the wall apart", 100.0 * summarize(sp, r).median);
        if (vv->setup == S_SESSION || vv->setup == S_FILE)
            printf(", attempted %" PRIu64 ", dropped %" PRIu64 "%s, buffers mapped %" PRIu64 " per session", attempted,
                   dropped, dropped ? "  ** DROPS: figure invalid, raise -b **" : "", res[v][r / 2].buffers);
        printf("\n");
    }

    int E = vindex("empty"), D = vindex("disabled"), F = vindex("floor"), FC = vindex("floor_clock"),
        FA = vindex("floor_alloc"), L = vindex("listener"), EN = vindex("enabled"), F2 = vindex("floor2"),
        L2 = vindex("listener2"), EN2 = vindex("enabled2"), X = vindex("e2e1"), X2 = vindex("e2e2"),
        FT = vindex("floor_thp"), E2 = vindex("empty2"), FC2 = vindex("floor_clock2"), FTS = vindex("floor_tsc"),
        W = vindex("enabled_warm"), W2 = vindex("enabled_warm2");
#if HAVE_LTTNG
    int LT = vindex("lttng"), LT2 = vindex("lttng2");
#endif
    printf("\nderived (paired per repetition: median, min, max):\n");
    if (sel[E] && sel[D]) {
        stats d = paired(ns[D], ns[E], r, 0);
        printf("summary: session_write disabled Tick check: %+.4f ns/call over the empty loop (min %+.4f, max %+.4f; "
               "empty loop %.4f ns/it; goal < 0.1 ns)\n",
               d.median, d.min, d.max, summarize(ns[E], r).median);
    }
    if (sel[EN]) {
        stats s = summarize(ns[EN], r);
        printf("summary: session_write enabled Tick into a session (1 thread, fd %s): %.2f ns/event (min %.2f, max "
               "%.2f; goal < 25 ns)\n",
               g_out_path, s.median, s.min, s.max);
        const int bases[] = {F, FC, FTS, FA, FT, L};
        for (size_t k = 0; k < sizeof bases / sizeof bases[0]; k++) {
            int b = bases[k];
            if (!sel[b])
                continue;
            stats q = paired(ns[EN], ns[b], r, 1), d = paired(ns[EN], ns[b], r, 0);
            printf("summary: session_write enabled / %s: %.2fx (min %.2fx, max %.2fx); difference %+.2f ns "
                   "(min %+.2f, max %+.2f); %s %.2f ns/event\n",
                   k_variants[b].name, q.median, q.min, q.max, d.median, d.min, d.max, k_variants[b].name,
                   summarize(ns[b], r).median);
        }
        if (sel[E]) {
            stats d = paired(ns[EN], ns[E], r, 0);
            printf("summary: session_write enabled - empty loop: %+.2f ns/event (min %+.2f, max %+.2f)\n", d.median,
                   d.min, d.max);
        }
#if HAVE_LTTNG
        if (sel[LT]) {
            stats q = paired(ns[EN], ns[LT], r, 1);
            printf("summary: session_write enabled / lttng: %.2fx (min %.2fx, max %.2fx); lttng %.2f ns/event\n",
                   q.median, q.min, q.max, summarize(ns[LT], r).median);
        }
#endif
    }
#if HAVE_LTTNG
    if (sel[LT]) {
        stats s = summarize(ns[LT], r);
        printf("summary: session_write lttng tracepoint (%s): %.3f ns/call (min %.3f, max %.3f)\n",
               tracepoint_enabled(mantra_bench, tick) ? "enabled" : "disabled", s.median, s.min, s.max);
        const int bases[] = {E, F, FC};
        for (size_t k = 0; k < sizeof bases / sizeof bases[0]; k++) {
            int b = bases[k];
            if (!sel[b])
                continue;
            stats q = paired(ns[LT], ns[b], r, 1), d = paired(ns[LT], ns[b], r, 0);
            printf("summary: session_write lttng / %s: %.3fx (min %.3fx, max %.3fx); difference %+.4f ns (min %+.4f, "
                   "max %+.4f)\n",
                   k_variants[b].name, q.median, q.min, q.max, d.median, d.min, d.max);
        }
    }
#endif
    const struct {
        int two, one;
    } scal[] = {
        {EN2, EN}, {W2, W}, {E2, E}, {F2, F}, {FC2, FC}, {L2, L},
#if HAVE_LTTNG
        {LT2, LT},
#endif
    };
    for (size_t k = 0; k < sizeof scal / sizeof scal[0]; k++) {
        if (!sel[scal[k].two] || !sel[scal[k].one])
            continue;
        stats q = paired(evs[scal[k].two], evs[scal[k].one], r, 1);
        printf("summary: session_write 2 threads / 1 thread, %s/%s: %.2fx total events/s (min %.2fx, max %.2fx); "
               "%.1f vs %.1f Mevents/s%s\n",
               k_variants[scal[k].two].name, k_variants[scal[k].one].name, q.median, q.min, q.max,
               summarize(evs[scal[k].two], r).median, summarize(evs[scal[k].one], r).median,
               scal[k].two == EN2 || scal[k].two == W2 ? " (goal >= 1.8x)" : "");
        /* The same from CPU time, which the other processes on a shared machine disturb less: a
         * writer's CPU ns per event alone and with a second writer (contention shows here), and
         * what 2 idle cores would give when the drain's CPU must fit on them too. */
        int two = scal[k].two, one = scal[k].one;
        double c1[MAX_REPS], c2[MAX_REPS], pr[MAX_REPS], pd[MAX_REPS];
        for (int j = 0; j < r; j++) {
            c1[j] = wcpu[one][j];
            c2[j] = wcpu[two][j];
            pr[j] = 2.0 * wcpu[one][j] / wcpu[two][j];
            double w1 = wcpu[one][j] > ocpu[one][j] ? wcpu[one][j] : ocpu[one][j];
            pd[j] = 2.0 * w1 / (wcpu[two][j] + ocpu[two][j]);
        }
        stats a1 = summarize(c1, r), a2 = summarize(c2, r), q1 = summarize(pr, r), q2 = summarize(pd, r);
        printf("summary: session_write   CPU view %s/%s: writer CPU %.2f ns/event with 1 thread, %.2f with 2 "
               "(per event, both threads' CPU summed); 2 x ratio = %.2fx (min %.2fx, max %.2fx); with the "
               "other threads' CPU on the same 2 cores: %.2fx (min %.2fx, max %.2fx)\n",
               k_variants[two].name, k_variants[one].name, a1.median, a2.median, q1.median, q1.min, q1.max, q2.median,
               q2.min, q2.max);
    }
    for (int v = 0; v < NV; v++) {
        if (!sel[v] || k_variants[v].kind != K_PART || !sel[E])
            continue;
        /* several threads: CPU ns per op of one thread (a shared machine may not run them at once;
         * then the wall time says nothing about contention, the CPU time still does) */
        stats d = paired(k_variants[v].threads > 1 ? wcpu[v] : ns[v], ns[E], r, 0);
        printf("summary: session_write part %-11s %+7.2f ns/op over the empty loop (min %+.2f, max %+.2f)  [%s]\n",
               k_variants[v].name, d.median, d.min, d.max, k_variants[v].what);
    }
    int PF = vindex("p_fault");
    if (sel[PF]) {
        stats pf = summarize(ns[PF], r);
        printf("summary: session_write part p_fault     %7.0f ns per fresh 4 KB page (min %.0f, max %.0f) = %.1f ns per "
               "48-byte Tick record written into fresh memory (85 per page)\n",
               pf.median, pf.min, pf.max, pf.median * 48.0 / 4096.0);
    }
    const int xs[] = {X, X2};
    for (size_t k = 0; k < 2; k++) {
        int v = xs[k];
        if (!sel[v])
            continue;
        double eps[MAX_REPS], mbs[MAX_REPS], ws[MAX_REPS], ts[MAX_REPS], stop[MAX_REPS];
        uint64_t dropped = 0, bytes = 0;
        for (int j = 0; j < r; j++) {
            const result *x = &res[v][j];
            eps[j] = (double)x->events / x->total_s;
            mbs[j] = (double)x->file_bytes / 1e6 / x->total_s;
            ws[j] = x->write_s;
            ts[j] = x->total_s;
            stop[j] = x->stop_ms;
            dropped += x->dropped;
            bytes = x->file_bytes;
        }
        stats a = summarize(eps, r), b = summarize(mbs, r), c = summarize(ws, r), d = summarize(ts, r),
              s = summarize(stop, r);
        printf("summary: session_write %s end to end into %s, %" PRIu64 " events, %d thread(s), stop included: %.2f "
               "Mevents/s (min %.2f, max %.2f), file %.1f MB at %.1f MB/s (min %.1f, max %.1f); write %.3f s, "
               "total %.3f s (min %.3f, max %.3f), stop %.0f ms; dropped %" PRIu64 "\n",
               k_variants[v].name, g_opt.trace, res[v][0].events, k_variants[v].threads, a.median / 1e6, a.min / 1e6,
               a.max / 1e6, (double)bytes / 1e6, b.median, b.min, b.max, c.median, d.median, d.min, d.max, s.median,
               dropped);
    }
    close(g_null_fd);
    if (g_opt.out_tmp)
        unlink(g_out_path);
    printf("sink %" PRIu64 "\n", (uint64_t)(g_sinks[0].v + g_sinks[1].v));
    return 0;
}
