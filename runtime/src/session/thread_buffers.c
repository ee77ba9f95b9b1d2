/* Per-thread buffers of the sessions: the thread records (one per writing thread, reused after the
 * thread exits), the (thread, session) states, buffer allocation within a session's budget (Drop and
 * Block modes), reuse of drained buffers, and freeing them. Sizes as EventPipe's
 * buffer_manager_allocate_buffer_for_thread (dotnet/runtime, src/native/eventpipe/ep-buffer-manager.c):
 * 100 KB times the thread's buffer count plus one, at most 1 MB. The write into a buffer is in
 * dispatch.c, with the rest of the write path. */
#include <stdlib.h>
#include <string.h>

#include "session-internal.h"

#define BUF_MIN (100u * 1024u)
#define BUF_MAX (1024u * 1024u)
#define SPARE_MAX (64u * 1024u * 1024u) /* drained buffers a session keeps for reuse: at most this */
                                         /* (or the pool, if larger), and at most a quarter of its cap */
#define POOL_MB_DEFAULT 16u              /* the pool mapped at start (MANTRA_SESSION_POOL_MB) unless */
                                         /* asked for: every session (each dotnet-trace or */
                                         /* dotnet-counters attach included) costs this much */
                                         /* resident memory up front */
#define POOL_MB_MAX 4096u

_Atomic(thread_rec *) ss_threads;
_Atomic uint64_t ss_unrecorded_drops;

/* ---- thread records ---------------------------------------------------------------------------- */

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

thread_rec *ss_rec_attach(void) {
    thread_rec *r = NULL;
    for (thread_rec *x = atomic_load(&ss_threads); x; x = x->next) {
        int one = 1;
        if (atomic_load_explicit(&x->free, memory_order_relaxed) &&
            atomic_compare_exchange_strong(&x->free, &one, 0)) {
            memset(x->cache, 0, sizeof x->cache);
            ss_activity_reset(x);
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
        thread_rec *head = atomic_load(&ss_threads);
        do
            r->next = head;
        while (!atomic_compare_exchange_weak(&ss_threads, &head, r));
    }
    (void)mantra_pal_on_thread_exit(rec_exit, r); /* without it the record is just not recycled */
    return r;
}

void ss_wait_writers(uint32_t index) {
    ss_writers_fence(); /* the caller cleared the slot: see session-internal.h */
    for (thread_rec *r = atomic_load(&ss_threads); r; r = r->next)
        while (atomic_load(&r->writing) == index + 1)
            mantra_pal_yield();
}

/* The process-wide write counters of session writes: per thread record, so that the write path
 * bumps no shared cache line (two writer threads would contend on it). */
void ss_event_counts(uint64_t *written, uint64_t *dropped) {
    uint64_t w = 0, d = atomic_load_explicit(&ss_unrecorded_drops, memory_order_relaxed);
    for (thread_rec *r = atomic_load(&ss_threads); r; r = r->next) {
        w += atomic_load_explicit(&r->ev_written, memory_order_relaxed);
        d += atomic_load_explicit(&r->ev_dropped, memory_order_relaxed);
    }
    *written = w;
    *dropped = d;
}

/* ---- buffers ----------------------------------------------------------------------------------- */

tss *ss_new_tss(session *s, thread_rec *r) {
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
    b->chunk = CHUNK_NONE; /* row buffers: no open chunk, no previous row */
    b->row_end = 0;
    b->desc = NULL;
    if (t->tail)
        t->tail->next = b;
    else
        t->head = b;
    t->tail = b;
    t->nbufs++;
    atomic_store(&t->current, b);
}

/* b (bytes in all) at the end of the spare list: the front is taken first, so a writer reuses the
 * buffer given back longest ago. The one drained last has its lines in the drain's CPU's cache, and
 * a writer on another CPU that stores into them takes each line over from there; the older ones
 * have left it by then (the 1-thread `mantra emit` with MANTRA_CLOCK=tsc: 28.0 against 21.4
 * Mevents/s reusing the newest first, medians of 10 alternating runs). */
static void spare_append(session *s, buf *b, uint64_t bytes) {
    b->next = NULL;
    if (s->spare_last)
        s->spare_last->next = b;
    else
        s->spare = b;
    s->spare_last = b;
    s->spare_bytes += bytes;
}

/* A drained buffer with room for need bytes, if one is spare: its pages are already mapped. */
static buf *take_spare_locked(session *s, tss *t, uint32_t need) {
    buf *prev = NULL;
    for (buf **pp = &s->spare; *pp; prev = *pp, pp = &(*pp)->next) {
        buf *b = *pp;
        if (b->size >= need) {
            *pp = b->next;
            if (s->spare_last == b)
                s->spare_last = prev;
            s->spare_bytes -= b->size + sizeof(buf);
            append_buf(s, t, b);
            return b;
        }
    }
    return NULL;
}

/* A fresh buffer for t under the cap (NULL: over it, or out of memory). */
static buf *map_fresh_locked(session *s, tss *t, uint32_t need) {
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
        s->spare_last = NULL;
        s->spare_bytes = 0;
        return map_fresh_locked(s, t, need);
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

/* A spare buffer, else a fresh one (NULL: stopping, over the cap, or out of memory). */
static buf *try_alloc_locked(session *s, tss *t, uint32_t need) {
    if (s->stopping)
        return NULL;
    buf *b = take_spare_locked(s, t, need);
    return b ? b : map_fresh_locked(s, t, need);
}

/* No spare buffer, while the drain has buffers to give back: the pool is used up because the drain
 * is behind (starved of CPU: two writers on two CPUs leave it none), not because the session needs
 * more memory. Only with a pool and a drain thread; not after a wait that found nothing, until the
 * drain gives a buffer back (so a drain that is stuck costs a writer one wait, not one per buffer);
 * and only where a fresh buffer would be mapped (a full buffer's room under the cap): near the cap
 * Drop and Block mode decide as they always did (Drop drops at once). */
static int recycle_due(const session *s) {
    return s->pool && s->has_drain && !s->recycle_missed && !s->disabled && !s->stopping &&
           s->allocated + BUF_MAX <= s->cap && (s->draining || s->allocated - s->spare_bytes >= s->pool / 2);
}

/* The writer's bounded waits for the drain (it wakes the drain before each slice of at most
 * slice_ms, and the writer's CPU is the drain's meanwhile): up to ms for a buffer that
 * take_spare_locked (WAIT_SPARE: a recycled buffer, rather than mapping fresh memory; a time-out
 * sets recycle_missed; WAIT_POOL: the pool's next populated one, while the drain thread
 * populates it) or try_alloc_locked (WAIT_SPACE, BLOCK mode: space under the cap) can give. Never
 * a drop: on time-out the caller goes on as without the wait. t->waiting tells the drain that
 * this writer touches no buffer meanwhile. */
enum { WAIT_SPACE = 0, WAIT_SPARE = 1, WAIT_POOL = 2 };
#define RECYCLE_WAIT_MS 2u
#define WAKE_BYTES (8u * 1024u * 1024u) /* of the pool taken: the drain is woken (ss_alloc_buffer) */
#define POOL_WAIT_MS 1000u /* for the drain thread to populate the pool's next buffer (ss_pool_fill) */
static buf *wait_for_buffer(session *s, tss *t, uint32_t need, uint32_t ms, uint32_t slice_ms, int mode) {
    buf *b = NULL;
    atomic_store(&t->waiting, 1);
    uint64_t deadline = mantra_pal_now_ns() + (uint64_t)ms * 1000000u;
    /* the pool's wait ends when the pool is all populated (its buffers may all be taken: the
     * recycled buffers' wait comes next) */
    while (!b && !s->disabled && !s->stopping && !(mode == WAIT_SPARE && s->recycle_missed) &&
           !(mode == WAIT_POOL && s->pool_pending == 0)) {
        uint64_t now = mantra_pal_now_ns();
        if (now >= deadline) {
            if (mode == WAIT_SPARE)
                s->recycle_missed = 1;
            break;
        }
        s->drain_wake = 1;
        mantra_pal_cond_signal(&s->cond);
        uint64_t left = (deadline - now + 999999u) / 1000000u;
        mantra_pal_cond_timedwait(&s->space, &s->lock, (uint32_t)(left > slice_ms ? slice_ms : left));
        b = mode == WAIT_SPACE ? try_alloc_locked(s, t, need) : take_spare_locked(s, t, need);
    }
    atomic_store(&t->waiting, 0);
    return b;
}

/* A new current buffer for t (NULL: over the cap, stopping, or out of memory). In BLOCK mode the
 * writer waits (bounded) for the drain to free space; meanwhile t->waiting tells the drain that
 * this writer touches no buffer. */
buf *ss_alloc_buffer(session *s, tss *t, uint32_t need) {
    mantra_pal_mutex_lock(&s->lock);
    buf *b = s->stopping ? NULL : take_spare_locked(s, t, need);
    if (!b && s->pool_pending && !s->stopping) /* the drain thread populates the pool: a buffer is near */
        b = wait_for_buffer(s, t, need, POOL_WAIT_MS, 1u, WAIT_POOL);
    if (!b && recycle_due(s))
        b = wait_for_buffer(s, t, need, RECYCLE_WAIT_MS, 1u, WAIT_SPARE);
    if (!b && !s->stopping)
        b = map_fresh_locked(s, t, need); /* the spares were looked at above */
    if (!b && s->cfg.buffer_mode == MANTRA_BUFFER_BLOCK && !s->disabled && !s->stopping) {
        atomic_store_explicit(&t->blocked, atomic_load_explicit(&t->blocked, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        b = wait_for_buffer(s, t, need, s->cfg.block_timeout_ms, 1000u, WAIT_SPACE);
    }
    /* EventPipe wakes its reader on every write that needed a buffer; here only under pressure
     * (no buffer, or more than half the budget in use). A pass takes every thread's current
     * buffer, so waking the drain per new buffer made writers and drain trade buffers back and
     * forth (each pass sent every writer to the slow path, which woke the drain again); the
     * periodic pass handles the rest. Also when the pool runs low (WAKE_BYTES of it, or half
     * of it if less, taken): a writer that outruns the drain then gets drained buffers back
     * before it has to map fresh memory; the wake-ups stop once a pass has refilled the pool.
     * Not half of any pool: a 64 MB pool then held up to 32 MB of events for the stop's final
     * pass (`mantra emit`, 10 M events: 7-11 ms of stop against 3 with 8 MB). */
    uint64_t low = s->pool / 2 < WAKE_BYTES ? s->pool / 2 : WAKE_BYTES;
    if (!b || s->allocated - s->spare_bytes > s->cap / 2 || s->spare_bytes + low < s->pool) {
        /* a writer that found no buffer needs the next pass even if this wake-up comes during one
         * (drain_wake); mere pressure does not (passes back to back would take every writer's
         * buffer each time, the trade described above) */
        if (!b)
            s->drain_wake = 1;
        mantra_pal_cond_signal(&s->cond);
    }
    mantra_pal_mutex_unlock(&s->lock);
    return b;
}


#ifndef MANTRA_THREADLESS
/* The pool a session starts with: MANTRA_SESSION_POOL_MB (a decimal number of MB, 0 for no pool,
 * at most POOL_MB_MAX; anything else: the default, POOL_MB_DEFAULT), at most a quarter of the cap.
 * Not larger for a larger cap, as it was (a 32nd of the cap, up to 64 MB): once the drain kept up
 * with two writers (issue 14), a 64 MB pool only cost the drain its populating, 0.4-0.6 ns per
 * event of `bench/session_write -o e2e2` (2 GB cap, MANTRA_CLOCK=tsc-unordered, five alternating
 * rounds: the drain 3.7-4.5 against 3.1-3.4 ns per event, two threads 84.1-91.5 against 92.1-94.4
 * Mevents/s in four rounds of five), and 75 ms of CPU at the start of a session on this guest
 * when the host had taken its pages back (a fresh 64 MB of huge pages: 6 ms right after others
 * were freed, 74-79 ms after 3 s idle). */
static uint64_t pool_bytes(const session *s) {
    uint64_t mb = mantra_pal_getenv_u32("MANTRA_SESSION_POOL_MB", POOL_MB_MAX, POOL_MB_DEFAULT);
    uint64_t b = mb << 20;
    return b < s->cap / 4 ? b : s->cap / 4;
}
#endif

/* The spare budget: drained buffers kept for reuse (the pool included). */
static uint64_t spare_max(const session *s) {
    uint64_t m = s->cap / 4 < SPARE_MAX ? s->cap / 4 : SPARE_MAX;
    return m > s->pool ? m : s->pool;
}

/* The pool a session starts with, as LTTng-UST maps its whole ring buffer when a session starts
 * (but bounded: pool_bytes) in buffers of up to BUF_MAX, their pages mapped before a writer takes
 * them, so that the writers' buffers cost no page faults: one mapping in huge pages cut into the
 * buffers (mantra_pal_reserve_region), which also spares the writer and the drain a TLB miss every
 * 4 KB (an outrun writer, bench/session_write -o enabled with MANTRA_CLOCK=tsc: 38.6-42.8 -> 27.4-32.3
 * ns per event, the drain 16-18 -> 10.6-11.6 ns of CPU per event); drained buffers come back to it
 * (ss_recycle_buffers) and a writer that takes from it wakes the drain once it is half empty
 * (ss_alloc_buffer). The start populates the first POOL_EAGER bytes only; the drain thread
 * populates the rest as soon as it runs (ss_pool_fill), off the thread that starts the session (a
 * 16 MB pool took 2.6-30 ms to populate on this guest, all of it in mantra_session_start before).
 * A writer that finds no populated buffer meanwhile waits for the next one (at most POOL_WAIT_MS)
 * rather than map fresh memory. Too small a budget for one BUF_MIN
 * buffer: no pool (small caps keep their exact allocation pattern). Best effort: out of memory
 * leaves a smaller pool. */
#define POOL_EAGER (2u * BUF_MAX)

/* Bytes of the pool's mapping not handed out for populating yet (from s->pool_next on). */
static uint64_t pool_left(const session *s) {
    return s->pool_base ? s->pool_size - (uint64_t)(s->pool_next - s->pool_base) : 0;
}

/* The next piece of the pool's unpopulated part (session lock): its size, 0 when none is left. */
static uint64_t pool_take_locked(session *s, uint8_t **p) {
    uint64_t left = pool_left(s), size = left < BUF_MAX ? left : BUF_MAX;
    if (size < BUF_MIN || s->stopping)
        return 0;
    *p = s->pool_next;
    s->pool_next += size;
    return size;
}

/* A buffer of the pool, mapped and populated, into the spare list (session lock). */
static void pool_add_locked(session *s, uint8_t *p, uint64_t size) {
    buf *b = (buf *)(void *)p;
    b->size = (uint32_t)(size - sizeof(buf));
    b->used = 0;
    spare_append(s, b, size);
    s->buffers++;
    s->recycle_missed = 0;
}

void ss_fill_pool(session *s) {
#ifdef MANTRA_THREADLESS
    (void)s; /* the drain runs between the pumps on the one thread: no writer outruns it */
#else
    uint64_t budget = s->pool = pool_bytes(s);
    mantra_pal_mutex_lock(&s->lock);
    /* one mapping cut into the buffers when the platform can (huge pages); else one by one */
    uint64_t room = s->cap - s->allocated < budget ? s->cap - s->allocated : budget;
    uint8_t *region = room >= BUF_MIN ? mantra_pal_reserve_region((size_t)room) : NULL;
    if (region) {
        uint64_t used = room / BUF_MAX * BUF_MAX; /* whole buffers, and a last smaller one */
        if (room - used >= BUF_MIN)
            used = room;
        if (used < room)
            mantra_pal_free_buffer(region + used, (size_t)(room - used)); /* too small for a buffer */
        s->pool_base = s->pool_next = region;
        s->pool_size = s->pool_pending = used;
        s->allocated += used;
        uint64_t eager = used < POOL_EAGER ? used : POOL_EAGER, size;
        mantra_pal_populate(region, (size_t)eager);
        uint8_t *p;
        while (eager > 0 && (size = pool_take_locked(s, &p)) != 0) {
            pool_add_locked(s, p, size);
            s->pool_pending -= size;
            eager = eager > size ? eager - size : 0;
        }
    } else {
        while (budget >= BUF_MIN && s->allocated + BUF_MIN <= s->cap) {
            uint64_t size = budget < BUF_MAX ? budget : BUF_MAX;
            buf *b = mantra_pal_alloc_buffer((size_t)size);
            if (!b)
                break;
            s->allocated += size;
            pool_add_locked(s, (uint8_t *)b, size);
            budget -= size;
        }
    }
    mantra_pal_mutex_unlock(&s->lock);
#endif
}

_Atomic uint32_t ss_pool_fill_pause_us;

void ss_pool_fill(session *s) {
    uint8_t *p;
    uint64_t size;
    mantra_pal_mutex_lock(&s->lock);
    while ((size = pool_take_locked(s, &p)) != 0) {
        mantra_pal_mutex_unlock(&s->lock);
        uint64_t pause = atomic_load_explicit(&ss_pool_fill_pause_us, memory_order_relaxed) * UINT64_C(1000);
        for (uint64_t t0 = pause ? mantra_pal_now_ns() : 0; pause && mantra_pal_now_ns() - t0 < pause;)
            mantra_pal_yield(); /* tests: a slow fill */
        mantra_pal_populate(p, (size_t)size);
        mantra_pal_mutex_lock(&s->lock);
        pool_add_locked(s, p, size);
        s->pool_pending -= size;
        mantra_pal_cond_broadcast(&s->space); /* a writer waiting for a buffer */
    }
    mantra_pal_mutex_unlock(&s->lock);
}

/* Frees b; at the end of the session (the final pass, ss_free_buffers) a piece of the pool only
 * goes into s->pool_done, and ss_free_buffers unmaps the pool's pieces in runs of adjacent ones:
 * one munmap of a 64 MB pool took 0.25 ms here, one per 1 MB piece 2.3 ms (each splits a huge
 * page). Only a buffer that is exactly a piece (its start and size): a piece freed during the
 * session leaves a hole in the pool's range where another mapping may land, a fresh buffer of
 * this session among them, which is freed on its own then. */
static void free_buf(session *s, buf *b, int at_end) {
    uint64_t bytes = b->size + sizeof(buf);
    uintptr_t at = (uintptr_t)(void *)b, base = (uintptr_t)(void *)s->pool_base;
    if (at_end && s->pool_base && at >= base && at - base < s->pool_size && (at - base) % BUF_MAX == 0) {
        uint64_t off = at - base, piece = s->pool_size - off < BUF_MAX ? s->pool_size - off : BUF_MAX;
        uint64_t npieces = (s->pool_size + BUF_MAX - 1) / BUF_MAX;
        if (bytes == piece && !s->pool_done)
            s->pool_done = calloc((size_t)npieces, 1);
        if (bytes == piece && s->pool_done) {
            s->pool_done[off / BUF_MAX] = 1;
            return;
        }
    }
    mantra_pal_free_buffer(b, (size_t)bytes);
}

void ss_recycle_buffers(session *s, buf *drained, int final) {
    uint64_t keep = spare_max(s);
    while (drained) { /* kept for reuse up to spare_max bytes, the rest goes back */
        buf *b = drained;
        drained = b->next;
        uint64_t bytes = b->size + sizeof(buf);
        if (s->spare_bytes + bytes <= keep && !final) {
            spare_append(s, b, bytes);
            s->recycle_missed = 0;
        } else {
            s->allocated -= bytes;
            free_buf(s, b, final);
        }
    }
}

static void free_list(session *s, buf *b) {
    while (b) {
        buf *nb = b->next;
        free_buf(s, b, 1);
        b = nb;
    }
}

void ss_free_buffers(session *s) {
    if (pool_left(s)) /* the pool's part never populated (a stop before the drain thread ran) */
        mantra_pal_free_buffer(s->pool_next, (size_t)pool_left(s));
    s->pool_next = s->pool_base + s->pool_size;
    free_list(s, s->spare);
    s->spare = s->spare_last = NULL;
    for (tss *t = s->threads; t;) {
        tss *n = t->next;
        free_list(s, t->head);
        free_list(s, t->dhead);
        free(t);
        t = n;
    }
    if (s->pool_done) { /* runs of adjacent pool pieces, each with one call */
        uint64_t npieces = (s->pool_size + BUF_MAX - 1) / BUF_MAX;
        for (uint64_t i = 0; i < npieces;) {
            if (!s->pool_done[i]) {
                i++;
                continue;
            }
            uint64_t j = i;
            while (j < npieces && s->pool_done[j])
                j++;
            uint64_t end = j * BUF_MAX < s->pool_size ? j * BUF_MAX : s->pool_size;
            mantra_pal_free_buffer(s->pool_base + i * BUF_MAX, (size_t)(end - i * BUF_MAX));
            i = j;
        }
        free(s->pool_done);
        s->pool_done = NULL;
    }
}
