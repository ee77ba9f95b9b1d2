/* Sessions, per-thread buffers and the drain thread (mantra/session.h; eventpipe-semantics.md
 * §1-§5).
 *
 * Concurrency. g_ctl (a spin lock: start, stop and registration are rare) guards the slot table
 * and the mask recomputation. g_slots[i] is what writers see. A writer announces "writing into
 * session i" in its thread record (rec->writing = i + 1, sequentially consistent) before it reads
 * g_slots[i], as EventPipe's session_write_in_progress does; stop clears the slot and then waits
 * until no thread record says i + 1, so nothing of the session is freed under a writer. Each
 * (thread, session) pair has a tss: its buffers, current buffer and sequence number; the writer
 * appends to its current buffer without a lock. The session lock is taken only to allocate a
 * buffer and by the drain, which unpublishes every current buffer (exchange with NULL), waits for
 * the writers outside the lock, then takes the buffers and merges them by timestamp. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/metadata.h"
#include "mantra/nettrace_writer.h"
#include "mantra/pump.h"
#include "mantra/reader.h"
#include "mantra/session.h"
#include "platform/platform-internal.h"
#include "session-internal.h"

#define NSLOTS 63u
#define REC_HDR 32u
#define BUF_MIN (100u * 1024u)
#define BUF_MAX (1024u * 1024u)
#define MAX_HOOKS 16u
#define KEY_CACHE 256u /* drain: direct-mapped cache of nettrace event keys */
#define SPARE_MAX (64u * 1024u * 1024u) /* drained buffers a session keeps for reuse: at most this, */
                                         /* and at most a quarter of its cap */
/* Sequence numbers of a (thread, session) start at 2, so that "1" can stand for "before the first
 * event" in a sequence point: TraceEvent (EventCache.cs NotifyDroppedEventsIfNeeded) skips the
 * drop check when the last known number is 0 in V4/V5, so drops before a thread's first written
 * event are only visible against a non-zero base (eventpipe-semantics.md §4.2 / nettrace §4.2). */
#define SEQ_FIRST 2u

typedef struct buf {
    struct buf *next;
    uint32_t size, used;
    _Alignas(8) uint8_t data[];
} buf;

typedef struct rec_hdr {
    uint64_t ts;
    const mantra_event_desc *desc;
    const mantra_provider_desc *provider;
    uint32_t seq, size;
} rec_hdr;
_Static_assert(sizeof(rec_hdr) == REC_HDR, "record header");

typedef struct thread_rec {
    struct thread_rec *next;
    _Atomic uint32_t writing; /* session index + 1 while inside a write, else 0 */
    _Atomic int free;         /* 1: its thread exited; a new thread may take it over */
    uint64_t tid;
    _Atomic uint64_t ev_written, ev_dropped; /* events through sessions (owner writes, relaxed) */
    struct {
        uint64_t id;
        struct tss *t;
    } cache[NSLOTS];
} thread_rec;

typedef struct tss {
    struct tss *next;
    thread_rec *rec;
    uint64_t tid;
    _Atomic(buf *) current;
    /* next sequence number, 64 bits wide: the trace carries its low 32 bits, and attempts made =
     * seq - SEQ_FIRST, written = attempts - dropped (owner writes, relaxed) */
    _Atomic uint64_t seq;
    _Atomic uint64_t dropped, oversized, blocked; /* owner writes, relaxed */
    _Atomic int waiting;                         /* BLOCK: waiting for space, touching no buffer */
    buf *head, *tail;                            /* session lock */
    uint32_t nbufs;
    buf *dhead, *dtail; /* drain side */
    uint32_t doff;
    uint32_t last_seq;   /* drain: sequence number of the last event handed to the output */
    int any;             /* drain: an event of this thread reached the output */
    uint32_t known_file; /* drain: file number + 1 whose writer knows this thread's base */
} tss;

enum { MODE_NORMAL = 0, MODE_START_RUNDOWN = 1, MODE_STOP_RUNDOWN = 2 };

typedef struct session {
    mantra_session_id id;
    uint32_t index;
    mantra_provider_spec *specs;
    size_t nspecs;
    mantra_session_config cfg;
    uint64_t keywords;     /* union of the entries' keywords */
    uint64_t rotate;       /* bytes; 0: no rotation */
    int mode;              /* g_ctl: MODE_* (which entries enable events) */
    _Atomic(thread_rec *) rundown_rec; /* MODE_STOP_RUNDOWN: the only thread whose writes are taken */
    _Atomic uint32_t refs; /* owner + streaming job (threadless) */
    int claimed;           /* g_ctl: a stop has begun */
    mantra_pal_mutex lock;
    mantra_pal_cond cond;  /* wakes the drain thread */
    mantra_pal_cond space; /* BLOCK: wakes writers waiting for space */
    mantra_pal_mutex drain_lock; /* one drain pass at a time */
    tss *threads; /* session lock */
    buf *spare;   /* session lock: drained buffers kept for reuse (no page faults on reuse) */
    uint64_t spare_bytes;
    uint32_t nthreads;
    uint64_t cap, allocated, buffers;
    int stopping; /* session lock: no more buffers; the drain thread ends */
    int disabled; /* session lock: writers waiting for space give up */
    _Atomic int job_stop; /* threadless: the streaming job releases its reference */
    int failed;   /* drain: output error (sticky); events are discarded */
    char errmsg[256]; /* drain: what failed */
    int auto_stopped;
    char *path;   /* copy of cfg.path (rotation opens more files) */
    mantra_sink *sink;
    mantra_nettrace_writer *w;
    mantra_nettrace_event_key pi_key;
    uint32_t file_no;      /* drain: current file number (rotation) */
    struct {
        const mantra_event_desc *desc; /* drain: event -> writer key, for the current file */
        mantra_nettrace_event_key key;
    } keys[KEY_CACHE];
    uint64_t bytes_done;   /* bytes of finished files */
    mantra_pal_thread drain;
    int has_drain;
} session;

static atomic_flag g_ctl = ATOMIC_FLAG_INIT;
static session *g_live[NSLOTS];       /* g_ctl: sessions whose events are enabled */
static session *g_taken[NSLOTS];      /* g_ctl: index in use (until stop finished) */
static _Atomic(session *) g_slots[NSLOTS];
static uint64_t g_generation;         /* g_ctl */
static _Atomic(thread_rec *) g_threads; /* push-only list of thread records */
static _Thread_local thread_rec *tl_rec;
static _Atomic uint64_t g_unrecorded_drops; /* session writes of threads without a record */
_Thread_local void *mantra__session_exclusive; /* session * while a hook or rundown runs */
/* Stopping hooks and rundown callbacks (g_ctl): function pointers of either type, stored as a
 * generic one and cast back where they are called. */
typedef struct any_cb {
    void (*fn)(void);
    void *ctx;
} any_cb;
static any_cb g_hooks[MAX_HOOKS], g_rundowns[MAX_HOOKS];
static uint32_t g_nhooks, g_nrundowns; /* g_ctl */

static const char PI_PROVIDER[] = "Microsoft-DotNETCore-EventPipe";
/* ProcessInfo (eventpipe-semantics.md §1 "Disable, step by step" item 2): provider
 * Microsoft-DotNETCore-EventPipe, id 1, LogAlways, payload CommandLine, OSInformation,
 * ArchInformation as NUL-terminated UTF-16 strings. Written here directly: libmantra does not
 * depend on generated code. */
static const mantra_event_desc g_pi_desc = {"ProcessInfo", "ProcessInfo", 0, 1, 0, 0, 0, 0, 0, 3, NULL, 0};

static void ctl_lock(void) {
    while (atomic_flag_test_and_set_explicit(&g_ctl, memory_order_acquire))
        mantra_pal_yield();
}
static void ctl_unlock(void) { atomic_flag_clear_explicit(&g_ctl, memory_order_release); }

static void release(session *s);

/* ---- masks --------------------------------------------------------------------------------- */

/* Does session s (in its current mode) enable the event? Rundown (eventpipe-semantics.md §6):
 * the rundown provider at Verbose with the rundown keywords is added; at stop it is the only
 * named entry left beside a `*` entry. */
static int session_enables(const session *s, const char *provider, const mantra_event_desc *d) {
    if (s->mode != MODE_NORMAL && strcmp(provider, MANTRA_RUNDOWN_PROVIDER) == 0) {
        mantra_provider_spec rd;
        memset(&rd, 0, sizeof rd);
        memcpy(rd.name, MANTRA_RUNDOWN_PROVIDER, sizeof MANTRA_RUNDOWN_PROVIDER);
        rd.keywords = s->cfg.rundown_keywords | (s->mode == MODE_START_RUNDOWN ? MANTRA_START_RUNDOWN_KEYWORD : 0);
        rd.level = MANTRA_LEVEL_VERBOSE;
        if (mantra_provider_spec_enables(&rd, 1, provider, d))
            return 1;
    }
    if (s->mode == MODE_STOP_RUNDOWN) {
        for (size_t i = 0; i < s->nspecs; i++)
            if (strcmp(s->specs[i].name, "*") == 0)
                return mantra_provider_spec_enables(&s->specs[i], 1, provider, d);
        return 0;
    }
    return mantra_provider_spec_enables(s->specs, s->nspecs, provider, d);
}

static void refresh_provider_locked(const mantra_provider_desc *p) {
    for (uint32_t e = 0; e < p->event_count; e++) {
        uint64_t bits = 0;
        for (uint32_t i = 0; i < NSLOTS; i++)
            if (g_live[i] && session_enables(g_live[i], p->name, &p->events[e]))
                bits |= UINT64_C(1) << i;
        mantra_atomic_u64 *en = &p->states[e].enabled;
        uint64_t old = atomic_load_explicit(en, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(en, &old, (old & MANTRA_LISTENER_BIT) | bits,
                                                      memory_order_release, memory_order_relaxed))
            ;
    }
}

static void refresh_all_locked(void) {
    uint32_t n = mantra__provider_count();
    for (uint32_t i = 0; i < n; i++)
        refresh_provider_locked(mantra__provider_at(i));
}

void mantra__session_refresh_provider(const mantra_provider_desc *provider) {
    ctl_lock();
    refresh_provider_locked(provider);
    ctl_unlock();
}

/* ---- thread records -------------------------------------------------------------------------- */

/* Zeroed memory on its own cache lines: two writer threads' records or thread states written on
 * every event must not share a line (false sharing doubled the CPU per event with two writers). */
#define CACHE_LINE 64u
static void *zalloc_line(size_t size) {
    size_t n = (size + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
    void *p = aligned_alloc(CACHE_LINE, n);
    if (p)
        memset(p, 0, n);
    return p;
}

/* Thread exit: the record stays in the list (stop and drain walk it without a lock) and is taken
 * over by the next new thread. */
static void rec_exit(void *v) {
    thread_rec *r = v;
    atomic_store(&r->free, 1);
}

static thread_rec *get_rec(void) {
    thread_rec *r = tl_rec;
    if (r != NULL)
        return r;
    for (thread_rec *x = atomic_load(&g_threads); x; x = x->next) {
        int one = 1;
        if (atomic_load_explicit(&x->free, memory_order_relaxed) &&
            atomic_compare_exchange_strong(&x->free, &one, 0)) {
            memset(x->cache, 0, sizeof x->cache);
            x->tid = mantra_pal_thread_id();
            r = x;
            break;
        }
    }
    if (!r) {
        r = zalloc_line(sizeof *r);
        if (!r)
            return NULL;
        r->tid = mantra_pal_thread_id();
        thread_rec *head = atomic_load(&g_threads);
        do
            r->next = head;
        while (!atomic_compare_exchange_weak(&g_threads, &head, r));
    }
    tl_rec = r;
    (void)mantra_pal_on_thread_exit(rec_exit, r); /* without it the record is just not recycled */
    return r;
}

/* ---- write path ---------------------------------------------------------------------------- */

/* Called with rec->writing == index + 1, so s stays alive. */
static tss *new_tss(session *s, thread_rec *r) {
    tss *t = zalloc_line(sizeof *t);
    if (!t)
        return NULL;
    t->rec = r;
    t->tid = r->tid;
    atomic_init(&t->seq, SEQ_FIRST);
    mantra_pal_mutex_lock(&s->lock);
    if (s->stopping) {
        mantra_pal_mutex_unlock(&s->lock);
        free(t);
        return NULL;
    }
    t->next = s->threads;
    s->threads = t;
    s->nthreads++;
    mantra_pal_mutex_unlock(&s->lock);
    return t;
}

static void append_buf(session *s, tss *t, buf *b) {
    (void)s;
    b->next = NULL;
    b->used = 0;
    if (t->tail)
        t->tail->next = b;
    else
        t->head = b;
    t->tail = b;
    t->nbufs++;
    atomic_store(&t->current, b);
}

static buf *try_alloc_locked(session *s, tss *t, uint32_t need) {
    if (s->stopping)
        return NULL;
    /* a drained buffer first: its pages are already mapped */
    for (buf **pp = &s->spare; *pp; pp = &(*pp)->next) {
        buf *b = *pp;
        if (b->size >= need) {
            *pp = b->next;
            s->spare_bytes -= b->size + sizeof(buf);
            append_buf(s, t, b);
            return b;
        }
    }
    uint64_t size = (uint64_t)BUF_MIN * (t->nbufs + 1); /* grows per thread, as EventPipe's */
    if (size > BUF_MAX)
        size = BUF_MAX;
    if (size < need + sizeof(buf))
        size = need + sizeof(buf);
    if (s->allocated + size > s->cap && s->allocated < s->cap && s->cap - s->allocated >= need + sizeof(buf))
        size = s->cap - s->allocated;
    if (s->allocated + size > s->cap && s->spare) {
        /* over the cap with only too-small spares: give them back and try again */
        while (s->spare) {
            buf *b = s->spare;
            s->spare = b->next;
            s->allocated -= b->size + sizeof(buf);
            mantra_pal_free_buffer(b, b->size + sizeof(buf));
        }
        s->spare_bytes = 0;
        return try_alloc_locked(s, t, need);
    }
    if (s->allocated + size > s->cap)
        return NULL;
    buf *b = mantra_pal_alloc_buffer((size_t)size);
    if (!b)
        return NULL;
    b->size = (uint32_t)(size - sizeof(buf));
    s->allocated += size;
    s->buffers++;
    append_buf(s, t, b);
    return b;
}

/* A new current buffer for t (NULL: over the cap, stopping, or out of memory). In BLOCK mode the
 * writer waits (bounded) for the drain to free space; meanwhile t->waiting tells the drain that
 * this writer touches no buffer. */
static buf *alloc_buffer(session *s, tss *t, uint32_t need) {
    mantra_pal_mutex_lock(&s->lock);
    buf *b = try_alloc_locked(s, t, need);
    if (!b && s->cfg.buffer_mode == MANTRA_BUFFER_BLOCK && !s->disabled && !s->stopping) {
        atomic_store_explicit(&t->blocked, atomic_load_explicit(&t->blocked, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        atomic_store(&t->waiting, 1);
        uint64_t deadline = mantra_pal_now_ns() + (uint64_t)s->cfg.block_timeout_ms * 1000000u;
        while (!b && !s->disabled && !s->stopping) {
            uint64_t now = mantra_pal_now_ns();
            if (now >= deadline)
                break;
            mantra_pal_cond_signal(&s->cond);
            uint64_t left = (deadline - now + 999999u) / 1000000u;
            mantra_pal_cond_timedwait(&s->space, &s->lock, (uint32_t)(left > 1000u ? 1000u : left));
            b = try_alloc_locked(s, t, need);
        }
        atomic_store(&t->waiting, 0);
    }
    /* EventPipe wakes its reader on every write that needed a buffer; here only under pressure
     * (no buffer, or more than half the budget in use). A pass takes every thread's current
     * buffer, so waking the drain per new buffer made writers and drain trade buffers back and
     * forth (each pass sent every writer to the slow path, which woke the drain again); the
     * periodic pass handles the rest. */
    if (!b || s->allocated - s->spare_bytes > s->cap / 2)
        mantra_pal_cond_signal(&s->cond);
    mantra_pal_mutex_unlock(&s->lock);
    return b;
}

static void bump(_Atomic uint64_t *c) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static tss *get_tss_slow(session *s, thread_rec *r) {
    uint32_t i = s->index;
    tss *t = new_tss(s, r);
    if (!t)
        return NULL; /* stopping or out of memory: no thread state to count in */
    r->cache[i].id = s->id;
    r->cache[i].t = t;
    return t;
}

static inline tss *get_tss(session *s, thread_rec *r) {
    uint32_t i = s->index;
    if (MANTRA_UNLIKELY(r->cache[i].id != s->id))
        return get_tss_slow(s, r);
    return r->cache[i].t;
}

/* One session; the caller has set r->writing = index + 1 and checked the slot. payload NULL: an
 * oversized event, refused but counted and given its sequence number. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int write_into(session *s, thread_rec *r, const mantra_event_desc *desc, const mantra_provider_desc *prov,
                      const uint8_t *payload, uint32_t size) {
    tss *t = get_tss(s, r);
    if (!t)
        return MANTRA_WRITE_DROPPED;
    uint64_t seq64 = atomic_load_explicit(&t->seq, memory_order_relaxed);
    atomic_store_explicit(&t->seq, seq64 + 1, memory_order_relaxed);
    uint32_t seq = (uint32_t)seq64; /* wraps at 2^32 as nettrace's does */
    if (MANTRA_UNLIKELY(payload == NULL)) {
        bump(&t->oversized);
        bump(&t->dropped);
        return MANTRA_WRITE_DROPPED;
    }
    uint32_t need = REC_HDR + ((size + 7u) & ~7u);
    buf *b = atomic_load(&t->current);
    if (b == NULL || b->size - b->used < need) {
        /* Keep the buffer alloc_buffer() returns rather than re-reading t->current: the drain may
         * unpublish it (current = NULL) at any time, and it waits for this write (r->writing) before
         * it takes the buffer, so writing into it is safe either way. */
        b = alloc_buffer(s, t, need);
    }
    if (b != NULL) {
        rec_hdr h = {mantra_pal_now_ns_fast(), desc, prov, seq, size};
        memcpy(b->data + b->used, &h, sizeof h);
        memcpy(b->data + b->used + REC_HDR, payload, size);
        b->used += need;
        return MANTRA_WRITE_OK;
    }
    bump(&t->dropped);
    return MANTRA_WRITE_DROPPED;
}

/* During stop rundown a session takes the rundown thread's writes only. */
static inline int takes_writes_of(session *s, const thread_rec *r) {
    const thread_rec *only = atomic_load_explicit(&s->rundown_rec, memory_order_relaxed);
    return !MANTRA_UNLIKELY(only != NULL) || only == r;
}

int mantra__session_write(const mantra_event_desc *desc, const mantra_event_state *state, uint64_t sessions,
                          const uint8_t *payload, uint32_t size) {
    thread_rec *r = get_rec();
    if (!r) {
        atomic_fetch_add_explicit(&g_unrecorded_drops, 1, memory_order_relaxed);
        return MANTRA_WRITE_DROPPED;
    }
    session *only = mantra__session_exclusive;
    if (MANTRA_UNLIKELY(only != NULL))
        sessions &= UINT64_C(1) << only->index; /* a stopping hook or rundown: that session only */
    const mantra_provider_desc *prov = state->runtime;
    int rc = sessions ? MANTRA_WRITE_OK : MANTRA_WRITE_DROPPED;
    while (sessions) {
        uint32_t i = (uint32_t)__builtin_ctzll(sessions);
        sessions &= sessions - 1;
        atomic_store(&r->writing, i + 1);
        session *s = atomic_load(&g_slots[i]);
        /* The caller read the mask before announcing itself: the session that set bit i may have
         * stopped since and another taken the bit over, so the bit is checked again now that the
         * slot's session cannot go away (as ep_session_write_event checks the mask). */
        if (s && (atomic_load_explicit(&state->enabled, memory_order_acquire) & (UINT64_C(1) << i)) &&
            takes_writes_of(s, r) && write_into(s, r, desc, prov, payload, size) != MANTRA_WRITE_OK)
            rc = MANTRA_WRITE_DROPPED;
        atomic_store_explicit(&r->writing, 0, memory_order_release);
    }
    if (desc) /* not for oversized events, counted by the caller */
        bump(rc == MANTRA_WRITE_OK ? &r->ev_written : &r->ev_dropped);
    return rc;
}

/* The process-wide write counters of session writes: per thread record, so that the write path
 * bumps no shared cache line (two writer threads would contend on it). */
void mantra__session_event_counts(uint64_t *written, uint64_t *dropped) {
    uint64_t w = 0, d = atomic_load_explicit(&g_unrecorded_drops, memory_order_relaxed);
    for (thread_rec *r = atomic_load(&g_threads); r; r = r->next) {
        w += atomic_load_explicit(&r->ev_written, memory_order_relaxed);
        d += atomic_load_explicit(&r->ev_dropped, memory_order_relaxed);
    }
    *written = w;
    *dropped = d;
}

/* ---- drain --------------------------------------------------------------------------------- */

static void wait_writers(uint32_t index) {
    for (thread_rec *r = atomic_load(&g_threads); r; r = r->next)
        while (atomic_load(&r->writing) == index + 1)
            mantra_pal_yield();
}

static int open_file_writer(session *s);

/* The drain runs on its own thread: the message is kept for the stop to report. */
static void drain_fail(session *s, const char *what) {
    if (!s->failed)
        snprintf(s->errmsg, sizeof s->errmsg, "%s", what && *what ? what : "output error");
    s->failed = 1;
}

/* Rotation: finish the current file (final sequence point, end tag), open the next. */
static void rotate_file(session *s) {
    int rc = mantra_nettrace_finish(s->w);
    mantra_nettrace_stats ns;
    mantra_nettrace_get_stats(s->w, &ns);
    s->bytes_done += ns.bytes;
    int crc = mantra_sink_close(s->sink);
    if (rc || crc) {
        drain_fail(s, rc ? mantra_nettrace_last_error(s->w) : mantra_sink_last_error(s->sink));
        return;
    }
    mantra_nettrace_writer_free(s->w);
    mantra_sink_free(s->sink);
    s->w = NULL;
    s->sink = NULL;
    s->file_no++;
    memset(s->keys, 0, sizeof s->keys); /* keys belong to the writer */
    if ((rc = open_file_writer(s)) != 0)
        drain_fail(s, mantra_session_last_error()); /* open_file_writer set it on this thread */
}

/* The writer must know a thread's base before its first event in this file when events before it
 * were dropped: a sequence point that lists the thread at its base makes the gap visible. */
static uint32_t thread_base(const tss *t) { return t->any ? t->last_seq : SEQ_FIRST - 1u; }

/* Makes the current file's writer know t's base (its last written sequence number, or 1 before its
 * first event) with a sequence point that lists it, unless it already does. */
static int know_thread(session *s, tss *t) {
    if (t->known_file == s->file_no + 1)
        return 0;
    t->known_file = s->file_no + 1;
    int rc = mantra_nettrace_thread_dropped(s->w, t->tid, thread_base(t));
    return rc ? rc : mantra_nettrace_sequence_point(s->w);
}

/* Before a thread's first event in a file: only needed when events before it were dropped. */
static int introduce_thread(session *s, tss *t, uint32_t next_seq) {
    if (t->known_file != s->file_no + 1 && next_seq == thread_base(t) + 1u) {
        t->known_file = s->file_no + 1; /* no gap: the reader's first-event rule is exact */
        return 0;
    }
    return know_thread(s, t);
}

static void emit(session *s, tss *t, const rec_hdr *h, const uint8_t *payload) {
    if (s->cfg.output == MANTRA_SESSION_OUTPUT_LISTENER) {
        mantra_session_record rec = {h->provider, h->provider ? h->provider->name : PI_PROVIDER, h->desc,
                                     h->ts, t->tid, h->seq, payload, h->size};
        s->cfg.listener(s->cfg.listener_ctx, &rec);
    } else {
        if (s->failed || !s->w)
            return;
        mantra_nettrace_event_key key = s->pi_key;
        int rc = introduce_thread(s, t, h->seq);
        if (!rc && h->provider) {
            uint32_t k = (uint32_t)(((uintptr_t)h->desc >> 4) % KEY_CACHE);
            if (s->keys[k].desc == h->desc) {
                key = s->keys[k].key;
            } else if ((rc = mantra_nettrace_add_event(s->w, h->provider, h->desc, &key)) == 0) {
                s->keys[k].desc = h->desc;
                s->keys[k].key = key;
            }
        }
        if (!rc) {
            mantra_nettrace_event ev = {.key = key, .timestamp = h->ts, .thread_id = t->tid,
                                        .processor_number = 0xFFFFFFFFu, .sequence = h->seq};
            rc = mantra_nettrace_write(s->w, &ev, payload, h->size);
        }
        if (rc) {
            /* ERANGE: this event refused (the reader sees its sequence number missing); else the
             * output failed, which is sticky */
            if (rc != MANTRA_ERANGE)
                drain_fail(s, mantra_nettrace_last_error(s->w));
            return;
        }
        if (s->rotate) {
            mantra_nettrace_stats ns;
            mantra_nettrace_get_stats(s->w, &ns);
            if (ns.bytes >= s->rotate) {
                t->last_seq = h->seq;
                t->any = 1;
                rotate_file(s);
                return;
            }
        }
    }
    t->last_seq = h->seq;
    t->any = 1;
}

/* One pass: events stamped before "now" (all of them when final) go out in timestamp order. */
static void drain_pass(session *s, int final) {
    mantra_pal_mutex_lock(&s->drain_lock);
    mantra_pal_mutex_lock(&s->lock);
    uint64_t stop_ts = final ? UINT64_MAX : mantra_pal_now_ns();
    for (tss *t = s->threads; t; t = t->next)
        atomic_exchange(&t->current, NULL);
    tss *first = s->threads;
    mantra_pal_mutex_unlock(&s->lock);
    /* a writer that loaded its buffer before the exchange is still inside its write, unless it is
     * waiting for space (BLOCK), when it touches no buffer */
    for (tss *t = first; t; t = t->next) /* the list only grows at its head */
        while (atomic_load(&t->rec->writing) == s->index + 1 && !atomic_load(&t->waiting))
            mantra_pal_yield();
    mantra_pal_mutex_lock(&s->lock);
    for (tss *t = first; t; t = t->next) {
        /* every buffer in the list is unpublished except a new one the writer took since */
        buf *cur = atomic_load(&t->current);
        if (!t->head)
            continue;
        buf *last = NULL;
        for (buf *b = t->head; b && b != cur; b = b->next)
            last = b;
        if (!last)
            continue;
        buf *rest = last->next;
        last->next = NULL;
        if (t->dtail)
            t->dtail->next = t->head;
        else
            t->dhead = t->head;
        t->dtail = last;
        t->head = rest;
        if (!rest)
            t->tail = NULL;
        uint32_t n = 0;
        for (buf *b = rest; b; b = b->next)
            n++;
        t->nbufs = n;
    }
    mantra_pal_mutex_unlock(&s->lock);

    buf *drained = NULL;
    for (;;) {
        tss *best = NULL;
        const rec_hdr *bh = NULL;
        for (tss *t = first; t; t = t->next) {
            while (t->dhead && t->doff >= t->dhead->used) {
                buf *b = t->dhead;
                t->dhead = b->next;
                if (!t->dhead)
                    t->dtail = NULL;
                t->doff = 0;
                b->next = drained;
                drained = b;
            }
            if (!t->dhead)
                continue;
            const rec_hdr *h = (const rec_hdr *)(const void *)(t->dhead->data + t->doff);
            if (h->ts < stop_ts && (!bh || h->ts < bh->ts)) {
                best = t;
                bh = h;
            }
        }
        if (!best)
            break;
        emit(s, best, bh, (const uint8_t *)(bh + 1));
        best->doff += REC_HDR + ((bh->size + 7u) & ~7u);
    }
    if (s->w && !final && !s->failed && mantra_nettrace_flush(s->w) != 0)
        drain_fail(s, mantra_nettrace_last_error(s->w));
    mantra_pal_mutex_lock(&s->lock);
    uint64_t spare_max = s->cap / 4 < SPARE_MAX ? s->cap / 4 : SPARE_MAX;
    while (drained) { /* kept for reuse up to spare_max bytes, the rest goes back */
        buf *b = drained;
        drained = b->next;
        uint64_t bytes = b->size + sizeof(buf);
        if (s->spare_bytes + bytes <= spare_max && !final) {
            b->next = s->spare;
            s->spare = b;
            s->spare_bytes += bytes;
        } else {
            s->allocated -= bytes;
            mantra_pal_free_buffer(b, (size_t)bytes);
        }
    }
    mantra_pal_cond_broadcast(&s->space);
    mantra_pal_mutex_unlock(&s->lock);
    mantra_pal_mutex_unlock(&s->drain_lock);
}

#ifndef MANTRA_THREADLESS
static void drain_main(void *arg) {
    session *s = arg;
    mantra_pal_mutex_lock(&s->lock);
    while (!s->stopping) {
        mantra_pal_cond_timedwait(&s->cond, &s->lock, s->cfg.flush_interval_ms);
        if (s->stopping)
            break;
        mantra_pal_mutex_unlock(&s->lock);
        drain_pass(s, 0);
        mantra_pal_mutex_lock(&s->lock);
    }
    mantra_pal_mutex_unlock(&s->lock);
}
#endif

/* Threadless streaming (eventpipe-semantics.md §8): one drain pass per pump. After an output error
 * the job stops its session and stays queued once more, so that its reference is released on the
 * next pump; after a stop it releases its reference and is done. */
#ifdef MANTRA_THREADLESS
static int stream_job(void *arg) {
    session *s = arg;
    if (atomic_load(&s->job_stop)) {
        release(s);
        return MANTRA_JOB_DONE;
    }
    drain_pass(s, 0);
    if (s->failed && !s->auto_stopped) {
        s->auto_stopped = 1;
        (void)mantra_session_stop(s->id);
    }
    return MANTRA_JOB_AGAIN;
}
#endif

/* ---- start / stop -------------------------------------------------------------------------- */

void mantra_session_config_init(mantra_session_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->fd = -1;
    cfg->buffer_mb = 256;
    cfg->sequence_point_mb = 10;
    cfg->flush_interval_ms = 100;
    cfg->block_timeout_ms = 100;
}

static void free_session(session *s) {
    for (buf *b = s->spare; b;) {
        buf *nb = b->next;
        mantra_pal_free_buffer(b, b->size + sizeof(buf));
        b = nb;
    }
    for (tss *t = s->threads; t;) {
        tss *n = t->next;
        for (buf *b = t->head; b;) {
            buf *nb = b->next;
            mantra_pal_free_buffer(b, b->size + sizeof(buf));
            b = nb;
        }
        for (buf *b = t->dhead; b;) {
            buf *nb = b->next;
            mantra_pal_free_buffer(b, b->size + sizeof(buf));
            b = nb;
        }
        free(t);
        t = n;
    }
    mantra_nettrace_writer_free(s->w);
    mantra_sink_free(s->sink);
    mantra_pal_cond_destroy(&s->cond);
    mantra_pal_cond_destroy(&s->space);
    mantra_pal_mutex_destroy(&s->drain_lock);
    mantra_pal_mutex_destroy(&s->lock);
    free(s->specs);
    free(s->path);
    free(s);
}

static void release(session *s) {
    if (atomic_fetch_sub(&s->refs, 1) == 1)
        free_session(s);
}

/* The nettrace writer over s->sink, with the ProcessInfo metadata. */
static int open_writer(session *s) {
    const mantra_session_config *c = &s->cfg;
    mantra_nettrace_options o;
    mantra_nettrace_options_init(&o);
    o.ticks_per_second = MANTRA_PAL_TICKS_PER_SECOND;
    o.sync_time_ticks = mantra_pal_now_ns();
    o.sync_time_unix_ms = mantra_pal_unix_ms();
    o.process_id = mantra_pal_pid();
    o.processor_count = mantra_pal_cpu_count();
    o.sequence_point_bytes = (uint64_t)(c->sequence_point_mb ? c->sequence_point_mb : 10) << 20;
    o.order = MANTRA_NETTRACE_GLOBAL_ORDER; /* the drain merges all threads by timestamp */
    int rc = mantra_nettrace_writer_new(&s->w, s->sink, &o);
    if (rc != 0) {
        mantra__session_set_error(s->w ? mantra_nettrace_last_error(s->w) : "cannot create the trace writer");
        return rc;
    }
    mantra_metadata_builder *b;
    if ((rc = mantra_metadata_builder_new(&b)) != 0)
        return rc;
    const uint8_t *blob;
    size_t bsize;
    rc = mantra_metadata_begin(b, 1, "ProcessInfo", 0, 0, MANTRA_LEVEL_LOG_ALWAYS, 0);
    if (!rc)
        rc = mantra_metadata_field(b, "CommandLine", MANTRA_TC_STRING);
    if (!rc)
        rc = mantra_metadata_field(b, "OSInformation", MANTRA_TC_STRING);
    if (!rc)
        rc = mantra_metadata_field(b, "ArchInformation", MANTRA_TC_STRING);
    if (!rc)
        rc = mantra_metadata_finish(b, &blob, &bsize);
    if (!rc)
        rc = mantra_nettrace_add_event_raw(s->w, PI_PROVIDER, blob, bsize, &s->pi_key);
    mantra_metadata_builder_free(b);
    return rc;
}

static int open_file_writer(session *s) {
    char path[4096];
    if (mantra_session_rotated_path(s->cfg.path, s->file_no, path, sizeof path) < 0)
        return mantra__session_set_error("output path too long"), MANTRA_ERANGE;
    int rc = mantra_sink_open_file(&s->sink, path);
    if (rc != 0) {
        mantra__session_set_error(s->sink ? mantra_sink_last_error(s->sink) : "cannot open the output");
        return rc;
    }
    return open_writer(s);
}

static int open_output(session *s) {
    const mantra_session_config *c = &s->cfg;
    int rc;
    if (c->output == MANTRA_SESSION_OUTPUT_LISTENER)
        return c->listener ? MANTRA_OK : (mantra__session_set_error("listener output needs a listener"), MANTRA_EINVAL);
    if (c->output == MANTRA_SESSION_OUTPUT_FILE) {
        if (!c->path)
            return mantra__session_set_error("file output needs a path"), MANTRA_EINVAL;
        return open_file_writer(s);
    }
    if (c->output != MANTRA_SESSION_OUTPUT_FD)
        return mantra__session_set_error("unknown output kind"), MANTRA_EINVAL;
    if (c->fd < 0)
        return mantra__session_set_error("fd output needs a file descriptor"), MANTRA_EINVAL;
    if (s->rotate)
        return mantra__session_set_error("rotation needs a file output"), MANTRA_EINVAL;
    rc = mantra_sink_open_fd(&s->sink, c->fd, 0);
    if (rc != 0) {
        mantra__session_set_error(s->sink ? mantra_sink_last_error(s->sink) : "cannot open the output");
        return rc;
    }
    return open_writer(s);
}

static void info_of(const session *s, mantra_session_info *info) {
    info->id = s->id;
    info->mask = UINT64_C(1) << s->index;
    info->keywords = s->keywords;
    info->rundown_keywords = s->cfg.rundown_keywords;
}

/* A copy of a callback table taken under g_ctl: the callbacks run without it. */
static uint32_t cb_snapshot(any_cb *dst, const any_cb *src, const uint32_t *n) {
    ctl_lock();
    uint32_t k = *n;
    memcpy(dst, src, k * sizeof *dst);
    ctl_unlock();
    return k;
}

/* Rundown (eventpipe-semantics.md §6) on the calling thread, into s only. */
static void run_rundown(session *s, int phase) {
    any_cb cbs[MAX_HOOKS];
    uint32_t n = cb_snapshot(cbs, g_rundowns, &g_nrundowns);
    mantra_session_info info;
    info_of(s, &info);
    if (phase == MANTRA_RUNDOWN_AT_START)
        info.rundown_keywords |= MANTRA_START_RUNDOWN_KEYWORD;
    void *saved = mantra__session_exclusive;
    mantra__session_exclusive = s;
    for (uint32_t i = 0; i < n; i++)
        ((mantra_rundown_fn)cbs[i].fn)(cbs[i].ctx, &info, phase);
    mantra__session_exclusive = saved;
}

int mantra_session_start(mantra_session_id *id, const mantra_session_config *cfg) {
    if (!id || !cfg)
        return mantra__session_set_error("NULL argument"), MANTRA_EINVAL;
    *id = 0;
#ifdef MANTRA_THREADLESS
    if (cfg->buffer_mode == MANTRA_BUFFER_BLOCK)
        return mantra__session_set_error("Block mode needs a drain thread: not available in the threadless build"),
               MANTRA_EUNSUPPORTED;
#endif
    if (cfg->buffer_mode > MANTRA_BUFFER_BLOCK)
        return mantra__session_set_error("unknown buffer mode"), MANTRA_EINVAL;
    session *s = calloc(1, sizeof *s);
    if (!s)
        return MANTRA_ENOMEM;
    s->cfg = *cfg;
    s->cfg.providers = NULL; /* parsed below; the caller's strings are not kept */
    if (cfg->path) {
        size_t n = strlen(cfg->path) + 1;
        if (!(s->path = malloc(n))) {
            free(s);
            return MANTRA_ENOMEM;
        }
        memcpy(s->path, cfg->path, n);
    }
    s->cfg.path = s->path;
    if (s->cfg.flush_interval_ms == 0)
        s->cfg.flush_interval_ms = 100;
    if (s->cfg.block_timeout_ms == 0)
        s->cfg.block_timeout_ms = 100;
    s->cap = cfg->buffer_bytes ? cfg->buffer_bytes : (uint64_t)(cfg->buffer_mb ? cfg->buffer_mb : 256) << 20;
    s->rotate = cfg->rotate_bytes ? cfg->rotate_bytes : (uint64_t)cfg->rotate_mb << 20;
    atomic_init(&s->refs, 1);
    s->specs = calloc(64, sizeof *s->specs);
    int rc = s->specs ? MANTRA_OK : MANTRA_ENOMEM;
    if (!rc)
        rc = mantra_provider_spec_parse(cfg->providers, s->specs, 64, &s->nspecs, NULL);
    for (size_t i = 0; !rc && i < s->nspecs; i++)
        s->keywords |= s->specs[i].keywords;
    if (!rc && mantra_pal_mutex_init(&s->lock) != 0)
        rc = MANTRA_ENOMEM;
    if (!rc && mantra_pal_mutex_init(&s->drain_lock) != 0) {
        mantra_pal_mutex_destroy(&s->lock);
        rc = MANTRA_ENOMEM;
    }
    if (!rc && mantra_pal_cond_init(&s->cond) != 0) {
        mantra_pal_mutex_destroy(&s->drain_lock);
        mantra_pal_mutex_destroy(&s->lock);
        rc = MANTRA_ENOMEM;
    }
    if (!rc && mantra_pal_cond_init(&s->space) != 0) {
        mantra_pal_cond_destroy(&s->cond);
        mantra_pal_mutex_destroy(&s->drain_lock);
        mantra_pal_mutex_destroy(&s->lock);
        rc = MANTRA_ENOMEM;
    }
    if (rc) {
        free(s->specs);
        free(s->path);
        free(s);
        return rc;
    }
    rc = open_output(s);
    if (!rc) {
        ctl_lock();
        uint32_t i = 0;
        while (i < NSLOTS && g_taken[i])
            i++;
        if (i == NSLOTS) {
            rc = MANTRA_ERANGE;
            mantra__session_set_error("too many sessions (63 beside the listener)");
        } else {
            g_taken[i] = s;
            s->index = i;
            s->id = (++g_generation << 6) | i;
        }
        ctl_unlock();
    }
#ifdef MANTRA_THREADLESS
    if (!rc) {
        atomic_fetch_add(&s->refs, 1); /* the streaming job's */
        if ((rc = mantra_queue_job(stream_job, s)) != 0) {
            atomic_fetch_sub(&s->refs, 1); /* a job that cannot be queued releases what it holds */
            mantra__session_set_error("cannot queue the streaming job (out of memory)");
        }
    }
#else
    if (!rc && (rc = mantra_pal_thread_start(&s->drain, drain_main, s)) == 0)
        s->has_drain = 1;
    else if (rc && s->id)
        mantra__session_set_error("cannot start the drain thread");
#endif
    if (rc) {
        if (s->id) {
            ctl_lock();
            g_taken[s->index] = NULL;
            ctl_unlock();
        }
        release(s);
        return rc;
    }
    ctl_lock();
    if (s->cfg.start_rundown && s->cfg.rundown_keywords && s->cfg.output != MANTRA_SESSION_OUTPUT_LISTENER)
        s->mode = MODE_START_RUNDOWN;
    g_live[s->index] = s;
    atomic_store(&g_slots[s->index], s);
    refresh_all_locked();
    ctl_unlock();
    *id = s->id;
    if (s->mode == MODE_START_RUNDOWN) {
        run_rundown(s, MANTRA_RUNDOWN_AT_START);
        ctl_lock();
        s->mode = MODE_NORMAL;
        refresh_all_locked();
        ctl_unlock();
    }
    return MANTRA_OK;
}

static session *find(mantra_session_id id) {
    uint32_t i = (uint32_t)(id & 63u);
    if (id == 0 || i >= NSLOTS)
        return NULL;
    session *s = g_taken[i];
    return s && s->id == id ? s : NULL;
}

static void collect_stats(session *s, mantra_session_stats *out) {
    memset(out, 0, sizeof *out);
    mantra_pal_mutex_lock(&s->lock);
    for (tss *t = s->threads; t; t = t->next) {
        uint64_t attempts = atomic_load_explicit(&t->seq, memory_order_relaxed) - SEQ_FIRST;
        uint64_t dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
        out->attempted += attempts;
        out->written += attempts - dropped;
        out->dropped += dropped;
        out->oversized += atomic_load_explicit(&t->oversized, memory_order_relaxed);
        out->blocked += atomic_load_explicit(&t->blocked, memory_order_relaxed);
        out->threads++;
    }
    out->buffers = s->buffers;
    mantra_pal_mutex_unlock(&s->lock);
    mantra_pal_mutex_lock(&s->drain_lock);
    out->bytes = s->bytes_done;
    if (s->w) {
        mantra_nettrace_stats ns;
        mantra_nettrace_get_stats(s->w, &ns);
        out->bytes += ns.bytes;
    }
    out->files = s->cfg.output == MANTRA_SESSION_OUTPUT_LISTENER ? 0 : s->file_no + 1;
    mantra_pal_mutex_unlock(&s->drain_lock);
}

int mantra_session_get_stats(mantra_session_id id, mantra_session_stats *out) {
    if (!out)
        return mantra__session_set_error("NULL argument"), MANTRA_EINVAL;
    ctl_lock();
    session *s = find(id);
    if (s && g_live[s->index] == s)
        atomic_fetch_add(&s->refs, 1);
    else
        s = NULL;
    ctl_unlock();
    if (!s)
        return mantra__session_set_error("unknown session id"), MANTRA_EINVAL;
    collect_stats(s, out);
    release(s);
    return MANTRA_OK;
}

int mantra_session_bit(mantra_session_id id) {
    ctl_lock();
    session *s = find(id);
    ctl_unlock();
    return s ? (int)s->index : -1;
}

static void write_process_info(session *s) {
    static uint8_t payload[MANTRA_MAX_PAYLOAD];
    char cmd[4096], os[256];
    mantra_pal_command_line(cmd, sizeof cmd);
    mantra_pal_os_info(os, sizeof os);
    mantra_data d[3] = {{cmd, 0, MANTRA_DATA_UTF8_AS_UTF16Z}, {os, 0, MANTRA_DATA_UTF8_AS_UTF16Z},
                        {mantra_pal_arch(), 0, MANTRA_DATA_UTF8_AS_UTF16Z}};
    int64_t n = mantra_payload_serialize(d, 3, payload, sizeof payload);
    if (n < 0) { /* a command line that is not UTF-8 */
        d[0].ptr = "";
        n = mantra_payload_serialize(d, 3, payload, sizeof payload);
    }
    if (n < 0)
        return;
    thread_rec *r = get_rec();
    if (!r)
        return;
    atomic_store(&r->writing, s->index + 1);
    write_into(s, r, &g_pi_desc, NULL, payload, (uint32_t)n);
    atomic_store_explicit(&r->writing, 0, memory_order_release);
}

static void run_stopping_hooks(session *s) {
    any_cb hooks[MAX_HOOKS];
    uint32_t n = cb_snapshot(hooks, g_hooks, &g_nhooks);
    mantra_session_info info;
    info_of(s, &info);
    void *saved = mantra__session_exclusive;
    mantra__session_exclusive = s;
    for (uint32_t i = 0; i < n; i++)
        ((mantra_session_stopping_fn)hooks[i].fn)(hooks[i].ctx, &info);
    mantra__session_exclusive = saved;
}

/* Events dropped after a thread's last written one: the final sequence point shows them. */
static int account_trailing_drops(session *s) {
    int rc = 0;
    for (tss *t = s->threads; t && !rc; t = t->next) {
        uint32_t n = (uint32_t)atomic_load(&t->seq) - 1u - thread_base(t);
        if (n == 0)
            continue;
        rc = know_thread(s, t);
        if (!rc)
            rc = mantra_nettrace_thread_dropped(s->w, t->tid, n);
    }
    return rc;
}

int mantra_session_stop_stats(mantra_session_id id, mantra_session_stats *out) {
    static atomic_flag stop_lock = ATOMIC_FLAG_INIT; /* one stop at a time (payload buffer) */
    ctl_lock();
    session *s = find(id);
    if (!s || g_live[s->index] != s || s->claimed) {
        ctl_unlock();
        return mantra__session_set_error(s ? "session is already stopping" : "unknown session id"), MANTRA_EINVAL;
    }
    s->claimed = 1; /* the id is validated: no second stop */
    ctl_unlock();
    /* 0. stopping hooks: before the stop takes its locks; events into this session only */
    run_stopping_hooks(s);
    while (atomic_flag_test_and_set_explicit(&stop_lock, memory_order_acquire))
        mantra_pal_yield();
    /* 1. ProcessInfo, into the stopping session (trace outputs); a drain pass first, so that a
     * full budget does not drop it */
    int trace = s->cfg.output != MANTRA_SESSION_OUTPUT_LISTENER;
    if (trace) {
        drain_pass(s, 0);
        write_process_info(s);
    }
    /* 2. disable: masks (only the rundown provider stays when rundown runs), then flush */
    int rundown = s->cfg.rundown_keywords != 0 && trace;
    ctl_lock();
    if (rundown) {
        s->mode = MODE_STOP_RUNDOWN;
        atomic_store(&s->rundown_rec, get_rec());
    } else {
        g_live[s->index] = NULL;
    }
    refresh_all_locked();
    ctl_unlock();
    drain_pass(s, 0);
    /* 3. rundown, into this session only; the drain still runs, so it has the whole budget */
    if (rundown && atomic_load(&s->rundown_rec)) {
        run_rundown(s, MANTRA_RUNDOWN_AT_STOP);
        ctl_lock();
        g_live[s->index] = NULL;
        refresh_all_locked();
        ctl_unlock();
    }
    ctl_lock();
    atomic_store(&g_slots[s->index], NULL);
    ctl_unlock();
    mantra_pal_mutex_lock(&s->lock);
    s->disabled = 1;
    mantra_pal_cond_broadcast(&s->space);
    mantra_pal_mutex_unlock(&s->lock);
    wait_writers(s->index);
    /* 4. stop the drain, flush everything */
    mantra_pal_mutex_lock(&s->lock);
    s->stopping = 1;
    mantra_pal_cond_signal(&s->cond);
    mantra_pal_mutex_unlock(&s->lock);
    if (s->has_drain)
        mantra_pal_thread_join(&s->drain);
    atomic_store(&s->job_stop, 1);
    drain_pass(s, 1);
    int rc = MANTRA_OK;
    if (s->w && !s->failed) {
        /* 5. final sequence point (with trailing drops), end tag, close */
        rc = account_trailing_drops(s);
        if (!rc)
            rc = mantra_nettrace_finish(s->w);
        if (rc)
            mantra__session_set_error(mantra_nettrace_last_error(s->w));
        int crc = mantra_sink_close(s->sink);
        if (!rc && crc) {
            rc = crc;
            mantra__session_set_error(mantra_sink_last_error(s->sink));
        }
    } else if (s->failed) {
        rc = MANTRA_EIO;
        mantra__session_set_error(s->errmsg);
        if (s->sink)
            (void)mantra_sink_close(s->sink);
    }
    atomic_flag_clear_explicit(&stop_lock, memory_order_release);
    if (out)
        collect_stats(s, out);
    ctl_lock();
    g_taken[s->index] = NULL;
    ctl_unlock();
    release(s);
    return rc;
}

int mantra_session_stop(mantra_session_id id) { return mantra_session_stop_stats(id, NULL); }

/* ---- hooks and rundown callbacks ------------------------------------------------------------ */

static int cb_add(any_cb *arr, uint32_t *n, void (*fn)(void), void *ctx) {
    if (!fn)
        return mantra__session_set_error("NULL callback"), MANTRA_EINVAL;
    ctl_lock();
    int rc = MANTRA_OK;
    uint32_t i = 0;
    while (i < *n && !(arr[i].fn == fn && arr[i].ctx == ctx))
        i++;
    if (i == *n) {
        if (*n == MAX_HOOKS) {
            rc = MANTRA_ERANGE;
        } else {
            arr[*n].fn = fn;
            arr[*n].ctx = ctx;
            (*n)++;
        }
    }
    ctl_unlock();
    if (rc)
        mantra__session_set_error("too many callbacks (16)");
    return rc;
}

static int cb_remove(any_cb *arr, uint32_t *n, void (*fn)(void), void *ctx) {
    ctl_lock();
    int rc = MANTRA_EINVAL;
    for (uint32_t i = 0; i < *n; i++)
        if (arr[i].fn == fn && arr[i].ctx == ctx) {
            memmove(&arr[i], &arr[i + 1], (*n - i - 1) * sizeof *arr);
            (*n)--;
            rc = MANTRA_OK;
            break;
        }
    ctl_unlock();
    if (rc)
        mantra__session_set_error("callback not registered");
    return rc;
}


int mantra_session_add_stopping_hook(mantra_session_stopping_fn fn, void *ctx) {
    return cb_add(g_hooks, &g_nhooks, (void (*)(void))fn, ctx);
}
int mantra_session_remove_stopping_hook(mantra_session_stopping_fn fn, void *ctx) {
    return cb_remove(g_hooks, &g_nhooks, (void (*)(void))fn, ctx);
}
int mantra_rundown_register(mantra_rundown_fn fn, void *ctx) {
    return cb_add(g_rundowns, &g_nrundowns, (void (*)(void))fn, ctx);
}
int mantra_rundown_unregister(mantra_rundown_fn fn, void *ctx) {
    return cb_remove(g_rundowns, &g_nrundowns, (void (*)(void))fn, ctx);
}

/* Oversized payloads (eventpipe-semantics.md §3 "Drop behaviour"): refused, but each session that
 * enables the event counts it and gives it a sequence number, so readers see the gap. */
void mantra__session_oversized(const mantra_event_state *state, uint64_t sessions) {
    mantra__session_write(NULL, state, sessions, NULL, 0);
}

/* ---- rotation names ------------------------------------------------------------------------ */

int mantra_session_rotated_path(const char *path, uint32_t n, char *out, size_t size) {
    if (!path || !out)
        return MANTRA_EINVAL;
    size_t len = strlen(path);
    if (n == 0) {
        if (len + 1 > size)
            return MANTRA_ERANGE;
        memcpy(out, path, len + 1);
        return (int)len;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - path) : len;
    char num[16];
    int k = snprintf(num, sizeof num, ".%u", n);
    if (stem + (size_t)k + (len - stem) + 1 > size)
        return MANTRA_ERANGE;
    memcpy(out, path, stem);
    memcpy(out + stem, num, (size_t)k);
    memcpy(out + stem + (size_t)k, path + stem, len - stem + 1);
    return (int)(len + (size_t)k);
}

/* ---- process lifetime ---------------------------------------------------------------------- */

uint32_t mantra_session_stop_all(void) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < NSLOTS; i++) {
        ctl_lock();
        session *s = g_live[i];
        mantra_session_id id = s ? s->id : 0;
        ctl_unlock();
        if (id && mantra_session_stop(id) != MANTRA_EINVAL)
            n++;
    }
    return n;
}

void mantra_shutdown(void) {
    mantra_session_stop_all();
    mantra_pump();
}
